"""ledger/display.py on hand-written documents (issue 17, bench/mutation.py): each rule
of display in its own test, expectations written out from interview §8, §9 and PROFILE
§8, no verifier or store in between (test_ledger_web.py shows the same rules through the
page and the API, over records the real verifier wrote)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_interview import nkeys
from a2a_interview.ledger import display
from a2a_interview.ledger.display import (
    MAX_CONFLICTS,
    MAX_TEXT,
    MAX_TIMELINE,
    MAX_VALUE,
    Row,
    check_rows,
    conflicts,
    incomplete,
    outcome_view,
    row,
    standing,
    timeline_svg,
    visible,
)
from a2a_interview.record import sign_record

SEED = nkeys.generate_seed()


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
        "agent": {"card_signature": {"status": "key_unavailable", "reading": "proto"}},
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:01:00Z",
    }
    return {**base, **extra}


def test_a_row_reads_the_record_and_nothing_else() -> None:
    shown = row(7, "https://a.example", _record())
    assert (shown.id, shown.card_url, shown.outcome) == ("7", "https://a.example", "consistent")
    assert (shown.outcome_label, shown.tone) == ("consistent", "consistent")
    assert (shown.party, shown.party_label) == ("third_party", "a third party")
    assert shown.runner_name == "Runner \u202e"  # agent data, made visible by the page
    assert shown.runner_key is None  # not a string
    assert (shown.record_signature, shown.standing) == ("unsigned", "claim")
    assert (shown.card_signature, shown.card_reading) == ("key unavailable", "proto")
    assert (shown.started_at, shown.finished_at) == ("2026-01-01T00:00:00Z",
                                                     "2026-01-01T00:01:00Z")  # fmt: skip
    timed = row(7, "u", _record(), ("s", "f"))
    assert (timed.started_at, timed.finished_at) == ("s", "f")
    assert shown.to_json() == {
        "id": "7", "card_url": "https://a.example", "outcome": "consistent",
        "ran_by": {"party": "third_party", "name": "Runner \u202e", "key": None},
        "record_signature": "unsigned", "standing": "claim",
        "card_signature": {"status": "key unavailable", "reading": "proto"},
        "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z",
    }  # fmt: skip


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
    assert row(1, "u", _record(ran_by={"party": "platform", "key": "K"})).runner_key == "K"


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
    assert view.expected is not None and len(view.expected) == MAX_VALUE
    assert view.expected.endswith("…") and view.expected.startswith('"xxx')
    exact = _conflict(0, expected="x" * (MAX_VALUE - 2))  # with its quotes: MAX_VALUE
    (view,), _, _ = conflicts({"runs": [{"conflicts": [exact]}]})
    assert view.expected == '"' + "x" * (MAX_VALUE - 2) + '"'


@pytest.mark.parametrize(
    ("found", "expected"),
    [({"reason": "timeout", "detail": "d"}, ("timeout", "d")),
     ({"reason": 1}, ("", "")), ("x", None), (None, None)],
)  # fmt: skip
def test_incomplete(found: Any, expected: Any) -> None:
    assert incomplete({"incomplete": found}) == expected


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


def _row(i: int, standing: str = "claim", tone: str = "neutral") -> Row:
    return Row(str(i), "u", "consistent", "consistent", "m", tone,  # type: ignore[arg-type]
               "self", "the agent itself", "N<&>", None, "unsigned", standing,  # type: ignore[arg-type]
               "unsigned", None, f"2026-01-0{i}", "f")  # fmt: skip


def test_timeline_svg_exactly() -> None:
    svg = timeline_svg([_row(1, "evidence", "consistent"), _row(2)])
    assert svg == (
        '<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="img" width="120" '
        'height="44" viewBox="0 0 120 44" aria-label="History of 2 result(s), oldest on '
        'the left"><title>History of 2 result(s), oldest on the left</title>'
        '<line class="axis" x1="14" y1="22" x2="106" y2="22"/>'
        '<a href="#record-1"><circle class="mark consistent filled" cx="14" cy="22" r="7">'
        "<title>2026-01-01: consistent, run by the agent itself N&lt;&amp;&gt;, evidence"
        "</title></circle></a>"
        '<a href="#record-2"><circle class="mark neutral hollow" cx="36" cy="22" r="7">'
        "<title>2026-01-02: consistent, run by the agent itself N&lt;&amp;&gt;, claim"
        "</title></circle></a></svg>"
    )


def test_timeline_svg_keeps_the_last_marks_and_grows_with_them() -> None:
    rows = [_row(i % 9 + 1) for i in range(MAX_TIMELINE + 5)]
    svg = timeline_svg(rows, href=lambda r: f"/r/{r.id}?a=1&b=2")
    assert svg.count("<circle") == MAX_TIMELINE
    width = 14 * 2 + 22 * (MAX_TIMELINE - 1)
    assert f'width="{width}"' in svg and f'x2="{width - 14}"' in svg
    assert 'href="/r/6?a=1&amp;b=2"' in svg  # the sixth row is the first kept
    assert svg.index('href="/r/6?') < svg.index('href="/r/7?')
    assert f"History of {MAX_TIMELINE} result(s)" in svg
    assert timeline_svg([]).startswith('<svg xmlns="http://www.w3.org/2000/svg" class="timeline" '
                                       'role="img" width="120"')  # fmt: skip


def _signed(party: str = "third_party") -> dict[str, Any]:
    document = {"outcome": "consistent", "ran_by": {"party": party, "name": "R"},
                "agent": {"keys": []}}  # fmt: skip
    return sign_record(document, SEED)


def test_evidence_needs_the_content_and_a_verifying_signature() -> None:
    # PROFILE §8, interview §9 rule 4: a third party's record signed by its runner is
    # evidence; the same with a signature that does not verify, or said to be unsigned
    # or invalid by the caller, is a claim; a self-run record is a claim, signed or not.
    signed = _signed()
    assert standing(signed) == "evidence"
    assert standing(signed, "valid") == "evidence"
    assert standing(signed, "invalid") == "claim"
    assert standing(signed, "unsigned") == "claim"
    assert standing({k: v for k, v in signed.items() if k != "signatures"}) == "claim"
    assert standing({**signed, "outcome": "churn"}) == "claim"  # no longer verifies
    assert standing(_signed("self")) == "claim"
    assert standing(_signed("self"), "valid") == "claim"
    shown = row(1, "u", signed)
    assert (shown.record_signature, shown.standing) == ("valid", "evidence")
    assert shown.runner_key == signed["ran_by"]["key"]
    assert row(1, "u", {**signed, "outcome": "churn"}).standing == "claim"


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
    long = Row("1", "u", "consistent", "consistent", "m", "neutral", "self", "P",
               "n" * 100, None, "unsigned", "claim", "unsigned", None, "d" * 50, "f")  # fmt: skip
    svg = timeline_svg([long])
    assert f"<title>{'d' * 39}…: consistent, run by P {'n' * 79}…, claim</title>" in svg
