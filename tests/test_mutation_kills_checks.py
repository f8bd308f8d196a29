"""checks.py under mutation (issue 17, bench/mutation.py): whole conflicts, not only
their reason codes, written out by hand from PROFILE §7 and interview §4 rule 4 (the
reference card's proposals have sixteen members each: test_projection.py pins that)."""

from __future__ import annotations

from typing import Any

from a2a_interview import reference
from a2a_interview.checks import (
    Where,
    check_card_signature,
    check_declaration,
    check_terms_declared,
)
from a2a_interview.models import Answer
from a2a_interview.spec import INTERVIEW_URI, TERMS_URI
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


CARD_SOURCE = {"document": "card", "member": "/signatures"}


def test_card_signature_conflicts_and_advisories_whole() -> None:
    # PROFILE §8: invalid is a conflict; unsigned and key_unavailable are advisories,
    # or conflicts when a signature is required; verified is nothing.
    assert check_card_signature("verified", require=True) == ([], [])
    (invalid,), none = check_card_signature("invalid", require=False, readings=["served"])
    assert none == []
    assert invalid.to_json() == {
        "check": "card_signature", "reason": "invalid", "source": CARD_SOURCE,
        "expected": {"status": "verified", "readings": ["served"]},
        "got": {"status": "invalid"}, "detail": "no signature on the card verifies",
    }  # fmt: skip
    for status in ("unsigned", "key_unavailable"):
        (required,), none = check_card_signature(status, require=True, readings=("a", "b"))
        assert none == []
        assert required.to_json() == {
            "check": "card_signature", "reason": status, "source": CARD_SOURCE,
            "expected": {"status": "verified", "readings": ["a", "b"]},
            "got": {"status": status}, "detail": "a verified card signature is required",
        }  # fmt: skip
    conflicts, (unsigned,) = check_card_signature("unsigned", require=False)
    assert conflicts == []
    assert unsigned.to_json() == {"code": "card_signature", "reason": "unsigned",
                                  "source": CARD_SOURCE,
                                  "detail": "the card carries no signature"}  # fmt: skip
    conflicts, (unavailable,) = check_card_signature("key_unavailable", require=False)
    assert conflicts == []
    assert unavailable.to_json() == {
        "code": "card_signature", "reason": "key_unavailable", "source": CARD_SOURCE,
        "detail": "no key was available to check the card's signature",
    }  # fmt: skip


def test_a_required_interview_is_a_conflict_whole() -> None:
    # interview §3 rule 1: required MUST NOT be true; false or absent is no conflict.
    card = reference.unsigned_card(ORIGIN)
    exts = card["capabilities"]["extensions"]  # type: ignore[index]
    index = next(i for i, e in enumerate(exts) if e["uri"] == INTERVIEW_URI)
    exts[index]["required"] = True
    (conflict,) = check_declaration(card)
    assert conflict.to_json() == {
        "check": "declaration", "reason": "required_true",
        "source": {"document": "card", "member": f"/capabilities/extensions/{index}/required"},
        "expected": False, "got": True,
        "detail": "the interview is offered, never imposed: required must not be true",
    }  # fmt: skip
    exts[index]["required"] = "true"  # not the JSON true
    assert check_declaration(card) == []
    exts.insert(0, {"uri": "https://other.example/ext", "required": True})
    assert check_declaration(card) == []
