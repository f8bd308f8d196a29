"""``a2a-interview proxy``: the interview in front of any A2A agent (PROFILE §9).

Exit codes: 0 after a clean shutdown; 2 for bad arguments; 3 when the proxy refuses to
start (the card does not declare the interview or declares it ``required: true``, has
no JSONRPC or HTTP+JSON interface to serve it on (``no_interface``), a committed proposal
fails verification, the upstream or the rate-limit store cannot be
reached, the port cannot be bound).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import textwrap
from typing import Any
from urllib.parse import urlsplit

from ..errors import InterviewError
from ..spec import DEFAULT_RATE_LIMIT, METHODS
from . import redis_storage
from .files import read_input
from .usage import EXIT_OK, EXIT_UNREACHABLE, UsageError

DESCRIPTION = """\
Put the A2A Interview Extension in front of an A2A agent that does not serve it itself.

On start the proxy fetches the agent's card and every standing proposal its terms entries
commit to, and verifies each one (digest, provider signature, standing-proposal shape). It
refuses to start, naming the failing entry, its URL and the cause, if anything fails: it
never serves terms that did not verify.

The card must declare the interview (not required: true), or run with --declare: the card is
then served with the declaration added and its interface URLs (and proposal URLs on the
agent's own origin) moved to --public-url. A signed card so changed is re-signed with
--card-key and --kid, or the proxy refuses to start; the re-signed card names in its jku
the proxy's own JWKS (served at /.well-known/a2a-interview-proxy-jwks.json), or --jku.
A card whose signatures list is empty is unsigned. Without --declare, interfaces that do
not point at --public-url are a warning: card-driven clients would bypass the proxy.

With --declare the extended card (GetExtendedAgentCard, GET .../extendedAgentCard, and
their 0.3 spellings) is served as the public card is. A card with no JSONRPC or HTTP+JSON
interface (gRPC only) is refused: the interview has nowhere to be served.

Proposals whose URL is on --public-url are read from the agent at the same path (what a
client gets through the proxy); --proposal URL=FILE uses and serves a local copy instead.

Then it listens on --host:--port and
  - reads each request whole (--max-body, --body-timeout) before it talks to the agent;
  - answers the interview methods,
{methods},
    on the paths of the card's JSONRPC interfaces, and
    GET {path}/interview/{question} under its HTTP+JSON interfaces, when a request
    activates the extension (A2A-Extensions header), in every spelling of those paths;
  - serves the card at the card's path as the agent serves it (its Cache-Control, ETag,
    Vary ... unchanged unless --card-cache-control), only ever as bytes that verified,
    each A2A-Version variant verified on its own;
  - passes every other request to the agent byte for byte, streaming (SSE) included,
    less the hop-by-hop fields and, unless --forwarded-allow-ips trusts the client's
    address, the client's X-Forwarded-*, Forwarded and X-Real-IP; it adds its own
    X-Forwarded-For and X-Forwarded-Proto;
  - refuses protocol upgrades (WebSocket, h2c) with 400, bounds every header section
    (trailers included; trailer fields are never passed on) and keeps one client to its
    share of the connections (--max-client-connections) and of the connections to the
    agent (--upstream-client-connections);
  - reads a response from the agent only as fast as the client takes it (64 KiB ahead
    at most), and disconnects a client that leaves a response untaken for
    --write-timeout seconds, which closes its stream from the agent.

Every --poll seconds, and on every card request, the proxy re-reads the card; a changed
card is verified before it is served, and one that fails keeps the last good set
serving and is logged.""".replace(
    "{methods}",
    textwrap.fill(", ".join(METHODS), 88, initial_indent="    ", subsequent_indent="    "),
)

EPILOG = """\
examples:
  a2a-interview proxy --upstream http://127.0.0.1:8080 --port 9000
  a2a-interview proxy --upstream http://agent.internal:8080 --host 0.0.0.0 --port 443 \\
      --public-url https://agent.example --declare
  a2a-interview proxy --upstream http://agent.internal:8080/.well-known/agent-card.json \\
      --host 0.0.0.0 --port 443 --public-url https://agent.example \\
      --rate-limit '10/second;300/minute' --redis redis://cache.internal:6379/0

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


def _bytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bytes") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bytes > 0")
    return value


def _http_url(flag: str, text: str) -> str:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise UsageError(f"{flag} {text!r} has an unusable port or host") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{flag} {text!r} is not an http:// or https:// URL")
    return text


def _card_key(path: str) -> dict[str, Any]:
    """``card_key`` and ``card_alg`` from ``--card-key``: the key, and its JWK's ``alg``
    when it names one (PROFILE §6.3: re-signed as ``card sign`` signs, a PS256 JWK PS256),
    refused here when that ``alg`` is not one of the key's allowlisted algorithms."""
    from ..card import alg_for_key, load_private_key
    from .publish import _jwk_alg  # the one reading of a JWK's alg, `card sign`'s

    data = read_input(path, "card key")
    try:
        key = load_private_key(data)
    except InterviewError as exc:
        raise UsageError(f"--card-key {path!r} is not a usable private key "
                         f"[{exc.code}]") from None  # fmt: skip
    alg = _jwk_alg(data)
    if alg is not None:
        try:
            fits = alg_for_key(key, rsa_alg=alg) == alg
        except InterviewError:
            fits = False
        if not fits:
            raise UsageError(f"--card-key {path!r}: its JWK's alg {alg!r} is not one this key "
                             "signs with (EdDSA, ES256, ES384, PS256, RS256)")  # fmt: skip
    return {"card_key": key, "card_alg": alg}


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The proxy options the flags give; files read here, usage errors raised here."""
    options: dict[str, Any] = {
        "declare": args.declare,
        "card_cache_control": args.card_cache_control,
        "max_body": args.max_body,
        "body_timeout": args.body_timeout,
        "upstream_connections": args.upstream_connections,
        "upstream_client_connections": args.upstream_client_connections,
    }
    if args.public_url is not None:
        options["public_url"] = _http_url("--public-url", args.public_url)
    if args.forwarded_allow_ips:
        from ..server.proxy import trusted_peers

        allow = tuple(item.strip() for item in args.forwarded_allow_ips.split(",") if item.strip())
        try:
            trusted_peers(allow)
        except ValueError as exc:
            raise UsageError(f"--forwarded-allow-ips: {exc}") from None
        options["forwarded_allow_ips"] = allow
    if args.card_cache_control is not None and (
        not args.card_cache_control.isprintable() or not args.card_cache_control.isascii()
    ):
        raise UsageError("--card-cache-control must be printable ASCII")
    if (args.card_key is None) != (args.kid is None):
        raise UsageError("--card-key and --kid go together")
    if args.card_key is not None and not args.declare:
        raise UsageError("--card-key re-signs a card --declare changes: add --declare")
    if args.card_key is not None:
        options.update(_card_key(args.card_key))
        options["card_kid"] = args.kid
    if args.jku is not None:
        if args.card_key is None:
            raise UsageError("--jku names the key of a card --card-key re-signs: add --card-key")
        options["card_jku"] = _http_url("--jku", args.jku)
    proposals: dict[str, bytes] = {}
    for item in args.proposal or ():
        url, sep, path = item.rpartition("=")  # a URL's query may hold "=", a path rarely
        if not sep or not path or not url:
            raise UsageError(f"--proposal {item!r} is not URL=FILE")
        url = _http_url("--proposal", url)
        proposals[url] = read_input(path, "proposal")
    options["proposals"] = proposals
    return options


def _printable(text: str) -> str:
    # Paths come from the upstream card: never let them drive the terminal.
    return text.encode("unicode_escape").decode("ascii")


def _started(info: Any) -> None:
    print(f"a2a-interview proxy: serving at {info.listen}/", flush=True)
    print(f"  upstream card: {_printable(info.card_url)}", flush=True)
    if info.public_url is not None:
        print(f"  public URL:    {_printable(info.public_url)}", flush=True)
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
    storage = redis_storage(args.redis, limited=rate_limit is not None)

    options = _options(args)
    from ..server import listen

    bounds = listen.bounds_from_args(args, body=False)  # the body is --max-body's

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
            bounds=bounds,
            **options,
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
    from ..server import listen  # its stdlib-only bounds and option types, no extra needed

    p = sub.add_parser(
        "proxy",
        help="serve the interview in front of any A2A agent (its card declares it, or --declare)",
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
        default=DEFAULT_RATE_LIMIT,
        metavar="LIMIT",
        help="interview calls allowed per client address, in the limits "
        f"notation ('10/second;300/minute'), or 'off' (default: {DEFAULT_RATE_LIMIT}); "
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
        "--public-url",
        metavar="URL",
        help="the proxy's own public address, as clients reach it (default: "
        "http://HOST:PORT); proposals on it are read from the upstream at the same path",
    )
    p.add_argument(
        "--declare",
        action="store_true",
        help="serve a card that does not declare the interview with the declaration "
        "added (required: false), its interface URLs moved to --public-url",
    )
    p.add_argument(
        "--card-key",
        metavar="FILE",
        help="private JWK or PEM that re-signs a signed card --declare changes (with the "
        "JWK's alg when it names one, as card sign signs)",
    )
    p.add_argument("--kid", metavar="KID", help="the key id of --card-key's signature")
    p.add_argument(
        "--jku",
        metavar="URL",
        help="the jku a re-signed card names (default: the proxy's own JWKS, served at "
        "/.well-known/a2a-interview-proxy-jwks.json on --public-url)",
    )
    p.add_argument(
        "--proposal",
        action="append",
        metavar="URL=FILE",
        help="use FILE as the proposal at URL (and serve it there when URL is on "
        "--public-url); repeatable",
    )
    p.add_argument(
        "--card-cache-control",
        metavar="VALUE",
        help="the Cache-Control of the served card (default: the upstream's own)",
    )
    p.add_argument(
        "--max-body",
        type=_bytes,
        default=10 * 1024 * 1024,
        metavar="BYTES",
        help="the largest request body passed on (default: 10485760); larger: 413",
    )
    p.add_argument(
        "--body-timeout",
        type=_positive,
        default=30.0,
        metavar="S",
        help="the longest a client may take to send its request body (default: 30); slower: 408",
    )
    p.add_argument(
        "--upstream-connections",
        type=listen.count(1),
        default=256,
        metavar="N",
        help="connections to the agent at most (default: 256); a request that finds "
        "none free within 10 s is answered 503",
    )
    p.add_argument(
        "--upstream-client-connections",
        type=listen.count(0),
        default=None,
        metavar="N",
        help="connections to the agent one client address (an IPv6 /64) may hold at "
        "once (default: a tenth of --upstream-connections; 0: no share); one more is "
        "answered 503 at once, so slow readers of long streams from a few addresses "
        "cannot take every upstream connection",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="LIST",
        default="",
        help="comma-separated addresses or networks (or '*') of balancers in front whose "
        "X-Forwarded-*, Forwarded and X-Real-IP fields are passed on (default: none; "
        "a client's own are dropped, and X-Forwarded-For/-Proto are always the proxy's)",
    )
    p.add_argument(
        "--access-log", action="store_true", help="log every request (costs about 50 µs a request)"
    )
    listen.add_arguments(p, body=False)  # --max-body and --body-timeout are the proxy's own
    p.set_defaults(run=_run)
