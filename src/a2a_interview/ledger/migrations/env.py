"""Alembic's entry point for the ledger: always given an open connection by
``a2a_interview.ledger.store.opening.migrate_schema`` (which holds the migration lock),
never a URL."""

from __future__ import annotations

from alembic import context

from a2a_interview.ledger.store.tables import VERSION_TABLE

connection = context.config.attributes["connection"]
context.configure(connection=connection, version_table=VERSION_TABLE)
with context.begin_transaction():
    context.run_migrations()
