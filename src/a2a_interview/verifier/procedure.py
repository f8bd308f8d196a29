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
entries), :mod:`.choosing` (which interfaces are interviewed), :mod:`.interviewing`
(interviewing each, comparing their answers), :mod:`.questions` (what one interface is
asked), :mod:`.calls` (one call), :mod:`.state` (the options, one run's account and
bounds). :func:`ask` asks one question once.

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
from datetime import datetime
from typing import Any

import anyio

from .._moved import moved_name
from ..checks import (
    Advisory,
    Check,
    Outcome,
    check_declaration,
    derive_outcome,
    overall_statuses,
)
from ..declarations import interview_entry
from ..errors import InterviewError
from ..jcs import canonicalize
from ..net.failures import InsecureURL, TransportFailure, without_credentials
from ..net.urls import origin_text
from ..record import Credentials, Incomplete, RanBy, ResultRecord, agent_key_ids, card_name, rfc3339
from ..strictjson import JSONObject
from .calls import Calls
from .cards import fetch_card
from .choosing import chosen_interfaces, usable_interfaces
from .client import ClientOptions, Interviewer
from .extended import extended_card
from .interviewing import Interviews
from .proposals import verify_terms
from .sampling import Sampler
from .signatures import card_signature
from .state import RunState, Stop, Variant, VerifyOptions, progress, transport_incomplete

__all__ = [
    "failed_record",
    "verify",
]


def __getattr__(name: str) -> object:  # what 0.6 passed on from here (D-CORE-23)
    return moved_name(__name__, name)


class _Procedure:
    """The runs of one procedure, over one interviewer session."""

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
        """One run, its account kept in ``state`` however it ends (never raises for
        anything the agent does)."""
        budget = self.options.max_requests
        self.session.budget = None if budget is None else self.session.sent + budget
        self.calls.new_run()
        try:
            card = await self._read_card(state)
            if card is not None:
                await self._interview_interfaces(card, state)
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

    async def _read_card(self, state: RunState) -> JSONObject | None:
        """The card, its signature, its declaration and its terms entries: the card if
        the run goes on to its interfaces, else ``None`` (not offered, terms unusable)."""
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
            return None
        state.performed.add(Check.declaration)
        state.add(check_declaration(card))

        self._progress("terms")
        declared = await verify_terms(self.session, self.options, card, state)
        if declared is None:
            return None
        state.variants[""] = Variant(None, card, card_digest, declared)
        return card

    async def _interview_interfaces(self, card: JSONObject, state: RunState) -> None:
        """Choose the card's interfaces (:mod:`.choosing`), fetch its extended card, and
        interview each chosen one (:mod:`.interviewing`)."""
        usable = usable_interfaces(self.session, card, state)
        if usable is None:
            return
        await extended_card(
            self.session, self.options, card, usable, state, request_id=self.calls.next_id()
        )
        asked = state.asked = self.sampler.new_run()
        chosen = chosen_interfaces(usable, self.sampler, asked, self.options.max_interfaces, state)
        interviews = Interviews(
            self.session, self.options, self.calls, sampler=self.sampler, asked=asked, state=state
        )
        for interface in chosen:
            await interviews.one(interface)
        interviews.end()


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
    session = Interviewer(opts.client, credential_origin=url, http=http, transport=transport)
    async with session:
        procedure = _Procedure(session, url, opts)
        runs = await _runs(procedure)
    procedure._progress("done")
    record = _record(url, opts, started, runs, session)
    if opts.runner_seed is not None:
        return record.signed(opts.runner_seed)
    return record


async def _runs(procedure: _Procedure) -> list[RunState]:
    """The first run, and the re-run after ``churn_delay`` when it found a conflict it
    did not decide at once (interview §7 rule 3), within the deadline."""
    opts, session = procedure.options, procedure.session
    runs: list[RunState] = []
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
    return runs


def _transport_advisories(session: Interviewer) -> list[Advisory]:
    """What the session saw of the transport: loopback HTTP, addresses refused, 429s."""
    advisories = [
        Advisory(
            "transport",
            "loopback_http",
            value=o,
            detail="plain HTTP was used, tolerated for loopback only",
        )
        for o in sorted(session.loopback_origins)
    ]
    advisories += [
        Advisory(
            "transport",
            "address_refused",
            value=o,
            detail="not contacted: the address is not public",
        )
        for o in sorted(session.refused_origins)
    ]
    if session.rate_limited:
        waited = {"waits": session.rate_limited, "seconds": round(session.waited, 3)}
        advisories.append(
            Advisory(
                "transport",
                "rate_limited",
                value=waited,
                detail="429 Too Many Requests was waited out; never counted",
            )
        )
    return advisories


def _record(
    url: str,
    opts: VerifyOptions,
    started: datetime,
    runs: list[RunState],
    session: Interviewer,
) -> ResultRecord:
    """The (unsigned) record of the runs: the outcome, each run, and the headline taken
    from the last run that read the card."""
    outcome, persistent = _outcome(runs)
    done = [r.to_run() for r in runs]
    persistent_checks = {c.check for c in done[-1].conflicts if c.key in persistent}
    read = [r for r in runs if r.card is not None]
    last = read[-1] if read else runs[-1]
    advisories = [a for r in runs for a in r.advisories] + _transport_advisories(session)
    return ResultRecord(
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
