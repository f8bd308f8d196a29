"""The stock-agent matrix: every stock agent, through every entry point a user has, is
judged as the profile says (PROFILE §3.10, §6, §7, §9). Real processes on loopback ports.

The agents are made only from each SDK's documented defaults, as a user following its
README would make them (``stock_lab.py`` says which and how): ``@a2a-js/sdk`` 1.3 with its
typed ``AgentCard`` (an unsigned card is served with ``"signatures": []``), signed by its
own ``generateAgentCardSignature`` with a ``jku`` naming the JWK Set it serves, in its
v0.3 compatibility mode, with an extended card, a gRPC-only card and a gRPC+JSON-RPC card;
``a2a-sdk`` 1.x with the project's integration (``interview_routes``) on Starlette, on
FastAPI, signed, behind a bearer token, split over two origins (``www``: the card,
``api``: the interfaces), on a sub-path, inside a Starlette ``Mount``, with an extended
card, with a gRPC interface beside JSON-RPC; ``a2a-sdk`` 0.3.

The entry points: ``verify`` (with ``--require-signature``, with credentials), the
proxy (``--declare``, re-signing, chained), ``verify-many --credentials``, the Python
``ask`` recipe and the JavaScript ``callExtensionMethod`` recipe of the README, the CI
recipe ``examples/ci/verify-agent.sh`` with its defaults, and the integration at start.

``CELLS`` is the one table: each cell's expected verdict (outcome, exit code, the key
finding), per the profile. ``docs/stock-agents.md`` shows the same table and, in its
"before" column, what each cell got at the base commit; ``FAILING_AT_BASE`` names the
cells that failed there (they are real tests: they pass once the serving and verifier
fixes are in, and are never marked xfail). Options the fixes add are spelled
``--credentials-origin ORIGIN`` (verify), ``--jku URL`` (proxy) and, in a
``--credentials`` file, ``"origins": [...]`` beside an origin's token.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from processes import write_json
from stock_lab import (
    CARD,
    TOKEN,
    TOKEN_VARIABLE,
    Lab,
    run_ci,
    run_js_ask,
    run_verify,
    run_verify_many,
)

from a2a_interview.card import generate_key, private_jwk, public_jwk, verify_card
from a2a_interview.card._jose import b64d
from a2a_interview.errors import InterviewError
from a2a_interview.spec import INTERVIEW_URI
from support.cli import COMMAND

ANSWER, RAISES, REFUSED = "answer", "raises", "refused to start"


@dataclass(frozen=True)
class Cell:
    """One agent through one entry point, and what the profile says it gets."""

    id: str
    agent: str  # a key of AGENTS
    entry: str  # a key of ENTRIES
    outcome: str  # the record's outcome, or what the entry gives (answer, raises, ...)
    code: int | None  # the exit code (None: a library call, no process exit)
    finding: str = ""  # a key of FINDINGS: the key finding, checked too
    rule: str = ""  # the rule it holds (PROFILE §...)


# fmt: off
CELLS: tuple[Cell, ...] = (
    # @a2a-js/sdk 1.3, typed card, unsigned ("signatures": []), undeclared
    Cell("js-direct-verify", "js", "verify", "not_offered", 4, "unsigned", "§6, §7"),
    Cell("js-card-sign", "js", "card sign, card verify", "verified", 0,
         "only its own signatures", "§6"),
    Cell("js-declare-verify", "js+declare", "verify", "consistent", 0, "unsigned", "§6"),
    Cell("js-declare-require-signature", "js+declare", "verify --require-signature",
         "non_conformant", 1, "card_signature conflict", "§6, §8"),
    Cell("js-declare-chained-verify", "js+declare+chained", "verify", "consistent", 0,
         "unsigned", "§3.9, §6"),
    Cell("js-declare-python-ask", "js+declare", "ask", ANSWER, None, "", "§3"),
    Cell("js-declare-js-ask", "js+declare", "js ask", ANSWER, 0, "", "§3"),
    Cell("js-declare-ci", "js+declare", "ci", "non_conformant", 1, "card_signature conflict",
         "§6, §9"),
    # @a2a-js/sdk 1.3, signed by generateAgentCardSignature, jku on its own origin
    Cell("js-signed-direct-verify", "js-signed", "verify", "not_offered", 4, "verified by jku",
         "§6.4"),
    Cell("js-signed-declare-without-key", "js-signed", "proxy --declare", REFUSED, 3,
         "names --card-key", "§6.3"),
    Cell("js-signed-declare-resigned-require-signature", "js-signed+declare+key",
         "verify --require-signature", "consistent", 0, "verified by jku", "§6"),
    Cell("js-signed-declare-resigned-ci", "js-signed+declare+key", "ci", "consistent", 0,
         "verified by jku", "§6, §9"),
    Cell("js-signed-declare-resigned-js-ask", "js-signed+declare+key", "js ask", ANSWER, 0,
         "", "§3"),
    Cell("js-signed-declare-jku-option", "js-signed+declare+key+jku", "served jku",
         "jku as given", None, "", "§6"),
    # @a2a-js/sdk 1.3 in its v0.3 compatibility mode (legacyCompat)
    Cell("js-legacy-declare-verify", "js-legacy+declare", "verify", "consistent", 0,
         "unsigned", "§3.10, §7"),
    Cell("js-legacy-declare-js-ask", "js-legacy+declare", "js ask", ANSWER, 0, "", "§3.10"),
    Cell("js-legacy-declare-python-ask", "js-legacy+declare", "ask", ANSWER, None, "",
         "§3.10"),
    # @a2a-js/sdk 1.3 with an extended card for a bearer-authenticated user
    Cell("js-extended-declare-verify", "js-extended+declare", "verify --bearer-env",
         "consistent", 0, "extended_skills", "§7"),
    Cell("js-extended-declare-extended-card", "js-extended+declare", "extended card",
         "declared, interfaces on the proxy", None, "", "§7"),
    Cell("js-signed-extended-declare-extended-card", "js-signed-extended+declare+key",
         "extended card", "declared, interfaces on the proxy", None,
         "re-signed by the proxy's key", "§6, §7"),
    # @a2a-js/sdk 1.3, cards declaring the interview with a gRPC interface
    Cell("js-grpc-only-verify", "js-grpc-only", "verify", "non_conformant", 1, "no_interface",
         "§3b, §7"),
    Cell("js-grpc-only-proxy", "js-grpc-only", "proxy", REFUSED, 3, "says no_interface",
         "§3b, §7"),
    Cell("js-grpc-only-proxy-declare", "js-grpc-only", "proxy --declare", REFUSED, 3,
         "says no_interface", "§3b, §7"),
    Cell("js-grpc-only-python-ask", "js-grpc-only", "ask", RAISES, None, "no_interface",
         "§3b, §7"),
    Cell("js-grpc-only-js-ask", "js-grpc-only", "js ask", "error", 1, "", "§3b"),
    Cell("js-grpc-jsonrpc-proxy-verify", "js-grpc-jsonrpc+proxy", "verify", "consistent", 0,
         "", "§3b"),
    Cell("js-grpc-jsonrpc-proxy-js-ask", "js-grpc-jsonrpc+proxy", "js ask", ANSWER, 0, "",
         "§3b"),
    # a2a-sdk 1.x with interview_routes: the README's app
    Cell("py-starlette-verify", "py-starlette", "verify", "consistent", 0, "unsigned", "§7"),
    Cell("py-starlette-require-signature", "py-starlette", "verify --require-signature",
         "non_conformant", 1, "card_signature conflict", "§6, §8"),
    Cell("py-starlette-python-ask", "py-starlette", "ask", ANSWER, None, "", "§3"),
    Cell("py-starlette-js-ask", "py-starlette", "js ask", ANSWER, 0, "", "§3"),
    Cell("py-starlette-ci", "py-starlette", "ci", "non_conformant", 1,
         "card_signature conflict", "§6, §9"),
    Cell("py-signed-require-signature", "py-signed", "verify --require-signature",
         "consistent", 0, "verified by jku", "§6.4"),
    Cell("py-signed-ci", "py-signed", "ci", "consistent", 0, "verified by jku", "§9"),
    Cell("py-fastapi-verify", "py-fastapi", "verify", "consistent", 0, "unsigned", "§7"),
    Cell("py-fastapi-python-ask", "py-fastapi", "ask", ANSWER, None, "", "§3"),
    Cell("py-subpath-verify", "py-subpath", "verify", "consistent", 0, "", "§7"),
    Cell("py-mount-verify", "py-mount", "verify", "consistent", 0, "", "§3.9, §7"),
    Cell("py-grpc-jsonrpc-verify", "py-grpc-jsonrpc", "verify", "consistent", 0, "", "§3b"),
    Cell("py-grpc-only-at-start", "py-grpc-only", "interview_routes", REFUSED, None,
         "says no_interface", "§3b, §7"),
    # a2a-sdk 1.x behind a bearer token; split over two origins; with an extended card
    Cell("py-bearer-verify", "py-bearer", "verify --bearer-env", "consistent", 0, "", "§7"),
    Cell("py-bearer-verify-without-credentials", "py-bearer", "verify", "unreachable", 3,
         "authentication_required", "§7"),
    Cell("py-bearer-verify-many", "py-bearer", "verify-many", "consistent", 0,
         "credentials kind bearer", "§7"),
    Cell("py-bearer-python-ask", "py-bearer", "ask --bearer", ANSWER, None, "", "§7"),
    Cell("py-bearer-python-ask-without-credentials", "py-bearer", "ask", RAISES, None,
         "authentication_required", "§7"),
    Cell("py-split-verify", "py-split", "verify --bearer-env", "unreachable", 3,
         "credentials_not_sent names api", "§7"),
    Cell("py-split-verify-credentials-origin", "py-split",
         "verify --bearer-env --credentials-origin", "consistent", 0, "", "§7"),
    Cell("py-split-verify-many-origins", "py-split", "verify-many origins", "consistent", 0,
         "", "§7"),
    Cell("py-extended-verify", "py-extended", "verify --bearer-env", "consistent", 0,
         "extended_skills", "§7"),
    # a2a-sdk 0.3
    Cell("a2a03-declare-verify", "a2a03+declare", "verify", "consistent", 0, "", "§7"),
    Cell("a2a03-declare-version-1.0", "a2a03+declare", "activated, A2A-Version 1.0", ANSWER,
         None, "", "§3.10"),
    Cell("a2a03-declare-python-ask", "a2a03+declare", "ask", ANSWER, None, "", "§3.10"),
    Cell("a2a03-declared-unserved-verify", "a2a03-declared", "verify", "non_conformant", 1,
         "", "§3.3, §7"),
    Cell("a2a03-declared-unserved-python-ask", "a2a03-declared", "ask", RAISES, None,
         "typed error", "§3.3"),
)
# fmt: on

# The cells that fail at the base commit (docs/stock-agents.md, column "before", says
# with what); each passes once the serving and verifier fixes are merged.
FAILING_AT_BASE: frozenset[str] = frozenset(
    {
        "js-declare-verify",
        "js-declare-require-signature",
        "js-declare-chained-verify",
        "js-declare-python-ask",
        "js-declare-js-ask",
        "js-declare-ci",
        "js-signed-declare-resigned-require-signature",
        "js-signed-declare-resigned-ci",
        "js-signed-declare-jku-option",
        "js-legacy-declare-verify",
        "js-legacy-declare-js-ask",
        "js-legacy-declare-python-ask",
        "js-extended-declare-verify",
        "js-extended-declare-extended-card",
        "js-signed-extended-declare-extended-card",
        "js-grpc-only-verify",
        "js-grpc-only-proxy",
        "js-grpc-only-proxy-declare",
        "js-grpc-only-python-ask",
        "py-starlette-ci",
        "py-mount-verify",
        "py-grpc-only-at-start",
        "py-split-verify",
        "py-split-verify-credentials-origin",
        "py-split-verify-many-origins",
        "py-extended-verify",
        "a2a03-declare-version-1.0",
        "a2a03-declared-unserved-python-ask",
    }
)


# -- the agents ---------------------------------------------------------------------------


class Target:
    """Where a cell's entry point goes: the URL, and the processes behind it."""

    def __init__(self, lab: Lab, url: str, *, upstream: str = "", api: str = "") -> None:
        self.lab, self.url, self.upstream, self.api = lab, url, upstream, api


PROXY_KID = "proxy-card-key"


@dataclass(frozen=True)
class ProxyKey:
    private: Path  # the private JWK --card-key takes
    jwks: dict[str, Any]  # its public JWK Set


def _proxy_key(lab: Lab) -> ProxyKey:
    """The proxy's own key (not the agent's), made once."""

    def make() -> ProxyKey:
        key = generate_key("ES256")
        secret = private_jwk(key, PROXY_KID, "ES256")
        private = write_json(lab.tmp / "proxy-card-key.jwk.json", secret)
        return ProxyKey(private, {"keys": [public_jwk(key, PROXY_KID, "ES256")]})

    made: ProxyKey = lab.once("proxy-key", make)
    return made


def _declare_resigned(lab: Lab, name: str, variant: str, *extra: str) -> Target:
    upstream = lab.js(variant)
    key = _proxy_key(lab)
    url = lab.proxy(name, upstream, "--declare", "--card-key", str(key.private),
                    "--kid", PROXY_KID, *extra)  # fmt: skip
    return Target(lab, url, upstream=upstream)


def _chained(lab: Lab) -> Target:
    inner = lab.proxy("js-declare", lab.js("unsigned"), "--declare")
    return Target(lab, lab.proxy("js-chained", inner, "--declare"), upstream=inner)


def _jku(lab: Lab) -> str:
    return lab.proxy_origin("js-signed-jku") + "/keys/card.jwks.json"


def _py(variant: str) -> Callable[[Lab], Target]:
    return lambda lab: Target(lab, lab.py(variant))


AGENTS: dict[str, Callable[[Lab], Target]] = {
    "js": lambda lab: Target(lab, lab.js("unsigned")),
    "js+declare": lambda lab: Target(lab, lab.proxy("js-declare", lab.js("unsigned"), "--declare")),
    "js+declare+chained": _chained,
    "js-signed": lambda lab: Target(lab, lab.js("signed"), upstream=lab.js("signed")),
    "js-signed+declare+key": lambda lab: _declare_resigned(lab, "js-signed-key", "signed"),
    "js-signed-extended+declare+key": lambda lab: _declare_resigned(
        lab, "js-signed-extended", "signed-extended"
    ),
    "js-signed+declare+key+jku": lambda lab: _declare_resigned(
        lab, "js-signed-jku", "signed", "--jku", _jku(lab)
    ),
    "js-legacy+declare": lambda lab: Target(
        lab, lab.proxy("js-legacy", lab.js("legacy"), "--declare")
    ),
    "js-extended+declare": lambda lab: Target(
        lab, lab.proxy("js-extended", lab.js("extended"), "--declare")
    ),
    "js-grpc-only": lambda lab: Target(lab, lab.js("grpc-only"), upstream=lab.js("grpc-only")),
    "js-grpc-jsonrpc+proxy": lambda lab: Target(
        lab, lab.proxy("js-grpc-jsonrpc", lab.js("grpc-jsonrpc"))
    ),
    **{f"py-{v}": _py(v) for v in ("starlette", "signed", "fastapi", "subpath", "mount")},
    **{f"py-{v}": _py(v) for v in ("grpc-jsonrpc", "bearer", "extended")},
    "py-split": lambda lab: Target(lab, lab.py("split"), api=f"http://127.0.0.1:{lab.api_port}"),
    "py-grpc-only": lambda lab: Target(lab, ""),
    "a2a03+declare": lambda lab: Target(
        lab, lab.proxy("a2a03", lab.a2a03(declare=False), "--declare")
    ),
    "a2a03-declared": lambda lab: Target(lab, lab.a2a03(declare=True)),
}


# -- the entry points ---------------------------------------------------------------------


@dataclass
class Got:
    outcome: str
    code: int | None
    detail: Any = None  # the record, the records, the exception, the output...


def _verify(*extra: str) -> Callable[[Target, Path], Got]:
    def entry(target: Target, tmp: Path) -> Got:
        more = [a.replace("{api}", target.api) for a in extra]
        code, record, stderr = run_verify(target.url, *more)
        return Got(record.get("outcome", f"no record: {stderr.strip()[-300:]}"), code, record)

    return entry


def _verify_many(*, origins: bool) -> Callable[[Target, Path], Got]:
    def entry(target: Target, tmp: Path) -> Got:
        what: dict[str, Any] = {"bearer_env": TOKEN_VARIABLE}
        if origins:
            what["origins"] = [target.api]
        credentials = {target.url.split("/", 3)[0] + "//" + target.url.split("/")[2]: what}
        code, records, stderr = run_verify_many(tmp, [target.url], credentials)
        outcome = records[0]["outcome"] if records else f"no record: {stderr.strip()[-300:]}"
        return Got(outcome, code, records[0] if records else {})

    return entry


def _ask(*, bearer: bool) -> Callable[[Target, Path], Got]:
    def entry(target: Target, tmp: Path) -> Got:
        from a2a_interview.verifier import ask
        from a2a_interview.verifier.client import ClientOptions

        headers = (("Authorization", f"Bearer {TOKEN}"),) if bearer else ()

        async def asking() -> Got:
            async with httpx.AsyncClient(timeout=30) as http:
                try:
                    result = await ask(target.url, "identity", http=http,
                                       options=ClientOptions(headers=headers))  # fmt: skip
                except InterviewError as exc:
                    return Got(RAISES, None, exc)
            answer = result.read.value
            ok = isinstance(answer, dict) and answer.get("question") == "identity"
            return Got(ANSWER if ok else f"returned {result.read.summary()}", None, result)

        got: Got = anyio.run(asking)
        return got

    return entry


def _js_ask(target: Target, tmp: Path) -> Got:
    lab = target.lab
    done = run_js_ask(lab.request.getfixturevalue("node"), lab.request.getfixturevalue("js"),
                      target.url, "identity")  # fmt: skip
    if done.returncode != 0:
        return Got("error", done.returncode, done.stderr)
    answer = json.loads(done.stdout)
    ok = isinstance(answer, dict) and answer.get("question") == "identity"
    return Got(ANSWER if ok else f"printed {done.stdout.strip()[:200]}", 0, answer)


def _ci(target: Target, tmp: Path) -> Got:
    code, record, stderr = run_ci(tmp, target.url)
    return Got(record.get("outcome", f"no record: {stderr.strip()[-300:]}"), code, record)


def _proxy_start(*extra: str) -> Callable[[Target, Path], Got]:
    def entry(target: Target, tmp: Path) -> Got:
        done = target.lab.proxy_refused(target.upstream, *extra)
        output = done.stdout + done.stderr
        outcome = REFUSED if done.returncode == 3 else f"exit {done.returncode}"
        return Got(outcome, done.returncode, output)

    return entry


def _extended_card(target: Target, tmp: Path) -> Got:
    # PROFILE §7: a proxy with --declare treats the extended card as the public card
    # (interfaces pointed at the proxy, the declaration added, re-signed).
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"}
    reply = httpx.post(target.url + "/a2a/jsonrpc", json=rpc, headers=headers, timeout=30)
    card = reply.json().get("result") or {}
    uris = [e.get("uri") for e in card.get("capabilities", {}).get("extensions", [])]
    urls = [i.get("url", "") for i in card.get("supportedInterfaces", [])]
    ok = INTERVIEW_URI in uris and bool(urls) and all(u.startswith(target.url) for u in urls)
    return Got("declared, interfaces on the proxy" if ok else f"got {card}", None, card)


def _card_sign(target: Target, tmp: Path) -> Got:
    # PROFILE §6: `card sign` reads "signatures": [] as an unsigned card: the signed card
    # carries only its own signatures, and `card verify` verifies it.
    served = write_json(tmp / "served.json", httpx.get(target.url + CARD, timeout=30).json())
    key = _proxy_key(target.lab)
    jwks = write_json(tmp / "jwks.json", key.jwks)
    signed = tmp / "signed.json"
    done = subprocess.run(
        [*COMMAND, "card", "sign", str(served), "--key", str(key.private), "--kid", PROXY_KID],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return Got(f"card sign exit {done.returncode}", done.returncode, done.stderr)
    signed.write_text(done.stdout, "utf-8")
    checked = subprocess.run(
        [*COMMAND, "card", "verify", str(signed), "--jwks", str(jwks)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    outcome = "verified" if "status:     verified" in checked.stdout else checked.stdout
    return Got(outcome, checked.returncode, json.loads(done.stdout))


def _served_jku(target: Target, tmp: Path) -> Got:
    card = httpx.get(target.url + CARD, timeout=30).json()
    headers = [json.loads(b64d(s["protected"])) for s in card.get("signatures", [])]
    jkus = {h.get("jku") for h in headers}
    return Got("jku as given" if jkus == {_jku(target.lab)} else f"jku {jkus}", None, card)


def _activated_v1(target: Target, tmp: Path) -> Got:
    # PROFILE §3.10: a 0.3 host does not negotiate, so a layer in front of it never
    # answers -32009; a 1.0 client's activated call (A2A-Version: 1.0) gets the answer.
    card = httpx.get(target.url + CARD, timeout=30).json()
    url = card.get("url") or next(
        i["url"] for i in card.get("supportedInterfaces", []) if i["protocolBinding"] == "JSONRPC"
    )
    headers = {"A2A-Version": "1.0", "A2A-Extensions": INTERVIEW_URI}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "interview/identity"}
    reply = httpx.post(url, json=rpc, headers=headers, timeout=30).json()
    answer = reply.get("result")
    ok = isinstance(answer, dict) and answer.get("question") == "identity"
    return Got(ANSWER if ok else f"got {reply}", None, reply)


def _integration_at_start(target: Target, tmp: Path) -> Got:
    # PROFILE §7: the SDK integration says at start what verify says (no_interface).
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    from a2a_interview.server.sdk import agent_extension, interview_routes

    card = AgentCard(
        name="Echo", description="Says back what it is told", version="1.0.0",
        supported_interfaces=[AgentInterface(url="127.0.0.1:50051", protocol_binding="GRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True, extensions=[agent_extension()]),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Says it back", tags=["echo"])],
    )  # fmt: skip
    handler = DefaultRequestHandler(None, InMemoryTaskStore(), agent_card=card)  # type: ignore[arg-type]
    try:
        interview_routes(card, jsonrpc_routes=create_jsonrpc_routes(handler, "/a2a/jsonrpc"))
    except InterviewError as exc:
        return Got(REFUSED, None, str(exc))
    return Got("started", None, None)


ENTRIES: dict[str, Callable[[Target, Path], Got]] = {
    "verify": _verify(),
    "verify --require-signature": _verify("--require-signature"),
    "verify --bearer-env": _verify("--bearer-env", TOKEN_VARIABLE),
    "verify --bearer-env --credentials-origin": _verify(
        "--bearer-env", TOKEN_VARIABLE, "--credentials-origin", "{api}"
    ),
    "verify-many": _verify_many(origins=False),
    "verify-many origins": _verify_many(origins=True),
    "ask": _ask(bearer=False),
    "ask --bearer": _ask(bearer=True),
    "js ask": _js_ask,
    "ci": _ci,
    "proxy": _proxy_start(),
    "proxy --declare": _proxy_start("--declare"),
    "extended card": _extended_card,
    "served jku": _served_jku,
    "card sign, card verify": _card_sign,
    "interview_routes": _integration_at_start,
    "activated, A2A-Version 1.0": _activated_v1,
}


# -- the key findings ---------------------------------------------------------------------


def _signature(got: Got) -> dict[str, Any]:
    record = got.detail if isinstance(got.detail, dict) else {}
    signature: dict[str, Any] = record.get("agent", {}).get("card_signature", {})
    return signature


def _conflicts(got: Got) -> list[dict[str, Any]]:
    record = got.detail if isinstance(got.detail, dict) else {}
    return [c for run in record.get("runs", []) for c in run.get("conflicts", [])]


def _items(value: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON value."""
    if isinstance(value, dict):
        yield value
        for each in value.values():
            yield from _items(each)
    elif isinstance(value, list):
        for each in value:
            yield from _items(each)


def _names(got: Got, word: str) -> bool:
    """Some object of the record carries ``word`` as a value (a finding's code or reason)."""
    return any(word in item.values() for item in _items(got.detail))


def _no_interface(got: Got) -> bool:
    if isinstance(got.detail, InterviewError):  # ask: a typed error saying so
        text = f"{got.detail.code} {got.detail}".lower()
        return "no_interface" in text or "no interface" in text
    runs = got.detail.get("runs", []) if isinstance(got.detail, dict) else []
    found = [c for c in _conflicts(got) if c.get("check") == "declaration"]
    return len(runs) == 1 and bool(found) and "no_interface" in json.dumps(found)


def _credentials_not_sent(got: Got, target: Target) -> bool:
    return any(
        "credentials_not_sent" in item.values() and target.api in json.dumps(item)
        for item in _items(got.detail)
    )


def _typed_error(got: Got) -> bool:
    # PROFILE §3.3: the host's -32601 is not an answer; ask raises, it does not return it.
    from a2a_interview.verifier import NotOffered

    return isinstance(got.detail, InterviewError) and not isinstance(got.detail, NotOffered)


FINDINGS: dict[str, Callable[[Got, Target], bool]] = {
    "": lambda got, target: True,
    "unsigned": lambda got, target: _signature(got).get("status") == "unsigned",
    "verified by jku": lambda got, target: (
        (_signature(got).get("status"), _signature(got).get("key_source")) == ("verified", "jku")
    ),
    "card_signature conflict": lambda got, target: any(
        c.get("check") == "card_signature" for c in _conflicts(got)
    ),
    "no_interface": lambda got, target: _no_interface(got),
    "authentication_required": lambda got, target: (
        _names(got, "authentication_required")
        or getattr(got.detail, "code", "") == "authentication_required"
    ),
    "credentials kind bearer": lambda got, target: (
        got.detail.get("credentials", {}).get("kind") == "bearer"
    ),
    "credentials_not_sent names api": _credentials_not_sent,
    "extended_skills": lambda got, target: _names(got, "extended_skills"),
    "names --card-key": lambda got, target: (
        "--card-key" in got.detail and "Traceback" not in got.detail
    ),
    # PROFILE §7: verify, ask, the proxy and the integration at start all say the same.
    "says no_interface": lambda got, target: (
        "no_interface" in str(got.detail) and "Traceback" not in str(got.detail)
    ),
    "typed error": lambda got, target: _typed_error(got),
    "re-signed by the proxy's key": lambda got, target: (
        verify_card(got.detail, _proxy_key(target.lab).jwks["keys"]).status == "verified"
    ),
    "only its own signatures": lambda got, target: all(
        json.loads(b64d(s["protected"])).get("kid") == PROXY_KID
        for s in got.detail.get("signatures", [])
    ),
}


# -- the matrix ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Lab]:
    started = Lab(tmp_path_factory.mktemp("stock-matrix"), request)
    try:
        yield started
    finally:
        started.close()


@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_stock_matrix(cell: Cell, lab: Lab, tmp_path: Path) -> None:
    # PROFILE §3.10, §6, §7, §9: each stock agent through each entry point gets the verdict
    # its row of CELLS (and of docs/stock-agents.md) writes out.
    # A cell of FAILING_AT_BASE says so when it fails (it waits for the changes it was
    # written for); every other cell must pass as it stands.
    known = "in FAILING_AT_BASE: " if cell.id in FAILING_AT_BASE else ""
    target = AGENTS[cell.agent](lab)
    got = ENTRIES[cell.entry](target, tmp_path)
    assert (got.outcome, got.code) == (cell.outcome, cell.code), f"{known}{got.detail}"
    assert FINDINGS[cell.finding](got, target), f"{known}{cell.finding}: {got.detail}"


def test_the_table_is_whole() -> None:
    # Every cell names a known agent, entry and finding, once; the doc shows every cell.
    ids = [c.id for c in CELLS]
    assert len(ids) == len(set(ids))
    assert {c.agent for c in CELLS} <= set(AGENTS)
    assert {c.entry for c in CELLS} <= set(ENTRIES)
    assert {c.finding for c in CELLS} <= set(FINDINGS)
    assert set(FAILING_AT_BASE) <= set(ids)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "stock-agents.md").read_text("utf-8")
    assert [i for i in ids if f"`{i}`" not in doc] == []
