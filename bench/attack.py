"""Attack benchmark: ordinary clients through the proxy, with and without slow attackers.

    .venv/bin/python bench/attack.py                          # ~1 minute
    .venv/bin/python bench/attack.py --duration 5 --attackers 100    # a quick look

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

Goal (issue 8): with 300 attackers, ordinary p99 < 1 s, no errors, proxy peak < 256 MB.

``--large-bodies N`` (issue 14 finding 9) adds a phase: ``N`` clients send activated
``interview/usage`` calls padded to 10 MiB (just under the proxy's ``--max-body``) back to
back, while one ordinary client GETs a document that passes through the proxy to the
agent; printed: the GETs' p50 and p99 beside the same GETs without those clients.
Goal: with 2 such clients, the pass-through GET's p99 under 100 ms.
Not a test: nothing here asserts a time; it prints figures and exits 0 (1 when the
servers do not start or answer wrongly).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
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

import httpx

RPC = "/a2a/jsonrpc"
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
    from starlette.responses import Response
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

    app = Starlette(routes=[*create_agent_card_routes(card), Route("/terms/{name}", terms),
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


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set size (Linux ``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------- load and attack


@dataclass
class Phase:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
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
            except httpx.HTTPError:
                ok = False
            phase.latencies.append(time.perf_counter() - began)
            if not ok:
                phase.errors += 1


async def attacker(port: int, kind: str, drip: float, phase: Phase, stop: float) -> None:
    """Hold a connection to the proxy open as slowly as it allows, until ``stop``."""
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
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
                                       phase, stop))
        for i in range(attackers)
    ]  # fmt: skip
    await asyncio.sleep(settle)  # the attackers connect first
    budget = [args.max_requests]
    await asyncio.gather(*(ordinary(origin, phase, stop, budget) for _ in range(args.clients)))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return phase


# ---------------------------------------------------------------- large bodies (issue 14)


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
          f"max {lat[-1] * 1000:.1f} ms, errors {phase.errors}"
          + (f", attacker connections closed by the proxy {phase.closed_attackers}"
             if phase.closed_attackers else ""))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per phase")
    parser.add_argument("--clients", type=int, default=4, help="ordinary clients")
    parser.add_argument("--attackers", type=int, default=300, help="slow attackers")
    parser.add_argument("--drip", type=float, default=5.0, help="seconds between drips")
    parser.add_argument("--max-requests", type=int, default=50_000,
                        help="ordinary requests per phase, at most")  # fmt: skip
    parser.add_argument(
        "--large-bodies",
        type=int,
        default=0,
        metavar="N",
        help="clients sending 10 MiB activated bodies (issue 14), 0: skip",
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
             "--poll", "0", "--rate-limit", "off"]  # fmt: skip
    with started(agent, agent_port), started(proxy, proxy_port) as proxied:
        check = httpx.post(origin + RPC, content=send_body(0),
                           headers={"A2A-Version": "1.0"}, timeout=10)  # fmt: skip
        if b"echo: hello" not in check.content:
            print("the proxy did not pass SendMessage through", file=sys.stderr)
            return 1
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
