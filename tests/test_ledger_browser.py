"""The ledger page in a real headless browser: Debian's chromium driven by Playwright,
against ``a2a-interview ledger serve`` on a loopback port, over a SQLite ledger filled
with records the real verifier wrote (``ledger_records``).

Shown: a consistent agent; a non-conformant one with its conflicts (expected against
got, a refusal shown as an answer); a self-run claim beside a third-party record
(interview §8, §9 rule 4); an agent without the interview listed neutrally (§9 rule 2);
hostile strings from an agent shown as text with no script running.

Screenshots of each page go to ``build/screenshots/ledger/`` (ignored by git); the
folder is printed. Skipped with the reason when chromium or playwright is missing and
``CI`` is unset; under ``CI`` a missing part fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from a2a_interview import nkeys
from a2a_interview.ledger import Ledger
from ledger_records import HOSTILE_RUNNER, HOSTILE_URL, RUNNER, RUNNER_SEED, Records, build
from needs import need
from support.cli import COMMAND

CHROMIUM = "/usr/bin/chromium"
LONG = "https://long.example"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots" / "ledger"


def _need_browser() -> Any:
    missing = []
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
        missing.append("the playwright package (pip install playwright)")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        missing.append("Debian's chromium (apt-get install chromium)")
    need(not missing, " and ".join(missing), ".ci/run installs both (pip's dev extra, Debian)")
    return sync_playwright


@pytest.fixture(scope="module")
def records() -> Records:
    return build()


@pytest.fixture(scope="module")
def origin(records: Records, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _need_browser()
    path = tmp_path_factory.mktemp("ledger") / "ledger.db"
    store = f"sqlite:///{path}"
    with Ledger.open(store) as ledger:
        for body in records.bodies:
            ledger.add(body)
    # The operator lists the third-party runner's key under its name (PROFILE §8).
    runners = path.parent / "runners.json"
    key = nkeys.public_of(nkeys.private_key(RUNNER_SEED))
    runners.write_text(json.dumps({"runners": [{"key": key, "name": RUNNER}]}))
    yield from _served(store, "--runners", str(runners))


def _served(store: str, *options: str) -> Iterator[str]:
    """`ledger serve` of ``store`` on a free port: its origin, until the generator ends
    (then the process is stopped and reaped)."""
    proc = subprocess.Popen(
        [*COMMAND, "ledger", "serve", "--store", store, "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("ledger page at http://127.0.0.1:"), (
            first,
            proc.stderr.read() if proc.poll() is not None and proc.stderr else "",
        )
        yield first.split()[3].rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(scope="module")
def browser(origin: str) -> Iterator[Any]:
    sync_playwright = _need_browser()
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    SHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the ledger pages: {SHOTS}")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    # JavaScript stays enabled: the point is that none runs, not that none could.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        context.close()


def visit(page: Any, url: str, shot: str) -> Any:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, url
    page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.evaluate("() => document.scripts.length") == 0
    assert errors == []
    return response


def agent_url(origin: str, card_url: str) -> str:
    return f"{origin}/agents/{quote(card_url, safe='')}"


def test_the_list_shows_claims_evidence_and_the_absent_agent_neutrally(
    page: Any, origin: str, records: Records
) -> None:
    visit(page, origin + "/", "index")
    rows = page.locator("table.agents tbody tr")
    urls = [rows.nth(i).locator("td.url").inner_text() for i in range(rows.count())]
    assert len(urls) == len(set(records.urls.values()))
    assert urls == sorted(urls)  # by card URL only (interview §9 rule 2)

    def cells(role: str) -> Any:
        return page.locator("table.agents tbody tr", has_text=records.urls[role]).first

    # A self-run claim beside a third-party record (interview §9 rule 4).
    assert cells("claim").locator(".standing").inner_text() == "CLAIM"
    assert "the agent itself (self-run)" in cells("claim").inner_text()
    assert cells("evidence").locator(".standing").inner_text() == "EVIDENCE"
    assert "a third party: Example Audits" in cells("evidence").inner_text()
    # The agent without the interview looks exactly like any neutral result: the same
    # colours as "not completed" or "churn", never the conflict colour.
    absent = cells("absent").locator(".outcome")
    assert absent.inner_text() == "does not offer the interview"
    conflict = cells("nonconformant").locator(".outcome")
    style = "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]"
    assert absent.evaluate(style) != conflict.evaluate(style)
    neutral = page.evaluate(
        """() => { const s = document.createElement('span'); s.className = 'outcome neutral';
        document.body.appendChild(s); const c = getComputedStyle(s);
        return [c.color, c.backgroundColor]; }"""
    )
    assert absent.evaluate(style) == neutral


def test_a_consistent_agent_with_its_claim_and_evidence(
    page: Any, origin: str, records: Records
) -> None:
    visit(page, agent_url(origin, records.urls["consistent"]), "agent-consistent")
    latest = page.locator("section.latest")
    assert "consistent" in latest.inner_text()
    # PROFILE §8 "What leads": the listed runner's evidence leads; the agent's own
    # newer run is beside it, with its kind.
    assert latest.locator(".standing").first.inner_text() == "EVIDENCE"
    assert "Newer result" in latest.inner_text()
    assert latest.locator(".standing").nth(1).inner_text() == "CLAIM"
    history = page.locator("table.records tbody tr")
    assert history.count() == 2
    assert [history.nth(i).locator(".standing").inner_text() for i in range(2)] == [
        "CLAIM",
        "EVIDENCE",
    ]
    boundaries = page.locator("section.boundaries").inner_text()
    assert "does not establish the agent's competence" in boundaries
    assert "Conformance is not competence" in boundaries
    marks = page.locator("svg.timeline circle")
    assert marks.count() == 2
    assert "filled" in (marks.nth(0).get_attribute("class") or "")
    assert "hollow" in (marks.nth(1).get_attribute("class") or "")
    assert page.locator("tr.check-closure_method td").nth(2).inner_text() == "pass"


def test_a_non_conformant_agent_with_its_conflicts(
    page: Any, origin: str, records: Records
) -> None:
    visit(page, agent_url(origin, records.urls["nonconformant"]), "agent-nonconformant")
    assert page.locator("section.latest .outcome").inner_text() == "non-conformant"
    assert page.locator("section.latest .standing").inner_text() == "EVIDENCE"
    assert "Latest evidence" not in page.locator("section.latest").inner_text()
    conflicts = page.locator("li.conflict")
    texts = [conflicts.nth(i).inner_text() for i in range(conflicts.count())]
    name = next(t for t in texts if "/name" in t)
    assert name.index('"Stonework"') < name.index('"Stonewerk"')  # expected, then got
    refused = next(t for t in texts if "the agent answered with a refusal" in t)
    assert '"refused": true' in refused


def test_the_agent_without_the_interview_is_neutral(
    page: Any, origin: str, records: Records
) -> None:
    visit(page, agent_url(origin, records.urls["absent"]), "agent-not-offered")
    latest = page.locator("section.latest")
    assert "does not offer the interview" in latest.inner_text()
    assert "that says nothing about the agent" in latest.inner_text()
    assert "tone-neutral" in (latest.get_attribute("class") or "")
    assert page.locator("li.conflict").count() == 0


@pytest.mark.parametrize("role", ["hostile", "hostile_url"])
def test_hostile_strings_are_shown_as_text(
    page: Any, origin: str, records: Records, role: str
) -> None:
    visit(page, origin + "/", "index-hostile")  # the list holds them too
    visit(page, agent_url(origin, records.urls[role]), f"agent-{role.replace('_', '-')}")
    body = page.locator("main").inner_text()
    assert "<script>window.__pwned='runner'</script><U+200B><U+202E>evil" in body
    assert HOSTILE_RUNNER not in body  # the invisible characters are made visible
    if role == "hostile_url":
        assert HOSTILE_URL in page.locator("h1").inner_text()
    else:
        assert "onerror=" in body and "onload=" in body
    assert page.locator("main script, main img, main iframe").count() == 0


def test_the_page_reads_without_javascript(browser: Any, origin: str, records: Records) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280,
                                                                       "height": 900})  # fmt: skip
    try:
        page = context.new_page()
        page.goto(agent_url(origin, records.urls["nonconformant"]))
        page.screenshot(path=str(SHOTS / "agent-nonconformant-no-js.png"), full_page=True)
        assert page.locator("li.conflict").count() >= 2
        page.locator("a", has_text="All agents").click()
        page.wait_for_load_state()
        assert page.locator("table.agents tbody tr").count() == len(set(records.urls.values()))
    finally:
        context.close()


@pytest.mark.parametrize("role", ["churn", "unreachable"])
def test_churn_and_unreachable_are_neutral(
    page: Any, origin: str, records: Records, role: str
) -> None:
    # PROFILE §7: neither is non-conformance; both look like the absent agent.
    visit(page, agent_url(origin, records.urls[role]), f"agent-{role}")
    latest = page.locator("section.latest")
    assert "tone-neutral" in (latest.get_attribute("class") or "")
    border = "el => getComputedStyle(el).borderLeftColor"
    visit(page, agent_url(origin, records.urls["absent"]), "agent-not-offered")
    absent_border = page.locator("section.latest").evaluate(border)
    visit(page, agent_url(origin, records.urls[role]), f"agent-{role}")
    assert page.locator("section.latest").evaluate(border) == absent_border


# --- D-STORE-17: runners, search, totals, timeline labels, result pages, widths ------------


def fits(page: Any) -> None:
    """Nothing is cut off or needs side scrolling at this width."""
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, overflow


@pytest.mark.parametrize("width", [390, 1280])
def test_every_page_fits_the_width(browser: Any, origin: str, records: Records, width: int) -> None:
    # D-WEB-20: at 1280 px the index cut off its last column; at 390 px it
    # was clipped.
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for name, url in [
            ("index", origin + "/"),
            ("runners", origin + "/runners"),
            ("agent-consistent", agent_url(origin, records.urls["consistent"])),
            ("agent-nonconformant", agent_url(origin, records.urls["nonconformant"])),
            ("agent-hostile-url", agent_url(origin, records.urls["hostile_url"])),
        ]:
            visit(page, url, f"{name}-{width}px")
            fits(page)
            last = page.locator("table.agents tbody tr td.count").first
            if name == "index":
                box = last.bounding_box()
                assert box is not None and box["x"] + box["width"] <= width
    finally:
        context.close()


def test_runners_list_names_keys_and_counts(page: Any, origin: str, records: Records) -> None:
    visit(page, origin + "/runners", "runners")
    rows = page.locator("table.runners tbody tr")
    assert rows.count() == 1  # every signed result here is by the one runner key
    text = rows.first.inner_text()
    assert RUNNER in text and "(listed)" in text
    assert nkeys.public_of(nkeys.private_key(RUNNER_SEED)) in text
    assert re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", text)
    visit(page, origin + "/", "index-listed-runner")
    evidence = page.locator("table.agents tbody tr", has_text=records.urls["evidence"]).first
    assert f"a third party: {RUNNER} (listed runner, key" in evidence.inner_text()


def test_search_and_totals(page: Any, origin: str, records: Records) -> None:
    visit(page, origin + "/", "index-totals")
    totals = page.locator("p.totals").inner_text()
    agents = len(set(records.urls.values()))
    assert totals.startswith(f"{agents} agents · {len(records.bodies)} results (")
    assert "evidence" in totals and "claim" in totals
    port = records.urls["evidence"].split(":")[2].split("/")[0]
    visit(page, f"{origin}/?q={port}", "index-search")
    assert page.locator("table.agents tbody tr").count() == 1
    assert f"contains “{port}”: 1." in page.locator("p.search").inner_text()


def test_the_search_box_finds_by_name_and_by_card_url(
    page: Any, origin: str, records: Records
) -> None:
    # docs/decisions.md D-WEB-20: a GET form to the page's own origin
    # (form-action 'self'), no script; typed and submitted like a person would.
    visit(page, origin + "/", "index-search-box")
    box = page.get_by_label("Search agents by name or card URL")
    box.fill("GNP.EXE")  # part of the hostile agent's name, in another case
    with page.expect_navigation():
        box.press("Enter")
    assert page.url == f"{origin}/?q=GNP.EXE"
    page.screenshot(path=str(SHOTS / "index-search-by-name.png"), full_page=True)
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    rows = page.locator("table.agents tbody tr")
    assert rows.count() == 2  # the hostile agent and the record naming a made-up URL
    assert "as the card names itself" in rows.first.inner_text()
    assert page.get_by_label("Search agents by name or card URL").input_value() == "GNP.EXE"
    port = records.urls["evidence"].split(":")[2].split("/")[0]
    box = page.get_by_label("Search agents by name or card URL")
    box.fill(port)
    with page.expect_navigation():
        page.get_by_role("button", name="Search").click()
    page.screenshot(path=str(SHOTS / "index-search-by-url.png"), full_page=True)
    assert page.locator("table.agents tbody tr").count() == 1
    assert f"contains “{port}”: 1." in page.locator("p.search").inner_text()


def test_labelled_timeline_older_result_and_claim_reason(
    page: Any, origin: str, records: Records
) -> None:
    visit(page, agent_url(origin, records.urls["consistent"]), "agent-timeline")
    labels = page.locator("svg.timeline text.mark-label")
    items = page.locator("ol.marks li")
    assert labels.count() == items.count() == page.locator("svg.timeline circle").count() == 2
    for i in range(2):
        assert re.search(r"\d{4}-\d{2}-\d{2}T", items.nth(i).inner_text())
    assert page.locator("svg.timeline text.date").count() == 2
    claim = page.locator("section.latest .why").first.inner_text()
    assert claim == "(the agent ran it against itself: a claim, never evidence)"
    # The older result, the third party's evidence, as a page of its own.
    page.locator("table.records tbody tr").nth(1).locator("a", has_text="read it").click()
    page.wait_for_load_state()
    page.screenshot(path=str(SHOTS / "older-result.png"), full_page=True)
    latest = page.locator("section.latest")
    assert latest.locator("h2").inner_text().startswith("Result ")
    assert latest.locator(".standing").first.inner_text() == "EVIDENCE"
    assert page.locator("section.boundaries").count() == 1
    assert page.evaluate("() => document.scripts.length") == 0


@pytest.fixture(scope="module")
def long_origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ledger page holding one agent with a timeline of 60 marks (wider than a page)."""
    from support.ledger import compact, record

    path = tmp_path_factory.mktemp("long") / "ledger.db"
    with Ledger.open(path) as ledger:
        ledger.put_many([
            compact(record(LONG, party="self", finished=f"2026-10-{1 + i // 24:02d}T"
                                                        f"{i % 24:02d}:00:00Z"))
            for i in range(60)
        ])  # fmt: skip
    yield from _served(str(path))


@pytest.mark.parametrize("width", [390, 1280])
def test_the_newest_marks_of_a_long_timeline_are_in_view(
    browser: Any, long_origin: str, width: int
) -> None:
    # PROFILE §8 (a timeline draws the results): 60 marks are 1,592 px wide and the
    # newest scrolled out of view; the figure now opens at its right, newest, end.
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        visit(page, agent_url(long_origin, LONG + "/.well-known/agent-card.json"),
              f"agent-long-{width}px")  # fmt: skip
        marks = page.locator("svg.timeline circle")
        assert marks.count() == 60
        newest = marks.nth(59).bounding_box()
        assert newest is not None and newest["x"] >= 0 and newest["x"] + newest["width"] <= width
        oldest = marks.nth(0).bounding_box()
        assert oldest is not None and oldest["x"] < 0  # scrolled out, to the left
        fits(page)
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_index_cells_keep_their_labels_when_the_header_is_hidden(
    browser: Any, origin: str, records: Records, width: int
) -> None:
    # At 390 px the header row is hidden and the cells lost their labels ("a platform:
    # Acme Market" with nothing saying it is who ran it).
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for url, table in ((origin + "/", "agents"),
                           (agent_url(origin, records.urls["consistent"]),
                            "records")):  # fmt: skip
            visit(page, url, f"labels-{table}-{width}px")
            labels = page.evaluate(
                "(t) => [...document.querySelectorAll(`table.${t} tbody tr:first-child td`)]"
                ".filter(td => td.dataset.label)"
                ".map(td => [td.dataset.label, getComputedStyle(td, '::before').content])",
                table,
            )
            assert {label for label, _ in labels} >= {"Run by", "Standing", "Card signature"}
            for label, content in labels:
                assert content == (f'"{label}: "' if width == 390 else "none"), label
    finally:
        context.close()
