"""A verify run as the tests read it: run in process against a loopback agent, the record
checked against its schema, and what it advised and found."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import jsonschema

from a2a_interview.record import schema
from a2a_interview.spec import QUESTIONS, SELECTOR_QUESTIONS
from a2a_interview.verifier import verify
from agents import JSONRPC_PATH, REST_PATH

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


SECOND = "v=2"  # the query naming the card's second JSON-RPC interface (the same route)


def grown(skills: int, interfaces: int = 3, dead: str | None = None) -> Callable[..., Any]:
    """A card edit: ``skills`` skills; ``interfaces`` interfaces, the first two JSON-RPC
    (the second at ``?v=2``), then HTTP+JSON; ``dead``: a JSON-RPC interface there."""

    def edit(card: dict[str, Any]) -> dict[str, Any]:
        model = card["skills"][0]
        card["skills"] = card["skills"][:skills]
        for n in range(skills - len(card["skills"])):
            skill = copy.deepcopy(model)
            skill["id"], skill["name"] = f"skill-{n:03}", f"Skill {n}"
            card["skills"].append(skill)
        origin = card["supportedInterfaces"][0]["url"].split("/a2a/")[0]
        urls = [("JSONRPC", origin + JSONRPC_PATH), ("JSONRPC", f"{origin}{JSONRPC_PATH}?{SECOND}")]
        urls = [*urls[: interfaces - 1], ("HTTP+JSON", origin + REST_PATH)]
        if dead is not None:
            urls.append(("JSONRPC", dead))
        card["supportedInterfaces"] = [
            {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
            for binding, url in urls
        ]
        return card

    return edit
