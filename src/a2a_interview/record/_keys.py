"""The agent's keys as a result record names them (PROFILE §8): ``agent.keys`` and
``agent.listed_keys``, collected by the verifier from what it saw, so that a display
needs no network to tell a runner from the agent.

- :func:`agent_key_ids` and :func:`verified_key_ids`: RFC 7638 thumbprints of the keys
  that verified the card, and nkeys of the proposal signers that verified.
- :func:`proposal_keys` (listed, informational), :func:`committed_signers` (the signers
  of a proposal the card commits to: agent keys) and :func:`proposal_signer` (the signer
  of a proposal in hand, whatever commits to it).
- :func:`card_key_ids`: key ids a reader adds from a card in hand, offline.
- :func:`nkey_jwk` and :func:`nkey_thumbprint`: an nkey as an OKP JWK and its thumbprint,
  so a runner key can be compared with card keys.

Pure and never raising on hostile input (but :func:`nkey_jwk`); the names are
re-exported by :mod:`a2a_interview.record`.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .. import nkeys
from ..card import CardSignatureReport, thumbprint, verify_card
from ..errors import CanonicalizationError, IngressError, KeyFormatError
from ..jcs import canonicalize, digest_bytes, is_digest
from ..spec import MAX_DEPTH, MAX_DOCUMENT_BYTES
from ..strictjson import loads
from ..terms import proposal_signing_bytes, verify_uncommitted
from ._sanity import member_at

__all__ = [
    "agent_key_ids",
    "card_key_ids",
    "committed_signers",
    "nkey_jwk",
    "nkey_thumbprint",
    "proposal_keys",
    "proposal_signer",
    "verified_key_ids",
]


def nkey_jwk(key: str) -> dict[str, str]:
    """An nkey's Ed25519 public key as an OKP JWK (RFC 8037), so it can be compared with
    card keys and tried against card signatures. Raises ``KeyFormatError`` for a
    malformed nkey."""
    raw = nkeys.decode_public(key)
    x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    return {"kty": "OKP", "crv": "Ed25519", "x": x}


def nkey_thumbprint(key: str) -> str | None:
    """The RFC 7638 thumbprint of an nkey's Ed25519 key as an OKP JWK, so a runner key
    can be compared with a card signing key; ``None`` for a malformed nkey."""
    return _nkey_thumbprint(key) if isinstance(key, str) else None


@functools.lru_cache(maxsize=1024)  # every record a store reads compares its runner key
def _nkey_thumbprint(key: str) -> str | None:
    try:
        return thumbprint(nkey_jwk(key))
    except KeyFormatError:
        return None


def agent_key_ids(jwks: Iterable[Any], nkey_signers: Iterable[str] = ()) -> tuple[str, ...]:
    """``agent.keys`` (PROFILE §8): the RFC 7638 thumbprint of each JWK in ``jwks`` (a JWK
    whose thumbprint cannot be computed is skipped: it names no key) and each nkey in
    ``nkey_signers`` as it is (a malformed one is skipped), sorted, without repeats."""
    ids: set[str] = set()
    for jwk in jwks:
        try:
            ids.add(thumbprint(jwk))
        except KeyFormatError:
            continue
    ids.update(k for k in nkey_signers if nkey_thumbprint(k) is not None)
    return tuple(sorted(ids))


def proposal_keys(body: bytes | None, max_bytes: int = MAX_DOCUMENT_BYTES) -> tuple[str, ...]:
    """The nkeys a fetched proposal's ``signatures`` name, whether or not they verify:
    ``agent.listed_keys`` (PROFILE §8), informational. A key that verifiably signed it is
    :func:`proposal_signer`'s. Never raises; an unreadable body names none."""
    if body is None:
        return ()
    try:
        document = loads(body, max_bytes=max_bytes, max_depth=MAX_DEPTH)
    except IngressError:
        return ()
    items = document.get("signatures") if isinstance(document, dict) else None
    found: list[str] = []
    for item in items if isinstance(items, list) else ():
        key = item.get("key") if isinstance(item, dict) else None
        if isinstance(key, str) and nkey_thumbprint(key) is not None:
            found.append(key)
    return tuple(dict.fromkeys(found))


def _signature(item: Any) -> tuple[str, bytes] | None:
    """(nkey, 64 signature bytes) of a proposal's signature item, else ``None``."""
    key = item.get("key") if isinstance(item, dict) else None
    text = item.get("sig") if isinstance(item, dict) else None
    if not isinstance(key, str) or not isinstance(text, str) or not text.isascii():
        return None
    b64 = text.rstrip("=").replace("-", "+").replace("_", "/")  # Agent SoW §6: either
    try:
        raw = base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True)
    except ValueError:
        return None
    return (key, raw) if len(raw) == 64 else None


def committed_signers(
    digest: Any, body: bytes | None, max_bytes: int = MAX_DOCUMENT_BYTES
) -> tuple[str, ...]:
    """The nkeys whose signature verifies on a fetched proposal whose digest is the one
    the card's terms entry commits to (``digest``): ``agent.keys`` members (PROFILE §8).
    A document the card does not commit to names no agent key, whoever signed it: a
    terms entry pointing at any document a platform's runner key signed must not turn
    that platform's run into a claim. Each listed key counts only for a signature of its
    own that verifies (never for being listed, first or not). In the order listed,
    without repeats; never raises."""
    if body is None or not is_digest(digest):
        return ()
    try:
        document = loads(body, max_bytes=max_bytes, max_depth=MAX_DEPTH)
        if not isinstance(document, dict) or digest_bytes(canonicalize(document)) != digest:
            return ()
        signed = proposal_signing_bytes(document)
    except (IngressError, CanonicalizationError):
        return ()
    items = document.get("signatures")
    found: list[str] = []
    for item in items if isinstance(items, list) else ():
        pair = _signature(item)
        if pair is None:
            continue
        try:
            public = Ed25519PublicKey.from_public_bytes(nkeys.decode_public(pair[0]))
            public.verify(pair[1], signed)
        except (KeyFormatError, InvalidSignature):
            continue
        found.append(pair[0])
    return tuple(dict.fromkeys(found))


def proposal_signer(body: bytes | None, max_bytes: int = MAX_DOCUMENT_BYTES) -> str | None:
    """The nkey whose signature verifies on a proposal in hand (terms §3 steps 4–5,
    whatever digest a card commits to): what a reader holding the document checks.
    ``None`` when none does. Never raises. The verifier records
    :func:`committed_signers` instead (PROFILE §8: only a committed document's signers
    are the agent's keys)."""
    return verify_uncommitted(body, max_bytes=max_bytes).signer


def card_key_ids(record: Mapping[str, Any], card: Any, jwks: Iterable[Any] = ()) -> tuple[str, ...]:
    """Agent key ids a reader can add from a card in hand, offline (PROFILE §8): the
    thumbprint of each key of ``jwks`` that verifies one of ``card``'s signatures, and the
    runner key's own when it does (then it *is* an agent key, whatever the record says).
    A key ``jwks`` merely holds names no agent key. Never raises on a hostile card or
    record."""
    if not isinstance(card, dict):
        return ()
    candidates = [jwk for jwk in jwks if isinstance(jwk, dict)]
    key = member_at(record, "ran_by", "key")
    try:
        if isinstance(key, str):
            candidates.append(nkey_jwk(key))
    except KeyFormatError:
        pass
    return verified_key_ids(verify_card(card, candidates))


def verified_key_ids(report: CardSignatureReport) -> tuple[str, ...]:
    """The RFC 7638 thumbprints of the keys that verified one of a card's signatures, under
    any reading (``agent.keys``, PROFILE §8), sorted."""
    return tuple(
        sorted({c.thumbprint for c in report.checks if c.status == "verified" and c.thumbprint})
    )
