"""Interviewing the chosen interfaces one by one, and comparing their answers.

Each interface is judged against its card variant (:func:`~.cards.card_variant`) and
asked its questions (:func:`~.questions.interview`). Answers are compared across the
interfaces that share a card variant; thorough, the first interface of a variant is
asked every question twice (determinism), the others once, their bytes compared with the
first's (the same check: PROFILE §7, D-CLI-8, "Defaults that fit"). Sampled, every
interface asks each question once and the sampler's drawn asks twice (D-VERIFY-72).
An interface abandoned (:class:`~.state.Abandoned`) is an advisory; a run in which no
interface could be interviewed ends ``unreachable`` with the transport's reason.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..checks import Advisory, Check, Conflict, Interface, Where, check_interfaces_agree
from ..models import Source
from ..net.failures import AddressRefused, NotItsBinding, TransportFailure
from ..record import Incomplete
from ..spec import FAILURES_IN_A_ROW
from .calls import Calls
from .cards import card_variant
from .choosing import address_refused
from .client import Interviewer
from .questions import interview
from .sampling import Asked, Sampler
from .state import Abandoned, RunState, Stop, Variant, VerifyOptions, progress

__all__ = ["Interviews"]

_UNRESOLVED = (
    "the host name the card's interface URLs name did not resolve, so no interface "
    "could be asked (a card with example URLs served locally: its interface URLs must "
    "name where it is served)"
)


class Interviews:
    """One run's interviews of its chosen interfaces: :meth:`one` each, then :meth:`end`."""

    def __init__(
        self,
        session: Interviewer,
        options: VerifyOptions,
        calls: Calls,
        *,
        sampler: Sampler,
        asked: Asked,
        state: RunState,
    ) -> None:
        self.session = session
        self.options = options
        self.calls = calls
        self.sampler = sampler
        self.asked = asked
        self.state = state
        # The first answer to each (variant, question, skill): which URL gave what bytes.
        self.answers: dict[tuple[str, str, str | None], tuple[str, bytes]] = {}
        self.asked_twice: set[str] = set()  # the variants whose questions were asked twice
        self.interviewed = 0
        self.failure: TransportFailure | None = None
        self.unresolved: dict[str, list[str]] = {}  # host: the members of its interfaces

    async def one(self, interface: Interface) -> None:
        """Interview ``interface``, or only check its card variant when sampled out."""
        state = self.state
        if self.asked.covers(interface):
            # Sampled: its binding was interviewed on another interface. Its card
            # variant is still fetched and checked (PROFILE §7): no question asked.
            await card_variant(self.session, self.options, interface, state)
            return
        progress(self.options, f"interface {interface.binding}")
        variant = await card_variant(self.session, self.options, interface, state)
        before = (set(state.performed), dict(state.conflicts), len(state.advisories))
        try:
            got = await interview(
                self.calls,
                interface,
                variant.declared,
                state,
                max_skills=self.options.max_skills,
                twice=variant.digest not in self.asked_twice,
                sampler=self.sampler,
            )
        except AddressRefused:
            # A name judged at the connection is skipped as a literal is on sight:
            # only when every interface is refused does the run end so.
            state.advisories.append(address_refused(interface))
            return
        except Abandoned as abandoned:
            self._abandoned(interface, abandoned, before)
            return
        self.interviewed += 1
        self.asked.interviewed(interface)
        self.asked_twice.add(variant.digest)
        self._compare(interface, variant, got)

    def _abandoned(
        self,
        interface: Interface,
        abandoned: Abandoned,
        before: tuple[set[Check], dict[tuple[object, ...], Conflict], int],
    ) -> None:
        state = self.state
        self.failure = abandoned.failure or self.failure
        if abandoned.failure is None and interface.url not in self.calls.answered:
            # Never an answer of its binding (an HTML page): judged as that page at the
            # card URL is, unreachable, and no check passed on it.
            state.performed = before[0]
            state.conflicts = before[1]
            del state.advisories[before[2] :]
            self.failure = self.failure or NotItsBinding().at(interface.url)
            abandoned = Abandoned(self.failure)
        if abandoned.failure is not None and abandoned.failure.cause == "name":
            host = urlsplit(interface.url).hostname or ""
            self.unresolved.setdefault(host, []).append(interface.member)
            return  # said once per host, by end()
        state.advisories.append(
            Advisory(
                "interface",
                "abandoned",
                source=Source("card", interface.member),
                value=FAILURES_IN_A_ROW,
                detail="abandoned for the run: transport failures or answers that are not "
                "of its binding, in a row",
            )
        )
        if abandoned.failure is None:
            self.interviewed += 1  # it answered, not in its binding: judged as it did
            self.asked.interviewed(interface)

    def _compare(
        self, interface: Interface, variant: Variant, got: dict[tuple[str, str | None], bytes]
    ) -> None:
        for (question, skill), body in got.items():
            key = (variant.digest, question, skill)
            first = self.answers.setdefault(key, (interface.url, body))
            if first[0] != interface.url:
                self.state.performed.add(Check.determinism)  # a second ask, on another
                where = Where(interface.url, question, skill)
                self.state.add(check_interfaces_agree(first, (interface.url, body), where))

    def end(self) -> None:
        """Say each unresolved host once; end the run if no interface was interviewed."""
        for host, members in self.unresolved.items():
            self.state.advisories.append(
                Advisory(
                    "interface",
                    "host_not_resolved",
                    value={"host": host, "interfaces": members},
                    detail="not interviewed: the host name of these interfaces did not resolve",
                )
            )
        if self.interviewed:
            return
        failure = self.failure
        if failure is not None and failure.cause == "name" and self.unresolved:
            # Said once, plainly: a card naming example URLs served locally, say.
            raise Stop(Incomplete("connect_failed", _UNRESOLVED, url=failure.url, cause="name"))
        if failure is not None:
            raise failure  # every interface failed at the transport: unreachable
        raise AddressRefused
