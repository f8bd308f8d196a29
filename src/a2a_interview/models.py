"""Wire models: ``Source``, ``Projection``, ``Answer``, ``Refusal`` (interview §5, §6).

Each is a small frozen value with ``to_json()`` emitting exactly the spec's members and a
strict ``from_json()`` that rejects anything else, so the verifier can read a peer's
result with the same code the server writes it with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from . import pointer
from .errors import PointerSyntaxError, WireFormatError
from .jcs import canonicalize, is_digest
from .spec import QUESTIONS, REFUSAL_DETAIL, SPECS, Question, RefusalReason
from .strictjson import JSON

Document = Literal["card", "proposal"]


def _exact(value: Any, members: frozenset[str], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireFormatError(f"{what} is not an object")
    if set(value) != members:
        raise WireFormatError(f"{what} does not have exactly the members {sorted(members)}")
    return value


@dataclass(frozen=True, slots=True)
class Source:
    """Where a projected value comes from (interview §5 rule 1, PROFILE §4.2)."""

    document: Document
    member: str
    url: str | None = None
    digest: str | None = None

    def to_json(self) -> dict[str, JSON]:
        if self.document == "card":
            return {"document": "card", "member": self.member}
        return {
            "document": "proposal",
            "url": self.url,
            "digest": self.digest,
            "member": self.member,
        }

    @classmethod
    def from_json(cls, value: Any) -> Source:
        """Raises ``WireFormatError`` unless ``value`` is exactly a card or proposal source."""
        if isinstance(value, dict) and value.get("document") == "card":
            obj = _exact(value, frozenset({"document", "member"}), "a card source")
            url = digest = None
        else:
            obj = _exact(
                value, frozenset({"document", "url", "digest", "member"}), "a proposal source"
            )
            if obj["document"] != "proposal":
                raise WireFormatError("source.document is neither 'card' nor 'proposal'")
            url, digest = obj["url"], obj["digest"]
            if not isinstance(url, str):
                raise WireFormatError("source.url is not a string")
            if not is_digest(digest):
                raise WireFormatError("source.digest is not 'sha256:' and 64 lowercase hex")
        member = obj["member"]
        try:
            pointer.parse(member)
        except PointerSyntaxError:
            raise WireFormatError("source.member is not an RFC 6901 pointer") from None
        return cls(obj["document"], member, url, digest)


@dataclass(frozen=True, slots=True)
class Projection:
    """A value copied from a named member of a declared document (interview §5 rule 2)."""

    source: Source
    value: JSON

    def to_json(self) -> dict[str, JSON]:
        return {"source": self.source.to_json(), "value": self.value}

    @classmethod
    def from_json(cls, value: Any) -> Projection:
        obj = _exact(value, frozenset({"source", "value"}), "a projection")
        return cls(Source.from_json(obj["source"]), obj["value"])


@dataclass(frozen=True, slots=True)
class Answer:
    """An interview answer: the question and its projections (interview §5, PROFILE §4.1)."""

    question: Question
    declared: bool
    projections: tuple[Projection, ...]

    def to_json(self) -> dict[str, JSON]:
        return {
            "question": self.question,
            "declared": self.declared,
            "projections": [p.to_json() for p in self.projections],
        }

    def to_bytes(self) -> bytes:
        return canonicalize(self.to_json())

    @classmethod
    def from_json(cls, value: Any) -> Answer:
        """Raises ``WireFormatError`` unless ``value`` is exactly an answer.

        Beyond members and types: ``declared`` is ``false`` only on an answer with no
        projections to a question that projects proposals, terms (PROFILE §4.1).
        """
        obj = _exact(value, frozenset({"question", "declared", "projections"}), "an answer")
        question, declared, projections = obj["question"], obj["declared"], obj["projections"]
        if question not in SPECS:
            raise WireFormatError(f"answer.question is not one of {', '.join(QUESTIONS)}")
        if not isinstance(declared, bool):
            raise WireFormatError("answer.declared is not a boolean")
        if not isinstance(projections, list):
            raise WireFormatError("answer.projections is not an array")
        if not declared and (SPECS[question].document != "proposal" or projections):
            raise WireFormatError("declared:false is only a terms answer with no projections")
        return cls(question, declared, tuple(Projection.from_json(p) for p in projections))


@dataclass(frozen=True, slots=True)
class Refusal:
    """The standard refusal (interview §6, PROFILE §5)."""

    declared_skills: tuple[str, ...]
    reason: RefusalReason = RefusalReason.OUT_OF_SCOPE
    detail: str = REFUSAL_DETAIL
    refused: Literal[True] = True

    def to_json(self) -> dict[str, JSON]:
        return {
            "refused": True,
            "reason": str(self.reason),
            "detail": self.detail,
            "declared_skills": list(self.declared_skills),
        }

    def to_bytes(self) -> bytes:
        return canonicalize(self.to_json())

    @classmethod
    def from_json(cls, value: Any) -> Refusal:
        """Raises ``WireFormatError`` unless ``value`` has exactly the refusal's members."""
        obj = _exact(
            value, frozenset({"refused", "reason", "detail", "declared_skills"}), "a refusal"
        )
        if obj["refused"] is not True:
            raise WireFormatError("refusal.refused is not true")
        reason = obj["reason"]
        # A peer's reason may be any JSON value; a list or object is not hashable.
        if not isinstance(reason, str) or reason not in set(RefusalReason):
            raise WireFormatError("refusal.reason is not in the closed set")
        if not isinstance(obj["detail"], str):
            raise WireFormatError("refusal.detail is not a string")
        skills = obj["declared_skills"]
        if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
            raise WireFormatError("refusal.declared_skills is not an array of strings")
        return cls(tuple(skills), RefusalReason(reason), obj["detail"])


def result_from_json(value: Any) -> Answer | Refusal:
    """Read a JSON-RPC ``result`` as an answer or a refusal. Raises ``WireFormatError``."""
    if isinstance(value, dict) and "refused" in value:
        return Refusal.from_json(value)
    return Answer.from_json(value)
