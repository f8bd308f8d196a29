"""An ``a2a-sdk`` 0.3.x agent behind ``a2a-interview proxy --declare``, asked the interview
under every ``A2A-Version`` a client may send (PROFILE §3.10; real processes on loopback).

A 0.3 host does not negotiate: it serves an ordinary method whatever ``A2A-Version`` says,
so the proxy in front of it must not answer ``-32009`` either (an ``a2a-sdk`` 1.3 client
puts ``a2a-version: 1.0`` on every request of its shared httpx client).
"""

from __future__ import annotations

from pathlib import Path

import httpx
from processes import a2a03_argv, proxy_argv, running

from a2a_interview.spec import INTERVIEW_URI
from support.ports import free_port

CALL = b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'
ORDINARY = b'{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"id":"none"}}'


def test_the_proxy_answers_the_03_agents_interview_under_any_version(
    a2a03_python: Path, tmp_path: Path
) -> None:
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    argv = proxy_argv(agent, proxy_port, "--public-url", public, "--declare")
    json_type = {"Content-Type": "application/json"}
    with (
        running(a2a03_argv(a2a03_python, agent_port, agent + "/"), agent_port, tmp_path),
        running(argv, proxy_port, tmp_path),
        httpx.Client(timeout=20) as http,
    ):
        for version in ("1.0", "1.1", "0.3", None, "garbage"):
            vh = {} if version is None else {"A2A-Version": version}
            # The host itself: an ordinary method is never -32009, whatever the version.
            host = http.post(agent + "/", content=ORDINARY, headers={**json_type, **vh})
            assert host.json().get("error", {}).get("code") != -32009, (version, host.text)
            activated = {**json_type, **vh, "A2A-Extensions": INTERVIEW_URI}
            ours = http.post(public + "/", content=CALL, headers=activated)
            assert ours.json()["result"]["question"] == "identity", (version, ours.text)
