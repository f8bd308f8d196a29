"""The options more than one command takes, and what turns them into values: one module
the command modules all import (``verify``, ``ask``, ``verify-many``, ``ledger``,
``ledger serve``, ``worker``), so the command line has no import loop.

- the ledger: ``--store`` (``add_store_option``, ``open_store``, ``keep``) and
  ``--runners`` (``add_runners_option``, ``load_runners``);
- the verifier: who ran it (``add_runner``, ``runner_seed``), the procedure
  (``add_procedure``), the network (``add_network``), credentials (``add_credentials``,
  ``credential_headers``, ``credential_origins``, ``parse_header``, ``parse_origin``),
  card keys (``read_jwks``), and ``verify_options``, the ``VerifyOptions`` they make
  together.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..card import READINGS
from ..spec import (
    DEFAULT_CHURN_DELAY,
    DEFAULT_DEADLINE,
    DEFAULT_MAX_SKILLS,
    DEFAULT_TIMEOUT,
    MAX_INTERFACES,
    MAX_REQUESTS,
    SELECTORS_PER_QUESTION,
)
from .files import read_input
from .usage import UsageError

if TYPE_CHECKING:
    from ..ledger import Ledger
    from ..ledger.runners import Runners

STORE_ENV: Final = "A2A_INTERVIEW_STORE"

_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# Headers the verifier sets itself: a user value would change what is being tested.
_RESERVED: Final = frozenset(
    {"a2a-extensions", "x-a2a-extensions", "a2a-version", "content-type", "content-length",
     "host", "transfer-encoding", "accept-encoding"}
)  # fmt: skip


# ---------------------------------------------------------------------------------------
# The ledger's options


def default_store() -> str:
    from ..ledger import DEFAULT_STORE

    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def add_store_option(parser: argparse.ArgumentParser | Any, *, default: bool = True) -> None:
    """``--store URL`` (``verify`` and ``verify-many`` take it without a default)."""
    help_text = (
        "the ledger: sqlite:///PATH or a file path, or postgresql://USER@HOST/DB "
        f"(default ${STORE_ENV}, else a2a-interview-ledger.db)"
        if default
        else "also keep the record(s) in this ledger (sqlite:///PATH, a file path, "
        "or postgresql://USER@HOST/DB)"
    )
    parser.add_argument("--store", metavar="URL", default=None, help=help_text)


def open_store(url: str | None, *, reading: bool = False) -> Ledger:
    """The ledger at ``url`` (or the default), migrated. Raises ``LedgerError`` (exit 2
    through ``main``) and ``ImportError`` naming the extra. ``reading`` (``list``,
    ``show``, ``export``): with no store given and none configured, a usage error naming
    the default rather than a new empty file (D-STORE-15)."""
    from ..ledger import DEFAULT_STORE, Ledger

    configured = url is not None or os.environ.get(STORE_ENV)
    if reading and not configured and not Path(DEFAULT_STORE).exists():
        raise UsageError(
            f"no store: give --store URL or set ${STORE_ENV} (the default, "
            f"./{DEFAULT_STORE}, does not exist here)"
        )
    return Ledger.open(url if url is not None else default_store())


def keep(ledger: Ledger, records: Sequence[Any]) -> int:
    """Add the records ``verify``/``verify-many`` made; returns how many were refused
    (each named on stderr). Each is the line ``verify-many`` printed (``str`` or
    ``bytes``, stored as it is) or the record's JSON value (stored compact, as
    ``verify-many`` prints it)."""
    from ..ledger import RecordRefused

    refused = 0
    for item in records:
        if isinstance(item, str):
            body = item.encode("utf-8")
        elif isinstance(item, bytes):
            body = item
        else:
            body = json.dumps(item, ensure_ascii=False).encode("utf-8")
        try:
            ledger.add(body)
        except RecordRefused as exc:
            refused += 1
            print(f"a2a-interview: record not stored: {exc.reason} [{exc.code}]",
                  file=sys.stderr)  # fmt: skip
    return refused


def add_runners_option(parser: argparse.ArgumentParser | Any) -> None:
    """``--runners FILE`` (``ledger list/show/serve``): the operator's trusted runner keys."""
    parser.add_argument(
        "--runners", metavar="FILE", default=None,
        help='trusted runner keys with the names you give them: {"runners": [{"key": '
        '"U...", "name": "..."}]}; a result by a key not listed is shown by its key\'s '
        "fingerprint, its self-declared name marked as such (docs/profile.md §8)",
    )  # fmt: skip


def load_runners(path: str | None) -> Runners:
    """The runners list of ``--runners`` (none: an empty list). Raises ``UsageError``."""
    from ..ledger.runners import NO_RUNNERS, BadRunners, read_runners
    from .files import read_input

    if path is None:
        return NO_RUNNERS
    try:
        return read_runners(read_input(path, "runners file"))
    except BadRunners as exc:
        raise UsageError(f"--runners {path!r}: {exc} [{exc.code}]") from None


# ---------------------------------------------------------------------------------------
# The verifier's options


def parse_header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _TOKEN.fullmatch(name):
        raise UsageError("--header takes NAME:VALUE with a valid header name")
    if any(c in value for c in "\r\n\0"):
        raise UsageError("a --header value must not contain line breaks")
    if name.lower() in _RESERVED:
        raise UsageError(f"--header {name} is set by the verifier itself")
    return name, value


def credential_headers(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    headers = [parse_header(h) for h in args.header or ()]
    if args.bearer_env:
        token = os.environ.get(args.bearer_env, "")
        if not token:
            raise UsageError(f"environment variable {args.bearer_env} is not set or empty")
        if any(c in token for c in "\r\n\0"):
            raise UsageError(f"environment variable {args.bearer_env} holds a line break")
        headers.append(("Authorization", f"Bearer {token}"))
    return tuple(headers)


def parse_origin(text: str, where: str) -> str:
    """An origin the user names (``scheme://host[:port]``, http or https, nothing
    after it), returned as ``scheme://host:port``; else a usage error naming ``where``."""
    from urllib.parse import urlsplit

    from ..net.urls import origin_text

    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise UsageError(f"{where}: {text!r} is not an origin (scheme://host[:port])") from None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or "@" in parts.netloc
    ):
        raise UsageError(f"{where}: {text!r} is not an origin (scheme://host[:port])")
    return origin_text(text)


def credential_origins(args: argparse.Namespace) -> tuple[str, ...]:
    """``--credentials-origin ORIGIN`` (repeatable, PROFILE §7): further origins the
    credentials go to, beside the URL's own; only with credentials to send."""
    named = tuple(
        parse_origin(text, "--credentials-origin") for text in args.credentials_origin or ()
    )
    if named and not (args.header or args.bearer_env):
        raise UsageError("--credentials-origin names where credentials go: give them with "
                         "--header or --bearer-env")  # fmt: skip
    return named


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds") from None
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError("between 0 and 3600 seconds")
    return value


def deadline(text: str) -> float | None:
    """Seconds for one agent's whole run, 0 meaning none."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds") from None
    if not 0 <= value <= 86400:
        raise argparse.ArgumentTypeError("between 0 (none) and 86400 seconds")
    return value or None


def add_network(parser: argparse.ArgumentParser, what: str) -> None:
    group = parser.add_argument_group("network")
    group.add_argument(
        "--deadline", type=deadline, default=DEFAULT_DEADLINE, metavar="S",
        help=f"seconds for {what}, waits included; then it ends unreachable "
        "(reason deadline; default %(default)g, 0: none)",
    )  # fmt: skip
    group.add_argument(
        "--allow-private", action="store_true",
        help="also connect to addresses that are not public (10.x, 169.254.x, fd00::/8, "
        "...); loopback is allowed anyway when URL itself is loopback",
    )  # fmt: skip


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not an integer") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError("between 1 and 1024")
    return value


def concurrency(text: str) -> int | None:
    """``--concurrency``: a fixed number, or ``auto`` (``None``): chosen as the run goes
    from what it observes (D-VERIFY-70, D-VERIFY-71)."""
    return None if text == "auto" else positive(text)


def add_runner(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("who ran it (docs/profile.md §8)")
    group.add_argument(
        "--as", dest="party", choices=("self", "platform", "third_party"),
        default="third_party",
        help="the runner's party (default third_party); a self-run result is a claim",
    )  # fmt: skip
    group.add_argument("--name", default="anonymous", help="the runner's name in the record")
    group.add_argument(
        "--runner-key", metavar="SEED",
        help="the runner's nkey seed (SU...), or a file holding it: signs the record",
    )  # fmt: skip


def limit(text: str) -> int | None:
    """A count bound: a whole number, 0 meaning none."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a bound is 0 (none) or more")
    return value or None


def add_timeout(group: argparse._ActionsContainer) -> None:
    """``--timeout``: the time bound of each HTTP exchange, ``ClientOptions``' default."""
    group.add_argument(
        "--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="S",
        help="time bound of each HTTP exchange (default %(default)g)",
    )  # fmt: skip


def add_procedure(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("procedure")
    group.add_argument(
        "--churn-delay", type=seconds, default=DEFAULT_CHURN_DELAY, metavar="S",
        help="seconds before the re-run that follows a conflict (default %(default)g)",
    )  # fmt: skip
    group.add_argument(
        "--require-signature", action="store_true",
        help="an unsigned card, or one whose key is unavailable, is a conflict",
    )  # fmt: skip
    group.add_argument(
        "--reading", choices=READINGS,
        help="accept the card signature under this reading only "
        "(docs/profile.md §6.3; default: any)",
    )  # fmt: skip
    add_timeout(group)
    group.add_argument(
        "--thorough", action="store_true",
        help="ask every skill selector on every interface (the bounds below hold); by "
        "default each binding is asked on one interface drawn at random and each "
        f"selector question with {SELECTORS_PER_QUESTION} skill ids drawn at random, so "
        "a run's calls do not grow with the card (docs/decisions.md D-VERIFY-63)",
    )  # fmt: skip
    group.add_argument(
        "--max-skills", type=limit, default=DEFAULT_MAX_SKILLS, metavar="N",
        help="with --thorough, ask the selectors of at most N skills; the rest is an "
        "advisory (default %(default)s; 0: all)",
    )  # fmt: skip
    group.add_argument(
        "--max-interfaces", type=limit, default=MAX_INTERFACES, metavar="N",
        help=f"interview at most N interfaces, never more than {MAX_INTERFACES} "
        "(docs/profile.md §7); the rest is an advisory (default and 0: %(default)s)",
    )  # fmt: skip
    group.add_argument(
        "--max-requests", type=limit, default=MAX_REQUESTS, metavar="N",
        help="the request budget of one run: past it the run ends unreachable "
        "(reason request_budget; default %(default)s, 0: none)",
    )  # fmt: skip


def add_jwks(parser: argparse.ArgumentParser, otherwise: str) -> None:
    """``--jwks FILE`` (PROFILE §6.4: pinned keys); ``otherwise`` says where keys come
    from without it."""
    keys = parser.add_argument_group("card keys (docs/profile.md §6.4)")
    keys.add_argument("--jwks", metavar="FILE", help=otherwise)


def add_credentials(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "credentials (sent to the URL's own origin and the origins named with "
        "--credentials-origin, nowhere else)"
    )
    group.add_argument(
        "--header", action="append", metavar="NAME:VALUE",
        help="a request header, e.g. 'Authorization: Bearer ...' (repeatable)",
    )  # fmt: skip
    group.add_argument(
        "--bearer-env", metavar="VAR",
        help="send 'Authorization: Bearer $VAR' (the token stays out of your shell history)",
    )  # fmt: skip
    group.add_argument(
        "--credentials-origin", action="append", metavar="ORIGIN",
        help="also send the credentials to ORIGIN (scheme://host[:port]; repeatable): an "
        "agent whose interfaces are on another origin than its card, such as "
        "https://api.example beside https://www.example (docs/profile.md §7)",
    )  # fmt: skip


def runner_seed(value: str | None) -> str | None:
    # PROFILE §9: --runner-key SEED; a file holding it keeps it out of shell history.
    if value is None:
        return None
    from ..errors import KeyFormatError
    from ..nkeys import private_key

    if value.startswith("SU") and not Path(value).is_file():
        seed, named = value, "--runner-key"  # never echo the seed itself
    else:
        seed = read_input(value, "runner key").decode("ascii", "replace").strip()
        named = f"runner key {value!r}"
    try:
        private_key(seed)
    except KeyFormatError:
        raise UsageError(f"{named} is not an nkey seed (SU...)") from None
    return seed


def read_jwks(path: str | None) -> tuple[Any, ...] | None:
    """The keys of ``--jwks FILE`` (PROFILE §6.4: pinned), or ``None``."""
    if not path:
        return None
    from ..card import jwks_from_json
    from ..errors import KeyFormatError

    try:
        return tuple(jwks_from_json(read_input(path, "JWK Set")))
    except KeyFormatError as exc:
        raise UsageError(f"--jwks {path!r}: {exc}") from None


def verify_options(args: argparse.Namespace, **extra: Any) -> Any:
    from ..card import READINGS
    from ..verifier.client import ClientOptions
    from ..verifier.state import VerifyOptions

    headers = credential_headers(args) if hasattr(args, "header") else ()
    origins = credential_origins(args) if hasattr(args, "credentials_origin") else ()
    return VerifyOptions(
        party=args.party,
        name=args.name,
        runner_seed=runner_seed(args.runner_key),
        readings=(args.reading,) if args.reading else READINGS,
        require_signature=args.require_signature,
        churn_delay=args.churn_delay,
        client=ClientOptions(
            timeout=args.timeout,
            headers=headers,
            allow_private=args.allow_private,
            credential_origins=origins,
        ),
        total_timeout=args.deadline,
        max_skills=args.max_skills,
        max_interfaces=args.max_interfaces,
        max_requests=args.max_requests,
        thorough=args.thorough,
        **extra,
    )
