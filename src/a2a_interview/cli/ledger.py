"""``ledger`` (import, list, show, export, migrate, schedule) and ``worker``: the evidence
ledger's command line (PROFILE §8).

Every command takes ``--store URL``: ``sqlite:///PATH`` or a file path (one machine),
or ``postgresql://USER@HOST/DB`` (many machines; the job queue lives there). Without
it, ``$A2A_INTERVIEW_STORE``, else the SQLite file ``a2a-interview-ledger.db`` in the
current folder.

Exit codes: 0 success; 1 ``ledger import``: some record was refused (the others were
kept) or memory ran out (what was stored stays), ``ledger show``: no such agent; 2
usage error (bad arguments, a file that cannot be read, a store that cannot be opened,
``schedule``/``worker`` on SQLite); 130 stopped by Ctrl-C (an import says how far).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from .options import (
    add_network,
    add_procedure,
    add_runner,
    add_runners_option,
    add_store_option,
    concurrency,
    load_runners,
    open_store,
    verify_options,
)
from .usage import EXIT_FAILED, EXIT_OK, UsageError

EXIT_INTERRUPTED: Final = 130  # as main's for Ctrl-C

if TYPE_CHECKING:
    from ..ledger import Ledger, StoredRecord
    from ..ledger.runners import Runners

LEDGER_EPILOG = """\
examples (one machine, SQLite):
  a2a-interview verify-many agents.txt --store ledger.db --as platform --name Acme
  a2a-interview ledger import results.jsonl old-result.json --store ledger.db
  a2a-interview ledger list --store ledger.db
  a2a-interview ledger show https://agent.example --store ledger.db
  a2a-interview ledger export --store ledger.db --out all.jsonl

examples (many machines, one PostgreSQL):
  export A2A_INTERVIEW_STORE=postgresql://ledger@db.internal/ledger
  a2a-interview ledger migrate
  a2a-interview ledger schedule --older-than 1d      # from cron, e.g. hourly
  a2a-interview worker --as platform --name Acme --runner-key acme.seed   # on each machine

Records are kept byte for byte as given; a record whose runner signature fails is
refused; standing (claim or evidence) is recomputed on every read, never read from the
record. The ledger lists agents by card URL: never ranked by outcome.

exit codes: 0 ok · 1 import: some record refused (the others kept), or out of memory;
show: no such agent · 2 usage error (bad arguments, unreadable file, store unusable) ·
130 Ctrl-C (import: the summary of what was stored)"""

WORKER_EPILOG = """\
examples:
  a2a-interview worker --store postgresql://ledger@db.internal/ledger \\
      --as platform --name "Acme Market" --runner-key acme.seed --concurrency 8
  a2a-interview worker --once     # run what is queued, then stop (a cron job)

Runs the verification jobs `ledger schedule` enqueued, on procrastinate in the store's
PostgreSQL: start any number of workers on any number of machines. Each job
interviews one agent and stores its record exactly once, even when a worker is killed
mid-job (its job is queued again once its heartbeat has been silent --stalled-after
seconds). Stop a worker with Ctrl-C or SIGTERM: it finishes the jobs it holds; a
second one stops it at once and puts them back in the queue. A worker chooses how many
jobs it runs at once as it goes, as verify-many does (--concurrency auto, the default:
from 16, more while the rate of agents reached rises with it, up to 256); it takes a
job from the queue only when it has a place for it, so the others stay for other
workers. --concurrency N fixes N.

A store that cannot be reached at start (PostgreSQL starting or restarting) is waited
for (--wait-for-store, one line), then the worker starts.

exit codes: 0 stopped · 2 usage error (store unusable or not PostgreSQL) ·
130 stopped at once (a second Ctrl-C or SIGTERM)"""

_AGE: Final = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)")
_UNITS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def age(text: str) -> timedelta:
    """``90s``, ``30m``, ``6h``, ``1d``, ``2w`` (a bare number is seconds)."""
    match = _AGE.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError("an age such as 90s, 30m, 6h, 1d or 2w")
    seconds = float(match[1]) * _UNITS[match[2]]
    if seconds > 3650 * 86400:
        raise argparse.ArgumentTypeError("at most 3650 days")
    return timedelta(seconds=seconds)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds") from None
    if not 0.1 <= value <= 86400:
        raise argparse.ArgumentTypeError("between 0.1 and 86400 seconds")
    return value


# ---------------------------------------------------------------------------------------
# Rendering


def _when(moment: datetime) -> str:
    from ..record import rfc3339

    return rfc3339(moment)


def summary(stored: StoredRecord, runners: Runners | None = None) -> dict[str, Any]:
    """A record's row as JSON: its columns, its standing recomputed now, who ran it as
    the runners list names it (the page's and the API's words: ``ledger.display``)."""
    from ..ledger.display import row
    from ..ledger.runners import NO_RUNNERS

    shown = row(stored.id, stored.card_url, stored.document, runners=runners or NO_RUNNERS)
    return {
        "id": stored.id,
        "digest": stored.digest,
        "card_url": stored.card_url,
        "agent_name": shown.agent_name,  # as the card names itself: never identity
        "agent_url": stored.agent_url,
        "outcome": stored.outcome,
        "outcome_label": shown.outcome_label,
        "party": stored.party,
        "runner_name": stored.runner_name,
        "runner_key": stored.runner_key,
        "runner_signature": stored.signature,
        "standing": shown.standing,
        "standing_reason": shown.standing_reason,
        "standing_words": shown.standing_words,
        "runner": shown.runner.to_json(),
        "started_at": _when(stored.started_at),
        "finished_at": _when(stored.finished_at),
    }


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _named(name: str | None) -> str:
    """The agent's name as its latest card gives it, quoted and escaped (peer text)."""
    from ..report import show

    return "" if name is None else f"  as the card names itself: {show(name, 200)}"


def _line(stored: StoredRecord, runners: Runners) -> str:
    from ..report import show

    shown = summary(stored, runners)
    return (
        f"{stored.id:>6}  {_when(stored.finished_at)}  {shown['outcome_label']:<28} "
        f"{shown['standing_words']:<9} {stored.party:<12} "
        f"{show(shown['runner']['label'], 120)[1:-1]}"
    )


# ---------------------------------------------------------------------------------------
# Commands


def _import(args: argparse.Namespace) -> int:
    from .ledger_import import run_import  # one pass, flat memory (D-CLI-23)

    return run_import(args)


# A reader that closed the pipe early (`ledger list | head -1`) stops the listing as
# the shell's tools stop: no message, the status of a process SIGPIPE ended (128 + 13).
EXIT_PIPE_CLOSED = 141


def _list(args: argparse.Namespace) -> int:
    try:
        return _list_to_stdout(args)
    except BrokenPipeError:
        # Whatever is still buffered must not be flushed at exit into the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_PIPE_CLOSED


def _list_to_stdout(args: argparse.Namespace) -> int:
    from ..report import show

    runners = load_runners(args.runners)
    with open_store(args.store, reading=True) as ledger:
        agents = ledger.agents()
    if args.json:
        lines = [(a, summary(a.latest, runners)) for a in agents]
        _print_json([
            {"card_url": a.card_url, "name": shown["agent_name"], "count": a.count,
             "latest": shown}
            for a, shown in lines
        ])  # fmt: skip
        return EXIT_OK
    if not agents:
        print("the ledger holds no record yet")
        return EXIT_OK
    print(f"{'records':>7}  {'latest':<24}  {'outcome':<28} {'standing':<9} {'ran by':<12} "
          "agent")  # fmt: skip
    for agent in agents:
        latest = agent.latest
        shown = summary(latest, runners)
        print(
            f"{agent.count:>7}  {_when(latest.finished_at):<24}  {shown['outcome_label']:<28} "
            f"{shown['standing_words']:<9} {latest.party:<12} {show(agent.card_url, 80)[1:-1]}"
            f"  ran by: {show(shown['runner']['label'], 120)[1:-1]}" + _named(shown["agent_name"])
        )
    print("\nstanding is recomputed from each record; a claim is not evidence. "
          "Agents are listed by card URL, never ranked.")  # fmt: skip
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from ..ledger import agent_key
    from ..report import render_report, show

    runners = load_runners(args.runners)
    with open_store(args.store, reading=True) as ledger:
        history = ledger.history(args.agent)
        if not history:
            history = ledger.history(agent_key(args.agent, None))
    if not history:
        print(f"a2a-interview: the ledger holds no record of {show(args.agent, 120)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    if args.json:
        _print_json({
            "card_url": history[-1].card_url,
            "records": [summary(r, runners) | {"record": r.document} for r in history],
        })  # fmt: skip
        return EXIT_OK
    print(f"agent {show(history[-1].card_url, 200)[1:-1]}: {len(history)} record(s), "
          "oldest first")  # fmt: skip
    name = summary(history[-1], runners)["agent_name"]
    if name is not None:
        print(f"name, as the card names itself (the card URL is who it is): {show(name, 200)}")
    print(f"{'id':>6}  {'finished':<24}  {'outcome':<28} {'standing':<9} {'ran by':<12} runner")
    for stored in history:
        print(_line(stored, runners))
    print(f"\nthe latest record ({history[-1].id}):\n")
    sys.stdout.write(render_report(history[-1].document))
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    # JSON Lines, each record's bytes as stored. A record stored pretty-printed spans
    # lines: its line breaks (whitespace JSON ignores; the signature covers the JCS
    # form) are dropped so it fits one line; every other byte is as stored.
    def write(sink: IO[bytes], ledger: Ledger) -> int:
        count = 0
        for stored in ledger.records():
            sink.write(stored.body.replace(b"\r", b"").replace(b"\n", b"") + b"\n")
            count += 1
        return count

    with open_store(args.store, reading=True) as ledger:
        if not args.out:
            count = write(sys.stdout.buffer, ledger)
            sys.stdout.buffer.flush()
        else:
            target = Path(args.out)
            try:
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            except OSError as exc:
                raise UsageError(f"--out {args.out!r}: cannot write ({exc.strerror})") from None
            try:
                with os.fdopen(fd, "wb") as sink:
                    count = write(sink, ledger)
                    sink.flush()
                    os.fsync(sink.fileno())
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
    if args.json:
        print(json.dumps({"exported": count}), file=sys.stderr)
    else:
        print(f"exported {count} record(s)", file=sys.stderr)
    return EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    with open_store(args.store) as ledger:
        ledger.migrate()  # and refresh the standing column, whatever release did it last
        count = ledger.count()
    if args.json:
        _print_json({"migrated": True, "dialect": ledger.dialect, "records": count})
    else:
        print(f"the {ledger.dialect} ledger is at this version's schema ({count} record(s))")
    return EXIT_OK


def _schedule(args: argparse.Namespace) -> int:
    import asyncio

    from ..ledger.jobs import schedule

    with open_store(args.store) as ledger:
        result = asyncio.run(schedule(ledger, args.older_than, datetime.now(UTC)))
    if args.json:
        _print_json({"enqueued": list(result.enqueued),
                     "already_queued": list(result.already_queued)})  # fmt: skip
        return EXIT_OK
    from ..report import show

    for card_url in result.enqueued:
        print(f"enqueued {show(card_url, 200)[1:-1]}")
    print(f"enqueued {len(result.enqueued)} agent(s); "
          f"{len(result.already_queued)} already waiting in the queue")  # fmt: skip
    return EXIT_OK


def _worker(args: argparse.Namespace) -> int:
    import asyncio

    from ..ledger.jobs import WorkerSettings, run_worker
    from ..verifier.procedure import failed_record, verify

    options = verify_options(args)  # --deadline and --allow-private included, as verify-many

    async def interview(url: str) -> bytes:
        try:
            record = await verify(url, options)
        except Exception:  # one agent's trouble never stops the worker
            record = failed_record(url, options)
        return json.dumps(record.to_json(), ensure_ascii=False).encode("utf-8")

    stored_count = 0

    def say(text: str) -> None:
        # Every line carries the time it was written (UTC): a worker runs for days.
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        print(f"a2a-interview worker {now}: {text}", file=sys.stderr, flush=True)

    def told(stored: StoredRecord, new: bool) -> None:
        nonlocal stored_count
        stored_count += new
        if args.json:
            line = {"stored": new} | summary(stored)
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            from ..report import show

            state = "stored" if new else "already stored"
            say(f"record {stored.id} {state}: {stored.outcome} "
                f"{show(stored.card_url, 120)[1:-1]}")  # fmt: skip

    settings = WorkerSettings(
        verifier=interview,
        concurrency=args.concurrency,
        heartbeat=args.heartbeat,
        stalled_after=args.stalled_after,
        recover_every=args.recover_every,
        once=args.once,
        deadline=options.total_timeout,
        on_record=told,
    )
    with _store_when_up(args.store, args.wait_for_store, say) as ledger:
        from ..ledger.jobs import hold_stop_signals, require_postgresql

        require_postgresql(ledger)  # SQLite: refused here, before anything starts
        # Ctrl-C from now on stops the worker as soon as it starts (run_worker takes it).
        before = hold_stop_signals()
        say("waiting for jobs" if not args.once else "running the queued jobs")
        try:
            asyncio.run(run_worker(ledger, settings))
        except KeyboardInterrupt:  # a second Ctrl-C: the jobs held are left to recovery
            say(f"interrupted; {stored_count} record(s) stored; the jobs it held are "
                "back in the queue (or will be once its heartbeat is silent)")  # fmt: skip
            return EXIT_INTERRUPTED
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    if args.once:
        say(f"the queue is empty; stopped ({stored_count} record(s) stored)")
    else:  # procrastinate stops on SIGINT or SIGTERM once the jobs it holds are done
        say(f"stopped by Ctrl-C or SIGTERM after finishing its jobs "
            f"({stored_count} record(s) stored)")  # fmt: skip
    return EXIT_OK


def _store_when_up(url: str | None, wait: float, say: Any) -> Ledger:
    """The store, opened as :func:`open_store` does, waiting up to ``wait`` seconds
    while it cannot be reached (a worker started with PostgreSQL, or while it restarts):
    one line when the wait begins (D-STORE-22). A store that answers but refuses (a bad
    URL, a wrong password, a newer schema) and the end of the wait raise as before."""
    import time

    from ..ledger import StoreUnavailable

    deadline = time.monotonic() + wait
    while True:
        try:
            return open_store(url)
        except StoreUnavailable as exc:
            if not exc.transient or time.monotonic() >= deadline:
                raise
            if wait:
                say(f"the store cannot be reached; waiting up to {wait:g} s for it")
                wait = 0.0  # said once
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def register(subparsers: Any) -> None:
    """Add ``ledger`` (with its subcommands) and ``worker``."""
    formatter = argparse.RawDescriptionHelpFormatter
    ledger = subparsers.add_parser(
        "ledger",
        help="keep result records: import, list, show, export, migrate, schedule, serve",
        description="The evidence ledger: result records kept byte for byte, their "
        "standing recomputed on every read, re-verified on a schedule by workers.",
        epilog=LEDGER_EPILOG,
        formatter_class=formatter,
    )
    commands = ledger.add_subparsers(dest="ledger_command", metavar="COMMAND",
                                     parser_class=type(ledger))  # fmt: skip

    def command(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(
            name, help=help_text, description=description, epilog=LEDGER_EPILOG,
            formatter_class=formatter,
        )  # fmt: skip
        add_store_option(parser)
        parser.add_argument("--json", action="store_true", help="print JSON for machines")
        return parser

    imp = command(
        "import", "add result records from files",
        "Add the records of each FILE: one JSON record, or JSON Lines (one record per "
        "line, as verify-many writes). Each record is checked (strict I-JSON within "
        "1 MiB, the members of docs/profile.md §8, the runner signature when it has one) and kept "
        "byte for byte; a refused record is named with its file, line and reason, and "
        "the others are kept. A record already in the ledger is kept once. One pass in "
        "batches: a file of any length, a progress line on a terminal, and a summary "
        "however it ends (Ctrl-C included).",
    )  # fmt: skip
    imp.add_argument("files", nargs="+", metavar="FILE", help="a record file ('-' for stdin)")
    imp.set_defaults(run=_import)

    lst = command("list", "list the agents with their latest record",
                  "List each agent (by card URL, never ranked) with its latest record: "
                  "outcome, who ran it and its standing, recomputed now.")  # fmt: skip
    add_runners_option(lst)
    lst.set_defaults(run=_list)

    show = command("show", "show an agent's history and its latest report",
                   "Show the records of AGENT (its card URL or base URL), oldest first, "
                   "then the report of the latest.")  # fmt: skip
    show.add_argument("agent", metavar="AGENT")
    add_runners_option(show)
    show.set_defaults(run=_show)

    export = command("export", "write every record as JSON Lines",
                     "Write every record, in the order stored, one per line, each as "
                     "its stored bytes (a pretty-printed record loses only its line "
                     "breaks).")  # fmt: skip
    export.add_argument("--out", metavar="FILE", help="write here (default stdout)")
    export.set_defaults(run=_export)

    migrate = command("migrate", "bring the store's schema to this version",
                      "Create the store or upgrade its schema (every command does this "
                      "on open; run it once before starting many workers).")  # fmt: skip
    migrate.set_defaults(run=_migrate)

    sched = command("schedule", "enqueue re-verification of agents not verified lately",
                    "Enqueue a verification job for each agent whose latest record this "
                    "ledger received more than AGE ago (its own time of receipt, never a "
                    "time a record claims); each job interviews the card URL the ledger "
                    "keeps the agent under. `a2a-interview worker` runs them. Needs "
                    "a PostgreSQL store. An agent already waiting in the queue is not "
                    "enqueued twice.")  # fmt: skip
    sched.add_argument("--older-than", type=age, required=True, metavar="AGE",
                       help="e.g. 90s, 30m, 6h, 1d, 2w")  # fmt: skip
    sched.set_defaults(run=_schedule)

    from .ledger_serve import register_serve  # the web page (its own module)

    register_serve(commands, add_store_option)

    worker = subparsers.add_parser(
        "worker",
        help="run the ledger's verification jobs (PostgreSQL)",
        description="Run the verification jobs `ledger schedule` enqueued; each stores "
        "its record in the ledger exactly once.",
        epilog=WORKER_EPILOG,
        formatter_class=formatter,
    )
    add_store_option(worker)
    worker.add_argument("--json", action="store_true",
                        help="one JSON line per stored record on stdout")  # fmt: skip
    run = worker.add_argument_group("worker")
    run.add_argument("--concurrency", type=concurrency, default="auto", metavar="N|auto",
                     help="jobs run at once (default %(default)s: chosen as the worker goes "
                     "from the rate of agents reached, their time, failures and CPU, 16 "
                     "to 256; N: fixed)")  # fmt: skip
    run.add_argument("--once", action="store_true",
                     help="run the queued jobs, then stop (for cron)")  # fmt: skip
    add_network(worker, "each agent's whole procedure")  # the same as verify-many
    run.add_argument("--heartbeat", type=_seconds, default=10.0, metavar="S",
                     help="seconds between this worker's heartbeats (default 10)")  # fmt: skip
    run.add_argument("--stalled-after", type=_seconds, default=60.0, metavar="S",
                     help="a worker silent this long is dead: its jobs are queued again "
                     "(default 60)")  # fmt: skip
    run.add_argument("--recover-every", type=_seconds, default=30.0, metavar="S",
                     help="seconds between looks for dead workers' jobs (default 30)")  # fmt: skip
    run.add_argument("--wait-for-store", type=_seconds, default=60.0, metavar="S",
                     help="a store that cannot be reached at start (PostgreSQL restarting) "
                     "is waited for this long before giving up (default 60)")  # fmt: skip
    add_runner(worker)
    add_procedure(worker)
    worker.set_defaults(run=_worker)
    ledger.set_defaults(run=lambda _: (ledger.print_help(sys.stderr), 2)[1])
