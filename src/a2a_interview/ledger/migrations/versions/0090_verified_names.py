"""Names that verified (PROFILE §8 as amended): a stored row is refiled and renamed by
what the reader can check.

- An agent is its card URL normalized (RFC 3986 §6.2.2, ``a2a_interview.cardurl``):
  each row's ``card_url`` is recomputed from its bytes, so rows filed under spellings of
  one URL (``HTTP://``, ``//.well-known``, ``:443``, ``?x=1``, ``#frag``) fold into one
  agent. A row whose URLs carry userinfo (``https://trusted.example:xx@evil.example``)
  fails today's sanity: it leaves ``ledger_records`` for ``ledger_refused`` (byte for
  byte, with the reason, as migration 0004 does), so it is no longer filed under a host
  it only pretends to name.
- A key names a runner only when a signature by it verifies on the record: an unsigned
  row's ``runner_key`` is cleared (the record's ``ran_by.key`` stays in its bytes, as
  self-declared text), so no runner's results count it.

The revision clears the release that last refreshed the kept columns, so the next open
recounts every agent's summary row from its records (Ledger.migrate): agents folded
into one are one row.

Revision ID: 0090_verified_names
Revises: 0007
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from a2a_interview.cardurl import URLRefused, normalize_url
from a2a_interview.record import member_at, record_sanity, verify_record_signature
from a2a_interview.strictjson import loads

revision = "0090_verified_names"
down_revision = "0007"
branch_labels = None
depends_on = None

_records = sa.table(
    "ledger_records",
    sa.column("id", sa.BigInteger()),
    sa.column("card_url", sa.Text()),
    sa.column("runner_key", sa.Text()),
    sa.column("body", sa.LargeBinary()),
)
_refused = sa.table(
    "ledger_refused",
    sa.column("id", sa.BigInteger()),
    sa.column("reason", sa.String(32)),
    sa.column("body", sa.LargeBinary()),
)


def _filed(document: dict[str, object], card_url: str) -> str:
    """The row's agent as the store files it now (``store.columns.agent_key``): the
    record's card URL normalized; for a record without one, the stored key normalized."""
    named = member_at(document, "agent", "card_url")
    try:
        return normalize_url(named if isinstance(named, str) else card_url)
    except URLRefused:
        return card_url


def upgrade() -> None:
    connection = op.get_bind()
    now = datetime.now(UTC)
    last = 0
    while True:  # in pages: a large store never sits in memory at once
        rows = connection.execute(
            sa.select(_records.c.id, _records.c.card_url, _records.c.runner_key, _records.c.body)
            .where(_records.c.id > last)
            .order_by(_records.c.id)
            .limit(500)
        ).all()
        if not rows:
            break
        last = rows[-1].id
        drop: list[int] = []
        updates: list[dict[str, object]] = []
        for row in rows:
            document = loads(bytes(row.body))
            assert isinstance(document, dict)  # stored only after the same check
            insane = record_sanity(document, now)
            if insane is not None and insane.reason == "url_userinfo":
                connection.execute(
                    _refused.insert().values(id=row.id, reason=insane.reason, body=row.body)
                )
                drop.append(row.id)
                continue
            verified = verify_record_signature(document).status == "valid"
            key = row.runner_key if verified else None
            card_url = _filed(document, row.card_url)
            if (card_url, key) != (row.card_url, row.runner_key):
                updates.append({"row_id": row.id, "url": card_url, "key": key})
        if drop:
            connection.execute(_records.delete().where(_records.c.id.in_(drop)))
        if updates:
            connection.execute(
                _records.update()
                .where(_records.c.id == sa.bindparam("row_id"))
                .values(card_url=sa.bindparam("url"), runner_key=sa.bindparam("key")),
                updates,
            )
    connection.execute(sa.text("DELETE FROM ledger_meta WHERE key = 'standing_by'"))


def downgrade() -> None:
    # The normalized names are names an older release files under as well; the cleared
    # keys and the refused rows stay as they are.
    pass
