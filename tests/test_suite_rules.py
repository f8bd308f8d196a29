"""Rules over the test suite itself (D-TEST-11), read from the source of every test file.

- A missing part skips only through ``tests/needs.py`` (``need``/``module``), which
  fails instead under CI: no ``pytest.skip``, ``pytest.importorskip``, ``skip``/``skipif``
  marks or ``SkipTest`` anywhere else, so ``CI=1`` with an optional part uninstalled
  fails, never skips (the brief's bar; tests/needs.py).
- Production code never knows its tests' fakes: nothing under ``src`` names
  ``MockTransport``, ``ASGITransport``, ``pytest`` or ``unittest`` (the brief's bar).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from kinds import KINDS
from needs import ROOT

TESTS = ROOT / "tests"
SKIPS = frozenset({"skip", "importorskip", "skipif", "SkipTest"})


def _test_sources() -> list[Path]:
    skipped = ("node_modules", ".venv-a2a03")
    return sorted(
        p
        for p in TESTS.rglob("*.py")
        if p != TESTS / "needs.py" and not any(part in skipped for part in p.parts)
    )


def skips_in(source: str) -> list[int]:
    """The lines of ``source`` that skip: a call of ``skip``/``importorskip`` (as
    ``pytest.skip(...)`` or imported bare), a ``skip``/``skipif`` mark, a ``SkipTest``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in SKIPS:
                lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in ("skip", "skipif", "SkipTest"):
            owner = node.value
            if isinstance(owner, ast.Attribute) and owner.attr == "mark":
                lines.append(node.lineno)  # @pytest.mark.skip without arguments
            elif node.attr == "SkipTest":
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(a.name in SKIPS for a in node.names):
            lines.append(node.lineno)
    return sorted(set(lines))


@pytest.mark.parametrize("path", _test_sources(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_skips_outside_needs(path: Path) -> None:
    found = skips_in(path.read_text(encoding="utf-8"))
    assert found == [], f"{path.name} skips at lines {found}: use needs.need or needs.module"


@pytest.mark.parametrize(
    "source",
    [
        'import pytest\npytest.importorskip("x")\n',
        "import pytest\ndef test():\n    pytest.skip('no')\n",
        "from pytest import skip\n",
        "from pytest import importorskip as i\ni('x')\n",
        "import pytest\n@pytest.mark.skip\ndef test(): pass\n",
        "import pytest\n@pytest.mark.skipif(True, reason='r')\ndef test(): pass\n",
        "import unittest\nraise unittest.SkipTest('r')\n",
    ],
)
def test_the_rule_sees_every_spelling_of_a_skip(source: str) -> None:
    # The control: each way of skipping is found, so the rule above can fail.
    assert skips_in(source) != []


def test_catching_a_skip_is_not_a_skip() -> None:
    # tests/test_ledger_store.py checks that pg.py skips: naming pytest.skip.Exception
    # in pytest.raises is not skipping.
    assert skips_in("import pytest\nwith pytest.raises(pytest.skip.Exception): pass\n") == []


def _names_in_code(path: Path) -> set[str]:
    """The NAME tokens of ``path`` (comments and strings left out)."""
    with path.open("rb") as f:
        return {t.string for t in tokenize.tokenize(f.readline) if t.type == tokenize.NAME}


@pytest.mark.parametrize("fake", ["MockTransport", "ASGITransport", "pytest", "unittest"])
def test_production_code_names_no_test_fake(fake: str) -> None:
    found = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "src").rglob("*.py"))
        if fake in _names_in_code(p)
    ]
    assert found == [], f"{fake} is named in production code: {found}"


def test_names_in_code_reads_code_not_comments() -> None:
    # The control for the rule above.
    source = b"x = httpx.MockTransport  # not MockTransport-free\n'ASGITransport'\n"
    names = {t.string for t in tokenize.tokenize(io.BytesIO(source).readline) if t.type == 1}
    assert "MockTransport" in names and "ASGITransport" not in names


def test_every_test_module_says_what_it_proves() -> None:
    # D-TEST-12: a reader can tell where correctness is proven (vectors) from where
    # transport is (tests/kinds.py, tests/README.md). A new module must be placed.
    # The interop suite's own installs (node_modules, the a2a-sdk 0.3 venv) are not ours.
    modules = {p.stem for p in _test_sources() if p.name.startswith("test_")}
    assert sorted(modules - set(KINDS)) == [], "add these to tests/kinds.py"
    assert sorted(set(KINDS) - modules) == [], "tests/kinds.py names modules that are gone"
    assert set(KINDS.values()) == {"vectors", "transport", "behaviour"}


def test_the_kinds_are_markers(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("behaviour") is not None
    assert request.node.get_closest_marker("vectors") is None


def test_every_test_has_a_bound_that_fails_a_hang(request: pytest.FixtureRequest) -> None:
    """D-TEST-30: a hang fails with its test's name instead of holding the run. The
    ``dev`` extra installs pytest-timeout; pyproject.toml sets a default bound and a
    method that interrupts a blocking read on the main thread; ``slow`` tests get more."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev = project["project"]["optional-dependencies"]["dev"]
    assert any(d.startswith("pytest-timeout") for d in dev), dev
    options = project["tool"]["pytest"]["ini_options"]
    assert 0 < float(options["timeout"]) <= 600, options.get("timeout")
    assert options["timeout_method"] == "signal"
    # The plugin is loaded and reads that bound: this test carries it.
    assert request.config.pluginmanager.hasplugin("timeout")
    assert float(request.config.getini("timeout")) == float(options["timeout"])


def test_a_slow_test_gets_the_longer_bound() -> None:
    # The control for conftest.py's hook: a `slow` item is given SLOW_TIMEOUT, an item
    # with its own bound keeps it, any other keeps the default. Loaded by its path: the
    # name `conftest` is also tests/interop's, whichever pytest imported last.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tests_root_conftest", Path(__file__).with_name("conftest.py")
    )
    assert spec is not None and spec.loader is not None
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    class Item:
        def __init__(self, *marks: pytest.MarkDecorator) -> None:
            self.marks = [m.mark for m in marks]

        def get_closest_marker(self, name: str) -> pytest.Mark | None:
            return next((m for m in self.marks if m.name == name), None)

        def add_marker(self, mark: pytest.MarkDecorator) -> None:
            self.marks.append(mark.mark)

    slow, own, plain = (
        Item(pytest.mark.slow),
        Item(pytest.mark.slow, pytest.mark.timeout(9)),
        Item(),
    )
    conftest.pytest_collection_modifyitems([slow, own, plain])  # type: ignore[list-item]
    assert [m.args for m in slow.marks if m.name == "timeout"] == [(conftest.SLOW_TIMEOUT,)]
    assert [m.args for m in own.marks if m.name == "timeout"] == [(9,)]
    assert plain.get_closest_marker("timeout") is None
    assert conftest.SLOW_TIMEOUT > 300
