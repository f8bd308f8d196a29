"""Declarations that live (PROFILE §2.4): the self-check on load, reload on change, the
last good set kept when a reload fails, every failure reported.

The declarations are files in ``tmp_path``: the Stonework card and its two proposals,
read through ``file_loader``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.errors import DeclarationError, InterviewError
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.lifecycle import LiveDeclarations, file_loader
from a2a_interview.spec import INTERVIEW_URI, TERMS_URI

ORIGIN = "https://stonework.example"
ACT = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10
FIRST_ENTRY = "/capabilities/extensions/1/params/proposals/0"
SECOND_ENTRY = "/capabilities/extensions/1/params/proposals/1"


class Files:
    """The card and proposal files, and the urls the card commits to them under."""

    def __init__(self, root: Path) -> None:
        self.card = root / "agent-card.json"
        self.proposals: dict[str, Path] = {}
        for i, (url, body) in enumerate(sorted(reference.proposals(ORIGIN).items())):
            path = root / f"proposal-{i}.json"
            path.write_bytes(body)
            self.proposals[url] = path
        self.write(reference.unsigned_card(ORIGIN))

    def write(self, card: dict[str, Any]) -> None:
        # A fresh file each time (its size differs too), so the fingerprint changes.
        self.card.write_text(json.dumps(card, indent=1, ensure_ascii=False), encoding="utf-8")

    def loader(self) -> tuple[Callable[[], Any], Callable[[], object]]:
        return file_loader(self.card, self.proposals)


def card_with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    card = reference.unsigned_card(ORIGIN)
    change(card)
    return card


def terms(card: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = next(
        e for e in card["capabilities"]["extensions"] if e["uri"] == TERMS_URI
    )
    return entry


def describe(text: str) -> Callable[[dict[str, Any]], None]:
    def change(card: dict[str, Any]) -> None:
        card["skills"][0]["description"] = text

    return change


def break_digest(card: dict[str, Any]) -> None:
    terms(card)["params"]["proposals"][0]["digest"] = "sha256:" + "1" * 64


def require(card: dict[str, Any]) -> None:
    card["capabilities"]["extensions"][0]["required"] = True


def drop_interview(card: dict[str, Any]) -> None:
    exts = card["capabilities"]["extensions"]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]


def expected(card: dict[str, Any], question: str, skill: str | None = None) -> bytes:
    return build(card, reference.proposals(ORIGIN)).interview.answer(question, skill)


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path)


# ---------------------------------------------------------------- the self-check


@pytest.mark.anyio
async def test_a_good_set_loads(files: Files) -> None:
    loader, fingerprint = files.loader()
    live = await LiveDeclarations.start(loader, fingerprint=fingerprint)
    card = reference.unsigned_card(ORIGIN)
    assert live.interview.answer("terms") == expected(card, "terms")
    assert [v.result for _, v in live.declarations.verdicts] == ["ok", "ok"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (break_digest, f"terms entry {FIRST_ENTRY} failed verification: digest_mismatch"),
        (require, "declared with required: true"),
        (drop_interview, "does not declare the interview extension"),
    ],
)
async def test_self_check_refuses_bad_declarations(
    files: Files, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    files.write(card_with(change))
    loader, fingerprint = files.loader()
    with pytest.raises(DeclarationError) as caught:
        await LiveDeclarations.start(loader, fingerprint=fingerprint)
    assert message in str(caught.value)
    assert caught.value.code == "declaration"


@pytest.mark.anyio
async def test_self_check_refuses_a_tampered_proposal_file(files: Files) -> None:
    url, path = sorted(files.proposals.items())[1]
    document = json.loads(path.read_bytes())
    document["price"]["grade"] = "evidence" if document["price"]["grade"] != "evidence" else "x"
    path.write_text(json.dumps(document), encoding="utf-8")
    entry = next(
        i
        for i, e in enumerate(terms(reference.unsigned_card(ORIGIN))["params"]["proposals"])
        if e["url"] == url
    )
    loader, _ = files.loader()
    with pytest.raises(DeclarationError) as caught:
        await LiveDeclarations.start(loader)
    assert f"proposals/{entry} failed verification: digest_mismatch" in str(caught.value)


@pytest.mark.anyio
async def test_self_check_refuses_unreadable_files(files: Files) -> None:
    next(iter(files.proposals.values())).unlink()
    loader, _ = files.loader()
    with pytest.raises(DeclarationError) as caught:
        await LiveDeclarations.start(loader)
    assert "cannot read a declarations file" in str(caught.value)


@pytest.mark.anyio
async def test_self_check_refuses_a_card_that_is_not_strict_json(files: Files) -> None:
    files.card.write_bytes(b'{"name":"a","name":"b"}')
    loader, _ = files.loader()
    with pytest.raises(DeclarationError) as caught:
        await LiveDeclarations.start(loader)
    assert "duplicate_key" in str(caught.value)


# ---------------------------------------------------------------- reloads


@pytest.mark.anyio
async def test_reload_swaps_a_changed_good_set(files: Files) -> None:
    loader, fingerprint = files.loader()
    live = await LiveDeclarations.start(loader, fingerprint=fingerprint)
    changed = card_with(describe("Reconciles, revised."))
    files.write(changed)
    assert await live.reload() is True
    assert live.interview.answer("capabilities") == expected(changed, "capabilities")
    assert live.last_error is None


@pytest.mark.anyio
async def test_a_failing_reload_keeps_the_last_good_set_and_reports(files: Files) -> None:
    errors: list[InterviewError] = []
    loader, fingerprint = files.loader()
    live = await LiveDeclarations.start(loader, fingerprint=fingerprint, on_error=errors.append)
    good = live.declarations
    answers = {q: live.interview.answer(q) for q in ("identity", "capabilities", "terms")}

    for change, message in [
        (break_digest, f"{FIRST_ENTRY} failed verification: digest_mismatch"),
        (require, "required: true"),
        (drop_interview, "does not declare the interview"),
    ]:
        bad = card_with(change)
        bad["skills"][0]["description"] = "must never be served"
        files.write(bad)
        assert await live.reload() is False
        assert live.declarations is good
        assert {q: live.interview.answer(q) for q in answers} == answers
        assert isinstance(errors[-1], DeclarationError)
        assert message in str(errors[-1])
        assert live.last_error is errors[-1]

    fixed = card_with(describe("Reconciles, fixed."))
    files.write(fixed)
    assert await live.reload() is True
    assert live.interview.answer("capabilities") == expected(fixed, "capabilities")
    assert live.last_error is None
    assert len(errors) == 3


@pytest.mark.anyio
async def test_the_default_report_is_logged(files: Files, caplog: pytest.LogCaptureFixture) -> None:
    loader, fingerprint = files.loader()
    live = await LiveDeclarations.start(loader, fingerprint=fingerprint)
    files.write(card_with(break_digest))
    with caplog.at_level(logging.ERROR, logger="a2a_interview.server"):
        assert await live.reload() is False
    assert any(
        "serving the last good set" in r.getMessage() and "digest_mismatch" in r.getMessage()
        for r in caplog.records
    )


async def _until(check: Callable[[], bool], timeout: float = 3.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if check():
            return True
        await asyncio.sleep(0.01)
    return check()


@pytest.mark.anyio
async def test_watch_follows_changes_and_keeps_the_last_good_set(files: Files) -> None:
    errors: list[InterviewError] = []
    loader, fingerprint = files.loader()
    calls = 0

    def counting() -> Any:
        nonlocal calls
        calls += 1
        return loader()

    live = await LiveDeclarations.start(counting, fingerprint=fingerprint, on_error=errors.append)
    watching = asyncio.ensure_future(live.watch(0.02))
    try:
        await asyncio.sleep(0.2)
        assert calls == 1, "an unchanged fingerprint must not reload"

        first = card_with(describe("Watched change one."))
        files.write(first)
        want = expected(first, "capabilities")
        assert await _until(lambda: live.interview.answer("capabilities") == want)

        files.write(card_with(break_digest))
        assert await _until(lambda: bool(errors))
        assert live.interview.answer("capabilities") == want
        assert FIRST_ENTRY in str(errors[0])

        second = card_with(describe("Watched change number two."))
        files.write(second)
        want = expected(second, "capabilities")
        assert await _until(lambda: live.interview.answer("capabilities") == want)
        assert len(errors) == 1  # each failed change reported once
    finally:
        watching.cancel()
        with pytest.raises(asyncio.CancelledError):
            await watching


@pytest.mark.anyio
async def test_the_middleware_serves_the_swapped_set(files: Files) -> None:
    loader, fingerprint = files.loader()
    live = await LiveDeclarations.start(loader, fingerprint=fingerprint)

    async def host(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"host"})

    app = InterviewMiddleware(host, live)
    body = b'{"jsonrpc":"2.0","id":1,"method":"interview/capabilities"}'
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as http:
        before = await http.post("/a2a/jsonrpc", content=body, headers=ACT)
        assert b"Matches a bank statement" in before.content

        def move(card: dict[str, Any]) -> None:
            card["supportedInterfaces"][0]["url"] = ORIGIN + "/v2/jsonrpc"
            card["skills"][0]["description"] = "Moved."

        moved = card_with(move)
        files.write(moved)
        assert await live.reload() is True
        after = await http.post("/v2/jsonrpc", content=body, headers=ACT)
        assert after.content == (
            b'{"id":1,"jsonrpc":"2.0","result":' + expected(moved, "capabilities") + b"}"
        )
        old = await http.post("/a2a/jsonrpc", content=body, headers=ACT)
        assert (old.status_code, old.content) == (404, b"host")  # the old path is the host's
        card = await http.get("/.well-known/agent-card.json")
        assert b"Moved." in card.content


def test_file_loader_reads_within_the_bound(tmp_path: Path) -> None:
    # D-CLI-10 (PROFILE §1.4): a declarations file over 1 MiB, here a 3 GiB sparse
    # one, is refused without being read whole.
    import tracemalloc

    from a2a_interview.errors import DeclarationError

    huge = tmp_path / "card.json"
    with huge.open("wb") as handle:
        handle.truncate(3 << 30)
    loader, _ = file_loader(huge, {})
    tracemalloc.start()
    with pytest.raises(DeclarationError, match="larger than the 1 MiB bound"):
        loader()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20, peak
