"""``verify``, ``ask`` and ``verify-many``: the verifier's command line (PROFILE §9).

Exit codes (the constants of ``cli/__init__.py``):

- ``verify``: 0 consistent or churn, 1 non_conformant, 2 usage error, 3 unreachable or
  could not complete (authentication required included), 4 not_offered;
- ``ask``: 0 an answer or a refusal was printed, 1 the reply is not a well-formed
  result, 2 usage error, 3 unreachable or authentication required, 4 not_offered;
- ``verify-many``: 1 if any agent is non_conformant, else 3 if any is unreachable,
  else 0 (not_offered states nothing and fails nothing); 2 usage error.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import IO, Any, Final
from urllib.parse import urlsplit

from ..spec import QUESTIONS, SELECTOR_QUESTIONS, SELECTORS_PER_QUESTION
from .files import check_output, open_atomic, read_input, write_atomic
from .options import (
    add_credentials,
    add_jwks,
    add_network,
    add_procedure,
    add_runner,
    add_store_option,
    add_timeout,
    concurrency,
    credential_headers,
    credential_origins,
    deadline,
    keep,
    open_store,
    parse_header,
    parse_origin,
    positive,
    read_jwks,
    verify_options,
)
from .usage import (
    EXIT_FAILED,
    EXIT_NOT_OFFERED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    UsageError,
)

OUTCOME_EXIT: Final[dict[str, int]] = {
    "consistent": EXIT_OK,
    "churn": EXIT_OK,
    "non_conformant": EXIT_FAILED,
    "unreachable": EXIT_UNREACHABLE,
    "not_offered": EXIT_NOT_OFFERED,
}
VERIFY_EPILOG = """\
examples:
  a2a-interview verify https://agent.example
  a2a-interview verify https://agent.example/.well-known/agent-card.json --json
  a2a-interview verify https://agent.example --as platform --name "Acme Market" \\
      --runner-key acme.seed --record result.json --junit junit.xml
  a2a-interview verify https://agent.internal.example --allow-private --deadline 300
  API_TOKEN=... a2a-interview verify https://agent.example --bearer-env API_TOKEN
  API_TOKEN=... a2a-interview verify https://www.agent.example --bearer-env API_TOKEN \\
      --credentials-origin https://api.agent.example
  a2a-interview verify https://agent.example --thorough   # every skill, every interface

By default a run asks each binding on one interface and each selector question with {k}
skill ids, drawn at random, each question once ({calls} calls a binding, the inactive and
two closure probes included), and on one drawn binding each question and one selector ask
twice ({repeats} more, whatever the card); a lie under one skill of n is caught with
probability {k}/n per run. --thorough asks everything, each question twice.

The report says, check by check, what passed and what failed, each conflict with the
declared value expected and the value the agent gave, the card signature and the
reading it verified under, and who ran the procedure: a result an agent ran against
itself (--as self) is a claim, never evidence. Conformance is not competence.

exit codes: 0 consistent or churn · 1 non_conformant · 2 usage error ·
3 unreachable or could not complete (authentication required included) · 4 not_offered"""
VERIFY_EPILOG = (
    VERIFY_EPILOG.replace("{k}", str(SELECTORS_PER_QUESTION))
    .replace(
        "{calls}", str(1 + len(QUESTIONS) + len(SELECTOR_QUESTIONS) * SELECTORS_PER_QUESTION + 2)
    )
    .replace("{repeats}", str(len(QUESTIONS) + 1))
)  # D-VERIFY-72: the drawn binding's repeats
# The selector questions, as text says them (D-CORE-28).
_SELECTING = " and ".join(q for q in QUESTIONS if q in SELECTOR_QUESTIONS)

ASK_EPILOG = """\
examples:
  a2a-interview ask https://agent.example identity
  a2a-interview ask https://agent.example terms --skill reconcile-statement

Prints the result's bytes (the answer, or the standard refusal) as the agent sent them
in JCS form. exit codes: 0 printed · 1 not a well-formed result · 2 usage error ·
3 unreachable or authentication required · 4 not_offered"""

MANY_EPILOG = """\
examples:
  a2a-interview verify-many agents.txt --out results.jsonl
  a2a-interview verify-many agents.txt --concurrency auto > results.jsonl   # paced
  a2a-interview verify-many agents.txt --deadline 30 > results.jsonl
  a2a-interview verify-many agents.txt --credentials creds.json --jwks keys.json

FILE holds one URL per line (base URL or card URL); blank lines and lines starting
with # are skipped. Records are written as JSON Lines in the file's order; a progress
bar and a summary go to stderr (the count of each outcome, then every agent that was
not consistent; --all lists every agent). Each agent has its own deadline, so one slow
or hostile agent never holds up the others; at most --per-origin agents of one origin
run at once, so a host serving many agents is not flooded. Each worker chooses how
many agents it has under way at once as it goes (--concurrency auto, the default):
from 16, more while the rate of agents reached rises with it and its CPU is not busy,
up to 256; back when the rate did not follow, when agents take half their --deadline
or when failures jump (far agents: many at once; a fast network: few). --concurrency
N fixes N. Addresses that are not public are refused unless --allow-private, so a list
from strangers cannot make this machine scan its own network.

--credentials FILE is a JSON object from origins to what to send there; each agent
gets only the credentials of its own URL's origin, sent to that origin and to the
origins its entry names in "origins" (an agent whose card is on www and whose
interfaces are on api), nowhere else:
  {"https://agents.example": {"bearer_env": "AGENTS_TOKEN"},
   "https://other.example:8443": {"header_env": {"X-API-Key": "OTHER_KEY"}},
   "https://third.example": {"headers": {"X-API-Key": "the key itself"}},
   "https://www.fourth.example": {"bearer_env": "FOURTH_TOKEN",
                                  "origins": ["https://api.fourth.example"]}}
An origin that no listed agent's URL is on is a warning (its credentials go nowhere;
an interface origin belongs in the "origins" of its agent's entry). Each record says
which kind was sent (credentials.kind: none, bearer, basic, authorization, header) and
where else (credentials.origins), never its value.

exit codes: 0 none failed · 1 some agent non_conformant · 2 usage error ·
3 some agent unreachable (and none non_conformant)"""


# ---------------------------------------------------------------------------------------
# Arguments


def _url(text: str) -> str:
    try:
        parts = urlsplit(text)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        valid = False
    if not valid:
        raise UsageError(f"not an http(s) URL: {text!r}")
    return text


def register(subparsers: Any) -> None:
    """Add ``verify``, ``ask`` and ``verify-many``."""
    formatter = argparse.RawDescriptionHelpFormatter
    verify = subparsers.add_parser(
        "verify",
        help="interview an agent and diff it against what it declared",
        description="Interview the agent at URL (its base URL or its card URL) with the "
        "procedure of the interview draft §8 and docs/profile.md §7, and report what it found.",
        epilog=VERIFY_EPILOG,
        formatter_class=formatter,
    )
    verify.add_argument("url", metavar="URL")
    out = verify.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print the record, not the report")
    out.add_argument("--record", metavar="FILE", help="also write the record to FILE")
    out.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one test per check)")
    out.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    add_store_option(out, default=False)
    add_runner(verify)
    add_jwks(verify, "pin the card's keys (a JWK Set file); else its same-origin jku is fetched")
    add_procedure(verify)
    add_network(verify, "the whole procedure")
    add_credentials(verify)
    verify.set_defaults(run=_verify)

    ask = subparsers.add_parser(
        "ask",
        help="ask an agent one interview question",
        description="Fetch the card at URL, ask QUESTION once (activated) on its first "
        "JSON-RPC interface (else HTTP+JSON), and print the result.",
        epilog=ASK_EPILOG,
        formatter_class=formatter,
    )
    ask.add_argument("url", metavar="URL")

    ask.add_argument("question", metavar="QUESTION", choices=QUESTIONS,
                     help="one of: " + ", ".join(QUESTIONS))  # fmt: skip
    ask.add_argument("--skill", help=f"the skill selector ({_SELECTING} only)")
    add_timeout(ask)
    add_network(ask, "the card and the question")
    add_credentials(ask)
    ask.set_defaults(run=_ask)

    many = subparsers.add_parser(
        "verify-many",
        help="verify every agent listed in a file",
        description="Verify each URL of FILE with bounded concurrency; one record per "
        "agent as JSON Lines.",
        epilog=MANY_EPILOG,
        formatter_class=formatter,
    )
    many.add_argument("file", metavar="FILE", help="one URL per line ('-' for stdin)")
    many.add_argument("--concurrency", type=concurrency, default="auto", metavar="N|auto",
                      help="agents under way at once in each worker (default %(default)s: "
                      "chosen as the run goes from the rate of agents reached, their "
                      "time, failures and CPU, 16 to 256; N: fixed)")  # fmt: skip
    # The old name of --deadline, kept for scripts.
    many.add_argument("--agent-timeout", type=deadline, dest="deadline",
                      default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # fmt: skip
    many.add_argument("--out", metavar="FILE", help="write the JSON Lines here (default stdout)")
    many.add_argument("--workers", type=positive, default=None, metavar="N",
                      help="processes, each verifying --concurrency agents at once "
                      "(default: one per core, at most 8; fewer for short lists)")  # fmt: skip
    many.add_argument("--per-origin", type=positive, default=4, metavar="N",
                      help="agents of one origin under way at once, all workers "
                      "together (default 4)")  # fmt: skip
    many.add_argument("--no-progress", action="store_true", help="no progress bar")
    many.add_argument("--all", action="store_true",
                      help="list every agent in the summary, not only those that were not "
                      "consistent")  # fmt: skip
    add_store_option(many, default=False)
    add_runner(many)
    add_jwks(
        many,
        "pin the cards' keys (a JWK Set file): a card with no signature whose kid "
        "is in it is checked against its own same-origin jku, as without the option",
    )
    add_procedure(many)
    add_network(many, "each agent's whole procedure")
    creds = many.add_argument_group("credentials (each origin's sent to that origin only)")
    creds.add_argument(
        "--credentials", metavar="FILE",
        help="a JSON object from origins to headers or token variables (see below)",
    )  # fmt: skip
    many.set_defaults(run=_verify_many)


def _pretty(document: Any) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write(path: str, data: bytes, option: str) -> None:
    write_atomic(path, data, option=option)  # atomic, regular files only (cli/files.py)


def _internal(exc: Exception) -> int:
    # A user never sees a traceback; a bug still gets named.
    print(
        f"a2a-interview: internal error ({type(exc).__name__}); please report it",
        file=sys.stderr,
    )
    return EXIT_UNREACHABLE


# ---------------------------------------------------------------------------------------
# verify


def _verify(args: argparse.Namespace) -> int:
    import anyio

    from ..report import junit_xml, render_report
    from ..verifier.procedure import verify
    from .console import print_report

    url = _url(args.url)
    for path, option in ((args.record, "--record"), (args.junit, "--junit")):
        if path:
            check_output(path, option)  # refused before the run, not after it
    jwks = read_jwks(args.jwks)
    progress: Callable[[str], None] | None = None
    if args.verbose:

        def progress(stage: str) -> None:
            print(f"a2a-interview: {stage}", file=sys.stderr)

    options = verify_options(args, jwks=jwks, progress=progress)
    ledger = open_store(args.store) if args.store else None  # a bad store fails first
    try:
        record = anyio.run(lambda: verify(url, options))
    except Exception as exc:
        return _internal(exc)
    document = record.to_json()
    if ledger is not None:
        with ledger:
            if keep(ledger, [document]):
                return EXIT_USAGE
    if args.record:
        _write(args.record, _pretty(document), "--record")
    if args.junit:
        _write(args.junit, junit_xml(document), "--junit")
    if args.json:
        sys.stdout.write(_pretty(document).decode("utf-8"))
    else:
        print_report(render_report(document))
    return OUTCOME_EXIT[str(document["outcome"])]


# ---------------------------------------------------------------------------------------
# ask

_VERSION_HINT: Final = (
    " (the agent refused the call's A2A-Version, docs/profile.md §3.10: the version of "
    "the interface asked is the one its card declares)"
)


def _ask(args: argparse.Namespace) -> int:
    import anyio

    from ..errors import DeclarationError, IngressError
    from ..net.failures import TransportFailure
    from ..report import show
    from ..spec import RPC_VERSION_NOT_SUPPORTED
    from ..verifier.asking import (
        AuthenticationRequired,
        CredentialsNotSent,
        NoInterface,
        NotAnswered,
        NotOffered,
        ask,
    )
    from ..verifier.client import ClientOptions

    url = _url(args.url)
    if args.skill is not None and args.question not in SELECTOR_QUESTIONS:
        raise UsageError(f"--skill applies to {_SELECTING} only")
    options = ClientOptions(
        timeout=args.timeout, headers=credential_headers(args), allow_private=args.allow_private,
        credential_origins=credential_origins(args),
    )  # fmt: skip
    try:
        result = anyio.run(
            lambda: ask(url, args.question, args.skill, options=options, deadline=args.deadline)
        )
    except CredentialsNotSent as exc:
        # PROFILE §7: not the agent refusing the credentials given; say where to send them.
        print(f"a2a-interview: unreachable: {show(exc.origin)} requires authentication and was "
              "sent no credentials: name it with --credentials-origin "
              "[credentials_not_sent]", file=sys.stderr)  # fmt: skip
        return EXIT_UNREACHABLE
    except AuthenticationRequired as exc:
        names = ", ".join(show(s) for s in exc.schemes) or "none"
        print(f"a2a-interview: authentication required (securitySchemes: {names})",
              file=sys.stderr)  # fmt: skip
        return EXIT_UNREACHABLE
    except NotOffered as exc:
        print(f"a2a-interview: not offered: {exc}", file=sys.stderr)
        return EXIT_NOT_OFFERED
    except NoInterface as exc:
        # PROFILE §7: what verify says of the same card (non_conformant, declaration).
        print(f"a2a-interview: non_conformant: {exc} (gRPC only: the interview is asked on "
              "JSONRPC or HTTP+JSON) [no_interface]", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    except NotAnswered as exc:
        code = f", JSON-RPC error {exc.error_code}" if exc.error_code is not None else ""
        hint = _VERSION_HINT if exc.error_code == RPC_VERSION_NOT_SUPPORTED[0] else ""
        print(f"a2a-interview: not a well-formed result: {exc}{code} [{exc.reason}]{hint}",
              file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    except TransportFailure as exc:
        from ..report import show

        hint = " (pass --allow-private)" if exc.code == "address_refused" else ""
        # D-CLI-9: which URL, and why (the URL may come from the card: escaped)
        cause = f" ({exc.cause})" if exc.cause else ""
        at = f" at {show(exc.url)}" if exc.url else ""
        print(f"a2a-interview: unreachable: {exc}{cause}{at} [{exc.code}]{hint}",
              file=sys.stderr)  # fmt: skip
        return EXIT_UNREACHABLE
    except (IngressError, DeclarationError) as exc:
        print(f"a2a-interview: the card is not a strict I-JSON object [{exc.code}]",
              file=sys.stderr)  # fmt: skip
        return EXIT_UNREACHABLE
    except Exception as exc:
        return _internal(exc)
    assert result.read.canonical is not None  # ask returns well-formed results only
    sys.stdout.buffer.write(result.read.canonical + b"\n")
    sys.stdout.flush()
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# verify-many


def _read_urls(path: str) -> list[str]:
    try:
        text = read_input(path, "URL list").decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"URL list {path!r} is not UTF-8") from None
    urls = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            urls.append(_url(line))
        except UsageError:
            raise UsageError(f"{path}:{number}: not an http(s) URL") from None
    if not urls:
        raise UsageError(f"URL list {path!r} names no URL")
    return urls


_CREDENTIAL_MEMBERS: Final = frozenset({"bearer_env", "header_env", "headers", "origins"})


def _env(variable: Any, where: str) -> str:
    if not isinstance(variable, str) or not variable:
        raise UsageError(f"{where}: an environment variable's name is a non-empty string")
    value = os.environ.get(variable, "")
    if not value:
        raise UsageError(f"{where}: environment variable {variable} is not set or empty")
    if any(c in value for c in "\r\n\0"):
        raise UsageError(f"{where}: environment variable {variable} holds a line break")
    return value


def _entry_headers(entry: dict[str, Any], where: str) -> list[tuple[str, str]]:
    """The headers one ``--credentials`` entry gives, every variable read now."""
    headers: list[tuple[str, str]] = []
    if "bearer_env" in entry:
        headers.append(("Authorization", "Bearer " + _env(entry["bearer_env"], where)))
    for member in ("header_env", "headers"):
        named = entry.get(member, {})
        if not isinstance(named, dict):
            raise UsageError(f"{where}: {member} is an object from header names")
        for name, given in named.items():
            value = _env(given, where) if member == "header_env" else given
            if not isinstance(value, str):
                raise UsageError(f"{where}: a header value is a string")
            try:
                headers.append(parse_header(f"{name}:{value}"))
            except UsageError as exc:
                raise UsageError(f"{where}: {exc}") from None
    return headers


def _read_credentials(path: str) -> dict[tuple[str, str, int], Any]:
    """``--credentials FILE``: origin -> ``Given`` (headers, further origins), every value
    read now (a variable that is not set is a usage error before any agent is
    contacted)."""
    from ..errors import IngressError
    from ..net.urls import origin
    from ..strictjson import loads
    from ..verifier.many import Given

    try:
        document = loads(read_input(path, "credentials file"))
    except IngressError as exc:
        raise UsageError(f"--credentials {path!r} is not strict JSON [{exc.code}]") from None
    if not isinstance(document, dict):
        raise UsageError(f"--credentials {path!r}: a JSON object from origins to credentials")
    found: dict[tuple[str, str, int], Any] = {}
    for key, entry in document.items():
        where = f"--credentials {path!r}, {key!r}"
        origin_key = origin(parse_origin(key, where))
        if origin_key in found:
            raise UsageError(f"{where}: the origin is named twice")
        if not isinstance(entry, dict) or not entry or set(entry) - _CREDENTIAL_MEMBERS:
            raise UsageError(f"{where}: an object of bearer_env, header_env, headers, origins")
        further = entry.get("origins", [])
        if not isinstance(further, list) or not all(isinstance(o, str) for o in further):
            raise UsageError(f"{where}: origins is a list of origins (scheme://host[:port])")
        origins = tuple(dict.fromkeys(parse_origin(o, where) for o in further))
        headers = _entry_headers(entry, where)
        if not headers:
            raise UsageError(f"{where}: no credentials (bearer_env, header_env, headers)")
        names = [n.lower() for n, _ in headers]
        if len(set(names)) != len(names):
            raise UsageError(f"{where}: a header is given twice")
        found[origin_key] = Given(tuple(headers), origins)
    return found


def _warn_unmatched(credentials: dict[tuple[str, str, int], Any], urls: Sequence[str]) -> None:
    """An origin of ``--credentials`` that no agent's URL is on: its credentials go
    nowhere, which is most likely a mistake (an interface origin listed on its own)."""
    from ..verifier.many import origin_of

    used = {origin_of(url) for url in urls}
    for key in credentials:
        if key not in used:
            scheme, host, port = key
            named = f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"
            print(f"a2a-interview: warning: --credentials names {named}, which no agent's URL "
                  "is on: its credentials are sent nowhere (an origin an agent's interfaces "
                  "are on goes in the \"origins\" of that agent's entry)",
                  file=sys.stderr)  # fmt: skip


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    """``text`` (a URL, escaped) in lines of at most ``width``: wrapped, never cut."""
    step = max(20, width - len(indent))
    return [indent + text[i : i + step] for i in range(0, len(text), step)] or [indent]


def _summary(
    urls: Sequence[str],
    documents: Sequence[Any],
    elapsed: float,
    *,
    every: bool = False,
    stored: str | None = None,
    width: int = 100,
) -> str:
    """Counts per outcome, then the agents that were not consistent (every agent with
    ``every``), each with its full URL wrapped to ``width``; then what was stored."""
    from ..report import show

    counts = Counter(str(d["outcome"]) for d in documents)
    lines = ["", f"{'outcome':<16}{'agents':>8}"]
    for outcome in ("consistent", "churn", "non_conformant", "not_offered", "unreachable"):
        lines.append(f"{outcome:<16}{counts.get(outcome, 0):>8}")
    rate = len(documents) / elapsed if elapsed > 0 else 0.0
    lines.append(f"{'total':<16}{len(documents):>8}   in {elapsed:.1f} s ({rate:.1f} agents/s)")
    shown = [
        (url, d) for url, d in zip(urls, documents, strict=True)
        if every or d["outcome"] != "consistent"
    ]  # fmt: skip
    if shown:
        lines += ["", "every agent:" if every else "agents that were not consistent:"]
        for url, document in shown:
            runs = document.get("runs") or [{}]
            checks = sorted({c["check"] for c in runs[-1].get("conflicts", [])})
            why = ", ".join(checks)
            incomplete = document.get("incomplete") or {}
            if incomplete:  # PROFILE §7 transport failures: the cause and the URL that failed
                why = str(incomplete.get("reason"))
                if incomplete.get("cause"):
                    why += f" ({incomplete['cause']})"
            lines.append(f"  {document['outcome']:<16}{show(why, 200)[1:-1]}".rstrip())
            lines += _wrapped(show(url, len(url) * 6 + 2)[1:-1], width, "    ")
            failed = incomplete.get("url")
            if isinstance(failed, str) and failed.rstrip("/") != url.rstrip("/"):
                lines += _wrapped("at " + show(failed, len(failed) * 6 + 2)[1:-1], width, "    ")
    if stored is not None:
        lines += ["", stored]
    return "\n".join(lines) + "\n"


def _store(ledger: Any, lines: Sequence[str]) -> tuple[int, int, int]:
    """Store every record line in one transaction: (new, already stored, refused); each
    refusal named on stderr."""
    from ..ledger import RecordRefused

    new = already = refused = 0
    for result in ledger.put_many([line.encode("utf-8") for line in lines]):
        if isinstance(result, RecordRefused):
            refused += 1
            print(f"a2a-interview: record not stored: {result.reason} [{result.code}]",
                  file=sys.stderr)  # fmt: skip
        elif result[1]:
            new += 1
        else:
            already += 1
    return new, already, refused


def _store_all(ledger: Any, lines: list[str]) -> tuple[str, int]:
    """``--store``: the records stored, and what the summary says of them."""
    with ledger:
        new, already, refused = _store(ledger, lines)
    stored = f"stored {new} record(s)"
    stored += f", {already} already there" if already else ""
    stored += f", {refused} refused" if refused else ""
    return stored, refused


def _verify_many(args: argparse.Namespace) -> int:
    import shutil

    from ..verifier.many import default_workers, verify_many
    from .console import ManyProgress

    urls = _read_urls(args.file)
    workers = args.workers or default_workers()
    credentials = _read_credentials(args.credentials) if args.credentials else {}
    _warn_unmatched(credentials, urls)
    # D-VERIFY-50: one set for many agents pins the cards it has keys for; the others
    # are checked against their own jku.
    options = verify_options(args, jwks=read_jwks(args.jwks), jwks_fallback=True)
    ledger = open_store(args.store) if args.store else None  # a bad store fails first
    documents: list[Any] = [None] * len(urls)
    started = time.monotonic()

    def run(sink: IO[str]) -> None:
        written = 0

        def emit(index: int, line: str, document: Any) -> None:
            # Records are written in the file's order as soon as each is available.
            nonlocal written
            documents[index] = (line, document)
            progress.update(str(document["outcome"]))
            while written < len(urls) and documents[written] is not None:
                sink.write(documents[written][0] + "\n")
                written += 1
            sink.flush()

        with ManyProgress(len(urls), not args.no_progress) as progress:
            verify_many(urls, options, concurrency=args.concurrency, workers=workers,
                        emit=emit, credentials=credentials,
                        per_origin=args.per_origin)  # fmt: skip

    try:
        if args.out:
            with open_atomic(args.out, option="--out") as raw:
                sink = io.TextIOWrapper(raw, encoding="utf-8")
                try:
                    run(sink)
                finally:
                    sink.detach()  # flushed into raw; open_atomic fsyncs and renames it
        else:
            run(sys.stdout)
    except (UsageError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a full disk, a closed pipe, a bug: one line, never a traceback
        return _internal(exc)
    elapsed = time.monotonic() - started
    lines = [line for line, _document in documents]
    documents = [document for _line, document in documents]
    stored, refused = _store_all(ledger, lines) if ledger is not None else (None, 0)
    width = shutil.get_terminal_size((100, 24)).columns
    summary = _summary(urls, documents, elapsed, every=args.all, stored=stored, width=width)
    sys.stderr.write(summary)
    if refused:
        return EXIT_USAGE
    outcomes = {str(d["outcome"]) for d in documents}
    if "non_conformant" in outcomes:
        return EXIT_FAILED
    if "unreachable" in outcomes:
        return EXIT_UNREACHABLE
    return EXIT_OK
