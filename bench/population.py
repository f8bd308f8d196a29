"""A population of agents on loopback: sustained agents/s, CPU and memory of verify-many
and of the ledger's workers (ledger schedule + worker) on the same agents, side by side;
``--sweep`` checks the adaptive concurrency (D-VERIFY-70) against fixed ones.

    nice -n 10 .venv/bin/python bench/population.py --agents 2000          # both paths
    nice -n 10 .venv/bin/python bench/population.py --agents 1000 --sweep  # fixed vs default
    nice -n 10 .venv/bin/python bench/population.py --agents 40 --deadline 2 --sweep \\
        --levels 16 --no-ledger                                             # a smoke run

The population: N agents (the core-only test agent of ``tests/agents.py``), each on its
own loopback port (its own origin), many per server process (``--servers``). Each live
agent answers every request after its own added latency, drawn uniformly from
``--latency`` (milliseconds, default 50-300); ``--refusing`` of them (default 5%) are
ports nothing listens on (the connection is refused); ``--slow`` (default 2%) answer
every request a second after the verifier's ``--deadline`` (so they end unreachable at
the deadline, holding their place until then). Only loopback addresses are used.

The commands measured are the real ones, each a fresh process (start-up included):
``verify-many FILE --store PG --concurrency auto`` with its default workers, then, on
the ledger it filled,
``ledger schedule --older-than 0s`` and ``--workers`` processes of ``worker --once``
side by side until the queue is empty. PostgreSQL is a throwaway cluster this bench
starts (initdb, fsync off, as ``tests/pg.py`` starts one; as root it runs as the
``postgres`` user) and removes. Agents per second is N over a command's wall time; CPU
is the seconds of user + system time of the command and its children (PostgreSQL's own
is not counted), and memory the peak resident set of its largest process.

``--sweep``: the same population at one fixed latency (``--sweep-latency``, default
100 ms), verify-many without a store at each fixed ``--concurrency`` in ``--levels``
and with ``--concurrency auto`` (the pace, "default" in the table); prints that / best, in reached
agents a second (records other than unreachable: a concurrency that makes agents miss
their deadline writes unreachable records fast, and wrongly). Then, at no
added latency (loopback), ``auto`` beside ``--concurrency 16`` (the fixed default
before the pace, D-VERIFY-82).

Every run is bounded: each command by ``--timeout`` seconds (then it is killed and the
bench stops with a line saying so). Not a test: nothing asserts a time; the machine's
other work shows in the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import glob
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()"]


# ---------------------------------------------------------------------------------------
# The agents


def _serve() -> None:
    """Child process: read the live agents' delays (JSON list of seconds) on stdin's
    first line, serve one agent per delay, print their origins, wait for EOF."""
    import asyncio

    sys.path.insert(0, str(ROOT / "tests"))
    from agents import honest
    from support.servers import serve_many

    delays: list[float] = json.loads(sys.stdin.readline())

    def agent(delay: float) -> Any:
        def build(origin: str) -> Any:
            app = honest(origin)

            async def delayed(scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] == "http" and delay > 0:
                    await asyncio.sleep(delay)
                await app(scope, receive, send)

            return delayed

        return build

    with serve_many([agent(delay) for delay in delays]) as origins:
        print(json.dumps(origins), flush=True)
        sys.stdin.read()


def _closed_port() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@dataclass(frozen=True)
class Population:
    agents: int
    latency: tuple[float, float]  # seconds
    refusing: float
    slow: float
    deadline: float
    seed: int

    def delays(self) -> list[float | None]:
        """Each agent's added latency (``None``: refusing), in a shuffled order."""
        rng = random.Random(self.seed)
        refusing = round(self.agents * self.refusing)
        slow = round(self.agents * self.slow)
        delays: list[float | None] = [None] * refusing + [self.deadline + 1.0] * slow
        delays += [rng.uniform(*self.latency) for _ in range(self.agents - refusing - slow)]
        rng.shuffle(delays)
        return delays


@contextlib.contextmanager
def serve(population: Population, servers: int, timeout: float) -> Iterator[list[str]]:
    """The population's URLs, in its order, while its server processes run."""
    delays = population.delays()
    live = [d for d in delays if d is not None]
    parts = [live[i::servers] for i in range(servers) if live[i::servers]]
    children = []
    try:
        for part in parts:
            # Its stderr is dropped: a slow agent's client leaves at the deadline, and
            # uvicorn tells of each such disconnect with a traceback.
            child = subprocess.Popen(
                [sys.executable, __file__, "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            children.append(child)
            assert child.stdin is not None
            child.stdin.write(json.dumps(part) + "\n")
            child.stdin.flush()
        served: list[list[str]] = []
        for child in children:
            assert child.stdout is not None
            line = _readline(child, timeout)
            served.append(json.loads(line))
        origins: list[str] = []
        for i in range(len(live)):
            origins.append(served[i % len(served)][i // len(served)])
        found = iter(origins)
        yield [next(found) if d is not None else _closed_port() for d in delays]
    finally:
        for child in children:
            if child.stdin is not None:
                with contextlib.suppress(OSError):
                    child.stdin.close()
        for child in children:
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(10)


def _readline(child: subprocess.Popen[str], timeout: float) -> str:
    import selectors

    assert child.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise SystemExit(f"the agents' server did not start within {timeout:.0f} s")
    line = child.stdout.readline()
    if not line:
        raise SystemExit("the agents' server stopped before serving")
    return line


# ---------------------------------------------------------------------------------------
# Measuring a command


@dataclass(frozen=True)
class Measured:
    seconds: float
    cpu: float
    rss_mb: float
    reached: int = 0  # verify-many: agents whose record is not unreachable

    def line(self, agents: int) -> str:
        return (
            f"{agents / self.seconds:7.1f} agents/s  {self.seconds:7.1f} s  "
            f"CPU {self.cpu:7.1f} s ({self.cpu / self.seconds:.2f} cores)  "
            f"peak RSS {self.rss_mb:6.0f} MB"
        )


def _measure_child(commands: list[list[str]], timeout: float, log: str) -> None:
    """Child process: run ``commands`` side by side, print a :class:`Measured` as JSON.
    Its own children's usage is all its resource usage shows."""
    start = time.perf_counter()
    with open(log, "a", encoding="utf-8") as sink:
        running = [subprocess.Popen(c, stdout=sink, stderr=sink) for c in commands]
        codes = []
        for process in running:
            left = max(0.1, timeout - (time.perf_counter() - start))
            try:
                codes.append(process.wait(left))
            except subprocess.TimeoutExpired:
                for other in running:
                    other.kill()
                raise SystemExit(f"a command ran past --timeout {timeout:.0f} s") from None
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": usage.ru_utime + usage.ru_stime,
                "rss_mb": usage.ru_maxrss / 1024,
                "codes": codes,
            }
        )
    )


def measure(
    commands: list[list[str]], timeout: float, work: Path, ok: tuple[int, ...] = (0,)
) -> Measured:
    """``commands`` side by side, each to exit with a code in ``ok``."""
    log = work / "commands.log"
    argv = [sys.executable, __file__, "--measure", json.dumps([commands, timeout, str(log)])]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout + 30)
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip()[-2000:] or done.stdout.strip()[-2000:])
    result = json.loads(done.stdout)
    if any(code not in ok for code in result["codes"]):
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"a command exited {result['codes']}:\n{tail}")
    return Measured(result["seconds"], result["cpu"], result["rss_mb"])


# ---------------------------------------------------------------------------------------
# PostgreSQL, thrown away at the end


@contextlib.contextmanager
def postgresql(timeout: float) -> Iterator[str]:
    """A fresh cluster on a free loopback port; yields a database URL."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    bindir = next((Path(b) for b in bins if Path(b, "initdb").is_file()), None)
    if bindir is None and shutil.which("initdb"):
        bindir = Path(str(shutil.which("initdb"))).parent
    if bindir is None:
        raise SystemExit("PostgreSQL's binaries were not found (apt-get install postgresql)")
    as_user: list[str] = []
    user = getpass.getuser()
    if os.geteuid() == 0:  # PostgreSQL refuses root
        as_user, user = ["runuser", "-u", "postgres", "--"], "postgres"
    top = Path(tempfile.mkdtemp(prefix="population-pg-"))
    data, sockets = top / "data", top / "run"
    data.mkdir()
    sockets.mkdir()
    if as_user:
        for path in (top, data, sockets):
            shutil.chown(path, "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories="
        f"{sockets} -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
        "-c max_connections=200"
    )

    def run(*command: str) -> None:
        done = subprocess.run(
            [*as_user, *command], check=False, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise SystemExit(f"{command[0]} failed: {done.stderr.strip()[-1000:]}")

    try:
        run(
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            user,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(top / "pg.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        run(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", user, "population")
        yield f"postgresql://{user}@127.0.0.1:{port}/population"
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(top, ignore_errors=True)


def _records(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        row = db.execute("SELECT COUNT(*) FROM ledger_records").fetchone()
    return int(row[0]) if row else 0


# ---------------------------------------------------------------------------------------
# The runs


def verify_many(
    listing: Path, work: Path, args: argparse.Namespace, extra: Sequence[str]
) -> Measured:
    out = work / "records.jsonl"
    argv = [
        *CLI,
        "verify-many",
        str(listing),
        "--out",
        str(out),
        "--no-progress",
        "--deadline",
        str(args.deadline),
        *extra,
    ]
    measured = measure([argv], args.timeout, work, ok=(0, 3))  # 3: some unreachable
    lines = out.read_text(encoding="utf-8").splitlines()
    documents = [json.loads(line) for line in lines]
    outcomes = Counter(document["outcome"] for document in documents)
    took = [_took(d) for d in documents if d["outcome"] == "consistent"]
    print(
        "  outcomes: "
        + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        + (f"; a consistent agent took {statistics.median(took):.2f} s (median)" if took else "")
    )
    written = len(lines)
    measured = replace(measured, reached=written - outcomes["unreachable"])
    if written != len(listing.read_text().split()):
        raise SystemExit(f"verify-many wrote {written} records for {listing}")
    return measured


def _took(document: dict[str, Any]) -> float:
    from datetime import datetime

    start, end = (datetime.fromisoformat(document[k]) for k in ("started_at", "finished_at"))
    return (end - start).total_seconds()


def both_paths(urls: list[str], work: Path, args: argparse.Namespace) -> dict[str, Any]:
    listing = work / "agents.txt"
    listing.write_text("\n".join(urls) + "\n")
    n = len(urls)
    report: dict[str, Any] = {}
    with postgresql(args.timeout) as store:
        paced = ["--concurrency", "auto"]  # the commands' default (D-VERIFY-82), said aloud
        many = verify_many(listing, work, args, ["--store", store, *paced, *args.extra])
        print(f"verify-many --store PG       {many.line(n)}", flush=True)
        report["verify_many"] = _row(many, n)
        if args.no_ledger:
            return report
        schedule = measure(
            [[*CLI, "ledger", "schedule", "--older-than", "0s", "--store", store]],
            args.timeout,
            work,
        )
        print(f"ledger schedule              {schedule.line(n)}", flush=True)
        worker = [
            *CLI,
            "worker",
            "--once",
            "--store",
            store,
            "--deadline",
            str(args.deadline),
            *paced,
            *args.extra,
        ]
        workers = measure([worker] * args.workers, args.timeout, work)
        print(f"{args.workers} x worker --once         {workers.line(n)}", flush=True)
        both = Measured(
            schedule.seconds + workers.seconds,
            schedule.cpu + workers.cpu,
            max(schedule.rss_mb, workers.rss_mb),
        )
        print(f"schedule + workers           {both.line(n)}", flush=True)
        stored = _records(store)
        if stored != 2 * n:
            raise SystemExit(f"the ledger holds {stored} records, not {2 * n}")
        report |= {
            "schedule": _row(schedule, n),
            "workers": _row(workers, n),
            "schedule_and_workers": _row(both, n),
            "ratio_workers_to_verify_many": round(many.seconds / both.seconds, 2),
        }
    return report


def _row(measured: Measured, agents: int) -> dict[str, float]:
    return {
        "agents_per_s": round(agents / measured.seconds, 1),
        "seconds": round(measured.seconds, 1),
        "cpu_s": round(measured.cpu, 1),
        "peak_rss_mb": round(measured.rss_mb),
    }


def sweep(population: Population, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for latency, levels in ((args.sweep_latency / 1000, args.levels), (0.0, [16])):
        fixed = Population(
            population.agents,
            (latency, latency),
            population.refusing,
            population.slow,
            population.deadline,
            population.seed,
        )
        label = f"{latency * 1000:.0f} ms"
        with serve(fixed, args.servers, args.timeout) as urls:
            listing = work / "sweep.txt"
            listing.write_text("\n".join(urls) + "\n")
            rates: dict[str, list[float]] = {}
            for _ in range(args.rounds):
                for level in [None, *levels]:
                    extra = ["--concurrency", "auto" if level is None else str(level)]
                    measured = verify_many(listing, work, args, [*extra, *args.extra])
                    name = "default" if level is None else str(level)
                    # Reached agents a second: a concurrency that makes agents miss their
                    # deadline is fast at writing unreachable records, and wrong.
                    rates.setdefault(name, []).append(measured.reached / measured.seconds)
                    print(
                        f"{label:>7} --concurrency {name:>7}  {measured.line(population.agents)}"
                        f"  reached {measured.reached / measured.seconds:.1f}/s",
                        flush=True,
                    )
        median = {name: statistics.median(values) for name, values in rates.items()}
        best = max((v, k) for k, v in median.items() if k != "default")
        ratio = median["default"] / best[0]
        print(
            f"{label:>7}: default {median['default']:.1f} reached agents/s, best fixed "
            f"{best[0]:.1f} (--concurrency {best[1]}), ratio {ratio:.2f}",
            flush=True,
        )
        report[label] = {
            "reached_agents_per_s": {k: round(v, 1) for k, v in median.items()},
            "best_fixed": int(best[1]),
            "ratio_default_to_best": round(ratio, 2),
        }
    return report


def _latency(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    try:
        bounds = float(low) / 1000, float(high or low) / 1000
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: LOW-HIGH in milliseconds") from None
    if not 0 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: 0 <= LOW <= HIGH")
    return bounds


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        _serve()
        return
    if sys.argv[1:2] == ["--measure"]:
        commands, timeout, log = json.loads(sys.argv[2])
        _measure_child(commands, timeout, log)
        return
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--agents", type=int, default=1000, help="N (default 1000)")
    parser.add_argument(
        "--latency",
        type=_latency,
        default=(0.05, 0.3),
        metavar="LOW-HIGH",
        help="added latency per response, ms, uniform (default 50-300)",
    )
    parser.add_argument(
        "--refusing",
        type=float,
        default=0.05,
        help="share of agents refusing connections (default 0.05)",
    )
    parser.add_argument(
        "--slow",
        type=float,
        default=0.02,
        help="share of agents slower than --deadline (default 0.02)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=30.0,
        help="the verifier's --deadline, seconds (default 30)",
    )
    parser.add_argument(
        "--servers", type=int, default=1, help="processes serving the agents (default 1)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="worker --once processes side by side (default 2)"
    )
    parser.add_argument(
        "--no-ledger", action="store_true", help="verify-many --store only, no schedule + workers"
    )
    parser.add_argument(
        "--sweep", action="store_true", help="fixed --concurrency levels and the default, instead"
    )
    parser.add_argument(
        "--sweep-latency",
        type=float,
        default=100.0,
        metavar="MS",
        help="the sweep's added latency (default 100)",
    )
    parser.add_argument(
        "--levels",
        type=lambda t: [int(x) for x in t.split(",")],
        default=[16, 32, 64, 128, 256],
        metavar="N,N,...",
        help="the sweep's fixed concurrencies (default 16,32,64,128,256)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="sweep rounds (median)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds any one command may take (default 900)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "extra", nargs="*", help="more options for verify-many and worker, after --"
    )
    args = parser.parse_args()
    population = Population(
        args.agents, args.latency, args.refusing, args.slow, args.deadline, args.seed
    )
    report: dict[str, Any] = {"agents": args.agents, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.sweep:
            report["sweep"] = sweep(population, work, args)
        else:
            low, high = (round(x * 1000) for x in args.latency)
            print(
                f"{args.agents} agents, {low}-{high} ms added, {args.refusing:.0%} "
                f"refusing, {args.slow:.0%} slower than the {args.deadline:g} s deadline",
                flush=True,
            )
            with serve(population, args.servers, args.timeout) as urls:
                report |= both_paths(urls, work, args)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
