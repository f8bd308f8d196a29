"""Every citation resolves inside the clone (docs/decisions.md D-TEST-58).

A reader holding only the repository can follow whatever the code, the tests and the
documents cite: a rule is ``PROFILE §N[.M]`` (a section or numbered item of
``docs/profile.md``) or a decision ``D-<PART>-n`` (a heading of ``docs/decisions/``),
never a number in an issue tracker the clone does not have; a relative link or a
backticked path in ``docs/`` and the README names a file of the repository.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from needs import ROOT
from support.profile import profile_sections

# What is read: the project's own text, not what tools install beside it.
FOLDERS = ("src", "tests", "docs", "bench", "examples", "conformance")
SUFFIXES = {".py", ".md", ".txt", ".sh", ".yml", ".yaml", ".toml", ".css", ".html", ".mjs"}
SKIPPED = {"node_modules", "__pycache__", ".venv", ".venv-a2a03", ".git"}

# "issue" then spaces, an s or a # and a number: a tracker's numbering.
ISSUE = re.compile(r"\bissue[ s#]*\d", re.IGNORECASE)
DECISION = re.compile(r"\bD-([A-Z]+)-(\d+[a-z]?)\b")
DEFINED = re.compile(r"^### (D-[A-Z]+-\d+[a-z]?) \S", re.MULTILINE)
# PROFILE §3.9, §3b and §9 / docs/profile.md §6.3: every § of the chain is a citation.
NUMBER = r"\d+b?(?:\.\d+)?"
SECTION = rf"§{NUMBER}"
PROFILE_CITE = re.compile(
    rf"(?:PROFILE|profile\.md`?) ({SECTION}(?:(?:,? and |, | or |[–-]){SECTION})*)"
)
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PATH_SUFFIXES = SUFFIXES | {".json", ".lock", ".cfg", ".ini", ".j2"}
# Paths the documents name that are not the project's, each with where it is.
ELSEWHERE = {
    "echo_agent.py": "README: the file the reader saves the snippet as",
    "test_agent_card_caching.py": "the A2A TCK's (docs/stock-agents.md)",
    "tests/compatibility/": "the A2A TCK's",
    "tests/compatibility/agent_card/": "the A2A TCK's",
    "tests/compatibility/agent_card/test_agent_card_caching.py": "the A2A TCK's",
}


def _skipped(path: Path) -> bool:
    return bool(SKIPPED & set(path.parts)) or any(p.endswith(".egg-info") for p in path.parts)


@cache
def _texts() -> tuple[Path, ...]:
    """README, Makefile, pyproject.toml and every text file of the project's folders,
    relative to the root; this file left out (it spells the patterns it looks for)."""
    files = [Path("README.md"), Path("Makefile"), Path("pyproject.toml")]
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            relative = path.relative_to(ROOT)
            if path.suffix in SUFFIXES and path.is_file() and not _skipped(relative):
                files.append(relative)
    return tuple(p for p in files if p != Path(__file__).relative_to(ROOT))


def _documents() -> list[Path]:
    return [p for p in _texts() if p.suffix == ".md" and p.parts[0] in ("README.md", "docs")]


@cache
def _read(path: Path) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def _decisions() -> Counter[str]:
    """Every decision id with the number of headings defining it."""
    found: Counter[str] = Counter()
    for part in sorted((ROOT / "docs" / "decisions").glob("*.md")):
        found.update(DEFINED.findall(part.read_text(encoding="utf-8")))
    return found


def _profile_sections() -> set[str]:
    return profile_sections(_read(Path("docs/profile.md")))


def _cited_profile(text: str) -> set[str]:
    return {s for chain in PROFILE_CITE.findall(text) for s in re.findall(rf"§({NUMBER})", chain)}


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    anchors = set()
    for line in _read(path).splitlines():
        head = re.match(r"#{1,6} (.+)", line)
        if head:
            slug = _slug(head.group(1))
            anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
            seen[slug] += 1
    return anchors


@cache
def _repo_files() -> tuple[str, ...]:
    """Every file and folder of the project as a root-relative POSIX path."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not _skipped(Path(d))]
        base = Path(folder).relative_to(ROOT)
        found += [(base / name).as_posix() for name in dirs + files]
    return tuple(found)


def _top_folders() -> set[str]:
    """The first part of a path that names something in the project: a folder at the
    root, of the package, or of the tests."""
    folders = set()
    for base in (ROOT, ROOT / "src" / "a2a_interview", ROOT / "tests"):
        folders |= {p.name for p in base.iterdir() if p.is_dir() and not _skipped(Path(p.name))}
    return folders - {"data"}


def _is_repo_path(token: str, folders: set[str]) -> bool:
    """A backticked token that names a file or folder of the project: a path whose first
    part is one of its folders, or a file name with a source or document suffix."""
    if not re.fullmatch(r"[\w.-]+(?:/[\w.-]+)*/?", token) or token.startswith("."):
        return False
    if _skipped(Path(token)) or token in ELSEWHERE:
        return False
    last = token.rstrip("/").rsplit("/", 1)[-1]
    if "." in last and not token.endswith("/") and Path(last).suffix not in PATH_SUFFIXES:
        return False  # a module's attribute (``cli/files.read_input``), not a file
    if "/" in token:
        return token.split("/", 1)[0] in folders
    return Path(token).suffix in (".py", ".md")


def _resolves(token: str, where: Path) -> bool:
    token = token.rstrip("/")
    for base in (ROOT, ROOT / where.parent, ROOT / "src", ROOT / "src" / "a2a_interview"):
        if (base / token).exists():
            return True
    # A name given by its tail (``proxy/front.py``, ``cardsig.py``) is somewhere below.
    return any(p == token or p.endswith("/" + token) for p in _repo_files())


def test_no_citation_of_an_issue_tracker() -> None:
    # D-TEST-58: a finding cited by its number in an issue tracker pointed at something the
    # clone does not hold; the rule it meant is a PROFILE section or a decision id.
    found = [
        f"{path}:{number}: {line.strip()}"
        for path in _texts()
        for number, line in enumerate(_read(path).splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert found == []


def test_every_decision_is_defined_once() -> None:
    decisions = _decisions()
    assert len(decisions) > 250, "docs/decisions/*.md define the decisions, one heading each"
    assert [d for d, n in decisions.items() if n > 1] == []


def test_every_cited_decision_is_defined() -> None:
    # D-TEST-58: an id no docs/decisions/ file defines, or one only the retired table of
    # former numbers knew, leads nowhere.
    defined = _decisions()
    missing = {}
    for path in _texts():
        for part, number in DECISION.findall(_read(path)):
            if f"D-{part}-{number}" not in defined:
                missing.setdefault(f"D-{part}-{number}", str(path))
    assert missing == {}


def test_every_profile_citation_is_a_section_of_docs_profile_md() -> None:
    sections = _profile_sections()
    assert {"1.1", "3.9", "3.10", "3b", "6.3", "7", "8", "9"} <= sections
    missing = {}
    for path in _texts():
        for cited in _cited_profile(_read(path)) - sections:
            missing.setdefault(f"§{cited}", str(path))
    assert missing == {}


def test_every_relative_link_in_the_documents_leads_to_a_file_and_heading() -> None:
    broken = []
    for path in _documents():
        for target in MD_LINK.findall(_read(path)):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file) if file else path
            if not (ROOT / linked).exists():
                broken.append(f"{path}: {target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{path}: {target}: no such heading")
    assert broken == []


def test_every_backticked_path_in_the_documents_is_in_the_repository() -> None:
    # D-TEST-58: docs/decisions.md's index named netguard.py, which was never a module.
    folders = _top_folders()
    missing = []
    for path in _documents():
        for token in CODE_SPAN.findall(_read(path)):
            if _is_repo_path(token, folders) and not _resolves(token, path):
                missing.append(f"{path}: {token}")
    assert missing == []


@pytest.mark.parametrize(
    ("text", "cited"),
    [
        ("PROFILE §3.9, §3.7 and §9", {"3.9", "3.7", "9"}),
        ("(PROFILE §6–§9, the draft's §7)", {"6", "9"}),
        ("docs/profile.md §3b", {"3b"}),
        ("RFC 9110 §5.5", set()),
    ],
)
def test_profile_citations_are_read_whole(text: str, cited: set[str]) -> None:
    assert _cited_profile(text) == cited


@pytest.mark.parametrize(
    ("token", "named"),
    [
        ("netguard.py", True),
        ("server/proxy/front.py", True),
        ("ledger/migrations/", True),
        ("application/json", False),
        ("card.json", False),
        ("/.well-known/agent-card.json", False),
        ("ledger/web*", False),
        ("cli/files.read_input", False),
        ("tests/interop/js/node_modules", False),
    ],
)
def test_what_counts_as_a_path(token: str, named: bool) -> None:
    assert _is_repo_path(token, _top_folders()) is named
