"""Drive a live server through the conformance calls (httpx), and sum up the results.

Two ways in (docs/conformance.md):

- :func:`run_live`: the server under test serves its own card. The card is read from
  the server, the calls are made concrete against it and the expected responses derived
  from it with the core (:mod:`.calls`), then sent, each to its interface's path on the
  origin given (so a card naming its public address is tested where it runs).
- :func:`run_vector`: the server serves the declarations of one published vector file;
  its calls are sent exactly as written and judged against the bytes written.

Every request is bounded by the client's timeout; a transport failure is
:class:`Unreachable` (the command's exit 3).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit
from xml.etree import ElementTree as ET

import httpx

from ..declarations import build, read_card
from ..errors import InterviewError
from ..jcs import canonicalize
from ..spec import CARD_PATH, QUESTIONS
from ..strictjson import loads
from ..terms import read_terms_entries
from .calls import Expect, Level, calls
from .judge import Problem, judge, result_bytes
from .vectors import Vector, proposals_by_entry

MAX_BYTES = 1 << 20
SAME_ANSWERS = "interview §4 rule 1"
ASKED_TWICE = frozenset(
    f"answer-{q}" for q in QUESTIONS
)  # a response read past this is cut (PROFILE §1.4's bound)


class Unreachable(Exception):
    """The server could not be reached, or its card could not be read."""


@dataclass(frozen=True, slots=True)
class Result:
    """One call's outcome."""

    id: str
    rule: str
    level: Level
    problems: tuple[Problem, ...]
    vector: str = ""

    @property
    def verdict(self) -> str:
        """``pass``; ``fail`` (a draft-level problem); ``differs`` (profile level only)."""
        if any(p.level == "draft" for p in self.problems):
            return "fail"
        return "differs" if self.problems else "pass"


def scheme_and_authority(url: str) -> str:
    """``scheme://authority`` of ``url`` as written (no port added, case kept): where
    the vector's calls are sent."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


Response = tuple[int, list[tuple[str, str]], bytes]


async def _send(client: httpx.AsyncClient, origin: str, item: Any) -> Response:
    """Send one call (``http_method``, ``path``, ``query``, ``headers``, ``body``)."""
    method, path, query, headers, body = (
        item.http_method, item.path, item.query, item.headers, item.body
    )  # fmt: skip
    url = origin + path + ("?" + query if query else "")
    sent = list(headers)
    if method == "POST":
        sent.append(("Content-Type", "application/json"))
    try:
        async with client.stream(method, url, headers=sent, content=body or None) as response:
            data = b""
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_BYTES:
                    break
            return response.status_code, list(response.headers.multi_items()), data
    except httpx.HTTPError as exc:
        raise Unreachable(f"{method} {url}: {type(exc).__name__}") from None


async def _judged(client: httpx.AsyncClient, origin: str, items: Iterable[Any], *, card: Any,
                  proposals: Any, vector: str = "") -> list[Result]:  # fmt: skip
    results = []
    answered: dict[str, bytes] = {}  # answer-q and rest-q: the answer's bytes
    for item in items:
        expect: Expect = item.expect
        status, headers, body = await _send(client, origin, item)
        problems = judge(item.level, expect, status, headers, body, card=card,
                         proposals=proposals)  # fmt: skip
        results.append(Result(item.id, item.rule, item.level, tuple(problems), vector))
        if item.id in ASKED_TWICE and status == 200:
            # interview §4 rule 1: asked again at once, the same bytes (D-CONF-12).
            again = (await _send(client, origin, item))[2]
            differs = () if again == body else (
                Problem("draft", "determinism", "a second ask gave other bytes"),)  # fmt: skip
            results.append(Result(item.id + "#again", SAME_ANSWERS, "draft", differs, vector))
            answered[item.id] = result_bytes(body) or body
        elif item.id.startswith("rest-") and item.id[5:] in QUESTIONS and status == 200:
            answered[item.id] = _canonical(body)
    for question in QUESTIONS:
        rpc_bytes, rest_bytes = answered.get(f"answer-{question}"), answered.get(f"rest-{question}")
        if rpc_bytes is None or rest_bytes is None:
            continue
        differs = () if rpc_bytes == rest_bytes else (
            Problem("draft", "determinism", "HTTP+JSON and JSON-RPC answers differ"),)  # fmt: skip
        results.append(Result(f"bindings-{question}", SAME_ANSWERS, "draft", differs, vector))
    return results


def _canonical(body: bytes) -> bytes:
    """``body``'s JCS form (PROFILE §1.2: equal means equal JCS bytes), else ``body``."""
    try:
        return canonicalize(loads(body))
    except InterviewError:
        return body


@dataclass(frozen=True, slots=True)
class _Live:
    """A concrete call, in the shape :func:`_judged` reads."""

    id: str
    rule: str
    level: Level
    http_method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    expect: Expect


async def run_live(client: httpx.AsyncClient, url: str) -> tuple[Any, list[Result]]:
    """Read the card the server at ``url`` (its base URL or its card URL) serves, and
    drive it through every call that applies to that card. Raises :class:`Unreachable`,
    or ``InterviewError`` when the card is not one the interview can be served from
    (not strict I-JSON, no interview declared, a terms entry that does not verify)."""
    card_url = url if url.rstrip("/").endswith(CARD_PATH) else url.rstrip("/") + CARD_PATH
    origin = scheme_and_authority(card_url)
    fetch = SimpleNamespace(http_method="GET", path=urlsplit(card_url).path, query="",
                            headers=(), body=b"")  # fmt: skip
    status, _, data = await _send(client, origin, fetch)
    if status != 200:
        raise Unreachable(f"GET {card_url}: HTTP {status}")
    card = read_card(data)
    files: dict[str, bytes] = {}
    for entry in read_terms_entries(card):
        if entry.url is not None:
            try:
                response = await client.get(entry.url)
            except httpx.HTTPError:
                continue
            if response.status_code == 200:
                files[entry.url] = response.content
    declarations = build(card, files)
    items = [
        _Live(c.id, c.template.rule, c.template.level, c.http_method, c.path, c.query,
              c.headers, c.body, c.expect)
        for c in calls(card, declarations.interview)
    ]  # fmt: skip
    proposals = {(p.entry.url, p.entry.digest): p.document for p in declarations.proposals}
    return card, await _judged(client, origin, items, card=card, proposals=proposals)


async def run_vector(client: httpx.AsyncClient, origin: str, vector: Vector) -> list[Result]:
    """Send every call of ``vector`` to the server at ``origin`` (serving the vector's
    declarations) and judge each response against the vector's bytes."""
    card = vector.card
    proposals = proposals_by_entry(card, vector.proposals)
    return await _judged(client, scheme_and_authority(origin), vector.calls, card=card,
                         proposals=proposals, vector=vector.name)  # fmt: skip


def by_rule(results: Iterable[Result]) -> list[tuple[str, Level, int, int, int]]:
    """(rule, level, passed, failed, differs) per rule, in first-seen order."""
    order: dict[tuple[str, Level], Counter[str]] = {}
    for r in results:
        order.setdefault((r.rule, r.level), Counter())[r.verdict] += 1
    return [(rule, level, c["pass"], c["fail"], c["differs"])
            for (rule, level), c in order.items()]  # fmt: skip


def junit(results: Sequence[Result], name: str = "a2a-interview conformance") -> bytes:
    """JUnit XML: one test case per call, a draft-level failure as ``failure``, a
    profile-level difference as ``failure`` of type ``profile`` (so CI shows both; the
    exit code tells them apart)."""
    suite = ET.Element("testsuite", name=name, tests=str(len(results)),
                       failures=str(sum(r.verdict != "pass" for r in results)))  # fmt: skip
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"{r.level}.{r.rule}",
                             name=(r.vector + ":" if r.vector else "") + r.id)  # fmt: skip
        if r.problems:
            worst = "draft" if r.verdict == "fail" else "profile"
            message = "; ".join(p.detail for p in r.problems)[:500]
            failure = ET.SubElement(case, "failure", type=worst, message=message)
            failure.text = "\n".join(f"[{p.level}] {p.check}: {p.detail}" for p in r.problems)
    data: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return data


def draft_failures(results: Iterable[Result]) -> int:
    return sum(r.verdict == "fail" for r in results)
