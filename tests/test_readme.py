"""The README's a2a-sdk snippet runs as written (D-PROXY-23 / "What to build" 6).

The code block is taken out of README.md and executed against the installed a2a-sdk 1.x:
it must build the app, which then answers a JSON-RPC call, an interview call on both
bindings, and the A2A TCK's `{url}/` spelling (the README's TCK note), through
``httpx.ASGITransport`` (the app itself, no network). A README edit that breaks the
snippet fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_interview.spec import INTERVIEW_URI
from a2a_interview.strictjson import loads

README = Path(__file__).resolve().parents[1] / "README.md"
ACT = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10
V1 = {"A2A-Version": "1.0"}


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", README.read_text("utf-8"), re.S | re.M)


def _sdk_snippet() -> str:
    blocks = [b for b in _python_blocks() if "interview_routes(" in b]
    assert len(blocks) == 1, "README.md must hold exactly one a2a-sdk snippet"
    return blocks[0]


def _run_snippet() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme_snippet"}
    exec(compile(_sdk_snippet(), str(README), "exec"), namespace)
    return namespace


def _client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="https://agent.example"
    )


def _send(text: str, request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": f"m-{request_id}",
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        },
    }


IDENTITY = {"jsonrpc": "2.0", "id": 7, "method": "interview/identity"}


def test_the_snippet_builds_an_app() -> None:
    # README "Library use": the block runs as written and leaves `app` and `routes`.
    namespace = _run_snippet()
    assert type(namespace["app"]).__name__ == "Starlette"
    assert namespace["routes"].interview.answer("identity")


@pytest.mark.anyio
async def test_the_snippet_app_serves_the_card_the_agent_and_the_interview() -> None:
    namespace = _run_snippet()
    async with _client(namespace["app"]) as http:
        card = await http.get("/.well-known/agent-card.json")
        assert card.status_code == 200
        extensions = loads(card.content)["capabilities"]["extensions"]
        assert [e["uri"] for e in extensions] == [INTERVIEW_URI]

        # An ordinary call reaches the SDK's handler and the snippet's executor.
        sent = await http.post("/a2a/jsonrpc", json=_send("hello"), headers=V1)
        assert sent.status_code == 200
        reply = sent.json()["result"]["message"]
        assert reply["parts"] == [{"text": "echo: hello"}]

        # The interview on JSON-RPC (PROFILE §3) and HTTP+JSON (PROFILE §3b), same bytes.
        answer = await http.post("/a2a/jsonrpc", json=IDENTITY, headers=ACT)
        assert answer.status_code == 200
        assert answer.headers["A2A-Extensions"] == INTERVIEW_URI
        result = loads(answer.content)["result"]
        assert result["question"] == "identity" and result["declared"] is True
        rest = await http.get("/a2a/rest/interview/identity", headers=ACT)
        assert rest.status_code == 200 and loads(rest.content) == result
        expected = namespace["routes"].interview.answer("identity")
        assert rest.content == expected

        # PROFILE §3.3: without activation the method is the SDK's own "Method not found".
        hidden = await http.post("/a2a/jsonrpc", json=IDENTITY, headers=V1)
        assert hidden.json()["error"]["code"] == -32601


@pytest.mark.anyio
async def test_the_tck_spelling_with_a_trailing_slash_works() -> None:
    # README "The A2A TCK": the TCK posts to {url}/; the snippet's second route serves it,
    # the ordinary call and the interview alike.
    namespace = _run_snippet()
    async with _client(namespace["app"]) as http:
        sent = await http.post("/a2a/jsonrpc/", json=_send("tck", 2), headers=V1)
        assert sent.status_code == 200
        assert sent.json()["result"]["message"]["parts"] == [{"text": "echo: tck"}]
        answer = await http.post("/a2a/jsonrpc/", json=IDENTITY, headers=ACT)
        assert answer.status_code == 200
        assert loads(answer.content)["result"]["question"] == "identity"


@pytest.mark.anyio
async def test_without_the_slash_route_the_tck_spelling_is_not_served() -> None:
    # The control for the README's TCK note: drop the slash route and the same POST gets
    # no JSON-RPC answer at all (a 404 in a2a-sdk 1.3's route layout): why the note exists.
    source = _sdk_snippet()
    line = '        *create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc/"),'
    assert line in source
    namespace: dict[str, Any] = {"__name__": "readme_snippet"}
    exec(compile(source.replace(line, ""), str(README), "exec"), namespace)
    async with _client(namespace["app"]) as http:
        sent = await http.post("/a2a/jsonrpc/", json=_send("tck", 3), headers=V1)
        assert sent.status_code == 404
        assert b"echo: tck" not in sent.content


def test_the_readme_names_the_proxy_one_line() -> None:
    # D-PROXY-23: the proxy's one line for an agent that knows nothing of the interview.
    text = README.read_text("utf-8")
    assert (
        "a2a-interview proxy --upstream http://127.0.0.1:9999 --port 8080 "
        "--public-url https://agent.example --declare"
    ) in text
