"""checks.py under mutation (issue 17, bench/mutation.py): whole conflicts, not only
their reason codes, written out by hand from PROFILE §7 and interview §4 rule 4 (the
reference card's proposals have sixteen members each: test_projection.py pins that)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from a2a_interview import reference
from a2a_interview.checks import (
    Binding,
    Check,
    Exchange,
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
    diff_answer,
    find_interfaces,
    read_result,
)
from a2a_interview.jcs import canonicalize
from a2a_interview.models import Answer
from a2a_interview.spec import INTERVIEW_URI, TERMS_URI
from support.checks import HONEST, ORIGIN, answer, declared


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


W = Where("https://a.example/rpc", "usage", "s1")
ECHO = (("a2a-extensions", INTERVIEW_URI),)
NOT_FOUND = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
RESULT = b'{"jsonrpc":"2.0","id":1,"result":{}}'
LOCATED = {"interface": "https://a.example/rpc", "question": "usage", "skill": "s1"}


def test_inactive_probe_answered_whole() -> None:
    # PROFILE §3.3: without activation an interview method does not exist.
    (conflict,), advisories = check_inactive(Exchange(200, ECHO, RESULT), Binding.JSONRPC, W)
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
    (echo,), advisories = check_inactive(Exchange(200, legacy, NOT_FOUND), Binding.JSONRPC, W)
    assert advisories == []
    assert echo.to_json() == {
        "check": "inactive_probe", "reason": "echo_without_activation", **LOCATED,
        "expected": {"error": {"code": -32601}},
        "got": {"status": 200, "error": {"code": -32601}, "echo": True},
        "detail": "named the interview URI in a response without activation",
    }  # fmt: skip
    other = b'{"jsonrpc":"2.0","id":1,"error":{"code":true}}'
    conflicts, (advisory,) = check_inactive(Exchange(200, (), other), Binding.JSONRPC, W)
    assert conflicts == []
    assert advisory.to_json() == {
        "code": "inactive_probe", "reason": "inactive_error_code", **LOCATED,
        "value": {"expected": {"error": {"code": -32601}},
                  "got": {"status": 200, "error": {"code": None}}},
        "detail": "the host answered the inactive probe with another error than method "
        "not found",
    }  # fmt: skip
    assert check_inactive(Exchange(404, (), b""), Binding.HTTP_JSON, W) == ([], [])
    for status in (199, 300, 405, 500):
        conflicts, (advisory,) = check_inactive(Exchange(status, (), b""), Binding.HTTP_JSON, W)
        assert conflicts == [] and advisory.to_json()["value"] == {
            "expected": {"status": 404}, "got": {"status": status}}  # fmt: skip
    for body in (b"not json", b"[]", b'{"error": 5}', b'{"error": {"code": "x"}}'):
        conflicts, (advisory,) = check_inactive(Exchange(200, (), body), Binding.JSONRPC, W)
        assert conflicts == [] and advisory.to_json()["value"]["got"] == {  # type: ignore[index]
            "status": 200, "error": {"code": None}}  # fmt: skip


def test_missing_echo_whole() -> None:
    # PROFILE §3.2: the activated response names the URI; with the 0.3 spelling, both.
    assert check_echo(Exchange(200, ECHO, b""), W) == []
    (conflict,) = check_echo(Exchange(200, (("a2a-extensions", "x"),), b""), W)
    assert conflict.to_json() == {
        "check": "activation_echo", "reason": "missing_echo", **LOCATED,
        "expected": {"A2A-Extensions": INTERVIEW_URI}, "got": {"A2A-Extensions": ["x"]},
        "detail": "an activated response must list the interview URI in its extensions header",
    }  # fmt: skip
    (legacy,) = check_echo(Exchange(200, ECHO, b""), W, legacy=True)
    assert legacy.to_json()["expected"] == {"X-A2A-Extensions": INTERVIEW_URI}
    assert legacy.to_json()["got"] == {"X-A2A-Extensions": []}
    both = (*ECHO, ("x-a2a-extensions", INTERVIEW_URI))
    assert check_echo(Exchange(200, both, b""), W, legacy=True) == []


def test_interfaces_that_differ_whole() -> None:
    # interview §4 rule 1 across bindings (A2A §5.1): the same bytes on every interface.
    same = check_interfaces_agree(("https://a/rpc", b"{}"), ("https://a/rest", b"{}"), W)
    assert same == []
    (conflict,) = check_interfaces_agree(("https://a/rpc", b"{}"), ("https://a/rest", b"[]"), W)
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


def _read(body: bytes, status: int = 200) -> Any:
    return read_result(Exchange(status, ECHO, body), Binding.HTTP_JSON, None)


def test_changed_between_asks_whole() -> None:
    # interview §4 rule 1: identical JCS bytes on a second ask; unreadable is not judged.
    one = answer("identity")
    two = {**one, "declared": not one["declared"]}
    first, second = _read(canonicalize(one)), _read(canonicalize(two))
    assert check_determinism(first, first, W) == []
    assert check_determinism(first, _read(b"", 500), W) == []
    assert check_determinism(_read(b"", 500), second, W) == []
    (conflict,) = check_determinism(first, second, W)
    assert conflict.to_json() == {
        "check": "determinism", "reason": "changed_between_asks", **LOCATED,
        "expected": "sha256:" + hashlib.sha256(canonicalize(one)).hexdigest(),
        "got": "sha256:" + hashlib.sha256(canonicalize(two)).hexdigest(),
        "detail": "two asks of an unchanged agent returned different answers",
    }  # fmt: skip


def test_not_the_standard_refusal_whole() -> None:
    # interview §6, PROFILE §5: the refusal's exact bytes are due.
    refusal = HONEST.interview.refusal
    assert check_closure(_read(refusal), refusal, Check.closure_method, W) == []
    identity = answer("identity")
    (conflict,) = check_closure(_read(canonicalize(identity)), refusal, Check.closure_selector, W)
    assert conflict.to_json() == {
        "check": "closure_selector", "reason": "not_standard_refusal", **LOCATED,
        "expected": json.loads(refusal), "got": identity,
        "detail": "the standard refusal was due",
    }  # fmt: skip
    (failed,) = check_closure(_read(b"", 503), refusal, Check.closure_method, W)
    assert failed.to_json()["got"] == {"status": 503}


def _rpc(body: bytes, status: int = 200) -> Any:
    return read_result(Exchange(status, ECHO, body), Binding.JSONRPC, 7)


def _shape(read: Any) -> dict[str, Any]:
    model, (conflict,) = check_answer(read, W)
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
    (mismatch,) = diff_answer(_projected(card_src, "Other"), HONEST, W)
    assert mismatch.to_json() == {
        "check": "projection", "reason": "value_mismatch", **LOCATED, "source": card_src,
        "expected": "Stonework", "got": "Other",
        "detail": "the value differs from the declared one",
    }  # fmt: skip
    assert diff_answer(_projected(card_src, "Stonework"), HONEST, W) == []
    nowhere = {"document": "card", "member": "/nope"}
    (unresolved,) = diff_answer(_projected(nowhere, 1), HONEST, W)
    assert unresolved.to_json() == {
        "check": "projection", "reason": "member_unresolved", **LOCATED, "source": nowhere,
        "got": 1, "detail": "the member names nothing in the document",
    }  # fmt: skip
    stranger = {"document": "proposal", "url": "https://x.example/p.json",
                "digest": "sha256:" + "0" * 64, "member": "/price"}  # fmt: skip
    (uncommitted,) = diff_answer(_projected(stranger, 1), HONEST, W)
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
    (failed,) = diff_answer(_projected(source, 1), broken, W)
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


# --- after issue 16: each test builds its own Declared (HONEST is built once, at import,
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
    assert diff_answer(Answer.from_json(answer("identity", d=fresh)), fresh, W) == []


def test_a_value_with_no_jcs_form_is_a_mismatch() -> None:
    # PROFILE §1.2: equality is equality of the JCS bytes; a value that has none (an
    # integer beyond 2^53) equals no declared value.
    fresh = declared()
    value = {**answer("identity", d=fresh)}
    value["projections"] = [{"source": {"document": "card", "member": "/name"}, "value": 2**60}]
    (conflict,) = diff_answer(Answer.from_json(value), fresh, W)
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
