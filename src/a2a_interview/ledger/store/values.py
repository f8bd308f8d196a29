"""What the store hands out: a stored record, an agent's summary, a line of the index,
a runner seen, the neutral totals. Plain values; the store makes them from its rows."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime

from ...record import Standing, standing_of
from ...strictjson import JSONObject, loads


@dataclass(frozen=True)
class StoredRecord:
    """One stored result record.

    ``body`` is the record's bytes as given (empty in the summaries of a list,
    ``Ledger.agents_from``, which show the columns kept at write time); ``document``
    is them parsed; ``standing``
    is recomputed from ``document`` on every access (never read from the store).
    ``signature`` is the runner signature's status when stored: ``valid`` or
    ``unsigned`` (an unsigned record is a claim about itself and is kept as such).
    Times are aware UTC datetimes.
    """

    id: int
    digest: str
    card_url: str
    agent_url: str
    outcome: str
    party: str
    runner_name: str
    runner_key: str | None
    signature: str
    started_at: datetime
    finished_at: datetime
    stored_at: datetime
    job_key: str | None
    body: bytes = field(repr=False)
    # Kept at write time (None in a row written before migration 0005's refresh).
    standing_column: str | None = field(default=None, compare=False)
    standing_reason: str | None = field(default=None, compare=False)
    card_signature: str | None = field(default=None, compare=False)
    card_reading: str | None = field(default=None, compare=False)
    # agent.name as the card names itself (record.agent_name): peer text, never identity.
    agent_name: str | None = field(default=None, compare=False)

    @functools.cached_property
    def document(self) -> JSONObject:
        """The stored bytes parsed, on first use (a list shows columns, not bytes)."""
        value = loads(self.body)
        assert isinstance(value, dict)  # stored only after the same check
        return value

    @property
    def standing(self) -> Standing:
        """``claim`` or ``evidence``, recomputed now (PROFILE §8)."""
        return standing_of(self.document)


@dataclass(frozen=True, slots=True)
class RunnerSeen:
    """A runner key the store holds results by: when the store first and last received
    one (its own receipt time, never a time a record claims) and how many it holds."""

    key: str
    first_seen: datetime
    last_seen: datetime
    results: int


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """An agent (keyed by its card URL): its latest record, how many results it has and
    how many of them were evidence when stored (the ``standing`` column)."""

    card_url: str
    latest: StoredRecord
    count: int
    evidence: int = 0


@dataclass(frozen=True, slots=True)
class ListedRecord:
    """A record as a list line shows it: the columns kept at write time, no bytes
    (``body`` is empty unless those columns are missing: a row from before migration
    0005's refresh, whose line is then made from its bytes). Times are aware UTC
    datetimes. A record shown in full is a :class:`StoredRecord`."""

    id: int
    digest: str
    card_url: str
    outcome: str
    party: str
    runner_name: str
    runner_key: str | None
    signature: str
    standing_reason: str | None
    card_signature: str | None
    card_reading: str | None
    agent_name: str | None
    started_at: datetime
    finished_at: datetime
    body: bytes = field(repr=False)

    @property
    def document(self) -> JSONObject:
        """The bytes parsed (only a line without its columns carries any)."""
        value = loads(self.body) if self.body else {}
        assert isinstance(value, dict)  # stored only after the same check
        return value


@dataclass(frozen=True, slots=True)
class AgentLine:
    """An agent as a line of the index: its card URL, its latest record as a list shows
    it, how many results it has and how many were evidence when stored."""

    card_url: str
    latest: ListedRecord
    count: int
    evidence: int


@dataclass(frozen=True, slots=True)
class Totals:
    """Neutral totals (never an outcome: interview §9): agents, results, and how many
    results are evidence and how many claims."""

    agents: int
    results: int
    evidence: int
    # Of the evidence, how much a runner the operator lists signed (PROFILE §8: the
    # three kinds counted apart); filled in by the page, which knows the list.
    listed: int = 0

    @property
    def claims(self) -> int:
        return self.results - self.evidence

    @property
    def unlisted(self) -> int:
        """Evidence by runners the operator does not list."""
        return self.evidence - self.listed
