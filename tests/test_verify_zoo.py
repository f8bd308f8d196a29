"""The rogue zoo, over real loopback HTTP: every check of PROFILE §7 caught by code.

Each rogue is the honest agent (``agents.honest``) plus one mutation. Each test names
the check code and reason it must be caught under, and the outcome. The honest agent,
and the real a2a-sdk demo agent, must come out ``consistent`` with no conflict.

Every test runs in both modes (docs/decisions.md D-TEST-45, D-TEST-56): sampled, the
default run of D-VERIFY-63, under several seeded draws, and ``thorough``. No rogue here
lies under some selectors or some interfaces only, so each is caught in both modes on
every draw (answers that change only on the second ask of one question included: every
question without a selector is made twice on the drawn binding, D-VERIFY-72). The lies a
sampled run catches only by its draw are in ``tests/test_verify_sampling.py``.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import pytest

from a2a_interview import reference
from a2a_interview.checks import Check
from a2a_interview.jcs import canonicalize, digest
from a2a_interview.record import ResultRecord, schema
from a2a_interview.report import junit_xml, render_report
from a2a_interview.spec import (
    INTERVIEW_URI,
    SELECTORS_PER_QUESTION,
    TERMS_URI,
)
from a2a_interview.strictjson import loads
from a2a_interview.verifier import verify
from agents import Call, Reply, Wrap, honest, params_first, rewrite_results
from needs import module as need_module
from support import modes
from support.servers import closed_port_url, serve
from support.verify import advised, expected_calls, found

pytestmark = pytest.mark.anyio
SCHEMA = jsonschema.Draft202012Validator(schema())
RECONCILE = "reconcile-statement.sow.json"


# D-TEST-56: the default run under draws that differ in the binding and the selector ask made
# twice (D-VERIFY-72) and in the skill ids left out of each selector question.
SEEDS = (63, 2, 4, 6)
MODE: dict[str, Any] = {"thorough": False, "seed": SEEDS[0]}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    modes.parametrize(metafunc, SEEDS, "interview")  # D-TEST-56


@pytest.fixture(autouse=True)
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """D-TEST-45, D-TEST-56: each test in both modes, the default under several seeded
    draws; ``interview`` runs in the current one."""
    yield from modes.entered(request, MODE, SEEDS)


async def interview(factory: Callable[[str], Any], **options: Any) -> dict[str, Any]:
    """Serve ``factory`` on loopback, verify it in the current mode (a seeded draw when
    sampled), validate the record, return its JSON."""
    options.setdefault("churn_delay", 0)
    options.setdefault("thorough", MODE["thorough"])
    options.setdefault("rng", random.Random(MODE["seed"]))
    with serve(factory) as origin:
        record = await verify(origin, **options)
    assert isinstance(record, ResultRecord)
    document = record.to_json()
    SCHEMA.validate(document)
    return document


def caught(document: dict[str, Any], check: Check, reason: str) -> None:
    """The rogue is non_conformant, caught under ``check``/``reason`` in both runs."""
    assert document["outcome"] == "non_conformant", document["outcome"]
    assert len(document["runs"]) == 2
    for run in (0, 1):
        assert (check, reason) in found(document, run), found(document, run)
    assert document["checks"][check] == "failed"


def on_question(
    question: str, edit: Callable[[Any], Any], when: Callable[[Call], bool] = lambda c: True
) -> Callable[[Call, Any], Any]:
    def apply(call: Call, result: Any) -> Any:
        if call.question == question and when(call):
            return edit(copy.deepcopy(result))
        return result

    return apply


def set_member(member: str, value: Any) -> Callable[[Any], Any]:
    def edit(answer: Any) -> Any:
        for projection in answer["projections"]:
            if projection["source"]["member"] == member:
                projection["value"] = value
        return answer

    return edit


# --- the honest -----------------------------------------------------------------------


async def test_the_honest_agent_is_consistent() -> None:
    document = await interview(honest)
    assert document["outcome"] == "consistent"
    assert len(document["runs"]) == 1
    assert document["runs"][0]["conflicts"] == []
    assert set(document["checks"].values()) == {"passed"}
    assert document["agent"]["card_signature"]["status"] == "verified"
    assert document["agent"]["card_signature"]["key_source"] == "jku"
    assert [p["result"] for p in document["runs"][0]["proposals"]] == ["ok", "ok"]
    assert advised(document) == {("transport", "loopback_http")}
    # Both bindings were asked. Thorough: 1 probe + 2 x (the questions + each selector
    # question x 3 skills) + 2 closure probes on the first; on the second, of the same
    # card variant, each question once, its bytes compared with the first's
    # (docs/decisions.md D-CLI-8, "Defaults that fit").
    # Sampled (D-VERIFY-63, D-VERIFY-72): 2 of the 3 skills for each selector question,
    # each question once on each binding, and on the drawn one every question without a
    # selector and one selector ask made twice.
    skills = 3 if MODE["thorough"] else SELECTORS_PER_QUESTION
    calls = document["runs"][0]["calls"]
    assert len(calls) == expected_calls(skills, 2, 1, thorough=MODE["thorough"])
    assert {c["binding"] for c in calls} == {"JSONRPC", "HTTP+JSON"}
    mode = "thorough" if MODE["thorough"] else "sampled"
    assert document["runs"][0]["sampling"]["mode"] == mode


async def test_a_bounded_run_says_what_it_left_out() -> None:
    # A hostile card cannot make one run unbounded (docs/decisions.md D-CLI-6): what
    # the bounds leave out is an advisory, never a conflict and never silence.
    document = await interview(honest, max_skills=1, max_interfaces=1, thorough=True)
    assert document["outcome"] == "consistent"
    assert {("coverage", "selectors_not_asked"), ("coverage", "interfaces_not_asked")} <= (
        advised(document)
    )
    left = {a["reason"]: a["value"] for a in document["advisories"] if a["code"] == "coverage"}
    assert left == {"selectors_not_asked": 2, "interfaces_not_asked": 1}
    calls = document["runs"][0]["calls"]
    assert len(calls) == expected_calls(1, 1, 0, thorough=True)  # one interface, one skill


async def test_the_closure_selector_matches_no_skill_even_past_the_skill_bound() -> None:
    # PROFILE §7 closure_selector (interview §8 step 4): the probe's selector must match
    # none of the card's skills. It was chosen among the skills asked (max_skills), so a
    # skill left out by the bound could carry it: an honest agent answered it, and was
    # judged non_conformant.
    def edit(card: dict[str, Any]) -> dict[str, Any]:
        extra = copy.deepcopy(card["skills"][0])
        extra["id"] = "a2a-interview-probe:no-such-skill"
        card["skills"].append(extra)
        return card

    document = await interview(
        lambda o: honest(o, edit_card=edit, self_check=False), max_skills=1, max_interfaces=1
    )
    assert document["outcome"] == "consistent", found(document)


async def test_the_sdk_demo_agent_is_consistent() -> None:
    need_module("a2a.server", "the sdk extra (a2a-sdk)", "pip install -e '.[sdk]'")
    from a2a_interview.server import demo

    document = await interview(demo.build_app)
    assert document["outcome"] == "consistent", found(document)


async def test_a_pinned_jwks_verifies_and_is_recorded_as_pinned() -> None:
    keys = tuple(reference.jwks()["keys"])  # type: ignore[arg-type]
    document = await interview(honest, jwks=keys)
    assert document["agent"]["card_signature"]["key_source"] == "pinned"
    assert document["outcome"] == "consistent"


# --- projection -----------------------------------------------------------------------


async def test_a_wrong_value_is_a_projection_conflict() -> None:
    edit = on_question("identity", set_member("/name", "Stonewerk"))
    document = await interview(lambda o: rewrite_results(honest(o), edit))
    caught(document, Check.projection, "value_mismatch")
    conflict = next(c for c in document["runs"][1]["conflicts"] if c["check"] == "projection")
    assert conflict["source"] == {"document": "card", "member": "/name"}
    assert (conflict["expected"], conflict["got"]) == ("Stonework", "Stonewerk")


def _cite(url: str | None = None, digest_: str | None = None) -> Callable[[Any], Any]:
    def edit(answer: Any) -> Any:
        for projection in answer["projections"]:
            if projection["source"]["document"] == "proposal":
                if url is not None:
                    projection["source"]["url"] = url
                if digest_ is not None:
                    projection["source"]["digest"] = digest_
        return answer

    return edit


async def test_an_uncommitted_proposal_url_is_a_projection_conflict() -> None:
    def factory(origin: str) -> Any:
        edit = on_question("terms", _cite(url=origin + "/terms/other.sow.json"))
        return rewrite_results(honest(origin), edit)

    caught(await interview(factory), Check.projection, "uncommitted_source")


async def test_an_uncommitted_proposal_digest_is_a_projection_conflict() -> None:
    edit = on_question("terms", _cite(digest_="sha256:" + "ab" * 32))
    document = await interview(lambda o: rewrite_results(honest(o), edit))
    caught(document, Check.projection, "uncommitted_source")


async def test_a_member_that_resolves_nowhere_is_a_projection_conflict() -> None:
    def edit(answer: Any) -> Any:
        answer["projections"][0]["source"]["member"] = "/nickname"
        return answer

    document = await interview(lambda o: rewrite_results(honest(o), on_question("identity", edit)))
    caught(document, Check.projection, "member_unresolved")


# --- answer shape ---------------------------------------------------------------------


async def test_an_extra_member_in_the_answer_is_an_answer_shape_conflict() -> None:
    def edit(answer: Any) -> Any:
        return {**answer, "note": "trust me"}  # interview §5 rule 3: no free text

    document = await interview(lambda o: rewrite_results(honest(o), on_question("usage", edit)))
    caught(document, Check.answer_shape, "wire_format")


async def test_refusing_a_declared_question_is_an_answer_shape_conflict() -> None:
    def edit(_: Any) -> Any:
        return loads(honest("http://x").interview.refusal)

    document = await interview(
        lambda o: rewrite_results(honest(o), on_question("capabilities", edit))
    )
    caught(document, Check.answer_shape, "refused")


# --- activation -----------------------------------------------------------------------


async def test_no_activation_echo() -> None:
    def strip(call: Call, reply: Reply) -> Reply:
        headers = [(n, v) for n, v in reply.headers if n.lower() != b"a2a-extensions"]
        return Reply(reply.status, headers, reply.body)

    caught(
        await interview(lambda o: Wrap(honest(o), on_reply=strip)),
        Check.activation_echo,
        "missing_echo",
    )


async def test_a_host_checking_params_first_is_consistent() -> None:
    # D-VERIFY-34, PROFILE §7: a2a-js checks params before the method; the probe
    # is a well-formed call with "params": {}, so such a host answers -32601 and passes.
    document = await interview(lambda o: params_first(honest(o)))
    assert document["outcome"] == "consistent", found(document)
    assert document["checks"]["inactive_probe"] == "passed"
    assert ("inactive_probe", "inactive_error_code") not in advised(document)
    probes = [c for c in document["runs"][0]["calls"]
              if c["method"] == "interview/identity" and not c["activated"]]  # fmt: skip
    assert [p["params"] for p in probes if p["binding"] == "JSONRPC"] == [{}]


async def test_another_error_code_on_the_probe_is_an_advisory() -> None:
    # PROFILE §7: any JSON-RPC error other than -32601 is inactive_error_code, an
    # advisory, never a conflict: the host's own dispatch answered it. The report says
    # what happened, never "answered without activation".
    document = await interview(lambda o: params_first(honest(o), always=True))
    assert document["outcome"] == "consistent", found(document)
    assert document["checks"]["inactive_probe"] == "advisory"
    (advisory,) = [a for a in document["advisories"] if a["reason"] == "inactive_error_code"]
    assert advisory["code"] == "inactive_probe"
    assert advisory["value"]["got"]["error"] == {"code": -32602}
    text = render_report(document)
    assert (
        "the host answered the inactive probe with error -32602 instead of -32601 (advisory)"
        in text
    )
    assert "answered_without_activation" not in text
    assert "without activation" not in text


async def test_answering_without_activation_fails_the_inactive_probe() -> None:
    def activate(call: Call) -> Reply | None:
        if call.question is not None and not call.activated:
            call.headers.append((b"a2a-extensions", INTERVIEW_URI.encode()))
        return None

    document = await interview(lambda o: Wrap(honest(o), on_request=activate))
    caught(document, Check.inactive_probe, "answered_without_activation")
    probes = [c for c in document["runs"][0]["conflicts"] if c["check"] == "inactive_probe"]
    assert len(probes) == 2  # JSON-RPC (a result, no -32601) and HTTP+JSON (200, not 404)
    # The report says what happened, only when something was answered (PROFILE §7).
    assert "answered interview/identity without activation" in render_report(document)


# --- determinism ----------------------------------------------------------------------


def reorder(answer: Any) -> Any:
    answer["projections"].reverse()  # every value still true: only the bytes differ
    return answer


async def test_answers_that_change_between_asks() -> None:
    # D-VERIFY-72: a lie on the second ask of one question (its first asks agree across
    # bindings) is confined to no selector: every question without one is made twice on
    # the drawn binding, so a default run catches it whatever is drawn.
    edit = on_question("capabilities", reorder, when=lambda c: c.n % 2 == 1)
    document = await interview(lambda o: rewrite_results(honest(o), edit))
    caught(document, Check.determinism, "changed_between_asks")
    assert ("projection", "value_mismatch") not in found(document)


@pytest.mark.parametrize("kind", ["second_asks", "alternate_calls"])
async def test_every_answer_that_changes_between_asks(kind: str) -> None:
    # D-VERIFY-72: not confined to one question: every answer changes on its second ask
    # on a binding, or on every other call; caught by every run, whatever is drawn.
    answers = iter(range(1 << 20))

    def edit(call: Call, result: Any) -> Any:
        if not isinstance(result, dict) or "projections" not in result:
            return result  # a refusal (the closure probes)
        odd = call.n if kind == "second_asks" else next(answers)
        if odd % 2 == 0:
            return result
        result = reorder(copy.deepcopy(result))
        if len(result["projections"]) < 2:  # nothing to reorder: one more
            result["projections"].append({"changed": odd})
        return result

    document = await interview(lambda o: rewrite_results(honest(o), edit))
    caught(document, Check.determinism, "changed_between_asks")


async def test_interfaces_that_answer_differently() -> None:
    def drop_version(answer: Any) -> Any:
        answer["projections"] = [
            p for p in answer["projections"] if p["source"]["member"] != "/version"
        ]
        return answer

    edit = on_question("identity", drop_version, when=lambda c: c.binding == "HTTP+JSON")
    document = await interview(lambda o: rewrite_results(honest(o), edit))
    caught(document, Check.determinism, "interfaces_differ")
    assert ("coverage", "omitted") in advised(document)


# --- terms ----------------------------------------------------------------------------


async def test_terms_hidden() -> None:
    def hide(_: Any) -> Any:
        return {"question": "terms", "declared": False, "projections": []}

    document = await interview(lambda o: rewrite_results(honest(o), on_question("terms", hide)))
    caught(document, Check.terms_declared, "terms_hidden")


async def test_terms_fabricated() -> None:
    def no_terms(card: dict[str, Any]) -> dict[str, Any]:
        exts = card["capabilities"]["extensions"]
        card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != TERMS_URI]
        return card

    def factory(origin: str) -> Any:
        real = loads(honest(origin).interview.answer("terms"))
        return rewrite_results(
            honest(origin, edit_card=no_terms), on_question("terms", lambda _: real)
        )

    document = await interview(factory)
    caught(document, Check.terms_declared, "terms_fabricated")
    assert ("projection", "uncommitted_source") in found(document)


async def test_a_proposal_whose_digest_fails() -> None:
    def altered(url: str, body: bytes) -> bytes:
        if not url.endswith(RECONCILE):
            return body
        document = loads(body)
        document["price"]["rates"][0]["per_task"] = 1  # type: ignore[index, call-overload]
        return canonicalize(document)

    document = await interview(lambda o: honest(o, edit_proposal=altered))
    results = {p["url"].rsplit("/", 1)[1]: p["result"] for p in document["runs"][0]["proposals"]}
    assert results == {RECONCILE: "digest_mismatch", "flag-exceptions.sow.json": "ok"}
    caught(document, Check.projection, "proposal_failed")
    assert ("terms", "digest_mismatch") in advised(document)


async def test_a_proposal_whose_signature_fails() -> None:
    # The card commits (by digest) to a proposal whose clauses were changed after the
    # provider signed: the digest holds, the signature does not.
    def factory(origin: str) -> Any:
        files = reference.proposals(origin)
        url = origin + "/terms/" + RECONCILE
        document = loads(files[url])
        document["price"]["rates"][0]["per_task"] = 1  # type: ignore[index, call-overload]
        files[url] = canonicalize(document)

        def commit(card: dict[str, Any]) -> dict[str, Any]:
            for ext in card["capabilities"]["extensions"]:
                for entry in ext.get("params", {}).get("proposals", []):
                    if entry["url"] == url:
                        entry["digest"] = digest(document)
            return card

        return honest(origin, edit_card=commit, proposals=files, self_check=False)

    document = await interview(factory)
    results = [p["result"] for p in document["runs"][0]["proposals"]]
    assert results == ["signature_invalid", "ok"]
    caught(document, Check.projection, "proposal_failed")


# --- closure --------------------------------------------------------------------------


async def test_a_wrong_refusal_for_an_undefined_method() -> None:
    def edit(refusal: Any) -> Any:
        return {**refusal, "detail": "no such method"}

    document = await interview(lambda o: rewrite_results(honest(o), on_question("bogus", edit)))
    caught(document, Check.closure_method, "not_standard_refusal")
    assert document["checks"]["closure_selector"] == "passed"


async def test_a_selector_matching_nothing_that_is_not_refused() -> None:
    skills = set(reference.unsigned_card()["skills"][i]["id"] for i in range(3))  # type: ignore[index]

    def factory(origin: str) -> Any:
        full = loads(honest(origin).interview.answer("usage"))
        edit = on_question("usage", lambda _: full, when=lambda c: c.skill not in (None, *skills))
        return rewrite_results(honest(origin), edit)

    document = await interview(factory)
    caught(document, Check.closure_selector, "not_standard_refusal")
    assert document["checks"]["closure_method"] == "passed"


# --- declaration and card -------------------------------------------------------------


def _interview_entry(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], Any]:
    def apply(card: dict[str, Any]) -> dict[str, Any]:
        for ext in card["capabilities"]["extensions"]:
            if ext["uri"] == INTERVIEW_URI:
                edit(ext)
        return card

    return apply


async def test_required_true_is_a_declaration_conflict() -> None:
    edit = _interview_entry(lambda ext: ext.update(required=True))
    document = await interview(lambda o: honest(o, edit_card=edit, self_check=False))
    caught(document, Check.declaration, "required_true")


async def test_a_tampered_card_fails_its_signature() -> None:
    def tamper(card: dict[str, Any]) -> dict[str, Any]:
        return {**card, "description": "Now also does payroll."}

    document = await interview(lambda o: honest(o, tamper=tamper))
    caught(document, Check.card_signature, "invalid")
    assert document["agent"]["card_signature"]["status"] == "invalid"
    assert document["agent"]["card_signature"]["key_source"] is None
    assert found(document) == {("card_signature", "invalid")}  # the answers match the card


async def test_an_unsigned_card_is_an_advisory_unless_a_signature_is_required() -> None:
    document = await interview(lambda o: honest(o, signed=False))
    assert document["outcome"] == "consistent"
    assert ("card_signature", "unsigned") in advised(document)
    assert document["checks"]["card_signature"] == "advisory"
    required = await interview(lambda o: honest(o, signed=False), require_signature=True)
    caught(required, Check.card_signature, "unsigned")


def _sdk_signed(origin: str, *, ours_too: bool = False) -> Any:
    """The honest agent with its card signed by a2a-sdk's own signer, with a 0.3
    interface, and served as the SDK serves it: the 0.3 compatibility members merged in,
    outside what the SDK signed (PROFILE §6.3). ``ours_too`` adds our signature over the
    card as served after the SDK's."""
    need_module("a2a.utils.signing", "the sdk extra (a2a-sdk[signing])", "pip install -e '.[sdk]'")
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.utils.signing import create_agent_card_signer

    from a2a_interview.card import load_private_key
    from a2a_interview.declarations import build
    from a2a_interview.server.sdk import agent_card_from_json
    from agents import Agent, sign

    card = honest(origin, signed=False).card
    rpc = card["supportedInterfaces"][0]
    card["supportedInterfaces"].append({**rpc, "protocolVersion": "0.3"})
    agent_card = agent_card_from_json(card)
    key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
    header = {"alg": "EdDSA", "kid": reference.CARD_KID, "typ": "JOSE",
              "jku": origin + reference.JWKS_PATH}  # fmt: skip
    create_agent_card_signer(key, header)(agent_card)  # type: ignore[arg-type]
    served = loads(canonicalize(agent_card_to_dict(agent_card)))
    assert isinstance(served, dict) and "url" in served  # the compat members are served
    if ours_too:
        served = sign(served, origin)
    files = reference.proposals(origin)
    return Agent(origin, served, build(served, files).interview, files)


async def test_a_signature_not_covering_the_compat_members_is_an_advisory() -> None:
    # PROFILE §6.3 (decisions D-VERIFY-8): a2a-sdk signs without the 0.3 members it
    # serves; the card verifies under prune-empty and says what the signature leaves out.
    document = await interview(_sdk_signed)
    assert document["outcome"] == "consistent", found(document)
    signature = document["agent"]["card_signature"]
    # proto reads it too: the 1.0 messages do not define the 0.3 members either.
    assert (signature["status"], signature["readings"]) == ("verified", ["prune-empty", "proto"])
    assert signature["key_source"] == "jku"
    (uncovered,) = [a for a in document["advisories"] if a["reason"] == "uncovered_members"]
    assert uncovered["code"] == "card_signature"
    assert {"/url", "/preferredTransport", "/protocolVersion"} <= set(uncovered["value"])
    assert document["checks"]["card_signature"] == "advisory"


def _sdk_signed_as_authored(origin: str) -> Any:
    """The honest agent declaring the interview with ``"required": false`` (the draft's
    own example), its card signed by a2a-sdk's signer as a caller without a JWKS URL
    does (``jku=None``, so ``"jku": null``), the signature appended to the card JSON as
    authored (D-VERIFY-26)."""
    need_module("a2a.utils.signing", "the sdk extra (a2a-sdk[signing])", "pip install -e '.[sdk]'")
    from a2a.types import AgentCard
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict, ParseDict

    from a2a_interview.card import load_private_key
    from a2a_interview.declarations import build
    from agents import Agent

    card = honest(origin, signed=False).card
    for extension in card["capabilities"]["extensions"]:
        extension["required"] = False
    key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
    header = {"alg": "EdDSA", "kid": reference.CARD_KID, "typ": "JOSE", "jku": None}
    signer = create_agent_card_signer(key, header)  # type: ignore[arg-type]
    proto = signer(ParseDict(copy.deepcopy(card), AgentCard(), ignore_unknown_fields=True))
    card["signatures"] = [MessageToDict(proto.signatures[0])]
    files = reference.proposals(origin)
    return Agent(origin, card, build(card, files).interview, files)


async def test_an_sdk_signed_card_verifies_under_proto_with_the_null_jku_advised() -> None:
    # PROFILE §6.3 (proto) and §6.6 ("jku": null read as absent, an advisory): the
    # record's card_signature says the reading, and the quirk is never a silent pass.
    document = await interview(_sdk_signed_as_authored, jwks=tuple(reference.jwks()["keys"]))
    assert document["outcome"] == "consistent", found(document)
    signature = document["agent"]["card_signature"]
    assert (signature["status"], signature["reading"]) == ("verified", "proto")
    assert signature["readings"] == ["proto"]
    assert ("card_signature", "null_header_member") in advised(document)
    assert document["checks"]["card_signature"] == "advisory"
    # The same card under a required reading other than proto is a conflict.
    served = await interview(
        _sdk_signed_as_authored, jwks=tuple(reference.jwks()["keys"]), readings=("served",)
    )
    caught(served, Check.card_signature, "invalid")


async def test_a_second_signature_covering_every_member_leaves_no_advisory() -> None:
    # The report's signature is the one covering the most (cardsig.verify_card); the
    # advisory must speak of that one, not of the first in card order.
    document = await interview(lambda o: _sdk_signed(o, ours_too=True))
    assert document["outcome"] == "consistent", found(document)
    assert document["agent"]["card_signature"]["reading"] == "served"
    assert ("card_signature", "uncovered_members") not in advised(document)
    assert document["checks"]["card_signature"] == "passed"


async def test_a_card_that_is_not_json_fails_card_fetch() -> None:
    def garbage(call: Call) -> Reply | None:
        if call.path.endswith("agent-card.json"):
            return Reply(200, [(b"content-type", b"application/json")], b'{"name": "x", "name": 1}')
        return None

    document = await interview(lambda o: Wrap(honest(o), on_request=garbage))
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "card_unreadable"
    assert document["checks"]["card_fetch"] == "failed"


async def test_no_interview_entry_is_not_offered() -> None:
    def remove(card: dict[str, Any]) -> dict[str, Any]:
        exts = card["capabilities"]["extensions"]
        card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
        return card

    document = await interview(lambda o: honest(o, edit_card=remove, self_check=False))
    assert document["outcome"] == "not_offered"
    assert document["runs"][0]["calls"] == []  # absence states nothing: nothing was asked
    assert "failed" not in document["checks"].values()


async def test_not_offered_is_never_a_failure_even_with_a_bad_signature() -> None:
    # PROFILE §7: not_offered is never shown as a failure (interview §9 rule 2); the
    # card's invalid signature is kept, as an advisory.
    def remove(card: dict[str, Any]) -> dict[str, Any]:
        exts = card["capabilities"]["extensions"]
        card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
        return card

    def tamper(card: dict[str, Any]) -> dict[str, Any]:
        return {**card, "description": "Now also does payroll."}

    def factory(origin: str) -> Any:
        return honest(origin, edit_card=remove, tamper=tamper, self_check=False)

    for required in (False, True):
        document = await interview(factory, require_signature=required)
        assert document["outcome"] == "not_offered"
        assert document["agent"]["card_signature"]["status"] == "invalid"
        assert all(run["conflicts"] == [] for run in document["runs"])
        assert "failed" not in document["checks"].values()
        assert ("card_signature", "invalid") in advised(document)
        assert b"<failure" not in junit_xml(document)


# --- coverage (advisory only) ---------------------------------------------------------


async def test_an_omitted_member_is_a_coverage_advisory_never_a_conflict() -> None:
    def drop(answer: Any) -> Any:
        answer["projections"] = [
            p for p in answer["projections"] if p["source"]["member"] != "/version"
        ]
        return answer

    document = await interview(lambda o: rewrite_results(honest(o), on_question("identity", drop)))
    assert document["outcome"] == "consistent"
    assert document["checks"]["coverage"] == "advisory"
    omitted = [a for a in document["advisories"] if a["reason"] == "omitted"]
    assert {a["source"]["member"] for a in omitted} == {"/version"}
    assert len(omitted) == 2  # once per interface


# --- churn ----------------------------------------------------------------------------


async def test_an_agent_that_heals_between_runs_is_churn() -> None:
    # It lies while the verifier holds its first card, and is honest after the re-fetch.
    # Each run fetches the card twice: the default card and the 1.0 variant (PROFILE §7).
    edit = on_question("identity", set_member("/name", "Stonewerk"), when=lambda c: c.cards <= 2)
    document = await interview(lambda o: rewrite_results(honest(o), edit))
    assert document["outcome"] == "churn"
    assert ("projection", "value_mismatch") in found(document, 0)
    assert found(document, 1) == set()
    assert document["checks"]["projection"] == "churn"


async def test_a_persistent_liar_is_non_conformant() -> None:
    edit = on_question("refusals", set_member("/skills/0/id", "everything"))
    document = await interview(lambda o: rewrite_results(honest(o), edit))
    caught(document, Check.projection, "value_mismatch")


# --- transport: unreachable, 429, 401 -------------------------------------------------


async def test_an_unreachable_url() -> None:
    record = await verify(closed_port_url(), churn_delay=0)
    document = record.to_json()
    SCHEMA.validate(document)
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "connect_failed"
    assert document["checks"]["card_fetch"] == "failed"


async def test_a_429_is_waited_out_and_never_counted() -> None:
    state = {"limited": 0}

    def limit(call: Call) -> Reply | None:
        if call.question == "capabilities" and state["limited"] == 0:
            state["limited"] += 1
            return Reply(429, [(b"retry-after", b"1")], b'{"error":"slow down"}')
        return None

    document = await interview(lambda o: Wrap(honest(o), on_request=limit))
    assert state["limited"] == 1
    assert document["outcome"] == "consistent"
    assert ("transport", "rate_limited") in advised(document)
    assert all(c["status"] != 429 for c in document["runs"][0]["calls"])


async def test_a_429_on_the_proposals_is_never_counted_either() -> None:
    # PROFILE §7: a proposal that could not be fetched for 429s is not fetch_failed
    # (which would make every terms projection a proposal_failed conflict).
    from a2a_interview.verifier.client import ClientOptions

    def limit(call: Call) -> Reply | None:
        if call.path.startswith("/terms/"):
            return Reply(429, [(b"retry-after", b"1")], b"")
        return None

    client = ClientOptions(retry_budget=0.3, max_retry_after=0.1)
    document = await interview(lambda o: Wrap(honest(o), on_request=limit), client=client)
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "rate_limited"
    assert all(not run["conflicts"] for run in document["runs"])


async def test_a_proposal_host_that_is_down_ends_the_run_unreachable() -> None:
    # PROFILE §7 ("transport failure: unreachable"): a 503 on a proposal says nothing
    # about the document, so it never counts against the agent ...
    def down(call: Call) -> Reply | None:
        if call.path.startswith("/terms/"):
            return Reply(503, [], b"")
        return None

    document = await interview(lambda o: Wrap(honest(o), on_request=down))
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "unavailable"
    assert all(not run["conflicts"] for run in document["runs"])


@pytest.mark.parametrize("status", [502, 503, 504])
async def test_a_jwks_host_that_is_down_ends_a_required_signature_unreachable(
    status: int,
) -> None:
    """PROFILE §6.4, §7 ("transport failure: unreachable"): with a signature required, a
    JWKS answering 502/503/504 says nothing about the agent's key, so the run cannot
    decide and ends unreachable, never non_conformant as if the key were missing. The
    proposals have the test above; this is the JWKS's."""

    def down(call: Call) -> Reply | None:
        if call.path == reference.JWKS_PATH:
            return Reply(status, [], b"")
        return None

    document = await interview(lambda o: Wrap(honest(o), on_request=down), require_signature=True)
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "unavailable"
    assert all(not run["conflicts"] for run in document["runs"])

    # The control: a JWKS that is not there (404) is the key's absence, a conflict.
    def gone(call: Call) -> Reply | None:
        return Reply(404, [], b"") if call.path == reference.JWKS_PATH else None

    document = await interview(lambda o: Wrap(honest(o), on_request=gone), require_signature=True)
    assert document["outcome"] == "non_conformant"


async def test_keys_the_verifier_never_saw_are_no_agent_keys() -> None:
    """PROFILE §8 (docs/security.md, "Keys the verifier never saw"): ``agent.keys`` holds
    what the verifier could see. A signed card and served proposals name their keys; an
    unsigned card names none, and a proposal kept behind a 404 names no signer."""
    seen = await interview(honest)
    assert reference.PROPOSAL_KEY in seen["agent"]["keys"] and len(seen["agent"]["keys"]) == 2

    def hidden(call: Call) -> Reply | None:
        return Reply(404, [], b"") if call.path.startswith("/terms/") else None

    unseen = await interview(lambda o: Wrap(honest(o, signed=False), on_request=hidden))
    assert unseen["agent"]["keys"] == []


async def test_a_proposal_that_is_not_there_fails_its_entry() -> None:
    # ... while a 404 is the document's absence: terms §3 fetch_failed, and projecting
    # from it is a conflict.
    def gone(call: Call) -> Reply | None:
        if call.path.endswith(RECONCILE):
            return Reply(404, [], b"")
        return None

    document = await interview(lambda o: Wrap(honest(o), on_request=gone))
    assert document["outcome"] == "non_conformant"
    results = [p["result"] for p in document["runs"][0]["proposals"]]
    assert results == ["fetch_failed", "ok"]


async def test_credentials_in_the_url_are_not_recorded() -> None:
    # A record is published evidence: it keeps where, never a user's password.
    with serve(honest) as origin:
        record = await verify(origin.replace("http://", "http://user:s3cret@"), churn_delay=0)
    document = record.to_json()
    assert document["outcome"] == "consistent"
    assert "s3cret" not in json.dumps(document)
    assert document["agent"]["url"].startswith("http://127.0.0.1:")


SCHEMES = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}


def _guarded(origin: str) -> Any:
    def secure(card: dict[str, Any]) -> dict[str, Any]:
        return {**card, "securitySchemes": SCHEMES}

    def gate(call: Call) -> Reply | None:
        if "/a2a/" in call.path and (b"authorization", b"Bearer s3cret") not in call.headers:
            return Reply(401, [(b"www-authenticate", b"Bearer")], b"")
        return None

    return Wrap(honest(origin, edit_card=secure), on_request=gate)


async def test_401_is_authentication_required_not_non_conformance() -> None:
    document = await interview(_guarded)
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "authentication_required"
    assert document["incomplete"]["schemes"] == ["bearer"]
    assert all(not run["conflicts"] for run in document["runs"])


async def test_credentials_open_the_interview() -> None:
    from a2a_interview.verifier.client import ClientOptions

    client = ClientOptions(headers=(("Authorization", "Bearer s3cret"),))
    document = await interview(_guarded, client=client)
    assert document["outcome"] == "consistent", found(document)


# --- URLs, redirects, keys, A2A 0.3 ----------------------------------------------------


async def test_the_card_url_and_a_same_origin_redirect() -> None:
    def moved(call: Call) -> Reply | None:
        if call.path == "/card.json":
            return Reply(302, [(b"location", b"/.well-known/agent-card.json")], b"")
        return None

    with serve(lambda o: Wrap(honest(o), on_request=moved)) as origin:
        card_url = origin + "/.well-known/agent-card.json"
        for url in (origin + "/", card_url, origin + "/card.json"):
            document = (await verify(url, churn_delay=0)).to_json()
            assert document["outcome"] == "consistent", url
            assert document["agent"]["url"] == url
            assert document["agent"]["card_url"] == card_url


async def test_a_cross_origin_redirect_is_refused() -> None:
    with serve(honest) as elsewhere:

        def away(call: Call) -> Reply | None:
            if call.path.endswith("agent-card.json"):
                target = (elsewhere + "/.well-known/agent-card.json").encode()
                return Reply(301, [(b"location", target)], b"")
            return None

        document = await interview(lambda o: Wrap(honest(o), on_request=away))
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "redirect_refused"


async def test_plain_http_off_loopback_is_never_fetched() -> None:
    document = (await verify("http://agent.example", churn_delay=0)).to_json()
    SCHEMA.validate(document)
    assert document["incomplete"]["reason"] == "insecure_url"
    assert document["runs"][0]["calls"] == []


async def test_an_interface_with_an_impossible_port_is_skipped_not_raised() -> None:
    # "verify never raises for anything an agent does": a port out of range used to
    # escape the socket layer as an ExceptionGroup(OverflowError).
    def add(card: dict[str, Any]) -> dict[str, Any]:
        card["supportedInterfaces"].append(
            {"url": "http://127.0.0.1:99999/a2a", "protocolBinding": "JSONRPC",
             "protocolVersion": "1.0"}
        )  # fmt: skip
        return card

    document = await interview(lambda o: honest(o, edit_card=add))
    assert document["outcome"] == "consistent", found(document)
    assert ("interface", "insecure_url") in advised(document)


async def test_a_cross_origin_jku_is_not_fetched() -> None:
    with serve(honest) as keyhost:

        def factory(origin: str) -> Any:
            from agents import sign

            agent = honest(origin, signed=False)
            agent.card = sign(agent.card, keyhost)  # jku on another origin
            return agent

        document = await interview(factory)
    assert document["agent"]["card_signature"]["status"] == "key_unavailable"
    assert {("card_signature", "key_unavailable"), ("card_signature", "jku_refused")} <= advised(
        document
    )
    assert document["outcome"] == "consistent"


async def test_an_a2a_0_3_card_is_interviewed_with_the_0_3_headers() -> None:
    def legacy(origin: str) -> Any:
        def to_0_3(card: dict[str, Any]) -> dict[str, Any]:
            card.pop("supportedInterfaces")
            card.update(
                url=origin + "/a2a/jsonrpc",
                preferredTransport="JSONRPC",
                protocolVersion="0.3",
                additionalInterfaces=[{"url": origin + "/a2a/rest", "transport": "HTTP+JSON"}],
            )
            return card

        agent = honest(origin, edit_card=to_0_3)
        seen: list[bool] = []

        def spy(call: Call) -> Reply | None:
            if call.question is not None and call.activated:
                names = {n.lower() for n, _ in call.headers}
                seen.append(b"x-a2a-extensions" in names and b"a2a-version" not in names)
            return None

        wrapped = Wrap(agent, on_request=spy)
        wrapped.seen_legacy = seen  # type: ignore[attr-defined]
        return wrapped

    apps: list[Any] = []
    document = await interview(lambda o: apps.append(legacy(o)) or apps[-1])
    assert document["outcome"] == "consistent", found(document)
    assert {c["binding"] for c in document["runs"][0]["calls"]} == {"JSONRPC", "HTTP+JSON"}
    assert apps[0].seen_legacy and all(apps[0].seen_legacy)


async def test_progress_is_reported() -> None:
    stages: list[str] = []
    await interview(honest, progress=stages.append)
    assert stages[0] == "card" and stages[-1] == "done"
    assert "interface JSONRPC" in stages and "interface HTTP+JSON" in stages
