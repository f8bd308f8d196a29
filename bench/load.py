"""Load and attack script: many clients against the a2a-sdk integration (``demo serve``)
and against the proxy in front of it, with and without slow attackers, with the rate
limit in memory and in Redis.

    .venv/bin/python bench/load.py          # ~6 minutes: 8 scenarios of 40 s
    .venv/bin/python bench/load.py --target demo --duration 12 --attackers 100 --no-redis
    .venv/bin/python bench/load.py --scenario frozen-redis --clients 4   # ~50 s

For each scenario a fresh ``a2a-interview demo serve`` process (and, for the proxy, an
``a2a-interview proxy`` in front of another one) is started on 127.0.0.1 with its default
connection bounds (server/listen.py), then for ``--duration`` seconds:

- ``--clients`` ordinary clients, each on its own keep-alive connection, send requests
  back to back: ``interview/identity`` (activated), the card, and every tenth a
  ``SendMessage``; each latency is recorded, and every answer that is not a 200 with the
  expected bytes, or any connection error, is counted as an error;
- with attack, ``--attackers`` slow clients: half drip a request head (one header line a
  second), half send a head announcing a body and drip it (one byte a second); each one
  the server drops reconnects and starts again, until the scenario ends.

Printed per scenario: ordinary requests done, p50 and p99 latency, errors, attackers
dropped by the server, and the server's peak memory (VmHWM, Linux). The rate limit is on
(a limit high enough never to refuse: the store's cost is measured, not its refusals);
``redis`` scenarios start a private ``redis-server`` on a free loopback port.

``--scenario frozen-redis``: for each target, a Redis that stops answering (D-SERVE-35):
``--clients`` ordinary clients run for ``--duration`` seconds (20) against a server whose
rate limit lives in a private ``redis-server``, which is frozen (SIGSTOP: its port still
accepts connections, nothing replies) ``--freeze-at`` seconds in (3) for ``--freeze``
seconds (14), then thawed (SIGCONT). Printed: requests, p50, p99 and the slowest answer,
errors, and the server's lines on stderr naming the store. Goal: no errors, every answer
within 1.5 s, one line when the store fails and one when it recovers.

Not a test: nothing asserts; it prints and exits 0 (2 when the server cannot start).
Loopback only; every loop ends with its scenario; the script stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a2a_interview.spec import INTERVIEW_URI

HOST = "127.0.0.1"
IDENTITY = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
SEND = (
    b'{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m",'
    b'"role":"ROLE_USER","parts":[{"text":"load"}]}}}'
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _peak_kib(pid: int) -> int | None:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def _wait_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the server exited")
        with socket.socket() as probe:
            if probe.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


@contextlib.contextmanager
def _process(
    args: list[str], port: int, stderr: int | Any = subprocess.DEVNULL
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        _wait_port(port, proc)
        yield proc
    finally:
        proc.send_signal(signal.SIGCONT)  # a frozen redis-server too
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def redis_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp, _process(
        ["redis-server", "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no",
         "--dir", tmp], port,
    ) as proc:  # fmt: skip
        yield f"redis://{HOST}:{port}/0", proc


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    with redis_process() as (url, _):
        yield url


CLI = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()"]
LIMIT = ["--rate-limit", "1000000/minute"]


@contextlib.contextmanager
def demo_server(redis: str | None, stderr: Any = subprocess.DEVNULL) -> Iterator[tuple[int, int]]:
    port = _free_port()
    args = [*CLI, "demo", "serve", "--port", str(port), *LIMIT]
    if redis:
        args += ["--redis", redis]
    with _process(args, port, stderr) as proc:
        yield port, proc.pid


@contextlib.contextmanager
def proxy_server(redis: str | None, stderr: Any = subprocess.DEVNULL) -> Iterator[tuple[int, int]]:
    """``a2a-interview proxy`` in front of ``demo serve`` (the proxy answers the
    interview itself; everything else passes through to the demo agent)."""
    upstream = _free_port()
    port = _free_port()
    args = [*CLI, "proxy", "--upstream", f"http://{HOST}:{upstream}", "--port", str(port),
            "--poll", "0", *LIMIT]  # fmt: skip
    if redis:
        args += ["--redis", redis]
    with _process([*CLI, "demo", "serve", "--port", str(upstream), "--rate-limit", "off"],
                  upstream), _process(args, port, stderr) as proc:  # fmt: skip
        yield port, proc.pid


# ---------------------------------------------------------------- clients


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    dropped: int = 0


def _request(method: bytes, path: bytes, body: bytes, headers: list[bytes]) -> bytes:
    lines = [method + b" " + path + b" HTTP/1.1", b"host: " + HOST.encode(), *headers]
    if body:
        lines += [b"content-type: application/json", b"content-length: %d" % len(body)]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


ACTIVATED = [b"a2a-extensions: " + INTERVIEW_URI.encode(), b"a2a-version: 1.0"]
REQUESTS = [
    _request(b"POST", b"/a2a/jsonrpc", IDENTITY, ACTIVATED),
    _request(b"GET", b"/.well-known/agent-card.json", b"", []),
    _request(b"POST", b"/a2a/jsonrpc", SEND, [b"a2a-version: 1.0"]),
]


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return status, body


async def ordinary(port: int, until: float, tally: Tally, expected: list[bytes]) -> None:
    reader = writer = None
    count = 0
    while time.monotonic() < until:
        which = 2 if count % 10 == 9 else count % 2
        count += 1
        start = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), 10)
            assert reader is not None
            writer.write(REQUESTS[which])
            status, body = await asyncio.wait_for(_read_response(reader), 10)
            ok = status == 200 and ((which == 2 and b'"result"' in body) or body == expected[which])
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
            ok = False
            if writer is not None:
                writer.close()
            reader = writer = None
        tally.latencies.append(time.perf_counter() - start)
        if not ok:
            tally.errors += 1
    if writer is not None:
        writer.close()


async def attacker(port: int, until: float, tally: Tally, body: bool, i: int = 0) -> None:
    """A slow client: drips a head (or a body) a byte a second, reconnects when dropped.
    Attacker ``i`` connects from its own loopback address (127.0.1.1 upward), as distinct
    clients would: the per-client share of connections (PROFILE §3.9) is not what is
    measured here."""
    source = (f"127.0.{1 + i // 250}.{1 + i % 250}", 0)
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(HOST, port, local_addr=source), 10
            )
        except (TimeoutError, OSError):
            await asyncio.sleep(0.5)
            continue
        if body:
            writer.write(b"POST /a2a/jsonrpc HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n")
        else:
            writer.write(b"GET / HTTP/1.1\r\nhost: x\r\n")
        try:
            while time.monotonic() < until:
                writer.write(b"x" if body else b"x-slow: 1\r\n")
                await writer.drain()
                with contextlib.suppress(asyncio.TimeoutError):
                    if await asyncio.wait_for(reader.read(1), 1.0) == b"":
                        raise ConnectionResetError
                    raise ConnectionResetError  # the server answered (408): dropped
        except (OSError, ConnectionResetError):
            tally.dropped += 1
        finally:
            writer.close()


async def _expected(port: int) -> list[bytes]:
    expected = []
    for raw in REQUESTS[:2]:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(raw)
        expected.append((await _read_response(reader))[1])
        writer.close()
    expected.append(b"")
    return expected


async def scenario(port: int, seconds: float, clients: int, attackers: int) -> Tally:
    tally = Tally()
    expected = await _expected(port)
    until = time.monotonic() + seconds
    tasks = [asyncio.ensure_future(attacker(port, until, tally, body=i % 2 == 1, i=i))
             for i in range(attackers)]  # fmt: skip
    if attackers:
        await asyncio.sleep(min(2.0, seconds / 4))  # the attack is in place first
    tasks += [asyncio.ensure_future(ordinary(port, until, tally, expected))
              for _ in range(clients)]  # fmt: skip
    await asyncio.wait_for(asyncio.gather(*tasks), seconds + 30)
    return tally


async def frozen(port: int, args: argparse.Namespace, redis: subprocess.Popen[bytes]) -> Tally:
    """Ordinary clients while the store is frozen for ``args.freeze`` seconds."""
    tally = Tally()
    expected = await _expected(port)
    until = time.monotonic() + args.duration
    tasks = [asyncio.ensure_future(ordinary(port, until, tally, expected))
             for _ in range(args.clients)]  # fmt: skip
    await asyncio.sleep(args.freeze_at)
    os.kill(redis.pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(args.freeze)
    finally:
        os.kill(redis.pid, signal.SIGCONT)
    await asyncio.wait_for(asyncio.gather(*tasks), args.duration + 30)
    return tally


def run_frozen(args: argparse.Namespace, targets: list[str]) -> int:
    print(f"on {HOST}: {args.clients} ordinary clients, {args.duration:g} s; the Redis store "
          f"frozen at {args.freeze_at:g} s for {args.freeze:g} s")  # fmt: skip
    print(f"\n{'server':7} {'requests':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
          f"{'errors':>7}")  # fmt: skip
    for target in targets:
        # The server's stderr, read once it has stopped.
        with tempfile.TemporaryFile() as log, contextlib.ExitStack() as stack:
            url, redis = stack.enter_context(redis_process())
            start = demo_server if target == "demo" else proxy_server
            try:
                port, _ = stack.enter_context(start(url, log))
            except RuntimeError as exc:
                print(f"cannot start the {target} server: {exc}", file=sys.stderr)
                return 2
            tally = asyncio.run(frozen(port, args, redis))
            stack.close()
            log.seek(0)
            lines = [x for x in log.read().decode(errors="replace").splitlines() if "store" in x]
        latencies = tally.latencies
        print(f"{target:7} {len(latencies):9d} {_pct(latencies, 50):8.2f} "
              f"{_pct(latencies, 99):8.2f} {max(latencies, default=0) * 1000:8.2f} "
              f"{tally.errors:7d}", flush=True)  # fmt: skip
        for line in lines:
            print(f"  stderr: {line}")
    return 0


def _pct(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))] * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        help="seconds per scenario (40: past the 30 s body timeout; frozen-redis: 20)",
    )
    parser.add_argument("--clients", type=int, default=16, help="ordinary clients (16)")
    parser.add_argument("--attackers", type=int, default=300, help="slow attackers (300)")
    parser.add_argument("--no-redis", action="store_true", help="memory store only")
    parser.add_argument("--target", choices=("demo", "proxy", "both"), default="both",
                        help="the a2a-sdk integration (demo serve), the proxy in front of "
                        "it, or both (default)")  # fmt: skip
    parser.add_argument("--scenario", choices=("attack", "frozen-redis"), default="attack",
                        help="slow attackers with memory and Redis stores (default), or a "
                        "Redis that stops answering")  # fmt: skip
    parser.add_argument("--freeze-at", type=float, default=3.0,
                        help="frozen-redis: seconds before the freeze (3)")  # fmt: skip
    parser.add_argument("--freeze", type=float, default=14.0,
                        help="frozen-redis: seconds the store stays frozen (14)")  # fmt: skip
    args = parser.parse_args(argv)
    targets = ["demo", "proxy"] if args.target == "both" else [args.target]
    if args.scenario == "frozen-redis":
        if not shutil.which("redis-server"):
            print("redis-server not found: the frozen-redis scenario needs it", file=sys.stderr)
            return 2
        args.duration = args.duration or 20.0
        return run_frozen(args, targets)
    args.duration = args.duration or 40.0
    stores = ["memory"]
    if not args.no_redis:
        if shutil.which("redis-server"):
            stores.append("redis")
        else:
            print("redis-server not found: the Redis scenarios are skipped", file=sys.stderr)
    print(f"on {HOST}: {args.clients} ordinary clients, {args.duration:g} s per scenario; "
          f"attack: {args.attackers} slow clients (half dripping heads, half bodies); "
          "peak memory is the serving process's (the proxy's, for the proxy)")  # fmt: skip
    print(f"\n{'server':7} {'store':7} {'attack':7} {'requests':>9} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'errors':>7} {'dropped':>8} {'peak MiB':>9}")  # fmt: skip
    for target, store, attack in (
        (t, s, a) for t in targets for s in stores for a in (0, args.attackers)
    ):
        with contextlib.ExitStack() as stack:
            redis = stack.enter_context(redis_server()) if store == "redis" else None
            start = demo_server if target == "demo" else proxy_server
            try:
                port, pid = stack.enter_context(start(redis))
            except RuntimeError as exc:
                print(f"cannot start the {target} server: {exc}", file=sys.stderr)
                return 2
            tally = asyncio.run(scenario(port, args.duration, args.clients, attack))
            peak = _peak_kib(pid)
        peak_text = f"{peak / 1024:9.1f}" if peak else f"{'n/a':>9}"
        print(f"{target:7} {store:7} {('yes' if attack else 'no'):7} "
              f"{len(tally.latencies):9d} "
              f"{_pct(tally.latencies, 50):8.2f} {_pct(tally.latencies, 99):8.2f} "
              f"{tally.errors:7d} {tally.dropped:8d} {peak_text}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
