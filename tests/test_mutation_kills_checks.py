"""checks.py under mutation (issue 17, bench/mutation.py): whole conflicts, not only
their reason codes, written out by hand from PROFILE §7 and interview §4 rule 4 (the
reference card's proposals have sixteen members each: test_projection.py pins that)."""

from __future__ import annotations

from typing import Any

from a2a_interview import reference
from a2a_interview.checks import Where, check_terms_declared
from a2a_interview.models import Answer
from a2a_interview.spec import TERMS_URI
from test_checks import HONEST, ORIGIN, answer, declared


def _terms(declared_: bool, projections: list[Any] | None = None) -> Answer:
    return Answer.from_json(
        {"question": "terms", "declared": declared_, "projections": projections or []}
    )


def _bare() -> Any:
    card = reference.unsigned_card(ORIGIN)
    exts = card["capabilities"]["extensions"]  # type: ignore[index]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != TERMS_URI]  # type: ignore[index]
    return declared(card)


def test_terms_hidden_whole() -> None:
    where = Where("u", "terms", "reconcile-statement")
    (conflict,) = check_terms_declared(_terms(False), HONEST, where)
    assert conflict.to_json() == {
        "check": "terms_declared", "reason": "terms_hidden", "interface": "u",
        "question": "terms", "skill": "reconcile-statement",
        "expected": {"declared": True, "projections": 16},
        "got": {"declared": False, "projections": 0},
        "detail": "declared:false while verified terms exist for this selection",
    }  # fmt: skip
    assert check_terms_declared(_terms(True), HONEST, where) == []  # declared: not hidden


def test_terms_fabricated_whole() -> None:
    bare = _bare()
    (conflict,) = check_terms_declared(Answer.from_json(answer("terms")), bare, Where("u", "terms"))
    assert conflict.to_json() == {
        "check": "terms_declared", "reason": "terms_fabricated", "interface": "u",
        "question": "terms", "expected": {"declared": False, "projections": []},
        "got": {"declared": True, "projections": 32},
        "detail": "terms answered although the card carries no terms entry",
    }  # fmt: skip
    (declared_only,) = check_terms_declared(_terms(True), bare, Where("u", "terms"))
    assert declared_only.to_json()["got"] == {"declared": True, "projections": 0}
    assert check_terms_declared(_terms(False), bare, Where("u", "terms")) == []


def test_terms_declared_judges_only_terms() -> None:
    identity = Answer.from_json(answer("identity"))
    assert check_terms_declared(identity, _bare(), Where("u", "identity")) == []
