"""One run, one row (PROFILE §8 as amended): ``digest`` becomes the run's
identity, the JCS digest of the record without ``signatures``; of the rows one run had
grown (signatures repeated or added), one is kept, a signed one before an unsigned one,
then the first stored. Rows failing the sanity of PROFILE §8 (times, URL schemes, calls
made to another agent) would be refused today: they leave ``ledger_records`` for
``ledger_refused`` (kept byte for byte with the reason, never deleted: an operator can
read them and judge), so a record dated 2099 stops being an agent's latest.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from a2a_interview.record import record_identity, record_sanity
from a2a_interview.strictjson import loads

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_records = sa.table(
    "ledger_records",
    sa.column("id", sa.BigInteger()),
    sa.column("digest", sa.String(71)),
    sa.column("signature", sa.String(16)),
    sa.column("body", sa.LargeBinary()),
)


def upgrade() -> None:
    refused = op.create_table(
        "ledger_refused",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
    )
    connection = op.get_bind()
    now = datetime.now(UTC)
    keep: dict[str, tuple[bool, int]] = {}  # identity -> (unsigned, id) of the row kept
    drop: list[int] = []
    moves: list[dict[str, object]] = []
    last = 0
    while True:  # in pages: a large store never sits in memory at once
        rows = connection.execute(
            sa.select(_records.c.id, _records.c.signature, _records.c.body)
            .where(_records.c.id > last)
            .order_by(_records.c.id)
            .limit(500)
        ).all()
        if not rows:
            break
        last = rows[-1].id
        for row in rows:
            document = loads(bytes(row.body))
            assert isinstance(document, dict)  # stored only after the same check
            reason = record_sanity(document, now)
            if reason is not None:
                connection.execute(
                    refused.insert().values(id=row.id, reason=reason.reason, body=row.body)
                )
                drop.append(row.id)
                continue
            identity = record_identity(document)
            rank = (row.signature == "unsigned", row.id)
            kept = keep.get(identity)
            if kept is None or rank < kept:
                if kept is not None:
                    drop.append(kept[1])
                keep[identity] = rank
            else:
                drop.append(row.id)
    for identity, (_, row_id) in keep.items():
        moves.append({"row_id": row_id, "identity": identity})
    for start in range(0, len(drop), 500):
        connection.execute(_records.delete().where(_records.c.id.in_(drop[start : start + 500])))
    # Two steps, so no identity clashes with a row's old digest on the way.
    connection.execute(
        _records.update().values(digest=sa.literal("x").concat(sa.cast(_records.c.id, sa.String())))
    )
    if moves:
        connection.execute(
            _records.update()
            .where(_records.c.id == sa.bindparam("row_id"))
            .values(digest=sa.bindparam("identity")),
            moves,
        )


def downgrade() -> None:
    # The identity is a digest as good as the old one for every row still there; the
    # refused rows stay where they are.
    pass
