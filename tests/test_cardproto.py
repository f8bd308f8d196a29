"""The ``proto`` reading (PROFILE §6.3) and the ``null`` header quirk (PROFILE §6.6).

Order: the field table against a2a-sdk's own descriptors; the proto payload against
a2a-sdk's own canonical form, byte for byte (fixed cards, then generated ones); the cards
signed by both SDKs (tests/data/sdk-signed, made as its README says); a card signed at
test time by the installed a2a-sdk; cards the SDKs refuse; the header quirk.

a2a-sdk is imported here to name what the SDK does; the core never imports it.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_interview.card import (
    QUIRK_NULL_HEADER_MEMBER,
    SignatureStatus,
    generate_key,
    jwks_from_json,
    public_jwk,
    sign_card,
    signing_payload,
    verify_card,
)
from a2a_interview.cardproto import MESSAGES, Field, proto_form, proto_name
from a2a_interview.jcs import canonicalize

SDK_SIGNED = Path(__file__).resolve().parent / "data" / "sdk-signed"
INTERVIEW = "https://agentsow.com/extensions/a2a-interview/v1"


def _load(name: str) -> dict[str, Any]:
    value = json.loads((SDK_SIGNED / name).read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _jwks() -> list[dict[str, Any]]:
    return jwks_from_json((SDK_SIGNED / "jwks.json").read_bytes())


def _sdk_bytes(card: dict[str, Any]) -> bytes:
    """What a2a-sdk 1.3 signs for ``card`` (its card resolver's parse, then its signer's
    canonical form), or raises the SDK's ParseError when it refuses the card."""
    from a2a.types import AgentCard
    from a2a.utils.signing import _canonicalize_agent_card
    from google.protobuf.json_format import ParseDict

    parsed = ParseDict(copy.deepcopy(card), AgentCard(), ignore_unknown_fields=True)
    return _canonicalize_agent_card(parsed).encode("utf-8")


# ---------------------------------------------------------------------------------------
# The field table is the SDK's schema


def _descriptor_messages() -> dict[str, Any]:
    from a2a.types import AgentCard

    found: dict[str, Any] = {}

    def walk(desc: Any) -> None:
        if desc.name in found or desc.full_name.startswith("google.protobuf"):
            return
        if desc.GetOptions().map_entry:
            return
        found[desc.name] = desc
        for f in desc.fields:
            target = f.message_type
            if target is not None and target.GetOptions().map_entry:
                target = target.fields_by_name["value"].message_type
            if target is not None:
                walk(target)

    walk(AgentCard.DESCRIPTOR)
    return found


def _as_field(f: Any) -> Field:
    from google.protobuf.descriptor import FieldDescriptor as FD

    kinds = {FD.TYPE_STRING: "string", FD.TYPE_BOOL: "bool"}
    message = f.message_type
    is_map = message is not None and message.GetOptions().map_entry
    if is_map:
        value = message.fields_by_name["value"]
        message = value.message_type
        kind = kinds.get(value.type, "message" if message is not None else "other")
    elif message is not None:
        kind = "struct" if message.full_name == "google.protobuf.Struct" else "message"
    else:
        kind = kinds.get(f.type, "other")
    target = message.name if message is not None and kind == "message" else None
    oneof = f.containing_oneof
    return Field(
        kind,  # type: ignore[arg-type]
        target,
        repeated=f.is_repeated and not is_map,
        map=is_map,
        presence=f.has_presence,
        # A synthetic oneof (proto3 optional) is presence, not a group.
        oneof=oneof.name if oneof is not None and not oneof.name.startswith("_") else None,
    )


def test_field_table_matches_the_sdk_descriptors() -> None:
    # PROFILE §6.3: the table of every message reachable from AgentCard is the SDK's.
    described = _descriptor_messages()
    assert set(MESSAGES) == set(described)
    for name, desc in described.items():
        assert {f.json_name for f in desc.fields} == set(MESSAGES[name]), name
        for f in desc.fields:
            assert MESSAGES[name][f.json_name] == _as_field(f), (name, f.json_name)
            assert proto_name(f.json_name) == f.name, (name, f.json_name)


def test_only_two_bools_lose_false() -> None:
    # D-VERIFY-26: `required: false` goes, `pushNotifications: false` stays.
    no_presence = {
        (m, n) for m, fs in MESSAGES.items() for n, f in fs.items() if f.kind == "bool"
        and not f.presence
    }  # fmt: skip
    assert no_presence == {
        ("AgentExtension", "required"),
        ("AuthorizationCodeOAuthFlow", "pkceRequired"),
    }


# ---------------------------------------------------------------------------------------
# The proto payload is what a2a-sdk signs, byte for byte

FIXED_CARDS: dict[str, dict[str, Any]] = {
    "required false": {
        "name": "A",
        "capabilities": {"extensions": [{"uri": INTERVIEW, "required": False}]},
    },
    "optional bools kept": {
        "name": "A",
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "extendedAgentCard": False,
        },
    },
    "snake_case spellings": {
        "name": "A",
        "supported_interfaces": [{"url": "https://a.example/", "protocol_binding": "JSONRPC"}],
        "default_input_modes": ["text/plain"],
        "icon_url": "https://a.example/i.png",
    },
    "unknown members dropped": {
        "name": "A",
        "x-extra": {"deep": [1, 2]},
        "capabilities": {"stateTransitionHistory": True, "streaming": True},
        "skills": [{"id": "s", "name": "S", "security": [{"k": []}]}],
    },
    "struct params as they are": {
        "name": "A",
        "capabilities": {
            "extensions": [
                {
                    "uri": "u",
                    "params": {
                        "n": 0,
                        "f": 1.5,
                        "b": False,
                        "s": "",
                        "l": [],
                        "z": None,
                        "big": 9007199254740991,
                        "o": {"x": {}},
                    },
                }
            ]
        },
    },
    "oauth flow with pkce false": {
        "name": "A",
        "securitySchemes": {
            "o": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://a.example/auth",
                            "tokenUrl": "https://a.example/token",
                            "scopes": {"read": "Read", "none": ""},
                            "pkceRequired": False,
                        }
                    }
                }
            },
            "k": {"apiKeySecurityScheme": {"location": "header", "name": "X"}},
        },
        "securityRequirements": [{"schemes": {"o": {"list": ["read"]}, "k": {}}}],
    },
    "null members unset": {"name": "A", "description": None, "capabilities": None},
    "presence strings kept empty then pruned": {"name": "A", "documentationUrl": ""},
}


@pytest.mark.parametrize("name", sorted(FIXED_CARDS))
def test_proto_payload_is_the_sdk_canonical_form(name: str) -> None:
    # PROFILE §6.3: byte for byte what a2a-sdk 1.3's signer signs.
    card = FIXED_CARDS[name]
    assert signing_payload(card, "proto") == [_sdk_bytes(card)]


@pytest.mark.parametrize("name", sorted(p.name for p in SDK_SIGNED.glob("card-*.json")))
def test_proto_payload_of_the_fixture_cards_is_the_sdk_canonical_form(name: str) -> None:
    card = _load(name)
    assert signing_payload(card, "proto") == [_sdk_bytes(card)]


def _values(field: Field, draw: Any, depth: int) -> Any:
    if field.kind == "string":
        return draw(st.sampled_from(["", "x", "é", "https://a.example/", None]))
    if field.kind == "bool":
        return draw(st.sampled_from([True, False, None]))
    if field.kind == "struct":
        leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", "v"]))
        return draw(
            st.dictionaries(
                st.sampled_from(["a", "b", "c"]),
                st.recursive(leaf, lambda c: st.lists(c, max_size=2) | st.dictionaries(
                    st.sampled_from(["p", "q"]), c, max_size=2), max_leaves=4),
                max_size=3,
            )
        )  # fmt: skip
    assert field.target is not None
    return _message(field.target, draw, depth + 1)


def _message(name: str, draw: Any, depth: int) -> dict[str, Any]:
    fields = MESSAGES[name]
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), max_size=4 if depth < 3 else 1,
                           unique=True))  # fmt: skip
    out: dict[str, Any] = {}
    groups: set[str] = set()
    for json_name in chosen:
        field = fields[json_name]
        if field.oneof is not None:
            if field.oneof in groups:
                continue
            groups.add(field.oneof)
        spelling = draw(st.sampled_from([json_name, proto_name(json_name)]))
        if field.repeated:
            inner = Field(field.kind, field.target)
            value: Any = [_values(inner, draw, depth) for _ in range(draw(st.integers(0, 2)))]
            value = [v for v in value if v is not None]
        elif field.map:
            inner = Field(field.kind, field.target)
            value = {k: _values(inner, draw, depth) for k in draw(st.lists(
                st.sampled_from(["k", "m"]), max_size=2, unique=True))}  # fmt: skip
            value = {k: v for k, v in value.items() if v is not None}
        else:
            value = _values(field, draw, depth)
        out[spelling] = value
    if draw(st.booleans()):
        out["x-unknown"] = draw(st.sampled_from([0, "", False, {"y": 1}]))
    return out


@st.composite
def _cards(draw: Any) -> dict[str, Any]:
    card = _message("AgentCard", draw, 0)
    card.pop("signatures", None)
    return card


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cards())
def test_proto_payload_matches_the_sdk_on_generated_cards(card: dict[str, Any]) -> None:
    # PROFILE §6.3, every field of the table at every kind of value (defaults, nulls,
    # both spellings, unknown members): same bytes as a2a-sdk, or both refuse.
    from google.protobuf.json_format import ParseError

    try:
        expected = [_sdk_bytes(card)]
    except ParseError:
        expected = []
    got = signing_payload(card, "proto")
    if got == [b"null", b"{}"]:
        got = got[:1]  # a2a-sdk's half of an all-empty card (a2a-js signs "{}")
    assert got == expected


# ---------------------------------------------------------------------------------------
# Cards signed by both SDKs (D-VERIFY-26)

SIGNED = sorted(p.name for p in SDK_SIGNED.glob("*-signed-*.json"))


def test_both_sdks_and_both_shapes_are_present() -> None:
    assert SIGNED == [
        "js-signed-compat.json",
        "js-signed-plain.json",
        "python-signed-compat.json",
        "python-signed-plain.json",
    ]


@pytest.mark.parametrize("name", SIGNED)
def test_sdk_signed_card_verifies_under_proto(name: str) -> None:
    # PROFILE §6.3: a card declaring the interview with "required": false, signed by
    # either SDK's signer, verifies, and the result says the reading.
    card = _load(name)
    declared = card["capabilities"]["extensions"][0]
    assert (declared["uri"], declared["required"]) == (INTERVIEW, False)
    report = verify_card(card, _jwks())
    assert report.status is SignatureStatus.verified
    assert (report.reading, report.readings) == ("proto", ("proto",))
    assert report.kid == ("py-es256" if name.startswith("python") else "js-ed25519")


@pytest.mark.parametrize("name", SIGNED)
@pytest.mark.parametrize("reading", ["served", "prune-empty"])
def test_sdk_signed_card_fails_under_the_other_readings(name: str, reading: str) -> None:
    # D-VERIFY-26: the SDKs do not sign the served card, nor keep "required": false.
    report = verify_card(_load(name), _jwks(), readings=(reading,))  # type: ignore[arg-type]
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "bad_signature"


TAMPERS: dict[str, Any] = {
    "name": lambda c: c.update(name="Someone Else"),
    "required true": lambda c: c["capabilities"]["extensions"][0].update(required=True),
    "pushNotifications dropped": lambda c: c["capabilities"].pop("pushNotifications"),
    "interface url": lambda c: c["supportedInterfaces"][0].update(url="https://evil.example/"),
    "skill added": lambda c: c["skills"].append({"id": "x", "name": "X"}),
}


@pytest.mark.parametrize("name", SIGNED)
@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_tampered_sdk_signed_card_is_invalid(name: str, tamper: str) -> None:
    card = _load(name)
    TAMPERS[tamper](card)
    report = verify_card(card, _jwks())
    assert report.status is SignatureStatus.invalid


@pytest.mark.parametrize("name", ["js-signed-compat.json", "python-signed-compat.json"])
def test_members_outside_the_messages_are_uncovered(name: str) -> None:
    # decisions D-VERIFY-8: proto drops what the 1.0 messages do not define, as both SDKs do, and
    # the check says those members are not covered.
    card = _load(name)
    report = verify_card(card, _jwks())
    assert set(report.checks[0].uncovered) == {
        "/url", "/preferredTransport", "/protocolVersion", "/additionalInterfaces",
        "/capabilities/stateTransitionHistory", "/security",
        "/securitySchemes/key/type", "/securitySchemes/key/in", "/securitySchemes/key/name",
    }  # fmt: skip
    card["url"] = "https://evil.example/"  # not covered: still verified, still said
    assert verify_card(card, _jwks()).status is SignatureStatus.verified


def test_python_signed_cards_carry_the_null_jku_quirk() -> None:
    # PROFILE §6.6: a2a-sdk emits "jku": null; read as absent, reported, never silent.
    for name in SIGNED:
        card = _load(name)
        protected = card["signatures"][0]["protected"]
        header = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
        report = verify_card(card, _jwks())
        if name.startswith("python"):
            assert header["jku"] is None
            assert report.quirks == (QUIRK_NULL_HEADER_MEMBER,)
            assert report.checks[0].jku is None
        else:
            assert "jku" not in header
            assert report.quirks == ()


def test_card_signed_at_test_time_by_the_installed_sdk_verifies() -> None:
    # PROFILE §6.3: a2a-sdk's create_agent_card_signer, the signature appended to the
    # card JSON as authored.
    from a2a.types import AgentCard
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict, ParseDict
    from jwt.api_jwk import PyJWK

    from a2a_interview.card import private_jwk

    key = generate_key("ES256")
    authored = _load("card-plain.json")
    signer = create_agent_card_signer(
        PyJWK(private_jwk(key, "now")), {"alg": "ES256", "kid": "now", "jku": None, "typ": "JOSE"}
    )
    proto = signer(ParseDict(copy.deepcopy(authored), AgentCard(), ignore_unknown_fields=True))
    card = {**authored, "signatures": [MessageToDict(proto.signatures[0])]}
    report = verify_card(card, [public_jwk(key, "now")])
    assert (report.status, report.reading) == (SignatureStatus.verified, "proto")
    assert report.quirks == (QUIRK_NULL_HEADER_MEMBER,)
    card["capabilities"]["streaming"] = True
    assert verify_card(card, [public_jwk(key, "now")]).status is SignatureStatus.invalid


# ---------------------------------------------------------------------------------------
# Cards that do not fit the messages: the Python SDK refuses them, so does proto


REFUSED: dict[str, dict[str, Any]] = {
    "string field given a number": {"name": 7},
    "bool field given a string": {"capabilities": {"streaming": "false"}},
    "both spellings": {"iconUrl": "a", "icon_url": "b"},
    "two oneof cases": {
        "securitySchemes": {"k": {"apiKeySecurityScheme": {}, "mtlsSecurityScheme": {}}}
    },
    "null inside a list": {"defaultInputModes": ["text/plain", None]},
    "params not an object": {"capabilities": {"extensions": [{"uri": "u", "params": [1]}]}},
    "list given an object": {"skills": {"id": "s"}},
    "card not an object": [],  # type: ignore[dict-item]
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_cards_the_sdk_refuses_have_no_proto_form(name: str) -> None:
    from google.protobuf.json_format import ParseError

    card = REFUSED[name]
    if isinstance(card, dict):
        with pytest.raises(ParseError):
            _sdk_bytes(card)
        assert signing_payload(card, "proto") == []
    assert proto_form(card) is None


def test_refused_card_is_invalid_under_proto_not_an_error() -> None:
    key = generate_key("EdDSA")
    card = sign_card({"name": "A", "capabilities": {"streaming": "yes"}}, key, kid="k")
    report = verify_card(card, [public_jwk(key, "k")], readings=("proto",))
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "not_canonical"


# ---------------------------------------------------------------------------------------
# The null header quirk (PROFILE §6.6)


def _with_header(header: dict[str, Any], unprotected: dict[str, Any] | None = None) -> Any:
    """A card signed under an exact protected header, and its key."""
    from a2a_interview.card._jose import b64e as _b64e
    from a2a_interview.card._jose import sign as _sign_raw

    key = generate_key("EdDSA")
    card: dict[str, Any] = {"name": "Q", "version": "1"}
    protected = _b64e(json.dumps(header).encode())
    payload = _b64e(canonicalize(card))
    sig = _b64e(_sign_raw(key, "EdDSA", f"{protected}.{payload}".encode()))
    item: dict[str, Any] = {"protected": protected, "signature": sig}
    if unprotected is not None:
        item["header"] = unprotected
    return {**card, "signatures": [item]}, [public_jwk(key, "k")]


@pytest.mark.parametrize("member", ["jku", "typ", "kid", "x5u"])
def test_null_header_member_is_read_as_absent_and_reported(member: str) -> None:
    header = {"alg": "EdDSA", "kid": "k", "typ": "JOSE", member: None}
    card, keys = _with_header(header)
    if member == "kid":
        # kid: null is no kid; only a key without a kid member matches it.
        keys = [{k: v for k, v in keys[0].items() if k != "kid"}]
    report = verify_card(card, keys)
    assert report.status is SignatureStatus.verified
    assert report.quirks == (QUIRK_NULL_HEADER_MEMBER,)


def test_header_without_nulls_has_no_quirk() -> None:
    card, keys = _with_header({"alg": "EdDSA", "kid": "k", "typ": "JOSE"})
    report = verify_card(card, keys)
    assert (report.status, report.quirks) == (SignatureStatus.verified, ())


@pytest.mark.parametrize("member", ["alg", "crit", "b64"])
def test_null_is_never_absent_where_it_changes_processing(member: str) -> None:
    header: dict[str, Any] = {"alg": "EdDSA", "kid": "k", "typ": "JOSE"}
    header[member] = None
    card, keys = _with_header(header)
    report = verify_card(card, keys)
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "malformed"


def test_null_protected_member_repeated_unprotected_is_malformed() -> None:
    # RFC 7515 §7.2.1: the names are disjoint as sent; a null does not free the name.
    card, keys = _with_header(
        {"alg": "EdDSA", "kid": "k", "typ": "JOSE", "jku": None}, {"jku": "https://evil.example/"}
    )
    report = verify_card(card, keys)
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "malformed"
    assert report.quirks == (QUIRK_NULL_HEADER_MEMBER,)
