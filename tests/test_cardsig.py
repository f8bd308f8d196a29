"""Card signatures: A2A §8.4 as PROFILE §6 profiles it.

Order: the card-sign vectors compared as bytes and as verdicts, then a2a-sdk interop both
ways, then each rule of the module, then hostile input.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview import strictjson
from a2a_interview.card import (
    ALGORITHMS,
    READINGS,
    CardSignatureReport,
    SignatureStatus,
    alg_for_key,
    generate_key,
    jwk_to_public_key,
    jwks_from_json,
    load_private_key,
    private_jwk,
    public_jwk,
    sign_card,
    sign_readings,
    signing_payload,
    thumbprint,
    verify_card,
)
from a2a_interview.errors import AlgorithmRefused, KeyFormatError, SignatureError
from a2a_interview.jcs import canonicalize
from needs import SHARED_VECTORS, shared_vectors
from support.keys import b64, key_for

VECTORS = SHARED_VECTORS / "card-sign"
REFERENCE = Path(__file__).resolve().parents[1] / "src" / "a2a_interview" / "reference"

ALGS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")

CARD: dict[str, Any] = {
    "name": "Probe Agent",
    "description": "Answers probes",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True, "pushNotifications": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "probe", "name": "Probe", "description": "Probe", "tags": ["probe"]}],
}


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signed(
    alg: str = "EdDSA", card: dict[str, Any] | None = None, kid: str = "k1"
) -> dict[str, Any]:
    # One signature under the strict reading: what the verifier tests below take apart.
    return sign_card(CARD if card is None else card, key_for(alg), kid=kid, alg=alg,
                     reading="served")  # fmt: skip


def jwks(alg: str = "EdDSA", kid: str = "k1") -> list[dict[str, Any]]:
    return [public_jwk(key_for(alg), kid, alg)]


def forged(
    header: dict[str, Any], signature: bytes = b"", card: dict[str, Any] = CARD
) -> dict[str, Any]:
    """A card carrying a hand-made signature item under ``header``."""
    item = {"protected": b64(canonicalize(header)), "signature": b64(signature)}
    return {**card, "signatures": [item]}


# ---------------------------------------------------------------------------------------
# The card-sign vectors, read in place (card-sign/ of needs.SHARED_VECTORS). A missing folder
# skips these tests with the reason outside CI and fails them under CI (tests/needs.py).


def _manifest() -> dict[str, Any] | None:
    try:
        return json.loads((VECTORS / "MANIFEST.json").read_bytes())  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None


MANIFEST = _manifest()
VECTOR_PATHS = [v["path"] for v in MANIFEST["vectors"]] if MANIFEST else ["<vectors missing>"]
PINNED = jwks_from_json((VECTORS / "testkey_jwks.json").read_bytes()) if MANIFEST else []


def test_vector_corpus_is_present_and_unchanged() -> None:
    # The tests read the shared corpus in place; each file must match MANIFEST's sha256.
    shared_vectors("card-sign")
    assert MANIFEST is not None, f"card-sign vectors missing at {VECTORS}"
    assert len(MANIFEST["vectors"]) == MANIFEST["counts"]["total"] == 42
    for entry in MANIFEST["vectors"]:
        data = (VECTORS / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["path"]
    assert [k["kid"] for k in PINNED] == ["hs-interop-test-v1"]


def _load_vector(path: str) -> dict[str, Any]:
    shared_vectors("card-sign")
    assert MANIFEST is not None, f"card-sign vectors missing at {VECTORS}"
    vector = strictjson.loads((VECTORS / path).read_bytes())
    assert isinstance(vector, dict)
    return vector


def _verifies(card: dict[str, Any], reading: str) -> bool:
    shared_vectors("card-sign")
    report = verify_card(card, PINNED, readings=(reading,))  # type: ignore[arg-type]
    assert report.status in (SignatureStatus.verified, SignatureStatus.invalid)
    return report.status is SignatureStatus.verified


def _signed_forms(vector: dict[str, Any]) -> set[str]:
    return {vector["canonical_utf8_hex"], *vector.get("canonical_utf8_hex_per_signature", ())}


@pytest.mark.parametrize("path", VECTOR_PATHS)
def test_vector_served_reading(path: str) -> None:
    """PROFILE §6.3: ``served`` is the vectors' ``served-as-is``.

    s3 and s4 do not name served-as-is; their ``unknown-retain`` and
    ``dual-name-tolerate`` readings are the served JSON kept verbatim (MANIFEST
    ``s3_readings``/``s4_readings``) and coincide with it on every card there.
    """
    vector = _load_vector(path)
    card = vector["served_card"]
    named = {"unknown-fields": "unknown-retain", "dual-name": "dual-name-tolerate"}
    reading = named.get(vector.get("axis", ""), "served-as-is")
    assert reading in vector["accept_under"] + vector["reject_under"]
    expected = reading in vector["accept_under"]
    assert _verifies(card, "served") is expected
    if expected:
        assert signing_payload(card, "served")[0].hex() in _signed_forms(vector)


# s3/s4 name no prune-empty reading. Our prune-empty (PROFILE §6.3) drops empties and, on
# an a2a-sdk card, the 0.3 members a2a-sdk merges; it keeps every other member outside
# the schema. So it accepts the unknown-exclude form only where the excluded members are
# empty or are those 0.3 members; a2a-python's *verifier* drops all unknown members
# (ParseDict ignore_unknown_fields) and accepts S3-004/006/008 too, but its signer can
# never have produced those served cards.
PRUNE_EMPTY_S3_S4 = {
    "S3-001": True,  # retain form, nothing empty: pruning changes nothing
    "S3-002": True,  # legacy 0.3 top level, exclude form: the compat-stripped card
    "S3-003": True,
    "S3-004": False,  # provider.legalEntity is not a 0.3 member: kept, so no match
    "S3-005": True,
    "S3-006": False,  # compensation: kept
    "S3-007": True,
    "S3-008": False,  # skills[0].costHint: kept
    "S3-009": False,  # x-reserved [] was signed; prune-empty drops it
    "S3-010": True,  # exclude form equals the pruned card
    "S3-D-012": True,
    "S3-D-013": True,  # url edited after signing: the 0.3 url is not covered (see below)
    "S3-T-011": True,  # likewise
    "S4-001": True,  # both spellings kept, nothing empty
    "S4-002": True,
    "S4-003": True,
    "S4-004": True,
    "S4-REJECT-005": False,
}


@pytest.mark.parametrize("path", VECTOR_PATHS)
def test_vector_prune_empty_reading(path: str) -> None:
    """PROFILE §6.3: ``prune-empty`` is the vectors' reading of that name (s0–s2)."""
    vector = _load_vector(path)
    card = vector["served_card"]
    if "axis" in vector:
        expected = PRUNE_EMPTY_S3_S4[vector["id"]]
    else:
        assert "prune-empty" in vector["accept_under"] + vector["reject_under"]
        expected = "prune-empty" in vector["accept_under"]
    assert _verifies(card, "prune-empty") is expected
    payloads = {p.hex() for p in signing_payload(card, "prune-empty")}
    if expected:
        assert payloads & _signed_forms(vector)
    if "axis" not in vector and expected:
        assert signing_payload(card, "prune-empty")[0].hex() == vector["canonical_utf8_hex"]


# How proto (PROFILE §6.3: what a2a-sdk and a2a-js sign) reads the corpus: s0–s2 as
# their prune-empty reading (defaults there sit in fields with presence, or are empties),
# s3 as unknown-exclude (both SDKs drop members outside the 1.0 messages), s4 as
# dual-name-refuse (a2a-sdk's parser refuses a member under both names; so does proto).
PROTO_POSITION = {"unknown-fields": "unknown-exclude", "dual-name": "dual-name-refuse"}


@pytest.mark.parametrize("path", VECTOR_PATHS)
def test_vector_proto_reading(path: str) -> None:
    vector = _load_vector(path)
    position = PROTO_POSITION.get(vector.get("axis", ""), "prune-empty")
    assert position in vector["accept_under"] + vector["reject_under"]
    assert _verifies(vector["served_card"], "proto") is (position in vector["accept_under"])


def test_vector_compat_strip_leaves_the_03_url_uncovered() -> None:
    # PROFILE §6.3 and the S3-T-011 vector: a prune-empty match that needed the 0.3
    # members removed says which members the signature does not cover.
    card = _load_vector("s3-unknown-fields/S3-T-011.json")["served_card"]
    report = verify_card(card, PINNED)
    assert report.status is SignatureStatus.verified
    # proto drops the same members: the 1.0 messages do not define them (PROFILE §6.3).
    assert report.readings == ("prune-empty", "proto")
    assert report.checks[0].uncovered == ("/url", "/preferredTransport", "/protocolVersion")


def test_vector_dual_signed_prefers_the_covering_signature() -> None:
    # S3-D-012: one signature per form; the report names the one covering every member.
    card = _load_vector("s3-unknown-fields/S3-D-012.json")["served_card"]
    report = verify_card(card, PINNED)
    assert report.status is SignatureStatus.verified
    assert [c.status for c in report.checks] == [SignatureStatus.verified] * 2
    assert report.reading == "served"
    assert report.readings == ("served", "prune-empty")
    assert report.checks[0].uncovered and not report.checks[1].uncovered


# ---------------------------------------------------------------------------------------
# a2a-sdk interop (a2a-sdk is a dev dependency; imported here only, never in the core)


def _sdk_card(**extra: Any) -> Any:
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentExtension,
        AgentInterface,
        AgentSkill,
    )

    return AgentCard(
        name="Echo Agent",
        description="Echoes",
        version="0.1.0",
        supported_interfaces=[
            AgentInterface(
                url="https://a.example/", protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            AgentInterface(
                url="https://a.example/", protocol_binding="JSONRPC", protocol_version="0.3"
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            extensions=[
                AgentExtension(
                    uri="https://agentsow.com/extensions/a2a-interview/v1",
                    description="interview",
                    params={"methods": ["interview/identity"], "n": 1},
                )
            ],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echo text", tags=["echo"])],
        **extra,
    )


def _sdk_sign_and_serve(card: Any, alg: str, kid: str = "sdk-1") -> dict[str, Any]:
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.utils.signing import create_agent_card_signer

    # jku left out: the SDK would put "jku": null into the protected header.
    create_agent_card_signer(key_for(alg), {"alg": alg, "kid": kid, "typ": "JOSE"})(card)  # type: ignore[typeddict-item]
    served = strictjson.loads(json.dumps(agent_card_to_dict(card)).encode())
    assert isinstance(served, dict)
    return served


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_sdk_signed_card_verifies_under_prune_empty(alg: str) -> None:
    # PROFILE §6.3: what a2a-python signs is the prune-empty reading with the 0.3 members
    # it merges into the served card removed.
    served = _sdk_sign_and_serve(_sdk_card(), alg)
    assert {"url", "preferredTransport", "protocolVersion"} <= served.keys()
    assert served["capabilities"]["extensions"][0]["required"] is False
    report = verify_card(served, jwks(alg, "sdk-1"))
    assert report.status is SignatureStatus.verified
    assert (report.reading, report.readings) == ("prune-empty", ("prune-empty", "proto"))
    assert report.kid == "sdk-1"
    assert report.thumbprint == thumbprint(jwks(alg, "sdk-1")[0])
    # The fewest uncovered members of the two readings: under proto "required": false is
    # the field's default, covered (a tampered true changes the bytes).
    assert set(report.checks[0].uncovered) == {"/url", "/preferredTransport", "/protocolVersion"}
    only = verify_card(served, jwks(alg, "sdk-1"), readings=("prune-empty",))
    assert only.checks[0].uncovered == (
        "/url",
        "/preferredTransport",
        "/protocolVersion",
        "/capabilities/extensions/0/required",
    )
    assert verify_card(served, jwks(alg, "sdk-1"), readings=("served",)).status == "invalid"


def test_sdk_compat_candidate_equals_the_sdk_signed_bytes() -> None:
    # PROFILE §6.3, byte for byte against the SDK's own canonical form (a private SDK
    # helper, used only to name the bytes the SDK signs).
    from a2a.utils.signing import _canonicalize_agent_card

    card = _sdk_card()
    sdk_bytes = _canonicalize_agent_card(card).encode("utf-8")
    served = _sdk_sign_and_serve(card, "EdDSA")
    candidates = signing_payload(served, "prune-empty")
    assert len(candidates) == 2
    assert candidates[1] == sdk_bytes
    assert candidates[0] != sdk_bytes


def test_sdk_required_false_must_be_removed_too() -> None:
    # The merge adds "required": false to each extension; with only the top-level 0.3
    # members removed the bytes still differ from what the SDK signed.
    served = _sdk_sign_and_serve(_sdk_card(), "EdDSA")
    partial = {
        k: v for k, v in served.items() if k not in ("url", "preferredTransport", "protocolVersion")
    }
    # (prune-empty alone: proto omits the default and verifies; test_cardproto.py)
    pe = ("prune-empty",)
    assert verify_card(partial, jwks("EdDSA", "sdk-1"), readings=pe).status == "invalid"
    del partial["capabilities"]["extensions"][0]["required"]
    assert verify_card(partial, jwks("EdDSA", "sdk-1"), readings=pe).status == "verified"


def test_sdk_card_with_every_compat_member_verifies() -> None:
    # Every member a2a-sdk 1.3's agent_card_to_dict merges in: additionalInterfaces,
    # security, supportsAuthenticatedExtendedCard, skills[].security and the flat 0.3
    # members of each securitySchemes entry.
    from a2a.types import (
        AgentInterface,
        APIKeySecurityScheme,
        AuthorizationCodeOAuthFlow,
        HTTPAuthSecurityScheme,
        MutualTlsSecurityScheme,
        OAuth2SecurityScheme,
        OAuthFlows,
        OpenIdConnectSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
        StringList,
    )

    card = _sdk_card(
        security_requirements=[SecurityRequirement(schemes={"k": StringList(list=["r"])})]
    )
    card.supported_interfaces.append(
        AgentInterface(
            url="https://a.example/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
        )
    )
    card.capabilities.extended_agent_card = True
    card.skills[0].security_requirements.append(
        SecurityRequirement(schemes={"k": StringList(list=["r"])})
    )
    schemes = card.security_schemes
    schemes["k"].CopyFrom(
        SecurityScheme(api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-K"))
    )
    schemes["h"].CopyFrom(
        SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer", bearer_format="JWT")
        )
    )
    flow = AuthorizationCodeOAuthFlow(
        authorization_url="https://a.example/au",
        token_url="https://a.example/t",
        scopes={"r": "read"},
    )
    schemes["o"].CopyFrom(
        SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(flows=OAuthFlows(authorization_code=flow))
        )
    )
    schemes["i"].CopyFrom(
        SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                open_id_connect_url="https://a.example/o"
            )
        )
    )
    schemes["m"].CopyFrom(
        SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme(description="m"))
    )
    served = _sdk_sign_and_serve(card, "ES256")
    assert {
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    } <= served.keys()
    report = verify_card(served, jwks("ES256", "sdk-1"))
    assert report.status is SignatureStatus.verified
    assert report.readings == ("prune-empty", "proto")
    uncovered = set(report.checks[0].uncovered)
    assert {
        "/security",
        "/skills/0/security",
        "/securitySchemes/k/type",
        "/securitySchemes/o/flows",
    } <= uncovered


def test_sdk_card_without_03_interface_verifies_under_both_readings() -> None:
    # With only 1.0 interfaces the SDK serves exactly what it signs (no empties either).
    card = _sdk_card()
    del card.supported_interfaces[1]
    served = _sdk_sign_and_serve(card, "EdDSA")
    assert "url" not in served
    report = verify_card(served, jwks("EdDSA", "sdk-1"))
    assert report.readings == READINGS
    assert len(signing_payload(served, "prune-empty")) == 1


@pytest.mark.parametrize("alg", ALGS)
def test_our_signature_verifies_with_the_sdk_verifier(alg: str) -> None:
    # PROFILE §6.3 both ways: on a card with no empties and no 0.3 members the served
    # bytes are the SDK's, so its verifier (PyJWT: raw r||s for ES*, PSS salt 32) agrees.
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import create_signature_verifier

    card = signed(alg, kid="ours")
    proto = parse_agent_card(json.loads(json.dumps(card)))
    public = key_for(alg).public_key()
    create_signature_verifier(lambda kid, jku: public, [alg])(proto)
    tampered = parse_agent_card(json.loads(json.dumps({**card, "name": "Other"})))
    from a2a.utils.signing import InvalidSignaturesError

    with pytest.raises(InvalidSignaturesError):
        create_signature_verifier(lambda kid, jku: public, [alg])(tampered)


# ---------------------------------------------------------------------------------------
# Round trips and statuses (PROFILE §6.5)


@pytest.mark.parametrize("alg", ALGS)
def test_round_trip(alg: str) -> None:
    # PROFILE §6.2 and §6.3: each allowed algorithm; our signer signs the served reading.
    card = signed(alg)
    report = verify_card(card, jwks(alg))
    assert report.status is SignatureStatus.verified
    assert report.reading == "served"
    assert report.readings == READINGS  # nothing empty, no default, no unknown in CARD
    assert report.kid == "k1"
    assert report.thumbprint == thumbprint(jwks(alg)[0])
    check = report.checks[0]
    assert (check.index, check.alg, check.kid, check.jku, check.reason) == (
        0,
        alg,
        "k1",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("alg", "length"), [("EdDSA", 64), ("ES256", 64), ("ES384", 96), ("PS256", 256), ("RS256", 256)]
)
def test_signature_lengths(alg: str, length: int) -> None:
    # RFC 7518 §3.4: ES* signatures are raw R||S of fixed width, not DER.
    item = signed(alg)["signatures"][0]
    assert len(unb64(item["signature"])) == length


def test_empty_member_verifies_only_served() -> None:
    # PROFILE §6.3: prune-empty drops "" so a served-signed card with one fails there.
    card = signed(card={**CARD, "description": ""})
    report = verify_card(card, jwks())
    assert report.readings == ("served",)
    assert verify_card(card, jwks(), readings=("prune-empty",)).status is SignatureStatus.invalid


def test_tampered_card_is_invalid() -> None:
    # A2A §8.4.3: the signature covers the card.
    card = {**signed(), "name": "Someone Else"}
    report = verify_card(card, jwks())
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "bad_signature"
    assert report.reading is None and report.readings == () and report.thumbprint is None


@pytest.mark.parametrize("card", [CARD, {**CARD, "signatures": []}])
def test_unsigned(card: dict[str, Any]) -> None:
    # PROFILE §6.5: no signatures member, or an empty list.
    report = verify_card(card, jwks())
    assert report.status is SignatureStatus.unsigned
    assert report.checks == ()


def test_unknown_kid_is_key_unavailable() -> None:
    # PROFILE §6.4–6.5: no key for the kid is not a bad signature.
    report = verify_card(signed(kid="other"), jwks())
    assert report.status is SignatureStatus.key_unavailable
    assert report.kid == "other"
    assert report.checks[0].reason == "no_key"


def test_wrong_key_same_kid_is_invalid() -> None:
    report = verify_card(signed("ES256"), [public_jwk(generate_key("ES256"), "k1")])
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "bad_signature"


def test_invalid_wins_over_key_unavailable() -> None:
    # PROFILE §6.5: with no verified signature, any failure under a usable key is invalid.
    good = signed(kid="k1")
    other = sign_card(CARD, key_for("ES256"), kid="nobody")["signatures"][0]
    tampered = {**good, "name": "X", "signatures": [other, *good["signatures"]]}
    report = verify_card(tampered, jwks())
    assert [c.status for c in report.checks] == ["key_unavailable", "invalid"]
    assert report.status is SignatureStatus.invalid


def test_one_good_signature_is_enough() -> None:
    # A2A §8.4.3: verify at least one; a bad one beside it does not spoil it.
    card = signed()
    bad = {"protected": card["signatures"][0]["protected"], "signature": b64(bytes(64))}
    two = {**card, "signatures": [bad, *card["signatures"]]}
    report = verify_card(two, jwks())
    assert report.status is SignatureStatus.verified
    assert [c.status for c in report.checks] == ["invalid", "verified"]


def test_report_to_json() -> None:
    # PROFILE §8: card_signature {status, reading, kid, thumbprint}; key_source is the caller's.
    report = verify_card(signed(), jwks())
    assert report.to_json() == {
        "status": "verified",
        "reading": "served",
        "kid": "k1",
        "thumbprint": thumbprint(jwks()[0]),
    }
    assert CardSignatureReport(SignatureStatus.unsigned).to_json() == {
        "status": "unsigned",
        "reading": None,
        "kid": None,
        "thumbprint": None,
    }
    assert [s.value for s in SignatureStatus] == [
        "verified",
        "unsigned",
        "invalid",
        "key_unavailable",
    ]


# ---------------------------------------------------------------------------------------
# Algorithms (PROFILE §6.2)


def test_allowlist() -> None:
    assert frozenset({"EdDSA", "ES256", "ES384", "PS256", "RS256"}) == ALGORITHMS


@pytest.mark.parametrize(
    "alg", ["none", "HS256", "HS384", "HS512", "ES512", "RS512", "Ed25519", ""]
)
def test_sign_refuses_unlisted_alg(alg: str) -> None:
    with pytest.raises(AlgorithmRefused):
        sign_card(CARD, key_for("EdDSA"), kid="k1", alg=alg)
    with pytest.raises(AlgorithmRefused):
        generate_key(alg)


def test_forged_alg_none_is_refused() -> None:
    card = forged({"alg": "none", "kid": "k1", "typ": "JOSE"})
    report = verify_card(card, jwks())
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "alg_refused"
    assert report.checks[0].alg == "none"


def test_forged_hs256_with_the_public_key_as_secret_is_refused() -> None:
    # The key-confusion attack: an HMAC keyed with the public key bytes the verifier holds.
    header = {"alg": "HS256", "kid": "k1", "typ": "JOSE"}
    protected = b64(canonicalize(header))
    signing_input = f"{protected}.{b64(signing_payload(CARD, 'served')[0])}".encode()
    pem = (
        key_for("RS256")
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    for secret in (pem, json.dumps(jwks("RS256")[0]).encode()):
        mac = hmac.new(secret, signing_input, hashlib.sha256).digest()
        report = verify_card(
            forged(header, mac), [{**jwks("RS256")[0], "alg": "HS256"}, *jwks("RS256")]
        )
        assert report.status is SignatureStatus.invalid
        assert report.checks[0].reason == "alg_refused"


def test_sign_refuses_alg_that_does_not_fit_the_key() -> None:
    with pytest.raises(SignatureError):
        sign_card(CARD, key_for("EdDSA"), kid="k1", alg="ES256")
    with pytest.raises(SignatureError):
        sign_card(CARD, key_for("ES256"), kid="k1", alg="ES384")


def test_alg_for_key() -> None:
    assert [alg_for_key(key_for(a)) for a in ALGS] == ["EdDSA", "ES256", "ES384", "RS256", "RS256"]
    assert alg_for_key(key_for("PS256"), rsa_alg="PS256") == "PS256"
    assert alg_for_key(key_for("ES384").public_key()) == "ES384"
    with pytest.raises(AlgorithmRefused):
        alg_for_key(key_for("RS256"), rsa_alg="HS256")
    with pytest.raises(KeyFormatError):
        alg_for_key(ec.generate_private_key(ec.SECP521R1()))


# ---------------------------------------------------------------------------------------
# The signer's output (PROFILE §6.1, §6.3)


def test_protected_header_bytes() -> None:
    item = signed()["signatures"][0]
    assert unb64(item["protected"]) == b'{"alg":"EdDSA","kid":"k1","typ":"JOSE"}'
    with_jku = sign_card(CARD, key_for("EdDSA"), kid="k1", jku="https://a.example/jwks.json")
    assert unb64(with_jku["signatures"][0]["protected"]) == (
        b'{"alg":"EdDSA","jku":"https://a.example/jwks.json","kid":"k1","typ":"JOSE"}'
    )
    assert set(item) == {"protected", "signature"}


def test_sign_card_returns_a_new_card_and_appends() -> None:
    original = json.loads(json.dumps(CARD))
    once = sign_card(original, key_for("EdDSA"), kid="a")
    assert original == CARD
    twice = sign_card(once, key_for("ES256"), kid="b", header={"note": "x"})
    assert len(once["signatures"]) == 1 and len(twice["signatures"]) == 2
    assert twice["signatures"][1]["header"] == {"note": "x"}
    report = verify_card(twice, [*jwks("EdDSA", "a"), *jwks("ES256", "b")])
    assert [c.status for c in report.checks] == ["verified", "verified"]


def test_sign_card_misuse() -> None:
    with pytest.raises(SignatureError):
        sign_card(CARD, key_for("EdDSA"), kid="k1", header={"kid": "dup"})  # RFC 7515 §7.2.1
    with pytest.raises(SignatureError):
        sign_card({**CARD, "signatures": {}}, key_for("EdDSA"), kid="k1")
    with pytest.raises(KeyFormatError):
        sign_card(CARD, key_for("EdDSA").public_key(), kid="k1")


# Signing what the SDKs verify (D-VERIFY-36, PROFILE §6.3) -----------------------

INTERVIEW_ENTRY: dict[str, Any] = {"uri": "https://agentsow.com/extensions/a2a-interview/v1"}


def _declaring(**entry: Any) -> dict[str, Any]:
    card = copy.deepcopy(CARD)
    card["capabilities"]["extensions"] = [{**INTERVIEW_ENTRY, **entry}]
    return card


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("entry", [{"required": False}, {}], ids=["required false", "left out"])
def test_default_signature_verifies_under_proto(alg: str, entry: dict[str, Any]) -> None:
    # PROFILE §6.3: whether the declaration spells "required": false or not
    # (docs/decisions.md D-VERIFY-37), a signature verifies under proto (what both SDKs
    # check) and one under served (the card as served); each alone.
    card = sign_card(_declaring(**entry), key_for(alg), kid="k1", alg=alg)
    report = verify_card(card, jwks(alg))
    by_reading = {c.readings[0]: c for c in report.checks if c.status == "verified"}
    if entry:  # the served bytes carry "required": false: a second signature covers them
        assert [c.readings[0] for c in report.checks] == ["proto", "served"]
        assert "served" not in report.checks[0].readings
    else:
        assert len(report.checks) == 1 and {"served", "proto"} <= set(report.checks[0].readings)
    for reading in ("proto", "served"):
        assert verify_card(card, jwks(alg), readings=(reading,)).status == "verified"
    assert by_reading and report.reading == "served"


def test_sign_readings_by_card() -> None:
    assert sign_readings(_declaring(required=False)) == ("proto", "served")
    assert sign_readings(_declaring()) == ("proto",)
    assert sign_readings({**CARD, "x-extra": 1}) == ("proto", "served")  # uncovered member
    assert sign_readings({**CARD, "description": ""}) == ("proto", "served")  # pruned
    old = {"name": "Old", "url": "https://a.example/rpc", "protocolVersion": "0.3.0"}
    assert sign_readings(old) == ("served",)  # not a 1.0 card
    assert sign_readings(old, "proto") == ("proto",)
    snake = {k: v for k, v in CARD.items() if k != "supportedInterfaces"}
    snake["supported_interfaces"] = CARD["supportedInterfaces"]
    assert sign_readings(snake) == ("proto", "served")  # a 1.0 card either spelling
    for reading in ("proto", "served"):
        assert sign_readings(_declaring(required=False), reading) == (reading,)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "card",
    [{**CARD, "capabilities": {"streaming": "yes"}}, {**CARD, "skills": [None]},
     {**CARD, "supported_interfaces": []}, {"name": "", "supportedInterfaces": [{"url": ""}]}],
    ids=["wrong type", "null in a list", "both spellings", "nothing left"],
)  # fmt: skip
def test_sign_card_refuses_proto_for_a_card_without_a_proto_form(card: dict[str, Any]) -> None:
    # PROFILE §6.3: the SDKs refuse or coerce such a card (or sign "null" and "{}"), so no
    # signature would verify with both: refused, saying why; served still signs.
    with pytest.raises(SignatureError, match="can verify with the SDKs' verifiers"):
        sign_card(card, key_for("EdDSA"), kid="k1")
    with pytest.raises(SignatureError):
        sign_card(card, key_for("EdDSA"), kid="k1", reading="proto")
    one = sign_card(card, key_for("EdDSA"), kid="k1", reading="served")
    assert verify_card(one, jwks(), readings=("served",)).status == "verified"


@pytest.mark.parametrize("reading", ["prune-empty", "strict", ""])
def test_sign_card_unknown_reading_is_refused(reading: str) -> None:
    with pytest.raises(SignatureError):
        sign_card(CARD, key_for("EdDSA"), kid="k1", reading=reading)  # type: ignore[arg-type]


def test_default_signatures_tampered_fail_under_every_reading() -> None:
    # One value of what both signatures cover: neither verifies.
    card = sign_card(_declaring(required=False), key_for("ES256"), kid="k1")
    for change in ({"name": "Probe Agenu"}, {"capabilities": {**card["capabilities"],
                                                             "streaming": False}}):  # fmt: skip
        assert verify_card({**card, **change}, jwks("ES256")).status == "invalid"


def test_keys_callable_gets_kid_and_jku() -> None:
    # PROFILE §6.4: the core never fetches; the caller's callable gets (kid, jku).
    seen: list[tuple[str | None, str | None]] = []

    def keys(kid: str | None, jku: str | None) -> list[dict[str, Any]]:
        seen.append((kid, jku))
        return jwks()

    card = sign_card(CARD, key_for("EdDSA"), kid="k1", jku="https://a.example/jwks.json")
    assert verify_card(card, keys).status is SignatureStatus.verified
    assert seen == [("k1", "https://a.example/jwks.json")]
    assert verify_card(signed(), keys).checks[0].jku is None


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"kid": "k2"}, "key_unavailable"),
        ({"alg": "ES256"}, "key_unavailable"),
        ({"use": "enc"}, "key_unavailable"),
        ({"key_ops": ["sign"]}, "key_unavailable"),
        ({"kid": None}, "verified"),  # a JWK without kid is a candidate for any kid
        ({"alg": None, "use": None}, "verified"),
        ({"key_ops": ["verify"]}, "verified"),
    ],
)
def test_key_selection(change: dict[str, Any], status: str) -> None:
    jwk = {**jwks()[0], **change}
    jwk = {k: v for k, v in jwk.items() if v is not None}
    assert verify_card(signed(), [jwk]).status == status


def test_key_of_another_type_is_not_a_candidate() -> None:
    ec_key = {**jwks("ES256")[0], "alg": "EdDSA"}  # claims EdDSA, is P-256
    assert verify_card(signed(), [ec_key]).status is SignatureStatus.key_unavailable


# ---------------------------------------------------------------------------------------
# Payload readings (PROFILE §6.3)


def test_prune_empty_keeps_false_and_zero_and_drops_null() -> None:
    # a2a-sdk's _clean_empty: "", [], {} and None go, recursively; false and 0 stay.
    card: dict[str, Any] = {
        "a": "",
        "b": [],
        "c": {},
        "d": None,
        "e": False,
        "f": 0,
        "g": {"h": {"i": [""]}, "j": ["", "k", None, {}]},
        "signatures": [],
    }
    assert signing_payload(card, "prune-empty") == [b'{"e":false,"f":0,"g":{"j":["k"]}}']
    assert signing_payload(card, "served") == [
        b'{"a":"","b":[],"c":{},"d":null,"e":false,"f":0,"g":{"h":{"i":[""]},"j":["","k",null,{}]}}'
    ]
    assert signing_payload({"a": ""}, "prune-empty") == [b"null"]


def test_compat_candidate_only_for_sdk_cards() -> None:
    legacy = {"name": "x", "url": "https://a.example/", "protocolVersion": "0.3"}
    assert len(signing_payload(legacy, "prune-empty")) == 1  # no supportedInterfaces
    hybrid = {**legacy, "supportedInterfaces": [{"url": "https://a.example/"}]}
    assert (
        signing_payload(hybrid, "prune-empty")[1]
        == b'{"name":"x","supportedInterfaces":[{"url":"https://a.example/"}]}'
    )
    # De-duplicated: a compat member that prune-empty drops anyway adds no candidate.
    empty_url = {"name": "x", "url": "", "supportedInterfaces": [{"url": "https://a.example/"}]}
    assert len(signing_payload(empty_url, "prune-empty")) == 1
    ext_true = {**hybrid, "capabilities": {"extensions": [{"uri": "u", "required": True}]}}
    assert b'"required":true' in signing_payload(ext_true, "prune-empty")[1]


def test_unknown_reading_is_misuse() -> None:
    with pytest.raises(SignatureError):
        signing_payload(CARD, "rule-1")  # type: ignore[arg-type]
    with pytest.raises(SignatureError):
        verify_card(signed(), jwks(), readings=("served-as-is",))  # type: ignore[arg-type]
    with pytest.raises(SignatureError):
        verify_card(signed(), jwks(), readings=())


def test_required_reading_only() -> None:
    # PROFILE §6.3: a user may require one reading.
    served = _sdk_sign_and_serve(_sdk_card(), "EdDSA")
    report = verify_card(served, jwks("EdDSA", "sdk-1"), readings=("served",))
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "bad_signature"


# ---------------------------------------------------------------------------------------
# Keys (PROFILE §6.4)


def test_thumbprint_rfc7638_example() -> None:
    # RFC 7638 §3.1: the example key and its thumbprint.
    jwk = {
        "kty": "RSA",
        "n": (
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aP"
            "FFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl9"
            "3lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdA"
            "ZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3"
            "XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        ),
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    jwk_to_public_key(jwk)  # and it is a well-formed public JWK
    with pytest.raises(KeyFormatError):
        thumbprint({"kty": "RSA", "n": "AQAB"})
    with pytest.raises(KeyFormatError):
        thumbprint({"kty": "oct", "k": "AAAA"})


def test_thumbprint_ignores_optional_members() -> None:
    jwk = jwks("ES256")[0]
    bare = {k: jwk[k] for k in ("kty", "crv", "x", "y")}
    assert thumbprint(jwk) == thumbprint(bare) == thumbprint({**bare, "kid": "other"})


B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _flip_low_bit(text: str) -> str:
    """Set a padding bit in the last character (32 bytes leave two unused bits)."""
    return text[:-1] + B64_ALPHABET[B64_ALPHABET.index(text[-1]) ^ 1]


def _okp() -> dict[str, Any]:
    return public_jwk(key_for("EdDSA"), "k1")


def _ec() -> dict[str, Any]:
    return public_jwk(key_for("ES256"), "k1")


def _rsa() -> dict[str, Any]:
    return public_jwk(key_for("RS256"), "k1")


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda: [], id="not-an-object"),
        pytest.param(lambda: {**_okp(), "kty": "oct"}, id="kty-oct"),
        pytest.param(lambda: {**_okp(), "kty": "DSA"}, id="kty-unknown"),
        pytest.param(lambda: {k: v for k, v in _okp().items() if k != "kty"}, id="kty-missing"),
        pytest.param(lambda: {**_ec(), "kty": "OKP"}, id="kty-wrong-for-members"),
        pytest.param(lambda: {k: v for k, v in _okp().items() if k != "x"}, id="okp-missing-x"),
        pytest.param(lambda: {k: v for k, v in _ec().items() if k != "y"}, id="ec-missing-y"),
        pytest.param(lambda: {k: v for k, v in _rsa().items() if k != "n"}, id="rsa-missing-n"),
        pytest.param(lambda: {**_okp(), "x": _okp()["x"] + "="}, id="padded-base64"),
        pytest.param(lambda: {**_okp(), "x": "+/" + _okp()["x"][2:]}, id="std-alphabet"),
        pytest.param(lambda: {**_okp(), "x": "!!" + _okp()["x"][2:]}, id="bad-char"),
        pytest.param(lambda: {**_okp(), "x": _flip_low_bit(_okp()["x"])}, id="non-canonical-bits"),
        pytest.param(lambda: {**_okp(), "x": 5}, id="x-not-string"),
        pytest.param(lambda: {**_okp(), "crv": "X25519"}, id="okp-curve-x25519"),
        pytest.param(lambda: {**_ec(), "crv": "P-521"}, id="ec-curve-p521"),
        pytest.param(lambda: {**_ec(), "crv": "secp256k1"}, id="ec-curve-k1"),
        pytest.param(lambda: {**_ec(), "crv": "P-384"}, id="ec-wrong-length-for-curve"),
        pytest.param(lambda: {**_okp(), "x": b64(bytes(31))}, id="okp-short-x"),
        pytest.param(lambda: {**_ec(), "y": b64(bytes(32))}, id="ec-point-off-curve"),
        pytest.param(
            lambda: {**_rsa(), "n": b64(b"\x00" + unb64(_rsa()["n"]))}, id="rsa-leading-zero"
        ),
        pytest.param(lambda: {**_rsa(), "n": b64((2**1024 + 1).to_bytes(129))}, id="rsa-short"),
        pytest.param(lambda: {**_okp(), "d": _okp()["x"]}, id="private-member"),
        pytest.param(lambda: {**_okp(), "kid": 7}, id="kid-not-string"),
        pytest.param(lambda: {**_okp(), "key_ops": "verify"}, id="key-ops-not-list"),
    ],
)
def test_jwk_to_public_key_rejects(bad: Any) -> None:
    with pytest.raises(KeyFormatError):
        jwk_to_public_key(bad())


@pytest.mark.parametrize("alg", ALGS)
def test_jwk_round_trips(alg: str) -> None:
    key = key_for(alg)
    jwk = public_jwk(key, "k1", alg)
    assert jwk["alg"] == alg and jwk["use"] == "sig" and jwk["kid"] == "k1"
    assert public_jwk(jwk_to_public_key(jwk), "k1", alg) == jwk
    secret = private_jwk(key, "k1", alg)
    loaded = load_private_key(json.dumps(secret).encode())
    assert public_jwk(loaded, "k1", alg) == jwk
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert public_jwk(load_private_key(pem), "k1", alg) == jwk


def test_reference_card_key_loads() -> None:
    key = load_private_key((REFERENCE / "TEST-ONLY-card-key.jwk.json").read_bytes())
    assert (
        public_jwk(key, "stonework-test-2026")["x"] == "U0CpY51HTtfQg--jyRNUucfpdqwUMgI3vFVyqqVU73M"
    )


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"not a key", id="garbage"),
        pytest.param(b"{", id="bad-json"),
        pytest.param(b'{"kty":"OKP","kty":"OKP"}', id="duplicate-key"),
        pytest.param(
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", id="bad-pem"
        ),
        pytest.param(
            lambda: key_for("EdDSA").private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(b"pw"),
            ),
            id="encrypted-pem",
        ),
        pytest.param(
            lambda: ec.generate_private_key(ec.SECP521R1()).private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
            id="p521-pem",
        ),
        pytest.param(lambda: json.dumps(_okp()).encode(), id="public-jwk"),
        pytest.param(
            lambda: json.dumps({**private_jwk(key_for("EdDSA"), "k"), "x": _ec()["x"]}).encode(),
            id="mismatched-jwk",
        ),
        pytest.param(
            lambda: json.dumps(
                {k: v for k, v in private_jwk(key_for("RS256"), "k").items() if k != "qi"}
            ).encode(),
            id="rsa-jwk-missing-crt",
        ),
    ],
)
def test_load_private_key_rejects(data: Any) -> None:
    with pytest.raises(KeyFormatError):
        load_private_key(data() if callable(data) else data)


def test_jwks_from_json() -> None:
    keys = jwks_from_json({"keys": jwks()})
    assert keys == jwks()
    assert jwks_from_json(json.dumps({"keys": jwks()})) == jwks()
    bad: Any
    for bad in ([], {"keys": {}}, {"keys": [1]}, b'{"keys":[],"keys":[]}', b"{", {"key": []}):
        with pytest.raises(KeyFormatError):
            jwks_from_json(bad)


# ---------------------------------------------------------------------------------------
# Hostile input: never raises, never verifies, never echoes the card


def _protected(text: str) -> dict[str, Any]:
    return {**CARD, "signatures": [{"protected": text, "signature": b64(bytes(64))}]}


def _header(header: Any) -> dict[str, Any]:
    return _protected(b64(json.dumps(header).encode()))


def _item(**change: Any) -> dict[str, Any]:
    item = {**signed()["signatures"][0], **change}
    return {**CARD, "signatures": [{k: v for k, v in item.items() if v is not None}]}


HOSTILE = {
    "signatures-null": {**CARD, "signatures": None},
    "signatures-object": {**CARD, "signatures": {}},
    "signatures-string": {**CARD, "signatures": "x"},
    "item-not-object": {**CARD, "signatures": ["x"]},
    "item-missing-signature": _item(signature=None),
    "item-protected-number": _item(protected=5),
    "item-extra-member": _item(extra="x"),
    "item-header-not-object": _item(header=[]),
    "item-header-repeats-kid": _item(header={"kid": "k1"}),
    "protected-not-base64": _protected("***"),
    "protected-padded": _protected(signed()["signatures"][0]["protected"] + "="),
    "protected-not-json": _protected(b64(b"{")),
    "protected-array": _header(["alg", "EdDSA"]),
    "protected-duplicate-alg": _protected(b64(b'{"alg":"EdDSA","alg":"none","kid":"k1"}')),
    "protected-huge": _protected("A" * 100_000),
    "protected-no-alg": _header({"kid": "k1"}),
    "protected-alg-number": _header({"alg": 1, "kid": "k1"}),
    "protected-typ-jwt": _header({"alg": "EdDSA", "kid": "k1", "typ": "JWT"}),
    "protected-kid-number": _header({"alg": "EdDSA", "kid": 1}),
    "protected-crit": _header({"alg": "EdDSA", "kid": "k1", "crit": ["exp"], "exp": 1}),
    "protected-b64-false": _header({"alg": "EdDSA", "kid": "k1", "b64": False}),
    "signature-not-base64": _item(signature="***"),
    "signature-short": _item(signature=b64(bytes(10))),
    "signature-huge": _item(signature="A" * 100_000),
    "card-lone-surrogate": {**signed(), "description": "\ud800"},
    "card-float-nan": {**signed(), "version": float("nan")},
}


def _ed_signed(protected_json: bytes, **item: Any) -> dict[str, Any]:
    """CARD with an Ed25519 signature made properly over any protected header bytes."""
    protected = b64(protected_json)
    signing_input = f"{protected}.{b64(signing_payload(CARD, 'served')[0])}".encode()
    sig = {"protected": protected, "signature": b64(key_for("EdDSA").sign(signing_input)), **item}
    return {**CARD, "signatures": [sig]}


def test_header_rules_control() -> None:
    # The helper's signatures are good: typ is optional (PROFILE §6.1 names it; RFC 7515
    # makes it optional), and an unprotected header with other names is fine.
    assert verify_card(_ed_signed(b'{"alg":"EdDSA","kid":"k1"}'), jwks()).status == "verified"
    card = _ed_signed(b'{"alg":"EdDSA","kid":"k1","typ":"JOSE"}', header={"note": "x"})
    assert verify_card(card, jwks()).status == "verified"


@pytest.mark.parametrize(
    ("protected", "item"),
    [
        pytest.param(b'{"alg":"EdDSA","kid":"k1","typ":"JWT"}', {}, id="typ-not-jose"),
        pytest.param(b'{"alg":"EdDSA","kid":"k1","jku":5}', {}, id="jku-not-string"),
        pytest.param(
            b'{"alg":"EdDSA","kid":"k1","crit":["exp"],"exp":1}', {}, id="crit"
        ),  # RFC 7515 §4.1.11
        pytest.param(b'{"alg":"EdDSA","kid":"k1","b64":false}', {}, id="b64-false"),  # RFC 7797
        pytest.param(
            b'{"alg":"EdDSA","kid":"k1","kid":"k1"}', {}, id="duplicate-member"
        ),  # PROFILE §1.1
        pytest.param(
            b'{"alg":"EdDSA","kid":"k1"}', {"header": {"kid": "k1"}}, id="header-repeats"
        ),  # RFC 7515 §7.2.1
        pytest.param(b'{"alg":"EdDSA","kid":"k1"}', {"header": []}, id="header-not-object"),
        pytest.param(
            b'{"alg":"EdDSA","kid":"k1"}', {"payload": "x"}, id="extra-member"
        ),  # PROFILE §6.1
    ],
)
def test_header_rules(protected: bytes, item: dict[str, Any]) -> None:
    # Each card is signed correctly; only the rule under test rejects it.
    report = verify_card(_ed_signed(protected, **item), jwks())
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "malformed"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_cards_are_invalid(name: str) -> None:
    report = verify_card(HOSTILE[name], jwks())
    assert report.status is SignatureStatus.invalid
    assert report.reading is None
    for check in report.checks:
        assert check.reason in ("malformed", "alg_refused", "bad_signature", "not_canonical")


def test_hostile_card_not_an_object() -> None:
    assert verify_card([], jwks()).status is SignatureStatus.invalid  # type: ignore[arg-type]


def test_deeply_nested_card() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = {"a": deep}
    card = {**signed(), "x-deep": deep}
    report = verify_card(card, jwks(), readings=("served", "prune-empty"))
    assert report.status is SignatureStatus.invalid
    assert report.checks[0].reason == "not_canonical"
    # PROFILE §6.3 proto: the SDKs drop a member the 1.0 messages do not define, so the
    # signature verifies there, saying it does not cover that member.
    report = verify_card(card, jwks(), readings=("proto",))
    assert report.status is SignatureStatus.verified
    assert report.checks[0].uncovered == ("/x-deep",)


@pytest.mark.parametrize("offered", [None, "k", [1, "x", None], [{"kty": "OKP"}], 7])
def test_keys_callable_returning_garbage(offered: Any) -> None:
    report = verify_card(signed(), lambda kid, jku: offered)
    assert report.status is SignatureStatus.key_unavailable


MARKER = "SECRET-CARD-CONTENT-7f3a"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_reports_never_echo_the_card(name: str) -> None:
    card = {**HOSTILE[name], "name": MARKER} if isinstance(HOSTILE[name], dict) else HOSTILE[name]
    report = verify_card(card, jwks())
    assert MARKER not in repr(report)
    assert MARKER not in json.dumps(report.to_json())


# ---------------------------------------------------------------------------------------
# Properties


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
cards = st.dictionaries(
    st.text(max_size=8).filter(lambda k: k != "signatures"), json_values, max_size=6
)


@settings(max_examples=60, deadline=None)
@given(card=cards)
def test_sign_then_verify_any_card(card: dict[str, Any]) -> None:
    # PROFILE §6.3: our signer signs the served reading; prune-empty agrees exactly when
    # pruning changes nothing.
    report = verify_card(signed(card=card), jwks())
    assert report.status is SignatureStatus.verified
    assert report.reading == "served"
    same = signing_payload(card, "served") == signing_payload(card, "prune-empty")[:1]
    assert ("prune-empty" in report.readings) is same
    assert signing_payload(card, "served") == signing_payload(
        json.loads(json.dumps(card)), "served"
    )


@settings(max_examples=60, deadline=None)
@given(card=cards, name=st.text(min_size=1, max_size=8).filter(lambda k: k != "signatures"))
def test_any_added_member_breaks_the_served_reading(card: dict[str, Any], name: str) -> None:
    signed_card = signed(card=card)
    changed = {**signed_card, name: ["tamper"] if card.get(name) != ["tamper"] else ["other"]}
    report = verify_card(changed, jwks(), readings=("served",))
    assert report.status is SignatureStatus.invalid


# ---------------------------------------------------------------- closing mutation testing's gaps
# Tests of cardsig.py that close what mutation testing found unchecked
# (bench/mutation.py). Each is written from the rule it checks (PROFILE §6, RFC 7515, the
# module's documented bounds and fixed messages) and pins values by hand: the payload
# bytes are RFC 8785 of the card (jcs), the signatures made with ``cryptography``
# directly.


KEY = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
JWK = public_jwk(KEY, "k1", "EdDSA")

PROBE_CARD: dict[str, Any] = {
    "name": "Probe Agent",
    "description": "Answers probes",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "probe", "name": "Probe", "description": "Probe", "tags": ["probe"]}],
}


def item(
    header: dict[str, Any], card: dict[str, Any] = PROBE_CARD, key: Any = KEY
) -> dict[str, str]:
    """A signatures item over the served reading (PROFILE §6.1: JCS of the card without
    signatures, detached), made by hand with the header's JSON as given."""
    protected = b64(json.dumps(header, separators=(",", ":")).encode())
    signing_input = f"{protected}.{b64(canonicalize(card))}".encode()
    return {"protected": protected, "signature": b64(key.sign(signing_input))}


def with_items(*items: dict[str, Any]) -> dict[str, Any]:
    return {**PROBE_CARD, "signatures": list(items)}


# ---------------------------------------------------------------- fixed messages (misuse)


def _message(call: Any) -> str:
    with pytest.raises(SignatureError) as raised:
        call()
    return str(raised.value)


def test_signing_misuse_gets_its_fixed_message() -> None:
    # Bad input gets a clear fixed error (docs/security.md; the CLI prints it): each
    # misuse of sign_card / sign_readings / verify_card names what was wrong.
    assert _message(lambda: sign_readings(PROBE_CARD, "prune-empty")) == (  # type: ignore[arg-type]
        "a card is signed under the reading 'proto' or 'served'"
    )
    assert _message(lambda: sign_card(PROBE_CARD, KEY, kid=5)) == "kid and jku must be strings"  # type: ignore[arg-type]
    assert _message(lambda: sign_card(PROBE_CARD, KEY, kid="k1", jku=5)) == (  # type: ignore[arg-type]
        "kid and jku must be strings"
    )
    assert _message(lambda: sign_card(PROBE_CARD, KEY, kid="k1", header=[])) == (  # type: ignore[arg-type]
        "the unprotected header must be an object"
    )
    # RFC 7515 §7.2.1: protected and unprotected names are disjoint.
    assert _message(lambda: sign_card(PROBE_CARD, KEY, kid="k1", header={"typ": "JOSE"})) == (
        "the unprotected header repeats a protected member"
    )
    assert _message(lambda: sign_card({**PROBE_CARD, "signatures": "x"}, KEY, kid="k1")) == (
        "the card's signatures member is not a list"
    )
    assert (
        _message(lambda: verify_card(PROBE_CARD, [JWK], readings=("strict",))) == "unknown reading"
    )  # type: ignore[arg-type]
    with pytest.raises(KeyFormatError) as raised:
        sign_card(PROBE_CARD, KEY.public_key(), kid="k1")  # type: ignore[arg-type]
    assert str(raised.value) == "sign_card needs a private key"


def test_a_card_without_a_proto_form_says_why() -> None:
    # PROFILE §6.3: proto is refused for a card that does not fit the A2A 1.0 messages
    # (here a skill of the wrong type), saying why, whole.
    wrong = {**PROBE_CARD, "skills": ["probe"]}
    assert _message(lambda: sign_card(wrong, KEY, kid="k1")) == (
        "the card does not fit the A2A 1.0 AgentCard message (a member of the wrong "
        "type, both spellings of one member, two cases of a oneof, null in a list, or "
        "nothing left), so no signature on it can verify with the SDKs' verifiers"
    )


def test_signing_returns_a_new_card_sharing_nothing() -> None:
    # sign_card: "A new card ... card is not modified": changing the signed card, or the
    # unprotected header it carries, later changes neither the card nor the header given.
    card = copy.deepcopy(PROBE_CARD)
    header = {"note": {"by": "test"}}
    signed = sign_card(card, KEY, kid="k1", header=header, reading="served")
    signed["skills"][0]["name"] = "Changed"
    signed["signatures"][0]["header"]["note"]["by"] = "changed"
    assert card == PROBE_CARD
    assert header == {"note": {"by": "test"}}


# ------------------------------------------------------- the protected header (PROFILE §6.1)


def _padded(chars: int) -> dict[str, Any]:
    """A header whose base64url is exactly ``chars`` characters (a multiple of 4)."""
    base = {"alg": "EdDSA", "kid": "k1", "typ": "JOSE", "x": ""}
    size = len(json.dumps(base, separators=(",", ":")))
    return {**base, "x": "a" * (chars // 4 * 3 - size)}


def test_the_protected_header_bound_is_8192_characters() -> None:
    # cardsig: a protected header of up to 8192 base64url characters is read; longer is
    # malformed without a decode (a header is a few dozen bytes).
    at = item(_padded(8192))
    assert len(at["protected"]) == 8192
    assert verify_card(with_items(at), [JWK]).status is SignatureStatus.verified
    past = item(_padded(8196))
    assert len(past["protected"]) == 8196
    check = verify_card(with_items(past), [JWK]).checks[0]
    assert (check.status, check.reason) == (SignatureStatus.invalid, "malformed")


def test_the_protected_header_nests_at_most_eight_levels() -> None:
    # cardsig: the header object and seven levels inside it are read; one more is
    # malformed (a header holds strings; depth is only a hostile header's).
    def nested(levels: int) -> dict[str, Any]:
        value: Any = 1
        for _ in range(levels - 1):
            value = [value]
        return {"alg": "EdDSA", "kid": "k1", "x": value}

    assert verify_card(with_items(item(nested(8))), [JWK]).status is SignatureStatus.verified
    check = verify_card(with_items(item(nested(9))), [JWK]).checks[0]
    assert (check.status, check.reason) == (SignatureStatus.invalid, "malformed")


def test_the_signature_bound_is_2048_characters() -> None:
    # cardsig: a signature of up to 2048 base64url characters is decoded and tried (RSA
    # 8192 is 1366); longer is malformed without a decode.
    good = item({"alg": "EdDSA", "kid": "k1"})
    at = {**good, "signature": "A" * 2048}
    check = verify_card(with_items(at), [JWK]).checks[0]
    assert (check.status, check.reason) == (SignatureStatus.invalid, "bad_signature")
    past = {**good, "signature": "A" * 2052}
    check = verify_card(with_items(past), [JWK]).checks[0]
    assert (check.status, check.reason) == (SignatureStatus.invalid, "malformed")


# ----------------------------------------------------------- what each check reports (§6.5)


def test_a_malformed_item_keeps_its_index_and_its_quirks() -> None:
    # PROFILE §6.6: a null member is read as absent and always reported, whatever the
    # status, here a header without a string alg; a header that cannot be read has none.
    good = item({"alg": "EdDSA", "kid": "k1"})
    no_alg = item({"alg": None, "jku": None, "kid": "k1"})
    unreadable = {"protected": "***", "signature": good["signature"]}
    report = verify_card(with_items(good, no_alg, unreadable), [JWK])
    first, second, third = report.checks
    assert first.status is SignatureStatus.verified
    assert (second.index, second.status, second.reason) == (1, "invalid", "malformed")
    assert second.quirks == ("null_header_member",)
    assert (second.alg, second.kid, second.jku) == (None, None, None)
    assert (third.index, third.reason, third.quirks) == (2, "malformed", ())
    assert report.quirks == ("null_header_member",)


def test_kid_and_jku_are_reported_as_strings_only() -> None:
    # PROFILE §6.1: kid and jku are strings; a check names them when they are, and
    # None when the header gives anything else (a refused alg reports what it read).
    jku = "https://a.example/jwks.json"
    refused = item({"alg": "HS256", "kid": 7, "jku": ["x"]})
    failed = item({"alg": "EdDSA", "kid": "k1", "jku": jku}, key=OTHER)
    report = verify_card(with_items(refused, failed), [JWK])
    first, second = report.checks
    assert (first.index, first.alg, first.kid, first.jku, first.reason) == (
        0, "HS256", None, None, "alg_refused",
    )  # fmt: skip
    assert (second.index, second.kid, second.jku, second.reason) == (
        1, "k1", jku, "bad_signature",
    )  # fmt: skip
    verified = verify_card(with_items(item({"alg": "EdDSA", "kid": "k1", "jku": jku})), [JWK])
    check = verified.checks[0]
    assert (check.status, check.kid, check.jku) == (SignatureStatus.verified, "k1", jku)


# ------------------------------------------------------------ key selection (PROFILE §6.4)


@pytest.mark.parametrize(
    "skipped",
    [
        "not a JWK",
        {**JWK, "alg": "ES256"},  # another alg
        {**JWK, "use": "enc"},  # not for signatures
        {**JWK, "key_ops": ["sign"]},  # not for verifying
        {**JWK, "x": "AAAA"},  # not a valid key
    ],
    ids=["not-object", "alg", "use", "key_ops", "invalid"],
)
def test_a_key_that_is_no_candidate_is_skipped_not_the_end(skipped: Any) -> None:
    # verify_card: a JWK is a candidate when its kid, alg, use and key_ops allow it and it
    # fits; the others are passed over, and the keys after them still tried.
    card = with_items(item({"alg": "EdDSA", "kid": "k1"}))
    assert verify_card(card, [skipped]).status is SignatureStatus.key_unavailable
    assert verify_card(card, [skipped, JWK]).status is SignatureStatus.verified


def test_a_reading_without_canonical_bytes_is_passed_over() -> None:
    # PROFILE §6.3: each reading is tried; a reading that gives no bytes for this card
    # (prune-empty past its nesting bound of 128, in a member the 1.0 messages do not
    # define) is skipped, and the signature still verifies under proto.
    deep: Any = "leaf"
    for _ in range(200):
        deep = {"d": deep}
    body = copy.deepcopy(PROBE_CARD)
    signed = sign_card(body, KEY, kid="k1", reading="proto")
    served = {**signed, "x-deep": deep}
    report = verify_card(served, [JWK])
    assert (report.status, report.readings) == (SignatureStatus.verified, ("proto",))
    assert report.checks[0].uncovered == ("/x-deep",)


# --- stopping (D-VERIFY-56): asked before each reading, each key read and each check ------


def test_stop_is_asked_at_every_step_and_said_so() -> None:
    from a2a_interview import reference
    from a2a_interview.card import verify_card
    from a2a_interview.card._readings import candidates
    from a2a_interview.card._sig import STOPPED

    card = reference.unsigned_card("https://stonework.example")
    protected = b64(json.dumps({"alg": "EdDSA"}).encode())
    card = {**card, "signatures": [{"protected": protected, "signature": b64(bytes(64))}]}
    raw = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64(raw)}
    asked = [0]

    def never() -> bool:
        asked[0] += 1
        return False

    report = verify_card(card, [jwk] * 3, readings=("served",), stop=never)
    assert report.status == "invalid"
    served = len(candidates(card, "served"))
    assert served >= 1
    # One reading read, three keys read, and each key checked against each candidate.
    assert asked[0] == 1 + 3 + 3 * served
    with pytest.raises(SignatureError) as raised:
        verify_card(card, [jwk], readings=("served",), stop=lambda: True)
    assert str(raised.value) == STOPPED
