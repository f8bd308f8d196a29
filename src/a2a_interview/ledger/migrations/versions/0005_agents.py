"""What the index shows per agent, kept at write time (D-STORE-14): one row per
agent (its card URL) with its latest record's id, how many results it has and how many
of them are evidence, and when the store last received one; and beside each record the
columns its index line shows (standing reason, card signature status and reading), so
an index page costs O(page), not O(agents), and scheduling reads the store's own
receipt times.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # What the index shows of a record, kept beside it: filled by the standing refresh
    # Ledger.open runs for a new release (the rows' bytes are read once, then).
    with op.batch_alter_table("ledger_records") as table:
        table.add_column(sa.Column("standing_reason", sa.String(32), nullable=True))
        table.add_column(sa.Column("card_signature", sa.String(32), nullable=True))
        table.add_column(sa.Column("card_reading", sa.String(32), nullable=True))
    op.create_table(
        "ledger_agents",
        sa.Column("card_url", sa.Text(), primary_key=True),
        sa.Column("latest_id", sa.BigInteger(), nullable=True),
        sa.Column("results", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("evidence", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("last_received", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ledger_agents_received", "ledger_agents", ["last_received"])
    # An agent's evidence, newest first, without reading its other records.
    op.create_index(
        "ledger_records_agent_standing",
        "ledger_records",
        ["card_url", "standing", "finished_at", "id"],
    )
    op.execute(
        """
        INSERT INTO ledger_agents (card_url, latest_id, results, evidence, last_received)
        SELECT card_url,
               (SELECT r2.id FROM ledger_records r2 WHERE r2.card_url = r.card_url
                ORDER BY r2.finished_at DESC, r2.id DESC LIMIT 1),
               COUNT(*),
               SUM(CASE WHEN standing = 'evidence' THEN 1 ELSE 0 END),
               MAX(stored_at)
        FROM ledger_records r GROUP BY card_url
        """
    )


def downgrade() -> None:
    op.drop_index("ledger_records_agent_standing", "ledger_records")
    op.drop_table("ledger_agents")
    with op.batch_alter_table("ledger_records") as table:
        table.drop_column("card_reading")
        table.drop_column("card_signature")
        table.drop_column("standing_reason")
