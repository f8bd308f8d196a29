"""The evidence ledger (PROFILE §8): result records kept byte for byte, read back with
their standing recomputed, and re-verified on a schedule by workers.

    from a2a_interview.ledger import Ledger
    with Ledger.open("sqlite:///ledger.db") as ledger:   # or postgresql://...
        stored = ledger.add(record_bytes)                 # -> StoredRecord
        for agent in ledger.agents():                     # ordered by card URL
            print(agent.card_url, agent.latest.outcome, agent.latest.standing)

Needs the ``ledger`` extra (SQLAlchemy, Alembic, psycopg, procrastinate). The job
queue (``a2a_interview.ledger.jobs``) needs a PostgreSQL store.
"""

from __future__ import annotations

from .errors import (
    BadSignature,
    JobsNeedPostgreSQL,
    LedgerError,
    NotARecord,
    NotSane,
    RecordRefused,
    StoreTooNew,
    StoreUnavailable,
)
from .store import (
    DEFAULT_STORE,
    AgentLine,
    AgentSummary,
    Ledger,
    ListedRecord,
    StoredRecord,
    agent_key,
    parse_store_url,
)

__all__ = [
    "DEFAULT_STORE",
    "AgentLine",
    "AgentSummary",
    "BadSignature",
    "JobsNeedPostgreSQL",
    "Ledger",
    "LedgerError",
    "ListedRecord",
    "NotARecord",
    "NotSane",
    "RecordRefused",
    "StoreTooNew",
    "StoreUnavailable",
    "StoredRecord",
    "agent_key",
    "parse_store_url",
]
