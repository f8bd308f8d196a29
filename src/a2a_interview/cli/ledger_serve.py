"""``a2a-interview ledger serve``: the ledger's web page and JSON API.

Registered by :mod:`.ledger` as one action of the ``ledger`` group. Exit codes: 0 when
stopped with Ctrl-C, 2 for a bad argument or a store that cannot be opened, 3 when the
address cannot be listened on.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from . import serve_until_stopped
from .options import add_runners_option, load_runners, open_store, positive
from .usage import EXIT_FAILED

EPILOG = """\
examples:
  a2a-interview ledger serve --store sqlite:///ledger.db --port 8080
  a2a-interview ledger serve --store postgresql://ledger@db/ledger --host 0.0.0.0 --port 80
  a2a-interview ledger serve --runners runners.json     # name the runner keys you trust
  a2a-interview ledger serve --workers 4                # four processes on one port

The page lists every agent by card URL with its latest result, who ran it and whether
that is a claim or evidence; each agent's page has its history, conflicts and what a
result does not establish; /runners lists every runner key seen. A runner is its key:
with --runners, a listed key is shown by the name you give it, any other by its key's
fingerprint with its self-declared name marked as such. JSON: /api/agents, described
at /api/openapi.json."""


def run_serve(args: argparse.Namespace) -> int:
    from ..ledger.serving import WorkersFailing, serve

    runners = load_runners(args.runners)

    def ready(origin: str) -> None:
        print(f"ledger page at {origin}/  (JSON: {origin}/api/agents)", flush=True)
        print("  read-only; Ctrl-C stops it", flush=True)

    workers = args.workers
    if workers is None:
        from ..verifier.many import default_workers

        workers = default_workers()

    def start() -> None:
        with open_store(args.store) as ledger:
            serve(ledger, args.host, args.port, on_ready=ready, runners=runners,
                  workers=workers)  # fmt: skip

    try:
        return serve_until_stopped(args.host, args.port, start)
    except WorkersFailing as exc:
        print(f"a2a-interview: error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def register_serve(actions: Any, add_store_option: Callable[[Any], None]) -> None:
    """Add ``serve`` to the ``ledger`` group's actions (``--store`` as its others)."""
    p = actions.add_parser(
        "serve",
        help="serve the ledger's web page and JSON API (read-only)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serve the ledger as a web page (server-rendered, no JavaScript) and a "
        "JSON API beside it, until interrupted.",
        epilog=EPILOG,
    )
    add_store_option(p)
    add_runners_option(p)
    p.add_argument("--port", type=int, default=8080, help="TCP port (default: 8080; 0: a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--workers", type=positive, default=None, metavar="N",
                   help="server processes sharing the port (default: one per core this "
                   "process may use, at most 8; 1: a single process). A worker that "
                   "exits is replaced; more than 5 within 30 s stop the command "
                   "(exit 1)")  # fmt: skip
    p.set_defaults(run=run_serve)
