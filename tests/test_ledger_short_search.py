"""A search the index cannot answer is refused (D-STORE-23): a query without three letters
or digits in a row ("a", "ab", "%", "Ça Va") has no trigram, so the store would answer
it by reading every agent; no request walks the ledger (docs/security.md). The store
raises ``ValueError``; the page and the API answer 400 ``search_too_short`` with the
rule in words. Both stores, the web app on the real store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from needs import module as need_module

need_module("sqlalchemy", "the ledger extra (SQLAlchemy)", "pip install -e '.[ledger]'")

from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.ledger.store import SEARCH_RULE, searchable  # noqa: E402
from a2a_interview.ledger.web import app  # noqa: E402
from a2a_interview.verifier import failed_record  # noqa: E402
from a2a_interview.verifier.state import VerifyOptions  # noqa: E402

if TYPE_CHECKING:
    from pg import Server

pytest_plugins = ["pg"]
pytestmark = pytest.mark.anyio

# No three letters or digits in a row: one or two characters, punctuation only, short
# words apart, letters beyond ASCII included.
REFUSED = ["a", "ab", "%", "__%", "Ça Va", "a b c", "12", "é", "ÇA", "a.b-c_d", "://", "ab_cd"]
# Three in a row somewhere: answered from the index.
ANSWERED = ["abc", "127", "agent-1", "x.example", "Çav", "127.0.0.1:9"]


def _record(origin: str) -> bytes:
    options = VerifyOptions(clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    return json.dumps(failed_record(origin, options).to_json()).encode()


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        server: Server = request.getfixturevalue("postgres_server")
        url = server.database()
    with Ledger.open(url) as opened:
        opened.put_many([_record(f"http://127.0.0.1:{9 + i}") for i in range(3)])
        yield opened


def test_the_rule_is_three_letters_or_digits_in_a_row() -> None:
    """D-STORE-23: the rule itself, its variants (length, punctuation, beyond ASCII)."""
    assert [q for q in REFUSED if searchable(q)] == []
    assert [q for q in ANSWERED if not searchable(q)] == []


def test_the_store_refuses_a_search_its_index_cannot_answer(ledger: Ledger) -> None:
    """D-STORE-23: every way to search (count, page, walk) refuses such a query rather
    than reading every agent; the others are answered as before."""
    for query in REFUSED:
        with pytest.raises(ValueError, match=SEARCH_RULE):
            ledger.matching(query, 1000)
        with pytest.raises(ValueError, match=SEARCH_RULE):
            ledger.search_page(query, 1000, 10)
        for dense in (False, True):
            with pytest.raises(ValueError, match=SEARCH_RULE):
                ledger.agents_from(10, query, dense=dense)
    assert ledger.matching("127", 1000) == 3
    assert len(ledger.agents_from(10, "127.0.0.1:10")) == 1
    assert ledger.search_page("zzz", 1000, 10) == (0, [])


@pytest.fixture
async def client(ledger: Ledger) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app(ledger))
    async with httpx.AsyncClient(transport=transport, base_url="http://ledger.test") as c:
        yield c


async def test_the_page_and_the_api_say_the_rule(client: httpx.AsyncClient) -> None:
    """D-STORE-23: a 400 with a stable code and the rule in words, on the page and in
    the API; a query that has three in a row is answered; an empty one is no search."""
    for query in REFUSED:
        api = await client.get("/api/agents", params={"q": query})
        assert api.status_code == 400, query
        assert api.json()["error"] == {"code": "search_too_short", "message": f"q: {SEARCH_RULE}"}
        page = await client.get("/", params={"q": query})
        assert page.status_code == 400, query
        assert SEARCH_RULE in page.text
    found = await client.get("/api/agents", params={"q": "127"})
    assert found.status_code == 200 and found.json()["matching"] == 3
    assert (await client.get("/api/agents", params={"q": "  "})).status_code == 200
