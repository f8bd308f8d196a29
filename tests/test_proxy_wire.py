"""The proxy on the wire: what reaches upstream, byte for byte, and what never does.

The upstream here is a bare ASGI app that records every request it is handed (the raw
target, the headers in order, the body) and serves the Stonework card and proposals.
Requests are sent with ``http.client`` so that targets go out exactly as written (httpx
would normalize them). Everything runs over real loopback sockets.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.card import generate_key, public_jwk, verify_card
from a2a_interview.declarations import interview_entry, load
from a2a_interview.errors import DeclarationError
from a2a_interview.projection import Interview
from a2a_interview.server.proxy import ProxyError, build_proxy, trusted_peers
from a2a_interview.spec import INTERVIEW_URI, TERMS_URI
from a2a_interview.strictjson import loads
from needs import need
from support.ports import free_socket
from support.proxy import V1, proxy_command, proxy_running, upstream_running
from support.recorder import (
    ACT,
    EXT,
    proxy_served,
    recorder,
    request,
    signed_undeclared,
    undeclared,
)

CARD = "/.well-known/agent-card.json"
RPC = "/a2a/jsonrpc"
REST = "/a2a/rest"


# ---------------------------------------------------------------- a recording upstream


def rpc_body(method: str, request_id: int = 1, params: Any = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


def interview(origin: str) -> Interview:
    declarations = load(json.dumps(reference.unsigned_card(origin)).encode(),
                        reference.proposals(origin))  # fmt: skip
    return declarations.interview


def identity(origin: str) -> bytes:
    return interview(origin).answer("identity", None)


# ---------------------------------------------------------------- every spelling


RPC_SPELLINGS = [
    "/a2a/x/../jsonrpc", "/a2a/./jsonrpc", "/a2a//jsonrpc", "/a2a/%2e/jsonrpc",
    "/a2a/%2E%2E/a2a/jsonrpc", "/a2a/jsonrpc/", "/a2a/json%72pc", "//a2a/jsonrpc",
    "/a2a%2Fjsonrpc", "/a2a/jsonrpc?x=1",
]  # fmt: skip
REST_SPELLINGS = [
    "/a2a/rest/x/../interview/identity", "/a2a/rest/./interview/identity",
    "/a2a/rest//interview/identity", "/a2a/rest/%69nterview/identity",
    "/a2a/rest/interview/%69dentity", "/a2a/rest/interview//identity",
    "/a2a%2Frest/interview/identity", "/a2a/rest/interview/identity/",
]  # fmt: skip


@pytest.mark.parametrize("target", RPC_SPELLINGS)
def test_activated_jsonrpc_calls_in_any_spelling_are_answered_not_passed_on(target: str) -> None:
    # PROFILE §3.9; D-PROXY-27: these reached the upstream.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        status, headers, body = request(proxy.origin, "POST", target, ACT,
                                         rpc_body("interview/identity"))  # fmt: skip
        assert status == 200
        assert body == b'{"id":1,"jsonrpc":"2.0","result":' + identity(up.origin) + b"}"
        assert ("a2a-extensions", INTERVIEW_URI) in headers
        assert up.started == [], "the upstream saw an interview call"


@pytest.mark.parametrize("target", REST_SPELLINGS)
def test_activated_rest_calls_in_any_spelling_are_answered_not_passed_on(target: str) -> None:
    # PROFILE §3.9 and §3b; D-PROXY-27.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        status, _, body = request(proxy.origin, "GET", target, ACT)
        assert (status, body) == (200, identity(up.origin))
        assert up.started == []


def test_the_namespace_spelled_without_its_last_slash_is_refused_not_passed_on() -> None:
    # `/interview/.` normalizes to `/interview`: still the namespace (PROFILE §3.9), so
    # the standard refusal, never upstream.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        for target in ("/a2a/rest/interview/.", "/a2a/rest/interview//"):
            status, _, body = request(proxy.origin, "GET", target, ACT)
            assert (status, body) == (200, interview(up.origin).refusal)
        assert up.started == []


@pytest.mark.parametrize("target", ["/a2a/jsonrpc", "/a2a/./jsonrpc"])
def test_activated_batches_naming_the_namespace_are_refused_whole(target: str) -> None:
    # PROFILE §3.9: a batch with any interview element is refused with one -32600.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        batch = b"[" + rpc_body("SendMessage", 1, {}) + b"," + rpc_body("interview/usage", 2) + b"]"
        status, headers, body = request(proxy.origin, "POST", target, ACT, batch)
        assert status == 200
        assert (
            body
            == b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
        )
        assert ("a2a-extensions", INTERVIEW_URI) in headers
        assert up.started == []


def test_a_large_activated_interview_call_is_answered_not_passed_on() -> None:
    # A body over the old 64 KiB interview buffer used to pass to upstream unread; past
    # 64 KiB it is now judged without a parse and refused whole (D-SERVE-12).
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        body = rpc_body("interview/identity", 3, {"pad": "x" * 300_000})
        status, _, answer = request(proxy.origin, "POST", RPC, ACT, body)
        assert (status, answer) == (
            200, b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
        )  # fmt: skip
        assert up.started == []


@pytest.mark.parametrize(
    "target",
    ["/.well-known/./agent-card.json", "/.well-known//agent-card.json",
     "/.well-known/%61gent-card.json", "/x/../.well-known/agent-card.json"],
)  # fmt: skip
def test_the_card_in_any_spelling_is_the_verified_card(target: str) -> None:
    # D-PROXY-27: `/.well-known/./agent-card.json` returned upstream's live card.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        verified = up.cards[""][0]
        broken = reference.unsigned_card(up.origin)
        broken["capabilities"]["extensions"][1]["params"]["proposals"][0]["digest"] = (
            "sha256:" + "0" * 64
        )
        broken["name"] = "Not verified"
        up.set_card(broken)
        status, _, body = request(proxy.origin, "GET", target)
        assert (status, body) == (200, verified)
        assert target.encode() not in up.targets()


# ---------------------------------------------------------------- byte for byte


@pytest.mark.parametrize(
    "target",
    ["/echo/a/../b", "/echo/./c//d", "/echo/%2e%2e/e", "/echo/{x}?q={}&r=%7B%7d",
     "/echo/%7e/~/%41", "/a2a/x/../jsonrpc", "/echo?a=1&a=2&b"],
)  # fmt: skip
def test_requests_are_passed_on_with_the_target_as_received(target: str) -> None:
    # PROFILE §3.9; D-PROXY-27: httpx removed dot segments and re-encoded `{}`.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        status, _, _ = request(proxy.origin, "POST", target, (), b'{"jsonrpc":"2.0"}')
        assert status == 200
        assert up.targets() == [target.encode()]


def test_headers_are_passed_on_in_order_and_the_body_unchanged() -> None:
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        sent = [("X-Zeta", "1"), ("A2A-Version", "1.0"), ("X-Alpha", "2"), ("X-Zeta", "3"),
                ("Content-Type", "application/json")]  # fmt: skip
        payload = bytes(range(256)) * 17
        request(proxy.origin, "PUT", "/echo", sent, payload)
        [(method, _, headers, body)] = up.seen
        assert (method, body) == ("PUT", payload)
        names = [(n.decode(), v.decode()) for n, v in headers]
        expected = [("host", proxy.origin.removeprefix("http://")),
                    *((n.lower(), v) for n, v in sent),
                    ("content-length", str(len(payload))), ("x-forwarded-for", "127.0.0.1"),
                    ("x-forwarded-proto", "http")]  # fmt: skip
        assert names == expected


# ---------------------------------------------------------------- slow clients


@contextmanager
def slow_client(origin: str, target: str = "/echo", length: int = 100) -> Iterator[socket.socket]:
    """A client that sent its headers and one byte of a ``length``-byte body."""
    parts = urlsplit(origin)
    assert parts.hostname is not None and parts.port is not None
    sock = socket.create_connection((parts.hostname, parts.port), timeout=20)
    try:
        sock.sendall(f"POST {target} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                     f"Content-Length: {length}\r\n\r\nx".encode())  # fmt: skip
        yield sock
    finally:
        sock.close()


def read_reply(sock: socket.socket) -> bytes:
    """One whole HTTP/1.1 response with a Content-Length, read from ``sock``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))  # fmt: skip
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, data
        body += chunk
    return head + b"\r\n\r\n" + body


def test_a_slow_body_takes_no_upstream_connection_until_it_is_complete() -> None:
    # D-PROXY-29: a request body dripping in held an upstream connection.
    with recorder() as up, proxy_running(up.origin, poll=0, upstream_connections=2) as proxy:
        up.forget()
        with (
            slow_client(proxy.origin, "/slow/1") as a,
            slow_client(proxy.origin, "/slow/2"),
            slow_client(proxy.origin, "/slow/3"),
        ):
            # Three clients hold their bodies back; two upstream connections exist.
            for i in range(3):
                status, _, _ = request(proxy.origin, "GET", f"/ordinary/{i}")
                assert status == 200
            assert not [t for t in up.started if t.startswith(b"/slow")]
            a.sendall(b"y" * 99)
            reply = read_reply(a)
            assert reply.startswith(b"HTTP/1.1 200")
            assert b"/slow/1" in up.started


def test_a_body_not_sent_in_time_is_408_and_never_reaches_upstream() -> None:
    with recorder() as up, proxy_running(up.origin, poll=0, body_timeout=0.5) as proxy:
        up.forget()
        with slow_client(proxy.origin, "/slow") as sock:
            reply = read_reply(sock)  # the proxy answers after body_timeout
            assert reply.startswith(b"HTTP/1.1 408")
            assert reply.endswith(b"request body not received in time\n")
        assert up.started == []


def test_reads_under_way_each_run_out_on_their_own_deadline() -> None:
    """D-PROXY-29, D-PROXY-50: the front keeps every body read's deadline with one timer.
    A slow body begun later still gets its 408 after the first one's (the timer is set
    again for it), while a request between them and a body completed in time are
    answered; upstream never sees the slow ones."""
    with recorder() as up, proxy_running(up.origin, poll=0, body_timeout=2.0) as proxy:
        up.forget()
        with (
            slow_client(proxy.origin, "/slow/1") as first,
            slow_client(proxy.origin, "/slow/2", length=2) as completed,
        ):
            status, _, _ = request(proxy.origin, "GET", "/ordinary")
            assert status == 200
            completed.sendall(b"y")
            assert read_reply(completed).startswith(b"HTTP/1.1 200")
            with slow_client(proxy.origin, "/slow/3") as later:
                assert read_reply(first).startswith(b"HTTP/1.1 408")
                assert read_reply(later).startswith(b"HTTP/1.1 408")
        assert b"/slow/2" in up.started
        assert [t for t in up.started if t in (b"/slow/1", b"/slow/3")] == []


def test_a_body_over_the_bound_is_413_and_never_reaches_upstream() -> None:
    with recorder() as up, proxy_running(up.origin, poll=0, max_body=1000) as proxy:
        up.forget()
        status, _, body = request(proxy.origin, "POST", "/echo", (), b"x" * 1001)
        assert (status, body) == (413, b"request body too large\n")
        # Without a Content-Length: counted as it arrives.
        chunked = [("Transfer-Encoding", "chunked")]
        parts = urlsplit(proxy.origin)
        assert parts.port is not None
        conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=20)
        conn.request("POST", "/echo", body=iter([b"x" * 600, b"y" * 600]),
                     headers=dict(chunked), encode_chunked=True)  # fmt: skip
        assert conn.getresponse().status == 413
        conn.close()
        status, _, _ = request(proxy.origin, "POST", "/echo", (), b"x" * 1000)
        assert status == 200
        assert up.targets() == [b"/echo"]


# ---------------------------------------------------------------- the card's headers


def test_the_card_carries_upstreams_caching_headers_and_fills_only_those_it_left_out() -> None:
    # D-PROXY-26: upstream's own caching fields are served as they came, never replaced.
    # D-PROXY-33: the ones it leaves out are the proxy's (what the A2A TCK looks for).
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        response = httpx.get(proxy.origin + CARD)
        assert response.content == up.cards[""][0]
        assert response.headers.get_list("cache-control") == ["public, max-age=60"]
        assert len(response.headers.get_list("etag")) == 1
        assert len(response.headers.get_list("last-modified")) == 1
        cached = [(b"cache-control", b"max-age=5, must-revalidate"), (b"etag", b'"up-1"'),
                  (b"vary", b"A2A-Version, Accept"), (b"expires", b"Thu, 01 Dec 2099 16:00:00 GMT"),
                  (b"last-modified", b"Tue, 15 Nov 1994 12:45:26 GMT")]  # fmt: skip
        up.set_card(reference.unsigned_card(up.origin), cached)
        response = httpx.get(proxy.origin + CARD)
        got = [(n, v) for n, v in response.headers.raw if n.lower() in dict(cached)]
        assert got == cached  # each once, upstream's own
        again = httpx.get(proxy.origin + CARD, headers={"If-None-Match": '"up-1"'})
        assert (again.status_code, again.content) == (304, b"")
        assert again.headers["etag"] == '"up-1"'


def test_the_operator_may_set_the_cards_cache_control() -> None:
    with recorder() as up, proxy_running(up.origin, poll=0, card_cache_control="no-store") as proxy:
        up.forget()
        up.set_card(reference.unsigned_card(up.origin), [(b"cache-control", b"max-age=600")])
        response = httpx.get(proxy.origin + CARD)
        assert response.headers.get_list("cache-control") == ["no-store"]


def _variant(origin: str) -> dict[str, Any]:
    card = reference.unsigned_card(origin)
    card["version"] = "1.4.0-for-1.0-clients"
    return card


def _with_03(card: dict[str, Any]) -> dict[str, Any]:
    """``card`` also declaring 0.3 on both bindings (a variant slot is only for a version
    the card's interfaces list: D-PROXY-25)."""
    card["supportedInterfaces"] += [
        {**item, "protocolVersion": "0.3"} for item in card["supportedInterfaces"]
    ]
    return card


def test_card_variants_by_a2a_version_are_each_verified_and_answered_from() -> None:
    # D-PROXY-25: a2a-js serves a different card by A2A-Version; the proxy served
    # one for all and dropped `Vary`.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        vary = [(b"vary", b"A2A-Version")]
        up.set_card(_with_03(reference.unsigned_card(up.origin)), vary)
        up.set_card(_variant(up.origin), vary, version="1.0")
        bad = reference.unsigned_card(up.origin)
        bad["capabilities"]["extensions"][1]["params"]["proposals"][0]["digest"] = (
            "sha256:" + "1" * 64
        )
        up.set_card(bad, vary, version="0.3")
        plain = httpx.get(proxy.origin + CARD)
        v1 = httpx.get(proxy.origin + CARD, headers={"A2A-Version": "1.0"})
        assert plain.content == up.cards[""][0]
        assert v1.content == up.cards["1.0"][0]
        assert plain.headers["vary"] == v1.headers["vary"] == "A2A-Version"

        def ask(*version: tuple[str, str]) -> bytes:
            return request(proxy.origin, "GET", REST + "/interview/identity", [*EXT, *version])[2]

        assert b'"1.4.0-for-1.0-clients"' in ask(("A2A-Version", "1.0"))
        assert b'"1.4.0"' in ask()
        # A variant that does not verify is never served nor answered from.
        assert httpx.get(proxy.origin + CARD, headers={"A2A-Version": "0.3"}).status_code == 502
        status, _, body = request(proxy.origin, "GET", REST + "/interview/identity",
                                  [*EXT, ("A2A-Version", "0.3")])  # fmt: skip
        assert (status, body) == (502, b"upstream card did not verify\n")
        # Ordinary activated traffic of that version is not held hostage to it.
        status, _, _ = request(proxy.origin, "POST", RPC, [*EXT, ("A2A-Version", "0.3")],
                               rpc_body("SendMessage", 5, {}))  # fmt: skip
        assert status == 200
        assert up.targets()[-1] == RPC.encode()


def test_the_default_variant_is_asked_for_without_the_clients_a2a_version() -> None:
    # Decisions D-PROXY-25: a version that is not a key (not a
    # version, or past MAX_VARIANTS) is the default variant, fetched without the header.
    # The client's header went upstream on every card request, so a version-specific
    # card never matched the default's bytes: a re-verification each time, and one lock
    # kept per distinct version, without bound.
    from a2a_interview.server.proxy import MAX_VARIANTS

    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.set_card(_variant(up.origin), version="junk")
        up.set_card(_variant(up.origin), version="9.9")
        for n in range(1, MAX_VARIANTS):  # fill the variants (same bytes as the default)
            assert httpx.get(proxy.origin + CARD, headers={"A2A-Version": f"{n}.0"}).is_success
        for version in ("junk", "9.9"):
            up.forget()
            got = httpx.get(proxy.origin + CARD, headers={"A2A-Version": version})
            assert (got.status_code, got.content) == (200, up.cards[""][0])
            card_requests = [h for _, t, h, _ in up.seen if t == CARD.encode()]
            assert len(card_requests) == 1, version
            assert all(n.lower() != b"a2a-version" for n, _ in card_requests[0]), version
            assert "date" in got.headers  # upstream's live response, not the fallback
        locks = proxy.app.upstream._locks  # the bound under test
        assert set(locks) <= {"", *(f"{n}.0" for n in range(1, MAX_VARIANTS))}


def test_a_variant_that_did_not_verify_is_not_fetched_again_on_every_request() -> None:
    # Decisions D-PROXY-25 (a variant that never verified is never
    # served) and the proxy's bounds: every activated request naming such a version made
    # the proxy fetch that card and all its proposals again, before any rate limit. A
    # version the card's interfaces do not list never takes a slot nor a fetch (D-PROXY-25):
    # it gets the host's -32009 mapping (PROFILE §3.10).
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        bad = _with_03(reference.unsigned_card(up.origin))
        bad["capabilities"]["extensions"][1]["params"]["proposals"][0]["digest"] = (
            "sha256:" + "1" * 64
        )
        up.set_card(_with_03(reference.unsigned_card(up.origin)))
        up.set_card(bad, version="0.3")
        assert httpx.get(proxy.origin + CARD).is_success  # the default now lists 0.3
        up.forget()
        for _ in range(3):
            status, _, body = request(proxy.origin, "GET", REST + "/interview/identity",
                                      [*EXT, ("A2A-Version", "0.3")])  # fmt: skip
            assert (status, body) == (502, b"upstream card did not verify\n")
        for version in [f"0.{n}" for n in range(4, 20)] + [f"9.0.{n}" for n in range(1, 8)]:
            up.set_card(bad, version=version)
            status, _, _ = request(proxy.origin, "GET", REST + "/interview/identity",
                                   [*EXT, ("A2A-Version", version)])  # fmt: skip
            assert status == 400, version
        fetched = [dict(h).get(b"a2a-version") for _, t, h, _ in up.seen if t == CARD.encode()]
        assert [v for v in fetched if v is not None] == [b"0.3"], fetched


def test_a_card_request_with_a_body_gets_upstreams_live_card_response() -> None:
    # Decisions D-PROXY-26: the card request goes upstream as a
    # GET without the client's body. Its Content-Length went along with no body, the
    # upstream client refused to send that, and the fallback (no live headers) was served.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        status, headers, body = request(proxy.origin, "GET", CARD, (), b"{}")
        assert (status, body) == (200, up.cards[""][0])
        assert "date" in dict((n.lower(), v) for n, v in headers)  # upstream's live response
        [(method, _, sent, _)] = [s for s in up.seen if s[1] == CARD.encode()]
        assert method == "GET" and all(n.lower() != b"content-length" for n, _ in sent)


def test_a_changed_card_is_verified_when_it_is_asked_for() -> None:
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        renamed = reference.unsigned_card(up.origin)
        renamed["name"] = "Stonework, renamed"
        up.set_card(renamed)
        assert httpx.get(proxy.origin + CARD).content == up.cards[""][0]
        # Each variant is followed on its own requests: a 1.0 client asks the 1.0 card.
        assert httpx.get(proxy.origin + CARD, headers=dict(ACT)).content == up.cards[""][0]
        answer = request(proxy.origin, "GET", REST + "/interview/identity", ACT)[2]
        assert b"Stonework, renamed" in answer


# ---------------------------------------------------------------- where proposals are


def _on(proxy_origin: str) -> Callable[[str], dict[str, Any]]:
    """The Stonework card as deployed: interfaces and terms on the proxy's address."""

    def card(origin: str) -> dict[str, Any]:
        return reference.unsigned_card(proxy_origin)

    return card


def test_proposals_on_the_public_origin_are_read_from_upstream_at_the_same_path() -> None:
    # D-PROXY-22: the proxy refused to start, fetching from itself before listening.
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        recorder(_on(public)) as up,
        proxy_running(up.origin, sock, poll=0, public_url=public) as proxy,
    ):
        assert b"/terms/reconcile-statement.sow.json" in up.targets()
        body = httpx.get(proxy.origin + "/terms/flag-exceptions.sow.json").content
        assert body == reference.proposals(public)[public + "/terms/flag-exceptions.sow.json"]


@pytest.mark.anyio
async def test_a_proposal_missing_upstream_names_the_entry_the_url_and_the_cause() -> None:
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()

    def card(origin: str) -> dict[str, Any]:
        value = reference.unsigned_card(public)
        value["capabilities"]["extensions"][1]["params"]["proposals"][1]["url"] = (
            public + "/missing.json"
        )
        return value

    with recorder(card) as up, pytest.raises(DeclarationError) as caught:
        await build_proxy(up.origin, public_url=public)
    assert str(caught.value) == (
        f"terms entry /capabilities/extensions/1/params/proposals/1 ({public}/missing.json): "
        "fetch failed: upstream answered 404"
    )


def test_a_local_proposal_copy_is_used_and_served() -> None:
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    copies = reference.proposals(public)
    with recorder(_on(public)) as up:
        up.documents.clear()  # upstream serves no terms at all
        with proxy_running(up.origin, sock, poll=0, public_url=public, proposals=copies) as proxy:
            for url, body in copies.items():
                assert httpx.get(url).content == body
            assert httpx.head(proxy.origin + urlsplit(url).path).status_code == 200
        assert not [t for t in up.started if t.startswith(b"/terms")]


# ---------------------------------------------------------------- --declare


@pytest.mark.anyio
async def test_an_undeclared_card_is_refused_with_a_pointer_to_declare() -> None:
    with recorder(undeclared) as up, pytest.raises(DeclarationError) as caught:
        await build_proxy(up.origin)
    assert "--declare" in str(caught.value)


def test_declare_adds_the_interview_and_moves_urls_to_the_public_origin() -> None:
    # D-PROXY-22: one line in front of an agent that knows nothing of the interview.
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with recorder(undeclared) as up, proxy_running(up.origin, sock, poll=0, public_url=public,
                                                    declare=True) as proxy:  # fmt: skip
        served = loads(httpx.get(proxy.origin + CARD).content)
        assert isinstance(served, dict)
        assert interview_entry(served) == {"uri": INTERVIEW_URI}
        assert [i["url"] for i in served["supportedInterfaces"]] == [public + RPC, public + REST]
        terms = next(e for e in served["capabilities"]["extensions"] if e["uri"] == TERMS_URI)
        assert all(p["url"].startswith(public + "/terms/") for p in terms["params"]["proposals"])
        # The answers project the card as served, not upstream's.
        answer = request(proxy.origin, "GET", REST + "/interview/identity", ACT)[2]
        assert (public + RPC).encode() in answer
        assert up.origin.encode() not in answer


@pytest.mark.anyio
async def test_declare_in_front_of_a_plain_sdk_agent_verifies_consistent() -> None:
    from a2a_interview.verifier import verify

    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        upstream_running(undeclared) as up,
        proxy_running(up.origin, sock, poll=0, public_url=public, declare=True) as proxy,
    ):
        record = await verify(proxy.origin, churn_delay=0)
    document = record.to_json()
    assert document["outcome"] == "consistent", document["runs"][0]["conflicts"]


@pytest.mark.anyio
async def test_declare_refuses_a_signed_card_without_a_key() -> None:
    with recorder(signed_undeclared) as up, pytest.raises(ProxyError) as caught:
        await build_proxy(up.origin, declare=True, public_url="http://127.0.0.1:1")
    assert "--card-key KEY --kid KID" in str(caught.value)


def test_declare_re_signs_a_signed_card_with_the_given_key() -> None:
    key = generate_key("EdDSA")  # not the key that signed the upstream card
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        recorder(signed_undeclared) as up,
        proxy_running(
            up.origin,
            sock,
            poll=0,
            public_url=public,
            declare=True,
            card_key=key,
            card_kid="proxy-1",
        ) as proxy,
    ):
        served = loads(httpx.get(proxy.origin + CARD).content)
    assert isinstance(served, dict) and len(served["signatures"]) == 1
    assert verify_card(served, [public_jwk(key, "proxy-1")]).status == "verified"
    old = verify_card(served, reference.jwks()["keys"])
    assert old.status != "verified"


def test_interfaces_that_bypass_the_proxy_are_a_loud_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2a_interview.proxy")
    with recorder() as up, proxy_running(up.origin, poll=0, public_url="https://agent.example"):
        pass
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(up.origin + RPC in m and "bypass the interview" in m for m in warned), warned


# ---------------------------------------------------------------- encoded documents


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, compresslevel=9)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("layers", "message"),
    [
        # D-NET-1: a small body inflating past the bound is stopped as it
        # inflates (at most the bound plus one byte is ever produced).
        (1, "larger than 1048576 bytes"),
        (2, "Content-Encoding is stacked, unknown or corrupt"),
    ],
)
async def test_an_inflating_card_is_refused_within_the_bound(layers: int, message: str) -> None:
    body = b'{"name":"' + b" " * (64 << 20) + b'"}'
    for _ in range(layers):
        body = _gzip(body)
    assert len(body) < 200_000
    with recorder() as up:
        coding = ", ".join(["gzip"] * layers).encode()
        up.cards[""] = (body, [(b"content-encoding", coding)])
        tracemalloc.start()
        try:
            with pytest.raises(ProxyError) as caught:
                await build_proxy(up.origin)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert message in str(caught.value)
    assert peak < 16 << 20, f"{peak >> 20} MiB held while reading a 1 MiB-bounded card"


def test_a_gzip_card_is_read_and_served_decoded() -> None:
    with recorder() as up:
        plain = up.cards[""][0]
        up.cards[""] = (_gzip(plain), [(b"content-encoding", b"gzip")])
        with proxy_running(up.origin, poll=0) as proxy:
            response = httpx.get(proxy.origin + CARD, headers={"Accept-Encoding": "identity"})
            assert response.content == plain
            assert "content-encoding" not in response.headers
            [(_, _, headers, _)] = [s for s in up.seen if s[1] == CARD.encode()][:1]
            assert (b"accept-encoding", b"identity") in headers


def test_no_free_upstream_connection_in_time_is_503() -> None:
    # Decisions D-PROXY-29: a bounded wait for an upstream connection.
    body = json.dumps({
        "jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "held", "contextId": "c-9", "role": "ROLE_USER",
                               "parts": [{"text": "stream"}]}},
    }).encode()  # fmt: skip
    with (
        upstream_running() as up,
        proxy_running(up.origin, poll=0, upstream_connections=1, upstream_wait=0.3) as proxy,
        proxy.http.stream("POST", RPC, content=body, headers=V1) as held,
    ):
        assert held.status_code == 200  # the one upstream connection, busy streaming
        status, _, answer = request(proxy.origin, "GET", "/echo")
        assert (status, answer) == (503, b"upstream busy\n")
        up.gate("held").set()
        held.read()


# ---------------------------------------------------------------- served as `proxy` serves it


def raw_exchange(origin: str, data: bytes) -> bytes:
    """Send ``data`` as it is and read until the proxy closes (``Connection: close``)."""
    parts = urlsplit(origin)
    assert parts.hostname is not None and parts.port is not None
    with socket.create_connection((parts.hostname, parts.port), timeout=20) as conn:
        conn.sendall(data)
        out = b""
        while chunk := conn.recv(65536):
            out += chunk
        return out


def chunked(method: str, target: str, body: bytes, trailers: bytes, head: bytes = b"") -> bytes:
    return (f"{method} {target} HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n".encode()
            + head + b"Transfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n" % len(body) + body + b"\r\n0\r\n" + trailers + b"\r\n")  # fmt: skip


def test_a_trailer_never_activates_and_is_never_passed_on() -> None:
    # D-SERVE-20, PROFILE §3.9: the listening server appended trailers to the
    # request's headers, so the proxy forwarded them upstream as headers and an
    # A2A-Extensions trailer alone activated the interview.
    act = f"A2A-Extensions: {INTERVIEW_URI}\r\nX-A2A-Extensions: {INTERVIEW_URI}\r\n".encode()
    with recorder() as up, proxy_served(up.origin, poll=0) as proxy:
        up.forget()
        version = b"A2A-Version: 1.0\r\n"  # in the head either way (PROFILE §3.10)
        asked = raw_exchange(proxy, chunked("POST", RPC, rpc_body("interview/identity"),
                                            act + b"X-T: 1\r\n", head=version))  # fmt: skip
        assert asked.startswith(b"HTTP/1.1 200 ")
        assert b"a2a-extensions" not in asked.lower()  # not answered: no echo
        assert identity(up.origin) not in asked
        echoed = raw_exchange(proxy, chunked("PUT", "/echo", b"hello", b"X-T: 1\r\n" + act))
        assert echoed.startswith(b"HTTP/1.1 200 ")
        assert [target for _, target, _, _ in up.seen] == [RPC.encode(), b"/echo"]
        for _, _, headers, _ in up.seen:
            names = {name.lower() for name, _ in headers}
            assert not names & {b"x-t", b"a2a-extensions", b"x-a2a-extensions"}, headers
        # The same call with the header activated: answered here, never passed on.
        up.forget()
        answered = raw_exchange(proxy, chunked("POST", RPC, rpc_body("interview/identity"),
                                               b"", head=act + version))  # fmt: skip
        assert identity(up.origin) in answered and up.seen == []


def test_a_trailer_flood_is_refused_before_upstream_is_asked() -> None:
    # D-SERVE-20: 600 MiB of trailers took the proxy from 51 to 770 MiB. The
    # trailer section counts against the head bound: 431 after 64 KiB.
    with recorder() as up, proxy_served(up.origin, poll=0) as proxy:
        up.forget()
        parts = urlsplit(proxy)
        assert parts.port is not None
        with socket.create_connection(("127.0.0.1", parts.port), timeout=20) as conn:
            conn.sendall(chunked("POST", "/echo", b"hello", b"")[:-2])  # the trailer section
            sent = 0
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                while sent < 20_000:  # up to 20 MB of trailer fields
                    conn.sendall(b"X-T: " + b"a" * 1000 + b"\r\n")
                    sent += 1
            reply = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := conn.recv(65536):
                    reply += chunk
        assert reply.startswith(b"HTTP/1.1 431 "), reply[:100]
        assert sent < 20_000
        assert up.seen == []


FORWARDING = [
    ("X-Forwarded-For", "203.0.113.9"), ("X-Forwarded-Proto", "https"),
    ("X-Forwarded-Host", "evil.example"), ("Forwarded", "for=203.0.113.9;proto=https"),
    ("X-Real-IP", "203.0.113.9"), ("x-forwarded-port", "443"), ("True-Client-IP", "1.2.3.4"),
]  # fmt: skip


def test_a_clients_forwarding_headers_are_dropped_and_the_proxys_own_added() -> None:
    # D-PROXY-12: a client's X-Forwarded-*/Forwarded/X-Real-IP reached the
    # upstream verbatim, so any client could name itself 203.0.113.9 over https.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        up.forget()
        request(proxy.origin, "GET", "/echo", [("X-Keep", "1"), *FORWARDING])
        request(proxy.origin, "GET", CARD, FORWARDING)
        for _, _, headers, _ in up.seen:
            names = [(n.decode().lower(), v.decode()) for n, v in headers]
            assert [(n, v) for n, v in names if n.startswith("x-forwarded") or n in (
                "forwarded", "x-real-ip", "true-client-ip")] == [
                ("x-forwarded-for", "127.0.0.1"), ("x-forwarded-proto", "http")]  # fmt: skip
        assert ("x-keep", "1") in [(n.decode(), v.decode()) for n, v in up.seen[0][2]]


def test_a_trusted_balancers_forwarding_headers_are_passed_on() -> None:
    # The operator trusts its balancer's address (--forwarded-allow-ips): its chain is
    # passed on with the peer appended, and its X-Forwarded-Proto kept.
    for allow in (("127.0.0.1",), ("127.0.0.0/8", "::1"), ("*",)):
        with recorder() as up, proxy_running(up.origin, poll=0, forwarded_allow_ips=allow) as p:
            up.forget()
            request(p.origin, "GET", "/echo", FORWARDING)
            [(_, _, headers, _)] = up.seen
            names = [(n.decode().lower(), v.decode()) for n, v in headers]
            assert ("x-forwarded-for", "203.0.113.9, 127.0.0.1") in names
            assert ("x-forwarded-proto", "https") in names
            assert ("forwarded", "for=203.0.113.9;proto=https") in names
            assert ("x-real-ip", "203.0.113.9") in names
    with (
        recorder() as up,
        proxy_running(up.origin, poll=0, forwarded_allow_ips=("10.0.0.0/8",)) as p,
    ):
        up.forget()
        request(p.origin, "GET", "/echo", FORWARDING)
        [(_, _, headers, _)] = up.seen
        assert (b"x-forwarded-for", b"127.0.0.1") in headers  # not trusted: the peer only


def _dual_stack() -> socket.socket | None:
    """A listening socket on ``::`` that takes IPv4 connections too (peers then read
    ``::ffff:a.b.c.d``), as ``proxy --host ::`` listens; ``None`` without IPv6."""
    try:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", 0))
        sock.listen()
    except OSError:
        sock.close()
        return None
    return sock


def test_a_trusted_balancer_keeps_its_trust_on_a_dual_stack_listener() -> None:
    """PROFILE §3.9, D-NET-15: on a dual-stack listener an IPv4 balancer's address
    arrives mapped (``::ffff:127.0.0.1``); trusting ``127.0.0.1`` still trusts it, or its
    forwarding headers would be dropped as a stranger's."""
    # The rule alone: every spelling of the mapped address, and nothing beside it.
    trusted = trusted_peers(["127.0.0.1", "10.0.0.0/8"])
    assert trusted("::ffff:127.0.0.1") and trusted("::ffff:7f00:1")
    assert trusted("::ffff:10.1.2.3") and trusted("127.0.0.1")
    assert not trusted("::ffff:127.0.0.2") and not trusted("::1") and not trusted("::7f00:1")
    sock = _dual_stack()
    need(sock is not None, "an IPv6 socket on :: taking IPv4 (dual stack)", "enable IPv6")
    assert sock is not None
    with (
        recorder() as up,
        proxy_running(up.origin, sock, poll=0, forwarded_allow_ips=("127.0.0.1",)) as p,
    ):
        up.forget()
        request(p.origin, "GET", "/echo", FORWARDING)
        [(_, _, headers, _)] = up.seen
        names = [(n.decode().lower(), v.decode()) for n, v in headers]
        chain = [v for n, v in names if n == "x-forwarded-for"]
        assert len(chain) == 1 and chain[0].startswith("203.0.113.9, "), names
        assert ("x-forwarded-proto", "https") in names
        assert ("x-real-ip", "203.0.113.9") in names


@pytest.mark.anyio
async def test_an_unreadable_forwarded_allow_ips_refuses_to_start() -> None:
    with pytest.raises(ProxyError, match="not an IP address or network"):
        await build_proxy("http://127.0.0.1:1", forwarded_allow_ips=("10.0.0.0/33",))


def _date(headers: list[tuple[str, str]]) -> str:
    dates = [v for n, v in headers if n.lower() == "date"]
    assert len(dates) == 1, headers
    return dates[0]


def test_every_response_the_proxy_makes_carries_a_date() -> None:
    # D-SERVE-22: the proxy's own answers, refusals and 502 carried no Date (RFC 9110
    # §6.6.1); upstream's own Date passes through as it came.
    with contextlib.ExitStack() as stack:
        up = stack.enter_context(recorder())
        proxy = stack.enter_context(proxy_served(up.origin, poll=0, max_body=100))
        made = [
            request(proxy, "POST", RPC, ACT, rpc_body("interview/identity")),  # an answer
            request(proxy, "POST", RPC, ACT, rpc_body("interview/other")),  # a refusal
            request(proxy, "POST", RPC, ACT, rpc_body("interview/identity", params=[])),
            request(proxy, "GET", f"{REST}/interview/identity", ACT),
            request(proxy, "POST", "/echo", (), b"x" * 101),  # 413
            request(proxy, "OPTIONS", "*"),  # 400
            request(proxy, "GET", CARD),  # upstream's, Date included
            request(proxy, "GET", "/echo"),  # passed on: upstream's Date
        ]
    for status, headers, _ in made:
        assert status in (200, 400, 413), (status, headers)
        _date(headers)


def test_the_proxys_502_and_the_last_verified_card_carry_a_date() -> None:
    stack = contextlib.ExitStack()
    upstream = stack.enter_context(recorder())
    with proxy_served(upstream.origin, poll=0) as proxy:
        stack.close()  # upstream stops; the proxy keeps serving
        status, headers, _ = request(proxy, "GET", "/echo")
        assert status == 502
        _date(headers)
        status, headers, body = request(proxy, "GET", CARD)  # the last verified bytes
        assert status == 200 and body
        _date(headers)


@pytest.mark.anyio
async def test_the_date_wrapper_keeps_a_date_in_any_case_and_adds_only_a_missing_one() -> None:
    """D-SERVE-22, D-PROXY-49: a response start without a ``Date`` field gets exactly
    one; one that has it, in any case of its name, is sent as it came (the same
    message); a name of four other bytes is no ``Date``; body messages pass untouched."""
    from a2a_interview.server.proxy.serving import _dated

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    dated = _dated(send)
    for name in (b"date", b"Date", b"DATE"):
        message = {"type": "http.response.start", "status": 200,
                   "headers": [(b"x-a", b"1"), (name, b"upstream's")]}  # fmt: skip
        await dated(message)
        assert sent[-1] is message
    plain = [(b"x-a", b"1"), (b"etag", b'"x"'), (b"data", b"not a date")]
    await dated({"type": "http.response.start", "status": 200, "headers": plain})
    added = sent[-1]["headers"]
    assert added[:3] == plain and len(added) == 4 and added[3][0] == b"date", added
    assert plain == [(b"x-a", b"1"), (b"etag", b'"x"'), (b"data", b"not a date")]
    await dated({"type": "http.response.start", "status": 204})
    assert [n for n, _ in sent[-1]["headers"]] == [b"date"]
    body = {"type": "http.response.body", "body": b"x"}
    await dated(body)
    assert sent[-1] is body


@pytest.mark.parametrize("upgrade", ["websocket", "h2c"])
def test_an_upgrade_is_refused_and_never_passed_on_as_a_plain_request(
    upgrade: str, caplog: pytest.LogCaptureFixture
) -> None:
    # D-PROXY-12: a WebSocket upgrade was forwarded as a plain GET (decisions
    # D-SERVE-22: upgrades are closed), and `Upgrade: h2c` with a body ended in a 500 and a logged
    # traceback.
    with caplog.at_level(logging.INFO), recorder() as up, proxy_served(up.origin, poll=0) as proxy:
        up.forget()
        reply = raw_exchange(proxy, (
            f"POST /echo HTTP/1.1\r\nHost: proxy\r\nConnection: Upgrade\r\nUpgrade: {upgrade}\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            "Content-Length: 5\r\n\r\nhello").encode())  # fmt: skip
        assert reply.startswith(b"HTTP/1.1 400 "), reply[:200]
        assert reply.endswith(b"protocol upgrade not supported")
        assert up.seen == [] and up.started == []
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_the_new_serving_flags_refuse_nonsense_in_one_line() -> None:
    # D-SERVE-21: --forwarded-allow-ips and --max-client-connections.
    base = ("--upstream", "http://127.0.0.1:9/", "--port", "9")
    cases = [
        (("--forwarded-allow-ips", "10.0.0.0/33"), "is not an IP address or network"),
        (("--forwarded-allow-ips", "127.0.0.1,proxy.example"), "'proxy.example'"),
        (("--max-client-connections", "-1"), "less than 0"),
        (("--max-client-connections", "some"), "not a whole number"),
    ]
    for extra, message in cases:
        process = proxy_command(*base, *extra)
        _, err = process.communicate(timeout=30)
        assert (process.returncode, "Traceback" in err) == (2, False), (extra, err)
        assert message in err, (extra, err)
