"""Result records for the ledger page's tests, made by the real verifier.

Each record comes from ``verify`` run against a loopback agent from ``agents.py``
(the honest agent, or a rogue one mutation away), so the page is tested on what the
verifier really writes. ``build()`` returns them by role:

- ``consistent``: the honest agent, run and signed by a third party (evidence), and
  again by the agent itself (a self-run claim, later, so it is that agent's latest);
- ``evidence``: a second honest agent with only the signed third-party record;
- ``claim``: a third honest agent with only a self-run record;
- ``nonconformant``: a rogue whose identity answer misnames it and who refuses the
  capabilities question (a refusal where an answer was declared), signed third party;
- ``absent``: an agent whose card does not declare the interview (``not_offered``);
- ``hostile``: an agent whose card name and skill id are markup and whose answers
  differ, self-run under a runner name full of markup and invisible characters;
- ``hostile_url``: a self-run record naming a card URL made of markup;
- ``churn``: an agent that misnames itself on the first run only (outcome ``churn``);
- ``unreachable``: an agent whose port is closed (outcome ``unreachable``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from a2a_interview import nkeys
from a2a_interview.record import ResultRecord
from a2a_interview.spec import INTERVIEW_URI
from a2a_interview.strictjson import loads
from a2a_interview.verifier import verify
from agents import Call, honest, rewrite_results
from support.servers import closed_port_url, serve

RUNNER_SEED = nkeys.generate_seed()
RUNNER = "Example Audits"

# Hostile strings an agent controls. Each, if it ever ran as script, sets a marker the
# browser test looks for.
HOSTILE_NAME = '<script>window.__pwned = "name"</script>"\'&amp;\u202egnp.exe'
HOSTILE_SKILL = "<img src=x onerror=\"window.__pwned='skill'\">"
HOSTILE_GOT = '"><svg onload="window.__pwned=\'got\'"></svg>'
HOSTILE_RUNNER = "<script>window.__pwned='runner'</script>\u200b\u202eevil"
HOSTILE_URL = "http://127.0.0.1:9/\"><script>window.__pwned='url'</script>/agent-card.json"


@dataclass
class Records:
    """Record bytes in the order to add them, and each role's card URL."""

    bodies: list[bytes] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)


def _clock(start: datetime) -> Callable[[], datetime]:
    moments = iter(start + timedelta(seconds=i) for i in range(1000))
    return lambda: next(moments)


async def _run(factory: Callable[[str], Any], when: datetime, **options: Any) -> ResultRecord:
    options.setdefault("churn_delay", 0)
    with serve(factory) as origin:
        return await verify(origin, clock=_clock(when), **options)


def _json(record: ResultRecord) -> bytes:
    return json.dumps(record.to_json(), ensure_ascii=False).encode("utf-8")


def _no_interview(card: dict[str, Any]) -> dict[str, Any]:
    exts = card["capabilities"]["extensions"]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
    return card


def _hostile_card(card: dict[str, Any]) -> dict[str, Any]:
    card["name"] = HOSTILE_NAME
    card["skills"][0]["id"] = HOSTILE_SKILL
    return card


def _rogue(origin: str) -> Any:
    refusal = loads(honest("http://x").interview.refusal)

    def edit(call: Call, result: Any) -> Any:
        if call.question == "identity":
            result = copy.deepcopy(result)
            for projection in result["projections"]:
                if projection["source"]["member"] == "/name":
                    projection["value"] = "Stonewerk"
        if call.question == "capabilities":
            return refusal
        return result

    return rewrite_results(honest(origin), edit)


def _hostile(origin: str) -> Any:
    def edit(call: Call, result: Any) -> Any:
        if call.question in ("identity", "capabilities"):
            result = copy.deepcopy(result)
            for projection in result["projections"]:
                if projection["source"]["member"] in ("/name", "/skills/0/id"):
                    projection["value"] = HOSTILE_GOT
        return result

    return rewrite_results(honest(origin, edit_card=_hostile_card), edit)


def _churner(origin: str) -> Any:
    # The first run's identity asks (twice on the first interface, once on the second:
    # docs/decisions.md D-CLI-8, "Defaults that fit") get the wrong name; the re-run's get the
    # right one: a conflict that vanished.
    asked = [0]

    def edit(call: Call, result: Any) -> Any:
        if call.question != "identity":
            return result
        asked[0] += 1
        if asked[0] > 3:
            return result
        result = copy.deepcopy(result)
        for projection in result["projections"]:
            if projection["source"]["member"] == "/name":
                projection["value"] = "Stonework (mid-update)"
        return result

    return rewrite_results(honest(origin), edit)


async def _build() -> Records:
    out = Records()
    day = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    signed = {"party": "third_party", "name": RUNNER, "runner_seed": RUNNER_SEED}

    # One agent, two results: third-party evidence, then the agent's own claim.
    with serve(honest) as origin:
        first = await verify(origin, churn_delay=0, clock=_clock(day), **signed)
        again = await verify(
            origin, churn_delay=0, clock=_clock(day + timedelta(days=3)),
            party="self", name="Stonework",
        )  # fmt: skip
    out.bodies += [_json(first.signed(RUNNER_SEED)), _json(again)]
    out.urls["consistent"] = str(first.card_url)

    record = (await _run(honest, day + timedelta(days=1), **signed)).signed(RUNNER_SEED)
    out.bodies.append(_json(record))
    out.urls["evidence"] = str(record.card_url)

    record = await _run(honest, day + timedelta(days=1), party="self", name="Stonework")
    out.bodies.append(_json(record))
    out.urls["claim"] = str(record.card_url)

    record = (await _run(_rogue, day + timedelta(days=2), **signed)).signed(RUNNER_SEED)
    assert record.outcome == "non_conformant", record.outcome
    out.bodies.append(_json(record))
    out.urls["nonconformant"] = str(record.card_url)

    absent = (
        await _run(lambda o: honest(o, edit_card=_no_interview, self_check=False), day, **signed)
    ).signed(RUNNER_SEED)
    assert absent.outcome == "not_offered", absent.outcome
    out.bodies.append(_json(absent))
    out.urls["absent"] = str(absent.card_url)

    hostile = await _run(_hostile, day + timedelta(days=2), party="self", name=HOSTILE_RUNNER)
    assert hostile.outcome == "non_conformant", hostile.outcome
    out.bodies.append(_json(hostile))
    out.urls["hostile"] = str(hostile.card_url)

    record = (await _run(_churner, day + timedelta(days=2), **signed)).signed(RUNNER_SEED)
    assert record.outcome == "churn", record.outcome
    out.bodies.append(_json(record))
    out.urls["churn"] = str(record.card_url)

    gone = closed_port_url()
    record = await verify(gone, churn_delay=0, clock=_clock(day), **signed)
    assert record.outcome == "unreachable", record.outcome
    record = record.signed(RUNNER_SEED)
    out.bodies.append(_json(record))
    out.urls["unreachable"] = f"{gone}/.well-known/agent-card.json"

    # The same kind of self-run record, naming a card URL an agent could make up.
    renamed = replace(hostile, card_url=HOSTILE_URL)
    out.bodies.append(_json(renamed))
    out.urls["hostile_url"] = HOSTILE_URL
    return out


_CACHE: list[Records] = []


def build() -> Records:
    """The records (made once per test session: each is a real verifier run)."""
    if not _CACHE:
        _CACHE.append(anyio.run(_build))
    return _CACHE[0]
