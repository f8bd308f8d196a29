"""The ``a2a-interview`` command line: ``main(argv) -> int`` (PROFILE §9).

Exit codes, the same for every command:

    0  success (verify: consistent or churn; card/proposal verify: it verified;
       record verify: evidence)
    1  verify: non_conformant; card/proposal verify: it did not verify; record verify:
       a claim or a runner signature that does not verify
    2  usage error (bad arguments, unreadable input file, malformed input)
    3  verify: unreachable or could not complete; a server could not start
    4  verify: not_offered (the card does not declare the interview)

Each command group lives in its own module with a ``register(subparsers)`` function;
this module assembles them, turns the package's exceptions into one-line messages, and
never lets a traceback reach the user. Every file a command reads or writes goes through
``files.py`` (``read_input``: the 1 MiB bound; ``write_atomic``/``open_atomic``: atomic,
regular files only, secrets never replaced without ``--force``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from .._moved import moved_name
from ..errors import InterviewError
from . import extras
from .usage import (
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    UsageError,
)

__all__ = [
    "build_parser",
    "entry",
    "main",
]


def __getattr__(name: str) -> object:  # what 0.6 passed on from here (D-CORE-23)
    return moved_name(__name__, name)


# Command modules, in --help order. Each defines register(subparsers).
_GROUPS = ("publish", "verify", "record", "serve", "proxy", "ledger", "profile", "conformance")

EPILOG = """\
exit codes: 0 ok (consistent, churn, verified, evidence) ·
1 non_conformant / did not verify / claim · 2 usage error ·
3 unreachable / could not complete · 4 not_offered

Start with `a2a-interview demo`: it serves the bundled Stonework agent on loopback,
interviews it and prints the report (pip install 'a2a-interview[sdk]' first).

Extras: demo needs a2a-interview[sdk], proxy [server], ledger and worker [ledger]
(--redis: [redis]); the other commands none. A missing one is named in one line.

Citations: docs/profile.md §N is the implementation profile, shipped with the
package: `a2a-interview profile N` prints §N. The drafts: the interview draft §N,
https://agentsow.com/extensions/a2a-interview/v1; terms §N, the terms extension,
https://agentsow.com/extensions/a2a-terms/v1; A2A §N, the A2A 1.0 specification,
https://a2a-protocol.org/latest/specification/."""


def serve_until_stopped(host: str, port: int, start: Callable[[], None]) -> int:
    """Run a server command's ``start()`` until Ctrl-C (uvicorn re-raises it after its
    graceful shutdown: stopping is success). Returns ``EXIT_OK``, or
    ``EXIT_UNREACHABLE`` with one line when the socket cannot be had. Raises
    ``UsageError`` for a port outside 0-65535, before anything starts."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a TCP port (0-65535)")
    try:
        start()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        print(f"a2a-interview: error: cannot serve on {host}:{port}: {reason}", file=sys.stderr)
        return EXIT_UNREACHABLE
    return EXIT_OK


def redis_storage(url: str | None, *, limited: bool) -> str:
    """The rate-limit store a ``--redis URL`` option names (``memory://`` without one).
    Raises ``UsageError`` for a URL that is not Redis's or a store with no limit to keep."""
    if url is None:
        return "memory://"
    from urllib.parse import urlsplit

    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        scheme = ""
    if scheme not in ("redis", "rediss", "redis+unix"):
        raise UsageError(f"--redis {url!r} is not a redis:// or rediss:// URL")
    if not limited:
        raise UsageError("--redis needs a rate limit (not --rate-limit off)")
    return url


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="a2a-interview",
        description="Serve, publish and verify the A2A Interview Extension.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _GROUPS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # a group not built yet
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code. Never raises for bad input."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    words = list(sys.argv[1:] if argv is None else argv)
    absent = extras.missing(words)
    if absent is not None:  # one line naming the extra, before anything starts
        print(absent, file=sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except UsageError as exc:
        print(f"a2a-interview: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except InterviewError as exc:
        print(f"a2a-interview: error: {exc} [{exc.code}]", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as exc:  # a dependency the table of extras.py did not foresee
        print(extras.line_for(words, exc), file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a file named on the command line that cannot be written
        where = f" {exc.filename!r}" if exc.filename else ""
        print(f"a2a-interview: error: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("a2a-interview: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    """The console script."""
    raise SystemExit(main())
