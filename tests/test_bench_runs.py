"""The benchmarks still run (docs/benchmarks.md): every script in ``bench/`` teaches its
use with ``--help``, and the ledger benchmarks, which build records the store must
accept, and the population bench (on the PostgreSQL it starts) run end to end at their
smallest. A benchmark is not a test of speed (nothing here reads a time); this only
keeps a bench from rotting while the rules it feeds move:
``bench/ledger_web.py`` filed records that record sanity (PROFILE §8) refuses, and
stopped at its first record, with no test to say so.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pg import _bindir, missing

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted(path.name for path in (ROOT / "bench").glob("*.py"))


def run(*args: str, timeout: float = 300, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "A2A_INTERVIEW_STORE"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env=env,
    )  # fmt: skip


@pytest.mark.parametrize("bench", BENCHES)
def test_every_bench_teaches_its_use(bench: str, tmp_path: Path) -> None:
    # From an empty folder, which stays empty: a bench that took --help for a store's
    # path once left a SQLite file named "--help" in the repository.
    done = run(str(ROOT / "bench" / bench), "--help", timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: "), done.stdout[:200]
    assert done.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_the_ledger_page_bench_runs_at_its_smallest() -> None:
    done = run("bench/ledger_web.py", "--agents", "3", "--history", "3", "--rounds", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("filled 3 agents + one with 3 records in ")
    assert [line.split()[0] for line in lines[2:]] == ["index", "GET", "agent", "GET"]


def test_the_ledger_scale_bench_runs_at_its_smallest(tmp_path: Path) -> None:
    store = str(tmp_path / "scale.db")
    done = run("bench/ledger_scale.py", "--store", store, "--agents", "20", "--per-agent",
               "1", "--history", "3", "--requests", "4", "--import", "3",
               "--distinct-runners")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "filled 23 records for 21 agents" in done.stdout
    for case in ("index, random page", "search, random agent", "/api/agents, random page",
                 "search, 3 random characters", "search, 1-2 characters (400)"):  # fmt: skip
        assert any(line.startswith(case) for line in done.stdout.splitlines()), case
    # put_many and the ledger import command, into the full store and an empty one.
    assert done.stdout.count("records/s") == 4
    # --distinct-runners: no two of the agents' lines name the same runner.
    with sqlite3.connect(store) as db:
        names = db.execute(
            "SELECT COUNT(DISTINCT runner_name) FROM ledger_records WHERE card_url LIKE ?",
            ("https://agent-%",),
        ).fetchone()
    assert names == (20,)


def test_the_ledger_store_bench_runs_at_its_smallest() -> None:
    done = run("bench/ledger.py", "20")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "records/s" in done.stdout


def test_the_population_bench_runs_at_its_smallest() -> None:
    # Both paths end to end (docs/decisions.md D-TEST-48): verify-many --store, then
    # ledger schedule + workers on the PostgreSQL the bench starts; it stops by itself.
    if _bindir() is None:
        missing("PostgreSQL binaries not found (apt-get install postgresql)")
    done = run("bench/population.py", "--agents", "10", "--latency", "0-0", "--deadline",
               "20", "--timeout", "240")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("10 agents, 0-0 ms added")
    for path in ("verify-many --store PG", "ledger schedule", "2 x worker --once",
                 "schedule + workers"):  # fmt: skip
        assert any(line.startswith(path) and "agents/s" in line for line in lines), path
    report = json.loads(done.stdout[done.stdout.index("\n{") :])
    assert report["agents"] == 10
    assert set(report) >= {"verify_many", "workers", "schedule_and_workers"}
