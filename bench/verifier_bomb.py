"""The verifier under hostile agents: decompression bombs, a CPU bomb, a load amplifier.

    .venv/bin/python bench/verifier_bomb.py               # 1 GiB bombs, ~1 minute
    .venv/bin/python bench/verifier_bomb.py --gib 0.25    # a quick look
    .venv/bin/python bench/verifier_bomb.py --only bounds # the run's bounds only (~15 s)

Each case runs ``a2a-interview verify URL --json`` in a child process against a
loopback server and reads the child's peak resident memory (``ru_maxrss`` from
``wait4``): the honest agent first (the normal peak), then bombs that inflate to the
given size: a card with ``Content-Encoding: gzip``, the same as ``deflate``, a card
with ``gzip, gzip`` (a few KB on the wire), and the honest agent answering one interview
call with a gzip bomb. Prints each peak, its difference to the normal peak, and the
outcome; the goal is every difference under 100 MB.

Then the bounds of one run (PROFILE §7, D-CLI-6), each a child
``verify`` with its wall-clock time and the requests the hostile side saw:

- a card with 300 dummy EdDSA signatures and a same-origin JWKS of 300 keys without
  ``kid``, under ``--deadline 5`` (PROFILE §3.9 asks it to end within 6 s; it took 24 s);
- a card naming 8 JSON-RPC interfaces on another origin that answers every request with
  an HTML 404, and 300 skills (PROFILE §3.9 asks for at most a few hundred requests there;
  it got 16,592).

Loopback only; every server stops when its case ends. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from agents import Call, Reply, Wrap, answer, honest, raw_server  # noqa: E402
from support.servers import serve  # noqa: E402

MiB = 1 << 20


def compressed_zeros(size: int, wbits: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(MiB)
    parts = [z.compress(block) for _ in range(size // MiB)]
    return b"".join([*parts, z.flush()])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signature_bomb(count: int) -> Callable[[str], Any]:
    """The honest agent whose card carries ``count`` dummy EdDSA signatures (no kid, a
    same-origin jku) and whose JWKS holds ``count`` unrelated keys without kid."""
    keys = []
    for _ in range(count):
        raw = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        keys.append({"kty": "OKP", "crv": "Ed25519", "x": _b64(raw)})
    jwks = json.dumps({"keys": keys}).encode()

    def factory(origin: str) -> Any:
        header = _b64(json.dumps({"alg": "EdDSA", "jku": origin + "/.well-known/jwks.json"})
                      .encode())  # fmt: skip

        def tamper(card: dict[str, Any]) -> dict[str, Any]:
            dummy = [{"protected": header, "signature": _b64(os.urandom(64))}
                     for _ in range(count)]  # fmt: skip
            return {**card, "signatures": dummy}

        def serve_jwks(call: Call) -> Reply | None:
            if call.path == "/.well-known/jwks.json":
                return Reply(200, [(b"content-type", b"application/json")], jwks)
            return None

        return Wrap(honest(origin, tamper=tamper), on_request=serve_jwks)

    return factory


def foreign_interfaces(foreign: str, interfaces: int, skills: int) -> Callable[[str], Any]:
    def edit(card: dict[str, Any]) -> dict[str, Any]:
        model = card["skills"][0]
        for n in range(skills - len(card["skills"])):
            skill = copy.deepcopy(model)
            skill["id"] = f"skill-{n}"
            card["skills"].append(skill)
        card["supportedInterfaces"] = [
            {"url": f"{foreign}/rpc/{n}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            for n in range(interfaces)
        ]
        return card

    return lambda origin: honest(origin, edit_card=edit)


def bounds(deadline: float) -> None:
    print(f"\n{'bounds of one run':<44}{'seconds':>9}{'requests':>10}  outcome")
    with serve(signature_bomb(300)) as origin:
        _, what, elapsed = run_verify(origin, deadline)
    print(f"{'300 signatures x 300 keys, --deadline ' + f'{deadline:g}':<44}{elapsed:>9.1f}"
          f"{'-':>10}  {what}", flush=True)  # fmt: skip

    seen = [0]
    lock = threading.Lock()
    not_found = answer(404, [("Content-Type", "text/html")], b"<h1>Not Found</h1>")

    def counting(conn: socket.socket, stop: threading.Event) -> None:
        with lock:
            seen[0] += 1
        not_found(conn, stop)

    with raw_server(counting) as foreign, serve(foreign_interfaces(foreign, 8, 300)) as origin:
        _, what, elapsed = run_verify(origin, 60.0)
    print(f"{'8 foreign interfaces answering 404, 300 skills':<44}{elapsed:>9.1f}"
          f"{seen[0]:>10}  {what}", flush=True)  # fmt: skip


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
    parser.add_argument("--only", choices=("bombs", "bounds"), help="one group of cases")
    args = parser.parse_args()
    if args.only != "bombs":
        bounds(5.0)
    if args.only == "bounds":
        return
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
