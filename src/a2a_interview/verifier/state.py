"""The options of the procedure and the state of one run: not the run (:mod:`.procedure`).

How the procedure is asked to run, what a run keeps, and how it ends early.

:class:`VerifyOptions` is what the caller asks for; :class:`RunState` is one run's
account, kept while it runs so that a run cut short (the deadline, a transport failure,
a 401) still reports what it saw; :class:`Stop` ends a run early carrying its
``incomplete`` reason, :class:`Abandoned` ends one interface (three failures in a row,
PROFILE §7). The bounds every step keeps are here too: :func:`bounded` (what is left
out is an advisory) and :func:`off_loop` (CPU work off the event loop, so the deadline
holds).
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import anyio
import anyio.to_thread

from ..card import READINGS, Reading
from ..checks import Advisory, Check, Conflict, Declared, run_statuses
from ..net.failures import CAUSES, TransportFailure, without_credentials
from ..net.urls import origin_text
from ..record import (
    CallRecord,
    CardSignature,
    ExtendedCard,
    Incomplete,
    Party,
    ProposalRecord,
    Run,
)
from ..spec import (
    DEFAULT_CHURN_DELAY,
    DEFAULT_DEADLINE,
    DEFAULT_MAX_SKILLS,
    MAX_INTERFACES,
    MAX_REQUESTS,
    SELECTORS_PER_QUESTION,
)
from ..strictjson import JSONObject
from .client import ClientOptions
from .sampling import Asked

__all__ = [
    "Abandoned",
    "RunState",
    "Stop",
    "Variant",
    "VerifyOptions",
    "auth_required",
    "bounded",
    "off_loop",
    "progress",
    "transport_incomplete",
]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class VerifyOptions:
    """How to run the procedure and whom to credit.

    ``party``/``name``/``runner_seed``: who ran it (``runner_seed`` an nkey seed that
    signs the record). ``jwks``: pinned public JWKs (else the card's same-origin
    ``jku`` is fetched); with ``jwks_fallback`` (verify-many: one set for many agents)
    a card none of whose signatures has a key in it is checked against its own ``jku``.
    ``readings``: the card signature readings accepted.
    ``require_signature``: an unsigned card, or one whose key is unavailable, is a
    ``card_signature`` conflict. ``total_timeout``: the deadline, seconds for the whole
    procedure, 429 waits and the re-run included (``None``: unbounded); when it passes
    the run ends ``unreachable`` with reason ``deadline``. ``max_interfaces`` /
    ``max_skills``: at most this many interfaces (never more than 16) are interviewed
    and skill selectors asked, so a hostile card cannot turn one run into an unbounded
    stream of calls (``None``: all; what is left out is an advisory). ``max_requests``:
    the request budget of one run (PROFILE §7; ``None``: none); when it is spent the run
    ends ``unreachable`` with reason ``request_budget``. ``progress``: called with a
    short stage name. ``clock``: gives ``started_at``/``finished_at`` (UTC-aware).
    ``thorough``: every interface and every skill selector is asked (within the bounds
    above); else, the default, each binding is interviewed on one of its interfaces and
    each selector question asked with ``selectors_per_question`` skill ids, drawn from
    ``rng`` (``None``: ``random.SystemRandom``), so a run's request count does not grow
    with the card (D-VERIFY-63; the record's ``runs[i].sampling`` says what was asked).
    """

    party: Party = "third_party"
    name: str = "anonymous"
    runner_seed: str | None = None
    jwks: tuple[JSONObject, ...] | None = None
    jwks_fallback: bool = False
    readings: tuple[Reading, ...] = READINGS
    require_signature: bool = False
    churn_delay: float = DEFAULT_CHURN_DELAY
    client: ClientOptions = field(default_factory=ClientOptions)
    total_timeout: float | None = DEFAULT_DEADLINE
    max_interfaces: int | None = MAX_INTERFACES
    max_skills: int | None = DEFAULT_MAX_SKILLS
    max_requests: int | None = MAX_REQUESTS
    progress: Callable[[str], None] | None = None
    clock: Callable[[], datetime] = _utcnow
    thorough: bool = False
    selectors_per_question: int = SELECTORS_PER_QUESTION
    rng: random.Random | None = None


class Abandoned(Exception):
    """An interface gave three transport failures or non-protocol answers in a row."""

    def __init__(self, failure: TransportFailure | None) -> None:
        super().__init__("abandoned")
        self.failure = failure


class Stop(Exception):
    """Ends a run early; carries why."""

    def __init__(self, incomplete: Incomplete) -> None:
        super().__init__(incomplete.reason)
        self.incomplete = incomplete


def _scheme_names(card: Any) -> tuple[str, ...]:
    schemes = card.get("securitySchemes") if isinstance(card, dict) else None
    return tuple(str(name) for name in schemes) if isinstance(schemes, dict) else ()


def auth_required(
    card: Any, options: ClientOptions, url: str | None = None, *, sent: bool = True
) -> Stop:
    """Why a run ends at a 401/403 from ``url`` (``sent``: whether the user's
    credentials went there). interview §10: admission is the deployment's business,
    never non-conformance. Credentials given but not sent to that origin (an interface
    on another origin than the card) is ``credentials_not_sent``, naming the origin
    (PROFILE §7), never reported as the agent refusing the credentials given."""
    if options.headers and url is not None and not sent:
        named = origin_text(url)
        return Stop(
            Incomplete(
                "credentials_not_sent",
                f"{named} requires authentication and was sent no credentials: they go "
                "to the card's origin and to the origins named for them (verify "
                f'--credentials-origin {named}; verify-many: the "origins" of a '
                "--credentials entry)",
                _scheme_names(card),
                url=without_credentials(url),
            )
        )
    # The detail says what was sent, not which option to pass: verify and verify-many
    # (a credentials file) give credentials differently.
    sent_text = "the credentials given were refused" if options.headers else "none were given"
    return Stop(
        Incomplete(
            "authentication_required",
            f"the agent requires authentication ({sent_text})",
            _scheme_names(card),
        )
    )


@dataclass(frozen=True)
class Variant:
    """The card as served for one ``A2A-Version`` (``None``: none sent), and what this
    profile would answer over it."""

    version: str | None
    card: JSONObject
    digest: str
    declared: Declared


@dataclass
class RunState:
    """One run's account, kept while it runs so a timeout can still report it."""

    card_url: str | None = None
    card: JSONObject | None = None
    card_digest: str | None = None
    signature: CardSignature | None = None
    extended_card: ExtendedCard | None = None  # PROFILE §7: fetched, or why not
    not_offered: bool = False
    # Conflicts judged without asking anything (a card declaring the interview on no
    # interface able to carry it, PROFILE §7): persistent at once, no re-run.
    decided: frozenset[tuple[object, ...]] = frozenset()
    incomplete: Incomplete | None = None
    calls: list[CallRecord] = field(default_factory=list)
    proposals: list[ProposalRecord] = field(default_factory=list)
    conflicts: dict[tuple[object, ...], Conflict] = field(default_factory=dict)
    advisories: list[Advisory] = field(default_factory=list)
    performed: set[Check] = field(default_factory=set)
    failed: set[Check] = field(default_factory=set)
    # agent.keys (PROFILE §8): thumbprints of keys that verified a card signature, nkeys
    # of proposal signers whose signature verified. agent.listed_keys: every JWK and
    # nkey merely seen (informational: listing a key never makes it the agent's).
    signed_keys: list[str] = field(default_factory=list)
    agent_jwks: list[Any] = field(default_factory=list)
    agent_nkeys: list[str] = field(default_factory=list)
    # PROFILE §7 card variants: each version's card fetched once per run ("": none).
    variants: dict[str, Variant] = field(default_factory=dict)
    # The signature of each variant whose bytes differ from the default card's, by
    # version: the record's headline names them beside the default card's (PROFILE §7).
    variant_signatures: dict[str, CardSignature] = field(default_factory=dict)
    documents: dict[str, bytes | None] = field(default_factory=dict)  # proposals by url
    jwks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by jku
    asked: Asked | None = None  # D-VERIFY-63: what was asked of what could have been

    def add(self, conflicts: list[Conflict]) -> None:
        for conflict in conflicts:
            self.conflicts.setdefault(conflict.key, conflict)  # the first sighting wins

    @property
    def complete(self) -> bool:
        return self.incomplete is None and not self.not_offered

    def to_run(self) -> Run:
        conflicts = tuple(self.conflicts.values())
        return Run(
            self.card_digest,
            tuple(self.calls),
            tuple(self.proposals),
            conflicts,
            run_statuses(self.performed, conflicts, self.advisories, self.failed),
            self.incomplete,
            self.asked.to_record() if self.asked is not None else None,
        )


_TRANSPORT_DETAIL: Final[Mapping[str, str]] = {
    "insecure_url": "a URL is neither HTTPS nor HTTP to a loopback host",
    "connect_failed": "the connection failed",
    "timeout": "the agent did not answer in time",
    "too_large": "a response was larger than the size bound",
    "redirect_refused": "a redirect was refused (another origin, too many, or on a POST)",
    # D-VERIFY-4: a rate-limited end says what to change.
    "rate_limited": "the agent kept answering 429 Too Many Requests past what the deadline "
    "allows: ask fewer questions (--max-skills), allow a longer --deadline, or raise the "
    "agent's rate limit (the proxy's and demo serve's --rate-limit)",
    "request_budget": "the run's request budget was spent: raise --max-requests, or ask "
    "fewer questions (--max-skills, --max-interfaces)",
    "unavailable": "a declared document's host answered 502, 503 or 504",
    "bad_encoding": "a body's Content-Encoding was stacked, unknown or corrupt",
    "not_its_binding": "an interface answered, never in its binding (an HTML page at a "
    "JSON-RPC URL, say): not the agent's A2A endpoint",
    "address_refused": "a URL names an address that is not public (see --allow-private)",
    "transport": "the exchange failed",
}


def transport_incomplete(exc: TransportFailure) -> Incomplete:
    """Why a run ended at the transport, naming the URL and the cause (D-CLI-9)."""
    detail = _TRANSPORT_DETAIL.get(exc.code, "failed")
    if exc.cause is not None and exc.code == "connect_failed":
        detail = CAUSES.get(exc.cause, detail)
    return Incomplete(exc.code, detail, url=exc.url, cause=exc.cause)


def bounded(items: list[Any], limit: int | None, reason: str, state: RunState) -> list[Any]:
    """The first ``limit`` items; what is left out is recorded, never silently dropped."""
    if limit is None or len(items) <= limit:
        return items
    state.advisories.append(
        Advisory(
            "coverage",
            reason,
            value=len(items) - limit,
            detail=f"only the first {limit} of {len(items)} were asked",
        )
    )
    return items[:limit]


async def off_loop(
    function: Callable[..., Any], *args: Any, stoppable: bool = False, **kwargs: Any
) -> Any:
    """CPU work (signature checks) in a worker thread, so the event loop keeps the
    deadline (PROFILE §7); abandoned, not awaited, when the run is cancelled. A
    ``stoppable`` function is given ``stop=``, a callable that turns true once the run
    gave up on it, and it stops there (cardsig.verify_card asks before every key and
    check), so no work outlives its run (D-VERIFY-56); the others are bounded by their
    input (a card, a document of bounded size)."""
    stopped = threading.Event()
    if stoppable:
        kwargs["stop"] = stopped.is_set
    call = functools.partial(function, *args, **kwargs)
    try:
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    finally:
        stopped.set()  # done, or abandoned: a thread still at work stops at its next step


def progress(options: VerifyOptions, stage: str) -> None:
    """Tell the caller the stage the run is at (``options.progress``), if it asked."""
    if options.progress is not None:
        options.progress(stage)
