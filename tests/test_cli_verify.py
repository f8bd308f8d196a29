"""``a2a-interview verify``, ``ask`` and ``verify-many`` through ``main(argv)``, over real
loopback HTTP: exit codes (PROFILE §9), ``--json``, ``--record``, ``--junit``, and a
hostile crowd for verify-many."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from a2a_interview import nkeys
from a2a_interview.cli import main
from a2a_interview.record import schema, standing_of, verify_record_signature
from a2a_interview.spec import INTERVIEW_URI
from agents import Call, Reply, Wrap, honest, liar
from support.servers import closed_port_url, serve, serve_many

VALIDATOR = jsonschema.Draft202012Validator(schema())
FAST = ["--churn-delay", "0"]


def not_offered(origin: str) -> Any:
    def remove(card: dict[str, Any]) -> dict[str, Any]:
        exts = card["capabilities"]["extensions"]
        card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
        return card

    return honest(origin, edit_card=remove, self_check=False)


# --- verify ---------------------------------------------------------------------------


def test_verify_prints_the_report_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(honest) as origin:
        assert main(["verify", origin, *FAST]) == 0
    out = capsys.readouterr().out
    assert "Outcome: CONSISTENT" in out
    assert "Conformance is not competence" in out
    # third_party by default, but unsigned: a claim (PROFILE §8, D-RECORD-7)
    assert "Standing: CLAIM" in out


def test_verify_reading_proto_is_required_and_reported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # PROFILE §6.3 "a user may require one reading"; D-VERIFY-33: the
    # verifier's record says which reading verified.
    with serve(honest) as origin:
        assert main(["verify", origin, *FAST, "--reading", "proto", "--json"]) == 0
    signature = json.loads(capsys.readouterr().out)["agent"]["card_signature"]
    assert (signature["status"], signature["reading"], signature["readings"]) == (
        "verified",
        "proto",
        ["proto"],
    )
    assert main(["verify", "http://127.0.0.1:9/", "--reading", "protobuf"]) == 2
    assert "'served', 'prune-empty', 'proto'" in capsys.readouterr().err


def test_verify_json_record_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, junit = tmp_path / "r.json", tmp_path / "j.xml"
    with serve(liar) as origin:
        code = main(["verify", origin, *FAST, "--json", "--record", str(record),
                     "--junit", str(junit)])  # fmt: skip
    assert code == 1
    printed = json.loads(capsys.readouterr().out)
    VALIDATOR.validate(printed)
    assert printed["outcome"] == "non_conformant"
    assert json.loads(record.read_text()) == printed
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    failures = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failures == ["projection"]
    assert not list(tmp_path.glob(".*"))  # atomic writes leave no temporary files


def test_verify_exit_codes_for_not_offered_and_unreachable() -> None:
    with serve(not_offered) as origin:
        assert main(["verify", origin, *FAST]) == 4
    assert main(["verify", closed_port_url(), *FAST]) == 3


def test_verify_signed_self_run_is_a_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = nkeys.generate_seed()
    (tmp_path / "runner.seed").write_text(seed + "\n")
    with serve(honest) as origin:
        code = main(["verify", origin, *FAST, "--json", "--as", "self", "--name", "Stonework",
                     "--runner-key", str(tmp_path / "runner.seed")])  # fmt: skip
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert verify_record_signature(document).status == "valid"
    assert document["ran_by"]["key"] == nkeys.public_of(nkeys.private_key(seed))
    assert standing_of(document) == "claim" == document["standing"]


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "not a url"],
        ["verify", "ftp://x.example"],
        ["verify", "http://[::1"],
        ["verify", "http://x.example:port"],
        ["verify", "https://x.example", "--header", "no-colon"],
        ["verify", "https://x.example", "--header", "A2A-Extensions: x"],
        ["verify", "https://x.example", "--bearer-env", "A2A_INTERVIEW_TEST_UNSET"],
        ["verify", "https://x.example", "--runner-key", "/nonexistent/seed"],
        ["verify", "https://x.example", "--churn-delay", "-1"],
        ["verify", "https://x.example", "--as", "vendor"],
        ["ask", "https://x.example", "identity", "--skill", "x"],
        ["ask", "https://x.example", "bogus"],
        ["verify-many", "/nonexistent/list"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_runner_key_takes_the_seed_itself(capsys: pytest.CaptureFixture[str]) -> None:
    # PROFILE §9: --runner-key SEED (a file holding it works too, above).
    seed = nkeys.generate_seed()
    with serve(honest) as origin:
        assert main(["verify", origin, *FAST, "--json", "--runner-key", seed]) == 0
    document = json.loads(capsys.readouterr().out)
    assert verify_record_signature(document).status == "valid"
    assert document["ran_by"]["key"] == nkeys.public_of(nkeys.private_key(seed))
    assert main(["verify", "https://x.example", "--runner-key", "SUnot-a-seed"]) == 2
    assert "SUnot-a-seed" not in capsys.readouterr().err  # a seed is never echoed


def test_a_bad_runner_key_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "seed").write_text("SUnot-a-seed")
    assert main(["verify", "https://x.example", "--runner-key", str(tmp_path / "seed")]) == 2


def _guarded(origin: str) -> Any:
    def gate(call: Call) -> Reply | None:
        if "/a2a/" in call.path and (b"authorization", b"Bearer t0ken") not in call.headers:
            return Reply(401, [], b"")
        return None

    return Wrap(honest(origin), on_request=gate)


def test_bearer_env_and_authentication_required(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("A2A_INTERVIEW_TEST_TOKEN", "t0ken")
    with serve(_guarded) as origin:
        assert main(["verify", origin, *FAST]) == 3
        assert "authentication_required" in capsys.readouterr().out
        assert main(["verify", origin, *FAST, "--bearer-env", "A2A_INTERVIEW_TEST_TOKEN"]) == 0
        assert main(["verify", origin, *FAST, "--header", "Authorization: Bearer t0ken"]) == 0


# --- ask ------------------------------------------------------------------------------


def test_ask_prints_the_answer_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(honest) as origin:
        agent = honest(origin)
        assert main(["ask", origin, "terms", "--skill", "flag-exceptions"]) == 0
        assert (
            capsys.readouterr().out.encode()
            == agent.interview.answer("terms", "flag-exceptions") + b"\n"
        )
        assert main(["ask", origin, "usage", "--skill", "nothing-like-it"]) == 0
        assert capsys.readouterr().out.encode() == agent.interview.refusal + b"\n"
    with serve(not_offered) as origin:
        assert main(["ask", origin, "identity"]) == 4
    assert main(["ask", closed_port_url(), "identity"]) == 3


def test_ask_a_card_url_that_fails_is_unreachable_not_absence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # As verify (incomplete reason card_status, exit 3): a card that cannot be read says
    # nothing about whether the interview is offered (interview §9 rule 2).
    def down(call: Call) -> Reply | None:
        return Reply(503, [], b"") if call.path.endswith("agent-card.json") else None

    with serve(lambda o: Wrap(honest(o), on_request=down)) as origin:
        assert main(["ask", origin, "identity"]) == 3
        assert "not offered" not in capsys.readouterr().err
        assert main(["verify", origin, *FAST]) == 3


# --- verify-many ----------------------------------------------------------------------


def _slow(origin: str) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(30)  # a peer that never answers in time

    return app


def _huge(origin: str) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        chunk = b" " * 65536
        for _ in range(64):  # 4 MiB of nothing, beyond the 1 MiB bound
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"{}"})

    return app


def _garbage(origin: str) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"\x00\xffnot json at all"})

    return app


def test_verify_many_survives_a_hostile_crowd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    factories: list[Callable[[str], Any]] = [honest, _slow, liar, _huge, _garbage, honest]
    out = tmp_path / "records.jsonl"
    with serve_many(factories) as origins:
        urls = [*origins, closed_port_url()]
        listing = tmp_path / "agents.txt"
        listing.write_text("# the crowd\n\n" + "\n".join(urls) + "\n")
        started = time.monotonic()
        code = main(["verify-many", str(listing), "--out", str(out), "--concurrency", "3",
                     "--agent-timeout", "2", *FAST])  # fmt: skip
        elapsed = time.monotonic() - started
    assert code == 1  # the liar is non_conformant
    assert elapsed < 8, elapsed  # the slow agent held only its own slot, for 2 s
    lines = out.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["agent"]["url"] for r in records] == urls  # one per agent, in file order
    for record in records:
        VALIDATOR.validate(record)
    assert [r["outcome"] for r in records] == [
        "consistent", "unreachable", "non_conformant", "unreachable", "unreachable",
        "consistent", "unreachable",
    ]  # fmt: skip
    reasons = [r.get("incomplete", {}).get("reason") for r in records]
    assert reasons == [None, "deadline", None, "too_large", "card_unreadable", None,
                       "connect_failed"]  # fmt: skip
    err = capsys.readouterr().err
    assert "non_conformant" in err and "agents/s" in err
    assert "verify-many 7/7" in err  # the progress (plain: not a terminal) reached the end


def test_verify_many_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(honest) as origin:
        listing = tmp_path / "one.txt"
        listing.write_text(origin + "\n")
        assert main(["verify-many", str(listing), "--no-progress", *FAST]) == 0
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    assert json.loads(line)["outcome"] == "consistent"
    assert "verify-many" not in captured.err  # no progress


def test_unwritable_outputs_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "no" / "such" / "dir" / "r.json")
    with serve(honest) as origin:
        assert main(["verify", origin, *FAST, "--record", missing]) == 2
        listing = tmp_path / "one.txt"
        listing.write_text(origin + "\n")
        assert main(["verify-many", str(listing), "--out", missing, *FAST]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err
