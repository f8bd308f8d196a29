"""``verify-many`` over a mixed population, as a platform meets one (D-CLI-4a):
each agent gets the right outcome in one run of the real command.

- a stock ``@a2a-js/sdk`` agent direct, its card without the interview: ``not_offered``;
- the same SDK behind ``a2a-interview proxy``, its card signed by the SDK's own signer and
  the key pinned with ``--jwks``: ``consistent``, signature ``verified``;
- an ``a2a-sdk`` 0.3 agent behind the proxy (a 0.3 card declaring the interview):
  ``consistent``;
- an ``a2a-sdk`` 1.x FastAPI agent behind bearer auth, its token given for its origin in
  ``--credentials``: ``consistent``, the record naming the kind (``bearer``), not the token;
  a second one whose origin the file does not name: ``unreachable``
  (``authentication_required``), never non-conformance (interview §10);
- a server with no card (404) and an HTML page: ``unreachable``, nothing concluded.

The a2a-js agent in legacy mode behind the proxy (two card variants) is covered where the
verifier reads card variants (PROFILE §7).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cards import PROPOSAL_FILE, PROPOSAL_PATH, Keys, card
from processes import proxy_argv, running, write_json

from a2a_interview import reference
from a2a_interview.server import demo
from support.cli import COMMAND
from support.ports import free_port
from support.servers import serve_many

TOKEN = "population-token-0f3a"


def _bearer_only(app: Any, token: str, seen: list[str]) -> Any:
    """ASGI: 401 unless ``Authorization: Bearer <token>``; notes every value it is sent."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", []))
        got = headers.get(b"authorization")
        if got is not None:
            seen.append(got.decode())
        if got != f"Bearer {token}".encode():
            body = b'{"error":"unauthenticated"}'
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return guarded


def _fastapi_agent(origin: str) -> Any:
    """The Stonework declarations on an a2a-sdk 1.x FastAPI app (README's integration)."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        add_a2a_routes_to_fastapi,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore
    from fastapi import FastAPI
    from starlette.responses import Response

    from a2a_interview.server.sdk import agent_card_from_json, interview_routes

    card_value = agent_card_from_json(reference.unsigned_card(origin))
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card_value)
    proposals = reference.proposals(origin)
    routes = interview_routes(
        card_value,
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc"),
        rest_routes=create_rest_routes(handler, path_prefix="/a2a/rest"),
        proposals=proposals,
    )
    app = FastAPI()
    for url, body in proposals.items():  # before the SDK's REST mount takes the paths

        def document(body: bytes = body) -> Response:
            return Response(body, media_type="application/json")

        app.add_api_route(urlsplit(url).path, document, methods=["GET"])
    add_a2a_routes_to_fastapi(app, **routes.fastapi())
    return app


def _static(status: int, body: bytes, media_type: str, seen: list[str]) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        got = dict(scope.get("headers", [])).get(b"authorization")
        if got is not None:
            seen.append(got.decode())
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", media_type.encode()),
            (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})

    return app


def test_a_mixed_population_gets_the_right_outcomes(
    node: str, js: Path, a2a03_python: Path, tmp_path: Path
) -> None:
    keys = Keys(tmp_path)
    ports = {name: free_port() for name in ("js", "js_agent", "js_proxy", "p03", "p03_proxy")}
    at = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    js_card = write_json(tmp_path / "js-card.json", card(at["js"], declare=False, terms=False))
    signed_card = write_json(tmp_path / "js-proxied-card.json", card(at["js_proxy"]))
    agent = [node, str(js / "agent.mjs"), "--file", f"{PROPOSAL_PATH}={PROPOSAL_FILE}"]
    a03 = [str(Path(__file__).parent / "a2a03_agent.py")]
    seen: dict[str, list[str]] = {"auth": [], "open": [], "cardless": [], "html": []}
    factories = [
        lambda o: _bearer_only(_fastapi_agent(o), TOKEN, seen["auth"]),
        lambda o: _bearer_only(_fastapi_agent(o), TOKEN, seen["open"]),
        lambda o: _static(404, b"not found", "text/plain", seen["cardless"]),
        lambda o: _static(200, b"<!doctype html><title>Hi</title>", "text/html", seen["html"]),
    ]
    with (
        running([*agent, "--port", str(ports["js"]), "--card", str(js_card)], ports["js"],
                tmp_path),
        running([*agent, "--port", str(ports["js_agent"]), "--card", str(signed_card),
                 "--key", str(keys.jwk), "--kid", keys.kid], ports["js_agent"], tmp_path),
        running(proxy_argv(at["js_agent"], ports["js_proxy"], "--public-url", at["js_proxy"]),
                ports["js_proxy"], tmp_path),
        running([str(a2a03_python), *a03, "--port", str(ports["p03"]), "--url",
                 at["p03_proxy"] + "/", "--declare"], ports["p03"], tmp_path),
        running(proxy_argv(at["p03"], ports["p03_proxy"]), ports["p03_proxy"], tmp_path),
        serve_many(factories) as (auth, unauthorized, cardless, html),
    ):  # fmt: skip
        population = {
            at["js"]: ("not_offered", None),
            at["js_proxy"]: ("consistent", None),
            at["p03_proxy"]: ("consistent", None),
            auth: ("consistent", None),
            unauthorized: ("unreachable", "authentication_required"),
            cardless: ("unreachable", "card_status"),
            html: ("unreachable", "card_unreadable"),
        }
        listing = tmp_path / "agents.txt"
        listing.write_text("\n".join(population) + "\n")
        credentials = write_json(tmp_path / "credentials.json",
                                 {auth: {"bearer_env": "POPULATION_TOKEN"}})  # fmt: skip
        out = tmp_path / "records.jsonl"
        done = subprocess.run(
            [*COMMAND, "verify-many", str(listing), "--out", str(out), "--no-progress",
             "--churn-delay", "0", "--credentials", str(credentials),
             "--jwks", str(keys.jwks)],
            capture_output=True, text=True, timeout=300, check=False,
            env={**os.environ, "POPULATION_TOKEN": TOKEN},
        )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    records = {r["agent"]["url"]: r for r in map(json.loads, out.read_text().splitlines())}
    got = {
        url: (r["outcome"], (r.get("incomplete") or {}).get("reason")) for url, r in records.items()
    }
    assert got == population, done.stderr
    assert done.returncode == 3  # some unreachable, none non_conformant
    signature = records[at["js_proxy"]]["agent"]["card_signature"]
    assert (signature["status"], signature["key_source"]) == ("verified", "pinned")
    assert records[auth]["credentials"] == {"kind": "bearer", "headers": ["authorization"]}
    assert all(r["credentials"]["kind"] == "none" for u, r in records.items() if u != auth)
    # The token went to its origin only; it is in no record and in no output.
    assert set(seen["auth"]) == {f"Bearer {TOKEN}"}
    assert seen["open"] == seen["cardless"] == seen["html"] == []
    assert TOKEN not in out.read_text() and TOKEN not in done.stderr
    # The summary lists the agents that were not consistent, not the consistent ones.
    assert html in done.stderr and auth not in done.stderr.split("not consistent:")[1]
