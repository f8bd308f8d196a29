"""Per-client rate limiting of interview calls (PROFILE §3.7, interview §10).

The limiter alone, then through ``InterviewMiddleware`` in process, then two "replicas"
(two middleware instances, two limiters) sharing one REAL redis-server, which the
fixture starts on a free loopback port and stops. A missing ``redis-server`` binary skips
those tests with the reason outside CI and fails them under CI, which installs it
(``.ci/run``; the rule is ``tests/needs.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

import needs
from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.ratelimit import RateLimiter, redacted
from a2a_interview.spec import INTERVIEW_URI
from support.ports import free_port

ACT = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10
ORIGIN = "https://stonework.example"
RPC = "/a2a/jsonrpc"
HOST_BODY = b'{"host":"answered"}'


def _declarations() -> Any:
    return build(reference.unsigned_card(ORIGIN), reference.proposals(ORIGIN))


async def _host(scope: Any, receive: Any, send: Any) -> None:
    """The wrapped agent: answers everything that is not the interview's."""
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": HOST_BODY})


def _by_header(scope: Any) -> str:
    for name, value in scope["headers"]:
        if name == b"x-client":
            return str(value.decode("latin-1"))
    return "anonymous"


def _client(limiter: RateLimiter, **options: Any) -> httpx.AsyncClient:
    app = InterviewMiddleware(_host, _declarations(), limiter=limiter, **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN)


async def _ask(
    http: httpx.AsyncClient, request_id: Any = 1, headers: dict[str, str] | None = None
) -> httpx.Response:
    body = b'{"jsonrpc":"2.0","id":%s,"method":"interview/identity"}' % (
        b'"%s"' % request_id.encode() if isinstance(request_id, str) else str(request_id).encode()
    )
    return await http.post(RPC, content=body, headers={**ACT, **(headers or {})})


def _too_many(request_id: str) -> bytes:
    # PROFILE §3.7, spelled out by hand.
    return (
        b'{"error":{"code":-32000,"message":"Too many requests"},"id":"%s","jsonrpc":"2.0"}'
        % request_id.encode()
    )


# ---------------------------------------------------------------- the limiter alone


@pytest.mark.anyio
async def test_memory_limiter_counts_per_client() -> None:
    limiter = RateLimiter("3/minute")
    assert [await limiter.hit("a") for _ in range(3)] == [None, None, None]
    wait = await limiter.hit("a")
    assert isinstance(wait, int) and 1 <= wait <= 60
    assert await limiter.hit("b") is None  # another client, its own budget
    await limiter.reset()
    assert await limiter.hit("a") is None


@pytest.mark.anyio
async def test_every_limit_of_a_list_applies() -> None:
    limiter = RateLimiter("2/second;3/minute")
    assert await limiter.hit("a") is None
    assert await limiter.hit("a") is None
    assert await limiter.hit("a") is not None  # the per-second limit
    time.sleep(1.05)
    assert await limiter.hit("a") is None
    wait = await limiter.hit("a")  # now the per-minute limit
    assert wait is not None and wait > 1


def test_a_malformed_limit_is_refused() -> None:
    with pytest.raises(ValueError):
        RateLimiter("lots")


# ---------------------------------------------------------------- through the middleware


@pytest.mark.anyio
async def test_over_the_limit_429_retry_after_and_the_request_id() -> None:
    async with _client(RateLimiter("2/minute")) as http:
        for i in range(2):
            ok = await _ask(http, i)
            assert ok.status_code == 200
            assert b'"result":{"declared":true' in ok.content
        over = await _ask(http, "over-1")
        assert over.status_code == 429
        assert 1 <= int(over.headers["retry-after"]) <= 60
        assert over.headers["content-type"] == "application/json"
        assert over.headers["a2a-extensions"] == INTERVIEW_URI
        assert over.content == _too_many("over-1")
        rest = await http.get("/a2a/rest/interview/identity", headers=ACT)
        assert rest.status_code == 429
        assert int(rest.headers["retry-after"]) >= 1


@pytest.mark.anyio
async def test_clients_have_separate_budgets() -> None:
    async with _client(RateLimiter("2/minute"), client_key=_by_header) as http:
        alice, bob = {"X-Client": "alice"}, {"X-Client": "bob"}
        assert (await _ask(http, 1, alice)).status_code == 200
        assert (await _ask(http, 2, alice)).status_code == 200
        assert (await _ask(http, 3, alice)).status_code == 429
        assert (await _ask(http, 4, bob)).status_code == 200
        assert (await _ask(http, 5, bob)).status_code == 200
        assert (await _ask(http, 6, bob)).status_code == 429


@pytest.mark.anyio
async def test_the_default_key_is_the_remote_address() -> None:
    limiter = RateLimiter("1/minute")
    app = InterviewMiddleware(_host, _declarations(), limiter=limiter)
    one = httpx.ASGITransport(app=app, client=("192.0.2.1", 1000))
    two = httpx.ASGITransport(app=app, client=("192.0.2.2", 1000))
    async with (
        httpx.AsyncClient(transport=one, base_url=ORIGIN) as first,
        httpx.AsyncClient(transport=two, base_url=ORIGIN) as second,
    ):
        assert (await _ask(first)).status_code == 200
        assert (await _ask(first)).status_code == 429
        assert (await _ask(second)).status_code == 200


async def _answered(app: Any, peers: list[str]) -> int:
    """How many of one interview call from each of ``peers`` were answered (not 429)."""
    answered = 0
    for n, peer in enumerate(peers):
        transport = httpx.ASGITransport(app=app, client=(peer, 1000))
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as http:
            answered += (await _ask(http, n)).status_code == 200
    return answered


@pytest.mark.anyio
async def test_the_addresses_of_one_ipv6_64_are_one_client() -> None:
    """PROFILE §3.7, D-NET-15: the rate limit keys a client as the connection share does
    (listen.client_of). Before, 200 addresses of one /64 got 600 answers at 3/minute."""
    app = InterviewMiddleware(_host, _declarations(), limiter=RateLimiter("3/minute"))
    one_64 = [f"2001:db8:1:2:{n:x}::{n + 1:x}" for n in range(200)]
    assert await _answered(app, one_64) == 3
    # The next /64 is another client, with its own budget.
    assert await _answered(app, [f"2001:db8:1:3::{n + 1:x}" for n in range(10)]) == 3
    # A zone index names the same address.
    assert await _answered(app, ["2001:db8:1:3::77%eth0"]) == 0


@pytest.mark.anyio
async def test_an_ipv4_mapped_address_is_its_ipv4_client() -> None:
    # A dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d: one budget with
    # the same client on an IPv4 listener, never one per spelling.
    app = InterviewMiddleware(_host, _declarations(), limiter=RateLimiter("2/minute"))
    peers = ["192.0.2.9", "::ffff:192.0.2.9", "::ffff:c000:209", "192.0.2.9"]
    assert await _answered(app, peers) == 2
    assert await _answered(app, ["192.0.2.10"]) == 1  # IPv4 addresses stay apart


@pytest.mark.anyio
async def test_ordinary_traffic_is_never_counted() -> None:
    async with _client(RateLimiter("2/minute")) as http:
        ordinary = [
            (RPC, b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}', ACT),
            (RPC, b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}', {}),  # inactive
            (RPC, b"not json at all", ACT),
            ("/elsewhere", b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}', ACT),
        ]
        for _ in range(10):
            for path, body, headers in ordinary:
                response = await http.post(path, content=body, headers=headers)
                assert (response.status_code, response.content) == (200, HOST_BODY)
            assert (await http.get("/a2a/rest/interview/identity")).content == HOST_BODY
            assert (await http.get("/.well-known/agent-card.json")).status_code == 200
        assert (await _ask(http, 1)).status_code == 200
        assert (await _ask(http, 2)).status_code == 200
        assert (await _ask(http, 3)).status_code == 429


# ---------------------------------------------------------------- Redis: two replicas


@contextlib.contextmanager
def redis_server() -> Iterator[subprocess.Popen[bytes]]:
    """A REAL redis-server on a free loopback port, started and stopped here; its
    ``args`` end with ``redis://127.0.0.1:PORT/0`` as the process's ``url`` attribute."""
    binary = needs.binary(
        "redis-server", "apt-get install redis-server (.ci/run installs it under CI)"
    )
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.05)
        process.url = f"redis://127.0.0.1:{port}/0"  # type: ignore[attr-defined]
        yield process
    finally:
        process.send_signal(signal.SIGCONT)  # a test may have frozen it
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as process:
        yield process.url  # type: ignore[attr-defined]


@pytest.fixture
def redis_db(redis_url: str) -> str:
    import redis

    with redis.Redis.from_url(redis_url) as client:
        client.flushdb()
    return redis_url


@pytest.mark.redis
@pytest.mark.anyio
async def test_replicas_share_one_budget_per_client(redis_db: str) -> None:
    first = _client(RateLimiter("4/minute", redis_db), client_key=_by_header)
    second = _client(RateLimiter("4/minute", redis_db), client_key=_by_header)
    alice = {"X-Client": "alice"}
    async with first, second:
        statuses = []
        for i in range(6):  # alternate the replicas
            replica = first if i % 2 == 0 else second
            statuses.append((await _ask(replica, i, alice)).status_code)
        assert statuses == [200, 200, 200, 200, 429, 429]
        over = await _ask(second, "over-2", alice)
        assert over.status_code == 429
        assert over.content == _too_many("over-2")
        assert int(over.headers["retry-after"]) >= 1
        # Another client, on either replica, has its own budget.
        bob = {"X-Client": "bob"}
        assert (await _ask(second, 1, bob)).status_code == 200
        assert (await _ask(first, 2, bob)).status_code == 200


@pytest.mark.redis
@pytest.mark.anyio
async def test_the_budget_lives_in_redis(redis_db: str) -> None:
    import redis

    limiter = RateLimiter("2/minute", redis_db)
    assert await limiter.storage.check()
    assert await limiter.hit("carol") is None
    with redis.Redis.from_url(redis_db) as client:
        keys = [k.decode() for k in client.keys("*")]
    assert keys and all("carol" in k for k in keys), keys
    # A fresh limiter (a restarted replica) still sees the count.
    again = RateLimiter("2/minute", redis_db)
    assert await again.hit("carol") is None
    assert await again.hit("carol") is not None


@pytest.mark.anyio
async def test_memory_replicas_do_not_share() -> None:
    # The control: without a shared store each replica counts alone.
    first = _client(RateLimiter("1/minute"))
    second = _client(RateLimiter("1/minute"))
    async with first, second:
        assert (await _ask(first)).status_code == 200
        assert (await _ask(second)).status_code == 200
        assert (await _ask(first)).status_code == 429


@pytest.mark.redis
@pytest.mark.anyio
async def test_ordinary_traffic_never_touches_redis(redis_db: str) -> None:
    import redis

    async with _client(RateLimiter("2/minute", redis_db)) as http:
        for _ in range(5):
            body = b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}'
            assert (await http.post(RPC, content=body, headers=ACT)).content == HOST_BODY
    with redis.Redis.from_url(redis_db) as client:
        assert client.dbsize() == 0


@pytest.mark.anyio
async def test_a_store_that_fails_lets_calls_through_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # docs/decisions.md D-SERVE-10: a down Redis fails open, logged once, not a 500.
    limiter = RateLimiter("1/minute", f"redis://127.0.0.1:{free_port()}/0")
    with caplog.at_level("WARNING", logger="a2a_interview.server"):
        assert await limiter.hit("a") is None
        assert await limiter.hit("a") is None  # over 1/minute, yet let through
    assert limiter.failing
    assert [r.getMessage() for r in caplog.records] == [
        f"rate-limit store {limiter.url} unavailable, not limiting: ConnectionError"
    ]
    assert limiter.url.startswith("redis://127.0.0.1:")  # D-SERVE-35: the store is named


@pytest.mark.redis
@pytest.mark.anyio
async def test_a_frozen_redis_fails_open_within_a_bound_and_says_so_twice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """D-SERVE-10, D-SERVE-35 (PROFILE §3.7): a Redis that stops answering (SIGSTOP: its
    port still accepts connections, nothing replies) fails open like a dead one. Every
    interview call is answered, each within a bound (a guard against the hang, not a
    speed claim), one at a time and many at once; one line names the store when it
    fails, one when it answers again after SIGCONT, none per call."""
    with redis_server() as process:
        url = process.url  # type: ignore[attr-defined]
        limiter = RateLimiter("1000/minute", url)
        async with _client(limiter) as http:
            assert (await _ask(http, 0)).status_code == 200  # the store answers
            process.send_signal(signal.SIGSTOP)
            with caplog.at_level("WARNING", logger="a2a_interview.server"):
                statuses = []
                for i in range(1, 9):
                    with anyio.fail_after(10):
                        statuses.append((await _ask(http, i)).status_code)
                with anyio.fail_after(10):
                    many = await asyncio.gather(*(_ask(http, i) for i in range(9, 41)))
                statuses += [r.status_code for r in many]
                assert statuses == [200] * 40
                assert limiter.failing
                process.send_signal(signal.SIGCONT)
                for i in range(200):  # a probe each RETRY_AFTER; bounded in count
                    with anyio.fail_after(10):
                        assert (await _ask(http, 100 + i)).status_code == 200
                    if not limiter.failing:
                        break
                    await asyncio.sleep(0.05)
            assert not limiter.failing
    assert [r.getMessage() for r in caplog.records] == [
        f"rate-limit store {url} unavailable, not limiting: TimeoutError",
        f"rate-limit store {url} available again",
    ]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),
        ("rediss://app:hunter2@cache.internal:6380/1", "rediss://app:***@cache.internal:6380/1"),
        ("redis://cache:6379/0?password=hunter2&db=1", "redis://cache:6379/0?password=***&db=1"),
        ("redis://cache:6379/0", "redis://cache:6379/0"),
        ("memory://", "memory://"),
    ],
)
def test_a_store_is_named_without_its_password(url: str, shown: str) -> None:
    # D-SERVE-35: the log line names the store; a password never reaches a log.
    assert redacted(url) == shown
    assert RateLimiter("1/minute", url).url == shown
