"""An ``a2a-sdk`` 0.3.x agent (its own venv, ``requirements-a2a03.txt``), direct and
behind ``a2a-interview proxy`` (D-TEST-9; real processes on loopback).

The agent's 0.3 card has ``url`` and ``preferredTransport`` instead of
``supportedInterfaces`` (PROFILE: 0.3 card shapes are met in the wild and must be read).
"""

from __future__ import annotations

from pathlib import Path

import httpx
from processes import a2a03_argv, conflicts, proxy_argv, running, verify

from a2a_interview.spec import INTERVIEW_URI
from support.ports import free_port


def test_the_03_agent_direct_is_not_offered(a2a03_python: Path, tmp_path: Path) -> None:
    # PROFILE §7: no interview entry on the card: not_offered, exit 4.
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    with running(a2a03_argv(a2a03_python, port, origin + "/"), port, tmp_path):
        card = httpx.get(origin + "/.well-known/agent-card.json").json()
        code, record = verify(origin)
    assert card["protocolVersion"] == "0.3.0" and "supportedInterfaces" not in card
    assert (code, record["outcome"]) == (4, "not_offered")


def test_the_03_agent_behind_the_proxy_with_a_declaring_card_is_consistent(
    a2a03_python: Path, tmp_path: Path
) -> None:
    # The 0.3 card declares the interview (required: false) and names the proxy; the
    # proxy answers it, the agent never sees an interview call: consistent.
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    argv = a2a03_argv(a2a03_python, agent_port, public + "/", "--declare")
    with (
        running(argv, agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port), proxy_port, tmp_path),
    ):
        code, record = verify(public)
        # Ordinary 0.3 traffic still reaches the agent through the proxy.
        sent = httpx.post(public + "/", json={
            "jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                                   "parts": [{"kind": "text", "text": "hi"}]}},
        })  # fmt: skip
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    assert sent.json()["result"]["parts"] == [{"kind": "text", "text": "echo: hi"}]


def test_declare_in_front_of_the_undeclared_03_agent_is_consistent(
    a2a03_python: Path, tmp_path: Path
) -> None:
    # D-PROXY-23: --declare adds the interview to a 0.3 card that knows
    # nothing of it and moves its url to --public-url.
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    argv = proxy_argv(agent, proxy_port, "--public-url", public, "--declare")
    with (
        running(a2a03_argv(a2a03_python, agent_port, agent + "/"), agent_port, tmp_path),
        running(argv, proxy_port, tmp_path),
    ):
        code, record = verify(public)
        served = httpx.get(public + "/.well-known/agent-card.json").json()
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    entries = [e for e in served["capabilities"]["extensions"] if e["uri"] == INTERVIEW_URI]
    # docs/decisions.md D-VERIFY-37: the declaration --declare writes omits required (false).
    assert entries == [{"uri": INTERVIEW_URI}]
    assert served["url"].startswith(public)
