"""A page of a list as the store reads it: each agent's line on the index (card URL,
counts, its latest record's list columns, no bytes), or one agent's records as lines,
by statements built once, with bind parameters.

Building and compiling a fresh statement for every page, and making a full record of
every row, cost several times the query itself (D-STORE-18; the figures are in
docs/benchmarks.md). So each shape of the query (how it searches, which way it pages) is
built on its first use and kept, and a row becomes a :class:`~.values.ListedRecord` from
its columns in order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

try:
    import sqlalchemy as sa
    from sqlalchemy.engine import Connection
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the ledger needs SQLAlchemy: pip install 'a2a-interview[ledger]'") from exc

from .tables import agents_table, records
from .values import AgentLine, ListedRecord

Filter = Literal["none", "like", "ilike", "fts", "among"]
"""How a page's agents are chosen: all of them; those whose ``search`` column holds
``:pattern`` (``LIKE``, or ``ILIKE`` on PostgreSQL); those the SQLite trigram index
names for ``:phrase`` whose column then holds ``:pattern`` (``fts``); those whose card
URL is one of ``:among``."""

# A ListedRecord's fields, in order. The bytes only for a row whose columns were never
# filled (before migration 0005's refresh): its line is made from them.
_LISTED: Final = (
    records.c.id,
    records.c.digest,
    records.c.card_url,
    records.c.outcome,
    records.c.party,
    records.c.runner_name,
    records.c.runner_key,
    records.c.signature,
    records.c.standing_reason,
    records.c.card_signature,
    records.c.card_reading,
    records.c.agent_name,
    records.c.started_at,
    records.c.finished_at,
    sa.case(
        (records.c.standing_reason.is_(None), records.c.body),
        else_=sa.literal(b"", sa.LargeBinary()),
    ).label("body"),
)
_STARTED: Final = 12  # the places of the times in _LISTED
_FINISHED: Final = 13


@functools.cache
def page_query(choose: Filter, after: bool, before: bool) -> sa.Select[Any]:
    """The statement for a page of agents chosen by ``choose``, by card URL: the first
    ``:limit`` after ``:after``, the last before ``:before``, or the first ones (keyset
    paging, D-WEB-22). The page of agents is read first (an index scan of the summary),
    then only its latest records are joined: never a join over the rows skipped."""
    url = agents_table.c.card_url
    page = _chosen(
        sa.select(url, agents_table.c.latest_id, agents_table.c.results, agents_table.c.evidence),
        choose,
    )
    if after:
        page = page.where(url > sa.bindparam("after"))
    if before:
        page = page.where(url < sa.bindparam("before"))
    backwards = before and not after
    chosen = page.order_by(url.desc() if backwards else url).limit(sa.bindparam("limit"))
    found = chosen.subquery()
    return (
        sa.select(found.c.card_url, found.c.results, found.c.evidence, *_LISTED)
        .join_from(found, records, records.c.id == found.c.latest_id)
        .order_by(found.c.card_url)
    )


@functools.cache
def found_query(choose: Filter) -> sa.Select[Any]:
    """The card URLs of up to ``:cap`` agents chosen by ``choose``, in no order."""
    return _chosen(sa.select(agents_table.c.card_url), choose).limit(sa.bindparam("cap"))


@functools.cache
def count_candidates() -> sa.Select[Any]:
    """How many agents the SQLite trigram index finds for ``:phrase``, up to ``:cap``."""
    return sa.select(sa.func.count()).select_from(
        _candidates().limit(sa.bindparam("cap")).subquery()
    )


# Three letters or digits in a row: what a trigram index can look up (pg_trgm takes its
# trigrams from runs of letters and digits; FTS5's from any three characters). A search
# with none would be answered by reading every agent (D-STORE-23).
_INDEXED_RUN: Final = re.compile(r"[^\W_]{3}")
SEARCH_RULE: Final = "a search needs at least three letters or digits in a row"


def searchable(search: str) -> bool:
    """Whether the search index can answer ``search`` (:data:`SEARCH_RULE`)."""
    return _INDEXED_RUN.search(search) is not None


def phrase(search: str) -> str:
    """``search`` as one FTS5 phrase: its trigrams in order."""
    return '"' + search.replace('"', '""') + '"'


def _chosen(query: sa.Select[Any], choose: Filter) -> sa.Select[Any]:
    query = query.select_from(agents_table)
    search = agents_table.c.search
    if choose == "like":
        return query.where(search.like(sa.bindparam("pattern"), escape="\\"))
    if choose == "ilike":
        return query.where(search.ilike(sa.bindparam("pattern"), escape="\\"))
    if choose == "fts":
        return query.where(
            sa.literal_column("ledger_agents.id").in_(_candidates().scalar_subquery()),
            search.like(sa.bindparam("pattern"), escape="\\"),
        )
    if choose == "among":
        return query.where(agents_table.c.card_url.in_(sa.bindparam("among", expanding=True)))
    return query


def _candidates() -> Any:
    # The ids of the agents the SQLite trigram index (migration 0007) finds for
    # :phrase: those whose ``search`` holds its trigrams in order (FTS5 folds case
    # beyond ASCII: a superset of what LIKE then keeps).
    found: Any = sa.select(sa.literal_column("rowid")).select_from(sa.table("ledger_agents_fts"))
    return found.where(sa.text("ledger_agents_fts MATCH :phrase"))


def read_lines(
    connection: Connection,
    choose: Filter,
    limit: int,
    *,
    after: str | None,
    before: str | None,
    values: Mapping[str, Any],
) -> list[AgentLine]:
    """A page of agents' lines, in card URL order (see :func:`page_query`); ``values``
    binds what ``choose`` names (``pattern``, ``phrase``, ``among``)."""
    query = page_query(choose, after is not None, before is not None)
    bound = {**values, "limit": limit, "after": after, "before": before}
    lines = []
    for row in connection.execute(query, bound):
        card_url, count, evidence, *listed = row
        lines.append(AgentLine(card_url, _listed(listed), int(count), int(evidence)))
    return lines


@functools.cache
def _history_query() -> sa.Select[Any]:
    return (
        sa.select(*_LISTED)
        .where(records.c.card_url == sa.bindparam("card_url"))
        .order_by(records.c.finished_at.desc(), records.c.id.desc())
        .offset(sa.bindparam("offset"))
        .limit(sa.bindparam("limit"))
    )


def read_history(
    connection: Connection, card_url: str, offset: int, limit: int
) -> list[ListedRecord]:
    """A page of one agent's records as list lines, newest first (by ``finished_at``,
    then as stored), read from the store's index: O(page), and no record's bytes."""
    bound = {"card_url": card_url, "offset": offset, "limit": limit}
    return [_listed(list(row)) for row in connection.execute(_history_query(), bound)]


def _listed(listed: list[Any]) -> ListedRecord:
    listed[_STARTED] = _aware(listed[_STARTED])
    listed[_FINISHED] = _aware(listed[_FINISHED])
    listed[-1] = bytes(listed[-1])
    return ListedRecord(*listed)


def _aware(moment: datetime) -> datetime:
    # SQLite keeps no zone: every time here was stored as UTC.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
