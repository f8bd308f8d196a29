"""Loading a serving agent's declarations, with the self-check of PROFILE §2.4.

A serving agent verifies its own terms entries on load and refuses to start if any
fails; it serves only bytes that verified. The fetch is injected (a callable from url to
bytes, or ``None`` when it failed), so this module does no I/O of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .cardproto import spelling
from .errors import DeclarationError, IngressError
from .projection import CommittedProposal, Interview
from .spec import INTERVIEW_URI, MAX_DEPTH, MAX_DOCUMENT_BYTES
from .strictjson import JSONObject, loads
from .terms import (
    ProposalVerdict,
    TermsEntry,
    card_extensions,
    read_terms_entries,
    verify_proposal,
)

Fetch = Callable[[str], bytes | None]


def interview_entry(card: Any) -> dict[str, Any] | None:
    """The card's interview ``AgentExtension`` (interview §3), or ``None``."""
    return next((e for _, e in card_extensions(card) if e.get("uri") == INTERVIEW_URI), None)


@dataclass(frozen=True, slots=True)
class Interface:
    """One interface the card declares: its protocol binding, URL, protocol version and
    its pointer in the card."""

    binding: str
    url: str
    protocol_version: str | None = None
    member: str = ""


def interfaces(card: Any) -> list[Interface]:
    """Every interface a card declares, in card order; the same (binding, url) once.

    A2A 1.0 cards list ``supportedInterfaces`` (``protocolBinding``); A2A 0.3 cards give
    ``url`` with ``preferredTransport`` (default ``JSONRPC``) and ``additionalInterfaces``
    (``transport``), at the card's ``protocolVersion`` (default ``0.3``). A card served
    by ``a2a-sdk`` may carry both shapes. The 1.0 members are read under either
    spelling, as the SDKs' parsers read them (``supported_interfaces``, D-VERIFY-39).
    """
    if not isinstance(card, dict):
        return []
    found: list[Interface] = []

    def add(binding: Any, url: Any, version: Any, member: str) -> None:
        if isinstance(binding, str) and isinstance(url, str):
            item = Interface(binding, url, version if isinstance(version, str) else None, member)
            if all((i.binding, i.url) != (item.binding, item.url) for i in found):
                found.append(item)

    listed = spelling(card, "supportedInterfaces")  # or supported_interfaces (D-VERIFY-39)
    for i, item in enumerate(_list(card.get(listed))):
        if isinstance(item, dict):
            version = item.get(spelling(item, "protocolVersion"))
            binding = item.get(spelling(item, "protocolBinding"))
            add(binding, item.get("url"), version, f"/{listed}/{i}")
    legacy = card.get("protocolVersion", "0.3")
    if "url" in card:
        add(card.get("preferredTransport", "JSONRPC"), card["url"], legacy, "/url")
    for i, item in enumerate(_list(card.get("additionalInterfaces"))):
        if isinstance(item, dict):
            add(item.get("transport"), item.get("url"), legacy, f"/additionalInterfaces/{i}")
    return found


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class Declarations:
    """The card as served, each terms entry's verdict, and the answers built from them."""

    card: JSONObject
    verdicts: tuple[tuple[TermsEntry, ProposalVerdict], ...]
    interview: Interview

    @property
    def proposals(self) -> tuple[CommittedProposal, ...]:
        return tuple(
            CommittedProposal(entry, verdict.document)
            for entry, verdict in self.verdicts
            if verdict.document is not None
        )


def read_card(data: bytes, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> JSONObject:
    """Parse a card strictly. Raises ``IngressError`` or ``DeclarationError``."""
    card = loads(data, max_bytes=max_bytes, max_depth=MAX_DEPTH)
    if not isinstance(card, dict):
        raise DeclarationError("the card is not a JSON object")
    return card


def build(
    card: JSONObject,
    fetch: Fetch | Mapping[str, bytes],
    *,
    require_interview: bool = True,
    max_bytes: int = MAX_DOCUMENT_BYTES,
) -> Declarations:
    """Verify every terms entry of ``card`` and build its answers (PROFILE §2.4).

    ``fetch`` maps a proposal url to its bytes (a callable, or a mapping for files).
    Raises ``DeclarationError`` naming the failing entry by its pointer and the reason
    code of terms §3, when the card declares the interview with ``required: true``
    (interview §3 rule 1), or, with ``require_interview``, when it does not declare the
    interview at all.
    """
    entry = interview_entry(card)
    if entry is None and require_interview:
        raise DeclarationError("the card does not declare the interview extension")
    if entry is not None and entry.get("required") is True:
        raise DeclarationError("the interview extension is declared with required: true")
    get = fetch.get if isinstance(fetch, Mapping) else fetch
    verdicts = []
    for terms_entry in read_terms_entries(card):
        body = get(terms_entry.url) if terms_entry.url is not None else None
        verdict = verify_proposal(terms_entry.digest, body, max_bytes=max_bytes)
        if not verdict.ok:
            raise DeclarationError(
                f"terms entry {terms_entry.member} failed verification: {verdict.result}"
            )
        verdicts.append((terms_entry, verdict))
    committed = [CommittedProposal(e, v.document) for e, v in verdicts if v.document is not None]
    return Declarations(card, tuple(verdicts), Interview(card, committed))


def load(card_bytes: bytes, fetch: Fetch | Mapping[str, bytes], **options: Any) -> Declarations:
    """:func:`build` from the card's bytes; ingress failures become ``DeclarationError``."""
    try:
        card = read_card(card_bytes)
    except IngressError as exc:
        raise DeclarationError(f"the card is not strict I-JSON ({exc.code})") from None
    return build(card, fetch, **options)
