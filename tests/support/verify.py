"""A verify run as the tests read it: run in process against a loopback agent, the record
checked against its schema, and what it advised and found."""

from __future__ import annotations

from typing import Any

import jsonschema

from a2a_interview.record import schema
from a2a_interview.spec import QUESTIONS, SELECTOR_QUESTIONS
from a2a_interview.verifier import verify

SCHEMA = jsonschema.Draft202012Validator(schema())


async def verified(url: str, **options: Any) -> dict[str, Any]:
    options.setdefault("churn_delay", 0)
    document = (await verify(url, **options)).to_json()
    SCHEMA.validate(document)
    return document


def expected_calls(skills: int, bindings: int, second: int, *, thorough: bool) -> int:
    """One run's interview calls, counted from the question registry (D-CORE-28).
    Thorough: on the first interface, the inactive probe, every question twice (each
    question, then each selector question per skill), the two closure probes; on each of
    ``second`` further interfaces of the same card variant, every question once
    ("Defaults that fit", D-CLI-8). Sampled (D-VERIFY-72): on each of ``bindings``
    bindings, the probe, every question once (``skills`` = k selector ids), the two
    closure probes; and on the drawn binding every question without a selector and one
    selector ask made a second time (:data:`REPEATS`)."""
    asks = len(QUESTIONS) + len(SELECTOR_QUESTIONS) * skills
    if thorough:
        return (1 + 2 * asks + 2) + second * (1 + asks + 2)
    assert bindings >= 1
    return bindings * (1 + asks + 2) + REPEATS


# The asks a sampled run makes twice (D-VERIFY-72): each question without a selector, and
# one selector ask.
REPEATS = len(QUESTIONS) + 1


def advised(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(a["code"], a["reason"]) for a in document["advisories"]}


def found(document: dict[str, Any], run: int = -1) -> set[tuple[str, str]]:
    return {(c["check"], c["reason"]) for c in document["runs"][run]["conflicts"]}
