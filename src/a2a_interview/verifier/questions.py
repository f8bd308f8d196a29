"""The questions asked on one interface, in order, and the checks on each answer.

1. the inactive probe: ``interview/identity`` without activation;
2. every question asked under activation: each of ``spec.QUESTIONS``, then each selector
   question (``spec.SELECTOR_QUESTIONS``) with each declared skill id as selector (at most
   ``max_skills``), each asked twice (determinism); or, sampled (the default,
   D-VERIFY-63), with the few the :class:`~.sampling.Sampler` draws, each asked once but
   the asks it makes twice on its drawn binding (D-VERIFY-72);
3. the closure probes: ``interview/bogus`` (closure_method) and ``interview/usage`` with
   a selector that matches nothing (closure_selector).

The judging is the pure functions of ``checks``; this module asks and keeps the account.
"""

from __future__ import annotations

from typing import Final

from ..checks import (
    Check,
    Declared,
    Interface,
    Where,
    check_answer,
    check_closure,
    check_determinism,
    check_echo,
    check_inactive,
    check_terms_declared,
    coverage,
    diff_answer,
    no_match_selector,
)
from ..models import Answer
from ..spec import QUESTIONS
from .calls import Calls
from .sampling import SELECTING, Sampler
from .state import RunState, bounded

__all__ = ["CLOSURE_METHOD", "interview"]

# The undefined method of the closure probe (interview §8 step 4).
CLOSURE_METHOD: Final = "bogus"


async def interview(
    calls: Calls,
    interface: Interface,
    declared: Declared,
    state: RunState,
    *,
    max_skills: int | None,
    twice: bool = True,
    sampler: Sampler | None = None,
) -> dict[tuple[str, str | None], bytes]:
    """Interview one interface; returns each question's answer bytes for the
    cross-interface comparison. Unless ``twice``, each question is asked once: its
    determinism is then the agreement with another interface's answer. With a
    ``sampler`` that is not thorough, each selector question is asked with the skill
    ids it draws (D-VERIFY-63), else with every declared one (at most ``max_skills``),
    and ``twice`` is the sampler's: on its drawn binding every question and one drawn
    selector ask (D-VERIFY-72)."""
    url = interface.url
    exchange, _ = await calls.call(state, interface, "identity", None, activated=False)
    state.performed.add(Check.inactive_probe)
    conflicts, advisories = check_inactive(exchange, interface.binding, Where(url, "identity"))
    state.add(conflicts)
    state.advisories += advisories

    asked = state.asked if sampler is not None and not sampler.thorough else None
    asks, again = _plan(
        interface, declared, state, max_skills=max_skills, twice=twice, sampler=sampler
    )
    answers: dict[tuple[str, str | None], bytes] = {}
    for question, skill in asks:
        repeat = (question, skill) in again
        body = await _ask(calls, interface, declared, state, (question, skill), repeat=repeat)
        if repeat and asked is not None:
            asked.twice.append((url, question, skill))
        if body is not None:
            answers[question, skill] = body
    await _closure_probes(calls, interface, declared, state)
    return answers


def _plan(
    interface: Interface,
    declared: Declared,
    state: RunState,
    *,
    max_skills: int | None,
    twice: bool,
    sampler: Sampler | None,
) -> tuple[list[tuple[str, str | None]], set[tuple[str, str | None]]]:
    """The asks in order (every question, then each selector question with each skill
    id chosen), and those asked twice."""
    skills = list(dict.fromkeys(declared.interview.skill_ids))
    asked = state.asked if sampler is not None and not sampler.thorough else None
    if sampler is None or asked is None:
        skills = bounded(skills, max_skills, "selectors_not_asked", state)
        chosen = {q: set(skills) for q in SELECTING}
    else:
        chosen = {q: set(sampler.selectors(q, skills, max_skills, asked)) for q in SELECTING}
    asks: list[tuple[str, str | None]] = [(q, None) for q in QUESTIONS]
    asks += [(q, s) for s in skills for q in SELECTING if s in chosen[q]]
    if sampler is None or asked is None:
        return asks, (set(asks) if twice else set())
    return asks, sampler.again(interface, asks)


async def _ask(
    calls: Calls,
    interface: Interface,
    declared: Declared,
    state: RunState,
    ask: tuple[str, str | None],
    *,
    repeat: bool,
) -> bytes | None:
    """One question asked (twice when ``repeat``) and its answer judged; its canonical
    bytes, if it has any, for the comparison across interfaces."""
    url = interface.url
    question, skill = ask
    where = Where(url, question, skill)
    # Both asks carry the same JSON-RPC id, so identical answers are identical
    # bodies and the second needs no reading of its own.
    request_id = calls.next_id()
    first_exchange, first = await calls.call(
        state, interface, question, skill, request_id=request_id
    )
    exchanges = [first_exchange]
    if repeat:
        second_exchange, second = await calls.call(
            state,
            interface,
            question,
            skill,
            request_id=request_id,
            same_as=(first_exchange, first),
        )
        exchanges.append(second_exchange)
    state.performed.update((Check.activation_echo, Check.answer_shape))
    for exchange in exchanges:
        state.add(check_echo(exchange, Where(url), legacy=interface.legacy))
    answer, shape = check_answer(first, where)
    state.add(shape)
    if repeat:
        state.performed.add(Check.determinism)
        state.add(check_determinism(first, second, where))
    if answer is not None:
        _judge(answer, declared, state, where)
    return first.canonical


def _judge(answer: Answer, declared: Declared, state: RunState, where: Where) -> None:
    """An answer of the right shape against what the card declares."""
    state.performed.update((Check.projection, Check.coverage))
    state.add(diff_answer(answer, declared, where))
    if where.question == "terms":
        state.performed.add(Check.terms_declared)
        terms = check_terms_declared(answer, declared, where)
        state.add(terms)
        if terms:
            return  # the coverage of a hidden or fabricated answer is noise
    state.advisories += coverage(answer, declared, where)


async def _closure_probes(
    calls: Calls, interface: Interface, declared: Declared, state: RunState
) -> None:
    """interview §8 step 4: an undefined method, and a selector that matches nothing."""
    url = interface.url
    refusal = declared.interview.refusal
    exchange, read = await calls.call(state, interface, CLOSURE_METHOD, None)
    state.performed.add(Check.closure_method)
    state.add(check_echo(exchange, Where(url), legacy=interface.legacy))
    state.add(check_closure(read, refusal, Check.closure_method, Where(url)))

    # Every declared id, not only those asked: a skill past max_skills is still one.
    selector = no_match_selector(declared.interview.skill_ids)
    exchange, read = await calls.call(state, interface, "usage", selector)
    state.performed.add(Check.closure_selector)
    state.add(check_echo(exchange, Where(url), legacy=interface.legacy))
    where = Where(url, "usage", selector)
    state.add(check_closure(read, refusal, Check.closure_selector, where))
