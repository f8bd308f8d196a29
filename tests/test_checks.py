"""The verifier's pure checks (PROFILE §7), on values: no network here.

The honest answers come from the projection engine over the Stonework declarations;
each check is shown to pass on them and to fail on one precise mutation.
"""

from __future__ import annotations

import copy
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
from a2a_interview.ijson import loads
from a2a_interview.jcs import canonicalize
from a2a_interview.models import Answer, Source
from a2a_interview.spec import INTERVIEW_URI, QUESTIONS, TERMS_URI, ProposalFailure
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
    # issue 7 finding 2, PROFILE §7: nothing was answered; inactive_error_code, advisory.
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
