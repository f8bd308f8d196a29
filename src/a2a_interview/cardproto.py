"""The A2A 1.0 protobuf JSON form of an Agent Card: the ``proto`` reading (PROFILE §6.3).

The official SDKs do not sign the card as served. ``a2a-sdk`` 1.x
(``create_agent_card_signer``) signs ``MessageToDict(AgentCard)``, and ``@a2a-js/sdk`` 1.x
(``generateAgentCardSignature``) signs ``AgentCard.toJSON(AgentCard.fromJSON(card))``.
Both take the card through the A2A 1.0 protobuf messages, then remove empty values
and apply RFC 8785. Going through the messages does three things to the JSON:

- a member the 1.0 messages do not define is dropped (the SDKs' parsers ignore it);
- a proto3 scalar without explicit presence is omitted at its default (``false``,
  ``""``), so ``"required": false`` on an extension goes, while ``streaming``,
  ``pushNotifications`` and ``extendedAgentCard`` (``optional`` fields) keep ``false``;
- a member spelled with its proto field name (``supported_interfaces``) comes out under
  its JSON name (``supportedInterfaces``).

This module holds the messages as data (:data:`MESSAGES`: every message reachable from
``AgentCard``, field by field, with its kind and presence), checked in the tests against
the installed ``a2a-sdk``'s descriptors. The core imports neither ``a2a`` nor
``protobuf``.

Where the SDKs differ on a card that does not fit the messages (a wrong JSON type, a
member given under both spellings, two cases of a ``oneof``, ``null`` inside a list), the
Python SDK refuses to parse it and the JS SDK coerces it. :func:`proto_form` refuses too
(``None``): a signature over a coerced value covers something other than what is served.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

__all__ = ["MESSAGES", "Field", "ProtoForm", "proto_form"]

Kind: TypeAlias = Literal["string", "bool", "message", "struct"]


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a 1.0 card message, under its JSON name.

    ``kind`` is the value's kind: ``string``, ``bool``, ``message`` (``target`` names the
    message) or ``struct`` (``google.protobuf.Struct``: any JSON object, kept as it is).
    ``repeated`` and ``map`` (string keys) wrap the kind. ``presence`` is proto3 explicit
    presence (``optional``, a ``oneof`` member or a singular message): such a field is kept
    at its default. ``oneof`` names the group the field belongs to, if any.
    """

    kind: Kind
    target: str | None = None
    repeated: bool = False
    map: bool = False
    presence: bool = False
    oneof: str | None = None


def _s(*, presence: bool = False) -> Field:
    return Field("string", presence=presence)


def _m(target: str, *, oneof: str | None = None) -> Field:
    return Field("message", target, presence=True, oneof=oneof)


def _rep(kind: Kind, target: str | None = None) -> Field:
    return Field(kind, target, repeated=True)


def _map(kind: Kind, target: str | None = None) -> Field:
    return Field(kind, target, map=True)


_OPT_BOOL: Final = Field("bool", presence=True)

# lf.a2a.v1, as a2a-sdk 1.3 and @a2a-js/sdk 1.3.0 ship it. tests/test_cardproto.py checks
# every entry (names, kinds, presence, oneofs) against a2a-sdk's own descriptors.
MESSAGES: Final[dict[str, dict[str, Field]]] = {
    "AgentCard": {
        "name": _s(),
        "description": _s(),
        "supportedInterfaces": _rep("message", "AgentInterface"),
        "provider": _m("AgentProvider"),
        "version": _s(),
        "documentationUrl": _s(presence=True),
        "capabilities": _m("AgentCapabilities"),
        "securitySchemes": _map("message", "SecurityScheme"),
        "securityRequirements": _rep("message", "SecurityRequirement"),
        "defaultInputModes": _rep("string"),
        "defaultOutputModes": _rep("string"),
        "skills": _rep("message", "AgentSkill"),
        "signatures": _rep("message", "AgentCardSignature"),
        "iconUrl": _s(presence=True),
    },
    "AgentInterface": {
        "url": _s(),
        "protocolBinding": _s(),
        "tenant": _s(),
        "protocolVersion": _s(),
    },
    "AgentProvider": {"url": _s(), "organization": _s()},
    "AgentCapabilities": {
        "streaming": _OPT_BOOL,
        "pushNotifications": _OPT_BOOL,
        "extensions": _rep("message", "AgentExtension"),
        "extendedAgentCard": _OPT_BOOL,
    },
    "AgentExtension": {
        "uri": _s(),
        "description": _s(),
        "required": Field("bool"),  # no presence: false is omitted
        "params": Field("struct", presence=True),
    },
    "SecurityScheme": {
        "apiKeySecurityScheme": _m("APIKeySecurityScheme", oneof="scheme"),
        "httpAuthSecurityScheme": _m("HTTPAuthSecurityScheme", oneof="scheme"),
        "oauth2SecurityScheme": _m("OAuth2SecurityScheme", oneof="scheme"),
        "openIdConnectSecurityScheme": _m("OpenIdConnectSecurityScheme", oneof="scheme"),
        "mtlsSecurityScheme": _m("MutualTlsSecurityScheme", oneof="scheme"),
    },
    "APIKeySecurityScheme": {"description": _s(), "location": _s(), "name": _s()},
    "HTTPAuthSecurityScheme": {"description": _s(), "scheme": _s(), "bearerFormat": _s()},
    "OAuth2SecurityScheme": {
        "description": _s(),
        "flows": _m("OAuthFlows"),
        "oauth2MetadataUrl": _s(),
    },
    "OAuthFlows": {
        "authorizationCode": _m("AuthorizationCodeOAuthFlow", oneof="flow"),
        "clientCredentials": _m("ClientCredentialsOAuthFlow", oneof="flow"),
        "implicit": _m("ImplicitOAuthFlow", oneof="flow"),
        "password": _m("PasswordOAuthFlow", oneof="flow"),
        "deviceCode": _m("DeviceCodeOAuthFlow", oneof="flow"),
    },
    "AuthorizationCodeOAuthFlow": {
        "authorizationUrl": _s(),
        "tokenUrl": _s(),
        "refreshUrl": _s(),
        "scopes": _map("string"),
        "pkceRequired": Field("bool"),  # no presence: false is omitted
    },
    "ClientCredentialsOAuthFlow": {"tokenUrl": _s(), "refreshUrl": _s(), "scopes": _map("string")},
    "ImplicitOAuthFlow": {"authorizationUrl": _s(), "refreshUrl": _s(), "scopes": _map("string")},
    "PasswordOAuthFlow": {"tokenUrl": _s(), "refreshUrl": _s(), "scopes": _map("string")},
    "DeviceCodeOAuthFlow": {
        "deviceAuthorizationUrl": _s(),
        "tokenUrl": _s(),
        "refreshUrl": _s(),
        "scopes": _map("string"),
    },
    "OpenIdConnectSecurityScheme": {"description": _s(), "openIdConnectUrl": _s()},
    "MutualTlsSecurityScheme": {"description": _s()},
    "SecurityRequirement": {"schemes": _map("message", "StringList")},
    "StringList": {"list": _rep("string")},
    "AgentSkill": {
        "id": _s(),
        "name": _s(),
        "description": _s(),
        "tags": _rep("string"),
        "examples": _rep("string"),
        "inputModes": _rep("string"),
        "outputModes": _rep("string"),
        "securityRequirements": _rep("message", "SecurityRequirement"),
    },
    "AgentCardSignature": {
        "protected": _s(),
        "signature": _s(),
        "header": Field("struct", presence=True),
    },
}


def proto_name(json_name: str) -> str:
    """The proto field name of a JSON name (``supportedInterfaces`` → ``supported_interfaces``).

    Both SDKs' parsers accept either spelling.
    """
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), json_name)


def spelling(obj: dict[str, Any], json_name: str) -> str:
    """The name a card object serves its member ``json_name`` under: the JSON name, else
    the proto field name when only that is present (both SDKs' parsers read either,
    D-VERIFY-28), else the JSON name. Every reader of a card's interfaces reads through
    it, so that a card spelled ``supported_interfaces`` has the interfaces its SDK
    clients see (D-VERIFY-39), and a JSON pointer names the member as served."""
    if json_name in obj:
        return json_name
    other = proto_name(json_name)
    return other if other in obj else json_name


# Per message: spelling → JSON name, for both spellings of every field.
_SPELLINGS: Final[dict[str, dict[str, str]]] = {
    message: {spelling: name for name in fields for spelling in (name, proto_name(name))}
    for message, fields in MESSAGES.items()
}


class _Refused(Exception):
    """The card does not fit the 1.0 messages; the SDKs would refuse or coerce it."""


@dataclass(frozen=True, slots=True)
class ProtoForm:
    """A card's 1.0 protobuf JSON form, before empties are removed.

    ``value`` is the form (JSON names, defaults of fields without presence omitted,
    unknown members dropped). ``dropped`` lists, as JSON Pointers into the card, the
    members the messages do not define: a signature over this form does not cover them.
    """

    value: dict[str, Any]
    dropped: tuple[str, ...]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _scalar(field: Field, value: Any) -> Any:
    if field.kind == "string" and isinstance(value, str):
        return value
    if field.kind == "bool" and isinstance(value, bool):
        return value
    if field.kind == "struct" and isinstance(value, dict):
        return value  # google.protobuf.Struct: any JSON object, as it is
    raise _Refused


def _value(field: Field, value: Any, at: str, dropped: list[str]) -> Any:
    if field.kind == "message":
        assert field.target is not None
        return _message(field.target, value, at, dropped)
    return _scalar(field, value)


def _field(field: Field, value: Any, at: str, dropped: list[str]) -> Any:
    """The field's JSON form, or ``None`` when it is omitted (unset or at its default)."""
    if value is None:  # null sets nothing, in both SDKs
        return None
    if field.repeated:
        if not isinstance(value, list):
            raise _Refused
        if any(item is None for item in value):
            raise _Refused
        items = [_value(field, item, f"{at}/{i}", dropped) for i, item in enumerate(value)]
        return items or None
    if field.map:
        if not isinstance(value, dict):
            raise _Refused
        if any(item is None for item in value.values()):
            raise _Refused
        entries = {k: _value(field, v, f"{at}/{_escape(k)}", dropped) for k, v in value.items()}
        return entries or None
    converted = _value(field, value, at, dropped)
    if not field.presence and converted in ("", False):
        return None  # proto3: a scalar without presence is omitted at its default
    return converted


def _message(name: str, value: Any, at: str, dropped: list[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Refused
    fields = MESSAGES[name]
    spellings = _SPELLINGS[name]
    out: dict[str, Any] = {}
    seen: set[str] = set()
    oneofs: set[str] = set()
    for key, item in value.items():
        json_name = spellings.get(key)
        if json_name is None:
            dropped.append(f"{at}/{_escape(key)}")
            continue
        if json_name in seen:
            raise _Refused  # both spellings: a2a-sdk refuses, a2a-js picks one
        seen.add(json_name)
        field = fields[json_name]
        converted = _field(field, item, f"{at}/{_escape(key)}", dropped)
        if field.oneof is not None and item is not None:
            if field.oneof in oneofs:
                raise _Refused  # two cases of one oneof
            oneofs.add(field.oneof)
        if converted is not None:
            out[json_name] = converted
    return out


def proto_form(card: Any) -> ProtoForm | None:
    """The card as the SDKs' signers see it: the A2A 1.0 ``AgentCard`` protobuf JSON form.

    Returns ``None`` when the card does not fit the messages (not an object, a known
    member of the wrong JSON type, both spellings of one member, two cases of a oneof,
    ``null`` inside a list or map). Never raises. ``signatures`` is kept; the caller
    removes it.
    """
    dropped: list[str] = []
    try:
        value = _message("AgentCard", card, "", dropped)
    except _Refused:
        return None
    return ProtoForm(value, tuple(dropped))
