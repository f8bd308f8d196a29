"""Opening a store: its URL read, SQLite's connection settings, the schema brought to
this version's head by Alembic under a lock, and a driver's error turned into fixed
words."""

from __future__ import annotations

import os
import threading
from typing import Any, Final

try:
    import sqlalchemy as sa
    from sqlalchemy.engine import Connection
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the ledger needs SQLAlchemy: pip install 'a2a-interview[ledger]'") from exc

from ..errors import StoreTooNew, StoreUnavailable
from .tables import MIGRATIONS, VERSION_TABLE, Dialect

# One advisory lock key for "migrating the ledger", so that workers starting together
# on one PostgreSQL migrate one after the other (any fixed 64-bit number would do).
_MIGRATION_LOCK: Final = 0x6132615F6C6564


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


def sqlite_pragmas(dbapi_connection: Any, _: Any) -> None:
    # WAL: the web page reads while a writer adds; busy_timeout: writers wait their turn.
    # isolation_level None: SQLAlchemy's "begin" event below emits BEGIN itself, so DDL
    # is transactional too (pysqlite would otherwise run it outside any transaction).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def sqlite_begin(connection: Connection) -> None:
    # A migration takes the write lock first (IMMEDIATE), so processes opening a new
    # file together create the schema once; everything else begins as usual.
    immediate = connection.get_execution_options().get("ledger_immediate", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


# Alembic keeps its running context in module globals: one migration per process at a
# time (other processes are held off by the database's own lock).
MIGRATING: Final = threading.Lock()


def migrate_schema(connection: Connection, dialect: Dialect) -> None:
    """Upgrade the schema to this version's head inside ``connection``'s transaction."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    if dialect == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
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


def unavailable(exc: Exception) -> StoreUnavailable:
    # Fixed words: a driver's message may carry the host, the user or the query.
    if isinstance(exc, sa.exc.OperationalError):
        error = StoreUnavailable("the store cannot be opened or reached")
        error.transient = _no_answer_yet(exc.orig)
        return error
    return StoreUnavailable("the store is not a usable ledger database")


def _no_answer_yet(error: BaseException | None) -> bool:
    """Whether a PostgreSQL connection failed for want of a server's answer (refused,
    timed out) or on one starting or stopping: worth waiting for. A server's refusal
    (no such database, a wrong password) is not, nor anything of SQLite. libpq gives
    no SQLSTATE for a refused connection: its ``FATAL:`` line says the server answered."""
    state = getattr(error, "sqlstate", "")
    if state:
        return bool(state.startswith(("08", "57P")))
    if state == "":  # not psycopg's
        return False
    text = str(error)
    return "FATAL:" not in text or "the database system is" in text
