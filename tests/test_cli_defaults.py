"""The command line's defaults are the library's own, and the text that states a default
states the code's (D-CLI-39)."""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Iterator

from a2a_interview.cli import build_parser
from a2a_interview.cli.options import verify_options
from a2a_interview.verifier import VerifyOptions
from a2a_interview.verifier.client import ClientOptions
from needs import ROOT


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]  # type: ignore[no-any-return]
    raise AssertionError(name)


def test_verify_without_options_runs_with_the_library_defaults() -> None:
    """D-CLI-39: ``verify URL`` makes exactly ``VerifyOptions()`` (its ``ClientOptions``
    included), so a default changed in the library changes the command's, and an
    argparse default that restates one differently fails here."""
    args = build_parser().parse_args(["verify", "https://agent.example"])
    made = verify_options(args)
    library = VerifyOptions()
    for field in dataclasses.fields(VerifyOptions):
        assert getattr(made, field.name) == getattr(library, field.name), field.name
    assert made.client == ClientOptions()


def test_ask_timeout_is_the_client_default() -> None:
    """D-CLI-39: ``ask --timeout`` defaults to ``ClientOptions().timeout``."""
    args = build_parser().parse_args(["ask", "https://agent.example", "identity"])
    assert args.timeout == ClientOptions().timeout


def _numeric_defaults() -> dict[str, float]:
    """Every option of ``verify`` and ``ask`` with a number for its default."""
    out: dict[str, float] = {}
    for command in ("verify", "ask"):
        for action in _subparser(command)._actions:
            default = action.default
            if isinstance(default, int | float) and not isinstance(default, bool):
                for option in action.option_strings:
                    if option.startswith("--"):
                        out[option] = float(default)
    return out


def _stated(text: str, option: str) -> Iterator[float]:
    """The defaults ``text`` states for ``option``: "`--opt` (default N", "`--opt S`,
    default N", "`--opt` (N)"."""
    name = re.escape(option)
    for pattern in (
        rf"`{name}(?: [A-Z]+)?`,? \(?default (?:and ceiling )?(\d[\d,]*(?:\.\d+)?)",
        rf"`{name}` \((\d[\d,]*)\)",
    ):
        for match in re.finditer(pattern, text):
            yield float(match.group(1).replace(",", ""))


def test_documented_defaults_are_the_code_defaults() -> None:
    """D-CLI-39: each default README and docs state for an option of ``verify`` or
    ``ask`` is the parser's; the options named here must be found stated at least
    once, so the check cannot pass by reading nothing."""
    defaults = _numeric_defaults()
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        for option, default in defaults.items():
            for stated in _stated(text, option):
                assert stated == default, (path.name, option, stated, default)
                found.add(option)
    assert {"--deadline", "--max-skills", "--churn-delay", "--timeout"} <= found


def test_help_states_the_code_defaults() -> None:
    """D-CLI-39: ``verify --help`` states each numeric default as the parser holds it."""
    parser = _subparser("verify")
    text = " ".join(parser.format_help().split("\n\n", 1)[1].split())
    checked = 0
    for option, default in _numeric_defaults().items():
        entry = re.search(rf"{re.escape(option)} [A-Z]+ ((?:(?! --[a-z]).)*)", text)
        if entry is not None and "default" in entry.group(1):
            assert re.search(rf"default (?:and 0: )?{default:g}\b", entry.group(1)), option
            checked += 1
    assert checked >= 4
