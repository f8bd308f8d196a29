"""Core benchmark: answer building, answer lookup, canonicalization. Prints ratios.

    .venv/bin/python bench/core.py

Not a test: nothing here asserts a time. Every figure is measured side by side in this
one run, so compare the ratios, not the absolute numbers, across machines.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import rfc8785

from a2a_interview import jcs, reference
from a2a_interview.declarations import build
from a2a_interview.projection import CommittedProposal, Interview


def best(fn: Callable[[], Any], repeat: int = 7, number: int = 1) -> float:
    """Seconds per call: the median of ``repeat`` runs of ``number`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def card_with(skills: int) -> dict[str, Any]:
    card = reference.unsigned_card()
    template = card["skills"]
    card["skills"] = []
    for i in range(skills):
        skill = copy.deepcopy(template[i % len(template)])
        skill["id"] = f"{skill['id']}-{i}"
        card["skills"].append(skill)
    return card


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    base = build(reference.unsigned_card(), reference.proposals())
    proposals = [CommittedProposal(e, v.document) for e, v in base.verdicts if v.document]

    print("1. Building every answer (the five, usage and terms per skill, the refusal)")
    per_skill = {}
    for n in (10, 100, 1000):
        card = card_with(n)
        seconds = best(lambda card=card: Interview(card, proposals), repeat=5)
        answers = len(list(Interview(card, proposals).selectors()))
        per_skill[n] = seconds / n
        print(f"   {n:>5} skills: {seconds * 1e3:8.2f} ms  ({answers} answers, "
              f"{seconds / n * 1e6:6.1f} µs per skill)")  # fmt: skip
    growth = per_skill[1000] / per_skill[10]
    print(f"   cost per skill at 1000 ÷ at 10: {growth:.2f} (1.0 = linear)")

    print("\n2. Serving a prebuilt answer vs a plain dict lookup")
    iv = Interview(card_with(100), proposals)
    plain = {("usage", f"reconcile-statement-{i}"): b"x" for i in range(100)}
    key = "reconcile-statement-42"
    n = 200_000
    ours = best(lambda: iv.answer("usage", key), number=n)
    theirs = best(lambda: plain.get(("usage", key)), number=n)
    print(f"   Interview.answer: {ours * 1e9:6.0f} ns   dict.get: {theirs * 1e9:6.0f} ns   "
          f"ratio {ours / theirs:.2f}")  # fmt: skip

    print("\n3. Canonicalization throughput on the same documents")
    docs = [json.loads(reference.read_bytes(name)) for name in reference.PROPOSAL_FILES]
    docs += [reference.unsigned_card(), card_with(100)]
    size = sum(len(jcs.canonicalize(d)) for d in docs)

    def sorted_dumps() -> None:
        for d in docs:
            json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def project() -> None:
        for d in docs:
            jcs.canonicalize(d)

    def package() -> None:
        for d in docs:
            rfc8785.dumps(d)

    rows = [("json.dumps(sort_keys=True)", sorted_dumps), ("a2a_interview.jcs", project),
            ("rfc8785.dumps (pure Python)", package)]  # fmt: skip
    timings = {name: best(fn, number=20) for name, fn in rows}
    reference_time = timings["json.dumps(sort_keys=True)"]
    for name, seconds in timings.items():
        mb = size / seconds / 1e6
        print(f"   {name:<30} {mb:7.1f} MB/s   time ÷ json.dumps: {seconds / reference_time:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
