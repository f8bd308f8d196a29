"""What the page keeps between requests, each a pure function of what it is keyed by:
display rows by record (its id and digest), and a line's result cells by what they show.

Both are bounded, least recently used first out, and safe across threads (a PostgreSQL
ledger serves each request on a thread of its own).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from operator import attrgetter
from typing import Any, Final, NamedTuple, Protocol

from ..record import rfc3339
from . import display
from .runners import NO_RUNNERS, Runners

try:
    import jinja2
    from markupsafe import Markup
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the ledger's web page needs the 'ledger' extra: pip install 'a2a-interview[ledger]'"
    ) from exc

ROW_CACHE: Final = 4096
CELL_CACHE: Final = 4096

# The result cells of a list line, each drawn by the macro of its name in macros.html,
# and the fields of a display row that macro reads (dotted: a member of a member):
# nothing of the agent or of when it ran. tests/test_ledger_memo.py holds the macros
# to these lists.
CELL_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "outcome": ("outcome_label", "outcome_meaning", "tone"),
    "ran_by": (
        "party_label",
        "runner.listed",
        "runner.listed_name",
        "runner.fingerprint",
        "runner_name",
    ),
    "standing": ("standing", "runner.listed", "standing_why"),
    "card_sig": ("card_signature", "card_reading", "standing"),
}


class ResultCells(NamedTuple):
    """A line's result cells, as markup."""

    outcome: Markup
    ran_by: Markup
    standing: Markup
    card_sig: Markup


# What a list line is made from, without the record's bytes (store/columns.py keeps
# these columns at write time).
_KEPT: Final = ("outcome", "party", "runner_name", "runner_key", "signature",
                "standing_reason", "card_signature", "card_reading", "agent_name")  # fmt: skip


class Shown(Protocol):
    """A record as the store hands it out: in full, or as a list line (no bytes)."""

    @property
    def id(self) -> Any: ...
    @property
    def card_url(self) -> str: ...
    @property
    def body(self) -> bytes: ...
    @property
    def document(self) -> Any: ...
    @property
    def started_at(self) -> Any: ...
    @property
    def finished_at(self) -> Any: ...


def when(moment: Any) -> str:
    """RFC 3339 UTC, as the records write times, in the page's text and the API's data
    alike: one spelling of one instant everywhere (D-WEB-21)."""
    return rfc3339(moment) if isinstance(moment, datetime) and moment.tzinfo else ""


class Rows:
    """Display rows by (record id, digest), the last ``size`` made. A row is a pure
    function of the record's stored bytes (its standing too: PROFILE §8 takes it from
    what the display can check in the record, with no clock and no network), so the
    same bytes need not have their runner signature checked on every request."""

    def __init__(self, size: int, runners: Runners = NO_RUNNERS) -> None:
        self.size = size
        self.runners = runners
        self._rows: OrderedDict[tuple[Any, Any, bool], display.Row] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, record: Shown, *, full: bool = False) -> display.Row:
        key = (record.id, getattr(record, "digest", None) or record.body, full)
        with self._lock:
            found = self._rows.get(key)
            if found is not None:
                self._rows.move_to_end(key)
                return found
        times = (when(record.started_at), when(record.finished_at))
        reason = getattr(record, "standing_reason", None)
        if reason is not None and not full:
            # A list line from the columns kept at write time: no bytes read (O(page)).
            columns = {name: getattr(record, name, None) for name in _KEPT}
            made = display.column_row(record.id, record.card_url, columns, times, self.runners)
        else:  # shown in full: the standing recomputed from the record's bytes
            document = record.document if isinstance(record.document, dict) else {}
            made = display.row(record.id, record.card_url, document, times, self.runners)
        _keep(self._rows, self._lock, key, made, self.size)
        return made


class Cells:
    """A line's result cells (outcome, who ran it, standing, card signature), each as
    its macro draws it, kept by the fields it shows (:data:`CELL_FIELDS`). Those are
    the same for every line one runner left in the same state, and an outcome, a
    standing or a card signature has few states at all; so whichever page of the index
    is asked for, few cells are drawn anew (four macro calls a line were a third of an
    index page's time, D-WEB-24), and at worst, every line by a runner of its own name,
    one a line is."""

    def __init__(self, env: jinja2.Environment, size: int = CELL_CACHE) -> None:
        self.size = size
        macros = env.get_template("macros.html").module
        self._draw = [
            (name, getattr(macros, name), attrgetter(*fields))
            for name, fields in CELL_FIELDS.items()
        ]
        self._cells: OrderedDict[tuple[Any, ...], Markup] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, row: display.Row) -> ResultCells:
        return ResultCells(
            *(self._cell(name, macro, shown(row), row) for name, macro, shown in self._draw)
        )

    def _cell(
        self, name: str, macro: Callable[[display.Row], Markup], shown: Any, row: display.Row
    ) -> Markup:
        key = (name, shown)
        with self._lock:
            found = self._cells.get(key)
            if found is not None:
                self._cells.move_to_end(key)
                return found
        made = macro(row)
        _keep(self._cells, self._lock, key, made, self.size)
        return made


def _keep(
    kept: OrderedDict[Any, Any], lock: threading.Lock, key: Any, value: Any, size: int
) -> None:
    with lock:
        kept[key] = value
        while len(kept) > size:
            kept.popitem(last=False)
