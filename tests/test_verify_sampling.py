"""A default run samples (docs/decisions.md D-VERIFY-63, D-VERIFY-64, D-RECORD-25, D-CLI-30).

The draft's procedure is cheap (interview §8), so a default ``verify`` asks each binding
on one interface and each selector question with k skill ids, drawn from an injectable
source: its call count does not grow with the card's skills or interfaces. A lie under
one selector, or on one interface of a binding, is caught exactly when the draw holds
it (k/n, 1/m per run); ``thorough`` always catches it. Every count below is computed
from the question registry (``spec.QUESTIONS``), never written as a number.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from a2a_interview import reference
from a2a_interview.checks import Binding, Interface
from a2a_interview.cli import main
from a2a_interview.record import schema
from a2a_interview.report import render_report
from a2a_interview.spec import QUESTIONS, SELECTOR_QUESTIONS, SELECTORS_PER_QUESTION
from a2a_interview.verifier import verify
from a2a_interview.verifier.sampling import (
    SELECTING,
    Asked,
    Sampler,
    repeat_probability,
)
from agents import JSONRPC_PATH, REST_PATH, Call, honest, rewrite_results
from support.servers import closed_port_url, serve
from support.verify import REPEATS, SECOND, expected_calls, grown

pytestmark = pytest.mark.anyio
SCHEMA = jsonschema.Draft202012Validator(schema())
K = SELECTORS_PER_QUESTION


def agent(skills: int, interfaces: int = 3, *, lie: Callable[[Call], bool] | None = None,
          dead: str | None = None) -> Callable[[str], Any]:  # fmt: skip
    """The honest agent grown; with ``lie``, the ``usage`` answers of the calls it names
    say ``/defaultOutputModes`` is ``text/html`` (a projection conflict)."""

    def edit(call: Call, result: Any) -> Any:
        if call.question == "usage" and lie is not None and lie(call):
            for projection in result.get("projections", []):
                if projection["source"]["member"] == "/defaultOutputModes":
                    projection["value"] = ["text/html"]
        return result

    def factory(origin: str) -> Any:
        edited = grown(skills, interfaces, dead)
        return rewrite_results(honest(origin, edit_card=edited, self_check=False), edit)

    return factory


async def run(factory: Callable[[str], Any], **options: Any) -> dict[str, Any]:
    options.setdefault("churn_delay", 0)
    options.setdefault("max_skills", None)
    with serve(factory) as origin:
        document: dict[str, Any] = (await verify(origin, **options)).to_json()
    SCHEMA.validate(document)
    return document


def per_binding(calls: list[dict[str, Any]]) -> dict[str, int]:
    return dict(Counter(c["binding"] for c in calls))


def lied(document: dict[str, Any]) -> bool:
    """The lie was caught in both runs (non_conformant under projection)."""
    if document["outcome"] != "non_conformant":
        return False
    return all(
        any(c["check"] == "projection" and c["question"] == "usage" for c in r["conflicts"])
        for r in document["runs"]
    )


# --- what a run costs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("skills", "interfaces"), [(2, 1), (2, 2), (2, 3), (3, 2), (100, 1), (100, 3)]
)
async def test_a_default_run_makes_as_many_calls_whatever_the_card(
    skills: int, interfaces: int
) -> None:
    """D-VERIFY-63, D-VERIFY-72: a default run's interview calls do not grow with the
    skills or the interfaces: each binding on one interface, k skill ids per selector
    question, each question once, and on the drawn binding the five and one selector ask
    twice. So a binding costs ``1 + (5 + 2k) + 2`` calls, and the drawn one six more."""
    document = await run(agent(skills, interfaces), rng=random.Random(skills))
    assert document["outcome"] == "consistent"
    (only,) = document["runs"]
    bindings = 1 if interfaces == 1 else 2
    assert len(only["calls"]) == expected_calls(K, bindings, 0, thorough=False)
    once = 1 + len(QUESTIONS) + len(SELECTOR_QUESTIONS) * K + 2
    counts = sorted(per_binding(only["calls"]).values())
    assert counts == [once] * (bindings - 1) + [once + REPEATS], counts


@pytest.mark.parametrize(("skills", "interfaces"), [(2, 3), (100, 3)])
async def test_a_thorough_run_asks_every_skill_on_every_interface(
    skills: int, interfaces: int
) -> None:
    """D-VERIFY-63: ``thorough`` keeps the exhaustive run of PROFILE §7."""
    document = await run(agent(skills, interfaces), thorough=True)
    assert document["outcome"] == "consistent"
    (only,) = document["runs"]
    assert only["sampling"] == {"mode": "thorough"}
    assert len(only["calls"]) == expected_calls(skills, 2, interfaces - 1, thorough=True)


async def test_the_record_says_what_was_sampled_and_it_is_what_was_asked() -> None:
    """D-RECORD-25: ``runs[i].sampling`` names the interface asked of each binding, how
    many the card declares, and the skill ids asked per selector question; the calls
    made are exactly those."""
    document = await run(agent(6, 3), rng=random.Random(1))
    (only,) = document["runs"]
    sampling = only["sampling"]
    assert sampling["mode"] == "sampled"
    assert sampling["selectors_per_question"] == K and sampling["skills"] == 6
    declared = {i["url"]: i["protocolBinding"] for i in _card(document)["supportedInterfaces"]}
    chosen = {i["binding"]: i for i in sampling["interfaces"]}
    assert {b: i["of"] for b, i in chosen.items()} == {"JSONRPC": 2, "HTTP+JSON": 1}
    assert all(declared[i["interface"]] == b for b, i in chosen.items())
    assert {c["interface"] for c in only["calls"]} == {i["interface"] for i in chosen.values()}
    skill_ids = [s["id"] for s in _card(document)["skills"]]
    for question in SELECTOR_QUESTIONS:
        ids = sampling["selectors"][question]
        assert len(ids) == K and set(ids) <= set(skill_ids)
        asked = {
            c["params"]["skill"]
            for c in only["calls"]
            if c["method"] == "interview/" + question
            and (c["params"] or {}).get("skill") in skill_ids
        }
        assert asked == set(ids)
    # D-VERIFY-72: the asks made twice, on one interface interviewed: each question without
    # a selector and one selector ask; every other ask once on each interface.
    twice = sampling["asked_twice"]
    assert len(twice) == REPEATS
    (where,) = {t["interface"] for t in twice}
    assert where in {i["interface"] for i in chosen.values()}
    assert {t["question"] for t in twice if t["skill"] is None} == set(QUESTIONS)
    assert len([t for t in twice if t["skill"] is not None]) == 1
    made = Counter(
        (c["interface"], c["method"], (c["params"] or {}).get("skill"))
        for c in only["calls"]
        if c["activated"] and c["method"] != "interview/bogus"
    )
    for ask in twice:
        assert made.pop((where, "interview/" + ask["question"], ask["skill"])) == 2
    closure = [key for key in made if key[2] is not None and key[2] not in skill_ids]
    assert len(closure) == len(chosen)  # the closure selector's, once a binding
    assert set(made.values()) == {1}
    report = render_report(document)
    assert f"usage with {K} of 6 skill selectors" in report
    assert "JSONRPC on 1 of 2 interfaces" in report
    assert f"{REPEATS} asks made twice" in report


def _card(document: dict[str, Any]) -> dict[str, Any]:
    """The card ``agent(6, 3)`` served at the record's origin."""
    origin = document["agent"]["url"]
    card = reference.unsigned_card(origin)
    card["supportedInterfaces"] = [{"url": origin + JSONRPC_PATH}]
    edited: dict[str, Any] = grown(6, 3)(card)
    return edited


def test_an_older_record_without_sampling_reads_as_before(tmp_path: Path) -> None:
    """D-RECORD-25: a record without ``runs[i].sampling`` (before D-VERIFY-63) still
    validates, shows and verifies; the report has no sampling line."""
    import anyio

    document = anyio.run(lambda: run(agent(2, 2), thorough=True))
    for item in document["runs"]:
        del item["sampling"]
    SCHEMA.validate(document)
    assert "Sampled" not in render_report(document)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document))
    assert main(["record", "show", str(path)]) == 0
    assert main(["record", "verify", str(path)]) == 1  # unsigned: a claim, read fine


# --- the draw ---------------------------------------------------------------------------


def test_the_default_source_is_the_system_s_and_a_seed_draws_the_same() -> None:
    """D-VERIFY-63: ``random.SystemRandom`` unless a source is given; a seeded source
    draws the same, another seed may draw otherwise."""
    assert isinstance(Sampler(None, K, thorough=False).rng, random.SystemRandom)
    skills = [f"s{n}" for n in range(10)]

    def draw(seed: int) -> list[str]:
        sampler = Sampler(random.Random(seed), K, thorough=False)
        return sampler.selectors("usage", skills, None, Asked(False, K))

    assert draw(3) == draw(3)
    assert len({tuple(draw(seed)) for seed in range(10)}) > 1


def test_each_skill_is_drawn_with_probability_k_over_n() -> None:
    """D-VERIFY-63: the stated probability: each of n skill ids is asked with
    probability k/n per selector question per run (seeded, 4,000 draws, within 0.03)."""
    skills = [f"s{n}" for n in range(5)]
    rng = random.Random(45)
    seen: Counter[str] = Counter()
    draws = 4000
    for _ in range(draws):
        sampler = Sampler(rng, K, thorough=False)
        seen.update(sampler.selectors("terms", skills, None, Asked(False, K)))
    for skill in skills:
        assert abs(seen[skill] / draws - K / len(skills)) < 0.03, seen


def test_a_draw_keeps_what_it_drew_while_the_skills_hold_it() -> None:
    """D-VERIFY-64: the re-run (and every interface) asks the ids drawn first, as far as
    the card still declares them; an id gone is replaced by a new draw."""
    sampler = Sampler(random.Random(7), K, thorough=False)
    skills = [f"s{n}" for n in range(8)]
    first = sampler.selectors("usage", skills, None, Asked(False, K))
    assert sampler.selectors("usage", skills, None, Asked(False, K)) == first
    fewer = [s for s in skills if s != first[0]]
    again = sampler.selectors("usage", fewer, None, Asked(False, K))
    assert first[1] in again and first[0] not in again and len(again) == K
    assert sampler.selectors("usage", skills, 1, Asked(False, K)) == again[:1]  # max_skills


# --- what a sampled run catches ---------------------------------------------------------


async def test_a_lie_under_one_selector_is_caught_exactly_when_drawn() -> None:
    """D-VERIFY-63, D-TEST-45: an agent lying under one selector of n = 4 is caught by a
    sampled run exactly when the draw (read from the record) holds that selector, in
    both runs (the re-run asks the same, D-VERIFY-64), and by a thorough run always."""
    target = "skill-000"
    factory = agent(4, 2, lie=lambda c: c.skill == target)
    outcomes = []
    for seed in range(8):
        document = await run(factory, rng=random.Random(seed))
        drawn = target in document["runs"][0]["sampling"]["selectors"]["usage"]
        assert lied(document) == drawn, (seed, document["outcome"])
        if drawn:
            assert document["runs"][1]["sampling"] == document["runs"][0]["sampling"]
        else:
            assert document["outcome"] == "consistent"
        outcomes.append(drawn)
    assert set(outcomes) == {True, False}  # both happen: the test can fail either way
    assert lied(await run(factory, thorough=True))


async def test_a_lie_on_one_interface_of_a_binding_is_caught_exactly_when_drawn() -> None:
    """D-VERIFY-63: an agent lying on one of its two JSON-RPC interfaces is caught by a
    sampled run exactly when that interface is the one drawn, by a thorough run always."""
    factory = agent(2, 3, lie=lambda c: c.query == SECOND)
    outcomes = []
    for seed in range(6):
        document = await run(factory, rng=random.Random(seed))
        chosen = {
            i["binding"]: i["interface"] for i in document["runs"][0]["sampling"]["interfaces"]
        }
        drawn = chosen["JSONRPC"].endswith("?" + SECOND)
        assert lied(document) == drawn, (seed, document["outcome"])
        outcomes.append(drawn)
    assert set(outcomes) == {True, False}
    assert lied(await run(factory, thorough=True))


async def test_a_binding_whose_drawn_interface_cannot_be_asked_is_asked_on_another() -> None:
    """D-VERIFY-63: the binding's other interfaces are tried in the stead of a drawn one
    that cannot be interviewed (nothing listening: abandoned), so a sampled run never
    ends unreachable while the binding has an interface that answers."""
    dead = closed_port_url() + "/a2a/jsonrpc"
    abandoned = []
    for seed in range(6):
        document = await run(agent(2, 2, dead=dead), rng=random.Random(seed))
        assert document["outcome"] == "consistent", seed
        chosen = {i["binding"]: i for i in document["runs"][0]["sampling"]["interfaces"]}
        assert chosen["JSONRPC"]["interface"] != dead and chosen["JSONRPC"]["of"] == 2
        abandoned.append(any(a["reason"] == "abandoned" for a in document["advisories"]))
    assert set(abandoned) == {True, False}  # the dead one was drawn first, and was not


# --- the asks made twice (D-VERIFY-72) -----------------------------------------------------


def _interfaces(bindings: int) -> list[Interface]:
    kinds = [Binding.JSONRPC, Binding.HTTP_JSON][:bindings]
    return [Interface(f"https://a.example/{n}", b, "1.0", f"/i/{n}") for n, b in enumerate(kinds)]


def _draw_twice(rng: random.Random, bindings: int, skills: list[str]) -> set[tuple[str, Any]]:
    """One procedure's draw, as a run makes it: the interfaces, then per binding its
    selectors and the asks it makes twice; (binding, question, skill) of those asks."""
    sampler = Sampler(rng, K, thorough=False)
    asked = sampler.new_run()
    made = set()
    for (interface,) in sampler.interfaces(_interfaces(bindings), asked):
        chosen = {q: sampler.selectors(q, skills, None, asked) for q in SELECTING}
        asks: list[tuple[str, str | None]] = [(q, None) for q in QUESTIONS]
        asks += [(q, s) for s in skills for q in SELECTING if s in chosen[q]]
        made |= {(str(interface.binding), *ask) for ask in sampler.again(interface, asks)}
    assert len(made) == REPEATS
    return made


@pytest.mark.parametrize(("bindings", "skills"), [(1, 2), (2, 2), (2, 5)])
def test_the_ask_made_twice_is_drawn_with_the_stated_probability(
    bindings: int, skills: int
) -> None:
    """D-VERIFY-72: the per-run probability ``repeat_probability`` states (the one the
    docs give) is the sampler's: counted over 6,000 seeded draws, for a question without
    selector on one binding and on any, and for one selector question under one skill
    id, within 0.012 of the formula."""
    ids = [f"s{n}" for n in range(skills)]
    rng = random.Random(72)
    seen: Counter[tuple[str, Any]] = Counter()
    draws = 6000
    for _ in range(draws):
        seen.update(_draw_twice(rng, bindings, ids))
    one = seen["JSONRPC", "capabilities", None] / draws
    anywhere = sum(n for (_, q, s), n in seen.items() if (q, s) == ("capabilities", None))
    selector = seen["JSONRPC", "terms", ids[-1]] / draws
    assert abs(one - repeat_probability(bindings, skills)) < 0.012, one
    assert abs(anywhere / draws - repeat_probability(bindings, skills, every_binding=True)) < 0.012
    assert abs(selector - repeat_probability(bindings, skills, selector=True)) < 0.012, selector
    # Every binding can be drawn, and on it every question; a question without a
    # selector is made twice on every run, on the drawn binding.
    assert len({(b, q) for b, q, _ in seen}) == bindings * len(QUESTIONS)
    assert repeat_probability(bindings, skills, every_binding=True) == 1
    assert repeat_probability(bindings, skills) == 1 / bindings


def _changing(question: str, every: bool = False) -> Callable[[str], Any]:
    """The honest agent grown (4 skills, 2 bindings) whose ``question`` answers (every
    question's, with ``every``) change on each second ask of them on a binding: only the
    order of the projections (one more, for an answer of fewer than two), so only
    determinism can see it: a second ask's answer is compared, never judged."""

    def edit(call: Call, result: Any) -> Any:
        answered = isinstance(result, dict) and "projections" in result  # not a refusal
        if answered and (every or call.question == question) and call.n % 2 == 1:
            result = copy.deepcopy(result)
            projections = result["projections"]
            projections.reverse()
            if len(projections) < 2:
                projections.append({"changed": call.n})
        return result

    def factory(origin: str) -> Any:
        card = grown(4, 2)
        return rewrite_results(honest(origin, edit_card=card, self_check=False), edit)

    return factory


def changed(document: dict[str, Any]) -> bool:
    """Caught under determinism (changed_between_asks) in both runs: non_conformant."""
    return document["outcome"] == "non_conformant" and all(
        any(c["reason"] == "changed_between_asks" for c in r["conflicts"]) for r in document["runs"]
    )


async def test_a_second_ask_that_changes_one_answer_is_caught_on_every_draw() -> None:
    """D-VERIFY-72: an agent whose ``capabilities`` answer changes only on the second
    ask of it on a binding (each binding's first ask honest, so the bytes of the two
    bindings agree) is caught by every sampled run, in both runs (the re-run makes the
    same asks twice, D-VERIFY-64): its lie is confined to no selector, and every
    question without one is made twice on the drawn binding."""
    factory = _changing("capabilities")
    drawn = set()
    for seed in range(8):
        document = await run(factory, rng=random.Random(seed))
        assert changed(document), (seed, document["outcome"])
        assert document["runs"][1]["sampling"] == document["runs"][0]["sampling"]
        drawn |= {t["interface"] for t in document["runs"][0]["sampling"]["asked_twice"]}
    assert len(drawn) > 1  # both bindings were drawn, the catch held
    assert changed(await run(factory, thorough=True))


def _changing_under(skill: str) -> Callable[[str], Any]:
    """The honest agent grown (4 skills, 2 bindings) whose ``usage`` answer under
    ``skill`` changes on each second ask of it on a binding."""

    def edit(call: Call, result: Any) -> Any:
        if call.question == "usage" and call.skill == skill and call.n % 2:
            result = copy.deepcopy(result)
            if isinstance(result, dict) and "projections" in result:
                result["projections"].append({"changed": call.n})
        return result

    def factory(origin: str) -> Any:
        return rewrite_results(honest(origin, edit_card=grown(4, 2), self_check=False), edit)

    return factory


async def test_a_second_ask_that_changes_under_one_selector_is_caught_exactly_when_drawn() -> None:
    """D-VERIFY-72: a lie confined to the second ask of one selector (``usage`` under one
    skill id of four) is caught by a sampled run exactly when that ask is among those
    made twice (read from the record), and by a thorough run always."""
    outcomes = []
    for seed in range(40):
        document = await run(_changing_under("skill-000"), rng=random.Random(seed))
        twice = document["runs"][0]["sampling"]["asked_twice"]
        drawn = any(t["question"] == "usage" and t["skill"] == "skill-000" for t in twice)
        assert changed(document) == drawn, (seed, document["outcome"])
        if not drawn:
            assert document["outcome"] == "consistent"
        outcomes.append(drawn)
    assert set(outcomes) == {True, False}  # both happen: the test can fail either way
    assert changed(await run(_changing_under("skill-000"), thorough=True))


async def test_a_second_ask_that_changes_every_answer_is_caught_on_every_draw() -> None:
    """D-VERIFY-72: an agent whose every answer changes on its second ask on a binding
    is caught by every sampled run, whatever is drawn."""
    factory = _changing("", every=True)
    drawn = set()
    for seed in range(8):
        document = await run(factory, rng=random.Random(seed))
        assert changed(document), (seed, document["outcome"])
        twice = document["runs"][0]["sampling"]["asked_twice"]
        drawn.add(frozenset((t["interface"], t["question"], t["skill"]) for t in twice))
    assert len(drawn) > 1  # the draws differed, the catch did not


async def test_determinism_is_passed_only_when_a_second_ask_was_compared() -> None:
    """D-VERIFY-72, PROFILE §7: ``determinism`` passes only when some answer was
    compared with a second ask of it (the ask made twice, or another binding's). With
    its HTTP+JSON interface dead, the agent is interviewed on JSON-RPC alone: when the
    draw makes the ask twice on HTTP+JSON (none made: ``asked_twice`` empty), the check
    is ``skipped``, never ``passed``; on JSON-RPC, ``passed``."""
    dead = closed_port_url() + REST_PATH

    def card(card: dict[str, Any]) -> dict[str, Any]:
        card = grown(2, 2)(card)
        card["supportedInterfaces"][-1]["url"] = dead
        return card

    statuses = {}
    for seed in range(8):
        document = await run(lambda o: honest(o, edit_card=card, self_check=False),
                             rng=random.Random(seed))  # fmt: skip
        assert document["outcome"] == "consistent", seed
        twice = document["runs"][0]["sampling"]["asked_twice"]
        status = document["checks"]["determinism"]
        assert status == ("passed" if twice else "skipped"), (seed, twice, status)
        statuses[status] = seed
    assert set(statuses) == {"passed", "skipped"}  # both draws happen


# --- the command line -------------------------------------------------------------------


def test_verify_thorough_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """D-CLI-30: ``verify`` samples by default and ``--thorough`` asks everything; the
    report says a run was sampled."""
    with serve(agent(4, 2)) as origin:
        assert main(["verify", origin, "--json", "--churn-delay", "0"]) == 0
        sampled = json.loads(capsys.readouterr().out)
        assert main(["verify", origin, "--json", "--churn-delay", "0", "--thorough"]) == 0
        thorough = json.loads(capsys.readouterr().out)
        assert main(["verify", origin, "--churn-delay", "0"]) == 0
        report = capsys.readouterr().out
    assert sampled["runs"][0]["sampling"]["mode"] == "sampled"
    assert thorough["runs"][0]["sampling"] == {"mode": "thorough"}
    assert len(sampled["runs"][0]["calls"]) == expected_calls(K, 2, 0, thorough=False)
    assert len(thorough["runs"][0]["calls"]) == expected_calls(4, 2, 1, thorough=True)
    assert "Sampled (--thorough asks every skill selector on every interface)" in report


@pytest.mark.parametrize("command", [["verify-many"], ["worker"]])
def test_verify_many_and_the_worker_take_thorough(command: list[str]) -> None:
    """D-CLI-30: the option is the procedure group's, so ``verify-many`` and ``worker``
    (ledger jobs) map it to ``VerifyOptions.thorough`` as ``verify`` does."""
    from a2a_interview.cli import build_parser
    from a2a_interview.cli.options import verify_options

    parser = build_parser()
    extra = ["urls.txt", "--out", "x.jsonl"] if command == ["verify-many"] else []
    for flag, expected in (([], False), (["--thorough"], True)):
        args = parser.parse_args([*command, *extra, *flag])
        assert verify_options(args).thorough is expected


# --- what a sampled run still checks on every interface ---------------------------------


class ByVersion:
    """One agent for requests carrying ``A2A-Version: 1.0``, another for the rest."""

    def __init__(self, default: Any, v1: Any) -> None:
        self.default, self.v1 = default, v1

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        version = dict(scope.get("headers") or []).get(b"a2a-version", b"").strip()
        await (self.v1 if version == b"1.0" else self.default)(scope, receive, send)


async def test_every_interface_s_card_variant_is_checked_whatever_is_drawn() -> None:
    """PROFILE §7, D-VERIFY-63: the card variant of an interface not drawn is still
    fetched and its signature judged. Two JSON-RPC interfaces, 0.3 (the default card)
    and 1.0 (a card whose signature does not verify): non_conformant under
    card_signature whichever the draw interviews."""

    def interfaces(card: dict[str, Any]) -> dict[str, Any]:
        origin = card["supportedInterfaces"][0]["url"].split("/a2a/")[0]
        card["supportedInterfaces"] = [
            {"url": origin + JSONRPC_PATH, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": f"{origin}{JSONRPC_PATH}?{SECOND}", "protocolBinding": "JSONRPC",
             "protocolVersion": "1.0"},
            {"url": origin + REST_PATH, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
        ]  # fmt: skip
        return card

    def tamper(card: dict[str, Any]) -> dict[str, Any]:
        card["description"] += " (changed after signing)"
        return card

    def factory(origin: str) -> Any:
        return ByVersion(
            honest(origin, edit_card=interfaces),
            honest(origin, edit_card=interfaces, tamper=tamper),
        )

    drawn = set()
    for seed in range(6):
        document = await run(factory, rng=random.Random(seed))
        assert document["outcome"] == "non_conformant", seed
        (variant,) = document["agent"]["card_signature"]["variants"]
        assert (variant["version"], variant["status"]) == ("1.0", "invalid")
        assert all(
            any(c["check"] == "card_signature" for c in r["conflicts"]) for r in document["runs"]
        )
        chosen = {
            i["binding"]: i["interface"] for i in document["runs"][0]["sampling"]["interfaces"]
        }
        drawn.add(chosen["JSONRPC"].endswith("?" + SECOND))
    assert drawn == {True, False}  # the 1.0 interface was drawn, and was not
