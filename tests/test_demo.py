"""`a2a-interview demo`: the main job on the bundled agent (PROFILE §9; `make demo`)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from a2a_interview.cli import main
from a2a_interview.cli.usage import EXIT_OK
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


@pytest.mark.anyio
@pytest.mark.parametrize("path", ["/a2a/jsonrpc", "/a2a/jsonrpc/"])
async def test_the_demo_answers_both_jsonrpc_spellings(path: str) -> None:
    # D-CLI-9: README's "The A2A TCK" recommends serving `{url}/` beside the card's
    # URL (the TCK posts there); the demo itself must follow it, ordinary calls and the
    # interview (PROFILE §3.1: served at the same URL as the core methods) alike.
    import httpx

    from a2a_interview.server import demo
    from a2a_interview.spec import INTERVIEW_URI

    origin = "http://127.0.0.1:8000"
    app = demo.build_app(origin)
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "tck"}]}}}  # fmt: skip
    identity = {"jsonrpc": "2.0", "id": 2, "method": "interview/identity"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=origin) as http:
        sent = await http.post(path, json=send, headers={"A2A-Version": "1.0"})
        activated = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10
        answer = await http.post(path, json=identity, headers=activated)
    assert sent.status_code == 200
    artifact = sent.json()["result"]["task"]["artifacts"][0]
    assert artifact["parts"] == [{"text": "Stonework demo: tck"}]
    assert answer.status_code == 200
    assert answer.json()["result"]["question"] == "identity"
