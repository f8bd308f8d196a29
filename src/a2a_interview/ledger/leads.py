"""What leads (PROFILE §8): an agent's headline is its latest result by a runner the
operator lists, if it has one; else its latest evidence by an unlisted runner; else its
latest claim. A newer result of a weaker kind is shown beside the headline, never
instead of it (``docs/decisions.md`` D-WEB-30).

The store's ``standing`` column names the candidates; each is rechecked from its bytes
(:class:`.memo.Rows`, ``full=True``) before it leads. Pure but for the store reads it is
handed; no web framework here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import display
from .memo import Rows

_RANK = {"listed": 0, "unlisted": 1, "claim": 2}  # the kinds, strongest first


def newest_evidence(
    ledger: Any, rows: Rows, card_url: str, keys: Sequence[str] | None
) -> tuple[display.Row, Any] | None:
    """(row, record) of the agent's newest evidence, by one of ``keys`` (and then by a
    listed runner) when given, its standing rechecked from its bytes; else ``None``."""
    for record in ledger.latest_evidence(card_url, keys=keys):
        made = rows(record, full=True)  # the column said evidence; the bytes decide
        if made.standing == "evidence" and (keys is None or made.runner.listed):
            return made, record
    return None


def _strongest(made: display.Row, listed: bool) -> bool:
    """Whether nothing can lead over ``made``: a listed runner's result, or evidence
    when the operator lists no runner."""
    kind = display.kind(made)
    return kind == "listed" or (kind == "unlisted" and not listed)


def index_heads(
    ledger: Any, rows: Rows, lines: Sequence[Any]
) -> list[tuple[display.Row, display.Row | None]]:
    """For each index line (an agent: its latest record, its evidence count), the row
    that leads and the newer row beside it (or ``None``). Two reads for the whole page
    at most (``Ledger.leading``), only for agents whose latest record could be led."""
    latest = [rows(line.latest) for line in lines]
    keys = sorted(rows.runners.names)
    leading = getattr(ledger, "leading", None)
    wanted = [
        line.card_url
        for line, made in zip(lines, latest, strict=True)
        if int(getattr(line, "evidence", 0) or 0) > 0 and not _strongest(made, bool(keys))
    ]
    found: dict[str, display.Row] = {}
    if wanted and callable(leading):
        for chosen in ([keys] if keys else []) + [None]:
            for card_url, record in leading(wanted, chosen).items():
                made = rows(record, full=True)
                if (
                    card_url not in found
                    and made.standing == "evidence"
                    and (chosen is None or made.runner.listed)
                ):
                    found[card_url] = made
    heads: list[tuple[display.Row, display.Row | None]] = []
    for line, made in zip(lines, latest, strict=True):
        other = found.get(line.card_url)
        # Only a stronger kind leads over the latest record; the latest is then beside it.
        head = other if other is not None and _RANK[display.kind(other)] < _RANK[
            display.kind(made)] else made  # fmt: skip
        heads.append((head, made if head.id != made.id else None))
    return heads
