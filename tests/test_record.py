"""The result record (PROFILE §8): schema, the runner's signature, standing, rendering."""

from __future__ import annotations

import base64
import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from a2a_interview import nkeys, record, reference
from a2a_interview.card import public_jwk, sign_card, thumbprint
from a2a_interview.checks import CHECKS, Advisory, Check, CheckStatus, Conflict, Outcome, Where
from a2a_interview.errors import (
    IngressError,
    KeyFormatError,
    SignatureError,
    TooLarge,
    WireFormatError,
)
from a2a_interview.models import Source
from a2a_interview.record import (
    DOES_NOT_ESTABLISH,
    OUTCOME_WORDS,
    STANDING_REASONS,
    STANDING_WHY,
    CallRecord,
    CardSignature,
    Incomplete,
    ProposalRecord,
    RanBy,
    RecordSignature,
    ResultRecord,
    Run,
    _record,
    agent_key_ids,
    agent_name,
    card_name,
    nkey_thumbprint,
    proposal_keys,
    read_record,
    record_sanity,
    rfc3339,
    schema,
    sign_record,
    standing_of,
    standing_reason,
    verify_record_signature,
)
from a2a_interview.record._record import MAX_AGENT_NAME
from a2a_interview.report import REMINDER, junit_xml, render_report
from a2a_interview.verifier import failed_record
from support.keys import card_key_seed

VALIDATOR = jsonschema.Draft202012Validator(schema())
CARD_THUMBPRINT = "snh9Wn5o_ibdcTy7ZNR1HksDAfUxtNaVBRboW6-EjrQ"  # the reference card key
RUNNER_SEED = nkeys.generate_seed()
WHERE = Where("https://a.example/rpc", "identity")
CONFLICT = Conflict(
    Check.projection, "value_mismatch", WHERE, Source("card", "/name"), "Stonework", "Stonewerk",
    "the value differs from the declared one",
)  # fmt: skip


def make(
    party: str = "third_party", outcome: Outcome = Outcome.non_conformant, **extra: Any
) -> ResultRecord:
    run = Run(
        "sha256:" + "1" * 64,
        (
            CallRecord(
                "https://a.example/rpc",
                "JSONRPC",
                "interview/identity",
                None,
                True,
                200,
                "sha256:" + "2" * 64,
            ),
        ),
        (
            ProposalRecord(
                "https://a.example/t.json", "sha256:" + "3" * 64, "ok", reference.PROPOSAL_KEY
            ),
        ),
        (CONFLICT,),
        {c: CheckStatus.passed for c in CHECKS} | {Check.projection: CheckStatus.failed},
    )
    fields: dict[str, Any] = {
        "url": "https://a.example",
        "card_url": "https://a.example/.well-known/agent-card.json",
        "card_digest": "sha256:" + "1" * 64,
        "card_signature": CardSignature(
            "verified", "served", ("served",), "k1", CARD_THUMBPRINT, "jku"
        ),
        "ran_by": RanBy(party, "Acme"),  # type: ignore[arg-type]
        "started_at": "2026-11-29T10:00:00.000Z",
        "finished_at": "2026-11-29T10:00:01.250Z",
        "runs": (run, run),
        "advisories": (Advisory("coverage", "omitted", WHERE, Source("card", "/version")),),
        "outcome": outcome,
        "checks": {c: CheckStatus.passed for c in CHECKS} | {Check.projection: CheckStatus.failed},
    }
    fields.update(extra)
    return ResultRecord(**fields)


# --- shape ----------------------------------------------------------------------------


def test_the_record_has_profile_8_members_and_validates() -> None:
    document = make().to_json()
    VALIDATOR.validate(document)
    assert document["format"] == "a2a-interview-result/1"
    assert set(document["agent"]) >= {"card_url", "card_digest", "card_signature"}
    assert set(document["agent"]["card_signature"]) >= {
        "status", "reading", "kid", "thumbprint", "key_source",
    }  # fmt: skip
    assert document["does_not_establish"] == list(DOES_NOT_ESTABLISH)
    run = document["runs"][0]
    assert set(run["calls"][0]) >= {"method", "params", "status", "response_digest"}
    assert set(run["proposals"][0]) >= {"url", "digest", "result"}
    assert set(run["conflicts"][0]) >= {"check", "question", "source", "expected", "got"}
    assert "signatures" not in document


def test_the_schema_rejects_what_it_should() -> None:
    for mutate in (
        lambda d: d.update(outcome="passed"),
        lambda d: d["ran_by"].update(party="vendor"),
        lambda d: d.pop("does_not_establish"),
        lambda d: d["runs"][0]["proposals"][0].update(result="bad_vibes"),
        lambda d: d["runs"][0]["conflicts"][0].update(check="vibes"),
        lambda d: d.update(outcome="unreachable"),  # unreachable needs its reason
    ):
        document = make().to_json()
        mutate(document)
        assert not VALIDATOR.is_valid(document)


def test_the_schema_takes_any_status_a_peer_can_send() -> None:
    # HTTP allows any three-digit status (h11 reads 100-999); a hostile peer's 999 is
    # recorded as received, and the record must still validate.
    call = CallRecord("https://a.example/rpc", "JSONRPC", "interview/identity", None, True,
                      999, "sha256:" + "2" * 64)  # fmt: skip
    run = Run(None, (call,), (), (), {})
    VALIDATOR.validate(make(runs=(run,)).to_json())


def test_failed_record_validates() -> None:
    document = failed_record("https://x.example").to_json()
    VALIDATOR.validate(document)
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "internal_error"


def test_rfc3339() -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2)))
    assert rfc3339(moment) == "2026-01-02T01:04:05.678Z"
    with pytest.raises(ValueError):
        rfc3339(datetime(2026, 1, 1))
    assert rfc3339(datetime(2026, 1, 1, tzinfo=UTC)).endswith("Z")


# --- the runner's signature ----------------------------------------------------------------


def test_signature_round_trips_and_tampering_fails() -> None:
    signed = sign_record(make().to_json(), RUNNER_SEED)
    VALIDATOR.validate(signed)
    key = nkeys.public_of(nkeys.private_key(RUNNER_SEED))
    assert signed["ran_by"]["key"] == key
    assert verify_record_signature(signed).status == "valid"
    assert verify_record_signature(signed).keys == (key,)

    for mutate in (
        lambda d: d.update(outcome="consistent"),
        lambda d: d["runs"][0]["conflicts"].clear(),
        lambda d: d["ran_by"].update(party="self"),
        lambda d: d.update(standing="claim"),  # it was evidence
    ):
        tampered = copy.deepcopy(signed)
        mutate(tampered)
        assert verify_record_signature(tampered).status == "invalid"


def test_signature_edge_cases() -> None:
    unsigned = make().to_json()
    assert verify_record_signature(unsigned).status == "unsigned"
    signed = sign_record(unsigned, RUNNER_SEED)
    other = nkeys.generate_seed()
    # A valid signature by a key that is not the named runner's does not count.
    by_other = sign_record({**unsigned}, other)
    by_other["ran_by"] = signed["ran_by"]
    assert verify_record_signature(by_other).status == "invalid"
    for bad in ([], "x", [{"key": "U", "sig": "x"}], [{**signed["signatures"][0], "n": 1}]):
        assert verify_record_signature({**signed, "signatures": bad}).status == "invalid"
    with pytest.raises(SignatureError):
        sign_record(signed, other)  # the record names another runner key
    with pytest.raises(KeyFormatError):
        sign_record(unsigned, "SUnot-a-seed")


def test_the_value_signs_like_the_json() -> None:
    record = make().signed(RUNNER_SEED)
    document = record.to_json()
    assert verify_record_signature(document).status == "valid"
    assert document == sign_record(make().to_json(), RUNNER_SEED)  # Ed25519 is deterministic


# --- standing -------------------------------------------------------------------------


def test_standing_self_is_a_claim() -> None:
    document = make("self").to_json()
    assert standing_of(document) == "claim" == document["standing"]
    assert standing_of(sign_record(document, RUNNER_SEED)) == "claim"


def test_standing_third_party_with_other_key_is_evidence() -> None:
    # PROFILE §8 (amended; D-RECORD-7): unsigned is a claim, whoever it names.
    assert standing_of(make("third_party").to_json()) == "claim"
    assert standing_of(make("platform").to_json()) == "claim"
    assert standing_of(sign_record(make("platform").to_json(), RUNNER_SEED)) == "evidence"
    signed = sign_record(make("third_party").to_json(), RUNNER_SEED)
    assert standing_of(signed) == "evidence" == signed["standing"]


def test_standing_third_party_with_the_cards_key_is_a_claim() -> None:
    seed = card_key_seed()
    assert nkey_thumbprint(nkeys.public_of(nkeys.private_key(seed))) == CARD_THUMBPRINT
    signed = sign_record(make("third_party").to_json(), seed)
    assert standing_of(signed) == "claim" == signed["standing"]


def test_standing_third_party_with_a_proposal_key_is_a_claim() -> None:
    signed = sign_record(make("platform").to_json(), reference.PROPOSAL_SEED)
    assert standing_of(signed) == "claim"


def test_standing_is_recomputed_never_read() -> None:
    document = make("self").to_json()
    document["standing"] = "evidence"
    assert standing_of(document) == "claim"
    assert "EVIDENCE" not in render_report(document)
    assert standing_of({"ran_by": {"party": "reviewer", "name": "x"}}) == "claim"
    assert standing_of({}) == "claim"


def test_standing_with_a_runner_key_that_is_not_an_nkey_is_a_claim() -> None:
    # decisions D-RECORD-7: claim for anything malformed; whose key it is cannot be told.
    document = make("third_party").to_json()
    document["ran_by"]["key"] = "not-an-nkey"  # type: ignore[index]
    assert standing_of(document) == "claim"


# --- forgeries (D-RECORD-7) ----------------------------------------------------

AGENT_KEYS = (CARD_THUMBPRINT, reference.PROPOSAL_KEY)


def test_agent_keys_are_in_the_record_and_validate() -> None:
    # PROFILE §8: agent.keys, sorted, each a thumbprint or an nkey.
    document = make(agent_keys=AGENT_KEYS).to_json()
    VALIDATOR.validate(document)
    assert document["agent"]["keys"] == sorted(AGENT_KEYS)
    bad = copy.deepcopy(document)
    bad["agent"]["keys"] = ["not a key"]
    assert not VALIDATOR.is_valid(bad)


@pytest.mark.parametrize("seed", [card_key_seed(), reference.PROPOSAL_SEED])
def test_an_agent_key_edited_out_and_resigned_stays_a_claim(seed: str) -> None:
    # D-RECORD-7: thumbprint set to null, proposal signers set to null, re-signed
    # with the agent's key. agent.keys still names the key.
    document = make("platform", agent_keys=AGENT_KEYS).to_json()
    document["agent"]["card_signature"]["thumbprint"] = None  # type: ignore[index]
    for run in document["runs"]:  # type: ignore[union-attr]
        for proposal in run["proposals"]:  # type: ignore[index]
            proposal["signer"] = None
    forged = sign_record(document, seed)
    assert verify_record_signature(forged).status == "valid"
    assert standing_reason(forged) == ("claim", "agent_key")
    assert "Standing: CLAIM" in render_report(forged)


@pytest.mark.parametrize("keys", [None, "drop", 7, ["x"]])
def test_agent_keys_missing_or_malformed_is_a_claim(keys: Any) -> None:
    # PROFILE §8: "a record without agent.keys is a claim", even signed by a stranger.
    document = make("third_party", agent_keys=AGENT_KEYS).to_json()
    if keys == "drop":
        del document["agent"]["keys"]  # type: ignore[union-attr]
    else:
        document["agent"]["keys"] = keys  # type: ignore[index]
    signed = sign_record(document, RUNNER_SEED)
    assert standing_reason(signed) == ("claim", "agent_keys_missing")
    assert "Standing: CLAIM" in render_report(signed)


def test_self_changed_to_third_party_and_left_unsigned_is_a_claim() -> None:
    # D-RECORD-7: `self` changed to `third_party`, left unsigned.
    document = make("self", agent_keys=AGENT_KEYS).to_json()
    document["ran_by"]["party"] = "third_party"  # type: ignore[index]
    document["standing"] = "evidence"
    assert standing_reason(document) == ("claim", "unsigned")
    assert "Standing: CLAIM" in render_report(document)


def test_self_changed_to_third_party_in_a_signed_record_is_a_claim() -> None:
    document = make("self", agent_keys=AGENT_KEYS).signed(RUNNER_SEED).to_json()
    document["ran_by"]["party"] = "third_party"  # type: ignore[index]
    assert standing_reason(document) == ("claim", "signature_invalid")


def test_a_stranger_signed_record_is_evidence_until_altered() -> None:
    document = make("platform", agent_keys=AGENT_KEYS).signed(RUNNER_SEED).to_json()
    assert standing_reason(document) == ("evidence", "evidence") == (document["standing"],) * 2
    document["outcome"] = "consistent"
    assert standing_reason(document) == ("claim", "signature_invalid")


@pytest.mark.parametrize("status", ["key_unavailable", "invalid", "verified"])
def test_a_runner_key_named_as_a_card_kid_or_listed_is_no_veto(status: str) -> None:
    # D-RECORD-8, PROFILE §8 (amended): a kid is any string the agent chooses,
    # and agent.listed_keys holds keys it merely lists. Neither is a key that signed, so
    # naming the platform's public runner key there cannot turn its evidence into a claim.
    runner = nkeys.public_of(nkeys.private_key(RUNNER_SEED))
    for kid in (runner, nkey_thumbprint(runner)):
        signature = CardSignature(status, kid=kid, thumbprint=CARD_THUMBPRINT)
        document = (
            make(
                "platform",
                agent_keys=(CARD_THUMBPRINT,),
                listed_keys=(runner, str(nkey_thumbprint(runner))),
                card_signature=signature,
            )
            .signed(RUNNER_SEED)
            .to_json()
        )
        VALIDATOR.validate(document)
        assert standing_reason(document) == ("evidence", "evidence")


def test_the_verified_card_key_named_only_as_thumbprint_is_still_a_claim() -> None:
    # The thumbprint of the key that *verified* the card is a key that signed.
    signature = CardSignature("verified", thumbprint=nkey_thumbprint(
        nkeys.public_of(nkeys.private_key(RUNNER_SEED))))  # fmt: skip
    document = make("platform", agent_keys=(), card_signature=signature)
    assert standing_reason(document.signed(RUNNER_SEED).to_json()) == ("claim", "agent_key")


def test_agent_key_ids_and_proposal_keys() -> None:
    jwk = {k: v for k, v in reference.card_key_jwk().items() if k != "d"}
    assert agent_key_ids([jwk, {"kty": "nope"}, "x"], ["junk", reference.PROPOSAL_KEY]) == (
        tuple(sorted((CARD_THUMBPRINT, reference.PROPOSAL_KEY)))
    )
    body = reference.read_bytes(reference.PROPOSAL_FILES[0])
    assert proposal_keys(body) == (reference.PROPOSAL_KEY,)
    assert proposal_keys(None) == proposal_keys(b"\x00") == proposal_keys(b"[]") == ()


def test_read_record_refuses_what_is_not_a_record() -> None:
    document = make().to_json()
    assert read_record(json.dumps(document).encode()) == document
    with pytest.raises(IngressError):
        read_record(b"not json")
    with pytest.raises(TooLarge):
        read_record(b" " * (1 << 20) + b"{}")
    for other in (b"[]", b'{"format": "a2a-interview-result/2"}', b"{}"):
        with pytest.raises(WireFormatError):
            read_record(other)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))] or [path]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))] or [path]
    return [path]


SIGNED_EVIDENCE = make("platform", agent_keys=AGENT_KEYS).signed(RUNNER_SEED).to_json()
EDITABLE = [p for p in _leaves(SIGNED_EVIDENCE) if p and p[0] not in ("signatures", "standing")]


@settings(max_examples=200, deadline=None)
@given(
    where=st.sampled_from(EDITABLE),
    value=st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
)
def test_any_edit_of_a_signed_record_makes_it_a_claim(where: tuple[Any, ...], value: Any) -> None:
    # PROFILE §8, D-RECORD-7: whatever member a forger changes, a signed record
    # stops being evidence.
    document = copy.deepcopy(SIGNED_EVIDENCE)
    parent: Any = document
    for step in where[:-1]:
        parent = parent[step]
    assume(parent[where[-1]] != value or type(parent[where[-1]]) is not type(value))
    parent[where[-1]] = value
    assert standing_of(document) == "claim"


# --- rendering ------------------------------------------------------------------------


def test_report_says_what_it_found() -> None:
    text = render_report(make().signed(RUNNER_SEED))
    assert "Outcome: NON_CONFORMANT" in text
    assert "FAIL      projection" in text and "PASS      card_fetch" in text
    assert 'expected: "Stonework"' in text and 'got:      "Stonewerk"' in text
    assert 'verified under the "served" reading' in text
    assert "Standing: EVIDENCE" in text and 'third_party "Acme"' in text
    assert REMINDER in text
    assert "Standing: CLAIM" in render_report(make("self"))


def test_report_escapes_peer_content() -> None:
    hostile = "\x1b[31mred\x1b]0;title\x07\u202e"
    conflict = Conflict(Check.projection, "value_mismatch", WHERE, Source("card", "/name"),
                        "Stonework", hostile)  # fmt: skip
    record = make(advisories=(), runs=(make().runs[0].__class__(
        None, (), (), (conflict,), {Check.projection: CheckStatus.failed}),))  # fmt: skip
    text = render_report(record)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\u001b[31mred" in text


def test_report_escapes_a_stored_records_outcome_and_check_statuses() -> None:
    # docs/security.md "Peer content never drives the terminal": record show renders
    # anyone's file; its outcome and check statuses went out raw (upper-cased).
    hostile = "\x1b[2J\x1b]0;t\x07"
    text = render_report({"format": "a2a-interview-result/1", "outcome": hostile,
                          "checks": {"card_fetch": hostile, "card_signature": ["x"]}})  # fmt: skip
    assert "\x1b" not in text and "\x07" not in text
    assert "Outcome: \\u001b[2J" in text
    assert "PASS      card_fetch" not in text
    assert "Outcome: NON_CONFORMANT: " in render_report(make())


def test_report_for_authentication_required() -> None:
    record = make(
        outcome=Outcome.unreachable,
        incomplete=Incomplete(
            "authentication_required", "the agent requires authentication", ("bearer",)
        ),
    )
    text = render_report(record)
    assert "securitySchemes" in text and '"bearer"' in text
    assert "not non-conformance" in text


def test_junit_has_one_testcase_per_check() -> None:
    root = ET.fromstring(junit_xml(make()))
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [str(c) for c in CHECKS]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["projection"] and suite.get("failures") == "1"
    unreachable = ET.fromstring(junit_xml(failed_record("https://x.example")))
    names = [c.get("name") for c in unreachable.iter("testcase") if c.find("error") is not None]
    assert names == ["procedure"]


def test_junit_never_calls_an_unreachable_agent_non_conformant() -> None:
    # PROFILE §7: unreachable concludes nothing; a card that could not be read fails
    # card_fetch, but not as non-conformance.
    run = Run(None, (), (), (), {Check.card_fetch: CheckStatus.failed},
              Incomplete("connect_failed", "the connection failed"))  # fmt: skip
    record = make(outcome=Outcome.unreachable, runs=(run,), advisories=(),
                  checks={Check.card_fetch: CheckStatus.failed},
                  incomplete=Incomplete("connect_failed", "the connection failed"))  # fmt: skip
    root = ET.fromstring(junit_xml(record))
    failures = list(root.iter("failure"))
    assert [f.get("type") for f in failures] == ["unreachable"]


def test_every_standing_reason_has_its_report_line() -> None:
    # PROFILE §8: the report says why a record is a claim; no reason goes unexplained.
    from a2a_interview.record import STANDING_REASONS
    from a2a_interview.report import _WHY

    assert set(_WHY) == set(STANDING_REASONS)
    seen = {
        "evidence": make("platform", agent_keys=AGENT_KEYS).signed(RUNNER_SEED).to_json(),
        "self_run": make("self", agent_keys=AGENT_KEYS).to_json(),
        "unsigned": make("platform", agent_keys=AGENT_KEYS).to_json(),
        "agent_key": make("platform", agent_keys=AGENT_KEYS).signed(card_key_seed()).to_json(),
    }
    for reason, document in seen.items():
        assert standing_reason(document)[1] == reason
        assert _WHY[reason] in render_report(document)  # type: ignore[index]


# --- sanity (D-STORE-12, PROFILE §8 as amended) ------------------------------


def _sane_edit(edit: Any) -> dict[str, Any]:
    document = make("platform", agent_keys=AGENT_KEYS).to_json()
    edit(document)
    return sign_record(document, RUNNER_SEED)


def _set(*path_value: Any) -> Any:
    *path, value = path_value

    def edit(document: dict[str, Any]) -> None:
        target: Any = document
        for name in path[:-1]:
            target = target[name]
        target[path[-1]] = value

    return edit


def _filed_as_b(document: dict[str, Any]) -> None:
    document["agent"]["url"] = "https://b.example"
    document["agent"]["card_url"] = "https://b.example/.well-known/agent-card.json"
    document["outcome"] = "non_conformant"


SANITY = [
    ("finished 2099", _set("finished_at", "2099-01-01T00:00:00Z"), "from_the_future"),
    ("finished 9999", _set("finished_at", "9999-12-31T23:59:59Z"), "from_the_future"),
    ("finished before started", _set("started_at", "2026-11-29T10:00:02Z"),
     "finished_before_started"),
    ("no zone", _set("finished_at", "2026-11-29T10:00:01"), "times_unreadable"),
    ("A's run filed as B's", _filed_as_b, "calls_elsewhere"),
    ("javascript: card URL", _set("agent", "card_url", "javascript:alert(1)"), "url_scheme"),
    ("vbscript: agent URL", _set("agent", "url", " vbscript:x"), "url_scheme"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "reason"), [s[1:] for s in SANITY], ids=[s[0] for s in SANITY])
def test_an_insane_record_is_a_claim_with_its_reason(edit: Any, reason: str) -> None:
    # PROFILE §8 (amended): every reader checks sanity; outside a store a failing record
    # is shown as a claim with its reason, however well signed.
    document = _sane_edit(edit)
    assert verify_record_signature(document).status == "valid"
    assert standing_reason(document) == ("claim", reason)
    assert STANDING_WHY[reason] in render_report(document)  # type: ignore[index]


def test_the_reader_clock_decides_the_future_with_five_minutes_of_slack() -> None:
    document = make("platform", agent_keys=AGENT_KEYS).signed(RUNNER_SEED).to_json()
    finished = datetime(2026, 11, 29, 10, 0, 1, 250000, tzinfo=UTC)
    assert record_sanity(document, finished - timedelta(minutes=4, seconds=59)) is None
    late = record_sanity(document, finished - timedelta(minutes=5, seconds=1))
    assert late is not None and late.reason == "from_the_future"
    assert standing_reason(document, now=finished) == ("evidence", "evidence")
    with pytest.raises(ValueError):
        record_sanity(document, finished.replace(tzinfo=None))


def test_a_record_without_agent_url_is_sane() -> None:
    # PROFILE §8 names agent.card_url, not agent.url: a record from another
    # implementation that leaves agent.url out is not a URL-scheme failure; its calls are
    # judged against the card URL's host.
    document = make("platform", agent_keys=AGENT_KEYS).to_json()
    del document["agent"]["url"]
    finished = datetime(2026, 11, 29, 10, 0, 1, 250000, tzinfo=UTC)
    assert record_sanity(document, finished) is None
    document["agent"]["card_url"] = "ftp://agent.example/.well-known/agent-card.json"
    insane = record_sanity(document, finished)
    assert insane is not None and insane.reason == "url_scheme"


def test_every_standing_reason_has_its_words() -> None:
    # One vocabulary, defined once (D-WEB-21).
    assert set(STANDING_WHY) == set(STANDING_REASONS)


# --- agent.name (D-STORE-16) -------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "name"),
    [
        ({"name": "Stonework"}, "Stonework"),
        ({"name": "n" * 250}, "n" * MAX_AGENT_NAME),  # bounded: cut, never refused
        ({"name": "a\x00b"}, "a\ufffdb"),  # no store holds a NUL
        ({"name": ""}, None),
        ({"name": 7}, None),
        ({"name": ["Stonework"]}, None),
        ({"name": {"en": "Stonework"}}, None),
        ({}, None),
        (None, None),
        ("Stonework", None),
    ],
)
def test_the_record_names_the_agent_as_its_card_does_a_string_only(card: Any, name: Any) -> None:
    # PROFILE §8 allows added members: agent.name is the card's own name, a bounded
    # string or nothing; the record validates either way and round-trips through the
    # reader every display uses.
    assert card_name(card) == name
    document = make(agent_name=card_name(card)).to_json()
    VALIDATOR.validate(document)
    assert agent_name(document) == name
    assert ("name" in document["agent"]) is (name is not None)


def test_a_name_no_verifier_writes_is_no_name() -> None:
    # A record written by someone else: a name that is not a bounded string without NUL
    # is shown as none (record.agent_name), and the schema refuses it.
    for bad in ("", "x" * (MAX_AGENT_NAME + 1), "a\x00b", 7, None, ["x"]):
        document = make().to_json()
        document["agent"]["name"] = bad
        assert agent_name(document) is None
        if bad != "a\x00b":
            assert not VALIDATOR.is_valid(document)


# --- one vocabulary (D-WEB-21) ----------------------------------------------------


@pytest.mark.parametrize("outcome", list(Outcome))
def test_the_report_words_outcomes_in_the_one_vocabulary(outcome: Outcome) -> None:
    # D-WEB-21: the verifier's report (verify, record show) says an outcome in
    # the words the ledger's page, API and CLI use (record.OUTCOME_WORDS), never its own.
    assert set(OUTCOME_WORDS) == {str(o) for o in Outcome}
    label, meaning = OUTCOME_WORDS[str(outcome)]
    text = render_report(make(outcome=outcome))
    [line] = [x for x in text.splitlines() if x.startswith("Outcome: ")]
    assert line.startswith(f"Outcome: {str(outcome).upper()}")  # the code, as before
    assert line.endswith(f": {meaning}.")
    # The label where it says more than the code ("not completed", "does not offer the
    # interview"); else the code is the label in capitals.
    assert label in line or label.replace("-", "_").upper() in line


# ---------------------------------------------------------------- closing mutation testing's gaps
# record.py under mutation (bench/mutation.py): the runner signature's every verdict,
# signing's errors, and the agent key ids a reader adds from a card (PROFILE §8). Records
# and cards are written here; keys are fresh nkeys and Ed25519 keys.


SEED = nkeys.generate_seed()
KEY = nkeys.public_of(nkeys.private_key(SEED))
OTHER_SEED = nkeys.generate_seed()
OTHER = nkeys.public_of(nkeys.private_key(OTHER_SEED))


def _doc(**extra: Any) -> dict[str, Any]:
    return {"outcome": "consistent", "ran_by": {"party": "third_party", "name": "R"}, **extra}


def test_a_record_signed_by_its_runner_is_valid() -> None:
    assert verify_record_signature(sign_record(_doc(), SEED)) == RecordSignature("valid", (KEY,))
    assert verify_record_signature(_doc()) == RecordSignature("unsigned")


@pytest.mark.parametrize("signatures", [[], {}, "x", None, 1])
def test_signatures_that_are_not_a_list_of_items_are_invalid(signatures: Any) -> None:
    assert verify_record_signature(_doc(signatures=signatures)) == RecordSignature("invalid")


def _item(signed: dict[str, Any], **change: Any) -> dict[str, Any]:
    return {**signed, "signatures": [{**signed["signatures"][0], **change}]}


@pytest.mark.parametrize(
    "change",
    [
        {"sig": "AAAA"},  # not 64 bytes
        {"sig": 5},
        {"key": "not an nkey"},
        {"key": OTHER},  # a well-formed key that did not sign
        {"extra": 1},  # members other than key and sig
    ],
)
def test_a_malformed_or_wrong_signature_is_invalid(change: dict[str, Any]) -> None:
    signed = sign_record(_doc(), SEED)
    assert verify_record_signature(_item(signed, **change)) == RecordSignature("invalid")


def test_an_item_that_is_not_an_object_is_invalid() -> None:
    signed = sign_record(_doc(), SEED)
    assert verify_record_signature({**signed, "signatures": ["x"]}) == RecordSignature("invalid")


def test_a_padded_or_non_canonical_signature_is_invalid() -> None:
    signed = sign_record(_doc(), SEED)
    sig = signed["signatures"][0]["sig"]
    assert verify_record_signature(_item(signed, sig=sig + "==")).status == "invalid"
    raw = base64.urlsafe_b64decode(sig + "==")
    standard = base64.b64encode(raw).decode().rstrip("=")
    if standard != sig:
        assert verify_record_signature(_item(signed, sig=standard)).status == "invalid"


def test_a_record_signed_by_another_key_than_its_runner_names_is_invalid_with_keys() -> None:
    # PROFILE §8: one signature must be by ran_by.key; the keys that did verify are kept.
    signed = sign_record(_doc(), OTHER_SEED)
    renamed = {**signed, "ran_by": {**signed["ran_by"], "key": KEY}}
    resigned = dict(renamed)
    body = record.signing_bytes(resigned)
    sig = base64.urlsafe_b64encode(nkeys.private_key(OTHER_SEED).sign(body)).rstrip(b"=")
    resigned["signatures"] = [{"key": OTHER, "sig": sig.decode()}]
    assert verify_record_signature(resigned) == RecordSignature("invalid", (OTHER,))


def test_signing_replaces_earlier_signatures_and_says_what_is_wrong() -> None:
    earlier = {**_doc(), "signatures": [{"key": OTHER, "sig": "x"}]}
    signed = sign_record(earlier, SEED)
    assert [s["key"] for s in signed["signatures"]] == [KEY]
    assert verify_record_signature(signed).status == "valid"
    assert earlier["signatures"] == [{"key": OTHER, "sig": "x"}]  # the input untouched
    with pytest.raises(SignatureError) as caught:
        sign_record({"outcome": "consistent"}, SEED)
    assert str(caught.value) == "the record has no ran_by object"
    with pytest.raises(SignatureError) as caught:
        sign_record(_doc(ran_by={"party": "self", "key": OTHER}), SEED)
    assert str(caught.value) == "the record names another runner key"


def _card() -> dict[str, Any]:
    return {"name": "N", "version": "1", "skills": []}


def test_card_key_ids_are_the_thumbprints_of_jwks_keys_that_signed_sorted() -> None:
    # PROFILE §8 (amended, D-RECORD-8): an agent key is a key that verified one
    # of the card's signatures; a key the JWKS merely holds names none (else an agent
    # could list a platform's public runner key and veto its evidence).
    from cryptography.hazmat.primitives.asymmetric import ed25519

    privates = [ed25519.Ed25519PrivateKey.generate() for _ in range(3)]
    jwks = [public_jwk(p, kid=f"k{i}") for i, p in enumerate(privates)]
    card = sign_card(_card(), privates[2], kid="k2")
    card = sign_card(card, privates[0], kid="k0")  # two signers, the listed k1 not one
    expected = tuple(sorted((thumbprint(jwks[0]), thumbprint(jwks[2]))))
    assert record.card_key_ids(sign_record(_doc(), SEED), card, jwks) == expected
    assert record.card_key_ids(_doc(), card, [*jwks, {"kty": "nope"}, "x"]) == expected
    assert record.card_key_ids(_doc(), card, reversed(jwks)) == expected
    assert record.card_key_ids(_doc(), card, [jwks[1]]) == ()  # listed only
    assert record.card_key_ids(_doc(), _card(), jwks) == ()  # an unsigned card


def test_a_runner_key_that_signed_the_card_is_an_agent_key() -> None:
    # PROFILE §8: a runner whose key verifies one of the card's signatures holds an agent
    # key, whatever the record says; its thumbprint is added.
    private = nkeys.private_key(SEED)
    card = sign_card(_card(), private, kid="runner")
    runner_id = thumbprint(record.nkey_jwk(KEY))
    assert record.card_key_ids(sign_record(_doc(), SEED), card) == (runner_id,)
    other = sign_card(_card(), nkeys.private_key(OTHER_SEED), kid="other")
    assert record.card_key_ids(sign_record(_doc(), SEED), other) == ()
    assert record.card_key_ids(_doc(ran_by={"key": "bad"}), card) == ()
    assert record.card_key_ids(_doc(ran_by={"key": 5}), card) == ()
    assert record.card_key_ids(sign_record(_doc(), SEED), [card]) == ()


def test_rfc3339_is_utc_with_milliseconds() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    plus2 = timezone(timedelta(hours=2))
    moment = datetime(2026, 1, 2, 3, 4, 5, 999_999, tzinfo=plus2)
    assert record.rfc3339(moment) == "2026-01-02T01:04:05.999Z"
    assert record.rfc3339(datetime(2026, 1, 2, tzinfo=UTC)) == "2026-01-02T00:00:00.000Z"
    with pytest.raises(ValueError, match=r"^a naive datetime has no zone$"):
        record.rfc3339(datetime(2026, 1, 2))


def test_agent_key_ids_skip_what_names_no_key_and_go_on() -> None:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    good = public_jwk(ed25519.Ed25519PrivateKey.generate(), kid="k")
    ids = record.agent_key_ids([{"kty": "nope"}, good], ["bad", KEY])
    assert ids == tuple(sorted([thumbprint(good), KEY]))


def test_proposal_keys_names_each_well_formed_key_once() -> None:
    import json

    body = json.dumps({"signatures": [{"key": KEY}, "x", {"key": 5}, {"key": "bad"},
                                      {"key": OTHER}, {"key": KEY}]}).encode()  # fmt: skip
    assert record.proposal_keys(body) == (KEY, OTHER)
    assert record.proposal_keys(body, max_bytes=len(body)) == (KEY, OTHER)
    assert record.proposal_keys(body, max_bytes=len(body) - 1) == ()
    assert record.proposal_keys(b'{"signatures": {"key": 1}}') == ()
    assert record.proposal_keys(b"[1]") == ()
    assert record.proposal_keys(None) == ()


def test_rfc3339_reads_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    from datetime import UTC, datetime

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        moment = datetime(2026, 1, 2, 3, 4, 5, 1000, tzinfo=UTC)
        assert record.rfc3339(moment) == "2026-01-02T03:04:05.001Z"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_the_schema_is_the_shipped_2020_12_schema() -> None:
    value = record.schema()
    assert value["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "format" in value["properties"]


def test_read_record_bounds_and_its_fixed_error() -> None:
    import json

    from a2a_interview.errors import TooLarge, WireFormatError

    body = json.dumps({"format": "a2a-interview-result/1"}).encode()
    assert record.read_record(body, max_bytes=len(body)) == {"format": "a2a-interview-result/1"}
    with pytest.raises(TooLarge):
        record.read_record(body, max_bytes=len(body) - 1)
    with pytest.raises(WireFormatError) as caught:
        record.read_record(b'{"format": "other"}')
    assert str(caught.value) == "not an object whose format is a2a-interview-result/1"


def test_a_record_without_canonical_form_has_an_invalid_signature() -> None:
    # PROFILE §8: the signed bytes are JCS; a record JCS cannot carry cannot verify.
    signed = sign_record(_doc(), SEED)
    assert verify_record_signature({**signed, "n": 2**60}) == RecordSignature("invalid")
    assert verify_record_signature({**signed, "n": float("nan")}) == RecordSignature("invalid")


NOW = __import__("datetime").datetime(2026, 6, 1, 12, 0, tzinfo=__import__("datetime").UTC)
CARD = "https://a.example/.well-known/agent-card.json"


def _sane(**extra: Any) -> dict[str, Any]:
    return {"agent": {"url": "https://a.example/", "card_url": CARD},
            "started_at": "2026-06-01T11:00:00Z", "finished_at": "2026-06-01T11:01:00Z",
            "runs": [{"calls": [{"interface": "https://a.example/rpc"}],
                      "proposals": [{"url": "https://a.example/p.json"}]}], **extra}  # fmt: skip


def _calls(*interfaces: Any, card_url: Any = CARD, url: Any = "https://a.example/") -> Any:
    runs = [{"calls": [{"interface": i} for i in interfaces]}]
    return record.record_sanity(_sane(agent={"url": url, "card_url": card_url}, runs=runs), NOW)


def test_sanity_says_each_failure_in_fixed_words() -> None:
    # PROFILE §8 (amended, D-STORE-12); docs/decisions.md D-STORE-12:
    # the checks in order, each a fixed reason and fixed detail, never a record's value.
    insane = record.Insane
    sanity = record.record_sanity
    assert sanity(_sane(), NOW) is None
    assert sanity(_sane(started_at="x"), NOW) == insane(
        "times_unreadable", "started_at or finished_at is not an RFC 3339 time")  # fmt: skip
    same = "2026-06-01T11:00:00Z"
    assert sanity(_sane(finished_at=same, started_at=same), NOW) is None  # equal: in order
    assert sanity(_sane(finished_at="2026-06-01T10:59:59Z"), NOW) == insane(
        "finished_before_started", "finished_at is earlier than started_at")  # fmt: skip
    assert sanity(_sane(finished_at="2026-06-01T12:05:00Z"), NOW) is None  # the skew, exactly
    assert sanity(_sane(finished_at="2026-06-01T12:05:00.001Z"), NOW) == insane(
        "from_the_future", "finished_at is later than the reader's clock")  # fmt: skip
    assert sanity(_sane(agent={"url": "ftp://a.example/", "card_url": CARD}), NOW) == insane(
        "url_scheme", "the agent's URL is not an http or https URL")  # fmt: skip
    bad_proposal = {"runs": [{"calls": [], "proposals": [{"url": "data:,x"}]}]}
    assert sanity(_sane(**bad_proposal), NOW) == insane(
        "url_scheme", "a proposal URL is not an http or https URL")  # fmt: skip
    assert sanity(_sane(runs=[{"proposals": [{"url": None}, {}]}]), NOW) is None
    assert _calls("javascript:x") == insane(
        "url_scheme", "a call's interface is not an http or https URL")  # fmt: skip
    assert _calls("https://b.example/rpc") == insane(
        "calls_elsewhere", "a call was made to another agent's interface")  # fmt: skip
    with pytest.raises(ValueError, match=r"^a naive datetime has no zone$"):
        sanity(_sane(), NOW.replace(tzinfo=None))


@pytest.mark.parametrize(
    ("interface", "same"),
    [
        ("HTTPS://A.EXAMPLE./rpc", True),  # scheme and host without case, a trailing dot
        ("http://api.a.example/rpc", True),  # a subdomain of the card's host
        ("https://www.a.example/rpc", True),  # www. set aside
        ("https://wwwa.example/rpc", False),
        ("https://xa.example/rpc", False),  # a suffix that is not a subdomain
        ("https://example/rpc", True),  # the card's host a subdomain of the call's
        ("https:///rpc", False),  # no host
        (5, False),
    ],
)
def test_a_call_belongs_to_the_agent_by_host(interface: Any, same: bool) -> None:
    found = _calls(interface)
    assert (found is None) is same
    assert found is None or found.reason in ("calls_elsewhere", "url_scheme")


def test_the_card_urls_host_is_home_else_the_agents() -> None:
    # docs/decisions.md (ledger store, 12): the card URL's host; agent.url's without one.
    assert _calls("https://a.example/rpc", card_url=None) is None
    assert _calls("https://c.example/rpc", card_url="https://c.example/card") is None
    assert _calls("https://a.example/rpc", card_url="https://c.example/card") is not None
    assert _calls("https://a.example/rpc", card_url="https://www.a.example/card") is None
    assert _calls("https://a.example/rpc", card_url="https://x.www.a.example/c") is None


# --- record.py: the values' JSON, the words of outcomes, credentials ------


def test_outcome_words_are_the_one_vocabulary_and_unknown_otherwise() -> None:
    # PROFILE §8's outcome codes (D-WEB-21): a code has its fixed label; an
    # unknown code, a value that is not a string, or one JSON could give (a list) is
    # the fixed "unrecognised" pair, never an error.
    unknown = ("unrecognised outcome", "this version cannot read it")
    assert _record.outcome_words("non_conformant")[0] == "non-conformant"
    assert _record.outcome_words("unreachable")[0] == "not completed"
    assert _record.outcome_words("passed") == unknown
    assert _record.outcome_words(None) == unknown
    assert _record.outcome_words(["consistent"]) == unknown
    assert _record.outcome_words({"consistent": 1}) == unknown


def test_an_agent_name_of_one_character_is_a_name() -> None:
    # PROFILE §8 allows added members: agent.name is a non-empty string (card_name).
    assert record.agent_name({"agent": {"name": "N"}}) == "N"
    assert record.agent_name({"agent": {"name": ""}}) is None


def _credentials(*headers: tuple[str, str]) -> dict[str, Any]:
    return record.Credentials.of(headers).to_json()


def test_credentials_name_the_kind_and_the_headers_never_a_value() -> None:
    # docs/decisions.md D-CLI-4c: kind none, bearer or basic (the Authorization scheme,
    # without case), authorization (another scheme) or header (only other headers);
    # headers the names sent, lowercased and sorted. Never a value.
    assert _credentials() == {"kind": "none", "headers": []}
    assert _credentials(("X-API-Key", "s3cret")) == {"kind": "header", "headers": ["x-api-key"]}
    assert _credentials(("Authorization", "Bearer abc")) == {
        "kind": "bearer", "headers": ["authorization"]}  # fmt: skip
    assert _credentials(("authorization", "BASIC dXNlcjpwdw=="), ("X-Tenant", "t")) == {
        "kind": "basic", "headers": ["authorization", "x-tenant"]}  # fmt: skip
    assert _credentials(("X-B", "1"), ("AUTHORIZATION", "Digest x=1"), ("x-b", "2")) == {
        "kind": "authorization", "headers": ["authorization", "x-b"]}  # fmt: skip
    # the scheme is the first token of the value: no space, or more than one
    assert _credentials(("Authorization", "Bearer"))["kind"] == "bearer"
    assert _credentials(("Authorization", "Bearer a b"))["kind"] == "bearer"
    assert _credentials(("Authorization", "Negotiate abc"))["kind"] == "authorization"
    # RFC 9110 §11.4: the scheme ends at a space (1*SP); with a tab it names no scheme
    # this profile knows, so another one.
    assert _credentials(("Authorization", "Bearer\tabc"))["kind"] == "authorization"
    header_only = record.Credentials("header", ("x-api-key",))
    assert record.Credentials.of([("X-API-Key", "v")]) == header_only


def test_incomplete_and_run_keep_url_and_cause_in_their_json() -> None:
    # docs/decisions.md (the record's incomplete member; D-CLI-9): the URL whose
    # exchange failed and the cause of a connect failure are kept, and omitted when None.
    incomplete = record.Incomplete(
        "connect_failed", "d", url="https://a.example/c", cause="refused"
    )
    expected = {"reason": "connect_failed", "detail": "d", "url": "https://a.example/c",
                "cause": "refused"}  # fmt: skip
    assert incomplete.to_json() == expected
    assert record.Incomplete("timeout", "d").to_json() == {"reason": "timeout", "detail": "d"}
    run = record.Run(None, (), (), (), {}, incomplete)
    assert run.to_json() == {"card_digest": None, "calls": [], "proposals": [], "conflicts": [],
                             "checks": {}, "incomplete": expected}  # fmt: skip


def _result(**extra: Any) -> record.ResultRecord:
    from a2a_interview.checks import Outcome

    fields: dict[str, Any] = {
        "url": "https://a.example/", "card_url": None, "card_digest": None,
        "card_signature": None, "ran_by": record.RanBy("third_party", "R"),
        "started_at": "2026-06-01T11:00:00.000Z", "finished_at": "2026-06-01T11:00:01.000Z",
        "runs": (), "advisories": (), "outcome": Outcome.consistent,
    }  # fmt: skip
    return record.ResultRecord(**(fields | extra))


def test_a_records_json_has_exactly_the_profile_8_members() -> None:
    # PROFILE §8 (docs/decisions.md, part "Record and evidence"): the members, by name;
    # listed_keys holds the listed keys that are not agent keys, sorted.
    document = _result(
        agent_keys=("k2", "k1"), listed_keys=("k3", "k1", "k0"),
        credentials=record.Credentials("bearer", ("authorization",)),
    ).to_json()  # fmt: skip
    assert set(document) == {
        "format", "agent", "ran_by", "standing", "started_at", "finished_at", "runs",
        "checks", "advisories", "outcome", "does_not_establish", "credentials",
    }  # fmt: skip
    assert set(document["agent"]) == {
        "url", "card_url", "card_digest", "card_signature", "keys", "listed_keys"}  # fmt: skip
    assert document["agent"]["keys"] == ["k1", "k2"]
    assert document["agent"]["listed_keys"] == ["k0", "k3"]
    assert document["credentials"] == {"kind": "bearer", "headers": ["authorization"]}
    assert document["standing"] == "claim"


def test_an_unsigned_record_naming_a_runner_key_is_a_claim() -> None:
    # PROFILE §8: evidence needs a runner signature that verifies; a record that only
    # names its runner's key (ran_by.key) and carries no signature is a claim.
    keys = [thumbprint(record.nkey_jwk(OTHER))]
    unsigned = _result(ran_by=record.RanBy("third_party", "R", KEY), agent_keys=tuple(keys))
    assert unsigned.to_json()["standing"] == "claim"
    assert "signatures" not in unsigned.to_json()
    assert unsigned.signed(SEED).to_json()["standing"] == "evidence"


def test_signing_a_record_that_names_another_key_says_so() -> None:
    # PROFILE §8: the runner signature is by ran_by.key; a record naming another key
    # cannot be signed with this seed (the fixed message of sign_record).
    named = _result(ran_by=record.RanBy("third_party", "R", OTHER))
    with pytest.raises(SignatureError) as caught:
        named.signed(SEED)
    assert str(caught.value) == "the record names another runner key"
