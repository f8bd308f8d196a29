"""verify-many across worker processes (D-CLI-4): the same records as one process,
one per agent, in file order; a worker that dies loses no line."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from a2a_interview.cli import main
from a2a_interview.strictjson import JSONObject
from a2a_interview.verifier import VerifyOptions
from a2a_interview.verifier.many import origin_of, verify_many
from agents import honest, liar
from support.servers import serve_many


def _dies_in_a_worker() -> datetime:
    """A clock that kills any worker process that reads it (module level: it pickles)."""
    if multiprocessing.parent_process() is not None:
        os._exit(7)
    return datetime.now(UTC)


def _outcomes(path: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["agent"]["url"], r["outcome"]) for r in records]


def test_workers_give_the_records_one_process_gives(tmp_path: Path) -> None:
    factories: list[Any] = [honest, liar] * 9
    with serve_many(factories) as origins:
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        results = {}
        for workers in ("1", "2"):
            out = tmp_path / f"records-{workers}.jsonl"
            code = main(["verify-many", str(listing), "--out", str(out), "--no-progress",
                         "--churn-delay", "0", "--workers", workers])  # fmt: skip
            assert code == 1  # the liars are non_conformant
            results[workers] = _outcomes(out)
    expected = [(o, "consistent" if i % 2 == 0 else "non_conformant") for i, o in
                enumerate(origins)]  # fmt: skip
    assert results["1"] == expected  # one record per agent, in the file's order
    assert results["2"] == expected


def test_a_worker_that_dies_loses_no_line() -> None:
    # Every agent gets exactly one record even when the worker verifying it is killed:
    # an unreachable record saying why, never a missing line.
    seen: list[tuple[int, str]] = []
    with serve_many([honest] * 16) as origins:
        verify_many(
            origins,
            VerifyOptions(churn_delay=0, clock=_dies_in_a_worker),
            concurrency=4,
            workers=2,
            emit=lambda index, line, document: seen.append((index, document["outcome"])),
        )
    assert sorted(index for index, _ in seen) == list(range(16))
    assert {outcome for _, outcome in seen} == {"unreachable"}


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_workers_must_be_positive(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify-many", "-", "--workers", value]) == 2
    assert "--workers" in capsys.readouterr().err


def test_an_unparsable_url_gets_its_record_without_credentials() -> None:
    # verify never raises for its input URL (PROFILE §7 unreachable): an unclosed IPv6
    # bracket raised ValueError from without_credentials, in verify and again in
    # failed_record, so verify_many's task group lost every line.
    seen: list[JSONObject] = []
    verify_many(["https://user:secret@[::1", "https://[fd00::1"],
                VerifyOptions(churn_delay=0), emit=lambda _i, _l, d: seen.append(d))  # fmt: skip
    assert [d["outcome"] for d in seen] == ["unreachable", "unreachable"]
    assert all("secret" not in json.dumps(d) for d in seen)
    assert {d["agent"]["url"] for d in seen} == {"https://[::1", "https://[fd00::1"}


# -- real populations (D-CLI-4a) ----------------------

_TOKENS = {"A_TOKEN": "token-of-a", "B_KEY": "key-of-b", "D_TOKEN": "token-of-d"}


def _guarded(seen: list[tuple[str, str]], name: bytes, wanted: bytes | None) -> Any:
    """A wrapper that notes every credential header it is sent and, when ``wanted`` is
    given, answers 401 to any request without that exact ``name`` value."""
    from agents import Call, Reply

    def on_request(call: Call) -> Reply | None:
        for header, value in call.headers:
            if header.lower() in (b"authorization", b"x-api-key"):
                seen.append((header.decode().lower(), value.decode()))
        got = dict((h.lower(), v) for h, v in call.headers).get(name)
        if wanted is not None and got != wanted:
            return Reply(401, [(b"www-authenticate", b"Bearer")], b"")
        return None

    return on_request


def test_each_agent_gets_only_its_own_origins_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # D-CLI-4a: credentials per origin, never sent to
    # another agent: not to another listed origin, not across a redirect, not to an
    # interface a card names on another origin (docs/decisions.md D-VERIFY-5 and D-CLI-4).
    from agents import Wrap, honest

    for name, value in _TOKENS.items():
        monkeypatch.setenv(name, value)
    seen: dict[str, list[tuple[str, str]]] = {k: [] for k in "abcde"}
    ports: dict[str, str] = {}

    def agent_a(origin: str) -> Any:
        ports["a"] = origin
        return Wrap(honest(origin), _guarded(seen["a"], b"authorization", b"Bearer token-of-a"))

    def agent_b(origin: str) -> Any:
        return Wrap(honest(origin), _guarded(seen["b"], b"x-api-key", b"key-of-b"))

    def agent_c(origin: str) -> Any:
        return Wrap(honest(origin), _guarded(seen["c"], b"", None))

    def agent_d(origin: str) -> Any:
        # Its card redirects to agent A's origin: refused, and D's token never goes there.
        from agents import Call, Reply

        def on_request(call: Call) -> Reply | None:
            _guarded(seen["d"], b"", None)(call)
            location = ports["a"].encode() + b"/.well-known/agent-card.json"
            return Reply(302, [(b"location", location)], b"")

        return Wrap(honest(origin), on_request)

    def agent_e(origin: str) -> Any:
        # Its card names interfaces on agent A's origin: E's token stays home.
        def move(card: dict[str, Any]) -> dict[str, Any]:
            for interface in card["supportedInterfaces"]:
                interface["url"] = interface["url"].replace(origin, ports["a"])
            return card

        return Wrap(honest(origin, edit_card=move), _guarded(seen["e"], b"", None))

    with serve_many([agent_a, agent_b, agent_c, agent_d, agent_e]) as origins:
        a, b, _c, d, e = origins
        credentials = tmp_path / "credentials.json"
        credentials.write_text(json.dumps({
            a: {"bearer_env": "A_TOKEN"},
            b + "/": {"header_env": {"X-API-Key": "B_KEY"}},
            d: {"bearer_env": "D_TOKEN"},
            e: {"headers": {"Authorization": "Bearer token-of-e"}},
        }))  # fmt: skip
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        out = tmp_path / "records.jsonl"
        code = main(["verify-many", str(listing), "--out", str(out), "--no-progress",
                     "--churn-delay", "0", "--credentials", str(credentials)])  # fmt: skip
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 3  # d is unreachable (redirect_refused), e too (A wants A's token)
    assert [r["outcome"] for r in records[:3]] == ["consistent"] * 3
    assert records[3]["incomplete"]["reason"] == "redirect_refused"
    # The record names the kind, never the value (D-CLI-9).
    assert [r["credentials"] for r in records] == [
        {"kind": "bearer", "headers": ["authorization"]},
        {"kind": "header", "headers": ["x-api-key"]},
        {"kind": "none", "headers": []},
        {"kind": "bearer", "headers": ["authorization"]},
        {"kind": "bearer", "headers": ["authorization"]},
    ]
    assert not any(v in out.read_text() for v in [*_TOKENS.values(), "token-of-e"])
    # Each origin saw only its own credential, if any.
    assert {v for _, v in seen["a"]} == {"Bearer token-of-a"}
    assert {v for _, v in seen["b"]} == {"key-of-b"}
    assert seen["c"] == []
    assert {v for _, v in seen["d"]} == {"Bearer token-of-d"}
    assert {v for _, v in seen["e"]} == {"Bearer token-of-e"}


def test_authentication_required_says_what_was_sent_not_an_option(tmp_path: Path) -> None:
    # D-CLI-9: the detail said "(pass --header or --bearer-env)", which
    # verify-many cannot follow; it now says whether credentials were given.
    from agents import Wrap, honest

    seen: list[tuple[str, str]] = []
    with serve_many(
        [lambda o: Wrap(honest(o), _guarded(seen, b"authorization", b"Bearer right"))] * 2
    ) as origins:
        credentials = tmp_path / "credentials.json"
        credentials.write_text(json.dumps({origins[1]: {"headers": {
            "Authorization": "Bearer wrong"}}}))  # fmt: skip
        details = []
        verify_many(origins, VerifyOptions(churn_delay=0), emit=lambda _i, _l, d: details.append(
            (d["agent"]["url"], d["incomplete"]["detail"])),
            credentials={origin_of(origins[1]): (("Authorization", "Bearer wrong"),)})  # type: ignore[dict-item]  # fmt: skip
    assert dict(details) == {
        origins[0]: "the agent requires authentication (none were given)",
        origins[1]: "the agent requires authentication (the credentials given were refused)",
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"https://a.example/path": {"bearer_env": "A_TOKEN"}}', "is not an origin"),
        ('{"ftp://a.example": {"bearer_env": "A_TOKEN"}}', "is not an origin"),
        ('{"https://u:p@a.example": {"bearer_env": "A_TOKEN"}}', "is not an origin"),
        ('{"https://a.example": {"bearer_env": "NOT_SET_ANYWHERE"}}', "is not set"),
        ('{"https://a.example": {"token": "x"}}', "bearer_env, header_env, headers"),
        ('{"https://a.example": {"headers": {"Host": "x"}}}', "set by the verifier"),
        ('{"https://a.example": {"headers": {"X-K": "a\\nb"}}}', "line breaks"),
        ('{"https://a.example": {}, "https://A.example:443": {}}', "bearer_env"),
        (
            '{"https://a.example": {"bearer_env": "A_TOKEN"}, '
            '"https://A.EXAMPLE:443/": {"bearer_env": "A_TOKEN"}}',
            "named twice",
        ),
        ('["https://a.example"]', "a JSON object"),
        ('{"https://a.example": 1, "https://a.example": 2}', "not strict JSON"),
    ],
)
def test_a_bad_credentials_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    content: str, message: str,
) -> None:  # fmt: skip
    # Users never see a traceback (BRIEF): every mistake is one line, exit 2, before any
    # agent is contacted.
    monkeypatch.setenv("A_TOKEN", "t")
    listing = tmp_path / "agents.txt"
    listing.write_text("https://a.example\n")
    credentials = tmp_path / "credentials.json"
    credentials.write_text(content)
    assert main(["verify-many", str(listing), "--credentials", str(credentials)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def _counting(app: Any, state: dict[str, int]) -> Any:
    """ASGI: counts requests in flight at once (``state["max"]``), each held 10 ms."""
    import anyio

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        try:
            await anyio.sleep(0.01)
            await app(scope, receive, send)
        finally:
            state["now"] -= 1

    return wrapped


@contextlib.contextmanager
def _one_origin(count: int, state: dict[str, int]) -> Iterator[list[str]]:
    """``count`` honest agents under paths of one origin (a platform's host)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from support.servers import serve

    def factory(origin: str) -> Any:
        mounts = [Mount(f"/a{i}", app=honest(f"{origin}/a{i}")) for i in range(count)]
        return _counting(Starlette(routes=mounts), state)

    with serve(factory) as origin:
        yield [f"{origin}/a{i}" for i in range(count)]


@pytest.mark.parametrize(("per_origin", "workers"), [(2, 1), (3, 2)])
def test_agents_of_one_origin_are_bounded_together(per_origin: int, workers: int) -> None:
    # D-CLI-4a: a per-origin bound, so a platform hosting many agents on one host is not
    # flooded: every agent gets its record, and at most per_origin are under way at
    # once (one agent's calls are sequential), across workers too.
    state = {"now": 0, "max": 0}
    seen: list[str] = []
    with _one_origin(16, state) as urls:
        verify_many(urls, VerifyOptions(churn_delay=0), concurrency=16, workers=workers,
                    per_origin=per_origin,
                    emit=lambda _i, _l, d: seen.append(d["outcome"]))  # fmt: skip
    assert seen == ["consistent"] * 16
    assert 1 <= state["max"] <= per_origin


def test_without_the_bound_one_origin_gets_many_at_once() -> None:
    # The control of the test above: the server does see agents side by side.
    state = {"now": 0, "max": 0}
    with _one_origin(16, state) as urls:
        verify_many(urls, VerifyOptions(churn_delay=0), concurrency=16, emit=lambda *_: None)
    assert state["max"] > 3


def test_shares_keep_each_origins_bound_and_spread_distinct_origins() -> None:
    from a2a_interview.verifier.many import _shares

    many = [(i, f"http://127.0.0.1:{9000 + i}") for i in range(10)]
    shares = _shares(many, 3, 4)
    assert [[i for i, _ in agents] for agents, _ in shares] == [
        [i for i, _ in many[w::3]] for w in range(3)
    ]  # distinct origins: dealt as urls[w::workers]
    one = [(i, f"https://host.example/a{i}") for i in range(10)]
    for workers, bound in [(3, 4), (3, 2), (8, 3), (2, 7)]:
        shares = _shares(one, workers, bound)
        key = ("https", "host.example", 443)
        assert sum(limits.get(key, 0) for _, limits in shares) <= bound
        assert sorted(i for agents, _ in shares for i, _ in agents) == list(range(10))
        assert all(limits.get(key, 0) >= 1 for agents, limits in shares if agents)


def test_jwks_pins_the_keys_of_every_agent(tmp_path: Path) -> None:
    # D-CLI-9: without --jwks a signed card whose jku cannot be fetched is
    # key_unavailable; verify-many now pins keys as verify does (PROFILE §6.4).
    from a2a_interview import reference
    from agents import Call, Reply, Wrap

    def no_jku(call: Call) -> Reply | None:
        return Reply(404, [], b"") if call.path == reference.JWKS_PATH else None

    with serve_many([lambda o: Wrap(honest(o), no_jku)] * 2) as origins:
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join(origins) + "\n")
        jwks = tmp_path / "jwks.json"
        jwks.write_text(json.dumps(reference.jwks()))
        statuses = {}
        for pinned in (False, True):
            out = tmp_path / f"records-{pinned}.jsonl"
            argv = ["verify-many", str(listing), "--out", str(out), "--no-progress"]
            assert main(argv + (["--jwks", str(jwks)] if pinned else [])) == 0
            records = [json.loads(line) for line in out.read_text().splitlines()]
            statuses[pinned] = {r["agent"]["card_signature"]["status"] for r in records}
    assert statuses == {False: {"key_unavailable"}, True: {"verified"}}


def test_the_summary_counts_then_lists_only_what_was_not_consistent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # D-CLI-4b: counts per outcome; then only the agents that were not consistent
    # (all with --all), with full URLs, wrapped, not cut; how many records were stored.
    monkeypatch.setenv("COLUMNS", "100")
    factories: list[Any] = [honest, honest, liar]
    with serve_many(factories) as origins:
        long = [f"{o}/?pad={'x' * 150}" for o in origins]  # the card URL drops the query
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join([*origins[:2], long[2]]) + "\n")
        store = tmp_path / "ledger.db"
        argv = ["verify-many", str(listing), "--out", str(tmp_path / "r.jsonl"),
                "--no-progress", "--churn-delay", "0", "--store", str(store)]  # fmt: skip
        assert main(argv) == 1
        first = capsys.readouterr().err
        assert main([*argv, "--all"]) == 1
        every = capsys.readouterr().err
    assert "consistent             2" in first and "non_conformant         1" in first
    assert origins[0] not in first  # consistent agents are counted, not listed
    assert "".join(line.strip() for line in first.splitlines()).count(long[2]) == 1
    assert all(len(line) <= 100 for line in first.splitlines())
    assert "stored 3 record(s)" in first
    assert origins[0] in every and origins[1] in every
    assert "stored 3 record(s)" in every  # three new runs: three new records


@pytest.mark.parametrize(
    ("headers", "kind"),
    [
        ((), "none"),
        ((("Authorization", "Bearer secret-token-1"),), "bearer"),
        ((("authorization", "bearer secret-token-1"),), "bearer"),
        ((("Authorization", "Basic c2VjcmV0LWJhc2lj"),), "basic"),
        ((("Authorization", "DPoP secret-token-2"),), "authorization"),
        ((("X-API-Key", "secret-key-1"),), "header"),
        ((("X-API-Key", "secret-key-1"), ("Authorization", "Bearer secret-token-1")), "bearer"),
    ],
)
def test_the_credential_kind_names_the_scheme_never_the_value(
    headers: tuple[tuple[str, str], ...], kind: str
) -> None:
    # D-CLI-9 (docs/decisions.md D-CLI-4c): bearer and API-key runs are
    # told apart; no value is kept, and the record stays valid against the schema.
    import jsonschema

    from a2a_interview.record import Credentials, schema
    from a2a_interview.verifier import failed_record
    from a2a_interview.verifier.client import ClientOptions

    record = failed_record(
        "https://agent.example", VerifyOptions(client=ClientOptions(headers=headers))
    ).to_json()
    assert record["credentials"] == Credentials.of(headers).to_json()
    assert record["credentials"]["kind"] == kind
    assert record["credentials"]["headers"] == sorted({n.lower() for n, _ in headers})
    assert not any(v in json.dumps(record) for _, v in headers)
    jsonschema.validate(record, schema())


@pytest.mark.anyio
async def test_ask_on_a_shared_client_keeps_its_own_redirect_rule() -> None:
    # Clients (docs/decisions.md D-VERIFY-3 and D-CLI-4d): ask may share the httpx
    # client of an a2a-sdk client; that client following redirects must not make ask
    # follow one to another origin.
    import httpx

    from a2a_interview.net.failures import RedirectRefused
    from a2a_interview.verifier import ask
    from agents import Call, Reply, Wrap

    with serve_many([honest, honest]) as (other, origin):

        def away(call: Call) -> Reply | None:
            return Reply(302, [(b"location", f"{other}/.well-known/agent-card.json".encode())], b"")

        with serve_many([lambda o: Wrap(honest(o), away)]) as (moved,):
            async with httpx.AsyncClient(follow_redirects=True) as http:
                answered = await ask(origin, "identity", http=http)
                with pytest.raises(RedirectRefused):
                    await ask(moved, "identity", http=http)
                assert not http.is_closed
    assert answered.read.problem is None


def test_the_summary_names_each_failures_cause_and_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # D-CLI-9, PROFILE §7: a transport failure is named with its cause and the URL
    # that failed, in verify-many's summary as in the record (a closed port: refused; a
    # name that cannot resolve: name), never one "the connection failed" for all.
    import socket

    monkeypatch.setenv("COLUMNS", "100")
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    unresolvable = "https://agent.invalid"  # RFC 6761: .invalid never resolves
    listing = tmp_path / "agents.txt"
    listing.write_text(f"{closed}\n{unresolvable}\n")
    out = tmp_path / "r.jsonl"
    argv = ["verify-many", str(listing), "--out", str(out), "--no-progress"]
    assert main(argv) == 3
    err = capsys.readouterr().err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    causes = {r["agent"]["url"]: r["incomplete"].get("cause") for r in records}
    assert causes == {closed: "refused", unresolvable: "name"}
    assert "connect_failed (refused)" in err and "connect_failed (name)" in err
    card = f"at {closed}/.well-known/agent-card.json"
    assert card in err and f"at {unresolvable}/.well-known/agent-card.json" in err
