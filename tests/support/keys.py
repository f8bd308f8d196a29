"""Keys for tests: the reference card's key as an nkey seed, one generated key per
algorithm for a run, and the encodings keys are written in (base64url, PEM)."""

from __future__ import annotations

import base64
from typing import Any

from cryptography.hazmat.primitives import serialization

from a2a_interview import nkeys, reference
from a2a_interview.card import generate_key


def b64(data: bytes) -> str:
    """base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pem(key: Any) -> bytes:
    """A private key as unencrypted PKCS #8 PEM."""
    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def card_key_seed() -> str:
    """The reference card's Ed25519 signing key as an nkey seed (the agent's own key)."""
    d = reference.card_key_jwk()["d"]
    assert isinstance(d, str)
    return nkeys.encode_seed(base64.urlsafe_b64decode(d + "=" * (-len(d) % 4)))


_KEYS: dict[str, Any] = {}


def key_for(alg: str) -> Any:
    """A key for ``alg``, generated once a run and then the same."""
    if alg not in _KEYS:
        _KEYS[alg] = generate_key(alg)
    return _KEYS[alg]
