"""The store: result records kept byte for byte, beside columns to find them by.

SQLAlchemy Core on SQLite (a file, the default) or PostgreSQL (psycopg 3); the schema
is versioned by Alembic, whose migrations ship in ``a2a_interview/ledger/migrations``
and run when a store is opened (``docs/decisions.md`` D-STORE-1).

What a record row keeps, and why:

- ``body``: the bytes as given (surrounding whitespace trimmed), never re-serialized, so
  a signature over them verifies again anywhere (PROFILE §8);
- ``digest``: the run's identity (PROFILE §8, ``record.record_identity``): ``sha256:``
  of the record's JCS form without ``signatures``, unique: the same run added twice,
  whatever its spelling and however many signatures it carries, is one row (a signed
  copy replaces an unsigned one: stripping the runner's signature and storing first
  must not veto the evidence);
- ``job_key``: unique when set: a worker's job writes at most one record, even when the
  job runs again after its worker was killed;
- ``card_url`` (the agent's key), ``outcome``, ``party``, runner, times: indexed
  columns copied from the record. ``standing`` is a filtering column refreshed from
  :func:`a2a_interview.record.standing_of`; what a reader is given is always recomputed
  (interview §8, §9 rule 4).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final, Literal

try:
    import sqlalchemy as sa
    from sqlalchemy import event
    from sqlalchemy.dialects.postgresql import insert as postgresql_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert
    from sqlalchemy.engine import Connection, Engine
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the ledger needs SQLAlchemy: pip install 'a2a-interview[ledger]'") from exc

from ..checks import Outcome
from ..errors import IngressError
from ..ijson import JSONObject, loads
from ..record import (
    PARTIES,
    Standing,
    agent_name,
    member_at,
    parse_rfc3339,
    record_identity,
    record_sanity,
    standing_of,
    standing_reason,
    verify_record_signature,
)
from ..spec import CARD_PATH, RESULT_FORMAT
from .errors import (
    BadSignature,
    NotARecord,
    NotSane,
    RecordRefused,
    StoreTooNew,
    StoreUnavailable,
)

__all__ = [
    "DEFAULT_STORE",
    "AgentSummary",
    "Ledger",
    "RunnerSeen",
    "StoredRecord",
    "Totals",
    "agent_key",
    "parse_store_url",
]

DEFAULT_STORE: Final = "a2a-interview-ledger.db"
# Bounds in UTF-8 bytes, not characters: the card URL is an indexed column and
# PostgreSQL's b-tree refuses an entry over about 2700 bytes (2048 characters of CJK
# are 6 KiB), which failed the whole transaction as if the store were down.
MAX_URL: Final = 2048
_MAX_CARD_URL: Final = MAX_URL + len(CARD_PATH)
MAX_NAME: Final = 1024
_MIGRATIONS: Final = "a2a_interview.ledger:migrations"
VERSION_TABLE: Final = "a2a_interview_ledger_version"
# One advisory lock key for "migrating the ledger", so that workers starting together
# on one PostgreSQL migrate one after the other (any fixed 64-bit number would do).
_MIGRATION_LOCK: Final = 0x6132615F6C6564

Dialect = Literal["sqlite", "postgresql"]

_metadata = sa.MetaData()
# The table as the code reads it; the migrations create it (they never import this).
records: Final = sa.Table(
    "ledger_records",
    _metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("digest", sa.String(71), nullable=False, unique=True),
    sa.Column("card_url", sa.Text(), nullable=False),
    sa.Column("agent_url", sa.Text(), nullable=False),
    sa.Column("outcome", sa.String(32), nullable=False),
    sa.Column("party", sa.String(32), nullable=False),
    sa.Column("runner_name", sa.Text(), nullable=False),
    sa.Column("runner_key", sa.Text(), nullable=True),
    sa.Column("signature", sa.String(16), nullable=False),
    sa.Column("standing", sa.String(16), nullable=False),
    # What the index shows, kept at write time (migration 0005): why the standing is
    # what it is, and the card signature's status and reading.
    sa.Column("standing_reason", sa.String(32), nullable=True),
    sa.Column("card_signature", sa.String(32), nullable=True),
    sa.Column("card_reading", sa.String(32), nullable=True),
    # agent.name, as the card names itself (migration 0006): peer text, never identity.
    sa.Column("agent_name", sa.Text(), nullable=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("job_key", sa.String(200), nullable=True, unique=True),
    sa.Column("body", sa.LargeBinary(), nullable=False),
)


# One row per agent, kept at write time in the same transaction as its records
# (migration 0005): the index reads a page of these, never every record.
agents_table: Final = sa.Table(
    "ledger_agents",
    _metadata,
    sa.Column("card_url", sa.Text(), primary_key=True),
    sa.Column("latest_id", sa.BigInteger(), nullable=True),
    sa.Column("results", sa.BigInteger(), nullable=False),
    sa.Column("evidence", sa.BigInteger(), nullable=False),
    sa.Column("last_received", sa.DateTime(timezone=True), nullable=True),
    # The latest record's agent.name (migration 0006), so search reads only this table.
    sa.Column("name", sa.Text(), nullable=True),
    # What search reads (migration 0006): the card URL, "\n", the name; one LIKE a row.
    sa.Column("search", sa.Text(), nullable=True),
)


meta: Final = sa.Table(
    "ledger_meta",
    _metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text(), nullable=False),
)


# ---------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class StoredRecord:
    """One stored result record.

    ``body`` is the record's bytes as given; ``document`` is them parsed; ``standing``
    is recomputed from ``document`` on every access (never read from the store).
    ``signature`` is the runner signature's status when stored: ``valid`` or
    ``unsigned`` (an unsigned record is a claim about itself and is kept as such).
    Times are aware UTC datetimes.
    """

    id: int
    digest: str
    card_url: str
    agent_url: str
    outcome: str
    party: str
    runner_name: str
    runner_key: str | None
    signature: str
    started_at: datetime
    finished_at: datetime
    stored_at: datetime
    job_key: str | None
    body: bytes = field(repr=False)
    # Kept at write time (None in a row written before migration 0005's refresh).
    standing_column: str | None = field(default=None, compare=False)
    standing_reason: str | None = field(default=None, compare=False)
    card_signature: str | None = field(default=None, compare=False)
    card_reading: str | None = field(default=None, compare=False)
    # agent.name as the card names itself (record.agent_name): peer text, never identity.
    agent_name: str | None = field(default=None, compare=False)

    @functools.cached_property
    def document(self) -> JSONObject:
        """The stored bytes parsed, on first use (a list shows columns, not bytes)."""
        value = loads(self.body)
        assert isinstance(value, dict)  # stored only after the same check
        return value

    @property
    def standing(self) -> Standing:
        """``claim`` or ``evidence``, recomputed now (PROFILE §8)."""
        return standing_of(self.document)


@dataclass(frozen=True, slots=True)
class RunnerSeen:
    """A runner key the store holds results by: when the store first and last received
    one (its own receipt time, never a time a record claims) and how many it holds."""

    key: str
    first_seen: datetime
    last_seen: datetime
    results: int


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """An agent (keyed by its card URL): its latest record, how many results it has and
    how many of them were evidence when stored (the ``standing`` column)."""

    card_url: str
    latest: StoredRecord
    count: int
    evidence: int = 0


@dataclass(frozen=True, slots=True)
class Totals:
    """Neutral totals (never an outcome: interview §9): agents, results, and how many
    results are evidence and how many claims."""

    agents: int
    results: int
    evidence: int

    @property
    def claims(self) -> int:
        return self.results - self.evidence


# ---------------------------------------------------------------------------------------
# Reading a record before it is stored


# RFC 3339 §5.6 date-time (``T`` or a space, any fraction), and the same without a
# zone so that its absence is named. ``datetime.fromisoformat`` alone takes ISO 8601
# spellings RFC 3339 does not (``20261129T100000Z``, ``2026-W48-7``, ``+05``).
_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,
)


def _utc(text: Any, member: str) -> datetime:
    moment = parse_rfc3339(text)  # the one reader of a record's times (sanity.py)
    if moment is not None:
        return moment
    shape = _RFC3339.fullmatch(text) if isinstance(text, str) and len(text) <= 64 else None
    if shape is not None and shape["zone"] is None:
        raise NotARecord(f"{member} has no time zone")
    raise NotARecord(f"{member} is not an RFC 3339 time")


def _too_long(value: str, limit: int) -> bool:
    """Whether ``value`` is over ``limit`` bytes in UTF-8 (without encoding it when its
    length alone decides)."""
    if len(value) > limit:
        return True
    return len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit


def _holdable(card_url: str) -> bool:
    """Whether the store could hold ``card_url`` as an agent's key: within the bound,
    without NUL, and UTF-8 (a command line's undecodable bytes are lone surrogates,
    which the drivers refuse with an exception)."""
    if len(card_url) > _MAX_CARD_URL or "\x00" in card_url:
        return False
    try:
        return len(card_url.encode("utf-8")) <= _MAX_CARD_URL
    except UnicodeEncodeError:
        return False


def _text(value: Any, member: str, limit: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise NotARecord(f"{member} is not a non-empty string")
    if _too_long(value, limit):
        raise NotARecord(f"{member} is longer than {limit} bytes in UTF-8")
    if "\x00" in value:
        raise NotARecord(f"{member} holds a NUL character")
    return value


def _short(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 32 else None


def agent_key(agent_url: str, card_url: str | None) -> str:
    """The URL an agent is filed under: its card URL as the record names it; for a
    record without one (the card was never read), the card URL the verifier would
    have fetched for ``agent_url`` (``verifier.client.card_url_for``), so that an
    agent's unreachable runs sit in the same history as its others."""
    if card_url is not None:
        return card_url
    try:
        from ..verifier.client import InsecureURL, card_url_for
    except ImportError:  # pragma: no cover - the ledger extra installs the client
        return agent_url
    try:
        return card_url_for(agent_url)
    except InsecureURL:
        return agent_url


def _columns(body: bytes, now: datetime | None = None) -> dict[str, Any]:
    """The row for ``body``, or the refusal (PROFILE §8 members and sanity, as a reader
    whose clock reads ``now``, read when not given; strict I-JSON)."""
    try:
        document = loads(body)  # the 1 MiB bound of PROFILE §1.4
    except IngressError as exc:
        raise NotARecord(f"not strict I-JSON ({exc.code})") from None
    if not isinstance(document, dict):
        raise NotARecord("not a JSON object")
    if document.get("format") != RESULT_FORMAT:
        raise NotARecord(f"format is not {RESULT_FORMAT}")
    agent = document.get("agent")
    if not isinstance(agent, dict):
        raise NotARecord("agent is not an object")
    agent_url = _text(agent.get("url"), "agent.url", MAX_URL)
    # The card URL the verifier fetched for an agent URL at the bound has the card path
    # added: a worker re-verifying that agent must be able to store its record.
    card_url = _text(agent.get("card_url"), "agent.card_url", _MAX_CARD_URL, optional=True)
    assert agent_url is not None
    ran_by = document.get("ran_by")
    if not isinstance(ran_by, dict):
        raise NotARecord("ran_by is not an object")
    if ran_by.get("party") not in PARTIES:
        raise NotARecord("ran_by.party is not one of " + ", ".join(PARTIES))
    name = _text(ran_by.get("name"), "ran_by.name", MAX_NAME)
    key = _text(ran_by.get("key"), "ran_by.key", MAX_NAME, optional=True)
    outcome = document.get("outcome")
    if outcome not in {str(o) for o in Outcome}:
        raise NotARecord("outcome is not one of " + ", ".join(str(o) for o in Outcome))
    started = _utc(document.get("started_at"), "started_at")
    finished = _utc(document.get("finished_at"), "finished_at")
    signature = verify_record_signature(document)
    if signature.status == "invalid":
        if signature.keys:
            raise BadSignature("no runner signature by ran_by.key (PROFILE §8)")
        raise BadSignature("the runner signature does not verify (PROFILE §8)")
    insane = record_sanity(document, now or datetime.now(UTC))
    if insane is not None:
        raise NotSane(f"{insane.detail} (PROFILE §8)", insane.reason)
    standing, reason = standing_reason(document, now=now)
    try:
        record_digest = record_identity(document)
    except ValueError:  # pragma: no cover - strict ingress already bounds the numbers
        raise NotARecord("the record has no canonical form") from None
    return {
        "digest": record_digest,
        "card_url": agent_key(agent_url, card_url),
        "agent_url": agent_url,
        "outcome": outcome,
        "party": ran_by["party"],
        "runner_name": name,
        "runner_key": key,
        "signature": signature.status,
        "standing": standing,
        "standing_reason": reason,
        "card_signature": _short(member_at(document, "agent", "card_signature", "status")),
        "card_reading": _short(member_at(document, "agent", "card_signature", "reading")),
        "agent_name": agent_name(document),
        "started_at": started,
        "finished_at": finished,
        "body": body,
    }


# ---------------------------------------------------------------------------------------
# Opening a store


def parse_store_url(url: str | os.PathLike[str]) -> tuple[sa.URL, Dialect]:
    """The SQLAlchemy URL and dialect for a store given as ``sqlite:///PATH``, a bare
    file path, or ``postgresql://...`` (``postgres://`` and ``postgresql+psycopg://``
    too). Raises ``StoreUnavailable`` for anything else; the message never repeats
    the URL (it may hold a password)."""
    text = os.fspath(url)
    if not text:
        raise StoreUnavailable("the store URL is empty")
    if "://" not in text:
        return sa.URL.create("sqlite+pysqlite", database=text), "sqlite"
    try:
        parsed = sa.make_url(text)
    except (sa.exc.ArgumentError, ValueError):
        raise StoreUnavailable("the store URL is malformed") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "sqlite" and driver in ("", "pysqlite"):
        if not parsed.database or parsed.database == ":memory:":
            raise StoreUnavailable("a SQLite store needs a file: sqlite:///PATH")
        return parsed.set(drivername="sqlite+pysqlite"), "sqlite"
    if backend in ("postgresql", "postgres") and driver in ("", "psycopg"):
        try:  # a command line's undecodable bytes: libpq's conninfo is text
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreUnavailable("the store URL is malformed") from None
        return parsed.set(drivername="postgresql+psycopg"), "postgresql"
    raise StoreUnavailable(
        "the store URL must be sqlite:///PATH, a file path, or postgresql://HOST/DB"
    )


def _sqlite_pragmas(dbapi_connection: Any, _: Any) -> None:
    # WAL: the web page reads while a writer adds; busy_timeout: writers wait their turn.
    # isolation_level None: SQLAlchemy's "begin" event below emits BEGIN itself, so DDL
    # is transactional too (pysqlite would otherwise run it outside any transaction).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    # A migration takes the write lock first (IMMEDIATE), so processes opening a new
    # file together create the schema once; everything else begins as usual.
    immediate = connection.get_execution_options().get("ledger_immediate", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


_PENDING: Final = RecordRefused("not stored yet")  # a slot put_many fills in

# Alembic keeps its running context in module globals: one migration per process at a
# time (other processes are held off by the database's own lock).
_MIGRATING: Final = threading.Lock()


def _migrate(connection: Connection, dialect: Dialect) -> None:
    """Upgrade the schema to this version's head inside ``connection``'s transaction."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    if dialect == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    config = Config()
    config.set_main_option("script_location", _MIGRATIONS)
    config.attributes["connection"] = connection
    script = ScriptDirectory.from_config(config)
    current = MigrationContext.configure(
        connection, opts={"version_table": VERSION_TABLE}
    ).get_current_revision()
    if current is not None:
        try:
            known = script.get_revision(current)
        except CommandError:
            known = None
        if known is None:
            raise StoreTooNew(
                "the store was migrated by a newer a2a-interview; upgrade before using it"
            )
    command.upgrade(config, "head")


def _unavailable(exc: Exception) -> StoreUnavailable:
    # Fixed words: a driver's message may carry the host, the user or the query.
    if isinstance(exc, sa.exc.OperationalError):
        return StoreUnavailable("the store cannot be opened or reached")
    return StoreUnavailable("the store is not a usable ledger database")


def _refresh_standing(connection: Connection) -> int:
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
                                "status": _short(status), "reading": _short(reading),
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


def _lock_agents(connection: Connection, dialect: Dialect, card_urls: Iterable[str]) -> None:
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


def _refresh_agents(connection: Connection, card_urls: Iterable[str]) -> None:
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


def _rebuild_agents(connection: Connection) -> None:
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
        _refresh_agents(connection, urls)
        last = urls[-1]


# ---------------------------------------------------------------------------------------
# The ledger


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
            engine = sa.create_engine(sa_url)
            event.listen(engine, "connect", _sqlite_pragmas)
            event.listen(engine, "begin", _sqlite_begin)
        else:
            engine = sa.create_engine(
                sa_url, pool_pre_ping=True, connect_args={"connect_timeout": 10}
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
        from .. import __version__

        # All under the migration lock, so openers together refresh one at a time.
        with _MIGRATING, self._begin(ledger_immediate=True) as connection:
            _migrate(connection, self.dialect)
            last = connection.execute(
                sa.select(meta.c.value).where(meta.c.key == "standing_by")
            ).scalar_one_or_none()
            unfilled = connection.execute(  # rows from before migration 0005's columns
                sa.select(records.c.id).where(records.c.standing_reason.is_(None)).limit(1)
            ).first()
            if refresh or last != __version__ or unfilled is not None:
                _refresh_standing(connection)
                _rebuild_agents(connection)
                connection.execute(meta.delete().where(meta.c.key == "standing_by"))
                connection.execute(meta.insert().values(key="standing_by", value=__version__))

    def close(self) -> None:
        """Release the store's connections."""
        self._engine.dispose()

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
            raise _unavailable(exc) from None

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self._engine.connect() as connection:
                yield connection
        except sa.exc.DBAPIError as exc:
            raise _unavailable(exc) from None

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
        row = _columns(bytes(body).strip(b" \t\r\n"))
        if job_key is not None:
            done = self.by_job(job_key)
            if done is not None:
                return done, False
        with self._begin() as connection:
            _lock_agents(connection, self.dialect, [row["card_url"]])
            return self._insert(connection, row, job_key)

    def put_many(self, bodies: Iterable[bytes]) -> list[tuple[StoredRecord, bool] | RecordRefused]:
        """Store several records in one transaction (``ledger import``): for each, in
        order, what :meth:`put` returns, or the ``RecordRefused`` it would raise.
        Raises ``StoreUnavailable`` (and then none of them is stored)."""
        results: list[tuple[StoredRecord, bool] | RecordRefused] = []
        rows: list[tuple[int, dict[str, Any]]] = []
        for body in bodies:
            try:
                rows.append((len(results), _columns(bytes(body).strip(b" \t\r\n"))))
            except RecordRefused as exc:
                results.append(exc)
                continue
            results.append(_PENDING)
        with self._begin() as connection:
            _lock_agents(connection, self.dialect, [row["card_url"] for _, row in rows])
            changed: set[str] = set()
            for index, row in rows:
                results[index] = self._insert(connection, row, None, changed)
            _refresh_agents(connection, changed)
        return results

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
                _refresh_agents(connection, [row["card_url"]])
            else:
                changed.add(row["card_url"])

        row = row | {"job_key": job_key, "stored_at": datetime.now(UTC)}
        insert = sqlite_insert if self.dialect == "sqlite" else postgresql_insert
        # Either unique column may clash: the same record (digest), or this job's record
        # written by an earlier run (job_key). Nothing is written then; the row is read.
        new_id = connection.execute(
            insert(records).values(**row).on_conflict_do_nothing().returning(records.c.id)
        ).scalar_one_or_none()
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
            changed = _refresh_standing(connection)
            _rebuild_agents(connection)
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
        # The page of agents first (an index-only scan of the summary, offset included),
        # then only its latest records joined: never a join over the rows skipped.
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

    def agents_page(
        self, offset: int, limit: int, search: str | None = None, *, count: bool = True
    ) -> tuple[list[AgentSummary], int]:
        """One page of agents by card URL (never by outcome), read from the summary kept
        at write time: O(page). ``search``: only agents whose card URL holds it (case
        folded) or whose latest record's ``agent.name`` does. Returns the page and how
        many agents match (-1 without ``count``)."""
        where: Any = sa.true()
        if search:
            pattern = (
                "%"
                + search.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                + "%"
            )
            # SQLite's LIKE folds ASCII case itself; PostgreSQL's ILIKE does. Either way
            # no function runs per row.
            # The card URL or the name the agent last gave itself, kept in one indexed
            # column: one LIKE per agent, an index-only scan of the summary.
            column = agents_table.c.search
            where = (
                column.like(pattern, escape="\\")
                if self.dialect == "sqlite"
                else column.ilike(pattern, escape="\\")
            )
        total = -1  # not counted (the caller knows the total from totals())
        if count:
            with self._read() as connection:
                total = int(
                    connection.execute(
                        sa.select(sa.func.count()).select_from(agents_table).where(where)
                    ).scalar_one()
                )
        page = self._summaries(
            sa.select(agents_table.c.card_url).select_from(agents_table).where(where)
            .order_by(agents_table.c.card_url).offset(offset).limit(limit)
        )  # fmt: skip
        return page, total

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
        if not _holdable(card_url):
            return None
        found = self._summaries(
            sa.select(agents_table.c.card_url).select_from(agents_table)
            .where(agents_table.c.card_url == card_url)
        )  # fmt: skip
        return found[0] if found else None

    def history_page(self, card_url: str, offset: int, limit: int) -> list[StoredRecord]:
        """A page of the agent's records, newest first (by ``finished_at``, then as
        stored), read from the store's index: O(page)."""
        if not _holdable(card_url):
            return []
        query = (
            sa.select(records)
            .where(records.c.card_url == card_url)
            .order_by(records.c.finished_at.desc(), records.c.id.desc())
            .offset(offset)
            .limit(limit)
        )
        with self._read() as connection:
            return [self._stored(row) for row in connection.execute(query)]

    def latest_evidence(self, card_url: str, limit: int = 20) -> list[StoredRecord]:
        """The agent's newest records whose ``standing`` column says evidence (at most
        ``limit``), newest first: candidates a display rechecks from their bytes."""
        if not _holdable(card_url):
            return []
        query = (
            sa.select(records)
            .where(records.c.card_url == card_url, records.c.standing == "evidence")
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
        if not _holdable(card_url):
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
        key), ordered by key."""
        query = (
            sa.select(
                records.c.runner_key,
                sa.func.min(records.c.stored_at).label("first"),
                sa.func.max(records.c.stored_at).label("last"),
                sa.func.count().label("n"),
            )
            .where(records.c.runner_key.is_not(None))
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

    def count(self) -> int:
        """How many records the store holds."""
        with self._read() as connection:
            return int(
                connection.execute(sa.select(sa.func.count()).select_from(records)).scalar_one()
            )
