"""Search by trigrams (D-STORE-17): a search of the index (part of a
card URL or of an agent's name, the summary's ``search`` column) reads an index of the
column's trigrams instead of every agent's row.

- SQLite: an FTS5 table with the ``trigram`` tokenizer over ``ledger_agents.search``,
  kept by triggers. FTS5's external content needs a stable integer key, and a table
  whose key is text has only an implicit rowid, which ``VACUUM`` may renumber: so
  ``ledger_agents`` is rebuilt with ``id INTEGER PRIMARY KEY`` and ``card_url``
  unique (what every query and upsert names stays as it was).
- PostgreSQL: the ``pg_trgm`` extension (Debian's ``postgresql`` ships it) and a GIN
  index on ``search`` with ``gin_trgm_ops``, which the ``ILIKE`` already written uses.
  Where the extension cannot be created (a role without the right), the migration goes
  on without it: search stays correct, scanning the summary as before.

Which index a store has is kept in ``ledger_meta`` (``search_index``: ``fts5``,
``pg_trgm`` or ``none``), so the store reads it once when opened.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_SQLITE_REBUILD = (
    """CREATE TABLE ledger_agents_new (
        id INTEGER PRIMARY KEY,
        card_url TEXT NOT NULL UNIQUE,
        latest_id BIGINT,
        results BIGINT NOT NULL DEFAULT 0,
        evidence BIGINT NOT NULL DEFAULT 0,
        last_received DATETIME,
        name TEXT,
        search TEXT)""",
    """INSERT INTO ledger_agents_new
        (card_url, latest_id, results, evidence, last_received, name, search)
        SELECT card_url, latest_id, results, evidence, last_received, name, search
        FROM ledger_agents ORDER BY card_url""",
    "DROP TABLE ledger_agents",
    "ALTER TABLE ledger_agents_new RENAME TO ledger_agents",
    "CREATE INDEX ledger_agents_received ON ledger_agents (last_received)",
    "CREATE INDEX ledger_agents_search ON ledger_agents (search)",
)

# ``columnsize=0``: no per-row size table (nothing ranks the matches). A summary row is
# first written with no search text (``Ledger`` recounts it in the same transaction):
# the triggers skip a NULL on either side, which kept an import at today's rate.
_SQLITE_FTS = (
    """CREATE VIRTUAL TABLE ledger_agents_fts USING fts5(
        search, content='ledger_agents', content_rowid='id', tokenize='trigram',
        columnsize=0)""",
    """CREATE TRIGGER ledger_agents_fts_insert AFTER INSERT ON ledger_agents
    WHEN new.search IS NOT NULL BEGIN
        INSERT INTO ledger_agents_fts (rowid, search) VALUES (new.id, new.search);
    END""",
    """CREATE TRIGGER ledger_agents_fts_delete AFTER DELETE ON ledger_agents
    WHEN old.search IS NOT NULL BEGIN
        INSERT INTO ledger_agents_fts (ledger_agents_fts, rowid, search)
        VALUES ('delete', old.id, old.search);
    END""",
    """CREATE TRIGGER ledger_agents_fts_unindex AFTER UPDATE OF search ON ledger_agents
    WHEN old.search IS NOT NULL AND old.search IS NOT new.search BEGIN
        INSERT INTO ledger_agents_fts (ledger_agents_fts, rowid, search)
        VALUES ('delete', old.id, old.search);
    END""",
    """CREATE TRIGGER ledger_agents_fts_index AFTER UPDATE OF search ON ledger_agents
    WHEN new.search IS NOT NULL AND old.search IS NOT new.search BEGIN
        INSERT INTO ledger_agents_fts (rowid, search) VALUES (new.id, new.search);
    END""",
    "INSERT INTO ledger_agents_fts (ledger_agents_fts) VALUES ('rebuild')",
)


def _sqlite(connection: sa.Connection) -> str:
    for statement in _SQLITE_REBUILD:
        connection.exec_driver_sql(statement)
    try:
        with connection.begin_nested():
            for statement in _SQLITE_FTS:
                connection.exec_driver_sql(statement)
    except sa.exc.OperationalError:  # an SQLite built without FTS5 or its trigram
        return "none"
    return "fts5"


def _postgresql(connection: sa.Connection) -> str:
    try:
        with connection.begin_nested():
            connection.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            connection.exec_driver_sql(
                "CREATE INDEX ledger_agents_search_trgm ON ledger_agents"
                " USING gin (search gin_trgm_ops)"
            )
    except sa.exc.DBAPIError:  # no right to create the extension, or it is not there
        return "none"
    return "pg_trgm"


def upgrade() -> None:
    connection = op.get_bind()
    kind = _sqlite(connection) if connection.dialect.name == "sqlite" else _postgresql(connection)
    connection.execute(sa.text("DELETE FROM ledger_meta WHERE key = 'search_index'"))
    connection.execute(
        sa.text("INSERT INTO ledger_meta (key, value) VALUES ('search_index', :kind)"),
        {"kind": kind},
    )


def downgrade() -> None:
    connection = op.get_bind()
    connection.execute(sa.text("DELETE FROM ledger_meta WHERE key = 'search_index'"))
    if connection.dialect.name == "sqlite":
        for name in ("insert", "delete", "unindex", "index"):
            connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS ledger_agents_fts_{name}")
        connection.exec_driver_sql("DROP TABLE IF EXISTS ledger_agents_fts")
    else:
        connection.exec_driver_sql("DROP INDEX IF EXISTS ledger_agents_search_trgm")
