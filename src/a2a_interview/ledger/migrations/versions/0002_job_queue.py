"""The job queue's tables on PostgreSQL: procrastinate's schema, applied here so that
one migration tool owns the whole database (procrastinate's documented way when an
application has its own migrations). SQLite has no job queue: nothing to do there.

Upgrading procrastinate past the pinned minor means adding a revision that applies its
migration files from ``procrastinate/sql/migrations`` (docs/decisions.md D-STORE-8).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    if sa.inspect(bind).has_table("procrastinate_jobs"):
        return  # the platform applied procrastinate's schema itself
    from procrastinate.schema import SchemaManager

    # psycopg runs a parameterless multi-statement script as given (no % escaping).
    driver = bind.connection.driver_connection
    assert driver is not None
    driver.execute(SchemaManager.get_schema())


def downgrade() -> None:
    pass  # the queue's tables may hold jobs another application defers: kept
