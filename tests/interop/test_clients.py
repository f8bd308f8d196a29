"""Asking the interview from a client (D-CLI-4d / "Clients"): the README's two
recipes, run against a stock ``@a2a-js/sdk`` agent behind ``a2a-interview proxy`` (real
processes on loopback ports).

- Python: ``a2a_interview.verifier.ask``, sharing the ``httpx.AsyncClient`` an
  ``a2a-sdk`` 1.x client was made with (the SDK has no public call for an extension
  method; no private attribute is needed).
- JavaScript: ``@a2a-js/sdk``'s ``client.transport.callExtensionMethod``
  (``js/interview.mjs``, the README's recipe between its markers).

Both give the answer the proxy serves, byte for byte in JCS (PROFILE §3.6).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
from cards import PROPOSAL_FILE, PROPOSAL_PATH, card
from processes import proxy_argv, running, write_json

from a2a_interview.jcs import canonicalize
from a2a_interview.spec import INTERVIEW_URI
from support.ports import free_port

README = Path(__file__).resolve().parents[2] / "README.md"


@contextlib.contextmanager
def _proxied_js_agent(node: str, js: Path, tmp_path: Path) -> Iterator[str]:
    """The JS agent (card with the interview and terms) behind the proxy: its public
    origin while the block runs."""
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public))
    argv = [node, str(js / "agent.mjs"), "--port", str(agent_port), "--card", str(card_file),
            "--file", f"{PROPOSAL_PATH}={PROPOSAL_FILE}"]  # fmt: skip
    with (
        running(argv, agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
    ):
        yield public


def _js_ask(node: str, js: Path, card_url: str, question: str, *extra: str) -> Any:
    done = subprocess.run(
        [node, str(js / "interview.mjs"), "--card-url", card_url, "--question", question,
         *extra],
        capture_output=True, text=True, timeout=60, check=False, cwd=js,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def _python_ask_beside_the_sdk(public: str) -> tuple[str, list[tuple[str, bytes]]]:
    """One a2a-sdk 1.x client and ``ask`` on the same httpx client: the SDK's reply text
    and, for each question asked, the result's JCS bytes."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest

    from a2a_interview.verifier import ask

    asked: list[tuple[str, bytes]] = []
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(public, ClientConfig(httpx_client=http, streaming=False))
        message = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text="hi")])
        events = [e async for e in client.send_message(SendMessageRequest(message=message))]
        task = events[-1].task
        text = task.artifacts[0].parts[0].text
        for question, skill in (("identity", None), ("terms", "reconcile-statement")):
            result = await ask(public, question, skill, http=http)
            assert result.read.problem is None and result.read.canonical is not None
            asked.append((question, result.read.canonical))
        assert not http.is_closed  # shared, not closed by ask
    return text, asked


def test_python_ask_shares_the_httpx_client_of_an_a2a_sdk_client(
    node: str, js: Path, tmp_path: Path
) -> None:
    with _proxied_js_agent(node, js, tmp_path) as public:
        text, asked = anyio.run(_python_ask_beside_the_sdk, public)
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "interview/identity"}
        act = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10
        direct = httpx.post(public + "/a2a/jsonrpc", headers=act, json=rpc)
    assert text == "echo: hi"  # the SDK's own call went through
    identity = dict(asked)["identity"]
    assert identity == canonicalize(direct.json()["result"])  # the proxy's answer
    terms = json.loads(dict(asked)["terms"])
    assert terms["question"] == "terms" and terms["declared"] is True


def test_js_call_extension_method_gets_the_same_answers(
    node: str, js: Path, tmp_path: Path
) -> None:
    with _proxied_js_agent(node, js, tmp_path) as public:
        card_url = public + "/.well-known/agent-card.json"
        _text, asked = anyio.run(_python_ask_beside_the_sdk, public)
        got = [
            (q, canonicalize(_js_ask(node, js, card_url, q, *(["--skill", s] if s else []))))
            for q, s in (("identity", None), ("terms", "reconcile-statement"))
        ]
        refusal = _js_ask(node, js, card_url, "usage", "--skill", "no-such-skill")
    assert got == asked  # the same bytes as the Python client's (PROFILE §3.6)
    assert canonicalize(refusal) == canonicalize({  # PROFILE §5, exactly
        "declared_skills": ["reconcile-statement", "echo"], "detail": "no declared skill "
        "matches", "reason": "out_of_scope", "refused": True})  # fmt: skip


def _fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text("utf-8"), re.S | re.M)


def test_the_readme_shows_both_recipes_as_they_run_here() -> None:
    # The README's client section is what these tests run, not a paraphrase of it.
    python = [b for b in _fenced("python") if "http=http" in b]
    assert len(python) == 1
    for needle in ("ClientConfig(httpx_client=http)", "await ask(", "http=http"):
        assert needle in python[0]
    script = (Path(__file__).parent / "js" / "interview.mjs").read_text("utf-8")
    recipe = script.split("// --- the recipe")[1].split("// --- end of the recipe")[0]
    javascript = _fenced("js")
    assert len(javascript) == 1
    assert recipe.split("\n", 1)[1].strip() in javascript[0]
