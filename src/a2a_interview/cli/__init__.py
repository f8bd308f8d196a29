"""The ``a2a-interview`` command line: ``main(argv) -> int`` (PROFILE §9).

Exit codes, the same for every command:

    0  success (verify: consistent or churn; card/proposal verify: it verified)
    1  verify: non_conformant; card/proposal verify: it did not verify
    2  usage error (bad arguments, unreadable input file, malformed input)
    3  verify: unreachable or could not complete; a server could not start
    4  verify: not_offered (the card does not declare the interview)

Each command group lives in its own module with a ``register(subparsers)`` function;
this module assembles them, turns the package's exceptions into one-line messages, and
never lets a traceback reach the user.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import InterviewError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_NOT_OFFERED = 4

# Command modules, in --help order. Each defines register(subparsers).
_GROUPS = ("publish", "verify", "serve", "proxy", "ledger")

EPILOG = """\
exit codes: 0 ok (consistent, churn, verified) · 1 non_conformant / did not verify ·
2 usage error · 3 unreachable / could not complete · 4 not_offered

Start with `a2a-interview demo`: it serves the bundled Stonework agent on loopback,
interviews it and prints the report."""


class UsageError(Exception):
    """Raised by a command for bad input it can explain in one line (exit 2)."""


def write_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never
    a part: a temporary file in the same folder, flushed, then renamed over."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_input(path: str, what: str) -> bytes:
    """The bytes of a file named on the command line (``-`` is stdin); a missing or
    unreadable file is a ``UsageError`` naming ``what``."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path!r}: {exc.strerror}") from None


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
    try:
        return int(args.run(args))
    except UsageError as exc:
        print(f"a2a-interview: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except InterviewError as exc:
        print(f"a2a-interview: error: {exc} [{exc.code}]", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as exc:
        print(f"a2a-interview: error: {exc}", file=sys.stderr)
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
