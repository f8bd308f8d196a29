"""The declared documents the checks' tests judge (the reference card on
``https://stonework.example`` and its proposals) and the honest answers projected from them."""

from __future__ import annotations

from typing import Any

from a2a_interview import reference
from a2a_interview.checks import (
    Declared,
)
from a2a_interview.strictjson import loads
from a2a_interview.terms import read_terms_entries, verify_proposal

ORIGIN = "https://stonework.example"


def declared(card: dict[str, Any] | None = None, files: dict[str, bytes] | None = None) -> Declared:
    card = card if card is not None else reference.signed_card(ORIGIN)
    files = files if files is not None else reference.proposals(ORIGIN)
    pairs = [
        (e, verify_proposal(e.digest, files.get(e.url or ""))) for e in read_terms_entries(card)
    ]
    return Declared.from_verdicts(card, pairs)


HONEST = declared()


def answer(question: str, skill: str | None = None, d: Declared = HONEST) -> dict[str, Any]:
    value = loads(d.interview.answer(question, skill))
    assert isinstance(value, dict)
    return value
