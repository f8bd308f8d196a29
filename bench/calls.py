"""The calls of one verify: a default (sampled) run beside a ``--thorough`` one.

    .venv/bin/python bench/calls.py                 # a few seconds
    .venv/bin/python bench/calls.py --skills 2 100 1000 --seed 7

The core-only test agent (``tests/agents.py``) grown to N skills and served on loopback
on 3 interfaces (two JSON-RPC, one HTTP+JSON, of one card variant) is verified once in
each mode; the interview calls are counted from the record (``runs[0].calls``), by binding
(JSON-RPC, HTTP+JSON), and those with a skill selector. A count, not a time: the same on
any machine. Docs: docs/benchmarks.md "Calls of one run"; docs/decisions.md D-VERIFY-63,
D-VERIFY-72.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from a2a_interview.verifier import verify
from agents import honest
from support.servers import serve
from support.verify import grown as grown_card


def grown(skills: int) -> Any:
    """The honest agent with ``skills`` skills on 3 interfaces (two JSON-RPC, one
    HTTP+JSON), as tests/test_verify_sampling.py grows it."""
    return lambda origin: honest(origin, edit_card=grown_card(skills), self_check=False)


def count(skills: int, *, thorough: bool, seed: int) -> tuple[str, int, dict[str, int], int]:
    async def run(origin: str) -> dict[str, Any]:
        record = await verify(
            origin, churn_delay=0, thorough=thorough, rng=random.Random(seed), max_skills=None
        )
        document: dict[str, Any] = record.to_json()
        return document

    with serve(grown(skills)) as origin:
        document = anyio.run(run, origin)
    calls = document["runs"][0]["calls"]
    selected = sum(1 for c in calls if isinstance(c["params"], dict) and "skill" in c["params"])
    bindings = {b: sum(1 for c in calls if c["binding"] == b) for b in ("JSONRPC", "HTTP+JSON")}
    return document["outcome"], len(calls), bindings, selected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, nargs="+", default=[2, 100], metavar="N")
    parser.add_argument("--seed", type=int, default=1, help="the sampled run's draw")
    args = parser.parse_args()
    print(
        "| skills | interfaces | mode | outcome | interview calls "
        "| JSON-RPC (2 interfaces) | HTTP+JSON (1) | of them with a selector |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for skills in args.skills:
        for thorough in (False, True):
            outcome, calls, bindings, selected = count(skills, thorough=thorough, seed=args.seed)
            mode = "`--thorough`" if thorough else "default (sampled)"
            rpc, rest = bindings["JSONRPC"], bindings["HTTP+JSON"]
            print(f"| {skills} | 3 | {mode} | {outcome} | {calls} | {rpc} | {rest} | {selected} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
