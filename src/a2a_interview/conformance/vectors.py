"""The published serving vectors (``conformance/vectors/serving/*.json``): writing them
from fixed declarations, and reading them back.

Each file holds one set of declarations (the card's bytes, the proposals' bytes, the
terms entries read from the card) and every call of :data:`calls.TEMPLATES` that applies
to it: the request exactly as sent and the response exactly as expected. The format is
``conformance/schema/serving-vectors.schema.json``; docs/conformance.md describes it for
readers in any language. Pure: no I/O (D-CONF-5).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from .. import reference
from ..card import load_private_key, sign_card
from ..declarations import build, read_card
from ..spec import INTERVIEW_URI, TERMS_URI
from ..strictjson import loads
from ..terms import read_terms_entries
from .calls import Call, Expect, Level, calls

FORMAT: Final = "a2a-interview-conformance/serving/1"
# The interview draft the vectors follow (its changelog's latest entry) and the profile.
DRAFT: Final = {"title": "A2A Interview Extension", "version": "0.1.1-draft",
                "uri": INTERVIEW_URI}  # fmt: skip
PROFILE: Final = "a2a-interview implementation profile (docs/profile.md), PROFILE §3-§5"
ORIGIN: Final = "https://agent.example"


def _card_10() -> dict[str, Any]:
    card: dict[str, Any] = reference.unsigned_card(ORIGIN)
    card["skills"].append({
        "id": "Flag-Exceptions",
        "name": "Flag exceptions (summary)",
        "description": "Differs from flag-exceptions by case only: another skill.",
    })  # fmt: skip
    card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    card["skills"][0]["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
    return sign_card(card, key, kid=reference.CARD_KID, alg="EdDSA",
                     jku=ORIGIN + reference.JWKS_PATH)  # fmt: skip


def _card_03() -> dict[str, Any]:
    base = reference.unsigned_card(ORIGIN)
    return {
        "name": "Stonework (A2A 0.3 card)",
        "description": base["description"],
        "url": f"{ORIGIN}/a2a/jsonrpc",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": f"{ORIGIN}/a2a/jsonrpc", "transport": "JSONRPC"},
            {"url": f"{ORIGIN}/a2a/rest", "transport": "HTTP+JSON"},
        ],
        "protocolVersion": "0.3.0",
        "version": "1.4.0",
        "provider": base["provider"],
        "capabilities": base["capabilities"],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "security": [{"apiKey": []}],
        "securitySchemes": {"apiKey": {"type": "apiKey", "name": "X-Key", "in": "header"}},
        "skills": [
            base["skills"][0],
            {"id": "cafe\u0301-rapport", "name": "Café report",
             "description": "Its id is spelled in NFD (e + U+0301).",
             "inputModes": ["text/plain"]},
            {"id": "flag-exceptions", "name": "Flag exceptions", "tags": []},
        ],
    }  # fmt: skip


def _card_no_terms() -> dict[str, Any]:
    return {
        "name": "Echo without terms",
        "version": "0.1.0",
        "supportedInterfaces": [
            {"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": f"{ORIGIN}/api", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"extensions": [{"uri": INTERVIEW_URI, "required": False}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {"id": "echo", "name": "Echo", "description": "Says it back."},
            {"id": "\u65e5\u672c\u8a9e-\u30b8", "name": "Japanese", "description": None},
        ],
    }  # fmt: skip


# (name, description, card, proposals by url)
SETS: Final = (
    ("card-1.0", "An A2A 1.0 card (supportedInterfaces), signed, with terms entries, a "
     "non-ASCII skill id in NFC and two ids that differ only by case.", _card_10),
    ("card-0.3", "An A2A 0.3 card (url, additionalInterfaces, protocolVersion 0.3.0) "
     "with terms entries and a skill id in NFD: a host that does not negotiate versions.",
     _card_03),
    ("card-no-terms", "An A2A 1.0 card with no terms extension entry: terms answers "
     "declared false.", _card_no_terms),
)  # fmt: skip


def _text(data: bytes) -> str:
    return data.decode("utf-8")


def _call_json(call: Call) -> dict[str, Any]:
    t, e = call.template, call.expect
    return {
        "id": call.id,
        "rule": t.rule,
        "level": t.level,
        "binding": t.binding,
        "selector": {"kind": t.selector, "skill": call.skill} if t.selector else None,
        "request": {
            "method": call.http_method,
            "path": call.path,
            "query": call.query,
            "headers": [list(h) for h in call.headers],
            "body": _text(call.body),
        },
        "response": {
            "status": e.status,
            "echo": list(e.echo),
            "body": None if e.body is None else _text(e.body),
            "body_level": e.body_level,
            "error_code": e.error_code,
            "content_type": e.content_type,
        },
    }


def serving_vector(name: str, description: str, card_bytes: bytes,
                   files: dict[str, bytes]) -> dict[str, Any]:  # fmt: skip
    """One vector file's content for these declarations."""
    declarations = build(read_card(card_bytes), files)
    card = declarations.card
    entries = [
        {"member": e.member, "url": e.url, "digest": e.digest, "offering": e.offering}
        for e in read_terms_entries(card)
    ]
    return {
        "format": FORMAT,
        "draft": DRAFT,
        "profile": PROFILE,
        "name": name,
        "description": description,
        "declarations": {
            "card": _text(card_bytes),
            "proposals": [
                {"url": url, "text": _text(files[url])}
                for url in sorted(files)
                if any(e["url"] == url for e in entries)
            ],
            "terms_entries": entries,
        },
        "calls": [_call_json(c) for c in calls(card, declarations.interview)],
    }


def dump(value: Any) -> bytes:
    """The file bytes of a vector: two-space JSON, non-ASCII kept, one final newline."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def generate() -> dict[str, bytes]:
    """Every serving vector file, by file name (``conformance/vectors/serving/``)."""
    out = {}
    for name, description, make in SETS:
        card_bytes = dump(make())
        files = reference.proposals(ORIGIN) if TERMS_URI in card_bytes.decode() else {}
        out[f"{name}.json"] = dump(serving_vector(name, description, card_bytes, files))
    return out


@dataclass(frozen=True, slots=True)
class VectorCall:
    """One call of a vector file, as read."""

    id: str
    rule: str
    level: Level
    binding: str
    http_method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    expect: Expect


@dataclass(frozen=True, slots=True)
class Vector:
    """A vector file, as read: the declarations and the calls."""

    name: str
    card_bytes: bytes
    proposals: dict[str, bytes]
    calls: tuple[VectorCall, ...]

    @property
    def card(self) -> Any:
        return read_card(self.card_bytes)


def read_vector(data: bytes) -> Vector:
    """A vector file's content. Raises ``ValueError`` naming what is wrong."""
    try:
        doc = loads(data)
    except Exception as exc:
        raise ValueError(f"not strict I-JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    try:
        decl = doc["declarations"]
        proposals = {p["url"]: p["text"].encode() for p in decl["proposals"]}
        return Vector(doc["name"], decl["card"].encode(), proposals,
                      tuple(_read_call(c) for c in doc["calls"]))  # fmt: skip
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"a member is missing or malformed ({exc})") from None


def _read_call(c: dict[str, Any]) -> VectorCall:
    req, res = c["request"], c["response"]
    body = res["body"]
    expect = Expect(res["status"], tuple(res["echo"]),
                    None if body is None else body.encode(), res["error_code"],
                    res["body_level"], res["content_type"])  # fmt: skip
    return VectorCall(c["id"], c["rule"], c["level"], c["binding"], req["method"],
                      req["path"], req["query"], tuple((n, v) for n, v in req["headers"]),
                      req["body"].encode(), expect)  # fmt: skip


def proposals_by_entry(card: Any, proposals: dict[str, bytes]) -> dict[tuple[str, str], Any]:
    """The committed documents by (url, digest) of the card's terms entries."""
    out = {}
    for entry in read_terms_entries(card):
        if entry.url in proposals and entry.digest is not None:
            out[entry.url, entry.digest] = loads(proposals[entry.url])
    return out
