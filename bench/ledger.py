"""Ledger benchmark: records added per second to a SQLite store, beside the cost of the
checks every add makes (strict parse, runner signature, JCS digest). Prints ratios.

    .venv/bin/python bench/ledger.py [N]

Not a test: nothing here asserts a time. A PostgreSQL store is measured too when
``A2A_INTERVIEW_BENCH_PG`` names one (``postgresql://...``; its rows are left there).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from a2a_interview import nkeys
from a2a_interview.ledger import Ledger
from a2a_interview.ledger.store.columns import columns as _columns
from a2a_interview.record import sign_record
from a2a_interview.verifier import failed_record
from a2a_interview.verifier.state import VerifyOptions


def bodies(n: int) -> list[bytes]:
    seed = nkeys.generate_seed()
    options = VerifyOptions(party="platform", name="Bench")
    return [
        json.dumps(
            sign_record(failed_record(f"https://agent-{i}.example", options).to_json(), seed)
        ).encode()
        for i in range(n)
    ]


def rate(label: str, n: int, seconds: float) -> float:
    per = n / seconds
    print(f"{label:<44}{per:>10.0f} records/s")
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="?", type=int, default=2000, help="how many (2000)")
    n = parser.parse_args().records
    given = bodies(n)
    start = time.perf_counter()
    for body in given:
        _columns(body)
    checks = rate("checks alone (parse, signature, digest)", n, time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as folder, Ledger.open(Path(folder) / "b.db") as ledger:
        start = time.perf_counter()
        for body in given:
            ledger.add(body)
        lite = rate("SQLite add (one transaction each)", n, time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as folder, Ledger.open(Path(folder) / "b.db") as ledger:
        start = time.perf_counter()
        for at in range(0, n, 200):
            ledger.put_many(given[at : at + 200])
        batched = rate("SQLite put_many (200 a transaction: import)", n,
                       time.perf_counter() - start)  # fmt: skip
        start = time.perf_counter()
        agents = ledger.agents()
        seconds = time.perf_counter() - start
        print(f"{'SQLite agents() over ' + str(len(agents)) + ' agents':<44}"
              f"{seconds * 1000:>10.1f} ms")  # fmt: skip
    print(f"\nSQLite add / checks alone: {lite / checks:.2f}")
    print(f"SQLite put_many / checks alone: {batched / checks:.2f}")
    pg = os.environ.get("A2A_INTERVIEW_BENCH_PG")
    if pg:
        with Ledger.open(pg) as ledger:
            start = time.perf_counter()
            for body in given:
                ledger.add(body)
            per = rate("PostgreSQL add (one transaction each)", n, time.perf_counter() - start)
        print(f"PostgreSQL add / checks alone: {per / checks:.2f}")


if __name__ == "__main__":
    main()
