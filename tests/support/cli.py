"""The command line run in process, as a test calls it."""

from __future__ import annotations

import pytest

from a2a_interview.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``a2a-interview *argv`` in process: its exit code, stdout and stderr. A user never
    sees a traceback, so none may be printed."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err
