"""``a2a-interview conformance``: drive a server through the conformance kit
(docs/conformance.md, D-CLI-26, D-CLI-27).

    a2a-interview conformance URL [--junit FILE]
    a2a-interview conformance --vectors DIR --target URL|CMD [--junit FILE]
    a2a-interview conformance replay FILE --port N

Exit codes: 0 every draft-level call passed (profile-level differences are reported, not
failed), 1 a draft-level failure, 2 usage error or a card that cannot be tested (no
interview declared, not strict I-JSON, a terms entry that does not verify), 3 the server
(or its card) could not be reached, or a target command did not start.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .usage import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, UsageError

START_WAIT = 20.0  # seconds a target command may take to listen
TIMEOUT = 10.0  # seconds per request

EPILOG = """\
exit codes: 0 every draft-level call passed · 1 a draft-level failure ·
2 usage error, or a card that cannot be tested · 3 unreachable (or the target command
did not start)

examples:
  a2a-interview conformance replay conformance/vectors/verifier/honest.json --port 8000
  a2a-interview conformance http://127.0.0.1:8000/
  a2a-interview conformance http://127.0.0.1:8000/ --junit conformance.xml
  a2a-interview conformance --vectors conformance/vectors/serving \\
      --target 'node server.mjs --card {card} --proposals {proposals} --port {port}'

URL mode reads the card the server serves and derives every expected response from it.
--vectors mode sends each vector file's calls as written to a server serving that file's
declarations: a URL (one file), or a command started once per file, its {card}, {proposals}
and {port} replaced by a card file, a JSON file {url: text} and a free loopback port."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "conformance",
        help="drive a server through the conformance vectors (per-rule table, JUnit XML)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Drive a live interview server through every conformance call that "
        "applies to it and print a table per rule, separating draft-level failures "
        "(what the interview draft requires of every implementation) from profile-level "
        "differences (this project's choices).",
        epilog=EPILOG,
    )
    p.add_argument("url", nargs="?", metavar="URL",
                   help="the server's base or card URL; or `replay`, then FILE")  # fmt: skip
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="with replay: a verifier vector to serve on loopback")  # fmt: skip
    p.add_argument("--port", type=int, help="with replay: the TCP port (0: a free one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="with replay: the address to bind (default: 127.0.0.1)")  # fmt: skip
    p.add_argument("--vectors", metavar="DIR", help="a folder of serving vector files")
    p.add_argument("--target", metavar="URL|CMD", help="with --vectors: the server under test")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    p.add_argument("--timeout", type=float, default=TIMEOUT,
                   help=f"seconds per request (default: {TIMEOUT:g})")  # fmt: skip
    p.set_defaults(run=_run)


def _vector_files(folder: str) -> list[Path]:
    path = Path(folder)
    if not path.is_dir():
        raise UsageError(f"--vectors {folder!r} is not a folder")
    files = sorted(path.glob("*.json"))
    if not files:
        raise UsageError(f"--vectors {folder!r} holds no .json vector file")
    return files


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def started(command: str, vector: Any) -> Iterator[str]:
    """Start ``command`` for one vector on a free loopback port; yield its origin; stop
    it (terminate, then kill) however the block ends. Raises ``TimeoutError`` when it
    does not listen within :data:`START_WAIT` or exits first."""
    import json

    with tempfile.TemporaryDirectory(prefix="a2a-conformance-") as folder:
        card = Path(folder) / "card.json"
        card.write_bytes(vector.card_bytes)
        proposals = Path(folder) / "proposals.json"
        texts = {url: data.decode() for url, data in vector.proposals.items()}
        proposals.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        port = _free_port()
        words = [w.replace("{card}", str(card)).replace("{proposals}", str(proposals))
                 .replace("{port}", str(port)) for w in shlex.split(command)]  # fmt: skip
        try:
            process = subprocess.Popen(words, stdout=subprocess.DEVNULL)  # noqa: S603
        except OSError as exc:
            raise TimeoutError(f"cannot start {words[0]!r}: {exc.strerror or exc}") from None
        try:
            deadline = time.monotonic() + START_WAIT
            while not _listening(port):
                if process.poll() is not None:
                    raise TimeoutError(f"the target exited ({process.returncode}) before "
                                       f"it listened on port {port}")  # fmt: skip
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the target did not listen on port {port} within "
                                       f"{START_WAIT:g} s")  # fmt: skip
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


async def _run_vectors(files: Sequence[Path], target: str, timeout: float) -> list[Any]:
    import httpx

    from ..conformance.runner import run_vector
    from ..conformance.vectors import read_vector

    results: list[Any] = []
    vectors = []
    for path in files:
        try:
            vectors.append(read_vector(path.read_bytes()))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: not a serving vector file ({exc})") from None
    is_url = target.startswith(("http://", "https://"))
    if is_url and len(vectors) > 1:
        raise UsageError("--target URL serves one set of declarations: give --vectors a "
                         "folder of one file, or a command")  # fmt: skip
    async with httpx.AsyncClient(timeout=timeout) as client:
        for vector in vectors:
            if is_url:
                results += await run_vector(client, target, vector)
                continue
            with started(target, vector) as origin:
                results += await run_vector(client, origin, vector)
    return results


def _run(args: argparse.Namespace) -> int:
    import anyio

    from ..conformance.runner import Unreachable

    if args.url == "replay":
        return _replay(args)
    if args.file is not None or args.port is not None:
        raise UsageError("FILE and --port go with `conformance replay`")
    if (args.url is None) == (args.vectors is None):
        raise UsageError("give a URL, or --vectors DIR with --target (not both)")
    if args.vectors is not None and not args.target:
        raise UsageError("--vectors needs --target URL|CMD (the server under test)")
    if args.target and args.vectors is None:
        raise UsageError("--target goes with --vectors")
    if not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.url is not None and not args.url.startswith(("http://", "https://")):
        raise UsageError(f"{args.url!r} is not an http:// or https:// URL")
    try:
        if args.url is not None:
            results = anyio.run(_run_live, args.url, args.timeout)
        else:
            results = anyio.run(_run_vectors, _vector_files(args.vectors), args.target,
                                args.timeout)  # fmt: skip
    except (Unreachable, TimeoutError) as exc:
        print(f"a2a-interview: error: unreachable: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    return _report(results, args.junit)


async def _run_live(url: str, timeout: float) -> list[Any]:
    import httpx

    from ..conformance.runner import run_live

    async with httpx.AsyncClient(timeout=timeout) as client:
        _, results = await run_live(client, url)
    return results


def _report(results: list[Any], junit_path: str | None) -> int:
    from rich.table import Table

    from ..conformance.runner import by_rule, draft_failures, junit
    from .console import console
    from .files import write_atomic

    out = console()
    table = Table(title="Conformance by rule")
    for column in ("rule", "level", "pass", "fail (draft)", "differs (profile)"):
        table.add_column(column)
    for rule, level, passed, failed, differs in by_rule(results):
        table.add_row(rule, level, str(passed), str(failed), str(differs))
    out.print(table)
    for r in results:
        if r.problems:
            word = "FAIL" if r.verdict == "fail" else "DIFFERS"
            where = f"{r.vector}:" if r.vector else ""
            for p in r.problems:
                out.print(f"  {word} {where}{r.id} [{p.level}] {p.check}: {p.detail}")
    failed = draft_failures(results)
    differs = sum(r.verdict == "differs" for r in results)
    verdict = "FAIL" if failed else "PASS"
    out.print(f"Draft level: {verdict} ({len(results)} calls, {failed} draft-level failures, "
              f"{differs} profile-level differences)")  # fmt: skip
    if junit_path:
        write_atomic(junit_path, junit(results), option="--junit")
    return EXIT_FAILED if failed else EXIT_OK


def _replay(args: argparse.Namespace) -> int:
    """``conformance replay FILE --port N``: serve a recorded verify run's responses on
    loopback until Ctrl-C, so another verifier can be pointed at it (D-CONF-11)."""
    if args.file is None or args.port is None:
        raise UsageError("conformance replay needs FILE and --port N")
    if args.vectors or args.target or args.junit:
        raise UsageError("--vectors, --target and --junit do not go with replay")
    from ..conformance.replay import Replay, read
    from . import serve_until_stopped
    from .files import read_input

    try:
        exchanges, expected = read(read_input(args.file, "the verifier vector"))
    except ValueError as exc:
        raise UsageError(f"{args.file}: not a verifier vector ({exc})") from None

    def start() -> None:
        import uvicorn

        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((args.host, args.port))
            host, port = sock.getsockname()[:2]
            origin = f"http://{host}:{port}"
            app = Replay(exchanges, origin)
            print(f"Replaying {len(exchanges)} recorded exchanges at {origin}/ "
                  f"(recorded outcome: {expected.get('outcome')})", flush=True)  # fmt: skip
            print(f"  verify it: a2a-interview verify {origin}/", flush=True)
            config = uvicorn.Config(app, log_level="warning", lifespan="off")
            uvicorn.Server(config).run(sockets=[sock])

    return serve_until_stopped(args.host, args.port, start)
