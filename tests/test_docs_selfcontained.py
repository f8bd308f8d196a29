"""The repository stands alone (docs/decisions.md D-TEST-1, D-TEST-2).

A clone with nothing beside it: no link, citation or help text in it points outside it.
The README, ``docs/``, the code and its comments, and the ``--help`` of every command are
read from a fresh ``git clone`` of HEAD in an empty temporary folder. Cited documents
must be in the clone, every ``PROFILE §N`` must be a section or item of
``docs/profile.md``, and help texts cite ``docs/profile.md §N`` (a reader of the
installed wheel cannot know what ``PROFILE`` is). The one thing allowed to lie beside the
repository is the third-party test corpora (``../shared/spec/vectors``, ``tests/needs.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from needs import ROOT, binary, need
from support.profile import profile_sections

# Paths that lead out of the repository. The corpora folder is the one exception.
OUTSIDE = [
    re.compile(r"\.\./shared(?!/spec/vectors)"),
    re.compile(r"/wor[k]/"),  # this machine's work folder
    re.compile(r"\bnotes/[\w-]+\.md"),
    re.compile(r"\bPROFILE\.md\b"),
    re.compile(r"\bSTYLE\.md\b"),
    re.compile(r"a2a-interview-extension\.txt"),
]
# A document named by its file name (a .md) must be a file of the clone.
DOC_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
PROFILE_CITE = re.compile(r"PROFILE §(\d+b?)(?:\.(\d+))?")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    git = binary("git", "apt-get install git")
    need((ROOT / ".git").exists(), "a git checkout of the repository", "git clone it")
    dest = tmp_path_factory.mktemp("alone") / "a2a-interview"
    subprocess.run([git, "clone", "--quiet", str(ROOT), str(dest)], check=True)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["a2a-interview"]
    return dest


def _texts(clone: Path) -> list[Path]:
    """README, docs, and the code with its comments (tests too: only this file, which
    spells the patterns it looks for, is left out)."""
    files = [clone / "README.md", *sorted((clone / "docs").rglob("*.md"))]
    for folder in ("src", "bench", "tests", "examples"):
        files += sorted(
            p for p in (clone / folder).rglob("*") if p.suffix in (".py", ".txt", ".sh", ".yml")
        )
    return [p for p in files if "node_modules" not in p.parts and p.name != Path(__file__).name]


def _profile_sections(clone: Path) -> set[str]:
    return profile_sections((clone / "docs" / "profile.md").read_text())


def _cited_profile(text: str) -> set[str]:
    return {a + (f".{b}" if b else "") for a, b in PROFILE_CITE.findall(text)}


def _problems(text: str, where: Path, clone: Path, names: set[str]) -> list[str]:
    found = []
    for pattern in OUTSIDE:
        found += [f"{where}: points outside: {m.group(0)!r}" for m in pattern.finditer(text)]
    for name in DOC_NAME.findall(text):
        # By path from the root or from the file, or by its file name anywhere in the clone.
        if not ((clone / name).exists() or (where.parent / name).exists() or name in names):
            found.append(f"{where}: names {name!r}, which is not in the repository")
    if where.suffix == ".md":
        for target in MD_LINK.findall(text):
            if re.match(r"[a-z]+:|#", target):
                continue
            if not (where.parent / target.split("#")[0]).exists():
                found.append(f"{where}: link {target!r} leads nowhere in the repository")
    return found


def test_no_document_points_outside_the_clone(clone: Path) -> None:
    # The README's old link (../shared/spec/...), docs citing STYLE.md and
    # notes/performance.md: each was a path outside the repository.
    names = {p.name for p in clone.rglob("*") if ".git" not in p.parts}
    problems = []
    for path in _texts(clone):
        problems += _problems(path.read_text(), path.relative_to(clone), clone, names)
    assert problems == []


def test_every_profile_citation_is_in_docs_profile_md(clone: Path) -> None:
    sections = _profile_sections(clone)
    assert {"1.1", "3.9", "3.10", "3b", "6.3", "6.6", "7", "8", "9"} <= sections
    missing = {}
    for path in _texts(clone):
        for cited in _cited_profile(path.read_text()) - sections:
            missing.setdefault(cited, str(path.relative_to(clone)))
    assert missing == {}


def test_docs_profile_md_says_how_it_is_cited_and_names_the_drafts(clone: Path) -> None:
    text = (clone / "docs" / "profile.md").read_text()
    assert "`PROFILE §N`" in text.split("\n## ", 1)[0]
    for uri in (
        "https://agentsow.com/extensions/a2a-interview/v1",
        "https://agentsow.com/extensions/a2a-terms/v1",
        "https://a2a-protocol.org/latest/specification/",
    ):
        assert uri in text


HELP_DUMP = """
import argparse, json, sys
from a2a_interview.cli import build_parser

def walk(parser, path):
    yield " ".join(path), parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, [*path, name])

json.dump(dict(walk(build_parser(), [])), sys.stdout)
"""


def test_every_help_text_cites_only_what_a_reader_can_find(clone: Path) -> None:
    # The --help of every command and subcommand, as the clone's code prints it: no path
    # outside, and the profile cited by its path in the project (docs/profile.md §N).
    out = subprocess.run(
        [sys.executable, "-c", HELP_DUMP],
        env={"PYTHONPATH": str(clone / "src"), "COLUMNS": "200"},
        capture_output=True,
        check=True,
    ).stdout
    helps: dict[str, str] = json.loads(out)
    assert {"", "verify", "card verify", "ledger serve", "demo serve", "proxy"} <= set(helps)
    names = {p.name for p in clone.rglob("*") if ".git" not in p.parts}
    sections = _profile_sections(clone)
    problems = []
    for command, text in helps.items():
        where = Path(f"a2a-interview {command} --help".replace("  ", " "))
        problems += _problems(text, where, clone, names)
        problems += [f"{where}: cites {m!r}" for m in re.findall(r"PROFILE §[\d.]+", text)]
        # The project's issue tracker is not where a user of the wheel can look.
        problems += [f"{where}: cites {m!r}" for m in re.findall(r"issue \d+", text)]
        cited = set(re.findall(r"docs/profile\.md §(\d+b?(?:\.\d+)?)", text))
        problems += [f"{where}: docs/profile.md has no §{c}" for c in cited - sections]
    assert problems == []


def test_architecture_md_names_every_module(clone: Path) -> None:
    # Every module and subpackage of src/a2a_interview is in docs/architecture.md.
    text = (clone / "docs" / "architecture.md").read_text()
    package = clone / "src" / "a2a_interview"
    missing = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] == "ledger" and "migrations" in relative.parts:
            named = relative.name in text or "ledger/migrations/" in text
        else:
            named = str(relative) in text
        if not named:
            missing.append(str(relative))
    assert missing == []


@pytest.mark.parametrize(
    ("corpus", "what", "source"),
    [
        ("jcs", "RFC 8785", "https://github.com/cyberphone/json-canonicalization"),
        ("card-sign", "signed Agent Card", "https://github.com/ogasurfproject-jpg/a2a-tck"),
    ],
)
def test_a_missing_corpus_skips_saying_what_it_is_where_and_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: str, what: str, source: str
) -> None:
    # The skip used to say only "check out the shared spec folder beside the repo".
    import needs

    monkeypatch.setattr(needs, "SHARED_VECTORS", tmp_path / "absent")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        needs.shared_vectors(corpus)
    reason = str(skipped.value)
    assert what in reason
    assert f"../shared/spec/vectors/{corpus} beside the repository" in reason
    assert source in reason


def test_the_corpora_folder_can_be_named(tmp_path: Path) -> None:
    # D-TEST-2: A2A_INTERVIEW_VECTORS names the folder holding the corpora, for a reader
    # whose copy is not beside the clone; unset or empty, the default beside the clone.
    import os
    import subprocess
    import sys

    def folder(value: str | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "A2A_INTERVIEW_VECTORS"}
        if value is not None:
            env["A2A_INTERVIEW_VECTORS"] = value
        done = subprocess.run(
            [sys.executable, "-c", "import needs; print(needs.SHARED_VECTORS)"],
            cwd=Path(__file__).parent, env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    beside = str((Path(__file__).resolve().parents[2] / "shared" / "spec" / "vectors").resolve())
    assert folder(str(tmp_path)) == str(tmp_path.resolve())
    assert folder(None) == beside
    assert folder("") == beside
