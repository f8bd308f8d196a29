"""Verifier vectors and their replay (docs/conformance.md, D-CONF-11): each recorded
exchange (the verifier against the honest test agent and each serving rogue) served
again by ``Replay`` on a new loopback origin brings the project's verifier to the
recorded verdict; one byte changed in one answer changes it; ``conformance replay FILE
--port N`` serves a vector as a process of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from a2a_interview.cli import main
from a2a_interview.conformance.replay import FORMAT, Replay, read
from a2a_interview.verifier import verify
from conformance_record import MODES, verdict
from support.servers import closed_port_url, serve

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "conformance" / "vectors" / "verifier"
FILES = sorted(p.name for p in VERIFIER.glob("*.json"))


def _replayed(exchanges: Any) -> dict[str, Any]:
    async def go(origin: str) -> dict[str, Any]:
        # Recorded thorough (D-TEST-45): every recorded ask is asked again.
        result = await verify(origin, churn_delay=0, thorough=True)
        document: dict[str, Any] = result.to_json()  # type: ignore[union-attr]
        return document

    with serve(lambda origin: Replay(exchanges, origin)) as origin:
        return anyio.run(go, origin)


def test_there_is_a_vector_for_the_honest_agent_and_each_rogue() -> None:
    """D-CONF-11: one verifier vector per mode, each of the verifier format."""
    assert sorted(f"{m.replace(' ', '-')}.json" for m in MODES) == FILES
    for name in FILES:
        assert json.loads((VERIFIER / name).read_bytes())["format"] == FORMAT


@pytest.mark.parametrize("name", FILES)
def test_the_verifier_reaches_the_recorded_verdict(name: str) -> None:
    """PROFILE §7: the verifier, pointed at the replayed exchange on another origin,
    reaches the recorded outcome, checks, conflicts and advisories."""
    exchanges, expected = read((VERIFIER / name).read_bytes())
    assert verdict(_replayed(exchanges)) == expected


def test_one_byte_changed_in_an_answer_changes_the_verdict() -> None:
    """The replay is not blind: the honest vector with one byte of its first identity
    answer changed (``Stonework`` to ``Stonewerk``) is no longer consistent."""
    exchanges, expected = read((VERIFIER / "honest.json").read_bytes())
    assert expected["outcome"] == "consistent"
    index = next(i for i, e in enumerate(exchanges)
                 if '"interview/identity"' in e.body
                 and any(n == "a2a-extensions" for n, _ in e.headers))  # fmt: skip
    answer = exchanges[index]
    changed = answer.response_body.replace('"value":"Stonework"', '"value":"Stonewerk"', 1)
    assert len(changed) == len(answer.response_body) and changed != answer.response_body
    exchanges[index] = replace(answer, response_body=changed)
    document = _replayed(exchanges)
    assert document["outcome"] != "consistent"
    assert "projection/value_mismatch" in verdict(document)["conflicts"][0]


def test_an_unrecorded_request_gets_404() -> None:
    """A request the recording does not hold is not guessed at."""
    exchanges, _ = read((VERIFIER / "honest.json").read_bytes())
    with serve(lambda origin: Replay(exchanges, origin)) as origin:
        assert httpx.get(origin + "/nothing/here", timeout=10).status_code == 404
        card = httpx.get(origin + "/.well-known/agent-card.json", timeout=10)
    assert card.status_code == 200 and origin in card.text and "{origin}" not in card.text


def test_the_replay_command_serves_a_vector(tmp_path: Path) -> None:
    """D-CLI-28: ``conformance replay FILE --port N`` serves the vector on loopback until
    stopped; a verifier pointed at it reaches the recorded outcome."""
    port = int(closed_port_url().rsplit(":", 1)[1])
    log = tmp_path / "replay.log"
    argv = [
        sys.executable,
        "-c",
        "from a2a_interview.cli import entry; entry()",
        "conformance",
        "replay",
        str(VERIFIER / "a-wrong-value.json"),
        "--port",
        str(port),
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)  # fmt: skip
    origin = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(origin + "/.well-known/agent-card.json", timeout=2).is_success:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        document = anyio.run(lambda: verify(origin, churn_delay=0, thorough=True))
    finally:
        process.terminate()
        process.wait(10)
    assert document.to_json()["outcome"] == "non_conformant"  # type: ignore[union-attr]
    assert "recorded outcome: non_conformant" in log.read_text()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["replay"], "needs FILE and --port"),
        (["replay", "no-such-file.json", "--port", "1"], "no-such-file.json"),
        (["http://x.test", "--port", "1"], "go with `conformance replay`"),
    ],
)
def test_replay_usage_errors_exit_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """D-CLI-28: one line, exit 2, nothing served."""
    assert main(["conformance", *argv]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("name", FILES)
def test_verifier_vectors_follow_their_schema(name: str) -> None:
    """D-CONF-11: each verifier vector validates against conformance/schema."""
    import jsonschema

    schema = json.loads((ROOT / "conformance" / "schema" / "verifier-vectors.schema.json")
                        .read_bytes())  # fmt: skip
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads((VERIFIER / name).read_bytes()), schema,
                        cls=jsonschema.Draft202012Validator)  # fmt: skip
