"""verify-many with ``--store`` beside without: what keeping every record costs. Prints ratios.

    nice -n 10 .venv/bin/python bench/verify_many.py                  # 1,000 agents, 3 rounds
    nice -n 10 .venv/bin/python bench/verify_many.py --agents 200 --rounds 1   # a quick look

N agents (the core-only test agent of ``tests/agents.py``), each on its own loopback port,
are served by one uvicorn process. The real command (``a2a-interview verify-many FILE
--out ... --no-progress``, a fresh process each time) then verifies all of them, round
after round, alternately without a store and with ``--store`` a fresh SQLite file (the
order reversed every other round). Agents per second is N over the command's wall time,
start-up and the store's migrations included; the figure is the median of the per-round
ratios (with ÷ without), the range beside it. Then the last run's records are stored
alone, one transaction each (how verify-many stored them before) and all in one (how it
stores them now).

Not a test: nothing asserts a time. Both sides share the machine, the agents and the
moment; the ratio travels better than the absolute figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()"]


def _serve(count: int) -> None:
    """Child process: serve ``count`` honest agents, print their origins, wait for EOF."""
    sys.path.insert(0, str(ROOT / "tests"))
    from agents import honest
    from support.servers import serve_many

    with serve_many([honest] * count) as origins:
        print(json.dumps(origins), flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def agents(count: int) -> Iterator[list[str]]:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(count)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        origins: list[str] = json.loads(child.stdout.readline())
        yield origins
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)


def run(listing: Path, work: Path, store: bool, extra: list[str]) -> tuple[float, int]:
    """One verify-many: (seconds, records written)."""
    out = work / "records.jsonl"
    argv = [*CLI, "verify-many", str(listing), "--out", str(out), "--no-progress", *extra]
    if store:
        ledger = work / f"ledger-{time.monotonic_ns()}.db"
        argv += ["--store", str(ledger)]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"verify-many exited {done.returncode}:\n{done.stderr[-2000:]}")
    if store and f"stored {len(listing.read_text().split())} record(s)" not in done.stderr:
        raise SystemExit(f"the records were not all stored:\n{done.stderr[-2000:]}")
    return elapsed, len(out.read_text().splitlines())


def store_alone(work: Path) -> tuple[float, float]:
    """The last run's records stored into fresh SQLite files: one transaction per record
    (``Ledger.add``, how verify-many stored them before) and one for all
    (``Ledger.put_many``, how it stores them now). Seconds for each."""
    from a2a_interview.ledger import Ledger

    lines = [line.encode() for line in (work / "records.jsonl").read_text().splitlines()]
    with Ledger.open(str(work / "each.db")) as ledger:
        start = time.perf_counter()
        for line in lines:
            ledger.add(line)
        each = time.perf_counter() - start
    with Ledger.open(str(work / "once.db")) as ledger:
        start = time.perf_counter()
        ledger.put_many(lines)
        once = time.perf_counter() - start
    return each, once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("extra", nargs="*", help="more verify-many options, after --")
    args = parser.parse_args()
    if args.serve is not None:
        _serve(args.serve)
        return
    results: dict[bool, list[float]] = {False: [], True: []}
    ratios: list[float] = []
    with agents(args.agents) as origins, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        listing = work / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        warm = work / "warm.txt"
        warm.write_text("\n".join(origins[:20]) + "\n")
        run(warm, work, False, args.extra)  # warm: imports, page cache
        for round_ in range(args.rounds):
            rate: dict[bool, float] = {}
            for store in (False, True) if round_ % 2 == 0 else (True, False):
                seconds, written = run(listing, work, store, args.extra)
                assert written == args.agents
                rate[store] = args.agents / seconds
                results[store].append(rate[store])
            ratios.append(rate[True] / rate[False])
            print(f"round {round_ + 1}: without {rate[False]:.1f} agents/s, "
                  f"with --store {rate[True]:.1f} agents/s, ratio {ratios[-1]:.2f}",
                  flush=True)  # fmt: skip
        store_each, store_once = store_alone(work)
    report: dict[str, Any] = {
        "agents": args.agents,
        "rounds": args.rounds,
        "without_store_agents_per_s": round(statistics.median(results[False]), 1),
        "with_store_agents_per_s": round(statistics.median(results[True]), 1),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
        "store_one_transaction_each_s": round(store_each, 2),
        "store_one_transaction_for_all_s": round(store_once, 2),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
