"""Credentials go where the operator says (PROFILE §7): to the card's origin and to the
further origins the user names for them, never anywhere else, redirects included; a
401/403 from an origin sent no credentials is ``credentials_not_sent``, naming it.

Real HTTP on loopback: an agent with a ``www``/``api`` split (the card on one origin,
its interfaces on another, bearer auth on the interfaces) and a third origin that must
never see the token."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from a2a_interview.cli import main
from a2a_interview.net.failures import RedirectRefused
from a2a_interview.record import schema
from a2a_interview.spec import CARD_PATH
from a2a_interview.verifier import CredentialsNotSent, VerifyOptions, ask, verify
from a2a_interview.verifier.client import ClientOptions, Interviewer
from agents import JSONRPC_PATH, REST_PATH, Call, Reply, Wrap, honest
from support.servers import serve_many

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token"
BEARER = ("Authorization", f"Bearer {TOKEN}")
VALIDATOR = jsonschema.Draft202012Validator(schema())


class Split:
    """The three origins, and every Authorization header each one was sent, by path."""

    def __init__(self) -> None:
        self.api = self.www = self.third = ""
        self.seen: dict[str, list[tuple[str, str | None]]] = {"api": [], "www": [], "third": []}

    def noting(self, name: str, guard: bool = False) -> Callable[[Call], Reply | None]:
        def on_request(call: Call) -> Reply | None:
            headers = {h.lower(): v for h, v in call.headers}
            got = headers.get(b"authorization")
            self.seen[name].append((call.path, got.decode() if got is not None else None))
            if name == "www" and call.path.startswith("/moved"):
                location = (self.third + CARD_PATH).encode()
                return Reply(302, [(b"location", location)], b"")
            guarded = call.path.startswith((JSONRPC_PATH, REST_PATH))
            if guard and guarded and got != f"Bearer {TOKEN}".encode():
                return Reply(401, [(b"www-authenticate", b"Bearer")], b"")
            return None

        return on_request

    def sent(self, name: str) -> set[str | None]:
        return {value for _path, value in self.seen[name]}


@contextmanager
def split() -> Iterator[Split]:
    """api (interfaces, bearer auth), third (anyone), www (the card naming api's
    interfaces; ``/moved...`` redirects to third's card)."""
    s = Split()

    def api(origin: str) -> Any:
        s.api = origin
        return Wrap(honest(origin, signed=False), s.noting("api", guard=True))

    def third(origin: str) -> Any:
        s.third = origin
        return Wrap(honest(origin, signed=False), s.noting("third"))

    def www(origin: str) -> Any:
        s.www = origin
        # The api agent's card (its interfaces and terms on api), served from www.
        return Wrap(honest(s.api, signed=False), s.noting("www"))

    with serve_many([api, third, www]):
        yield s


def _options(*origins: str) -> VerifyOptions:
    client = ClientOptions(headers=(BEARER,), credential_origins=origins)
    return VerifyOptions(churn_delay=0, client=client)


async def test_an_interface_origin_not_named_is_credentials_not_sent() -> None:
    # Before: "authentication_required: the credentials given were refused", although
    # the interview call carried no Authorization at all.
    with split() as s:
        record = (await verify(s.www, _options())).to_json()
    assert record["outcome"] == "unreachable"
    incomplete = record["incomplete"]
    assert incomplete["reason"] == "credentials_not_sent"
    assert incomplete["url"].startswith(s.api)
    assert s.api.replace("http://", "") in incomplete["detail"]
    assert "--credentials-origin" in incomplete["detail"]
    assert s.sent("api") == {None}  # the api origin never saw the token
    assert s.sent("www") == {f"Bearer {TOKEN}"}  # the card's origin did
    VALIDATOR.validate(record)


async def test_an_interface_origin_named_gets_the_credentials() -> None:
    with split() as s:
        record = (await verify(s.www, _options(s.api))).to_json()
    assert record["outcome"] == "consistent", record.get("incomplete")
    assert {v for p, v in s.seen["api"] if p.startswith(JSONRPC_PATH)} == {f"Bearer {TOKEN}"}
    assert s.seen["third"] == []
    assert record["credentials"] == {
        "kind": "bearer", "headers": ["authorization"], "origins": [s.api.rstrip("/")],
    }  # fmt: skip
    assert TOKEN not in json.dumps(record)
    VALIDATOR.validate(record)


async def test_no_credentials_at_all_is_still_authentication_required() -> None:
    with split() as s:
        record = (await verify(s.www, VerifyOptions(churn_delay=0))).to_json()
    assert record["incomplete"]["reason"] == "authentication_required"
    assert "credentials" not in record["incomplete"]["detail"].split("(")[0]


async def test_a_redirect_to_a_third_origin_never_carries_the_token() -> None:
    # Even to an origin named for the credentials: a redirect leaves no origin.
    with split() as s:
        for named in ((s.api,), (s.api, s.third)):
            record = (await verify(s.www + "/moved", _options(*named))).to_json()
            assert record["incomplete"]["reason"] == "redirect_refused"
        options = ClientOptions(headers=(BEARER,), credential_origins=(s.api, s.third))
        async with Interviewer(options, credential_origin=s.www) as session:
            with pytest.raises(RedirectRefused):
                await session.get(s.www + "/moved/x")
        assert s.seen["third"] == []
        assert s.sent("www") == {f"Bearer {TOKEN}"}


async def test_ask_names_the_origin_the_credentials_were_not_sent_to() -> None:
    with split() as s:
        with pytest.raises(CredentialsNotSent) as caught:
            await ask(s.www, "identity", options=ClientOptions(headers=(BEARER,)))
        assert caught.value.origin.startswith(s.api)
        options = ClientOptions(headers=(BEARER,), credential_origins=(s.api,))
        result = await ask(s.www, "identity", options=options)
    assert result.read.canonical is not None


def test_verify_credentials_origin_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    with split() as s:
        base = ["verify", s.www, "--churn-delay", "0", "--bearer-env", "API_TOKEN"]
        assert main(base) == 3
        out = capsys.readouterr().out
        assert "credentials_not_sent" in out and "--credentials-origin" in out
        assert main([*base, "--credentials-origin", s.api, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["outcome"] == "consistent"
        assert main(["ask", s.www, "identity", "--bearer-env", "API_TOKEN"]) == 3
        assert "credentials_not_sent" in capsys.readouterr().err
        named = ["--bearer-env", "API_TOKEN", "--credentials-origin", s.api]
        assert main(["ask", s.www, "identity", *named]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--credentials-origin", "https://api.example"], "--header or --bearer-env"),
        (["--header", "X-K: v", "--credentials-origin", "https://api.example/path"],
         "is not an origin"),
        (["--header", "X-K: v", "--credentials-origin", "ftp://api.example"], "is not an origin"),
    ],
)  # fmt: skip
def test_a_bad_credentials_origin_is_a_usage_error(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "https://agent.example", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_verify_many_origins_in_the_credentials_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: each agent got its own URL's origin's credentials only, so a www/api
    # agent failed even with both origins listed. Listing api as an entry of its own
    # still does not hand its token to www's agent (a card cannot steer it there); the
    # entry's "origins" does, and an entry no agent is on is a warning.
    monkeypatch.setenv("API_TOKEN", TOKEN)
    with split() as s:
        listing = tmp_path / "agents.txt"
        listing.write_text(s.www + "\n")
        out = tmp_path / "records.jsonl"
        credentials = tmp_path / "credentials.json"
        run = ["verify-many", str(listing), "--out", str(out), "--no-progress",
               "--churn-delay", "0", "--credentials", str(credentials)]  # fmt: skip

        credentials.write_text(json.dumps({
            s.www: {"bearer_env": "API_TOKEN"}, s.api: {"bearer_env": "API_TOKEN"},
        }))  # fmt: skip
        assert main(run) == 3
        (record,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert record["incomplete"]["reason"] == "credentials_not_sent"
        err = capsys.readouterr().err
        assert "warning: --credentials names " + s.api.rstrip("/") in err

        credentials.write_text(json.dumps({
            s.www: {"bearer_env": "API_TOKEN", "origins": [s.api]},
        }))  # fmt: skip
        assert main(run) == 0
        (record,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert record["outcome"] == "consistent"
        assert record["credentials"]["origins"] == [s.api.rstrip("/")]
        assert "warning" not in capsys.readouterr().err
    assert s.seen["third"] == []


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"bearer_env": "API_TOKEN", "origins": "https://api.example"}, "origins is a list"),
        ({"bearer_env": "API_TOKEN", "origins": ["https://api.example/x"]}, "not an origin"),
        ({"origins": ["https://api.example"]}, "no credentials"),
    ],
)
def test_a_bad_origins_member_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    entry: dict[str, Any], message: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("API_TOKEN", TOKEN)
    listing = tmp_path / "agents.txt"
    listing.write_text("https://www.example\n")
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({"https://www.example": entry}))
    assert main(["verify-many", str(listing), "--credentials", str(credentials)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
