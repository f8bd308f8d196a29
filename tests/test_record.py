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

from a2a_interview import nkeys, reference
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
    ResultRecord,
    Run,
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


def card_key_seed() -> str:
    """The card's Ed25519 signing key as an nkey seed (the agent's own key)."""
    d = reference.card_key_jwk()["d"]
    assert isinstance(d, str)
    return nkeys.encode_seed(base64.urlsafe_b64decode(d + "=" * (-len(d) % 4)))


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
    # PROFILE §8 (amended for issue 8 finding 5): unsigned is a claim, whoever it names.
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
    # decisions D-RECORD-5: claim for anything malformed; whose key it is cannot be told.
    document = make("third_party").to_json()
    document["ran_by"]["key"] = "not-an-nkey"  # type: ignore[index]
    assert standing_of(document) == "claim"


# --- forgeries (issue 8 finding 5) ----------------------------------------------------

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
    # issue 8 finding 5: thumbprint set to null, proposal signers set to null, re-signed
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
    # issue 8 finding 5: `self` changed to `third_party`, left unsigned.
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
    # issue 13 finding 1, PROFILE §8 (amended): a kid is any string the agent chooses,
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
    # PROFILE §8, issue 8 finding 5: whatever member a forger changes, a signed record
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


# --- sanity (issue 13 findings 2-3, PROFILE §8 as amended) ------------------------------


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
    # One vocabulary, defined once (issue 13 finding 7).
    assert set(STANDING_WHY) == set(STANDING_REASONS)


# --- agent.name (issue 13 finding 6) -------------------------------------------------------


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


# --- one vocabulary (issue 13 finding 7) ----------------------------------------------------


@pytest.mark.parametrize("outcome", list(Outcome))
def test_the_report_words_outcomes_in_the_one_vocabulary(outcome: Outcome) -> None:
    # issue 13 finding 7: the verifier's report (verify, record show) says an outcome in
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
