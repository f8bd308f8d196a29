"""The extended card (PROFILE §7): fetched when the user gave credentials and the card
offers one, recorded (its digest) or why not; never diffed against.

A card offers it with ``capabilities.extendedAgentCard`` (A2A 1.0) or the top-level
``supportsAuthenticatedExtendedCard`` (0.3). It is asked on the first JSON-RPC interface
(else the first HTTP+JSON one), whose origin must be one the credentials go to (the
operation requires authentication: asking without credentials would say nothing):

- 1.0 JSON-RPC: ``GetExtendedAgentCard``; 0.3 JSON-RPC: ``agent/getAuthenticatedExtendedCard``;
- 1.0 HTTP+JSON: ``GET {url}/extendedAgentCard``; 0.3 HTTP+JSON: ``GET {url}/v1/card``.

The interview is diffed against the public card (the draft's §5.1); skills the extended
card declares beyond the public card's are an advisory (``extended_skills``), never a
conflict. A failure to fetch it ends nothing: the record says why.
"""

from __future__ import annotations

from typing import Any

from ..checks import Advisory, Binding, Interface
from ..declarations import read_card
from ..errors import DeclarationError, IngressError
from ..jcs import canonicalize, digest
from ..net.failures import BudgetSpent, TransportFailure, without_credentials
from ..record import ExtendedCard
from ..spec import VERSION_HEADER
from ..strictjson import JSONObject, loads
from .calls import version_for
from .client import Interviewer
from .state import RunState, VerifyOptions, off_loop, progress

__all__ = ["extended_card", "offers_extended_card"]


def offers_extended_card(card: JSONObject) -> bool:
    """Whether ``card`` offers an extended card (1.0 or 0.3 spelling)."""
    capabilities = card.get("capabilities")
    if isinstance(capabilities, dict) and capabilities.get("extendedAgentCard") is True:
        return True
    return card.get("supportsAuthenticatedExtendedCard") is True


def _skill_ids(card: JSONObject) -> list[str]:
    skills = card.get("skills")
    if not isinstance(skills, list):
        return []
    return [s["id"] for s in skills if isinstance(s, dict) and isinstance(s.get("id"), str)]


def _request(interface: Interface, request_id: int) -> tuple[str, bytes | None, list[Any]]:
    headers: list[tuple[str, str]] = [("Accept", "application/json")]
    version = version_for(interface)
    if version is not None:
        headers.append((VERSION_HEADER, version))
    if interface.binding is Binding.JSONRPC:
        legacy = interface.legacy
        method = "agent/getAuthenticatedExtendedCard" if legacy else "GetExtendedAgentCard"
        envelope = {"jsonrpc": "2.0", "id": request_id, "method": method}
        headers.append(("Content-Type", "application/json"))
        return interface.url, canonicalize(envelope), headers
    path = "/v1/card" if interface.legacy else "/extendedAgentCard"
    return interface.url.rstrip("/") + path, None, headers


def _read(body: bytes, binding: Binding, request_id: int, max_bytes: int) -> JSONObject | str:
    """The card the response holds, or the reason it holds none."""
    if binding is Binding.HTTP_JSON:
        try:
            return read_card(body, max_bytes=max_bytes)
        except (IngressError, DeclarationError):
            return "unreadable"
    try:
        envelope = loads(body, max_bytes=max_bytes)
    except IngressError:
        return "unreadable"
    if not isinstance(envelope, dict) or envelope.get("id") != request_id:
        return "unreadable"
    if "error" in envelope:
        return "error_response"
    try:
        return read_card(canonicalize(envelope.get("result")), max_bytes=max_bytes)
    except (IngressError, DeclarationError):
        return "unreadable"


async def extended_card(
    session: Interviewer,
    options: VerifyOptions,
    card: JSONObject,
    interfaces: list[Interface],
    state: RunState,
    *,
    request_id: int,
) -> None:
    """Fetch the extended card ``card`` offers, if credentials were given, into
    ``state.extended_card``; its extra skills into ``state.advisories``."""
    if not offers_extended_card(card):
        return
    if not options.client.headers:
        state.extended_card = ExtendedCard(False, reason="no_credentials")
        return
    ordered = sorted(interfaces, key=lambda i: i.binding is not Binding.JSONRPC)
    if not ordered:
        state.extended_card = ExtendedCard(False, reason="no_interface")
        return
    interface = ordered[0]
    if not session.sends_credentials(interface.url):
        state.extended_card = ExtendedCard(
            False, reason="credentials_not_sent", url=without_credentials(interface.url)
        )
        return
    progress(options, "extended card")
    target, body, headers = _request(interface, request_id)
    url = without_credentials(target)
    try:
        if body is None:
            response = await session.get(target, headers)
        else:
            response = await session.post(target, body, headers)
    except BudgetSpent:
        raise  # the run's bound, not the extended card's failure
    except TransportFailure as exc:
        state.extended_card = ExtendedCard(False, reason=exc.code, url=url)
        return
    if response.status != 200:
        state.extended_card = ExtendedCard(
            False, reason="http_status", url=url, status=response.status
        )
        return
    got = await off_loop(
        _read, response.body, interface.binding, request_id, options.client.max_bytes
    )
    if isinstance(got, str):
        state.extended_card = ExtendedCard(False, reason=got, url=url, status=response.status)
        return
    state.extended_card = ExtendedCard(True, digest=await off_loop(digest, got), url=url)
    public = set(_skill_ids(card))
    beyond = [s for s in dict.fromkeys(_skill_ids(got)) if s not in public]
    if beyond:
        state.advisories.append(
            Advisory(
                "extended_card",
                "extended_skills",
                value=beyond[:64],
                detail="skills the extended card declares beyond the public card's: "
                "not interviewed (the interview is diffed against the public card), "
                "never a conflict",
            )
        )
