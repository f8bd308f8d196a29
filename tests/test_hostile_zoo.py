"""The hostile-agent zoo: agents that attack the verifier rather than lie to it.

Each one (PROFILE §7) ends in a precise outcome and reason within its
deadline, with memory bounded: bombs that inflate (D-NET-1), stalls and endless
bodies, redirect loops, 429 storms with absurd ``Retry-After`` values (finding 6), cards
and interfaces on addresses that are not public (finding 8), deep and duplicate-key JSON,
a card that changes per fetch. ``verify-many`` over all of them keeps going past each and
writes one record per URL. Everything runs on loopback; nothing is ever sent to the
private addresses named (an audit hook on ``socket.connect`` watches).
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import sys
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from a2a_interview import reference
from a2a_interview.cli import main
from a2a_interview.net.failures import AddressRefused, BodyTooLarge
from a2a_interview.record import schema
from a2a_interview.report import render_report
from a2a_interview.spec import CARD_PATH, TERMS_URI
from a2a_interview.verifier import verify
from a2a_interview.verifier.addresses import address_kind
from a2a_interview.verifier.client import ClientOptions, Interviewer
from agents import (
    Call,
    Reply,
    Wrap,
    answer,
    drip,
    flood,
    honest,
    raw_server,
    sign,
)
from support import modes
from support.servers import in_thread, serve, serve_many
from support.verify import advised

pytestmark = pytest.mark.anyio
SCHEMA = jsonschema.Draft202012Validator(schema())
FAST = dict(churn_delay=0, total_timeout=5.0)
MiB = 1 << 20
# What one bounded read may cost on top of the 1 MiB body: generous, and far below the
# 64 MiB a bomb inflates to when a network chunk is inflated whole.
MEMORY_BOUND = 16 * MiB


# --- watching connections -------------------------------------------------------------

_CONNECTS: list[list[Any]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and _CONNECTS:
        _CONNECTS[-1].append(args[1])


sys.addaudithook(_audit)


@contextlib.contextmanager
def connects() -> Iterator[list[Any]]:
    """Every address this process connects a socket to inside the block."""
    seen: list[Any] = []
    _CONNECTS.append(seen)
    try:
        yield seen
    finally:
        _CONNECTS.remove(seen)


def hosts(addresses: Sequence[Any]) -> set[str]:
    return {str(a[0]) for a in addresses if isinstance(a, tuple)}


# --- bombs ----------------------------------------------------------------------------


@functools.cache
def zeros(size: int, wbits: int = 31) -> bytes:
    """``size`` zero bytes compressed: gzip (wbits 31), zlib (15) or raw deflate (-15)."""
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(MiB)
    return b"".join([*(z.compress(block) for _ in range(size // MiB)), z.flush()])


def gzip(data: bytes) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    return z.compress(data) + z.flush()


BOMB = 64 * MiB  # a chunk of it inflated whole is 64 MiB; a streamed read stops at 1 MiB


def json_reply(body: bytes, encoding: str | None = None) -> Any:
    headers = [("Content-Type", "application/json")]
    if encoding is not None:
        headers.append(("Content-Encoding", encoding))
    return answer(200, headers, body)


async def peak(run: Callable[[], Awaitable[Any]]) -> tuple[Any, int]:
    """``run()``'s result and the peak of Python's traced memory above the start."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = await run()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


# D-TEST-56: the default run under draws that differ in the binding and the selector ask made
# twice (D-VERIFY-72) and in the skill ids left out of each selector question.
SEEDS = (45, 63, 4, 6)
MODE: dict[str, Any] = {"thorough": False, "seed": SEEDS[0]}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    modes.parametrize(metafunc, SEEDS, "verified")  # D-TEST-56


@pytest.fixture(autouse=True)
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """docs/decisions.md D-TEST-45, D-TEST-56: each attack in both modes, the default
    (sampled, under several seeded draws) and thorough; none is confined to a selector,
    so each ends the same on every draw."""
    yield from modes.entered(request, MODE, SEEDS)


async def verified(url: str, **options: Any) -> dict[str, Any]:
    for key, value in FAST.items():
        options.setdefault(key, value)
    options.setdefault("thorough", MODE["thorough"])
    options.setdefault("rng", random.Random(MODE["seed"]))
    document = (await verify(url, **options)).to_json()
    SCHEMA.validate(document)
    return document


def ended(document: dict[str, Any], reason: str) -> None:
    assert document["outcome"] == "unreachable", document["outcome"]
    assert document["incomplete"]["reason"] == reason, document["incomplete"]


# --- inflating bodies (D-NET-1) ---------------------------------------------


async def test_a_gzip_bomb_card_ends_too_large_with_memory_bounded() -> None:
    # D-NET-1: the bound held only after each chunk was inflated whole.
    with raw_server(json_reply(zeros(BOMB), "gzip")) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "too_large")
    assert document["checks"]["card_fetch"] == "failed"
    assert used < MEMORY_BOUND, used


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("deflate", zeros(BOMB, 15)),  # RFC 9110: zlib-wrapped
        ("deflate", zeros(BOMB, -15)),  # as some servers send it: raw
        ("x-gzip", zeros(BOMB)),
        ("identity, gzip", zeros(BOMB)),  # identity is no layer
    ],
)
async def test_every_accepted_coding_is_bounded_as_it_streams(encoding: str, body: bytes) -> None:
    with raw_server(json_reply(body, encoding)) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "too_large")
    assert used < MEMORY_BOUND, used


async def test_stacked_encodings_are_refused_with_memory_bounded() -> None:
    # D-NET-1: `gzip, gzip`, a few KB inflating without end; one layer is all
    # an honest server needs, so more is refused before anything is inflated.
    bomb = gzip(zeros(BOMB))
    assert len(bomb) < 4096
    with raw_server(json_reply(bomb, "gzip, gzip")) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "bad_encoding")
    assert used < MEMORY_BOUND, used


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("br", b"\x0b\x02\x80{}\x03"),  # not accepted (we ask for gzip, deflate)
        ("compress", b"{}"),
        ("gzip", b"{}"),  # not gzip at all
        ("gzip", gzip(b'{"a": 1}')[:-6]),  # truncated
        ("deflate", gzip(b"{}") + b"junk"),  # neither zlib nor raw deflate
    ],
)
async def test_unknown_or_corrupt_codings_are_refused(encoding: str, body: bytes) -> None:
    with raw_server(json_reply(body, encoding)) as origin:
        document = await verified(origin)
    ended(document, "bad_encoding")


async def fetched(handler: Any, **options: Any) -> bytes:
    with raw_server(handler) as origin:
        async with Interviewer(ClientOptions(**options), target=origin) as session:
            return (await session.get(origin + "/doc.json")).body


async def test_a_coding_repeated_on_two_header_lines_is_stacked() -> None:
    twice = [("Content-Encoding", "gzip"), ("Content-Encoding", "gzip")]
    with raw_server(answer(200, twice, gzip(gzip(b"{}")))) as origin:
        document = await verified(origin)
    ended(document, "bad_encoding")


@pytest.mark.parametrize(
    ("encoding", "wire"),
    [
        ("gzip", gzip(b'{"a": "') + gzip(b'b"}')),  # two members (RFC 1952 §2.2)
        ("deflate", zlib.compress(b'{"a": "b"}')),
        ("deflate", zlib.compress(b'{"a": "b"}')[2:-4]),  # raw deflate
        ("GZip , identity", gzip(b'{"a": "b"}')),
        ("", b'{"a": "b"}'),
    ],
)
async def test_what_an_honest_host_sends_is_decoded_exactly(encoding: str, wire: bytes) -> None:
    headers = [("Content-Encoding", encoding)] if encoding else []
    assert await fetched(answer(200, headers, wire)) == b'{"a": "b"}'


@pytest.mark.parametrize("coding", [None, "gzip", "deflate"])
async def test_the_bound_is_exact_on_decoded_bytes(coding: str | None) -> None:
    # PROFILE §1.4: max_bytes itself is allowed, one more byte is not.
    def serve_size(size: int) -> Any:
        body = b"x" * size
        if coding == "gzip":
            return json_reply(gzip(body), "gzip")
        if coding == "deflate":
            return json_reply(zlib.compress(body), "deflate")
        return json_reply(body)

    assert len(await fetched(serve_size(1000), max_bytes=1000)) == 1000
    with pytest.raises(BodyTooLarge):
        await fetched(serve_size(1001), max_bytes=1000)


async def test_an_honest_agent_answering_gzip_is_consistent() -> None:
    # The decoding path is the ordinary path: a compressing host stays consistent.
    from starlette.middleware.gzip import GZipMiddleware

    with serve(lambda o: GZipMiddleware(honest(o), minimum_size=0)) as origin:
        document = await verified(origin)
    assert document["outcome"] == "consistent", document["runs"][0]["conflicts"]


def _bomb_answers(origin: str) -> Any:
    def bomb(call: Call) -> Reply | None:
        if call.question == "identity" and call.activated:
            headers = [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")]
            return Reply(200, headers, zeros(BOMB))
        return None

    return Wrap(honest(origin), on_request=bomb)


async def test_a_bomb_answering_an_interview_call_ends_too_large() -> None:
    with serve(_bomb_answers) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "too_large")
    assert document["runs"][0]["calls"], "the card was read and the interview begun"
    assert used < MEMORY_BOUND, used


def test_ask_reads_a_bomb_under_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(_bomb_answers) as origin:
        assert main(["ask", origin, "identity"]) == 3
    assert "[too_large]" in capsys.readouterr().err


def test_proposal_verify_url_reads_a_bomb_under_the_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with raw_server(json_reply(zeros(BOMB), "gzip")) as origin:
        assert main(["proposal", "verify", origin + "/terms/t.sow.json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "fetch_failed\n"
    assert "[too_large]" in captured.err


async def test_the_proxy_start_reads_a_bomb_under_the_bound() -> None:
    # D-NET-1, "and the proxy's start": it reads the card through read_body.
    from a2a_interview.server.proxy import ProxyError, build_proxy

    async def start() -> str:
        try:
            await build_proxy(origin, timeout=5)
        except ProxyError as exc:
            return str(exc)
        return "started"

    with raw_server(json_reply(zeros(BOMB), "gzip")) as origin:
        message, used = await peak(start)
    assert "larger than" in message
    assert used < MEMORY_BOUND, used


# --- stalls and endless bodies --------------------------------------------------------

HEAD_200 = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


async def test_headers_that_never_finish_time_out() -> None:
    with raw_server(drip(HEAD_200, b"X-Drip: 1\r\n", 0.05)) as origin:
        document = await verified(origin, client=ClientOptions(timeout=0.5))
    ended(document, "timeout")


async def test_a_trickling_body_times_out() -> None:
    head = HEAD_200 + b"Content-Length: 100000\r\n\r\n{"
    with raw_server(drip(head, b" ", 0.05)) as origin:
        document = await verified(origin, client=ClientOptions(timeout=0.5))
    ended(document, "timeout")


async def test_an_endless_body_is_too_large() -> None:
    head = HEAD_200 + b"Transfer-Encoding: chunked\r\n\r\n"
    piece = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    with raw_server(flood(head, piece)) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "too_large")
    assert used < MEMORY_BOUND, used


async def test_endless_headers_are_refused_with_memory_bounded() -> None:
    with raw_server(flood(HEAD_200, b"X-Flood: " + b"a" * 1000 + b"\r\n")) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "connect_failed")  # h11's bound on a response head: a protocol error
    assert used < MEMORY_BOUND, used


@pytest.mark.parametrize(
    "piece",
    [
        pytest.param(b"X-Flood: " + b"a" * 1000 + b"\r\n", id="many-fields"),
        pytest.param(b"a" * 65536, id="one-endless-field"),
    ],
)
async def test_an_endless_trailer_section_is_refused_with_memory_bounded(piece: bytes) -> None:
    # D-SERVE-20: a trailer section after a chunked body is a header section too
    # and is bounded like one (httpx's h11 for the card, the interviewer's own reader for
    # the calls: tests/test_wire.py).
    head = HEAD_200 + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
    if len(piece) > 2000:
        head += b"X-Big: "
    with raw_server(flood(head, piece)) as origin:
        document, used = await peak(lambda: verified(origin))
    ended(document, "connect_failed")  # h11's bound on an incomplete event: a protocol error
    assert used < MEMORY_BOUND, used


async def test_endless_interim_responses_time_out() -> None:
    interim = b"HTTP/1.1 102 Processing\r\n\r\n"
    with raw_server(flood(interim, interim)) as origin:
        document, used = await peak(lambda: verified(origin, client=ClientOptions(timeout=0.5)))
    ended(document, "timeout")
    assert used < MEMORY_BOUND, used


def test_accept_encoding_is_the_verifiers_own(capsys: pytest.CaptureFixture[str]) -> None:
    # The codings read_body bounds are the ones we ask for; a user value would change it.
    assert main(["verify", "https://agent.example", "--header", "Accept-Encoding: br"]) == 2


async def test_a_stall_longer_than_the_deadline_ends_at_the_deadline() -> None:
    # D-NET-3: each exchange bounded is not enough; the whole run has a deadline.
    with raw_server(drip(HEAD_200, b"X-Drip: 1\r\n", 0.05)) as origin:
        document = await verified(origin, total_timeout=0.5, client=ClientOptions(timeout=30))
    ended(document, "deadline")
    assert document["incomplete"]["detail"] == "the procedure did not finish within the deadline"


def test_verify_deadline_ends_a_slow_agent_with_its_record_written(tmp_path: Path) -> None:
    # D-NET-3: a slow agent with many skills kept `verify` busy for minutes.
    import time

    def slow(origin: str) -> Any:
        def wait(call: Call) -> Reply | None:
            if call.question is not None:
                time.sleep(0.05)  # ~50 calls: 2.5 s at least, past the deadline
            return None

        return Wrap(honest(origin), on_request=wait)

    record = tmp_path / "record.json"
    with serve(slow) as origin:
        # --thorough: every skill on both interfaces (a sampled run is ~30 calls).
        code = main(["verify", origin, "--deadline", "2", "--record", str(record), "--thorough"])
    assert code == 3
    document = json.loads(record.read_text())
    SCHEMA.validate(document)
    ended(document, "deadline")
    assert document["runs"][0]["calls"], "the calls made before the deadline are kept"


def test_deadline_is_a_usage_error_when_not_a_duration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "https://agent.example", "--deadline", "soon"]) == 2
    assert main(["ask", "https://agent.example", "identity", "--deadline", "-1"]) == 2


def test_ask_has_a_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    with raw_server(drip(HEAD_200, b"X-Drip: 1\r\n", 0.05)) as origin:
        assert main(["ask", origin, "identity", "--deadline", "0.5"]) == 3
    assert "[deadline]" in capsys.readouterr().err


# --- redirects and 429 storms ---------------------------------------------------------


async def test_a_redirect_loop_is_refused() -> None:
    loop = answer(302, [("Location", CARD_PATH)], b"")
    with raw_server(loop) as origin, connects() as seen:
        document = await verified(origin)
    ended(document, "redirect_refused")
    assert len(seen) == 4  # the first request and three redirects, no more


HUGE_DATE = "Mon, 99999999999999999999 Dec 2026 10:00:00 GMT"


@pytest.mark.parametrize(
    "retry_after",
    [HUGE_DATE, "Fri, 31 Dec 9999 23:59:59 GMT", "99999999999999999999999", "soon", "-1"],
)
async def test_a_429_storm_with_any_retry_after_ends_rate_limited(retry_after: str) -> None:
    # D-NET-3: a Retry-After date with a huge day number raised OverflowError.
    storm = answer(429, [("Retry-After", retry_after)], b"")
    client = ClientOptions(retry_budget=0.3, max_retry_after=0.1)
    with raw_server(storm) as origin:
        document = await verified(origin, client=client)
    ended(document, "rate_limited")


async def test_a_429_wait_past_the_deadline_ends_rate_limited_at_once_saying_what_to_change() -> (
    None
):
    # PROFILE §7: a 429 is waited out as Retry-After asks, within the deadline; a wait that
    # would outlast it ends the run now, and the record says what to change (D-VERIFY-4:
    # --max-skills, the deadline, the agent's --rate-limit).
    storm = answer(429, [("Retry-After", "30")], b"")
    with raw_server(storm) as origin:
        document = await verified(origin, total_timeout=5)
    ended(document, "rate_limited")
    detail = document["incomplete"]["detail"]
    assert "--max-skills" in detail and "--rate-limit" in detail and "--deadline" in detail
    assert document["incomplete"]["url"] == origin + CARD_PATH
    assert "--rate-limit" in render_report(document)


def test_ask_survives_a_huge_retry_after(capsys: pytest.CaptureFixture[str]) -> None:
    # D-NET-3: `ask` said "internal error".
    storm = answer(429, [("Retry-After", HUGE_DATE)], b"")
    with raw_server(storm) as origin:
        assert main(["ask", origin, "identity", "--deadline", "1.5"]) == 3
    err = capsys.readouterr().err
    # The 1 s waits are begun only while they end within the deadline (PROFILE §7).
    assert "[rate_limited]" in err and "internal error" not in err


def test_proposal_verify_url_survives_a_huge_retry_after(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D-NET-3: `proposal verify URL` showed a traceback.
    storm = answer(429, [("Retry-After", HUGE_DATE)], b"")
    with raw_server(storm) as origin:
        code = main(["proposal", "verify", origin + "/t.sow.json"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == "fetch_failed\n"
    assert "[rate_limited]" in captured.err and "Traceback" not in captured.err


# --- addresses that are not public (D-NET-5) --------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("8.8.8.8", "public"),
        ("172.32.0.1", "public"),
        ("2606:4700::1111", "public"),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "private"),  # cloud metadata
        ("100.64.0.1", "private"),  # CGNAT
        ("0.0.0.0", "private"),
        ("255.255.255.255", "private"),
        ("224.0.0.1", "private"),  # multicast
        ("240.0.0.1", "private"),
        ("198.18.0.1", "private"),
        ("::", "private"),
        ("fd00::1", "private"),  # unique local
        ("fe80::1%eth0", "private"),  # link-local with a zone
        ("ff02::1", "private"),
        ("::ffff:10.0.0.1", "private"),  # IPv4-mapped
        ("::ffff:169.254.169.254", "private"),
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("64:ff9b::808:808", "public"),  # NAT64 of 8.8.8.8
        ("2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
        ("[fd00::1]", "private"),
        ("not-an-address", "private"),
        # D-NET-5: every IPv6 form that embeds an IPv4 address is judged by
        # it, the stricter judgement winning (PROFILE §7, docs/decisions.md D-NET-5).
        ("::ffff:0:127.0.0.1", "loopback"),  # IPv4-translated (RFC 2765)
        ("[::ffff:0:7f00:1]", "loopback"),
        ("::ffff:0:a9fe:a9fe", "private"),  # translated metadata service
        ("::ffff:0:10.0.0.1", "private"),
        ("::ffff:0:8.8.8.8", "public"),
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "private"),
        ("64:ff9b:1::a9fe:a9fe", "private"),  # local-use NAT64 (RFC 8215)
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::1", "private"),
        ("2002:808:808::1", "public"),
        ("::127.0.0.1", "private"),  # IPv4-compatible (deprecated)
        ("::169.254.169.254", "private"),
        ("::8.8.8.8", "private"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "private"),  # Teredo
        ("2606:4700::5efe:a9fe:a9fe", "private"),  # ISATAP of 169.254.169.254
        ("2606:4700::200:5efe:7f00:1", "loopback"),  # ISATAP of 127.0.0.1
        ("2606:4700::200:5efe:808:808", "public"),
    ],
)
def test_what_counts_as_public(address: str, kind: str) -> None:
    # docs/decisions.md D-NET-5: IANA's special-purpose registries, embedded v4 judged.
    assert address_kind(address) == kind


PRIVATE_URLS = (
    "https://10.0.0.1/",
    "https://169.254.169.254/latest/meta-data/",
    "https://[fd00::1]/",
    "https://[::ffff:10.0.0.1]/",
    "https://[::ffff:0:a9fe:a9fe]/",  # IPv4-translated (D-NET-5)
    "https://[64:ff9b::a00:1]/",
    "https://[2002:a9fe:a9fe::1]/",
    "https://100.64.0.1/",
    "https://0.0.0.0/",
)


@pytest.mark.parametrize("url", PRIVATE_URLS)
async def test_a_private_target_is_refused_before_any_connection(url: str) -> None:
    with connects() as seen:
        document = await verified(url)
    ended(document, "address_refused")
    assert seen == []
    assert ("transport", "address_refused") in advised(document)


async def test_allow_private_lets_the_connection_be_tried() -> None:
    # 192.0.2.0/24 is TEST-NET-1 (documentation): nothing answers, and nothing is sent
    # anywhere real; with --allow-private the verifier tries, and fails to connect.
    with connects() as seen:
        document = await verified(
            "https://192.0.2.1:9/", client=ClientOptions(timeout=0.3, allow_private=True)
        )
    assert document["incomplete"]["reason"] in ("connect_failed", "timeout")
    assert "192.0.2.1" in hosts(seen)


def _private_interfaces(origin: str) -> Any:
    def edit(card: dict[str, Any]) -> dict[str, Any]:
        card["supportedInterfaces"][0]["url"] = "https://10.0.0.1/a2a/jsonrpc"
        card["supportedInterfaces"][1]["url"] = "https://[fd00::1]/a2a/rest"
        return card

    return honest(origin, edit_card=edit)


async def test_interfaces_on_private_addresses_are_never_contacted() -> None:
    with serve(_private_interfaces) as origin, connects() as seen:
        document = await verified(origin)
    ended(document, "address_refused")
    assert hosts(seen) == {"127.0.0.1"}  # the card, its key and proposals only
    assert ("interface", "address_refused") in advised(document)
    refused = {a["value"] for a in document["advisories"] if a["reason"] == "address_refused"
               and a["code"] == "transport"}  # fmt: skip
    assert refused == {"https://10.0.0.1:443", "https://[fd00::1]:443"}
    assert not document["runs"][0]["calls"]


async def test_one_private_interface_is_skipped_and_the_other_interviewed() -> None:
    def one_private(origin: str) -> Any:
        def edit(card: dict[str, Any]) -> dict[str, Any]:
            card["supportedInterfaces"][0]["url"] = "https://169.254.169.254/a2a/jsonrpc"
            return card

        return honest(origin, edit_card=edit)

    with serve(one_private) as origin, connects() as seen:
        document = await verified(origin)
    assert document["outcome"] == "consistent", document["runs"][0]["conflicts"]
    assert hosts(seen) == {"127.0.0.1"}
    assert {c["binding"] for c in document["runs"][0]["calls"]} == {"HTTP+JSON"}
    assert ("interface", "address_refused") in advised(document)


async def test_an_interface_whose_name_resolves_private_is_skipped_as_a_literal_is() -> None:
    # docs/decisions.md D-NET-8: the run ends address_refused only when every
    # interface is refused. A name judged at the connection ended the whole run
    # unreachable, while the same address as a literal was skipped with an advisory.
    def one_named_private(origin: str) -> Any:
        def edit(card: dict[str, Any]) -> dict[str, Any]:
            card["supportedInterfaces"][0]["url"] = "https://internal.test/a2a/jsonrpc"
            return card

        return honest(origin, edit_card=edit)

    asked: list[str] = []
    options = ClientOptions(resolver=_resolver({"internal.test": ["10.0.0.7"]}, asked))
    with serve(one_named_private) as origin, connects() as seen:
        document = await verified(origin, client=options)
    assert document["outcome"] == "consistent", document.get("incomplete")
    assert asked == ["internal.test"] and hosts(seen) == {"127.0.0.1"}
    assert {c["binding"] for c in document["runs"][0]["calls"]} == {"HTTP+JSON"}
    assert {("interface", "address_refused"), ("transport", "address_refused")} <= (
        advised(document)
    )


def _private_proposals(origin: str) -> Any:
    moved: dict[str, bytes] = {}
    metadata = "https://169.254.169.254/latest/meta-data/"
    for url, body in reference.proposals(origin).items():
        moved[metadata + url.rsplit("/", 1)[1]] = body

    def edit(card: dict[str, Any]) -> dict[str, Any]:
        for extension in card["capabilities"]["extensions"]:
            if extension["uri"] == TERMS_URI:
                for entry in extension["params"]["proposals"]:
                    entry["url"] = metadata + entry["url"].rsplit("/", 1)[1]
        return card

    return honest(origin, edit_card=edit, proposals=moved, self_check=False)


async def test_proposals_on_a_metadata_address_are_never_fetched() -> None:
    # terms §3: a proposal the verifier may not fetch is fetch_failed, whatever the port
    # state there: the record cannot be used to scan a platform's network.
    with serve(_private_proposals) as origin, connects() as seen:
        document = await verified(origin)
    assert "169.254.169.254" not in hosts(seen)
    assert [p["result"] for p in document["runs"][0]["proposals"]] == ["fetch_failed"] * 2
    assert ("transport", "address_refused") in advised(document)


async def test_loopback_is_refused_unless_the_target_is_loopback() -> None:
    # A card on a public name may not send the verifier to the platform's own services.
    with serve(honest) as origin, connects() as seen:
        async with Interviewer(ClientOptions(), target="https://agent.example") as session:
            with pytest.raises(AddressRefused):
                await session.get(origin + CARD_PATH)
            with pytest.raises(AddressRefused):
                await session.get("http://localhost:6379/")
    assert seen == []


def _resolver(table: dict[str, list[str]], asked: list[str]) -> Any:
    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return table[host]

    return resolve


@pytest.mark.parametrize(
    "addresses", [["10.1.2.3"], ["169.254.169.254"], ["93.184.216.34", "fd00::5"]]
)
async def test_a_name_resolving_to_a_private_address_is_refused(addresses: list[str]) -> None:
    # Judged on the addresses the name resolves to; one bad answer spoils the lookup.
    asked: list[str] = []
    options = ClientOptions(resolver=_resolver({"agent.test": addresses}, asked))
    with connects() as seen:
        document = await verified("https://agent.test/", client=options)
    ended(document, "address_refused")
    assert asked == ["agent.test"]
    assert seen == []


async def test_the_address_judged_is_the_address_connected_to() -> None:
    # Resolved once, connected to by address: a second lookup (DNS rebinding) never
    # happens. TLS to a plain HTTP server then fails, after the connection was made.
    asked: list[str] = []
    with serve(honest) as origin:
        port = int(origin.rsplit(":", 1)[1])
        resolver = _resolver({"agent.test": ["127.0.0.1"]}, asked)
        options = ClientOptions(resolver=resolver, allow_private=True, timeout=2)
        with connects() as seen:
            document = await verified(f"https://agent.test:{port}/", client=options)
    ended(document, "connect_failed")
    assert asked == ["agent.test"]
    assert [a for a in seen if isinstance(a, tuple)] == [("127.0.0.1", port)]


def test_verify_allow_private_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with connects() as seen:
        assert main(["verify", "https://10.0.0.1/", "--json"]) == 3
    assert seen == []
    document = json.loads(capsys.readouterr().out)
    ended(document, "address_refused")


def test_proposal_verify_url_refuses_a_private_address(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with connects() as seen:
        assert main(["proposal", "verify", "https://169.254.169.254/t.sow.json"]) == 1
    assert seen == []
    captured = capsys.readouterr()
    assert captured.out == "fetch_failed\n"
    assert "[address_refused]" in captured.err and "--allow-private" in captured.err


def test_ask_refuses_a_private_interface(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(_private_interfaces) as origin, connects() as seen:
        assert main(["ask", origin, "identity"]) == 3
    assert hosts(seen) == {"127.0.0.1"}
    assert "[address_refused]" in capsys.readouterr().err


# --- hostile JSON ---------------------------------------------------------------------


def _card_bytes(origin: str) -> bytes:
    return json.dumps(honest(origin).card).encode()


async def test_a_deep_card_is_unreadable() -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    with raw_server(json_reply(deep)) as origin:
        document = await verified(origin)
    ended(document, "card_unreadable")


async def test_a_card_with_a_duplicate_key_is_unreadable() -> None:
    with raw_server(json_reply(b'{"name": "a", "name": "b"}')) as origin:
        document = await verified(origin)
    ended(document, "card_unreadable")


def _json_answers(kind: str) -> Callable[[str], Any]:
    def factory(origin: str) -> Any:
        def edit(call: Call, reply: Reply) -> Reply:
            if call.question != "identity" or not call.activated or call.binding != "JSONRPC":
                return reply
            if kind == "duplicate":
                body = reply.body[:-1] + b',"jsonrpc":"2.0"}'
            else:
                body = reply.body[:-1] + b',"x":' + b"[" * 5000 + b"]" * 5000 + b"}"
            return Reply(reply.status, reply.headers, body)

        return Wrap(honest(origin), on_reply=edit)

    return factory


@pytest.mark.parametrize("kind", ["duplicate", "deep"])
async def test_hostile_json_answers_are_answer_shape_conflicts(kind: str) -> None:
    with serve(_json_answers(kind)) as origin:
        document = await verified(origin)
    assert document["outcome"] == "non_conformant"
    for run in document["runs"]:
        assert ("answer_shape", "not_json") in {(c["check"], c["reason"]) for c in run["conflicts"]}


# --- a card that changes per fetch ----------------------------------------------------


def _changing_card(origin: str) -> Any:
    def rename(card: dict[str, Any]) -> dict[str, Any]:
        card["name"] = "Someone Else"
        return card

    other = honest(origin, edit_card=rename).card  # signed, valid: only its name differs

    def swap(call: Call, reply: Reply) -> Reply:
        # Two card fetches a run, the default card and the 1.0 variant (PROFILE §7): the
        # first run sees the other card, the re-run the honest one.
        if call.path == CARD_PATH and call.cards // 2 % 2 == 0:
            return Reply(reply.status, reply.headers, json.dumps(other).encode())
        return reply

    return Wrap(honest(origin), on_reply=swap)


async def test_a_card_that_changes_per_fetch_is_churn() -> None:
    # interview §7 rule 3: a conflict that is gone on the re-run (with a fresh card).
    with serve(_changing_card) as origin:
        document = await verified(origin)
    assert document["outcome"] == "churn", document["outcome"]
    first, second = document["runs"]
    assert first["card_digest"] != second["card_digest"]
    assert first["conflicts"] and not second["conflicts"]


async def test_a_foreign_jku_is_never_fetched() -> None:
    with serve(honest) as keyhost:
        foreign = keyhost

        def elsewhere(origin: str) -> Any:
            agent = honest(origin)
            unsigned = {k: v for k, v in agent.card.items() if k != "signatures"}
            agent.card = sign(unsigned, foreign)
            return agent

        with serve(elsewhere) as origin, connects() as seen:
            document = await verified(origin)
    port = int(foreign.rsplit(":", 1)[1])
    assert ("127.0.0.1", port) not in seen
    assert ("card_signature", "jku_refused") in advised(document)
    assert document["agent"]["card_signature"]["status"] == "key_unavailable"


# --- verify-many keeps going ----------------------------------------------------------


def test_verify_many_over_the_whole_zoo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # One record per URL, in order, each with its precise reason; none holds the others.
    raw = {
        "bomb": json_reply(zeros(BOMB), "gzip"),
        "stacked": json_reply(gzip(zeros(BOMB)), "gzip, gzip"),
        "endless": flood(
            HEAD_200 + b"Transfer-Encoding: chunked\r\n\r\n",
            b"10000\r\n" + b" " * 0x10000 + b"\r\n",
        ),
        "stall": drip(HEAD_200, b"X-Drip: 1\r\n", 0.05),
        "trickle": drip(HEAD_200 + b"Content-Length: 9999\r\n\r\n{", b" ", 0.05),
        "loop": answer(302, [("Location", CARD_PATH)], b""),
        "storm": answer(429, [("Retry-After", HUGE_DATE)], b""),
        "deep": json_reply(b"[" * 100_000 + b"]" * 100_000),
        "duplicate": json_reply(b'{"a": 1, "a": 2}'),
    }
    # The storm: an unreadable date is the default 1 s wait; the wait that would outlast
    # the 4 s deadline is not begun, and the run ends rate_limited (PROFILE §7).
    expected = {
        "bomb": "too_large", "stacked": "bad_encoding", "endless": "too_large",
        "stall": "timeout", "trickle": "timeout", "loop": "redirect_refused",
        "storm": "rate_limited", "deep": "card_unreadable", "duplicate": "card_unreadable",
    }  # fmt: skip
    with contextlib.ExitStack() as stack:
        origins = {name: stack.enter_context(raw_server(h)) for name, h in raw.items()}
        honest_origin, changing, private = stack.enter_context(
            serve_many([honest, _changing_card, _private_interfaces])
        )
        urls = [honest_origin, *origins.values(), changing, private, *PRIVATE_URLS[:3]]
        listing = tmp_path / "zoo.txt"
        listing.write_text("\n".join(urls) + "\n")
        out = tmp_path / "zoo.jsonl"
        seen = stack.enter_context(connects())
        code = main(["verify-many", str(listing), "--out", str(out), "--deadline", "4",
                     "--timeout", "1", "--churn-delay", "0", "--concurrency", "6",
                     "--no-progress"])  # fmt: skip
    assert code == 3
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["agent"]["url"] for r in records] == urls
    for record in records:
        SCHEMA.validate(record)
    outcomes = [(r["outcome"], (r.get("incomplete") or {}).get("reason")) for r in records]
    assert outcomes == [
        ("consistent", None),
        *(("unreachable", expected[name]) for name in raw),
        ("churn", None),
        ("unreachable", "address_refused"),
        *[("unreachable", "address_refused")] * 3,
    ]
    assert hosts(seen) == {"127.0.0.1"}
    assert "unreachable" in capsys.readouterr().err


# --- a name, resolved once, over TLS --------------------------------------------------


def _tls_files(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """(CA certificate, leaf certificate for ``name``, leaf key), PEM, valid for an hour."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.now(UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hostile zoo test CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())

    def builder(subject: x509.Name, public: Any) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(hours=1))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        )

    ca = (
        builder(ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]), key.public_key())
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@contextlib.contextmanager
def serve_tls(factory: Callable[[str], Any], name: str, cert: Path, key: Path) -> Iterator[str]:
    """Serve ``factory(origin)`` over TLS on a loopback port; the origin names ``name``."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    origin = f"https://{name}:{sock.getsockname()[1]}"
    config = uvicorn.Config(factory(origin), log_level="error", access_log=False,
                            lifespan="off", ssl_certfile=str(cert), ssl_keyfile=str(key),
                            timeout_graceful_shutdown=1)  # fmt: skip
    with in_thread(config, [sock], start=10, stop=5):
        yield origin


@pytest.fixture
def zoo_ca(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A leaf certificate for ``agent.test`` whose CA the verifier trusts, for the test."""
    import ssl

    from a2a_interview.verifier import client

    ca, cert, key = _tls_files(tmp_path, "agent.test")
    saved = client._TLS[:]
    client._TLS[:] = [ssl.create_default_context(cafile=str(ca))]
    try:
        yield cert, key
    finally:
        client._TLS[:] = saved


async def test_a_name_is_reached_at_its_judged_address_with_its_own_sni_and_host(
    zoo_ca: tuple[Path, Path],
) -> None:
    # Connecting by address must not change what the server sees: TLS verifies the
    # certificate for the name (SNI), and Host is the name, on every request.
    hosts_seen: set[str] = set()

    def factory(origin: str) -> Any:
        agent = honest(origin)

        async def app(scope: Any, receive: Any, send: Any) -> None:
            hosts_seen.update(v.decode() for n, v in scope["headers"] if n == b"host")
            await agent(scope, receive, send)

        return app

    asked: list[str] = []
    resolver = _resolver({"agent.test": ["127.0.0.1"]}, asked)
    with serve_tls(factory, "agent.test", *zoo_ca) as origin, connects() as seen:
        refused = await verified(origin, client=ClientOptions(resolver=resolver))
        document = await verified(
            origin, client=ClientOptions(resolver=resolver, allow_private=True)
        )
    ended(refused, "address_refused")  # agent.test is not loopback: its address is refused
    assert document["outcome"] == "consistent", document.get("incomplete")
    assert document["agent"]["card_signature"]["status"] == "verified"
    assert set(asked) == {"agent.test"}
    assert hosts(seen) == {"127.0.0.1"}
    assert hosts_seen == {origin.removeprefix("https://")}
