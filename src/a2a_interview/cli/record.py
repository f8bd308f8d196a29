"""``record show`` and ``record verify``: read a stored result record (PROFILE §8).

A display never trusts a record's ``standing``: both commands recompute it from what
they can check offline (the runner's signature, ``ran_by``, ``agent.keys``), with no
network. Exit codes:

- ``record show``: 0 the report was printed (whatever the standing), 2 unreadable;
- ``record verify``: 0 evidence, 1 a claim (unsigned, self-run, signed with an agent
  key, ``agent.keys`` missing) or a runner signature that does not verify, 2 unreadable
  (missing, not JSON, over 1 MiB, not ``a2a-interview-result/1``).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from ..errors import IngressError, WireFormatError
from .files import read_input
from .usage import EXIT_FAILED, EXIT_OK, UsageError

_RUNNER_SIGNATURE = {
    "valid": "valid: the key ran_by names signed this record",
    "invalid": "INVALID: the record was altered, or not signed by the key it names",
    "unsigned": "none: nothing binds this record to the runner it names",
}


def _load(path: str) -> dict[str, Any]:
    from ..record import read_record

    data = read_input(path, "record")
    try:
        return read_record(data)
    except (IngressError, WireFormatError) as exc:
        raise UsageError(f"record {path!r} is not a result record: {exc} [{exc.code}]") from None


def _in_hand(args: argparse.Namespace, document: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Agent key ids from the documents the user holds (``--card``, ``--jwks``,
    ``--proposal``), and a line for each saying what was checked."""
    from ..card import jwks_from_json
    from ..errors import CanonicalizationError, KeyFormatError
    from ..jcs import digest
    from ..record import card_key_ids, proposal_signer
    from ..strictjson import loads

    ids: list[str] = []
    notes: list[str] = []
    card: Any = None
    if args.card:
        try:
            card = loads(read_input(args.card, "card"))
        except IngressError as exc:
            raise UsageError(f"card {args.card!r} is not strict I-JSON [{exc.code}]") from None
        same = isinstance(card, dict) and digest(card) == _field(document, "agent", "card_digest")
        notes.append(
            "card: the one recorded (same digest)"
            if same
            else "card: NOT the one recorded (another digest); its keys still count"
        )
    jwks: list[Any] = []
    if args.jwks:
        try:
            jwks = jwks_from_json(read_input(args.jwks, "JWK Set"))
        except KeyFormatError as exc:
            raise UsageError(f"--jwks {args.jwks!r}: {exc}") from None
        notes.append(f"JWK Set: {len(jwks)} keys")
    if card is not None:
        # PROFILE §8: a key counts when it verifies the card, never for being listed.
        found = card_key_ids(document, card, jwks)
        ids += found
        notes.append(f"card: {len(found)} keys verify its signatures")
    elif jwks:
        notes.append("JWK Set without --card: keys merely listed, they do not count")
    committed = _committed_digests(document)
    for path in args.proposal:
        # PROFILE §8: a signer whose signature verifies on a document the recorded card
        # commits to (its digest is a recorded terms entry's) is the agent's key; the
        # signer of any other document is not, whoever it is.
        body = read_input(path, "proposal")
        signer = proposal_signer(body)
        try:
            held = digest(loads(body))
        except (IngressError, CanonicalizationError):
            held = None
        if signer is not None and held in committed:
            ids.append(signer)
            notes.append(f"proposal {path!r}: signed by {signer}")
        elif signer is not None:
            notes.append(
                f"proposal {path!r}: signed by {signer}, but the recorded card commits to"
                " no document of its digest: its signer does not count"
            )
        else:
            notes.append(f"proposal {path!r}: no verifying signer")
    return ids, notes


def _committed_digests(document: dict[str, Any]) -> frozenset[str]:
    """The digests of the proposals the record's runs fetched for the card's terms
    entries: the documents the recorded card commits to (PROFILE §8)."""
    runs = document.get("runs")
    found = set()
    for run_ in runs if isinstance(runs, list) else ():
        proposals = run_.get("proposals") if isinstance(run_, dict) else None
        for proposal in proposals if isinstance(proposals, list) else ():
            value = proposal.get("digest") if isinstance(proposal, dict) else None
            if isinstance(value, str):
                found.add(value)
    return frozenset(found)


def _field(value: Any, *path: str) -> Any:
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _verdict(document: dict[str, Any], extra_keys: list[str] | None = None) -> dict[str, Any]:
    from ..record import standing_reason, verify_record_signature

    standing, reason = standing_reason(document, extra_keys or ())
    ran_by = document.get("ran_by")
    return {
        "standing": standing,
        "reason": reason,
        "runner_signature": verify_record_signature(document).status,
        "ran_by": ran_by if isinstance(ran_by, dict) else None,
        "outcome": document.get("outcome"),
    }


def _dump(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _show(args: argparse.Namespace) -> int:
    from ..report import render_report

    document = _load(args.file)
    if args.json:
        _dump({**_verdict(document), "record": document})
    else:
        sys.stdout.write(render_report(document))
    return EXIT_OK


def _verify(args: argparse.Namespace) -> int:
    from ..report import show, who_ran

    document = _load(args.file)
    extra, notes = _in_hand(args, document)
    verdict = _verdict(document, extra)
    if args.json:
        _dump({**verdict, "checked_against": notes} if notes else verdict)
    else:
        print(f"standing: {verdict['standing']} ({verdict['reason']})")
        print(f"runner signature: {_RUNNER_SIGNATURE[verdict['runner_signature']]}")
        print(f"ran by: {who_ran(verdict['ran_by'])}")
        print(f"outcome: {show(verdict['outcome'])}")
        for note in notes:
            print(f"checked against {note}")
    return EXIT_OK if verdict["standing"] == "evidence" else EXIT_FAILED


def register(sub: Any) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    group = sub.add_parser(
        "record",
        help="show or check a stored result record",
        formatter_class=raw,
        description=textwrap.fill(
            "Read a result record written by `verify --record` or `verify-many --out` "
            "(one record per file). The standing is recomputed offline from the runner's "
            "signature, ran_by and agent.keys, never read from the record (docs/profile.md §8).",
            88,
        ),
    )
    actions = group.add_subparsers(dest="record_command", metavar="ACTION")
    p = actions.add_parser(
        "show",
        help="print a stored record's report, standing recomputed",
        formatter_class=raw,
        description=textwrap.fill(
            "Print FILE's report as `verify` prints it, the standing recomputed. "
            "Exit 0 when printed, 2 when FILE is unreadable (missing, not JSON, over 1 MiB, "
            "not a2a-interview-result/1).",
            88,
        ),
        epilog="examples:\n  a2a-interview record show result.json\n"
        "  sed -n 3p records.jsonl | a2a-interview record show -   # one verify-many line\n"
        "  a2a-interview record show result.json --json   "
        "# {standing, reason, runner_signature, ran_by, outcome, record}",
    )
    p.add_argument("file", metavar="FILE", help="the record ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the verdict and the record")
    p.set_defaults(run=_show)
    p = actions.add_parser(
        "verify",
        help="check a stored record's runner signature and standing",
        formatter_class=raw,
        description=textwrap.fill(
            "Check FILE's runner signature and print the recomputed standing. Exit 0 "
            "evidence; 1 claim (unsigned, self-run, signed with one of the agent's keys, "
            "agent.keys missing) or a signature that does not verify; 2 unreadable.",
            88,
        ),
        epilog="examples:\n  a2a-interview record verify result.json && echo evidence\n"
        "  a2a-interview record verify result.json --json\n"
        "  sed -n 3p records.jsonl | a2a-interview record verify -   # one verify-many line\n"
        "  a2a-interview record verify result.json --card card.json --jwks jwks.json \\\n"
        "      --proposal terms.sow.json   # also compare the runner key with the keys of\n"
        "                                  # the agent's own documents, in hand",
    )
    p.add_argument("file", metavar="FILE", help="the record ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument(
        "--card",
        metavar="FILE",
        help="the agent's card: a runner key that signed it is an agent key",
    )
    p.add_argument("--jwks", metavar="FILE", help="the agent's JWK Set: its keys are agent keys")
    p.add_argument(
        "--proposal",
        metavar="DOC",
        action="append",
        default=[],
        help=(
            "a proposal the recorded card commits to (its digest is a recorded terms"
            " entry's): its signer is an agent key (repeat)"
        ),
    )
    p.set_defaults(run=_verify)
