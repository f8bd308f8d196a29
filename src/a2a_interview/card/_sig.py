"""Agent Card signatures (A2A §8.4, PROFILE §6): sign, verify, and the report.

A signature is a JWS in JSON serialization with a detached payload: each item of the
card's ``signatures`` list is ``{"protected", "signature"[, "header"]}`` and signs
``protected + "." + base64url(payload)`` where the payload is canonical bytes of the card
without ``signatures``. SDKs disagree on those bytes, so a signature is checked under
named *readings* (PROFILE §6.3): ``served``, ``prune-empty`` and ``proto``, each defined
in :mod:`.cardreadings`.

:func:`sign_card` signs an A2A 1.0 card under ``proto``, so that both SDKs' verifiers
accept it, and adds a ``served`` signature when the card as served carries more
(PROFILE §6.3; :func:`sign_readings`).

The header rules are this module's: the protected header's members, ``crit`` and ``b64``
refused, protected and unprotected names disjoint, no member beyond the three of an item
(PROFILE §6.1). A protected header member whose value is ``null`` (``"jku": null`` from
a2a-sdk) is read as absent and reported in :attr:`SignatureCheck.quirks` (PROFILE §6.6).
Keys, the algorithm allowlist and the signature primitives are :mod:`.jose`'s (on
``joserfc``); their names are re-exported here.

The core never fetches: keys are given as a list of public JWKs or as a callable
``(kid, jku) -> JWKs``. Verification never raises on hostile input: every outcome is a
:class:`CardSignatureReport` value. A caller that may give up (a run past its deadline)
passes ``stop``, asked before each key is read and each check made: the work never
outlives the run by more than one check, whose cost :mod:`.jose` bounds (D-VERIFY-56).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Literal, TypeAlias

from joserfc.jwk import Key

from .. import strictjson
from ..errors import (
    AlgorithmRefused,
    CanonicalizationError,
    IngressError,
    KeyFormatError,
    SignatureError,
)
from ..jcs import canonicalize
from ._jose import (
    ALGORITHMS,
    PrivateKey,
    b64d,
    b64e,
    check_alg,
    import_public_jwk,
    is_private_key,
    key_algs,
    sign,
    thumbprint,
    verify_jws,
)
from ._readings import (
    READINGS,
    Candidate,
    Reading,
    candidates,
    is_1_0_card,
    proto_candidates,
    without_signatures,
)

__all__ = [
    "QUIRK_NULL_HEADER_MEMBER",
    "REASON_ALG_REFUSED",
    "REASON_BAD_SIGNATURE",
    "REASON_MALFORMED",
    "REASON_NOT_CANONICAL",
    "REASON_NO_KEY",
    "CardSignatureReport",
    "KeySource",
    "SignReading",
    "SignatureCheck",
    "SignatureStatus",
    "is_signed",
    "sign_card",
    "sign_readings",
    "verify_card",
]

Stop: TypeAlias = "Callable[[], bool] | None"
STOPPED: Final = "stopped: the caller gave up (a run past its deadline)"


def _go_on(stop: Stop) -> None:
    """Raise ``SignatureError`` (:data:`STOPPED`) when ``stop`` says the caller gave up."""
    if stop is not None and stop():
        raise SignatureError(STOPPED)


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

_MAX_PROTECTED_CHARS: Final = 8192  # a protected header is a few dozen bytes
_MAX_SIGNATURE_CHARS: Final = 2048  # RSA-8192 is 1366 characters


def is_signed(card: Any) -> bool:
    """Whether ``card`` claims a signature (PROFILE §6.7, docs/decisions.md D-VERIFY-40):
    it has a ``signatures`` member that is not an empty list. ``"signatures": []`` (what
    every stock ``@a2a-js/sdk`` agent serves, its card type requiring the member) is an
    unsigned card, as is a card without the member. The one rule for every part: the
    verifier's ``unsigned`` status, the signer and the proxy's re-signing all read it
    here. A member that is present but not a list claims a signature (and does not
    verify: ``invalid``)."""
    return isinstance(card, dict) and "signatures" in card and card["signatures"] != []


# ---------------------------------------------------------------------------------------
# Signing


SignReading: TypeAlias = Literal["proto", "served"]


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
    proto = proto_candidates(without_signatures(card))
    if len(proto) != 1:
        raise SignatureError(
            "the card does not fit the A2A 1.0 AgentCard message (a member of the wrong "
            "type, both spellings of one member, two cases of a oneof, null in a list, or "
            "nothing left), so no signature on it can verify with the SDKs' verifiers"
        )
    if reading == "proto" or proto[0].payload == canonicalize(without_signatures(card)):
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
    if not is_private_key(key):
        raise KeyFormatError("sign_card needs a private key")
    alg = check_alg(key, alg)
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

    protected_b64 = b64e(canonicalize(protected))
    items: list[dict[str, Any]] = []
    for each in sign_readings(card, reading):
        (payload,) = (c.payload for c in candidates(card, each))
        signing_input = f"{protected_b64}.{b64e(payload)}".encode("ascii")
        item: dict[str, Any] = {
            "protected": protected_b64,
            "signature": b64e(sign(key, alg, signing_input)),
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
        header = strictjson.loads(b64d(text), max_bytes=_MAX_PROTECTED_CHARS, max_depth=8)
    except (ValueError, IngressError):
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
    keys: KeySource, kid: str | None, jku: str | None, alg: str, stop: Stop = None
) -> Iterator[tuple[Key, dict[str, Any]]]:
    offered = keys(kid, jku) if callable(keys) else keys
    if not isinstance(offered, Sequence) or isinstance(offered, str | bytes):
        return
    for jwk in offered:
        _go_on(stop)
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
            key = import_public_jwk(jwk)
        except KeyFormatError:
            continue
        if alg in key_algs(key):
            yield key, jwk


def _verified_readings(
    key: Key,
    alg: str,
    prefix: bytes,
    sig: bytes,
    payloads: dict[Reading, list[Candidate]],
    *,
    stop: Stop,
) -> tuple[tuple[Reading, ...], tuple[str, ...]]:
    """The readings under which ``sig`` verifies with ``key``, in :data:`READINGS`
    order, and the fewest members left uncovered by a candidate that verified."""
    verified: list[Reading] = []
    uncovered: tuple[str, ...] | None = None
    for reading in READINGS:
        for candidate in payloads.get(reading, ()):
            _go_on(stop)
            if verify_jws(key, alg, prefix + b64e(candidate.payload).encode("ascii"), sig):
                verified.append(reading)
                if uncovered is None or len(candidate.uncovered) < len(uncovered):
                    uncovered = candidate.uncovered
                break
    return tuple(verified), uncovered or ()


def _check(
    index: int,
    item: dict[str, Any],
    payloads: dict[Reading, list[Candidate]],
    keys: KeySource,
    stop: Stop = None,
) -> SignatureCheck:
    parsed = _parse_protected(item["protected"])
    if parsed is None or not isinstance(parsed[0].get("alg"), str):
        quirks = parsed[1] if parsed is not None else ()
        return SignatureCheck(
            index,
            None,
            None,
            None,
            SignatureStatus.invalid,
            reason=REASON_MALFORMED,
            quirks=quirks,
        )
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
        sig = b64d(signature)
    except ValueError:
        return fail(SignatureStatus.invalid, REASON_MALFORMED)

    usable = list(_usable_keys(keys, kid, jku, alg, stop))
    if not usable:
        return fail(SignatureStatus.key_unavailable, REASON_NO_KEY)
    if not any(payloads.values()):
        return fail(SignatureStatus.invalid, REASON_NOT_CANONICAL)

    prefix = item["protected"].encode("ascii") + b"."
    for key, jwk in usable:
        verified, uncovered = _verified_readings(key, alg, prefix, sig, payloads, stop=stop)
        if verified:
            return SignatureCheck(
                index,
                alg,
                kid,
                jku,
                SignatureStatus.verified,
                readings=verified,
                thumbprint=thumbprint(jwk),
                uncovered=uncovered,
                quirks=quirks,
            )
    return fail(SignatureStatus.invalid, REASON_BAD_SIGNATURE)


def verify_card(
    card: dict[str, Any],
    keys: KeySource,
    *,
    readings: Sequence[Reading] = READINGS,
    stop: Stop = None,
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
    ``readings``, and (:data:`STOPPED`) as soon as ``stop()`` is true, which is asked
    before each key is read and each check made; exceptions from a ``keys`` callable
    propagate.
    """
    wanted = tuple(readings)
    if not wanted or any(r not in READINGS for r in wanted):
        raise SignatureError("unknown reading")
    if not isinstance(card, dict):
        return CardSignatureReport(SignatureStatus.invalid)
    if not is_signed(card):  # PROFILE §6.7: no member, or an empty list
        return CardSignatureReport(SignatureStatus.unsigned)
    items = card["signatures"]
    if not isinstance(items, list) or not all(_is_item(i) for i in items):
        return CardSignatureReport(SignatureStatus.invalid)

    payloads: dict[Reading, list[Candidate]] = {}
    for reading in READINGS:
        if reading in wanted:
            _go_on(stop)
            try:
                payloads[reading] = candidates(card, reading)
            except CanonicalizationError:
                payloads[reading] = []

    checks = tuple(_check(i, item, payloads, keys, stop) for i, item in enumerate(items))
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
