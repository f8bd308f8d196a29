"""Ledger page benchmark: what a page costs beside reading its rows from the store.

    .venv/bin/python bench/ledger_web.py                   # ~1 minute
    .venv/bin/python bench/ledger_web.py --agents 200 --history 200 --rounds 5

A SQLite ledger is filled with ``--agents`` agents holding one signed third-party
record each, and one agent holding ``--history`` records. Then, alternately, round after
round, in process (httpx.ASGITransport, no sockets): the page or API answer, and the
store calls that answer needs (``agents()`` or ``history(url)``) alone. The ratio of the
medians is the display's own cost (the rows, recomputed standing with its signature
check, templates) over the store's.

Not a test: nothing asserts a time. Both sides of a ratio share the machine and the
moment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.ledger.web import app  # noqa: E402
from a2a_interview.record import sign_record  # noqa: E402
from ledger_records import RUNNER_SEED, build  # noqa: E402


def moved(base: dict[str, Any], origin: str) -> dict[str, Any]:
    """``base`` as a run against the agent at ``origin``: every URL of the record moves
    with it (its card, its interfaces, its calls), or the record is not sane (PROFILE §8:
    a record's calls are bound to the agent it names) and the store refuses it."""
    card = urlsplit(base["agent"]["card_url"])
    return cast(dict[str, Any], json.loads(
        json.dumps(base).replace(f"{card.scheme}://{card.netloc}", origin)
    ))  # fmt: skip


def fill(ledger: Ledger, agents: int, history: int) -> str:
    base = json.loads(build().bodies[2])  # a signed third-party record
    for i in range(agents):
        doc = moved(base, f"https://agent-{i:05d}.example")
        ledger.add(json.dumps(sign_record(doc, RUNNER_SEED)).encode())
    busy = moved(base, "https://busy.example")
    for i in range(history):
        moment = f"2026-{1 + i // 600:02d}-{1 + i // 24 % 25:02d}T{i % 24:02d}:00:00.000Z"
        doc = {**busy, "started_at": moment, "finished_at": moment}
        ledger.add(json.dumps(sign_record(doc, RUNNER_SEED)).encode())
    return cast(str, busy["agent"]["card_url"])


async def measure(ledger: Ledger, busy: str, rounds: int) -> None:
    transport = httpx.ASGITransport(app=app(ledger))
    cases = [
        ("index page (50 rows)", "/", ledger.agents),
        ("GET /api/agents", "/api/agents", ledger.agents),
        ("agent page", f"/agents/{quote(busy, safe='')}", lambda: ledger.history(busy)),
        ("GET /api/agents/{url}", f"/api/agents/{quote(busy, safe='')}",
         lambda: ledger.history(busy)),
    ]  # fmt: skip
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        print(f"{'answer':26} {'page ms':>9} {'store ms':>9} {'ratio':>6}")
        for name, path, store_call in cases:
            pages, stores = [], []
            for _ in range(rounds):
                started = time.perf_counter()
                response = await client.get(path)
                pages.append(time.perf_counter() - started)
                assert response.status_code == 200, (path, response.status_code)
                started = time.perf_counter()
                store_call()
                stores.append(time.perf_counter() - started)
            page_ms = statistics.median(pages) * 1000
            store_ms = statistics.median(stores) * 1000
            print(f"{name:26} {page_ms:9.1f} {store_ms:9.1f} {page_ms / store_ms:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        Ledger.open(f"sqlite:///{folder}/bench.db") as ledger,
    ):
        started = time.perf_counter()
        busy = fill(ledger, args.agents, args.history)
        print(f"filled {args.agents} agents + one with {args.history} records "
              f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
        asyncio.run(measure(ledger, busy, args.rounds))


if __name__ == "__main__":
    main()
