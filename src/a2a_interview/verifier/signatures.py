"""The card signature step (PROFILE §6) and the keys it collects (PROFILE §8).

The card's signatures are checked against the pinned JWKS, else the JWKS at each
signature's ``jku`` (only when HTTPS, or loopback HTTP, on the card's origin; fetched
once per run); a runner key that signed the card is tried too. At most
``MAX_SIGNATURES_TRIED`` signatures and ``MAX_KEYS_TRIED`` keys of a JWK Set are tried
(PROFILE §7; what is left out is an advisory), the checks themselves off the event loop.
The keys whose signature verified become ``agent.keys``; every key seen,
``agent.listed_keys``.
"""

from __future__ import annotations

from typing import Any

from .. import nkeys
from ..card import CardSignatureReport, import_public_jwk, jwks_from_json, verify_card
from ..checks import Advisory, Check, check_card_signature
from ..errors import KeyFormatError
from ..net.failures import InsecureURL
from ..net.urls import check_url, origin
from ..record import CardSignature, nkey_jwk, verified_key_ids
from ..spec import MAX_KEYS_TRIED, MAX_SIGNATURES_TRIED
from ..strictjson import JSONObject
from .client import Interviewer
from .state import RunState, VerifyOptions, off_loop

__all__ = ["card_signature"]


async def card_signature(
    session: Interviewer,
    options: VerifyOptions,
    card: JSONObject,
    card_url: str,
    state: RunState,
    *,
    judged: bool = True,
) -> CardSignature:
    """Check the card's signature (PROFILE §6). Unless ``judged`` (the card does not
    declare the interview), what would be a conflict is kept as an advisory: a
    not_offered result is never shown as a failure (PROFILE §7, interview §9 rule 2)."""
    readings = options.readings
    card = _tried(card, state)
    await _runner_key(options, card, state)
    report = None
    if options.jwks is not None:
        pinned = _keys_tried(list(options.jwks), state)
        report = await off_loop(verify_card, card, pinned, readings=readings, stoppable=True)
        source = "pinned"
        await _pinned_agent_keys(session, options, card, card_url, state)
        if options.jwks_fallback and report.status == "key_unavailable":
            report = None  # D-VERIFY-50: no pinned key for this card: its own jku
    if report is None:
        # PROFILE §6.4: the jku, only when HTTPS (or loopback) and on the card's origin.
        wanted = await _jkus(card)
        keys: dict[str, list[dict[str, Any]]] = {}
        for jku in wanted:
            keys[jku] = await _jwks(session, options, jku, card_url, state)
            state.agent_jwks += keys[jku]
        report = await off_loop(
            verify_card,
            card,
            lambda _kid, jku: keys.get(jku, []) if jku else [],
            readings=readings,
            stoppable=True,
        )
        source = "jku"
    state.signed_keys += verified_key_ids(report)
    conflicts, advisories = check_card_signature(
        report.status, require=options.require_signature, readings=readings
    )
    if not judged:
        advisories += [
            Advisory(c.check, c.reason, source=c.source, detail=c.detail) for c in conflicts
        ]
        conflicts = []
    state.performed.add(Check.card_signature)
    state.add(conflicts)
    state.advisories += advisories
    verified = report.status == "verified"
    state.advisories += _report_advisories(report)
    return CardSignature(
        str(report.status),
        report.reading,
        tuple(report.readings),
        report.kid,
        report.thumbprint,
        ("pinned" if source == "pinned" else "jku") if verified else None,
    )


def _report_advisories(report: CardSignatureReport) -> list[Advisory]:
    """What a signature report tolerated: members its signature does not cover
    (PROFILE §6.3), header quirks read as absent (PROFILE §6.6)."""
    advisories = []
    # The report's signature is the one covering the most (card.verify_card).
    uncovered = min(
        (c.uncovered for c in report.checks if c.status == "verified"), key=len, default=()
    )
    if uncovered:
        # PROFILE §6.3: verified only with a2a-sdk's 0.3 members removed, so the
        # signature does not cover them (the 0.3 url among them).
        advisories.append(
            Advisory(
                "card_signature",
                "uncovered_members",
                value=list(uncovered),
                detail="the signature does not cover these served members",
            )
        )
    for quirk in report.quirks:
        # PROFILE §6.6: a tolerated header quirk is an advisory, never a silent pass.
        detail = "a protected header member is null; read as absent"
        advisories.append(Advisory("card_signature", quirk, detail=detail))
    return advisories


async def _runner_key(options: VerifyOptions, card: JSONObject, state: RunState) -> None:
    """PROFILE §8, D-RECORD-7: a runner key that signed this card is an agent
    key, whether or not the card's own key could be obtained (no jku, a jku refused
    or down, an unrelated pinned JWKS). Tried under every reading."""
    if options.runner_seed is None:
        return
    runner = nkey_jwk(nkeys.public_of(nkeys.private_key(options.runner_seed)))
    state.signed_keys += verified_key_ids(
        await off_loop(verify_card, card, [runner], stoppable=True)
    )


async def _pinned_agent_keys(
    session: Interviewer, options: VerifyOptions, card: JSONObject, card_url: str, state: RunState
) -> None:
    """PROFILE §8 ``agent.keys`` with a pinned JWKS: its keys, and those of the card's
    own ``jku`` JWKS (fetched quietly, same rules: it verifies nothing here)."""
    state.agent_jwks += options.jwks or ()
    for jku in await _jkus(card):
        found = await _jwks(session, options, jku, card_url, state, quiet=True)
        state.agent_jwks += found
        state.signed_keys += verified_key_ids(
            await off_loop(verify_card, card, found, stoppable=True)
        )


async def _jwks(
    session: Interviewer,
    options: VerifyOptions,
    jku: str,
    card_url: str,
    state: RunState,
    *,
    quiet: bool = False,
) -> list[dict[str, Any]]:
    """The JWKS at a card's ``jku`` (PROFILE §6.4). ``quiet``: fetched for
    ``agent.keys`` only (a JWKS was pinned): no advisory, and a failure is no key."""
    try:
        check_url(jku)
        allowed = origin(jku) == origin(card_url)
    except InsecureURL:
        allowed = False
    if quiet and not allowed:
        return []
    if not allowed:
        state.advisories.append(
            Advisory(
                "card_signature",
                "jku_refused",
                detail="the jku is not HTTPS (or loopback) on the card's origin",
            )
        )
        return []
    # A key kept away by 429s or an outage is only an advisory, unless a signature is
    # required: then the run cannot decide, and ends unreachable.
    verifying = options.require_signature and not quiet
    if jku in state.jwks:  # fetched once per run, whichever variant names it
        return state.jwks[jku]
    body = await session.fetch_document(jku, verifying=verifying)
    try:
        keys = jwks_from_json(body) if body is not None else []
    except KeyFormatError:
        keys = []
    state.jwks[jku] = _keys_tried(keys, state)
    if not quiet:
        _refused_keys(state.jwks[jku], state)
    return state.jwks[jku]


def _refused_keys(keys: list[Any], state: RunState) -> None:
    """D-VERIFY-55: a JWK Set's keys this package refuses (an RSA exponent past 32 bits, a
    modulus past 8192, a malformed key) verify nothing; an advisory says how many and
    why the first was refused, so a key_unavailable is not a mystery."""
    reasons = []
    for jwk in keys:
        try:
            import_public_jwk(jwk)
        except KeyFormatError as exc:
            reasons.append(str(exc))
    if reasons:
        state.advisories.append(
            Advisory(
                "card_signature",
                "keys_refused",
                value=len(reasons),
                detail=f"keys of the JWK Set refused as unusable, the first: {reasons[0]}",
            )
        )


def _tried(card: JSONObject, state: RunState) -> JSONObject:
    """``card`` with at most :data:`MAX_SIGNATURES_TRIED` signatures (PROFILE §7): each
    signature covers the card without ``signatures``, so the first ones verify alone."""
    items = card.get("signatures")
    if not isinstance(items, list) or len(items) <= MAX_SIGNATURES_TRIED:
        return card
    state.advisories.append(
        Advisory(
            "card_signature",
            "signatures_not_tried",
            value=len(items) - MAX_SIGNATURES_TRIED,
            detail=f"only the first {MAX_SIGNATURES_TRIED} signatures were tried",
        )
    )
    return {**card, "signatures": items[:MAX_SIGNATURES_TRIED]}


def _keys_tried(keys: list[Any], state: RunState) -> list[Any]:
    """The first :data:`MAX_KEYS_TRIED` keys of a JWK Set (PROFILE §7)."""
    if len(keys) <= MAX_KEYS_TRIED:
        return keys
    state.advisories.append(
        Advisory(
            "card_signature",
            "keys_not_tried",
            value=len(keys) - MAX_KEYS_TRIED,
            detail=f"only the first {MAX_KEYS_TRIED} keys of a JWK Set were tried",
        )
    )
    return keys[:MAX_KEYS_TRIED]


async def _jkus(card: JSONObject) -> list[str]:
    """Every ``jku`` the card's signatures name, once each, in order."""
    wanted: list[str] = []

    def record(_kid: str | None, jku: str | None) -> list[dict[str, Any]]:
        if jku is not None:
            wanted.append(jku)
        return []

    await off_loop(verify_card, card, record, stoppable=True)
    return list(dict.fromkeys(wanted))
