"""Reading a result record for people and for CI: a text report and JUnit XML (pure).

Both take the record's JSON (or a :class:`~a2a_interview.record.ResultRecord`), so they
can render a record read back from a file. Standing is recomputed with
:func:`~a2a_interview.record.standing_of`, never read from the record (interview §8,
§9 rule 4). Every value that came from a peer is shown escaped (JSON string escapes,
ASCII only, truncated): a card cannot put control sequences on a terminal or break the
XML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final
from xml.etree import ElementTree as ET

from .checks import CHECKS
from .jcs import canonicalize
from .record import (
    DOES_NOT_ESTABLISH,
    OUTCOME_WORDS,
    STANDING_WHY,
    ResultRecord,
    standing_reason,
    verify_record_signature,
)

__all__ = ["REMINDER", "junit_xml", "outcome_line", "render_report", "show"]

# interview §9 rule 1.
REMINDER: Final = (
    "Conformance is not competence: this result says whether the agent's live answers "
    "agree with its declared documents. It says nothing about how well the agent does "
    "its job, nor how it behaves outside these calls."
)

_LABEL: Final = {
    "passed": "PASS",
    "failed": "FAIL",
    "churn": "CHURN",
    "advisory": "ADVISORY",
    "skipped": "SKIP",
}
_MAX_SHOWN: Final = 160
_MAX_DETAIL: Final = 400


def show(value: Any, limit: int = _MAX_SHOWN) -> str:
    """A peer value as one line of ASCII: JSON with every non-ASCII and control
    character escaped (DEL too), cut at ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=True, sort_keys=True).replace("\x7f", "\\u007f")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bare(value: Any, limit: int = _MAX_SHOWN) -> str:
    """A peer string without its quotes (URLs, names), escaped as :func:`show`."""
    text = show(value, limit)
    return text[1:-1] if isinstance(value, str) and text.endswith('"') else text


def _json(record: ResultRecord | Mapping[str, Any]) -> Mapping[str, Any]:
    return record.to_json() if isinstance(record, ResultRecord) else record


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _get(value: Any, *path: str) -> Any:
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _identity(conflict: Mapping[str, Any]) -> bytes:
    # checks.Conflict.key, from the JSON: check, interface, question, skill, source.
    names = ("check", "interface", "question", "skill", "source")
    return canonicalize([conflict.get(n) for n in names])


def _where(item: Mapping[str, Any]) -> str:
    parts = []
    if "question" in item:
        question = _bare(item["question"])
        if "skill" in item:
            question += f" (skill {show(item['skill'])})"
        parts.append(question)
    if "interface" in item:
        parts.append(f"on {_bare(item['interface'])}")
    source = item.get("source")
    if isinstance(source, dict):
        document = _bare(source.get("document"))
        if source.get("document") == "proposal":
            document += f" {_bare(source.get('url'))}"
        parts.append(f"{document} {_bare(source.get('member'))}".rstrip())
    return ", ".join(parts)


def _conflict_lines(conflict: Mapping[str, Any], mark: str = "") -> list[str]:
    head = f"  {mark}[{_bare(conflict.get('check'))}] {_bare(conflict.get('reason'))}"
    where = _where(conflict)
    lines = [f"{head}: {where}" if where else head]
    if "detail" in conflict:
        lines.append(f"      {_bare(conflict['detail'])}")
    if "expected" in conflict:
        lines.append(f"      expected: {show(conflict['expected'])}")
    if "got" in conflict:
        lines.append(f"      got:      {show(conflict['got'])}")
    return lines


# PROFILE §8: why the recomputed standing is what it is, one fixed line per reason,
# defined once in standing.py (STANDING_WHY) for the report, the ledger and the API.
_WHY: Final = STANDING_WHY


def outcome_line(outcome: Any) -> str:
    """The report's outcome in the one vocabulary (``record.OUTCOME_WORDS``, the words of
    the ledger's page, API and ``ledger list``): the code in capitals, the label where it
    says more than the code, the meaning. An unknown outcome is shown escaped."""
    if not (isinstance(outcome, str) and outcome in OUTCOME_WORDS):
        return _bare(outcome)
    label, meaning = OUTCOME_WORDS[outcome]
    named = "" if label.replace("-", "_") == outcome else f" ({label})"
    return f"{outcome.upper()}{named}: {meaning}."


def who_ran(ran_by: Any) -> str:
    """A record's ``ran_by`` as every surface shows it: ``third_party "Acme" (key U...)``:
    the party bare (a closed set), the self-declared name quoted, the key when given."""
    ran_by = _obj(ran_by)
    who = f"{_bare(ran_by.get('party'))} {show(ran_by.get('name'))}"
    if ran_by.get("key") is not None:
        who += f" (key {_bare(ran_by['key'])})"
    return who


def _ran_by(doc: Mapping[str, Any]) -> list[str]:
    standing, reason = standing_reason(doc)
    who = who_ran(doc.get("ran_by"))
    why = _WHY[reason]
    signature = verify_record_signature(doc).status
    binding = {
        "valid": "valid: the named runner key signed this record",
        "invalid": "INVALID: this record was altered or not signed by the key it names",
        "unsigned": "none (nothing binds this record to the runner it names)",
    }[signature]
    keys = _get(doc, "agent", "keys")
    seen = (
        f"{len(keys)} recorded by the verifier (card and proposal signing keys)"
        if isinstance(keys, list)
        else "not recorded"
    )
    return [
        f"Ran by: {who}",
        f"Standing: {standing.upper()} ({why}; recomputed, not read from the record)",
        f"Runner signature: {binding}",
        f"Agent keys: {seen}",
    ]


def _card_signature(doc: Mapping[str, Any]) -> str:
    sig = _get(doc, "agent", "card_signature")
    if not isinstance(sig, dict):
        return "Card signature: not checked (no card was read)"
    variants = [v for v in _list(sig.get("variants")) if isinstance(v, dict)]
    if not variants:
        return _one_signature(sig, "Card signature")
    # PROFILE §7: each variant's own signature, never one variant's for all of them.
    lines = [_one_signature(sig, "Card signature (the card served without A2A-Version)")]
    lines += [_one_signature(v, f"  A2A-Version {_bare(v.get('version'))} card") for v in variants]
    return "\n".join(lines)


def _one_signature(sig: Mapping[str, Any], label: str) -> str:
    status = _bare(sig.get("status"))
    if sig.get("status") != "verified":
        return f"{label}: {status}"
    readings = _list(sig.get("readings"))
    others = [r for r in readings if r != sig.get("reading")]
    text = f"{label}: verified under the {show(sig.get('reading'))} reading"
    if others:
        text += f" (also: {', '.join(_bare(r) for r in others)})"
    text += f"; kid {show(sig.get('kid'))}; key from {_bare(sig.get('key_source'))}"
    return text + f", thumbprint {_bare(sig.get('thumbprint'))}"


def _advisory_text(item: Mapping[str, Any]) -> str | None:
    """What happened, in words, for the advisories that need more than their reason."""
    if (item.get("code"), item.get("reason")) == ("inactive_probe", "inactive_error_code"):
        # PROFILE §7: say what the host answered; it is never "answered_without_activation".
        got = _obj(_obj(item.get("value")).get("got"))
        if "error" in got:
            code = _obj(got.get("error")).get("code")
            what = f"error {code}" if isinstance(code, int) else "no JSON-RPC error"
            instead = "-32601"
        else:
            status = got.get("status")
            what = f"HTTP {status}" if isinstance(status, int) else "no HTTP status"
            instead = "404"
        return f"the host answered the inactive probe with {what} instead of {instead} (advisory)"
    if (item.get("code"), item.get("reason")) == ("interface", "abandoned"):
        count = item.get("value")
        times = f"{count} " if isinstance(count, int) and not isinstance(count, bool) else ""
        return f"abandoned for the run after {times}failures in a row"
    if (item.get("code"), item.get("reason")) == ("interface", "host_not_resolved"):
        value = _obj(item.get("value"))
        named = len(_list(value.get("interfaces")))
        return f"{show(value.get('host'))} did not resolve; {named} interface(s) not asked"
    if (item.get("code"), item.get("reason")) == ("card_signature", "null_header_member"):
        return "a protected header member is null; read as absent (PROFILE §6.6)"
    return None


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _sampled(sampling: dict[str, Any]) -> str | None:
    """What a sampled run asked (D-VERIFY-63), in counts (skill ids are peer text); None
    for a thorough run and for an older record, which has no ``sampling``."""
    if sampling.get("mode") != "sampled":
        return None
    skills = sampling.get("skills")
    asked = [
        f"{_bare(question)} with {len(_list(ids))} of {_count(skills)} skill selectors"
        for question, ids in _obj(sampling.get("selectors")).items()
    ]
    asked += [
        f"{_bare(item.get('binding'))} on 1 of {_count(item.get('of'))} interfaces"
        for item in map(_obj, _list(sampling.get("interfaces")))
    ]
    if "asked_twice" in sampling:  # D-VERIFY-72 (a 0.6.0 record has none)
        twice = len(_list(sampling.get("asked_twice")))
        asked.append(f"{twice} ask{'' if twice == 1 else 's'} made twice (determinism)")
    return "Sampled (--thorough asks every skill selector on every interface): " + "; ".join(asked)


def render_report(record: ResultRecord | Mapping[str, Any]) -> str:
    """The human report of a record: outcome, who ran it and its standing, the card
    signature and the reading that verified, each check passed or failed, each
    conflict with expected and got, proposals, advisories, and the reminder that
    conformance is not competence."""
    doc = _json(record)
    runs = [_obj(run) for run in _list(doc.get("runs"))]
    lines = _headline(doc)
    # A stored record is anyone's file (record show): only known words go out raw.
    lines += ["", f"Outcome: {outcome_line(doc.get('outcome'))}"]
    incomplete = doc.get("incomplete")
    if isinstance(incomplete, dict):
        lines += _incomplete_lines(incomplete)
    lines += ["", *_ran_by(doc), _card_signature(doc), ""]
    lines += _check_lines(_obj(doc.get("checks")), runs)
    lines += _conflicts_by_run(runs)
    if len(runs) > 1:
        lines += ["", "Runs: 2 (a conflict triggered one re-run with a fresh card and proposals)"]
    sampled = _sampled(_obj(runs[0].get("sampling"))) if runs else None
    if sampled is not None:
        lines += ["", sampled]
    proposals = [_obj(p) for p in _list(runs[-1].get("proposals"))] if runs else []
    if proposals:
        lines += ["", "Proposals (terms §3):"]
        for item in proposals:
            lines.append(f"  {_bare(item.get('result')):<24} {_bare(item.get('url'))}")
    advisories = _list(doc.get("advisories"))
    if advisories:
        lines += ["", f"Advisories ({len(advisories)}, never conflicts):"]
        lines += [_advisory_line(item) for item in map(_obj, advisories)]
    lines += ["", REMINDER, "Not established: " + "; ".join(DOES_NOT_ESTABLISH) + "."]
    return "\n".join(lines) + "\n"


def _headline(doc: Mapping[str, Any]) -> list[str]:
    """The agent's URL, its card's URL and digest, its extended card (PROFILE §7)."""
    lines = [f"a2a-interview verify {_bare(_get(doc, 'agent', 'url'))}"]
    if _get(doc, "agent", "card_url"):
        lines.append(f"  card {_bare(_get(doc, 'agent', 'card_url'))}")
    if _get(doc, "agent", "card_digest"):
        lines.append(f"  card digest {_bare(_get(doc, 'agent', 'card_digest'))}")
    extended = _get(doc, "agent", "extended_card")
    if isinstance(extended, dict):  # PROFILE §7: fetched, or why not
        if extended.get("fetched") is True:
            lines.append(f"  extended card {_bare(extended.get('digest'))}")
        else:
            lines.append(f"  extended card not fetched ({_bare(extended.get('reason'))})")
    return lines


def _incomplete_lines(incomplete: Mapping[str, Any]) -> list[str]:
    """Why a run did not complete, saying what to change; which URL failed (D-CLI-9)."""
    detail = _bare(incomplete.get("detail"), _MAX_DETAIL)  # says what to change
    lines = [f"  {_bare(incomplete.get('reason'))}: {detail}"]
    if incomplete.get("url") is not None:
        cause = incomplete.get("cause")
        why = f" ({_bare(cause)})" if cause is not None else ""
        lines.append(f"  at {_bare(incomplete.get('url'))}{why}")
    if incomplete.get("reason") == "authentication_required":
        schemes = incomplete.get("schemes")
        named = ", ".join(show(s) for s in schemes) if isinstance(schemes, list) else ""
        lines.append(
            "  The card declares securitySchemes: " + named
            if named
            else "  The card declares no securitySchemes."
        )
        lines.append("  Authentication required is not non-conformance (interview §10).")
    return lines


def _check_lines(checks: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each check's status, with the count of the last run's conflicts of it."""
    counts: dict[str, int] = {}
    for conflict in _list(runs[-1].get("conflicts")) if runs else []:
        check = str(_obj(conflict).get("check"))
        counts[check] = counts.get(check, 0) + 1
    lines = ["Checks:"]
    for check in CHECKS:
        status = checks.get(check, "skipped")
        label = _LABEL[status] if isinstance(status, str) and status in _LABEL else _bare(status)
        note = ""
        if status == "failed" and counts.get(check):
            note = f"  {counts[check]} conflict(s)"
        lines.append(f"  {label:<9} {check}{note}")
    return lines


def _conflicts_by_run(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The first run's conflicts (those seen again marked), then those new in the re-run."""
    first = [_obj(c) for c in _list(runs[0].get("conflicts"))] if runs else []
    second = [_obj(c) for c in _list(runs[1].get("conflicts"))] if len(runs) > 1 else []
    if not (second or first):
        return []
    again = {_identity(c) for c in second}
    lines = ["", f"Conflicts, first run ({len(first)}; * = also in the re-run):"]
    for conflict in first:
        lines += _conflict_lines(conflict, "* " if _identity(conflict) in again else "  ")
    before = {_identity(c) for c in first}
    new = [c for c in second if _identity(c) not in before]
    if new:
        lines += ["", f"Conflicts new in the re-run ({len(new)}):"]
        for conflict in new:
            lines += _conflict_lines(conflict)
    return lines


def _advisory_line(item: Mapping[str, Any]) -> str:
    where = _where(item)
    text = f"  [{_bare(item.get('code'))}] {_bare(item.get('reason'))}"
    if where:
        text += f": {where}"
    said = _advisory_text(item)
    if said is not None:
        text += f": {said}" if not where else f"; {said}"
    elif "value" in item:
        text += f" {show(item['value'])}"
    return text


def junit_xml(record: ResultRecord | Mapping[str, Any]) -> bytes:
    """JUnit XML for CI: one testcase per check code (PROFILE §7). ``failed`` (a
    persistent conflict) is a ``<failure>``; ``skipped`` a ``<skipped/>``; ``churn``
    and ``advisory`` pass with a note. An ``unreachable`` outcome adds a testcase
    ``procedure`` carrying an ``<error>``."""
    doc = _json(record)
    checks = _obj(doc.get("checks"))
    runs = _list(doc.get("runs"))
    last = [_obj(c) for c in _list(_obj(runs[-1]).get("conflicts"))] if runs else []
    suite = ET.Element("testsuite", name="a2a-interview verify")
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("url", _get(doc, "agent", "url")),
        ("outcome", doc.get("outcome")),
        ("standing", standing_reason(doc)[0]),
    ):
        ET.SubElement(props, "property", name=name, value=_bare(value))
    failures = skipped = errors = 0
    classname = "a2a_interview.verify"
    for check in CHECKS:
        case = ET.SubElement(suite, "testcase", classname=classname, name=check, time="0")
        status = checks.get(check, "skipped")
        mine = [c for c in last if c.get("check") == check]
        if status == "failed":
            failures += 1
            # The outcome, not a fixed "non_conformant": an incomplete run fails what it
            # could not do (card_fetch) without concluding anything (PROFILE §7).
            failure = ET.SubElement(
                case, "failure", message=f"{len(mine)} conflict(s)", type=_bare(doc.get("outcome"))
            )
            failure.text = "\n".join(line for c in mine for line in _conflict_lines(c))
        elif status == "skipped":
            skipped += 1
            ET.SubElement(case, "skipped")
        elif status == "churn":
            ET.SubElement(case, "system-out").text = "a conflict that did not survive the re-run"
        elif status == "advisory":
            ET.SubElement(case, "system-out").text = "advisories only (never conflicts)"
    tests = len(CHECKS)
    if doc.get("outcome") == "unreachable":
        tests += 1
        errors += 1
        case = ET.SubElement(suite, "testcase", classname=classname, name="procedure", time="0")
        incomplete = _obj(doc.get("incomplete"))
        ET.SubElement(
            case, "error", message=_bare(incomplete.get("reason")), type="unreachable"
        ).text = _bare(incomplete.get("detail"))
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
