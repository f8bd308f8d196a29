"""Offline commands for publishers and builders: keys, card and proposal signatures,
digests, and ``answer``, which previews an interview answer without running anything."""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from .. import nkeys
from ..card import READINGS
from ..declarations import interview_entry, read_card
from ..errors import IngressError, SignatureError
from ..jcs import digest
from ..projection import CommittedProposal, Interview
from ..spec import METHOD_PREFIX, QUESTIONS, SELECTOR_QUESTIONS
from ..strictjson import loads
from ..terms import read_terms_entries, sign_proposal, verify_proposal, verify_uncommitted
from .files import read_input, write_atomic
from .usage import EXIT_FAILED, EXIT_OK, UsageError

# The selector questions, as text says them (D-CORE-28).
_SELECTING = " and ".join(q for q in QUESTIONS if q in SELECTOR_QUESTIONS)
_ALGS = ("nkey", "EdDSA", "ES256", "ES384", "PS256", "RS256")


def _json_file(path: str, what: str) -> Any:
    try:
        return loads(read_input(path, what))
    except IngressError as exc:
        raise UsageError(f"{what} {path!r} is not strict I-JSON: {exc} [{exc.code}]") from None


def _object_file(path: str, what: str) -> dict[str, Any]:
    value = _json_file(path, what)
    if not isinstance(value, dict):
        raise UsageError(f"{what} {path!r} is not a JSON object")
    return value


def _pretty(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write(out: str, data: bytes, *, mode: int = 0o644, exclusive: bool = False) -> None:
    # Atomic, regular files only; exclusive: never over an existing file (a secret key).
    write_atomic(out, data, option="--out", mode=mode, exclusive=exclusive)


def _emit(data: bytes, out: str | None, *, mode: int = 0o644) -> None:
    if out:
        _write(out, data, mode=mode)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


def _seed(value: str) -> str:
    if value.startswith("SU") and not Path(value).is_file():
        return value
    # Anything else names a file (a pipe or a device too), read through the bound.
    return read_input(value, "seed file").decode("ascii", errors="replace").strip()


# -- keygen -------------------------------------------------------------------------


def _keygen(args: argparse.Namespace) -> int:
    if args.alg == "nkey":
        if args.kid:
            raise UsageError("--kid names a JWK; an nkey is its own identifier (use --alg)")
        seed = nkeys.generate_seed()
        public = nkeys.public_of(nkeys.private_key(seed))
        if args.out:
            _write(args.out, (seed + "\n").encode(), mode=0o600, exclusive=not args.force)
            print(public)
        else:
            _emit(_pretty({"seed": seed, "public_key": public}), None)
        return EXIT_OK
    from ..card import generate_key, private_jwk, public_jwk

    key = generate_key(args.alg)
    kid = args.kid or f"{args.alg.lower()}-{datetime.date.today().isoformat()}"
    secret = private_jwk(key, kid, args.alg)
    jwks = {"keys": [public_jwk(key, kid, args.alg)]}
    if args.out:
        _write(args.out, _pretty(secret), mode=0o600, exclusive=not args.force)
        _emit(_pretty(jwks), None)
    else:
        _emit(_pretty({"private_jwk": secret, "jwks": jwks}), None)
    return EXIT_OK


# -- card ----------------------------------------------------------------------------


def _jwk_alg(data: bytes) -> str | None:
    """The ``alg`` a private JWK names (``keygen --alg PS256`` writes one), else ``None``:
    an RSA key's JWK saying PS256 is signed PS256, not the RS256 default."""
    try:
        value = loads(data)
    except IngressError:
        return None  # PEM: load_private_key has read it
    alg = value.get("alg") if isinstance(value, dict) else None
    return alg if isinstance(alg, str) else None


def _card_sign(args: argparse.Namespace) -> int:
    from ..card import load_private_key, sign_card, sign_readings
    from ..cardproto import proto_form
    from ..report import show

    card = _object_file(args.card, "card")
    data = read_input(args.key, "key")
    key = load_private_key(data)
    try:
        readings = sign_readings(card, args.reading)
    except SignatureError as exc:
        raise UsageError(f"{exc}: fix the card, or sign it with --reading served") from None
    alg = args.alg or _jwk_alg(data)
    signed = sign_card(card, key, kid=args.kid, alg=alg, jku=args.jku, reading=args.reading)
    _emit(_pretty(signed), args.out)
    # PROFILE §6.3: say what each new signature covers, and what the SDKs cannot check.
    print(f"signed: {', '.join(readings)}", file=sys.stderr)
    if readings == ("served",) and args.reading is None:
        print("note: not an A2A 1.0 card (no supportedInterfaces): signed as served; the "
              "1.x SDKs' verifiers check a 1.0 card", file=sys.stderr)  # fmt: skip
    form = proto_form({k: v for k, v in card.items() if k != "signatures"})
    if "proto" in readings and form is not None and form.dropped:
        print("note: outside the A2A 1.0 card, so not covered by the proto signature "
              "(the SDKs' verifiers do not check them):", file=sys.stderr)  # fmt: skip
        for pointer in form.dropped:
            # Card member names are the user's, escaped all the same.
            print(f"  {show(pointer)}", file=sys.stderr)
    return EXIT_OK


# PROFILE §6.6 and §6.3: what `card verify` says besides the verdict, fixed wording.
_CARD_ADVISORIES: dict[str, str] = {
    "null_header_member": (
        "a protected header member is null; read as absent (docs/profile.md §6.6)"
    ),
    "uncovered_members": "the verifying signature does not cover these served members",
}


def _card_verify(args: argparse.Namespace) -> int:
    from ..card import jwks_from_json, verify_card
    from ..report import show

    card = _object_file(args.card, "card")
    keys = jwks_from_json(_json_file(args.jwks, "JWKS")) if args.jwks else []
    readings = (args.reading,) if args.reading else READINGS
    report = verify_card(card, keys, readings=readings)
    advisories: list[dict[str, Any]] = [
        {"code": quirk, "detail": _CARD_ADVISORIES[quirk]} for quirk in report.quirks
    ]
    # The verifying signature is the one covering the most (cardsig.verify_card).
    uncovered = min(
        (c.uncovered for c in report.checks if c.status == "verified"), key=len, default=()
    )
    if uncovered:
        advisories.append({"code": "uncovered_members", "value": list(uncovered),
                           "detail": _CARD_ADVISORIES["uncovered_members"]})  # fmt: skip
    if args.json:
        body = {**report.to_json(), "readings": list(report.readings), "advisories": advisories}
        _emit(_pretty(body), None)
    else:
        print(f"status:     {report.status}")
        print(f"reading:    {report.reading or '-'}")
        # The kid is the peer's, signed or not: escaped, never raw to the terminal.
        print(f"kid:        {show(report.kid) if report.kid is not None else '-'}")
        print(f"thumbprint: {report.thumbprint or '-'}")
        for check in report.checks:
            verdict = ",".join(check.readings) or (check.reason or "-")
            print(f"  signature {check.index}: {check.status} ({verdict})")
        for advisory in advisories:
            print(f"advisory:   {advisory['code']}: {advisory['detail']}")
            for pointer in advisory.get("value", ()):
                # Card member names are the peer's: escaped, never raw to the terminal.
                print(f"  {json.dumps(pointer)}")
        if not args.jwks and report.status != "verified":
            print("hint: pass --jwks FILE to pin the signer's keys", file=sys.stderr)
    return EXIT_OK if report.status == "verified" else EXIT_FAILED


# -- proposal ------------------------------------------------------------------------


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# Agent SoW §6 (terms-extension.md §5): signed_at is RFC 3339 UTC, with Z.
_RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z", re.ASCII)


def _signed_at(text: str | None) -> str:
    if text is None:
        return _now()
    try:
        # The pattern gives the shape; strptime the calendar (no 30 February).
        datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")
        valid = _RFC3339_UTC.fullmatch(text) is not None
    except ValueError:
        valid = False
    if not valid:
        raise UsageError(f"--signed-at {text!r} is not an RFC 3339 UTC time like {_now()}")
    return text


def _proposal_sign(args: argparse.Namespace) -> int:
    document = _object_file(args.doc, "proposal")
    signed = sign_proposal(document, _seed(args.seed), _signed_at(args.signed_at))
    _emit(_pretty(signed), args.out)
    print(f"digest: {digest(signed)}", file=sys.stderr)
    return EXIT_OK


def _proposal_digest(args: argparse.Namespace) -> int:
    print(digest(_json_file(args.doc, "proposal")))
    return EXIT_OK


def _fetch_proposal(url: str, allow_private: bool) -> bytes | None:
    """The body of a 2xx GET of ``url`` under the verifier's bounds (size, time, 429,
    redirects, address policy), else ``None`` with a note naming why (terms §3
    ``fetch_failed``). Never a traceback: whatever the host does is a reason code."""
    import anyio

    from ..net.failures import TransportFailure
    from ..verifier.client import ClientOptions, Interviewer, Response

    async def fetch() -> Response:
        options = ClientOptions(allow_private=allow_private)
        async with Interviewer(options, target=url) as session:
            return await session.get(url)

    try:
        response = anyio.run(fetch)
    except TransportFailure as exc:
        hint = " (pass --allow-private to fetch it)" if exc.code == "address_refused" else ""
        print(f"note: the proposal could not be fetched [{exc.code}]{hint}", file=sys.stderr)
        return None
    except Exception as exc:  # a bug: named, never a traceback
        print(f"note: the proposal could not be fetched (internal error, "
              f"{type(exc).__name__})", file=sys.stderr)  # fmt: skip
        return None
    if not 200 <= response.status < 300:
        print(f"note: the proposal URL answered HTTP {response.status}", file=sys.stderr)
        return None
    return response.body


def _proposal_verify(args: argparse.Namespace) -> int:
    if args.doc.startswith(("http://", "https://")):
        body = _fetch_proposal(args.doc, args.allow_private)
    else:
        body = read_input(args.doc, "proposal")
    if args.digest is None:
        print("note: no --digest given; checking signature and shape only", file=sys.stderr)
        verdict = verify_uncommitted(body)
    else:
        verdict = verify_proposal(args.digest, body)
    print(verdict.result)
    return EXIT_OK if verdict.ok else EXIT_FAILED


# -- answer --------------------------------------------------------------------------


def _answer(args: argparse.Namespace) -> int:
    question = args.question.removeprefix(METHOD_PREFIX)
    if args.skill is not None and question not in SELECTOR_QUESTIONS:
        raise UsageError(f"--skill applies to {_SELECTING} only, not {question!r}")
    try:
        card = read_card(read_input(args.card, "card"))
    except IngressError as exc:
        raise UsageError(f"card {args.card!r} is not strict I-JSON: {exc} [{exc.code}]") from None
    files: dict[str, bytes] = {}
    for item in args.proposal:
        # The last '=': a committed url may carry a query (`?v=2`); a file name is ours.
        url, sep, path = item.rpartition("=")
        if not sep or not url or not path:
            raise UsageError(f"--proposal takes URL=FILE, got {item!r}")
        files[url] = read_input(path, "proposal")
    if interview_entry(card) is None:
        print("warning: the card does not declare the interview extension", file=sys.stderr)
    committed = []
    unread: list[str] = []  # one note for all of them, each url once
    for entry in read_terms_entries(card):
        if entry.url not in files:
            if question == "terms":
                raise UsageError(f"no --proposal URL=FILE for the committed {entry.url!r}")
            if repr(entry.url) not in unread:
                unread.append(repr(entry.url))
            continue
        verdict = verify_proposal(entry.digest, files[entry.url])
        if verdict.document is None:
            raise UsageError(f"terms entry {entry.member} failed verification: {verdict.result}")
        committed.append(CommittedProposal(entry, verdict.document))
    if unread:
        urls = ", ".join(unread)
        print(f"note: no --proposal for {urls}; not needed for {question}", file=sys.stderr)
    interview = Interview(card, committed)
    body = interview.answer(question, args.skill)
    sys.stdout.buffer.write(body + (b"\n" if sys.stdout.isatty() else b""))
    sys.stdout.flush()
    return EXIT_OK


# -- parsers -------------------------------------------------------------------------


def _wrap(text: str) -> str:
    # The parsers keep their examples' lines as written (RawDescriptionHelpFormatter),
    # which would leave a description as one long line.
    return textwrap.fill(text, 88)


def register(sub: Any) -> None:
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "keygen",
        help="generate a signing key",
        formatter_class=raw,
        description=_wrap(
            "Generate a key: an nkey seed for proposals and result records "
            "(default), or a JWK for card signatures."
        ),
        epilog="examples:\n  a2a-interview keygen --out provider.seed       # prints the U... key\n"
        "  a2a-interview keygen --alg EdDSA --kid card-2026 --out card.jwk > jwks.json",
    )
    p.add_argument("--alg", choices=_ALGS, default="nkey", help="key type (default: nkey)")
    p.add_argument("--kid", help="key id for a JWK (default: ALG-DATE)")
    p.add_argument(
        "--out",
        help="write the secret here (mode 0600, a new file); print the public half",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(run=_keygen)

    card = sub.add_parser("card", help="sign or verify an Agent Card (A2A §8.4)")
    card_sub = card.add_subparsers(dest="card_command", metavar="ACTION")
    p = card_sub.add_parser(
        "sign",
        help="append a JWS signature to a card",
        formatter_class=raw,
        description=_wrap(
            "Sign CARD (detached JWS, JSON serialization, appended to `signatures`) so "
            "that both official SDKs' verifiers and ours accept it (docs/profile.md §6.3). An A2A "
            "1.0 card is signed under the reading 'proto' (the card through the A2A 1.0 "
            "protobuf JSON form, as a2a-sdk and @a2a-js/sdk check it) and, when the card "
            'as served carries more (`"required": false`, empty values, members the 1.0 '
            "card does not define), also under 'served' (strict RFC 8785 of the card "
            "without `signatures`). Any other card is signed under 'served'. --reading "
            "asks for one signature under one reading."
        ),
        epilog="example:\n  a2a-interview card sign card.json --key card.jwk --kid card-2026 \\\n"
        "      --jku https://agent.example/.well-known/jwks.json --out signed.json",
    )
    p.add_argument("card", help="the card JSON file ('-' for stdin)")
    p.add_argument("--key", required=True, help="private key: PEM (PKCS#8) or private JWK")
    p.add_argument("--kid", required=True, help="key id for the protected header")
    p.add_argument(
        "--alg", choices=_ALGS[1:],
        help="algorithm (default: the JWK's alg, else from the key: RS256 for RSA)",
    )  # fmt: skip
    p.add_argument("--jku", help="URL of the JWKS that holds the public key")
    p.add_argument(
        "--reading", choices=("proto", "served"),
        help="sign under this reading only (default: proto, and served when it differs)",
    )  # fmt: skip
    p.add_argument("--out", help="write the signed card here (default: stdout)")
    p.set_defaults(run=_card_sign)
    p = card_sub.add_parser(
        "verify",
        help="verify a card's signatures",
        description=_wrap(
            "Verify CARD's signatures under the readings 'served', 'prune-empty' and "
            "'proto' (what the a2a-sdk and @a2a-js/sdk signers sign; "
            "docs/profile.md §6.3) and print the status, the reading that verified, kid "
            "and RFC 7638 thumbprint, then any advisory: served members the signature does "
            "not cover, tolerated header quirks "
            "(docs/profile.md §6.6). Exit 0 when a signature verifies, 1 otherwise."
        ),
        formatter_class=raw,
        epilog="examples:\n  a2a-interview card verify signed.json --jwks jwks.json\n"
        "  a2a-interview card verify signed.json --jwks jwks.json --reading served --json",
    )
    p.add_argument("card", help="the card JSON file ('-' for stdin)")
    p.add_argument("--jwks", help="pinned JWK Set file holding the signer's public key")
    p.add_argument("--reading", choices=READINGS, help="require one reading")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=_card_verify)

    prop = sub.add_parser("proposal", help="sign, digest or verify a standing proposal")
    prop_sub = prop.add_subparsers(dest="proposal_command", metavar="ACTION")
    p = prop_sub.add_parser(
        "sign",
        help="sign a standing proposal as its provider",
        description=_wrap(
            "Replace DOC's signatures with one provider signature (Ed25519 over "
            "'agent-sow-v1\\n' + JCS of the document without signatures). Prints the digest "
            "that a terms entry commits to on stderr."
        ),
        formatter_class=raw,
        epilog="example:\n  a2a-interview proposal sign terms.json --seed provider.seed "
        "--out terms.sow.json",
    )
    p.add_argument("doc", help="the proposal JSON file ('-' for stdin)")
    p.add_argument("--seed", required=True, help="seed file (or an SU... seed)")
    p.add_argument("--signed-at", help="RFC 3339 UTC time to record (default: now)")
    p.add_argument("--out", help="write the signed document here (default: stdout)")
    p.set_defaults(run=_proposal_sign)
    p = prop_sub.add_parser(
        "digest",
        help="print the digest a terms entry commits to",
        description=_wrap(
            "Print sha256: + hex of SHA-256 over the RFC 8785 bytes of the whole "
            "document (terms §5)."
        ),
        formatter_class=raw,
        epilog="example:\n  a2a-interview proposal digest terms.sow.json",
    )
    p.add_argument("doc", help="the proposal JSON file ('-' for stdin)")
    p.set_defaults(run=_proposal_digest)
    p = prop_sub.add_parser(
        "verify",
        help="verify a proposal as a terms entry would",
        description=_wrap(
            "Verify DOC (a file or an https URL) per terms §3: digest (with "
            "--digest), provider signature, standing-proposal shape. Prints 'ok' or the reason "
            "code (fetch_failed, not_json, digest_spelling, digest_mismatch, unsigned, "
            "signature_malformed, signature_invalid, not_standing_proposal, "
            "directed_on_public_card). Exit 0 when it verifies, 1 otherwise."
        ),
        formatter_class=raw,
        epilog="examples:\n  a2a-interview proposal verify terms.sow.json --digest sha256:...\n"
        "  a2a-interview proposal verify https://agent.example/terms/t.sow.json "
        "--digest sha256:...",
    )
    p.add_argument("doc", help="the proposal: a file, '-' for stdin, or an https URL")
    p.add_argument("--digest", help="the digest the terms entry commits to")
    p.add_argument(
        "--allow-private", action="store_true",
        help="fetch a URL on an address that is not public (10.x, 169.254.x, fd00::/8, ...)",
    )  # fmt: skip
    p.set_defaults(run=_proposal_verify)

    p = sub.add_parser(
        "answer",
        help="preview the bytes a server would answer",
        formatter_class=raw,
        description=_wrap(
            "Build every answer from CARD and its committed proposals, as a server "
            "would, and print the exact bytes of one: the JSON-RPC `result`."
        ),
        epilog="examples:\n  a2a-interview answer card.json identity\n"
        "  a2a-interview answer card.json --proposal https://a.example/t.json=t.json \\\n"
        "      terms --skill reconcile-statement",
    )
    p.add_argument("card", help="the card JSON file, as served")
    p.add_argument(
        "question",
        help=f"one of {', '.join(QUESTIONS)} (or interview/...); others draw the refusal",
    )
    p.add_argument("--skill", help=f"exact-match skill selector ({_SELECTING})")
    p.add_argument(
        "--proposal",
        action="append",
        default=[],
        metavar="URL=FILE",
        help="the bytes of the proposal the card commits to at URL (repeat per entry)",
    )
    p.set_defaults(run=_answer)
