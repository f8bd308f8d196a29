"""Keys and algorithms on joserfc: what the library does not do for us stays ours.

docs/decisions.md D-VERIFY-38 (issue 16): only the key
material reaches the library, the allowlist and key fit are ours, every bad key keeps its
fixed message, and the RFC 7638 thumbprint hashes RFC 8785 bytes. Written against the
names ``cardsig`` exports, so that the same file passes on the hand-built code it replaced.
"""

from __future__ import annotations

import base64
import hashlib
import json
import warnings
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed448, rsa, x25519

from a2a_interview.card import (
    generate_key,
    jwk_to_public_key,
    load_private_key,
    private_jwk,
    public_jwk,
    sign_card,
    thumbprint,
    verify_card,
)
from a2a_interview.errors import KeyFormatError

CARD: dict[str, Any] = {
    "name": "Probe Agent",
    "version": "1.0.0",
    "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolBinding": "JSONRPC"}],
}
_KEYS: dict[str, Any] = {}


def key_for(alg: str) -> Any:
    if alg not in _KEYS:
        _KEYS[alg] = generate_key(alg)
    return _KEYS[alg]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pem(key: Any) -> bytes:
    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


@pytest.mark.parametrize(
    "extra",
    [{"use": "enc2"}, {"key_ops": ["frob"]}, {"x5u": 5}, {"x5c": "x"}, {"ext": True}],
    ids=["use-unknown", "key-ops-unknown", "x5u-not-url", "x5c-not-list", "ext"],
)
@pytest.mark.parametrize("alg", ["EdDSA", "ES256", "RS256"])
def test_members_beyond_the_key_material_are_ignored(alg: str, extra: dict[str, Any]) -> None:
    # RFC 7517 §4: members not understood are ignored; joserfc's parameter registry would
    # refuse these, so only the key material is handed to it.
    expected = public_jwk(key_for(alg), "k1", alg)
    assert public_jwk(jwk_to_public_key({**expected, **extra}), "k1", alg) == expected
    secret = {**private_jwk(key_for(alg), "k1", alg), **extra}
    assert public_jwk(load_private_key(json.dumps(secret).encode()), "k1", alg) == expected


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: pem(ed448.Ed448PrivateKey.generate()), id="ed448-pem"),
        pytest.param(lambda: pem(x25519.X25519PrivateKey.generate()), id="x25519-pem"),
        pytest.param(lambda: pem(rsa.generate_private_key(65537, 1024)), id="rsa-1024-pem"),
    ],
)
def test_keys_off_the_allowlist_do_not_load(make: Any) -> None:
    # PROFILE §6.2: joserfc takes Ed448 and X25519 as OKP keys and RSA below 2048 bits with
    # a warning; the key fit is ours.
    with pytest.raises(KeyFormatError, match="unsupported key type, curve or size"):
        load_private_key(make())


def test_rsa_private_jwk_needs_every_crt_member() -> None:
    # joserfc would recover p and q from d; we ask for the whole key (RFC 7518 §6.3.2).
    secret = private_jwk(key_for("RS256"), "k")
    only_d = {k: v for k, v in secret.items() if k not in ("p", "q", "dp", "dq", "qi")}
    with pytest.raises(KeyFormatError, match="needs d, p, q, dp, dq and qi"):
        load_private_key(json.dumps(only_d).encode())


def test_ec_private_jwk_messages_say_which_half_is_wrong() -> None:
    secret = private_jwk(key_for("ES256"), "k")
    other = private_jwk(generate_key("ES256"), "k")
    mismatch = {**secret, "x": other["x"], "y": other["y"]}
    with pytest.raises(KeyFormatError, match="public members do not match its private key"):
        load_private_key(json.dumps(mismatch).encode())
    for d in (bytes(32), b"\xff" * 32):  # zero, and beyond the group order
        with pytest.raises(KeyFormatError, match="does not describe a valid private key"):
            load_private_key(json.dumps({**secret, "d": b64(d)}).encode())
    okp = private_jwk(key_for("EdDSA"), "k")
    wrong_x = {**okp, "x": public_jwk(generate_key("EdDSA"), "k")["x"]}
    with pytest.raises(KeyFormatError, match="public members do not match its private key"):
        load_private_key(json.dumps(wrong_x).encode())


def test_thumbprint_hashes_rfc8785_bytes_of_the_required_members() -> None:
    # RFC 7638 §3.3: member values are written without escaping, in UTF-8 (joserfc's own
    # thumbprint escapes non-ASCII), and only the required members count.
    jwk = {"kty": "OKP", "crv": "Ed25519\u00e9", "x": "AA", "kid": "ignored"}
    expected = hashlib.sha256('{"crv":"Ed25519\u00e9","kty":"OKP","x":"AA"}'.encode()).digest()
    assert thumbprint(jwk) == b64(expected)


@pytest.mark.parametrize("alg", ["EdDSA", "ES256", "ES384", "PS256", "RS256"])
def test_signing_and_verifying_show_no_library_warning(alg: str) -> None:
    # joserfc marks EdDSA deprecated (RFC 9864); PROFILE §6.2 names it, so nothing is shown.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        signed = sign_card(CARD, key_for(alg), kid="k1", alg=alg)
        report = verify_card(signed, [public_jwk(key_for(alg), "k1", alg)])
    assert report.status == "verified"
