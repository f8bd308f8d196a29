"""A real PostgreSQL for the tests: Debian's binaries, a throwaway data directory, a
free loopback port, started once per session and stopped at its end.

``postgres_server`` (session) yields a :class:`Server`; ``Server.database()`` creates a
fresh empty database and returns its ``postgresql://`` URL, so tests never share rows.

Missing binaries skip the tests with the reason, unless ``CI`` is set: there it is a
failure, because ``.ci/run`` installs Debian's ``postgresql``. PostgreSQL refuses to
run as root, so as root the server runs as the ``postgres`` user (``runuser``).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from needs import need
from support.ports import free_port

_names = itertools.count(1)


def _bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").is_file() and Path(candidate, "pg_ctl").is_file():
            return Path(candidate)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def missing(reason: str) -> None:
    """Skip with ``reason``; under CI, fail (the one rule of ``tests/needs.py``)."""
    need(False, reason, "apt-get install postgresql (.ci/run installs it)")


@dataclass
class Server:
    bindir: Path
    port: int
    user: str
    as_user: list[str]
    names: list[str] = field(default_factory=list)
    data: Path | None = None
    log: Path | None = None
    options: str = ""

    def stop(self) -> None:
        """Stop the server (a restart under running clients: ``start`` again)."""
        assert self.data is not None
        _run([*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast",
              "-w", "-t", "60", "stop"], "pg_ctl stop")  # fmt: skip

    def start(self) -> None:
        assert self.data is not None and self.log is not None
        _run([*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l",
              str(self.log), "-o", self.options, "-w", "-t", "60", "start"],
             "pg_ctl start")  # fmt: skip

    @property
    def admin_url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    def database(self) -> str:
        """A new empty database; its URL."""
        name = f"ledger_test_{os.getpid()}_{next(_names)}"
        subprocess.run(
            [*self.as_user, str(self.bindir / "createdb"), "-h", "127.0.0.1",
             "-p", str(self.port), "-U", self.user, name],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        self.names.append(name)
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{name}"


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"{what} failed: {done.stderr.strip()[-2000:]}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    bindir = _bindir()
    if bindir is None:
        missing("PostgreSQL binaries not found (apt-get install postgresql)")
        raise AssertionError  # unreachable: missing() skips or fails
    as_user: list[str] = []
    user = "postgres"
    if os.geteuid() == 0:  # PostgreSQL refuses root
        runuser = shutil.which("runuser")
        if runuser is None:
            missing("runuser not found: PostgreSQL cannot run as root")
        as_user = [str(runuser), "-u", "postgres", "--"]
    else:
        import getpass

        user = getpass.getuser()
    top = Path(tempfile.mkdtemp(prefix="ledger-pg-"))
    data = top / "data"
    sockets = top / "run"
    data.mkdir()
    sockets.mkdir()
    if as_user:
        shutil.chown(top, "postgres")
        shutil.chown(data, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()
    _run(
        [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", user, "--auth=trust",
         "--no-sync", "-E", "UTF8", "--locale=C"],
        "initdb",
    )  # fmt: skip
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sockets}"
        " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        " -c max_connections=100"
    )
    log = top / "postgres.log"
    _run(
        [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
         "-w", "-t", "60", "start"],
        "pg_ctl start",
    )  # fmt: skip
    server = Server(bindir, port, user, as_user, data=data, log=log, options=options)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline:
                pytest.fail(f"PostgreSQL did not listen on port {port}")
            time.sleep(0.1)
        yield server
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
             "stop"],
            capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ledger store URL on each of the two stores: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    server: Server = request.getfixturevalue("postgres_server")
    return server.database()
