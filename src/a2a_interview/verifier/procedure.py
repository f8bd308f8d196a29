"""The verifier: the procedure of interview §8 with the checks of PROFILE §7 (a driver).

:func:`verify` fetches the card, checks its signature, reads the interview entry,
verifies every terms entry (terms §3), interviews every JSON-RPC and HTTP+JSON interface
the card declares, runs the diff, and on any conflict re-runs the whole procedure once
after ``churn_delay`` with a fresh card and proposals (interview §7 rule 3). It returns
a :class:`~a2a_interview.record.ResultRecord`. The judging is done by the pure
functions of ``checks``; this module only moves bytes and keeps the account.

On each interface, in order:

1. the inactive probe: ``interview/identity`` without activation;
2. every question asked twice under activation (determinism): the five, then
   ``usage`` and ``terms`` with each declared skill id as selector;
3. the closure probes: ``interview/bogus`` (closure_method) and ``interview/usage``
   with a selector that matches nothing (closure_selector).

Outcomes (PROFILE §7): ``consistent``, ``churn``, ``non_conformant``, ``not_offered``,
``unreachable``. ``verify`` never raises for anything a peer does: transport failures,
a 401/403 (authentication required, naming the card's ``securitySchemes``), a card that
is not JSON, a total timeout, all become an ``unreachable`` record with an
``incomplete`` reason.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote

import anyio
import anyio.to_thread

from .. import nkeys
from ..cardsig import READINGS, Reading, jwks_from_json, verify_card
from ..checks import (
    Advisory,
    Binding,
    Check,
    Conflict,
    Declared,
    Exchange,
    Interface,
    Outcome,
    ResultRead,
    Where,
    check_answer,
    check_card_signature,
    check_closure,
    check_declaration,
    check_determinism,
    check_echo,
    check_inactive,
    check_interfaces_agree,
    check_terms_declared,
    coverage,
    derive_outcome,
    diff_answer,
    find_interfaces,
    is_binding_answer,
    no_match_selector,
    overall_statuses,
    read_result,
    run_statuses,
)
from ..declarations import interview_entry, read_card
from ..errors import DeclarationError, IngressError, InterviewError, KeyFormatError
from ..ijson import JSONObject
from ..jcs import canonicalize, digest, digest_bytes
from ..models import Source
from ..record import (
    CallRecord,
    CardSignature,
    Credentials,
    Incomplete,
    Party,
    ProposalRecord,
    RanBy,
    ResultRecord,
    Run,
    agent_key_ids,
    card_name,
    nkey_jwk,
    proposal_keys,
    proposal_signer,
    rfc3339,
    verified_key_ids,
)
from ..report import render_report
from ..spec import (
    EXTENSIONS_HEADER,
    FAILURES_IN_A_ROW,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    MAX_INTERFACES,
    MAX_KEYS_TRIED,
    MAX_REQUESTS,
    MAX_SIGNATURES_TRIED,
    METHOD_PREFIX,
    QUESTIONS,
    VERSION_HEADER,
)
from ..terms import ProposalVerdict, TermsEntry, read_terms_entries, verify_proposal
from .client import (
    CAUSES,
    AddressRefused,
    BodyTooLarge,
    ClientOptions,
    ConnectFailed,
    DeadlineExceeded,
    EncodingRefused,
    InsecureURL,
    Interviewer,
    Response,
    TimedOut,
    TransportFailure,
    card_url_for,
    check_url,
    origin,
)
from .failures import without_credentials

__all__ = [
    "AskResult",
    "AuthenticationRequired",
    "NotOffered",
    "VerifyOptions",
    "ask",
    "failed_record",
    "render_report",
    "verify",
]

# The undefined method of the closure probe (interview §8 step 4).
CLOSURE_METHOD: Final = "bogus"
A2A_VERSION: Final = "1.0"

_TRANSPORT_DETAIL: Final[Mapping[str, str]] = {
    "insecure_url": "a URL is neither HTTPS nor HTTP to a loopback host",
    "connect_failed": "the connection failed",
    "timeout": "the agent did not answer in time",
    "too_large": "a response was larger than the size bound",
    "redirect_refused": "a redirect was refused (another origin, too many, or on a POST)",
    # issue 12 finding 4: a rate-limited end says what to change.
    "rate_limited": "the agent kept answering 429 Too Many Requests past what the deadline "
    "allows: ask fewer questions (--max-skills), allow a longer --deadline, or raise the "
    "agent's rate limit (the proxy's and demo serve's --rate-limit)",
    "request_budget": "the run's request budget was spent: raise --max-requests, or ask "
    "fewer questions (--max-skills, --max-interfaces)",
    "unavailable": "a declared document's host answered 502, 503 or 504",
    "bad_encoding": "a body's Content-Encoding was stacked, unknown or corrupt",
    "address_refused": "a URL names an address that is not public (see --allow-private)",
    "transport": "the exchange failed",
}
DEFAULT_DEADLINE: Final = 120.0  # seconds for one agent's whole procedure
# Failures that say nothing about the agent's answers but that it did not give one: three
# in a row on an interface abandon it (PROFILE §7).
_STRIKES: Final = (ConnectFailed, TimedOut, BodyTooLarge, EncodingRefused)
_VERSION: Final = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?")


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class VerifyOptions:
    """How to run the procedure and whom to credit.

    ``party``/``name``/``runner_seed``: who ran it (``runner_seed`` an nkey seed that
    signs the record). ``jwks``: pinned public JWKs (else the card's same-origin
    ``jku`` is fetched). ``readings``: the card signature readings accepted.
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
    """

    party: Party = "third_party"
    name: str = "anonymous"
    runner_seed: str | None = None
    jwks: tuple[JSONObject, ...] | None = None
    readings: tuple[Reading, ...] = READINGS
    require_signature: bool = False
    churn_delay: float = 2.0
    client: ClientOptions = field(default_factory=ClientOptions)
    total_timeout: float | None = DEFAULT_DEADLINE
    max_interfaces: int | None = MAX_INTERFACES
    max_skills: int | None = 256
    max_requests: int | None = MAX_REQUESTS
    progress: Callable[[str], None] | None = None
    clock: Callable[[], datetime] = _utcnow


class NotOffered(InterviewError):
    """The card does not declare the interview (absence states nothing: interview §9)."""

    code = "not_offered"


class AuthenticationRequired(InterviewError):
    """The agent answered 401 or 403: it requires credentials (interview §10). Never
    non-conformance. ``schemes`` names the card's ``securitySchemes`` (peer data: kept
    out of the message)."""

    code = "authentication_required"

    def __init__(self, schemes: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.schemes = schemes


class _Abandoned(Exception):
    """An interface gave three transport failures or non-protocol answers in a row."""

    def __init__(self, failure: TransportFailure | None) -> None:
        super().__init__("abandoned")
        self.failure = failure


class _Stop(Exception):
    """Ends a run early; carries why."""

    def __init__(self, incomplete: Incomplete) -> None:
        super().__init__(incomplete.reason)
        self.incomplete = incomplete


def _scheme_names(card: Any) -> tuple[str, ...]:
    schemes = card.get("securitySchemes") if isinstance(card, dict) else None
    return tuple(str(name) for name in schemes) if isinstance(schemes, dict) else ()


def _auth_required(card: Any, options: ClientOptions) -> _Stop:
    # interview §10: admission is the deployment's business; never non-conformance. The
    # detail says what was sent, not which option to pass: verify and verify-many (a
    # credentials file) give credentials differently.
    sent = "the credentials given were refused" if options.headers else "none were given"
    return _Stop(
        Incomplete(
            "authentication_required",
            f"the agent requires authentication ({sent})",
            _scheme_names(card),
        )
    )


@dataclass(frozen=True)
class _Variant:
    """The card as served for one ``A2A-Version`` (``None``: none sent), and what this
    profile would answer over it."""

    version: str | None
    card: JSONObject
    digest: str
    declared: Declared


def _version(interface: Interface) -> str | None:
    """The ``A2A-Version`` sent to ``interface`` and for its card variant (PROFILE §7):
    none for 0.3, else its ``protocolVersion`` as Major.Minor (A2A 1.0 §3.6), ``1.0``
    when it names none that reads as a version."""
    if interface.legacy:
        return None
    match = _VERSION.fullmatch(interface.protocol_version or "")
    return f"{int(match[1])}.{int(match[2])}" if match else A2A_VERSION


@dataclass
class _RunState:
    """One run's account, kept while it runs so a timeout can still report it."""

    card_url: str | None = None
    card: JSONObject | None = None
    card_digest: str | None = None
    signature: CardSignature | None = None
    not_offered: bool = False
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
    variants: dict[str, _Variant] = field(default_factory=dict)
    documents: dict[str, bytes | None] = field(default_factory=dict)  # proposals by url
    jwks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by jku

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
        )


class _Procedure:
    """The steps of one run, over one interviewer session."""

    def __init__(self, session: Interviewer, url: str, options: VerifyOptions) -> None:
        self.session = session
        self.url = url
        self.options = options
        self._ids = 0
        self._strikes: dict[str, int] = {}  # interface url: failures in a row
        self._abandoned: set[str] = set()  # interfaces whose last answer was the third

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _progress(self, stage: str) -> None:
        if self.options.progress is not None:
            self.options.progress(stage)

    async def run(self, state: _RunState) -> None:
        budget = self.options.max_requests
        self.session.budget = None if budget is None else self.session.sent + budget
        self._strikes.clear()
        self._abandoned.clear()
        try:
            await self._steps(state)
        except _Stop as stop:
            state.incomplete = stop.incomplete
        except TransportFailure as exc:
            state.incomplete = _transport_incomplete(exc)
        except InterviewError as exc:
            # Peer data the core refused in a way no check anticipated: stop, never raise.
            state.incomplete = Incomplete(
                "unusable_input", f"the agent's data could not be used ({exc.code})"
            )
        if state.incomplete is not None and state.card is None:
            state.failed.add(Check.card_fetch)

    async def _steps(self, state: _RunState) -> None:
        self._progress("card")
        card_url = card_url_for(self.url)
        state.card_url = card_url
        response = await self.session.get(card_url, (("Accept", "application/json"),))
        state.card_url = response.url
        if response.status in (401, 403):
            raise _auth_required(None, self.options.client)
        if response.status != 200:
            raise _Stop(Incomplete("card_status", "the card URL did not answer 200",
                                   url=without_credentials(response.url)))  # fmt: skip
        try:
            card = await _off_loop(
                read_card, response.body, max_bytes=self.options.client.max_bytes
            )
        except (IngressError, DeclarationError) as exc:
            raise _Stop(
                Incomplete(
                    "card_unreadable", f"the card is not a strict I-JSON object ({exc.code})"
                )
            ) from None
        state.card, state.card_digest = card, await _off_loop(digest, card)
        state.performed.add(Check.card_fetch)

        offered = interview_entry(card) is not None
        self._progress("card signature")
        state.signature = await self._signature(card, response.url, state, judged=offered)
        if not offered:
            state.not_offered = True  # absence states nothing (interview §9 rule 2)
            return
        state.performed.add(Check.declaration)
        state.add(check_declaration(card))

        self._progress("terms")
        declared = await self._terms(card, state)
        if declared is None:
            return
        state.variants[""] = _Variant(None, card, state.card_digest, declared)

        interfaces, skipped = find_interfaces(card)
        state.advisories += skipped
        usable = []
        refused = False
        for interface in interfaces:
            try:
                check_url(interface.url)
                if self.session.refuses(interface.url):
                    refused = True  # never contacted: an open port looks like a closed one
                    state.advisories.append(_address_refused(interface))
                    continue
            except InsecureURL:
                state.advisories.append(
                    Advisory(
                        "interface",
                        "insecure_url",
                        source=Source("card", interface.member),
                        detail="not interviewed: neither HTTPS nor loopback HTTP",
                    )
                )
                continue
            usable.append(interface)
        if not interfaces:
            state.add([
                Conflict(Check.declaration, "no_interface", source=Source("card", ""),
                         detail="the card declares the interview but no JSONRPC or HTTP+JSON "
                         "interface to ask it on")
            ])  # fmt: skip
            return
        if not usable:
            raise AddressRefused if refused else InsecureURL
        limit = min(self.options.max_interfaces or MAX_INTERFACES, MAX_INTERFACES)
        usable = _bounded(usable, limit, "interfaces_not_asked", state)

        # Answers are compared across the interfaces that share a card variant; the
        # first interface of a variant is asked every question twice (determinism), the
        # others once, their bytes compared with the first's (the same check: PROFILE §7,
        # docs/decisions.md D-CLI-8, "Defaults that fit").
        answers: dict[tuple[str, str, str | None], tuple[str, bytes]] = {}
        asked_twice: set[str] = set()
        interviewed = 0
        failure: TransportFailure | None = None
        for interface in usable:
            self._progress(f"interface {interface.binding}")
            variant = await self._variant(interface, state)
            try:
                got = await self._interview(
                    interface, variant.declared, state, twice=variant.digest not in asked_twice
                )
            except AddressRefused:
                # A name judged at the connection is skipped as a literal is on sight
                # above: only when every interface is refused does the run end so.
                state.advisories.append(_address_refused(interface))
                continue
            except _Abandoned as abandoned:
                failure = abandoned.failure or failure
                state.advisories.append(
                    Advisory("interface", "abandoned", source=Source("card", interface.member),
                             value=FAILURES_IN_A_ROW,
                             detail="abandoned for the run: transport failures or answers "
                             "that are not of its binding, in a row")
                )  # fmt: skip
                if abandoned.failure is None:
                    interviewed += 1  # it answered, not in its binding: judged as it did
                continue
            interviewed += 1
            asked_twice.add(variant.digest)
            for (question, skill), body in got.items():
                first = answers.setdefault((variant.digest, question, skill), (interface.url, body))
                if first[0] != interface.url:
                    where = Where(interface.url, question, skill)
                    state.add(check_interfaces_agree(first, (interface.url, body), where))
        if not interviewed:
            if failure is not None:
                raise failure  # every interface failed at the transport: unreachable
            raise AddressRefused

    async def _variant(self, interface: Interface, state: _RunState) -> _Variant:
        """The card variant ``interface`` is judged against (PROFILE §7): the card as
        served under the interface's ``A2A-Version``, fetched once per run; the default
        card for 0.3, and when the variant cannot be read (an advisory)."""
        version = _version(interface)
        default = state.variants[""]
        if version is None:
            return default
        if version in state.variants:
            return state.variants[version]
        self._progress(f"card {version}")
        assert state.card_url is not None
        headers = (("Accept", "application/json"), (VERSION_HEADER, version))
        response = await self.session.get(state.card_url, headers)
        if response.status in (401, 403):
            raise _auth_required(default.card, self.options.client)
        card: JSONObject | None = None
        if response.status == 200:
            try:
                card = await _off_loop(
                    read_card, response.body, max_bytes=self.options.client.max_bytes
                )
            except (IngressError, DeclarationError):
                card = None
        if card is None:
            state.advisories.append(
                Advisory("card_variants", "variant_unreadable", value=version,
                         detail="the card asked for with this A2A-Version did not answer 200 "
                         "with a strict I-JSON object; its interfaces were judged against "
                         "the default card")
            )  # fmt: skip
            state.variants[version] = default
            return default
        card_digest = await _off_loop(digest, card)
        if card_digest == default.digest:
            state.variants[version] = default
            return default
        await self._signature(card, response.url, state)
        declared = await self._terms(card, state, primary=False)
        if declared is None:
            state.variants[version] = default
            return default
        if _without_signatures(card) != _without_signatures(default.card):
            # PROFILE §7: variants that differ in more than their signatures are an
            # advisory, never a conflict.
            state.advisories.append(
                Advisory("card_variants", "variants_differ",
                         value={"version": version, "card_digest": card_digest},
                         detail="the card served under this A2A-Version differs from the "
                         "default card in more than its signatures; the answers on its "
                         "interfaces were diffed against it")
            )  # fmt: skip
        variant = _Variant(version, card, card_digest, declared)
        state.variants[version] = variant
        return variant

    async def _signature(
        self, card: JSONObject, card_url: str, state: _RunState, *, judged: bool = True
    ) -> CardSignature:
        """Check the card's signature (PROFILE §6). Unless ``judged`` (the card does not
        declare the interview), what would be a conflict is kept as an advisory: a
        not_offered result is never shown as a failure (PROFILE §7, interview §9 rule 2)."""
        readings = self.options.readings
        card = _tried(card, state)
        await self._runner_key(card, state)
        if self.options.jwks is not None:
            pinned = _keys_tried(list(self.options.jwks), state)
            report = await _off_loop(verify_card, card, pinned, readings=readings)
            source = "pinned"
            await self._pinned_agent_keys(card, card_url, state)
        else:
            # PROFILE §6.4: the jku, only when HTTPS (or loopback) and on the card's origin.
            wanted = await _jkus(card)
            keys: dict[str, list[dict[str, Any]]] = {}
            for jku in wanted:
                keys[jku] = await self._jwks(jku, card_url, state)
                state.agent_jwks += keys[jku]
            report = await _off_loop(
                verify_card, card, lambda _kid, jku: keys.get(jku, []) if jku else [],
                readings=readings,
            )  # fmt: skip
            source = "jku"
        state.signed_keys += verified_key_ids(report)
        conflicts, advisories = check_card_signature(
            report.status, require=self.options.require_signature, readings=readings
        )
        if not judged:
            advisories += [Advisory(c.check, c.reason, source=c.source, detail=c.detail)
                           for c in conflicts]  # fmt: skip
            conflicts = []
        state.performed.add(Check.card_signature)
        state.add(conflicts)
        state.advisories += advisories
        verified = report.status == "verified"
        # The report's signature is the one covering the most (cardsig.verify_card).
        uncovered = min(
            (c.uncovered for c in report.checks if c.status == "verified"), key=len, default=()
        )
        if uncovered:
            # PROFILE §6.3: verified only with a2a-sdk's 0.3 members removed, so the
            # signature does not cover them (the 0.3 url among them).
            state.advisories.append(
                Advisory("card_signature", "uncovered_members", value=list(uncovered),
                         detail="the signature does not cover these served members")
            )  # fmt: skip
        for quirk in report.quirks:
            # PROFILE §6.6: a tolerated header quirk is an advisory, never a silent pass.
            state.advisories.append(
                Advisory("card_signature", quirk,
                         detail="a protected header member is null; read as absent")
            )  # fmt: skip
        return CardSignature(
            str(report.status),
            report.reading,
            tuple(report.readings),
            report.kid,
            report.thumbprint,
            ("pinned" if source == "pinned" else "jku") if verified else None,
        )

    async def _runner_key(self, card: JSONObject, state: _RunState) -> None:
        """PROFILE §8, issue 8 finding 5: a runner key that signed this card is an agent
        key, whether or not the card's own key could be obtained (no jku, a jku refused
        or down, an unrelated pinned JWKS). Tried under every reading."""
        if self.options.runner_seed is None:
            return
        runner = nkey_jwk(nkeys.public_of(nkeys.private_key(self.options.runner_seed)))
        state.signed_keys += verified_key_ids(await _off_loop(verify_card, card, [runner]))

    async def _pinned_agent_keys(self, card: JSONObject, card_url: str, state: _RunState) -> None:
        """PROFILE §8 ``agent.keys`` with a pinned JWKS: its keys, and those of the card's
        own ``jku`` JWKS (fetched quietly, same rules: it verifies nothing here)."""
        state.agent_jwks += self.options.jwks or ()
        for jku in await _jkus(card):
            found = await self._jwks(jku, card_url, state, quiet=True)
            state.agent_jwks += found
            state.signed_keys += verified_key_ids(await _off_loop(verify_card, card, found))

    async def _jwks(
        self, jku: str, card_url: str, state: _RunState, *, quiet: bool = False
    ) -> list[dict[str, Any]]:
        """The JWKS at a card's ``jku`` (PROFILE §6.4). ``quiet``: fetched for
        ``agent.keys`` only (a JWKS was pinned): no advisory, and a failure is no key."""
        try:
            check_url(jku)
            allowed = origin(jku) == origin(card_url)
        except InsecureURL:
            allowed = False
        if quiet and not allowed:
            return []
        if not allowed:
            state.advisories.append(
                Advisory("card_signature", "jku_refused",
                         detail="the jku is not HTTPS (or loopback) on the card's origin")
            )  # fmt: skip
            return []
        # A key kept away by 429s or an outage is only an advisory, unless a signature is
        # required: then the run cannot decide, and ends unreachable.
        verifying = self.options.require_signature and not quiet
        if jku in state.jwks:  # fetched once per run, whichever variant names it
            return state.jwks[jku]
        body = await self.session.fetch_document(jku, verifying=verifying)
        try:
            keys = jwks_from_json(body) if body is not None else []
        except KeyFormatError:
            keys = []
        state.jwks[jku] = _keys_tried(keys, state)
        return state.jwks[jku]

    async def _terms(
        self, card: JSONObject, state: _RunState, *, primary: bool = True
    ) -> Declared | None:
        """Each terms entry verified (terms §3), each proposal fetched once per run.
        Unless ``primary`` (a card variant), nothing is recorded twice."""
        fetched = state.documents
        pairs: list[tuple[TermsEntry, ProposalVerdict]] = []
        for entry in read_terms_entries(card):
            body = None
            if entry.url is not None:
                if entry.url not in fetched:
                    # PROFILE §7: a 429 beyond the wait budget, or a host that cannot be
                    # reached now, ends the run (unreachable); as fetch_failed it would
                    # count against the agent.
                    fetched[entry.url] = await self.session.fetch_document(
                        entry.url, verifying=True
                    )
                body = fetched[entry.url]
            verdict = verify_proposal(entry.digest, body, max_bytes=self.options.client.max_bytes)
            pairs.append((entry, verdict))
            if not primary:
                continue
            state.agent_nkeys += proposal_keys(body, self.options.client.max_bytes)
            signer = verdict.signer or proposal_signer(body, self.options.client.max_bytes)
            if signer is not None:
                state.signed_keys.append(signer)
            state.proposals.append(
                ProposalRecord(entry.url, entry.digest, verdict.result, verdict.signer)
            )
            if not verdict.ok:
                # terms §3: a failing entry states no terms; a signal worth surfacing.
                state.advisories.append(
                    Advisory("terms", verdict.result, source=Source("card", entry.member),
                             detail="the committed proposal failed verification")
                )  # fmt: skip
        try:
            # The projections of a card near 1 MiB take a second: off the loop (PROFILE §7).
            declared: Declared = await _off_loop(Declared.from_verdicts, card, pairs)
            return declared
        except DeclarationError:
            state.add([
                Conflict(Check.declaration, "card_unusable", source=Source("card", "/skills"),
                         detail="the card's skills are not objects with string ids")
            ])  # fmt: skip
            return None

    async def _call(
        self,
        state: _RunState,
        interface: Interface,
        question: str,
        skill: str | None,
        *,
        activated: bool = True,
        request_id: int | None = None,
        same_as: tuple[Exchange, ResultRead] | None = None,
    ) -> tuple[Exchange, ResultRead]:
        """One call, recorded. With ``same_as`` (an earlier call with the same id), a
        response with the same status and body reuses that call's reading."""
        if interface.url in self._abandoned:
            raise _Abandoned(None)  # the third answer not of its binding was judged
        method = METHOD_PREFIX + question
        params: JSONObject | None = {"skill": skill} if skill is not None else None
        if not activated and interface.binding is Binding.JSONRPC:
            params = {}  # PROFILE §7: the inactive probe is a well-formed call, "params": {}
        headers = [("Accept", "application/json")]
        version = _version(interface)
        if version is not None:  # none for 0.3: an empty version means 0.3
            headers.append((VERSION_HEADER, version))
        if activated:
            headers.append((EXTENSIONS_HEADER, INTERVIEW_URI))
            if interface.legacy:
                headers.append((LEGACY_EXTENSIONS_HEADER, INTERVIEW_URI))
        response: Response
        if interface.binding is Binding.JSONRPC:
            if request_id is None:
                request_id = self.next_id()
            envelope: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                envelope["params"] = params
            headers.append(("Content-Type", "application/json"))
            body: bytes | None = canonicalize(envelope)
            target = interface.url
        else:
            # PROFILE §3b: GET {url}/interview/{question}[?skill=...]
            target = interface.url.rstrip("/") + "/interview/" + quote(question, safe="")
            if skill is not None:
                target += "?skill=" + quote(skill, safe="")
            body = None
        response = await self._send(interface, target, body, headers)
        state.calls.append(
            CallRecord(interface.url, str(interface.binding), method, params, activated,
                       response.status, digest_bytes(response.body))
        )  # fmt: skip
        if response.status in (401, 403):
            raise _auth_required(state.card, self.options.client)
        if response.status in (502, 503, 504):
            raise _Stop(Incomplete("agent_unavailable", "the agent answered 502, 503 or 504",
                                   url=without_credentials(target)))  # fmt: skip
        exchange = Exchange(response.status, response.headers, response.body)
        if same_as is not None and (same_as[0].status, same_as[0].body) == (
            exchange.status,
            exchange.body,
        ):
            read = same_as[1]
        else:
            read = read_result(exchange, interface.binding, request_id)
        # PROFILE §7: answers that are not of the interface's binding, three in a row,
        # abandon it (the REST inactive probe's expected answer is the host's own 404).
        expected_404 = not activated and interface.binding is Binding.HTTP_JSON
        if expected_404 or is_binding_answer(exchange, interface.binding, read):
            self._strikes[interface.url] = 0
        elif self._strike(interface):
            self._abandoned.add(interface.url)  # after this answer is judged
        return exchange, read

    def _strike(self, interface: Interface) -> bool:
        """Count a failure; whether it is the third in a row on ``interface``."""
        strikes = self._strikes.get(interface.url, 0) + 1
        self._strikes[interface.url] = strikes
        return strikes >= FAILURES_IN_A_ROW

    async def _send(
        self,
        interface: Interface,
        url: str,
        body: bytes | None,
        headers: list[tuple[str, str]],
    ) -> Response:
        """One exchange with an interface; a transport failure is tried again until it
        is the third in a row on that interface, which abandons it (PROFILE §7)."""
        while True:
            try:
                if body is None:
                    return await self.session.get(url, headers)
                return await self.session.post(url, body, headers)
            except _STRIKES as exc:
                if self._strike(interface):
                    raise _Abandoned(exc) from None

    async def _interview(
        self, interface: Interface, declared: Declared, state: _RunState, *, twice: bool = True
    ) -> dict[tuple[str, str | None], bytes]:
        """Interview one interface; returns each question's answer bytes for the
        cross-interface comparison. Unless ``twice``, each question is asked once: its
        determinism is then the agreement with the interface asked twice."""
        url = interface.url
        exchange, _ = await self._call(state, interface, "identity", None, activated=False)
        state.performed.add(Check.inactive_probe)
        conflicts, advisories = check_inactive(exchange, interface.binding, Where(url, "identity"))
        state.add(conflicts)
        state.advisories += advisories

        skills = list(dict.fromkeys(declared.interview.skill_ids))
        skills = _bounded(skills, self.options.max_skills, "selectors_not_asked", state)
        asks: list[tuple[str, str | None]] = [(q, None) for q in QUESTIONS]
        asks += [(q, s) for s in skills for q in ("usage", "terms")]
        answers: dict[tuple[str, str | None], bytes] = {}
        for question, skill in asks:
            where = Where(url, question, skill)
            # Both asks carry the same JSON-RPC id, so identical answers are identical
            # bodies and the second needs no reading of its own.
            request_id = self.next_id()
            first_exchange, first = await self._call(
                state, interface, question, skill, request_id=request_id
            )
            exchanges = [first_exchange]
            if twice:
                second_exchange, second = await self._call(
                    state, interface, question, skill, request_id=request_id,
                    same_as=(first_exchange, first),
                )  # fmt: skip
                exchanges.append(second_exchange)
            state.performed.update((Check.activation_echo, Check.answer_shape, Check.determinism))
            for exchange in exchanges:
                state.add(check_echo(exchange, Where(url), legacy=interface.legacy))
            answer, shape = check_answer(first, where)
            state.add(shape)
            if twice:
                state.add(check_determinism(first, second, where))
            if first.canonical is not None:
                answers[question, skill] = first.canonical
            if answer is None:
                continue
            state.performed.update((Check.projection, Check.coverage))
            state.add(diff_answer(answer, declared, where))
            if question == "terms":
                state.performed.add(Check.terms_declared)
                terms = check_terms_declared(answer, declared, where)
                state.add(terms)
                if terms:
                    continue  # the coverage of a hidden or fabricated answer is noise
            state.advisories += coverage(answer, declared, where)

        refusal = declared.interview.refusal
        exchange, read = await self._call(state, interface, CLOSURE_METHOD, None)
        state.performed.add(Check.closure_method)
        state.add(check_echo(exchange, Where(url), legacy=interface.legacy))
        state.add(check_closure(read, refusal, Check.closure_method, Where(url)))

        # Every declared id, not only those asked: a skill past max_skills is still one.
        selector = no_match_selector(declared.interview.skill_ids)
        exchange, read = await self._call(state, interface, "usage", selector)
        state.performed.add(Check.closure_selector)
        state.add(check_echo(exchange, Where(url), legacy=interface.legacy))
        where = Where(url, "usage", selector)
        state.add(check_closure(read, refusal, Check.closure_selector, where))
        return answers


def _transport_incomplete(exc: TransportFailure) -> Incomplete:
    """Why a run ended at the transport, naming the URL and the cause (issue 12 item 7)."""
    detail = _TRANSPORT_DETAIL.get(exc.code, "failed")
    if exc.cause is not None and exc.code == "connect_failed":
        detail = CAUSES.get(exc.cause, detail)
    return Incomplete(exc.code, detail, url=exc.url, cause=exc.cause)


def _without_signatures(card: JSONObject) -> bytes:
    return canonicalize({k: v for k, v in card.items() if k != "signatures"})


def _tried(card: JSONObject, state: _RunState) -> JSONObject:
    """``card`` with at most :data:`MAX_SIGNATURES_TRIED` signatures (PROFILE §7): each
    signature covers the card without ``signatures``, so the first ones verify alone."""
    items = card.get("signatures")
    if not isinstance(items, list) or len(items) <= MAX_SIGNATURES_TRIED:
        return card
    state.advisories.append(
        Advisory("card_signature", "signatures_not_tried",
                 value=len(items) - MAX_SIGNATURES_TRIED,
                 detail=f"only the first {MAX_SIGNATURES_TRIED} signatures were tried")
    )  # fmt: skip
    return {**card, "signatures": items[:MAX_SIGNATURES_TRIED]}


def _keys_tried(keys: list[Any], state: _RunState) -> list[Any]:
    """The first :data:`MAX_KEYS_TRIED` keys of a JWK Set (PROFILE §7)."""
    if len(keys) <= MAX_KEYS_TRIED:
        return keys
    state.advisories.append(
        Advisory("card_signature", "keys_not_tried", value=len(keys) - MAX_KEYS_TRIED,
                 detail=f"only the first {MAX_KEYS_TRIED} keys of a JWK Set were tried")
    )  # fmt: skip
    return keys[:MAX_KEYS_TRIED]


async def _off_loop(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """CPU work (signature checks) in a worker thread, so the event loop keeps the
    deadline (PROFILE §7); abandoned, not awaited, when the run is cancelled (the work
    itself is bounded by the signatures and keys tried)."""
    call = functools.partial(function, *args, **kwargs)
    return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)


async def _jkus(card: JSONObject) -> list[str]:
    """Every ``jku`` the card's signatures name, once each, in order."""
    wanted: list[str] = []

    def record(_kid: str | None, jku: str | None) -> list[dict[str, Any]]:
        if jku is not None:
            wanted.append(jku)
        return []

    await _off_loop(verify_card, card, record)
    return list(dict.fromkeys(wanted))


def _address_refused(interface: Interface) -> Advisory:
    return Advisory("interface", "address_refused", source=Source("card", interface.member),
                    detail="not interviewed: the address is not public")  # fmt: skip


def _bounded(items: list[Any], limit: int | None, reason: str, state: _RunState) -> list[Any]:
    """The first ``limit`` items; what is left out is recorded, never silently dropped."""
    if limit is None or len(items) <= limit:
        return items
    state.advisories.append(
        Advisory("coverage", reason, value=len(items) - limit,
                 detail=f"only the first {limit} of {len(items)} were asked")
    )  # fmt: skip
    return items[:limit]


def _outcome(runs: list[_RunState]) -> tuple[Outcome, frozenset[tuple[object, ...]]]:
    first = runs[0]
    if first.incomplete is not None:
        return Outcome.unreachable, frozenset()
    if first.not_offered:
        return Outcome.not_offered, frozenset()
    if not first.conflicts:
        return Outcome.consistent, frozenset()
    if len(runs) < 2 or runs[1].incomplete is not None:
        return Outcome.unreachable, frozenset()  # the re-run could not decide
    if runs[1].not_offered:
        return Outcome.not_offered, frozenset()
    return derive_outcome(list(first.conflicts.values()), list(runs[1].conflicts.values()))


def _dedupe(advisories: list[Advisory]) -> tuple[Advisory, ...]:
    seen: dict[bytes, Advisory] = {}
    for advisory in advisories:
        seen.setdefault(canonicalize(advisory.to_json()), advisory)
    return tuple(seen.values())


async def verify(
    url: str,
    options: VerifyOptions | None = None,
    *,
    http: Any = None,
    transport: Any = None,
    **overrides: Any,
) -> ResultRecord:
    """Run the procedure against the agent at ``url`` (its base URL or card URL).

    ``options`` fields may also be given as keywords (``verify(url, churn_delay=0)``).
    ``http`` is a shared ``httpx.AsyncClient``; ``transport`` an ``httpx`` transport
    for a client made here.

    Returns a :class:`ResultRecord` whose ``outcome`` is:

    - ``consistent``: no conflict;
    - ``churn``: conflicts in the first run, none of them again in the re-run;
    - ``non_conformant``: a conflict with the same identity in both runs;
    - ``not_offered``: the card does not declare the interview;
    - ``unreachable``: a run could not complete (``incomplete.reason``: a transport
      code such as ``connect_failed``, ``timeout``, ``too_large``, ``insecure_url``,
      ``redirect_refused``, ``rate_limited``, ``unavailable``, ``bad_encoding``,
      ``address_refused``; or ``card_status``, ``card_unreadable``,
      ``authentication_required``, ``agent_unavailable``, ``deadline``,
      ``unusable_input``).

    Never raises for anything the agent does. Raises ``KeyFormatError`` for a
    malformed ``runner_seed`` (the caller's input), checked before any request.
    """
    opts = replace(options or VerifyOptions(), **overrides)
    if opts.runner_seed is not None:
        from ..nkeys import private_key

        private_key(opts.runner_seed)  # the caller's mistake surfaces before any I/O
    started = opts.clock()
    runs: list[_RunState] = []
    session = Interviewer(opts.client, credential_origin=url, http=http, transport=transport)
    async with session:
        procedure = _Procedure(session, url, opts)
        timeout = opts.total_timeout if opts.total_timeout is not None else math.inf
        session.deadline = anyio.current_time() + timeout  # 429 waits end within it
        with anyio.move_on_after(timeout) as scope:
            runs.append(_RunState())
            await procedure.run(runs[-1])
            if runs[-1].complete and runs[-1].conflicts:
                procedure._progress("re-run")  # interview §7 rule 3: re-fetch and re-ask
                await anyio.sleep(opts.churn_delay)
                runs.append(_RunState())
                await procedure.run(runs[-1])
        if scope.cancelled_caught:
            runs[-1].incomplete = Incomplete(
                "deadline", "the procedure did not finish within the deadline"
            )
    procedure._progress("done")

    outcome, persistent = _outcome(runs)
    done = [r.to_run() for r in runs]
    persistent_checks = {c.check for c in done[-1].conflicts if c.key in persistent}
    read = [r for r in runs if r.card is not None]
    last = read[-1] if read else runs[-1]
    advisories = [a for r in runs for a in r.advisories]
    advisories += [
        Advisory("transport", "loopback_http", value=o,
                 detail="plain HTTP was used, tolerated for loopback only")
        for o in sorted(session.loopback_origins)
    ]  # fmt: skip
    advisories += [
        Advisory("transport", "address_refused", value=o,
                 detail="not contacted: the address is not public")
        for o in sorted(session.refused_origins)
    ]  # fmt: skip
    if session.rate_limited:
        advisories.append(
            Advisory("transport", "rate_limited",
                     value={"waits": session.rate_limited, "seconds": round(session.waited, 3)},
                     detail="429 Too Many Requests was waited out; never counted")
        )  # fmt: skip
    record = ResultRecord(
        url=without_credentials(url),
        card_url=last.card_url and without_credentials(last.card_url),
        card_digest=last.card_digest,
        card_signature=last.signature,
        ran_by=RanBy(opts.party, opts.name),
        started_at=rfc3339(started),
        finished_at=rfc3339(opts.clock()),
        runs=tuple(done),
        advisories=_dedupe(advisories),
        outcome=outcome,
        checks=overall_statuses([r.checks for r in done], persistent_checks),
        incomplete=runs[-1].incomplete if outcome is Outcome.unreachable else None,
        agent_keys=tuple(sorted({k for r in runs for k in r.signed_keys})),
        listed_keys=agent_key_ids(
            [k for r in runs for k in r.agent_jwks], [k for r in runs for k in r.agent_nkeys]
        ),
        credentials=Credentials.of(opts.client.headers),
        agent_name=card_name(last.card),  # peer text, never the agent's identity
    )
    if opts.runner_seed is not None:
        return record.signed(opts.runner_seed)
    return record


def failed_record(
    url: str,
    options: VerifyOptions | None = None,
    reason: str = "internal_error",
    detail: str = "the verifier failed on this agent",
) -> ResultRecord:
    """An ``unreachable`` record for an agent the procedure could not run on at all
    (``verify-many`` writes one rather than lose the line). Unsigned."""
    opts = options or VerifyOptions()
    now = rfc3339(opts.clock())
    return ResultRecord(
        url=without_credentials(url),
        card_url=None,
        card_digest=None,
        card_signature=None,
        ran_by=RanBy(opts.party, opts.name),
        started_at=now,
        finished_at=now,
        runs=(),
        advisories=(),
        outcome=Outcome.unreachable,
        checks=overall_statuses([], ()),
        incomplete=Incomplete(reason, detail),
        credentials=Credentials.of(opts.client.headers),
    )


# ---------------------------------------------------------------------------------------
# One call


@dataclass(frozen=True, slots=True)
class AskResult:
    """One activated call: the interface asked, the raw exchange and its reading."""

    interface: Interface
    exchange: Exchange
    read: ResultRead


async def ask(
    url: str,
    question: str,
    skill: str | None = None,
    *,
    options: ClientOptions | None = None,
    transport: Any = None,
    deadline: float | None = DEFAULT_DEADLINE,
    http: Any = None,
) -> AskResult:
    """Fetch the card at ``url`` and ask ``question`` once, activated, on the first
    JSON-RPC interface (else the first HTTP+JSON one), all within ``deadline`` seconds
    (``None``: unbounded).

    ``http``: an ``httpx.AsyncClient`` to share (the one an ``a2a-sdk`` client was made
    with, say); it is not closed here, redirects stay the interviewer's (same origin,
    GET only), and ``options.headers`` still go to the origin of ``url`` only, while the
    client's own headers go wherever it does.

    Raises ``TransportFailure`` (its subclasses; also for a 502/503/504, and when the
    card URL does not answer 200; ``DeadlineExceeded`` when the deadline passes, and
    ``AddressRefused`` for a card or interface on an address that is not public);
    ``AuthenticationRequired`` for a 401/403;
    ``NotOffered`` when the card does not declare the interview or names no interface
    to ask on; ``IngressError`` or ``DeclarationError`` for a card that is not a strict
    I-JSON object.
    """
    seconds = math.inf if deadline is None else deadline
    with anyio.move_on_after(seconds) as scope:
        return await _ask(
            url, question, skill, options, (transport, http),
            deadline=anyio.current_time() + seconds,
        )  # fmt: skip
    assert scope.cancelled_caught
    raise DeadlineExceeded


async def _ask(
    url: str,
    question: str,
    skill: str | None,
    options: ClientOptions | None,
    through: tuple[Any, Any],
    *,
    deadline: float,
) -> AskResult:
    transport, http = through
    async with Interviewer(
        options, credential_origin=url, transport=transport, http=http
    ) as session:
        session.deadline = deadline  # a 429 wait past it ends the ask rate_limited now
        response = await session.get(card_url_for(url), (("Accept", "application/json"),))
        if response.status in (401, 403):
            raise AuthenticationRequired
        if response.status != 200:  # as verify's card_status: unreachable, not absence
            raise TransportFailure("the card URL did not answer 200")
        card = read_card(response.body)
        if interview_entry(card) is None:
            raise NotOffered("the card does not declare the interview")
        interfaces, _ = find_interfaces(card)
        interfaces.sort(key=lambda i: i.binding is not Binding.JSONRPC)
        if not interfaces:
            raise NotOffered("the card names no JSONRPC or HTTP+JSON interface")
        procedure = _Procedure(session, url, VerifyOptions(client=session.options))
        state = _RunState(card=card)
        try:
            exchange, read = await procedure._call(state, interfaces[0], question, skill)
        except _Abandoned as abandoned:  # the third transport failure in a row
            raise abandoned.failure or TransportFailure() from None
        except _Stop as stop:
            if stop.incomplete.reason == "authentication_required":
                raise AuthenticationRequired(stop.incomplete.schemes) from None
            raise TransportFailure(stop.incomplete.detail) from None
        return AskResult(interfaces[0], exchange, read)
