"""The projection engine: declared documents in, every possible answer's bytes out.

:class:`Interview` is built once from the card as served and the verified proposals it
commits to. It holds the RFC 8785 bytes of the five answers, of ``usage`` and ``terms``
for every declared skill id, and of the standard refusal. Serving is a dict lookup.

Answers are assembled from per-projection canonical fragments: the JCS form of an array
is ``[`` + the JCS forms of its items joined by ``,`` + ``]``, so each member is
canonicalized once however many answers carry it, and building grows linearly with the
card (PROFILE §4.3 fixes the members and their order).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .errors import DeclarationError
from .ijson import JSON, JSONObject, loads
from .jcs import canonicalize, digest_bytes
from .models import Answer, Refusal, result_from_json
from .pointer import escape
from .spec import Question
from .terms import TermsEntry

# PROFILE §4.3: card members outside the skills, in answer order.
_USAGE_HEAD = ("supportedInterfaces", "url", "preferredTransport", "additionalInterfaces",
               "defaultInputModes", "defaultOutputModes")  # fmt: skip
_SKILL_USAGE = ("inputModes", "outputModes", "securityRequirements")
_SECURITY = ("securitySchemes", "securityRequirements", "security")


@dataclass(frozen=True, slots=True)
class CommittedProposal:
    """A proposal that verified against its terms entry (terms §3); only these project."""

    entry: TermsEntry
    document: JSONObject

    def __post_init__(self) -> None:
        if self.entry.url is None or self.entry.digest is None:
            raise DeclarationError("a committed proposal needs its entry's url and digest")


def _fragment(source: dict[str, Any], value: JSON) -> bytes:
    return canonicalize({"source": source, "value": value})


def _card(member: str, value: JSON) -> bytes:
    return _fragment({"document": "card", "member": member}, value)


def _members(doc: JSONObject, names: Sequence[str], base: str = "") -> Iterator[bytes]:
    # PROFILE §4.3: only members present are projected; a present null is projected.
    for name in names:
        if name in doc:
            yield _card(f"{base}/{name}", doc[name])


def _answer(question: str, fragments: Sequence[bytes], declared: bool = True) -> bytes:
    # The keys in RFC 8785 order: declared, projections, question.
    return b"".join((
        b'{"declared":', b"true" if declared else b"false",
        b',"projections":[', b",".join(fragments), b'],"question":"', question.encode(), b'"}',
    ))  # fmt: skip


def _skills(card: JSONObject) -> list[JSONObject]:
    skills = card.get("skills", [])
    if not isinstance(skills, list):
        raise DeclarationError("the card's skills member is not an array")
    for i, skill in enumerate(skills):
        if not isinstance(skill, dict) or not isinstance(skill.get("id"), str):
            raise DeclarationError(f"skill {i} of the card has no string id")
    return skills


class Interview:
    """Every answer an agent can give, precomputed (interview §4, PROFILE §4–§5).

    Raises ``DeclarationError`` when the card is not a JSON object or its ``skills`` is
    not an array of objects with string ids, and ``CanonicalizationError`` when a value
    has no RFC 8785 form (never for documents read through ``ijson.loads``).
    """

    __slots__ = ("_answers", "card", "card_bytes", "card_digest", "refusal", "skill_ids")

    def __init__(self, card: JSONObject, proposals: Sequence[CommittedProposal] = ()) -> None:
        if not isinstance(card, dict):
            raise DeclarationError("the card is not a JSON object")
        skills = _skills(card)
        self.card = card
        self.card_bytes = canonicalize(card)
        self.card_digest = digest_bytes(self.card_bytes)
        self.skill_ids: tuple[str, ...] = tuple(s["id"] for s in skills)
        self.refusal = Refusal(self.skill_ids).to_bytes()

        skill_ids = [_card(f"/skills/{i}/id", s["id"]) for i, s in enumerate(skills)]
        descriptions = [
            _card(f"/skills/{i}/description", s["description"]) if "description" in s else b""
            for i, s in enumerate(skills)
        ]
        security = list(_members(card, _SECURITY))
        usage_head = list(_members(card, _USAGE_HEAD))
        usage_skill = [
            list(_members(s, _SKILL_USAGE, f"/skills/{i}")) for i, s in enumerate(skills)
        ]

        answers: dict[tuple[str, str | None], bytes] = {}
        answers["identity", None] = _answer("identity", list(self._identity(card)))
        answers["capabilities", None] = _answer(
            "capabilities",
            [f for pair in zip(skill_ids, descriptions, strict=True) for f in pair if f],
        )
        answers["refusals", None] = _answer("refusals", skill_ids + security)
        answers["usage", None] = _answer(
            "usage", usage_head + [f for fs in usage_skill for f in fs] + security
        )

        by_id: dict[str, list[int]] = {}
        for i, skill_id in enumerate(self.skill_ids):
            by_id.setdefault(skill_id, []).append(i)
        for skill_id, indices in by_id.items():
            selected = [f for i in indices for f in usage_skill[i]]
            answers["usage", skill_id] = _answer("usage", usage_head + selected + security)

        terms = [(p, list(self._terms(p))) for p in proposals]
        answers["terms", None] = self._terms_answer([fs for _, fs in terms])
        for skill_id in by_id:
            answers["terms", skill_id] = self._terms_answer(
                [fs for p, fs in _select(terms, skill_id)]
            )
        self._answers = answers

    @staticmethod
    def _identity(card: JSONObject) -> Iterator[bytes]:
        yield from _members(card, ("name", "provider", "url"))
        interfaces = card.get("supportedInterfaces")
        if isinstance(interfaces, list):
            for i, interface in enumerate(interfaces):
                if isinstance(interface, dict) and "url" in interface:
                    yield _card(f"/supportedInterfaces/{i}/url", interface["url"])
        yield from _members(card, ("version", "signatures"))

    @staticmethod
    def _terms(proposal: CommittedProposal) -> Iterator[bytes]:
        entry = proposal.entry
        source = {"document": "proposal", "url": entry.url, "digest": entry.digest}
        # PROFILE §4.3: one projection per top-level member, members in JCS order.
        for name in sorted(proposal.document, key=lambda k: k.encode("utf-16-be")):
            member = {**source, "member": "/" + escape(name)}
            yield _fragment(member, proposal.document[name])

    @staticmethod
    def _terms_answer(selected: list[list[bytes]]) -> bytes:
        if not selected:
            return _answer("terms", [], declared=False)  # interview §4 rule 4
        return _answer("terms", [f for fs in selected for f in fs])

    def answer(self, question: str, skill: str | None = None) -> bytes:
        """The JCS bytes of the answer to ``question`` (without ``interview/``).

        Returns the standard refusal's bytes for a question outside the five and for a
        selector that matches no declared skill id exactly (interview §6, PROFILE §4.4).
        Callers check parameter shapes first: ``skill`` belongs to usage and terms only.
        """
        return self._answers.get((question, skill), self.refusal)

    def expected(self, question: Question, skill: str | None = None) -> Answer | Refusal:
        """The answer (or refusal) as a wire model, for verifiers and previews."""
        return result_from_json(loads(self.answer(question, skill)))

    def selectors(self) -> Iterator[tuple[Question, str | None]]:
        """Every (question, selector) pair that has an answer of its own."""
        for question, skill in self._answers:
            yield cast(Question, question), skill


def _select(
    terms: list[tuple[CommittedProposal, list[bytes]]], skill_id: str
) -> list[tuple[CommittedProposal, list[bytes]]]:
    """PROFILE §4.4: proposals for a matched skill, in card order."""
    direct = [t for t in terms if t[0].entry.offering == skill_id]
    if direct:
        return direct
    return [
        t for t in terms if t[0].entry.offering is None and skill_id in _offerings(t[0].document)
    ]


def _offerings(document: JSONObject) -> list[Any]:
    scope = document.get("scope")
    offerings = scope.get("offerings") if isinstance(scope, dict) else None
    return offerings if isinstance(offerings, list) else []
