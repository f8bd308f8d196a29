"""Verify a population: bounded concurrency in each process, and several processes.

    verify_many(urls, options, concurrency=16, workers=2, emit=write_line,
                credentials={origin: headers}, per_origin=4)

The procedure is CPU-bound on fast networks (strict parsing, JCS, the checks and the
HTTP client's own bookkeeping are all Python), so one event loop saturates one core long
before the network does. ``workers`` processes each run their own loop over an
interleaved share of the list (``urls[w::workers]``), so the shares carry a like mix of
slow and fast agents; each loop chooses how many agents it has under way at once from
what it observes (``concurrency=None``: a :class:`Paced` limit that ``pace.Pace``
moves, D-VERIFY-80; the command's default, D-VERIFY-82) or takes a fixed number
(this function's default, 4).
Records come back to this process as JSON text and are handed to ``emit`` as they
finish. One agent's trouble
never stops the others: an exception in the procedure, or a worker process that dies,
becomes an ``unreachable`` record for each agent it left without one
(``failed_record``), never a lost line.

A real population shares hosts and needs credentials:

- ``credentials`` maps an origin (``origin(url)``: scheme, host, port) to the headers for
  the agents whose URL is on it, or to a :class:`Given`: the headers and the further
  origins they go to for those agents (an agent whose interfaces are on another origin
  than its card, PROFILE §7). Each agent's interviewer gets only its own origin's entry,
  and sends the headers only to that origin and the origins the entry names
  (``Interviewer``: redirects stay on the origin), so one agent's credentials never
  reach another, and no card can steer them elsewhere.
- ``per_origin`` bounds how many agents of one origin are under way at once across all
  workers: an origin's agents go to at most ``per_origin`` workers, each allowed its
  share, so a platform hosting a thousand agents on one host is not flooded.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import queue
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from ..net.failures import InsecureURL
from ..net.urls import origin
from ..pace import CAP, START, Pace, Window
from ..strictjson import JSONObject
from .state import VerifyOptions

Origin = tuple[str, str, int]
Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Given:
    """One origin's entry in ``credentials``: the headers for its agents, and the
    further origins (``scheme://host:port``) they are sent to beside the agent's own."""

    headers: Headers
    origins: tuple[str, ...] = ()


Credentials = Mapping[Origin, Headers | Given]

Emit = Callable[[int, str, JSONObject], None]
"""``emit(index, line, document)``: the agent at ``urls[index]`` is done; ``line`` is its
record as one line of JSON (no newline), ``document`` the same record parsed."""

# Below this many agents per worker, starting a process costs more than it saves.
MIN_AGENTS_PER_WORKER: Final = 8


def default_workers() -> int:
    """One worker per core this process may run on, at most 8."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _line(document: JSONObject) -> str:
    return json.dumps(document, ensure_ascii=False)


def origin_of(url: str) -> Origin | None:
    """The origin an agent's URL names (``None``: a URL that does not parse, which its
    run refuses anyway)."""
    try:
        return origin(url)
    except InsecureURL:
        return None


def options_for(url: str, options: VerifyOptions, credentials: Credentials | None) -> VerifyOptions:
    """``options`` for the agent at ``url``: the entry of its own origin, no other
    (``credentials`` ``None``: ``options`` as given)."""
    if credentials is None:
        return options
    given = credentials.get(origin_of(url) or ("", "", 0), ())
    if not isinstance(given, Given):
        given = Given(given)
    client = replace(options.client, headers=given.headers, credential_origins=given.origins)
    return replace(options, client=client)


@dataclass(frozen=True)
class _Share:
    """What one event loop verifies, and how (pickled to a worker process)."""

    urls: Sequence[tuple[int, str]]
    concurrency: int | None
    credentials: Credentials | None = None
    limits: Mapping[Origin | None, int] = field(default_factory=dict)


# A window of the pace is at least this long (a few fast agents say little) and at most
# this long (a run of slow agents still gets a decision).
MIN_WINDOW: Final = 0.5
MAX_WINDOW: Final = 10.0


class Paced:
    """A capacity limiter whose size a :class:`Pace` moves (``concurrency`` ``None``) or
    that stays at ``concurrency``. Enter ``limiter`` around each agent's interview and
    call :meth:`finished` after it; every ``window_size()`` agents (and at least
    ``MIN_WINDOW`` seconds, at most ``MAX_WINDOW``) the pace sees what this process did
    (agents, failures, wall and CPU time) and the limiter takes its new size.

    Needs a running event loop (anyio's, on asyncio or trio)."""

    def __init__(
        self, concurrency: int | None, cap: int = CAP, deadline: float | None = None
    ) -> None:
        import anyio

        pace = Pace(start=min(START, cap), cap=cap, deadline=deadline)
        self.pace = pace if concurrency is None else None
        self.limiter = anyio.CapacityLimiter(concurrency or min(START, cap))
        self.highest = int(self.limiter.total_tokens)
        self._open()

    def _open(self) -> None:
        self._since, self._cpu = time.monotonic(), time.process_time()
        self._done = self._failed = 0
        self._took: list[float] = []

    def finished(self, failed: bool, took: float) -> None:
        """One agent is done after ``took`` seconds in its place (``failed``: its record
        is ``unreachable``). Every agent counts, whenever it started: the pace waits
        one agent's time after a change before it judges it (D-VERIFY-80)."""
        if self.pace is None:
            return
        self._done += 1
        self._failed += failed
        self._took.append(took)
        seconds = time.monotonic() - self._since
        if seconds < MIN_WINDOW or (self._done < self.pace.window_size() and seconds < MAX_WINDOW):
            return
        waiting = self.limiter.statistics().tasks_waiting > 0
        cpu = time.process_time() - self._cpu
        window = Window(self._done, self._failed, seconds, cpu, waiting,
                        statistics.median(self._took))  # fmt: skip
        limit = self.pace.observe(window)
        if limit != self.limiter.total_tokens:
            self.limiter.total_tokens = limit
            self.highest = max(self.highest, limit)
        self._open()


async def _loop(share: _Share, options: VerifyOptions, emit: Emit) -> None:
    """One event loop: every ``(index, url)`` of ``share``, at most ``concurrency`` at
    once (``None``: as many as its :class:`Paced` limit says), and at most
    ``limits[origin]`` of one origin at once.

    Each agent gets its interviewer's own small keep-alive pool; they share the
    process's one TLS context."""
    import anyio

    from .procedure import failed_record, verify

    paced = Paced(share.concurrency, deadline=options.total_timeout)
    by_origin = {key: anyio.CapacityLimiter(n) for key, n in share.limits.items()}

    async def one(index: int, url: str) -> None:
        agent = options_for(url, options, share.credentials)
        bound = by_origin.get(origin_of(url))
        # The origin's bound first: an agent waiting for its host holds no general slot.
        async with bound if bound is not None else contextlib.nullcontext(), paced.limiter:
            began = time.monotonic()
            try:
                record = await verify(url, agent)
            except Exception:  # one agent's trouble never stops the others
                record = failed_record(url, agent)
            took = time.monotonic() - began
        document = record.to_json()
        paced.finished(document.get("outcome") == "unreachable", took)
        emit(index, _line(document), document)

    async with anyio.create_task_group() as group:
        for index, url in share.urls:
            group.start_soon(one, index, url)


def _shares(
    indexed: Sequence[tuple[int, str]], workers: int, per_origin: int | None
) -> list[tuple[list[tuple[int, str]], dict[Origin | None, int]]]:
    """Each worker's agents and its per-origin limits.

    An origin's agents are dealt round-robin over ``k = min(workers, agents, per_origin)``
    workers, each allowed ``per_origin // k`` at once (so together at most
    ``per_origin``); successive origins start on successive workers, so a list of
    distinct origins is dealt as ``urls[w::workers]``."""
    groups: dict[Origin | None, list[tuple[int, str]]] = {}
    for item in indexed:
        groups.setdefault(origin_of(item[1]), []).append(item)
    shares: list[tuple[list[tuple[int, str]], dict[Origin | None, int]]] = [
        ([], {}) for _ in range(workers)
    ]
    start = 0
    for key, items in groups.items():
        k = min(workers, len(items), per_origin or workers)
        for j, item in enumerate(items):
            shares[(start + j % k) % workers][0].append(item)
        if per_origin is not None:
            for j in range(k):
                shares[(start + j) % workers][1][key] = per_origin // k
        start = (start + k) % workers
    for agents, _limits in shares:
        agents.sort()
    return shares


def _worker(share: _Share, options: VerifyOptions, results: Any) -> None:
    """A worker process: verify its share, put ``(index, line)`` for each, then ``None``."""
    import anyio

    def emit(index: int, line: str, _document: JSONObject) -> None:
        results.put((index, line))

    try:
        anyio.run(_loop, share, options, emit)
    except KeyboardInterrupt:  # the parent is stopping too; it writes what is missing
        return
    results.put(None)


def verify_many(
    urls: Sequence[str],
    options: VerifyOptions,
    *,
    concurrency: int | None = 4,
    workers: int = 1,
    emit: Emit,
    credentials: Credentials | None = None,
    per_origin: int | None = None,
) -> None:
    """Verify every URL, calling ``emit`` once per URL as each finishes (any order).

    ``concurrency``: agents under way at once in each worker (``None``: chosen as the
    run goes, from ``pace.START`` up to ``pace.CAP``, D-VERIFY-70). ``workers``: processes
    (1: all in this process, on its event loop). Fewer agents than
    ``MIN_AGENTS_PER_WORKER`` per worker use fewer workers. ``options`` must pickle
    when ``workers`` > 1 (no ``progress`` callback, a module-level ``clock``).
    ``credentials``: headers by origin, each agent given its own origin's only (the
    headers of ``options.client`` are replaced). ``per_origin``: agents of one origin
    under way at once, across all workers (``None``: no bound).

    Never raises for what an agent does. Raises ``KeyboardInterrupt`` when interrupted
    (the worker processes are stopped first).
    """
    indexed = list(enumerate(urls))
    workers = max(1, min(workers, len(indexed) // MIN_AGENTS_PER_WORKER))
    if workers == 1:
        import anyio

        limits = _shares(indexed, 1, per_origin)[0][1]
        anyio.run(_loop, _Share(indexed, concurrency, credentials, limits), options, emit)
        return
    if options.progress is not None:
        options = _without_progress(options)
    # spawn, not fork: the parent may already run threads (a terminal progress display),
    # and a forked child inherits their locks held.
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = [
        context.Process(
            target=_worker,
            args=(_Share(share, concurrency, credentials, limits), options, results),
            daemon=True,
        )
        for share, limits in _shares(indexed, workers, per_origin)
        if share
    ]
    workers = len(processes)
    for process in processes:
        process.start()
    done: set[int] = set()
    finished = 0
    try:
        while finished < workers:
            try:
                item = results.get(timeout=0.5)
            except queue.Empty:
                if all(p.exitcode is not None for p in processes) and results.empty():
                    break  # a worker died without its end mark: fill in below
                continue
            if item is None:
                finished += 1
                continue
            index, line = item
            done.add(index)
            emit(index, line, json.loads(line))
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join(5)
    _fill_missing(indexed, done, options, emit, credentials)


def _without_progress(options: VerifyOptions) -> VerifyOptions:
    return replace(options, progress=None)


def _fill_missing(
    indexed: Sequence[tuple[int, str]],
    done: set[int],
    options: VerifyOptions,
    emit: Emit,
    credentials: Credentials | None,
) -> None:
    from .procedure import failed_record

    for index, url in indexed:
        if index not in done:
            document = failed_record(
                url, options_for(url, options, credentials),
                detail="the verifier's worker process stopped on this agent",
            ).to_json()  # fmt: skip
            emit(index, _line(document), document)
