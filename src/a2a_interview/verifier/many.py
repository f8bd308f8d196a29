"""Verify a population: bounded concurrency in each process, and several processes.

    verify_many(urls, options, concurrency=16, workers=2, emit=write_line)

The procedure is CPU-bound on fast networks (strict parsing, JCS, the checks and the
HTTP client's own bookkeeping are all Python), so one event loop saturates one core long
before the network does. ``workers`` processes each run their own loop over an
interleaved share of the list (``urls[w::workers]``), so the shares carry a like mix of
slow and fast agents; records come back to this process as JSON text and are handed to
``emit`` as they finish. One agent's trouble never stops the others: an exception in the
procedure, or a worker process that dies, becomes an ``unreachable`` record for each
agent it left without one (``failed_record``), never a lost line.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..ijson import JSONObject
from .procedure import VerifyOptions

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


async def _loop(
    urls: Sequence[tuple[int, str]], options: VerifyOptions, concurrency: int, emit: Emit
) -> None:
    """One event loop: every ``(index, url)``, at most ``concurrency`` at once.

    Each agent gets its interviewer's own small keep-alive pool; they share the
    process's one TLS context."""
    import anyio

    from .procedure import failed_record, verify

    limiter = anyio.CapacityLimiter(concurrency)

    async def one(index: int, url: str) -> None:
        async with limiter:
            try:
                record = await verify(url, options)
            except Exception:  # one agent's trouble never stops the others
                record = failed_record(url, options)
        document = record.to_json()
        emit(index, _line(document), document)

    async with anyio.create_task_group() as group:
        for index, url in urls:
            group.start_soon(one, index, url)


def _worker(
    urls: Sequence[tuple[int, str]],
    options: VerifyOptions,
    concurrency: int,
    results: Any,
) -> None:
    """A worker process: verify its share, put ``(index, line)`` for each, then ``None``."""
    import anyio

    def emit(index: int, line: str, _document: JSONObject) -> None:
        results.put((index, line))

    try:
        anyio.run(_loop, urls, options, concurrency, emit)
    except KeyboardInterrupt:  # the parent is stopping too; it writes what is missing
        return
    results.put(None)


def verify_many(
    urls: Sequence[str],
    options: VerifyOptions,
    *,
    concurrency: int = 4,
    workers: int = 1,
    emit: Emit,
) -> None:
    """Verify every URL, calling ``emit`` once per URL as each finishes (any order).

    ``concurrency``: agents under way at once in each worker. ``workers``: processes
    (1: all in this process, on its event loop). Fewer agents than
    ``MIN_AGENTS_PER_WORKER`` per worker use fewer workers. ``options`` must pickle
    when ``workers`` > 1 (no ``progress`` callback, a module-level ``clock``).

    Never raises for what an agent does. Raises ``KeyboardInterrupt`` when interrupted
    (the worker processes are stopped first).
    """
    indexed = list(enumerate(urls))
    workers = max(1, min(workers, len(indexed) // MIN_AGENTS_PER_WORKER))
    if workers == 1:
        import anyio

        anyio.run(_loop, indexed, options, concurrency, emit)
        return
    if options.progress is not None:
        options = _without_progress(options)
    # spawn, not fork: the parent may already run threads (a terminal progress display),
    # and a forked child inherits their locks held.
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    shares = [indexed[w::workers] for w in range(workers)]
    processes = [
        context.Process(target=_worker, args=(share, options, concurrency, results), daemon=True)
        for share in shares
    ]
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
    _fill_missing(indexed, done, options, emit)


def _without_progress(options: VerifyOptions) -> VerifyOptions:
    from dataclasses import replace

    return replace(options, progress=None)


def _fill_missing(
    indexed: Sequence[tuple[int, str]], done: set[int], options: VerifyOptions, emit: Emit
) -> None:
    from .procedure import failed_record

    for index, url in indexed:
        if index not in done:
            document = failed_record(
                url, options, detail="the verifier's worker process stopped on this agent"
            ).to_json()
            emit(index, _line(document), document)
