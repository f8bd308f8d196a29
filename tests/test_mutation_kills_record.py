"""record.py under mutation (issue 17, bench/mutation.py): the runner signature's every
verdict, signing's errors, and the agent key ids a reader adds from a card (PROFILE §8).
Records and cards are written here; keys are fresh nkeys and Ed25519 keys."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from a2a_interview import nkeys, record
from a2a_interview.card import public_jwk, sign_card, thumbprint
from a2a_interview.errors import SignatureError
from a2a_interview.record import RecordSignature, _record, sign_record, verify_record_signature

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
    # PROFILE §8 (amended, issue 13 finding 1): an agent key is a key that verified one
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
    # PROFILE §8 (amended, issue 13 findings 2-3); docs/decisions.md (ledger store, 12):
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


# --- record.py after issue 16: the values' JSON, the words of outcomes, credentials ------


def test_outcome_words_are_the_one_vocabulary_and_unknown_otherwise() -> None:
    # PROFILE §8's outcome codes (issue 13 finding 7): a code has its fixed label; an
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
    # docs/decisions.md (the record's incomplete member; issue 12 item 7): the URL whose
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
