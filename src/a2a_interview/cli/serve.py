"""``a2a-interview demo``: the bundled Stonework agent (PROFILE §9).

- ``demo serve [--port N] [--host H]`` serves it as a real ``a2a-sdk`` agent until
  interrupted (:mod:`a2a_interview.server.demo`).
- ``demo`` alone starts it in process, verifies it and prints the report
  (:func:`run_demo`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from ..spec import DEFAULT_RATE_LIMIT
from . import redis_storage, serve_until_stopped
from .usage import EXIT_UNREACHABLE, UsageError


def run_demo(args: argparse.Namespace) -> int:
    """``a2a-interview demo``: serve the reference agent in process, verify it, report.

    The agent is the real ``a2a-sdk`` app of ``demo serve`` on a free loopback port; the
    verifier is the real one of ``verify``, over HTTP. The run is recorded as ``self``:
    this tool interviewing the agent it serves is a claim, never evidence (interview §8).
    """
    import anyio
    import uvicorn

    from ..net.sockets import bind, socket_origin
    from ..report import render_report
    from ..server import listen
    from ..server.demo import BOUNDS, build_app
    from ..server.ratelimit import RateLimiter
    from ..verifier import verify
    from .console import print_report
    from .verify import OUTCOME_EXIT

    try:
        sock = bind("127.0.0.1", 0)
    except OSError as exc:
        print(f"a2a-interview: error: cannot bind a loopback port: {exc.strerror}",
              file=sys.stderr)  # fmt: skip
        return EXIT_UNREACHABLE
    origin = socket_origin(sock)
    # The SDK logs every JSON-RPC error at WARNING; the verifier's inactive probe draws a
    # -32601 on purpose, and the report, not a stray log line, is what this prints.
    logging.getLogger("a2a.server.routes.jsonrpc_dispatcher").setLevel(logging.ERROR)
    app = build_app(origin, limiter=RateLimiter())
    config = listen.config(app, BOUNDS, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    print(f"Serving the Stonework demo agent (a2a-sdk) at {origin}/ and interviewing it...",
          file=sys.stderr)  # fmt: skip

    async def main() -> Any:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            while not server.started:
                await anyio.sleep(0.01)
            try:
                return await verify(origin + "/", party="self", name="a2a-interview demo")
            finally:
                server.should_exit = True

    try:
        record = anyio.run(main)
    finally:
        sock.close()
    if args.json:
        document = record.to_json()
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        print_report(render_report(record))
    return OUTCOME_EXIT[str(record.outcome)]


def _gone(record: logging.LogRecord) -> bool:
    """Keep a log record unless it is the a2a-sdk's traceback for a client that left
    mid-body: the listening server ends such requests itself (a 408, 413 or 431 over a
    bound, PROFILE §3.9), and the operator sees no traceback for them."""
    exc = record.exc_info[1] if record.exc_info else None
    return type(exc).__name__ != "ClientDisconnect"


def _serve(args: argparse.Namespace) -> int:
    from ..server.demo import serve
    from ..server.listen import bounds_from_args
    from ..server.ratelimit import RateLimiter

    storage = redis_storage(args.redis, limited=args.rate_limit != "off")
    try:
        if args.rate_limit is None:
            limiter: RateLimiter | None = RateLimiter(storage=storage)
        else:
            limiter = None if args.rate_limit == "off" else RateLimiter(args.rate_limit, storage)
    except ValueError:
        raise UsageError(
            f"--rate-limit {args.rate_limit!r} is not a limit like 300/minute"
        ) from None

    def ready(origin: str) -> None:
        print(f"Stonework demo agent (a2a-sdk) serving at {origin}/", flush=True)
        print(f"  card:  {origin}/.well-known/agent-card.json", flush=True)
        print(f"  verify it: a2a-interview verify {origin}/", flush=True)
        print("  TEST KEYS ONLY: nothing this agent signs is to be trusted. Ctrl-C stops it.",
              flush=True)  # fmt: skip

    logging.getLogger("a2a.server.routes.jsonrpc_dispatcher").addFilter(_gone)
    return serve_until_stopped(
        args.host, args.port,
        lambda: serve(args.host, args.port, limiter=limiter, on_ready=ready,
                      bounds=bounds_from_args(args)),
    )  # fmt: skip


def register(sub: Any) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    demo = sub.add_parser(
        "demo",
        help="the bundled Stonework reference agent: serve it, or serve and verify it",
        formatter_class=raw,
        description="Without ACTION: start the Stonework reference agent in process, verify "
        "it and print the report.\nWith `serve`: serve it until interrupted.",
        epilog="examples:\n  a2a-interview demo\n  a2a-interview demo serve --port 8000",
    )
    demo.add_argument("--json", action="store_true", help="print the result record as JSON")
    demo.set_defaults(run=run_demo)
    actions = demo.add_subparsers(dest="demo_command", metavar="ACTION", parser_class=type(demo))
    p = actions.add_parser(
        "serve",
        help="serve the Stonework agent (a2a-sdk) on this machine",
        formatter_class=raw,
        description="Serve Stonework as a real a2a-sdk agent: a trivial executor, the card "
        "signed with its TEST-ONLY key (JWKS at a same-origin jku), the two standing "
        "proposals on the same origin, JSON-RPC and HTTP+JSON with the interview.",
        epilog="example:\n  a2a-interview demo serve --port 8000\n"
        "  a2a-interview verify http://127.0.0.1:8000/",
    )
    p.add_argument("--port", type=int, default=0, help="TCP port (default: 0, a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument(
        "--rate-limit",
        metavar="LIMIT",
        help="interview calls allowed per client, e.g. '10/second;300/minute', or 'off' "
        f"(default: the server's, {DEFAULT_RATE_LIMIT})",
    )
    p.add_argument(
        "--redis",
        metavar="URL",
        help="share the rate limit through Redis (redis://host:port/db) instead of memory",
    )
    from ..server.demo import BOUNDS
    from ..server.listen import add_arguments

    add_arguments(p, max_body=BOUNDS.max_body)
    p.set_defaults(run=_serve)
