"""What makes the ledger's page cheap at 100,000 agents (D-WEB-22), held to showing what
a page made from nothing would show: what it keeps between requests
(``ledger/memo.py``), the totals it reads off the request's time (``ledger/web.py``),
and a serving process's collector (``ledger/serving.py``)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jinja2 import nodes

from a2a_interview.ledger import Ledger, display, web
from a2a_interview.ledger.memo import CELL_FIELDS, Cells
from ledger_records import build

pytestmark = pytest.mark.anyio


def _macros() -> dict[str, nodes.Macro]:
    env = web._environment()
    source = env.loader.get_source(env, "macros.html")[0]  # type: ignore[union-attr]
    return {m.name: m for m in env.parse(source).find_all(nodes.Macro)}


@pytest.mark.parametrize("name", sorted(CELL_FIELDS))
def test_a_cell_is_kept_by_exactly_the_fields_its_macro_reads(name: str) -> None:
    # memo.Cells keys each cell by its CELL_FIELDS: a field the macro reads that the
    # key left out would show one line's cell on another's. Every member of ``r`` the
    # macro reads (``runner.listed``: a member's member) is in the key, the key holds
    # nothing else, and the macro reads nothing from the page's context (the root path,
    # the search) and calls nothing.
    macro = _macros()[name]
    reads = list(macro.find_all(nodes.Getattr))
    prefixes = {id(got.node) for got in reads}  # ``r.runner`` in ``r.runner.listed``
    read = {_path(got) for got in reads if id(got) not in prefixes} - {None}
    assert read == set(CELL_FIELDS[name])
    assert {n.name for n in macro.find_all(nodes.Name) if n.ctx == "load"} == {"r"}
    assert list(macro.find_all(nodes.Call)) == []


def _path(node: nodes.Node) -> str | None:
    """``r.a.b`` as ``"a.b"``; ``None`` for a member of anything but ``r``."""
    names: list[str] = []
    while isinstance(node, nodes.Getattr):
        names.insert(0, node.attr)
        node = node.node
    return ".".join(names) if isinstance(node, nodes.Name) and node.name == "r" else None


def _line(record_id: int, card_url: str, **columns: Any) -> display.Row:
    kept = {"outcome": "consistent", "party": "platform", "runner_name": "Acme Market",
            "runner_key": None, "signature": "valid", "standing_reason": "evidence",
            "card_signature": "verified", "card_reading": "served", **columns}  # fmt: skip
    moment = f"2026-11-{record_id:02d}T10:00:00Z"
    return display.column_row(record_id, card_url, kept, (moment, moment))


def test_lines_in_the_same_state_share_their_cells_and_others_do_not() -> None:
    env = web._environment()
    macros = env.get_template("macros.html").module
    cells = Cells(env, size=8)
    first = _line(1, "https://a.example/card", agent_name="Basalt")
    same = _line(2, "https://b.example/card", agent_name="Granite")  # another agent, time
    shown = cells(first)
    again = cells(same)
    for name in CELL_FIELDS:  # kept, and what each macro draws for that line
        assert getattr(again, name) is getattr(shown, name)
        assert getattr(again, name) == getattr(macros, name)(same)
    for changed, differs in (
        # A claim's verified card signature is "as stated" (PROFILE §8): both cells.
        (_line(3, "https://c.example/card", standing_reason="self_run"), {"standing", "card_sig"}),
        (_line(3, "https://c.example/card", runner_name="Acme Marke\u0301t"), {"ran_by"}),
        (_line(3, "https://c.example/card", outcome="non_conformant"), {"outcome"}),
        (_line(3, "https://c.example/card", card_reading="fetched"), {"card_sig"}),
        (_line(3, "https://c.example/card", party="self"), {"ran_by"}),
    ):
        drawn = cells(changed)
        for name in CELL_FIELDS:
            assert getattr(drawn, name) == getattr(macros, name)(changed)
            if name in differs:
                assert getattr(drawn, name) != getattr(shown, name), name
            else:  # kept: a cell is keyed by its own fields, not the line's others
                assert getattr(drawn, name) is getattr(shown, name), name
    assert len(cells._cells) == 8  # bounded: the oldest went first


class _Counted:
    """A real ledger whose ``totals`` can be held, counted, or made to fail."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self.reads = 0
        self.hold = threading.Event()
        self.hold.set()
        self.fail = False
        self.done = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)

    def totals(self) -> Any:
        self.reads += 1
        self.hold.wait(10)
        try:
            if self.fail:
                from a2a_interview.ledger import StoreUnavailable

                raise StoreUnavailable("the store cannot be opened or reached")
            return self._ledger.totals()
        finally:
            self.done.set()


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    path = tmp_path_factory.mktemp("memo") / "ledger.db"
    with Ledger.open(f"sqlite:///{path}") as opened:
        for body in build().bodies[:3]:
            opened.add(body)
        yield opened


@pytest.fixture
async def counted(ledger: Ledger) -> AsyncIterator[tuple[_Counted, httpx.AsyncClient]]:
    wrapped = _Counted(ledger)
    transport = httpx.ASGITransport(app=web.app(wrapped))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://ledger.test") as c:
        yield wrapped, c


async def test_stale_totals_are_read_off_the_requests_time(
    counted: tuple[_Counted, httpx.AsyncClient],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # A sum over every agent is the one read whose cost grows with the ledger: only the
    # first is made on a request's time. Later, a page answers at once with the last
    # totals while one read runs beside it; a read that fails leaves them shown.
    wrapped, client = counted
    first = (await client.get("/api/agents")).json()["totals"]
    assert wrapped.reads == 1
    monkeypatch.setattr(web, "TOTALS_EVERY", 0.0)
    wrapped.hold.clear()
    wrapped.done.clear()
    answer = await client.get("/api/agents")  # the read is held: the page is not
    assert answer.status_code == 200 and answer.json()["totals"] == first
    assert wrapped.reads == 2 and not wrapped.done.is_set()
    await client.get("/api/agents")
    assert wrapped.reads == 2  # one read at a time
    wrapped.fail = True
    wrapped.hold.set()
    assert wrapped.done.wait(10)
    answer = await client.get("/api/agents")
    assert answer.status_code == 200 and answer.json()["totals"] == first
    assert "Traceback" not in capfd.readouterr().err


def test_a_serving_process_freezes_what_outlives_every_page(tmp_path: Path) -> None:
    # D-WEB-25: once the app is made and its templates compiled, what is alive lives as
    # long as the process; frozen, a full collection walks only what pages made since
    # (at 100,000 agents it walked everything, 30-90 ms pauses); young collections run
    # at 10,000 new objects, not 700.
    import subprocess
    import sys

    probe = (
        "import gc\n"
        "from a2a_interview.ledger import Ledger, serving, web\n"
        "import sys\n"
        "web.app(Ledger.open(sys.argv[1]))\n"
        "web.compile_templates()\n"
        "before = len(gc.get_objects())\n"
        "serving._settle_gc()\n"
        "print(before, len(gc.get_objects()), gc.get_freeze_count(), gc.get_threshold())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, f"sqlite:///{tmp_path / 'l.db'}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split(maxsplit=3)
    before, after, frozen = (int(x) for x in out[:3])
    assert after < before / 20 and frozen > before / 2
    assert out[3].strip() == "(10000, 50, 1000)"
