"""Verification jobs on procrastinate, in the ledger's own PostgreSQL.

``schedule`` enqueues one job per agent whose latest record is older than an age;
``run_worker`` runs them: each job interviews the agent and adds the record to the
ledger. Any number of workers on any number of machines share the one database.

Exactly once, when a worker dies (docs/decisions.md D-STORE-9):

- a job's record is stored with the job's key (``job:<procrastinate id>``) under a
  unique constraint, and a job first looks for a record under its key: a job that
  runs again after its worker was killed between writing and acknowledging writes
  nothing more;
- a worker killed mid-job leaves the job ``doing`` with a silent heartbeat; every
  worker looks for such stalled jobs every ``recover_every`` seconds and puts them
  back in the queue (procrastinate's ``get_stalled_jobs`` and ``retry_job``), where
  any worker takes them up again. When the agent has a newer job waiting already (it
  was scheduled again meanwhile), the dead job cannot go back (one waiting job per
  agent) and would hold the agent's lock for ever: it is failed instead, and the
  waiting one runs (D-STORE-20). Every recovery that fails is one line.

A job that is not a verification job as ``schedule`` defers it (another task's name,
arguments that are not an object with text ``url`` and ``card_url``) is failed when a
worker takes it, with one line (D-STORE-21): procrastinate would crash on it and leave
it ``doing``, holding its lock, queued again by every recovery.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

try:
    import procrastinate
    import psycopg
    from procrastinate import exceptions as queue_errors
    from procrastinate import jobs as queue_jobs
    from procrastinate import manager as queue_manager
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the ledger's workers need procrastinate: pip install 'a2a-interview[ledger]'"
    ) from exc

from ..pace import CAP
from ..verifier.many import Paced
from .errors import JobsNeedPostgreSQL, RecordRefused, StoreUnavailable
from .store import Ledger, StoredRecord

__all__ = ["QUEUE", "TASK", "ScheduleResult", "WorkerSettings", "job_key",
           "require_postgresql", "run_worker", "schedule"]  # fmt: skip

QUEUE: Final = "a2a-interview"
TASK: Final = "a2a_interview.verify_agent"

_log = logging.getLogger(__name__)

# A job's work: interview the agent at ``url``; return the record's JSON bytes.
Verifier = Callable[[str], Awaitable[bytes]]


def job_key(job_id: int) -> str:
    """The idempotency key a job's record is stored under."""
    return f"job:{job_id}"


def require_postgresql(ledger: Ledger) -> None:
    """Raise ``JobsNeedPostgreSQL`` unless ``ledger`` is a PostgreSQL store."""
    if ledger.dialect != "postgresql":
        raise JobsNeedPostgreSQL(
            "scheduling and workers need a PostgreSQL store (the job queue lives there); "
            "on one machine with SQLite, run verify-many --store instead"
        )


def _verification_job(job: queue_jobs.Job) -> bool:
    """Whether ``job`` is what :func:`schedule` defers: this task, its arguments an
    object of exactly the two text members the task takes."""
    arguments: Any = job.task_kwargs
    return (
        job.task_name == TASK
        and isinstance(arguments, dict)
        and sorted(arguments) == ["card_url", "url"]
        and all(isinstance(value, str) for value in arguments.values())
    )


class _Jobs(queue_manager.JobManager):
    """Procrastinate's job manager, but a job it fetches that is not a verification
    job is failed at once (one line) and the next one fetched: procrastinate itself
    crashes logging a job whose arguments are not an object, leaving it ``doing``
    with its lock held (D-STORE-21).

    And a job is fetched only once ``paced`` has a place for it (D-STORE-44): a worker
    holds as many jobs as it interviews, not procrastinate's whole concurrency; the
    place is the job's until :meth:`release` (its task's end). While waiting for a
    place it looks every ``_POLL`` seconds whether the worker is ``stopping`` (then it
    fetches nothing)."""

    paced: Paced | None = None
    stopping: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held: dict[int, object] = {}

    async def fetch_job(self, queues: Any, worker_id: int) -> queue_jobs.Job | None:
        while True:
            place = await self._place()
            if place is None:
                return None
            try:
                job = await super().fetch_job(queues, worker_id)
            except BaseException:
                self._free(place)
                raise
            if job is None or job.id is None:
                self._free(place)
                return job
            if _verification_job(job):
                self._held[job.id] = place
                return job
            self._free(place)
            await self.finish_job(job, status=queue_jobs.Status.FAILED, delete_job=False)
            _log.warning(
                "job %s is failed: it is not a verification job (its task must be %s, its "
                "arguments an object with the text members url and card_url)",
                job.id,
                TASK,
            )

    async def _place(self) -> object | None:
        """A place under the pace's limit (``None``: the worker is stopping)."""
        import anyio

        place = object()
        while not self.stopping:
            if self.paced is None:
                return place
            with anyio.move_on_after(_POLL):
                await self.paced.limiter.acquire_on_behalf_of(place)
                return place
        return None

    def _free(self, place: object) -> None:
        if self.paced is not None:
            self.paced.limiter.release_on_behalf_of(place)

    def release(self, job_id: int) -> None:
        """The job ``job_id`` is done with its place (whichever way its task ended)."""
        place = self._held.pop(job_id, None)
        if place is not None:
            self._free(place)


_POLL: Final = 0.25
# The queue's connections in a worker: the fetch of the next job, the jobs' ends and
# the heartbeat (D-STORE-46); four made the fetch wait behind the others.
POOL: Final = 12


def _app(ledger: Ledger) -> procrastinate.App:
    require_postgresql(ledger)
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(
            conninfo=ledger.conninfo, min_size=1, max_size=POOL
        )
    )
    jobs = _Jobs(connector=app.connector)
    app.job_manager = jobs

    @app.task(
        name=TASK,
        queue=QUEUE,
        pass_context=True,
        # A store that blips is retried; an agent's trouble never raises (it is an
        # ``unreachable`` record), so retries are about our side only.
        retry=procrastinate.RetryStrategy(max_attempts=5, exponential_wait=5),
    )
    async def verify_agent(context: procrastinate.JobContext, url: str, card_url: str) -> str:
        assert context.job.id is not None
        try:
            return await _verify_job(context, context.job.id, url)
        finally:
            jobs.release(context.job.id)

    async def _verify_job(context: procrastinate.JobContext, job_id: int, url: str) -> str:
        settings: WorkerSettings = context.additional_context["settings"]
        key = job_key(job_id)
        done = await asyncio.to_thread(ledger.by_job, key)
        if done is not None:  # written by a run whose worker died before acknowledging
            if settings.on_record is not None:
                settings.on_record(done, False)
            return f"record {done.id} (already written)"
        # D-VERIFY-70: the job holds its place under the pace since it was fetched.
        paced: Paced = context.additional_context["paced"]
        began = time.monotonic()
        body = await settings.verifier(url)
        paced.finished(_unreachable(body), time.monotonic() - began)
        try:
            stored, new = await asyncio.to_thread(ledger.put, body, job_key=key)
        except RecordRefused as exc:
            # The store's sanity (PROFILE §8) refused what the verifier wrote (its calls
            # went to another site than the card's, say): one line, no retry, no trace.
            _log.warning("job %s: the record was refused (%s): %s", job_id, exc.code, exc)
            return f"refused ({exc.code})"
        if settings.on_record is not None:
            settings.on_record(stored, new)
        return f"record {stored.id}"

    return app


def _unreachable(body: bytes) -> bool:
    """Whether a record says its agent could not be reached (a failure, for the pace)."""
    try:
        document = json.loads(body)
    except ValueError:
        return True
    return isinstance(document, dict) and document.get("outcome") == "unreachable"


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    """What :func:`schedule` did: agents (card URLs) enqueued, and those already
    waiting in the queue (left as they were)."""

    enqueued: tuple[str, ...]
    already_queued: tuple[str, ...]


async def schedule(ledger: Ledger, older_than: timedelta, now: datetime) -> ScheduleResult:
    """Enqueue a verification job for each agent whose last record was received before
    ``now - older_than`` (``Ledger.due``: the store's receipt time, PROFILE §8). An
    agent with a job still waiting is not enqueued twice (procrastinate's
    ``queueing_lock``, one per card URL); jobs for one agent never run at once (``lock``).

    Raises ``JobsNeedPostgreSQL`` for a SQLite store, ``StoreUnavailable``."""
    app = _app(ledger)
    due = await asyncio.to_thread(ledger.due, older_than, now)
    enqueued: list[str] = []
    already: list[str] = []
    with _queue_errors():
        async with app.open_async():
            task = app.tasks[TASK]

            def job(card_url: str) -> queue_jobs.Job:
                # The card URL the store keeps the agent under, never a record's
                # agent.url (the runner's word: PROFILE §8).
                deferrer = task.configure(queueing_lock=card_url, lock=card_url)
                return deferrer.make_new_job(url=card_url, card_url=card_url)

            for first in range(0, len(due), SCHEDULE_BATCH):
                batch = due[first : first + SCHEDULE_BATCH]
                try:  # one statement for the batch (D-STORE-45)
                    await app.job_manager.batch_defer_jobs_async([job(u) for u in batch])
                except queue_errors.AlreadyEnqueued:
                    pass  # one of them waits already: nothing of the batch was enqueued
                else:
                    enqueued.extend(batch)
                    continue
                for card_url in batch:
                    try:
                        await app.job_manager.defer_job_async(job(card_url))
                    except queue_errors.AlreadyEnqueued:
                        already.append(card_url)
                    else:
                        enqueued.append(card_url)
    return ScheduleResult(tuple(enqueued), tuple(already))


SCHEDULE_BATCH: Final = 500  # jobs deferred in one statement


@contextlib.contextmanager
def _queue_errors() -> Iterator[None]:
    # Fixed words: a driver's message may carry the host, the user or a query.
    try:
        yield
    except queue_errors.AlreadyEnqueued:  # pragma: no cover - handled by the caller
        raise
    except (queue_errors.ProcrastinateException, psycopg.Error, OSError) as exc:
        raise StoreUnavailable("the job queue in the store cannot be reached") from exc


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker runs: ``verifier(url) -> record bytes``; ``concurrency`` jobs at
    once (``None``: as many as a :class:`Paced` limit says, D-VERIFY-70; the worker
    then takes up to ``pace.CAP`` jobs and interviews that many of them at once); a
    heartbeat every ``heartbeat`` seconds; jobs of workers silent for ``stalled_after``
    seconds are put back in the queue, looked for every ``recover_every`` seconds;
    ``once`` stops when the queue is empty; ``on_record`` is told of each record a job
    stores (and whether it is new); ``deadline``: the verifier's, seconds per agent
    (the pace keeps agents well within it, D-VERIFY-81)."""

    verifier: Verifier
    concurrency: int | None = 4
    heartbeat: float = 10.0
    stalled_after: float = 60.0  # the command line's defaults (docs/decisions.md D-STORE-9)
    recover_every: float = 30.0
    once: bool = False
    name: str | None = None
    deadline: float | None = None  # each agent's (the verifier's), for the pace
    on_record: Callable[[StoredRecord, bool], None] | None = field(default=None)


class _Outage(logging.Filter):
    """One line per store outage and one per recovery (D-STORE-15), instead of
    the pool's and the queue's tracebacks while PostgreSQL restarts. Installed on the
    loggers of psycopg's pool and of procrastinate while a worker runs: a record about
    the connection (the pool's, or one carrying a database or connection error) becomes
    the outage line the first time and is dropped after; :meth:`up` says when the store
    answers again (the worker's recovery loop asks it every ``recover_every`` seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.seen_down = False

    def _about_the_store(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("psycopg"):
            return True
        error = record.exc_info[1] if record.exc_info else None
        return isinstance(
            error, (psycopg.Error, OSError, queue_errors.ConnectorException, StoreUnavailable)
        )

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not self._about_the_store(record):
            return True
        if self.down:
            return False
        if self.seen_down and record.name == "procrastinate.utils":
            # A background task (the LISTEN connection) that died in an outage already
            # told is reported again when the worker stops: nothing new.
            return False
        self.mark_down(record)
        return True

    def mark_down(self, record: logging.LogRecord | None = None) -> None:
        self.down = self.seen_down = True
        if record is None:
            _log.warning(_DOWN)
            return
        record.name, record.msg, record.args = __name__, _DOWN, ()
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text, record.stack_info = None, None, None

    def up(self) -> None:
        if self.down:
            self.down = False
            _log.warning("the store answers again; the worker goes on")


_DOWN: Final = "the store cannot be reached; the worker keeps trying"
_WATCHED: Final = ("psycopg", "procrastinate")


@contextlib.contextmanager
def _one_line_per_outage() -> Iterator[_Outage]:
    outage = _Outage()
    # A logger's filter sees only what is logged on it, not on its children: every
    # logger of the two packages, as their modules created them.
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in _WATCHED]
    loggers = [logging.getLogger(name) for name in sorted({*names, *_WATCHED})]
    for logger in loggers:
        logger.addFilter(outage)
    try:
        yield outage
    finally:
        for logger in loggers:
            logger.removeFilter(outage)


async def _recover(
    app: procrastinate.App, settings: WorkerSettings, outage: _Outage | None = None
) -> None:
    while True:
        await asyncio.sleep(settings.recover_every)
        try:  # also the store's health probe: one line when it goes, one when it is back
            stalled = await app.job_manager.get_stalled_jobs(
                queue=QUEUE, seconds_since_heartbeat=settings.stalled_after
            )
        except Exception:
            if outage is not None and not outage.down:
                outage.mark_down()
            continue
        if outage is not None:
            outage.up()
        for job in stalled:
            await _requeue(app, job)


async def _requeue(app: procrastinate.App, job: queue_jobs.Job) -> None:
    """Put ``job``, stalled (its worker is silent), back in the queue; when its agent
    has a newer job waiting, fail it so that the waiting one runs (D-STORE-20). Never
    raises: each way it can go is one line."""
    try:
        await app.job_manager.retry_job(job)
    except queue_errors.UniqueViolation:
        # The queueing lock (one waiting job per agent): the agent was scheduled again
        # while this job was stalled. Going back would make two; staying ``doing``
        # holds the agent's lock, so that the waiting job never starts.
        try:
            await app.job_manager.finish_job(job, status=queue_jobs.Status.FAILED, delete_job=False)
        except Exception as exc:
            _log.warning("job %s of a silent worker could not be failed (%s)", job.id, _why(exc))
        else:
            _log.warning(
                "job %s of a silent worker is failed: its agent's newer job waits and runs instead",
                job.id,
            )
    except Exception as exc:
        _log.warning("job %s of a silent worker could not be queued again (%s)", job.id, _why(exc))
    else:
        _log.warning("job %s of a silent worker is queued again", job.id)


def _why(exc: Exception) -> str:
    """Fixed words for a recovery that failed (a driver's message may name the host)."""
    if isinstance(exc, queue_errors.ConnectorException) and isinstance(
        exc.__cause__, psycopg.errors.RaiseException
    ):
        return "it is no longer doing: another worker recovered it first"
    if isinstance(exc, (queue_errors.ConnectorException, psycopg.Error, OSError)):
        return "the store cannot be reached"
    return type(exc).__name__


class _Stop:
    """Ctrl-C and SIGTERM for a worker, taken on its event loop from its very start: the
    first stops it once the jobs it holds are done (at start-up, before it takes any),
    the second at once (``KeyboardInterrupt``). Procrastinate's own handlers came only
    once its worker ran: a Ctrl-C before that cancelled the start-up halfway through
    opening the connection pool, whose tasks then kept the process from exiting."""

    def __init__(self) -> None:
        self.signals = 0
        self._worker: asyncio.Task[Any] | None = None
        self._jobs: _Jobs | None = None
        self._main = asyncio.current_task()

    def __call__(self) -> None:
        self.signals += 1
        if self.signals == 1:
            if self._jobs is not None:
                self._jobs.stopping = True  # no job waits for a place any longer
            if self._worker is not None:
                self._worker.cancel()  # procrastinate's graceful stop
        elif self._main is not None:
            self._main.cancel()

    def watch(self, worker: asyncio.Task[Any], jobs: _Jobs) -> None:
        """The worker to stop on the first signal (at once, if it came already)."""
        self._worker, self._jobs = worker, jobs
        if self.signals:
            jobs.stopping = True
            worker.cancel()


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[_Stop]:
    """Ctrl-C and SIGTERM go to a :class:`_Stop` while the worker runs (the caller holds
    them until this is entered: see ``cli/ledger.py``)."""
    loop = asyncio.get_running_loop()
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signals reach only the main thread: the caller stops the worker
        return
    for sig in _STOPPING:
        loop.add_signal_handler(sig, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
    try:
        yield stop
    finally:
        for sig in _STOPPING:
            loop.remove_signal_handler(sig)


_STOPPING: Final = (signal.SIGINT, signal.SIGTERM)
HARD_STOP_WAIT: Final = 5.0  # seconds a second signal lets the jobs' tasks take to end


def hold_stop_signals() -> Any:
    """Hold Ctrl-C and SIGTERM until :func:`run_worker` takes them; the mask before."""
    return signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)


async def run_worker(ledger: Ledger, settings: WorkerSettings) -> None:
    """Run verification jobs until Ctrl-C or SIGTERM (then once the jobs held are done;
    a second one raises ``KeyboardInterrupt`` at once) or, with ``settings.once``,
    until the queue is empty. Raises ``JobsNeedPostgreSQL`` for a SQLite store."""
    app = _app(ledger)
    paced = Paced(settings.concurrency, deadline=settings.deadline)
    assert isinstance(app.job_manager, _Jobs)
    app.job_manager.paced = paced
    options: dict[str, Any] = {
        "queues": [QUEUE],
        "concurrency": settings.concurrency or CAP,
        "wait": not settings.once,
        "update_heartbeat_interval": settings.heartbeat,
        "stalled_worker_timeout": settings.stalled_after,
        "additional_context": {"settings": settings, "paced": paced},
        "install_signal_handlers": False,  # _Stop has them, from the start
    }
    if settings.name is not None:
        options["name"] = settings.name
    with _stopped_by_signals() as stop:
        try:
            with _queue_errors(), _one_line_per_outage() as outage:
                await _work(app, settings, options, outage, stop)
        except asyncio.CancelledError:
            if stop.signals > 1:
                raise KeyboardInterrupt from None
            raise


async def _at_once() -> None:
    """A second signal: the jobs' tasks are cancelled too, while the app is still open,
    so that each puts its job back in the queue (once the app had closed, each failed
    to, with a traceback on the way out)."""
    others = asyncio.all_tasks() - {asyncio.current_task()}
    for task in others:
        task.cancel()
    if others:
        await asyncio.wait(others, timeout=HARD_STOP_WAIT)


async def _work(
    app: procrastinate.App, settings: WorkerSettings, options: Any, outage: _Outage, stop: _Stop
) -> None:
    async with app.open_async():
        if stop.signals:
            return  # stopped while starting: no job taken
        recovering = asyncio.create_task(_recover(app, settings, outage))
        try:
            if settings.once:
                # Jobs of dead workers first, so that --once finishes them too.
                try:
                    stalled = await app.job_manager.get_stalled_jobs(
                        queue=QUEUE, seconds_since_heartbeat=settings.stalled_after
                    )
                except Exception as exc:
                    _log.warning("the stalled jobs could not be looked for (%s)", _why(exc))
                    stalled = []
                for job in stalled:
                    await _requeue(app, job)
            worker = asyncio.create_task(app.run_worker_async(**options))
            jobs = app.job_manager
            assert isinstance(jobs, _Jobs)
            stop.watch(worker, jobs)
            try:
                await worker
            except asyncio.CancelledError:
                jobs.stopping = True
                current = asyncio.current_task()
                if current is None or not current.cancelling():
                    return  # the first signal cancelled the worker: it stopped gracefully
                if stop.signals > 1:
                    await _at_once()
                else:  # cancelled by whoever runs this: procrastinate's graceful stop
                    with contextlib.suppress(asyncio.CancelledError):
                        await worker
                raise
        finally:
            recovering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await recovering
