"""Install piece by piece (docs/decisions.md D-EXTRAS-1 to D-EXTRAS-3): the wheel installed without
extras and with each extra alone, each in a fresh venv. Every command's ``--help`` works
everywhere; one real invocation of every command either works or says, in one line and
with exit 2, which extra to install. Never a traceback.

Slow (a few minutes: a wheel, six venvs, a few hundred commands); pip uses its cache and
the configured package index, nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from needs import ROOT, need

pytestmark = pytest.mark.slow

# The extra installed in a venv -> the extras it makes available (sdk, redis and ledger
# bring the server parts with them; the client extra is in the base install now).
VERIFIER_VECTOR = ROOT / "conformance" / "vectors" / "verifier" / "honest.json"
VENVS = {
    "": set(),
    "client": set(),
    "server": {"server"},
    "sdk": {"sdk", "server"},
    "redis": {"redis", "server"},
    "ledger": {"ledger", "server"},
}

HELP = """
import argparse, contextlib, io, json, sys
from a2a_interview.cli import build_parser, main

def walk(parser, path):
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, [*path, name])

out = {}
for path in walk(build_parser(), []):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main([*path, "--help"])
    out[" ".join(path)] = [code, stdout.getvalue(), stderr.getvalue()]
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the working tree, built from a copy (the tree itself is not touched)."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(
        ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    need(built.returncode == 0, "a wheel build (setuptools from the package index)",
         f"pip wheel failed: {built.stderr.strip()[-300:]}")  # fmt: skip
    (path,) = out.glob("a2a_interview-*.whl")
    with zipfile.ZipFile(path) as built_wheel:  # the licence travels with the wheel
        licence = [n for n in built_wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert licence
        assert b"Apache License" in built_wheel.read(licence[0])
        # The profile the help texts cite travels too (`a2a-interview profile N`).
        assert "a2a_interview/" + "profile.md" in built_wheel.namelist()
    return path


def _venv(root: Path, wheel: Path, extra: str) -> Path:
    venv = root / (extra or "bare")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", target],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    need(done.returncode == 0, f"an install of {target} from the package index",
         f"pip install failed: {done.stderr.strip()[-300:]}")  # fmt: skip
    return venv


@pytest.fixture(scope="module")
def busy_port() -> Iterator[int]:
    """A loopback port held open, so that a server command stops at its bind (exit 3)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _invocations(files: Path, busy: int) -> list[tuple[list[str], list[str], set[int]]]:
    """(argv, the extras it needs, the exit codes that mean it worked)."""
    ref = ROOT / "src" / "a2a_interview" / "reference"
    card, proposal = ref / "stonework-card.json", ref / "flag-exceptions.sow.json"
    key = ref / "TEST-ONLY-card-key.jwk.json"
    seed = "SUAEGDPNTWXACIF45CA23BUY36RIMWZXW5LEHSEOK2ONS5JWJ7PBC2EWBA"  # public TEST seed
    down = f"http://127.0.0.1:{_closed_port()}"
    record, db = files / "record.json", files / "ledger.db"
    urls = files / "urls.txt"
    urls.write_text(down + "\n")
    return [
        (["keygen"], [], {0}),
        (["profile", "7"], [], {0}),  # docs/profile.md shipped as package data
        (["card", "sign", str(card), "--key", str(key), "--kid", "k",
          "--out", str(files / "signed.json")], [], {0}),
        (["card", "verify", str(card)], [], {1}),  # unsigned: does not verify
        (["proposal", "sign", str(proposal), "--seed", seed,
          "--out", str(files / "p.json")], [], {0}),
        (["proposal", "digest", str(proposal)], [], {0}),
        (["proposal", "verify", str(proposal)], [], {0}),
        (["answer", str(card), "identity"], [], {0}),
        (["verify", down, "--record", str(record)], [], {3}),
        (["record", "show", str(record)], [], {0}),
        (["record", "verify", str(record)], [], {1}),
        (["ask", down, "identity"], [], {3}),
        (["verify-many", str(urls), "--out", str(files / "out.jsonl"), "--workers", "1",
          "--no-progress"], [], {3}),
        (["verify", down, "--store", str(db)], ["ledger"], {3}),
        (["conformance", down], [], {3}),
        (["conformance", "replay", str(VERIFIER_VECTOR), "--port", str(busy)], ["server"], {3}),
        (["demo"], ["sdk"], {0}),
        (["demo", "serve", "--port", str(busy)], ["sdk"], {3}),
        (["demo", "serve", "--port", str(busy), "--redis", "redis://127.0.0.1:1/0"],
         ["sdk", "redis"], {3}),
        (["proxy", "--upstream", down, "--port", "0"], ["server"], {3}),
        (["proxy", "--upstream", down, "--port", "0", "--redis", "redis://127.0.0.1:1/0"],
         ["redis"], {3}),
        (["ledger", "migrate", "--store", str(db)], ["ledger"], {0}),
        (["ledger", "import", str(record), "--store", str(db)], ["ledger"], {0, 1}),
        (["ledger", "list", "--store", str(db)], ["ledger"], {0}),
        (["ledger", "show", down, "--store", str(db)], ["ledger"], {0, 1}),
        (["ledger", "export", "--store", str(db), "--out", str(files / "all.jsonl")],
         ["ledger"], {0}),
        (["ledger", "schedule", "--older-than", "1d", "--store", str(db)], ["ledger"], {2}),
        (["ledger", "serve", "--store", str(db), "--port", str(busy)], ["ledger"], {3}),
        (["worker", "--store", str(db), "--once"], ["ledger"], {2}),
    ]  # fmt: skip


@pytest.mark.parametrize("extra", list(VENVS))
def test_every_command_works_or_names_its_extra_in_one_line(
    tmp_path: Path, wheel: Path, busy_port: int, extra: str
) -> None:
    venv = _venv(tmp_path, wheel, extra)
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("A2A_INTERVIEW_STORE", None)
    env.pop("VIRTUAL_ENV", None)

    # Every --help, whatever is installed.
    helped = subprocess.run(
        [str(venv / "bin" / "python"), "-c", HELP], capture_output=True, text=True,
        env=env, check=True, cwd=tmp_path,
    )  # fmt: skip
    helps = json.loads(helped.stdout)
    assert len(helps) >= 28
    assert {c: h[0] for c, h in helps.items() if h[0] != 0 or not h[1]} == {}

    installed = VENVS[extra]
    files = tmp_path / "files"
    files.mkdir()
    wrong = []
    for argv, needs_extras, worked in _invocations(files, busy_port):
        done = subprocess.run(
            [str(venv / "bin" / "a2a-interview"), *argv], capture_output=True, text=True,
            env=env, cwd=files, timeout=120, check=False,
        )  # fmt: skip
        said = f"{' '.join(argv[:2])}: exit {done.returncode}: {done.stderr.strip()[-400:]}"
        if "Traceback" in done.stderr + done.stdout:
            wrong.append(f"traceback: {said}")
        elif set(needs_extras) <= installed:
            if done.returncode not in worked:
                wrong.append(f"did not work: {said}")
        else:
            lines = done.stderr.strip().splitlines()
            wanted = f"pip install 'a2a-interview[{','.join(needs_extras)}]'"
            if done.returncode != 2 or len(lines) != 1 or wanted not in lines[0]:
                wrong.append(f"did not name {wanted}: {said}")
    assert wrong == []
