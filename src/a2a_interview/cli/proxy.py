"""``a2a-interview proxy``: the interview in front of any A2A agent (PROFILE §9).

Exit codes: 0 after a clean shutdown; 2 for bad arguments; 3 when the proxy refuses to
start (the card does not declare the interview or declares it ``required: true``, a
committed proposal fails verification, the upstream or the rate-limit store cannot be
reached, the port cannot be bound).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from typing import Any
from urllib.parse import urlsplit

from ..errors import InterviewError
from . import EXIT_OK, EXIT_UNREACHABLE, UsageError

DESCRIPTION = """\
Put the A2A Interview Extension in front of an A2A agent that does not serve it itself.

The agent's card must declare the interview (required: false). On start the proxy fetches
the card and every standing proposal its terms entries commit to, and verifies each one
(digest, provider signature, standing-proposal shape). It refuses to start, naming the
failing entry and the reason, if anything fails: it never serves terms that did not verify.

Then it listens on --host:--port and
  - answers the five interview methods (interview/identity, /capabilities, /usage,
    /terms, /refusals) on the paths of the card's JSONRPC interfaces, and
    GET {path}/interview/{question} under its HTTP+JSON interfaces, when a request
    activates the extension (A2A-Extensions header);
  - serves the card at the card's path, the very bytes the answers come from;
  - passes every other request to the agent unchanged, streaming (SSE) included.

The card is not rewritten: run the proxy at the address the card declares and keep the
agent behind it. Every --poll seconds the proxy re-reads the card (If-None-Match); a
changed card is verified before it is served, and one that fails keeps the last good set
serving and is logged."""

EPILOG = """\
examples:
  a2a-interview proxy --upstream http://127.0.0.1:8080 --port 9000
  a2a-interview proxy --upstream http://agent.internal:8080/.well-known/agent-card.json \\
      --host 0.0.0.0 --port 443 --rate-limit '10/second;300/minute' \\
      --redis redis://cache.internal:6379/0

exit codes: 0 stopped cleanly · 2 usage error · 3 refused to start (the message says why)"""


class _Stopped(Exception):
    """SIGTERM arrived: stop as on Ctrl-C."""


def _positive_or_zero(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0")
    return value


def _positive(text: str) -> float:
    value = _positive_or_zero(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds > 0")
    return value


def _printable(text: str) -> str:
    # Paths come from the upstream card: never let them drive the terminal.
    return text.encode("unicode_escape").decode("ascii")


def _started(info: Any) -> None:
    print(f"a2a-interview proxy: serving at {info.listen}/", flush=True)
    print(f"  upstream card: {info.card_url}", flush=True)
    print(f"  card digest:   {info.card_digest} ({info.proposals} committed proposal(s), "
          "verified)", flush=True)  # fmt: skip
    for path in info.rpc_paths:
        print(f"  interview (JSON-RPC):  POST {_printable(path)}", flush=True)
    for path in info.rest_paths:
        base = path.rstrip("/")
        print(f"  interview (HTTP+JSON): GET {_printable(base)}/interview/{{question}}",
              flush=True)  # fmt: skip
    print("  everything else passes through to the upstream. Ctrl-C stops it.", flush=True)


def _run(args: argparse.Namespace) -> int:
    try:
        upstream = urlsplit(args.upstream)  # raises ValueError for a malformed IPv6 host
        upstream.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise UsageError(f"--upstream {args.upstream!r} has an unusable port or host") from None
    if upstream.scheme not in ("http", "https") or not upstream.hostname:
        raise UsageError(f"--upstream {args.upstream!r} is not an http:// or https:// URL")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a TCP port (0-65535)")
    rate_limit = None if args.rate_limit == "off" else args.rate_limit
    if rate_limit is not None:
        from limits import parse_many

        try:
            parse_many(rate_limit)
        except ValueError:
            raise UsageError(
                f"--rate-limit {args.rate_limit!r} is not a limit like 300/minute"
            ) from None
    storage = "memory://"
    if args.redis is not None:
        try:
            scheme = urlsplit(args.redis).scheme
        except ValueError:
            scheme = ""
        if scheme not in ("redis", "rediss", "redis+unix"):
            raise UsageError(f"--redis {args.redis!r} is not a redis:// or rediss:// URL")
        if rate_limit is None:
            raise UsageError("--redis needs a rate limit (not --rate-limit off)")
        storage = args.redis

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("a2a-interview proxy: %(levelname)s: %(message)s"))
    logger = logging.getLogger("a2a_interview")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    from ..server.proxy import run

    def stop(signum: int, frame: object) -> None:
        raise _Stopped

    # uvicorn stops on SIGINT/SIGTERM and then raises the signal again: either one,
    # landing here, is a clean stop.
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        run(
            args.upstream,
            port=args.port,
            host=args.host,
            rate_limit=rate_limit,
            storage=storage,
            poll=args.poll,
            timeout=args.timeout,
            access_log=args.access_log,
            started=_started,
        )
    except InterviewError as exc:
        print(f"a2a-interview proxy: refusing to start: {exc} [{exc.code}]", file=sys.stderr)
        return EXIT_UNREACHABLE
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        logger.removeHandler(handler)
    print("a2a-interview proxy: stopped", file=sys.stderr)
    return EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser(
        "proxy",
        help="serve the interview in front of an A2A agent whose card declares it",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    p.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the agent's base URL, or its card URL (a path ending in .json)",
    )
    p.add_argument(
        "--port",
        required=True,
        type=int,
        metavar="N",
        help="TCP port to listen on (0: a free one, printed at start)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1; 0.0.0.0 for all)",
    )
    p.add_argument(
        "--rate-limit",
        default="300/minute",
        metavar="LIMIT",
        help="interview calls allowed per client address, in the limits "
        "notation ('10/second;300/minute'), or 'off' (default: 300/minute); "
        "other traffic is never counted",
    )
    p.add_argument(
        "--redis",
        metavar="URL",
        help="share the rate-limit budget between replicas through this Redis "
        "(redis://host:6379/0); default: in memory, per process",
    )
    p.add_argument(
        "--poll",
        type=_positive_or_zero,
        default=30.0,
        metavar="S",
        help="re-read the upstream card every S seconds (default: 30; 0: never)",
    )
    p.add_argument(
        "--timeout",
        type=_positive,
        default=10.0,
        metavar="S",
        help="the longest fetch of the card or one proposal (default: 10)",
    )
    p.add_argument(
        "--access-log", action="store_true", help="log every request (costs about 50 µs a request)"
    )
    p.set_defaults(run=_run)
