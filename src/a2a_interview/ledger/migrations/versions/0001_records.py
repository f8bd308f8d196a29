"""The records table: each result record byte for byte beside its indexed columns.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ledger_records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("digest", sa.String(71), nullable=False),
        sa.Column("card_url", sa.Text(), nullable=False),
        sa.Column("agent_url", sa.Text(), nullable=False),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("party", sa.String(32), nullable=False),
        sa.Column("runner_name", sa.Text(), nullable=False),
        sa.Column("runner_key", sa.Text(), nullable=True),
        sa.Column("signature", sa.String(16), nullable=False),
        sa.Column("standing", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("job_key", sa.String(200), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.UniqueConstraint("digest", name="ledger_records_digest_key"),
        # A job writes at most one record (NULLs, records not from a job, never clash).
        sa.UniqueConstraint("job_key", name="ledger_records_job_key_key"),
    )
    op.create_index("ledger_records_agent", "ledger_records", ["card_url", "finished_at", "id"])
    op.create_index("ledger_records_outcome", "ledger_records", ["outcome"])
    op.create_index("ledger_records_party", "ledger_records", ["party"])
    op.create_index("ledger_records_standing", "ledger_records", ["standing"])
    op.create_index("ledger_records_finished", "ledger_records", ["finished_at"])


def downgrade() -> None:
    op.drop_table("ledger_records")
