"""``a2a-interview demo serve`` (PROFILE §9): a real process on a real socket."""

from __future__ import annotations

import signal
import socket
import subprocess
import time

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.card import verify_card
from a2a_interview.cli import main
from a2a_interview.cli.usage import EXIT_UNREACHABLE, EXIT_USAGE
from a2a_interview.spec import INTERVIEW_URI
from support.cli import COMMAND


def test_demo_serve_serves_the_signed_agent_and_stops_cleanly() -> None:
    # PROFILE §9: `demo serve` serves the signed Stonework agent; Ctrl-C stops it, exit 0.
    proc = subprocess.Popen(
        [*COMMAND, "demo", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("Stonework demo agent (a2a-sdk) serving at http://127.0.0.1:")
        origin = first.split(" at ", 1)[1].strip().rstrip("/")
        assert proc.stdout.readline().strip() == f"card:  {origin}/.well-known/agent-card.json"
        deadline = time.monotonic() + 10
        while True:
            try:
                card = httpx.get(f"{origin}/.well-known/agent-card.json").json()
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the demo did not start serving"
                time.sleep(0.05)
        assert card["supportedInterfaces"][0]["url"] == f"{origin}/a2a/jsonrpc"
        keys = httpx.get(f"{origin}{reference.JWKS_PATH}").json()["keys"]
        assert verify_card(card, keys, readings=("served",)).status == "verified"
        answer = httpx.get(
            f"{origin}/a2a/rest/interview/identity",
            headers={"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"},
        )
        assert answer.status_code == 200 and answer.headers["a2a-extensions"] == INTERVIEW_URI
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert "Traceback" not in err


def test_demo_serve_on_a_busy_port_is_one_line() -> None:
    # PROFILE §9: a server that cannot start exits 3 with one line, no traceback.
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        done = subprocess.run(
            [*COMMAND, "demo", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        busy.close()
    assert done.returncode == EXIT_UNREACHABLE
    assert done.stderr.startswith("a2a-interview: error: cannot serve on 127.0.0.1:")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_demo_serve_usage_errors() -> None:
    # PROFILE §9: bad arguments exit 2.
    assert main(["demo", "serve", "--port", "70000"]) == EXIT_USAGE
    assert main(["demo", "serve", "--port", "x"]) == EXIT_USAGE
    assert main(["demo", "serve", "--rate-limit", "lots"]) == EXIT_USAGE


def test_demo_serve_redis_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    # The one --redis rule of demo serve and proxy (cli.redis_storage): one line, exit 2.
    assert main(["demo", "serve", "--redis", "ftp://x"]) == EXIT_USAGE
    assert "is not a redis:// or rediss:// URL" in capsys.readouterr().err
    assert main(["demo", "serve", "--redis", "redis://x", "--rate-limit", "off"]) == EXIT_USAGE
    assert "--redis needs a rate limit" in capsys.readouterr().err
