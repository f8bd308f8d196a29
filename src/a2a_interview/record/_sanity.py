"""The sanity of a result record (PROFILE §8), checked by every reader before a record
is shown or stored: its times, the URLs it names, the agent its calls went to.

- :func:`record_sanity` says why a record fails it (an :class:`Insane`), or ``None``.
- :func:`rfc3339` writes a time as a record holds it; :func:`parse_rfc3339` reads one.
- :func:`record_identity` is a run's identity (one run is one record).
- :func:`member_at` reads a member of a record that may be malformed, never raising.

Pure and never raising on a hostile record; the names are re-exported by
:mod:`a2a_interview.record`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, get_args
from urllib.parse import urlsplit

from ..cardurl import URLRefused, has_userinfo, normalize_url
from ..jcs import digest

__all__ = [
    "CLOCK_SKEW",
    "SANITY_REASONS",
    "Insane",
    "SanityReason",
    "member_at",
    "parse_rfc3339",
    "record_identity",
    "record_sanity",
    "rfc3339",
]

# Why a record fails the sanity of PROFILE §8 (record_sanity): a store refuses it, a
# display shows it as a claim with this reason.
SanityReason = Literal[
    "times_unreadable",  # started_at or finished_at is not an RFC 3339 time with a zone
    "finished_before_started",  # finished_at is earlier than started_at
    "from_the_future",  # finished_at is later than the reader's clock + 5 minutes
    "url_scheme",  # a URL of the record is not http or https
    "url_userinfo",  # a URL of the record carries userinfo (user@host)
    "calls_elsewhere",  # a call names an interface that is not the named agent's
]
SANITY_REASONS: Final[tuple[SanityReason, ...]] = get_args(SanityReason)
# PROFILE §8: the reader's clock may lag the runner's by this much.
CLOCK_SKEW: Final = timedelta(minutes=5)


def rfc3339(moment: datetime) -> str:
    """``moment`` as RFC 3339 UTC with milliseconds and ``Z``. Raises ``ValueError``
    for a naive datetime (a clock must say which zone it reads)."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no zone")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def member_at(value: Any, *path: str) -> Any:
    """``value[path[0]][path[1]]...`` through objects only; ``None`` where a step is not
    an object or lacks the member (reading a record that may be malformed)."""
    for name in path:
        if not isinstance(value, dict):
            return None
        value = value.get(name)
    return value


# RFC 3339 §5.6 date-time (``T`` or a space, any fraction), and the same without a
# zone so that its absence is named. ``datetime.fromisoformat`` alone takes ISO 8601
# spellings RFC 3339 does not (``20261129T100000Z``, ``2026-W48-7``, ``+05``).
_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,
)


def parse_rfc3339(text: Any) -> datetime | None:
    """``text`` as an aware UTC datetime when it is an RFC 3339 date-time with a zone;
    ``None`` otherwise (no zone, another ISO 8601 spelling, out of range). Never raises."""
    shape = _RFC3339.fullmatch(text) if isinstance(text, str) and len(text) <= 64 else None
    if shape is None or shape["zone"] is None:
        return None
    try:
        # OverflowError: a year-1 time east of UTC, or a year-9999 one west of it.
        return datetime.fromisoformat(text.upper().replace(" ", "T")).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def record_identity(record: Mapping[str, Any]) -> str:
    """A run's identity (PROFILE §8): ``sha256:`` of the JCS of the record without
    ``signatures``, so the same run with signatures repeated, added or removed is one
    record. Raises ``CanonicalizationError`` for a record JSON cannot carry."""
    return digest({k: v for k, v in record.items() if k != "signatures"})


@dataclass(frozen=True, slots=True)
class Insane:
    """Why a record fails the sanity of PROFILE §8: a fixed ``reason`` code and fixed
    ``detail`` words (never a value from the record)."""

    reason: SanityReason
    detail: str


def _host(url: Any) -> str | Literal[False] | None:
    """The lowercased host of an ``http``/``https`` URL; ``None`` for a URL without
    one; ``False`` for anything that is not an http(s) URL."""
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme.lower() not in ("http", "https"):
        return False
    return host.rstrip(".") if host else None


def _site(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


def _same_agent(call: str, agent: str) -> bool:
    """Whether an interface host can belong to the agent whose card is on ``agent``:
    the same host, or one a subdomain of the other (``www.`` set aside), per
    ``docs/decisions.md`` D-STORE-12 (sanity)."""
    a, b = _site(call), _site(agent)
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def record_sanity(record: Mapping[str, Any], now: datetime) -> Insane | None:
    """The sanity of PROFILE §8, as a reader whose clock reads ``now`` (aware) sees it;
    ``None`` when the record passes. In order:

    - ``started_at`` and ``finished_at`` are RFC 3339 with a zone, ``started_at`` ≤
      ``finished_at`` ≤ ``now`` + :data:`CLOCK_SKEW`;
    - every URL the record names (``agent.url``, ``agent.card_url``, each call's
      ``interface``, each proposal's ``url``) is ``http`` or ``https`` and carries no
      userinfo (``user@host``); the agent's URLs name a host and a valid port
      (:func:`a2a_interview.cardurl.normalize_url` takes them);
    - every call was made to the agent the record names: each call's interface host is
      the card URL's host (``agent.url``'s without a card URL) or a subdomain of it, or
      the other way round.

    One run is one record (its identity, :func:`record_identity`) is the store's to keep.
    Never raises on a hostile record; raises ``ValueError`` for a naive ``now``.
    """
    if now.tzinfo is None:
        raise ValueError("a naive datetime has no zone")
    insane = _times_insane(record, now)
    if insane is not None:
        return insane
    agent_url = member_at(record, "agent", "url")
    card_url = member_at(record, "agent", "card_url")
    # PROFILE §8 lists agent.card_url, not agent.url: a record without the latter is sane.
    agent_host = _host(agent_url) if agent_url is not None else None
    card_host = _host(card_url) if card_url is not None else None
    if agent_host is False or card_host is False:
        return Insane("url_scheme", "the agent's URL is not an http or https URL")
    insane = _agent_urls_insane((agent_url, card_url))
    if insane is not None:
        return insane
    return _runs_insane(record, card_host or agent_host)


def _times_insane(record: Mapping[str, Any], now: datetime) -> Insane | None:
    started = parse_rfc3339(record.get("started_at"))
    finished = parse_rfc3339(record.get("finished_at"))
    if started is None or finished is None:
        return Insane("times_unreadable", "started_at or finished_at is not an RFC 3339 time")
    if finished < started:
        return Insane("finished_before_started", "finished_at is earlier than started_at")
    if finished > now + CLOCK_SKEW:
        return Insane("from_the_future", "finished_at is later than the reader's clock")
    return None


def _agent_urls_insane(urls: tuple[Any, Any]) -> Insane | None:
    for url in urls:
        if url is None:
            continue
        if has_userinfo(url):
            return Insane("url_userinfo", "the agent's URL carries userinfo (user@host)")
        try:
            normalize_url(url)
        except URLRefused:
            return Insane("url_scheme", "the agent's URL is not an http or https URL")
    return None


def _runs_insane(record: Mapping[str, Any], home: str | None) -> Insane | None:
    """The URLs of the runs' proposals, then of their calls, each at the agent ``home``."""
    calls: list[Any] = []
    proposals: list[Any] = []
    runs = record.get("runs")
    for run in runs if isinstance(runs, list) else ():
        for name, into in (("calls", calls), ("proposals", proposals)):
            items = member_at(run, name)
            into.extend(items if isinstance(items, list) else ())
    for proposal in proposals:
        url = member_at(proposal, "url")
        if url is not None and _host(url) is False:
            return Insane("url_scheme", "a proposal URL is not an http or https URL")
        if url is not None and has_userinfo(url):
            return Insane("url_userinfo", "a proposal URL carries userinfo (user@host)")
    for call in calls:
        host = _host(member_at(call, "interface"))
        if host is False:
            return Insane("url_scheme", "a call's interface is not an http or https URL")
        if has_userinfo(member_at(call, "interface")):
            return Insane("url_userinfo", "a call's interface carries userinfo (user@host)")
        if host is None or home is None or not _same_agent(host, home):
            return Insane("calls_elsewhere", "a call was made to another agent's interface")
    return None
