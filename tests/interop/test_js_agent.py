"""A stock ``@a2a-js/sdk`` 1.3 agent, direct and behind ``a2a-interview proxy``
(D-TEST-6; real processes on loopback ports: node, the proxy, the CLI).

The agent (``js/agent.mjs``) serves its card through the SDK's ``agentCardHandler``, the
JSON-RPC and HTTP+JSON bindings through the SDK's express handlers, and its standing
proposal next to its card. Its card names the proxy's public URL (the normal layout), or,
in the undeclared variant, the agent's own address.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cards import Keys, card, sign_js
from processes import conflicts, js_agent_argv, proxy_argv, running, verify, write_json

from a2a_interview.spec import INTERVIEW_URI
from support.ports import free_port


def js_client(node: str, js: Path, card_url: str, transport: str, *extra: str) -> Any:
    done = subprocess.run(
        [node, str(js / "client.mjs"), "--card-url", card_url, "--transport", transport,
         "--text", "reconcile August", "--id", f"m-{transport}", *extra],
        capture_output=True, text=True, timeout=60, check=False, cwd=js,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- direct ---------------------------------------------------------------------------


def test_the_undeclared_js_agent_direct_is_not_offered(node: str, js: Path, tmp_path: Path) -> None:
    # PROFILE §7: a card with no interview entry is not_offered (exit 4), not a failure.
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    card_file = write_json(tmp_path / "card.json", card(origin, declare=False, terms=False))
    with running(js_agent_argv(node, js, port, card_file), port, tmp_path):
        code, record = verify(origin)
    assert (code, record["outcome"]) == (4, "not_offered")


# -- ordinary traffic through the proxy, with the JS SDK's own client ---------------------


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
def test_js_client_gets_the_same_results_through_the_proxy_as_direct(
    node: str, js: Path, tmp_path: Path, transport: str
) -> None:
    # D-TEST-6: SendMessage and streaming through the proxy, with
    # @a2a-js/sdk's ClientFactory, give what the agent gives direct. The card names the
    # proxy (declares the interview, no terms: what the proxy serves before its merge too).
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public, terms=False))
    with (
        running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port), proxy_port, tmp_path),
    ):
        card_path = "/.well-known/agent-card.json"
        direct = js_client(node, js, agent + card_path, transport, "--origin", f"{public}={agent}")
        proxied = js_client(node, js, public + card_path, transport)
    assert direct["interface"].startswith(agent + "/a2a/")
    assert proxied["interface"].startswith(public + "/a2a/")
    assert proxied["card"] == direct["card"]
    assert proxied["send"] == direct["send"]
    assert proxied["stream"] == direct["stream"]
    # The results are the agent's, not an empty agreement.
    task = direct["send"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "echo: reconcile August"
    kinds = [next(iter(event)) for event in direct["stream"]]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]


# -- the interview through the proxy --------------------------------------------------------


def test_verify_through_the_proxy_is_consistent(node: str, js: Path, tmp_path: Path) -> None:
    # D-TEST-9, D-PROXY-23: the card declares the interview (required: false)
    # and commits to a proposal on the proxy's public origin; the proxy reads it from the
    # upstream at the same path, and the interview through it is consistent.
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public))
    with (
        running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
    ):
        code, record = verify(public)
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    assert [p["result"] for p in record["runs"][0]["proposals"]] == ["ok"]


def test_verify_through_the_proxy_of_a_js_signed_card_is_consistent(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-VERIFY-26: a signed JS agent got a card_signature conflict. Its card signed
    # by the SDK's own signer, served by the SDK, verifies (pinned key) under proto.
    keys = Keys(tmp_path)
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public))
    signing = ("--key", str(keys.jwk), "--kid", keys.kid)
    with (
        running(js_agent_argv(node, js, agent_port, card_file, *signing), agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
    ):
        code, record = verify(public, "--jwks", str(keys.jwks))
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    signature = record["agent"]["card_signature"]
    assert (signature["status"], signature["reading"]) == ("verified", "proto")


def test_js_signed_card_served_by_the_agent_is_signed_by_the_sdk(
    node: str, js: Path, tmp_path: Path
) -> None:
    # The agent serves what the SDK's signer made (the card the tests above verify):
    # the same bytes sign.mjs gives for the same card and key, but for the signature value.
    keys = Keys(tmp_path)
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    authored = card(origin)
    card_file = write_json(tmp_path / "card.json", authored)
    signing = ("--key", str(keys.jwk), "--kid", keys.kid)
    with running(js_agent_argv(node, js, port, card_file, *signing), port, tmp_path):
        served = httpx.get(origin + "/.well-known/agent-card.json").json()
    offline = sign_js(node, js, authored, keys.jwk, keys.kid, tmp_path)
    assert {k: v for k, v in served.items() if k != "signatures"} == authored
    assert served["signatures"][0]["protected"] == offline["signatures"][0]["protected"]


def test_declare_in_front_of_the_undeclared_js_agent_is_consistent(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-PROXY-23: --declare serves the card with the interview declared
    # (required: false) and its interfaces moved to --public-url; verify is consistent.
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(agent, declare=False, terms=False))
    argv = proxy_argv(agent, proxy_port, "--public-url", public, "--declare")
    with (
        running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path),
        running(argv, proxy_port, tmp_path),
    ):
        code, record = verify(public)
        served = httpx.get(public + "/.well-known/agent-card.json").json()
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    entries = [e for e in served["capabilities"]["extensions"] if e["uri"] == INTERVIEW_URI]
    # docs/decisions.md D-VERIFY-37: the declaration --declare writes omits required (false).
    assert entries == [{"uri": INTERVIEW_URI}]
    assert [i["url"] for i in served["supportedInterfaces"]] == [
        public + "/a2a/jsonrpc",
        public + "/a2a/rest",
    ]


# -- ordinary traffic, byte for byte ------------------------------------------------------

# RFC 9110 §7.6.1 hop-by-hop fields, and Date: the time each response was made (the
# direct and the proxied request are not made in the same second).
NOT_COMPARED = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
                "transfer-encoding", "upgrade", "date"}  # fmt: skip


def _exchange(http: httpx.Client, method: str, url: str, **kwargs: Any) -> Any:
    response = http.request(method, url, **kwargs)
    headers = [(k.lower(), v) for k, v in response.headers.multi_items()]
    kept = [(k, v) for k, v in headers if k not in NOT_COMPARED]
    return response.status_code, kept, response.content


def _card_exchange(http: httpx.Client, method: str, url: str, **kwargs: Any) -> Any:
    """:func:`_exchange` of a card response through the proxy, less the Last-Modified the
    proxy adds when the agent sends none (D-PROXY-33: a2a-js sends Cache-Control and
    ETag, no Last-Modified); that one is checked to be there, once."""
    status, kept, body = _exchange(http, method, url, **kwargs)
    added = [v for k, v in kept if k == "last-modified"]
    assert len(added) == 1, kept
    return status, [(k, v) for k, v in kept if k != "last-modified"], body


@contextlib.contextmanager
def _legacy_agent_and_proxy(node: str, js: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The JS agent in a2a-js's legacy mode (two card variants by A2A-Version) behind the
    proxy: (agent origin, public origin) while the block runs."""
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public, terms=False, legacy=True))
    with (
        running(js_agent_argv(node, js, agent_port, card_file, "--legacy", "on"), agent_port,
                tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
    ):  # fmt: skip
        yield agent, public


CARD_PATH = "/.well-known/agent-card.json"
V1 = {"A2A-Version": "1.0"}


def test_ordinary_traffic_through_the_proxy_is_what_the_js_agent_sends(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-TEST-10: status, body and every header but hop-by-hop ones, direct
    # and proxied, for the card (both A2A-Version variants of a2a-js's legacy mode, with
    # its Vary, ETag and Cache-Control) and for ordinary calls on both bindings.
    requests: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", CARD_PATH, {"headers": V1}),
        ("GET", CARD_PATH, {}),  # no A2A-Version: a2a-js serves its 0.3 card
        ("POST", "/a2a/jsonrpc", {"headers": V1, "json": {
            "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}}),
        ("POST", "/a2a/jsonrpc", {"headers": V1, "json": {
            "jsonrpc": "2.0", "id": 2, "method": "NoSuchMethod", "params": {}}}),
        ("POST", "/a2a/jsonrpc", {"headers": V1, "content": b"{not json"}),
        ("GET", "/a2a/rest/tasks/nope", {"headers": V1}),
        ("GET", "/a2a/rest/no/such/route", {"headers": V1}),
    ]  # fmt: skip
    compared = []
    with (
        _legacy_agent_and_proxy(node, js, tmp_path) as (agent, public),
        httpx.Client(timeout=30) as http,
    ):
        for method, path, kwargs in requests:
            direct = _exchange(http, method, agent + path, **kwargs)
            exchange = _card_exchange if path == CARD_PATH else _exchange
            proxied = exchange(http, method, public + path, **kwargs)
            assert proxied == direct, (method, path)
            compared.append(direct)
    first, legacy = compared[0], compared[1]
    assert first[0] == 200 and ("vary", "A2A-Version") in first[1]
    assert legacy[0] == 200 and legacy[2] != first[2]  # two variants, each passed through


def test_a_conditional_card_request_through_the_proxy_is_what_the_js_agent_sends(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-TEST-10, the card: If-None-Match with the ETag the agent gave
    # (a2a-js's weak W/"..." tag) is a 304 direct, so it must be one through the proxy.
    with (
        _legacy_agent_and_proxy(node, js, tmp_path) as (agent, public),
        httpx.Client(timeout=30) as http,
    ):
        etag = http.get(agent + CARD_PATH, headers=V1).headers["etag"]
        wanted = {**V1, "If-None-Match": etag}
        direct = _exchange(http, "GET", agent + CARD_PATH, headers=wanted)
        proxied = _card_exchange(http, "GET", public + CARD_PATH, headers=wanted)
    assert direct[0] == 304
    assert proxied == direct


def test_verify_of_the_signed_legacy_js_agent_behind_declare_is_consistent(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-CLI-7, PROFILE §7 card variants: @a2a-js/sdk in legacy mode serves a
    # 0.3 card without A2A-Version and a 1.0 card with it; the proxy (--declare
    # --card-key) re-signs each. The verifier read the 0.3 card and judged the 1.0
    # interfaces' answers against it: a persistent value_mismatch on identity's
    # /signatures. Each interface is now judged against its own version's card.
    keys = Keys(tmp_path)
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(agent, declare=False, terms=False,
                                                        legacy=True))  # fmt: skip
    signing = ("--key", str(keys.jwk), "--kid", keys.kid)
    argv = proxy_argv(agent, proxy_port, "--public-url", public, "--declare",
                      "--card-key", str(keys.jwk), "--kid", keys.kid)  # fmt: skip
    with (
        running(js_agent_argv(node, js, agent_port, card_file, "--legacy", "on", *signing),
                agent_port, tmp_path),
        running(argv, proxy_port, tmp_path),
    ):  # fmt: skip
        variants = [httpx.get(public + CARD_PATH, headers=h).json() for h in ({}, V1)]
        code, record = verify(public, "--jwks", str(keys.jwks))
    assert variants[0]["signatures"] != variants[1]["signatures"]  # two variants, each signed
    assert (code, record["outcome"], conflicts(record)) == (0, "consistent", [])
    assert record["agent"]["card_signature"]["status"] == "verified"
    calls = record["runs"][0]["calls"]
    assert {c["interface"] for c in calls} == {public + "/a2a/jsonrpc", public + "/a2a/rest"}


# -- PROFILE §3.9 and D-SERVE-24: what the proxy judges, in front of Express ----------


def _ours(response: httpx.Response) -> bool:
    """A response the proxy produced for an interview call: an answer or one of its fixed
    refusals (PROFILE §3.9, §3.10), never the agent's own dispatch."""
    if response.headers.get("a2a-extensions") != INTERVIEW_URI:
        return False
    body = response.json()
    if "result" in body:
        return "question" in body["result"] or body["result"].get("refused") is True
    return body.get("error", {}).get("code") in (-32600, -32009)


def test_compressed_and_case_variant_interview_calls_never_reach_the_js_agent(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-SERVE-23: an activated interview call with Content-Encoding gzip
    # (deflate, GZIP) or at /A2A/JSONRPC was forwarded and dispatched by the Express
    # agent (-32602 from the agent, no echo). Express inflates and matches without case:
    # shown direct first, so the check through the proxy means something.
    import gzip
    import zlib

    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public))
    call = b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'
    base = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    act = {**base, "A2A-Extensions": INTERVIEW_URI}
    cases = [
        ("/a2a/jsonrpc", {"Content-Encoding": "gzip"}, gzip.compress(call)),
        ("/a2a/jsonrpc", {"Content-Encoding": "GZIP"}, gzip.compress(call)),
        ("/a2a/jsonrpc", {"Content-Encoding": "deflate"}, zlib.compress(call)),
        ("/A2A/JSONRPC", {}, call),
        ("/a2a/JsonRpc", {}, call),
        ("/a2a/jsonrpc/", {}, call),
        ("/A2A/jsonrpc", {"Content-Encoding": "gzip"}, gzip.compress(call)),
        ("/a2a/jsonrpc", {"Content-Encoding": "br"}, call),
        ("/a2a/jsonrpc", {"Content-Encoding": "gzip, gzip"}, gzip.compress(gzip.compress(call))),
    ]
    with (
        running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
        httpx.Client(timeout=20) as http,
    ):
        dispatched = http.post(agent + "/A2A/JSONRPC", content=gzip.compress(call),
                               headers={**act, "Content-Encoding": "gzip"})  # fmt: skip
        assert dispatched.status_code == 200 and "error" in dispatched.json()  # Express's own
        for path, extra, body in cases:
            got = http.post(public + path, content=body, headers={**act, **extra})
            assert _ours(got), (path, extra, got.status_code, got.text[:200])
        rest = http.get(public + "/A2A/REST/interview/identity", headers=act)
        assert rest.status_code == 200 and rest.json()["question"] == "identity"


def test_version_negotiation_through_the_proxy_is_the_js_agents(
    node: str, js: Path, tmp_path: Path
) -> None:
    # D-SERVE-24, PROFILE §3.10: the Express agent's answer to an ordinary method
    # under none, 0.3, 1.0 and 2.0 (direct) decides the interview's through the proxy.
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public, terms=False))
    ordinary = b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"none"}}'
    call = b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'
    with (
        running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
        httpx.Client(timeout=20) as http,
    ):
        for version in (None, "0.3", "1.0", "2.0", "1.0.1"):
            vh = {} if version is None else {"A2A-Version": version}
            json_type = {"Content-Type": "application/json"}
            host = http.post(agent + "/a2a/jsonrpc", content=ordinary, headers={**json_type, **vh})
            refused = host.json().get("error", {}).get("code") == -32009
            ours = http.post(
                public + "/a2a/jsonrpc",
                content=call,
                headers={**json_type, **vh, "A2A-Extensions": INTERVIEW_URI},
            )
            if refused:
                assert ours.json()["error"]["code"] == -32009, (version, ours.text)
            else:
                assert "result" in ours.json(), (version, ours.text)
            rest_host = http.get(agent + "/a2a/rest/tasks/none", headers=vh)
            rest = http.get(
                public + "/a2a/rest/interview/identity",
                headers={**vh, "A2A-Extensions": INTERVIEW_URI},
            )
            if refused:
                assert rest.status_code == 400, (version, rest.text)
                assert rest_host.status_code == 400, (version, rest_host.text)
            else:
                assert rest.status_code == 200, (version, rest.text)
