"""verify-many across worker processes (issue 9 item 4): the same records as one process,
one per agent, in file order; a worker that dies loses no line."""

from __future__ import annotations

import json
import multiprocessing
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from a2a_interview.cli import main
from a2a_interview.ijson import JSONObject
from a2a_interview.verifier import VerifyOptions
from a2a_interview.verifier.many import verify_many
from agents import honest, liar
from servers import serve_many


def _dies_in_a_worker() -> datetime:
    """A clock that kills any worker process that reads it (module level: it pickles)."""
    if multiprocessing.parent_process() is not None:
        os._exit(7)
    return datetime.now(UTC)


def _outcomes(path: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["agent"]["url"], r["outcome"]) for r in records]


def test_workers_give_the_records_one_process_gives(tmp_path: Path) -> None:
    factories: list[Any] = [honest, liar] * 9
    with serve_many(factories) as origins:
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        results = {}
        for workers in ("1", "2"):
            out = tmp_path / f"records-{workers}.jsonl"
            code = main(["verify-many", str(listing), "--out", str(out), "--no-progress",
                         "--churn-delay", "0", "--workers", workers])  # fmt: skip
            assert code == 1  # the liars are non_conformant
            results[workers] = _outcomes(out)
    expected = [(o, "consistent" if i % 2 == 0 else "non_conformant") for i, o in
                enumerate(origins)]  # fmt: skip
    assert results["1"] == expected  # one record per agent, in the file's order
    assert results["2"] == expected


def test_a_worker_that_dies_loses_no_line() -> None:
    # Every agent gets exactly one record even when the worker verifying it is killed:
    # an unreachable record saying why, never a missing line.
    seen: list[tuple[int, str]] = []
    with serve_many([honest] * 16) as origins:
        verify_many(
            origins,
            VerifyOptions(churn_delay=0, clock=_dies_in_a_worker),
            concurrency=4,
            workers=2,
            emit=lambda index, line, document: seen.append((index, document["outcome"])),
        )
    assert sorted(index for index, _ in seen) == list(range(16))
    assert {outcome for _, outcome in seen} == {"unreachable"}


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_workers_must_be_positive(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify-many", "-", "--workers", value]) == 2
    assert "--workers" in capsys.readouterr().err


def test_an_unparsable_url_gets_its_record_without_credentials() -> None:
    # verify never raises for its input URL (PROFILE §7 unreachable): an unclosed IPv6
    # bracket raised ValueError from without_credentials, in verify and again in
    # failed_record, so verify_many's task group lost every line.
    seen: list[JSONObject] = []
    verify_many(["https://user:secret@[::1", "https://[fd00::1"],
                VerifyOptions(churn_delay=0), emit=lambda _i, _l, d: seen.append(d))  # fmt: skip
    assert [d["outcome"] for d in seen] == ["unreachable", "unreachable"]
    assert all("secret" not in json.dumps(d) for d in seen)
    assert {d["agent"]["url"] for d in seen} == {"https://[::1", "https://[fd00::1"}
