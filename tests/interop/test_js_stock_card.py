"""A stock ``@a2a-js/sdk`` 1.3 agent with the card its TypeScript ``AgentCard`` type makes
a user write, behind ``a2a-interview proxy --declare`` (PROFILE §6.7; real processes on
loopback ports: node, the proxy, the CLI).

The type requires ``signatures``, ``securitySchemes`` and ``securityRequirements``, so an
agent nobody signs serves ``"signatures": []``: an unsigned card, for every part.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
from cards import Keys, card, verify_js, verify_python
from processes import conflicts, js_agent_argv, proxy_argv, running, verify, write_json

from a2a_interview.server.proxy.upstream import PROXY_JWKS_PATH
from a2a_interview.spec import INTERVIEW_URI
from support.ports import free_port

CARD_PATH = "/.well-known/agent-card.json"


def typed(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with the members the SDK's ``AgentCard`` type requires and a card that
    is neither signed nor secured leaves empty (what the SDK then serves as it is)."""
    return {"securitySchemes": {}, "securityRequirements": [], **value, "signatures": []}


def test_declare_in_front_of_a_stock_unsigned_js_agent_starts_and_is_consistent(
    node: str, js: Path, tmp_path: Path
) -> None:
    # PROFILE §6.7: the proxy read "signatures": [] as signed and refused to start
    # (exit 3, "give --card-key KEY --kid KID to re-sign it") in front of every stock JS
    # agent nobody signs.
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", typed(card(agent, declare=False, terms=False)))
    argv = proxy_argv(agent, proxy_port, "--public-url", public, "--declare")
    with running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path):
        direct = httpx.get(agent + CARD_PATH, timeout=10).json()
        with running(argv, proxy_port, tmp_path):
            served = httpx.get(public + CARD_PATH, timeout=10).json()
            code, record = verify(public)
    assert direct["signatures"] == []  # what the SDK serves, as the test means it to
    assert served["signatures"] == []
    assert {"uri": INTERVIEW_URI} in served["capabilities"]["extensions"]
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    assert record["agent"]["card_signature"]["status"] == "unsigned"


def test_require_signature_through_the_proxy_of_a_signed_js_agent_needs_no_pinned_key(
    node: str, js: Path, tmp_path: Path
) -> None:
    # PROFILE §6.7: the proxy re-signed without a jku, so the card was key_unavailable and
    # `verify --require-signature` called an honest agent non_conformant. Now the
    # re-signed card names the proxy's own JWKS.
    for name in ("agent", "proxy"):
        (tmp_path / name).mkdir()
    agent_keys, proxy_keys = Keys(tmp_path / "agent"), Keys(tmp_path / "proxy")
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", typed(card(agent, declare=False, terms=False)))
    signing = ("--key", str(agent_keys.jwk), "--kid", agent_keys.kid)
    argv = proxy_argv(agent, proxy_port, "--public-url", public, "--declare",
                      "--card-key", str(proxy_keys.jwk), "--kid", proxy_keys.kid)  # fmt: skip
    with (
        running(js_agent_argv(node, js, agent_port, card_file, *signing), agent_port, tmp_path),
        running(argv, proxy_port, tmp_path),
    ):
        served = httpx.get(public + CARD_PATH, timeout=10).json()
        code, record = verify(public, "--require-signature")
    texts = [item["protected"] for item in served["signatures"]]
    headers = [json.loads(base64.urlsafe_b64decode(t + "=" * (-len(t) % 4))) for t in texts]
    assert headers and {h.get("jku") for h in headers} == {public + PROXY_JWKS_PATH}
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    assert record["agent"]["card_signature"]["status"] == "verified"
    # PROFILE §6.3: the card the proxy re-signs verifies under both SDKs' own verifiers.
    assert verify_js(node, js, [served], proxy_keys.jwks, tmp_path) == [True]
    assert verify_python(served, json.loads(proxy_keys.jwks.read_text()))
