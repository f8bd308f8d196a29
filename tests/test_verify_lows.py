"""What the verifier says of stock agents in small cases (PROFILE §7, §8), over loopback:

- an HTML page at the JSON-RPC URL is judged as the same page at the card URL is
  (unreachable), and no check passes that had nothing to check;
- a card whose variants are signed differently says so, variant by variant, instead of
  the default card's status alone;
- a pinned JWKS in verify-many without the card's kid falls back to the card's own jku;
- a host name that does not resolve is said once, not as per-interface noise.
"""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import reference
from a2a_interview.cli import main
from a2a_interview.report import render_report
from a2a_interview.spec import CARD_PATH
from a2a_interview.verifier import VerifyOptions, verify
from a2a_interview.verifier.client import ClientOptions
from agents import JSONRPC_PATH, Call, Reply, Wrap, honest
from support.servers import serve, serve_many

pytestmark = pytest.mark.anyio

HTML = [(b"content-type", b"text/html; charset=utf-8")]
PAGE = b"<!doctype html><html><body>Welcome</body></html>"


def _jsonrpc_only(card: dict[str, Any]) -> dict[str, Any]:
    card["supportedInterfaces"] = [
        i for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC"
    ]
    return card


def _html_at(path: str) -> Any:
    def factory(origin: str) -> Any:
        def on_request(call: Call) -> Reply | None:
            return Reply(200, HTML, PAGE) if call.path == path else None

        return Wrap(honest(origin, edit_card=_jsonrpc_only), on_request)

    return factory


async def test_an_html_page_at_the_jsonrpc_url_is_unreachable_as_at_the_card_url() -> None:
    # Before: non_conformant (answer_shape not_json) with determinism PASS, after a re-run.
    with serve(_html_at(JSONRPC_PATH)) as origin:
        record = (await verify(origin, churn_delay=0)).to_json()
    with serve(_html_at(CARD_PATH)) as origin:
        at_card = (await verify(origin, churn_delay=0)).to_json()
    assert record["outcome"] == at_card["outcome"] == "unreachable"
    assert record["incomplete"]["reason"] == "not_its_binding"
    assert record["incomplete"]["url"] == origin.replace(origin, record["incomplete"]["url"])
    assert record["incomplete"]["url"].endswith(JSONRPC_PATH)
    assert len(record["runs"]) == 1 and record["runs"][0]["conflicts"] == []
    asked = ("inactive_probe", "activation_echo", "answer_shape", "determinism", "projection")
    assert all(record["checks"][check] == "skipped" for check in asked), record["checks"]
    assert "not_its_binding" in render_report(record)


async def test_an_html_interface_beside_a_working_one_is_an_advisory() -> None:
    # As a transport failure on one of two interfaces: the other is judged.
    def factory(origin: str) -> Any:
        def on_request(call: Call) -> Reply | None:
            return Reply(200, HTML, PAGE) if call.path == JSONRPC_PATH else None

        return Wrap(honest(origin), on_request)

    with serve(factory) as origin:
        record = (await verify(origin, churn_delay=0)).to_json()
    assert record["outcome"] == "consistent"
    assert [a["reason"] for a in record["advisories"] if a["code"] == "interface"] == ["abandoned"]


class ByVersion:
    """Serves one agent per ``A2A-Version`` (a legacy a2a-js agent behind
    ``proxy --declare --card-key``: the 0.3 card unsigned, the 1.0 card signed)."""

    def __init__(self, default: Any, variants: dict[str, Any]) -> None:
        self.default = default
        self.variants = variants
        self.cards: Counter[str] = Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        version = b""
        if scope["type"] == "http":
            version = dict(scope["headers"]).get(b"a2a-version", b"")
        await self.variants.get(version.decode().strip(), self.default)(scope, receive, send)


async def test_each_variant_says_its_own_signature() -> None:
    # Before: the headline said "unsigned" (the default card's) while agent.keys listed
    # the key that verified the 1.0 card.
    def factory(origin: str) -> Any:
        return ByVersion(honest(origin, signed=False), {"1.0": honest(origin)})

    with serve(factory) as origin:
        record = (await verify(origin, churn_delay=0)).to_json()
    signature = record["agent"]["card_signature"]
    assert signature["status"] == "unsigned"
    (variant,) = signature["variants"]
    assert (variant["version"], variant["status"]) == ("1.0", "verified")
    assert variant["thumbprint"] in record["agent"]["keys"]
    report = render_report(record)
    assert "Card signature (the card served without A2A-Version): unsigned" in report
    assert "  A2A-Version 1.0 card: verified under the" in report


async def test_one_signature_for_all_variants_keeps_one_line() -> None:
    with serve(honest) as origin:
        record = (await verify(origin, churn_delay=0)).to_json()
    assert "variants" not in record["agent"]["card_signature"]
    assert "Card signature: verified under the" in render_report(record)


def test_a_pinned_jwks_without_the_cards_kid_falls_back_to_its_jku(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: one --jwks for verify-many pinned every agent's keys, so an agent whose
    # card verifies from its own jku was key_unavailable.
    other = {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "someone-else",
                       "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}  # fmt: skip
    jwks = tmp_path / "keys.json"
    jwks.write_text(json.dumps(other))
    with serve_many([honest, honest]) as origins:
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        out = tmp_path / "records.jsonl"
        code = main(["verify-many", str(listing), "--out", str(out), "--no-progress",
                     "--churn-delay", "0", "--jwks", str(jwks)])  # fmt: skip
        assert code == 0
        records = [json.loads(line) for line in out.read_text().splitlines()]
        signatures = [r["agent"]["card_signature"] for r in records]
        assert [(s["status"], s["key_source"]) for s in signatures] == [("verified", "jku")] * 2
        # A pinned set that holds the kid is still the only source tried for it.
        pinned = tmp_path / "reference.json"
        pinned.write_text(json.dumps(reference.jwks()))
        assert main(["verify", origins[0], "--churn-delay", "0", "--json",
                     "--jwks", str(pinned)]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["agent"]["card_signature"]["key_source"] == (
        "pinned"
    )


async def _nothing_resolves(host: str, port: int) -> list[str]:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def _example_urls(origin: str) -> Any:
    """The README's a2a-sdk snippet served locally: its card names https://agent.example."""

    def move(card: dict[str, Any]) -> dict[str, Any]:
        for interface in card["supportedInterfaces"]:
            interface["url"] = interface["url"].replace(origin, "https://agent.example")
        return card

    return honest(origin, edit_card=move)


async def test_a_host_that_does_not_resolve_is_said_once() -> None:
    # Before: "abandoned: card /supportedInterfaces/0 3", once per interface, each after
    # three lookups, and a bare "the host name did not resolve".
    options = VerifyOptions(churn_delay=0, client=ClientOptions(resolver=_nothing_resolves))
    with serve(_example_urls) as origin:
        record = (await verify(origin, options)).to_json()
    assert record["outcome"] == "unreachable"
    incomplete = record["incomplete"]
    assert (incomplete["reason"], incomplete["cause"]) == ("connect_failed", "name")
    assert "interface URLs" in incomplete["detail"] and "served locally" in incomplete["detail"]
    interface = [a for a in record["advisories"] if a["code"] == "interface"]
    assert [(a["reason"], a["value"]) for a in interface] == [
        ("host_not_resolved", {"host": "agent.example",
                               "interfaces": ["/supportedInterfaces/0", "/supportedInterfaces/1"]})
    ]  # fmt: skip
    report = render_report(record)
    assert '"agent.example" did not resolve; 2 interface(s) not asked' in report
    assert "abandoned" not in report


def test_the_readme_says_how_to_run_the_snippet_locally() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    assert "agent.example" in readme and "127.0.0.1:8000" in readme
    assert "run the snippet on your machine" in readme
