"""outcome.py under mutation (D-TEST-13, bench/mutation.py): the outcome and the statuses
of PROFILE §7 at their edges. Conflicts and advisories are written here by hand."""

from __future__ import annotations

import pytest

from a2a_interview.checks import (
    CHECKS,
    Advisory,
    Check,
    CheckStatus,
    Conflict,
    derive_outcome,
    overall_statuses,
    run_statuses,
)

CONFLICT = Conflict(Check.projection, "value_mismatch")


def test_a_run_with_conflicts_cannot_be_judged_without_its_rerun() -> None:
    # PROFILE §7: a conflict is persistent only if it survives a re-run; without the
    # re-run there is no outcome, and the caller is told so in fixed words.
    with pytest.raises(ValueError, match=r"^a run with conflicts needs its re-run$"):
        derive_outcome([CONFLICT], None)


def test_an_advised_check_is_advisory_unless_it_failed() -> None:
    # PROFILE §7: coverage and the other advisories never fail a check; a check with an
    # advisory and no conflict is "advisory", one with both is "failed".
    advisory = Advisory(Check.coverage, "omitted")
    statuses = run_statuses([Check.coverage, Check.projection], [], [advisory])
    assert statuses[Check.coverage] is CheckStatus.advisory
    assert statuses[Check.projection] is CheckStatus.passed
    assert statuses[Check.card_fetch] is CheckStatus.skipped
    both = run_statuses([Check.coverage], [Conflict(Check.coverage, "x")], [advisory])
    assert both[Check.coverage] is CheckStatus.failed


def test_a_check_no_run_performed_is_skipped_overall() -> None:
    # PROFILE §7: the record's status per check; a check no run reports is skipped.
    assert overall_statuses([], []) == dict.fromkeys(CHECKS, CheckStatus.skipped)
    only = overall_statuses([{Check.projection: CheckStatus.passed}], [])
    assert only[Check.projection] is CheckStatus.passed
    assert only[Check.coverage] is CheckStatus.skipped
