"""findings.py under mutation (D-TEST-13, bench/mutation.py): how a finding reads when
printed. Values written here by hand."""

from __future__ import annotations

from a2a_interview.checks import ABSENT, Check, Conflict


def test_absent_reads_as_absent_not_as_null() -> None:
    # checks' ABSENT marks expected/got as not applying, distinct from JSON null (None):
    # a finding printed for a reader (a test failure, a log) must tell them apart.
    assert repr(ABSENT) == "ABSENT"
    shown = repr(Conflict(Check.determinism, "x", got=None))
    assert "expected=ABSENT" in shown
    assert "got=None" in shown
