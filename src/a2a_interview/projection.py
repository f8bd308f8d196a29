"""The projection engine: declared documents in, every possible answer's bytes out.

:class:`Interview` is built once from the card as served and the verified proposals it
commits to. It holds the RFC 8785 bytes of every question's answer, of each selector question's
answer for every declared skill id, and of the standard refusal. Serving is a dict lookup.

Answers are assembled from per-projection canonical fragments: the JCS form of an array
is ``[`` + the JCS forms of its items joined by ``,`` + ``]``, so each member is
canonicalized once however many answers carry it, and building grows linearly with the
card. The members and their order are read from ``spec.REGISTRY`` (PROFILE §4.3).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .errors import DeclarationError
from .jcs import canonicalize, digest_bytes
from .models import Answer, Refusal, result_from_json
from .pointer import escape
from .spec import REGISTRY, Question
from .strictjson import JSON, JSONObject, loads
from .terms import TermsEntry

# PROFILE §4.4: the array a selector narrows.
_SELECTED = "skills"
# One step of a plan: top-level members (array None), or members of each array element.
_Step = tuple[str | None, tuple[str, ...]]


def _plan(members: Sequence[str]) -> tuple[_Step, ...]:
    """The registry's pointers grouped into steps: consecutive members under one array
    are taken element by element (``/skills/{i}/id`` then ``/skills/{i}/description``)."""
    steps: list[tuple[str | None, list[str]]] = []
    for member in members:
        parts = member.split("/")
        if len(parts) == 2:
            array, name = None, parts[1]
        elif len(parts) == 4 and parts[2] == "{i}":
            array, name = parts[1], parts[3]
        else:
            raise ValueError(f"no plan for the registry member {member!r}")
        if steps and steps[-1][0] == array:
            steps[-1][1].append(name)
        else:
            steps.append((array, [name]))
    return tuple((array, tuple(names)) for array, names in steps)


_PLANS: dict[str, tuple[_Step, ...]] = {
    q.name: _plan(q.members) for q in REGISTRY if q.document == "card"
}


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


class _Fragments:
    """The card's projections by pointer, each canonicalized once (PROFILE §4.3)."""

    __slots__ = ("_card", "_done")

    def __init__(self, card: JSONObject) -> None:
        self._card = card
        self._done: dict[str, bytes] = {}

    def _get(self, pointer: str, value: JSON) -> bytes:
        fragment = self._done.get(pointer)
        if fragment is None:
            fragment = self._done[pointer] = _card(pointer, value)
        return fragment

    def follow(self, plan: Sequence[_Step], selected: Sequence[int] | None) -> list[bytes]:
        """The fragments ``plan`` projects; ``selected`` narrows the skills."""
        card, out = self._card, []
        for array, names in plan:
            # PROFILE §4.3: only members present are projected; a present null is projected.
            if array is None:
                out += [self._get(f"/{n}", card[n]) for n in names if n in card]
                continue
            items = card.get(array)
            if not isinstance(items, list):
                continue
            indices = range(len(items)) if selected is None or array != _SELECTED else selected
            for i in indices:
                item = items[i]
                if isinstance(item, dict):
                    out += [self._get(f"/{array}/{i}/{n}", item[n]) for n in names if n in item]
        return out


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
    has no RFC 8785 form (never for documents read through ``strictjson.loads``).
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

        by_id: dict[str, list[int]] = {}
        for i, skill_id in enumerate(self.skill_ids):
            by_id.setdefault(skill_id, []).append(i)
        fragments = _Fragments(card)
        terms = [(p, list(self._terms(p))) for p in proposals]
        answers: dict[tuple[str, str | None], bytes] = {}
        for question in REGISTRY:
            name = question.name
            if question.document == "proposal":
                answers[name, None] = self._terms_answer(name, [fs for _, fs in terms])
                for skill_id in by_id if question.selector else ():
                    selected = [fs for _, fs in _select(terms, skill_id)]
                    answers[name, skill_id] = self._terms_answer(name, selected)
                continue
            plan = _PLANS[name]
            answers[name, None] = _answer(name, fragments.follow(plan, None))
            for skill_id, indices in by_id.items() if question.selector else ():
                answers[name, skill_id] = _answer(name, fragments.follow(plan, indices))
        self._answers = answers

    @staticmethod
    def _terms(proposal: CommittedProposal) -> Iterator[bytes]:
        entry = proposal.entry
        source = {"document": "proposal", "url": entry.url, "digest": entry.digest}
        # PROFILE §4.3: one projection per top-level member, members in JCS order.
        for name in sorted(proposal.document, key=lambda k: k.encode("utf-16-be")):
            member = {**source, "member": "/" + escape(name)}
            yield _fragment(member, proposal.document[name])

    @staticmethod
    def _terms_answer(question: str, selected: list[list[bytes]]) -> bytes:
        if not selected:
            return _answer(question, [], declared=False)  # interview §4 rule 4
        return _answer(question, [f for fs in selected for f in fs])

    def answer(self, question: str, skill: str | None = None) -> bytes:
        """The JCS bytes of the answer to ``question`` (without ``interview/``).

        Returns the standard refusal's bytes for a question outside ``spec.QUESTIONS`` and
        for a selector that matches no declared skill id exactly (interview §6, PROFILE
        §4.4). Callers check parameter shapes first: ``skill`` belongs to the questions in
        ``spec.SELECTOR_QUESTIONS`` only.
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
