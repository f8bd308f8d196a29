"""Ledger at scale: 100,000 agents, about 300,000 records.

    nice -n 10 .venv/bin/python bench/ledger_scale.py --store /tmp/scale.db
    nice -n 10 .venv/bin/python bench/ledger_scale.py --store postgresql://USER@127.0.0.1:PORT/DB

1. Fills the store in bulk (``--agents`` agents, ``--per-agent`` records each, and one
   agent with ``--history`` records), bypassing the write path: what is measured here is
   reading. The bodies are real verifier records (``tests/ledger_records.py``; mostly
   the small ones, one in 20 a full interview), signed; a list line is read from the
   columns kept at write time, a record shown in full has its runner signature checked
   and its standing recomputed; the per-agent summary is built as migration 0005 does.
   With ``--distinct-runners`` every record gets a runner name of its own in its list
   column, so no two lines of the index show the same result cells, which the page
   keeps by what they show (``ledger/memo.py``): the page's worst case.
2. Serves the store with ``a2a-interview ledger serve`` (uvicorn; ``--workers``
   processes, the command's default without it) and sends ``--requests`` requests per
   case from 8 parallel clients over loopback HTTP, each to a random page (keyset
   paging: the page after a random agent's card URL, as a "next" link gives it) or a
   random search: the index, a search, ``/api/agents``, a search of 3 random characters
   (the shortest the index answers), one of 1-2 characters (refused: 400, D-STORE-23);
   then the agent page of the agent
   with ``--history`` results, from one client. Each case is measured after 32
   unmeasured requests (a worker's first read of the totals is on a request's time,
   and older versions compiled their templates then). Prints p50 and p99 per case,
   and the load average before and after.
3. Import: ``--import`` fresh signed records (sane, small) into this full store and,
   side by side, into an empty one of the same kind, through the store's own write
   path (``put_many``, 500 a transaction, as ``ledger import``) and through the
   ``ledger import`` command on a JSON Lines file (its start-up included); prints the
   rates. ``--import-only --skip-fill`` measures only these.

Not a test: nothing asserts a time. Run it under ``nice`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from a2a_interview import nkeys  # noqa: E402
from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.ledger.store import records  # noqa: E402
from a2a_interview.ledger.store.columns import columns as _columns  # noqa: E402
from a2a_interview.record import sign_record  # noqa: E402
from a2a_interview.spec import CARD_PATH  # noqa: E402
from ledger_records import build  # noqa: E402

BUSY = "https://busy.example/.well-known/agent-card.json"


def templates(count: int) -> list[dict[str, object]]:
    """``count`` rows' worth of signed real records (their columns, as ``_columns`` gives
    them), each a different run."""
    made = build()
    # Mostly small records (not offered, not completed: about 2 KB), one in 20 a full
    # interview (15-33 KB): 300,000 full ones would be some 6 GB on a shared disk.
    small = [json.loads(b) for b in made.bodies if len(b) < 4000]
    large = [json.loads(b) for b in made.bodies if len(b) >= 4000]
    out = []
    seed = nkeys.generate_seed()
    for i in range(count):
        pool = large if i % 20 == 0 else small
        base = json.loads(json.dumps(pool[i % len(pool)]))
        base.pop("signatures", None)
        if base["ran_by"]["party"] != "self":
            base["ran_by"].pop("key", None)
            base["ran_by"]["name"] = f"Bench runner {i % 7}"
            base = sign_record(base, seed)
        base["finished_at"] = base["finished_at"]  # kept: sane and in the past
        out.append(_columns(json.dumps(base).encode()))
    return out


def fill(url: str, agents: int, per_agent: int, history: int, distinct: bool = False) -> None:
    with Ledger.open(url) as ledger:
        engine = ledger._engine  # bulk: the point here is reading
    rows = templates(400)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    stored = datetime.now(UTC) - timedelta(days=1)
    n = 0

    def batch() -> list[dict[str, object]]:
        nonlocal n
        out = []
        for i in range(agents):
            card = f"https://agent-{i:06d}.example/.well-known/agent-card.json"
            for j in range(per_agent):
                n += 1
                row = dict(rows[n % len(rows)])
                moment = start + timedelta(days=j, seconds=i)
                row.update(digest=f"sha256:{n:064x}", card_url=card, agent_url=card,
                           started_at=moment, finished_at=moment, stored_at=stored,
                           agent_name=f"Bench Agent {i:06d}")  # fmt: skip
                if distinct:  # every line's cells differ: nothing for the page to keep
                    row["runner_name"] = f"Bench runner {n}"
                out.append(row)
        for j in range(history):
            n += 1
            row = dict(rows[n % len(rows)])
            moment = start + timedelta(minutes=j)
            row.update(digest=f"sha256:{n:064x}", card_url=BUSY, agent_url=BUSY,
                       started_at=moment, finished_at=moment, stored_at=stored)  # fmt: skip
            out.append(row)
        return out

    everything = batch()
    began = time.perf_counter()
    with engine.begin() as connection:
        for at in range(0, len(everything), 5000):
            connection.execute(records.insert(), everything[at : at + 5000])
        connection.execute(
            sa.text(
                "INSERT INTO ledger_agents (card_url, latest_id, results, evidence, "
                "last_received, name, search) SELECT card_url, (SELECT r2.id FROM "
                "ledger_records r2 WHERE r2.card_url = r.card_url ORDER BY r2.finished_at "
                "DESC, r2.id DESC LIMIT 1), COUNT(*), SUM(CASE WHEN standing = 'evidence' "
                "THEN 1 ELSE 0 END), MAX(stored_at), MAX(agent_name), card_url || :nl || "
                "COALESCE(MAX(agent_name), '') FROM ledger_records r GROUP BY card_url"
            ),
            {"nl": "\n"},
        )
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                sa.text("VACUUM ANALYZE")
            )
    engine.dispose()
    print(f"filled {len(everything):,} records for {agents + 1:,} agents "
          f"in {time.perf_counter() - began:.0f} s (bulk)")  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def load(origin: str, paths: list[str], clients: int, status: int = 200) -> list[float]:
    times: list[float] = []
    lock = threading.Lock()
    work = list(paths)

    def client() -> None:
        with httpx.Client(base_url=origin, timeout=60) as c:
            while True:
                with lock:
                    if not work:
                        return
                    path = work.pop()
                began = time.perf_counter()
                answer = c.get(path)
                spent = time.perf_counter() - began
                assert answer.status_code == status, (path, answer.status_code)
                with lock:
                    times.append(spent)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


def serve_and_measure(url: str, agents: int, requests: int, workers: int | None) -> None:
    port = free_port()
    more = [] if workers is None else ["--workers", str(workers)]
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "a2a-interview"), "ledger", "serve", "--store", url,
         "--port", str(port), *more],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    origin = f"http://127.0.0.1:{port}"
    try:
        # A store last opened by another release has its standing read anew on open
        # (D-STORE-6): minutes at this size. Run `ledger migrate` on it first.
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(origin + "/api/openapi.json", timeout=2)
                break
            except httpx.HTTPError:
                if server.poll() is not None:
                    raise SystemExit("ledger serve failed: " + server.stderr.read()) from None
                if time.monotonic() > deadline:
                    raise SystemExit(
                        "ledger serve did not answer within 60 s: a store another release "
                        "opened last is read anew first; run `a2a-interview ledger migrate "
                        "--store ...` on it, then the bench"
                    ) from None
                time.sleep(0.2)
        rng = random.Random(7)

        def short(size: int, letters: str = "abcdefghijklmnopqrstuvwxyz0123456789") -> str:
            return quote("".join(rng.choice(letters) for _ in range(size)), safe="")

        def after() -> str:
            card = f"https://agent-{rng.randint(0, agents - 1):06d}.example{CARD_PATH}"
            return "after=" + quote(card, safe="")

        cases = {
            "index, random page": [f"/?{after()}" for _ in range(requests)],
            "search, random agent": [
                f"/?q=agent-{rng.randint(0, agents - 1):06d}" for _ in range(requests)
            ],
            "/api/agents, random page": [f"/api/agents?{after()}" for _ in range(requests)],
            # The shortest search answered (trigrams: many match, or none): the index.
            "search, 3 random characters": [f"/?q={short(3)}" for _ in range(requests)],
            # 1-2 characters: no trigram; refused (400) rather than read every agent.
            "search, 1-2 characters (400)": [
                f"/?q={short(rng.randint(1, 2), 'abcxyz019-.%')}" for _ in range(requests)
            ],
        }
        print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        print(f"{'case (8 parallel clients)':34} {'p50 ms':>8} {'p99 ms':>8} {'n':>5}")
        for name, paths in cases.items():
            # Unmeasured first: each worker process reads the totals on its first request
            # (later, beside its requests), and older versions compiled their templates.
            status = 400 if "(400)" in name else 200
            load(origin, [p.replace("agent-", "agent-9") for p in paths[:32]], 8, status)
            p50, p99 = percentiles(load(origin, paths, 8, status))
            print(f"{name:34} {p50:8.1f} {p99:8.1f} {len(paths):5d}")
        busy = f"/agents/{quote(BUSY, safe='')}"
        for name, path in (("agent page, 10,000 results", busy),
                           ("its page 100", busy + "?page=100")):  # fmt: skip
            p50, p99 = percentiles(load(origin, [path] * 30, 1))
            print(f"{name + ' (1 client)':34} {p50:8.1f} {p99:8.1f} {30:5d}")
        print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        server.terminate()
        server.wait(timeout=30)


def import_bodies(count: int, tag: str) -> list[bytes]:
    """``count`` distinct signed records that the store keeps (sane: each its own run of
    a real record, renamed runner), mostly small ones as the fill's."""
    seed = nkeys.generate_seed()
    made = [json.loads(b) for b in build().bodies if len(b) < 4000]
    out = []
    for i in range(count):
        doc = json.loads(json.dumps(made[i % len(made)]))
        doc.pop("signatures", None)
        doc["ran_by"].pop("key", None)
        doc["ran_by"]["party"] = "platform"
        doc["ran_by"]["name"] = f"Bench import {tag} {i}"
        out.append(json.dumps(sign_record(doc, seed)).encode())
    return out


def import_rate(url: str, empty_url: str, count: int) -> None:
    """Into this store and an empty one of its kind: ``put_many`` in process (500 a
    transaction, as ``ledger import``), then the command itself on a JSON Lines file
    (its start-up included)."""
    cli = str(Path(sys.executable).parent / "a2a-interview")
    for label, target, tag in (("full store", url, "f"), ("empty store", empty_url, "e")):
        given = import_bodies(count, tag)
        with Ledger.open(target) as ledger:
            began = time.perf_counter()
            for at in range(0, len(given), 500):
                ledger.put_many(given[at : at + 500])
            spent = time.perf_counter() - began
        print(f"import (put_many, 500 a transaction) into the {label:12} "
              f"{count / spent:8.0f} records/s")  # fmt: skip
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "records.jsonl"
            path.write_bytes(b"\n".join(import_bodies(count, tag + "c")) + b"\n")
            began = time.perf_counter()
            done = subprocess.run([cli, "ledger", "import", str(path), "--store", target],
                                  capture_output=True, text=True, check=False)  # fmt: skip
            spent = time.perf_counter() - began
        if (
            done.stdout.strip()
            != f"kept {count} record(s) ({count} new, 0 already present); refused 0"
        ):
            raise SystemExit(
                "ledger import did not keep every record: " + done.stdout + done.stderr[-500:]
            )
        print(f"import (the ledger import command) into the {label:12} "
              f"{count / spent:8.0f} records/s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a SQLite path or postgresql:// URL")
    parser.add_argument("--empty-store", help="an empty store of the same kind (import)")
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--per-agent", type=int, default=3)
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--import", dest="imports", type=int, default=20_000)
    parser.add_argument("--import-only", action="store_true", help="only the import rates")
    parser.add_argument("--skip-fill", action="store_true")
    parser.add_argument(
        "--distinct-runners",
        action="store_true",
        help="give every record its own runner name (its list column), so no two lines "
        "of the index show the same result cells: the page's worst case (ledger/memo.py)",
    )
    parser.add_argument("--workers", type=int, help="ledger serve --workers (its default)")
    args = parser.parse_args()
    if not args.skip_fill:
        fill(args.store, args.agents, args.per_agent, args.history, args.distinct_runners)
    if not args.import_only:
        serve_and_measure(args.store, args.agents, args.requests, args.workers)
    with tempfile.TemporaryDirectory() as folder:
        empty = args.empty_store or str(Path(folder) / "empty.db")
        import_rate(args.store, empty, args.imports)
    os.environ.pop("A2A_INTERVIEW_STORE", None)


if __name__ == "__main__":
    main()
