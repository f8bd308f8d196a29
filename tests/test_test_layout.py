"""The suite's own layout (D-TEST-60): tests filed by subject, each shared helper with one
home in ``tests/support/`` (or a helper module beside the tests), never reached through
another test module.

A test module that imports another runs that module's import-time work and ties two
subjects together, and a private name imported across files is no longer private; a
helper written twice drifts. Both are read from the source with ``ast``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _ours(pattern: str) -> list[Path]:
    """The suite's own files matching ``pattern``: not what the interop suite installs
    beside them (``tests/interop/.venv-a2a03``, ``node_modules``), which is other
    projects' code."""
    return [
        path
        for path in sorted(TESTS.rglob(pattern))
        if not any(
            part.startswith(".") or part == "node_modules" for part in path.relative_to(TESTS).parts
        )
    ]


def _modules(tree: ast.AST) -> set[str]:
    """The top-level names of every module ``tree`` imports, at any depth (an import
    inside a function counts too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _test_modules_imported(source: str) -> set[str]:
    return {name for name in _modules(ast.parse(source)) if name.startswith("test_")}


def test_the_import_reader_sees_every_spelling() -> None:
    # The rule below can fail: each spelling of importing a test module is seen.
    source = (
        "import os\nfrom test_proxy import x\nimport test_jose as j\n"
        "def f():\n    from test_checks import answer\n"
        "from support.proxy import y\nfrom testing import z\n"
    )
    assert _test_modules_imported(source) == {"test_proxy", "test_jose", "test_checks"}


def test_no_test_module_imports_another() -> None:
    offenders = [
        f"{path.relative_to(TESTS)} imports {name}"
        for path in _ours("test_*.py")
        for name in sorted(_test_modules_imported(path.read_text("utf-8")))
    ]
    assert offenders == [], "move what they share into tests/support/: " + "; ".join(offenders)


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
    return False


def _helpers(source: str) -> dict[str, str]:
    """Each top-level helper function of a module (not a test, not a fixture: pytest
    resolves a fixture, its scope and the fixtures it asks for in the module that uses
    it), by name: its arguments and body without the docstring, and the values of the
    module's own names it reads (two ``client(app)`` with another ``BASE`` differ)."""
    tree = ast.parse(source)
    values: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    values[target.id] = ast.dump(node.value)
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if node.name.startswith("test_") or _is_fixture(node):
            continue
        body = node.body
        first = body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            body = body[1:]
        read = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in values})
        out[node.name] = repr(
            (ast.dump(node.args), [ast.dump(s) for s in body], [values[n] for n in read])
        )
    return out


def _written_twice(sources: dict[str, str]) -> list[str]:
    homes: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for name, source in sources.items():
        for helper, key in _helpers(source).items():
            homes[helper, key].append(name)
    return sorted(f"{helper}: {', '.join(files)}" for (helper, _), files in homes.items()
                  if len(files) > 1)  # fmt: skip


def test_the_duplicate_reader_tells_a_copy_from_a_namesake() -> None:
    copy = 'def tail(text):\n    """Last line."""\n    return text.splitlines()[-1]\n'
    other = "BASE = 'https://a'\ndef client():\n    return BASE\n"
    same_name = "BASE = 'http://b'\ndef client():\n    return BASE\n"
    fixture = "import pytest\n@pytest.fixture\ndef anyio_backend():\n    return 'asyncio'\n"
    sources = {"a.py": copy + other + fixture, "b.py": copy.replace('"""Last line."""\n    ', "")
               + same_name + fixture}  # fmt: skip
    assert _written_twice(sources) == ["tail: a.py, b.py"]


def test_no_helper_is_written_twice() -> None:
    sources = {str(path.relative_to(TESTS)): path.read_text("utf-8") for path in _ours("*.py")}
    assert _written_twice(sources) == [], "give each helper one home in tests/support/"


def test_tests_are_filed_by_subject_not_by_how_a_gap_was_found() -> None:
    # The tests that close what mutation testing found live with their subject's tests.
    assert [p.name for p in _ours("test_mutation_kills_*.py")] == []
