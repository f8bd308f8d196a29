"""The command line as a test runs it: in process (``run``) or as a user starts it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from a2a_interview.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``a2a-interview *argv`` in process: its exit code, stdout and stderr. A user never
    sees a traceback, so none may be printed."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


COMMAND = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()"]


def command(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``a2a-interview *args`` in a child process, run to its end within ``timeout``."""
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=timeout)
