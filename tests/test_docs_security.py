"""``docs/security.md`` names, for each defence, the test that shows it
(D-TEST-31). A named test that does not exist is a defence nobody checks, and so is an
entry that names none, or only a file: every entry names at least one test function
that exists (D-TEST-31). This keeps the page honest."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?(?:\[\w+\])?`")


def _entries() -> list[str]:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    entries, current = [], ""
    for line in text.splitlines():
        if line.startswith(("- ", "#")) or not line.strip():
            if current:
                entries.append(current)
            current = line if line.startswith("- ") else ""
        elif current:
            current += " " + line.strip()
    return [*entries, current] if current else entries


def test_every_named_test_exists() -> None:
    checked = 0
    for entry in _entries():
        current: Path | None = None
        for file, name in TOKEN.findall(entry):
            if file:
                current = ROOT / file
            if current is None or (not file and not name):
                continue
            assert current.exists(), f"{current.name} does not exist: {entry[:80]}"
            if name:
                source = current.read_text(encoding="utf-8")
                assert re.search(rf"def {name}\(", source), f"{current.name}::{name} is gone"
                checked += 1
    assert checked >= 30  # the page names tests; a parser that finds none checks nothing


def _named_tests(entry: str) -> list[tuple[Path, str]]:
    """The (file, function) pairs an entry names; ``::name`` goes with the file last named."""
    named, current = [], None
    for file, name in TOKEN.findall(entry):
        if file:
            current = ROOT / file
        if current is not None and name:
            named.append((current, name))
    return named


def _exists(path: Path, name: str) -> bool:
    return (
        path.exists() and re.search(rf"def {name}\(", path.read_text(encoding="utf-8")) is not None
    )


def test_every_entry_names_a_test_function_that_exists() -> None:
    # D-TEST-31: an entry without a test function ("the runner key must be none of the
    # agent's keys", once) is a defence nobody shows; naming a whole file is not enough.
    entries = _entries()
    assert len(entries) >= 50  # the parser reads the page's entries
    bare = [e[:90] for e in entries if not any(_exists(*t) for t in _named_tests(e))]
    assert bare == [], "name a test function (tests/test_x.py::test_name) in these entries"


def test_the_entry_rule_can_fail() -> None:
    # The control: a file alone, a missing function and no name at all are each bare.
    assert not _named_tests("- **A.** Shown by `tests/test_strictjson.py`.")
    assert not any(_exists(*t) for t in _named_tests("- **B.** `tests/test_strictjson.py::nope`."))
    assert _named_tests("- **C.** Nothing named.") == []
    good = "- **D.** `tests/test_strictjson.py::test_rejections_are_typed`, `::nope`."
    assert [_exists(*t) for t in _named_tests(good)] == [True, False]
