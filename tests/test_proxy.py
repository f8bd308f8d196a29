"""The proxy in front of a plain a2a-sdk agent, over real loopback sockets.

The upstream agent (``support/proxy.py``) is written from the SDK's own route factories
(a trivial executor, ``create_agent_card_routes``, ``create_jsonrpc_routes``,
``create_rest_routes``) and uses nothing of this library's serving code: its card
declares the interview and the terms extension, and the same app serves the two
Stonework proposals. The proxy runs on another port. Expected answers come from the card
exactly as upstream served it, built in process (``declarations.build``) and through the
SDK integration (``server/sdk.py``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import re
import signal
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from starlette.applications import Starlette

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.errors import DeclarationError, InterviewError
from a2a_interview.server.proxy import ProxyError, build_proxy
from a2a_interview.server.ratelimit import RateLimiter
from a2a_interview.spec import INTERVIEW_URI, QUESTIONS, SELECTOR_QUESTIONS, TERMS_URI
from a2a_interview.strictjson import loads
from needs import need
from support.ports import closed_port, free_socket
from support.proxy import (
    ACT,
    CARD,
    REST,
    RPC,
    V1,
    Executor,
    Upstream,
    card_json,
    cli_serving,
    first_line,
    proxy_command,
    proxy_running,
    stopped,
    upstream_running,
)

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the upstream agent


def terms_entry(card: dict[str, Any], index: int) -> dict[str, Any]:
    exts = card["capabilities"]["extensions"]
    terms = next(e for e in exts if e["uri"] == TERMS_URI)
    entry: dict[str, Any] = terms["params"]["proposals"][index]
    return entry


# ---------------------------------------------------------------- the proxy


def result_bytes(response: httpx.Response) -> bytes:
    """The raw bytes of a JSON-RPC ``result`` (the last member: keys are sorted)."""
    body = response.content
    marker = b',"result":'
    assert body.startswith(b'{"id":') and body.endswith(b"}"), body[:80]
    return body[body.index(marker) + len(marker) : -1]


def served_card(state: Upstream) -> tuple[bytes, dict[str, Any]]:
    body = httpx.get(state.origin + CARD, timeout=10).content
    card = loads(body)
    assert isinstance(card, dict)
    return body, card


SELECTING = tuple(q for q in QUESTIONS if q in SELECTOR_QUESTIONS)
NO_MATCH = ("no-such-skill", "RECONCILE-STATEMENT")


def asks(skills: list[str]) -> list[tuple[str, dict[str, Any] | None]]:
    out: list[tuple[str, dict[str, Any] | None]] = [(f"interview/{q}", None) for q in QUESTIONS]
    for skill in [*skills, *NO_MATCH]:
        out += [(f"interview/{q}", {"skill": skill}) for q in SELECTING]
    out.append(("interview/anything-else", None))
    return out


def wait_for(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


# ---------------------------------------------------------------- answers


def test_answers_are_byte_identical_to_the_in_process_integration() -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        card_bytes, card = served_card(up)
        expected = build(card, reference.proposals(up.origin)).interview
        skills = list(expected.skill_ids)
        assert len(skills) == 3
        checked = 0
        for method, params in asks(skills):
            response = proxy.rpc(method, params, request_id="ask-1")
            assert response.status_code == 200
            assert response.headers["a2a-extensions"] == INTERVIEW_URI
            question = method.removeprefix("interview/")
            skill = params["skill"] if params else None
            assert result_bytes(response) == expected.answer(question, skill), (method, params)
            checked += 1
        # each question; each selector question per skill and per selector matching none
        assert checked == len(QUESTIONS) + len(SELECTING) * (len(skills) + len(NO_MATCH)) + 1
        # The HTTP+JSON binding: the same bytes as the body.
        for question in QUESTIONS:
            response = proxy.http.get(f"{REST}/interview/{question}", headers=ACT)
            assert response.status_code == 200
            assert response.content == expected.answer(question)
        response = proxy.http.get(
            f"{REST}/interview/terms", params={"skill": "flag-exceptions"}, headers=ACT
        )
        assert response.content == expected.answer("terms", "flag-exceptions")
        # The terms answers project the proposals the upstream serves, by their urls.
        terms = loads(expected.answer("terms"))
        urls = {p["source"]["url"] for p in terms["projections"]}
        assert urls == set(reference.proposals(up.origin))
        # The card: the very bytes upstream serves, which the answers were built from.
        assert proxy.http.get(CARD).content == card_bytes


@pytest.mark.anyio
async def test_answers_match_the_sdk_integration() -> None:
    from a2a_interview.server.sdk import interview_routes

    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        assert up.card is not None
        handler = DefaultRequestHandler(
            agent_executor=Executor(up), task_store=InMemoryTaskStore(), agent_card=up.card
        )
        routes = interview_routes(
            up.card,
            jsonrpc_routes=create_jsonrpc_routes(handler, RPC),
            rest_routes=create_rest_routes(handler, path_prefix=REST),
            proposals=reference.proposals(up.origin),
        )
        transport = httpx.ASGITransport(app=Starlette(routes=list(routes)))
        async with httpx.AsyncClient(transport=transport, base_url=up.origin) as sdk:
            for method, params in asks(list(routes.interview.skill_ids)):
                body: dict[str, Any] = {"jsonrpc": "2.0", "id": 9, "method": method}
                if params is not None:
                    body["params"] = params
                raw = json.dumps(body).encode()
                ours = await sdk.post(RPC, content=raw, headers=ACT)
                theirs = proxy.http.post(RPC, content=raw, headers=ACT)
                assert theirs.status_code == ours.status_code == 200
                assert theirs.content == ours.content, (method, params)
            for question in ("identity", "usage", "terms", "nonsense"):
                ours = await sdk.get(f"{REST}/interview/{question}", headers=ACT)
                theirs = proxy.http.get(f"{REST}/interview/{question}", headers=ACT)
                assert theirs.content == ours.content


# ---------------------------------------------------------------- pass-through


def test_send_message_passes_through() -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        body = json.dumps({
            "jsonrpc": "2.0", "id": 4, "method": "SendMessage",
            "params": {"message": {"messageId": "m-1", "contextId": "c-1", "role": "ROLE_USER",
                                   "parts": [{"text": "hello"}]}},
        }).encode()  # fmt: skip
        for headers in (V1, {**V1, **ACT}):
            direct = httpx.post(up.origin + RPC, content=body, headers=headers, timeout=10)
            proxied = proxy.http.post(RPC, content=body, headers=headers)
            assert proxied.status_code == direct.status_code == 200
            assert proxied.content == direct.content
            assert b"echo: hello" in proxied.content
            assert proxied.headers["content-type"] == direct.headers["content-type"]
            # The SDK never echoes the extension header for its own methods; nor do we.
            assert "a2a-extensions" not in proxied.headers


def _events(text: str) -> list[str]:
    events = [line for line in text.splitlines() if line.startswith("data:")]
    uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    return [re.sub(uuid, "<id>", e) for e in events]


def _stream(http: httpx.Client, url: str, message_id: str, up: Upstream) -> list[str]:
    """Open a streaming call; release the task only once the first events arrived."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": message_id, "contextId": "c-2", "role": "ROLE_USER",
                               "parts": [{"text": "stream"}]}},
    }).encode()  # fmt: skip
    text = ""
    with http.stream("POST", url, content=body, headers=V1) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for chunk in response.iter_text():
            text += chunk
            if text.count("data:") >= 2:
                up.gate(message_id).set()  # only now may the task complete
        assert up.gate(message_id).is_set(), "the first events never arrived on their own"
    return _events(text)


def test_streaming_passes_through_unbuffered() -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        with httpx.Client(timeout=15) as http:
            direct = _stream(http, up.origin + RPC, "s-direct", up)
        proxied = _stream(proxy.http, RPC, "s-proxied", up)
        assert len(proxied) == 3
        assert proxied == direct
        assert "TASK_STATE_COMPLETED" in proxied[-1]
        assert '"text": "done"' in proxied[-1]


def test_a_departed_stream_client_closes_the_upstream_stream() -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        body = json.dumps({
            "jsonrpc": "2.0", "id": 6, "method": "SendStreamingMessage",
            "params": {"message": {"messageId": "s-gone", "contextId": "c-3",
                                   "role": "ROLE_USER", "parts": [{"text": "stream"}]}},
        }).encode()  # fmt: skip
        before = len(up.rpc_ended)
        with proxy.http.stream("POST", RPC, content=body, headers=V1) as response:
            for chunk in response.iter_text():
                if "data:" in chunk:
                    break
        # The task is still waiting on its gate (10 s): only the proxy noticing the
        # departed client can end the upstream response this soon.
        assert wait_for(lambda: len(up.rpc_ended) > before, 5)
        assert not up.gate("s-gone").is_set()


def test_unknown_methods_get_the_upstreams_own_bytes() -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        cases = [
            (b'{"jsonrpc":"2.0","id":3,"method":"interview/identity"}', {}),
            (b'{"jsonrpc":"2.0","id":3,"method":"interview/identity"}',
             {"A2A-Extensions": "https://example.com/other/v1"}),
            (b'{"jsonrpc":"2.0","id":3,"method":"NoSuchMethod"}', ACT),
            (b'{"jsonrpc":"2.0","id":3,"method":', ACT),
        ]  # fmt: skip
        for body, headers in cases:
            direct = httpx.post(up.origin + RPC, content=body, headers=headers, timeout=10)
            proxied = proxy.http.post(RPC, content=body, headers=headers)
            assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
            assert "a2a-extensions" not in proxied.headers
        assert b'"code":-32601' in proxy.http.post(RPC, content=cases[0][0]).content
        # HTTP+JSON without activation: the upstream's own 404.
        direct = httpx.get(up.origin + REST + "/interview/identity", timeout=10)
        proxied = proxy.http.get(REST + "/interview/identity")
        assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
        assert proxied.status_code == 404


def test_requests_pass_byte_for_byte_less_hop_by_hop_headers() -> None:
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        payload = os.urandom(3 * 1024 * 1024 + 7)
        response = proxy.http.put(
            "/echo?b=2&a=1&a=%2F",
            content=payload,
            headers={"X-Custom": "kept", "Connection": "keep-alive, X-Drop-Me",
                     "X-Drop-Me": "1", "Proxy-Authorization": "Basic eA==",
                     "X-Forwarded-For": "203.0.113.9"},
        )  # fmt: skip
        assert response.status_code == 200
        seen = response.json()
        assert seen["method"] == "PUT"
        assert seen["path"] == "/echo"
        assert seen["query"] == "b=2&a=1&a=%2F"
        assert (seen["length"], seen["sha256"]) == (
            len(payload),
            hashlib.sha256(payload).hexdigest(),
        )
        names = [k for k, _ in seen["headers"]]
        headers = dict(seen["headers"])
        assert headers["x-custom"] == "kept"
        assert headers["host"] == proxy.origin.removeprefix("http://")
        # D-PROXY-12: a client's own X-Forwarded-For is dropped (its peer is not
        # in forwarded_allow_ips); the proxy's names the peer.
        assert headers["x-forwarded-for"] == "127.0.0.1"
        assert headers["x-forwarded-proto"] == "http"
        for dropped in ("x-drop-me", "proxy-authorization", "connection"):
            assert dropped not in names
        # PROFILE §3.9: an activated interview call is refused here whatever its size
        # (it used to pass on once over the interview layer's 64 KiB buffer); past 64 KiB
        # it is judged without a parse (D-SERVE-12), and refused whole.
        big = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "interview/identity",
                          "params": {"pad": "x" * 200_000}}).encode()  # fmt: skip
        proxied = proxy.http.post(RPC, content=big, headers=ACT)
        assert proxied.content == (
            b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
        )


def test_interview_calls_are_rate_limited_and_other_traffic_is_not() -> None:
    with (
        upstream_running() as up,
        proxy_running(up.origin, poll=0, limiter=RateLimiter("2/minute")) as proxy,
    ):
        send = json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": "m-9", "role": "ROLE_USER",
                                   "parts": [{"text": "x"}]}},
        }).encode()  # fmt: skip
        for _ in range(5):
            assert proxy.http.post(RPC, content=send, headers=V1).status_code == 200
            assert proxy.http.get(CARD).status_code == 200
        assert proxy.rpc("interview/identity", request_id=1).status_code == 200
        assert proxy.rpc("interview/terms", request_id=2).status_code == 200
        third = proxy.rpc("interview/usage", request_id="third")
        assert third.status_code == 429
        assert int(third.headers["retry-after"]) >= 1
        assert third.content == (
            b'{"error":{"code":-32000,"message":"Too many requests"},"id":"third","jsonrpc":"2.0"}'
        )


# ---------------------------------------------------------------- following the card


def test_the_proxy_follows_upstream_card_changes() -> None:
    errors: list[InterviewError] = []
    with (
        upstream_running() as up,
        proxy_running(up.origin, poll=0.1, on_error=errors.append) as proxy,
    ):
        before = result_bytes(proxy.rpc("interview/capabilities"))
        assert b"Matches a bank statement" in before
        assert wait_for(lambda: 304 in up.card_statuses, 5), "polling never revalidated"

        changed = card_json(up.origin)
        changed["skills"][0]["description"] = "Reconciles statements, now with more care."
        up.set_card(changed)
        _, card = served_card(up)
        expected = build(card, reference.proposals(up.origin)).interview.answer("capabilities")
        assert wait_for(lambda: result_bytes(proxy.rpc("interview/capabilities")) == expected)
        assert proxy.http.get(CARD).content == served_card(up)[0]

        # A changed card whose proposal fails: the last good set keeps serving.
        broken = copy.deepcopy(changed)
        broken["skills"][0]["description"] = "This card must never be served."
        entry = terms_entry(broken, 0)
        entry["digest"] = entry["digest"][:-1] + ("0" if entry["digest"][-1] != "0" else "1")
        up.set_card(broken)
        assert wait_for(lambda: bool(errors), 5)
        time.sleep(0.3)
        assert result_bytes(proxy.rpc("interview/capabilities")) == expected
        assert b"never be served" not in proxy.http.get(CARD).content
        assert isinstance(errors[0], DeclarationError)
        assert "/capabilities/extensions/1/params/proposals/0" in str(errors[0])
        assert "digest_mismatch" in str(errors[0])

        # Fixed again: followed.
        fixed = copy.deepcopy(changed)
        fixed["skills"][1]["description"] = "Flags exceptions, third edition."
        up.set_card(fixed)
        assert wait_for(
            lambda: b"third edition" in result_bytes(proxy.rpc("interview/capabilities"))
        )
        assert b"third edition" in proxy.http.get(CARD).content


# ---------------------------------------------------------------- refusing to start


def _without_interview(origin: str) -> dict[str, Any]:
    card = card_json(origin)
    exts = card["capabilities"]["extensions"]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
    return card


def _required(origin: str) -> dict[str, Any]:
    card = card_json(origin)
    card["capabilities"]["extensions"][0]["required"] = True
    return card


def _bad_digest(origin: str) -> dict[str, Any]:
    card = card_json(origin)
    entry = terms_entry(card, 1)
    entry["digest"] = "sha256:" + "0" * 64
    return card


def _missing_proposal(origin: str) -> dict[str, Any]:
    card = card_json(origin)
    terms_entry(card, 0)["url"] = origin + "/terms/gone.sow.json"
    return card


def _unparseable_interfaces(origin: str) -> dict[str, Any]:
    card = card_json(origin)
    for interface in card["supportedInterfaces"]:
        interface["url"] = "http://[::1/a2a"  # urlsplit raises ValueError
    return card


def _huge(origin: str) -> dict[str, Any]:
    card = card_json(origin)
    card["description"] = "x" * (1 << 20)
    return card


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("card", "error", "message"),
    [
        (_without_interview, DeclarationError, "does not declare the interview"),
        (_required, DeclarationError, "required: true"),
        (_bad_digest, DeclarationError,
         "terms entry /capabilities/extensions/1/params/proposals/1 "
         "(http://127.0.0.1:{port}/terms/flag-exceptions.sow.json): failed verification: "
         "digest_mismatch"),
        (_missing_proposal, DeclarationError,
         # D-PROXY-22: the entry, its URL and the cause, on one line.
         "terms entry /capabilities/extensions/1/params/proposals/0 "
         "(http://127.0.0.1:{port}/terms/gone.sow.json): fetch failed: the server answered 404"),
        (_huge, ProxyError, "larger than 1048576 bytes"),
        # Decisions D-PROXY-6: an interface URL that does not parse names no path to serve.
        (_unparseable_interfaces, ProxyError, "no JSONRPC or HTTP+JSON interface"),
    ],
)  # fmt: skip
async def test_refuses_to_start(
    card: Callable[[str], dict[str, Any]], error: type[Exception], message: str
) -> None:
    with upstream_running(card) as up:
        with pytest.raises(error) as caught:
            await build_proxy(up.origin)
        assert message.format(port=up.origin.rsplit(":", 1)[1]) in str(caught.value)
        assert "\n" not in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/huge-stream" + CARD, "larger than 1048576 bytes"),
        ("/moved" + CARD, "cross-origin redirect was refused"),
        ("/nowhere" + CARD, "HTTP 404"),
    ],
)
async def test_refuses_an_unreadable_card(path: str, message: str) -> None:
    with upstream_running() as up:
        with pytest.raises(ProxyError) as caught:
            await build_proxy(up.origin + path)
        assert message in str(caught.value)


@pytest.mark.anyio
async def test_follows_a_same_origin_redirect() -> None:
    with upstream_running() as up:
        app, live = await build_proxy(up.origin + "/same" + CARD, poll=0)
        try:
            assert live.interview.card == served_card(up)[1]
        finally:
            await app.aclose()


@pytest.mark.anyio
async def test_refuses_an_unreachable_upstream() -> None:
    with closed_port() as port, pytest.raises(ProxyError) as caught:
        await build_proxy(f"http://127.0.0.1:{port}", timeout=3)
    assert "cannot read the upstream card" in str(caught.value)


def test_an_unparseable_interface_url_on_a_followed_card_breaks_nothing() -> None:
    # An upstream card whose JSON-RPC interface URL does not parse: the proxy keeps
    # serving (pass-through and the interface that parses) instead of a 500 on every
    # request once the changed card is swapped in.
    def broken(origin: str) -> dict[str, Any]:
        card = card_json(origin)
        card["supportedInterfaces"][0]["url"] = "http://[::1/a2a/jsonrpc"
        return card

    with upstream_running() as up, proxy_running(up.origin, poll=0.05) as proxy:
        up.set_card(broken(up.origin))
        assert wait_for(lambda: proxy.http.get(CARD).json() == served_card(up)[1], 10)
        rest = proxy.http.get(REST + "/interview/identity", headers=ACT)
        assert rest.status_code == 200 and rest.headers["a2a-extensions"] == INTERVIEW_URI
        message = proxy.rpc("SendMessage", headers=V1)  # passed through: upstream's answer
        assert message.status_code == 200 and b'"jsonrpc":"2.0"' in message.content


class _Streamed(httpx.AsyncByteStream):
    """A body that arrives as a network response's does: streamed, unread until read."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body


def streamed(status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] = ()) -> Any:
    """An upstream reply for ``httpx.MockTransport`` shaped like a real one: its body
    streamed (an ``httpx.Response(content=...)`` is read already, which no socket gives),
    with its ``Content-Length``. The client reads it as it reads the network."""
    length = [(b"content-length", str(len(body)).encode())]
    return httpx.Response(status, headers=[*headers, *length], stream=_Streamed(body))


@pytest.mark.anyio
async def test_an_upstream_etag_with_obs_text_is_sent_back_as_received() -> None:
    # RFC 9110 §8.8.3: an entity-tag may carry obs-text. The proxy revalidates with the
    # bytes it got; decoding them made every poll fail (UnicodeEncodeError) and the proxy
    # stopped following the upstream card.
    origin = "http://127.0.0.1:9"
    cards = [reference.unsigned_card(origin)]
    sent: list[bytes | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == CARD:
            if "a2a-version" not in request.headers:  # the default variant's requests
                sent.append(request.headers.get("if-none-match", "").encode("latin-1") or None)
            tag = b'"v\xff' + str(len(cards)).encode() + b'"'
            body = json.dumps(cards[-1]).encode()
            return streamed(200, body, [(b"etag", tag)])
        return streamed(200, reference.proposals(origin)[str(request.url)])

    app, live = await build_proxy(origin, poll=0, transport=httpx.MockTransport(handler))
    try:
        cards.append({**cards[0], "name": "Stonework, renamed"})
        assert await live.reload()
        assert live.interview.card["name"] == "Stonework, renamed"
        assert sent == [None, b'"v\xff1"']
    finally:
        await app.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("location", ["http://[", "//[::1", "http://[zz]/"])
async def test_a_redirect_to_an_unparseable_location_is_a_proxy_error(location: str) -> None:
    # Decisions D-PROXY-7 and D-PROXY-9: any breach reading the card is a
    # ProxyError (refusing to start, exit 3); a proposal's is fetch_failed. A Location
    # urljoin cannot parse escaped as a bare ValueError: a traceback at start, a 500 on
    # a card request, a crashed variant load.
    origin = "http://127.0.0.1:9"

    def handler(request: httpx.Request) -> httpx.Response:
        return streamed(302, b"", [(b"location", location.encode())])

    with pytest.raises(ProxyError) as caught:
        await build_proxy(origin, poll=0, transport=httpx.MockTransport(handler))
    assert "cannot read the upstream card" in str(caught.value)
    assert location not in str(caught.value)  # nothing of the peer's in the message


@pytest.mark.anyio
async def test_refuses_a_malformed_upstream_url() -> None:
    # build_proxy raises ProxyError for an unusable upstream, never a bare ValueError.
    with pytest.raises(ProxyError):
        await build_proxy("http://[::1/")


def test_a_request_target_that_is_not_a_path_is_not_forwarded() -> None:
    # Only origin-form targets pass through: `OPTIONS *` got a 500 (httpx.InvalidURL
    # from the upstream origin + "*"), and `@host/x` would name another host.
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        host, port = proxy.origin.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            head = b""
            while b"\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
        assert head.startswith(b"HTTP/1.1 400 "), head
        assert proxy.http.get(CARD).status_code == 200  # and the proxy serves on


def test_command_names_an_ipv6_listen_address_in_brackets() -> None:
    # The start-up line is a URL: an IPv6 host goes in brackets (RFC 3986 §3.2.2).
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        need(False, "an IPv6 loopback (::1)", "enable IPv6 on lo, as CI's machine has it")
    with upstream_running() as up:
        process = proxy_command(
            "--upstream", up.origin, "--port", "0", "--host", "::1", "--poll", "0"
        )
        try:
            first = first_line(process)
            assert first.startswith("a2a-interview proxy: serving at http://[::1]:"), first
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=20)
        finally:
            stopped(process)
        assert process.returncode == 0, err


# ---------------------------------------------------------------- the command


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_command_refuses_to_start_with_one_clear_line() -> None:
    with upstream_running(_bad_digest) as up, closed_port() as port:
        # The port is held (bound, not listening): if the command bound it, it would say
        # "cannot listen" instead; it refuses before it binds anything.
        process = proxy_command("--upstream", up.origin, "--port", str(port))
        _, err = process.communicate(timeout=30)
        assert process.returncode == 3
        assert "Traceback" not in err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err
        assert lines[0].startswith("a2a-interview proxy: refusing to start: ")
        assert "/capabilities/extensions/1/params/proposals/1" in lines[0]
        assert "digest_mismatch" in lines[0]


def test_command_serves_and_stops_cleanly() -> None:
    with upstream_running() as up:
        process, port, first = cli_serving("--upstream", up.origin, "--poll", "0")
        try:
            assert first.startswith(f"a2a-interview proxy: serving at http://127.0.0.1:{port}/")
            response = httpx.post(
                f"http://127.0.0.1:{port}{RPC}",
                content=b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}',
                headers=ACT, timeout=10,
            )  # fmt: skip
            _, card = served_card(up)
            expected = build(card, reference.proposals(up.origin)).interview.answer("identity")
            assert result_bytes(response) == expected
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=20)
        finally:
            stopped(process)
        assert process.returncode == 0, err
        assert "Traceback" not in err


def test_command_usage_errors() -> None:
    process = proxy_command("--upstream", "ftp://example.com/", "--port", "9")
    _, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert "not an http:// or https:// URL" in err
    process = proxy_command("--upstream", "http://127.0.0.1:99999/", "--port", "9")
    _, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert "unusable port" in err
    # A malformed IPv6 host makes urlsplit raise: a usage error, not a traceback.
    process = proxy_command("--upstream", "http://[::1/", "--port", "9")
    _, err = process.communicate(timeout=30)
    assert (process.returncode, "Traceback" in err) == (2, False), err
    assert "unusable port or host" in err
    process = proxy_command(
        "--upstream", "http://127.0.0.1:9/", "--port", "9", "--redis", "redis://[::1"
    )
    _, err = process.communicate(timeout=30)
    assert (process.returncode, "Traceback" in err) == (2, False), err
    assert "is not a redis:// or rediss:// URL" in err
    process = proxy_command(
        "--upstream", "http://127.0.0.1:9/", "--port", "9", "--rate-limit", "lots"
    )
    _, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert "is not a limit like 300/minute" in err
    assert "Traceback" not in err


def test_command_refuses_an_unreachable_rate_limit_store() -> None:
    with closed_port() as port:
        process = proxy_command(
            "--upstream", "http://127.0.0.1:9/", "--port", "0",
            "--redis", f"redis://127.0.0.1:{port}/0",
        )  # fmt: skip
        _, err = process.communicate(timeout=30)
    assert process.returncode == 3
    assert "refusing to start: the rate limit store does not answer [proxy]" in err
    assert "Traceback" not in err


def test_a_failing_upstream_is_logged_once_per_failure(caplog: pytest.LogCaptureFixture) -> None:
    def warnings() -> list[str]:
        return [
            r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "could not follow" in r.getMessage()
        ]  # fmt: skip

    caplog.set_level(logging.INFO, logger="a2a_interview.proxy")
    with upstream_running() as up, proxy_running(up.origin, poll=0.05):
        good = card_json(up.origin)
        up.set_card(_bad_digest(up.origin))
        assert wait_for(lambda: len(warnings()) == 1, 5)
        time.sleep(0.5)  # ten more polls of the same broken card
        assert len(warnings()) == 1
        assert "proposals/1 (" in warnings()[0]
        assert "failed verification: digest_mismatch [declaration]" in warnings()[0]
        up.set_card(good)
        assert wait_for(lambda: any("following the upstream card again" in r.getMessage()
                                    for r in caplog.records), 5)  # fmt: skip
        up.set_card(_bad_digest(up.origin))
        assert wait_for(lambda: len(warnings()) == 2, 5)


@pytest.mark.anyio
async def test_the_verifier_finds_the_proxied_agent_consistent() -> None:
    # D-PROXY-2: `verify` against the proxy in front of a plain a2a-sdk agent reports
    # consistent. As deployed, the card names the proxy's address for its interfaces
    # (the proxy rewrites nothing); the proposals stay where upstream serves them.
    from a2a_interview.verifier import verify

    sock = free_socket()
    proxy_origin = f"http://127.0.0.1:{sock.getsockname()[1]}"

    def card(origin: str) -> dict[str, Any]:
        value = card_json(origin)
        for interface in value["supportedInterfaces"]:
            interface["url"] = interface["url"].replace(origin, proxy_origin)
        return value

    with upstream_running(card) as state, proxy_running(state.origin, sock) as proxy:
        record = await verify(proxy.origin + "/", churn_delay=0)
    document = record.to_json()
    assert document["outcome"] == "consistent", document["runs"][0]["conflicts"]
    asked = {call["interface"] for call in document["runs"][0]["calls"]}
    assert asked == {proxy_origin + RPC, proxy_origin + REST}
    assert [p["result"] for p in document["runs"][0]["proposals"]] == ["ok", "ok"]
