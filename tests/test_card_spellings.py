"""A card's A2A 1.0 members under their proto field names (D-VERIFY-39): both SDKs'
parsers read `supported_interfaces`, `protocol_binding` and `protocol_version` as they
read `supportedInterfaces`, `protocolBinding` and `protocolVersion` (ProtoJSON; docs/
decisions.md D-VERIFY-28), so every reader of a card's interfaces here does too: the
verifier (which interfaces it interviews, at which `A2A-Version`), and the middleware,
the a2a-sdk route and the proxy (which versions a card declares, PROFILE §3.10).
Expected values are written out by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_interview import rpc
from a2a_interview.cardproto import spelling
from a2a_interview.declarations import Interface, interfaces
from agents import JSONRPC_PATH, REST_PATH, honest
from support.servers import serve
from support.verify import found, verified

CAMEL: dict[str, Any] = {
    "name": "A",
    "supportedInterfaces": [
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://a.example/v1", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.1"},
    ],
}
SNAKE: dict[str, Any] = {
    "name": "A",
    "supported_interfaces": [
        {"url": "https://a.example/rpc", "protocol_binding": "JSONRPC", "protocol_version": "1.0"},
        {"url": "https://a.example/v1", "protocol_binding": "HTTP+JSON", "protocol_version": "1.1"},
    ],
}


def test_spelling_names_the_member_as_served() -> None:
    assert spelling(CAMEL, "supportedInterfaces") == "supportedInterfaces"
    assert spelling(SNAKE, "supportedInterfaces") == "supported_interfaces"
    assert spelling({}, "supportedInterfaces") == "supportedInterfaces"
    # Both present (a card a2a-sdk refuses to parse, D-VERIFY-29): the JSON name.
    assert spelling({**CAMEL, **SNAKE}, "supportedInterfaces") == "supportedInterfaces"
    assert spelling({"protocol_version": "1.0"}, "protocolVersion") == "protocol_version"


def test_interfaces_are_read_under_either_spelling() -> None:
    assert interfaces(CAMEL) == [
        Interface("JSONRPC", "https://a.example/rpc", "1.0", "/supportedInterfaces/0"),
        Interface("HTTP+JSON", "https://a.example/v1", "1.1", "/supportedInterfaces/1"),
    ]
    # The pointer names the member as the card serves it (RFC 6901 over the served JSON).
    assert interfaces(SNAKE) == [
        Interface("JSONRPC", "https://a.example/rpc", "1.0", "/supported_interfaces/0"),
        Interface("HTTP+JSON", "https://a.example/v1", "1.1", "/supported_interfaces/1"),
    ]
    mixed = {"supported_interfaces": [{"url": "https://a.example/rpc",
                                       "protocolBinding": "JSONRPC",
                                       "protocol_version": "1.0"}]}  # fmt: skip
    assert interfaces(mixed) == [
        Interface("JSONRPC", "https://a.example/rpc", "1.0", "/supported_interfaces/0")
    ]


def test_declared_versions_are_read_under_either_spelling() -> None:
    # PROFILE §3.10: an activated call under a version the card does not declare gets
    # -32009; a card spelled with proto names declared none before, so every 1.0 call
    # to a host serving it was refused.
    for card in (CAMEL, SNAKE):
        assert rpc.declared_versions(card) == {(1, 0)}
        assert rpc.declared_versions(card, "HTTP+JSON") == {(1, 1)}
        assert rpc.declared_versions(card, "GRPC") == frozenset()
    no_version = {"supported_interfaces": [{"url": "u", "protocol_binding": "JSONRPC"}]}
    assert rpc.declared_versions(no_version) == {(1, 0)}  # absent: 1.0


def _snake_case(card: dict[str, Any]) -> dict[str, Any]:
    renamed = {"protocolBinding": "protocol_binding", "protocolVersion": "protocol_version"}
    items = card.pop("supportedInterfaces")
    card["supported_interfaces"] = [
        {renamed.get(name, name): value for name, value in item.items()} for item in items
    ]
    return card


@pytest.mark.anyio
async def test_an_agent_whose_card_spells_proto_names_is_interviewed() -> None:
    # The verifier over loopback against the reference agent serving its card with
    # proto field names: both interfaces are found and asked (before: none was, and
    # the agent read as not offering the interview), and it is consistent.
    with serve(lambda origin: honest(origin, edit_card=_snake_case)) as origin:
        document = await verified(origin)
    assert document["outcome"] == "consistent", found(document, 0)
    asked = {call["interface"] for run in document["runs"] for call in run["calls"]}
    assert asked == {origin + JSONRPC_PATH, origin + REST_PATH}, asked
