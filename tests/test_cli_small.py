"""Small things a first hour trips on: the answer command's note, one spelling of who ran a
record, the top-level help, the licence (docs/profile.md §8, §9; README "Install")."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path

import pytest

from a2a_interview.cli import main
from a2a_interview.report import render_report, who_ran
from a2a_interview.verifier import VerifyOptions, failed_record
from needs import ROOT

REFERENCE = ROOT / "src" / "a2a_interview" / "reference"


def test_answer_notes_the_unread_proposals_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `answer card.json identity` printed its "no --proposal" note once per entry, and
    # twice for a url two entries commit to.
    card = json.loads((REFERENCE / "stonework-card.json").read_text())
    for extension in card["capabilities"]["extensions"]:
        if extension["uri"].endswith("/a2a-terms/v1"):
            first = extension["params"]["proposals"][0]
            extension["params"]["proposals"].append(copy.deepcopy(first))
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    assert main(["answer", str(path), "identity"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "--proposal" in line]
    assert len(notes) == 1
    assert notes[0].count(repr(first["url"])) == 1
    assert notes[0].endswith("not needed for identity")


@pytest.mark.parametrize(
    ("party", "name", "key"),
    [("third_party", "anonymous", None), ("platform", 'Acme "Market"', None)],
)
def test_record_verify_and_the_report_name_the_runner_in_one_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], party: str, name: str, key: None
) -> None:
    # `record verify` printed `ran by: "third_party" "anonymous"` where the report of
    # `verify` and `record show` printed `third_party "anonymous"`.
    options = VerifyOptions(party=party, name=name)  # type: ignore[arg-type]
    record = failed_record("http://127.0.0.1:9/", options).to_json()
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    assert main(["record", "verify", str(path)]) == 1
    printed = capsys.readouterr().out
    expected = f"{party} {json.dumps(name)}"
    assert who_ran(record["ran_by"]) == expected
    assert f"ran by: {expected}\n" in printed
    assert f"Ran by: {expected}\n" in render_report(record)


def test_top_level_help_names_declare_and_every_ledger_action(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    text = re.sub(r"\s+", " ", capsys.readouterr().out)
    proxy = text[text.index(" proxy ") : text.index(" ledger ")]
    assert "--declare" in proxy
    ledger = text[text.index(" ledger ") : text.index(" worker ")]
    for action in ("import", "list", "show", "export", "migrate", "schedule", "serve"):
        assert action in ledger


def test_the_licence_is_in_the_repository_and_named_for_the_wheel() -> None:
    # pyproject said Apache-2.0 with no LICENSE file in the repository or the wheel
    # (tests/test_install_extras.py checks the wheel itself).
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
