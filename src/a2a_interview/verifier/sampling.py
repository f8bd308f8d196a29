"""What a default run asks: one interface per binding, a few skill selectors and the asks
made twice, drawn at random (docs/decisions.md D-VERIFY-63, D-VERIFY-72).

The draft calls its procedure cheap (interview §8: five reads and a diff), so by default
a run's request count does not grow with the card's skills or interfaces: each binding
(JSONRPC, HTTP+JSON) is interviewed on one of its interfaces, and each selector question
(``usage``, ``terms``) is asked with ``k`` of the declared skill ids. An agent lying under
one selector of ``n`` is caught with probability ``k/n`` per run and surely over repeated
runs; one lying on one interface of ``m`` of a binding, with probability ``1/m``. With
``thorough`` every interface (at most 16) and every skill (at most ``max_skills``) is
asked, as before.

Determinism (PROFILE §7: a second ask gives identical bytes), sampled (D-VERIFY-72): each
interface is asked each question once, its bytes compared with those of the other
bindings of its card variant (a second ask on another binding), and on one binding drawn
at random every ask without a selector (each question) is made twice, and one of its
selector asks drawn at random. A run so makes ``1 + A + 2`` calls a binding (``A`` =
each question and ``k`` per selector question) and ``len(QUESTIONS) + 1`` more in all.
An agent whose answers change on a second ask is caught on every run unless its lie is
confined to one selector or to one binding of ``B``: one selector ask's second ask, with probability
``1/(2*n*B)`` per run (:func:`repeat_probability`); one binding's, ``1/B``.

The draw is the driver's (the core stays deterministic), from an injectable source
(``VerifyOptions.rng``: seedable in tests; ``random.SystemRandom`` by default). It is
made once per procedure: the re-run that follows a conflict (interview §7 rule 3) asks
what the first run asked, as far as its card still declares it, so a conflict can be
seen twice. Each run records what it asked (``runs[i].sampling``, D-RECORD-25).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

from ..checks import Interface
from ..record import Sampling
from ..spec import QUESTIONS, SELECTOR_QUESTIONS, SELECTORS_PER_QUESTION

__all__ = [
    "SELECTING",
    "Asked",
    "Sampler",
    "in_turn",
    "repeat_probability",
]

# The selector questions, in the order an interface is asked them.
SELECTING: Final = tuple(q for q in QUESTIONS if q in SELECTOR_QUESTIONS)


def repeat_probability(
    bindings: int,
    skills: int,
    per_question: int = SELECTORS_PER_QUESTION,
    *,
    selector: bool = False,
    every_binding: bool = False,
) -> float:
    """The probability per sampled run that a given ask is made twice (D-VERIFY-72): a
    question without selector, or (``selector``) one selector question with one given
    skill id of the ``skills`` declared, on one given binding of ``bindings`` (on any
    binding with ``every_binding``: an agent changing its answers on each). The binding
    is drawn with probability ``1/B``; there every question without selector is made
    twice, and one of its ``S = 2k`` selector asks (``k`` per selector question, the
    ids drawn uniformly, so the given pair is among them with ``k/n``) with ``1/S``."""
    k = min(per_question, skills)
    chance = (k / skills) / (len(SELECTING) * k) if selector else 1.0
    return chance if every_binding else chance / bindings


@dataclass
class Asked:
    """What one run asked of what it could have, kept while it runs (so a run cut short
    still says it): by binding, the interface interviewed and how many the card
    declares; by selector question, the skill ids asked; the asks made twice
    (interface, question, skill)."""

    thorough: bool
    per_question: int
    skills: int = 0
    interfaces: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    selectors: dict[str, list[str]] = field(default_factory=dict)
    twice: list[tuple[str, str, str | None]] = field(default_factory=list)

    def covers(self, interface: Interface) -> bool:
        """Whether, sampled, ``interface``'s binding was interviewed on another."""
        chosen = self.interfaces.get(str(interface.binding))
        return not self.thorough and chosen is not None and chosen[0] is not None

    def interviewed(self, interface: Interface) -> None:
        binding = str(interface.binding)
        if not self.thorough and binding in self.interfaces:
            self.interfaces[binding] = (interface.url, self.interfaces[binding][1])

    def to_record(self) -> Sampling:
        if self.thorough:
            return Sampling("thorough")
        return Sampling(
            "sampled",
            self.per_question,
            self.skills,
            tuple((b, url, of) for b, (url, of) in self.interfaces.items()),
            tuple((q, tuple(self.selectors.get(q, ()))) for q in SELECTING),
            tuple(self.twice),
        )


def in_turn(bindings: list[list[Interface]]) -> list[Interface]:
    """The order interfaces are tried in: each binding's drawn one, then the others in
    their stead (never more than the bound of 16 in all: the caller cuts the list)."""
    return [group[0] for group in bindings] + [i for group in bindings for i in group[1:]]


class Sampler:
    """The draws of one procedure (both its runs), from ``rng``."""

    def __init__(self, rng: random.Random | None, per_question: int, *, thorough: bool) -> None:
        self.rng = rng if rng is not None else random.SystemRandom()
        self.per_question = max(per_question, 1)
        self.thorough = thorough
        self._orders: dict[tuple[str, ...], list[str]] = {}  # a binding's urls: drawn order
        self._chosen: dict[str, list[str]] = {}  # selector question: the ids drawn
        self._binding: str | None = None  # the binding one ask is made twice on
        self._slot: int | None = None  # which of its selector asks

    def new_run(self) -> Asked:
        return Asked(self.thorough, self.per_question)

    def interfaces(self, usable: list[Interface], asked: Asked) -> list[list[Interface]]:
        """``usable`` by binding (in card order), each binding's interfaces in the order
        they are tried: drawn, the first that can be interviewed is the binding's, the
        others are tried only in its stead."""
        groups: dict[str, list[Interface]] = {}
        for interface in usable:
            groups.setdefault(str(interface.binding), []).append(interface)
        ordered: list[list[Interface]] = []
        for binding, group in groups.items():
            urls = tuple(dict.fromkeys(i.url for i in group))
            if urls not in self._orders:  # the re-run tries them in the same order
                self._orders[urls] = self.rng.sample(list(urls), len(urls))
            rank = {url: n for n, url in enumerate(self._orders[urls])}
            ordered.append(sorted(group, key=lambda i: rank[i.url]))
            asked.interfaces[binding] = (None, len(group))
        if self._binding not in groups:  # the re-run makes twice the ask the first did
            self._binding = self.rng.choice(list(groups)) if groups else None
        return ordered

    def again(
        self, interface: Interface, asks: list[tuple[str, str | None]]
    ) -> set[tuple[str, str | None]]:
        """The asks of ``asks`` made twice on ``interface`` (D-VERIFY-72): on the drawn
        binding only, every ask without a selector and one drawn selector ask (drawn at
        the binding's first interview, kept for its stand-ins and the re-run)."""
        if str(interface.binding) != self._binding:
            return set()
        made = {ask for ask in asks if ask[1] is None}
        selecting = [ask for ask in asks if ask[1] is not None]
        if selecting:
            if self._slot is None:
                self._slot = self.rng.randrange(len(selecting))
            made.add(selecting[self._slot % len(selecting)])
        return made

    def selectors(
        self, question: str, skills: list[str], limit: int | None, asked: Asked
    ) -> list[str]:
        """The skill ids ``question`` is asked with on one interface: ``k`` of
        ``skills`` (never more than ``limit``), those drawn before first as far as
        ``skills`` still holds them (another interface, the re-run), the rest drawn."""
        k = min(self.per_question, len(skills), limit if limit is not None else len(skills))
        kept = [s for s in self._chosen.get(question, ()) if s in skills][:k]
        rest = [s for s in skills if s not in kept]
        chosen = kept + self.rng.sample(rest, k - len(kept))
        self._chosen[question] = chosen
        asked.skills = max(asked.skills, len(skills))
        said = asked.selectors.setdefault(question, [])
        said += [s for s in chosen if s not in said]
        return chosen
