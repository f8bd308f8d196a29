"""Workers that never strand an agent (D-STORE-20, D-STORE-21, D-STORE-22): real
``a2a-interview worker`` processes on a real PostgreSQL, agents on loopback.

- A worker SIGKILLed while it holds jobs, the agents scheduled again meanwhile: a new
  worker fails the dead jobs (their agents' newer jobs wait) and runs the new ones;
  every agent is verified again.
- A job that is not a verification job (arguments that are not an object, another
  task) is failed once, with one line, instead of crashing procrastinate and staying
  ``doing`` with its lock held.
- A worker started while PostgreSQL is down waits for it (one line), then works.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from needs import module as need_module

need_module("procrastinate", "the ledger extra (procrastinate)", "pip install -e '.[ledger]'")

import sqlalchemy as sa  # noqa: E402

from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.verifier import failed_record  # noqa: E402
from a2a_interview.verifier.run import VerifyOptions  # noqa: E402
from agents import honest  # noqa: E402
from servers import serve_many  # noqa: E402

if TYPE_CHECKING:
    from pg import Server

pytest_plugins = ["pg"]

LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
CLI = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()"]
# The recovery of the finding: a worker silent 6 s is dead, looked for every 2 s.
RECOVERY = ["--heartbeat", "0.5", "--stalled-after", "6", "--recover-every", "2",
            "--churn-delay", "0", "--timeout", "60"]  # fmt: skip
AGENTS = 4


class Slow:
    """ASGI wrapper: the first request hangs until released (or 60 s); the rest pass."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0
        self.reached = threading.Event()
        self.release = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests += 1
            if self.requests == 1:
                self.reached.set()
                deadline = time.monotonic() + 60
                while not self.release.is_set() and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
        await self.app(scope, receive, send)


@pytest.fixture
def slow_agents() -> Iterator[list[tuple[str, Slow]]]:
    held: list[Slow] = []

    def factory(origin: str) -> Any:
        held.append(Slow(honest(origin)))
        return held[-1]

    with serve_many([factory] * AGENTS) as origins:
        try:
            yield list(zip(origins, held, strict=True))
        finally:
            for agent in held:
                agent.release.set()


def _engine(store: str) -> sa.Engine:
    return sa.create_engine(store.replace("postgresql://", "postgresql+psycopg://", 1))


def _sql(store: str, statement: str, **values: Any) -> list[Any]:
    engine = _engine(store)
    try:
        with engine.begin() as connection:
            result = connection.execute(sa.text(statement), values)
            return list(result) if result.returns_rows else []
    finally:
        engine.dispose()


def _old_record(origin: str) -> bytes:
    options = VerifyOptions(clock=lambda: LONG_AGO)
    return json.dumps(failed_record(origin, options).to_json()).encode()


def _agents_long_ago(store: str, origins: list[str]) -> list[str]:
    with Ledger.open(store) as ledger:
        card_urls = [ledger.add(_old_record(origin)).card_url for origin in origins]
    _sql(store, "UPDATE ledger_records SET stored_at = :t", t=LONG_AGO)
    _sql(store, "UPDATE ledger_agents SET last_received = :t", t=LONG_AGO)
    return card_urls


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def _schedule(store: str) -> dict[str, Any]:
    done = _cli("ledger", "schedule", "--older-than", "1d", "--store", store, "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _worker(store: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "worker", "--store", store, "--as", "platform", "--name", "Acme",
         "--concurrency", str(AGENTS), *RECOVERY, *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _stop(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate(timeout=10)[1]


def _wait(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


def _statuses(store: str) -> dict[int, str]:
    rows = _sql(store, "SELECT id, status FROM procrastinate_jobs ORDER BY id")
    return {row[0]: row[1] for row in rows}


def test_a_killed_workers_agents_scheduled_again_are_all_verified_again(
    postgres_server: Server, slow_agents: list[tuple[str, Slow]]
) -> None:
    """D-STORE-20: a worker SIGKILLed holding 4 jobs; the agents scheduled again (4 new
    jobs wait, one per agent); a new worker. The dead jobs cannot go back in the queue
    (one waiting job per agent) and held their agents' locks, so that the new jobs
    waited for ever: now each dead job is failed (one line each) and every agent is
    verified again."""
    store = postgres_server.database()
    card_urls = _agents_long_ago(store, [origin for origin, _ in slow_agents])
    first_jobs = _schedule(store)
    assert sorted(first_jobs["enqueued"]) == sorted(card_urls)

    first = _worker(store)
    second: subprocess.Popen[str] | None = None
    try:
        for _, agent in slow_agents:  # the first worker holds all four jobs
            if not agent.reached.wait(60):
                pytest.fail("the first worker never reached every agent: " + _stop(first))
        dead = sorted(_statuses(store))
        assert set(_statuses(store).values()) == {"doing"}
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        for _, agent in slow_agents:
            agent.release.set()

        again = _schedule(store)  # the dead jobs are "doing": each agent gets a new one
        assert sorted(again["enqueued"]) == sorted(card_urls), again

        second = _worker(store)

        def verified_again() -> bool:
            with Ledger.open(store) as ledger:
                return all(len(ledger.history(url)) >= 2 for url in card_urls)

        _wait(verified_again, 120, "every agent to be verified again")
        _wait(lambda: "todo" not in _statuses(store).values(), 30, "the queue to empty")
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)
        err = _stop(second) if second is not None else ""

    statuses = _statuses(store)
    assert [statuses[job] for job in dead] == ["failed"] * AGENTS, statuses
    assert sorted(s for j, s in statuses.items() if j not in dead) == ["succeeded"] * AGENTS
    for job in dead:
        line = f"job {job} of a silent worker is failed: its agent's newer job waits and runs"
        assert sum(line in x for x in err.splitlines()) == 1, err
    assert "Traceback" not in err, err
    with Ledger.open(store) as ledger:
        for url in card_urls:
            assert len(ledger.history(url)) == 2  # one new record each, exactly
            assert ledger.history(url)[-1].outcome == "consistent"


_BAD_ARGUMENTS = {  # what a job's arguments may be that the task cannot take
    "a list": "[]",
    "a string": '"http://127.0.0.1:9"',
    "null": "null",
    "an empty object": "{}",
    "a number for url": '{"url": 5, "card_url": "http://127.0.0.1:9/"}',
    "a member too many": '{"url": "a", "card_url": "b", "extra": 1}',
}


def _defer(store: str, lock: str, arguments: str, *, task: str = "", status: str = "todo") -> int:
    [(job_id,)] = _sql(
        store,
        "INSERT INTO procrastinate_jobs (queue_name, task_name, lock, queueing_lock, args, "
        "status) VALUES ('a2a-interview', :task, :lock, :lock, CAST(:args AS jsonb), "
        "CAST(:status AS procrastinate_job_status)) RETURNING id",
        task=task or "a2a_interview.verify_agent",
        lock=lock,
        args=arguments,
        status=status,
    )
    return int(job_id)


def test_a_job_that_is_not_a_verification_job_fails_once_with_one_line(
    postgres_server: Server,
) -> None:
    """D-STORE-21: jobs whose arguments the task cannot take (not an object, members
    missing, of the wrong type, too many) or of another task; one of them ``doing`` with
    0 attempts and no worker, as procrastinate's crash used to leave it. ``worker --once``
    fails each once, one line each, no traceback, and runs the good job next to them."""
    store = postgres_server.database()
    [card_url] = _agents_long_ago(store, ["http://127.0.0.1:9"])  # a closed port
    assert _schedule(store)["enqueued"] == [card_url]
    bad = [_defer(store, f"bad-{i}", args) for i, args in enumerate(_BAD_ARGUMENTS.values())]
    bad.append(_defer(store, "other-task", '{"url": "a", "card_url": "b"}', task="other.task"))
    bad.append(_defer(store, "stuck", "[]", status="doing"))  # left by the old crash

    done = _cli("worker", "--store", store, "--once", *RECOVERY)
    assert done.returncode == 0, done.stderr
    statuses = _statuses(store)
    assert [statuses[job] for job in bad] == ["failed"] * len(bad), statuses
    good = [job for job in statuses if job not in bad]
    assert [statuses[job] for job in good] == ["succeeded"], statuses
    lines = done.stderr.splitlines()
    for job in bad:
        said = [line for line in lines if line.startswith(f"job {job} is failed: it is not")]
        assert len(said) == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    attempts = dict(_sql(store, "SELECT id, attempts FROM procrastinate_jobs"))
    assert [attempts[job] for job in bad[:-1]] == [1] * (len(bad) - 1)  # failed once

    again = _cli("worker", "--store", store, "--once", *RECOVERY)  # nothing left to fail
    assert again.returncode == 0, again.stderr
    assert "is failed" not in again.stderr, again.stderr
    assert _statuses(store) == statuses


def test_a_worker_started_while_the_store_is_down_waits_for_it(postgres_server: Server) -> None:
    """D-STORE-22: a worker started while PostgreSQL is stopped (a restart) says once
    that it waits, then starts when the store is back, instead of exiting 2."""
    store = postgres_server.database()
    with Ledger.open(store):
        pass
    postgres_server.stop()
    worker: subprocess.Popen[str] | None = None
    try:
        worker = subprocess.Popen([*CLI, "worker", "--store", store, *RECOVERY,
                                   "--wait-for-store", "90"],
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert worker.stderr is not None
        first = worker.stderr.readline()  # the worker's own bound: 90 s, then exit 2
        assert first.rstrip().endswith("the store cannot be reached; waiting up to 90 s for it")
        time.sleep(2)
        assert worker.poll() is None  # still waiting
    finally:
        postgres_server.start()
    try:
        second = worker.stderr.readline()
        assert second.rstrip().endswith("waiting for jobs"), second
    finally:
        err = _stop(worker)
    assert worker.returncode == 0, err
    assert "Traceback" not in err and "cannot be reached" not in err, err


def test_a_store_that_answers_and_refuses_is_not_waited_for(postgres_server: Server) -> None:
    """D-STORE-22: the wait is for a server that does not answer; one that answers and
    refuses (a database that does not exist) is the usual one line and exit 2 at once."""
    missing = postgres_server.admin_url.rsplit("/", 1)[0] + "/no_such_database"
    done = _cli("worker", "--store", missing, "--wait-for-store", "600", timeout=60)
    assert done.returncode == 2, done.stderr
    assert "waiting up to" not in done.stderr
    assert "the store cannot be opened or reached [store_unavailable]" in done.stderr
