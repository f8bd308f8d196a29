"""The interop suite's parts: installed once by the project's own files, started as real
processes on loopback ports.

- ``js``: ``tests/interop/js`` with ``npm ci --no-audit --no-fund`` run into its ignored
  ``node_modules`` (pinned by ``package-lock.json``), re-run only when the lock file
  changes (a stamp holds its sha256).
- ``a2a03_python``: the interpreter of ``tests/interop/.venv-a2a03``, a venv holding the
  pinned ``requirements-a2a03.txt`` (a2a-sdk 0.3.x), re-created only when that file
  changes (same stamp rule).

``node``/``npm`` missing, or an install that fails: skip with the reason outside CI, fail
under CI (``tests/needs.py``; ``.ci/run`` installs node and npm).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from processes import tail

from needs import binary, need

HERE = Path(__file__).resolve().parent
JS = HERE / "js"
VENV03 = HERE / ".venv-a2a03"
REQUIREMENTS03 = HERE / "requirements-a2a03.txt"
STAMP = ".interop-stamp"
INSTALL_SECONDS = 600  # the bound on one npm ci or pip install (network)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _install(argv: Sequence[str], cwd: Path, what: str) -> None:
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        need(False, what, f"{' '.join(argv)} did not finish in {INSTALL_SECONDS} s")
        return
    need(
        done.returncode == 0,
        what,
        f"{' '.join(argv)} exited {done.returncode}:\n{tail(done.stdout + done.stderr)}",
    )


@pytest.fixture(scope="session")
def node() -> str:
    how = "apt-get install nodejs npm (.ci/run installs them under CI)"
    path = binary("node", how)
    done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    major = done.stdout.strip().lstrip("v").split(".")[0]
    need(major.isdigit() and int(major) >= 20, "Node.js >= 20 (@a2a-js/sdk 1.3 needs it)",
         f"{path} is {done.stdout.strip() or 'unknown'}; install Node.js 20 or later")  # fmt: skip
    return path


@pytest.fixture(scope="session")
def js(node: str) -> Path:
    """``tests/interop/js`` with its pinned packages installed."""
    npm = binary("npm", "apt-get install nodejs npm (.ci/run installs them under CI)")
    stamp = JS / "node_modules" / STAMP
    wanted = _sha256(JS / "package-lock.json")
    if not (stamp.is_file() and stamp.read_text() == wanted):
        _install([npm, "ci", "--no-audit", "--no-fund"], JS, "the @a2a-js/sdk packages (npm ci)")
        stamp.write_text(wanted)
    return JS


@pytest.fixture(scope="session")
def a2a03_python() -> Path:
    """The interpreter of the a2a-sdk 0.3 venv."""
    python = VENV03 / "bin" / "python"
    stamp = VENV03 / STAMP
    wanted = _sha256(REQUIREMENTS03)
    if not (stamp.is_file() and stamp.read_text() == wanted):
        shutil.rmtree(VENV03, ignore_errors=True)
        what = "the a2a-sdk 0.3 venv (tests/interop/.venv-a2a03)"
        _install([sys.executable, "-m", "venv", str(VENV03)], HERE, what)
        _install(
            [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS03)],
            HERE,
            what,
        )
        stamp.write_text(wanted)
    return python
