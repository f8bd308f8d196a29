"""The terminal through rich (D-VERIFY-25): colour on a terminal, the report's plain
text byte for byte in pipes, files, CI and under NO_COLOR; peer text never read as markup."""

from __future__ import annotations

import io

import pytest

from a2a_interview.cli.console import ManyProgress, print_report

REPORT = (
    "Outcome: NON_CONFORMANT: conflicts survived a re-run.\n"
    "Standing: CLAIM (self-run)\n"
    "Checks:\n"
    "  PASS      card_fetch\n"
    "  FAIL      projection\n"
    '  [transport] loopback_http "http://[red]x[/red].example/FAIL"\n'
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_the_plain_report_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    sink = io.StringIO()
    print_report(REPORT, sink)
    assert sink.getvalue() == REPORT


def test_a_terminal_gets_colour_and_peer_text_stays_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    sink = _Terminal()
    print_report(REPORT, sink)
    out = sink.getvalue()
    assert "\x1b[" in out  # styled
    assert "[red]x[/red]" in out  # a peer's markup-looking text is shown as it is
    plain = _strip_ansi(out)
    assert plain == REPORT


def test_no_color_on_a_terminal_is_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    sink = _Terminal()
    print_report(REPORT, sink)
    assert "\x1b[3" not in sink.getvalue() and "\x1b[1;3" not in sink.getvalue()
    assert _strip_ansi(sink.getvalue()) == REPORT


def test_progress_off_a_terminal_is_a_line_per_tenth() -> None:
    sink = io.StringIO()
    with ManyProgress(20, True, sink) as progress:
        for index in range(20):
            progress.update("consistent" if index % 2 else "not_offered")
    lines = sink.getvalue().splitlines()
    assert len(lines) == 11  # 0/10 .. 10/10 of the work, not one line per agent
    assert lines[-1] == "verify-many 20/20  consistent 10  not_offered 10"


def test_progress_disabled_prints_nothing() -> None:
    sink = io.StringIO()
    with ManyProgress(3, False, sink) as progress:
        for _ in range(3):
            progress.update("consistent")
    assert sink.getvalue() == ""
    assert progress.counts == {"consistent": 3}


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)
