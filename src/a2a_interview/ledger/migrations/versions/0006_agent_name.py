"""The agent's name (the record's ``agent.name``, as its card names itself) kept at
write time beside each record and, for its latest record, in the agent's summary row,
so the index shows it and search finds it without reading any record's bytes; and the
text search reads (card URL and name in one indexed column).

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
        # What search reads: the card URL, a line break, the name. One column (and its
        # index, for an index-only scan) costs one LIKE per agent, not two.
        table.add_column(sa.Column("search", sa.Text(), nullable=True))
    op.create_index("ledger_agents_search", "ledger_agents", ["search"])
    op.execute("DELETE FROM ledger_meta WHERE key = 'standing_by'")


def downgrade() -> None:
    op.drop_index("ledger_agents_search", "ledger_agents")
    with op.batch_alter_table("ledger_agents") as table:
        table.drop_column("search")
        table.drop_column("name")
    with op.batch_alter_table("ledger_records") as table:
        table.drop_column("agent_name")
