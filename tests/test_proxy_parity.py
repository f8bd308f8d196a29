"""Ordinary traffic through the proxy is what the agent sends (issue 7, "It is done when").

A real a2a-sdk agent (``test_proxy.upstream_running``: the SDK's own card, JSON-RPC and
HTTP+JSON routes, no code of this library) on one loopback port, the proxy on another.
Each request is sent direct and through the proxy; status, body and every header but the
hop-by-hop ones must be equal. ``Date`` is compared by value too: the proxied one must lie
between a direct answer before and one after (it is upstream's own, passed on).
"""

from __future__ import annotations

import json
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest

from a2a_interview.spec import INTERVIEW_URI
from test_proxy import CARD, REST, RPC, proxy_running, upstream_running

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade"}  # fmt: skip
V1 = {"A2A-Version": "1.0"}
ACT = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10


def _message(text: str) -> dict[str, Any]:
    return {"messageId": "m-" + text, "contextId": "c-1", "role": "ROLE_USER",
            "parts": [{"text": text}]}  # fmt: skip


def _rpc(method: str, params: Any, request_id: Any = 7) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": params}).encode()  # fmt: skip


CASES: list[tuple[str, str, str, dict[str, str], bytes | None]] = [
    ("card", "GET", CARD, {}, None),
    ("card, 1.0", "GET", CARD, V1, None),
    ("card, HEAD", "HEAD", CARD, {}, None),
    ("jsonrpc SendMessage", "POST", RPC, V1, _rpc("SendMessage", {"message": _message("hi")})),
    ("jsonrpc SendMessage activated", "POST", RPC, {**V1, **ACT},
     _rpc("SendMessage", {"message": _message("again")})),
    ("jsonrpc GetTask unknown", "POST", RPC, V1, _rpc("GetTask", {"id": "no-such-task"})),
    ("jsonrpc unknown method", "POST", RPC, V1, _rpc("NoSuchMethod", {})),
    ("jsonrpc interview without activation", "POST", RPC, V1, _rpc("interview/identity", {})),
    ("jsonrpc 0.3 without version", "POST", RPC, {}, _rpc("message/send", {})),
    ("jsonrpc not json", "POST", RPC, V1, b"{not json"),
    ("rest send", "POST", REST + "/message:send", {**V1, "Content-Type": "application/json"},
     json.dumps({"message": _message("rest")}).encode()),
    ("rest task unknown", "GET", REST + "/tasks/no-such-task", V1, None),
    ("rest interview without activation", "GET", REST + "/interview/identity", V1, None),
    ("unknown path", "GET", "/no/such/path?q=1", {}, None),
]  # fmt: skip


def _headers(response: httpx.Response) -> list[tuple[str, str]]:
    return [
        (n.decode("latin-1").lower(), v.decode("latin-1"))
        for n, v in response.headers.raw
        if n.decode("latin-1").lower() not in HOP_BY_HOP
    ]


def _without_date(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(n, v) for n, v in headers if n != "date"]


def _date(headers: list[tuple[str, str]]) -> Any:
    [value] = [v for n, v in headers if n == "date"]
    return parsedate_to_datetime(value)


@pytest.mark.parametrize(("name", "method", "path", "headers", "body"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_direct_and_proxied_responses_are_the_same(
    name: str, method: str, path: str, headers: dict[str, str], body: bytes | None
) -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:

        def send(origin: str) -> httpx.Response:
            return httpx.request(method, origin + path, headers=headers, content=body,
                                 timeout=20)  # fmt: skip

        before = send(up.origin)
        proxied = send(proxy.origin)
        after = send(up.origin)
        assert before.content == after.content, "the agent itself is not deterministic here"
        assert (proxied.status_code, proxied.content) == (before.status_code, before.content)
        assert _without_date(_headers(proxied)) == _without_date(_headers(before))
        assert _date(_headers(before)) <= _date(_headers(proxied)) <= _date(_headers(after))
