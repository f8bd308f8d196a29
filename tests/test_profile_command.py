"""The profile ships with the package: help texts cite ``docs/profile.md §N``, which an
installed wheel does not hold, so ``src/a2a_interview/profile.md`` is a copy of it (held
identical here: after editing docs/profile.md, ``cp docs/profile.md
src/a2a_interview/profile.md``) and ``a2a-interview profile [N]`` prints it (PROFILE §9:
the command line; docs/decisions.md D-EXTRAS-4)."""

from __future__ import annotations

import re
import tomllib

import pytest

from a2a_interview.cli import main
from a2a_interview.cli.profile import profile_text, section
from needs import ROOT

DOCS = ROOT / "docs" / "profile.md"
SHIPPED = ROOT / "src" / "a2a_interview" / "profile.md"


def test_the_shipped_profile_is_docs_profile_md() -> None:
    assert SHIPPED.read_bytes() == DOCS.read_bytes(), (
        "src/a2a_interview/profile.md differs: cp docs/profile.md src/a2a_interview/profile.md"
    )
    assert profile_text() == DOCS.read_text("utf-8")


def test_the_wheel_carries_it_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert "profile.md" in config["tool"]["setuptools"]["package-data"]["a2a_interview"]


def test_profile_prints_all_or_one_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile"]) == 0
    assert capsys.readouterr().out == DOCS.read_text("utf-8")
    assert main(["profile", "7"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## 7. Verifier\n") and "## 8." not in out
    assert "credentials_not_sent" in out
    assert main(["profile", "3b"]) == 0
    assert capsys.readouterr().out.startswith("## 3b. HTTP+JSON binding\n")
    assert main(["profile", "3.10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## 3. JSON-RPC binding\n\n10. **Version.**")
    assert "\n11. " not in out and "## 3b" not in out


@pytest.mark.parametrize("wanted", ["10", "3.99", "x", "7.1.2"])
def test_an_unknown_section_is_a_usage_error(
    wanted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profile", wanted]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_citation_in_the_sources_is_a_section_the_command_prints() -> None:
    # The class, not one citation: every "docs/profile.md §N" the help texts and
    # messages name resolves to a section or rule of the shipped profile.
    text = profile_text()
    cited = set()
    for path in (ROOT / "src" / "a2a_interview").rglob("*.py"):
        cited |= set(re.findall(r"docs/profile\.md`? §(\d+[a-z]?(?:\.\d+)?)", path.read_text()))
    assert len(cited) >= 5
    for wanted in sorted(cited):
        assert section(text, wanted).strip(), wanted
