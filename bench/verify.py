"""Verifier benchmark: the verifier's own cost, and verify-many's scaling. Prints ratios.

    .venv/bin/python bench/verify.py                    # ~1.5 minutes
    .venv/bin/python bench/verify.py --rounds 5 --agents 50 --concurrency 1 16   # a quick look

1. **A full verify against the same round trips made raw.** The agent (the a2a-sdk demo
   agent, and the core-only test agent of ``tests/agents.py``) runs in its own process
   on 127.0.0.1. One ``verify`` is recorded at the transport, then, alternately, round
   after round: a full ``verify`` (fetch, strict parsing, card signature, terms
   verification, every check, the record) and a replay of exactly the recorded requests
   with a plain ``httpx.AsyncClient`` that reads each body and does nothing else. The
   ratio of the medians is the verifier's own overhead (goal ≤ 1.5).
2. **verify-many over N agents on loopback** (default 200, each on its own port, served
   by one uvicorn process): agents per second at each number of worker processes and
   each concurrency, through the real command (``a2a-interview verify-many``), beside the
   agents per second of the same round trips made raw (the requests one verify sends,
   replayed with plain httpx over the same processes and concurrency: the ceiling this
   machine and server allow); then again with every response delayed a few
   milliseconds, as a network would, which is what concurrency is for.

Not a test: nothing asserts a time. Both sides of a ratio share the machine, the server
and the moment; the ratios travel better than the absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from a2a_interview.cli import main as cli_main  # noqa: E402
from a2a_interview.verifier import verify  # noqa: E402

# --- the agents, in a child process --------------------------------------------------------


def _delayed(app: Any, seconds: float) -> Any:
    """``app`` answering ``seconds`` late: a network round trip, simulated."""

    async def delayed(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(seconds)
        await app(scope, receive, send)

    return delayed


def _serve(kind: str, count: int, latency_ms: float) -> None:
    """Child process: serve ``count`` agents, print their origins, wait for stdin EOF."""
    from agents import honest
    from support.servers import serve_many

    if kind == "demo":
        from a2a_interview.server.demo import build_app

        build: Any = build_app
    else:
        build = honest

    def factory(origin: str) -> Any:
        app = build(origin)
        return _delayed(app, latency_ms / 1000) if latency_ms else app

    os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")
    import logging

    logging.getLogger("a2a").setLevel(logging.CRITICAL)  # the SDK logs each inactive probe
    with serve_many([factory] * count) as origins:
        print(json.dumps(origins), flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def agents(kind: str, count: int, latency_ms: float = 0) -> Iterator[list[str]]:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind, str(count), str(latency_ms)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        origins: list[str] = json.loads(child.stdout.readline())
        yield origins
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)


# --- 1. verify against raw round trips -------------------------------------------------------


class Recorder(httpx.AsyncBaseTransport):
    """Passes requests through, keeping (method, url, headers, body) of each."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[tuple[str, str, list[tuple[bytes, bytes]], bytes]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        self.requests.append((request.method, str(request.url), request.headers.raw, body))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


TLS = httpx.create_ssl_context()  # made once, as the verifier makes its own once


async def _raw(requests: list[tuple[str, str, list[tuple[bytes, bytes]], bytes]]) -> None:
    async with httpx.AsyncClient(verify=TLS) as client:
        for method, url, headers, body in requests:
            response = await client.request(method, url, headers=headers, content=body)
            response.read()


async def _verify_once(origin: str) -> str:
    record = await verify(origin, churn_delay=0)
    return str(record.outcome)


def compare(kind: str, rounds: int) -> dict[str, Any]:
    with agents(kind, 1) as (origin,):
        recorder = Recorder()

        async def record() -> str:
            return str((await verify(origin, churn_delay=0, transport=recorder)).outcome)

        outcome = anyio.run(record)
        requests = recorder.requests
        verify_times, raw_times = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            assert anyio.run(_verify_once, origin) == outcome
            verify_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            anyio.run(_raw, requests)
            raw_times.append(time.perf_counter() - start)
    v, r = statistics.median(verify_times), statistics.median(raw_times)
    return {"kind": kind, "outcome": outcome, "requests": len(requests), "verify": v, "raw": r}


# --- 2. verify-many ----------------------------------------------------------------------------


async def _raw_share(
    plan: list[tuple[str, str, list[tuple[bytes, bytes]], bytes]],
    origins: list[str],
    here: str,
    concurrency: int,
    client: str,
) -> None:
    """The recorded requests of one verify, replayed against each origin: the same round
    trips the procedure needs, with no parsing, checks or record. ``client``: ``wire``
    (the exchanges the verifier itself uses) or ``httpx``."""
    from a2a_interview.verifier.client import tls_context
    from a2a_interview.verifier.wire import Pool

    limiter = anyio.CapacityLimiter(concurrency)
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=2)
    tls = tls_context()

    async def one(origin: str) -> None:
        async with limiter:
            if client == "wire":
                pool = Pool(tls, resolve=_literal_only)
                for method, url, headers, body in plan:
                    text = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers
                            if n.lower() not in (b"host", b"content-length")]  # fmt: skip
                    await pool.exchange(method, url.replace(here, origin), text, body or None,
                                        max_bytes=1 << 20)  # fmt: skip
                await pool.aclose()
                return
            async with httpx.AsyncClient(verify=tls, limits=limits) as http:
                for method, url, headers, body in plan:
                    response = await http.request(
                        method, url.replace(here, origin), headers=headers, content=body
                    )
                    response.read()

    async with anyio.create_task_group() as group:
        for origin in origins:
            group.start_soon(one, origin)


async def _literal_only(host: str, port: int) -> list[str]:
    raise OSError("the benchmark's agents are IP literals")  # never called for them


def _raw_worker(args: tuple[Any, list[str], str, int, str]) -> None:
    anyio.run(_raw_share, *args)


def raw_rate(origins: list[str], concurrency: int, workers: int, client: str) -> tuple[float, int]:
    """Agents/s for the bare round trips, spread over ``workers`` processes as verify-many
    spreads them; also the number of round trips one agent needs."""
    import multiprocessing

    recorder = Recorder()
    anyio.run(lambda: verify(origins[0], churn_delay=0, transport=recorder))
    plan = recorder.requests
    here = origins[0]
    shares = [(plan, origins[w::workers], here, concurrency, client) for w in range(workers)]
    start = time.perf_counter()
    if workers == 1:
        _raw_worker(shares[0])
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            pool.map(_raw_worker, shares)
    return len(origins) / (time.perf_counter() - start), len(plan)


def many(
    count: int, levels: list[int], workers: list[int], latency_ms: float
) -> list[tuple[int, int, float, float, float, int, str]]:
    rows = []
    with agents("honest", count, latency_ms) as origins, tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        out = Path(tmp) / "records.jsonl"
        for procs in workers:
            for level in levels:
                argv = ["verify-many", str(listing), "--out", str(out), "--no-progress",
                        "--churn-delay", "0", "--concurrency", str(level),
                        "--workers", str(procs)]  # fmt: skip
                start = time.perf_counter()
                with contextlib.redirect_stderr(io.StringIO()):
                    code = cli_main(argv)
                rate = count / (time.perf_counter() - start)
                raw, trips = raw_rate(origins, level, procs, "wire")
                raw_httpx, _ = raw_rate(origins, level, procs, "httpx")
                outcomes = {json.loads(line)["outcome"] for line in out.read_text().splitlines()}
                note = f"exit {code}, outcomes {sorted(outcomes)}"
                rows.append((procs, level, rate, raw, raw_httpx, trips, note))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="alternating rounds (default 30)")
    parser.add_argument("--agents", type=int, default=200, help="agents for verify-many")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        help="verify-many processes to compare (default 1 and 2)",
    )
    parser.add_argument(
        "--latency", type=float, nargs="+", default=[0, 5], metavar="MS",
        help="verify-many again with each response delayed this long (default 0 and 5 ms)",
    )  # fmt: skip
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve[0], int(args.serve[1]), float(args.serve[2]))
        return 0

    print(f"1. A full verify ÷ the same round trips made raw ({args.rounds} alternating rounds)")
    for kind in ("demo", "honest"):
        try:
            row = compare(kind, args.rounds)
        except ImportError as exc:  # the demo needs the sdk extra
            print(f"   {kind}: skipped ({exc})")
            continue
        ratio = row["verify"] / row["raw"]
        print(
            f"   {kind:<7} {row['requests']} requests, {row['outcome']}: verify "
            f"{row['verify'] * 1e3:6.1f} ms, raw {row['raw'] * 1e3:6.1f} ms -> ratio {ratio:.2f}"
            f" (goal <= 1.5)"
        )

    for latency in args.latency:
        delay = f", each response {latency:g} ms late" if latency else ""
        print(f"\n2. verify-many over {args.agents} loopback agents (one server process{delay}),")
        print("   beside the same round trips made raw (no checks; same processes, concurrency),")
        print("   through the verifier's own exchanges (wire) and through plain httpx")
        rows = many(args.agents, args.concurrency, args.workers, latency)
        for procs, level, rate, raw, raw_httpx, trips, note in rows:
            print(
                f"   workers {procs} concurrency {level:>3}: verify-many {rate:6.1f} agents/s;"
                f" raw wire {raw:6.1f}, raw httpx {raw_httpx:6.1f} ({trips} round trips each)"
                f" -> verify-many / raw wire {rate / raw:.2f}  {note}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
