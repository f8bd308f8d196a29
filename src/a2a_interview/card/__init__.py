"""The card's signature (PROFILE §6): the part's facade, its one public import path.

Its modules are private: ``_jose`` (keys and JWS algorithms on ``joserfc``: the allowlist,
JWK checks, key files, RFC 7638 thumbprints, raw sign and verify), ``_readings`` (the
readings ``served``, ``prune-empty`` and ``proto``: which bytes a signature covers) and
``_sig`` (signing a card and verifying its signatures, the header rules, the report).
``__all__`` is the part's API; ``tests/test_one_home.py`` pins it.
"""

from __future__ import annotations

from ._jose import (
    ALGORITHMS,
    PrivateKey,
    PublicKey,
    alg_for_key,
    generate_key,
    import_public_jwk,
    jwk_to_public_key,
    jwks_from_json,
    load_private_key,
    private_jwk,
    public_jwk,
    thumbprint,
)
from ._readings import (
    READINGS,
    Reading,
    is_1_0_card,
    signing_payload,
)
from ._sig import (
    QUIRK_NULL_HEADER_MEMBER,
    REASON_ALG_REFUSED,
    REASON_BAD_SIGNATURE,
    REASON_MALFORMED,
    REASON_NO_KEY,
    REASON_NOT_CANONICAL,
    CardSignatureReport,
    KeySource,
    SignatureCheck,
    SignatureStatus,
    SignReading,
    is_signed,
    sign_card,
    sign_readings,
    verify_card,
)

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
    "import_public_jwk",
    "is_1_0_card",
    "is_signed",
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
