"""The rules of display for the ledger's page and API (interview §8, §9; PROFILE §8).

Pure functions from a stored record's parsed document to what a surface may say about
it. Nothing here does I/O or imports a web framework: the page (:mod:`.web`) and its
JSON API are drivers over these values, so both say the same thing.

The rules, each enforced in one place:

- **Who ran it is part of the result** (interview §8): :class:`Row` always carries the
  party and the runner's name; the templates print them beside every outcome.
- **A self-run result is a claim** (interview §9 rule 4): :func:`standing` is
  recomputed from the document on every display, never read from it: ``evidence``
  only when :func:`a2a_interview.record.standing_of` says so *and* the runner's
  signature verifies (PROFILE §8). Anything else is a ``claim``.
- **A correct refusal never counts against an agent** (interview §9 rule 3): the
  closure checks are described as answers received (:data:`CHECK_TEXT`), and a conflict
  whose ``got`` is a refusal is labelled as the agent having answered with a refusal.
- **Absence of the extension says nothing** (interview §9 rule 2): ``not_offered`` has
  the neutral tone, the same as an unreachable agent or no result at all; lists are
  ordered by card URL only and no filter on outcome exists (:data:`OUTCOMES`).
- **Conformance is not competence** (interview §9 rule 1): :data:`BOUNDARIES` is
  printed on every agent page, from our constant, never from the record.

Every string taken from a record is agent data (a self-run record is written by the
agent itself): it is passed on as text for the templates to escape, and
:func:`visible` makes invisible and direction-changing characters visible first.
:func:`timeline_svg` escapes every string it writes itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Final, Literal

from ..record import (
    DOES_NOT_ESTABLISH,
    OUTCOME_WORDS,
    STANDING_WHY,
    UNKNOWN_OUTCOME_WORDS,
    agent_name,
    member_at,
    standing_reason,
    verify_record_signature,
)
from ..spec import QUESTIONS
from .runners import EVIDENCE_WORDS, NO_RUNNERS, Runners, RunnerView, runner_view

__all__ = [
    "BOUNDARIES",
    "CHECK_TEXT",
    "KIND_WORDS",
    "OUTCOMES",
    "ConflictView",
    "Row",
    "Tone",
    "check_rows",
    "column_row",
    "conflicts",
    "incomplete",
    "kind",
    "outcome_view",
    "row",
    "standing",
    "timeline_items",
    "timeline_svg",
    "visible",
]

Tone = Literal["consistent", "conflict", "neutral"]
Standing = Literal["claim", "evidence"]

# outcome -> tone. Only a persistent conflict gets the conflict tone; an agent that does
# not offer the interview, or could not be reached, is shown exactly like one with
# nothing to show (interview §9 rule 2).
_TONES: Final[Mapping[str, Tone]] = {
    "consistent": "consistent",
    "churn": "neutral",
    "non_conformant": "conflict",
    "not_offered": "neutral",
    "unreachable": "neutral",
}
# outcome -> (label, one-line meaning, tone): the words are the one vocabulary,
# record.OUTCOME_WORDS, shared with the report and the CLI; the tone is the page's.
OUTCOMES: Final[Mapping[str, tuple[str, str, Tone]]] = {
    code: (*OUTCOME_WORDS[code], tone) for code, tone in _TONES.items()
}
_UNKNOWN_OUTCOME: Final[tuple[str, str, Tone]] = (*UNKNOWN_OUTCOME_WORDS, "neutral")

PARTIES: Final[Mapping[str, str]] = {
    "self": "the agent itself (self-run)",
    "platform": "a platform",
    "third_party": "a third party",
}

CARD_SIGNATURE: Final[Mapping[str, str]] = {
    "verified": "verified",
    "unsigned": "unsigned",
    "invalid": "invalid",
    "key_unavailable": "key unavailable",
}

# check code -> (what was asked, what a pass means). The closure checks are answers:
# the standard refusal is the correct response (interview §9 rule 3).
CHECK_TEXT: Final[Mapping[str, tuple[str, str]]] = {
    "card_fetch": ("fetched the card", "the card was read"),
    "card_signature": ("checked the card's signature", "no invalid signature"),
    "declaration": ("read the interview declaration", "offered, not required"),
    "inactive_probe": (
        "asked an interview method without activating it",
        "answered method-not-found, as any unknown method",
    ),
    "activation_echo": ("checked the activation echo", "every answer named the extension"),
    "answer_shape": ("checked each answer's shape", "exact members, well-formed sources"),
    "determinism": ("asked each question twice", "identical bytes both times"),
    "projection": (
        "compared each answer with the declared documents",
        "every value equal to what its pointer names",
    ),
    "terms_declared": ("checked the terms answer", "terms declared exactly when committed"),
    "closure_method": (
        "asked an undefined method under activation",
        "the standard refusal: a correct answer, counted as a pass",
    ),
    "closure_selector": (
        "asked for a skill the agent does not declare",
        "the standard refusal: a correct answer, counted as a pass",
    ),
    "coverage": ("looked for members left out", "advisory only, never a conflict"),
}

CHECK_STATUS: Final[Mapping[str, str]] = {
    "passed": "pass",
    "failed": "conflict",
    "churn": "churn (gone on re-run)",
    "advisory": "advisory",
    "skipped": "not asked",
}

# What a result does not establish (PROFILE §8, interview §8, §9), in plain words. From
# our constant, never from the record's own list (a self-run record is agent data).
BOUNDARIES: Final[tuple[str, ...]] = (
    "The interview checks one thing: that the agent's live answers to its questions "
    f"({', '.join(QUESTIONS)}) match the documents it declared (its card and committed "
    "terms).",
    *(f"It does not establish {item}." for item in DOES_NOT_ESTABLISH),
    "Conformance is not competence: a perfectly consistent agent can be bad at its job.",
    "Who ran it matters. A result the agent ran on itself, an unsigned one, or one "
    "signed with the agent's own key is a claim, the agent's own statement. Only a "
    "result recorded and signed by a platform or third party is shown as evidence.",
    "A correct refusal is an answer and never counts against the agent.",
    "An agent that does not offer the interview has simply not implemented it: its "
    "declared documents bind it as before, and nothing negative follows.",
)

# Characters that change how neighbouring text reads without being seen: controls,
# bidirectional overrides and isolates, zero-width characters, the BOM.
_INVISIBLE: Final = re.compile(
    "[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)
MAX_TEXT: Final = 300
MAX_VALUE: Final = 4000
MAX_CONFLICTS: Final = 200
MAX_TIMELINE: Final = 60


def visible(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` (agent data) with every invisible or direction-changing character
    replaced by a visible ``<U+XXXX>`` tag, cut to ``limit`` characters with ``…``.
    Not HTML escaping: the template does that. A non-string is rendered as JSON."""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    shown = _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def standing(document: Mapping[str, Any], signature: str | None = None) -> Standing:
    """``evidence`` or ``claim``, recomputed (PROFILE §8, :func:`standing_reason`: a
    platform or third-party runner holding none of the agent's keys, whose signature
    verifies, on a record that passes the sanity checks). The stored ``standing`` member
    is never read. ``signature`` is accepted for callers that have it; unused."""
    return standing_reason(document)[0]


Kind = Literal["listed", "unlisted", "claim"]
# The three kinds of result, strongest first (PROFILE §8, "What leads"): counted apart,
# drawn apart, and a weaker one never shown instead of a stronger one.
KIND_WORDS: Final[Mapping[Kind, str]] = {
    "listed": "result by a listed runner",
    "unlisted": "evidence by an unlisted runner",
    "claim": "claim",
}


def kind(row: Row) -> Kind:
    """Which of the three kinds a display row is (PROFILE §8)."""
    if row.standing != "evidence":
        return "claim"
    return "listed" if row.runner.listed else "unlisted"


def outcome_view(outcome: object) -> tuple[str, str, Tone]:
    """(label, meaning, tone) of an outcome; an unknown one is neutral."""
    return (
        OUTCOMES.get(outcome, _UNKNOWN_OUTCOME) if isinstance(outcome, str) else (_UNKNOWN_OUTCOME)
    )


@dataclass(frozen=True, slots=True)
class Row:
    """One record as a display line. Strings from the record are agent data."""

    id: str
    card_url: str
    outcome: str
    outcome_label: str
    outcome_meaning: str
    tone: Tone
    party: str
    party_label: str
    runner_name: str
    runner_key: str | None
    record_signature: str
    standing: Standing
    standing_reason: str  # a code of record.STANDING_REASONS
    standing_why: str  # its words (record.STANDING_WHY): why it is a claim, or evidence
    standing_words: str  # "claim", "evidence" or "evidence by an unlisted runner"
    runner: RunnerView
    card_signature: str
    card_reading: str | None
    started_at: str
    finished_at: str
    # agent.name as the card names itself (record.agent_name): peer text, never the
    # agent's identity (its card URL is); None when the record names none.
    agent_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "card_url": self.card_url,
            "agent_name": self.agent_name,
            "outcome": self.outcome,
            "outcome_label": self.outcome_label,
            "ran_by": {"party": self.party, "name": self.runner_name, "key": self.runner_key},
            "runner": self.runner.to_json(),
            "record_signature": self.record_signature,
            "standing": self.standing,
            "standing_reason": self.standing_reason,
            "standing_words": self.standing_words,
            "card_signature": {"status": self.card_signature, "reading": self.card_reading},
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def row(
    record_id: object,
    card_url: str,
    document: Mapping[str, Any],
    times: tuple[str, str] | None = None,
    runners: Runners = NO_RUNNERS,
) -> Row:
    """The display line of one stored record (its parsed ``document``); ``times``
    (started, finished) as the store read them, else the record's own strings; the
    runner named through the operator's ``runners`` list (PROFILE §8). The columns a
    store keeps are read from the bytes here, the standing recomputed from them, and the
    line built as :func:`column_row` builds it from those columns."""
    _, reason = standing_reason(document)
    signature = verify_record_signature(document).status
    columns = {
        "outcome": document.get("outcome"),
        "party": member_at(document, "ran_by", "party"),
        # PROFILE §8: the key names the runner only when its signature verifies here.
        "runner_key": member_at(document, "ran_by", "key") if signature == "valid" else None,
        "runner_name": member_at(document, "ran_by", "name"),
        "signature": signature,
        "standing_reason": reason,
        "card_signature": member_at(document, "agent", "card_signature", "status"),
        "card_reading": member_at(document, "agent", "card_signature", "reading"),
        "agent_name": agent_name(document),
    }
    if times is None:
        times = (_text(document.get("started_at")), _text(document.get("finished_at")))
    return column_row(record_id, card_url, columns, times, runners)


def column_row(
    record_id: object,
    card_url: str,
    columns: Mapping[str, Any],
    times: tuple[str, str],
    runners: Runners = NO_RUNNERS,
) -> Row:
    """The display line of a stored record from the columns the store kept when it was
    written (``outcome``, ``party``, ``runner_name``, ``runner_key``, ``signature``,
    ``standing``, ``standing_reason``, ``card_signature``, ``card_reading``,
    ``agent_name``), without
    reading its bytes: what a list shows (PROFILE §8: the standing was computed from the
    bytes by the same function, and is refreshed when that function changes). A record
    shown in full is read by :func:`row` instead."""
    outcome = _text(columns.get("outcome"))
    label, meaning, tone = outcome_view(outcome)
    party = _text(columns.get("party"))
    key = columns.get("runner_key")
    name = _text(columns.get("runner_name"))
    runner = runner_view(key if isinstance(key, str) else None, name, runners)
    reason = columns.get("standing_reason")
    standing_now: Standing = "evidence" if reason == "evidence" else "claim"
    why = STANDING_WHY.get(reason, "") if isinstance(reason, str) else ""  # type: ignore[call-overload]
    words = (
        EVIDENCE_WORDS["listed" if runner.listed else "unlisted"]
        if standing_now == "evidence"
        else "claim"
    )
    card_status = columns.get("card_signature")
    reading = columns.get("card_reading")
    return Row(
        id=str(record_id),
        card_url=card_url,
        outcome=outcome,
        outcome_label=label,
        outcome_meaning=meaning,
        tone=tone,
        party=party,
        party_label=PARTIES.get(party, "unrecognised party"),
        runner_name=name,
        runner_key=key if isinstance(key, str) else None,
        record_signature=_text(columns.get("signature")),
        standing=standing_now,
        standing_reason=reason if isinstance(reason, str) else "",
        standing_why=why,
        standing_words=words,
        runner=runner,
        card_signature=CARD_SIGNATURE.get(_text(card_status), "not checked"),
        card_reading=reading if isinstance(reading, str) else None,
        started_at=times[0],
        finished_at=times[1],
        agent_name=agent_name({"agent": {"name": columns.get("agent_name")}}),
    )


@dataclass(frozen=True, slots=True)
class ConflictView:
    """One conflict as expected against got. ``expected``/``got`` are JSON text (or
    ``None`` where the member does not apply); ``got_refusal`` marks an answer that
    was a refusal, shown as such."""

    check: str
    check_label: str
    reason: str
    interface: str | None
    question: str | None
    skill: str | None
    document: str | None
    member: str | None
    url: str | None
    expected: str | None
    got: str | None
    got_refusal: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "reason": self.reason,
            "interface": self.interface,
            "question": self.question,
            "skill": self.skill,
            "source": {"document": self.document, "member": self.member, "url": self.url},
            "expected": self.expected,
            "got": self.got,
            "got_refusal": self.got_refusal,
        }


def _json_text(item: Mapping[str, Any], name: str) -> str | None:
    if name not in item:
        return None
    text = json.dumps(item[name], ensure_ascii=False, indent=2, sort_keys=True)
    if len(text) <= MAX_VALUE:
        return text
    # Say how much was cut: a bare "…" hid whether 1 or 1,000,000 characters followed.
    return text[: MAX_VALUE - 1] + f"… ({len(text) - MAX_VALUE + 1:,} more characters not shown)"


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def conflicts(document: Mapping[str, Any]) -> tuple[list[ConflictView], bool, int]:
    """The conflicts to show, whether they vanished on the re-run, and how many more
    the record holds than are shown (at most :data:`MAX_CONFLICTS`).

    For ``churn`` the first run's conflicts (gone on the re-run); otherwise the last
    run's (for ``non_conformant``, the persistent ones)."""
    runs = document.get("runs")
    if not isinstance(runs, list) or not runs:
        return [], False, 0
    churn = document.get("outcome") == "churn"
    run = runs[0] if churn else runs[-1]
    items = member_at(run, "conflicts")
    items = [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []
    views = []
    for item in items[:MAX_CONFLICTS]:
        check = _text(item.get("check"))
        got = item.get("got")
        views.append(
            ConflictView(
                check=check,
                check_label=CHECK_TEXT.get(check, ("an unrecognised check", ""))[0],
                reason=_text(item.get("reason")),
                interface=_opt(item.get("interface")),
                question=_opt(item.get("question")),
                skill=_opt(item.get("skill")),
                document=_opt(member_at(item, "source", "document")),
                member=_opt(member_at(item, "source", "member")),
                url=_opt(member_at(item, "source", "url")),
                expected=_json_text(item, "expected"),
                got=_json_text(item, "got"),
                got_refusal=isinstance(got, dict) and got.get("refused") is True,
            )
        )
    return views, churn, max(0, len(items) - MAX_CONFLICTS)


def incomplete(document: Mapping[str, Any]) -> tuple[str, str] | None:
    """(reason code, detail) of a run that could not complete, as the record says; only
    for an ``unreachable`` outcome (D-STORE-16: no "why" text of an incomplete
    run beside a result that completed)."""
    if document.get("outcome") != "unreachable":
        return None
    found = document.get("incomplete")
    if not isinstance(found, dict):
        return None
    return _text(found.get("reason")), _text(found.get("detail"))


def check_rows(document: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """(code, what was asked, what a pass means, status text) for each check the record
    reports, in our order; checks this version does not know are left out."""
    checks = document.get("checks")
    if not isinstance(checks, dict):
        return []
    out = []
    for code, (asked, meaning) in CHECK_TEXT.items():
        status = checks.get(code)
        if isinstance(status, str):
            out.append((code, asked, meaning, CHECK_STATUS.get(status, "unrecognised")))
    return out


def timeline_svg(points: Sequence[Row], href: Callable[[Row], str] | None = None) -> str:
    """A small SVG picture of an agent's history, oldest first (the last
    :data:`MAX_TIMELINE` records): one mark per record, its colour the outcome's tone,
    filled for evidence and hollow for a claim, each labelled with its number (the list
    beside it, :func:`timeline_items`, gives each number's date and outcome), the first
    and last dates written under the axis; each mark links to the record's line on the
    page (``href(row)``, default ``#record-ID``) and carries a ``<title>`` naming date,
    outcome, who ran it and standing.

    Every string written is XML-escaped here; the caller inserts the result as markup.
    """
    shown = list(points)[-MAX_TIMELINE:]
    link = href if href is not None else (lambda row: f"#record-{row.id}")
    step, pad, height = 26, 16, 64
    width = max(pad * 2 + step * max(len(shown) - 1, 0), 160)
    label = f"History of {len(shown)} result(s), oldest on the left"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'aria-label="{escape(label)}">',
        f"<title>{escape(label)}</title>",
        f'<line class="axis" x1="{pad}" y1="30" x2="{width - pad}" y2="30"/>',
    ]
    for i, point in enumerate(shown):
        x = pad + i * step
        tip = (
            f"{i + 1}. {visible(point.finished_at, 40)}: {point.outcome_label}, run by "
            f"{point.party_label} {visible(point.runner.label, 120)}, {point.standing_words}"
        )
        # PROFILE §8: the three kinds drawn apart: a filled circle (a listed runner's),
        # a filled diamond (evidence by an unlisted runner), a hollow circle (a claim).
        shape = (
            f'<circle class="mark {point.tone} filled" cx="{x}" cy="30" r="7">'
            if point.standing == "evidence" and point.runner.listed
            else f'<path class="mark {point.tone} filled unlisted" d="M{x} 22l8 8l-8 8l-8 -8z">'
            if point.standing == "evidence"
            else f'<circle class="mark {point.tone} hollow" cx="{x}" cy="30" r="7">'
        )
        end = "</circle>" if shape.startswith("<circle") else "</path>"
        parts.append(
            f'<a href="{escape(link(point))}">{shape}<title>{escape(tip)}</title>{end}'
            f'<text class="mark-label" x="{x}" y="16" text-anchor="middle">{i + 1}</text></a>'
        )
    if shown:
        first, last = _day(shown[0].finished_at), _day(shown[-1].finished_at)
        parts.append(f'<text class="date" x="{pad - 8}" y="56">{escape(first)}</text>')
        if len(shown) > 1:
            parts.append(
                f'<text class="date" x="{width - pad + 8}" y="56" text-anchor="end">'
                f"{escape(last)}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _day(moment: str) -> str:
    """The date of an RFC 3339 time (``YYYY-MM-DD``), or the text cut short."""
    return visible(moment[:10], 10)


def timeline_items(points: Sequence[Row]) -> list[tuple[int, Row]]:
    """The timeline's marks, numbered as the SVG numbers them (oldest first), for the
    list that labels each with its date, outcome, runner and standing."""
    return list(enumerate(list(points)[-MAX_TIMELINE:], 1))
