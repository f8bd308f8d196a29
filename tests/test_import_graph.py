"""The tree can be read one part at a time: the import graph of ``src/`` has
no loop, and no source file is over 700 lines but those still being split.

The graph is read from the source with ``ast``, so what it sees is what a reader sees:
every ``import`` and ``from ... import`` counts, at module level and inside functions
alike (a lazy import is still a dependency; it only moves the moment it is paid), and
under ``if TYPE_CHECKING:`` too (a loop through annotations is a loop for the reader and
for mypy). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module,
else to ``pkg`` itself (its ``__init__``). The parent package a submodule's import runs
first is not counted: Python initialises it before the child, whatever the child imports.
What ``ast`` cannot see is not counted either: ``cli/__init__.py`` loads the command
modules by name (``importlib.import_module``) when it builds the parser, after it is
fully initialised.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "a2a_interview"

MAX_LINES = 700

# No source file is over MAX_LINES (the last five were split).


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``path`` (module ``name``) imports anywhere."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in modules:  # import a.b.c: the deepest module
                    target = target.rpartition(".")[0]
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                elif source in modules:
                    found.add(source)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_src_has_no_import_cycle() -> None:
    # cli/ledger.py, cli/ledger_serve.py and cli/verify.py imported each
    # other (the shared options now live in cli/options.py), and cli/__init__.py and
    # cli/files.py did (UsageError now lives in cli/usage.py).
    assert cycles(import_graph()) == []


def test_import_graph_finds_a_cycle_through_a_function_level_import() -> None:
    # The checker itself: a loop closed only by a lazy import is still a loop.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    modules = _modules()
    ledger = PACKAGE / "cli" / "ledger.py"
    assert "a2a_interview.cli.options" in _imports("a2a_interview.cli.ledger", ledger, modules)
    # cli/ledger.py imports the procedure inside a function only (its worker).
    assert "a2a_interview.verifier.procedure" in _imports(
        "a2a_interview.cli.ledger", ledger, modules
    )


def test_src_files_are_at_most_700_lines() -> None:
    # No source file over about 700 lines, so that each part can be
    # read at once; a file that grows past the bound is split along its seams.
    lines = {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert {name: count for name, count in lines.items() if count > MAX_LINES} == {}


# Packages read part by part: each part imports only those listed before it, so it can
# be read without those after it.
PART_ORDERS: dict[str, list[str]] = {
    # The core's parts (D-CORE-22): card/ the keys, the readings, then the signatures;
    # record/ its sanity, the keys it names, standing, then the record; checks/ the
    # findings, the responses, the outcome, then the checks.
    "a2a_interview.card": ["_jose", "_readings", "_sig"],
    "a2a_interview.record": ["_sanity", "_keys", "_standing", "_record"],
    "a2a_interview.checks": ["_findings", "_responses", "_outcome", "_checks"],
    # ledger/store/ (split from one 1,058-line module): the schema, the values, reading a
    # record, opening, what is kept at write time, then the Ledger.
    "a2a_interview.ledger.store": [
        "tables",
        "values",
        "columns",
        "opening",
        "summary",
        "lines",
        "ledger",
    ],
    # server/proxy/: the upstream, then the pass-through, the extended card and the front,
    # then serving.
    "a2a_interview.server.proxy": [
        "connections",
        "fetch",
        "headers",
        "upstream",
        "passthrough",
        "extended",
        "front",
        "serving",
    ],
    # verifier/ (client.py and procedure.py split): the client's parts, the client, the
    # procedure's steps, one question asked once, the procedure, verify-many.
    "a2a_interview.verifier": [
        "wire",
        "addresses",
        "client",
        "sampling",
        "state",
        "calls",
        "questions",
        "signatures",
        "proposals",
        "cards",
        "extended",
        "choosing",
        "interviewing",
        "asking",
        "procedure",
        "many",
    ],
}


@pytest.mark.parametrize("package", sorted(PART_ORDERS))
def test_the_parts_of_a_package_import_only_those_before_them(package: str) -> None:
    order = PART_ORDERS[package]
    prefix = package + "."
    edges = import_graph()
    assert sorted(n for n in edges if n.startswith(prefix)) == sorted(prefix + p for p in order)
    for i, part in enumerate(order):
        later = {prefix + p for p in order[i + 1 :]}
        assert edges[prefix + part] & later == set(), part


# The core's parts on one another (D-CORE-22): the record names the card's keys and the
# checks' findings; the checks do not import the record, the card neither of the others.
PART_FLOORS = ["a2a_interview.card", "a2a_interview.checks", "a2a_interview.record"]


def _part(module: str) -> str | None:
    return next((p for p in PART_FLOORS if module == p or module.startswith(p + ".")), None)


def test_the_core_parts_import_only_parts_below_them() -> None:
    edges = import_graph()
    for module, targets in sorted(edges.items()):
        part = _part(module)
        if part is None:
            continue
        below = PART_FLOORS[: PART_FLOORS.index(part)]
        for target in targets:
            reached = _part(target)
            assert reached in (None, part, *below), (module, target)
    assert "a2a_interview.card" in edges["a2a_interview.record._keys"]


# Families meet only in the core (D-NET-16, docs/architecture.md "Families"): a family
# imports the core and the drivers' shared floor (net/), never another family; the CLI is
# the top and may import all; net/ imports the core only.
FAMILY_NAMES = ("server", "verifier", "ledger", "conformance")
SHARED_FLOOR = "net"
TOP = "cli"


def _family(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in (*FAMILY_NAMES, SHARED_FLOOR, TOP):
        return None  # the core (a2a_interview and its other modules)
    return parts[1]


def sideways(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` for each edge from one family to another, from the shared
    floor up to any family, or from the core up to any driver."""
    found = []
    for module, targets in sorted(graph.items()):
        family = _family(module)
        if family == TOP:
            continue
        allowed = {None, family} if family in (None, SHARED_FLOOR) else {None, family, SHARED_FLOOR}
        found += [f"{module} -> {t}" for t in sorted(targets) if _family(t) not in allowed]
    return found


# Edges still sideways, each with its reason; the list only shrinks.
ALLOWED_SIDEWAYS = {
    # Paced (the limiter a Pace moves) is a driver piece both the verifier's many-agent
    # run and the ledger's workers use; it moves to net/ with the concurrency work.
    "a2a_interview.ledger.jobs -> a2a_interview.verifier.many",
}


def test_families_meet_only_in_the_core() -> None:
    assert set(sideways(import_graph())) == ALLOWED_SIDEWAYS


def test_the_family_check_finds_an_edge_sideways_and_one_up() -> None:
    # The checker itself: a proxy importing the verifier (as server/proxy/fetch.py once
    # did), the ledger importing server/listen.py, net/ importing a family, the core
    # importing a driver (as demo.py once did) are found; the CLI and net/ users are not.
    graph = {
        "a2a_interview.server.proxy.fetch": {"a2a_interview.verifier.client"},
        "a2a_interview.ledger.serving": {"a2a_interview.server.listen"},
        "a2a_interview.net.bodies": {"a2a_interview.verifier.wire"},
        "a2a_interview.verifier.client": {"a2a_interview.net.bodies", "a2a_interview.rpc"},
        "a2a_interview.cli.serve": {"a2a_interview.server.demo", "a2a_interview.ledger"},
        "a2a_interview.demo": {"a2a_interview.server.listen", "a2a_interview.jcs"},
    }
    assert sideways(graph) == [
        "a2a_interview.demo -> a2a_interview.server.listen",
        "a2a_interview.ledger.serving -> a2a_interview.server.listen",
        "a2a_interview.net.bodies -> a2a_interview.verifier.wire",
        "a2a_interview.server.proxy.fetch -> a2a_interview.verifier.client",
    ]
