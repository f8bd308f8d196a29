"""Search and paging at scale, side by side: on one 100,000-agent store (SQLite, filled
as ``bench/ledger_scale.py`` does), the index's search query (how many match, then a
page of 50 with their latest records) with four WHERE clauses, interleaved: the card URL
alone (search before names), the card URL or the name (two LIKEs a row), the one
``search`` column migration 0006 keeps (card URL and name, one LIKE a row), and that
column through migration 0007's trigram index with its count capped at 1,000
(``Ledger.matching`` and ``Ledger.agents_from``; the page runs both from one scan of
that index, ``Ledger.search_page``). Then a page of
50 agents at a random place: ``OFFSET`` (the page before keyset paging) against
``after=`` a card URL (``Ledger.agents_from``).

    nice -n 10 .venv/bin/python bench/ledger_search.py /tmp/scale.db fill
    nice -n 10 .venv/bin/python bench/ledger_search.py /tmp/scale.db   # already filled

Half the queries are part of a card URL, half part of a name (which the card URL alone
cannot find: those are left out of its figures). Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1] / "tests")]

from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.ledger.store import agents_table  # noqa: E402

T = agents_table.c


def like(column: Any, pattern: str) -> Any:
    return column.like(pattern, escape="\\")


CASES: dict[str, Callable[[str], Any]] = {
    "card URL only (before names)": lambda p: like(T.card_url, p),
    "card URL or name (two LIKEs)": lambda p: sa.or_(like(T.card_url, p), like(T.name, p)),
    "one search column (kept)": lambda p: like(T.search, p),
    "trigram index, count capped (0007)": lambda p: None,  # Ledger.matching/agents_from
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", help="a SQLite file: the 100,000-agent store")
    parser.add_argument("fill", nargs="?", choices=["fill"], help="fill it first")
    args = parser.parse_args()
    path = args.store
    if args.fill:
        import ledger_scale

        ledger_scale.fill(f"sqlite:///{path}", 100_000, 3, 10_000)
    rng = random.Random(5)
    with Ledger.open(f"sqlite:///{path}") as ledger:

        def page(where: Any) -> tuple[int, int]:
            with ledger._read() as connection:
                total = connection.execute(
                    sa.select(sa.func.count()).select_from(agents_table).where(where)
                ).scalar_one()
            rows = ledger._summaries(
                sa.select(T.card_url).select_from(agents_table).where(where)
                .order_by(T.card_url).limit(50)
            )  # fmt: skip
            return int(total), len(rows)

        times: dict[str, list[float]] = {name: [] for name in CASES}
        times |= {"page at OFFSET n": [], "page after= a card URL": []}
        for i in range(120):
            query = ("agent-{:06d}" if i % 2 else "bench agent {:06d}").format(
                rng.randint(0, 99_999)
            )
            for name, where in CASES.items():
                if name.startswith("card URL only") and i % 2 == 0:
                    continue  # a name is not in the card URL
                began = time.perf_counter()
                if name.startswith("trigram"):
                    found = (ledger.matching(query, 1000), len(ledger.agents_from(50, query)))
                else:
                    found = page(where("%" + query + "%"))
                times[name].append((time.perf_counter() - began) * 1000)
                assert found == (1, 1), (name, query, found)
            at = rng.randint(0, 99_999)
            began = time.perf_counter()
            offset = ledger._summaries(
                sa.select(T.card_url).select_from(agents_table)
                .order_by(T.card_url).offset(at).limit(50)
            )  # fmt: skip
            times["page at OFFSET n"].append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            after = ledger.agents_from(50, after=offset[0].card_url[:-1] if offset else "")
            times["page after= a card URL"].append((time.perf_counter() - began) * 1000)
            assert [s.card_url for s in after] == [s.card_url for s in offset]
        for name, samples in times.items():
            samples.sort()
            p90 = samples[int(len(samples) * 0.9)]
            print(f"{name}: n {len(samples)}, p50 {statistics.median(samples):.1f} ms, "
                  f"p90 {p90:.1f} ms, max {samples[-1]:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
