"""Reading a record before it is stored: the row's columns from its bytes, or the
refusal (PROFILE §8 members and sanity, strict I-JSON, the runner signature)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from ...cardurl import URLRefused, normalize_url
from ...checks import Outcome
from ...errors import IngressError
from ...jcs import canonicalize, digest_bytes
from ...record import (
    PARTIES,
    agent_name,
    member_at,
    parse_rfc3339,
    record_sanity,
    standing_given,
    verify_record_signature,
)
from ...spec import RESULT_FORMAT
from ...strictjson import loads
from ..errors import BadSignature, NotARecord, NotSane
from .tables import MAX_CARD_URL, MAX_NAME, MAX_URL

# RFC 3339 §5.6 date-time (``T`` or a space, any fraction), and the same without a
# zone so that its absence is named. ``datetime.fromisoformat`` alone takes ISO 8601
# spellings RFC 3339 does not (``20261129T100000Z``, ``2026-W48-7``, ``+05``).
_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,
)


def _utc(text: Any, member: str) -> datetime:
    moment = parse_rfc3339(text)  # the one reader of a record's times (sanity.py)
    if moment is not None:
        return moment
    shape = _RFC3339.fullmatch(text) if isinstance(text, str) and len(text) <= 64 else None
    if shape is not None and shape["zone"] is None:
        raise NotARecord(f"{member} has no time zone")
    raise NotARecord(f"{member} is not an RFC 3339 time")


def _too_long(value: str, limit: int) -> bool:
    """Whether ``value`` is over ``limit`` bytes in UTF-8 (without encoding it when its
    length alone decides)."""
    if len(value) > limit:
        return True
    return len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit


def holdable(card_url: str) -> bool:
    """Whether the store could hold ``card_url`` as an agent's key: within the bound,
    without NUL, and UTF-8 (a command line's undecodable bytes are lone surrogates,
    which the drivers refuse with an exception)."""
    if len(card_url) > MAX_CARD_URL or "\x00" in card_url:
        return False
    try:
        return len(card_url.encode("utf-8")) <= MAX_CARD_URL
    except UnicodeEncodeError:
        return False


def _text(value: Any, member: str, limit: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise NotARecord(f"{member} is not a non-empty string")
    if _too_long(value, limit):
        raise NotARecord(f"{member} is longer than {limit} bytes in UTF-8")
    if "\x00" in value:
        raise NotARecord(f"{member} holds a NUL character")
    return value


def short(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 32 else None


def agent_key(agent_url: str, card_url: str | None) -> str:
    """The URL an agent is filed under (PROFILE §8): its card URL as the record names
    it, normalized (:func:`a2a_interview.cardurl.normalize_url`); for a record without
    one (the card was never read), the card URL the verifier would have fetched for
    ``agent_url`` (``verifier.client.card_url_for``), so that an agent's unreachable
    runs sit in the same history as its others. The record passed the sanity checks,
    which refuse a URL the normalization would not take."""
    if card_url is None:
        try:
            from ...net.failures import InsecureURL
            from ...net.urls import card_url_for
        except ImportError:  # pragma: no cover - the ledger extra installs the client
            card_url = agent_url
        else:
            try:
                card_url = card_url_for(agent_url)
            except InsecureURL:
                card_url = agent_url
    return store_key(card_url)


def store_key(card_url: str) -> str:
    """``card_url`` as the store keys an agent: normalized (PROFILE §8), or as given
    when it names no agent (a lookup of such a URL then finds nothing)."""
    try:
        return normalize_url(card_url)
    except URLRefused:
        return card_url


def columns(body: bytes, now: datetime | None = None) -> dict[str, Any]:
    """The row for ``body``, or the refusal (PROFILE §8 members and sanity, as a reader
    whose clock reads ``now``, read when not given; strict I-JSON)."""
    try:
        document = loads(body)  # the 1 MiB bound of PROFILE §1.4
    except IngressError as exc:
        raise NotARecord(f"not strict I-JSON ({exc.code})") from None
    if not isinstance(document, dict):
        raise NotARecord("not a JSON object")
    if document.get("format") != RESULT_FORMAT:
        raise NotARecord(f"format is not {RESULT_FORMAT}")
    agent = document.get("agent")
    if not isinstance(agent, dict):
        raise NotARecord("agent is not an object")
    agent_url = _text(agent.get("url"), "agent.url", MAX_URL)
    # The card URL the verifier fetched for an agent URL at the bound has the card path
    # added: a worker re-verifying that agent must be able to store its record.
    card_url = _text(agent.get("card_url"), "agent.card_url", MAX_CARD_URL, optional=True)
    assert agent_url is not None
    ran_by = document.get("ran_by")
    if not isinstance(ran_by, dict):
        raise NotARecord("ran_by is not an object")
    if ran_by.get("party") not in PARTIES:
        raise NotARecord("ran_by.party is not one of " + ", ".join(PARTIES))
    name = _text(ran_by.get("name"), "ran_by.name", MAX_NAME)
    key = _text(ran_by.get("key"), "ran_by.key", MAX_NAME, optional=True)
    outcome = document.get("outcome")
    if outcome not in {str(o) for o in Outcome}:
        raise NotARecord("outcome is not one of " + ", ".join(str(o) for o in Outcome))
    started = _utc(document.get("started_at"), "started_at")
    finished = _utc(document.get("finished_at"), "finished_at")
    try:
        # One canonical form serves the run's identity and the runner's signed bytes
        # (both are the JCS of the record without `signatures`, PROFILE §8).
        canonical = canonicalize({k: v for k, v in document.items() if k != "signatures"})
    except ValueError:  # pragma: no cover - strict ingress already bounds the numbers
        raise NotARecord("the record has no canonical form") from None
    signature = verify_record_signature(document, canonical)
    if signature.status == "invalid":
        if signature.keys:
            raise BadSignature("no runner signature by ran_by.key (PROFILE §8)")
        raise BadSignature("the runner signature does not verify (PROFILE §8)")
    insane = record_sanity(document, now or datetime.now(UTC))
    if insane is not None:
        raise NotSane(f"{insane.detail} (PROFILE §8)", insane.reason)
    # Sane (above), its signature checked once (above): what it stands as follows.
    standing, reason = standing_given(document, signature.status)
    record_digest = digest_bytes(canonical)  # record_identity, from the form above
    filed = agent_key(agent_url, card_url)
    if not holdable(filed):  # a stray % is written %25: a little longer than given
        raise NotARecord(f"agent.card_url is longer than {MAX_CARD_URL} bytes in UTF-8")
    return {
        "digest": record_digest,
        "card_url": filed,
        "agent_url": agent_url,
        "outcome": outcome,
        "party": ran_by["party"],
        "runner_name": name,
        # A key names a runner only when a signature by it verifies on this record
        # (PROFILE §8): an unsigned record's ran_by.key is self-declared text, never
        # matched against the operator's list nor counted in a runner's results.
        "runner_key": key if signature.status == "valid" else None,
        "signature": signature.status,
        "standing": standing,
        "standing_reason": reason,
        "card_signature": short(member_at(document, "agent", "card_signature", "status")),
        "card_reading": short(member_at(document, "agent", "card_signature", "reading")),
        "agent_name": agent_name(document),
        "started_at": started,
        "finished_at": finished,
        "body": body,
    }
