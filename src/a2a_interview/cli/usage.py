"""The exit codes every command shares and ``UsageError``, the one-line refusal of bad
input (exit 2): below every command module and ``files.py``, so none of them imports the
package that assembles them (the command line has no import loop). The
package re-exports both; ``cli/__init__.py`` documents the codes."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_NOT_OFFERED = 4


class UsageError(Exception):
    """Raised by a command for bad input it can explain in one line (exit 2)."""
