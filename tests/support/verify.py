"""A verify run as the tests read it: run in process against a loopback agent, the record
checked against its schema, and what it advised and found."""

from __future__ import annotations

from typing import Any

import jsonschema

from a2a_interview.record import schema
from a2a_interview.verifier import verify

SCHEMA = jsonschema.Draft202012Validator(schema())


async def verified(url: str, **options: Any) -> dict[str, Any]:
    options.setdefault("churn_delay", 0)
    document = (await verify(url, **options)).to_json()
    SCHEMA.validate(document)
    return document


def advised(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(a["code"], a["reason"]) for a in document["advisories"]}


def found(document: dict[str, Any], run: int = -1) -> set[tuple[str, str]]:
    return {(c["check"], c["reason"]) for c in document["runs"][run]["conflicts"]}
