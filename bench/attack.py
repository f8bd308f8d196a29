"""Attack benchmark: ordinary clients through the proxy, with and without attackers.

    .venv/bin/python bench/attack.py                          # slow attackers, ~1 minute
    .venv/bin/python bench/attack.py --duration 5 --attackers 100    # a quick look
    .venv/bin/python bench/attack.py --scenario trailers      # 600 MiB of trailers
    .venv/bin/python bench/attack.py --scenario hog           # one client, 1,001 sockets
    .venv/bin/python bench/attack.py --scenario slow-readers  # 3 waves of 256 slow readers

Everything is on 127.0.0.1 and stops by itself. Three processes: a real a2a-sdk agent
(the SDK's own card and JSON-RPC routes, an echo executor, the Stonework card declaring
the interview and serving its two proposals), ``a2a-interview proxy`` in front of it
(its own process, as a user runs it, rate limit off), and this script, which runs the
load and the attackers in one event loop.

Two phases of ``--duration`` seconds each (at most ``--max-requests`` requests each):

1. ``--clients`` ordinary clients, each on its own keep-alive connection, sending
   ``SendMessage`` (A2A-Version 1.0) through the proxy back to back;
2. the same while ``--attackers`` slow clients hold connections to the proxy: half send
   a request body one byte every ``--drip`` seconds (body drip), half send one header
   line every ``--drip`` seconds and never finish their headers (header drip). An
   attacker whose connection the proxy closes reconnects, until the phase ends.

Printed per phase: ordinary requests done, their p50 and p99 latency, errors (any status
but 200, any transport error); for the attack phase, how many attacker connections the
proxy closed; at the end, the proxy process's peak resident memory (``VmHWM``).

Each attacker connects from its own loopback address (127.0.1.1, 127.0.1.2, ...: all of
127/8 is this machine), as distinct clients would, so the per-client share of connections
(``--max-client-connections``) does not apply to them; ordinary clients use 127.0.0.1.

Goal: with 300 attackers, ordinary p99 < 1 s, no errors, proxy peak < 256 MB.

``--scenario trailers``: chunked requests whose trailer section
repeats ``X-T: <1000 bytes>``, ``--flood-mib`` MiB in all (600), sent over 4 connections
at a time (reconnecting as the server closes them), at the proxy and at ``demo serve``;
printed: each server's resident memory idle and its peak after. Goal: peak within 20 MB of
idle.

``--scenario hog``: one client (127.0.0.2) holds ``--hog`` sockets
(1,001) sending partial request heads, each reconnecting ``--hog-retry`` seconds after the
server closes it (1 s, the ``Retry-After`` of the 503; 0.05 for a client that ignores it),
in a process of its own, while the ordinary clients run for ``--duration``. Goal:
ordinary p99 < 1 s and no 503 for them. ``--proxy-option=--max-client-connections=0``
shows the proxy without a per-client share (the old behaviour).

``--large-bodies N`` adds a phase: ``N`` clients send activated
``interview/usage`` calls padded to 10 MiB (just under the proxy's ``--max-body``) back to
back, while one ordinary client GETs a document that passes through the proxy to the
agent; printed: the GETs' p50 and p99 beside the same GETs without those clients.
Goal: with 2 such clients, the pass-through GET's p99 under 100 ms.

``--scenario slow-readers``: three waves (``--waves``) of ``--readers`` (256) clients
from 9 addresses (127.0.1.1-9), each with a 4 KiB receive buffer, reading for
``--duration`` seconds then leaving: first on a 64 MiB response (one byte a second),
then on an endless event stream (4 KB every 10 ms), while the ordinary clients run.
Printed after each wave: the proxy's resident memory with the readers on and once they
left, beside its idle figure, and the ordinary requests of the wave. Goal: within 100 MB
of idle, ordinary p99 < 1 s, no 503.

Not a test: nothing here asserts a time; it prints figures and exits 0 (1 when the
servers do not start or answer wrongly).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

RPC = "/a2a/jsonrpc"
BIG_PATH, EVENTS_PATH = "/bench/big", "/bench/events"  # slow-readers: what they read
BIG = 64 * 1024 * 1024
CARD = "/.well-known/agent-card.json"
ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the agent (a child)


def agent_main(port: int, public: str) -> None:
    """Serve the a2a-sdk agent on ``port`` until killed, its card naming ``public`` (the
    proxy) for its interfaces, as deployed."""
    import uvicorn
    from a2a.helpers import new_text_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCard, Role
    from google.protobuf.json_format import ParseDict
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    from a2a_interview import reference

    origin = f"http://127.0.0.1:{port}"

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            text = context.message.parts[0].text if context.message else ""
            await event_queue.enqueue_event(
                new_text_message(
                    "echo: " + text, role=Role.ROLE_AGENT, context_id=context.context_id
                )
            )

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            return None

    document = reference.unsigned_card(origin)
    for interface in document["supportedInterfaces"]:
        interface["url"] = interface["url"].replace(origin, public)
    card = ParseDict(document, AgentCard())
    proposals = reference.proposals(origin)
    handler = DefaultRequestHandler(
        agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card
    )

    async def terms(request: Request) -> Response:
        body = proposals.get(origin + request.url.path)
        return Response(body or b"", status_code=200 if body else 404,
                        media_type="application/json")  # fmt: skip

    async def big_body() -> Any:
        piece = b"x" * 65536
        for _ in range(BIG // len(piece)):
            yield piece

    async def endless_events() -> Any:
        event = b"data: " + b"y" * (256 * 1024 - 8) + b"\n\n"
        while True:
            yield event
            await asyncio.sleep(0.2)

    async def big(request: Request) -> Response:
        return StreamingResponse(big_body(), headers={"content-length": str(BIG)})

    async def events(request: Request) -> Response:
        return StreamingResponse(endless_events(), media_type="text/event-stream")

    app = Starlette(routes=[*create_agent_card_routes(card), Route("/terms/{name}", terms),
                            Route(BIG_PATH, big), Route(EVENTS_PATH, events),
                            *create_jsonrpc_routes(handler, RPC)])  # fmt: skip
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


# ---------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a server exited at start (status {process.returncode})")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit("a server did not start in time")


@contextlib.contextmanager
def started(args: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        wait_listening(port, process, time.monotonic() + 30)
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def peak_rss_mb(pid: int, field: str = "VmHWM") -> float:
    """The process's peak resident set size (Linux ``VmHWM``; ``VmRSS``: the current
    one), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak(pid: int) -> bool:
    """Reset the process's ``VmHWM`` to its current RSS (Linux: write 5 to clear_refs)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


# ---------------------------------------------------------------- load and attack


@dataclass
class Phase:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    unavailable: int = 0  # of the errors: 503s
    closed_attackers: int = 0


def send_body(i: int) -> bytes:
    return json.dumps({
        "jsonrpc": "2.0", "id": i, "method": "SendMessage",
        "params": {"message": {"messageId": f"m-{i}", "contextId": "c-1", "role": "ROLE_USER",
                               "parts": [{"text": "hello"}]}},
    }).encode()  # fmt: skip


async def ordinary(origin: str, phase: Phase, stop: float, budget: list[int]) -> None:
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=origin, timeout=30) as http:
        i = 0
        while time.monotonic() < stop and budget[0] > 0:
            budget[0] -= 1
            i += 1
            began = time.perf_counter()
            try:
                response = await http.post(RPC, content=send_body(i), headers=headers)
                ok = response.status_code == 200 and b"echo: hello" in response.content
                phase.unavailable += response.status_code == 503
            except httpx.HTTPError:
                ok = False
            phase.latencies.append(time.perf_counter() - began)
            if not ok:
                phase.errors += 1


def own_address(i: int) -> str:
    """Attacker ``i``'s own loopback address (127.0.1.1 upward)."""
    return f"127.0.{1 + i // 250}.{1 + i % 250}"


async def attacker(
    port: int, kind: str, drip: float, phase: Phase, stop: float, source: str = "127.0.0.1"
) -> None:
    """Hold a connection to the proxy open as slowly as it allows, until ``stop``."""
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(source, 0)
            )
        except OSError:
            await asyncio.sleep(drip)
            continue
        try:
            if kind == "body":
                writer.write(f"POST {RPC} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                             "Content-Type: application/json\r\n"
                             "Content-Length: 100000\r\n\r\n".encode())  # fmt: skip
            else:
                writer.write(f"POST {RPC} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
            await writer.drain()
            n = 0
            while time.monotonic() < stop:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(drip):
                        await reader.read(65536)  # an answer or EOF: the proxy ended it
                        raise ConnectionResetError
                n += 1
                writer.write(b"x" if kind == "body" else f"X-Drip-{n}: {n}\r\n".encode())
                await writer.drain()
        except (ConnectionError, OSError):
            phase.closed_attackers += 1
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def run_phase(origin: str, port: int, args: argparse.Namespace, attackers: int) -> Phase:
    phase = Phase()
    settle = 2.0 if attackers else 0.0
    stop = time.monotonic() + settle + args.duration
    tasks = [
        asyncio.ensure_future(attacker(port, "body" if i % 2 == 0 else "header", args.drip,
                                       phase, stop, own_address(i)))
        for i in range(attackers)
    ]  # fmt: skip
    await asyncio.sleep(settle)  # the attackers connect first
    budget = [args.max_requests]
    await asyncio.gather(*(ordinary(origin, phase, stop, budget) for _ in range(args.clients)))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return phase


# ---------------------------------------------------------------- large bodies


LARGE_BODY_BYTES = 10 * 1024 * 1024 - 4096  # under the proxy's default --max-body


def large_body() -> bytes:
    """An activated interview call padded to about 10 MiB with many small objects, its
    method last: the costliest body to judge (a parser builds every object; a scan for
    the namespace reads to the end)."""
    head = b'{"jsonrpc":"2.0","id":1,"params":{"skill":"x","pad":['
    tail = b'{}]},"method":"interview/usage"}'
    item = b'{"a":[1,"b"]},'
    count = (LARGE_BODY_BYTES - len(head) - len(tail)) // len(item)
    return head + item * count + tail


async def large_body_sender(origin: str, body: bytes, stop: float, sent: list[int]) -> None:
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json",
               "A2A-Extensions": "https://agentsow.com/extensions/a2a-interview/v1"}  # fmt: skip
    async with httpx.AsyncClient(base_url=origin, timeout=60) as http:
        while time.monotonic() < stop:
            with contextlib.suppress(httpx.HTTPError):
                await http.post(RPC, content=body, headers=headers)
                sent[0] += 1


async def passthrough_getter(origin: str, path: str, phase: Phase, stop: float) -> None:
    async with httpx.AsyncClient(base_url=origin, timeout=30) as http:
        while time.monotonic() < stop:
            began = time.perf_counter()
            try:
                ok = (await http.get(path)).status_code == 200
            except httpx.HTTPError:
                ok = False
            phase.latencies.append(time.perf_counter() - began)
            if not ok:
                phase.errors += 1
            await asyncio.sleep(0.01)


def large_body_senders_main(origin: str, senders: int, seconds: float) -> None:
    """The 10 MiB clients, in a child process of their own (so that their sending does
    not slow the measuring client); prints how many bodies were sent."""
    body = large_body()
    sent = [0]
    stop = time.monotonic() + seconds

    async def main() -> None:
        await asyncio.gather(*(large_body_sender(origin, body, stop, sent)
                               for _ in range(senders)))  # fmt: skip

    asyncio.run(main())
    print(sent[0])


def run_large_body_phase(origin: str, path: str, duration: float, senders: int) -> Phase:
    """One ordinary pass-through GETter beside ``senders`` clients of 10 MiB bodies."""
    phase = Phase()
    child = None
    if senders:
        child = subprocess.Popen(
            [sys.executable, __file__, "--large-senders", str(senders), "--public", origin,
             "--duration", str(duration + 2)],
            cwd=ROOT, stdout=subprocess.PIPE,
        )  # fmt: skip
        time.sleep(1.5)  # the senders start first
    asyncio.run(passthrough_getter(origin, path, phase, time.monotonic() + duration))
    if child is not None:
        out, _ = child.communicate(timeout=60)
        phase.closed_attackers = int(out.strip() or 0)  # here: large bodies sent
    return phase


def report(name: str, phase: Phase) -> None:
    lat = sorted(phase.latencies)
    if not lat:
        print(f"{name}: no requests completed")
        return
    p50 = statistics.median(lat)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    print(f"{name}: {len(lat)} requests, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
          f"max {lat[-1] * 1000:.1f} ms, errors {phase.errors} ({phase.unavailable} were 503)"
          + (f", attacker connections closed by the proxy {phase.closed_attackers}"
             if phase.closed_attackers else ""))  # fmt: skip


async def trailer_flood(port: int, target: str, total: int, stop: float) -> tuple[int, int]:
    """Send ``total`` bytes of trailer fields to ``port`` over 4 connections at a time,
    reconnecting as the server closes them; (bytes the kernel took, connections)."""
    line = b"X-T: " + b"a" * 1000 + b"\r\n"
    block = line * 64  # 64 KB a write
    head = (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            "2\r\n{}\r\n0\r\n").encode()  # fmt: skip
    sent = [0, 0]

    async def one() -> None:
        while sent[0] < total and time.monotonic() < stop:
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.01)
                continue
            sent[1] += 1
            try:
                writer.write(head)
                while sent[0] < total and time.monotonic() < stop:
                    writer.write(block)
                    await writer.drain()
                    sent[0] += len(block)
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    await asyncio.gather(*(one() for _ in range(4)))
    return sent[0], sent[1]


def flood_report(name: str, pid: int, port: int, target: str, args: argparse.Namespace) -> None:
    """Idle memory, then the trailer flood, then the peak."""
    for _ in range(20):  # warm up: imports and first-request caches
        httpx.get(f"http://127.0.0.1:{port}{CARD}", timeout=10)
    time.sleep(0.5)
    idle = peak_rss_mb(pid, "VmRSS")
    reset = reset_peak(pid)
    began = time.monotonic()
    total = int(args.flood_mib * 1024 * 1024)
    sent, conns = asyncio.run(trailer_flood(port, target, total, began + args.flood_time))
    took = time.monotonic() - began
    peak = peak_rss_mb(pid)
    after = httpx.get(f"http://127.0.0.1:{port}{CARD}", timeout=10).status_code
    print(f"{name}: {sent / 1048576:.0f} MiB of trailers sent over {conns} connections in "
          f"{took:.1f} s; memory idle {idle:.1f} MB, peak {peak:.1f} MB "
          f"({peak - idle:+.1f} MB{'' if reset else ', peak since start'}); "
          f"the card after: {after}")  # fmt: skip


def run_trailers(args: argparse.Namespace, proxy_port: int, proxied: subprocess.Popen[bytes],
                 demo: list[str], demo_port: int) -> None:  # fmt: skip
    flood_report("proxy", proxied.pid, proxy_port, RPC, args)
    with started(demo, demo_port) as served:
        flood_report("demo serve", served.pid, demo_port, RPC, args)


async def hog(port: int, sockets: int, stop: float, closed: list[int], retry: float) -> None:
    """One client (127.0.0.2) holding ``sockets`` connections with partial heads,
    reconnecting each ``retry`` seconds after the server closes it."""
    head = f"POST {RPC} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Partial: ".encode()

    async def one() -> None:
        while time.monotonic() < stop:
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", port, local_addr=("127.0.0.2", 0)
                )
            except OSError:
                await asyncio.sleep(0.05)
                continue
            try:
                writer.write(head)
                await writer.drain()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.0, stop - time.monotonic())):
                        await reader.read()  # a 503, a 408, or EOF: the server ended it
                closed[0] += 1
            except (ConnectionError, OSError):
                closed[0] += 1
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            await asyncio.sleep(retry)

    await asyncio.gather(*(one() for _ in range(sockets)))


def hog_main(port: int, sockets: int, seconds: float, retry: float, closed: Any) -> None:
    """The hog in a process of its own, so that its event loop does not slow the
    ordinary clients' one."""
    counted = [0]
    asyncio.run(hog(port, sockets, time.monotonic() + seconds, counted, retry))
    closed.value = counted[0]


async def hog_phase(origin: str, port: int, args: argparse.Namespace) -> Phase:
    phase = Phase()
    closed = multiprocessing.Value("q", 0)
    stop = time.monotonic() + 3.0 + args.duration
    process = multiprocessing.Process(
        target=hog_main, args=(port, args.hog, 3.0 + args.duration, args.hog_retry, closed)
    )
    process.start()
    await asyncio.sleep(3.0)  # the hog connects first
    budget = [args.max_requests]
    await asyncio.gather(*(ordinary(origin, phase, stop, budget) for _ in range(args.clients)))
    process.join(30)
    phase.closed_attackers = int(closed.value)
    return phase


# ---------------------------------------------------------------- slow readers


async def slow_reader(port: int, i: int, path: str, stop: float, count: list[int]) -> None:
    """Ask for ``path`` from 127.0.1.(1 + i % 9) with a 4 KiB receive buffer, then read
    one byte a second (the 64 MiB body) or 4 KB every 10 ms (the event stream), until
    ``stop``; then leave."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    size, pause = (1, 1.0) if path == BIG_PATH else (4096, 0.01)
    try:
        sock.bind((f"127.0.1.{1 + i % 9}", 0))
        await loop.sock_connect(sock, ("127.0.0.1", port))
        await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        count[0] += 1
        while time.monotonic() < stop:
            async with asyncio.timeout(max(0.01, stop - time.monotonic())):
                if not await loop.sock_recv(sock, size):
                    break
            await asyncio.sleep(pause)
    except (OSError, TimeoutError):
        pass
    finally:
        sock.close()


async def slow_readers(port: int, path: str, readers: int, stop: float, count: list[int]) -> None:
    await asyncio.gather(*(slow_reader(port, i, path, stop, count) for i in range(readers)))


def slow_readers_main(port: int, path: str, readers: int, seconds: float, connected: Any) -> None:
    """The readers in a process of their own: their reads would otherwise delay the
    ordinary clients' event loop, and be measured as the proxy's latency."""
    count = [0]
    asyncio.run(slow_readers(port, path, readers, time.monotonic() + seconds, count))
    connected.value = count[0]


async def reader_wave(
    origin: str, port: int, args: argparse.Namespace, path: str
) -> tuple[Phase, int]:
    phase = Phase()
    connected = multiprocessing.Value("q", 0)
    process = multiprocessing.Process(
        target=slow_readers_main, args=(port, path, args.readers, args.duration, connected)
    )
    process.start()
    stop = time.monotonic() + args.duration
    await asyncio.sleep(1.0)  # the readers ask first
    budget = [args.max_requests]
    await asyncio.gather(*(ordinary(origin, phase, stop, budget) for _ in range(args.clients)))
    process.join(30)
    return phase, int(connected.value)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux ``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_slow_readers(
    origin: str, port: int, pid: int, agent_pid: int, args: argparse.Namespace
) -> None:
    time.sleep(1.0)
    idle = peak_rss_mb(pid, "VmRSS")
    print(f"proxy pid {pid}, idle RSS {idle:.1f} MB; {args.waves} waves of {args.readers} "
          f"slow readers from 9 addresses, {args.duration:g} s each; "
          f"{args.clients} ordinary clients")  # fmt: skip
    for path, what in ((BIG_PATH, "a 64 MiB response"), (EVENTS_PATH, "an endless event stream")):
        for wave in range(1, args.waves + 1):
            reset_peak(pid)
            cpu = cpu_seconds(pid), cpu_seconds(agent_pid), os.getloadavg()[0]
            phase, connected = asyncio.run(reader_wave(origin, port, args, path))
            during = peak_rss_mb(pid)
            proxy_cpu, agent_cpu = cpu_seconds(pid) - cpu[0], cpu_seconds(agent_pid) - cpu[1]
            time.sleep(3.0)  # the streams close
            after = peak_rss_mb(pid, "VmRSS")
            print(f"{what}, wave {wave}: peak RSS {during:.1f} MB (idle +{during - idle:.1f}), "
                  f"{after:.1f} MB after they left (idle +{after - idle:.1f}); "
                  f"{connected} readers connected")  # fmt: skip
            print(f"  CPU seconds in the wave: proxy {proxy_cpu:.1f}, agent {agent_cpu:.1f}; "
                  f"machine load average {cpu[2]:.1f} before it")  # fmt: skip
            report("  ordinary requests meanwhile", phase)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per phase")
    parser.add_argument("--clients", type=int, default=4, help="ordinary clients")
    parser.add_argument("--attackers", type=int, default=300, help="slow attackers")
    parser.add_argument("--drip", type=float, default=5.0, help="seconds between drips")
    parser.add_argument("--max-requests", type=int, default=50_000,
                        help="ordinary requests per phase, at most")  # fmt: skip
    parser.add_argument(
        "--scenario",
        choices=["slow", "trailers", "hog", "slow-readers"],
        default="slow",
        help="slow attackers (default), a trailer flood, a connection hog, or slow readers",
    )
    parser.add_argument(
        "--readers", type=int, default=256, help="slow-readers: readers a wave (default 256)"
    )
    parser.add_argument("--waves", type=int, default=3, help="slow-readers: waves (default 3)")
    parser.add_argument(
        "--flood-mib",
        type=float,
        default=600.0,
        help="trailers: MiB of trailer fields to send (default 600)",
    )
    parser.add_argument(
        "--flood-time",
        type=float,
        default=120.0,
        help="trailers: seconds at most per server (default 120)",
    )
    parser.add_argument(
        "--hog", type=int, default=1001, help="hog: sockets the one client holds (default 1001)"
    )
    parser.add_argument(
        "--hog-retry",
        type=float,
        default=1.0,
        help="hog: seconds before a closed socket reconnects (default 1, the Retry-After "
        "of the 503)",
    )
    parser.add_argument(
        "--proxy-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="an option passed on to `a2a-interview proxy` (repeatable)",
    )
    parser.add_argument(
        "--large-bodies",
        type=int,
        default=0,
        metavar="N",
        help="clients sending 10 MiB activated bodies, 0: skip",
    )
    parser.add_argument("--large-senders", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--agent", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--public", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.agent:
        agent_main(args.agent, args.public)
        return 0
    if args.large_senders:
        large_body_senders_main(args.public, args.large_senders, args.duration)
        return 0
    if not (0 < args.duration <= 600 and 0 <= args.attackers <= 2000 and args.clients > 0):
        parser.error("--duration 0-600 s, --attackers 0-2000, --clients > 0")

    agent_port, proxy_port = free_port(), free_port()
    origin = f"http://127.0.0.1:{proxy_port}"
    agent = [sys.executable, __file__, "--agent", str(agent_port), "--public", origin]
    proxy = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()", "proxy",
             "--upstream", f"http://127.0.0.1:{agent_port}", "--port", str(proxy_port),
             "--poll", "0", "--rate-limit", "off", *args.proxy_option]  # fmt: skip
    with started(agent, agent_port) as agented, started(proxy, proxy_port) as proxied:
        check = httpx.post(origin + RPC, content=send_body(0),
                           headers={"A2A-Version": "1.0"}, timeout=10)  # fmt: skip
        if b"echo: hello" not in check.content:
            print("the proxy did not pass SendMessage through", file=sys.stderr)
            return 1
        if args.scenario == "trailers":
            demo_port = free_port()
            demo = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()",
                    "demo", "serve", "--port", str(demo_port), "--rate-limit", "off"]  # fmt: skip
            run_trailers(args, proxy_port, proxied, demo, demo_port)
            return 0
        if args.scenario == "slow-readers":
            run_slow_readers(origin, proxy_port, proxied.pid, agented.pid, args)
            return 0
        if args.scenario == "hog":
            print(f"proxy pid {proxied.pid}; {args.clients} ordinary clients for "
                  f"{args.duration:g} s; one client holding {args.hog} sockets")  # fmt: skip
            calm = asyncio.run(run_phase(origin, proxy_port, args, 0))
            report("without the hog", calm)
            hogged = asyncio.run(hog_phase(origin, proxy_port, args))
            report(f"with one client holding {args.hog} sockets", hogged)
            return 0
        print(f"proxy pid {proxied.pid}; {args.clients} ordinary clients, {args.duration:g} s "
              f"per phase; {args.attackers} attackers dripping every {args.drip:g} s")  # fmt: skip
        calm = asyncio.run(run_phase(origin, proxy_port, args, 0))
        report("without attack", calm)
        rss_calm = peak_rss_mb(proxied.pid)
        attacked = asyncio.run(run_phase(origin, proxy_port, args, args.attackers))
        report(f"with {args.attackers} slow attackers", attacked)
        rss = peak_rss_mb(proxied.pid)
        print(f"proxy peak RSS: {rss_calm:.1f} MB after the calm phase, {rss:.1f} MB at the end")
        if args.large_bodies:
            large_body_report(origin, args)
    return 0


def large_body_report(origin: str, args: argparse.Namespace) -> None:
    from urllib.parse import urlsplit

    from a2a_interview import reference

    path = urlsplit(next(iter(reference.proposals(origin)))).path  # passes through
    alone = run_large_body_phase(origin, path, args.duration, 0)
    report("pass-through GET alone", alone)
    loaded = run_large_body_phase(origin, path, args.duration, args.large_bodies)
    report(
        f"pass-through GET beside {args.large_bodies} clients of 10 MiB activated bodies",
        Phase(loaded.latencies, loaded.errors),
    )
    print(f"10 MiB activated bodies sent: {loaded.closed_attackers}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
