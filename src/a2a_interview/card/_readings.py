"""The readings of a card signature (PROFILE §6.3): which bytes a signature on a card covers.

A card signature is a JWS with a detached payload: canonical bytes of the card without
``signatures``. SDKs disagree on those bytes, so a signature is checked under named
*readings*:

- ``served``: RFC 8785 of the card exactly as served, minus ``signatures`` (a2a-go's
  reading, the strict one);
- ``prune-empty``: empty strings, lists and objects (and ``null``) removed recursively
  first, ``false`` and ``0`` kept, as a2a-python and a2a-js sign; for a card an a2a-sdk
  host serves with its 0.3 compatibility members merged in, also with those members
  removed (a second candidate), because the SDK signs the 1.0 message before the merge;
- ``proto``: what a2a-sdk 1.x and @a2a-js/sdk 1.x sign in practice: the card taken through
  the A2A 1.0 protobuf JSON form (:mod:`.cardproto`: members the messages do not define
  dropped, a proto3 scalar without presence omitted at its default, so ``"required":
  false`` goes), then pruned as ``prune-empty``.

Each reading gives candidate payloads (:class:`Candidate`), each with the JSON Pointers
of the served members it leaves uncovered. Signing and verifying are :mod:`.cardsig`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from ..cardproto import proto_form
from ..errors import CanonicalizationError, SignatureError
from ..jcs import canonicalize
from ..pointer import escape

__all__ = [
    "READINGS",
    "Candidate",
    "Reading",
    "candidates",
    "is_1_0_card",
    "proto_candidates",
    "signing_payload",
    "without_signatures",
]

Reading: TypeAlias = Literal["served", "prune-empty", "proto"]
READINGS: Final[tuple[Reading, ...]] = ("served", "prune-empty", "proto")

_PRUNE_DEPTH: Final = 128  # a2a-sdk's own bound for _clean_empty

# ---------------------------------------------------------------------------------------
# The 0.3 compatibility members a2a-sdk 1.x merges into the card it serves.
#
# ``response_helpers.agent_card_to_dict`` deep-merges ``to_compat_agent_card(card)
# .model_dump(exclude_none=True)`` (camelCase aliases) into ``MessageToDict(card)`` when the
# card has an interface of protocol version 0.3, adding only the keys the 1.0 form lacks.
# ``signing._canonicalize_agent_card`` signs the 1.0 form before that merge. Listed here
# are the added members that prune-empty does not already remove.
_COMPAT_TOP: Final = (
    "url",
    "preferredTransport",
    "protocolVersion",
    "additionalInterfaces",
    "security",  # securityRequirements in the 0.3 shape
    "supportsAuthenticatedExtendedCard",  # only when true
)
_COMPAT_SKILL: Final = ("security",)
# A 1.0 scheme is {"<kind>SecurityScheme": {...}}; the merge adds the flat 0.3 members next
# to that wrapper.
_COMPAT_SCHEME: Final = (
    "type",
    "in",
    "name",
    "description",
    "scheme",
    "bearerFormat",
    "flows",
    "oauth2MetadataUrl",
    "openIdConnectUrl",
)
_SCHEME_WRAPPERS: Final = frozenset(
    {
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
    }
)
# capabilities.extensions[i].required is a plain proto3 bool: MessageToDict drops false,
# the 0.3 model always carries it, so the merge adds "required": false.


# ---------------------------------------------------------------------------------------
# Payloads


class _Empty:
    """Marks a value prune-empty removes."""


_EMPTY: Final = _Empty()


def _prune(value: Any, depth: int = 1) -> Any:
    """Remove ``""``, ``[]``, ``{}`` and ``null`` recursively; keep ``false`` and ``0``.

    This is what a2a-sdk's ``_clean_empty`` does (it drops ``None`` too, though
    ``MessageToDict`` emits ``null`` only inside ``Struct`` params). Raises
    ``CanonicalizationError`` past the nesting bound.
    """
    if isinstance(value, dict | list) and depth > _PRUNE_DEPTH:
        raise CanonicalizationError("nesting too deep to canonicalize")
    if isinstance(value, dict):
        pruned = {}
        for key, item in value.items():
            kept = _prune(item, depth + 1)
            if kept is not _EMPTY:
                pruned[key] = kept
        return pruned or _EMPTY
    if isinstance(value, list):
        items = [kept for item in value if (kept := _prune(item, depth + 1)) is not _EMPTY]
        return items or _EMPTY
    if value is None or value == "":
        return _EMPTY
    return value


def without_signatures(card: dict[str, Any]) -> dict[str, Any]:
    """``card`` without its ``signatures`` member (a shallow copy)."""
    return {k: v for k, v in card.items() if k != "signatures"}


def _is_sdk_compat_card(card: dict[str, Any]) -> bool:
    return "supportedInterfaces" in card and any(name in card for name in _COMPAT_TOP)


def _drop(obj: dict[str, Any], names: Sequence[str], at: str, removed: list[str]) -> dict[str, Any]:
    removed += [f"{at}/{n}" for n in names if n in obj]
    return {k: v for k, v in obj.items() if k not in names}


def _strip_compat(card: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The card without the members a2a-sdk's 0.3 merge adds, and their JSON Pointers.

    Only the containers the merge touches are copied; the rest is shared with ``card``.
    """
    removed: list[str] = []
    out = _drop(card, _COMPAT_TOP, "", removed)

    caps = out.get("capabilities")
    if isinstance(caps, dict) and isinstance(caps.get("extensions"), list):
        out["capabilities"] = {
            **caps,
            "extensions": [
                _drop(ext, ("required",), f"/capabilities/extensions/{i}", removed)
                if isinstance(ext, dict) and ext.get("required") is False
                else ext
                for i, ext in enumerate(caps["extensions"])
            ],
        }
    skills = out.get("skills")
    if isinstance(skills, list):
        out["skills"] = [
            _drop(skill, _COMPAT_SKILL, f"/skills/{i}", removed)
            if isinstance(skill, dict)
            else skill
            for i, skill in enumerate(skills)
        ]
    schemes = out.get("securitySchemes")
    if isinstance(schemes, dict):
        out["securitySchemes"] = {
            name: _drop(scheme, _COMPAT_SCHEME, f"/securitySchemes/{escape(name)}", removed)
            if isinstance(scheme, dict) and _SCHEME_WRAPPERS & scheme.keys()
            else scheme
            for name, scheme in schemes.items()
        }
    return out, tuple(removed)


def _pruned_bytes(value: dict[str, Any]) -> bytes:
    pruned = _prune(value)
    # An all-empty card prunes to nothing; a2a-sdk then canonicalizes None.
    return canonicalize(None if pruned is _EMPTY else pruned)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One byte string a signature may cover, and the served members (JSON Pointers) it
    leaves out: a2a-sdk's 0.3 compatibility members, or members ``proto`` drops."""

    payload: bytes
    uncovered: tuple[str, ...] = ()


def proto_candidates(body: dict[str, Any]) -> list[Candidate]:
    """The ``proto`` candidates of a card body (without ``signatures``): none when it does
    not fit the 1.0 messages, two (``null`` and ``{}``) when nothing of it is left."""
    form = proto_form(body)
    if form is None:
        return []  # the SDKs refuse or coerce such a card; nothing to check (cardproto)
    pruned = _prune(form.value)
    if pruned is _EMPTY:
        # An all-empty card: a2a-sdk canonicalizes None, a2a-js returns "{}".
        return [Candidate(b"null", form.dropped), Candidate(b"{}", form.dropped)]
    return [Candidate(canonicalize(pruned), form.dropped)]


def candidates(card: dict[str, Any], reading: Reading) -> list[Candidate]:
    """The candidates of ``card`` under ``reading`` (see :func:`signing_payload`)."""
    body = without_signatures(card)
    if reading == "served":
        return [Candidate(canonicalize(body))]
    if reading == "proto":
        return proto_candidates(body)
    found = [Candidate(_pruned_bytes(body))]
    if _is_sdk_compat_card(body):
        stripped, removed = _strip_compat(body)
        payload = _pruned_bytes(stripped)
        if payload != found[0].payload:
            found.append(Candidate(payload, removed))
    return found


def signing_payload(card: dict[str, Any], reading: Reading) -> list[bytes]:
    """The candidate canonical byte strings a signature on ``card`` may cover under ``reading``.

    ``served``: one candidate, RFC 8785 of the card without ``signatures``.
    ``prune-empty``: RFC 8785 after removing ``""``, ``[]``, ``{}`` and ``null``
    recursively; and, for an a2a-sdk card carrying 0.3 compatibility members (it has
    ``supportedInterfaces`` and a top-level ``url``, ``preferredTransport``,
    ``protocolVersion``, ``additionalInterfaces``, ``security`` or
    ``supportsAuthenticatedExtendedCard``), a second candidate with the members the SDK
    merges in removed before pruning. Duplicates are dropped.
    ``proto``: RFC 8785 of the card's A2A 1.0 protobuf JSON form (:func:`.cardproto.proto_form`)
    after the same pruning; none when the card does not fit the 1.0 messages; two
    (``null`` and ``{}``) when nothing is left.

    Raises ``CanonicalizationError`` when the card has no canonical form and
    ``SignatureError`` for an unknown reading.
    """
    if reading not in READINGS:
        raise SignatureError("unknown reading")
    return [c.payload for c in candidates(card, reading)]


def is_1_0_card(card: dict[str, Any]) -> bool:
    """Whether ``card`` is an A2A 1.0 card: it lists ``supportedInterfaces`` (either
    spelling), where a 0.3 card names its ``url`` instead (PROFILE §6.3)."""
    names = ("supportedInterfaces", "supported_interfaces")
    return any(isinstance(card.get(name), list) for name in names)
