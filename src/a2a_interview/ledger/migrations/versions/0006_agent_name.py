"""The agent's name (the record's ``agent.name``, as its card names itself) kept at
write time beside each record and, for its latest record, in the agent's summary row,
so the index shows it and search finds it without reading any record's bytes.

The revision clears the release that last refreshed the kept columns, so the next open
reads every record's bytes once and fills the new columns (Ledger.migrate).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ledger_records") as table:
        table.add_column(sa.Column("agent_name", sa.Text(), nullable=True))
    with op.batch_alter_table("ledger_agents") as table:
        table.add_column(sa.Column("name", sa.Text(), nullable=True))
    op.execute("DELETE FROM ledger_meta WHERE key = 'standing_by'")


def downgrade() -> None:
    with op.batch_alter_table("ledger_agents") as table:
        table.drop_column("name")
    with op.batch_alter_table("ledger_records") as table:
        table.drop_column("agent_name")
