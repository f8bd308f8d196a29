"""The ledger's page and JSON API, in process (httpx.ASGITransport) over a real SQLite
ledger filled with records the real verifier wrote (``ledger_records``).

The display rules under test are the draft's: who ran it is shown with every result
(interview §8); a self-run or unsigned result is a claim, never evidence (§9 rule 4,
PROFILE §8); a correct refusal never counts against an agent (§9 rule 3); absence of
the extension is never ranked, filtered or coloured as failing (§9 rule 2); the
boundaries are said on every agent page (§9 rule 1, PROFILE §8 does_not_establish).
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
import jsonschema
import pytest
from openapi_spec_validator import validate as validate_openapi

from a2a_interview import nkeys
from a2a_interview.ledger import Ledger
from a2a_interview.ledger.display import Row, row, standing, timeline_svg, visible
from a2a_interview.ledger.web import app
from a2a_interview.record import sign_record, signing_bytes, verify_record_signature
from ledger_records import (
    HOSTILE_GOT,
    HOSTILE_NAME,
    HOSTILE_RUNNER,
    HOSTILE_SKILL,
    HOSTILE_URL,
    RUNNER_SEED,
    Records,
    build,
)

if TYPE_CHECKING:
    from pg import Server

pytest_plugins = ["pg"]  # postgres_server: a real PostgreSQL (skips with the reason)
pytestmark = pytest.mark.anyio

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


@pytest.fixture(scope="module")
def records() -> Records:
    return build()


@pytest.fixture(scope="module")
def ledger(records: Records, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    path = tmp_path_factory.mktemp("ledger") / "ledger.db"
    with Ledger.open(f"sqlite:///{path}") as opened:
        for body in records.bodies:
            opened.add(body)
        yield opened


@pytest.fixture
async def client(ledger: Ledger) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app(ledger))
    async with httpx.AsyncClient(transport=transport, base_url="http://ledger.test") as c:
        yield c


def ref(url: str) -> str:
    return quote(url, safe="")


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all_text(self) -> str:
        return " ".join("".join(self.text).split())


def rows_of(html: str) -> list[dict[str, str]]:
    """The index table's rows: card URL and the outcome span's class and text."""
    out = []
    for match in re.finditer(r"<tr>\s*<td class=\"url\">(.*?)</tr>", html, re.S):
        cells = match.group(1)
        url = re.search(r'<bdi class="agent-text">(.*?)</bdi>', cells, re.S)
        outcome = re.search(r'<span class="outcome ([a-z]+)"[^>]*>(.*?)</span>', cells, re.S)
        standing = re.search(r'<span class="standing ([a-z]+)[ "]', cells)
        assert url and outcome and standing
        out.append(
            {"url": url.group(1), "tone": outcome.group(1), "outcome": outcome.group(2),
             "standing": standing.group(1), "cells": cells}
        )  # fmt: skip
    return out


# --- the list --------------------------------------------------------------------------


async def test_the_index_lists_every_agent_by_card_url_only(
    client: httpx.AsyncClient, records: Records
) -> None:
    # interview §9 rule 2: ordered by URL, never by outcome; the agent without the
    # interview is there like any other.
    response = await client.get("/")
    assert response.status_code == 200
    listed = rows_of(response.text)
    assert len(listed) == len(set(records.urls.values()))
    html_urls = [r["url"] for r in listed]
    assert html_urls == sorted(html_urls, key=lambda u: Tags(u).all_text())
    absent = next(r for r in listed if r["url"] == records.urls["absent"])
    assert absent["outcome"] == "does not offer the interview"
    assert absent["tone"] == "neutral"  # never the conflict colour
    assert {r["tone"] for r in listed if r["outcome"] == "non-conformant"} == {"conflict"}


async def test_no_filter_or_sort_by_outcome_exists(client: httpx.AsyncClient) -> None:
    # interview §9 rule 2: there is no way to filter on absence (or on any outcome).
    for query in ("outcome=not_offered", "sort=outcome", "filter=conformant"):
        for path in ("/", "/api/agents"):
            response = await client.get(f"{path}?{query}")
            assert response.status_code == 400, (path, query)
            assert "bad_query" in response.text or "unknown or repeated" in response.text


async def test_who_ran_it_and_the_standing_are_shown_with_every_result(
    client: httpx.AsyncClient, records: Records
) -> None:
    # interview §8: who ran it is part of the result; §9 rule 4: self-run is a claim.
    listed = {r["url"]: r for r in rows_of((await client.get("/")).text)}
    assert listed[records.urls["evidence"]]["standing"] == "evidence"
    assert listed[records.urls["claim"]]["standing"] == "claim"
    # PROFILE §8 "What leads": the agent whose latest result it ran on itself shows its
    # older third-party evidence, and names the newer claim beside it.
    assert listed[records.urls["consistent"]]["standing"] == "evidence"
    assert "newer, a weaker kind: consistent, claim" in listed[records.urls["consistent"]]["cells"]
    page = Tags((await client.get("/")).text).all_text()
    # PROFILE §8: a runner is its key; a name in the record is shown as self-declared.
    assert "a third party: unlisted key " in page
    assert "(self-declared name: Example Audits)" in page
    assert (
        "the agent itself (self-run): no verified runner key (self-declared name: Stonework)"
        in page
    )


async def test_an_unsigned_third_party_record_is_a_claim(
    ledger: Ledger, records: Records, tmp_path: Path
) -> None:
    # PROFILE §8: evidence needs a runner signature that verifies; a record anyone could
    # have written (party third_party, no signature) is shown as a claim.
    document = json.loads(records.bodies[2])  # the "evidence" agent's signed record
    del document["signatures"]
    del document["ran_by"]["key"]
    assert document["standing"] == "evidence"  # what the record says of itself
    with Ledger.open(f"sqlite:///{tmp_path / 'one.db'}") as one:
        one.add(json.dumps(document).encode())
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app(one)), base_url="http://t"
        ) as c:
            html = (await c.get("/")).text
            api = (await c.get("/api/agents")).json()
    assert rows_of(html)[0]["standing"] == "claim"
    assert api["agents"][0]["latest"]["standing"] == "claim"
    assert api["agents"][0]["latest"]["record_signature"] == "unsigned"


def _signed_as_given(document: dict[str, Any], seed: str) -> dict[str, Any]:
    """``document`` signed by ``seed`` with its ``standing`` left as given: sign_record
    recomputes standing, so a lie planted before it would not reach the stored bytes."""
    private = nkeys.private_key(seed)
    public = nkeys.public_of(private)
    body = {k: v for k, v in document.items() if k != "signatures"}
    body["ran_by"] = {**body["ran_by"], "key": public}
    sig = base64.urlsafe_b64encode(private.sign(signing_bytes(body))).rstrip(b"=").decode()
    return {**body, "signatures": [{"key": public, "sig": sig}]}


@pytest.mark.parametrize(
    ("index", "lie", "truth"),
    [(1, "evidence", "claim"), (0, "claim", "evidence")],
    ids=["self-run-calling-itself-evidence", "third-party-evidence-calling-itself-claim"],
)
async def test_standing_is_recomputed_not_read_from_the_record(
    records: Records, tmp_path: Path, index: int, lie: str, truth: str
) -> None:
    # PROFILE §8: standing is recomputed from what can be checked; the stored member is
    # never read. The lie is in the signed stored bytes (the signature verifies), so a
    # display that read it would show it: a self-run record calling itself evidence is
    # still a claim, and third-party evidence stored as "claim" is still evidence.
    document = _signed_as_given({**json.loads(records.bodies[index]), "standing": lie}, RUNNER_SEED)
    assert verify_record_signature(document).status == "valid"
    body = json.dumps(document).encode()
    assert json.loads(body)["standing"] == lie  # the lie is what is stored
    assert standing(document) == truth
    with Ledger.open(f"sqlite:///{tmp_path / 'lie.db'}") as one:
        one.add(body)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app(one)), base_url="http://t"
        ) as c:
            api = (await c.get("/api/agents")).json()
    assert api["agents"][0]["latest"]["standing"] == truth


# --- one agent -------------------------------------------------------------------------


async def test_every_agent_page_says_the_boundaries(
    client: httpx.AsyncClient, records: Records
) -> None:
    # interview §9 rule 1 and PROFILE §8 does_not_establish, in plain words, everywhere.
    for role, url in records.urls.items():
        response = await client.get(f"/agents/{ref(url)}")
        assert response.status_code == 200, role
        text = Tags(response.text).all_text()
        assert "It does not establish the agent's competence at its skills." in text
        assert "It does not establish the agent's conduct outside these calls." in text
        assert "Conformance is not competence" in text
        assert "is a claim" in text
        assert "never counts against the agent" in text


async def test_a_latest_claim_is_shown_beside_the_newest_evidence(
    client: httpx.AsyncClient, records: Records
) -> None:
    # interview §8, PROFILE §8 "What leads": the agent's own later run does not hide the
    # third-party record, and is not shown as evidence itself: the evidence leads, the
    # newer claim is beside it with its kind.
    html = (await client.get(f"/agents/{ref(records.urls['consistent'])}")).text
    latest = Tags(re.search(r'<section class="latest.*?</section>', html, re.S).group())
    text = re.sub(r"\s", "", latest.all_text())
    assert "StandingEVIDENCEBYANUNLISTEDRUNNER" in text
    assert "Runbyathirdparty:unlistedkey" in text
    assert "(self-declaredname:ExampleAudits)" in text
    assert "NewerresultconsistentCLAIM" in text and "aclaimisaweakerkind" in text
    only = (await client.get(f"/agents/{ref(records.urls['evidence'])}")).text
    assert "Newer result" not in only  # the latest is the evidence already


async def test_a_long_history_is_paged_and_its_marks_link_to_their_page(
    records: Records, tmp_path: Path
) -> None:
    # 55 signed third-party results, then the agent's own run: the list shows 50 a page,
    # every timeline mark links to the page holding its line, and the newest evidence
    # stands beside the latest claim (interview §8).
    base = json.loads(records.bodies[2])
    with Ledger.open(f"sqlite:///{tmp_path / 'long.db'}") as long:
        for day in range(55):
            document = {
                **base,
                "started_at": f"2026-01-{1 + day % 28:02d}T0{day // 28}:00:00.000Z",
                "finished_at": f"2026-01-{1 + day % 28:02d}T0{day // 28}:00:01.000Z",
            }
            long.add(json.dumps(sign_record(document, RUNNER_SEED)).encode())
        mine = json.loads(records.bodies[1])
        mine["agent"] = base["agent"]
        mine["started_at"], mine["finished_at"] = (
            "2026-03-01T00:00:00.000Z",
            "2026-03-01T00:00:01.000Z",
        )
        own = long.add(json.dumps(mine).encode())
        url = ref(base["agent"]["card_url"])
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app(long)), base_url="http://t"
        ) as c:
            first = (await c.get(f"/agents/{url}")).text
            second = (await c.get(f"/agents/{url}?page=2")).text
            api = (await c.get(f"/api/agents/{url}")).json()
    rows = {p: [a["id"] for t, a in Tags(html).tags if t == "tr" and a.get("id")]
            for p, html in ((1, first), (2, second))}  # fmt: skip
    assert (len(rows[1]), len(rows[2])) == (50, 6)
    assert rows[1][0] == f"record-{own.id}"
    svg = re.search(r"<svg.*?</svg>", first, re.S).group()
    links = [a["href"] for t, a in Tags(svg).tags if t == "a"]
    assert len(links) == 56
    for link in links:
        page, anchor = link.removeprefix("?page=").split("#")
        assert anchor in rows[int(page)], link
    assert api["latest"]["standing"] == "claim"
    assert api["latest_evidence"]["standing"] == "evidence"
    assert (
        api["latest_evidence"]["finished_at"] == "2026-01-28T00:00:01.000Z"
    )  # RFC 3339 (D-WEB-21)


async def test_the_latest_evidence_links_to_the_page_holding_it(
    records: Records, tmp_path: Path
) -> None:
    # Review finding 5 (decisions D-WEB-2, interview §8: a later self-run cannot
    # hide a third party's record): "Latest evidence" linked to #record-ID on the page
    # shown, where the record is not once 50 later self-runs push it to page 2.
    evidence = json.loads(records.bodies[2])
    mine = json.loads(records.bodies[1])
    mine["agent"] = evidence["agent"]
    with Ledger.open(f"sqlite:///{tmp_path / 'late.db'}") as late:
        kept = late.add(records.bodies[2])
        for day in range(55):
            # Later than the evidence, not later than the reader's clock (PROFILE §8).
            mine["finished_at"] = f"2026-11-{10 + day % 15:02d}T0{day // 15}:00:01.000Z"
            late.add(json.dumps(mine).encode())
        url = ref(evidence["agent"]["card_url"])
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app(late)), base_url="http://t"
        ) as c:
            first = (await c.get(f"/agents/{url}")).text
            [link] = re.findall(r"<dt>Finished</dt><dd><a href=\"([^\"]*)\"", first)
            page, anchor = unescape(link).removeprefix("?page=").split("#")
            shown = (await c.get(f"/agents/{url}?page={page}")).text
    assert anchor == f"record-{kept.id}"
    assert f'<tr id="{anchor}">' in shown and f'<tr id="{anchor}">' not in first


async def test_the_timeline_has_one_mark_per_result(
    client: httpx.AsyncClient, records: Records
) -> None:
    html = (await client.get(f"/agents/{ref(records.urls['consistent'])}")).text
    marks = [a for t, a in Tags(html).tags if t in ("circle", "path")]
    # Oldest first: the signed third-party record (evidence by an unlisted runner: a
    # diamond, PROFILE §8), then the agent's own run (a claim: hollow).
    assert [m["class"] for m in marks] == [
        "mark consistent filled unlisted",
        "mark consistent hollow",
    ]
    svg = re.search(r"<svg.*?</svg>", html, re.S).group()
    links = [a["href"] for t, a in Tags(svg).tags if t == "a"]
    rows = [a["id"] for t, a in Tags(html).tags if t == "tr" and a.get("id")]
    assert sorted(h.split("#")[1] for h in links) == sorted(rows)


async def test_conflicts_are_shown_as_expected_against_got(
    client: httpx.AsyncClient, records: Records
) -> None:
    html = (await client.get(f"/agents/{ref(records.urls['nonconformant'])}")).text
    text = Tags(html).all_text()
    assert "non-conformant" in text
    pres = [unescape(p) for p in re.findall(r'<pre class="agent-text">(.*?)</pre>', html, re.S)]
    assert '"Stonework"' in pres and '"Stonewerk"' in pres
    assert pres.index('"Stonework"') + 1 == pres.index('"Stonewerk"')  # expected, then got
    assert "/name" in text


async def test_a_refusal_is_shown_as_an_answer(client: httpx.AsyncClient, records: Records) -> None:
    # interview §9 rule 3: the closure probes' standard refusal is a pass, and a refusal
    # the agent gave is labelled as an answer.
    html = (await client.get(f"/agents/{ref(records.urls['consistent'])}")).text
    checks = re.findall(r'<tr class="check-(closure_[a-z]+)"><td>.*?</td><td>(.*?)</td>'
                        r"<td>(.*?)</td></tr>", html)  # fmt: skip
    assert checks == [
        ("closure_method", "the standard refusal: a correct answer, counted as a pass", "pass"),
        ("closure_selector", "the standard refusal: a correct answer, counted as a pass", "pass"),
    ]
    rogue = (await client.get(f"/agents/{ref(records.urls['nonconformant'])}")).text
    assert "the agent answered with a refusal" in rogue
    assert '"refused": true' in unescape(rogue)


async def test_the_agent_without_the_interview_is_neutral(
    client: httpx.AsyncClient, records: Records
) -> None:
    html = (await client.get(f"/agents/{ref(records.urls['absent'])}")).text
    assert '<section class="latest tone-neutral"' in html
    assert "that says nothing about the agent" in html
    classes = [a.get("class") or "" for _, a in Tags(html).tags]
    assert "mark neutral filled unlisted" in classes
    assert [c for c in classes if "conflict" in c] == ["key-conflict"]  # the legend only


async def test_churn_and_unreachable_are_neutral(
    client: httpx.AsyncClient, records: Records
) -> None:
    # PROFILE §7: churn is not non-conformance; a transport failure says nothing either.
    listed = {r["url"]: r for r in rows_of((await client.get("/")).text)}
    for role, label in (("churn", "churn"), ("unreachable", "not completed"),
                        ("absent", "does not offer the interview")):  # fmt: skip
        assert (listed[records.urls[role]]["outcome"], listed[records.urls[role]]["tone"]) == (
            label,
            "neutral",
        ), role
    html = (await client.get(f"/agents/{ref(records.urls['churn'])}")).text
    assert '<section class="latest tone-neutral"' in html
    assert "gone on the re-run (churn)" in html
    pres = [unescape(p) for p in re.findall(r'<pre class="agent-text">(.*?)</pre>', html, re.S)]
    assert pres[:2] == ['"Stonework"', '"Stonework (mid-update)"']
    page = (await client.get(f"/agents/{ref(records.urls['unreachable'])}")).text
    assert '<dt>Why</dt><dd><code><bdi class="agent-text">connect_failed</bdi>' in page
    gone = (await client.get(f"/api/agents/{ref(records.urls['unreachable'])}")).json()
    assert gone["latest"]["outcome"] == "unreachable"
    assert gone["latest"]["card_signature"] == {"status": "not checked", "reading": None}
    assert gone["conflicts"] == []


# --- escaping ----------------------------------------------------------------------------


def _markup_check(html: str) -> None:
    tags = Tags(html).tags
    names = {t for t, _ in tags}
    assert "script" not in names and "img" not in names
    assert [t for t in names if t == "svg"] in ([], ["svg"])
    for tag, attrs in tags:
        for name in attrs:
            assert not name.startswith("on"), (tag, name)


@pytest.mark.parametrize("path", ["/", "/agents/{hostile}", "/agents/{hostile_url}"])
async def test_agent_strings_are_text_never_markup(
    client: httpx.AsyncClient, records: Records, path: str
) -> None:
    url = path.format(hostile=ref(records.urls["hostile"]),
                      hostile_url=ref(records.urls["hostile_url"]))  # fmt: skip
    html = (await client.get(url)).text
    _markup_check(html)
    text = Tags(html).all_text()
    assert "window.__pwned" in text  # shown, as text
    if path != "/":
        assert visible(HOSTILE_RUNNER) in text
    if "hostile}" in path:
        assert "<U+202E>" in text and "\u202e" not in html  # direction override made visible
        for value in (HOSTILE_NAME, HOSTILE_SKILL, HOSTILE_GOT):  # expected and got
            assert json.dumps(visible(value), ensure_ascii=False) in text


async def test_every_response_carries_the_csp(client: httpx.AsyncClient, records: Records) -> None:
    paths = ["/", f"/agents/{ref(records.urls['hostile'])}", "/api/agents", "/api/records/1",
             "/api/openapi.json", "/static/ledger.css", "/nowhere", "/api/nowhere",
             "/agents/nobody", "/?page=0"]  # fmt: skip
    for path in paths:
        response = await client.get(path)
        assert response.headers["content-security-policy"] == CSP, path
        assert response.headers["x-content-type-options"] == "nosniff", path
    page = (await client.get("/")).text
    assert "<script" not in page and " style=" not in page  # nothing the CSP would block


async def test_the_page_reads_the_same_from_postgresql(
    client: httpx.AsyncClient, records: Records, postgres_server: Server
) -> None:
    # The display depends on the records only: the same records added in the same order
    # to PostgreSQL give byte-identical pages and API answers.
    with Ledger.open(postgres_server.database()) as pg:
        for body in records.bodies:
            pg.add(body)
        transport = httpx.ASGITransport(app=app(pg))
        async with httpx.AsyncClient(transport=transport, base_url="http://ledger.test") as c:
            paths = ["/", "/api/agents", "/api/records/3"]
            for url in records.urls.values():
                paths += [f"/agents/{ref(url)}", f"/api/agents/{ref(url)}"]
            for path in paths:
                theirs, ours = await c.get(path), await client.get(path)
                assert theirs.status_code == ours.status_code == 200, path
                assert theirs.content == ours.content, path


async def test_an_agent_the_store_cannot_hold_is_a_404_on_postgresql(
    postgres_server: Server,
) -> None:
    # Review finding 2 (decisions D-WEB-12; a hostile peer): a card URL with NUL
    # (%00 in the path) made PostgreSQL refuse the query: a 500, not agent_not_found.
    with Ledger.open(postgres_server.database()) as pg:
        transport = httpx.ASGITransport(app=app(pg))
        async with httpx.AsyncClient(transport=transport, base_url="http://ledger.test") as c:
            for path in ("/agents/a%00b", "/api/agents/a%00b", "/api/agents/" + "a" * 3000):
                answer = await c.get(path)
                assert answer.status_code == 404, path
        assert pg.history("a\x00b") == [] and pg.latest("a\x00b") is None


async def test_an_unknown_agent_is_a_fixed_404_that_repeats_nothing(
    client: httpx.AsyncClient,
) -> None:
    asked = ref("http://example.test/<b>boo</b>")
    html = await client.get(f"/agents/{asked}")
    api = await client.get(f"/api/agents/{asked}")
    assert html.status_code == api.status_code == 404
    assert "boo" not in html.text and "boo" not in api.text
    assert api.json() == {"error": {"code": "agent_not_found",
                                    "message": "No results for that agent"}}  # fmt: skip


class _Down:
    """A ledger whose store went away after the page started (a database restart)."""

    def _fail(self, *_: Any, **__: Any) -> Any:
        from a2a_interview.ledger import StoreUnavailable

        raise StoreUnavailable("the store cannot be opened or reached")

    agents_from = matching = totals = summary = history_page = latest_evidence = newer_than = (
        get
    ) = _fail
    runners = _fail


async def test_a_store_that_cannot_be_read_is_a_fixed_503(client: httpx.AsyncClient) -> None:
    # Review finding 4 (decisions D-WEB-12: every error a fixed answer with a
    # stable code, JSON under /api/): a store that failed mid-request escaped as an
    # exception: Starlette's plain-text 500 and a traceback in the log.
    document = (await client.get("/api/openapi.json")).json()
    transport = httpx.ASGITransport(app=app(_Down()))
    async with httpx.AsyncClient(transport=transport, base_url="http://ledger.test") as c:
        for path in ("/", "/agents/x", "/api/agents", "/api/agents/x", "/api/records/1"):
            answer = await c.get(path)
            assert answer.status_code == 503, path
            assert answer.headers["content-security-policy"] == CSP
            if path.startswith("/api/"):
                assert answer.json() == {"error": {
                    "code": "store_unavailable",
                    "message": "The ledger's store cannot be read now"}}  # fmt: skip
                _validator(document, "Error").validate(answer.json())
                route = (
                    "/api/records/{record_id}"
                    if "records" in path
                    else ("/api/agents/{card_url}" if path.count("/") == 3 else "/api/agents")
                )
                assert "503" in document["paths"][route]["get"]["responses"]
            else:
                assert "cannot be read now" in answer.text
                assert "reached" not in answer.text


# --- the JSON API --------------------------------------------------------------------


async def test_the_openapi_document_is_valid_3_1(client: httpx.AsyncClient) -> None:
    document = (await client.get("/api/openapi.json")).json()
    assert document["openapi"] == "3.1.0"
    validate_openapi(document)  # raises on an invalid document


def _validator(document: dict[str, Any], name: str) -> jsonschema.Draft202012Validator:
    # OpenAPI 3.1 schemas are JSON Schema 2020-12; refs point into the whole document.
    schema = {**document, "$ref": f"#/components/schemas/{name}"}
    return jsonschema.Draft202012Validator(schema)


async def test_the_api_answers_as_its_document_says(
    client: httpx.AsyncClient, records: Records
) -> None:
    document = (await client.get("/api/openapi.json")).json()
    listed = (await client.get("/api/agents")).json()
    _validator(document, "AgentList").validate(listed)
    assert [a["card_url"] for a in listed["agents"]] == sorted(set(records.urls.values()))
    for url in records.urls.values():
        agent = (await client.get(f"/api/agents/{ref(url)}")).json()
        _validator(document, "Agent").validate(agent)
    error = (await client.get("/api/agents?page=x")).json()
    _validator(document, "Error").validate(error)


async def test_the_api_shows_conflicts_and_who_ran_it(
    client: httpx.AsyncClient, records: Records
) -> None:
    agent = (await client.get(f"/api/agents/{ref(records.urls['nonconformant'])}")).json()
    assert agent["latest"]["outcome"] == "non_conformant"
    assert agent["latest"]["ran_by"]["party"] == "third_party"
    assert agent["latest"]["ran_by"]["name"] == "Example Audits"
    assert agent["latest"]["standing"] == "evidence"
    pairs = {(c["expected"], c["got"]) for c in agent["conflicts"]}
    assert ('"Stonework"', '"Stonewerk"') in pairs
    assert any(c["got_refusal"] for c in agent["conflicts"])
    assert agent["does_not_establish"] == [
        "the agent's competence at its skills",
        "the agent's conduct outside these calls",
    ]


async def test_a_record_comes_back_byte_for_byte(
    client: httpx.AsyncClient, ledger: Ledger, records: Records
) -> None:
    for summary in ledger.agents():
        for stored in ledger.history(summary.card_url):
            response = await client.get(f"/api/records/{stored.id}")
            assert response.status_code == 200
            assert response.content == stored.body
            assert response.content.strip() in [b.strip() for b in records.bodies]
    for bad in ("0", "999999", "1e3", "-1", "1%20", "%E2%91%A0"):
        response = await client.get(f"/api/records/{bad}")
        assert response.status_code == 404, bad
        assert response.json()["error"]["code"] == "record_not_found"


async def test_an_encoded_card_url_is_decoded_exactly_once(
    client: httpx.AsyncClient, records: Records
) -> None:
    agent = (await client.get(f"/api/agents/{ref(HOSTILE_URL)}")).json()
    assert agent["card_url"] == HOSTILE_URL
    twice = await client.get(f"/api/agents/{ref(ref(HOSTILE_URL))}")
    assert twice.status_code == 404


async def test_lists_are_paged(client: httpx.AsyncClient, records: Records) -> None:
    # docs/decisions.md D-WEB-22: the index and /api/agents are paged by keyset (after or
    # before a card URL, as the "next" and "previous" links give it), so a page far in
    # costs what the first does; every agent is on exactly one page, in card URL order.
    everyone = sorted(set(records.urls.values()))
    seen: list[str] = []
    listing = (await client.get("/api/agents?per_page=2")).json()
    assert listing["previous"] is None and "page" not in listing and "pages" not in listing
    pages = [listing]
    while listing["next"] is not None:
        assert "per_page=2" in listing["next"]
        listing = (await client.get(listing["next"])).json()
        pages.append(listing)
    for one in pages:
        seen += [a["card_url"] for a in one["agents"]]
    assert seen == everyone and len(pages) == -(-len(everyone) // 2)
    back = [a["card_url"] for a in (await client.get(pages[-1]["previous"])).json()["agents"]]
    assert back == [a["card_url"] for a in pages[-2]["agents"]]
    # Before the first agent: an empty page with no way further back.
    first = (await client.get(f"/api/agents?before={ref(everyone[0])}")).json()
    assert first["agents"] == [] and first["previous"] is None
    history = await client.get(f"/api/agents/{ref(records.urls['consistent'])}?per_page=1")
    assert history.json()["pages"] == 2 and len(history.json()["records"]) == 1
    for bad in ("page=1", "per_page=201", "per_page=0", "after=a&before=b", "after=a&after=b",
                "after=%00", "before=" + "x" * 4097):  # fmt: skip
        response = await client.get(f"/api/agents?{bad}")
        assert response.status_code == 400, bad
        html = await client.get(f"/?{bad}")
        assert html.status_code == 400, bad
    assert (await client.get("/api/agents?after=a&before=b")).json()["error"]["code"] == (
        "bad_cursor"
    )
    for bad in ("page=0", "page=-1", "page=1.5", "page=1&page=2", "page=%EF%BC%91"):
        history = await client.get(f"/api/agents/{ref(records.urls['consistent'])}?{bad}")
        assert history.status_code == 400, bad


async def test_the_index_links_its_pages_by_card_url(
    client: httpx.AsyncClient, records: Records, monkeypatch: pytest.MonkeyPatch
) -> None:
    # D-WEB-22: the page's own links (no JavaScript): "next" after the last card URL
    # shown, "previous" before the first, "first" back to the start, the search kept.
    monkeypatch.setattr("a2a_interview.ledger.web.PAGE_SIZE", 2)
    everyone = sorted(set(records.urls.values()))
    shown: list[str] = []
    path = "/"
    while True:
        html = (await client.get(path)).text
        shown += [unescape(row["url"]) for row in rows_of(html)]
        found = re.search(r'<a rel="next" href="/([^"]*)"', html)
        if found is None:
            break
        path = "/" + unescape(found.group(1))
    assert shown == [visible(u) for u in everyone]
    previous = re.search(r'<a rel="prev" href="/([^"]*)"', html)
    assert previous is not None and "before=" in previous.group(1)
    assert '<a href="/">first</a>' in html
    # A search keeps its text in every link.
    html = (await client.get("/?q=127.0.0.1")).text
    found = re.search(r'<a rel="next" href="/([^"]*)"', html)
    assert found is not None and "q=127.0.0.1" in unescape(found.group(1))


async def test_a_search_counts_its_matches_up_to_a_bound(
    client: httpx.AsyncClient, records: Records, monkeypatch: pytest.MonkeyPatch
) -> None:
    # D-WEB-22: a search counts its matches up to MATCH_CAP and says "more than" beyond
    # it (a count of every match costs O(matches)); its pages still hold every match.
    monkeypatch.setattr("a2a_interview.ledger.web.MATCH_CAP", 2)
    everyone = sorted(set(records.urls.values()))
    listing = (await client.get("/api/agents?q=127.0.0.1&per_page=2")).json()
    assert (listing["matching"], listing["matching_more"]) == (2, True)
    seen = [a["card_url"] for a in listing["agents"]]
    while listing["next"] is not None:
        listing = (await client.get(listing["next"])).json()
        seen += [a["card_url"] for a in listing["agents"]]
    assert seen == [u for u in everyone if "127.0.0.1" in u]
    page = Tags((await client.get("/?q=127.0.0.1")).text).all_text()
    assert "Agents whose card URL or name contains “127.0.0.1”: more than 2." in page
    one = (await client.get(f"/api/agents?q={ref(everyone[0][:30])}")).json()
    assert (one["matching"], one["matching_more"]) == (1, False)


async def test_only_get_is_served(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/agents", content=b"{}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert response.json()["error"]["code"] == "method_not_allowed"


# --- the pure parts ------------------------------------------------------------------


def _point(**changes: Any) -> Row:
    document = {"outcome": "consistent", "ran_by": {"party": "self", "name": "x"}}
    return replace(row(1, "http://a", document), **changes)


def test_the_timeline_escapes_every_string_it_writes() -> None:
    hostile = _point(id='1"><script>', runner_name="</title><script>x()</script>",
                     finished_at="<b>x</b><script>")  # fmt: skip
    svg = timeline_svg([hostile])
    tags = Tags(svg).tags
    assert {t for t, _ in tags} == {"svg", "title", "line", "a", "circle", "text"}
    assert "<script" not in svg and "<b>" not in svg
    assert 'href="#record-1&quot;&gt;&lt;script&gt;"' in svg


def test_the_timeline_is_bounded() -> None:
    svg = timeline_svg([_point(id=str(i)) for i in range(500)])
    assert svg.count("<circle") == 60
    assert "#record-499" in svg and "#record-439" not in svg


def test_visible_shows_what_would_hide_or_turn_text() -> None:
    assert visible("a\u202eb\u200bc\x00d") == "a<U+202E>b<U+200B>c<U+0000>d"
    assert visible("é 中 🙂") == "é 中 🙂"
    assert visible("x" * 400).endswith("…") and len(visible("x" * 400)) == 300


# --- the command ---------------------------------------------------------------------


def test_ledger_serve_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from a2a_interview.cli import main

    store = f"sqlite:///{tmp_path / 'ledger.db'}"
    assert main(["ledger", "serve", "--store", store, "--port", "70000"]) == 2
    assert capsys.readouterr().err == (
        "a2a-interview: error: --port 70000 is not a TCP port (0-65535)\n"
    )
    assert main(["ledger", "serve", "--store", "mysql://nobody@nowhere/x", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("a2a-interview: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_ledger_serve_on_a_busy_port_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    from a2a_interview.cli import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        store = f"sqlite:///{tmp_path / 'ledger.db'}"
        assert main(["ledger", "serve", "--store", store, "--port", str(port)]) == 3
    err = capsys.readouterr().err
    assert (
        err == f"a2a-interview: error: cannot serve on 127.0.0.1:{port}: Address already in use\n"
    )


def test_the_row_cache_is_bounded_and_keyed_by_the_bytes(ledger: Ledger) -> None:
    from a2a_interview.ledger.memo import Rows

    rows = Rows(2)
    stored = [s.latest for s in ledger.agents()][:3]
    made = [rows(s) for s in stored]
    assert len(rows._rows) == 2
    assert rows(stored[2]) is made[2]  # kept: the same bytes, the same row
    assert rows(stored[0]) is not made[0]  # dropped, made again
    assert rows(stored[0]) == made[0]


def test_ledger_serve_serves_on_loopback_and_stops_on_ctrl_c(
    ledger: Ledger, tmp_path: Path
) -> None:
    import signal

    with _serve_workers(ledger, tmp_path, None) as (proc, origin):
        response = httpx.get(origin + "/api/agents", timeout=10)
        assert response.status_code == 200
        assert len(response.json()["agents"]) == 1
        assert response.headers["content-security-policy"] == CSP
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
        assert "Traceback" not in proc.stderr.read()


@contextmanager
def _serve_workers(
    ledger: Ledger, tmp_path: Path, workers: int | None
) -> Iterator[tuple[Any, str]]:
    """``ledger serve --workers N`` (``None``: the command's default) as a process over
    a store holding one of ``ledger``'s records: the process and its origin, once it
    says it listens; killed on the way out if a test left it running."""
    import subprocess
    import sys

    store = f"sqlite:///{tmp_path / 'served.db'}"
    with Ledger.open(store) as fresh:
        fresh.add(ledger.agents()[0].latest.body)
    command = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()"]
    proc = subprocess.Popen(
        [*command, "ledger", "serve", "--store", store, "--port", "0",
         *([] if workers is None else ["--workers", str(workers)])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith("ledger page at http://127.0.0.1:"), first
        yield proc, first.split()[3].rstrip("/")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def _stop(proc: Any) -> str:
    """SIGTERM, as a service manager stops it: exit 0, no traceback; its stderr."""
    import signal

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    stderr = str(proc.stderr.read())
    assert "Traceback" not in stderr
    return stderr


def _children(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def _gone(pid: str) -> bool:
    path = Path(f"/proc/{pid}/stat")
    return not path.exists() or path.read_text().split()[2] == "Z"


def _serves(origin: str, times: int = 12) -> None:
    with httpx.Client(base_url=origin, timeout=10) as client:
        for _ in range(times):  # new connections, whichever worker accepts them
            response = client.get("/api/agents", headers={"connection": "close"})
            assert response.status_code == 200 and len(response.json()["agents"]) == 1


def _replaced(proc: Any, before: list[str], count: int) -> list[str]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        now = _children(proc.pid)
        if len(now) == count and now != before:
            return now
        time.sleep(0.05)
    raise AssertionError(f"no replacement: {before} -> {_children(proc.pid)}")


def test_ledger_serve_workers_share_the_port_and_stop_with_it(
    ledger: Ledger, tmp_path: Path
) -> None:
    # D-WEB-23: --workers N forks N processes after binding, each serving the one port
    # with its own store connections; SIGTERM to the command (as a service manager
    # sends it) stops every one of them, and none is left behind.
    with _serve_workers(ledger, tmp_path, 3) as (proc, origin):
        children = _children(proc.pid)
        assert len(children) == 3
        _serves(origin)
        _stop(proc)
        assert all(_gone(child) for child in children)


def test_ctrl_c_while_the_workers_start_stops_every_one(ledger: Ledger, tmp_path: Path) -> None:
    # D-WEB-25: a worker collects its garbage once before it serves. A Ctrl-C that
    # landed then was raised inside a weak reference's callback, which Python prints as
    # "Exception ignored" and drops: that worker served on and the command never exited
    # (the test above hung 2 runs in 5). Ctrl-C sent as soon as the command listens,
    # while its workers start, stops every one of them, each time.
    import signal

    for _ in range(4):
        with _serve_workers(ledger, tmp_path, 2) as (proc, _origin):
            children = _children(proc.pid)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(15) == 0
            assert all(_gone(child) for child in children)
            stderr = proc.stderr.read()
            assert "Exception ignored" not in stderr and "Traceback" not in stderr


def test_a_ledger_worker_that_dies_is_replaced(ledger: Ledger, tmp_path: Path) -> None:
    # D-WEB-23: a worker that exits on its own (here killed, as the kernel's OOM killer
    # would) is replaced with one line on stderr: the command keeps its N workers and
    # the port keeps serving, instead of running on with fewer until none is left.
    import os
    import signal

    with _serve_workers(ledger, tmp_path, 2) as (proc, origin):
        before = _children(proc.pid)
        os.kill(int(before[0]), signal.SIGKILL)
        after = _replaced(proc, before, 2)
        assert before[1] in after and before[0] not in after
        _serves(origin)
        stderr = _stop(proc)
        assert "a ledger worker exited (signal SIGKILL); starting another" in stderr
        assert all(_gone(child) for child in after)


def test_ledger_workers_that_keep_dying_stop_the_command(ledger: Ledger, tmp_path: Path) -> None:
    # D-WEB-23: workers that exit as fast as they are replaced (more than five within
    # 30 s) stop the command with one line and exit 1, rather than fork in a loop.
    import os
    import signal

    with _serve_workers(ledger, tmp_path, 2) as (proc, _):
        current = _children(proc.pid)
        for _ in range(5):
            os.kill(int(current[0]), signal.SIGKILL)
            current = _replaced(proc, current, 2)
        os.kill(int(current[0]), signal.SIGKILL)  # the sixth within the window
        assert proc.wait(15) == 1
        assert all(_gone(child) for child in current)  # the other one stopped too
        stderr = proc.stderr.read()
        assert stderr.count("starting another") == 5
        assert stderr.rstrip().endswith(
            "a2a-interview: error: ledger workers keep exiting (6 within 30 s): stopped"
        )
        assert "Traceback" not in stderr


# --- runners are keys (D-WEB-16, PROFILE §8 "Who ran it") -----------------------


async def test_the_strangers_acme_market_is_not_acme_market(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-WEB-16: a record re-signed with a fresh key as party platform, name
    # "Acme Market", showed on the index exactly like Acme's real rows. A runner is its
    # key: the operator lists Acme's key; the stranger's row is shown by its key's
    # fingerprint, its name marked self-declared, its evidence worded apart.
    from a2a_interview import nkeys
    from a2a_interview.cli import main
    from a2a_interview.ledger.runners import fingerprint, read_runners
    from support.ledger import record

    acme_seed, stranger_seed = nkeys.generate_seed(), nkeys.generate_seed()
    acme = nkeys.public_of(nkeys.private_key(acme_seed))
    stranger = nkeys.public_of(nkeys.private_key(stranger_seed))
    runners_file = tmp_path / "runners.json"
    runners_file.write_text(json.dumps({"runners": [{"key": acme, "name": "Acme Market"}]}))
    runners = read_runners(runners_file.read_bytes())
    real = sign_record(record("https://real.example", party="platform", name="Acme Market"),
                       acme_seed)  # fmt: skip
    fake = sign_record(record("https://fake.example", party="platform", name="Acme Market"),
                       stranger_seed)  # fmt: skip
    store = tmp_path / "acme.db"
    with Ledger.open(f"sqlite:///{store}") as ledger:
        ledger.add(json.dumps(real).encode())
        ledger.add(json.dumps(fake).encode())
        transport = httpx.ASGITransport(app=app(ledger, runners))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            index = (await c.get("/")).text
            api = (await c.get("/api/agents")).json()
            page = (await c.get("/runners")).text
            seen = (await c.get("/api/runners")).json()["runners"]
            fake_page = (await c.get(f"/agents/{ref(fake['agent']['card_url'])}")).text
    rows = {r["card_url"].split("/")[2]: r["latest"] for r in api["agents"]}
    assert rows["real.example"]["runner"]["listed_name"] == "Acme Market"
    assert rows["real.example"]["standing_words"] == "evidence"
    assert rows["fake.example"]["runner"] == {
        "key": stranger, "fingerprint": fingerprint(stranger), "listed": False,
        "listed_name": None, "self_declared_name": "Acme Market",
        "label": f"unlisted key {fingerprint(stranger)} (self-declared name: Acme Market)",
    }  # fmt: skip
    assert rows["fake.example"]["standing_words"] == "evidence by an unlisted runner"
    text = Tags(index).all_text()
    assert f"a platform: Acme Market (listed runner, key {fingerprint(acme)})" in text
    assert (
        f"a platform: unlisted key {fingerprint(stranger)} (self-declared name: Acme Market)"
        in text
    )
    assert text.count("EVIDENCE BY AN UNLISTED RUNNER") == 1
    assert "EVIDENCE BY AN UNLISTED RUNNER" in Tags(fake_page).all_text()
    # The runners page: every key seen, listed or not, with its counts.
    assert {(r["key"], r["listed"], r["results"]) for r in seen} == {
        (acme, True, 1), (stranger, False, 1)
    }  # fmt: skip
    assert all(r["first_seen"].endswith("Z") for r in seen)
    assert "Acme Market" in page and fingerprint(stranger) in page  # type: ignore[operator]
    # The CLI names runners the same way.
    assert main(["ledger", "list", "--store", str(store), "--runners", str(runners_file)]) == 0
    out = capsys.readouterr().out
    assert "ran by: Acme Market (listed runner" in out
    assert f"ran by: unlisted key {fingerprint(stranger)} (self-declared name: Acme Market)" in out
    assert "evidence by an unlisted runner" in out


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"[]", "must be"), (b'{"runners": [{"key": "nope", "name": "x"}]}', "public nkey"),
     (b'{"runners": [{"key": "KEY", "name": ""}]}', "printable"),
     (b'{"runners": [{"key": "KEY", "name": "a\\u0007"}]}', "printable"),
     (b'{"runners": [{"key": "KEY", "name": "A"}, {"key": "KEY", "name": "B"}]}', "twice"),
     (b"{oops", "strict I-JSON")],
)  # fmt: skip
def test_a_bad_runners_file_is_one_usage_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    from a2a_interview import nkeys
    from a2a_interview.cli import main

    key = nkeys.public_of(nkeys.private_key(nkeys.generate_seed()))
    path = tmp_path / "runners.json"
    path.write_bytes(content.replace(b"KEY", key.encode()))
    for command in (["list"], ["show", "https://a.example"]):
        code = main(["ledger", *command, "--store", str(tmp_path / "l.db"), "--runners", str(path)])
        err = capsys.readouterr().err
        assert code == 2 and says in err and "[bad_runners]" in err and "Traceback" not in err


async def test_search_and_neutral_totals(client: httpx.AsyncClient, records: Records) -> None:
    # D-WEB-20: search by card URL; totals that never count an outcome
    # (interview §9: absence is never read as negative, so nothing is filtered by it).
    port = records.urls["evidence"].split(":")[2].split("/")[0]
    listed = (await client.get(f"/api/agents?q={port}")).json()
    assert listed["matching"] == 1
    assert [a["card_url"] for a in listed["agents"]] == [records.urls["evidence"]]
    totals = listed["totals"]
    assert totals["results"] == totals["evidence"] + totals["claims"] == len(records.bodies)
    assert set(totals) == {"agents", "results", "evidence", "claims", "listed_evidence",
                           "unlisted_evidence"}  # fmt: skip
    page = Tags((await client.get(f"/?q={port}")).text).all_text()
    assert f"Agents whose card URL or name contains “{port}”: 1." in page
    assert f"{totals['agents']} agents · {totals['results']} results" in re.sub(r"\s+", " ", page)
    assert "EVIDENCE" in page
    nothing = Tags((await client.get("/?q=no-such-agent")).text).all_text()
    assert "No agent's card URL or name contains that." in nothing
    for bad in ("q=" + "x" * 201, "q=a&q=b", "q=%00"):
        assert (await client.get(f"/api/agents?{bad}")).status_code == 400


async def test_every_result_reads_as_a_page_with_the_reason_for_a_claim(
    client: httpx.AsyncClient, records: Records, ledger: Ledger
) -> None:
    # D-WEB-18, D-WEB-30: older results only as raw JSON; a claim never said why; the
    # timeline's marks had no label. Every result has its page, every mark a dated label.
    html = (await client.get(f"/agents/{ref(records.urls['consistent'])}")).text
    links = re.findall(r'<a href="/records/(\d+)">read it</a>', html)
    assert len(links) == 2
    marks = re.findall(r'<ol class="marks">(.*?)</ol>', html, re.S)[0]
    assert len(re.findall(r"<li ", marks)) == 2 == html.count('class="mark-label"')
    assert re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", marks)
    for record_id in links:
        page = await client.get(f"/records/{record_id}")
        assert page.status_code == 200 and page.headers["content-security-policy"] == CSP
        text = Tags(page.text).all_text()
        assert f"Result {record_id}" in text and "this agent's history" in text
        stored = ledger.get(int(record_id))
        assert stored is not None
        if stored.document["ran_by"]["party"] == "self":
            assert "CLAIM (the agent ran it against itself: a claim, never evidence)" in text
    assert (await client.get("/records/999999")).status_code == 404
    assert (await client.get("/records/x")).status_code == 404


async def test_the_agent_name_is_shown_as_the_card_names_itself_and_found(
    client: httpx.AsyncClient, records: Records
) -> None:
    # D-STORE-16: the agent's name (agent.name, from its card) on the index, the
    # agent page, the API; search by it. Peer text (docs/security.md): escaped, and
    # worded as what the card calls itself, the card URL staying the agent's identity.
    index = await client.get("/")
    text = Tags(index.text).all_text()
    assert "as the card names itself: “Stonework”" in text
    _markup_check(index.text)
    assert f"as the card names itself: “{visible(HOSTILE_NAME)}”" in text
    page = Tags((await client.get(f"/agents/{ref(records.urls['evidence'])}")).text).all_text()
    assert "Name, as the card names itself: “Stonework”." in page
    assert "the card URL above is who the agent is" in page
    listed = (await client.get("/api/agents?per_page=200")).json()
    names = {a["card_url"]: a["name"] for a in listed["agents"]}
    assert names[records.urls["evidence"]] == "Stonework"
    assert names[records.urls["hostile"]] == HOSTILE_NAME  # JSON: the string as written
    assert names[records.urls["unreachable"]] is None  # no card read, no name
    agent = (await client.get(f"/api/agents/{ref(records.urls['hostile'])}")).json()
    assert agent["name"] == agent["latest"]["agent_name"] == HOSTILE_NAME
    record_id = agent["latest"]["id"]
    body = (await client.get(f"/api/records/{record_id}")).json()
    assert body["agent"]["name"] == HOSTILE_NAME
    # Search by a part of the name (case folded) finds the agents that carry it.
    found = (await client.get("/api/agents?q=GNP.EXE")).json()
    assert {a["card_url"] for a in found["agents"]} == {
        records.urls["hostile"],
        records.urls["hostile_url"],
    }
    shown = Tags((await client.get("/?q=gnp.exe")).text).all_text()
    assert "Agents whose card URL or name contains “gnp.exe”: 2." in shown


@pytest.mark.parametrize("role", ["consistent", "nonconformant", "absent", "churn", "unreachable"])
async def test_every_surface_words_an_outcome_in_the_one_vocabulary(
    client: httpx.AsyncClient,
    records: Records,
    ledger: Ledger,
    role: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D-WEB-21: the page, the API, `ledger list` and the verifier's report say
    # an outcome in one set of words, defined once (record.OUTCOME_WORDS).
    from a2a_interview.cli import main
    from a2a_interview.record import OUTCOME_WORDS
    from a2a_interview.report import render_report

    card_url = records.urls[role]
    agent = (await client.get(f"/api/agents/{ref(card_url)}")).json()
    outcome = agent["latest"]["outcome"]
    label, meaning = OUTCOME_WORDS[outcome]
    assert agent["latest"]["outcome_label"] == label
    page = Tags((await client.get(f"/agents/{ref(card_url)}")).text).all_text()
    assert f"Outcome{label} {meaning}" in page  # <dt>Outcome</dt><dd>label meaning
    stored = ledger.get(int(agent["latest"]["id"]))
    assert stored is not None
    report = render_report(stored.document)  # verify's and record show's report
    assert f"Outcome: {outcome.upper()}" in report and f": {meaning}." in report
    assert label in report or label.replace("-", "_").upper() in report
    assert main(["ledger", "list", "--store", str(ledger._url)]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if card_url in x]
    assert f"  {label} " in line
