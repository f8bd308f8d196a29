"""`a2a-interview demo`: the main job on the bundled agent (PROFILE §9; `make demo`)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from a2a_interview.cli import EXIT_OK, main
from a2a_interview.record import schema, standing_of


def test_demo_prints_a_consistent_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "Outcome: CONSISTENT" in out
    # interview §8: the tool interviewing the agent it serves is a claim, never evidence.
    assert "Standing: CLAIM" in out and "Ran by: self" in out
    assert "Conformance is not competence" in out  # interview §9 rule 1
    assert 'verified under the "served" reading' in out
    assert "FAIL" not in out


def test_demo_json_is_a_valid_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--json"]) == EXIT_OK
    record = json.loads(capsys.readouterr().out)
    jsonschema.validate(record, schema())  # PROFILE §8
    assert record["outcome"] == "consistent"
    assert standing_of(record) == "claim"
    assert [p["result"] for p in record["runs"][0]["proposals"]] == ["ok", "ok"]
