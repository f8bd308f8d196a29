"""ledger/display.py on hand-written documents (D-TEST-13, bench/mutation.py): each rule
of display in its own test, expectations written out from interview §8, §9 and PROFILE
§8, no verifier or store in between (test_ledger_web.py shows the same rules through the
page and the API, over records the real verifier wrote)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_interview import nkeys
from a2a_interview.card import thumbprint
from a2a_interview.ledger import display
from a2a_interview.ledger.display import (
    MAX_CONFLICTS,
    MAX_TEXT,
    MAX_TIMELINE,
    MAX_VALUE,
    Row,
    check_rows,
    column_row,
    conflicts,
    incomplete,
    outcome_view,
    row,
    standing,
    timeline_items,
    timeline_svg,
    visible,
)
from a2a_interview.ledger.runners import NO_RUNNERS, Runners, RunnerView, runner_view
from a2a_interview.record import nkey_jwk, sign_record

SEED = nkeys.generate_seed()
KEY = nkeys.public_of(nkeys.private_key(SEED))
# PROFILE §8 "Who ran it": a runner key's fingerprint, the first 16 characters of the
# RFC 7638 thumbprint of its Ed25519 key.
FINGERPRINT = thumbprint(nkey_jwk(KEY))[:16]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("a\u202eb", "a<U+202E>b"),
        ("\u200b", "<U+200B>"),
        ("x\u0000y\u007f", "x<U+0000>y<U+007F>"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),  # not invisible: kept
        ("\ufeff", "<U+FEFF>"),
        (12, "12"),
        (None, "null"),
        ({"b": "\u00e4"}, '{"b": "\u00e4"}'),
    ],
)
def test_visible_tags_what_cannot_be_seen(text: Any, shown: str) -> None:
    assert visible(text) == shown


def test_visible_cuts_at_the_limit_with_an_ellipsis() -> None:
    assert visible("a" * MAX_TEXT) == "a" * MAX_TEXT
    assert visible("a" * (MAX_TEXT + 1)) == "a" * (MAX_TEXT - 1) + "…"
    assert visible("abcdef", 4) == "abc…"
    assert visible("abcd", 4) == "abcd"
    assert visible("\u200b\u200b", 8) == "<U+200B>"[:7] + "…"  # the tag counts


@pytest.mark.parametrize("outcome", ["made-up", 3, None, ["consistent"]])
def test_an_unknown_outcome_is_neutral(outcome: Any) -> None:
    # interview §9 rule 2: nothing negative follows from what cannot be read.
    assert outcome_view(outcome) == ("unrecognised outcome", "this version cannot read it",
                                     "neutral")  # fmt: skip


def test_outcome_tones() -> None:
    tones = {o: outcome_view(o)[2] for o in display.OUTCOMES}
    assert tones == {"consistent": "consistent", "churn": "neutral",
                     "non_conformant": "conflict", "not_offered": "neutral",
                     "unreachable": "neutral"}  # fmt: skip


def test_an_unsigned_third_party_record_is_a_claim() -> None:
    document = {"ran_by": {"party": "third_party", "name": "R"}, "agent": {"keys": []}}
    assert standing(document) == "claim"
    assert standing(document, "invalid") == "claim"
    assert standing(document, "unsigned") == "claim"


def _record(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "outcome": "consistent",
        "ran_by": {"party": "third_party", "name": "Runner \u202e", "key": 5},
        "agent": {
            "url": "https://a.example/",
            "card_url": "https://a.example/.well-known/agent-card.json",
            "card_signature": {"status": "key_unavailable", "reading": "proto"},
        },
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:01:00Z",
    }
    return {**base, **extra}


def test_a_row_reads_the_record_and_nothing_else() -> None:
    # PROFILE §8: a sane record (times in order, http(s) URLs, no calls elsewhere) by a
    # third party with no verified runner key and no signature: a claim, "unsigned"; the runner
    # has no key, so only its self-declared name (D-WEB-16: runners are keys).
    shown = row(7, "https://a.example", _record())
    assert (shown.id, shown.card_url, shown.outcome) == ("7", "https://a.example", "consistent")
    assert (shown.outcome_label, shown.tone) == ("consistent", "consistent")
    assert (shown.party, shown.party_label) == ("third_party", "a third party")
    assert shown.runner_name == "Runner \u202e"  # agent data, made visible by the page
    assert shown.runner_key is None  # not a string
    assert (shown.record_signature, shown.standing) == ("unsigned", "claim")
    assert (shown.standing_reason, shown.standing_words) == ("unsigned", "claim")
    assert shown.standing_why == "no runner signature binds it to the party it names"
    label = "no verified runner key (self-declared name: Runner \u202e)"
    assert shown.runner == RunnerView(None, None, False, None, "Runner \u202e", label)
    assert (shown.card_signature, shown.card_reading) == ("key unavailable", "proto")
    assert (shown.started_at, shown.finished_at) == ("2026-01-01T00:00:00Z",
                                                     "2026-01-01T00:01:00Z")  # fmt: skip
    timed = row(7, "u", _record(), ("s", "f"))
    assert (timed.started_at, timed.finished_at) == ("s", "f")
    assert shown.to_json() == {
        "id": "7", "card_url": "https://a.example", "outcome": "consistent",
        "outcome_label": "consistent",
        "ran_by": {"party": "third_party", "name": "Runner \u202e", "key": None},
        "runner": {"key": None, "fingerprint": None, "listed": False, "listed_name": None,
                   "self_declared_name": "Runner \u202e", "label": label},
        "record_signature": "unsigned", "standing": "claim", "standing_reason": "unsigned",
        "standing_words": "claim",
        "card_signature": {"status": "key unavailable", "reading": "proto"},
        "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z",
        "agent_name": None,  # the record names no agent (D-WEB-19: a name, never identity)
    }  # fmt: skip
    # One vocabulary (D-WEB-21): the label is the page's word, not the code.
    assert row(7, "u", _record(outcome="non_conformant")).to_json()["outcome_label"] == (
        "non-conformant"
    )


def test_an_insane_record_is_a_claim_with_the_sanity_reason() -> None:
    # PROFILE §8: every reader checks sanity before showing a record; one that fails is
    # shown as a claim with its reason.
    late = row(1, "u", _record(started_at="2026-01-01T00:02:00Z"))
    assert (late.standing, late.standing_reason) == ("claim", "finished_before_started")
    assert late.standing_why == "it says it finished before it started"
    script = _record(agent={"url": "javascript:alert(1)"})
    assert row(1, "u", script).standing_reason == "url_scheme"


def test_a_malformed_record_gives_a_row_of_defaults() -> None:
    shown = row(1, "u", {"outcome": 5, "ran_by": "x", "agent": {"card_signature": 1},
                         "started_at": 3})  # fmt: skip
    assert (shown.outcome, shown.outcome_label, shown.tone) == ("", "unrecognised outcome",
                                                                "neutral")  # fmt: skip
    assert (shown.party, shown.party_label) == ("", "unrecognised party")
    assert (shown.runner_name, shown.runner_key) == ("", None)
    assert (shown.card_signature, shown.card_reading) == ("not checked", None)
    assert (shown.started_at, shown.finished_at, shown.standing) == ("", "", "claim")
    assert row(1, "u", _record(ran_by={"party": "self", "key": "K"})).party_label == (
        "the agent itself (self-run)"
    )
    # PROFILE §8: ran_by.key names the runner only when its signature verifies here.
    assert row(1, "u", _record(ran_by={"party": "platform", "key": "K"})).runner_key is None
    seed = nkeys.generate_seed()
    signed = sign_record(_record(ran_by={"party": "platform", "name": "n"}), seed)
    assert row(1, "u", signed).runner_key == nkeys.public_of(nkeys.private_key(seed))


def _conflict(n: int, **extra: Any) -> dict[str, Any]:
    return {"check": "projection", "reason": f"r{n}", "interface": "i", "question": "q",
            "skill": None, "source": {"document": "card", "member": "/m", "url": 1},
            "expected": {"b": 1, "a": [n]}, **extra}  # fmt: skip


def test_conflicts_of_the_last_run_or_for_churn_the_first() -> None:
    runs = [{"conflicts": [_conflict(1)]}, {"conflicts": [_conflict(2), "junk"]}]
    views, churn, more = conflicts({"outcome": "non_conformant", "runs": runs})
    assert (churn, more, [v.reason for v in views]) == (False, 0, ["r2"])
    views, churn, more = conflicts({"outcome": "churn", "runs": runs})
    assert (churn, more, [v.reason for v in views]) == (True, 0, ["r1"])
    (view,) = views
    assert view.to_json() == {
        "check": "projection", "reason": "r1", "interface": "i", "question": "q",
        "skill": None, "source": {"document": "card", "member": "/m", "url": None},
        "expected": '{\n  "a": [\n    1\n  ],\n  "b": 1\n}', "got": None, "got_refusal": False,
    }  # fmt: skip
    assert view.check_label == "compared each answer with the declared documents"


@pytest.mark.parametrize("runs", [None, [], "runs", {"a": 1}])
def test_no_runs_no_conflicts(runs: Any) -> None:
    assert conflicts({"runs": runs}) == ([], False, 0)


def test_a_refusal_got_is_marked_and_an_unknown_check_named_so() -> None:
    # interview §9 rule 3: a refusal is shown as the agent having answered with one.
    got = {"refused": True, "reason": "out_of_scope"}
    items = [_conflict(1, got=got, check="mystery"), _conflict(2, got={"refused": "yes"})]
    views, _, _ = conflicts({"runs": [{"conflicts": items}]})
    assert [v.got_refusal for v in views] == [True, False]
    assert views[0].check_label == "an unrecognised check"
    assert views[0].got == json.dumps(got, ensure_ascii=False, indent=2, sort_keys=True)


def test_conflicts_and_values_are_bounded() -> None:
    items = [_conflict(i) for i in range(MAX_CONFLICTS + 3)]
    views, _, more = conflicts({"runs": [{"conflicts": items}]})
    assert (len(views), more) == (MAX_CONFLICTS, 3)
    big = _conflict(0, expected="x" * MAX_VALUE)
    (view,), _, _ = conflicts({"runs": [{"conflicts": [big]}]})
    # The value's JSON is MAX_VALUE + 2 characters: MAX_VALUE - 1 shown, 3 cut, and said.
    assert view.expected == '"' + "x" * (MAX_VALUE - 2) + "… (3 more characters not shown)"
    million = _conflict(0, got="y" * 1_000_000)
    (view,), _, _ = conflicts({"runs": [{"conflicts": [million]}]})
    assert view.got is not None
    assert view.got.endswith(f"… ({1_000_002 - MAX_VALUE + 1:,} more characters not shown)")
    exact = _conflict(0, expected="x" * (MAX_VALUE - 2))  # with its quotes: MAX_VALUE
    (view,), _, _ = conflicts({"runs": [{"conflicts": [exact]}]})
    assert view.expected == '"' + "x" * (MAX_VALUE - 2) + '"'


@pytest.mark.parametrize(
    ("found", "expected"),
    [({"reason": "timeout", "detail": "d"}, ("timeout", "d")),
     ({"reason": 1}, ("", "")), ("x", None), (None, None)],
)  # fmt: skip
def test_incomplete(found: Any, expected: Any) -> None:
    assert incomplete({"outcome": "unreachable", "incomplete": found}) == expected


@pytest.mark.parametrize("outcome", ["non_conformant", "consistent", "churn", None, 5])
def test_incomplete_only_for_an_unreachable_result(outcome: Any) -> None:
    # docs/decisions.md D-WEB-18: no "why not completed"
    # text beside a result that completed.
    found = {"reason": "timeout", "detail": "d"}
    assert incomplete({"outcome": outcome, "incomplete": found}) is None


def test_check_rows_in_our_order_with_status_text() -> None:
    checks = {"coverage": "advisory", "card_fetch": "passed", "projection": "failed",
              "determinism": "churn", "closure_method": "skipped", "answer_shape": "odd",
              "unknown_check": "passed", "declaration": 3}  # fmt: skip
    assert check_rows({"checks": checks}) == [
        ("card_fetch", "fetched the card", "the card was read", "pass"),
        ("answer_shape", "checked each answer's shape", "exact members, well-formed sources",
         "unrecognised"),
        ("determinism", "asked each question twice", "identical bytes both times",
         "churn (gone on re-run)"),
        ("projection", "compared each answer with the declared documents",
         "every value equal to what its pointer names", "conflict"),
        ("closure_method", "asked an undefined method under activation",
         "the standard refusal: a correct answer, counted as a pass", "not asked"),
        ("coverage", "looked for members left out", "advisory only, never a conflict",
         "advisory"),
    ]  # fmt: skip
    assert check_rows({"checks": ["card_fetch"]}) == []


def _row(
    i: int,
    standing: str = "claim",
    tone: str = "neutral",
    words: str = "claim",
    name: str = "N<&>",
    finished: str | None = None,
) -> Row:
    return Row(
        id=str(i), card_url="u", outcome="consistent", outcome_label="consistent",
        outcome_meaning="m", tone=tone, party="self",  # type: ignore[arg-type]
        party_label="the agent itself", runner_name=name, runner_key=None,
        record_signature="unsigned", standing=standing,  # type: ignore[arg-type]
        standing_reason="self_run", standing_why="w", standing_words=words,
        runner=runner_view(None, name, NO_RUNNERS), card_signature="unsigned",
        card_reading=None, started_at="s",
        finished_at=f"2026-01-0{i}T12:00:00.000Z" if finished is None else finished,
    )  # fmt: skip


TIMELINE_HEAD = (
    '<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="img" width="160" '
    'height="64" viewBox="0 0 160 64" aria-label="History of {n} result(s), oldest on '
    'the left"><title>History of {n} result(s), oldest on the left</title>'
    '<line class="axis" x1="16" y1="30" x2="144" y2="30"/>'
)


def test_timeline_svg_exactly() -> None:
    # docs/decisions.md D-WEB-17: every mark numbered, its
    # tip the finish (RFC 3339, as the tables), outcome, who ran it (the runner's
    # label: PROFILE §8, a runner is its key) and standing in the page's words; the first
    # and last dates under the axis. Marks 26 apart, 16 from each edge, at least 160 wide.
    first = _row(1, "evidence", "consistent", words="evidence by an unlisted runner")
    svg = timeline_svg([first, _row(2)])
    assert svg == TIMELINE_HEAD.format(n=2) + (
        # Evidence by an unlisted runner: a diamond (PROFILE §8, the kinds drawn apart).
        '<a href="#record-1"><path class="mark consistent filled unlisted" '
        'd="M16 22l8 8l-8 8l-8 -8z">'
        "<title>1. 2026-01-01T12:00:00.000Z: consistent, run by the agent itself "
        "no verified runner key (self-declared name: N&lt;&amp;&gt;), evidence by an unlisted "
        "runner"
        '</title></path><text class="mark-label" x="16" y="16" text-anchor="middle">1'
        "</text></a>"
        '<a href="#record-2"><circle class="mark neutral hollow" cx="42" cy="30" r="7">'
        "<title>2. 2026-01-02T12:00:00.000Z: consistent, run by the agent itself "
        "no verified runner key (self-declared name: N&lt;&amp;&gt;), claim"
        '</title></circle><text class="mark-label" x="42" y="16" text-anchor="middle">2'
        "</text></a>"
        '<text class="date" x="8" y="56">2026-01-01</text>'
        '<text class="date" x="152" y="56" text-anchor="end">2026-01-02</text></svg>'
    )


def test_a_timeline_of_one_has_one_date_and_of_none_no_mark() -> None:
    assert timeline_svg([]) == TIMELINE_HEAD.format(n=0) + "</svg>"
    one = timeline_svg([_row(3, finished="2026-01-03")])  # a date alone is cut as is
    assert one.endswith('<text class="date" x="8" y="56">2026-01-03</text></svg>')
    assert one.count('class="date"') == 1


def test_timeline_svg_keeps_the_last_marks_and_grows_with_them() -> None:
    rows = [_row(i % 9 + 1) for i in range(MAX_TIMELINE + 5)]
    svg = timeline_svg(rows, href=lambda r: f"/r/{r.id}?a=1&b=2")
    assert svg.count("<circle") == MAX_TIMELINE
    width = 16 * 2 + 26 * (MAX_TIMELINE - 1)
    assert f'width="{width}"' in svg and f'x2="{width - 16}"' in svg
    assert 'href="/r/6?a=1&amp;b=2"' in svg  # the sixth row is the first kept
    assert svg.index('href="/r/6?') < svg.index('href="/r/7?')
    assert f"History of {MAX_TIMELINE} result(s)" in svg
    assert f'text-anchor="middle">{MAX_TIMELINE}</text>' in svg
    assert f'text-anchor="middle">{MAX_TIMELINE + 1}</text>' not in svg
    # The first kept is row 6 (2026-01-06); the last, the 65th, is row 64 % 9 + 1 = 2.
    assert '<text class="date" x="8" y="56">2026-01-06</text>' in svg
    assert f'<text class="date" x="{width - 8}" y="56" text-anchor="end">2026-01-02</text>' in svg
    assert [(n, r.id) for n, r in timeline_items(rows)][:2] == [(1, "6"), (2, "7")]
    assert len(timeline_items(rows)) == MAX_TIMELINE
    assert timeline_items(rows)[-1] == (MAX_TIMELINE, rows[-1])


def _signed(party: str = "third_party", **extra: Any) -> dict[str, Any]:
    document = {"outcome": "consistent", "ran_by": {"party": party, "name": "R"},
                "agent": {"url": "https://a.example/", "keys": []},
                "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z",
                **extra}  # fmt: skip
    return sign_record(document, SEED)


def test_evidence_needs_the_content_and_a_verifying_signature() -> None:
    # PROFILE §8, interview §9 rule 4: a third party's record signed by its runner is
    # evidence; the same with a signature that does not verify, or said to be unsigned
    # or invalid by the caller, is a claim; a self-run record is a claim, signed or not.
    # The standing is recomputed from the bytes, never taken on trust, the caller's word
    # on the signature included (PROFILE §8: "from what it can check").
    signed = _signed()
    assert standing(signed) == "evidence"
    assert standing(signed, "valid") == "evidence"
    assert standing(signed, "invalid") == "evidence"
    assert standing(signed, "unsigned") == "evidence"
    assert standing({k: v for k, v in signed.items() if k != "signatures"}) == "claim"
    assert standing(_signed(finished_at="2025-12-31T00:00:00Z")) == "claim"  # insane
    assert standing({**signed, "outcome": "churn"}) == "claim"  # no longer verifies
    assert standing(_signed("self")) == "claim"
    assert standing(_signed("self"), "valid") == "claim"
    shown = row(1, "u", signed)
    assert (shown.record_signature, shown.standing) == ("valid", "evidence")
    assert (shown.standing_reason, shown.runner_key) == ("evidence", KEY)
    # PROFILE §8: evidence by a key the operator does not list is worded apart.
    assert shown.standing_words == "evidence by an unlisted runner"
    assert shown.runner.label == f"unlisted key {FINGERPRINT} (self-declared name: R)"
    listed = row(1, "u", signed, runners=Runners({KEY: "Acme Market"}))
    assert listed.standing_words == "evidence"
    assert listed.runner.label == f"Acme Market (listed runner, key {FINGERPRINT})"
    tampered = row(1, "u", {**signed, "outcome": "churn"})
    assert (tampered.standing, tampered.standing_reason) == ("claim", "signature_invalid")
    assert tampered.standing_words == "claim"
    assert row(1, "u", _signed("self"), runners=Runners({KEY: "A"})).standing_words == "claim"


def test_a_list_line_reads_the_columns_kept_at_write_time() -> None:
    # docs/decisions.md D-STORE-14: a list line is made from the columns the
    # store kept, its standing from the kept reason (computed from the bytes at write
    # time by the same rule), the runner named through the operator's list.
    columns = {"outcome": "non_conformant", "party": "platform", "runner_name": "Acme",
               "runner_key": KEY, "signature": "valid", "standing": "evidence",
               "standing_reason": "evidence", "card_signature": "key_unavailable",
               "card_reading": "served"}  # fmt: skip
    shown = column_row(3, "https://a.example", columns, ("s", "f"), Runners({KEY: "Acme M"}))
    assert shown == Row(
        id="3", card_url="https://a.example", outcome="non_conformant",
        outcome_label="non-conformant",
        outcome_meaning=(
            "a conflict with its declared documents persisted across a re-run with a fresh card"
        ),
        tone="conflict", party="platform", party_label="a platform", runner_name="Acme",
        runner_key=KEY, record_signature="valid", standing="evidence",
        standing_reason="evidence",
        standing_why="an independent runner signed it with a key that is none of the agent's",
        standing_words="evidence",
        runner=RunnerView(KEY, FINGERPRINT, True, "Acme M", "Acme",
                          f"Acme M (listed runner, key {FINGERPRINT})"),
        card_signature="key unavailable", card_reading="served", started_at="s", finished_at="f",
    )  # fmt: skip
    unlisted = column_row(3, "u", columns, ("s", "f"))
    assert unlisted.standing_words == "evidence by an unlisted runner"
    own = column_row(3, "u", {**columns, "standing_reason": "agent_key"}, ("s", "f"))
    assert (own.standing, own.standing_reason, own.standing_words) == ("claim", "agent_key",
                                                                        "claim")  # fmt: skip
    assert own.standing_why == "the runner key is one of the agent's own keys"
    odd = column_row(3, "u", {**columns, "standing_reason": "made-up"}, ("s", "f"))
    assert (odd.standing, odd.standing_reason, odd.standing_why) == ("claim", "made-up", "")


def test_a_list_line_of_malformed_columns_is_a_line_of_defaults() -> None:
    columns = {"outcome": 5, "party": None, "runner_name": 1, "runner_key": 2,
               "signature": 3, "standing_reason": 4, "card_signature": 6,
               "card_reading": 7}  # fmt: skip
    shown = column_row("x", "u", columns, ("s", "f"))
    # Never raises: a reason that is not even hashable is no reason.
    assert column_row("x", "u", {**columns, "standing_reason": ["evidence"]}, ("s", "f")) == shown
    assert shown == Row(
        id="x", card_url="u", outcome="", outcome_label="unrecognised outcome",
        outcome_meaning="this version cannot read it", tone="neutral", party="",
        party_label="unrecognised party", runner_name="", runner_key=None,
        record_signature="", standing="claim", standing_reason="", standing_why="",
        standing_words="claim",
        runner=RunnerView(None, None, False, None, "",
                          "no verified runner key (self-declared name: )"),
        card_signature="not checked", card_reading=None, started_at="s", finished_at="f",
    )  # fmt: skip


def test_a_row_carries_the_outcome_meaning_and_only_a_string_reading() -> None:
    shown = row(1, "u", _record())
    assert shown.outcome_meaning == "its live answers matched its declared documents"
    odd = _record(agent={"card_signature": {"status": "verified", "reading": 5}})
    assert (row(1, "u", odd).card_signature, row(1, "u", odd).card_reading) == (
        "verified", None,
    )  # fmt: skip


def test_a_conflict_keeps_its_strings_and_its_text_unescaped() -> None:
    source = {"document": "proposal", "member": "/p", "url": "https://a/p"}
    item = _conflict(1, skill="r\u00e4kna-moms", expected="\u00e4", source=source)
    (view,), _, _ = conflicts({"runs": [{"conflicts": [item]}]})
    assert (view.skill, view.document, view.member, view.url) == (
        "r\u00e4kna-moms", "proposal", "/p", "https://a/p",
    )  # fmt: skip
    assert view.expected == '"\u00e4"'  # the page escapes; JSON escapes would hide it


def test_a_run_without_conflicts_has_none() -> None:
    assert conflicts({"runs": [{}]}) == ([], False, 0)
    assert conflicts({"runs": [{"conflicts": None}]}) == ([], False, 0)


def test_timeline_tips_cut_the_date_and_the_runner() -> None:
    # The finish to 40 characters and the runner's label to 120, each ending in "…"; the
    # date under the axis is the first 10 characters of the finish.
    long = _row(1, name="n" * 100, finished="d" * 50)
    svg = timeline_svg([long])
    label = ("no verified runner key (self-declared name: " + "n" * 100)[:119]
    assert f"<title>1. {'d' * 39}…: consistent, run by the agent itself {label}…, claim" in svg
    assert f'<text class="date" x="8" y="56">{"d" * 10}</text>' in svg
    # The date is cut to 10 characters as shown, invisible characters' tags counted.
    tagged = timeline_svg([_row(1, finished="\u200babcdefghi")])
    assert '<text class="date" x="8" y="56">&lt;U+200B&gt;a…</text>' in tagged
    exact = timeline_svg([_row(1, name="n" * 75, finished="e" * 40)])  # label: 120
    assert (
        f"<title>1. {'e' * 40}: consistent, run by the agent itself no verified runner key "
        in exact
    )
    assert f"name: {'n' * 75})," in exact


def test_a_line_names_the_agent_by_its_cards_name_read_as_the_record_reads_it() -> None:
    # (the agent's name on every line, from its card) and PROFILE §8 (agent.name,
    # an added member of the record): a record's line and a list line made from the kept
    # columns both carry the name, and both through record.agent_name's bounds (a name
    # that is not a short string without NUL is no name).
    assert row(1, "u", _record()).agent_name is None
    named = _record(agent={**_record()["agent"], "name": "Acme Market"})
    assert row(1, "u", named).agent_name == "Acme Market"
    assert row(1, "u", named).to_json()["agent_name"] == "Acme Market"
    nul = _record(agent={**_record()["agent"], "name": "Acme\x00"})
    assert row(1, "u", nul).agent_name is None
    assert column_row(1, "u", {"agent_name": "Acme Market"}, ("s", "f")).agent_name == (
        "Acme Market"
    )
    assert column_row(1, "u", {"agent_name": "Acme\x00"}, ("s", "f")).agent_name is None
    assert column_row(1, "u", {"agent_name": 7}, ("s", "f")).agent_name is None
    assert column_row(1, "u", {}, ("s", "f")).agent_name is None
