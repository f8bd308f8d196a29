"""The store's schema as the code reads it: the tables, the bounds of their columns, and
where the migrations that create them live (``docs/decisions.md`` D-STORE-1).

What a record row keeps, and why:

- ``body``: the bytes as given (surrounding whitespace trimmed), never re-serialized, so
  a signature over them verifies again anywhere (PROFILE §8);
- ``digest``: the run's identity (PROFILE §8, ``record.record_identity``): ``sha256:``
  of the record's JCS form without ``signatures``, unique: the same run added twice,
  whatever its spelling and however many signatures it carries, is one row (a signed
  copy replaces an unsigned one: stripping the runner's signature and storing first
  must not veto the evidence);
- ``job_key``: unique when set: a worker's job writes at most one record, even when the
  job runs again after its worker was killed;
- ``card_url`` (the agent's key), ``outcome``, ``party``, runner, times: indexed
  columns copied from the record. ``standing`` is a filtering column refreshed from
  :func:`a2a_interview.record.standing_of`; what a reader is given is always recomputed
  (interview §8, §9 rule 4).

The migrations (``ledger/migrations/versions``) create these tables; they never import
this module.
"""

from __future__ import annotations

from typing import Final, Literal

try:
    import sqlalchemy as sa
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the ledger needs SQLAlchemy: pip install 'a2a-interview[ledger]'") from exc

from ...spec import CARD_PATH

DEFAULT_STORE: Final = "a2a-interview-ledger.db"
# Bounds in UTF-8 bytes, not characters: the card URL is an indexed column and
# PostgreSQL's b-tree refuses an entry over about 2700 bytes (2048 characters of CJK
# are 6 KiB), which failed the whole transaction as if the store were down.
MAX_URL: Final = 2048
MAX_CARD_URL: Final = MAX_URL + len(CARD_PATH)
MAX_NAME: Final = 1024
MIGRATIONS: Final = "a2a_interview.ledger:migrations"
VERSION_TABLE: Final = "a2a_interview_ledger_version"

Dialect = Literal["sqlite", "postgresql"]

_metadata = sa.MetaData()
# The table as the code reads it; the migrations create it (they never import this).
records: Final = sa.Table(
    "ledger_records",
    _metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("digest", sa.String(71), nullable=False, unique=True),
    sa.Column("card_url", sa.Text(), nullable=False),
    sa.Column("agent_url", sa.Text(), nullable=False),
    sa.Column("outcome", sa.String(32), nullable=False),
    sa.Column("party", sa.String(32), nullable=False),
    sa.Column("runner_name", sa.Text(), nullable=False),
    sa.Column("runner_key", sa.Text(), nullable=True),
    sa.Column("signature", sa.String(16), nullable=False),
    sa.Column("standing", sa.String(16), nullable=False),
    # What the index shows, kept at write time (migration 0005): why the standing is
    # what it is, and the card signature's status and reading.
    sa.Column("standing_reason", sa.String(32), nullable=True),
    sa.Column("card_signature", sa.String(32), nullable=True),
    sa.Column("card_reading", sa.String(32), nullable=True),
    # agent.name, as the card names itself (migration 0006): peer text, never identity.
    sa.Column("agent_name", sa.Text(), nullable=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("job_key", sa.String(200), nullable=True, unique=True),
    sa.Column("body", sa.LargeBinary(), nullable=False),
)


# One row per agent, kept at write time in the same transaction as its records
# (migration 0005): the index reads a page of these, never every record.
agents_table: Final = sa.Table(
    "ledger_agents",
    _metadata,
    sa.Column("card_url", sa.Text(), primary_key=True),
    sa.Column("latest_id", sa.BigInteger(), nullable=True),
    sa.Column("results", sa.BigInteger(), nullable=False),
    sa.Column("evidence", sa.BigInteger(), nullable=False),
    sa.Column("last_received", sa.DateTime(timezone=True), nullable=True),
    # The latest record's agent.name (migration 0006), so search reads only this table.
    sa.Column("name", sa.Text(), nullable=True),
    # What search reads (migration 0006): the card URL, "\n", the name; one LIKE a row.
    sa.Column("search", sa.Text(), nullable=True),
)


meta: Final = sa.Table(
    "ledger_meta",
    _metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text(), nullable=False),
)
