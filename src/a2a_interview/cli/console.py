"""The terminal, through ``rich``: the report in colour and verify-many's progress.

Colour and live redrawing only on a terminal: ``rich`` itself turns both off when the
stream is not a terminal (pipes, files, CI logs) and honours ``NO_COLOR``, ``TERM=dumb``
and ``FORCE_COLOR``, so what lands in a file is the report's plain text, byte for byte.
The report's words are styled by position (line starts), never by searching peer
content, and the text goes in as a ``Text`` object, never as markup: a peer string such
as ``[red]`` or ``FAIL`` inside a URL is shown as it is.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from types import TracebackType
from typing import IO, Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

# What each outcome looks like. not_offered is neutral by rule (interview §9): absence of
# the extension is never coloured as a failure.
OUTCOME_STYLE: Final = {
    "consistent": "bold green",
    "churn": "bold yellow",
    "non_conformant": "bold red",
    "not_offered": "bold",
    "unreachable": "bold yellow",
}
_STYLES: Final = (
    (re.compile(r"^Outcome: CONSISTENT\b", re.M), "bold green"),
    (re.compile(r"^Outcome: CHURN\b", re.M), "bold yellow"),
    (re.compile(r"^Outcome: NON_CONFORMANT\b", re.M), "bold red"),
    (re.compile(r"^Outcome: NOT_OFFERED\b", re.M), "bold"),
    (re.compile(r"^Outcome: UNREACHABLE\b", re.M), "bold yellow"),
    (re.compile(r"^Standing: EVIDENCE\b", re.M), "bold green"),
    (re.compile(r"^Standing: CLAIM\b", re.M), "bold yellow"),
    (re.compile(r"^  PASS\b", re.M), "green"),
    (re.compile(r"^  FAIL\b", re.M), "bold red"),
    (re.compile(r"^  CHURN\b", re.M), "yellow"),
    (re.compile(r"^  ADVISORY\b", re.M), "yellow"),
    (re.compile(r"^  SKIP\b", re.M), "dim"),
)


def console(stream: IO[str] | None = None) -> Console:
    """A console on ``stream`` (default stdout) that never wraps, re-highlights or
    interprets markup: the text written is the text given."""
    return Console(file=stream or sys.stdout, highlight=False, soft_wrap=True, markup=False)


def print_report(text: str, stream: IO[str] | None = None) -> None:
    """Write a rendered report (``report.render_report``), styled on a terminal."""
    styled = Text(text)
    for pattern, style in _STYLES:
        styled.highlight_regex(pattern, style)
    console(stream).print(styled, end="")


class ManyProgress:
    """verify-many's progress on stderr: a live bar with the outcome tally on a terminal;
    elsewhere one plain line per tenth of the work (a CI log stays short)."""

    def __init__(self, total: int, enabled: bool, stream: IO[str] | None = None) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.console = console(stream or sys.stderr)
        self.counts: Counter[str] = Counter()
        self._step = -1
        self._live: Progress | None = None
        self._task: object = None

    def __enter__(self) -> ManyProgress:
        if self.enabled and self.console.is_terminal:
            self._live = Progress(
                TextColumn("verify-many"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TextColumn("{task.fields[tally]}"),
                console=self.console,
            )  # fmt: skip
            self._live.start()
            self._task = self._live.add_task("agents", total=self.total, tally="")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()

    def _tally(self) -> str:
        return "  ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))

    def update(self, outcome: str) -> None:
        self.done += 1
        self.counts[outcome] += 1
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(self._task, completed=self.done, tally=self._tally())  # type: ignore[arg-type]
            return
        step = 10 * self.done // self.total
        if step != self._step or self.done == self.total:
            self._step = step
            self.console.print(f"verify-many {self.done}/{self.total}  {self._tally()}")
