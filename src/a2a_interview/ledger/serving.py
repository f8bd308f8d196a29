"""Serving the ledger's page (``a2a-interview ledger serve``): :func:`serve` runs
:func:`.web.app` with uvicorn on a bound socket, in one process or in several forked
after binding (``--workers``), each with its own connections to the store."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Final

from .runners import NO_RUNNERS, Runners
from .web import _Ledger, app, compile_templates

__all__ = ["WorkersFailing", "serve"]


class WorkersFailing(RuntimeError):
    """The workers of ``serve(workers=N)`` keep exiting: the command stopped them all."""


def serve(
    ledger: _Ledger,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    on_ready: Callable[[str], None] | None = None,
    runners: Runners = NO_RUNNERS,
    workers: int = 1,
) -> None:
    """Serve the page over ``ledger`` on ``host:port`` until interrupted; ``on_ready``
    is called with the origin once listening. ``workers`` over 1: that many processes
    forked after the socket is bound, each serving from it with its own connections to
    the store (D-WEB-23: one Python process serves one request at a time). Raises
    ``OSError`` (cannot listen), ``KeyboardInterrupt`` (stopped) and
    :class:`WorkersFailing` (workers that exit as fast as they are replaced)."""
    from ..net.sockets import bind, socket_origin

    sock = bind(host, port)
    try:
        if workers <= 1:
            _serve_on(sock, ledger, runners, on_ready)
            return
        # Ctrl-C and SIGTERM wait until the command can pass them on to every worker
        # (_supervise): before, one that came between the forks and the wait for the
        # workers reached none of them.
        before = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
        try:
            children = _fork_workers(sock, ledger, runners, workers)
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
            raise
        if on_ready is not None:
            on_ready(socket_origin(sock))  # the socket queues connections until one accepts
        _supervise(children, lambda: _fork_workers(sock, ledger, runners, 1)[0], before)
    finally:
        sock.close()


# What stops the command: Ctrl-C (SIGINT, which a terminal sends the whole group) and
# SIGTERM (a service manager's). A worker is stopped by the command, with SIGTERM.
STOPPING: Final = frozenset({signal.SIGINT, signal.SIGTERM})


def _serve_on(
    sock: Any, ledger: _Ledger, runners: Runners, on_ready: Callable[[str], None] | None
) -> None:
    import asyncio

    import uvicorn

    from ..net.sockets import socket_origin

    # Ctrl-C and SIGTERM wait while the app is made and settled, and arrive once it
    # is: a KeyboardInterrupt raised inside a callback the collector runs (SQLAlchemy
    # keeps weak references) is printed as "Exception ignored" and dropped, and the
    # worker then served on as if it had never been told to stop.
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        config = uvicorn.Config(
            app(ledger, runners), log_level="warning", access_log=False, lifespan="off"
        )
        server = uvicorn.Server(config)
        compile_templates()
        _settle_gc()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started and on_ready is not None:
            on_ready(socket_origin(sock))
        await task

    asyncio.run(main())


# Collections of the young generation only at this many new objects (Python's default
# is 700): a page allocates thousands, so at 700 a page ran several collections, at
# 10,000 few (D-WEB-25; the counts are in docs/benchmarks.md).
GC_THRESHOLDS: Final = (10_000, 50, 1_000)


def _settle_gc() -> None:
    """What is alive once the app is made (modules, compiled templates, the store's
    engine) lives as long as the process: freeze it out of the collector's walks, so a
    full collection walks only what pages made since (it walked everything, a pause
    long beside a page: docs/benchmarks.md), and collect less often."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _fork_workers(sock: Any, ledger: _Ledger, runners: Runners, workers: int) -> list[int]:
    """``workers`` children, each serving ``sock`` until SIGTERM; a child never returns
    into the caller's code. Each is made with SIGINT and SIGTERM held, and takes them
    again only once it ignores Ctrl-C (the command's to pass on) and dies of SIGTERM
    until uvicorn handles it: a signal the command's handler would take in a child
    (between the fork and its own dispositions) would stop the child's siblings."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    children: list[int] = []
    try:
        for _ in range(workers):
            pid = os.fork()
            if pid:
                children.append(pid)
                continue
            _worker(sock, ledger, runners, before)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return children


def _worker(sock: Any, ledger: _Ledger, runners: Runners, mask: set[Any]) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask - STOPPING)
        forked = getattr(ledger, "forked", None)
        if callable(forked):  # the parent's pooled connections are not its own
            forked()
        _serve_on(sock, ledger, runners, None)
    except BaseException:  # a child's last word, then its exit
        print("a2a-interview: a ledger worker stopped on an error", file=sys.stderr)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# A worker that exits on its own (killed, out of memory, an error) is replaced, unless
# replacements come this fast: then something is wrong with every worker, and the
# command stops rather than fork in a loop (D-WEB-23).
RESTARTS: Final = 5
RESTART_WINDOW: Final = 30.0  # seconds


def _supervise(children: list[int], replace: Callable[[], int], mask: set[Any]) -> None:
    """Wait for the workers, replacing one that exits on its own (one line on stderr
    each time; more than :data:`RESTARTS` within :data:`RESTART_WINDOW` seconds stops
    them all and raises :class:`WorkersFailing`). SIGTERM or Ctrl-C stops every worker
    with SIGTERM and waits for them; after Ctrl-C, raises ``KeyboardInterrupt`` as one
    process would. Called with both signals held; ``mask`` is the mask to restore once
    they are handled."""
    import time

    stopping: list[int] = []  # the signals received, once there is one

    def stop(signum: int, _: Any) -> None:
        stopping.append(signum)
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in STOPPING}
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    restarts: list[float] = []
    try:
        while children:
            try:
                pid, status = os.wait()  # PEP 475: resumed after ``stop`` has run
            except ChildProcessError:
                break
            if pid not in children:
                continue
            children.remove(pid)
            if stopping:
                continue
            now = time.monotonic()
            restarts = [at for at in restarts if now - at < RESTART_WINDOW] + [now]
            if len(restarts) > RESTARTS:
                stop(signal.SIGTERM, None)
                for _ in list(children):
                    with contextlib.suppress(ChildProcessError):
                        os.wait()
                raise WorkersFailing(
                    f"ledger workers keep exiting ({RESTARTS + 1} within "
                    f"{RESTART_WINDOW:.0f} s): stopped"
                )
            print(
                f"a2a-interview: a ledger worker exited ({_exit_text(status)}); starting another",
                file=sys.stderr,
                flush=True,
            )
            children.append(replace())
            if stopping:  # stopped while it was made: it was not yet there to be told
                os.kill(children[-1], signal.SIGTERM)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if signal.SIGINT in stopping:
        raise KeyboardInterrupt


def _exit_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"signal {signal.Signals(number).name}"
        except ValueError:
            return f"signal {number}"
    return f"status {os.waitstatus_to_exitcode(status)}"
