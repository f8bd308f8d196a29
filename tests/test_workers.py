"""The ledger's workers (D-STORE-8): procrastinate jobs in a real PostgreSQL, run by
real ``a2a-interview worker`` processes; a worker killed mid-job loses nothing and the
record is written exactly once."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from needs import module as need_module
from support.cli import COMMAND, command
from support.ledger import LONG_AGO, old_record

need_module("procrastinate", "the ledger extra (procrastinate)", "pip install -e '.[ledger]'")

import sqlalchemy as sa  # noqa: E402

from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.verifier import VerifyOptions, failed_record  # noqa: E402
from agents import honest  # noqa: E402
from support.servers import serve  # noqa: E402

if TYPE_CHECKING:
    from pg import Server

pytest_plugins = ["pg"]

# Fast heartbeats so a dead worker is noticed in seconds, not the default minute.
FAST = ["--heartbeat", "0.5", "--stalled-after", "2", "--recover-every", "0.5",
        "--churn-delay", "0", "--timeout", "60"]  # fmt: skip


class Stall:
    """ASGI wrapper: the first request hangs (until released or 60 s), the rest pass."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0
        self.stalled = threading.Event()
        self.release = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests += 1
            if self.requests == 1:
                self.stalled.set()
                deadline = time.monotonic() + 60
                while not self.release.is_set() and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
        await self.app(scope, receive, send)


@pytest.fixture
def stalling_agent() -> Iterator[tuple[str, Stall]]:
    holder: list[Stall] = []

    def factory(origin: str) -> Any:
        holder.append(Stall(honest(origin)))
        return holder[0]

    with serve(factory) as origin:
        yield origin, holder[0]
        holder[0].release.set()


def _received_long_ago(store: str) -> None:
    """Every record as if the store had received it long ago: the schedule goes by the
    store's own receipt time, never the record's (PROFILE §8)."""
    engine = sa.create_engine(store.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE ledger_records SET stored_at = :t"), {"t": LONG_AGO})
        connection.execute(sa.text("UPDATE ledger_agents SET last_received = :t"), {"t": LONG_AGO})
    engine.dispose()


def _worker(store: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, "worker", "--store", store, "--json", "--as", "platform", "--name", "Acme",
         *FAST, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _jobs(store: str) -> list[Any]:
    engine = sa.create_engine(store.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            return list(
                connection.execute(
                    sa.text("SELECT id, status, attempts FROM procrastinate_jobs ORDER BY id")
                )
            )
    finally:
        engine.dispose()


def _stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate(timeout=10)


def _signalled(
    store: str, ready: Callable[[subprocess.Popen[str]], Any], *signals: int
) -> tuple[int, str]:
    """A worker on ``store``, sent ``signals`` (a second apart, each while it still
    runs) once ``ready(worker)`` returns: its exit status and its stderr. Killed on the
    way out if it did not stop."""
    worker = subprocess.Popen([*COMMAND, "worker", "--store", store, *FAST],
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        ready(worker)
        for i, sig in enumerate(signals):
            if i:
                time.sleep(1.0)
                assert worker.poll() is None
            worker.send_signal(sig)
        _, err = worker.communicate(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
    return worker.returncode, err


def _waiting(worker: subprocess.Popen[str]) -> str:
    """The worker's first line, once it says it waits for jobs."""
    assert worker.stderr is not None
    first = worker.stderr.readline()
    assert first.rstrip().endswith("waiting for jobs"), first
    return first


def _wait(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_worker_killed_mid_job_loses_nothing_and_writes_once(
    postgres_server: Server, stalling_agent: tuple[str, Stall]
) -> None:
    # D-STORE-8: two workers on one PostgreSQL, one SIGKILLed mid-job; the other
    # completes the job; exactly one record is written.
    origin, agent = stalling_agent
    store = postgres_server.database()
    with Ledger.open(store) as ledger:
        card_url = ledger.add(old_record(origin)).card_url
    _received_long_ago(store)

    scheduled = command("ledger", "schedule", "--older-than", "1d", "--store", store, "--json")
    assert scheduled.returncode == 0, scheduled.stderr
    assert json.loads(scheduled.stdout) == {"enqueued": [card_url], "already_queued": []}
    # Scheduling again while the job waits enqueues nothing more.
    again = command("ledger", "schedule", "--older-than", "1d", "--store", store, "--json")
    assert json.loads(again.stdout) == {"enqueued": [], "already_queued": [card_url]}

    first = _worker(store)
    second: subprocess.Popen[str] | None = None
    try:
        if not agent.stalled.wait(60):
            pytest.fail("the first worker never reached the agent: " + _stop(first)[1])
        [(job_id, status, _)] = _jobs(store)
        assert status == "doing"
        second = _worker(store)
        time.sleep(1)  # the second worker is up and idle: the job is still the first's
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        agent.release.set()  # the dead worker's request ends; later requests pass
        _wait(lambda: _jobs(store)[0][1] == "succeeded", 90, "the job to succeed")
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)
        out, err = _stop(second) if second is not None else ("", "")

    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert [(line["stored"], line["card_url"]) for line in lines] == [(True, card_url)], err
    with Ledger.open(store) as ledger:
        history = ledger.history(card_url)
    assert len(history) == 2  # the old record and exactly one new one
    assert history[1].job_key == f"job:{job_id}"
    assert history[1].party == "platform"
    assert history[1].outcome == "consistent"
    assert agent.requests > 1  # the job ran again, against the agent, on the second worker
    assert _jobs(store) == [(job_id, "succeeded", _jobs(store)[0][2])]


def test_a_job_whose_record_was_written_before_its_worker_died_writes_nothing_more(
    postgres_server: Server,
) -> None:
    # D-STORE-8: a worker killed after writing but before acknowledging. The record
    # is in the ledger under the job's key; the job runs again and adds nothing.
    store = postgres_server.database()
    origin = "http://127.0.0.1:9"  # never contacted: the job finds its record first
    with Ledger.open(store) as ledger:
        card_url = ledger.add(old_record(origin)).card_url
    _received_long_ago(store)
    assert command("ledger", "schedule", "--older-than", "1d", "--store", store).returncode == 0
    [(job_id, status, _)] = _jobs(store)
    assert status == "todo"
    fresh = json.loads(old_record(origin))
    fresh["finished_at"] = "2026-01-01T00:00:00.000Z"
    with Ledger.open(store) as ledger:
        written = ledger.add(json.dumps(fresh).encode(), job_key=f"job:{job_id}")

    done = command("worker", "--store", store, "--once", "--json", *FAST)
    assert done.returncode == 0, done.stderr
    [line] = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    assert (line["stored"], line["id"]) == (False, written.id)
    with Ledger.open(store) as ledger:
        assert [r.id for r in ledger.history(card_url)][-1] == written.id
        assert len(ledger.history(card_url)) == 2
    assert _jobs(store)[0][:2] == (job_id, "succeeded")


def test_workers_and_schedule_need_postgresql(tmp_path: Path) -> None:
    store = str(tmp_path / "one.db")
    for args in (["worker", "--once"], ["ledger", "schedule", "--older-than", "1d"]):
        done = command(*args, "--store", store)
        assert done.returncode == 2
        assert "need a PostgreSQL store" in done.stderr
        assert "[jobs_need_postgresql]" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_store_whose_queue_is_gone_is_one_clear_line(postgres_server: Server) -> None:
    # Bad input of any kind gets a fixed error, never a traceback (quality bar).
    store = postgres_server.database()
    with Ledger.open(store) as ledger:
        ledger.add(old_record("http://127.0.0.1:9"))
    _received_long_ago(store)
    engine = sa.create_engine(store.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        connection.execute(sa.text("DROP TABLE procrastinate_jobs CASCADE"))
    engine.dispose()
    for args in (["ledger", "schedule", "--older-than", "1d"], ["worker", "--once"]):
        done = command(*args, "--store", store)
        assert done.returncode == 2, done.stderr
        assert "the job queue in the store cannot be reached [store_unavailable]" in done.stderr
        assert "Traceback" not in done.stderr


def _count(store: str, table: str) -> int:
    engine = sa.create_engine(store.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())
    finally:
        engine.dispose()


STAMPED = re.compile(r"a2a-interview worker \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: ")


def test_worker_lines_carry_times_and_a_stopped_worker_says_so(postgres_server: Server) -> None:
    # D-CLI-4b: every line of a worker carries its time (UTC); a worker stopped
    # with Ctrl-C (or --once at the end of the queue) ends with a line saying so.
    store = postgres_server.database()
    with Ledger.open(store) as ledger:
        ledger.add(old_record("http://127.0.0.1:9"))  # a closed port: quickly unreachable
    _received_long_ago(store)
    assert command("ledger", "schedule", "--older-than", "1d", "--store", store).returncode == 0
    done = command("worker", "--store", store, "--once", *FAST)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(STAMPED.match(line) for line in lines), done.stderr
    assert any("stored: unreachable http://127.0.0.1:9" in line for line in lines), lines
    assert lines[-1].endswith("the queue is empty; stopped (1 record(s) stored)")

    def registered(worker: subprocess.Popen[str]) -> None:
        first = _waiting(worker)
        assert STAMPED.match(first), first
        _wait(lambda: _count(store, "procrastinate_workers") == 1, 30, "the worker")

    returncode, err = _signalled(store, registered, signal.SIGINT)
    assert returncode == 0, err
    last = err.splitlines()[-1]
    assert STAMPED.match(last) and "stopped by Ctrl-C or SIGTERM" in last, err
    assert "Traceback" not in err


def test_ctrl_c_as_a_worker_starts_stops_it(postgres_server: Server) -> None:
    # D-STORE-19: Ctrl-C the moment a worker says it waits (while it opens its pool,
    # before procrastinate's handlers existed) cancelled the start-up halfway, and the
    # pool's tasks kept the process from exiting: it hung until a second Ctrl-C. Now the
    # worker takes Ctrl-C and SIGTERM from its start and stops before taking a job.
    store = postgres_server.database()
    Ledger.open(store).close()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGINT):
        returncode, err = _signalled(store, _waiting, sig)
        assert returncode == 0, err
        assert err.splitlines()[-1].endswith(
            "stopped by Ctrl-C or SIGTERM after finishing its jobs (0 record(s) stored)"
        ), err
        assert "Traceback" not in err and "Exception ignored" not in err


def test_a_second_ctrl_c_stops_a_busy_worker_at_once(postgres_server: Server) -> None:
    # The first Ctrl-C lets the jobs held finish; the second stops at once (exit 130)
    # and puts them back in the queue. The job here interviews an agent that never
    # answers.
    store = postgres_server.database()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections are queued, never accepted
        origin = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with Ledger.open(store) as ledger:
            ledger.add(old_record(origin))
        _received_long_ago(store)
        assert command("ledger", "schedule", "--older-than", "1d", "--store", store).returncode == 0

        def busy(_: subprocess.Popen[str]) -> None:
            _wait(lambda: [j.status for j in _jobs(store)] == ["doing"], 30, "the job taken")

        # Still running a second after the first: it waits for its job.
        returncode, err = _signalled(store, busy, signal.SIGINT, signal.SIGINT)
    assert returncode == 130, err
    assert "interrupted; 0 record(s) stored; the jobs it held are back in the queue" in err
    assert "Traceback" not in err, err
    assert [j.status for j in _jobs(store)] == ["todo"]  # its job is back in the queue


def test_a_worker_run_from_python_on_a_thread_stops_when_its_task_is_cancelled(
    postgres_server: Server,
) -> None:
    # D-STORE-19 from the library's side: signals reach only the main thread, so on
    # another run_worker takes none, and whoever runs it stops it by cancelling its
    # task, as before: procrastinate's graceful stop, then CancelledError.
    import asyncio
    import threading

    from a2a_interview.ledger.jobs import WorkerSettings, run_worker

    store = postgres_server.database()
    outcome: list[str] = []

    async def verifier(url: str) -> bytes:
        raise AssertionError("no job is queued")

    async def run(ledger: Ledger) -> None:
        task = asyncio.create_task(run_worker(ledger, WorkerSettings(verifier=verifier)))
        while await asyncio.to_thread(_count, store, "procrastinate_workers") != 1:
            await asyncio.sleep(0.1)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            outcome.append("cancelled")

    with Ledger.open(store) as ledger:
        thread = threading.Thread(target=lambda: asyncio.run(run(ledger)))
        thread.start()
        thread.join(60)
    assert not thread.is_alive() and outcome == ["cancelled"]
    assert _count(store, "procrastinate_workers") == 0  # it unregistered: a graceful stop


def test_a_paced_worker_holds_only_the_jobs_it_interviews(postgres_server: Server) -> None:
    # D-STORE-44: a worker with --concurrency auto ran procrastinate at 256 and held
    # every job it could fetch `doing` behind a pace of 16, where other workers could
    # not take them. Now it fetches a job only once the pace has a place for it.
    import asyncio

    from a2a_interview.ledger.jobs import WorkerSettings, run_worker, schedule
    from a2a_interview.pace import START

    store = postgres_server.database()
    hosts = [f"http://127.0.0.1:{port}" for port in range(9001, 9001 + START + 4)]
    with Ledger.open(store) as ledger:
        for host in hosts:
            ledger.add(old_record(host))
    _received_long_ago(store)
    calls: list[str] = []

    async def run(ledger: Ledger) -> list[int]:
        go = asyncio.Event()

        async def verifier(url: str) -> bytes:
            calls.append(url)
            await go.wait()
            return json.dumps(failed_record(url, VerifyOptions()).to_json()).encode()

        await schedule(ledger, timedelta(0), datetime.now(UTC) + timedelta(1))
        settings = WorkerSettings(verifier=verifier, concurrency=None, once=True)
        task = asyncio.create_task(run_worker(ledger, settings))
        seen = []
        for _ in range(600):
            if len(calls) >= START:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # a worker that fetches more would have by now
        seen.append(len(calls))
        statuses = await asyncio.to_thread(_jobs, store)
        seen.append(sum(row.status == "doing" for row in statuses))
        go.set()
        await asyncio.wait_for(task, 60)
        statuses = await asyncio.to_thread(_jobs, store)
        seen.append(sum(row.status == "succeeded" for row in statuses))
        return seen

    with Ledger.open(store) as ledger:
        assert asyncio.run(run(ledger)) == [START, START, START + 4]


def test_a_store_outage_is_one_line_and_its_recovery_another(postgres_server: Server) -> None:
    # D-STORE-15: workers printed full tracebacks while PostgreSQL restarted
    # (they recovered). Now: one line when the store goes, one when it is back.
    store = postgres_server.database()
    with Ledger.open(store):
        pass
    worker = _worker(store, "--recover-every", "0.5")
    try:
        _waiting(worker)  # it opened the store (a slow start must not meet the outage)
        time.sleep(2)
        postgres_server.stop()
        try:
            time.sleep(3)
        finally:
            postgres_server.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with Ledger.open(store) as ledger:  # the store is back for clients too
                ledger.count()
                break
        time.sleep(3)  # the worker's next probe
    finally:
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert lines.count("the store cannot be reached; the worker keeps trying") == 1, err
    assert lines.count("the store answers again; the worker goes on") == 1, err
    assert not any("error connecting" in line for line in lines), err
