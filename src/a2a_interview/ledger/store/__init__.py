"""The store: result records kept byte for byte, beside columns to find them by.

SQLAlchemy Core on SQLite (a file, the default) or PostgreSQL (psycopg 3); the schema
is versioned by Alembic, whose migrations ship in ``a2a_interview/ledger/migrations``
and run when a store is opened (``docs/decisions.md`` D-STORE-1). The package's facade;
its parts, each importing only those listed before it (``tests/test_import_graph.py``):

- :mod:`.tables`: the schema as the code reads it, and the bounds of its columns;
- :mod:`.values`: what the store hands out (``StoredRecord``, ``AgentSummary``, ...);
- :mod:`.columns`: a record's bytes read into its row, or refused (PROFILE §8);
- :mod:`.opening`: a store's URL, SQLite's settings, migrating under a lock;
- :mod:`.summary`: what is kept at write time (standing columns, each agent's summary);
- :mod:`.lines`: a page of the index, by statements built once;
- :mod:`.ledger`: the :class:`Ledger` itself, writing and reading.
"""

from __future__ import annotations

from .columns import agent_key
from .ledger import Ledger
from .lines import SEARCH_RULE, searchable
from .opening import parse_store_url
from .summary import search_text
from .tables import (
    DEFAULT_STORE,
    MAX_NAME,
    MAX_URL,
    MIGRATIONS,
    VERSION_TABLE,
    agents_table,
    meta,
    records,
)
from .values import AgentLine, AgentSummary, ListedRecord, RunnerSeen, StoredRecord, Totals

_MIGRATIONS = MIGRATIONS  # the name tests and benches have used

__all__ = [
    "DEFAULT_STORE",
    "MAX_NAME",
    "MAX_URL",
    "MIGRATIONS",
    "SEARCH_RULE",
    "VERSION_TABLE",
    "AgentLine",
    "AgentSummary",
    "Ledger",
    "ListedRecord",
    "RunnerSeen",
    "StoredRecord",
    "Totals",
    "agent_key",
    "agents_table",
    "meta",
    "parse_store_url",
    "records",
    "search_text",
    "searchable",
]
