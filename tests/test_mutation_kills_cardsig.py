"""Tests of cardsig.py that close what mutation testing found unchecked (issue 17,
bench/mutation.py). Each is written from the rule it checks (PROFILE §6, RFC 7515, the
module's documented bounds and fixed messages) and pins values by hand: the payload
bytes are RFC 8785 of the card (jcs), the signatures made with ``cryptography`` directly.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from a2a_interview.card import SignatureStatus, public_jwk, sign_card, sign_readings, verify_card
from a2a_interview.errors import KeyFormatError, SignatureError
from a2a_interview.jcs import canonicalize
from test_jose import b64

KEY = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
JWK = public_jwk(KEY, "k1", "EdDSA")

CARD: dict[str, Any] = {
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


def item(header: dict[str, Any], card: dict[str, Any] = CARD, key: Any = KEY) -> dict[str, str]:
    """A signatures item over the served reading (PROFILE §6.1: JCS of the card without
    signatures, detached), made by hand with the header's JSON as given."""
    protected = b64(json.dumps(header, separators=(",", ":")).encode())
    signing_input = f"{protected}.{b64(canonicalize(card))}".encode()
    return {"protected": protected, "signature": b64(key.sign(signing_input))}


def with_items(*items: dict[str, Any]) -> dict[str, Any]:
    return {**CARD, "signatures": list(items)}


# ---------------------------------------------------------------- fixed messages (misuse)


def _message(call: Any) -> str:
    with pytest.raises(SignatureError) as raised:
        call()
    return str(raised.value)


def test_signing_misuse_gets_its_fixed_message() -> None:
    # Bad input gets a clear fixed error (docs/security.md; the CLI prints it): each
    # misuse of sign_card / sign_readings / verify_card names what was wrong.
    assert _message(lambda: sign_readings(CARD, "prune-empty")) == (  # type: ignore[arg-type]
        "a card is signed under the reading 'proto' or 'served'"
    )
    assert _message(lambda: sign_card(CARD, KEY, kid=5)) == "kid and jku must be strings"  # type: ignore[arg-type]
    assert _message(lambda: sign_card(CARD, KEY, kid="k1", jku=5)) == (  # type: ignore[arg-type]
        "kid and jku must be strings"
    )
    assert _message(lambda: sign_card(CARD, KEY, kid="k1", header=[])) == (  # type: ignore[arg-type]
        "the unprotected header must be an object"
    )
    # RFC 7515 §7.2.1: protected and unprotected names are disjoint.
    assert _message(lambda: sign_card(CARD, KEY, kid="k1", header={"typ": "JOSE"})) == (
        "the unprotected header repeats a protected member"
    )
    assert _message(lambda: sign_card({**CARD, "signatures": "x"}, KEY, kid="k1")) == (
        "the card's signatures member is not a list"
    )
    assert _message(lambda: verify_card(CARD, [JWK], readings=("strict",))) == "unknown reading"  # type: ignore[arg-type]
    with pytest.raises(KeyFormatError) as raised:
        sign_card(CARD, KEY.public_key(), kid="k1")  # type: ignore[arg-type]
    assert str(raised.value) == "sign_card needs a private key"


def test_a_card_without_a_proto_form_says_why() -> None:
    # PROFILE §6.3: proto is refused for a card that does not fit the A2A 1.0 messages
    # (here a skill of the wrong type), saying why, whole.
    wrong = {**CARD, "skills": ["probe"]}
    assert _message(lambda: sign_card(wrong, KEY, kid="k1")) == (
        "the card does not fit the A2A 1.0 AgentCard message (a member of the wrong "
        "type, both spellings of one member, two cases of a oneof, null in a list, or "
        "nothing left), so no signature on it can verify with the SDKs' verifiers"
    )


def test_signing_returns_a_new_card_sharing_nothing() -> None:
    # sign_card: "A new card ... card is not modified": changing the signed card, or the
    # unprotected header it carries, later changes neither the card nor the header given.
    card = copy.deepcopy(CARD)
    header = {"note": {"by": "test"}}
    signed = sign_card(card, KEY, kid="k1", header=header, reading="served")
    signed["skills"][0]["name"] = "Changed"
    signed["signatures"][0]["header"]["note"]["by"] = "changed"
    assert card == CARD
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
    body = copy.deepcopy(CARD)
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
