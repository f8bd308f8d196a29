"""The ledger: :class:`Ledger`, a store of result records on SQLAlchemy Core (a SQLite
file, the default, or PostgreSQL through psycopg 3), opened and migrated by
:mod:`.opening`, written through :mod:`.columns` and :mod:`.summary`, read a page at a
time."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

try:
    import sqlalchemy as sa
    from sqlalchemy import event
    from sqlalchemy.dialects.postgresql import insert as postgresql_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert
    from sqlalchemy.engine import Connection, Engine
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the ledger needs SQLAlchemy: pip install 'a2a-interview[ledger]'") from exc

from ..errors import RecordRefused, StoreUnavailable
from .columns import columns, holdable, store_key
from .lines import (
    SEARCH_RULE,
    Filter,
    count_candidates,
    found_query,
    phrase,
    read_history,
    read_lines,
    searchable,
)
from .opening import (
    MIGRATING,
    migrate_schema,
    parse_store_url,
    sqlite_begin,
    sqlite_pragmas,
    unavailable,
)
from .summary import lock_agents, rebuild_agents, refresh_agents, refresh_columns
from .tables import DEFAULT_STORE, Dialect, agents_table, meta, records
from .values import AgentLine, AgentSummary, ListedRecord, RunnerSeen, StoredRecord, Totals

_PENDING: Final = RecordRefused("not stored yet")  # a slot put_many fills in


@functools.cache
def _held_query() -> Any:
    """The digests of ``:digests`` the store holds."""
    return sa.select(records.c.digest).where(
        records.c.digest.in_(sa.bindparam("digests", expanding=True))
    )


@functools.cache
def _ids_query() -> Any:
    """The ids and digests of the records of ``:digests``."""
    return sa.select(records.c.id, records.c.digest).where(
        records.c.digest.in_(sa.bindparam("digests", expanding=True))
    )


@functools.cache
def _bulk_insert_query(dialect: Dialect) -> Any:
    """Records' insert for many rows at once (executemany); a clash writes nothing."""
    insert = sqlite_insert if dialect == "sqlite" else postgresql_insert
    return insert(records).on_conflict_do_nothing()


@functools.cache
def _insert_query(dialect: Dialect) -> Any:
    """A record's insert, built once, its values bound on each execution (``ledger
    import``: building one with the values inlined cost more than its execution)."""
    insert = sqlite_insert if dialect == "sqlite" else postgresql_insert
    return insert(records).on_conflict_do_nothing().returning(records.c.id)


# Connections kept open between uses. SQLAlchemy's default keeps 5 and closes any
# beyond: 8 clients of one page process then opened (and PostgreSQL forked a backend
# for) a connection per request, a new SQLite connection with a cold page cache. 8 kept
# per process, up to 24 more while busy (ledger serve --workers 8: at most 64 idle).
_POOL: Final = {"pool_size": 8, "max_overflow": 24}


class Ledger:
    """A store of result records. Open with :meth:`open`; close with :meth:`close`
    (or use it as a context manager). Safe to share between threads; any number of
    processes may open the same store (PostgreSQL for many machines).
    """

    def __init__(self, engine: Engine, dialect: Dialect, url: sa.URL) -> None:
        self._engine = engine
        self.dialect: Dialect = dialect
        self._url = url

    @classmethod
    def open(cls, url: str | os.PathLike[str] = DEFAULT_STORE, *, migrate: bool = True) -> Ledger:
        """Open the store at ``url`` (see :func:`parse_store_url`), creating a SQLite
        file when missing, and bring its schema to this version (``migrate=False``
        skips that: the caller runs :meth:`migrate`).

        Raises ``StoreUnavailable`` (a bad URL, a file that cannot be opened, a server
        that cannot be reached) and ``StoreTooNew`` (a schema from a newer version).
        """
        sa_url, dialect = parse_store_url(url)
        if dialect == "sqlite":
            folder = Path(sa_url.database or "").parent
            if not folder.is_dir():
                raise StoreUnavailable("the SQLite store's folder does not exist")
            engine = sa.create_engine(sa_url, **_POOL)
            event.listen(engine, "connect", sqlite_pragmas)
            event.listen(engine, "begin", sqlite_begin)
        else:
            engine = sa.create_engine(
                sa_url, pool_pre_ping=True, connect_args={"connect_timeout": 10}, **_POOL
            )
        ledger = cls(engine, dialect, sa_url)
        try:
            if migrate:
                ledger.migrate(refresh=False)
            else:
                with ledger._read():
                    pass
        except BaseException:
            engine.dispose()
            raise
        return ledger

    def migrate(self, *, refresh: bool = True) -> None:
        """Bring the schema to this version's head (a no-op when it is there), then
        refresh the ``standing`` column from ``standing_of``: always with ``refresh``,
        else only when another release refreshed it last (``Ledger.open``). Raises as
        :meth:`open`."""
        from ... import __version__

        # All under the migration lock, so openers together refresh one at a time.
        with MIGRATING, self._begin(ledger_immediate=True) as connection:
            migrate_schema(connection, self.dialect)
            last = connection.execute(
                sa.select(meta.c.value).where(meta.c.key == "standing_by")
            ).scalar_one_or_none()
            unfilled = connection.execute(  # rows from before migration 0005's columns
                sa.select(records.c.id).where(records.c.standing_reason.is_(None)).limit(1)
            ).first()
            if refresh or last != __version__ or unfilled is not None:
                refresh_columns(connection)
                rebuild_agents(connection)
                connection.execute(meta.delete().where(meta.c.key == "standing_by"))
                connection.execute(meta.insert().values(key="standing_by", value=__version__))

    def close(self) -> None:
        """Release the store's connections."""
        self._engine.dispose()

    def forked(self) -> None:
        """In a child process after ``os.fork`` (``ledger serve --workers``): forget the
        parent's pooled connections without closing them (they are still the parent's),
        so that this process opens its own."""
        self._engine.dispose(close=False)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def conninfo(self) -> str:
        """The libpq connection string of a PostgreSQL store (for the job queue);
        raises ``StoreUnavailable`` for SQLite."""
        if self.dialect != "postgresql":
            raise StoreUnavailable("not a PostgreSQL store")
        return self._url.set(drivername="postgresql").render_as_string(hide_password=False)

    @contextlib.contextmanager
    def _begin(self, **options: Any) -> Iterator[Connection]:
        try:
            with self._engine.connect() as connection:
                if options:
                    connection.execution_options(**options)
                with connection.begin():
                    yield connection
        except sa.exc.IntegrityError:
            raise  # a constraint: the caller's business (see put)
        except sa.exc.DBAPIError as exc:
            raise unavailable(exc) from None

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self._engine.connect() as connection:
                yield connection
        except sa.exc.DBAPIError as exc:
            raise unavailable(exc) from None

    # -- writing ------------------------------------------------------------------------

    def add(self, body: bytes, *, job_key: str | None = None) -> StoredRecord:
        """Store one record (its bytes as given, surrounding whitespace trimmed) and
        return it. See :meth:`put`."""
        return self.put(body, job_key=job_key)[0]

    def put(self, body: bytes, *, job_key: str | None = None) -> tuple[StoredRecord, bool]:
        """Store one record; return it and whether it is new.

        Idempotent: a record already stored (the same JCS digest) is returned as it
        is, with ``False``; so is the record already written for ``job_key`` (a job
        that runs again after its worker died writes nothing more).

        Raises ``NotARecord`` (not strict I-JSON within 1 MiB, not an object, a
        PROFILE §8 member missing or malformed), ``BadSignature`` (the record carries
        ``signatures`` that do not verify, or none by ``ran_by.key``; an unsigned
        record is accepted: it is a claim), ``StoreUnavailable``.
        """
        row = columns(bytes(body).strip(b" \t\r\n"))
        if job_key is not None:
            done = self.by_job(job_key)
            if done is not None:
                return done, False
        with self._begin() as connection:
            lock_agents(connection, self.dialect, [row["card_url"]])
            return self._insert(connection, row, job_key)

    def put_many(self, bodies: Iterable[bytes]) -> list[tuple[StoredRecord, bool] | RecordRefused]:
        """Store several records in one transaction (``ledger import``): for each, in
        order, what :meth:`put` returns, or the ``RecordRefused`` it would raise.
        Raises ``StoreUnavailable`` (and then none of them is stored)."""
        results: list[tuple[StoredRecord, bool] | RecordRefused] = []
        rows: list[tuple[int, dict[str, Any]]] = []
        for body in bodies:
            try:
                rows.append((len(results), columns(bytes(body).strip(b" \t\r\n"))))
            except RecordRefused as exc:
                results.append(exc)
                continue
            results.append(_PENDING)
        if not rows:  # every one refused: no transaction
            return results
        with self._begin() as connection:
            lock_agents(connection, self.dialect, [row["card_url"] for _, row in rows])
            changed: set[str] = set()
            fresh = self._insert_fresh(connection, rows, changed)
            for index, row in rows:
                found = fresh.get(index)
                results[index] = found or self._insert(connection, row, None, changed)
            refresh_agents(connection, changed)
        return results

    def _insert_fresh(
        self, connection: Connection, rows: list[tuple[int, dict[str, Any]]], changed: set[str]
    ) -> dict[int, tuple[StoredRecord, bool]]:
        """Insert at once the rows of a batch whose record the store does not hold (the
        first of each digest in the batch), their agents locked by the caller: one
        statement for them all, instead of one each (D-CLI-23). Returns what
        :meth:`_insert` would have for each, by its place; the others (held already, or
        repeated in the batch) are the caller's, one by one, as before."""
        digests = [row["digest"] for _, row in rows]
        held = set(connection.execute(_held_query(), {"digests": digests}).scalars())
        chosen: dict[str, tuple[int, dict[str, Any]]] = {}
        stamp = datetime.now(UTC)
        for index, row in rows:
            if row["digest"] not in held and row["digest"] not in chosen:
                chosen[row["digest"]] = (index, row | {"job_key": None, "stored_at": stamp})
        if not chosen:
            return {}
        connection.execute(_bulk_insert_query(self.dialect), [r for _, r in chosen.values()])
        ids = connection.execute(_ids_query(), {"digests": list(chosen)}).all()
        fresh: dict[int, tuple[StoredRecord, bool]] = {}
        for record_id, record_digest in ids:
            index, row = chosen[record_digest]
            fresh[index] = (self._stored(SimpleNamespace(id=record_id, **row)), True)
            changed.add(row["card_url"])
        return fresh

    def _insert(
        self,
        connection: Connection,
        row: dict[str, Any],
        job_key: str | None,
        changed: set[str] | None = None,
    ) -> tuple[StoredRecord, bool]:
        """Insert one row (its agent's summary row locked by the caller); the agent's
        summary is recounted now, or its card URL added to ``changed`` for the caller to
        recount once."""

        def touched() -> None:
            if changed is None:
                refresh_agents(connection, [row["card_url"]])
            else:
                changed.add(row["card_url"])

        row = row | {"job_key": job_key, "stored_at": datetime.now(UTC)}
        # Either unique column may clash: the same record (digest), or this job's record
        # written by an earlier run (job_key). Nothing is written then; the row is read.
        new_id = connection.execute(_insert_query(self.dialect), row).scalar_one_or_none()
        if new_id is not None:
            touched()
            return self._stored(SimpleNamespace(id=new_id, **row)), True
        for column, value in ((records.c.job_key, job_key), (records.c.digest, row["digest"])):
            if value is not None:
                found = connection.execute(sa.select(records).where(column == value)).first()
                if found is None:
                    continue
                if column is records.c.digest and found.signature == "unsigned" != row["signature"]:
                    # The same run, now with the runner's signature (PROFILE §8: one run,
                    # one record): the signed bytes replace the stripped copy.
                    kept = {k: row[k] for k in ("body", "signature", "standing", "runner_key")}
                    connection.execute(
                        records.update().where(records.c.id == found.id).values(**kept)
                    )
                    found = connection.execute(
                        sa.select(records).where(records.c.id == found.id)
                    ).one()
                    touched()
                return self._stored(found), False
        raise StoreUnavailable("the store refused a record for a reason it did not say")

    def refresh_standing(self) -> int:
        """Recompute the ``standing`` column of every row from ``standing_of`` (as
        :meth:`migrate` does). Returns how many rows changed."""
        with self._begin() as connection:
            changed = refresh_columns(connection)
            rebuild_agents(connection)
            return changed

    # -- reading ------------------------------------------------------------------------

    @staticmethod
    def _stored(row: Any) -> StoredRecord:
        def aware(moment: datetime) -> datetime:
            # SQLite keeps no zone: every time here was stored as UTC.
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment

        return StoredRecord(
            id=row.id,
            digest=row.digest,
            card_url=row.card_url,
            agent_url=row.agent_url,
            outcome=row.outcome,
            party=row.party,
            runner_name=row.runner_name,
            runner_key=row.runner_key,
            signature=row.signature,
            started_at=aware(row.started_at),
            finished_at=aware(row.finished_at),
            stored_at=aware(row.stored_at),
            job_key=row.job_key,
            body=bytes(row.body),
            standing_column=getattr(row, "standing", None),
            standing_reason=getattr(row, "standing_reason", None),
            card_signature=getattr(row, "card_signature", None),
            card_reading=getattr(row, "card_reading", None),
            agent_name=getattr(row, "agent_name", None),
        )

    def _one(self, where: Any) -> StoredRecord | None:
        with self._read() as connection:
            row = connection.execute(sa.select(records).where(where)).first()
        return None if row is None else self._stored(row)

    def get(self, record_id: int) -> StoredRecord | None:
        """The record with this id, or ``None``."""
        if not isinstance(record_id, int) or not 0 < record_id < 2**63:
            return None
        return self._one(records.c.id == record_id)

    def by_job(self, job_key: str) -> StoredRecord | None:
        """The record a worker's job wrote, or ``None`` when it has written none."""
        return self._one(records.c.job_key == job_key)

    def _summaries(self, query: Any) -> list[AgentSummary]:
        # The agents first (an index-only scan of the summary), then only their latest
        # records joined: never a join over the rows skipped.
        page = query.add_columns(
            agents_table.c.latest_id, agents_table.c.results, agents_table.c.evidence
        ).subquery()
        joined = (
            sa.select(page.c.results, page.c.evidence, *records.c)
            .join_from(page, records, records.c.id == page.c.latest_id)
            .order_by(page.c.card_url)
        )
        with self._read() as connection:
            rows = connection.execute(joined).all()
        return [
            AgentSummary(row.card_url, self._stored(row), int(row.results), int(row.evidence))
            for row in rows
        ]

    def agents(self) -> list[AgentSummary]:
        """Every agent with its latest record (the latest ``finished_at``; the later
        stored on a tie) and its record count, ordered by card URL: never by outcome
        (interview §9: absence of the extension is never ranked)."""
        return self._summaries(
            sa.select(agents_table.c.card_url).select_from(agents_table)
            .order_by(agents_table.c.card_url)
        )  # fmt: skip

    def _search(self, search: str, *, prefilter: bool = True) -> tuple[Filter, dict[str, str]]:
        """How a search chooses agents (:mod:`.lines`), and what it binds: the agent's
        ``search`` column (card URL, line break, latest name) holds ``search``, ASCII
        case folded on SQLite (``LIKE``), folded on PostgreSQL (``ILIKE``, which the
        ``pg_trgm`` index of migration 0007 serves). On SQLite with FTS5, the trigram
        index finds the candidates first and ``LIKE`` still decides, so the answer is
        the same with or without it (``prefilter``)."""
        if not searchable(search):  # no index serves it: it would read every agent
            raise ValueError(SEARCH_RULE)
        # As typed: LIKE and ILIKE fold case themselves (lowering it here first made
        # "Ça" miss "Ça" on SQLite, whose LIKE folds ASCII only).
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        if self.dialect == "postgresql":
            return "ilike", {"pattern": pattern}
        if not (prefilter and self._trigrams(search)):
            return "like", {"pattern": pattern}
        return "fts", {"pattern": pattern, "phrase": phrase(search)}

    def _trigrams(self, search: str) -> bool:
        """Whether the SQLite trigram index can find ``search`` (three characters at
        least: a trigram needs three)."""
        return self._fts and len(search) >= 3

    @functools.cached_property
    def _fts(self) -> bool:
        """Whether this SQLite store has migration 0007's trigram index."""
        if self.dialect != "sqlite":
            return False
        with self._read() as connection:
            kind = connection.execute(
                sa.select(meta.c.value).where(meta.c.key == "search_index")
            ).scalar_one_or_none()
        return kind == "fts5"

    def matching(self, search: str, cap: int) -> int:
        """How many agents ``search`` finds (see :meth:`agents_from`), counted up to
        ``cap + 1`` at most: a count of every match would cost O(matches). Over ``cap``,
        the caller pages with ``dense``. Raises ``ValueError`` for a search the index
        cannot answer (``searchable``, D-STORE-23): so do :meth:`search_page` and
        :meth:`agents_from`."""
        with self._read() as connection:
            return len(self._found(connection, search, cap))

    def _found(self, connection: Connection, search: str, cap: int) -> list[str]:
        """The card URLs of up to ``cap + 1`` agents ``search`` finds, in no order: one
        scan of the search index (D-STORE-17), whose answer both counts the matches and,
        under the cap, names the agents a page is read from."""
        if not searchable(search):
            raise ValueError(SEARCH_RULE)
        prefilter = True
        if self._trigrams(search):
            # The trigram index's candidates first, as it yields them: over the cap,
            # the matches are many, and a walk of the card URL index finds the cap
            # soonest.
            bound = {"phrase": phrase(search), "cap": cap + 1}
            prefilter = int(connection.execute(count_candidates(), bound).scalar_one()) <= cap
        choose, values = self._search(search, prefilter=prefilter)
        return list(connection.execute(found_query(choose), {**values, "cap": cap + 1}).scalars())

    def search_page(
        self,
        search: str,
        cap: int,
        limit: int,
        *,
        after: str | None = None,
        before: str | None = None,
    ) -> tuple[int, list[AgentLine]]:
        """How many agents ``search`` finds (up to ``cap + 1``, as :meth:`matching`) and
        a page of them (as :meth:`agents_from`), from one scan of the search index: under
        the cap the page is read by card URL from the agents that scan named, so the
        index is not walked twice; over it, by walking the card URL index (``dense``)."""
        with self._read() as connection:
            found = self._found(connection, search, cap)
            values: dict[str, Any]
            if len(found) > cap:
                choose, values = self._search(search, prefilter=False)
            elif found:
                choose, values = "among", {"among": found}
            else:
                return 0, []
            return len(found), read_lines(
                connection, choose, limit, after=after, before=before, values=values
            )

    def agents_from(
        self,
        limit: int,
        search: str | None = None,
        *,
        after: str | None = None,
        before: str | None = None,
        dense: bool = False,
    ) -> list[AgentLine]:
        """Up to ``limit`` agents' lines by card URL (never by outcome: interview §9),
        read from the summary kept at write time: the first ones after the card URL
        ``after``, or the last ones before ``before`` (keyset paging, D-WEB-22: O(page)
        wherever the page starts), in card URL order either way. ``search``: only agents
        whose card URL or latest ``agent.name`` holds it (case folded). ``dense``: the
        caller knows the search matches many agents (:meth:`matching` over its cap):
        walking the card URL index then finds a page sooner than the trigram index would.

        Each line's ``latest`` is a :class:`ListedRecord`: the columns kept at write
        time, not the record shown in full (:meth:`summary` and :meth:`get` read the
        bytes)."""
        choose: Filter = "none"
        values: dict[str, str] = {}
        if search:
            choose, values = self._search(search, prefilter=not dense)
        with self._read() as connection:
            return read_lines(connection, choose, limit, after=after, before=before, values=values)

    def totals(self) -> Totals:
        """Neutral totals: agents, results, evidence (claims are the rest)."""
        query = sa.select(
            sa.func.count(),
            sa.func.coalesce(sa.func.sum(agents_table.c.results), 0),
            sa.func.coalesce(sa.func.sum(agents_table.c.evidence), 0),
        ).select_from(agents_table)
        with self._read() as connection:
            agents, results, evidence = connection.execute(query).one()
        return Totals(int(agents), int(results), int(evidence))

    def summary(self, card_url: str) -> AgentSummary | None:
        """One agent's summary, or ``None`` for an agent the ledger does not know."""
        card_url = store_key(card_url)  # PROFILE §8: agents by normalized card URL
        if not holdable(card_url):
            return None
        found = self._summaries(
            sa.select(agents_table.c.card_url).select_from(agents_table)
            .where(agents_table.c.card_url == card_url)
        )  # fmt: skip
        return found[0] if found else None

    def history_page(self, card_url: str, offset: int, limit: int) -> list[ListedRecord]:
        """A page of the agent's records as list lines (:class:`ListedRecord`: the
        columns kept at write time, no bytes), newest first (by ``finished_at``, then
        as stored), read from the store's index: O(page)."""
        card_url = store_key(card_url)  # PROFILE §8: agents by normalized card URL
        if not holdable(card_url):
            return []
        with self._read() as connection:
            return read_history(connection, card_url, offset, limit)

    def latest_evidence(
        self, card_url: str, limit: int = 20, keys: Iterable[str] | None = None
    ) -> list[StoredRecord]:
        """The agent's newest records whose ``standing`` column says evidence (at most
        ``limit``), newest first: candidates a display rechecks from their bytes. With
        ``keys``, only those signed by one of them (the operator's listed runners: what
        leads, PROFILE §8)."""
        card_url = store_key(card_url)  # PROFILE §8: agents by normalized card URL
        if not holdable(card_url):
            return []
        where = [records.c.card_url == card_url, records.c.standing == "evidence"]
        if keys is not None:
            where.append(records.c.runner_key.in_(sorted(set(keys))))
        query = (
            sa.select(records)
            .where(*where)
            .order_by(records.c.finished_at.desc(), records.c.id.desc())
            .limit(limit)
        )
        with self._read() as connection:
            return [self._stored(row) for row in connection.execute(query)]

    def newer_than(self, record: StoredRecord) -> int:
        """How many of the agent's records are newer than ``record`` (its place in the
        newest-first list)."""
        later = sa.or_(
            records.c.finished_at > record.finished_at,
            sa.and_(records.c.finished_at == record.finished_at, records.c.id > record.id),
        )
        query = sa.select(sa.func.count()).where(records.c.card_url == record.card_url, later)
        with self._read() as connection:
            return int(connection.execute(query).scalar_one())

    def latest(self, card_url: str) -> StoredRecord | None:
        """The agent's latest record, or ``None`` for an agent the ledger does not
        know."""
        found = self.summary(card_url)
        return found.latest if found is not None else None

    def history(self, card_url: str) -> list[StoredRecord]:
        """The agent's records, oldest first (by ``finished_at``, then as stored);
        empty for an agent the ledger does not know.

        A card URL the store cannot hold (over :data:`MAX_URL` with the card path
        added, with NUL, which PostgreSQL's text cannot take, or with a lone surrogate,
        which UTF-8 cannot, as a command line's undecodable bytes) is
        not looked up: it is unknown, not an error."""
        card_url = store_key(card_url)  # PROFILE §8: agents by normalized card URL
        if not holdable(card_url):
            return []
        query = (
            sa.select(records)
            .where(records.c.card_url == card_url)
            .order_by(records.c.finished_at, records.c.id)
        )
        with self._read() as connection:
            return [self._stored(row) for row in connection.execute(query)]

    def due(self, older_than: timedelta, now: datetime) -> list[str]:
        """Card URLs of the agents whose last record *received* (the store's own
        ``stored_at``, never a time the record claims: PROFILE §8) is older than
        ``now - older_than``, ordered by card URL. ``now`` must be aware."""
        if now.tzinfo is None:
            raise ValueError("a naive datetime has no zone")
        cutoff = now.astimezone(UTC) - older_than
        query = (
            sa.select(agents_table.c.card_url)
            .where(agents_table.c.last_received < cutoff)
            .order_by(agents_table.c.card_url)
        )
        with self._read() as connection:
            return [row.card_url for row in connection.execute(query)]

    def records(self) -> Iterator[StoredRecord]:
        """Every record, in the order stored (``ledger export``)."""
        last = 0
        while True:  # in pages: a large store never sits in memory at once
            query = sa.select(records).where(records.c.id > last).order_by(records.c.id)
            with self._read() as connection:
                page = [self._stored(row) for row in connection.execute(query.limit(500))]
            if not page:
                return
            yield from page
            last = page[-1].id

    def runners(self) -> list[RunnerSeen]:
        """Every runner key the store holds a result by (PROFILE §8: a runner is its
        key), ordered by key: only keys whose signature verified on the record (an
        unsigned record's ``ran_by.key`` is self-declared text, kept as no key)."""
        query = (
            sa.select(
                records.c.runner_key,
                sa.func.min(records.c.stored_at).label("first"),
                sa.func.max(records.c.stored_at).label("last"),
                sa.func.count().label("n"),
            )
            .where(records.c.runner_key.is_not(None), records.c.signature == "valid")
            .group_by(records.c.runner_key)
            .order_by(records.c.runner_key)
        )
        with self._read() as connection:
            rows = connection.execute(query).all()

        def aware(moment: Any) -> datetime:
            if isinstance(moment, str):  # SQLite's min/max give the stored text
                moment = datetime.fromisoformat(moment)
            assert isinstance(moment, datetime)
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment

        return [RunnerSeen(r.runner_key, aware(r.first), aware(r.last), int(r.n)) for r in rows]

    def leading(
        self, card_urls: Iterable[str], keys: Iterable[str] | None = None
    ) -> dict[str, StoredRecord]:
        """For each agent of ``card_urls`` (as stored), its newest record whose
        ``standing`` column says evidence, signed by one of ``keys`` when given: the
        candidate that leads an index line (PROFILE §8), read for a page of agents at
        once. Agents without one are left out."""
        urls = sorted(set(card_urls))
        if not urls:
            return {}
        where = [records.c.card_url.in_(urls), records.c.standing == "evidence"]
        if keys is not None:
            where.append(records.c.runner_key.in_(sorted(set(keys))))
        place = sa.func.row_number().over(
            partition_by=records.c.card_url,
            order_by=(records.c.finished_at.desc(), records.c.id.desc()),
        )
        ranked = sa.select(records, place.label("place")).where(*where).subquery()
        query = sa.select(ranked).where(ranked.c.place == 1)
        with self._read() as connection:
            return {row.card_url: self._stored(row) for row in connection.execute(query)}

    def evidence_by(self, keys: Iterable[str]) -> int:
        """How many results are evidence signed by one of ``keys`` (the operator's
        listed runners), so totals count the kinds apart (PROFILE §8)."""
        chosen = sorted(set(keys))
        if not chosen:
            return 0
        query = sa.select(sa.func.count()).where(
            records.c.standing == "evidence", records.c.runner_key.in_(chosen)
        )
        with self._read() as connection:
            return int(connection.execute(query).scalar_one())

    def count(self) -> int:
        """How many records the store holds."""
        with self._read() as connection:
            return int(
                connection.execute(sa.select(sa.func.count()).select_from(records)).scalar_one()
            )
