"""Keys and algorithms on joserfc: what the library does not do for us stays ours.

docs/decisions.md D-VERIFY-38: only the key
material reaches the library, the allowlist and key fit are ours, every bad key keeps its
fixed message, and the RFC 7638 thumbprint hashes RFC 8785 bytes. Written against the
names ``cardsig`` exports, so that the same file passes on the hand-built code it replaced.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa, x25519
from joserfc.errors import JoseError

from a2a_interview.card import _jose as jose
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
from a2a_interview.errors import KeyFormatError, SignatureError
from support.keys import b64, key_for, pem

CARD: dict[str, Any] = {
    "name": "Probe Agent",
    "version": "1.0.0",
    "supportedInterfaces": [{"url": "https://a.example/rpc", "protocolBinding": "JSONRPC"}],
}


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


# ---------------------------------------------------------------- closing mutation testing's gaps
# Tests of jose.py that close what mutation testing found unchecked (bench/mutation.py).
# docs/decisions.md D-VERIFY-38: the allowlist and key fit are ours and every bad key
# keeps its fixed message (the CLI shows it); PROFILE §6.2 names which key serves which
# algorithm; RFC 7517, RFC 7518 §6 and RFC 7638 the members. Each message and value is
# written out by hand; keys are made with ``cryptography`` directly.


ED = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
P256 = ec.derive_private_key(12345, ec.SECP256R1())
P521 = ec.derive_private_key(12345, ec.SECP521R1())
RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def uint(value: int) -> str:
    return b64(value.to_bytes((value.bit_length() + 7) // 8 or 1))


def okp() -> dict[str, Any]:
    raw = ED.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": b64(raw)}


def ec256() -> dict[str, Any]:
    numbers = P256.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32)),
            "y": b64(numbers.y.to_bytes(32))}  # fmt: skip


def rsa_public() -> dict[str, Any]:
    numbers = RSA.public_key().public_numbers()
    return {"kty": "RSA", "n": uint(numbers.n), "e": uint(numbers.e)}


def rsa_private() -> dict[str, Any]:
    p = RSA.private_numbers()
    return {**rsa_public(), "d": uint(p.d), "p": uint(p.p), "q": uint(p.q),
            "dp": uint(p.dmp1), "dq": uint(p.dmq1), "qi": uint(p.iqmp)}  # fmt: skip


UNSUPPORTED = "unsupported key type, curve or size"
NOT_OBJECT = "a JWK must be a JSON object"


@pytest.mark.parametrize(
    ("jwk", "message"),
    [
        pytest.param(lambda: [], NOT_OBJECT, id="not-object"),
        pytest.param(lambda: {**okp(), "d": "AA"},
                     "a public JWK must not carry private key members", id="private-member"),
        pytest.param(lambda: {**okp(), "kid": 7}, "JWK member kid is not a string", id="kid"),
        pytest.param(lambda: {**okp(), "alg": 7}, "JWK member alg is not a string", id="alg"),
        pytest.param(lambda: {**okp(), "use": 7}, "JWK member use is not a string", id="use"),
        pytest.param(lambda: {**okp(), "key_ops": "verify"},
                     "JWK member key_ops is not a list of strings", id="key-ops"),
        pytest.param(lambda: {**okp(), "crv": "X25519"}, "unsupported OKP curve", id="okp-crv"),
        pytest.param(lambda: {k: v for k, v in okp().items() if k != "x"},
                     "JWK member x is missing or not a string", id="x-missing"),
        pytest.param(lambda: {**okp(), "x": "***"}, "JWK member x is not base64url", id="x-b64"),
        # RFC 8037 §2: an Ed25519 x is 32 octets; RFC 7518 §6.2.1.2: a P-256 coordinate 32
        pytest.param(lambda: {**okp(), "x": b64(bytes(31))}, "JWK member x has the wrong length",
                     id="okp-x-31"),
        pytest.param(lambda: {**ec256(), "x": b64(bytes(33))}, "JWK member x has the wrong length",
                     id="ec-x-33"),
        pytest.param(lambda: {**ec256(), "y": b64(bytes(31))}, "JWK member y has the wrong length",
                     id="ec-y-31"),
        pytest.param(lambda: {**ec256(), "crv": "P-521"}, "unsupported EC curve", id="ec-crv"),
        pytest.param(lambda: {**ec256(), "crv": ["P-256"]}, "unsupported EC curve",
                     id="ec-crv-list"),
        pytest.param(lambda: {**ec256(), "y": b64(bytes(32))},
                     "the JWK does not describe a valid public key", id="off-curve"),
        # RFC 7518 §6.3.1.1: no leading zero octet; zero itself is the one octet "AA"
        pytest.param(lambda: {**rsa_public(), "e": b64(b"\x00\x03")},
                     "JWK member e is not a minimal unsigned integer", id="e-leading-zero"),
        pytest.param(lambda: {**rsa_public(), "e": "AA"},  # D-VERIFY-55's bounds say why
                     "RSA public exponent is not an odd number from 3 to 2^32 - 1",
                     id="e-zero"),
        pytest.param(lambda: {**rsa_public(), "n": uint(2**2046 + 1)},
                     "RSA modulus shorter than 2048 bits", id="rsa-2047"),
        pytest.param(lambda: {**okp(), "kty": "oct"}, "unsupported kty", id="kty"),
    ],
)  # fmt: skip
def test_a_bad_public_jwk_gets_its_fixed_message(jwk: Any, message: str) -> None:
    with pytest.raises(KeyFormatError) as raised:
        jose.jwk_to_public_key(jwk())
    assert str(raised.value) == message


def test_a_jwk_of_2048_bits_and_a_small_odd_exponent_loads() -> None:
    # PROFILE §6.2: RSA of 2048 bits or more; e=3 is a minimal unsigned integer.
    numbers = RSA.public_key().public_numbers()
    key = jose.jwk_to_public_key({**rsa_public(), "e": "Aw"})
    assert isinstance(key, rsa.RSAPublicKey)
    assert (key.public_numbers().n, key.public_numbers().e, key.key_size) == (numbers.n, 3, 2048)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(lambda: b"{", "the key file is neither PEM nor a JSON JWK", id="bad-json"),
        pytest.param(lambda: b"not a key", "expected a PEM PKCS#8 private key or a private JWK",
                     id="garbage"),
        pytest.param(lambda: b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                     "the PEM private key cannot be read", id="bad-pem"),
        pytest.param(lambda: pem(P521), UNSUPPORTED, id="p521"),
        pytest.param(lambda: json.dumps({k: v for k, v in rsa_private().items() if k != "qi"}),
                     "an RSA private JWK needs d, p, q, dp, dq and qi", id="rsa-no-qi"),
        pytest.param(lambda: json.dumps({**ec256(), "d": b64(bytes(32))}),
                     "the JWK does not describe a valid private key", id="ec-d-zero"),
        pytest.param(lambda: json.dumps({**ec256(), "d": b64(bytes(31))}),
                     "JWK member d has the wrong length", id="ec-d-31"),
        pytest.param(lambda: json.dumps({**okp(), "d": b64(bytes(33))}),
                     "JWK member d has the wrong length", id="okp-d-33"),
    ],
)  # fmt: skip
def test_a_bad_private_key_gets_its_fixed_message(data: Any, message: str) -> None:
    raw = data()
    with pytest.raises(KeyFormatError) as raised:
        jose.load_private_key(raw.encode() if isinstance(raw, str) else raw)
    assert str(raised.value) == message


def test_the_guards_behind_the_public_checks_keep_their_messages() -> None:
    # D-VERIFY-38: a JWK that is no object, and a key of no allowed kind, each refused
    # with its message, also where the public functions have checked before.
    with pytest.raises(KeyFormatError) as raised:
        jose._jwk_to_private_key([])
    assert str(raised.value) == NOT_OBJECT
    with pytest.raises(KeyFormatError) as raised:
        jose._material(P521)
    assert str(raised.value) == UNSUPPORTED


def test_key_fit_messages() -> None:
    # PROFILE §6.2: which key serves which algorithm.
    with pytest.raises(KeyFormatError) as raised:
        jose.alg_for_key(P521)
    assert str(raised.value) == UNSUPPORTED
    with pytest.raises(SignatureError) as fit:
        jose.check_alg(ED, "ES256")
    assert str(fit.value) == "the algorithm does not fit the key"


@pytest.mark.parametrize("alg", ["PS256", "RS256"])
def test_a_generated_rsa_key_is_2048_bits_with_e_65537(alg: str) -> None:
    # PROFILE §6.2 (RSA of 2048 bits or more; generate_key: RSA 2048 for PS256 and RS256),
    # RFC 7518 §3.3; 65537 is the usual public exponent.
    key = jose.generate_key(alg)
    assert isinstance(key, rsa.RSAPrivateKey)
    assert (key.key_size, key.public_key().public_numbers().e) == (2048, 65537)


def test_a_private_jwk_keeps_the_alg_asked() -> None:
    # private_jwk: kid, alg and use as for public_jwk; an RSA key may serve PS256.
    jwk = jose.private_jwk(RSA, "k", "PS256")
    assert (jwk["kid"], jwk["alg"], jwk["use"]) == ("k", "PS256", "sig")
    assert {k: jwk[k] for k in ("kty", "n", "e", "d", "p", "q", "dp", "dq", "qi")} == rsa_private()


@pytest.mark.parametrize(
    ("jwk", "message"),
    [
        pytest.param([], NOT_OBJECT, id="not-object"),
        pytest.param({"kty": "oct", "k": "AA"}, "unsupported kty", id="oct"),
        pytest.param({"kty": ["RSA"]}, "unsupported kty", id="kty-list"),
        # RFC 7638 §3.2: e, kty, n in sorted order; the first missing one is named
        pytest.param({"kty": "RSA", "n": "AQAB"}, "JWK member e is missing or not a string",
                     id="rsa-no-e"),
    ],
)  # fmt: skip
def test_thumbprint_refuses_with_its_message(jwk: Any, message: str) -> None:
    with pytest.raises(KeyFormatError) as raised:
        jose.thumbprint(jwk)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"{", "the JWK Set is not strict JSON"),
        ({"keys": {}}, 'a JWK Set must be an object with a "keys" list'),
        ([], 'a JWK Set must be an object with a "keys" list'),
        ({"keys": [okp(), 1]}, "every JWK Set entry must be an object"),
    ],
)
def test_jwks_from_json_refuses_with_its_message(value: Any, message: str) -> None:
    # RFC 7517 §5: a JWK Set is an object whose "keys" is a list of JWKs.
    with pytest.raises(KeyFormatError) as raised:
        jose.jwks_from_json(value)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("alg", "key"),
    [("ES256", P256), ("EdDSA", ED), ("RS256", RSA), ("PS256", RSA)],
)
@pytest.mark.parametrize("signature", [b"", b"\x00" * 10, b"\xff" * 600])
def test_a_hostile_signature_never_verifies(alg: str, key: Any, signature: bytes) -> None:
    # verify never raises on a hostile signature, and a signature of the wrong size (one
    # the library refuses with an error) is no signature: False, never True.
    library_key = jose.import_public_jwk(jose.public_jwk(key, "k", alg))
    assert jose.verify_jws(library_key, alg, b"data", signature) is False
    good = jose.sign(key, alg, b"data")
    assert jose.verify_jws(library_key, alg, b"data", good) is True


def test_a_library_refusal_is_no_verification() -> None:
    # verify: whatever the library refuses with an error (here an EC key given for EdDSA,
    # which joserfc refuses as the wrong key type) is False, never True: an error is no
    # proof of a signature (PROFILE §6.5: only a signature that verifies is "verified").
    ec_key = jose.import_public_jwk(jose.public_jwk(P256, "k", "ES256"))
    assert jose.verify_jws(ec_key, "EdDSA", b"data", jose.sign(ED, "EdDSA", b"data")) is False


@pytest.mark.parametrize("error", [JoseError("refused"), ValueError("refused")])
def test_an_error_of_the_library_is_no_verification(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    # The same rule where the key fits the alg: no signature bytes we know of make
    # joserfc raise there (empty, short, long, all-zero, all-ones all give False), so
    # its algorithm is made to raise, as a later release or a hostile input might:
    # still False, never True and never the error (PROFILE §6.5).
    class Raising:
        def verify(self, *_: object) -> bool:
            raise error

    key = jose.import_public_jwk(jose.public_jwk(P256, "k", "ES256"))
    good = jose.sign(P256, "ES256", b"data")
    monkeypatch.setitem(jose._JWS, "ES256", Raising())
    assert jose.verify_jws(key, "ES256", b"data", good) is False


@pytest.mark.parametrize(
    ("key", "alg"),
    [
        (ED, "ES256"),  # an OKP key for ECDSA: joserfc raised AttributeError here
        (ED, "RS256"),
        (P256, "ES384"),  # the right kty, the wrong curve
        (P256, "PS256"),
        (RSA, "EdDSA"),
        (RSA, "ES256"),
        (P256, "HS256"),  # never allowlisted (PROFILE §6.2)
        (P256, "none"),
    ],
)
def test_a_key_that_does_not_serve_the_alg_is_no_verification(key: Any, alg: str) -> None:
    # verify never raises (its contract; the verifier reads hostile JWKS and headers): a
    # key that does not serve the alg, or an alg outside the allowlist, is False, whatever
    # the signature (PROFILE §6.5: only a signature that verifies is "verified").
    library_key = jose.import_public_jwk(jose.public_jwk(key, "k", jose.alg_for_key(key)))
    for signature in (b"", b"\x01" * 64, jose.sign(key, jose.alg_for_key(key), b"data")):
        assert jose.verify_jws(library_key, alg, b"data", signature) is False


# --- RSA sizes (D-VERIFY-55): the bounds exactly, and each refusal's fixed message ----------

_EXPONENT = "RSA public exponent is not an odd number from 3 to 2^32 - 1"
_LONG = "RSA modulus longer than 8192 bits"
N_2048 = (1 << 2047) | 1  # a modulus's size is all these rules read
N_8192 = (1 << 8191) | 1
N_8193 = (1 << 8192) | 1


@pytest.mark.parametrize(
    ("n", "e", "message"),
    [
        (N_8193, 65537, _LONG),  # 1,025 octets: refused before an integer is made
        (N_2048, 2**32 + 1, _EXPONENT),  # 5 octets, odd
        (N_2048, 2**32, _EXPONENT),  # 5 octets, even
        (N_2048, 65536, _EXPONENT),  # in range, even
        (N_2048, 2**32 - 2, _EXPONENT),  # 4 octets, even
        (N_2048, 1, _EXPONENT),
    ],
    ids=["n-8193", "e-2^32+1", "e-2^32", "e-65536", "e-2^32-2", "e-1"],
)
def test_an_rsa_key_past_the_sizes_gets_its_fixed_message(n: int, e: int, message: str) -> None:
    with pytest.raises(KeyFormatError) as raised:
        jose.jwk_to_public_key({"kty": "RSA", "n": uint(n), "e": uint(e)})
    assert str(raised.value) == message


@pytest.mark.parametrize(("n", "e"), [(N_8192, 2**32 - 1), (N_8192, 3), (N_2048, 2**32 - 1)])
def test_an_rsa_key_at_the_sizes_serves_rs256_and_ps256(n: int, e: int) -> None:
    # 8,192 bits is 1,024 octets and 2^32 - 1 is 4: both are in.
    key = jose.import_public_jwk({"kty": "RSA", "n": uint(n), "e": uint(e)})
    assert jose.key_algs(key) == {"RS256", "PS256"}


def test_the_size_rule_names_each_reason() -> None:
    # The same rule for keys that never were JWKs (key_algs); each reason its own.
    assert jose._rsa_problem(N_8193, 65537) == _LONG
    assert jose._rsa_problem(N_8192, 65537) is None
    assert jose._rsa_problem((1 << 2046) | 1, 65537) == "RSA modulus shorter than 2048 bits"
    assert jose._rsa_problem(N_2048, 65536) == _EXPONENT
    assert jose._rsa_problem(N_2048, 2**32 + 1) == _EXPONENT
    assert jose._rsa_problem(N_2048, 2**32 - 1) is None
