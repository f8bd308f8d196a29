"""What ``make test`` shows: every skip with its reason (docs/decisions.md, "Interop and
the test suite": a missing part skips with the reason outside CI, so the reason must be
seen, not only counted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from needs import ROOT


def test_the_suite_prints_every_skip_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n"
        "def test_one():\n    pytest.skip('the corpus is missing: get it there')\n\n"
        "def test_two():\n    pytest.skip('redis-server is missing: apt-get install it')\n"
    )
    # The project's own pytest configuration, as `make test` runs it.
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), str(tmp_path / "test_skips.py")],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    ).stdout  # fmt: skip
    assert "2 skipped" in out
    assert "SKIPPED" in out
    assert "the corpus is missing: get it there" in out
    assert "redis-server is missing: apt-get install it" in out
