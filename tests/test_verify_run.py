"""One verifier run against what real deployments and hostile cards do, over loopback.

- Card variants (PROFILE §7, D-CLI-7): a server whose card differs by
  ``A2A-Version`` is judged on each interface against the card of that interface's
  version; variants that differ in more than their signatures are an advisory.
- The bounds of one run (PROFILE §7, D-CLI-6): signatures and keys
  tried, interfaces interviewed, the request budget, an interface abandoned after three
  failures in a row.
- Failure causes named with the URL (D-CLI-9).
"""

from __future__ import annotations

import errno
import json
import socket
import ssl
import struct
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from a2a_interview import reference
from a2a_interview.card import load_private_key, sign_card
from a2a_interview.cli import main
from a2a_interview.report import render_report
from a2a_interview.spec import CARD_PATH, MAX_INTERFACES, MAX_KEYS_TRIED, MAX_SIGNATURES_TRIED
from a2a_interview.verifier.client import ClientOptions
from a2a_interview.verifier.wire import connect_cause
from agents import Call, Reply, Wrap, answer, honest, raw_server, read_request
from support.servers import closed_port_url, serve
from support.verify import advised, found, verified

pytestmark = pytest.mark.anyio


# --- card variants (PROFILE §7) -------------------------------------------------------


class ByVersion:
    """A server that serves, and answers from, a different agent per ``A2A-Version``
    (as @a2a-js/sdk in legacy mode behind `proxy --declare --card-key` does)."""

    def __init__(self, default: Any, variants: dict[str, Any]) -> None:
        self.default = default
        self.variants = variants
        self.cards: Counter[str] = Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.default(scope, receive, send)
            return
        headers = dict(scope["headers"])
        version = headers.get(b"a2a-version", b"").decode("latin-1").strip()
        if scope["path"] == CARD_PATH:
            self.cards[version] += 1
        await self.variants.get(version, self.default)(scope, receive, send)


def resigned(origin: str) -> Any:
    """The same card signed again under another protected header: only the signatures
    differ (Ed25519 is deterministic, so the header is what changes)."""

    def tamper(card: dict[str, Any]) -> dict[str, Any]:
        unsigned = {k: v for k, v in card.items() if k != "signatures"}
        key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
        jku = origin + reference.JWKS_PATH + "?variant=1.0"
        return sign_card(unsigned, key, kid=reference.CARD_KID, alg="EdDSA", jku=jku)

    return tamper


async def test_answers_are_judged_against_the_variant_of_their_version() -> None:
    # D-CLI-7: the card fetched without A2A-Version (the 0.3 variant) and the
    # 1.0 interfaces answering from the 1.0 variant, signed separately, was a persistent
    # value_mismatch on identity's /signatures.
    servers: list[ByVersion] = []

    def factory(origin: str) -> Any:
        servers.append(ByVersion(honest(origin), {"1.0": honest(origin, tamper=resigned(origin))}))
        return servers[-1]

    with serve(factory) as origin:
        document = await verified(origin)
    assert document["outcome"] == "consistent", found(document, 0)
    assert not any(code == "card_variants" for code, _ in advised(document))  # signatures only
    assert document["agent"]["card_signature"]["status"] == "verified"
    assert servers[0].cards == Counter({"": 1, "1.0": 1})  # each version's card once a run


def _described(card: dict[str, Any]) -> dict[str, Any]:
    card["description"] = "The 1.0 variant's own description."
    return card


async def test_variants_that_differ_in_more_than_signatures_are_an_advisory() -> None:
    def factory(origin: str) -> Any:
        return ByVersion(honest(origin), {"1.0": honest(origin, edit_card=_described)})

    with serve(factory) as origin:
        document = await verified(origin)
    assert document["outcome"] == "consistent", found(document, 0)
    variants = [a for a in document["advisories"] if a["code"] == "card_variants"]
    assert [a["reason"] for a in variants] == ["variants_differ"]
    assert variants[0]["value"]["version"] == "1.0"


async def test_a_variant_answered_from_the_wrong_card_is_still_caught() -> None:
    # The 1.0 variant declares one description; its interfaces answer the default's.
    def factory(origin: str) -> Any:
        answers = honest(origin)
        served = honest(origin, edit_card=_described)

        async def app(scope: Any, receive: Any, send: Any) -> None:
            is_card = scope["type"] == "http" and scope["path"] == CARD_PATH
            await (served if is_card else answers)(scope, receive, send)

        return ByVersion(answers, {"1.0": app})

    with serve(factory) as origin:
        document = await verified(origin)
    assert document["outcome"] == "non_conformant"
    assert ("projection", "value_mismatch") in found(document)


# --- bounds of one run (PROFILE §7, D-CLI-6) -------------------------


def _many_signatures(origin: str, count: int) -> Any:
    """The honest card whose valid signature comes after ``count`` dummy EdDSA ones."""

    def tamper(card: dict[str, Any]) -> dict[str, Any]:
        real = card["signatures"][0]
        header = {"alg": "EdDSA", "jku": origin + reference.JWKS_PATH}
        protected = _b64(json.dumps(header).encode())
        dummy = {"protected": protected, "signature": _b64(bytes(64))}
        return {**card, "signatures": [dummy] * count + [real]}

    return tamper


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


async def test_at_most_16_signatures_are_tried() -> None:
    def factory(origin: str) -> Any:
        return honest(origin, tamper=_many_signatures(origin, MAX_SIGNATURES_TRIED))

    with serve(factory) as origin:
        document = await verified(origin)
    # The valid signature is the 17th: never tried, and said so.
    assert document["agent"]["card_signature"]["status"] != "verified"
    assert ("card_signature", "signatures_not_tried") in advised(document)
    (advisory,) = [a for a in document["advisories"] if a["reason"] == "signatures_not_tried"]
    assert advisory["value"] == 1


async def test_at_most_64_keys_of_a_jwks_are_tried() -> None:
    # The card's own key comes after 64 others without kid in its JWKS.
    def factory(origin: str) -> Any:
        agent = honest(origin)
        real = reference.jwks()["keys"]
        others = [{**real[0], "kid": None} for _ in range(MAX_KEYS_TRIED)]
        padded = [{k: v for k, v in key.items() if v is not None} for key in others]
        for n, key in enumerate(padded):  # distinct, valid-looking, none of them the card's
            key["x"] = _b64(struct.pack(">I", n) + bytes(28))
        body = json.dumps({"keys": padded + real}).encode()

        def jwks(call: Call) -> Reply | None:
            if call.path == reference.JWKS_PATH:
                return Reply(200, [(b"content-type", b"application/json")], body)
            return None

        return Wrap(agent, on_request=jwks)

    with serve(factory) as origin:
        document = await verified(origin)
    assert document["agent"]["card_signature"]["status"] != "verified"
    assert ("card_signature", "keys_not_tried") in advised(document)


def _interfaces_at(target: str, count: int) -> Any:
    def edit(card: dict[str, Any]) -> dict[str, Any]:
        card["supportedInterfaces"] = [
            {"url": f"{target}/a2a/{n}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            for n in range(count)
        ]
        return card

    return edit


@contextmanager
def counting_404() -> Iterator[tuple[str, Counter[str]]]:
    """A foreign origin answering every request with an HTML 404; counts requests."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    not_found = answer(404, [("Content-Type", "text/html")], b"<h1>Not Found</h1>")

    def handler(conn: socket.socket, stop: threading.Event) -> None:
        with lock:
            seen["requests"] += 1
        not_found(conn, stop)

    with raw_server(handler) as origin:
        yield origin, seen


async def test_an_interface_answering_html_404s_is_abandoned_after_three() -> None:
    # D-CLI-6: 8 interfaces on another origin, every call a 404, made 16,592
    # requests in one verify; three in a row now abandon an interface (PROFILE §7).
    with (
        counting_404() as (foreign, seen),
        serve(lambda o: honest(o, edit_card=_interfaces_at(foreign, 8))) as origin,
    ):
        document = await verified(origin)
    # PROFILE §7: interfaces that never answered in their binding are judged as an HTML
    # page at the card URL is, unreachable: no conflict, so no re-run.
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "not_its_binding"
    abandoned = [a for a in document["advisories"] if a["reason"] == "abandoned"]
    assert len(abandoned) == 8
    assert seen["requests"] == 8 * 3  # one run, three calls on each interface


@pytest.mark.parametrize("thorough", [True, False])
async def test_at_most_16_interfaces_are_interviewed_whatever_is_asked(thorough: bool) -> None:
    """PROFILE §7: at most 16 interfaces, thorough or sampled (D-VERIFY-63: a sampled run
    tries a binding's other interfaces in the stead of one that cannot be interviewed,
    within the same bound)."""
    with (
        counting_404() as (foreign, seen),
        serve(lambda o: honest(o, edit_card=_interfaces_at(foreign, 20))) as origin,
    ):
        document = await verified(origin, max_interfaces=None, thorough=thorough)
    left = [a for a in document["advisories"] if a["reason"] == "interfaces_not_asked"]
    if thorough:
        assert [a["value"] for a in left] == [20 - MAX_INTERFACES]
    else:
        assert left == []  # one binding: none of it left out by the bound
    assert seen["requests"] == MAX_INTERFACES * 3  # one run: unreachable, no re-run


async def test_a_spent_request_budget_ends_the_run_saying_what_to_change() -> None:
    with serve(honest) as origin:
        document = await verified(origin, max_requests=20)
    assert document["outcome"] == "unreachable"
    assert document["incomplete"]["reason"] == "request_budget"
    assert "--max-requests" in document["incomplete"]["detail"]
    assert sum(len(run["calls"]) for run in document["runs"]) < 20


async def test_the_default_budget_lets_the_honest_agent_finish() -> None:
    with serve(honest) as origin:
        document = await verified(origin)
    assert document["outcome"] == "consistent"


# --- failure causes, named with the URL (D-CLI-9) -----------------------------


def _reset(conn: socket.socket, _stop: threading.Event) -> None:
    read_request(conn)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()  # RST, not FIN


def _closes(conn: socket.socket, _stop: threading.Event) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
    conn.close()


def _silent(conn: socket.socket, stop: threading.Event) -> None:
    read_request(conn)
    stop.wait(2)


def _garbage(conn: socket.socket, _stop: threading.Event) -> None:
    read_request(conn)
    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")


async def _cause_of(url: str, **options: Any) -> dict[str, Any]:
    document = await verified(url, **options)
    assert document["outcome"] == "unreachable"
    return document["incomplete"]


async def test_a_closed_port_is_refused_and_named() -> None:
    url = closed_port_url()
    incomplete = await _cause_of(url)
    assert (incomplete["reason"], incomplete["cause"]) == ("connect_failed", "refused")
    assert incomplete["url"] == url.rstrip("/") + CARD_PATH
    report = render_report(await verified(url))
    assert f"at {incomplete['url']} (refused)" in report


async def test_a_name_that_does_not_resolve_is_named() -> None:
    async def nowhere(_host: str, _port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    url = "https://agent.invalid/"
    incomplete = await _cause_of(url, client=ClientOptions(resolver=nowhere))
    assert (incomplete["reason"], incomplete["cause"]) == ("connect_failed", "name")
    assert incomplete["url"] == "https://agent.invalid" + CARD_PATH


async def test_tls_against_plain_http_is_named() -> None:
    with serve(honest) as origin:
        port = origin.rsplit(":", 1)[1]

        async def loopback(_host: str, _port: int) -> list[str]:
            return ["127.0.0.1"]

        # A name resolving to loopback, so that the URL may be HTTPS to a plain port.
        options = ClientOptions(resolver=loopback, allow_private=True)
        incomplete = await _cause_of(f"https://agent.test:{port}/", client=options)
    assert (incomplete["reason"], incomplete["cause"]) == ("connect_failed", "tls")


@pytest.mark.parametrize(
    ("handler", "reason", "cause"),
    [
        (_reset, "connect_failed", "reset"),
        (_closes, "connect_failed", "closed"),
        (_garbage, "connect_failed", "protocol"),
        (_silent, "timeout", "timeout"),
    ],
)
async def test_a_failed_exchange_names_its_cause(handler: Any, reason: str, cause: str) -> None:
    with raw_server(handler) as origin:
        incomplete = await _cause_of(origin, client=ClientOptions(timeout=0.5))
    assert (incomplete["reason"], incomplete["cause"]) == (reason, cause), incomplete
    assert incomplete["url"] == origin + CARD_PATH


async def test_an_interface_failing_at_the_transport_names_its_url() -> None:
    # Every interface on a closed port: each abandoned after three refusals, and the run
    # ends naming the interface URL, not the card's.
    closed = closed_port_url().rstrip("/")
    with serve(lambda o: honest(o, edit_card=_interfaces_at(closed, 2))) as origin:
        incomplete = await _cause_of(origin)
    assert (incomplete["reason"], incomplete["cause"]) == ("connect_failed", "refused")
    assert incomplete["url"].startswith(closed + "/a2a/")


def test_ask_names_the_url_and_the_cause(capsys: pytest.CaptureFixture[str]) -> None:
    url = closed_port_url()
    assert main(["ask", url, "identity"]) == 3
    err = capsys.readouterr().err
    assert f'(refused) at "{url.rstrip("/") + CARD_PATH}" [connect_failed]' in err, err


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "refused"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "unreachable"),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), "unreachable"),
        (ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"), "tls"),
        (ssl.SSLCertVerificationError(1, "certificate verify failed"), "tls"),
        (ConnectionResetError(errno.ECONNRESET, "reset"), "reset"),
        (TimeoutError(), "timeout"),
        (OSError(errno.EMFILE, "Too many open files"), "connect"),
    ],
)
def test_every_connect_error_has_its_cause(error: BaseException, cause: str) -> None:
    # D-CLI-9: the socket error classes a connection meets, each named (an
    # unreachable host cannot be made on loopback, so its errno is classified here).
    assert connect_cause(error) == cause


@pytest.mark.parametrize(("status", "reason"), [(404, "card_status"), (503, "card_status")])
async def test_a_card_url_that_does_not_answer_200_is_named(status: int, reason: str) -> None:
    # D-CLI-9: which URL, for every way a run ends at the transport or the card.
    with raw_server(answer(status, [("Content-Type", "text/html")], b"no")) as origin:
        incomplete = await _cause_of(origin)
    assert (incomplete["reason"], incomplete["url"]) == (reason, origin + CARD_PATH)


async def test_an_interface_answering_503_is_named() -> None:
    def unavailable(call: Call) -> Reply | None:
        if call.binding is not None:
            return Reply(503, [(b"content-type", b"text/plain")], b"busy")
        return None

    with serve(lambda o: Wrap(honest(o), on_request=unavailable)) as origin:
        incomplete = await _cause_of(origin)
    assert incomplete["reason"] == "agent_unavailable"
    assert incomplete["url"] == origin + "/a2a/jsonrpc"
