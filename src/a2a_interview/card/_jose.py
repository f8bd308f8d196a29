"""The JOSE under card signatures (PROFILE §6.2, §6.4): keys, JWKs, raw JWS signatures.

The library is ``joserfc``: it imports and exports keys as JWKs (RFC 7517, RFC 7518 §6,
RFC 8037), holds the algorithms (RFC 7518 §3, RFC 8037 §3.1: the fixed-width ``R || S``
of ECDSA, the PSS parameters) and decodes base64url strictly (no padding, the URL-safe
alphabet, canonical trailing bits). What stays here is what the profile decides and the
library does not (docs/decisions/verify.md, "Keys and the card signature"):

- the allowlist :data:`ALGORITHMS` and which key serves which of them (Ed25519 only, P-256
  and P-384 only, RSA with a modulus of 2048 to 8192 bits and an odd public exponent
  from 3 to 2^32 - 1, so that one check costs what RSA's common keys cost; D-VERIFY-55);
- the checks a JWK passes before the library sees it, each with its fixed message:
  coordinates of the curve's exact length, RSA integers without leading zeros, no private
  members in a public JWK, every CRT member in a private RSA JWK, ``kid``/``alg``/``use``
  strings; members beyond the key material are not the library's to judge (RFC 7517 §4);
- the RFC 7638 thumbprint, over RFC 8785 bytes (``joserfc``'s escapes non-ASCII, which
  RFC 7638 §3.3 does not allow);
- the private key file (PEM PKCS#8 or a private JWK) and the JWK Set's shape.

Keys cross this module's boundary as ``cryptography`` objects (:data:`PrivateKey`,
:data:`PublicKey`); ``joserfc`` keys stay inside it.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeGuard, cast

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import ECKey, Key, OKPKey, RSAKey
from joserfc.jws import JWSRegistry
from joserfc.util import urlsafe_b64decode, urlsafe_b64encode

from .. import strictjson
from ..errors import AlgorithmRefused, IngressError, KeyFormatError, SignatureError
from ..jcs import canonicalize

__all__ = [
    "ALGORITHMS",
    "PrivateKey",
    "PublicKey",
    "alg_for_key",
    "b64d",
    "b64e",
    "check_alg",
    "generate_key",
    "import_public_jwk",
    "is_private_key",
    "jwk_to_public_key",
    "jwks_from_json",
    "key_algs",
    "load_private_key",
    "private_jwk",
    "public_jwk",
    "sign",
    "thumbprint",
    "verify_jws",
]

# PROFILE §6.2: the allowlist. Nothing else is ever signed or accepted (never none, never HS*).
ALGORITHMS: Final[frozenset[str]] = frozenset({"EdDSA", "ES256", "ES384", "PS256", "RS256"})

PrivateKey: TypeAlias = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
PublicKey: TypeAlias = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey

# The library's algorithms, resolved once through a registry that allows ours alone.
# "EdDSA" carries joserfc's RFC 9864 deprecation warning (use "Ed25519"); PROFILE §6.2 and
# both SDKs name EdDSA, so the warning is expected and not shown.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", SecurityWarning)
    _REGISTRY: Final = JWSRegistry(algorithms=sorted(ALGORITHMS))
    _JWS: Final = {name: _REGISTRY.get_alg(name) for name in sorted(ALGORITHMS)}


@dataclass(frozen=True, slots=True)
class _Curve:
    alg: str
    sec_name: str  # cryptography's name
    curve: type[ec.EllipticCurve]
    size: int  # octets of a coordinate (RFC 7518 §6.2.1.2)


_CURVES: Final[dict[str, _Curve]] = {
    "P-256": _Curve("ES256", "secp256r1", ec.SECP256R1, 32),
    "P-384": _Curve("ES384", "secp384r1", ec.SECP384R1, 48),
}
_ALG_BY_SEC_NAME: Final = {c.sec_name: c.alg for c in _CURVES.values()}
_MIN_RSA_BITS: Final = 2048  # RFC 7518 §3.3 and §3.5
# D-VERIFY-55: a check's cost grows with the modulus squared times the exponent's bits. An
# agent's key of 3072 bits with a 3071-bit exponent cost a verifier 15 s of CPU over one
# card; common practice stops at 8192 bits (signatures up to _MAX_SIGNATURE_CHARS of
# cardsig) and at 65537, and no library that signs makes an exponent past 32 bits.
_MAX_RSA_BITS: Final = 8192
_MAX_RSA_EXPONENT: Final = 2**32 - 1

# The key material of a public JWK, per kty, in the order we write it; RFC 7638 §3.2 hashes
# exactly these members.
_MATERIAL: Final[dict[str, tuple[str, ...]]] = {
    "OKP": ("kty", "crv", "x"),
    "EC": ("kty", "crv", "x", "y"),
    "RSA": ("kty", "n", "e"),
}
_KEY_CLASSES: Final[dict[str, type[OKPKey] | type[ECKey] | type[RSAKey]]] = {
    "OKP": OKPKey,
    "EC": ECKey,
    "RSA": RSAKey,
}
_RSA_PRIVATE: Final = ("p", "q", "d", "dp", "dq", "qi")  # in the order they are checked
_PRIVATE_MEMBERS: Final = frozenset({*_RSA_PRIVATE, "oth", "k"})
_MISMATCH: Final = "the private JWK's public members do not match its private key"


# ---------------------------------------------------------------------------------------
# base64url (RFC 7515 §2)


def b64e(data: bytes) -> str:
    """base64url without padding."""
    return urlsafe_b64encode(data).decode("ascii")


def b64d(text: str) -> bytes:
    """Strict base64url: the URL-safe alphabet only, no padding, canonical trailing bits.

    Raises ``ValueError`` for anything else."""
    return urlsafe_b64decode(text.encode("utf-8"))


# ---------------------------------------------------------------------------------------
# Which key serves which algorithm (PROFILE §6.2)


def generate_key(alg: str) -> PrivateKey:
    """A fresh private key for ``alg``.

    Ed25519 for ``EdDSA``, P-256 for ``ES256``, P-384 for ``ES384``, RSA 2048 for
    ``PS256`` and ``RS256``. Raises ``AlgorithmRefused`` for anything else.
    """
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    for curve in _CURVES.values():
        if curve.alg == alg:
            return ec.generate_private_key(curve.curve())
    if alg in ("PS256", "RS256"):
        return rsa.generate_private_key(public_exponent=65537, key_size=_MIN_RSA_BITS)
    raise AlgorithmRefused


def is_private_key(key: object) -> TypeGuard[PrivateKey]:
    """Whether ``key`` is a private key of a type :data:`PrivateKey` names."""
    return isinstance(
        key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    )


def _public(key: PrivateKey | PublicKey | Key) -> PublicKey:
    if isinstance(key, OKPKey | ECKey | RSAKey):
        return cast(PublicKey, key.public_key)
    return key.public_key() if is_private_key(key) else cast(PublicKey, key)


def key_algs(key: PrivateKey | PublicKey | Key) -> frozenset[str]:
    """The allowlisted algorithms ``key`` (ours or the library's) can serve; empty for an
    unsupported key."""
    pub = _public(key)
    if isinstance(pub, ed25519.Ed25519PublicKey):
        return frozenset({"EdDSA"})
    if isinstance(pub, ec.EllipticCurvePublicKey):
        alg = _ALG_BY_SEC_NAME.get(pub.curve.name)
        return frozenset({alg}) if alg else frozenset()
    if isinstance(pub, rsa.RSAPublicKey):
        numbers = pub.public_numbers()
        if _rsa_problem(numbers.n, numbers.e) is None:
            return frozenset({"RS256", "PS256"})
    return frozenset()


def _rsa_problem(n: int, e: int) -> str | None:
    """Why an RSA public key (modulus ``n``, exponent ``e``) is not one this package
    uses, or ``None`` (D-VERIFY-55)."""
    if n.bit_length() < _MIN_RSA_BITS:
        return "RSA modulus shorter than 2048 bits"
    if n.bit_length() > _MAX_RSA_BITS:
        return "RSA modulus longer than 8192 bits"
    if not 3 <= e <= _MAX_RSA_EXPONENT or e % 2 == 0:
        return "RSA public exponent is not an odd number from 3 to 2^32 - 1"
    return None


def alg_for_key(key: PrivateKey | PublicKey, *, rsa_alg: str = "RS256") -> str:
    """The default algorithm for ``key``.

    Ed25519 → ``EdDSA``, P-256 → ``ES256``, P-384 → ``ES384``, RSA (D-VERIFY-55 bounds)
    → ``rsa_alg`` (``RS256`` unless ``PS256`` is asked). Raises ``KeyFormatError`` for
    any other key and ``AlgorithmRefused`` for an ``rsa_alg`` that is neither.
    """
    algs = key_algs(key)
    if not algs:
        raise KeyFormatError("unsupported key type, curve or size")
    if len(algs) == 1:
        return next(iter(algs))
    if rsa_alg not in algs:
        raise AlgorithmRefused
    return rsa_alg


def check_alg(key: PrivateKey | PublicKey, alg: str | None) -> str:
    """``alg``, or the key's default when ``None``. Raises ``AlgorithmRefused`` off the
    allowlist, ``SignatureError`` when it does not fit the key, ``KeyFormatError`` for an
    unsupported key."""
    if alg is None:
        return alg_for_key(key)
    if alg not in ALGORITHMS:
        raise AlgorithmRefused
    if alg not in key_algs(key):
        raise SignatureError("the algorithm does not fit the key")
    return alg


# ---------------------------------------------------------------------------------------
# Keys as JWKs


def _library_key(key: PrivateKey | PublicKey) -> Key:
    if isinstance(key, ed25519.Ed25519PrivateKey | ed25519.Ed25519PublicKey):
        return OKPKey.import_key(key)
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        return ECKey.import_key(key)
    return RSAKey.import_key(key)


def _material(key: PrivateKey | PublicKey) -> dict[str, str]:
    """The public key material of ``key`` as JWK members (``kty`` first)."""
    if not key_algs(key):
        raise KeyFormatError("unsupported key type, curve or size")
    exported = _library_key(_public(key)).as_dict()
    return {name: cast(str, exported[name]) for name in _MATERIAL[cast(str, exported["kty"])]}


def public_jwk(
    key_or_public: PrivateKey | PublicKey, kid: str, alg: str | None = None
) -> dict[str, str]:
    """The public JWK of a key, with ``kid``, ``alg`` and ``use: "sig"``.

    ``alg`` defaults to :func:`alg_for_key`. Raises ``AlgorithmRefused`` for an ``alg``
    off the allowlist, ``SignatureError`` for one that does not fit the key, and
    ``KeyFormatError`` for an unsupported key.
    """
    alg = check_alg(key_or_public, alg)
    return {**_material(key_or_public), "kid": kid, "alg": alg, "use": "sig"}


def private_jwk(key: PrivateKey, kid: str, alg: str | None = None) -> dict[str, str]:
    """The private JWK of ``key`` (public members, private members, ``kid``, ``alg``, ``use``).

    Keep it secret. Raises as :func:`public_jwk` does.
    """
    jwk = public_jwk(key, kid, alg)
    exported = _library_key(key).as_dict(private=True)
    for name in ("d", "p", "q", "dp", "dq", "qi"):
        if name in exported:
            jwk[name] = cast(str, exported[name])
    return jwk


def _member_bytes(jwk: dict[str, Any], name: str, size: int | None = None) -> bytes:
    value = jwk.get(name)
    if not isinstance(value, str):
        raise KeyFormatError(f"JWK member {name} is missing or not a string")
    try:
        data = b64d(value)
    except ValueError:
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


def _public_material(jwk: Any) -> dict[str, str]:
    """The key material of a public JWK, once it passes the checks the library leaves to us."""
    if not isinstance(jwk, dict):
        raise KeyFormatError("a JWK must be a JSON object")
    _check_optional_members(jwk)
    if _PRIVATE_MEMBERS & jwk.keys():
        raise KeyFormatError("a public JWK must not carry private key members")
    kty = jwk.get("kty")
    if kty == "OKP":
        if jwk.get("crv") != "Ed25519":
            raise KeyFormatError("unsupported OKP curve")
        _member_bytes(jwk, "x", 32)
    elif kty == "EC":
        crv = jwk.get("crv")
        curve = _CURVES.get(crv) if isinstance(crv, str) else None
        if curve is None:
            raise KeyFormatError("unsupported EC curve")
        _member_bytes(jwk, "x", curve.size)
        _member_bytes(jwk, "y", curve.size)
    elif kty == "RSA":
        # The sizes are read off the octets before any integer is made of them.
        if len(_member_bytes(jwk, "n")) > _MAX_RSA_BITS // 8:
            raise KeyFormatError("RSA modulus longer than 8192 bits")
        if len(_member_bytes(jwk, "e")) > 4:
            raise KeyFormatError("RSA public exponent is not an odd number from 3 to 2^32 - 1")
        problem = _rsa_problem(_member_uint(jwk, "n"), _member_uint(jwk, "e"))
        if problem is not None:
            raise KeyFormatError(problem)
    else:
        raise KeyFormatError("unsupported kty")
    return {name: jwk[name] for name in _MATERIAL[kty]}


def import_public_jwk(jwk: Any) -> Key:
    """The library's key for a public JWK, as :func:`jwk_to_public_key` accepts it."""
    return _import_public(_public_material(jwk))


def _import_public(material: dict[str, str]) -> Key:
    try:
        return _KEY_CLASSES[material["kty"]].import_key(material)  # type: ignore[arg-type]
    except (JoseError, ValueError, UnsupportedAlgorithm):
        raise KeyFormatError("the JWK does not describe a valid public key") from None


def jwk_to_public_key(jwk: dict[str, Any]) -> PublicKey:
    """The public key a JWK describes.

    Accepts ``OKP``/``Ed25519``, ``EC`` on ``P-256`` or ``P-384`` (the point must lie on
    the curve) and ``RSA`` with a modulus of 2048 to 8192 bits and an odd exponent from 3
    to 2^32 - 1. ``kid``, ``alg`` and ``use`` must be
    strings and ``key_ops`` a list of strings when present; members a JWK may carry
    beyond those are ignored (RFC 7517 §4). Raises ``KeyFormatError`` for anything
    else: not an object, an unknown ``kty`` or curve, a missing or non-base64url member,
    a coordinate of the wrong length, an RSA integer with leading zeros, an RSA modulus
    or exponent outside those bounds, or private key members (a public JWK must not carry them).
    """
    return cast(PublicKey, import_public_jwk(jwk).public_key)


def _jwk_to_private_key(jwk: Any) -> PrivateKey:
    if not isinstance(jwk, dict):
        raise KeyFormatError("a JWK must be a JSON object")
    _check_optional_members(jwk)
    material = _public_material({k: v for k, v in jwk.items() if k not in _PRIVATE_MEMBERS})
    _import_public(material)  # the public half is a valid public key first
    kty = material["kty"]
    if kty == "RSA":
        if any(m not in jwk for m in _RSA_PRIVATE):
            # RFC 7518 §6.3.2: with any CRT member present, all are; we need them all.
            raise KeyFormatError("an RSA private JWK needs d, p, q, dp, dq and qi")
        for name in _RSA_PRIVATE:
            _member_uint(jwk, name)
        private = {name: jwk[name] for name in _RSA_PRIVATE}
    else:
        _member_bytes(jwk, "d", 32 if kty == "OKP" else _CURVES[jwk["crv"]].size)
        private = {"d": jwk["d"]}
    try:
        imported = _KEY_CLASSES[kty].import_key({**material, **private})
    except (JoseError, ValueError, UnsupportedAlgorithm):
        # cryptography refuses an EC scalar that is not the point's; say which it was.
        raise KeyFormatError(
            _MISMATCH
            if kty == "EC" and _ec_scalar_is_valid(jwk)
            else "the JWK does not describe a valid private key"
        ) from None
    key = cast(PrivateKey, imported.private_key)
    if _material(key) != material:
        raise KeyFormatError(_MISMATCH)
    return key


def _ec_scalar_is_valid(jwk: dict[str, Any]) -> bool:
    try:
        ec.derive_private_key(int.from_bytes(b64d(jwk["d"])), _CURVES[jwk["crv"]].curve())
    except ValueError:
        return False
    return True


def load_private_key(data: bytes) -> PrivateKey:
    """A private key from PEM (PKCS#8, unencrypted) or a private JWK in JSON.

    Returns an Ed25519, P-256, P-384 or RSA (2048 to 8192 bits, a public exponent from 3
    to 2^32 - 1) private key. Raises
    ``KeyFormatError`` for anything else: other key types, encrypted PEM, malformed PEM
    or JSON, a JWK whose public and private members disagree.
    """
    text = bytes(data).strip()
    if text.startswith(b"{"):
        try:
            jwk = strictjson.loads(text)
        except IngressError:
            raise KeyFormatError("the key file is neither PEM nor a JSON JWK") from None
        return _jwk_to_private_key(jwk)
    if not text.startswith(b"-----BEGIN PRIVATE KEY-----"):
        raise KeyFormatError("expected a PEM PKCS#8 private key or a private JWK")
    try:
        key = serialization.load_pem_private_key(text, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise KeyFormatError("the PEM private key cannot be read") from None
    if not is_private_key(key) or not key_algs(key):
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
    members = _MATERIAL.get(kty) if isinstance(kty, str) else None
    if members is None:
        raise KeyFormatError("unsupported kty")
    required = {}
    for name in sorted(members):
        if not isinstance(jwk.get(name), str):
            raise KeyFormatError(f"JWK member {name} is missing or not a string")
        required[name] = jwk[name]
    return b64e(hashlib.sha256(canonicalize(required)).digest())


def jwks_from_json(value: Any) -> list[dict[str, Any]]:
    """The ``keys`` of a JWK Set (RFC 7517 §5), given parsed JSON or its bytes/text.

    Returns the key objects as they are (each is checked when used). Raises
    ``KeyFormatError`` when the value is not strict JSON, not an object with a ``keys``
    list, or a ``keys`` item is not an object.
    """
    if isinstance(value, bytes | bytearray | memoryview | str):
        try:
            value = strictjson.loads(value)
        except IngressError:
            raise KeyFormatError("the JWK Set is not strict JSON") from None
    if not isinstance(value, dict) or not isinstance(value.get("keys"), list):
        raise KeyFormatError('a JWK Set must be an object with a "keys" list')
    keys = value["keys"]
    if not all(isinstance(k, dict) for k in keys):
        raise KeyFormatError("every JWK Set entry must be an object")
    return list(keys)


# ---------------------------------------------------------------------------------------
# Raw JWS signatures (RFC 7518 §3, RFC 8037 §3.1)


def sign(key: PrivateKey, alg: str, data: bytes) -> bytes:
    """The JWS signature of ``data`` under ``alg`` (checked to fit the key by the caller)."""
    return _JWS[alg].sign(data, _library_key(key))


def verify_jws(key: Key, alg: str, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``alg``'s over ``data`` under ``key`` (from
    :func:`import_public_jwk`). Never raises: a hostile signature, an ``alg`` outside
    the allowlist or a key that does not serve ``alg`` is a "no"."""
    if alg not in _JWS or alg not in key_algs(key):
        return False
    try:
        return _JWS[alg].verify(data, signature, key)
    except (JoseError, ValueError):
        return False
