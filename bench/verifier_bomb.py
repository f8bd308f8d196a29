"""The verifier under decompression bombs: peak memory against its normal peak.

    .venv/bin/python bench/verifier_bomb.py               # 1 GiB bombs, ~1 minute
    .venv/bin/python bench/verifier_bomb.py --gib 0.25    # a quick look

Each case runs ``a2a-interview verify URL --json`` in a child process against a
loopback server and reads the child's peak resident memory (``ru_maxrss`` from
``wait4``): the honest agent first (the normal peak), then bombs that inflate to the
given size: a card with ``Content-Encoding: gzip``, the same as ``deflate``, a card
with ``gzip, gzip`` (a few KB on the wire), and the honest agent answering one interview
call with a gzip bomb. Prints each peak, its difference to the normal peak, and the
outcome; the goal is every difference under 100 MB.

Loopback only; every server stops when its case ends. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from agents import Call, Reply, Wrap, answer, honest, raw_server  # noqa: E402
from servers import serve  # noqa: E402

MiB = 1 << 20


def compressed_zeros(size: int, wbits: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(MiB)
    parts = [z.compress(block) for _ in range(size // MiB)]
    return b"".join([*parts, z.flush()])


def run_verify(url: str, deadline: float) -> tuple[int, str, float]:
    """(peak RSS in bytes, outcome/reason, seconds) of one verify in a child process."""
    cli = "import sys; from a2a_interview.cli import main; sys.exit(main(sys.argv[1:]))"
    command = [sys.executable, "-c", cli, "verify", url, "--json",
               "--churn-delay", "0", "--deadline", str(deadline)]  # fmt: skip
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert child.stdout is not None
    out = child.stdout.read()
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0  # reaped by wait4
    elapsed = time.monotonic() - started
    try:
        document = json.loads(out)
        what = document["outcome"]
        if document.get("incomplete"):
            what += "/" + document["incomplete"]["reason"]
    except (ValueError, KeyError):
        what = "no record"
    return usage.ru_maxrss * 1024, what, elapsed  # Linux: kilobytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="inflated size (default 1)")
    parser.add_argument("--deadline", type=float, default=60.0)
    args = parser.parse_args()
    size = int(args.gib * 1024) * MiB

    print(f"building {args.gib:g} GiB bombs ...", file=sys.stderr)
    gz = compressed_zeros(size, 31)
    deflate = compressed_zeros(size, 15)
    stacked_z = zlib.compressobj(9, zlib.DEFLATED, 31)
    stacked = stacked_z.compress(gz) + stacked_z.flush()
    json_headers = [("Content-Type", "application/json")]

    def bomb_answers(origin: str) -> Any:
        def bomb(call: Call) -> Reply | None:
            if call.question == "identity" and call.activated:
                headers = [(b"content-type", b"application/json"),
                           (b"content-encoding", b"gzip")]  # fmt: skip
                return Reply(200, headers, gz)
            return None

        return Wrap(honest(origin), on_request=bomb)

    cases: list[tuple[str, int, Callable[[], Any]]] = [
        ("honest agent (normal peak)", 0, lambda: serve(honest)),
        ("card, gzip", len(gz),
         lambda: raw_server(answer(200, [*json_headers, ("Content-Encoding", "gzip")], gz))),
        ("card, deflate", len(deflate),
         lambda: raw_server(answer(200, [*json_headers, ("Content-Encoding", "deflate")],
                                   deflate))),
        ("card, gzip, gzip", len(stacked),
         lambda: raw_server(answer(200, [*json_headers, ("Content-Encoding", "gzip, gzip")],
                                   stacked))),
        ("interview answer, gzip", len(gz), lambda: serve(bomb_answers)),
    ]  # fmt: skip
    print(f"{'case':<28}{'wire':>10}{'peak RSS':>12}{'vs normal':>12}  outcome (seconds)")
    normal = 0
    for name, wire, server in cases:
        with server() as origin:
            peak, what, elapsed = run_verify(origin, args.deadline)
        normal = normal or peak
        wire_text = f"{wire / 1024:.0f} KiB" if wire else "-"
        print(f"{name:<28}{wire_text:>10}{peak / MiB:>9.1f} MB{(peak - normal) / MiB:>+9.1f} MB"
              f"  {what} ({elapsed:.1f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
