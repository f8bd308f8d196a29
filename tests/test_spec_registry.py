"""The question registry: one statement of the closed method set, read by everything else
(interview §4, PROFILE §4.3, D-CORE-28)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, get_args

from a2a_interview.models import Answer
from a2a_interview.projection import Interview
from a2a_interview.spec import (
    DEFAULT_MAX_SKILLS,
    DEFAULT_RATE_LIMIT,
    METHOD_PREFIX,
    METHODS,
    QUESTIONS,
    REGISTRY,
    SELECTOR_QUESTIONS,
    SELECTORS_PER_QUESTION,
    SPECS,
    Question,
)
from needs import ROOT
from support.verify import REPEATS, expected_calls


def test_the_question_type_restates_the_registry_in_order() -> None:
    """D-CORE-28: the ``Question`` Literal is the one restatement of the registry's names
    (a type checker cannot read a tuple), so a question added to one and not the other
    fails here."""
    assert get_args(Question) == QUESTIONS == tuple(q.name for q in REGISTRY)
    assert tuple(SPECS) == QUESTIONS
    assert tuple(METHOD_PREFIX + q.name for q in REGISTRY) == METHODS
    assert {q.name for q in REGISTRY if q.selector} == SELECTOR_QUESTIONS


def _profile_members() -> dict[str, list[str]]:
    """PROFILE §4.3's list: each question's backticked pointers, in the text's order."""
    text = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")
    section = text.split("\n## 4. Answers", 1)[1].split("\n## ", 1)[0]
    item = section.split("3. **Members and order.**", 1)[1].split("\n4. ", 1)[0]
    listed: dict[str, list[str]] = {}
    for bullet in re.split(r"\n   - ", item)[1:]:
        name, rest = bullet.split(":", 1)
        listed[name.strip()] = [p for p in re.findall(r"`([^`]*)`", rest) if p.startswith("/")]
    return listed


def test_profile_lists_the_registry_members_in_order() -> None:
    """PROFILE §4.3 states each question's members; the registry holds them. The two
    must not drift: a member or question added to one is missing from the other here."""
    listed = _profile_members()
    assert tuple(listed) == QUESTIONS
    for question in REGISTRY:
        if question.document == "proposal":
            assert listed[question.name] == ["/<member>"]
            assert question.members == ()
        else:
            assert listed[question.name] == list(question.members)


def _full_card(skills: int) -> dict[str, Any]:
    """A card carrying every member the registry names, with ``skills`` skills."""
    card: dict[str, Any] = {"skills": []}
    for question in REGISTRY:
        for member in question.members:
            parts = member.split("/")
            if len(parts) == 2:
                card.setdefault(parts[1], f"value of {member}")
            else:
                array = card.setdefault(parts[1], [])
                count = skills if parts[1] == "skills" else 2
                while len(array) < count:
                    array.append({"id": f"skill-{len(array)}"} if parts[1] == "skills" else {})
                for i, element in enumerate(array):
                    element.setdefault(parts[3], f"value of /{parts[1]}/{i}/{parts[3]}")
    return card


def _expand(members: tuple[str, ...], card: dict[str, Any], only: int | None) -> list[str]:
    """The registry's members as pointers, consecutive members under one array taken
    element by element (PROFILE §4.3)."""
    out: list[str] = []
    i = 0
    while i < len(members):
        parts = members[i].split("/")
        if len(parts) == 2:
            out.append(members[i])
            i += 1
            continue
        run = 0
        while i + run < len(members) and members[i + run].startswith(f"/{parts[1]}/"):
            run += 1
        names = [m.split("/")[3] for m in members[i : i + run]]
        for k in range(len(card[parts[1]])):
            if parts[1] == "skills" and only is not None and k != only:
                continue
            out += [f"/{parts[1]}/{k}/{n}" for n in names]
        i += run
    return out


def test_projection_projects_what_the_registry_names() -> None:
    """PROFILE §4.3: every card question's answer projects exactly the registry's
    members, in its order, with and without a selector (interview §4 rule 3)."""
    card = _full_card(3)
    interview = Interview(card)
    for question in REGISTRY:
        if question.document != "card":
            continue
        selections: list[tuple[str | None, int | None]] = [(None, None)]
        if question.selector:
            selections += [(f"skill-{k}", k) for k in range(3)]
        for skill, index in selections:
            answer = interview.expected(question.name, skill)
            assert isinstance(answer, Answer)
            got = [p.source.member for p in answer.projections]
            assert got == _expand(question.members, card, index), (question.name, skill)


def _k() -> int:
    return SELECTORS_PER_QUESTION


# What README and the decisions state of a run's calls, and what each follows from.
COUNTS: tuple[tuple[str, Callable[[], int]], ...] = (
    (r"with (\d+) skill ids", _k),
    (r"probability (\d+)/n", _k),
    (r"(\d+) calls a binding", lambda: expected_calls(_k(), 1, 0, thorough=False) - REPEATS),
    (r"(\d+) interview calls for an agent with both bindings",
     lambda: expected_calls(_k(), 2, 0, thorough=False)),
    (r"\((\d+) for a card with one binding\)", lambda: expected_calls(_k(), 1, 0, thorough=False)),
    (r"(\d+) calls for 2 skills on 3 interfaces", lambda: expected_calls(2, 1, 2, thorough=True)),
    (r"\b(\d+) for 100\b", lambda: expected_calls(100, 1, 2, thorough=True)),
    (r"probability 1/\((\d+)n\)", lambda: len(SELECTOR_QUESTIONS)),
)  # fmt: skip


def test_stated_call_counts_follow_from_the_registry() -> None:
    """D-CORE-28: each call count README and the decisions state is the one the
    registry gives (counted as tests/support/verify.py counts a run's calls); README
    must state each, so the check cannot pass by reading nothing."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs" / "decisions").glob("*.md"))]:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for pattern, count in COUNTS:
            for match in re.finditer(pattern, text):
                stated = int(match.group(1))
                assert stated == count(), (path.name, match.group(0), count())
    readme = " ".join(readme.split())
    assert all(re.search(pattern, readme) for pattern, _ in COUNTS)


def test_the_default_rate_limit_fits_a_full_thorough_run() -> None:
    """D-CLI-8: one thorough run of 100 skills on 3 interfaces, or of the default
    ``--max-skills`` on one, stays under the serving layers' default rate limit."""
    calls, per = DEFAULT_RATE_LIMIT.split("/")
    assert per == "minute"
    assert expected_calls(100, 1, 2, thorough=True) <= int(calls)
    assert expected_calls(DEFAULT_MAX_SKILLS, 1, 0, thorough=True) <= int(calls)


NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
# A count of the questions stated in prose has to be hunted when one is added.
STATED_COUNT = re.compile(
    rf"\b(?:{NUMBER_WORDS})\b(?: interview)?(?: JSON-RPC)? (?:methods|questions)\b"
    # "outside the five": a count standing for the questions
    rf"|\b(?:of the|outside the) (?:{NUMBER_WORDS})\b(?! \w)",
    re.IGNORECASE,
)
# Where a stated count stays, and why.
COUNT_ALLOWED = {
    # the draft's example description (interview §3), signed into test fixtures as it reads
    "src/a2a_interview/server/sdk.py": "five questions",
    "src/a2a_interview/reference/stonework-card.json": "five questions",
}


def test_no_text_states_how_many_questions_there_are() -> None:
    """D-CORE-28: README, the docs, and the package's text and docstrings build a count
    or list of the questions from ``spec.QUESTIONS`` or do not state it, so a question
    added to the registry leaves no count to hunt."""
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    files += [p for p in (ROOT / "src").rglob("*") if p.suffix in {".py", ".md", ".json", ".html"}]
    stated = []
    for path in files:
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("docs/benchmarks"):
            continue  # measurements of their day, with their commands
        text = " ".join(path.read_text(encoding="utf-8").split())
        for match in STATED_COUNT.finditer(text):
            if COUNT_ALLOWED.get(relative) != match.group(0):
                stated.append((relative, match.group(0)))
    assert stated == []
