"""Agent Card signatures (A2A §8.4, PROFILE §6): sign, verify, and the JWKs around them.

A signature is a JWS in JSON serialization with a detached payload: each item of the
card's ``signatures`` list is ``{"protected", "signature"[, "header"]}`` and signs
``protected + "." + base64url(payload)`` where the payload is canonical bytes of the card
without ``signatures``.

SDKs disagree on those bytes, so a signature is checked under named *readings*
(PROFILE §6.3):

- ``served``: RFC 8785 of the card exactly as served, minus ``signatures`` (a2a-go's
  reading, the strict one);
- ``prune-empty``: empty strings, lists and objects (and ``null``) removed recursively
  first, ``false`` and ``0`` kept, as a2a-python and a2a-js sign; for a card an a2a-sdk
  host serves with its 0.3 compatibility members merged in, also with those members
  removed (a second candidate), because the SDK signs the 1.0 message before the merge;
- ``proto``: what a2a-sdk 1.x and @a2a-js/sdk 1.x sign in practice: the card taken through
  the A2A 1.0 protobuf JSON form (:mod:`.cardproto`: members the messages do not define
  dropped, a proto3 scalar without presence omitted at its default, so ``"required":
  false`` goes), then pruned as ``prune-empty``.

:func:`sign_card` signs an A2A 1.0 card under ``proto``, so that both SDKs' verifiers
accept it, and adds a ``served`` signature when the card as served carries more
(PROFILE §6.3; :func:`sign_readings`).

A protected header member whose value is ``null`` (``"jku": null`` from a2a-sdk) is read
as absent and reported in :attr:`SignatureCheck.quirks` (PROFILE §6.6).

The core never fetches: keys are given as a list of public JWKs or as a callable
``(kid, jku) -> JWKs``. Verification never raises on hostile input: every outcome is a
:class:`CardSignatureReport` value.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Literal, TypeAlias

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from . import ijson
from .cardproto import proto_form
from .errors import (
    AlgorithmRefused,
    CanonicalizationError,
    IngressError,
    KeyFormatError,
    SignatureError,
)
from .jcs import canonicalize
from .pointer import escape

__all__ = [
    "ALGORITHMS",
    "QUIRK_NULL_HEADER_MEMBER",
    "READINGS",
    "REASON_ALG_REFUSED",
    "REASON_BAD_SIGNATURE",
    "REASON_MALFORMED",
    "REASON_NOT_CANONICAL",
    "REASON_NO_KEY",
    "CardSignatureReport",
    "KeySource",
    "PrivateKey",
    "PublicKey",
    "Reading",
    "SignReading",
    "SignatureCheck",
    "SignatureStatus",
    "alg_for_key",
    "generate_key",
    "is_1_0_card",
    "jwk_to_public_key",
    "jwks_from_json",
    "load_private_key",
    "private_jwk",
    "public_jwk",
    "sign_card",
    "sign_readings",
    "signing_payload",
    "thumbprint",
    "verify_card",
]

# PROFILE §6.2: the allowlist. Nothing else is ever signed or accepted (never none, never HS*).
ALGORITHMS: Final[frozenset[str]] = frozenset({"EdDSA", "ES256", "ES384", "PS256", "RS256"})

Reading: TypeAlias = Literal["served", "prune-empty", "proto"]
READINGS: Final[tuple[Reading, ...]] = ("served", "prune-empty", "proto")

PrivateKey: TypeAlias = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
PublicKey: TypeAlias = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey
KeySource: TypeAlias = (
    "Callable[[str | None, str | None], Sequence[dict[str, Any]]] | Sequence[dict[str, Any]]"
)


class SignatureStatus(StrEnum):
    """A card's signature status (PROFILE §6.5)."""

    verified = "verified"
    unsigned = "unsigned"
    invalid = "invalid"
    key_unavailable = "key_unavailable"


# SignatureCheck.reason codes: short and fixed, never built from the card.
REASON_MALFORMED: Final = "malformed"  # not a JWS item, header or signature we can read
REASON_ALG_REFUSED: Final = "alg_refused"  # alg outside ALGORITHMS
REASON_NO_KEY: Final = "no_key"  # no usable key for this kid/alg
REASON_BAD_SIGNATURE: Final = "bad_signature"  # a usable key, and the signature fails
REASON_NOT_CANONICAL: Final = "not_canonical"  # the card has no canonical form to check

# SignatureCheck.quirks codes (PROFILE §6.6): tolerated, always reported, never silent.
QUIRK_NULL_HEADER_MEMBER: Final = "null_header_member"  # e.g. "jku": null, read as absent
# Members whose null is never read as absent: alg decides the algorithm, crit and b64
# change how the JWS is processed (RFC 7515 §4.1.11, RFC 7797).
_NULL_NOT_TOLERATED: Final = frozenset({"alg", "crit", "b64"})

_MIN_RSA_BITS: Final = 2048  # RFC 7518 §3.3 and §3.5
_MAX_PROTECTED_CHARS: Final = 8192  # a protected header is a few dozen bytes
_MAX_SIGNATURE_CHARS: Final = 2048  # RSA-8192 is 1366 characters
_PRUNE_DEPTH: Final = 128  # a2a-sdk's own bound for _clean_empty


@dataclass(frozen=True, slots=True)
class _Curve:
    name: str
    sec_name: str  # cryptography's curve name
    curve: type[ec.EllipticCurve]
    size: int
    alg: str
    hash: type[hashes.HashAlgorithm]


_CURVES: Final[dict[str, _Curve]] = {
    "P-256": _Curve("P-256", "secp256r1", ec.SECP256R1, 32, "ES256", hashes.SHA256),
    "P-384": _Curve("P-384", "secp384r1", ec.SECP384R1, 48, "ES384", hashes.SHA384),
}
_CURVE_BY_ALG: Final = {c.alg: c for c in _CURVES.values()}
_CURVE_BY_SEC_NAME: Final = {c.sec_name: c for c in _CURVES.values()}

# RFC 7638 §3.2: the members a thumbprint hashes, per kty.
_THUMBPRINT_MEMBERS: Final[dict[str, tuple[str, ...]]] = {
    "OKP": ("crv", "kty", "x"),
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
}
_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})

# ---------------------------------------------------------------------------------------
# The 0.3 compatibility members a2a-sdk 1.x merges into the card it serves.
#
# ``response_helpers.agent_card_to_dict`` deep-merges ``to_compat_agent_card(card)
# .model_dump(exclude_none=True)`` (camelCase aliases) into ``MessageToDict(card)`` when the
# card has an interface of protocol version 0.3, adding only the keys the 1.0 form lacks.
# ``signing._canonicalize_agent_card`` signs the 1.0 form before that merge. Listed here
# are the added members that prune-empty does not already remove.
_COMPAT_TOP: Final = (
    "url",
    "preferredTransport",
    "protocolVersion",
    "additionalInterfaces",
    "security",  # securityRequirements in the 0.3 shape
    "supportsAuthenticatedExtendedCard",  # only when true
)
_COMPAT_SKILL: Final = ("security",)
# A 1.0 scheme is {"<kind>SecurityScheme": {...}}; the merge adds the flat 0.3 members next
# to that wrapper.
_COMPAT_SCHEME: Final = (
    "type",
    "in",
    "name",
    "description",
    "scheme",
    "bearerFormat",
    "flows",
    "oauth2MetadataUrl",
    "openIdConnectUrl",
)
_SCHEME_WRAPPERS: Final = frozenset(
    {
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
    }
)
# capabilities.extensions[i].required is a plain proto3 bool: MessageToDict drops false,
# the 0.3 model always carries it, so the merge adds "required": false.


# ---------------------------------------------------------------------------------------
# base64url (RFC 7515 §2: no padding, URL-safe alphabet)

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


class _Base64Error(ValueError):
    pass


def _b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64d(text: str) -> bytes:
    """Strict base64url: the alphabet only, no padding, canonical trailing bits."""
    if _B64URL.fullmatch(text) is None or len(text) % 4 == 1:
        raise _Base64Error
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64e(data) != text:
        raise _Base64Error
    return data


def _int_bytes(value: int, size: int | None = None) -> bytes:
    return value.to_bytes(size if size is not None else max(1, (value.bit_length() + 7) // 8))


# ---------------------------------------------------------------------------------------
# Keys


def generate_key(alg: str) -> PrivateKey:
    """A fresh private key for ``alg``.

    Ed25519 for ``EdDSA``, P-256 for ``ES256``, P-384 for ``ES384``, RSA 2048 for
    ``PS256`` and ``RS256``. Raises ``AlgorithmRefused`` for anything else.
    """
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    if alg in _CURVE_BY_ALG:
        return ec.generate_private_key(_CURVE_BY_ALG[alg].curve())
    if alg in ("PS256", "RS256"):
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    raise AlgorithmRefused


def _public(key: PrivateKey | PublicKey) -> PublicKey:
    if isinstance(key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        return key.public_key()
    return key


def _key_algs(key: PrivateKey | PublicKey) -> frozenset[str]:
    """The allowlisted algorithms ``key`` can serve (empty for an unsupported key)."""
    pub = _public(key)
    if isinstance(pub, ed25519.Ed25519PublicKey):
        return frozenset({"EdDSA"})
    if isinstance(pub, ec.EllipticCurvePublicKey):
        curve = _CURVE_BY_SEC_NAME.get(pub.curve.name)
        return frozenset({curve.alg}) if curve else frozenset()
    if isinstance(pub, rsa.RSAPublicKey) and pub.key_size >= _MIN_RSA_BITS:
        return frozenset({"RS256", "PS256"})
    return frozenset()


def alg_for_key(key: PrivateKey | PublicKey, *, rsa_alg: str = "RS256") -> str:
    """The default algorithm for ``key``.

    Ed25519 → ``EdDSA``, P-256 → ``ES256``, P-384 → ``ES384``, RSA (2048 bits or more)
    → ``rsa_alg`` (``RS256`` unless ``PS256`` is asked). Raises ``KeyFormatError`` for
    any other key and ``AlgorithmRefused`` for an ``rsa_alg`` that is neither.
    """
    algs = _key_algs(key)
    if not algs:
        raise KeyFormatError("unsupported key type, curve or size")
    if len(algs) == 1:
        return next(iter(algs))
    if rsa_alg not in algs:
        raise AlgorithmRefused
    return rsa_alg


def _check_alg(key: PrivateKey | PublicKey, alg: str | None) -> str:
    if alg is None:
        return alg_for_key(key)
    if alg not in ALGORITHMS:
        raise AlgorithmRefused
    if alg not in _key_algs(key):
        raise SignatureError("the algorithm does not fit the key")
    return alg


def _public_members(pub: PublicKey) -> dict[str, str]:
    if isinstance(pub, ed25519.Ed25519PublicKey):
        raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": _b64e(raw)}
    if isinstance(pub, ec.EllipticCurvePublicKey):
        curve = _CURVE_BY_SEC_NAME.get(pub.curve.name)
        if curve is None:
            raise KeyFormatError("unsupported curve")
        nums = pub.public_numbers()
        return {
            "kty": "EC",
            "crv": curve.name,
            "x": _b64e(_int_bytes(nums.x, curve.size)),
            "y": _b64e(_int_bytes(nums.y, curve.size)),
        }
    if isinstance(pub, rsa.RSAPublicKey):
        rsa_nums = pub.public_numbers()
        return {
            "kty": "RSA",
            "n": _b64e(_int_bytes(rsa_nums.n)),
            "e": _b64e(_int_bytes(rsa_nums.e)),
        }
    raise KeyFormatError("unsupported key type")


def public_jwk(
    key_or_public: PrivateKey | PublicKey, kid: str, alg: str | None = None
) -> dict[str, str]:
    """The public JWK of a key, with ``kid``, ``alg`` and ``use: "sig"``.

    ``alg`` defaults to :func:`alg_for_key`. Raises ``AlgorithmRefused`` for an ``alg``
    off the allowlist, ``SignatureError`` for one that does not fit the key, and
    ``KeyFormatError`` for an unsupported key.
    """
    alg = _check_alg(key_or_public, alg)
    return {**_public_members(_public(key_or_public)), "kid": kid, "alg": alg, "use": "sig"}


def private_jwk(key: PrivateKey, kid: str, alg: str | None = None) -> dict[str, str]:
    """The private JWK of ``key`` (public members, private members, ``kid``, ``alg``, ``use``).

    Keep it secret. Raises as :func:`public_jwk` does.
    """
    jwk = public_jwk(key, kid, alg)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        jwk["d"] = _b64e(raw)
    elif isinstance(key, ec.EllipticCurvePrivateKey):
        jwk["d"] = _b64e(_int_bytes(key.private_numbers().private_value, _CURVES[jwk["crv"]].size))
    else:
        nums = key.private_numbers()
        for name, value in (
            ("d", nums.d),
            ("p", nums.p),
            ("q", nums.q),
            ("dp", nums.dmp1),
            ("dq", nums.dmq1),
            ("qi", nums.iqmp),
        ):
            jwk[name] = _b64e(_int_bytes(value))
    return jwk


def _member_bytes(jwk: dict[str, Any], name: str, size: int | None = None) -> bytes:
    value = jwk.get(name)
    if not isinstance(value, str):
        raise KeyFormatError(f"JWK member {name} is missing or not a string")
    try:
        data = _b64d(value)
    except _Base64Error:
        raise KeyFormatError(f"JWK member {name} is not base64url") from None
    if size is not None and len(data) != size:
        raise KeyFormatError(f"JWK member {name} has the wrong length")
    return data


def _member_uint(jwk: dict[str, Any], name: str) -> int:
    data = _member_bytes(jwk, name)
    # RFC 7518 §6.3.1.1: the minimal octet sequence, no leading zero octets.
    if not data or (len(data) > 1 and data[0] == 0):
        raise KeyFormatError(f"JWK member {name} is not a minimal unsigned integer")
    return int.from_bytes(data)


def _check_optional_members(jwk: dict[str, Any]) -> None:
    for name in ("kid", "alg", "use"):
        if name in jwk and not isinstance(jwk[name], str):
            raise KeyFormatError(f"JWK member {name} is not a string")
    ops = jwk.get("key_ops")
    if "key_ops" in jwk and not (isinstance(ops, list) and all(isinstance(o, str) for o in ops)):
        raise KeyFormatError("JWK member key_ops is not a list of strings")


def jwk_to_public_key(jwk: dict[str, Any]) -> PublicKey:
    """The public key a JWK describes.

    Accepts ``OKP``/``Ed25519``, ``EC`` on ``P-256`` or ``P-384`` (the point must lie on
    the curve) and ``RSA`` of 2048 bits or more. ``kid``, ``alg`` and ``use`` must be
    strings and ``key_ops`` a list of strings when present; members a JWK may carry
    beyond those are ignored (RFC 7517 §4). Raises ``KeyFormatError`` for anything
    else: not an object, an unknown ``kty`` or curve, a missing or non-base64url member,
    a coordinate of the wrong length, an RSA integer with leading zeros, a short RSA
    modulus, or private key members (a public JWK must not carry them).
    """
    if not isinstance(jwk, dict):
        raise KeyFormatError("a JWK must be a JSON object")
    _check_optional_members(jwk)
    if _PRIVATE_MEMBERS & jwk.keys():
        raise KeyFormatError("a public JWK must not carry private key members")
    kty = jwk.get("kty")
    try:
        if kty == "OKP":
            if jwk.get("crv") != "Ed25519":
                raise KeyFormatError("unsupported OKP curve")
            return ed25519.Ed25519PublicKey.from_public_bytes(_member_bytes(jwk, "x", 32))
        if kty == "EC":
            crv = jwk.get("crv")
            curve = _CURVES.get(crv) if isinstance(crv, str) else None
            if curve is None:
                raise KeyFormatError("unsupported EC curve")
            x = int.from_bytes(_member_bytes(jwk, "x", curve.size))
            y = int.from_bytes(_member_bytes(jwk, "y", curve.size))
            return ec.EllipticCurvePublicNumbers(x, y, curve.curve()).public_key()
        if kty == "RSA":
            n = _member_uint(jwk, "n")
            e = _member_uint(jwk, "e")
            if n.bit_length() < _MIN_RSA_BITS:
                raise KeyFormatError("RSA modulus shorter than 2048 bits")
            return rsa.RSAPublicNumbers(e, n).public_key()
    except (ValueError, UnsupportedAlgorithm) as exc:
        if isinstance(exc, KeyFormatError):
            raise
        raise KeyFormatError("the JWK does not describe a valid public key") from None
    raise KeyFormatError("unsupported kty")


def _jwk_to_private_key(jwk: Any) -> PrivateKey:
    if not isinstance(jwk, dict):
        raise KeyFormatError("a JWK must be a JSON object")
    _check_optional_members(jwk)
    public = {k: v for k, v in jwk.items() if k not in _PRIVATE_MEMBERS}
    expected = jwk_to_public_key(public)
    key: PrivateKey
    try:
        if jwk.get("kty") == "OKP":
            key = ed25519.Ed25519PrivateKey.from_private_bytes(_member_bytes(jwk, "d", 32))
        elif jwk.get("kty") == "EC":
            curve = _CURVES[jwk["crv"]]
            d = int.from_bytes(_member_bytes(jwk, "d", curve.size))
            key = ec.derive_private_key(d, curve.curve())
        else:
            missing = [m for m in ("d", "p", "q", "dp", "dq", "qi") if m not in jwk]
            if missing:
                # RFC 7518 §6.3.2: with any CRT member present, all are; we need them all.
                raise KeyFormatError("an RSA private JWK needs d, p, q, dp, dq and qi")
            pub_nums = rsa.RSAPublicNumbers(_member_uint(jwk, "e"), _member_uint(jwk, "n"))
            key = rsa.RSAPrivateNumbers(
                p=_member_uint(jwk, "p"),
                q=_member_uint(jwk, "q"),
                d=_member_uint(jwk, "d"),
                dmp1=_member_uint(jwk, "dp"),
                dmq1=_member_uint(jwk, "dq"),
                iqmp=_member_uint(jwk, "qi"),
                public_numbers=pub_nums,
            ).private_key()
    except (ValueError, UnsupportedAlgorithm) as exc:
        if isinstance(exc, KeyFormatError):
            raise
        raise KeyFormatError("the JWK does not describe a valid private key") from None
    if _public_members(key.public_key()) != _public_members(expected):
        raise KeyFormatError("the private JWK's public members do not match its private key")
    return key


def load_private_key(data: bytes) -> PrivateKey:
    """A private key from PEM (PKCS#8, unencrypted) or a private JWK in JSON.

    Returns an Ed25519, P-256, P-384 or RSA (2048 bits or more) private key. Raises
    ``KeyFormatError`` for anything else: other key types, encrypted PEM, malformed PEM
    or JSON, a JWK whose public and private members disagree.
    """
    text = bytes(data).strip()
    if text.startswith(b"{"):
        try:
            jwk = ijson.loads(text)
        except IngressError:
            raise KeyFormatError("the key file is neither PEM nor a JSON JWK") from None
        return _jwk_to_private_key(jwk)
    if not text.startswith(b"-----BEGIN PRIVATE KEY-----"):
        raise KeyFormatError("expected a PEM PKCS#8 private key or a private JWK")
    try:
        key = serialization.load_pem_private_key(text, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise KeyFormatError("the PEM private key cannot be read") from None
    if not isinstance(
        key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    ) or not _key_algs(key):
        raise KeyFormatError("unsupported key type, curve or size")
    return key


def thumbprint(jwk: dict[str, Any]) -> str:
    """The RFC 7638 thumbprint of a JWK: base64url(SHA-256(JCS of the required members)).

    Raises ``KeyFormatError`` when ``jwk`` is not an object, its ``kty`` is not one of
    ``OKP``, ``EC``, ``RSA``, or a required member is missing or not a string.
    """
    if not isinstance(jwk, dict):
        raise KeyFormatError("a JWK must be a JSON object")
    kty = jwk.get("kty")
    members = _THUMBPRINT_MEMBERS.get(kty) if isinstance(kty, str) else None
    if members is None:
        raise KeyFormatError("unsupported kty")
    required = {}
    for name in members:
        if not isinstance(jwk.get(name), str):
            raise KeyFormatError(f"JWK member {name} is missing or not a string")
        required[name] = jwk[name]
    return _b64e(hashlib.sha256(canonicalize(required)).digest())


def jwks_from_json(value: Any) -> list[dict[str, Any]]:
    """The ``keys`` of a JWK Set (RFC 7517 §5), given parsed JSON or its bytes/text.

    Returns the key objects as they are (each is checked when used). Raises
    ``KeyFormatError`` when the value is not strict JSON, not an object with a ``keys``
    list, or a ``keys`` item is not an object.
    """
    if isinstance(value, bytes | bytearray | memoryview | str):
        try:
            value = ijson.loads(value)
        except IngressError:
            raise KeyFormatError("the JWK Set is not strict JSON") from None
    if not isinstance(value, dict) or not isinstance(value.get("keys"), list):
        raise KeyFormatError('a JWK Set must be an object with a "keys" list')
    keys = value["keys"]
    if not all(isinstance(k, dict) for k in keys):
        raise KeyFormatError("every JWK Set entry must be an object")
    return list(keys)


# ---------------------------------------------------------------------------------------
# Raw JWS signatures (RFC 7518 §3)


def _sign_raw(key: PrivateKey, alg: str, data: bytes) -> bytes:
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(data)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        curve = _CURVE_BY_ALG[alg]
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(curve.hash())))
        # RFC 7518 §3.4: R || S, each the curve's fixed width, not DER.
        return _int_bytes(r, curve.size) + _int_bytes(s, curve.size)
    if alg == "PS256":
        # RFC 7518 §3.5: MGF1 with SHA-256, salt as long as the hash.
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        return key.sign(data, pss, hashes.SHA256())
    return key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def _verify_raw(key: PublicKey, alg: str, data: bytes, sig: bytes) -> bool:
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            if len(sig) != 64:
                return False
            key.verify(sig, data)
        elif isinstance(key, ec.EllipticCurvePublicKey):
            curve = _CURVE_BY_ALG[alg]
            if len(sig) != 2 * curve.size:
                return False
            r = int.from_bytes(sig[: curve.size])
            s = int.from_bytes(sig[curve.size :])
            key.verify(encode_dss_signature(r, s), data, ec.ECDSA(curve.hash()))
        else:
            if len(sig) != (key.key_size + 7) // 8:
                return False
            if alg == "PS256":
                pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
                key.verify(sig, data, pss, hashes.SHA256())
            else:
                key.verify(sig, data, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, ValueError):
        return False
    return True


# ---------------------------------------------------------------------------------------
# Payloads


class _Empty:
    """Marks a value prune-empty removes."""


_EMPTY: Final = _Empty()


def _prune(value: Any, depth: int = 1) -> Any:
    """Remove ``""``, ``[]``, ``{}`` and ``null`` recursively; keep ``false`` and ``0``.

    This is what a2a-sdk's ``_clean_empty`` does (it drops ``None`` too, though
    ``MessageToDict`` emits ``null`` only inside ``Struct`` params). Raises
    ``CanonicalizationError`` past the nesting bound.
    """
    if isinstance(value, dict | list) and depth > _PRUNE_DEPTH:
        raise CanonicalizationError("nesting too deep to canonicalize")
    if isinstance(value, dict):
        pruned = {}
        for key, item in value.items():
            kept = _prune(item, depth + 1)
            if kept is not _EMPTY:
                pruned[key] = kept
        return pruned or _EMPTY
    if isinstance(value, list):
        items = [kept for item in value if (kept := _prune(item, depth + 1)) is not _EMPTY]
        return items or _EMPTY
    if value is None or value == "":
        return _EMPTY
    return value


def _without_signatures(card: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in card.items() if k != "signatures"}


def _is_sdk_compat_card(card: dict[str, Any]) -> bool:
    return "supportedInterfaces" in card and any(name in card for name in _COMPAT_TOP)


def _drop(obj: dict[str, Any], names: Sequence[str], at: str, removed: list[str]) -> dict[str, Any]:
    removed += [f"{at}/{n}" for n in names if n in obj]
    return {k: v for k, v in obj.items() if k not in names}


def _strip_compat(card: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The card without the members a2a-sdk's 0.3 merge adds, and their JSON Pointers.

    Only the containers the merge touches are copied; the rest is shared with ``card``.
    """
    removed: list[str] = []
    out = _drop(card, _COMPAT_TOP, "", removed)

    caps = out.get("capabilities")
    if isinstance(caps, dict) and isinstance(caps.get("extensions"), list):
        out["capabilities"] = {
            **caps,
            "extensions": [
                _drop(ext, ("required",), f"/capabilities/extensions/{i}", removed)
                if isinstance(ext, dict) and ext.get("required") is False
                else ext
                for i, ext in enumerate(caps["extensions"])
            ],
        }
    skills = out.get("skills")
    if isinstance(skills, list):
        out["skills"] = [
            _drop(skill, _COMPAT_SKILL, f"/skills/{i}", removed)
            if isinstance(skill, dict)
            else skill
            for i, skill in enumerate(skills)
        ]
    schemes = out.get("securitySchemes")
    if isinstance(schemes, dict):
        out["securitySchemes"] = {
            name: _drop(scheme, _COMPAT_SCHEME, f"/securitySchemes/{escape(name)}", removed)
            if isinstance(scheme, dict) and _SCHEME_WRAPPERS & scheme.keys()
            else scheme
            for name, scheme in schemes.items()
        }
    return out, tuple(removed)


def _pruned_bytes(value: dict[str, Any]) -> bytes:
    pruned = _prune(value)
    # An all-empty card prunes to nothing; a2a-sdk then canonicalizes None.
    return canonicalize(None if pruned is _EMPTY else pruned)


@dataclass(frozen=True, slots=True)
class _Candidate:
    payload: bytes
    uncovered: tuple[str, ...] = ()


def _proto_candidates(body: dict[str, Any]) -> list[_Candidate]:
    form = proto_form(body)
    if form is None:
        return []  # the SDKs refuse or coerce such a card; nothing to check (cardproto)
    pruned = _prune(form.value)
    if pruned is _EMPTY:
        # An all-empty card: a2a-sdk canonicalizes None, a2a-js returns "{}".
        return [_Candidate(b"null", form.dropped), _Candidate(b"{}", form.dropped)]
    return [_Candidate(canonicalize(pruned), form.dropped)]


def _candidates(card: dict[str, Any], reading: Reading) -> list[_Candidate]:
    body = _without_signatures(card)
    if reading == "served":
        return [_Candidate(canonicalize(body))]
    if reading == "proto":
        return _proto_candidates(body)
    found = [_Candidate(_pruned_bytes(body))]
    if _is_sdk_compat_card(body):
        stripped, removed = _strip_compat(body)
        payload = _pruned_bytes(stripped)
        if payload != found[0].payload:
            found.append(_Candidate(payload, removed))
    return found


def signing_payload(card: dict[str, Any], reading: Reading) -> list[bytes]:
    """The candidate canonical byte strings a signature on ``card`` may cover under ``reading``.

    ``served``: one candidate, RFC 8785 of the card without ``signatures``.
    ``prune-empty``: RFC 8785 after removing ``""``, ``[]``, ``{}`` and ``null``
    recursively; and, for an a2a-sdk card carrying 0.3 compatibility members (it has
    ``supportedInterfaces`` and a top-level ``url``, ``preferredTransport``,
    ``protocolVersion``, ``additionalInterfaces``, ``security`` or
    ``supportsAuthenticatedExtendedCard``), a second candidate with the members the SDK
    merges in removed before pruning. Duplicates are dropped.
    ``proto``: RFC 8785 of the card's A2A 1.0 protobuf JSON form (:func:`.cardproto.proto_form`)
    after the same pruning; none when the card does not fit the 1.0 messages; two
    (``null`` and ``{}``) when nothing is left.

    Raises ``CanonicalizationError`` when the card has no canonical form and
    ``SignatureError`` for an unknown reading.
    """
    if reading not in READINGS:
        raise SignatureError("unknown reading")
    return [c.payload for c in _candidates(card, reading)]


# ---------------------------------------------------------------------------------------
# Signing


SignReading: TypeAlias = Literal["proto", "served"]


def is_1_0_card(card: dict[str, Any]) -> bool:
    """Whether ``card`` is an A2A 1.0 card: it lists ``supportedInterfaces`` (either
    spelling), where a 0.3 card names its ``url`` instead (PROFILE §6.3)."""
    names = ("supportedInterfaces", "supported_interfaces")
    return any(isinstance(card.get(name), list) for name in names)


def sign_readings(card: dict[str, Any], reading: SignReading | None = None) -> tuple[Reading, ...]:
    """The readings :func:`sign_card` signs ``card`` under, one signature each (PROFILE §6.3).

    ``reading`` given: that one. By default, for an A2A 1.0 card (:func:`is_1_0_card`),
    ``proto`` (what both SDKs' verifiers check, so they accept it) and then ``served``
    when its bytes differ (a ``"required": false``, an empty value, a member the 1.0
    messages do not define): that second signature covers the card exactly as served,
    for strict verifiers, and both SDK verifiers accept a card on which one signature of
    several verifies (tests/interop). For any other card (a 0.3 card), ``served``.

    Raises ``SignatureError`` for an unknown reading and when ``proto`` is wanted for a
    card that has no ``proto`` form (it does not fit the A2A 1.0 messages, or nothing of
    it is left: the SDKs refuse or coerce such a card, so no signature on it verifies
    with them); ``CanonicalizationError`` when the card has no canonical form.
    """
    if reading is not None and reading not in ("proto", "served"):
        raise SignatureError("a card is signed under the reading 'proto' or 'served'")
    if reading == "served" or (reading is None and not is_1_0_card(card)):
        return ("served",)
    proto = _proto_candidates(_without_signatures(card))
    if len(proto) != 1:
        raise SignatureError(
            "the card does not fit the A2A 1.0 AgentCard message (a member of the wrong "
            "type, both spellings of one member, two cases of a oneof, null in a list, or "
            "nothing left), so no signature on it can verify with the SDKs' verifiers"
        )
    if reading == "proto" or proto[0].payload == canonicalize(_without_signatures(card)):
        return ("proto",)
    return ("proto", "served")


def sign_card(
    card: dict[str, Any],
    key: PrivateKey,
    *,
    kid: str,
    alg: str | None = None,
    jku: str | None = None,
    header: dict[str, Any] | None = None,
    reading: SignReading | None = None,
) -> dict[str, Any]:
    """A new card: ``card`` with its new signature(s) appended to ``signatures``.

    One signature per reading of :func:`sign_readings` (PROFILE §6.3): by default, for an
    A2A 1.0 card, one over the ``proto`` reading (what ``a2a-sdk``'s and
    ``@a2a-js/sdk``'s verifiers check) and, when the card as served differs from it, a
    second over ``served`` (RFC 8785 of the card as served, without ``signatures``);
    ``reading`` asks for exactly one. The protected header is ``{"alg", "kid", "typ":
    "JOSE"[, "jku"]}`` as RFC 8785 bytes, base64url. ``alg`` defaults to
    :func:`alg_for_key`; ``header`` is an optional unprotected header. ``card`` is not
    modified.

    Raises ``AlgorithmRefused`` for an ``alg`` off the allowlist (``none``, ``HS*``, any
    other); ``SignatureError`` when ``alg`` does not fit the key, ``kid`` or ``jku`` is not
    a string, ``header`` is not an object or repeats a protected member, the card's
    ``signatures`` is not a list, or as :func:`sign_readings` does; ``KeyFormatError``
    for an unsupported key; ``CanonicalizationError`` when the card has no canonical form.
    """
    if alg is not None and alg not in ALGORITHMS:
        raise AlgorithmRefused
    if not isinstance(
        key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    ):
        raise KeyFormatError("sign_card needs a private key")
    alg = _check_alg(key, alg)
    if not isinstance(kid, str) or (jku is not None and not isinstance(jku, str)):
        raise SignatureError("kid and jku must be strings")
    protected: dict[str, str] = {"alg": alg, "kid": kid, "typ": "JOSE"}
    if jku is not None:  # omitted, never null
        protected["jku"] = jku
    if header is not None:
        if not isinstance(header, dict):
            raise SignatureError("the unprotected header must be an object")
        if protected.keys() & header.keys():
            # RFC 7515 §7.2.1: protected and unprotected names are disjoint.
            raise SignatureError("the unprotected header repeats a protected member")
    existing = card.get("signatures", [])
    if not isinstance(existing, list):
        raise SignatureError("the card's signatures member is not a list")

    protected_b64 = _b64e(canonicalize(protected))
    items: list[dict[str, Any]] = []
    for each in sign_readings(card, reading):
        (payload,) = (c.payload for c in _candidates(card, each))
        signing_input = f"{protected_b64}.{_b64e(payload)}".encode("ascii")
        item: dict[str, Any] = {
            "protected": protected_b64,
            "signature": _b64e(_sign_raw(key, alg, signing_input)),
        }
        if header is not None:
            item["header"] = copy.deepcopy(header)
        items.append(item)

    signed = copy.deepcopy(card)
    signed["signatures"] = [*signed.get("signatures", []), *items]
    return signed


# ---------------------------------------------------------------------------------------
# Verifying


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """What one ``signatures`` item came to.

    ``status`` is ``verified``, ``invalid`` or ``key_unavailable``. ``readings`` lists the
    readings under which it verified (READINGS order; empty unless verified).
    ``thumbprint`` is the RFC 7638 thumbprint of the key that verified it. ``reason`` is
    a fixed code (``malformed``, ``alg_refused``, ``no_key``, ``bad_signature``,
    ``not_canonical``) when it did not verify. ``uncovered`` lists, as JSON Pointers, the
    served members the verifying payload left out: non-empty only when the signature
    verified solely with a2a-sdk's 0.3 compatibility members removed (``prune-empty``)
    or with members the 1.0 messages do not define dropped (``proto``), so those members
    (the 0.3 ``url`` among them) are not covered by it. ``quirks`` lists tolerated header
    quirks (``null_header_member``), whatever the status.
    """

    index: int
    alg: str | None
    kid: str | None
    jku: str | None
    status: SignatureStatus
    readings: tuple[Reading, ...] = ()
    thumbprint: str | None = None
    reason: str | None = None
    uncovered: tuple[str, ...] = ()
    quirks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CardSignatureReport:
    """A card's signature status, the reading(s) it verified under, and every check.

    The verifying signature is, among those that verified, the one leaving the fewest
    members uncovered (see :class:`SignatureCheck`), then the one verifying under the
    earliest reading, then the first in card order. ``reading`` is the first of READINGS
    under which it verified; ``readings`` all of them. ``kid`` and
    ``thumbprint`` are the verifying signature's; when none verified, ``kid`` is that of
    the first checked signature carrying one, and ``thumbprint`` is ``None``.
    """

    status: SignatureStatus
    reading: Reading | None = None
    readings: tuple[Reading, ...] = ()
    kid: str | None = None
    thumbprint: str | None = None
    checks: tuple[SignatureCheck, ...] = ()

    @property
    def quirks(self) -> tuple[str, ...]:
        """The tolerated header quirks of any checked signature (PROFILE §6.6), once each."""
        return tuple(dict.fromkeys(q for c in self.checks for q in c.quirks))

    def to_json(self) -> dict[str, Any]:
        """The record's ``card_signature`` members (PROFILE §8); the caller adds ``key_source``."""
        return {
            "status": self.status.value,
            "reading": self.reading,
            "kid": self.kid,
            "thumbprint": self.thumbprint,
        }


def _is_item(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("protected"), str)
        and isinstance(item.get("signature"), str)
    )


def _parse_protected(
    text: str,
) -> tuple[dict[str, Any], tuple[str, ...], frozenset[str]] | None:
    """The protected header with ``null`` members read as absent, the quirks seen, and
    the member names as sent."""
    if len(text) > _MAX_PROTECTED_CHARS:
        return None
    try:
        header = ijson.loads(_b64d(text), max_bytes=_MAX_PROTECTED_CHARS, max_depth=8)
    except (_Base64Error, IngressError):
        return None
    if not isinstance(header, dict):
        return None
    names = frozenset(header)
    nulls = {k for k, v in header.items() if v is None and k not in _NULL_NOT_TOLERATED}
    if not nulls:
        return header, (), names
    # PROFILE §6.6: a null member is read as absent (a2a-sdk emits "jku": null), and said.
    kept = {k: v for k, v in header.items() if k not in nulls}
    return kept, (QUIRK_NULL_HEADER_MEMBER,), names


def _header_problem(
    header: dict[str, Any], item: dict[str, Any], protected_names: frozenset[str]
) -> str | None:
    """A reason the protected header (alg already allowed) or the item cannot be used.

    ``protected_names`` are the header's member names as sent, nulls included."""
    if header.get("typ", "JOSE") != "JOSE":
        return REASON_MALFORMED
    for name in ("kid", "jku"):
        if name in header and not isinstance(header[name], str):
            return REASON_MALFORMED
    # RFC 7515 §4.1.11: we understand no critical extension, so a crit header fails;
    # b64:false (RFC 7797) would change the signing input.
    if "crit" in header or header.get("b64", True) is not True:
        return REASON_MALFORMED
    unprotected = item.get("header")
    if "header" in item and not isinstance(unprotected, dict):
        return REASON_MALFORMED
    if isinstance(unprotected, dict) and protected_names & unprotected.keys():
        return REASON_MALFORMED  # RFC 7515 §7.2.1
    if set(item) - {"protected", "signature", "header"}:
        return REASON_MALFORMED  # PROFILE §6.1
    return None


def _usable_keys(
    keys: KeySource, kid: str | None, jku: str | None, alg: str
) -> Iterator[tuple[PublicKey, dict[str, Any]]]:
    offered = keys(kid, jku) if callable(keys) else keys
    if not isinstance(offered, Sequence) or isinstance(offered, str | bytes):
        return
    for jwk in offered:
        if not isinstance(jwk, dict):
            continue
        if "kid" in jwk and jwk["kid"] != kid:
            continue
        if "alg" in jwk and jwk["alg"] != alg:
            continue
        if jwk.get("use", "sig") != "sig":
            continue
        ops = jwk.get("key_ops")
        if "key_ops" in jwk and not (isinstance(ops, list) and "verify" in ops):
            continue
        try:
            pub = jwk_to_public_key(jwk)
        except KeyFormatError:
            continue
        if alg in _key_algs(pub):
            yield pub, jwk


def _check(
    index: int,
    item: dict[str, Any],
    candidates: dict[Reading, list[_Candidate]],
    keys: KeySource,
) -> SignatureCheck:
    parsed = _parse_protected(item["protected"])
    if parsed is None or not isinstance(parsed[0].get("alg"), str):
        quirks = parsed[1] if parsed is not None else ()
        return SignatureCheck(
            index, None, None, None, SignatureStatus.invalid, reason=REASON_MALFORMED,
            quirks=quirks,
        )  # fmt: skip
    header, quirks, protected_names = parsed
    alg: str = header["alg"]
    kid = header.get("kid") if isinstance(header.get("kid"), str) else None
    jku = header.get("jku") if isinstance(header.get("jku"), str) else None

    def fail(status: SignatureStatus, reason: str) -> SignatureCheck:
        return SignatureCheck(index, alg, kid, jku, status, reason=reason, quirks=quirks)

    if alg not in ALGORITHMS:  # PROFILE §6.2
        return fail(SignatureStatus.invalid, REASON_ALG_REFUSED)
    problem = _header_problem(header, item, protected_names)
    if problem is not None:
        return fail(SignatureStatus.invalid, problem)
    signature = item["signature"]
    if len(signature) > _MAX_SIGNATURE_CHARS:
        return fail(SignatureStatus.invalid, REASON_MALFORMED)
    try:
        sig = _b64d(signature)
    except _Base64Error:
        return fail(SignatureStatus.invalid, REASON_MALFORMED)

    usable = list(_usable_keys(keys, kid, jku, alg))
    if not usable:
        return fail(SignatureStatus.key_unavailable, REASON_NO_KEY)
    if not any(candidates.values()):
        return fail(SignatureStatus.invalid, REASON_NOT_CANONICAL)

    prefix = item["protected"].encode("ascii") + b"."
    for pub, jwk in usable:
        verified: list[Reading] = []
        uncovered: tuple[str, ...] | None = None
        for reading in READINGS:
            for candidate in candidates.get(reading, ()):
                if _verify_raw(pub, alg, prefix + _b64e(candidate.payload).encode("ascii"), sig):
                    verified.append(reading)
                    if uncovered is None or len(candidate.uncovered) < len(uncovered):
                        uncovered = candidate.uncovered
                    break
        if verified:
            return SignatureCheck(
                index,
                alg,
                kid,
                jku,
                SignatureStatus.verified,
                readings=tuple(verified),
                thumbprint=thumbprint(jwk),
                uncovered=uncovered or (),
                quirks=quirks,
            )
    return fail(SignatureStatus.invalid, REASON_BAD_SIGNATURE)


def verify_card(
    card: dict[str, Any],
    keys: KeySource,
    *,
    readings: Sequence[Reading] = READINGS,
) -> CardSignatureReport:
    """Check a served card's signatures (A2A §8.4, PROFILE §6).

    ``keys`` is a list of public JWKs (a pinned JWK Set's ``keys``) or a callable
    ``(kid, jku) -> JWKs`` (the caller fetches; this never does). A JWK is a candidate
    for a signature when its ``kid``, if any, equals the header's, its ``alg``, if any,
    equals the header's, its ``use``/``key_ops`` allow verifying, and it fits the alg.

    Returns a :class:`CardSignatureReport` whose ``status`` is:

    - ``unsigned``: no ``signatures`` member, or an empty list;
    - ``verified``: some signature verified under some requested reading;
    - ``invalid``: none verified and some signature was malformed, used a refused
      algorithm, or failed under a usable key; also when ``signatures`` itself is not a
      list of objects with string ``protected`` and ``signature`` (nothing is checked
      then), or the card is not an object;
    - ``key_unavailable``: otherwise (no signature found a usable key).

    Never raises on a hostile card. Raises ``SignatureError`` for an unknown reading in
    ``readings``; exceptions from a ``keys`` callable propagate.
    """
    wanted = tuple(readings)
    if not wanted or any(r not in READINGS for r in wanted):
        raise SignatureError("unknown reading")
    if not isinstance(card, dict):
        return CardSignatureReport(SignatureStatus.invalid)
    if "signatures" not in card or card["signatures"] == []:
        return CardSignatureReport(SignatureStatus.unsigned)
    items = card["signatures"]
    if not isinstance(items, list) or not all(_is_item(i) for i in items):
        return CardSignatureReport(SignatureStatus.invalid)

    candidates: dict[Reading, list[_Candidate]] = {}
    for reading in READINGS:
        if reading in wanted:
            try:
                candidates[reading] = _candidates(card, reading)
            except CanonicalizationError:
                candidates[reading] = []

    checks = tuple(_check(i, item, candidates, keys) for i, item in enumerate(items))
    verified = [c for c in checks if c.status is SignatureStatus.verified]
    if verified:
        # The signature that covers the most: fewest uncovered members, then the earliest
        # reading, then card order.
        best = min(
            verified, key=lambda c: (len(c.uncovered), READINGS.index(c.readings[0]), c.index)
        )
        return CardSignatureReport(
            SignatureStatus.verified,
            reading=best.readings[0],
            readings=best.readings,
            kid=best.kid,
            thumbprint=best.thumbprint,
            checks=checks,
        )
    status = (
        SignatureStatus.invalid
        if any(c.status is SignatureStatus.invalid for c in checks)
        else SignatureStatus.key_unavailable
    )
    kid = next((c.kid for c in checks if c.kid is not None), None)
    return CardSignatureReport(status, kid=kid, checks=checks)
