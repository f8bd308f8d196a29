"""Which extra each command needs, and the one line that says so when it is missing.

The base install runs the commands most people start with (``verify``, ``ask``,
``verify-many``, ``card``, ``proposal``, ``keygen``, ``answer``, ``record``); the others
need one extra each (docs/decisions.md D-EXTRAS-1 to D-EXTRAS-3; the README's table):

    demo, demo serve                     sdk     (a2a-sdk, and the server parts)
    proxy                                server
    ledger ..., worker                   ledger
    verify / verify-many --store URL     ledger
    conformance replay                   server
    demo serve / proxy --redis URL       redis   (besides the command's own)

:func:`missing` is asked before a command runs, so a missing extra is one line and exit 2
before anything starts, whichever of its modules happens to be imported first.
:func:`line` words that line; ``main`` also uses it for an ``ImportError`` raised later.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Final

# The modules that show an extra is installed: the top-level imports of the package's
# modules that need it (a2a-sdk's is ``a2a``; psycopg's C part is checked by psycopg).
MODULES: Final[dict[str, tuple[str, ...]]] = {
    "server": ("starlette", "uvicorn", "limits"),
    "sdk": ("a2a", "google.protobuf", "starlette", "uvicorn", "limits"),
    "redis": ("redis", "starlette", "uvicorn", "limits"),
    "ledger": ("sqlalchemy", "alembic", "jinja2", "psycopg", "procrastinate", "starlette",
               "uvicorn"),
}  # fmt: skip

# Command (the words before the first option) -> the extra it needs.
COMMANDS: Final[dict[str, str]] = {
    "demo": "sdk",
    "demo serve": "sdk",
    "proxy": "server",
    "ledger": "ledger",
    "worker": "ledger",
    "conformance replay": "server",
}

_GROUPS: Final = frozenset({"card", "proposal", "record", "ledger", "demo", "conformance"})


def command_of(argv: Sequence[str]) -> str:
    """The command an argument list names: ``"verify"``, ``"ledger list"``, ``"demo"``."""
    words = [a for a in argv if not a.startswith("-")][:2]
    if not words:
        return ""
    if words[0] in _GROUPS and len(words) > 1 and argv[1:2] == [words[1]]:
        return f"{words[0]} {words[1]}"
    return words[0]


def needed(argv: Sequence[str]) -> list[str]:
    """The extras the command ``argv`` names needs, given its options."""
    command = command_of(argv)
    group = command.split(" ")[0]
    extras = [COMMANDS[command]] if command in COMMANDS else []
    if not extras and group in COMMANDS:
        extras = [COMMANDS[group]]
    options = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
    if group in ("verify", "verify-many") and "--store" in options:
        extras.append("ledger")
    if "--redis" in options and group in ("demo", "proxy"):
        extras.append("redis")
        if "server" in extras:  # the redis extra brings the server parts with it
            extras.remove("server")
    return extras


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken one
        return False


def missing(argv: Sequence[str]) -> str | None:
    """The one line to print when an extra the command needs is not installed, else
    ``None``. ``--help`` never needs an extra."""
    if "-h" in argv or "--help" in argv:
        return None
    extras = needed(argv)
    absent = [m for extra in extras for m in MODULES[extra] if not _installed(m)]
    if not absent:
        return None
    return line(command_of(argv), extras, absent[0])


def line(command: str, extras: Sequence[str], module: str | None) -> str:
    """``a2a-interview: error: `demo` needs the 'sdk' extra (no module 'a2a'): pip install
    'a2a-interview[sdk]'``; with no extra to name, the install itself is broken."""
    what = f" (no module {module!r})" if module else ""
    name = f"`{command}`" if command else "this command"
    if not extras:
        return (
            f"a2a-interview: error: {name} needs a module that is missing{what}: "
            "reinstall a2a-interview (pip install --force-reinstall a2a-interview)"
        )
    noun = "extra" if len(extras) == 1 else "extras"
    quoted = ", ".join(repr(e) for e in extras)
    return (
        f"a2a-interview: error: {name} needs the {quoted} {noun}{what}: "
        f"pip install 'a2a-interview[{','.join(extras)}]'"
    )


def line_for(argv: Sequence[str], exc: ImportError) -> str:
    """The line for an ``ImportError`` met while the command ran: the command's extras,
    else the extras that hold the missing module, else a broken install."""
    # A library module re-raises with a message of its own; the missing module is its cause.
    module = exc.name or getattr(exc.__cause__, "name", None) or ""
    named = (
        needed(argv)
        or [
            extra
            for extra, modules in MODULES.items()
            if any(module == m or module.startswith(m + ".") for m in modules)
        ][:1]
    )
    return line(command_of(argv), named, module or None)
