"""Ordinary traffic is unaffected by the interview (PROFILE §3.8; interview §3 rule 1).

The same a2a-sdk agent is built three times: bare (the SDK's routes only), with the
interview added by ``interview_routes`` (the SDK integration), and with the interview as
an ASGI layer in front (``InterviewMiddleware``). The same conversation — SendMessage,
GetTask, SendStreamingMessage (SSE), an unknown task, and their HTTP+JSON twins — is
played against each, with ``A2A-Version: 1.0``, once without and once with the interview
URI in ``A2A-Extensions``. Status, headers and bodies must match.

Normalized, and only these: the SDK generates task, context and artifact ids (uuid4) and
stamps every status with the current time, so two runs of one request against one app
already differ there. Ids are replaced by their order of first appearance in the whole
conversation (so GetTask must return the id SendMessage created, in the same places), and
timestamps by a placeholder. ``content-length`` follows the body (a timestamp's fraction
can print shorter) and is checked against the body instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from starlette.applications import Starlette

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.server import demo
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.sdk import agent_card_from_json, interview_routes, served_card
from a2a_interview.spec import INTERVIEW_URI

ORIGIN = "http://stonework.test"
RPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")

pytestmark = pytest.mark.anyio


def _parts() -> tuple[Any, list[Any], list[Any]]:
    card = agent_card_from_json(reference.unsigned_card(ORIGIN))
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
    return (
        card,
        create_jsonrpc_routes(handler, rpc_url=RPC),
        create_rest_routes(handler, path_prefix=REST),
    )


def bare() -> Any:
    card, jsonrpc, rest = _parts()
    return Starlette(routes=[*create_agent_card_routes(card), *jsonrpc, *rest])


def with_sdk_integration() -> Any:
    card, jsonrpc, rest = _parts()
    routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest,
                              proposals=reference.proposals(ORIGIN))  # fmt: skip
    return Starlette(routes=routes)


def with_asgi_layer() -> Any:
    app = bare()
    card = agent_card_from_json(reference.unsigned_card(ORIGIN))
    declarations = build(served_card(card), reference.proposals(ORIGIN))
    return InterviewMiddleware(app, declarations, serve_card=False)


class Normalizer:
    """Ids by order of first appearance across one conversation; timestamps masked."""

    def __init__(self) -> None:
        self.ids: dict[bytes, bytes] = {}

    def __call__(self, body: bytes) -> bytes:
        def name(match: re.Match[bytes]) -> bytes:
            return self.ids.setdefault(match.group(), b"<id-%d>" % len(self.ids))

        return TIME.sub(b"<time>", UUID.sub(name, body))


Exchange = tuple[int, list[tuple[str, str]], bytes]


def message(text: str, message_id: str) -> dict[str, Any]:
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}}


async def conversation(app: Any, activated: bool) -> list[Exchange]:
    """Play the conversation; return (status, headers, normalized body) per exchange."""
    normalize = Normalizer()
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    if activated:
        headers["A2A-Extensions"] = INTERVIEW_URI
    out: list[Exchange] = []

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as c:

        async def send(method: str, url: str, body: Any = None) -> httpx.Response:
            content = None if body is None else json.dumps(body).encode()
            response = await c.request(method, url, content=content, headers=headers)
            listed = [(k, v) for k, v in response.headers.multi_items() if k != "content-length"]
            if "content-length" in response.headers:
                assert int(response.headers["content-length"]) == len(response.content)
            out.append((response.status_code, listed, normalize(response.content)))
            return response

        def rpc(method: str, params: Any, request_id: int) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

        sent = await send("POST", RPC, rpc("SendMessage", message("hello", "m-1"), 1))
        task_id = sent.json()["result"]["task"]["id"]
        await send("POST", RPC, rpc("GetTask", {"id": task_id}, 2))
        await send("POST", RPC, rpc("GetTask", {"id": task_id, "historyLength": 0}, 3))
        await send("POST", RPC, rpc("SendStreamingMessage", message("stream me", "m-2"), 4))
        await send("POST", RPC, rpc("GetTask", {"id": "no-such-task"}, 5))
        await send(
            "POST",
            RPC,
            rpc(
                "SendMessage",
                {
                    "message": {
                        "messageId": "m-3",
                        "taskId": task_id,
                        "role": "ROLE_USER",
                        "parts": [{"text": "again"}],
                    }
                },
                6,
            ),
        )
        rest_sent = await send("POST", f"{REST}/message:send", message("rest", "m-4"))
        await send("GET", f"{REST}/tasks/{rest_sent.json()['task']['id']}")
        await send("POST", f"{REST}/message:stream", message("rest stream", "m-5"))
        await send("GET", f"{REST}/tasks/no-such-task")
    return out


LAYERS: dict[str, Callable[[], Any]] = {"sdk": with_sdk_integration, "asgi": with_asgi_layer}


@pytest.mark.parametrize("activated", [False, True], ids=["plain", "with-interview-header"])
@pytest.mark.parametrize("layer", LAYERS)
async def test_ordinary_traffic_is_unaffected(layer: str, activated: bool) -> None:
    # interview §3 rule 1: ordinary traffic is unaffected by the interview's presence.
    expected = await conversation(bare(), activated)
    got = await conversation(LAYERS[layer](), activated)
    assert len(got) == len(expected) == 10
    for i, (want, have) in enumerate(zip(expected, got, strict=True)):
        assert have == want, f"exchange {i}"


async def test_the_conversation_exercises_what_it_claims() -> None:
    # The exchanges are real: a completed task, the same task read back, an SSE stream with
    # several events, the SDK's TaskNotFound, on both bindings.
    got = await conversation(with_sdk_integration(), True)
    first, get_task, _, stream, missing, _, rest, rest_get, rest_stream, rest_missing = got
    assert b"TASK_STATE_COMPLETED" in first[2] and b"Stonework demo: hello" in first[2]
    task_id = json.loads(first[2])["result"]["task"]["id"]
    assert json.loads(get_task[2])["result"]["id"] == task_id == "<id-0>"
    assert dict(stream[1])["content-type"].startswith("text/event-stream")
    assert stream[2].count(b"data: ") >= 3 and b"TASK_STATE_COMPLETED" in stream[2]
    assert json.loads(missing[2])["error"]["code"] == -32001
    assert rest[0] == rest_get[0] == 200 and b"Stonework demo: rest" in rest[2]
    assert dict(rest_stream[1])["content-type"].startswith("text/event-stream")
    assert rest_missing[0] == 404
    assert all(b"interview" not in body for _, _, body in got)


async def test_normalization_masks_only_ids_and_times() -> None:
    # Two runs of one app are identical after normalization; ids and times that differ
    # normalize alike, and a changed byte elsewhere is still caught.
    normalize_a, normalize_b = Normalizer(), Normalizer()
    one = await conversation(bare(), False)
    two = await conversation(bare(), False)
    assert one == two
    raw = b'{"id":"0b9ad1a4-7f9e-4a2c-9d0e-6f1b2c3d4e5f","t":"2026-01-02T03:04:05.678Z"}'
    other = b'{"id":"1c9ad1a4-7f9e-4a2c-9d0e-6f1b2c3d4e5f","t":"2026-01-02T03:04:06Z"}'
    assert raw != other and normalize_a(raw) == normalize_b(other)
    assert Normalizer()(raw) != Normalizer()(raw.replace(b'"t"', b'"u"'))
