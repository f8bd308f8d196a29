"""Mutation testing of the core: how many one-line breaks of each module its tests catch.

    nice -n 19 .venv/bin/python bench/mutation.py            # every module, smallest first
    nice -n 19 .venv/bin/python bench/mutation.py jcs strictjson  # some modules
    nice -n 19 .venv/bin/python bench/mutation.py --report   # figures of the runs so far

Each module runs on its own under ``mutmut`` (the ``dev`` extra) in a scratch directory
``build/mutation/<module>`` (a copy of ``src`` and ``tests``, ``shared`` linked beside it
as in a worktree), against the narrowest test files that cover it (``MODULES`` below),
one worker at a time: the machine is shared. A run resumes where an interrupted one
stopped (mutmut keeps each verdict, and runs again the mutants of every function that a
new test reaches); ``--recheck`` runs only the survivors again, against the current tests
(after adding tests that kill some); ``--fresh`` starts over.

Prints, per module, the kill ratio (killed, including timeouts, over all mutants tried;
a mutant no selected test reaches counts as surviving) and the surviving mutants as
diffs. The survivors judged equivalent (no behaviour can tell them from the original)
are listed with their reason in ``bench/mutation_equivalent.txt``; the ratio is printed
both raw and with those set aside. Not a test: the figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = ROOT / "build" / "mutation"
EQUIVALENT = ROOT / "bench" / "mutation_equivalent.txt"
MUTMUT = Path(sys.executable).parent / "mutmut"

RECORD_TESTS = ["tests/test_record.py"]
CHECKS_TESTS = ["tests/test_checks.py"]
CARD_TESTS = ["tests/test_cardsig.py", "tests/test_jose.py", "tests/test_cardproto.py"]

# module -> (source file under src/a2a_interview, the test files that cover it), in the
# order they run: smallest first, so a run cut short has the most modules finished.
MODULES: dict[str, tuple[str, list[str]]] = {
    "jcs": ("jcs.py", ["tests/test_jcs.py"]),
    "strictjson": ("strictjson.py", ["tests/test_strictjson.py"]),
    "projection": ("projection.py", ["tests/test_projection.py"]),
    "terms": ("terms.py", ["tests/test_terms.py"]),
    # rpc/ (split from one module along its jobs): each part against the bindings' tests.
    "rpc._paths": ("rpc/_paths.py", ["tests/test_rpc.py"]),
    "rpc._codings": ("rpc/_codings.py", ["tests/test_rpc.py", "tests/test_codings.py"]),
    "rpc._versions": ("rpc/_versions.py", ["tests/test_rpc.py"]),
    "rpc._activation": ("rpc/_activation.py", ["tests/test_rpc.py"]),
    "rpc._envelopes": ("rpc/_envelopes.py", ["tests/test_rpc.py"]),
    "rpc._scan": ("rpc/_scan.py", ["tests/test_rpc.py"]),
    "rpc._fast": ("rpc/_fast.py", ["tests/test_rpc.py", "tests/test_rpc_fast.py"]),
    "rpc._bindings": ("rpc/_bindings.py", ["tests/test_rpc.py"]),
    "codings": ("codings.py", ["tests/test_codings.py", "tests/test_rpc.py"]),
    # display: its pure tests only. tests/test_ledger_web.py reaches it too, but through
    # records the real verifier writes (~10 s a mutant): the figure is a lower bound.
    "display": ("ledger/display.py", ["tests/test_display.py"]),
    # The record (split into record, sanity, agentkeys, standing) and the
    # checks (into findings, responses, checks, outcome): each part against the record's
    # or the checks' tests and its own.
    "outcome": ("checks/_outcome.py", [*CHECKS_TESTS, "tests/test_outcome.py"]),
    "findings": ("checks/_findings.py", [*CHECKS_TESTS, "tests/test_findings.py"]),
    "agentkeys": ("record/_keys.py", [*RECORD_TESTS, "tests/test_agentkeys.py"]),
    "sanity": ("record/_sanity.py", [*RECORD_TESTS, "tests/test_sanity.py"]),
    "responses": (
        "checks/_responses.py",
        [*CHECKS_TESTS, "tests/test_responses.py"],
    ),
    "standing": ("record/_standing.py", [*RECORD_TESTS, "tests/test_standing.py"]),
    "record": ("record/_record.py", RECORD_TESTS),
    "checks": ("checks/_checks.py", CHECKS_TESTS),
    # cardsig, jose, cardreadings: the card-signature rules (PROFILE §6) in three files
    # since the joserfc rewrite; each against the three fast files that test
    # them (test_jose.py through cardsig's names, test_cardproto.py the proto reading).
    "cardsig": ("card/_sig.py", CARD_TESTS),
    "jose": ("card/_jose.py", CARD_TESTS),
    "cardreadings": (
        "card/_readings.py",
        [*CARD_TESTS, "tests/test_cardreadings.py"],
    ),
}

EXAMPLES = 25  # examples per Hypothesis property in a mutation run (see prepare)
KILLED = {"killed", "timeout", "caught by type check"}
# mutmut's exit codes (mutmut/stats.py), for reading its .meta files without importing it
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests"}
STATUS |= {34: "skipped", 36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout"}
STATUS |= {255: "timeout", 37: "caught by type check", -11: "segfault", -9: "segfault"}


def prepare(module: str, fresh: bool, where: Path | None = None) -> Path:
    """The scratch directory of ``module`` (or ``where``), laid out for mutmut."""
    source, tests = MODULES[module]
    where = where or SCRATCH / module
    if fresh and where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", ".venv-a2a03", "*.pyc")
    shutil.rmtree(where / "src", ignore_errors=True)
    shutil.copytree(ROOT / "src", where / "src", ignore=ignore)
    shutil.rmtree(where / "tests", ignore_errors=True)
    shutil.copytree(ROOT / "tests", where / "tests", ignore=ignore)
    # Hypothesis under mutmut's tracing and nice runs slow: no deadline, the same
    # examples every run (a mutant's verdict does not depend on the draw), no shrinking
    # (a failing example kills the mutant; shrinking it is wasted time), and at most
    # EXAMPLES of them per property, whatever a test's own settings ask (each surviving
    # mutant runs every example of every property that reaches it).
    with (where / "tests" / "conftest.py").open("a") as conftest:
        conftest.write(
            "\n\nimport hypothesis as _h\n\n_init = _h.settings.__init__\n\n\n"
            "def _capped(self, parent=None, **kw):\n"
            f"    kw['max_examples'] = min(kw.get('max_examples', {EXAMPLES}), {EXAMPLES})\n"
            "    _init(self, parent, **kw)\n\n\n"
            "_h.settings.__init__ = _capped\n"
            "\n\nfrom hypothesis import settings as _settings\n"
            "from hypothesis import Phase as _Phase\n"
            f'_settings.register_profile("mutation", deadline=None, derandomize=True, '
            f"max_examples={EXAMPLES}, database=None, "
            "phases=[_Phase.explicit, _Phase.reuse, _Phase.generate])\n"
            '_settings.load_profile("mutation")\n'
        )
    # tests/needs.py finds the third-party corpora in a folder beside the clone; mutmut
    # runs the tests from <where>/mutants, so the link goes beside that.
    for link in (where / "shared", where.parent / "shared"):
        if not link.exists():
            link.symlink_to((ROOT.parent / "shared").resolve())
    present = [t for t in tests if (ROOT / t).exists()]
    (where / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f'only_mutate = ["src/a2a_interview/{source}"]\n'
        f"pytest_add_cli_args_test_selection = {json.dumps(present)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]\n'
        "use_git_change_detection = false\n"
        "\n[tool.pytest.ini_options]\n"
        'filterwarnings = ["ignore::DeprecationWarning:google.*"]\n'
        'markers = ["redis: a real redis-server", "vectors: pins values", '
        '"transport: checks transport"]\n'
    )
    return where


def _read(where: Path, source: str) -> dict[str, str]:
    meta = where / "mutants" / "src" / "a2a_interview" / (source + ".meta")
    if not meta.exists():
        return {}
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    return {k: STATUS.get(v, "suspicious") if v is not None else "not checked"
            for k, v in codes.items()}  # fmt: skip


def verdicts(module: str) -> dict[str, str]:
    """Each mutant of ``module`` and its verdict so far (``not checked``: not yet run).
    A survivor that the recheck (``<module>.recheck``, run with the current tests)
    killed counts as killed: tests are only added, so a kill never comes undone."""
    source, _ = MODULES[module]
    found = _read(SCRATCH / module, source)
    for name, verdict in _read(SCRATCH / f"{module}.recheck", source).items():
        if name in found and verdict in KILLED:
            found[name] = verdict
    return found


def equivalent() -> dict[str, str]:
    """The mutants judged equivalent: what each changes -> why no input tells it apart
    (``bench/mutation_equivalent.txt``; the change is spelled as :func:`changes` spells
    it, so an added line elsewhere renumbers nothing)."""
    if not EQUIVALENT.exists():
        return {}
    found: dict[str, str] = {}
    key: list[str] = []
    for line in EQUIVALENT.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith("  "):
            key = [line.strip()]
        elif line.startswith("  = "):
            found["\n".join(key)] = line[4:].strip()
        else:
            key.append(line.strip())
    return found


def _function(local: str) -> str:
    """``x_name__mutmut_3`` -> ``name``; ``xǁClassǁname__mutmut_3`` -> ``Class.name``."""
    base = local.rsplit("__mutmut_", 1)[0]
    return ".".join(base.split("ǁ")[1:]) if base.startswith("xǁ") else base[2:]


def changes(module: str) -> dict[str, str]:
    """Each mutant of ``module`` by mutmut's name -> what it changes: the function, then
    its lines before (``-``) and after (``+``), stripped; a change made the same way at
    more than one place of a function also says which occurrence it is (``~ n``)."""
    import libcst
    from mutmut.mutation.diff_apply import read_mutant_function, read_original_function
    from mutmut.mutation.file_mutation import mutate_file_contents

    source, _ = MODULES[module]
    mutated = SCRATCH / module / "mutants" / "src" / "a2a_interview" / source
    original = ROOT / "src" / "a2a_interview" / source
    if mutated.exists():
        code = mutated.read_text()
    else:
        code = mutate_file_contents(str(original), original.read_text()).code
    tree = libcst.parse_module(code)
    prefix = "a2a_interview." + source.removesuffix(".py").replace("/", ".")
    out: dict[str, str] = {}
    seen: Counter[str] = Counter()
    names = list(verdicts(module)) or [f"{prefix}.{n}" for n in _names(code)]
    for name in names:
        local = name.removeprefix(prefix + ".")
        before, after = (
            libcst.Module([f(tree, local)]).code.strip().splitlines()
            for f in (read_original_function, read_mutant_function)
        )
        lines = [f"{prefix}.{_function(local)}"]
        for line in difflib.unified_diff(before, after, lineterm="", n=0):
            if line[:1] in "-+" and not line.startswith(("---", "+++")):
                lines.append(f"{line[0]} {line[1:].strip()}")
        key = "\n".join(lines)
        seen[key] += 1
        out[name] = key if seen[key] == 1 else f"{key}\n~ {seen[key]}"
    # A change made more than once marks its first occurrence too, so that which one an
    # entry names never depends on the others being there.
    for name, key in out.items():
        if seen[key] > 1:
            out[name] = f"{key}\n~ 1"
    return out


def _names(code: str) -> list[str]:
    return re.findall(r"^\s*def (x[_ǁ]\S*?__mutmut_\d+)\(", code, flags=re.MULTILINE)


def stale(modules: list[str]) -> list[str]:
    """The entries of ``bench/mutation_equivalent.txt`` that name no mutant of
    ``modules`` as they are now (the code they judged has changed: judge again)."""
    made = {key for module in modules for key in changes(module).values()}
    prefixes = tuple(
        "a2a_interview." + MODULES[m][0].removesuffix(".py").replace("/", ".") + "."
        for m in modules
    )
    known = tuple(
        "a2a_interview." + source.removesuffix(".py").replace("/", ".") + "."
        for source, _ in MODULES.values()
    )
    # An entry of no module this bench knows (a module renamed or split) is stale too.
    return [
        k
        for k in equivalent()
        if (k.startswith(prefixes) and k not in made) or not k.startswith(known)
    ]


def run(module: str, fresh: bool, recheck: bool) -> None:
    """Run ``module``'s mutants; with ``recheck``, then its survivors again against the
    current tests, in a scratch directory of their own (``<module>.recheck``): mutmut
    starts over when the test selection changes (a new kill-test file), so the survivors
    are rerun there rather than every mutant here."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [str(MUTMUT), "run", "--max-children", "1"]
    if not recheck:
        if fresh:  # the recheck's kills are earlier verdicts too (verdicts() reads them)
            shutil.rmtree(SCRATCH / f"{module}.recheck", ignore_errors=True)
        where = prepare(module, fresh)
        with (where / "run.log").open("w") as out:
            subprocess.run(
                command, check=False, cwd=where, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        return
    survivors = [k for k, v in verdicts(module).items() if v not in KILLED | {"not checked"}]
    if not survivors:
        return
    where = prepare(module, fresh, SCRATCH / f"{module}.recheck")
    # mutmut maps each function to the tests that reached it once, and maps again only
    # tests it has not seen: a kill test changed under the same name would keep its old
    # reach (none), so the map is made again for every recheck.
    (where / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    with (where / "run.log").open("w") as out:
        subprocess.run(
            [*command, *survivors], check=False, cwd=where, env=env, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip


def show(module: str, name: str) -> str:
    done = subprocess.run(
        [str(MUTMUT), "show", name],
        cwd=SCRATCH / module,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def markdown(modules: list[str]) -> None:
    """The figures as a Markdown table, for docs/benchmarks.md."""
    known = equivalent()
    print("| module | mutants | tried | killed | survived | kill ratio | equivalent "
          "| kill ratio, equivalents aside |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for module in modules:
        found = verdicts(module)
        tried = [k for k, v in found.items() if v != "not checked"]
        killed = sum(found[k] in KILLED for k in tried)
        change = changes(module)
        same = sum(change[k] in known for k in tried if found[k] not in KILLED)
        alive = len(tried) - killed
        ratio = f"{killed / len(tried):.1%}" if tried else "-"
        net = f"{killed / (len(tried) - same):.1%}" if len(tried) > same else "-"
        print(f"| {module} | {len(found)} | {len(tried)} | {killed} | {alive} | {ratio} "
              f"| {same} | {net} |")  # fmt: skip


def report(modules: list[str], diffs: bool) -> None:
    known = equivalent()
    print(f"{'module':<11} {'mutants':>7} {'killed':>6} {'survived':>8} {'unrun':>5} "
          f"{'kill ratio':>10} {'equiv.':>6} {'without equiv.':>14}")  # fmt: skip
    survivors: dict[str, list[str]] = {}
    keys: dict[str, str] = {}
    for module in modules:
        found = verdicts(module)
        if not found:
            print(f"{module:<11} (not run)")
            continue
        count = Counter("killed" if v in KILLED else v for v in found.values())
        tried = sum(n for v, n in count.items() if v != "not checked")
        killed = count["killed"]
        alive = [k for k, v in found.items() if v not in KILLED and v != "not checked"]
        change = changes(module)
        same = [k for k in alive if change[k] in known]
        ratio = killed / tried if tried else 0.0
        net = killed / (tried - len(same)) if tried > len(same) else 1.0
        print(f"{module:<11} {len(found):>7} {killed:>6} {len(alive):>8} "
              f"{count['not checked']:>5} {ratio:>10.1%} {len(same):>6} {net:>14.1%}")  # fmt: skip
        survivors[module] = alive
        keys.update((k, change[k]) for k in alive)
    for module, alive in survivors.items():
        for name in alive:
            reason = known.get(keys[name])
            print(f"\n--- {name}: {found_status(module, name)}"
                  + (f" (equivalent: {reason})" if reason else ""))  # fmt: skip
            if diffs:
                print(show(module, name))


def found_status(module: str, name: str) -> str:
    return verdicts(module).get(name, "?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="module", help=", ".join(MODULES))
    parser.add_argument("--fresh", action="store_true", help="discard earlier verdicts")
    parser.add_argument("--recheck", action="store_true", help="rerun only the survivors")
    parser.add_argument("--report", action="store_true", help="print figures, run nothing")
    parser.add_argument("--no-diffs", action="store_true", help="survivors' names only")
    parser.add_argument("--markdown", action="store_true", help="figures as a table only")
    parser.add_argument("--stale", action="store_true",
                        help="the equivalents naming no mutant of the code as it is")  # fmt: skip
    args = parser.parse_args()
    if not MUTMUT.exists():
        print("mutmut is missing: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    modules = args.modules or list(MODULES)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module {unknown[0]!r}: one of {', '.join(MODULES)}")
    if args.stale:
        gone = stale(modules)
        print("\n\n".join(gone) or "every equivalent names a mutant of the code as it is")
        return 1 if gone else 0
    if not args.report:
        for module in modules:
            print(f"mutating {module} ...", flush=True)
            run(module, args.fresh, args.recheck)
    if args.markdown:
        markdown(modules)
    else:
        report(modules, diffs=not args.no_diffs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
