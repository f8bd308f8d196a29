"""The ledger shows only what verified (PROFILE §8): a key names a runner only when its
signature verifies on the record; an agent is its normalized card URL, one line however
a record spells it; re-verification interviews the card URL the store keeps. On SQLite
and a real PostgreSQL, and on the page."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

import a2a_interview
from a2a_interview import nkeys
from a2a_interview.record import sign_record
from needs import module as need_module

if TYPE_CHECKING:
    from pg import Server

sa = need_module("sqlalchemy", "the ledger extra (sqlalchemy)", "pip install -e '.[ledger]'")

from a2a_interview.ledger import Ledger, NotSane  # noqa: E402
from a2a_interview.ledger.runners import fingerprint, read_runners  # noqa: E402
from a2a_interview.ledger.web import app  # noqa: E402
from support.ledger import compact, migrate_to, record  # noqa: E402

pytest_plugins = ["pg"]

ACME_SEED = nkeys.generate_seed()
ACME = nkeys.public_of(nkeys.private_key(ACME_SEED))
CARD = "https://a.example/.well-known/agent-card.json"


def _acme_runners() -> Any:
    return read_runners(json.dumps({"runners": [{"key": ACME, "name": "Acme Market"}]}).encode())


def _unsigned_naming_acme(agent: str = "https://a.example") -> dict[str, Any]:
    document = record(agent, party="platform", name="Acme Market")
    document["ran_by"]["key"] = ACME  # Acme's public key, written by anyone
    return document


async def _get(ledger: Ledger, *paths: str) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=app(ledger, _acme_runners()))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return [await client.get(path) for path in paths]


# --- item: runners named only by what verified ----------------------------------------


def test_an_unsigned_record_naming_a_listed_key_names_no_runner(store_url: str) -> None:
    # PROFILE §8: in an unsigned record ran_by.key and ran_by.name are self-declared
    # text, never matched against the operator's list, never counted in a runner's
    # results. It was shown as "Run by: a platform: Acme Market (listed runner, key …)"
    # beside "Runner signature: unsigned", and /runners counted it in Acme's results.
    with Ledger.open(store_url) as ledger:
        stored = ledger.add(compact(_unsigned_naming_acme()))
        assert stored.runner_key is None and stored.signature == "unsigned"
        assert ledger.runners() == []
        [line] = ledger.agents_from(10)
        assert line.latest.runner_key is None
        index, api, runners, agent = asyncio.run(
            _get(ledger, "/", "/api/agents", "/api/runners", f"/agents/{CARD}")
        )
        assert runners.json()["runners"] == []
        shown = api.json()["agents"][0]["latest"]
        assert shown["runner"]["listed"] is False and shown["runner"]["key"] is None
        assert shown["runner"]["label"] == (
            "no verified runner key (self-declared name: Acme Market)"
        )
        for page in (index.text, agent.text):
            assert "(listed runner" not in page and fingerprint(ACME) not in page  # type: ignore[operator]
            assert "no verified runner key" in page
        # Acme's own signed result is Acme's, counted once.
        ledger.add(compact(sign_record(record("https://b.example", party="platform",
                                              name="Acme Market"), ACME_SEED)))  # fmt: skip
        [seen] = ledger.runners()
        assert (seen.key, seen.results) == (ACME, 1)
        # The same run, later with Acme's signature, is Acme's: the signed copy replaces.
        ledger.add(compact(sign_record(_unsigned_naming_acme(), ACME_SEED)))
        [seen] = ledger.runners()
        assert (seen.key, seen.results) == (ACME, 2)


def test_a_record_whose_signature_fails_names_no_runner_on_display() -> None:
    # PROFILE §8: a signature that does not verify names nobody (a display reading a
    # record from elsewhere; a store refuses it).
    from a2a_interview.ledger.display import row

    document = sign_record(record(party="platform", name="Acme Market"), ACME_SEED)
    document["outcome"] = "non_conformant"  # altered after signing
    shown = row(1, CARD, document, runners=_acme_runners())
    assert shown.runner_key is None and not shown.runner.listed
    assert shown.runner.label == "no verified runner key (self-declared name: Acme Market)"


# --- item: agents named by normalized card URLs ----------------------------------------


SPELLINGS = [
    "https://a.example//.well-known/agent-card.json",
    "HTTPS://A.EXAMPLE/.well-known/agent-card.json",
    "https://a.example/.well-known/agent-card.json?x=1",
    "https://a.example/.well-known/agent-card.json#frag",
    "https://a.example:443/.well-known/./agent-card.json",
]


def _spelled(card_url: str, minute: int) -> dict[str, Any]:
    document = record(finished=f"2026-11-29T10:{minute:02d}:00Z")
    document["agent"]["card_url"] = card_url
    return document


def test_one_agent_is_one_line_however_its_card_url_is_spelled(store_url: str) -> None:
    # PROFILE §8: agents are named by card URL after RFC 3986 §6.2.2 normalization.
    # Each spelling made a line of its own.
    with Ledger.open(store_url) as ledger:
        for minute, spelling in enumerate(SPELLINGS):
            ledger.add(compact(_spelled(spelling, minute)))
        [line] = ledger.agents_from(10)
        assert (line.card_url, line.count) == (CARD, len(SPELLINGS))
        assert ledger.totals().agents == 1
        for spelling in SPELLINGS:  # any spelling finds it
            assert ledger.summary(spelling).count == len(SPELLINGS)  # type: ignore[union-attr]
            assert len(ledger.history(spelling)) == len(SPELLINGS)
        assert ledger.due(timedelta(0), datetime.now(UTC) + timedelta(days=1)) == [CARD]


def test_a_record_naming_a_card_url_with_userinfo_is_refused(store_url: str) -> None:
    # PROFILE §8: it passed and sat in the index as trusted.example.
    trick = "https://trusted.example:" + "x" * 1200 + "@evil.example/.well-known/agent-card.json"
    document = record("https://evil.example")
    document["agent"]["card_url"] = trick
    with Ledger.open(store_url) as ledger:
        with pytest.raises(NotSane) as caught:
            ledger.add(compact(document))
        assert caught.value.sanity == "url_userinfo"
        assert ledger.count() == 0


def test_the_names_migration_folds_agents_and_clears_unverified_keys(store_url: str) -> None:
    # Migration 0090_verified_names on a store an older release wrote: rows filed under
    # spellings of one card URL fold into one agent; an unsigned row's runner_key (which
    # the old release copied from ran_by.key) is cleared; a row naming a URL with
    # userinfo leaves for ledger_refused.
    url = store_url.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = sa.create_engine(url)
    trick = _spelled("https://trusted.example:xx@evil.example/.well-known/agent-card.json", 9)
    trick["agent"]["url"] = "https://evil.example"
    rows = [
        (compact(_spelled(SPELLINGS[0], 1)), SPELLINGS[0], None, "unsigned"),
        (compact(_spelled(SPELLINGS[1], 2)), SPELLINGS[1], None, "unsigned"),
        (compact(_unsigned_naming_acme("https://b.example")),
         "https://b.example/.well-known/agent-card.json", ACME, "unsigned"),
        (compact(sign_record(record("https://c.example", party="platform", name="Acme"),
                             ACME_SEED)),
         "https://c.example/.well-known/agent-card.json", ACME, "valid"),
        (compact(trick), "https://trusted.example:xx@evil.example/.well-known/agent-card.json",
         None, "unsigned"),
    ]  # fmt: skip
    with engine.begin() as connection:
        migrate_to(connection, "0007")
        for n, (body, card_url, key, signature) in enumerate(rows):
            connection.execute(
                sa.text(
                    "INSERT INTO ledger_records (digest, card_url, agent_url, outcome, party,"
                    " runner_name, runner_key, signature, standing, standing_reason,"
                    " started_at, finished_at, stored_at, body) VALUES (:d, :c, 'u',"
                    " 'consistent', 'platform', 'Acme', :k, :s, 'claim', 'unsigned',"
                    " :t, :t, :t, :b)"
                ),
                {"d": f"sha256:{n:064d}", "c": card_url, "k": key, "s": signature,
                 "t": datetime(2026, 11, 29, 10, tzinfo=UTC), "b": body},
            )  # fmt: skip
        connection.execute(
            sa.text("INSERT INTO ledger_meta (key, value) VALUES ('standing_by', :v)"),
            {"v": a2a_interview.__version__},
        )
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM ledger_records")).scalar() == 5
    engine.dispose()
    with Ledger.open(store_url) as ledger:
        lines = {line.card_url: line.count for line in ledger.agents_from(10)}
        assert lines == {
            CARD: 2,
            "https://b.example/.well-known/agent-card.json": 1,
            "https://c.example/.well-known/agent-card.json": 1,
        }
        assert [(r.key, r.results) for r in ledger.runners()] == [(ACME, 1)]
        with ledger._read() as connection:
            keys = dict(connection.execute(sa.text(
                "SELECT card_url, runner_key FROM ledger_records"
            )).all())  # fmt: skip
            refused = connection.execute(sa.text("SELECT reason FROM ledger_refused")).all()
        assert keys["https://b.example/.well-known/agent-card.json"] is None
        assert keys["https://c.example/.well-known/agent-card.json"] == ACME
        assert [r.reason for r in refused] == ["url_userinfo"]


# --- item: re-verification targets the store's card URL --------------------------------


def test_schedule_interviews_the_card_url_the_store_keeps(postgres_server: Server) -> None:
    # PROFILE §8: one unsigned self-run record for V naming agent.url at W made every
    # later job for V interview W. A job interviews V's card URL, whatever a record says.
    need_module("procrastinate", "the ledger extra (procrastinate)", "pip install -e '.[ledger]'")
    from a2a_interview.ledger.jobs import schedule

    store = postgres_server.database()
    document = record("https://v.example", party="self", finished="2020-01-01T00:00:00Z")
    document["agent"]["url"] = "https://w.example/"
    with Ledger.open(store) as ledger:
        ledger.add(compact(document))
        result = asyncio.run(schedule(ledger, timedelta(0), datetime.now(UTC) + timedelta(1)))
        assert result.enqueued == ("https://v.example/.well-known/agent-card.json",)
        with ledger._read() as connection:
            [args] = connection.execute(sa.text("SELECT args FROM procrastinate_jobs")).scalars()
    assert args["url"] == args["card_url"] == "https://v.example/.well-known/agent-card.json"


def test_schedule_defers_in_batches_and_tells_each_agent_already_waiting(
    postgres_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # D-STORE-45: the jobs go in batches of one statement each; a batch holding an agent
    # whose job still waits (the queueing lock) is enqueued one by one, so that every
    # other agent of it is enqueued and that one told as already waiting.
    need_module("procrastinate", "the ledger extra (procrastinate)", "pip install -e '.[ledger]'")
    from a2a_interview.ledger import jobs

    monkeypatch.setattr(jobs, "SCHEDULE_BATCH", 2)
    store = postgres_server.database()
    hosts = [f"https://{name}.example" for name in "abcde"]
    cards = [f"{host}/.well-known/agent-card.json" for host in hosts]
    later = datetime.now(UTC) + timedelta(1)
    with Ledger.open(store) as ledger:
        ledger.add(compact(record(hosts[2], finished="2020-01-01T00:00:00Z")))
        first = asyncio.run(jobs.schedule(ledger, timedelta(0), later))
        assert first.enqueued == (cards[2],)
        for host in hosts[:2] + hosts[3:]:
            ledger.add(compact(record(host, finished="2020-01-01T00:00:00Z")))
        result = asyncio.run(jobs.schedule(ledger, timedelta(0), later))
        with ledger._read() as connection:
            waiting = connection.execute(sa.text("SELECT args FROM procrastinate_jobs")).scalars()
            urls = sorted(args["url"] for args in waiting)
    assert result.enqueued == (cards[0], cards[1], cards[3], cards[4])
    assert result.already_queued == (cards[2],)
    assert urls == cards


# --- item: what leads ---------------------------------------------------------------


def test_a_listed_runners_result_leads_a_newer_weaker_one_sits_beside(tmp_path: Path) -> None:
    # PROFILE §8 "What leads": the agent's own run under a fresh key marked third_party,
    # a minute after a listed platform's non_conformant, became the headline. The listed
    # runner's result leads; the newer evidence by an unlisted runner and the newer claim
    # are shown beside it with their kind; totals and the timeline keep the kinds apart.
    from a2a_interview.checks import Outcome

    listed = record(party="platform", name="Acme Market", outcome=Outcome.non_conformant,
                    finished="2026-11-29T10:00:00Z")  # fmt: skip
    own = record(party="third_party", name="Acme Market", finished="2026-11-29T10:01:00Z")
    with Ledger.open(tmp_path / "lead.db") as ledger:
        ledger.add(compact(sign_record(listed, ACME_SEED)))
        ledger.add(compact(sign_record(own, nkeys.generate_seed())))
        api, page, index, totals = asyncio.run(
            _get(ledger, f"/api/agents/{CARD}", f"/agents/{CARD}", "/", "/api/agents")
        )
        data = api.json()
        assert (data["headline"]["outcome"], data["headline_kind"]) == ("non_conformant", "listed")
        assert (data["newer"]["outcome"], data["newer_kind"]) == ("consistent", "unlisted")
        assert data["latest"]["outcome"] == "consistent"  # the latest, as it always was
        text = page.text
        lead = text[text.index('id="latest-h"') : text.index("</section>")]
        assert "NON-CONFORMANT" in lead.upper() and "Newer result" in lead
        assert "evidence by an unlisted runner is a weaker kind" in lead
        # The timeline: a filled circle for the listed runner's, a diamond for the other.
        svg = text[text.index("<svg") : text.index("</svg>")]
        assert svg.count('<circle class="mark conflict filled"') == 1
        assert svg.count('<path class="mark consistent filled unlisted"') == 1
        counts = totals.json()["totals"]
        assert (counts["listed_evidence"], counts["unlisted_evidence"], counts["claims"]) == (
            1, 1, 0)  # fmt: skip
        assert "1 by listed runners, 1 evidence by unlisted runners, 0 claims" in index.text
        # A newer claim does not lead either; without a listed runner, evidence leads.
        claim = record(party="self", finished="2026-11-29T10:02:00Z")
        ledger.add(compact(claim))
        transport = httpx.ASGITransport(app=app(ledger))

        async def unlisted() -> Any:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return (await client.get(f"/api/agents/{CARD}")).json()

        data = asyncio.run(unlisted())
        assert (data["headline"]["outcome"], data["headline_kind"]) == ("consistent", "unlisted")
        assert (data["newer"]["ran_by"]["party"], data["newer_kind"]) == ("self", "claim")


def test_an_index_line_shows_what_leads_and_the_newer_beside_it(store_url: str) -> None:
    # PROFILE §8 "What leads", on the index too: a listed runner's result leads its
    # line; the newer evidence by an unlisted runner is named beside it with its kind.
    from a2a_interview.checks import Outcome

    listed = record(party="platform", name="Acme Market", outcome=Outcome.non_conformant,
                    finished="2026-11-29T10:00:00Z")  # fmt: skip
    own = record(party="third_party", name="Acme Market", finished="2026-11-29T10:01:00Z")
    alone = record("https://z.example", party="self")
    with Ledger.open(store_url) as ledger:
        ledger.add(compact(sign_record(listed, ACME_SEED)))
        ledger.add(compact(sign_record(own, nkeys.generate_seed())))
        ledger.add(compact(alone))
        index, api = asyncio.run(_get(ledger, "/", "/api/agents"))
    lines = {a["card_url"]: a for a in api.json()["agents"]}
    line = lines[CARD]
    assert (line["headline"]["outcome"], line["headline_kind"]) == ("non_conformant", "listed")
    assert line["latest"]["outcome"] == "consistent"
    other = lines["https://z.example/.well-known/agent-card.json"]
    assert other["headline"] == other["latest"] and other["headline_kind"] == "claim"
    assert "newer, a weaker kind: consistent, evidence by an unlisted runner" in index.text
    assert index.text.count("newer, a weaker kind") == 1
