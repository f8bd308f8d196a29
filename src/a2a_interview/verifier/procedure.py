"""The verifier: the procedure of interview §8 with the checks of PROFILE §7 (a driver).

:func:`verify` fetches the card, checks its signature, reads the interview entry,
verifies every terms entry (terms §3), interviews the JSON-RPC and HTTP+JSON interfaces
the card declares (every one with ``thorough``, else one per binding: :mod:`.sampling`,
D-VERIFY-63), runs the diff, and on any conflict re-runs the whole procedure once
after ``churn_delay`` with a fresh card and proposals (interview §7 rule 3). It returns
a :class:`~a2a_interview.record.ResultRecord`. The judging is done by the pure
functions of ``checks``; the procedure only moves bytes and keeps the account. Its
steps are modules of their own: :mod:`.cards` (the card and its variants),
:mod:`.signatures` (the card signature and its keys), :mod:`.proposals` (the terms
entries), :mod:`.questions` (what each interface is asked), :mod:`.calls` (one call),
:mod:`.run` (one run's options, account and bounds). :func:`ask` asks one question once.

Outcomes (PROFILE §7): ``consistent``, ``churn``, ``non_conformant``, ``not_offered``,
``unreachable``. ``verify`` never raises for anything a peer does: transport failures,
a 401/403 (authentication required, naming the card's ``securitySchemes``), a card that
is not JSON, a total timeout, all become an ``unreachable`` record with an
``incomplete`` reason.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import anyio

from .._moved import moved_name
from ..checks import (
    Advisory,
    Check,
    Conflict,
    Interface,
    Outcome,
    Where,
    check_declaration,
    check_interfaces_agree,
    derive_outcome,
    find_interfaces,
    overall_statuses,
)
from ..declarations import interview_entry
from ..errors import InterviewError
from ..jcs import canonicalize
from ..models import Source
from ..net.failures import (
    AddressRefused,
    InsecureURL,
    NotItsBinding,
    TransportFailure,
    without_credentials,
)
from ..net.urls import check_url, origin_text
from ..record import Credentials, Incomplete, RanBy, ResultRecord, agent_key_ids, card_name, rfc3339
from ..spec import FAILURES_IN_A_ROW, MAX_INTERFACES
from .calls import Calls
from .cards import card_variant, fetch_card
from .client import ClientOptions, Interviewer
from .extended import extended_card
from .proposals import verify_terms
from .questions import interview
from .run import (
    Abandoned,
    RunState,
    Stop,
    Variant,
    VerifyOptions,
    bounded,
    progress,
    transport_incomplete,
)
from .sampling import Sampler, in_turn
from .signatures import card_signature

__all__ = [
    "failed_record",
    "verify",
]


def __getattr__(name: str) -> object:  # what 0.6 passed on from here (D-CORE-23)
    return moved_name(__name__, name)


class _Procedure:
    """The steps of one run, over one interviewer session."""

    def __init__(self, session: Interviewer, url: str, options: VerifyOptions) -> None:
        self.session = session
        self.url = url
        self.options = options
        self.calls = Calls(session, options.client)
        # D-VERIFY-63: one draw for the procedure, so the re-run asks what the first did.
        self.sampler = Sampler(
            options.rng, options.selectors_per_question, thorough=options.thorough
        )

    def _progress(self, stage: str) -> None:
        progress(self.options, stage)

    async def run(self, state: RunState) -> None:
        budget = self.options.max_requests
        self.session.budget = None if budget is None else self.session.sent + budget
        self.calls.new_run()
        try:
            await self._steps(state)
        except Stop as stop:
            state.incomplete = stop.incomplete
        except TransportFailure as exc:
            state.incomplete = transport_incomplete(exc)
        except InterviewError as exc:
            # Peer data the core refused in a way no check anticipated: stop, never raise.
            state.incomplete = Incomplete(
                "unusable_input", f"the agent's data could not be used ({exc.code})"
            )
        if state.incomplete is not None and state.card is None:
            state.failed.add(Check.card_fetch)

    async def _steps(self, state: RunState) -> None:
        self._progress("card")
        card, card_digest, served_at = await fetch_card(self.session, self.options, self.url, state)
        state.card, state.card_digest = card, card_digest
        state.performed.add(Check.card_fetch)

        offered = interview_entry(card) is not None
        self._progress("card signature")
        state.signature = await card_signature(
            self.session, self.options, card, served_at, state, judged=offered
        )
        if not offered:
            state.not_offered = True  # absence states nothing (interview §9 rule 2)
            return
        state.performed.add(Check.declaration)
        state.add(check_declaration(card))

        self._progress("terms")
        declared = await verify_terms(self.session, self.options, card, state)
        if declared is None:
            return
        state.variants[""] = Variant(None, card, card_digest, declared)

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
            # PROFILE §7: non_conformant at once, without a re-run: nothing was asked.
            conflict = Conflict(Check.declaration, "no_interface", source=Source("card", ""),
                                detail="the card declares the interview but no JSONRPC or "
                                "HTTP+JSON interface to ask it on (gRPC only)")  # fmt: skip
            state.add([conflict])
            state.decided = frozenset({conflict.key})
            return
        if not usable:
            raise AddressRefused if refused else InsecureURL
        await extended_card(
            self.session, self.options, card, usable, state, request_id=self.calls.next_id()
        )
        limit = min(self.options.max_interfaces or MAX_INTERFACES, MAX_INTERFACES)
        asked = state.asked = self.sampler.new_run()
        if self.sampler.thorough:
            usable = bounded(usable, limit, "interfaces_not_asked", state)
        else:  # D-VERIFY-63: each binding on one interface, the others only in its stead
            bindings = self.sampler.interfaces(usable, asked)
            usable = in_turn(bounded(bindings, limit, "interfaces_not_asked", state))[:limit]

        # Answers are compared across the interfaces that share a card variant; thorough,
        # the first interface of a variant is asked every question twice (determinism), the
        # others once, their bytes compared with the first's (the same check: PROFILE §7,
        # docs/decisions.md D-CLI-8, "Defaults that fit"). Sampled, every interface asks
        # each question once and the sampler's drawn asks twice (D-VERIFY-72).
        answers: dict[tuple[str, str, str | None], tuple[str, bytes]] = {}
        asked_twice: set[str] = set()
        interviewed = 0
        failure: TransportFailure | None = None
        unresolved: dict[str, list[str]] = {}  # host: the members of its interfaces
        for interface in usable:
            if asked.covers(interface):
                # Sampled: its binding was interviewed on another interface. Its card
                # variant is still fetched and checked (PROFILE §7): no question asked.
                await card_variant(self.session, self.options, interface, state)
                continue
            self._progress(f"interface {interface.binding}")
            variant = await card_variant(self.session, self.options, interface, state)
            before = (set(state.performed), dict(state.conflicts), len(state.advisories))
            try:
                got = await interview(
                    self.calls, interface, variant.declared, state,
                    max_skills=self.options.max_skills, twice=variant.digest not in asked_twice,
                    sampler=self.sampler,
                )  # fmt: skip
            except AddressRefused:
                # A name judged at the connection is skipped as a literal is on sight
                # above: only when every interface is refused does the run end so.
                state.advisories.append(_address_refused(interface))
                continue
            except Abandoned as abandoned:
                failure = abandoned.failure or failure
                if abandoned.failure is None and interface.url not in self.calls.answered:
                    # Never an answer of its binding (an HTML page): judged as that page
                    # at the card URL is, unreachable, and no check passed on it.
                    state.performed, state.conflicts = before[0], before[1]
                    del state.advisories[before[2] :]
                    failure = failure or NotItsBinding().at(interface.url)
                    abandoned = Abandoned(failure)
                if abandoned.failure is not None and abandoned.failure.cause == "name":
                    host = urlsplit(interface.url).hostname or ""
                    unresolved.setdefault(host, []).append(interface.member)
                    continue  # said once per host, below
                state.advisories.append(
                    Advisory("interface", "abandoned", source=Source("card", interface.member),
                             value=FAILURES_IN_A_ROW,
                             detail="abandoned for the run: transport failures or answers "
                             "that are not of its binding, in a row")
                )  # fmt: skip
                if abandoned.failure is None:
                    interviewed += 1  # it answered, not in its binding: judged as it did
                    asked.interviewed(interface)
                continue
            interviewed += 1
            asked.interviewed(interface)
            asked_twice.add(variant.digest)
            for (question, skill), body in got.items():
                first = answers.setdefault((variant.digest, question, skill), (interface.url, body))
                if first[0] != interface.url:
                    state.performed.add(Check.determinism)  # a second ask, on another
                    where = Where(interface.url, question, skill)
                    state.add(check_interfaces_agree(first, (interface.url, body), where))
        for host, members in unresolved.items():
            state.advisories.append(
                Advisory("interface", "host_not_resolved",
                         value={"host": host, "interfaces": members},
                         detail="not interviewed: the host name of these interfaces did "
                         "not resolve")
            )  # fmt: skip
        if not interviewed:
            if failure is not None and failure.cause == "name" and unresolved:
                # Said once, plainly: a card naming example URLs served locally, say.
                raise Stop(Incomplete("connect_failed", _UNRESOLVED, url=failure.url, cause="name"))
            if failure is not None:
                raise failure  # every interface failed at the transport: unreachable
            raise AddressRefused


_UNRESOLVED = (
    "the host name the card's interface URLs name did not resolve, so no interface "
    "could be asked (a card with example URLs served locally: its interface URLs must "
    "name where it is served)"
)


def _address_refused(interface: Interface) -> Advisory:
    return Advisory("interface", "address_refused", source=Source("card", interface.member),
                    detail="not interviewed: the address is not public")  # fmt: skip


def _outcome(runs: list[RunState]) -> tuple[Outcome, frozenset[tuple[object, ...]]]:
    first = runs[0]
    if first.incomplete is not None:
        return Outcome.unreachable, frozenset()
    if first.not_offered:
        return Outcome.not_offered, frozenset()
    if not first.conflicts:
        return Outcome.consistent, frozenset()
    if first.decided:
        return Outcome.non_conformant, first.decided  # nothing asked: nothing to re-run
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
    runs: list[RunState] = []
    session = Interviewer(opts.client, credential_origin=url, http=http, transport=transport)
    async with session:
        procedure = _Procedure(session, url, opts)
        timeout = opts.total_timeout if opts.total_timeout is not None else math.inf
        session.deadline = anyio.current_time() + timeout  # 429 waits end within it
        with anyio.move_on_after(timeout) as scope:
            runs.append(RunState())
            await procedure.run(runs[-1])
            if runs[-1].complete and runs[-1].conflicts and not runs[-1].decided:
                procedure._progress("re-run")  # interview §7 rule 3: re-fetch and re-ask
                await anyio.sleep(opts.churn_delay)
                runs.append(RunState())
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
        credentials=_credentials(opts.client),
        agent_name=card_name(last.card),  # peer text, never the agent's identity
        extended_card=last.extended_card,
        variant_signatures=tuple(sorted(last.variant_signatures.items())),
    )
    if opts.runner_seed is not None:
        return record.signed(opts.runner_seed)
    return record


def _credentials(client: ClientOptions) -> Credentials:
    """What the record says of the credentials: their kind, and the further origins
    they were sent to (PROFILE §7), never their values."""
    origins = []
    for named in client.credential_origins if client.headers else ():
        with contextlib.suppress(InsecureURL):
            origins.append(origin_text(named))
    return Credentials.of(client.headers, origins)


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
        credentials=_credentials(opts.client),
    )


# ---------------------------------------------------------------------------------------
# One question, asked once: its own module, its names exported from here as before.
