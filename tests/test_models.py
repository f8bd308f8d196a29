"""Wire models: exact members out, strict from_json in (interview §5, §6; PROFILE §4–§5)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_interview import jcs
from a2a_interview.errors import WireFormatError
from a2a_interview.models import Answer, Projection, Refusal, Source, result_from_json

DIGEST = "sha256:" + "ab" * 32
CARD_SOURCE = {"document": "card", "member": "/name"}
PROPOSAL_SOURCE = {"document": "proposal", "url": "https://a.example/t", "digest": DIGEST,
                   "member": "/price"}  # fmt: skip


def answer(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "question": "identity",
        "declared": True,
        "projections": [{"source": CARD_SOURCE, "value": "Stonework"}],
    }
    value.update(changes)
    return value


def test_round_trips_are_exact() -> None:
    for value in (answer(), answer(question="terms", projections=[
        {"source": PROPOSAL_SOURCE, "value": {"currency": "XCR"}}])):  # fmt: skip
        assert Answer.from_json(value).to_json() == value
    refusal = {"refused": True, "reason": "out_of_scope", "detail": "no declared skill matches",
               "declared_skills": ["a", "b"]}  # fmt: skip
    assert Refusal.from_json(refusal).to_json() == refusal
    assert Refusal(("a", "b")).to_bytes() == jcs.canonicalize(refusal)


@pytest.mark.parametrize(
    "bad",
    [
        answer(extra="commentary"),  # interview §5 rule 3: no free-text member
        {k: v for k, v in answer().items() if k != "declared"},
        answer(question="weather"),
        answer(declared="yes"),
        answer(declared=False),  # declared:false is a terms answer only (PROFILE §4.1)
        answer(question="terms", declared=False),  # ... and only with no projections
        answer(projections={}),
        answer(projections=[{"source": CARD_SOURCE}]),
        answer(projections=[{"source": CARD_SOURCE, "value": 1, "note": "x"}]),
        answer(projections=[{"source": {**CARD_SOURCE, "url": "u"}, "value": 1}]),
        answer(projections=[{"source": {"document": "memo", "member": "/x"}, "value": 1}]),
        answer(projections=[{"source": {**PROPOSAL_SOURCE, "digest": "sha256:AB"}, "value": 1}]),
        answer(projections=[{"source": {**PROPOSAL_SOURCE, "url": 7}, "value": 1}]),
        answer(projections=[{"source": {"document": "card", "member": "name"}, "value": 1}]),
        answer(projections=[{"source": {"document": "card", "member": "/~2"}, "value": 1}]),
        [],
        "answer",
    ],
)
def test_answer_from_json_rejects_anything_else(bad: Any) -> None:
    with pytest.raises(WireFormatError):
        result_from_json(bad)


@pytest.mark.parametrize(
    "bad",
    [
        {"refused": True, "reason": "out_of_scope", "detail": "x"},
        {"refused": False, "reason": "out_of_scope", "detail": "x", "declared_skills": []},
        {"refused": True, "reason": "because", "detail": "x", "declared_skills": []},
        # A peer's wire error, never a TypeError (unhashable reason values).
        {"refused": True, "reason": ["out_of_scope"], "detail": "x", "declared_skills": []},
        {"refused": True, "reason": {}, "detail": "x", "declared_skills": []},
        {"refused": True, "reason": "out_of_scope", "detail": 1, "declared_skills": []},
        {"refused": True, "reason": "out_of_scope", "detail": "x", "declared_skills": [1]},
        {
            "refused": True,
            "reason": "out_of_scope",
            "detail": "x",
            "declared_skills": [],
            "hint": "ask me anything",
        },
    ],
)
def test_refusal_from_json_rejects_anything_else(bad: Any) -> None:
    with pytest.raises(WireFormatError):
        Refusal.from_json(bad)


def test_sources() -> None:
    assert Source.from_json(CARD_SOURCE) == Source("card", "/name")
    assert Source.from_json(PROPOSAL_SOURCE).to_json() == PROPOSAL_SOURCE
    assert Projection(Source("card", "/x"), None).to_json() == {
        "source": {"document": "card", "member": "/x"}, "value": None}  # fmt: skip
