"""The verifier's pure checks (PROFILE §7), on values: no network here.

The honest answers come from the projection engine over the Stonework declarations;
each check is shown to pass on them and to fail on one precise mutation.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview import reference
from a2a_interview.checks import (
    ABSENT,
    CHECKS,
    Binding,
    Check,
    CheckStatus,
    Conflict,
    Declared,
    Exchange,
    Outcome,
    ResultRead,
    Where,
    check_answer,
    check_card_signature,
    check_closure,
    check_declaration,
    check_determinism,
    check_echo,
    check_inactive,
    check_interfaces_agree,
    check_terms_declared,
    coverage,
    derive_outcome,
    diff_answer,
    find_interfaces,
    no_match_selector,
    overall_statuses,
    read_result,
    run_statuses,
)
from a2a_interview.jcs import canonicalize
from a2a_interview.models import Answer, Source
from a2a_interview.spec import INTERVIEW_URI, QUESTIONS, TERMS_URI, ProposalFailure
from a2a_interview.strictjson import loads
from a2a_interview.terms import ProposalVerdict
from support.checks import HONEST, ORIGIN, answer, declared

W = Where("https://stonework.example/a2a/jsonrpc", "identity")
ECHO = (("a2a-extensions", INTERVIEW_URI),)


def model(value: dict[str, Any]) -> Answer:
    parsed = Answer.from_json(value)
    return parsed


def rpc(result: Any, request_id: int = 7, status: int = 200) -> Exchange:
    body = canonicalize({"jsonrpc": "2.0", "id": request_id, "result": result})
    return Exchange(status, ECHO, body)


# --- the codes ------------------------------------------------------------------------


def test_check_codes_are_exactly_profile_7() -> None:
    # Spelled out by hand from PROFILE §7, in its order.
    assert [str(c) for c in CHECKS] == [
        "card_fetch", "card_signature", "declaration", "inactive_probe", "activation_echo",
        "answer_shape", "determinism", "projection", "terms_declared", "closure_method",
        "closure_selector", "coverage",
    ]  # fmt: skip
    assert {str(o) for o in Outcome} == {
        "consistent", "churn", "non_conformant", "not_offered", "unreachable",
    }  # fmt: skip


def test_conflict_identity_and_json() -> None:
    source = Source("card", "/name")
    a = Conflict(Check.projection, "value_mismatch", W, source, "Stonework", "X")
    b = Conflict(Check.projection, "member_unresolved", W, source, got="Y")
    assert a.key == b.key  # the reason is not part of the identity (PROFILE §7)
    assert a.member == "/name" and a.question == "identity"
    other = Conflict(Check.projection, "value_mismatch", Where(W.interface, "identity", "s"),
                     source)  # fmt: skip
    assert other.key != a.key
    assert b.to_json() == {
        "check": "projection", "reason": "member_unresolved", "interface": W.interface,
        "question": "identity", "source": {"document": "card", "member": "/name"}, "got": "Y",
    }  # fmt: skip
    # A declared null is a value, not "does not apply".
    assert Conflict(Check.projection, "r", expected=None).to_json()["expected"] is None
    assert "expected" not in Conflict(Check.projection, "r", expected=ABSENT).to_json()


# --- interfaces -----------------------------------------------------------------------


def test_find_interfaces_reads_1_0_and_0_3_cards() -> None:
    card = {
        "supportedInterfaces": [
            {"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "https://a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        ],
        # The 0.3 members an a2a-sdk host merges in: the same JSON-RPC url is read once.
        "url": "https://a/rpc",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "additionalInterfaces": [{"url": "https://a/v03", "transport": "HTTP+JSON"}],
    }
    found, skipped = find_interfaces(card)
    assert [(i.url, i.binding, i.legacy) for i in found] == [
        ("https://a/rpc", Binding.JSONRPC, False),
        ("https://a/rest", Binding.HTTP_JSON, False),
        ("https://a/v03", Binding.HTTP_JSON, True),
    ]
    assert [a.source.member for a in skipped if a.source] == ["/supportedInterfaces/2"]
    legacy, _ = find_interfaces({"url": "https://b/"})  # preferredTransport defaults
    assert [(i.binding, i.legacy) for i in legacy] == [(Binding.JSONRPC, True)]


def test_no_match_selector_matches_nothing() -> None:
    first = no_match_selector(["a"])
    assert first not in ["a"]
    assert no_match_selector([first]) not in [first]


# --- reading a response ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("exchange", "problem"),
    [
        (Exchange(500, (), b"{}"), "http_status"),
        (Exchange(200, (), b'{"a":1,"a":2}'), "not_json"),
        (Exchange(200, (), b"[]"), "envelope"),
        (rpc({"question": "identity"}, request_id=8), "envelope"),
        (Exchange(200, (), b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602}}'), "error_response"),
        (rpc({"question": "identity", "declared": True, "projections": [], "x": 1}), "wire_format"),
    ],
)
def test_read_result_problems(exchange: Exchange, problem: str) -> None:
    read = read_result(exchange, Binding.JSONRPC, 7)
    assert read.problem is not None and read.problem[0] == problem
    assert read.model is None


def test_read_result_both_bindings() -> None:
    body = HONEST.interview.answer("identity")
    assert read_result(rpc(loads(body)), Binding.JSONRPC, 7).canonical == body
    rest = read_result(Exchange(200, ECHO, body), Binding.HTTP_JSON, None)
    assert rest.canonical == body and isinstance(rest.model, Answer)


# --- answer shape and the diff --------------------------------------------------------


def _asks(d: Declared) -> list[tuple[str, str | None]]:
    asks: list[tuple[str, str | None]] = [(q, None) for q in QUESTIONS]
    return asks + [(q, s) for s in d.interview.skill_ids for q in ("usage", "terms")]


def test_every_honest_answer_passes_every_check() -> None:
    for question, skill in _asks(HONEST):
        where = Where("u", question, skill)
        read = read_result(rpc(answer(question, skill)), Binding.JSONRPC, 7)
        parsed, shape = check_answer(read, where)
        assert shape == [] and parsed is not None
        assert diff_answer(parsed, HONEST, where) == []
        assert check_terms_declared(parsed, HONEST, where) == []
        assert coverage(parsed, HONEST, where) == []


def test_wrong_question_and_refusal_are_answer_shape() -> None:
    read = read_result(rpc(answer("usage")), Binding.JSONRPC, 7)
    _, found = check_answer(read, W)
    assert [(c.check, c.reason) for c in found] == [(Check.answer_shape, "wrong_question")]
    refusal = read_result(rpc(loads(HONEST.interview.refusal)), Binding.JSONRPC, 7)
    _, found = check_answer(refusal, W)
    assert [c.reason for c in found] == ["refused"]


def _diff(value: dict[str, Any], d: Declared = HONEST, question: str = "identity") -> set[str]:
    return {c.reason for c in diff_answer(model(value), d, Where("u", question))}


def test_diff_card_sources() -> None:
    wrong = answer("identity")
    wrong["projections"][0]["value"] = "Stonewerk"
    assert _diff(wrong) == {"value_mismatch"}
    missing = answer("identity")
    missing["projections"][0]["source"]["member"] = "/nickname"
    assert _diff(missing) == {"member_unresolved"}
    # Equality is JCS equality: member order inside a value does not matter.
    provider = answer("identity")
    for p in provider["projections"]:
        if p["source"]["member"] == "/provider":
            p["value"] = dict(reversed(list(p["value"].items())))
    assert _diff(provider) == set()


def test_diff_proposal_sources() -> None:
    terms = answer("terms")
    uncommitted = copy.deepcopy(terms)
    uncommitted["projections"][0]["source"]["url"] = ORIGIN + "/terms/other.json"
    assert _diff(uncommitted, question="terms") == {"uncommitted_source"}
    wrong = copy.deepcopy(terms)
    price = next(p for p in wrong["projections"] if p["source"]["member"] == "/price")
    price["value"] = {"arrangement": "no_charge", "grade": "enforced"}
    assert _diff(wrong, question="terms") == {"value_mismatch"}
    # A committed entry whose proposal fails verification states no terms (terms §3).
    card = reference.signed_card(ORIGIN)
    files = dict(reference.proposals(ORIGIN))
    files[ORIGIN + "/terms/reconcile-statement.sow.json"] = b"{}"
    broken = declared(card, files)
    assert _diff(terms, broken, "terms") == {"proposal_failed"}


@settings(max_examples=60, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=200),
    value=st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=6,
    ),
)
def test_diff_flags_exactly_the_values_that_differ(index: int, value: Any) -> None:
    # Property: replacing one projection's value conflicts iff the JCS bytes change.
    terms = answer("terms")
    projections = terms["projections"]
    target = projections[index % len(projections)]
    changed = canonicalize(target["value"]) != canonicalize(value)
    target["value"] = value
    found = diff_answer(model(terms), HONEST, Where("u", "terms"))
    assert len(found) == int(changed)
    if changed:
        assert found[0].source == Source.from_json(target["source"])
        assert found[0].expected is not ABSENT and found[0].got == value


# --- terms_declared and coverage -------------------------------------------------------------


def test_terms_hidden_and_fabricated() -> None:
    hidden = model({"question": "terms", "declared": False, "projections": []})
    where = Where("u", "terms", "reconcile-statement")
    assert [c.reason for c in check_terms_declared(hidden, HONEST, where)] == ["terms_hidden"]
    # For a skill with no proposal, declared:false is the honest answer (PROFILE §4.4).
    assert check_terms_declared(hidden, HONEST, Where("u", "terms", "r\u00e4kna-moms")) == []

    card = reference.unsigned_card(ORIGIN)
    exts = card["capabilities"]["extensions"]  # type: ignore[index]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != TERMS_URI]  # type: ignore[index]
    bare = declared(card)
    real = model(answer("terms"))
    assert [c.reason for c in check_terms_declared(real, bare, Where("u", "terms"))] == [
        "terms_fabricated"
    ]
    assert check_terms_declared(hidden, bare, Where("u", "terms")) == []


def test_a_card_whose_terms_all_fail_expects_declared_false() -> None:
    files = {url: b"not json" for url in reference.proposals(ORIGIN)}
    broken = declared(files=files)
    hidden = model({"question": "terms", "declared": False, "projections": []})
    assert check_terms_declared(hidden, broken, Where("u", "terms")) == []
    assert {p.result for _, p in broken.entries} == {"not_json"}


def test_coverage_is_omitted_and_additional_advisories() -> None:
    identity = answer("identity")
    version = next(p for p in identity["projections"] if p["source"]["member"] == "/version")
    identity["projections"].remove(version)
    identity["projections"].append(
        {"source": {"document": "card", "member": "/description"}, "value": "..."}
    )
    found = {(a.code, a.reason, a.source.member) for a in coverage(model(identity), HONEST, W)}  # type: ignore[union-attr]
    assert found == {
        ("coverage", "omitted", "/version"),
        ("coverage", "additional", "/description"),
    }


# --- determinism, interfaces, closure -------------------------------------------------


def _read(value: Any) -> ResultRead:
    return read_result(rpc(value), Binding.JSONRPC, 7)


def test_determinism_compares_jcs_bytes() -> None:
    first = _read(answer("capabilities"))
    assert check_determinism(first, _read(answer("capabilities")), W) == []
    reordered = answer("capabilities")
    reordered["projections"].reverse()
    found = check_determinism(first, _read(reordered), W)
    assert [(c.check, c.reason) for c in found] == [(Check.determinism, "changed_between_asks")]
    assert str(found[0].expected).startswith("sha256:")


def test_interfaces_agree() -> None:
    body = HONEST.interview.answer("usage")
    assert check_interfaces_agree(("a", body), ("b", body), W) == []
    found = check_interfaces_agree(("a", body), ("b", body + b" "), W)
    assert [c.reason for c in found] == ["interfaces_differ"]


def test_closure_wants_the_exact_standard_refusal() -> None:
    refusal = HONEST.interview.refusal
    assert check_closure(_read(loads(refusal)), refusal, Check.closure_method, W) == []
    altered = {**loads(refusal), "detail": "no such method"}  # type: ignore[dict-item]
    found = check_closure(_read(altered), refusal, Check.closure_method, W)
    assert [(c.check, c.reason) for c in found] == [(Check.closure_method, "not_standard_refusal")]
    assert found[0].expected == loads(refusal)
    fewer = {**loads(refusal), "declared_skills": ["reconcile-statement"]}  # type: ignore[dict-item]
    assert check_closure(_read(fewer), refusal, Check.closure_selector, W)
    answered = check_closure(_read(answer("usage")), refusal, Check.closure_selector, W)
    assert [c.check for c in answered] == [Check.closure_selector]
    failed = read_result(Exchange(404, (), b""), Binding.HTTP_JSON, None)
    assert check_closure(failed, refusal, Check.closure_method, W)[0].got == {"status": 404}


# --- activation -----------------------------------------------------------------------


NOT_FOUND = b'{"error":{"code":-32601,"message":"Method not found"},"id":1,"jsonrpc":"2.0"}'


def _inactive(exchange: Exchange, binding: Binding) -> tuple[list[str], list[str]]:
    conflicts, advisories = check_inactive(exchange, binding, W)
    return [c.reason for c in conflicts], [a.reason for a in advisories]


def test_inactive_probe() -> None:
    # PROFILE §7 inactive_probe.
    assert _inactive(Exchange(200, (), NOT_FOUND), Binding.JSONRPC) == ([], [])
    answered = _inactive(rpc(answer("identity")), Binding.JSONRPC)
    assert answered == (["answered_without_activation"], [])
    echoed = _inactive(Exchange(200, ECHO, NOT_FOUND), Binding.JSONRPC)
    assert echoed == (["echo_without_activation"], [])
    assert _inactive(Exchange(404, (), b""), Binding.HTTP_JSON) == ([], [])
    assert _inactive(Exchange(200, (), b"{}"), Binding.HTTP_JSON) == (
        ["answered_without_activation"],
        [],
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"error":{"code":-32602,"message":"Invalid params"},"id":1,"jsonrpc":"2.0"}',
        b'{"error":{"code":-32009,"message":"x"},"id":1,"jsonrpc":"2.0"}',
        b'{"error":{"code":"-32601"},"id":1,"jsonrpc":"2.0"}',
        b"<html>oops</html>",
    ],
)
def test_inactive_probe_other_error_is_an_advisory_not_a_conflict(body: bytes) -> None:
    # D-VERIFY-34, PROFILE §7: nothing was answered; inactive_error_code, advisory.
    conflicts, advisories = check_inactive(Exchange(200, (), body), Binding.JSONRPC, W)
    assert conflicts == []
    assert [(a.code, a.reason) for a in advisories] == [("inactive_probe", "inactive_error_code")]
    assert advisories[0].value["expected"] == {"error": {"code": -32601}}  # type: ignore[index]


def test_inactive_probe_rest_other_status_is_an_advisory() -> None:
    # decisions D-VERIFY-34: HTTP+JSON by the same rule: 2xx answered, 404 passes, else advisory.
    assert _inactive(Exchange(405, (), b""), Binding.HTTP_JSON) == ([], ["inactive_error_code"])
    assert _inactive(Exchange(400, ECHO, b""), Binding.HTTP_JSON) == (
        ["echo_without_activation"],
        ["inactive_error_code"],
    )


def test_activation_echo() -> None:
    assert check_echo(Exchange(200, ECHO, b""), W) == []
    listed = (("a2a-extensions", f"https://other.example/ext, {INTERVIEW_URI}"),)
    assert check_echo(Exchange(200, listed, b""), W) == []
    assert [c.reason for c in check_echo(Exchange(200, (), b""), W)] == ["missing_echo"]
    # Exact match: no trailing slash tolerance (PROFILE §3.2).
    slash = (("a2a-extensions", INTERVIEW_URI + "/"),)
    assert check_echo(Exchange(200, slash, b""), W)
    # A 0.3 activation is echoed under both names.
    assert check_echo(Exchange(200, ECHO, b""), W, legacy=True)
    both = (*ECHO, ("x-a2a-extensions", INTERVIEW_URI))
    assert check_echo(Exchange(200, both, b""), W, legacy=True) == []


# --- declaration and card signature ---------------------------------------------------


def test_declaration_required_true() -> None:
    card = reference.unsigned_card(ORIGIN)
    assert check_declaration(card) == []
    card["capabilities"]["extensions"][0]["required"] = True  # type: ignore[index]
    found = check_declaration(card)
    assert [(c.reason, c.member) for c in found] == [
        ("required_true", "/capabilities/extensions/0/required")
    ]


def test_card_signature_statuses() -> None:
    assert check_card_signature("verified", require=True) == ([], [])
    conflicts, _ = check_card_signature("invalid", require=False)
    assert [c.reason for c in conflicts] == ["invalid"]
    conflicts, advisories = check_card_signature("unsigned", require=False)
    assert conflicts == [] and [a.reason for a in advisories] == ["unsigned"]
    conflicts, advisories = check_card_signature("key_unavailable", require=True)
    assert [c.reason for c in conflicts] == ["key_unavailable"] and advisories == []


# --- outcomes -------------------------------------------------------------------------


def test_derive_outcome() -> None:
    a = Conflict(Check.projection, "value_mismatch", W, Source("card", "/name"))
    b = Conflict(Check.determinism, "changed_between_asks", W)
    assert derive_outcome([], None) == (Outcome.consistent, frozenset())
    assert derive_outcome([a], [])[0] is Outcome.churn
    assert derive_outcome([a], [b])[0] is Outcome.churn  # b has not survived a re-run
    outcome, persistent = derive_outcome([a, b], [a])
    assert outcome is Outcome.non_conformant and persistent == {a.key}
    with pytest.raises(ValueError):
        derive_outcome([a], None)


def test_statuses() -> None:
    a = Conflict(Check.projection, "value_mismatch", W)
    first = run_statuses({Check.card_fetch, Check.projection}, [a], [])
    assert first[Check.projection] is CheckStatus.failed
    assert first[Check.card_fetch] is CheckStatus.passed
    assert first[Check.closure_method] is CheckStatus.skipped
    second = run_statuses({Check.card_fetch, Check.projection}, [], [])
    churn = overall_statuses([first, second], ())
    assert churn[Check.projection] is CheckStatus.churn
    assert overall_statuses([first, first], {Check.projection})[Check.projection] == "failed"
    lone = run_statuses((), [], [], failed={Check.card_fetch})
    assert overall_statuses([lone], ())[Check.card_fetch] is CheckStatus.failed


def test_verdict_reasons_are_the_closed_terms_set() -> None:
    # The record's proposal results are exactly terms §3's reasons, or ok.
    assert ProposalVerdict(ProposalFailure.DIGEST_MISMATCH).result == "digest_mismatch"
    assert ProposalVerdict(None).result == "ok"


def test_report_and_record_are_core_too() -> None:
    # docs/style.md: the record and the report are pure; only client and verify do I/O.
    code = (
        "import sys, a2a_interview.checks, a2a_interview.record, a2a_interview.report\n"
        "print(sorted(m for m in ('httpx', 'anyio', 'asyncio', 'starlette') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- hostile bytes ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    body=st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
            max_leaves=8,
        ).map(lambda v: repr(v).encode()),
    ),
    status=st.sampled_from([200, 404, 500]),
)
def test_no_response_makes_a_check_raise(body: bytes, status: int) -> None:
    exchange = Exchange(status, (("a2a-extensions", "\x00weird"),), body)
    for binding in Binding:
        read = read_result(exchange, binding, 7)
        assert (read.problem is None) == (read.model is not None)
        check_answer(read, W)
        check_closure(read, HONEST.interview.refusal, Check.closure_method, W)
        check_determinism(read, read, W)
        check_inactive(exchange, binding, W)
        check_echo(exchange, W)


# ---------------------------------------------------------------- closing mutation testing's gaps
# checks.py under mutation (bench/mutation.py): whole conflicts, not only their reason
# codes, written out by hand from PROFILE §7 and interview §4 rule 4 (the reference card's
# proposals have sixteen members each: test_projection.py pins that).


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


W_SKILL = Where("https://a.example/rpc", "usage", "s1")
NOT_FOUND_AS_SENT = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
RESULT = b'{"jsonrpc":"2.0","id":1,"result":{}}'
LOCATED = {"interface": "https://a.example/rpc", "question": "usage", "skill": "s1"}


def test_inactive_probe_answered_whole() -> None:
    # PROFILE §3.3: without activation an interview method does not exist.
    (conflict,), advisories = check_inactive(Exchange(200, ECHO, RESULT), Binding.JSONRPC, W_SKILL)
    assert advisories == []
    assert conflict.to_json() == {
        "check": "inactive_probe", "reason": "answered_without_activation", **LOCATED,
        "expected": {"error": {"code": -32601}},
        "got": {"status": 200, "error": {"code": None}, "result": True, "echo": True},
        "detail": "answered interview/usage without activation",
    }  # fmt: skip
    (rest,), _ = check_inactive(Exchange(204, (), b""), Binding.HTTP_JSON, Where("u", None))
    assert rest.to_json() == {
        "check": "inactive_probe", "reason": "answered_without_activation", "interface": "u",
        "expected": {"status": 404}, "got": {"status": 204},
        "detail": "answered interview/identity without activation",
    }  # fmt: skip


def test_inactive_probe_echo_and_other_codes_whole() -> None:
    legacy = (("x-a2a-extensions", f"x, {INTERVIEW_URI}"),)
    (echo,), advisories = check_inactive(
        Exchange(200, legacy, NOT_FOUND_AS_SENT), Binding.JSONRPC, W_SKILL
    )
    assert advisories == []
    assert echo.to_json() == {
        "check": "inactive_probe", "reason": "echo_without_activation", **LOCATED,
        "expected": {"error": {"code": -32601}},
        "got": {"status": 200, "error": {"code": -32601}, "echo": True},
        "detail": "named the interview URI in a response without activation",
    }  # fmt: skip
    other = b'{"jsonrpc":"2.0","id":1,"error":{"code":true}}'
    conflicts, (advisory,) = check_inactive(Exchange(200, (), other), Binding.JSONRPC, W_SKILL)
    assert conflicts == []
    assert advisory.to_json() == {
        "code": "inactive_probe", "reason": "inactive_error_code", **LOCATED,
        "value": {"expected": {"error": {"code": -32601}},
                  "got": {"status": 200, "error": {"code": None}}},
        "detail": "the host answered the inactive probe with another error than method "
        "not found",
    }  # fmt: skip
    assert check_inactive(Exchange(404, (), b""), Binding.HTTP_JSON, W_SKILL) == ([], [])
    for status in (199, 300, 405, 500):
        conflicts, (advisory,) = check_inactive(
            Exchange(status, (), b""), Binding.HTTP_JSON, W_SKILL
        )
        assert conflicts == [] and advisory.to_json()["value"] == {
            "expected": {"status": 404}, "got": {"status": status}}  # fmt: skip
    for body in (b"not json", b"[]", b'{"error": 5}', b'{"error": {"code": "x"}}'):
        conflicts, (advisory,) = check_inactive(Exchange(200, (), body), Binding.JSONRPC, W_SKILL)
        assert conflicts == [] and advisory.to_json()["value"]["got"] == {  # type: ignore[index]
            "status": 200, "error": {"code": None}}  # fmt: skip


def test_missing_echo_whole() -> None:
    # PROFILE §3.2: the activated response names the URI; with the 0.3 spelling, both.
    assert check_echo(Exchange(200, ECHO, b""), W_SKILL) == []
    (conflict,) = check_echo(Exchange(200, (("a2a-extensions", "x"),), b""), W_SKILL)
    assert conflict.to_json() == {
        "check": "activation_echo", "reason": "missing_echo", **LOCATED,
        "expected": {"A2A-Extensions": INTERVIEW_URI}, "got": {"A2A-Extensions": ["x"]},
        "detail": "an activated response must list the interview URI in its extensions header",
    }  # fmt: skip
    (legacy,) = check_echo(Exchange(200, ECHO, b""), W_SKILL, legacy=True)
    assert legacy.to_json()["expected"] == {"X-A2A-Extensions": INTERVIEW_URI}
    assert legacy.to_json()["got"] == {"X-A2A-Extensions": []}
    both = (*ECHO, ("x-a2a-extensions", INTERVIEW_URI))
    assert check_echo(Exchange(200, both, b""), W_SKILL, legacy=True) == []


def test_interfaces_that_differ_whole() -> None:
    # interview §4 rule 1 across bindings (A2A §5.1): the same bytes on every interface.
    same = check_interfaces_agree(("https://a/rpc", b"{}"), ("https://a/rest", b"{}"), W_SKILL)
    assert same == []
    (conflict,) = check_interfaces_agree(
        ("https://a/rpc", b"{}"), ("https://a/rest", b"[]"), W_SKILL
    )
    assert conflict.to_json() == {
        "check": "determinism", "reason": "interfaces_differ", **LOCATED,
        "expected": {"interface": "https://a/rpc",
                     "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest()},
        "got": {"interface": "https://a/rest",
                "digest": "sha256:" + hashlib.sha256(b"[]").hexdigest()},
        "detail": "two interfaces of the card answered the same question differently",
    }  # fmt: skip


def test_find_interfaces_in_card_order_with_other_bindings_as_advisories() -> None:
    card = {"supportedInterfaces": [
        {"url": "https://a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://a/rest", "protocolBinding": "HTTP+JSON"},
    ]}  # fmt: skip
    found, skipped = find_interfaces(card)
    assert [(i.url, i.binding, i.protocol_version, i.member) for i in found] == [
        ("https://a/rpc", Binding.JSONRPC, "1.0", "/supportedInterfaces/1"),
        ("https://a/rest", Binding.HTTP_JSON, None, "/supportedInterfaces/2"),
    ]
    assert [a.to_json() for a in skipped] == [{
        "code": "interface", "reason": "binding_not_interviewed",
        "source": {"document": "card", "member": "/supportedInterfaces/0"},
        "detail": "the interview is asked on JSONRPC and HTTP+JSON interfaces only",
    }]  # fmt: skip


def _read_http(body: bytes, status: int = 200) -> Any:
    return read_result(Exchange(status, ECHO, body), Binding.HTTP_JSON, None)


def test_changed_between_asks_whole() -> None:
    # interview §4 rule 1: identical JCS bytes on a second ask; unreadable is not judged.
    one = answer("identity")
    two = {**one, "declared": not one["declared"]}
    first, second = _read_http(canonicalize(one)), _read_http(canonicalize(two))
    assert check_determinism(first, first, W_SKILL) == []
    assert check_determinism(first, _read_http(b"", 500), W_SKILL) == []
    assert check_determinism(_read_http(b"", 500), second, W_SKILL) == []
    (conflict,) = check_determinism(first, second, W_SKILL)
    assert conflict.to_json() == {
        "check": "determinism", "reason": "changed_between_asks", **LOCATED,
        "expected": "sha256:" + hashlib.sha256(canonicalize(one)).hexdigest(),
        "got": "sha256:" + hashlib.sha256(canonicalize(two)).hexdigest(),
        "detail": "two asks of an unchanged agent returned different answers",
    }  # fmt: skip


def test_not_the_standard_refusal_whole() -> None:
    # interview §6, PROFILE §5: the refusal's exact bytes are due.
    refusal = HONEST.interview.refusal
    assert check_closure(_read_http(refusal), refusal, Check.closure_method, W_SKILL) == []
    identity = answer("identity")
    (conflict,) = check_closure(
        _read_http(canonicalize(identity)), refusal, Check.closure_selector, W_SKILL
    )
    assert conflict.to_json() == {
        "check": "closure_selector", "reason": "not_standard_refusal", **LOCATED,
        "expected": json.loads(refusal), "got": identity,
        "detail": "the standard refusal was due",
    }  # fmt: skip
    (failed,) = check_closure(_read_http(b"", 503), refusal, Check.closure_method, W_SKILL)
    assert failed.to_json()["got"] == {"status": 503}


def _rpc(body: bytes, status: int = 200) -> Any:
    return read_result(Exchange(status, ECHO, body), Binding.JSONRPC, 7)


def _shape(read: Any) -> dict[str, Any]:
    model, (conflict,) = check_answer(read, W_SKILL)
    assert model is None
    return conflict.to_json()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("body", "status", "reason", "detail", "got"),
    [
        (b"{}", 500, "http_status", "the response status is not 200", {"status": 500}),
        (b'{"a":1,"a":2}', 200, "not_json", "the body is not strict I-JSON (duplicate_key)",
         {"status": 200}),
        (b"[]", 200, "envelope", "the body is not a JSON-RPC 2.0 response", {"status": 200}),
        (b'{"jsonrpc":"1.0","id":7,"result":{}}', 200, "envelope",
         "the body is not a JSON-RPC 2.0 response", {"status": 200}),
        (b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602}}', 200, "error_response",
         "a JSON-RPC error where a result was due", {"status": 200, "error": {"code": -32602}}),
        (b'{"jsonrpc":"2.0","id":7,"error":{"code":true}}', 200, "error_response",
         "a JSON-RPC error where a result was due", {"status": 200}),
        (b'{"jsonrpc":"2.0","id":7,"error":"x"}', 200, "error_response",
         "a JSON-RPC error where a result was due", {"status": 200}),
        (b'{"jsonrpc":"2.0","id":8,"result":{}}', 200, "envelope",
         "the body is not a JSON-RPC 2.0 result for this request", {"status": 200}),
        (b'{"jsonrpc":"2.0","id":7,"result":{},"x":1}', 200, "envelope",
         "the body is not a JSON-RPC 2.0 result for this request", {"status": 200}),
    ],
)  # fmt: skip
def test_answer_shape_problems_whole(
    body: bytes, status: int, reason: str, detail: str, got: dict[str, Any]
) -> None:
    # interview §5, PROFILE §4.1: each way a response is not an answer, named.
    assert _shape(_rpc(body, status)) == {
        "check": "answer_shape", "reason": reason, **LOCATED, "got": got, "detail": detail,
    }  # fmt: skip


def test_a_refusal_where_an_answer_was_due_whole() -> None:
    refusal = json.loads(HONEST.interview.refusal)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": refusal}).encode()
    assert _shape(_rpc(body)) == {
        "check": "answer_shape", "reason": "refused", **LOCATED, "got": refusal,
        "detail": "a declared question was refused",
    }  # fmt: skip


def test_a_well_formed_answer_reads_whole() -> None:
    value = answer("identity")
    read = _rpc(json.dumps({"jsonrpc": "2.0", "id": 7, "result": value}).encode())
    assert (read.problem, read.status, read.value) == (None, 200, value)
    assert read.canonical == canonicalize(value)
    assert read.summary() == value
    rest = read_result(Exchange(200, ECHO, canonicalize(value)), Binding.HTTP_JSON, None)
    assert (rest.problem, rest.canonical) == (None, canonicalize(value))


def _projected(source: dict[str, Any], value: Any) -> Answer:
    projections = [{"source": source, "value": value}]
    return Answer.from_json({"question": "usage", "declared": True, "projections": projections})


def test_projection_conflicts_whole() -> None:
    # interview §7: each way a projected value fails the diff, with its source kept.
    card_src = {"document": "card", "member": "/name"}
    (mismatch,) = diff_answer(_projected(card_src, "Other"), HONEST, W_SKILL)
    assert mismatch.to_json() == {
        "check": "projection", "reason": "value_mismatch", **LOCATED, "source": card_src,
        "expected": "Stonework", "got": "Other",
        "detail": "the value differs from the declared one",
    }  # fmt: skip
    assert diff_answer(_projected(card_src, "Stonework"), HONEST, W_SKILL) == []
    nowhere = {"document": "card", "member": "/nope"}
    (unresolved,) = diff_answer(_projected(nowhere, 1), HONEST, W_SKILL)
    assert unresolved.to_json() == {
        "check": "projection", "reason": "member_unresolved", **LOCATED, "source": nowhere,
        "got": 1, "detail": "the member names nothing in the document",
    }  # fmt: skip
    stranger = {"document": "proposal", "url": "https://x.example/p.json",
                "digest": "sha256:" + "0" * 64, "member": "/price"}  # fmt: skip
    (uncommitted,) = diff_answer(_projected(stranger, 1), HONEST, W_SKILL)
    assert uncommitted.to_json() == {
        "check": "projection", "reason": "uncommitted_source", **LOCATED, "source": stranger,
        "got": 1, "detail": "the cited url and digest appear in no terms entry",
    }  # fmt: skip


def test_a_value_from_a_failed_proposal_is_a_conflict_whole() -> None:
    # terms §3: a failing entry states no terms; nothing may be projected from it.
    files = {url: b"not json" for url in reference.proposals(ORIGIN)}
    broken = declared(files=files)
    entry = next(e for e, _ in broken.entries)
    source = {"document": "proposal", "url": entry.url, "digest": entry.digest,
              "member": "/price"}  # fmt: skip
    (failed,) = diff_answer(_projected(source, 1), broken, W_SKILL)
    assert failed.to_json() == {
        "check": "projection", "reason": "proposal_failed", **LOCATED, "source": source,
        "got": 1, "detail": "the cited proposal failed: not_json",
    }  # fmt: skip


def test_coverage_advisories_whole() -> None:
    # PROFILE §7: omitted and additional members are advisories, never conflicts.
    where = Where("u", "identity")
    full = Answer.from_json(answer("identity"))
    assert coverage(full, HONEST, where) == []
    extra = {"source": {"document": "card", "member": "/description"}, "value": "x"}
    kept = [*answer("identity")["projections"][1:], extra]
    fewer = Answer.from_json({**answer("identity"), "projections": kept})
    assert [a.to_json() for a in coverage(fewer, HONEST, where)] == [
        {"code": "coverage", "reason": "omitted", "interface": "u", "question": "identity",
         "source": {"document": "card", "member": "/name"},
         "detail": "this profile projects the member"},
        {"code": "coverage", "reason": "additional", "interface": "u", "question": "identity",
         "source": {"document": "card", "member": "/description"},
         "detail": "this profile does not project the member"},
    ]  # fmt: skip
    refused = Where("u", "usage", "no-such-skill")
    assert coverage(Answer.from_json(answer("usage")), HONEST, refused) == []


# --- each test builds its own Declared (HONEST is built once, at import,
# and its caches fill as tests run, so a test through it cannot see Declared's own work).


def test_the_closure_selector_is_the_documented_probe() -> None:
    # docs/decisions.md D-VERIFY-11: the selector a2a-interview-probe:no-such-skill,
    # lengthened with "~" until no declared id equals it.
    from a2a_interview.checks import no_match_selector

    base = "a2a-interview-probe:no-such-skill"
    assert no_match_selector([]) == base
    assert no_match_selector(["x", "~"]) == base
    assert no_match_selector([base]) == base + "~"
    assert no_match_selector([base + "~", base, "~"]) == base + "~~"


def test_declared_commits_the_proposals_that_verified() -> None:
    # interview §4 rule 4, terms §3: the answers this profile gives are built over the
    # proposals that verified (the reference card: two, sixteen members each, the
    # selector reconcile-statement naming one of them).
    from a2a_interview.models import Refusal

    card = reference.signed_card(ORIGIN)
    fresh = declared(card)
    assert fresh.card is card
    terms = fresh.expected("terms", "reconcile-statement")
    assert isinstance(terms, Answer) and terms.declared and len(terms.projections) == 16
    every = fresh.expected("terms")
    assert isinstance(every, Answer) and len(every.projections) == 32
    identity = fresh.expected("identity")
    assert isinstance(identity, Answer) and identity.question == "identity"
    assert isinstance(fresh.expected("usage", "no-such-skill"), Refusal)
    assert fresh.expected("terms", "reconcile-statement") is terms  # parsed once
    failed = declared(card, files={})  # no proposal could be fetched: none verified
    unverified = failed.expected("terms", "reconcile-statement")
    assert isinstance(unverified, Answer) and not unverified.declared


def test_a_member_that_names_nothing_or_has_no_jcs_form() -> None:
    # interview §7: a member that names nothing is unresolved (None); PROFILE §1.2: a
    # value with no JCS form is still named, with no bytes to be equal to.
    from a2a_interview.models import Source

    fresh = declared()
    assert fresh.member(Source("card", "/no-such-member"), fresh.card) is None
    assert fresh.member(Source("card", "/x"), {"x": 2**60}) == (2**60, None)
    assert fresh.member(Source("card", "/name"), fresh.card) == ("Stonework", b'"Stonework"')


def test_an_honest_answer_has_no_diff_on_a_fresh_declared() -> None:
    # interview §7: card sources resolve in the card and match under JCS.
    fresh = declared()
    assert diff_answer(Answer.from_json(answer("identity", d=fresh)), fresh, W_SKILL) == []


def test_a_value_with_no_jcs_form_is_a_mismatch() -> None:
    # PROFILE §1.2: equality is equality of the JCS bytes; a value that has none (an
    # integer beyond 2^53) equals no declared value.
    fresh = declared()
    value = {**answer("identity", d=fresh)}
    value["projections"] = [{"source": {"document": "card", "member": "/name"}, "value": 2**60}]
    (conflict,) = diff_answer(Answer.from_json(value), fresh, W_SKILL)
    assert conflict.to_json() == {
        "check": "projection", "reason": "value_mismatch", **LOCATED,
        "source": {"document": "card", "member": "/name"}, "expected": "Stonework",
        "got": 2**60, "detail": "the value differs from the declared one",
    }  # fmt: skip


def test_an_answer_to_another_question_whole() -> None:
    # interview §5 / PROFILE §4.1: the response to a question is an answer to that
    # question; another question's answer is wrong_question, nothing returned.
    read = _rpc(canonicalize({"jsonrpc": "2.0", "id": 7, "result": answer("identity")}))
    where = Where("u", "capabilities")
    got, conflicts = check_answer(read, where)
    assert got is None
    assert [c.to_json() for c in conflicts] == [
        {"check": "answer_shape", "reason": "wrong_question", "interface": "u",
         "question": "capabilities", "expected": "capabilities", "got": "identity",
         "detail": "the answer names another question"},
    ]  # fmt: skip
    assert conflicts[0].where == where


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("urn:x," + INTERVIEW_URI, True),  # RFC 9110 §5.6.1: a list, no space needed
        ("urn:x ,\t" + INTERVIEW_URI + " \t", True),  # OWS is spaces and tabs
        ("\x0b" + INTERVIEW_URI, False),  # a vertical tab is no OWS
        ("\xa0" + INTERVIEW_URI, False),  # nor a no-break space
        ("X" + INTERVIEW_URI + "X", False),
        ("urn:x " + INTERVIEW_URI, False),  # one item "urn:x <uri>", not two
    ],
)
def test_the_echo_names_the_uri_as_a_list_item(value: str, named: bool) -> None:
    # PROFILE §3.2: the response lists the URI in A2A-Extensions, a comma-separated list
    # (RFC 9110 §5.6.1, items trimmed of OWS = spaces and tabs).
    exchange = Exchange(200, (("a2a-extensions", value),), b"{}")
    assert (check_echo(exchange, Where("u", "identity")) == []) is named
