"""The cards the proxy serves with ``--declare``: what "signed" means, where the re-signing
key is, the extended card, and cards it cannot serve (PROFILE §6.7, §7).

The upstream is the recording ASGI app of ``test_proxy_wire`` on a real loopback socket;
the proxy is built and served as ``run`` serves it; the verifier runs in process.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.card import generate_key, is_signed, public_jwk, sign_card, verify_card
from a2a_interview.server.proxy.upstream import PROXY_JWKS_PATH
from a2a_interview.spec import INTERVIEW_URI
from a2a_interview.strictjson import loads
from a2a_interview.verifier import verify
from support.ports import free_socket
from support.proxy import CARD, proxy_running, upstream_running
from support.recorder import recorder, signed_undeclared, undeclared


def _js_default(origin: str) -> dict[str, Any]:
    """The card as a stock ``@a2a-js/sdk`` agent serves it when nobody signs it: its
    ``AgentCard`` type requires ``signatures``, so the member is there, an empty list."""
    return {**undeclared(origin), "signatures": []}


def _protected(card: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for item in card["signatures"]:
        padded = item["protected"] + "=" * (-len(item["protected"]) % 4)
        out.append(json.loads(base64.urlsafe_b64decode(padded)))
    return out


# ---------------------------------------------------------------- one reading of "signed"


@pytest.mark.parametrize(
    ("card", "signed"),
    [
        ({}, False),
        ({"signatures": []}, False),
        ({"signatures": [{"protected": "e30", "signature": "AA"}]}, True),
        ({"signatures": None}, True),  # claimed and malformed: invalid, never unsigned
        ({"signatures": {}}, True),
        ([], False),
    ],
)
def test_signed_means_a_signatures_member_that_is_not_an_empty_list(
    card: Any, signed: bool
) -> None:
    # PROFILE §6.7: one rule, read by the verifier's status as by the proxy and the signer.
    assert is_signed(card) is signed
    if isinstance(card, dict):
        status = verify_card(card, []).status
        assert (status == "unsigned") is (not signed)


def test_signing_a_card_with_an_empty_signatures_list_adds_only_the_new_signature() -> None:
    # PROFILE §6.7: `card sign` on an a2a-js card signs it as it signs an unsigned one.
    key = generate_key("EdDSA")
    card = _js_default("https://agent.example")
    signed = sign_card(card, key, kid="k1")
    plain = sign_card({k: v for k, v in card.items() if k != "signatures"}, key, kid="k1")
    assert signed == plain
    assert verify_card(signed, [public_jwk(key, "k1")]).status == "verified"


@pytest.mark.anyio
async def test_declare_serves_an_a2a_js_default_card_without_asking_for_a_key() -> None:
    # PROFILE §6.7: `"signatures": []` is unsigned; --declare used to refuse it ("give
    # --card-key KEY --kid KID to re-sign it"), exit 3 in front of every stock JS agent.
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        recorder(_js_default) as up,
        proxy_running(up.origin, sock, poll=0, public_url=public, declare=True) as proxy,
    ):
        served = loads(httpx.get(proxy.origin + CARD).content)
        record = (await verify(proxy.origin, churn_delay=0)).to_json()
    assert isinstance(served, dict) and served["signatures"] == []
    assert {"uri": INTERVIEW_URI} in served["capabilities"]["extensions"]
    assert record["agent"]["card_signature"]["status"] == "unsigned"
    # The recorder answers 200 to anything, so only the card's checks are this test's.
    about_the_card = {"card_fetch", "card_signature", "declaration", "projection"}
    assert [c for c in record["runs"][0]["conflicts"] if c["check"] in about_the_card] == []


# ---------------------------------------------------------------- the re-signing key


def _running_resigned(up: Any, key: Any, **extra: Any) -> Any:
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    return proxy_running(up.origin, sock, poll=0, public_url=public, declare=True,
                         card_key=key, card_kid="proxy-1", **extra)  # fmt: skip


@pytest.mark.anyio
async def test_a_re_signed_card_names_the_proxys_jwks_and_verifies_with_no_pinned_key() -> None:
    # PROFILE §6.7: re-signing dropped the jku, so `verify --require-signature` of an
    # honest agent behind the proxy was key_unavailable, a persistent conflict.
    key = generate_key("ES256")
    with upstream_running(signed_undeclared) as up, _running_resigned(up, key) as proxy:
        served = loads(httpx.get(proxy.origin + CARD).content)
        jwks = httpx.get(proxy.origin + PROXY_JWKS_PATH)
        head = httpx.head(proxy.origin + PROXY_JWKS_PATH)
        record = (await verify(proxy.origin, churn_delay=0, require_signature=True)).to_json()
    assert isinstance(served, dict)
    assert [h.get("jku") for h in _protected(served)] == [proxy.origin + PROXY_JWKS_PATH]
    assert jwks.status_code == 200 and jwks.json() == {"keys": [public_jwk(key, "proxy-1")]}
    assert head.status_code == 200 and head.content == b""
    assert record["outcome"] == "consistent", record["runs"][0]["conflicts"]
    signature = record["agent"]["card_signature"]
    assert signature["status"] == "verified"


def test_jku_given_is_the_one_the_re_signed_card_names() -> None:
    # PROFILE §6.7: "unless the user gives another jku" (proxy --jku URL).
    key = generate_key("EdDSA")
    elsewhere = "https://keys.example/agent/jwks.json"
    with (
        recorder(signed_undeclared) as up,
        _running_resigned(up, key, card_jku=elsewhere) as proxy,
    ):
        served = loads(httpx.get(proxy.origin + CARD).content)
    assert isinstance(served, dict)
    assert [h.get("jku") for h in _protected(served)] == [elsewhere]
    assert verify_card(served, [public_jwk(key, "proxy-1")]).status == "verified"


def test_no_jwks_is_served_when_the_proxy_re_signs_nothing() -> None:
    # The path is the proxy's only with a re-signing key; else it is upstream's.
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        got = httpx.get(proxy.origin + PROXY_JWKS_PATH)
    assert PROXY_JWKS_PATH.encode() in got.content  # the recorder's own echo of the target
    assert "keys" not in got.json()


def test_the_signed_reference_card_keeps_its_own_jku_shape() -> None:
    # The fixture the tests above re-sign is signed, and names no jku of its own.
    card = signed_undeclared("http://127.0.0.1:1")
    assert is_signed(card)
    assert all("jku" not in h for h in _protected(card))
    assert reference.signed_card("http://127.0.0.1:1", jku=False)["signatures"]


# ---------------------------------------------------------------- gRPC


def _grpc_only(origin: str) -> dict[str, Any]:
    card = reference.unsigned_card(origin)
    card["supportedInterfaces"] = [
        {"url": "http://127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]
    return card


def _grpc_and_jsonrpc(origin: str) -> dict[str, Any]:
    card = undeclared(origin)
    card["supportedInterfaces"].append(
        {"url": "http://127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    )
    return card


@pytest.mark.anyio
@pytest.mark.parametrize("declare", [False, True])
async def test_a_grpc_only_card_is_refused_at_start_in_the_verifiers_terms(declare: bool) -> None:
    # PROFILE §7: the interview declared on no interface able to carry it is what verify
    # reports as non_conformant (declaration: no_interface); the proxy says the same.
    from a2a_interview.server.proxy import ProxyError, build_proxy

    with recorder(_grpc_only) as up, pytest.raises(ProxyError) as caught:
        await build_proxy(up.origin, declare=declare, public_url="http://127.0.0.1:1")
    assert "no JSONRPC or HTTP+JSON interface" in str(caught.value)
    assert "(declaration: no_interface)" in str(caught.value)


def test_a_grpc_only_card_is_one_line_and_exit_3_from_the_command() -> None:
    from support.ports import closed_port
    from support.proxy import refusal

    with recorder(_grpc_only) as up, closed_port() as port:  # refused before binding
        line = refusal("--upstream", up.origin, "--port", str(port), "--declare")
    assert line.endswith("(declaration: no_interface) [proxy]")


def test_declare_leaves_a_grpc_interface_alone_and_never_advises_declare(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # PROFILE §3b, §7: a gRPC+JSON-RPC card is served, the interview on JSON-RPC. The
    # proxy told a gRPC interface "run with --declare" while running with --declare.
    import logging

    caplog.set_level(logging.INFO, logger="a2a_interview.proxy")
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        recorder(_grpc_and_jsonrpc) as up,
        proxy_running(up.origin, sock, poll=0, public_url=public, declare=True) as proxy,
    ):
        served = loads(httpx.get(proxy.origin + CARD).content)
        answer = proxy.rpc("interview/identity")
    assert isinstance(served, dict)
    urls = [(i["protocolBinding"], i["url"]) for i in served["supportedInterfaces"]]
    assert ("GRPC", "http://127.0.0.1:50051") in urls
    assert ("JSONRPC", public + "/a2a/jsonrpc") in urls
    assert answer.json()["result"]["question"] == "identity"
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if "--declare" in m], said
    assert any("gRPC interface http://127.0.0.1:50051 is not proxied" in m for m in said), said


# ---------------------------------------------------------------- the extended card

EXTRA_SKILL = {"id": "members-only", "name": "Members only", "description": "For clients "
               "who signed in", "tags": ["private"]}  # fmt: skip


def _extended_upstream(signed: bool, declared: bool = False) -> Any:
    """A plain a2a-sdk agent offering an extended card (one skill more than the public
    card), both naming the agent's own address; ``signed``: both signed by a key the
    proxy does not have."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from a2a_interview.server.sdk import agent_card_from_json
    from support.proxy import Executor, Upstream

    def build_app(origin: str) -> Any:
        public = reference.unsigned_card(origin) if declared else undeclared(origin)
        public["capabilities"]["extendedAgentCard"] = True
        public["supportedInterfaces"] += [  # the SDK's 0.3 layer needs a 0.3 interface
            {
                "url": origin + "/a2a/jsonrpc",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "0.3",
            },
            {"url": origin + "/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
        ]
        extended = json.loads(json.dumps(public))
        extended["skills"].append(EXTRA_SKILL)
        if signed:
            key = generate_key("EdDSA")
            public, extended = (sign_card(c, key, kid="agent-1") for c in (public, extended))
        card, more = agent_card_from_json(public), agent_card_from_json(extended)
        handler = DefaultRequestHandler(
            Executor(Upstream()), InMemoryTaskStore(), card, extended_agent_card=more
        )
        documents = {urlsplit(u).path: b for u, b in reference.proposals(origin).items()}

        async def terms(request: Request) -> Response:
            return Response(documents[request.url.path], media_type="application/json")

        return Starlette(routes=[
            *create_agent_card_routes(card),
            *(Route(path, terms) for path in documents),
            *create_jsonrpc_routes(handler, "/a2a/jsonrpc", enable_v0_3_compat=True),
            *create_rest_routes(handler, path_prefix="/a2a/rest", enable_v0_3_compat=True),
        ])  # fmt: skip

    return build_app


def _extended_calls(proxy: Any) -> dict[str, httpx.Response]:
    v1 = {"A2A-Version": "1.0"}
    call = {"jsonrpc": "2.0", "id": "x-1", "method": "GetExtendedAgentCard", "params": {}}
    old = {"jsonrpc": "2.0", "id": 9, "method": "agent/getAuthenticatedExtendedCard"}
    return {
        "jsonrpc 1.0": proxy.http.post("/a2a/jsonrpc", json=call, headers=v1),
        "jsonrpc 0.3": proxy.http.post("/a2a/jsonrpc", json=old),
        "rest 1.0": proxy.http.get("/a2a/rest/extendedAgentCard", headers=v1),
        "rest 0.3": proxy.http.get("/a2a/rest/v1/card"),
    }


def _card_of(name: str, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, (name, response.text)
    body = response.json()
    card: dict[str, Any] = body["result"] if name.startswith("jsonrpc") else body
    if name == "jsonrpc 1.0":
        assert body["id"] == "x-1"
    return card


def test_declare_serves_the_extended_card_as_it_serves_the_public_card() -> None:
    # PROFILE §7: GetExtendedAgentCard passed through untouched, naming upstream's own
    # (internal) URLs and no interview declaration.
    from support.servers import serve

    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        serve(_extended_upstream(signed=False)) as origin,
        proxy_running(origin, sock, poll=0, public_url=public, declare=True) as proxy,
    ):
        direct = httpx.get(origin + "/a2a/rest/extendedAgentCard", headers={"A2A-Version": "1.0"})
        got = _extended_calls(proxy)
    assert origin.encode() in direct.content  # what the proxy used to pass on
    for name, response in got.items():
        card = _card_of(name, response)
        assert {"uri": INTERVIEW_URI} in card["capabilities"]["extensions"], name
        assert origin not in json.dumps(card), name  # proposal URLs moved too
        assert EXTRA_SKILL["id"] in [s["id"] for s in card["skills"]], name
        if "supportedInterfaces" in card:
            assert {i["url"] for i in card["supportedInterfaces"]} == {
                public + "/a2a/jsonrpc",
                public + "/a2a/rest",
            }, name


def test_declare_re_signs_the_extended_card_with_its_key_and_jku() -> None:
    # PROFILE §7 "re-signed", PROFILE §6.7: the key the public card is re-signed with.
    from support.servers import serve

    key = generate_key("ES256")
    sock = free_socket()
    public = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with (
        serve(_extended_upstream(signed=True)) as origin,
        proxy_running(
            origin, sock, poll=0, public_url=public, declare=True, card_key=key, card_kid="proxy-1"
        ) as proxy,  # fmt: skip
    ):
        got = _extended_calls(proxy)
    for name, response in got.items():
        card = _card_of(name, response)
        if "supportedInterfaces" not in card:
            continue  # the 0.3 shape of the SDK's compatibility layer: signatures dropped
        assert verify_card(card, [public_jwk(key, "proxy-1")]).status == "verified", name
        assert {h["jku"] for h in _protected(card)} == {public + PROXY_JWKS_PATH}, name


def test_without_declare_the_extended_card_passes_through() -> None:
    # The proxy changes no card it was not told to: the extended card is upstream's.
    from support.servers import serve

    v1 = {"A2A-Version": "1.0"}
    with (
        serve(_extended_upstream(signed=False, declared=True)) as origin,
        proxy_running(origin, poll=0) as proxy,
    ):
        direct = httpx.get(origin + "/a2a/rest/extendedAgentCard", headers=v1)
        proxied = proxy.http.get("/a2a/rest/extendedAgentCard", headers=v1)
    assert direct.status_code == 200 and EXTRA_SKILL["id"].encode() in direct.content
    assert proxied.content == direct.content


def test_jku_flag_usage_errors(tmp_path: Path) -> None:
    # PROFILE §6.7, docs/decisions.md D-PROXY-31: --jku names the key of a card the proxy
    # re-signs; alone, or not an http(s) URL, it is one line and exit 2.
    from a2a_interview.card import private_jwk
    from support.proxy import proxy_command

    key = tmp_path / "card.jwk.json"
    key.write_text(json.dumps(private_jwk(generate_key("EdDSA"), "proxy-1")))
    base = ("--upstream", "http://127.0.0.1:9/", "--port", "9")
    signing = ("--declare", "--card-key", str(key), "--kid", "proxy-1")
    cases = [
        (("--jku", "https://keys.example/jwks.json"), "add --card-key"),
        ((*signing, "--jku", "ftp://keys.example/jwks.json"), "not an http:// or https:// URL"),
    ]
    for extra, message in cases:
        process = proxy_command(*base, *extra)
        _, err = process.communicate(timeout=30)
        assert (process.returncode, "Traceback" in err) == (2, False), (extra, err)
        assert message in err, (extra, err)
