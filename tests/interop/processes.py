"""Real processes on loopback ports for the interop suite: start, wait until ready, stop."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cards import PROPOSAL_FILE, PROPOSAL_PATH

from support.cli import COMMAND

START_SECONDS = 30  # the bound on a process getting ready


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class Process:
    """A started process, its origin, and its combined output so far."""

    popen: subprocess.Popen[bytes]
    origin: str
    log: Path

    def output(self) -> str:
        return self.log.read_text("utf-8", "replace")


@contextlib.contextmanager
def running(
    argv: Sequence[str], port: int, tmp: Path, *, ready: str = "/.well-known/agent-card.json"
) -> Iterator[Process]:
    """Start ``argv`` and yield once ``GET http://127.0.0.1:{port}{ready}`` answers 200;
    stop it (SIGTERM, then SIGKILL) when the block ends. A process that exits or is not
    ready within the bound fails the test with its output."""
    log = tmp / f"process-{port}.log"
    env = {**os.environ, "OTEL_SDK_DISABLED": "true", "NO_COLOR": "1"}
    with log.open("wb") as sink:
        popen = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
    process = Process(popen, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if popen.poll() is not None:
                pytest.fail(f"{argv[1]} exited {popen.returncode}:\n{tail(process.output())}")
            try:
                if httpx.get(process.origin + ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{argv[1]} not ready in {START_SECONDS} s:\n{process.output()}")
            time.sleep(0.1)
        yield process
    finally:
        if popen.poll() is None:
            popen.terminate()
            try:
                popen.wait(10)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1), "utf-8")
    return path


def proxy_argv(upstream: str, port: int, *extra: str) -> list[str]:
    return [*COMMAND, "proxy", "--upstream", upstream, "--port", str(port), *extra]


def verify(origin: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """``a2a-interview verify ORIGIN --json``: the exit code and the record."""
    done = subprocess.run(
        [*COMMAND, "verify", origin, "--json", "--churn-delay", "0", *extra],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    record: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, record


def conflicts(record: dict[str, Any]) -> list[Any]:
    return [c for run in record.get("runs", []) for c in run.get("conflicts", [])]


AGENT = Path(__file__).resolve().parent / "a2a03_agent.py"


def a2a03_argv(python: Path, port: int, url: str, *extra: str) -> list[str]:
    return [str(python), str(AGENT), "--port", str(port), "--url", url, *extra]


def js_agent_argv(node: str, js: Path, port: int, card_file: Path, *extra: str) -> list[str]:
    return [node, str(js / "agent.mjs"), "--port", str(port), "--card", str(card_file),
            "--file", f"{PROPOSAL_PATH}={PROPOSAL_FILE}", *extra]  # fmt: skip
