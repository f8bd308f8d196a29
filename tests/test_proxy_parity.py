"""Ordinary traffic through the proxy is what the agent sends (D-TEST-10).

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
from support.proxy import CARD, REST, RPC, proxy_running, upstream_running

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


CARD_FILLED = ("cache-control", "etag", "last-modified")


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
        got = _without_date(_headers(proxied))
        if path == CARD:
            # D-PROXY-33: the card's caching fields upstream left out are the proxy's, and
            # only those (a2a-sdk's card route sends an ETag and neither of these).
            sent = {n for n, _ in _headers(before)}
            filled = [(n, v) for n, v in got if n in CARD_FILLED and n not in sent]
            assert [n for n, _ in filled] == [n for n in CARD_FILLED if n not in sent]
            got = [h for h in got if h not in filled]
        assert got == _without_date(_headers(before))
        assert _date(_headers(before)) <= _date(_headers(proxied)) <= _date(_headers(after))


# ------------------------------------------------------------ PROFILE §3.9: what the proxy judges

from a2a_interview import reference  # noqa: E402
from a2a_interview.declarations import build  # noqa: E402
from support.recorder import ACT as WIRE_ACT  # noqa: E402
from support.recorder import EXT, recorder, request  # noqa: E402
from support.spellings import (  # noqa: E402
    CARD_VARIANTS,
    CODED,
    IDENTITY,
    PADDED,
    PADDED_BATCH,
    REST_VARIANTS,
    RPC_VARIANTS,
    UNJUDGED,
)

INVALID = b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'


def _answer(origin: str) -> bytes:
    interview = build(reference.unsigned_card(origin), reference.proposals(origin)).interview
    return b'{"id":7,"jsonrpc":"2.0","result":' + interview.answer("identity") + b"}"


def _wire(target: bytes) -> bool:
    # What a client can put on a request line (http.client sends the target as Latin-1).
    return target.isascii() and b"\\" not in target


def test_compressed_case_variant_and_large_interview_calls_never_reach_upstream() -> None:
    # D-SERVE-23, PROFILE §3.9: through the proxy, over loopback;
    # the upstream records every request it is sent.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        answer = _answer(up.origin)
        for coding, pack in CODED:
            headers = [*WIRE_ACT, ("Content-Encoding", coding)]
            got = request(proxy.origin, "POST", RPC, headers, pack(IDENTITY))
            assert (got[0], got[2]) == (200, answer), coding
        for coding, body, status in UNJUDGED:
            got = request(proxy.origin, "POST", RPC, [*WIRE_ACT, ("Content-Encoding", coding)],
                          body)  # fmt: skip
            assert got[0] in (status, 413), coding  # the 11 MiB bomb: past --max-body
        for target in filter(_wire, RPC_VARIANTS):
            got = request(proxy.origin, "POST", target.decode("latin-1"), WIRE_ACT, IDENTITY)
            assert (got[0], got[2]) == (200, answer), target
        for body in (PADDED, PADDED_BATCH):
            got = request(proxy.origin, "POST", RPC, WIRE_ACT, body)
            assert (got[0], got[2]) == (200, INVALID)
        for target in filter(_wire, REST_VARIANTS):
            got = request(proxy.origin, "GET", target.decode("latin-1"), WIRE_ACT)
            assert got[0] == 200 and got[2].startswith(b'{"declared":true'), target
        assert up.started == [], up.started


def _undeclared(origin: str) -> dict[str, Any]:
    card = reference.unsigned_card(origin)
    card["capabilities"]["extensions"] = [
        e for e in card["capabilities"]["extensions"] if e["uri"] != INTERVIEW_URI
    ]
    return card


def test_the_card_in_any_case_is_the_declared_card_never_upstreams_raw_one() -> None:
    # D-SERVE-11: `GET /.well-known/AGENT-card.json` behind --declare returned the
    # upstream's raw card (no declaration, internal interface URLs).
    with recorder(_undeclared) as up, proxy_running(up.origin, poll=0, declare=True) as proxy:
        served = proxy.http.get(CARD).content
        assert INTERVIEW_URI.encode() in served
        for target in filter(_wire, CARD_VARIANTS):
            got = request(proxy.origin, "GET", target.decode("latin-1"))
            assert (got[0], got[2]) == (200, served), target


def _other_path_for_1_0(origin: str) -> dict[str, Any]:
    card = reference.unsigned_card(origin)
    for item in card["supportedInterfaces"]:
        item["url"] = item["url"].replace("/a2a/", "/v1/")
    return card


def test_interview_paths_of_every_variant_are_judged_for_every_client() -> None:
    # D-PROXY-25: an activated call to the default variant's path with
    # A2A-Version: 1.0 was forwarded when the 1.0 variant names another path; seven
    # card GETs with 9.0.1 ... 9.0.7 filled the variant slots for good.
    with recorder() as up:
        up.set_card(_other_path_for_1_0(up.origin), version="1.0")
        with proxy_running(up.origin, poll=0) as proxy:
            up.forget()
            for n in range(1, 8):
                proxy.http.get(CARD, headers={"A2A-Version": f"9.0.{n}"})
            v1 = proxy.http.get(CARD, headers={"A2A-Version": "1.0"}).content
            assert b"/v1/jsonrpc" in v1
            for target in (RPC, "/v1/jsonrpc", "/V1/JSONRPC"):
                got = request(proxy.origin, "POST", target, WIRE_ACT, IDENTITY)
                assert got[0] == 200 and b'"result"' in got[2], target
            for target in (RPC, "/v1/jsonrpc"):  # no version: 0.3, which the card lacks
                got = request(proxy.origin, "POST", target, EXT, IDENTITY)
                assert json.loads(got[2])["error"]["code"] == -32009, target
            sent = [t for t in up.started if not t.startswith(CARD.encode())]
            assert sent == [], sent
            versions = [dict(h).get(b"a2a-version") for _, t, h, _ in up.seen]
            assert not any(v and v.startswith(b"9.") for v in versions), versions


def test_an_unverified_variant_is_tried_again_once_its_entry_expires(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # D-PROXY-25 (unverified entries never left): a guard that a failed variant's
    # entry expires and its load is tried again; the slots it used to fill are now only
    # for declared versions (test_interview_paths_of_every_variant_are_judged_...).
    from a2a_interview.server.proxy import upstream as module

    monkeypatch.setattr(module, "UNVERIFIED_RETRY", 0.0)
    with recorder() as up:
        bad = reference.unsigned_card(up.origin)
        bad["capabilities"]["extensions"][1]["params"]["proposals"][0]["digest"] = (
            "sha256:" + "1" * 64
        )
        up.set_card(bad, version="1.0")
        with proxy_running(up.origin, poll=0) as proxy:
            assert proxy.http.get(CARD, headers={"A2A-Version": "1.0"}).status_code == 502
            up.set_card(reference.unsigned_card(up.origin), version="1.0")
            assert proxy.http.get(CARD, headers={"A2A-Version": "1.0"}).status_code == 200


def test_interview_calls_through_the_proxy_carry_the_hosts_version_negotiation() -> None:
    # D-SERVE-24, PROFILE §3.10: the real a2a-sdk upstream's answer to an ordinary
    # method, through the proxy, under none, 0.3, 1.0 and 2.0 (and oddities) decides.
    with upstream_running() as up, proxy_running(up.origin, poll=0) as proxy:
        for version in (None, "", "0.3", "1.0", "2.0", "1.5", "1.0.1", "abc"):
            vh = {} if version is None else {"A2A-Version": version}
            host = proxy.http.post(
                RPC,
                content=_rpc("GetTask", {"id": "t"}),
                headers={"Content-Type": "application/json", **vh},
            )
            refused = host.json()["error"]["code"] == -32009
            ours = proxy.http.post(
                RPC,
                content=IDENTITY,
                headers={"Content-Type": "application/json", "A2A-Extensions": INTERVIEW_URI, **vh},
            )
            if refused:
                assert ours.json()["error"]["code"] == -32009, version
            elif version in (None, "0.3", "1.0", "2.0"):
                assert "result" in ours.json(), version
            rest_host = proxy.http.get(REST + "/tasks/t", headers=vh)
            rest = proxy.http.get(
                REST + "/interview/identity", headers={"A2A-Extensions": INTERVIEW_URI, **vh}
            )
            if refused:
                assert rest.status_code == rest_host.status_code == 400, version
            elif version in (None, "0.3", "1.0", "2.0"):
                assert rest.status_code == 200, version
