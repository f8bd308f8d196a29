"""The ledger's web page and JSON API: a thin Starlette driver over :mod:`.display`.

``app(ledger)`` is an ASGI app; :mod:`.serving` runs it with uvicorn
(``a2a-interview ledger serve``). The page is rendered on the server with Jinja2
(autoescape on, every template) and needs no JavaScript: it sends none, and its
Content-Security-Policy forbids any (``script-src`` falls back to ``'none'``).

Routes (the API's are described by ``/api/openapi.json``, shipped as
``ledger/openapi.json``):

    GET /                       agents with their latest result, by card URL
                                (?after=URL / ?before=URL: keyset paging; ?q=TEXT)
    GET /agents/{card url}      one agent: latest result, boundaries, timeline,
                                conflicts, checks, every result (?page=N)
    GET /records/{id}           one result in full, as a page (any age)
    GET /runners                every runner key seen: its name on the operator's list or
                                its fingerprint, first and last seen, how many results
    GET /api/agents             the same list as JSON (?after=, ?before=, ?per_page=M)
    GET /api/runners            the runners as JSON
    GET /api/agents/{card url}  one agent as JSON (?page=N&per_page=M)
    GET /api/records/{id}       a record's bytes exactly as stored
    GET /api/openapi.json       the OpenAPI 3.1 document

``{card url}`` is the agent's card URL percent-encoded as one path segment
(``urllib.parse.quote(url, safe="")``); it is decoded once from the raw path, so a card
URL holding ``%2F`` survives. Errors are fixed text with a stable code; none repeats
what was asked for.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import threading
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Final, Protocol
from urllib.parse import quote, unquote_to_bytes

from ..record import DOES_NOT_ESTABLISH
from . import display, leads
from .memo import ROW_CACHE, Cells, Rows, when
from .runners import NO_RUNNERS, Runners, fingerprint
from .store.lines import SEARCH_RULE, searchable

try:
    import jinja2
    from markupsafe import Markup
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the ledger's web page needs the 'ledger' and 'server' extras: "
        "pip install 'a2a-interview[ledger,server]'"
    ) from exc

__all__ = ["CSP", "MAX_PER_PAGE", "PAGE_SIZE", "app"]

PAGE_SIZE: Final = 50
MAX_PER_PAGE: Final = 200

# No script of any kind, no frames, no foreign origins, forms only to this page's own
# origin (the index's search box, a GET): the page is text, an inline SVG, one form and
# one stylesheet of ours. Agent strings are escaped by the templates;
# this is the second wall if an escape were ever missed.
CSP: Final = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_SECURITY_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


class _Ledger(Protocol):
    def agents_from(
        self,
        limit: int,
        search: str | None = None,
        *,
        after: str | None = None,
        before: str | None = None,
        dense: bool = False,
    ) -> Sequence[Any]: ...
    def search_page(
        self,
        search: str,
        cap: int,
        limit: int,
        *,
        after: str | None = None,
        before: str | None = None,
    ) -> tuple[int, Sequence[Any]]: ...
    def totals(self) -> Any: ...
    def summary(self, card_url: str) -> Any: ...
    def history_page(self, card_url: str, offset: int, limit: int) -> Sequence[Any]: ...
    def latest_evidence(
        self, card_url: str, limit: int = 20, keys: Any = None
    ) -> Sequence[Any]: ...
    def newer_than(self, record: Any) -> int: ...
    def get(self, record_id: Any) -> Any: ...


class _Problem(Exception):
    """A request we answer with a fixed error (status, stable code, fixed message)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


_NOT_FOUND_AGENT: Final = (404, "agent_not_found", "No results for that agent")
_NOT_FOUND_RECORD: Final = (404, "record_not_found", "No such record")
_NOT_FOUND: Final = (404, "not_found", "Not found")
_NOT_ALLOWED: Final = (405, "method_not_allowed", "Only GET and HEAD are served")
_BAD_PAGE: Final = (400, "bad_page", "page must be a whole number from 1")
_BAD_PER_PAGE: Final = (400, "bad_per_page", f"per_page must be a whole number 1-{MAX_PER_PAGE}")
_BAD_QUERY: Final = (400, "bad_query", "unknown or repeated query parameter")
_BAD_SEARCH: Final = (400, "bad_search", "q must be at most 200 characters, without NUL")
_SHORT_SEARCH: Final = (400, "search_too_short", f"q: {SEARCH_RULE}")
_BAD_CURSOR: Final = (
    400,
    "bad_cursor",
    "after and before are card URLs (one of them, at most 4096 characters)",
)
_UNAVAILABLE: Final = (503, "store_unavailable", "The ledger's store cannot be read now")


@functools.cache
def _environment() -> jinja2.Environment:
    """The templates' environment, one a process: each template is compiled once."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("a2a_interview.ledger", "templates"),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # The templates ship in the package: looking for a newer file on every request
        # (two stat calls a template) was a tenth of an index page's time.
        auto_reload=False,
    )
    env.filters["visible"] = display.visible
    env.filters["kind"] = display.kind
    env.globals["kind_words"] = display.KIND_WORDS
    return env


def compile_templates() -> None:
    """Compile every template now (``ledger serve`` does, before it serves: otherwise
    each process compiles them on its first requests)."""
    env = _environment()
    for name in env.list_templates():
        env.get_template(name)


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath(name).read_bytes()


def openapi() -> bytes:
    """The OpenAPI 3.1 document of the JSON API, as shipped."""
    return _static("openapi.json")


# ---------------------------------------------------------------------------------------
# Request reading


def _query(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    items = request.query_params.multi_items()
    names = [k for k, _ in items]
    if any(k not in allowed for k in names) or len(set(names)) != len(names):
        raise _Problem(*_BAD_QUERY)
    return dict(items)


def _whole(text: str | None, default: int, low: int, high: int, problem: Any) -> int:
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise _Problem(*problem)
    value = int(text)
    if not low <= value <= high:
        raise _Problem(*problem)
    return value


MAX_SEARCH: Final = 200


MAX_CURSOR: Final = 4096  # longer than any card URL the store holds


def _search(query: dict[str, str]) -> str | None:
    search = query.get("q", "").strip()
    if len(search) > MAX_SEARCH or "\x00" in search:
        raise _Problem(*_BAD_SEARCH)
    if search and not searchable(search):  # no index answers it: never a walk
        raise _Problem(*_SHORT_SEARCH)
    return search or None


def _paging(request: Request, api: bool) -> tuple[int, int]:
    """An agent's history: ``page`` and ``per_page`` (API only)."""
    query = _query(request, ("page", "per_page") if api else ("page",))
    page = _whole(query.get("page"), 1, 1, 10**9, _BAD_PAGE)
    per_page = _whole(query.get("per_page"), PAGE_SIZE, 1, MAX_PER_PAGE, _BAD_PER_PAGE)
    return page, per_page


class _Cursor:
    """Where a page of the index starts (D-WEB-22, keyset paging): after the card URL
    ``after`` or before ``before`` (neither: the first page), ``per_page`` (API only)
    and ``q`` (a search: part of a card URL or of an agent's name, at most 200
    characters)."""

    def __init__(self, request: Request, api: bool) -> None:
        names = ("after", "before", "q") + (("per_page",) if api else ())
        query = _query(request, names)
        self.per_page = _whole(query.get("per_page"), PAGE_SIZE, 1, MAX_PER_PAGE, _BAD_PER_PAGE)
        self.search = _search(query)
        self.after, self.before = query.get("after"), query.get("before")
        for cursor in (self.after, self.before):
            if cursor is not None and (len(cursor) > MAX_CURSOR or "\x00" in cursor):
                raise _Problem(*_BAD_CURSOR)
        if self.after is not None and self.before is not None:
            raise _Problem(*_BAD_CURSOR)

    def link(self, name: str, card_url: str, api: bool) -> str:
        """The query string of the page after (``name="after"``) or before this one."""
        parts = [f"{name}={quote(card_url, safe='')}"]
        if self.search:
            parts.append(f"q={quote(self.search, safe='')}")
        if api and self.per_page != PAGE_SIZE:
            parts.append(f"per_page={self.per_page}")
        return "?" + "&".join(parts)


def _tail(request: Request, prefix: str) -> str:
    """The path after ``prefix``, percent-decoded exactly once from the raw path."""
    raw = request.scope.get("raw_path")
    root = request.scope.get("root_path", "").encode()
    if isinstance(raw, bytes):
        raw = raw.split(b"?", 1)[0]
        if raw.startswith(root):
            raw = raw[len(root) :]
        if raw.startswith(prefix.encode()):
            try:
                return unquote_to_bytes(raw[len(prefix) :]).decode("utf-8")
            except UnicodeDecodeError:
                raise _Problem(*_NOT_FOUND_AGENT) from None
    return str(request.path_params.get("ref", ""))


def _ref(card_url: str) -> str:
    return quote(card_url, safe="")


def _record_id(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise _Problem(*_NOT_FOUND_RECORD)
    return int(text)


# ---------------------------------------------------------------------------------------
# Reading the ledger into display rows


TOTALS_EVERY: Final = 5.0  # seconds a page may show totals read this long ago
MATCH_CAP: Final = 1000  # a search counts its matches up to this many ("more than")


class _AgentView:
    """One agent as its page shows it, read from the store a page at a time (O(page),
    however long the history): its summary, the page's records (newest first), the
    timeline's last marks, the newest evidence, and what leads (PROFILE §8: the latest
    result by a listed runner, else the latest evidence by an unlisted one, else the
    latest claim; a newer result of a weaker kind beside it, never instead). Every
    row's standing is recomputed from its record's bytes (PROFILE §8)."""

    def __init__(self, ledger: _Ledger, card_url: str, page: int, per_page: int,
                 rows: Rows) -> None:  # fmt: skip
        summary = ledger.summary(card_url)
        if summary is None:
            raise _Problem(*_NOT_FOUND_AGENT)
        self.count = int(summary.count)
        self.per_page = per_page
        self.pages = max(1, math.ceil(self.count / per_page))
        self._place: dict[str, int] = {}  # row id -> place in the newest-first list
        shown = ledger.history_page(card_url, (page - 1) * per_page, per_page)
        self.shown = [self._row(rows, r, (page - 1) * per_page + i) for i, r in enumerate(shown)]
        recent = ledger.history_page(card_url, 0, display.MAX_TIMELINE)
        self.timeline = [self._row(rows, r, i) for i, r in enumerate(recent)][::-1]
        self.latest = rows(summary.latest, full=True)  # shown in full: from its bytes
        self._place[self.latest.id] = 0
        newest = self._evidence(ledger, card_url, rows, None)
        self.evidence: display.Row | None = newest[0] if newest else None
        listed = sorted(rows.runners.names)
        leader = self._evidence(ledger, card_url, rows, listed) if listed else None
        self.headline: display.Row
        self.headline, documented = leader or newest or (self.latest, summary.latest)
        # A newer result of a weaker kind: beside the headline, never instead of it.
        self.newer = self.latest if self.headline.id != self.latest.id else None
        shown_document = documented.document
        self.document: dict[str, Any] = shown_document if isinstance(shown_document, dict) else {}
        self.conflicts, self.churned, self.more = display.conflicts(self.document)

    def _evidence(self, ledger: _Ledger, card_url: str, rows: Rows, keys: list[str] | None) -> Any:
        found = leads.newest_evidence(ledger, rows, card_url, keys)
        if found is not None and found[0].id not in self._place:
            self._place[found[0].id] = ledger.newer_than(found[1])
        return found

    def _row(self, rows: Rows, record: Any, place: int) -> display.Row:
        made = rows(record)
        self._place[made.id] = place
        return made

    def href(self, row: display.Row) -> str:
        """Where a timeline mark or the latest evidence links: its line, on the page of
        the list (newest first) holding it."""
        page = self._place.get(row.id, 0) // self.per_page + 1
        return f"?page={page}#record-{row.id}"


class _Pages:
    def __init__(self, ledger: _Ledger, runners: Runners = NO_RUNNERS) -> None:
        self.ledger = ledger
        self.env = _environment()
        self.runners = runners
        self.rows = Rows(ROW_CACHE, runners)
        self.cells = Cells(self.env)
        self._lock = threading.Lock()
        self._totals_at: tuple[float, Any] | None = None
        self._refreshing = False

    # -- shared ----------------------------------------------------------------------

    def _agents(self, at: _Cursor, api: bool) -> dict[str, Any]:
        """One page of the index, from the summary the store keeps at write time: the
        rows, where the pages before and after start, and how many agents match."""
        # Ordered by card URL, as the store returns them, and never by outcome: an agent
        # without the interview is not ranked below one with it (interview §9 rule 2).
        # Keyset paging (D-WEB-22): a page costs O(page) wherever it starts.
        limit = at.per_page
        more = False
        # One more than shown says whether there is a page beyond.
        if at.search:
            total, shown = self.ledger.search_page(
                at.search, MATCH_CAP, limit + 1, after=at.after, before=at.before
            )
            more = total > MATCH_CAP
            total = min(total, MATCH_CAP)
        else:
            total = self._totals().agents
            shown = self.ledger.agents_from(limit + 1, after=at.after, before=at.before)
        backwards = at.before is not None
        beyond = len(shown) > limit
        if beyond:
            shown = shown[1:] if backwards else shown[:limit]
        has_previous = beyond if backwards else at.after is not None
        has_next = True if backwards else beyond
        rows = []
        # What leads each line (PROFILE §8), and the newer result beside it.
        for summary, (row, newer) in zip(
            shown, leads.index_heads(self.ledger, self.rows, shown), strict=True
        ):
            rows.append(
                {
                    "row": row,
                    "newer": newer,
                    "cells": None if api else self.cells(row),
                    "count": int(getattr(summary, "count", 0) or 0),
                    "ref": _ref(summary.card_url),
                }
            )
        return {
            "rows": rows,
            "matching": total,
            "more": more,
            "previous": at.link("before", shown[0].card_url, api) if shown and has_previous
            else None,
            "next": at.link("after", shown[-1].card_url, api) if shown and has_next else None,
        }  # fmt: skip

    def _totals(self) -> Any:
        """The ledger's totals, read at most once every :data:`TOTALS_EVERY` seconds: a
        sum over every agent is the one read whose cost grows with the ledger. Only the
        first read is on a request's time; later ones run on a thread of their own while
        pages show the last totals read (one at a time; a failed one is tried again)."""
        with self._lock:
            kept = self._totals_at
            if kept is not None:
                if time.monotonic() - kept[0] >= TOTALS_EVERY and not self._refreshing:
                    self._refreshing = True
                    threading.Thread(target=self._refresh_totals, daemon=True).start()
                return kept[1]
        found = self._read_totals()
        with self._lock:
            self._totals_at = (time.monotonic(), found)
        return found

    def _read_totals(self) -> Any:
        """The store's totals, with how much of the evidence a listed runner signed
        (PROFILE §8: the three kinds counted apart)."""
        found = self.ledger.totals()
        by = getattr(self.ledger, "evidence_by", None)
        if self.runners.names and callable(by) and hasattr(found, "listed"):
            found = dataclasses.replace(found, listed=by(self.runners.names))
        return found

    def _refresh_totals(self) -> None:
        try:
            found = self._read_totals()
        except Exception:  # the store away, or anything else: the last totals stay shown
            found = None
        with self._lock:
            if found is not None:
                self._totals_at = (time.monotonic(), found)
            self._refreshing = False

    def _render(self, request: Request, name: str, status: int = 200, **values: Any) -> Response:
        root = request.scope.get("root_path", "") + "/"
        html = self.env.get_template(name).render(root=root, cells=self.cells, **values)
        return HTMLResponse(html, status_code=status)

    # -- HTML ------------------------------------------------------------------------

    def index(self, request: Request) -> Response:
        at = _Cursor(request, api=False)
        found = self._agents(at, api=False)
        return self._render(
            request, "index.html", rows=found["rows"], search=at.search or "",
            matching=found["matching"], more=found["more"], totals=self._totals(),
            previous=found["previous"], next=found["next"],
            first=f"?q={quote(at.search, safe='')}" if at.search else "",
        )  # fmt: skip

    def agent(self, request: Request) -> Response:
        page, per_page = _paging(request, api=False)
        view = _AgentView(self.ledger, _tail(request, "/agents/"), page, per_page, self.rows)
        return self._render(
            request,
            "agent.html",
            single=False,
            heading="What leads",
            agent_ref="",
            # What leads (PROFILE §8), and beside it a newer result of a weaker kind.
            latest=view.headline,
            headline_href=view.href(view.headline),
            newer=view.newer,
            newer_href=view.href(view.newer) if view.newer else None,
            boundaries=display.BOUNDARIES,
            # timeline_svg escapes every string it writes: safe to insert as markup.
            timeline=Markup(display.timeline_svg(view.timeline, view.href)),  # noqa: S704
            timeline_items=display.timeline_items(view.timeline),
            timeline_href=view.href,
            conflict_list=view.conflicts,
            churned=view.churned,
            more=view.more,
            checks=display.check_rows(view.document),
            incomplete=display.incomplete(view.document),
            records=view.shown,
            page=page,
            pages=view.pages,
        )

    def record_page(self, request: Request) -> Response:
        """One result in full, whatever its age (D-STORE-16): its standing
        recomputed from its bytes, its conflicts and checks."""
        _query(request, ())
        record = self._get(_record_id(str(request.path_params["record_id"])))
        shown = self.rows(record, full=True)
        document = record.document if isinstance(record.document, dict) else {}
        conflict_list, churned, more = display.conflicts(document)
        return self._render(
            request, "agent.html", single=True, heading=f"Result {shown.id}",
            agent_ref=_ref(record.card_url), latest=shown, newer=None, newer_href=None,
            headline_href=None, boundaries=display.BOUNDARIES, timeline="",
            timeline_items=[], timeline_href=None,
            conflict_list=conflict_list, churned=churned, more=more,
            checks=display.check_rows(document), incomplete=display.incomplete(document),
            records=[], page=1, pages=1,
        )  # fmt: skip

    def _runners(self) -> list[dict[str, Any]]:
        seen = getattr(self.ledger, "runners", None)
        out = []
        for runner in seen() if callable(seen) else ():
            name = self.runners.name_of(runner.key)
            out.append({
                "key": runner.key,
                "fingerprint": fingerprint(runner.key),
                "listed": name is not None,
                "listed_name": name,
                "first_seen": when(runner.first_seen),
                "last_seen": when(runner.last_seen),
                "results": runner.results,
            })  # fmt: skip
        return out

    def runners_page(self, request: Request) -> Response:
        _query(request, ())
        return self._render(request, "runners.html", runners=self._runners())

    def api_runners(self, request: Request) -> Response:
        _query(request, ())
        return _json({"runners": self._runners()})

    def stylesheet(self, request: Request) -> Response:
        return Response(
            _static("static/ledger.css"),
            media_type="text/css; charset=utf-8",
            headers={"cache-control": "public, max-age=300"},
        )

    # -- JSON ------------------------------------------------------------------------

    def api_agents(self, request: Request) -> Response:
        at = _Cursor(request, api=True)
        found = self._agents(at, api=True)
        agents = [
            {
                "card_url": a["row"].card_url,
                "name": a["row"].agent_name,  # as the card names itself; never identity
                "href": f"/api/agents/{a['ref']}",
                "results": a["count"],
                "latest": (a["newer"] or a["row"]).to_json(),
                "headline": a["row"].to_json(),  # what leads (PROFILE §8)
                "headline_kind": display.kind(a["row"]),
            }
            for a in found["rows"]
        ]
        totals = self._totals()

        def link(query: str | None) -> str | None:
            return None if query is None else "/api/agents" + query

        return _json({
            "agents": agents, "per_page": at.per_page,
            "previous": link(found["previous"]), "next": link(found["next"]),
            "matching": found["matching"], "matching_more": found["more"],
            "totals": {"agents": totals.agents, "results": totals.results,
                       "evidence": totals.evidence, "claims": totals.claims,
                       "listed_evidence": getattr(totals, "listed", 0),
                       "unlisted_evidence": getattr(totals, "unlisted", totals.evidence)},
        })  # fmt: skip

    def api_agent(self, request: Request) -> Response:
        page, per_page = _paging(request, api=True)
        view = _AgentView(self.ledger, _tail(request, "/api/agents/"), page, per_page, self.rows)
        return _json(
            {
                "card_url": view.latest.card_url,
                "name": view.latest.agent_name,  # as the card names itself; never identity
                "latest": view.latest.to_json(),
                "latest_evidence": view.evidence.to_json() if view.evidence else None,
                "headline": view.headline.to_json(),
                "headline_kind": display.kind(view.headline),
                "newer": view.newer.to_json() if view.newer else None,
                "newer_kind": display.kind(view.newer) if view.newer else None,
                "conflicts": [c.to_json() for c in view.conflicts],
                "conflicts_vanished_on_rerun": view.churned,
                "does_not_establish": list(DOES_NOT_ESTABLISH),
                "records": [r.to_json() for r in view.shown],
                "page": page,
                "pages": view.pages,
                "per_page": per_page,
            }
        )

    def api_record(self, request: Request) -> Response:
        _query(request, ())
        record_id = _record_id(str(request.path_params["record_id"]))
        record = self._get(record_id)
        # The bytes as stored (and as signed): never re-serialized.
        return Response(record.body, media_type="application/json")

    def _get(self, record_id: int) -> Any:
        try:
            record = self.ledger.get(record_id)
        except LookupError:  # a ledger that raises for a missing id (a LedgerError is
            raise _Problem(*_NOT_FOUND_RECORD) from None  # the store: 503, see app)
        if record is None:
            raise _Problem(*_NOT_FOUND_RECORD)
        return record

    def api_openapi(self, request: Request) -> Response:
        return Response(openapi(), media_type="application/json")


def _json(value: Any) -> Response:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, media_type="application/json")


class _Headers:
    """Every response, errors included, gets the security headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def app(ledger: _Ledger, runners: Runners = NO_RUNNERS) -> ASGIApp:
    """The page and API over ``ledger`` (anything with ``agents()``, ``history(url)``
    and ``get(id)``, as :class:`a2a_interview.ledger.Ledger`); runners named through
    the operator's ``runners`` list (PROFILE §8)."""
    pages = _Pages(ledger, runners)

    def inline(endpoint: Callable[[Request], Response]) -> Callable[[Request], Any]:
        # D-WEB-23: a store in this process (SQLite) only computes, under one GIL: its
        # requests run on the event loop, one at a time per process (Starlette's thread
        # for each sync endpoint only added GIL handoffs: docs/benchmarks.md).
        # A store over a socket (PostgreSQL) waits: its requests keep their threads, so
        # the process serves another while one waits.
        if getattr(ledger, "dialect", None) == "postgresql":
            return endpoint

        async def run(request: Request) -> Response:
            return endpoint(request)

        return run

    routes = [
        Route("/", inline(pages.index)),
        Route("/runners", inline(pages.runners_page)),
        Route("/records/{record_id}", inline(pages.record_page)),
        Route("/api/runners", inline(pages.api_runners)),
        Route("/agents/{ref:path}", inline(pages.agent)),
        Route("/static/ledger.css", inline(pages.stylesheet)),
        Route("/api/agents", inline(pages.api_agents)),
        Route("/api/agents/{ref:path}", inline(pages.api_agent)),
        Route("/api/records/{record_id}", inline(pages.api_record)),
        Route("/api/openapi.json", inline(pages.api_openapi)),
    ]

    from . import LedgerError

    def problem(request: Request, exc: Exception) -> Response:
        # A fixed error: JSON under /api/, a page elsewhere. Unknown paths and methods
        # too (Starlette's 404/405), and a store that cannot be read (its own words may
        # name the host), so every answer has the same shape.
        if isinstance(exc, _Problem):
            p = exc
        elif isinstance(exc, LedgerError):
            p = _Problem(*_UNAVAILABLE)
        else:
            p = _Problem(*(_NOT_ALLOWED if getattr(exc, "status_code", 0) == 405 else _NOT_FOUND))
        if request.url.path.startswith("/api/"):
            response = _json({"error": {"code": p.code, "message": p.message}})
            response.status_code = p.status
        else:
            response = pages._render(request, "error.html", status=p.status, message=p.message)
        if p.status == 405:
            response.headers["allow"] = "GET, HEAD"
        return response

    handlers: dict[Any, Callable[[Request, Exception], Response]] = {
        _Problem: problem,
        LedgerError: problem,
        404: problem,
        405: problem,
    }
    return _Headers(Starlette(routes=routes, exception_handlers=handlers))
