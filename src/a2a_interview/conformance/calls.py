"""The conformance call list and the response the profile expects of each call.

A :class:`Template` is one call in the abstract: the rule it checks, the level of that
rule (``draft``: what the interview draft requires of every implementation; ``profile``:
this project's choices, PROFILE §3–§5), the binding, the method or path segment, the
params and how the ``skill`` selector is chosen from the card under test. :func:`calls`
instantiates the list against a card: concrete request bytes, and the expected response
derived from the core (``rpc.jsonrpc``, ``rpc.rest``, ``projection.Interview``), never
from a server. Pure: no I/O (D-CONF-2).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import quote, urlsplit

from .. import rpc
from ..declarations import interfaces
from ..jcs import canonicalize
from ..projection import Interview
from ..spec import (
    EXTENSIONS_HEADER,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    RPC_METHOD_NOT_FOUND,
    RPC_VERSION_NOT_SUPPORTED,
    VERSION_HEADER,
)

Level = Literal["draft", "profile"]
Binding = Literal["JSONRPC", "HTTP+JSON"]
LEVELS: Final = ("draft", "profile")

OMIT: Final = object()  # params left out of the request
SKILL: Final = "\x00skill"  # where the chosen selector goes

# How a request activates the interview (PROFILE §3.2): the header fields sent.
ACTIVATIONS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "current": ((EXTENSIONS_HEADER, INTERVIEW_URI),),
    "legacy": ((LEGACY_EXTENSIONS_HEADER, INTERVIEW_URI),),
    "listed": ((EXTENSIONS_HEADER, f"urn:example:other , {INTERVIEW_URI}\t,urn:x"),),
    "none": (),
    "other-extension": ((EXTENSIONS_HEADER, "urn:example:other"),),
    "trailing-slash": ((EXTENSIONS_HEADER, INTERVIEW_URI + "/"),),
    "upper-case": ((EXTENSIONS_HEADER, INTERVIEW_URI.upper()),),
    "with-parameter": ((EXTENSIONS_HEADER, INTERVIEW_URI + ";v=1"),),
}


@dataclass(frozen=True, slots=True)
class Template:
    """One call of the list, before a card gives it a selector and an interface."""

    id: str
    rule: str
    level: Level
    binding: Binding
    method: str  # the JSON-RPC method, or the segment after /interview/ (HTTP+JSON)
    params: Any = OMIT  # JSON-RPC params; SKILL marks the selector's place
    query: str | None = None  # HTTP+JSON raw query; "{skill}" marks the selector's place
    selector: str | None = None  # how the skill is chosen (see :func:`choose`)
    activation: str = "current"
    version: str | None = "interface"  # A2A-Version: the interface's, none, or this text
    batch: bool = False
    request_id: Any = 1
    needs: str | None = None  # "no-terms": only on a card without a terms entry


@dataclass(frozen=True, slots=True)
class Expect:
    """The response a call must get: HTTP status, the activation echo (the names of the
    response header fields carrying the URI, PROFILE §3.2), and the body's exact bytes,
    or only the JSON-RPC error code where the bytes are the host's (PROFILE §3.3,
    §3.10). ``body_level`` is the level of the exact-bytes comparison: for an answer,
    which members are projected is the profile's choice (PROFILE §4.3), while every
    projection being right is the draft's (interview §5 rule 2)."""

    status: int
    echo: tuple[str, ...]
    body: bytes | None = None
    error_code: int | None = None
    body_level: Level = "draft"
    content_type: str | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A template made concrete for one card."""

    template: Template
    url: str  # the interface URL the request goes to (path, plus /interview/q for REST)
    http_method: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    query: str
    skill: str | None
    expect: Expect = field(compare=False)
    index: int = 0  # the n-th call of a template with several selectors

    @property
    def id(self) -> str:
        return self.template.id + (f"/{self.index}" if self.index else "")

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"


def _t(*args: Any, **kwargs: Any) -> Template:
    return Template(*args, **kwargs)


D, P = "draft", "profile"
RPC, REST = "JSONRPC", "HTTP+JSON"
_S = {"skill": SKILL}

TEMPLATES: Final[tuple[Template, ...]] = (
    # interview §4, §5: each question answered; projections right (draft), members chosen
    # as PROFILE §4.3 says (profile: the body's exact bytes).
    *(_t(f"answer-{q}", "interview §5 rule 2; PROFILE §4.3", D, RPC, f"interview/{q}")
      for q in ("identity", "capabilities", "usage", "terms", "refusals")),
    _t("answer-params-empty", "PROFILE §3.5", P, RPC, "interview/identity", params={}),
    # interview §4 rule 3, PROFILE §4.4: selectors match code point for code point.
    _t("usage-skill-each", "interview §4 rule 3; PROFILE §4.4", D, RPC, "interview/usage",
       params=_S, selector="each"),
    _t("terms-skill-each", "interview §4 rule 3; PROFILE §4.4", D, RPC, "interview/terms",
       params=_S, selector="each"),
    *(_t(f"{q}-skill-{kind}", "interview §4 rule 3; PROFILE §4.4", D, RPC, f"interview/{q}",
         params=_S, selector=kind)
      for q in ("usage", "terms")
      for kind in ("unmatched", "empty", "case-variant", "nfd-variant", "nfc-variant")),
    # interview §4 rule 4: no terms entry is an answer, declared false.
    _t("terms-no-entry", "interview §4 rule 4", D, RPC, "interview/terms", needs="no-terms"),
    _t("terms-no-entry-skill", "interview §4 rule 4; PROFILE §4.4", D, RPC, "interview/terms",
       params=_S, selector="first", needs="no-terms"),
    # interview §6 rule 1: the closure.
    *(_t(f"closure-{name}", "interview §6 rule 1; PROFILE §3.4", D, RPC, method)
      for name, method in (("unknown", "interview/negotiate"), ("empty", "interview/"),
                           ("case", "interview/Identity"), ("nested", "interview/usage/x"))),
    # interview §3 rule 2, PROFILE §3.2, §3.3: activation and the echo.
    *(_t(f"activation-{kind}", "interview §3 rule 2; PROFILE §3.2", D, RPC,
         "interview/identity", activation=kind) for kind in ("legacy", "listed")),
    # Sent with "params": {} as the verifier's probe is (PROFILE §7): a host that checks
    # params before the method name answers a call without params -32602.
    *(_t(f"inactive-{kind}", "interview §3 rule 2; PROFILE §3.3", D, RPC, "interview/identity",
         params={}, activation=kind)
      for kind in ("none", "other-extension", "trailing-slash", "upper-case", "with-parameter")),
    _t("inactive-closure", "interview §3 rule 2; PROFILE §3.3", D, RPC, "interview/negotiate",
       params={}, activation="none"),
    # PROFILE §3.5: params shapes.
    *(_t(f"params-{name}", "PROFILE §3.5", P, RPC, method, params=params)
      for name, method, params in (
          ("null", "interview/identity", None), ("array", "interview/identity", []),
          ("array-usage", "interview/usage", ["x"]),
          ("unknown-member", "interview/capabilities", {"verbose": True}),
          ("skill-number", "interview/usage", {"skill": 1}),
          ("skill-null", "interview/terms", {"skill": None}),
          ("skill-object", "interview/usage", {"skill": {"id": "x"}}),
          ("skill-and-more", "interview/usage", {"skill": "x", "more": 1}),
          ("skill-on-identity", "interview/identity", {"skill": "x"}),
          ("skill-on-capabilities", "interview/capabilities", {"skill": "x"}),
          ("skill-on-refusals", "interview/refusals", {"skill": "x"}),
      )),
    _t("params-string-id", "PROFILE §3.5", P, RPC, "interview/refusals", request_id="a-1"),
    _t("params-null-id", "PROFILE §3.5", P, RPC, "interview/refusals", request_id=None),
    # PROFILE §3.9: a batch naming the namespace is refused whole.
    _t("batch-one", "PROFILE §3.9", P, RPC, "interview/identity", batch=True),
    # PROFILE §3.10 (amended): version negotiation, never stricter than the host.
    _t("version-interface", "PROFILE §3.10", P, RPC, "interview/identity"),
    _t("version-absent", "PROFILE §3.10", P, RPC, "interview/identity", version=None),
    _t("version-1.0", "PROFILE §3.10", P, RPC, "interview/identity", version="1.0"),
    _t("version-unknown", "PROFILE §3.10", P, RPC, "interview/identity", version="9.9"),
    _t("version-rest-unknown", "PROFILE §3.10; PROFILE §3b", P, REST, "identity",
       version="9.9"),
    # PROFILE §3b: the HTTP+JSON mapping.
    *(_t(f"rest-{q}", "PROFILE §3b", P, REST, q)
      for q in ("identity", "capabilities", "usage", "terms", "refusals")),
    _t("rest-usage-skill", "PROFILE §3b; PROFILE §4.4", P, REST, "usage", query="skill={skill}",
       selector="each"),
    _t("rest-terms-unmatched", "PROFILE §3b; interview §4 rule 3", P, REST, "terms",
       query="skill={skill}", selector="unmatched"),
    _t("rest-closure", "PROFILE §3b; interview §6 rule 1", P, REST, "negotiate"),
    _t("rest-inactive", "PROFILE §3b; interview §3 rule 2", P, REST, "identity",
       activation="none"),
    _t("rest-unknown-query", "PROFILE §3b", P, REST, "usage", query="verbose=1"),
    _t("rest-repeated-skill", "PROFILE §3b", P, REST, "usage",
       query="skill={skill}&skill={skill}", selector="first"),
    _t("rest-skill-on-identity", "PROFILE §3b", P, REST, "identity", query="skill={skill}",
       selector="first"),
)  # fmt: skip


def _unmatched(ids: tuple[str, ...]) -> str:
    candidate = "no-such-skill"
    while candidate in ids:
        candidate += "-"
    return candidate


def choose(kind: str, ids: tuple[str, ...]) -> list[str]:
    """The selectors a template's ``selector`` kind names on a card with skill ``ids``:
    ``each`` (every distinct id, in card order), ``first``, ``unmatched`` (an id the card
    does not declare), ``empty`` (``""``), ``case-variant`` (the first id whose case-swapped
    spelling differs), ``nfd-variant``/``nfc-variant`` (the first id whose NFD/NFC spelling
    differs: ids that differ only by Unicode normalization). An empty list: the template
    does not apply to this card."""
    if kind == "each":
        return list(dict.fromkeys(ids))
    if kind == "first":
        return list(ids[:1])
    if kind == "unmatched":
        return [_unmatched(ids)]
    if kind == "empty":
        return [] if "" in ids else [""]
    if kind == "case-variant":
        return [s.swapcase() for s in ids if s.swapcase() != s][:1]
    form: Literal["NFD", "NFC"] = "NFD" if kind == "nfd-variant" else "NFC"
    return [unicodedata.normalize(form, s) for s in ids if unicodedata.normalize(form, s) != s][:1]


def _interface(card: Any, binding: str) -> tuple[str, str | None] | None:
    """The first interface of ``binding`` the card declares: (url, protocol version)."""
    for item in interfaces(card):
        if item.binding == binding:
            return item.url, item.protocol_version
    return None


def negotiates(card: Any) -> bool:
    """PROFILE §3.10 (amended): a host negotiates versions only when its card declares a
    1.0 interface; a 0.3 host never refuses a version."""
    for item in interfaces(card):
        version = rpc.parse_version(item.protocol_version or "")
        if version is not None and version[0] >= 1:
            return True
    return False


def version_refused(card: Any, binding: str, headers: tuple[tuple[str, str], ...]) -> bool:
    """PROFILE §3.10 (amended): an interview call is refused ``-32009`` exactly when the
    host would refuse an ordinary call: it negotiates, and the request's ``A2A-Version``
    (absent: 0.3) is none of the versions the card's ``binding`` interfaces declare."""
    if not negotiates(card):
        return False
    raw = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in headers]
    declared = rpc.declared_versions(card, binding)
    return not rpc.version_supported(rpc.requested_version(raw), declared)


def _echo(reply: rpc.Reply) -> tuple[str, ...]:
    return tuple(sorted(n for n, v in reply.headers if v == INTERVIEW_URI))


def _params(value: Any, skill: str | None) -> Any:
    if value is SKILL:
        return skill
    if isinstance(value, dict):
        return {k: _params(v, skill) for k, v in value.items()}
    return value


def _body(t: Template, skill: str | None) -> bytes:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": t.request_id, "method": t.method}
    if t.params is not OMIT:
        request["params"] = _params(t.params, skill)
    return canonicalize([request] if t.batch else request)


def _headers(t: Template, version: str | None) -> tuple[tuple[str, str], ...]:
    headers = ACTIVATIONS[t.activation]
    sent = t.version if t.version != "interface" else version
    if sent is not None:
        headers = (*headers, (VERSION_HEADER, sent))
    return headers


def expect(
    t: Template, card: Any, interview: Interview, *, headers: Any, body: bytes, question: str,
    query: str,
) -> Expect:  # fmt: skip
    """The response the profile expects, from the core (D-CONF-3)."""
    act = rpc.activation(headers)
    if t.binding == "JSONRPC":
        reply = rpc.jsonrpc(body, act, interview)
        if reply is None:  # PROFILE §3.3: the host's own method-not-found
            return Expect(200, (), error_code=RPC_METHOD_NOT_FOUND[0])
        if version_refused(card, "JSONRPC", headers):
            return Expect(200, _echo(reply), error_code=RPC_VERSION_NOT_SUPPORTED[0])
        level: Level = "profile" if b'"projections":' in reply.body else t.level
        if b'"declared":false' in reply.body:
            level = t.level  # interview §4 rule 4 fixes these bytes
        return Expect(reply.status, _echo(reply), reply.body, body_level=level)
    rest = rpc.rest("GET", question, query.encode("ascii"), act, interview)
    if rest is None:  # PROFILE §3b: the host's own 404
        return Expect(404, ())
    if version_refused(card, "HTTP+JSON", headers):
        return Expect(400, _echo(rest), content_type=rpc.JSON_CONTENT_TYPE)
    level = "profile" if b'"projections":' in rest.body else t.level
    return Expect(rest.status, _echo(rest), rest.body, body_level=level,
                  content_type=rpc.JSON_CONTENT_TYPE)  # fmt: skip


def calls(card: Any, interview: Interview, *, max_each: int = 16) -> Iterator[Call]:
    """Every call of :data:`TEMPLATES` that applies to ``card``, with its expectation.

    A template applies when the card has an interface of its binding and its selector
    kind finds a selector on the card; ``each`` is bounded to ``max_each`` ids."""
    terms_entries = b'"https://agentsow.com/extensions/a2a-terms/v1"' in canonicalize(card)
    for t in TEMPLATES:
        interface = _interface(card, t.binding)
        if interface is None or (t.needs == "no-terms" and terms_entries):
            continue
        url, version = interface
        version = None if version is None or version.startswith("0.") else version
        skills = choose(t.selector, interview.skill_ids)[:max_each] if t.selector else [None]
        for index, skill in enumerate(skills):
            headers = _headers(t, version)
            if t.binding == "JSONRPC":
                body, query, question, target = _body(t, skill), "", "", url
            else:
                body, question = b"", t.method
                query = (t.query or "").replace("{skill}", quote(skill or "", safe=""))
                target = url.rstrip("/") + "/interview/" + quote(t.method, safe="")
            e = expect(t, card, interview, headers=headers, body=body, question=question,
                       query=query)  # fmt: skip
            method = "POST" if t.binding == "JSONRPC" else "GET"
            yield Call(t, target, method, headers, body, query, skill, e, index)
