"""Protocol versions (PROFILE §3.10, A2A 1.0 §3.6): those a card declares, those a layer
in front of the host accepts, the request's, and the host's refusal of the others."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..cardproto import spelling
from ..spec import DEFAULT_A2A_VERSION, RPC_VERSION_NOT_SUPPORTED, VERSION_HEADER
from ._activation import Activation
from ._envelopes import _VERSION_INFO, REST_VERSION_NOT_SUPPORTED, Reply, _reply, rpc_error

_VERSION_NAME = VERSION_HEADER.lower().encode()


_VERSION_TEXT = re.compile(r"v?([0-9]{1,9})(?:\.([0-9]{1,9}))?(?:\.[0-9]{1,9}){0,2}")
Version = tuple[int, int]


def parse_version(text: str) -> Version | None:
    """``Major.Minor`` of an ``A2A-Version`` value (A2A 1.0 §3.6: a patch is ignored);
    ``None`` when it does not read as a version."""
    match = _VERSION_TEXT.fullmatch(text.strip(" \t"))
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def declared_versions(card: Any, binding: str = "JSONRPC") -> frozenset[Version]:
    """The protocol versions a card's ``binding`` interfaces declare: each
    ``supportedInterfaces`` item's ``protocolVersion`` (``1.0`` when absent), and, for the
    0.3 shape (a top-level ``url``), the top-level ``protocolVersion`` (``0.3`` when
    absent) when ``url`` or an ``additionalInterfaces`` item is on ``binding``."""
    found: set[Version] = set()
    if not isinstance(card, dict):
        return frozenset()

    def add(value: Any) -> None:
        version = parse_version(value) if isinstance(value, str) else None
        if version is not None:
            found.add(version)

    items = card.get(spelling(card, "supportedInterfaces"))  # either spelling: D-VERIFY-39
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get(spelling(item, "protocolBinding")) == binding:
            add(item.get(spelling(item, "protocolVersion"), "1.0"))
    if "url" in card:
        extra = card.get("additionalInterfaces")
        transports = [card.get("preferredTransport", "JSONRPC")] + [
            i.get("transport") for i in (extra if isinstance(extra, list) else ())
            if isinstance(i, dict)
        ]  # fmt: skip
        if binding in transports:
            add(card.get("protocolVersion", DEFAULT_A2A_VERSION))
    return frozenset(found)


def negotiated_versions(card: Any, binding: str = "JSONRPC") -> frozenset[Version]:
    """The versions a layer in front of the host accepts on ``binding`` (PROFILE §3.10,
    docs/decisions.md D-CORE-15):
    those the binding's interfaces declare (:func:`declared_versions`) when the host
    negotiates, that is when some interface of the card, on any binding, declares 1.0 or
    later; otherwise (a 0.3 host, which negotiates nothing) the empty set, under which
    :func:`version_supported` refuses nothing. Never stricter than the host."""
    if not isinstance(card, dict):
        return frozenset()
    bindings = {binding, card.get("preferredTransport", "JSONRPC")}
    for member, name in (("supportedInterfaces", "protocolBinding"),
                         ("additionalInterfaces", "transport")):  # fmt: skip
        items = card.get(spelling(card, member))
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                bindings.add(item.get(spelling(item, name)))
    found = (v for b in bindings if isinstance(b, str) for v in declared_versions(card, b))
    if all(v < (1, 0) for v in found):
        return frozenset()
    return declared_versions(card, binding)


def requested_version(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The request's ``A2A-Version`` (the first field), or ``0.3`` when it is absent or
    empty (A2A 1.0 §3.6)."""
    for name, value in headers:
        if len(name) == 11 and name.lower() == _VERSION_NAME:
            text = value.decode("latin-1").strip(" \t")
            return text or DEFAULT_A2A_VERSION
    return DEFAULT_A2A_VERSION


_MAJOR_MINOR = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})")


def version_supported(requested: str, versions: frozenset[Version]) -> bool:
    """Whether every common host serving ``versions`` accepts an ordinary call under
    ``requested`` (PROFILE §3.10): exactly ``Major.Minor`` (A2A 1.0 §3.6) of a declared
    version. Hosts differ beyond that (``a2a-sdk`` serves ``1.5`` and ``1.0.7`` on a 1.0
    card, ``@a2a-js/sdk`` neither), so those are refused: never an answer where a host
    would refuse. A card declaring no version refuses nothing."""
    if not versions:
        return True
    if requested == "1.0":  # the usual request, read without the pattern
        return (1, 0) in versions
    match = _MAJOR_MINOR.fullmatch(requested)
    return match is not None and (int(match.group(1)), int(match.group(2))) in versions


def version_refusal(
    headers: Iterable[tuple[bytes, bytes]],
    versions: frozenset[Version],
    reply: Reply,
    act: Activation,
    *,
    rest: bool = False,
) -> Reply:
    """``reply`` itself, or in its place the host's ``VersionNotSupportedError`` when the
    request's ``A2A-Version`` is one the host refuses (PROFILE §3.10): ``-32009`` with the
    request's id on JSON-RPC, HTTP 400 ``FAILED_PRECONDITION`` on HTTP+JSON (A2A 1.0
    §5.4). The activation echo is kept."""
    if version_supported(requested_version(headers), versions):
        return reply
    if rest:
        return _reply(REST_VERSION_NOT_SUPPORTED, act, 400)
    body = rpc_error(reply.request_id, RPC_VERSION_NOT_SUPPORTED, data=_VERSION_INFO)
    return _reply(body, act, 200, reply.request_id)
