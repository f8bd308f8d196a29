"""What the store keeps at write time beside the records: the ``standing`` column and
the index's columns refreshed from a record's bytes, and each agent's summary row
(latest record, counts, name, search text) locked and recounted in the writer's
transaction, so a page of the index costs O(page)."""

from __future__ import annotations

from collections.abc import Iterable

try:
    import sqlalchemy as sa
    from sqlalchemy.dialects.postgresql import insert as postgresql_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert
    from sqlalchemy.engine import Connection
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the ledger needs SQLAlchemy: pip install 'a2a-interview[ledger]'") from exc

from ...record import agent_name, member_at, standing_reason
from ...strictjson import loads
from .columns import short
from .tables import Dialect, agents_table, records


def refresh_columns(connection: Connection) -> int:
    changed, last = 0, 0
    query = sa.select(
        records.c.id,
        records.c.standing,
        records.c.standing_reason,
        records.c.agent_name,
        records.c.body,
    ).order_by(records.c.id)
    while True:  # in pages: a large store never sits in memory at once
        rows = connection.execute(query.where(records.c.id > last).limit(500)).all()
        if not rows:
            return changed
        last = rows[-1].id
        updates = []
        for row in rows:
            document = loads(row.body)
            assert isinstance(document, dict)
            standing, reason = standing_reason(document)
            name = agent_name(document)
            if (standing, reason, name) != (row.standing, row.standing_reason, row.agent_name):
                status = member_at(document, "agent", "card_signature", "status")
                reading = member_at(document, "agent", "card_signature", "reading")
                updates.append({"row_id": row.id, "standing": standing, "reason": reason,
                                "status": short(status), "reading": short(reading),
                                "name": name})  # fmt: skip
        if updates:
            connection.execute(
                records.update()
                .where(records.c.id == sa.bindparam("row_id"))
                .values(
                    standing=sa.bindparam("standing"),
                    standing_reason=sa.bindparam("reason"),
                    card_signature=sa.bindparam("status"),
                    card_reading=sa.bindparam("reading"),
                    agent_name=sa.bindparam("name"),
                ),
                updates,
            )
            changed += len(updates)


def lock_agents(connection: Connection, dialect: Dialect, card_urls: Iterable[str]) -> None:
    """Create (or lock, on PostgreSQL: the upsert takes the row lock) each agent's
    summary row, in card URL order so concurrent writers never deadlock; a writer then
    recounts an agent only after any other writer to it has committed."""
    insert = sqlite_insert if dialect == "sqlite" else postgresql_insert
    for card_url in sorted(set(card_urls)):
        statement = insert(agents_table).values(card_url=card_url, results=0, evidence=0)
        connection.execute(
            statement.on_conflict_do_update(
                index_elements=[agents_table.c.card_url],
                set_={"card_url": statement.excluded.card_url},
            )
        )


def refresh_agents(connection: Connection, card_urls: Iterable[str]) -> None:
    """Recount each agent's summary row from its records (index range scans)."""
    for card_url in sorted(set(card_urls)):
        mine = records.c.card_url == card_url
        latest_row = connection.execute(
            sa.select(records.c.id, records.c.agent_name)
            .where(mine)
            .order_by(records.c.finished_at.desc(), records.c.id.desc())
            .limit(1)
        ).first()
        latest, name = (latest_row.id, latest_row.agent_name) if latest_row else (None, None)
        counts = connection.execute(
            sa.select(
                sa.func.count(),
                sa.func.count().filter(records.c.standing == "evidence"),
                sa.func.max(records.c.stored_at),
            ).where(mine)
        ).one()
        connection.execute(
            agents_table.update()
            .where(agents_table.c.card_url == card_url)
            .values(
                latest_id=latest,
                results=counts[0],
                evidence=counts[1],
                last_received=counts[2],
                name=name,  # the latest record's: an agent is named as it last named itself
                search=search_text(card_url, name),
            )
        )


def search_text(card_url: str, name: str | None) -> str:
    """What search matches for an agent: its card URL and its name on one line each, so
    one case-folded ``LIKE`` per agent finds either (a URL holds no line break)."""
    return card_url if name is None else f"{card_url}\n{name}"


def rebuild_agents(connection: Connection) -> None:
    """Every agent's summary row recounted (after the standing column was refreshed)."""
    connection.execute(agents_table.delete())
    last = ""
    while True:  # in pages of agents
        urls = (
            connection.execute(
                sa.select(records.c.card_url)
                .where(records.c.card_url > last)
                .group_by(records.c.card_url)
                .order_by(records.c.card_url)
                .limit(500)
            )
            .scalars()
            .all()
        )
        if not urls:
            return
        connection.execute(
            agents_table.insert(), [{"card_url": u, "results": 0, "evidence": 0} for u in urls]
        )
        refresh_agents(connection, urls)
        last = urls[-1]
