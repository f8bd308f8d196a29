"""``docs/security.md`` names, for each defence, the test that shows it (issue 8 "What to
build" 5). A named test that does not exist is a defence nobody checks: this keeps the
page honest."""

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
