"""Every card this project signs verifies with both official SDKs' own verifiers and with
ours (D-VERIFY-36, PROFILE §6.3): ``a2a-interview card sign`` and the cards
``proxy --declare --card-key`` re-signs, over the variety set (``cards.variety``),
``"required": false`` included. One-value tampers of what the signature covers fail
with all three.

The SDKs' verifiers are run as their clients run them: ``a2a-sdk`` 1.x's card resolver
parse then ``create_signature_verifier`` (in this process), ``@a2a-js/sdk`` 1.3's
``verifyAgentCardSignature`` through node (``js/verify.mjs``). Ours is
``cardsig.verify_card`` under every reading, as ``card verify`` runs it.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cards import (
    ALGS,
    PROPOSAL_FILE,
    PROPOSAL_PATH,
    KeyRing,
    card,
    protected_header,
    variety,
    verify_js,
    verify_python,
)
from processes import proxy_argv, running

from a2a_interview.card import load_private_key, sign_card, verify_card
from support.ports import free_port
from support.servers import serve

CARD_PATH = "/.well-known/agent-card.json"
ORIGIN = "https://agent.example"


@pytest.fixture(scope="module")
def ring(tmp_path_factory: pytest.TempPathFactory) -> KeyRing:
    return KeyRing(tmp_path_factory.mktemp("keys"))


def card_sign(ring: KeyRing, alg: str, value: dict[str, Any], tmp: Path,
              *extra: str) -> tuple[dict[str, Any], str]:  # fmt: skip
    """``a2a-interview card sign`` as a user runs it: the signed card and its stderr."""
    source = tmp / "card.json"
    source.write_text(json.dumps(value, ensure_ascii=False), "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", "from a2a_interview.cli import entry; entry()", "card", "sign",
         str(source), "--key", str(ring.files[alg]), "--kid", ring.kid(alg), *extra],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    signed: dict[str, Any] = json.loads(done.stdout)
    return signed, done.stderr


def ours(value: dict[str, Any], ring: KeyRing) -> bool:
    return verify_card(value, ring.jwks["keys"]).status == "verified"


def _interfaces(value: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = value.get("supportedInterfaces") or value["supported_interfaces"]
    return found


def _last(text: str) -> str:
    return text[:-1] + ("x" if text[-1] != "x" else "y")


def tampers(value: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """One-value changes of members every signature covers, each one character or one
    bool: the card's name, the first skill's id, the first interface's URL, streaming;
    and one character of the signature when the card has one."""
    changed = copy.deepcopy(value)
    changed["name"] = _last(changed["name"])
    yield "name", changed
    changed = copy.deepcopy(value)
    changed["skills"][0]["id"] = _last(changed["skills"][0]["id"])
    yield "skill id", changed
    changed = copy.deepcopy(value)
    _interfaces(changed)[0]["url"] = _last(_interfaces(changed)[0]["url"])
    yield "interface url", changed
    changed = copy.deepcopy(value)
    changed["capabilities"]["streaming"] = not changed["capabilities"].get("streaming", False)
    yield "streaming", changed
    if len(value["signatures"]) == 1:  # a second signature would still verify, rightly
        changed = copy.deepcopy(value)
        text = changed["signatures"][0]["signature"]
        middle = len(text) // 2  # not the last character: its low bits may be padding
        changed["signatures"][0]["signature"] = (
            text[:middle] + _last(text[middle]) + text[middle + 1 :]
        )
        yield "signature", changed


def check_everywhere(
    signed: dict[str, dict[str, Any]], ring: KeyRing, node: str, js: Path, tmp: Path
) -> None:
    """Every signed card accepted by a2a-sdk, @a2a-js/sdk and ours; every tamper refused
    by all three. Failures are listed all at once, by card and verifier."""
    tampered = [(f"{name} / {what}", bad) for name, good in signed.items()
                for what, bad in tampers(good)]  # fmt: skip
    everything = [*signed.items(), *tampered]
    by_js = verify_js(node, js, [c for _, c in everything], ring.jwks_file, tmp)
    wrong = []
    for (name, value), js_ok in zip(everything, by_js, strict=True):
        want = name in signed
        got = {"a2a-sdk": verify_python(value, ring.jwks), "@a2a-js/sdk": js_ok,
               "ours": ours(value, ring)}  # fmt: skip
        wrong += [f"{name}: {who} {'rejects' if want else 'accepts'}"
                  for who, ok in got.items() if ok is not want]  # fmt: skip
    assert not wrong, "\n".join(wrong)
    assert len(tampered) >= 4 * len(signed)


# -- card sign -------------------------------------------------------------------------


def test_card_sign_verifies_with_both_sdks_and_ours(
    ring: KeyRing, node: str, js: Path, tmp_path: Path
) -> None:
    # PROFILE §6.3: 100% of the variety set, every allowlisted algorithm, accepted by
    # a2a-sdk's and @a2a-js/sdk's own verifiers and by ours; one-value tampers refused.
    cards = variety(ORIGIN)
    signed = {}
    for i, (name, value) in enumerate(cards.items()):
        signed[name] = card_sign(ring, ALGS[i % len(ALGS)], value, tmp_path)[0]
    assert len(signed) == 16
    check_everywhere(signed, ring, node, js, tmp_path)


def test_card_sign_adds_served_only_when_the_card_as_served_carries_more(
    ring: KeyRing, tmp_path: Path
) -> None:
    # PROFILE §6.3: proto, then served when its bytes differ; --reading asks for one.
    signed, err = card_sign(ring, "EdDSA", variety(ORIGIN)["required false"], tmp_path)
    assert len(signed["signatures"]) == 2 and "signed: proto, served" in err
    report = verify_card(signed, ring.jwks["keys"])
    assert [c.readings[0] for c in report.checks] == ["proto", "served"]
    clean = card(ORIGIN, declare=False, terms=False)  # nothing proto leaves out
    signed, err = card_sign(ring, "EdDSA", clean, tmp_path)
    assert len(signed["signatures"]) == 1 and "signed: proto\n" in err
    for reading in ("proto", "served"):
        one, err = card_sign(ring, "EdDSA", variety(ORIGIN)["required false"], tmp_path,
                             "--reading", reading)  # fmt: skip
        assert len(one["signatures"]) == 1 and f"signed: {reading}\n" in err


def test_card_sign_names_what_the_proto_signature_leaves_out(ring: KeyRing, tmp_path: Path) -> None:
    # PROFILE §6.3: members outside the 1.0 card are covered only by the served signature,
    # and the SDKs check none of them: said on stderr, by pointer.
    _, err = card_sign(ring, "ES256", variety(ORIGIN)["unknown members"], tmp_path)
    for pointer in ("/x-vendor", "/url", "/capabilities/stateTransitionHistory",
                    "/skills/1/x-note", "/supportedInterfaces/0/x-weight"):  # fmt: skip
        assert f'"{pointer}"' in err, err


def test_served_reading_alone_is_what_both_sdks_rejected(
    ring: KeyRing, node: str, js: Path, tmp_path: Path
) -> None:
    # D-VERIFY-36, the control: the strict reading alone (the old default) over a
    # card with "required": false verifies with ours only; both SDKs drop the member.
    value = variety(ORIGIN)["required false"]
    strict, _ = card_sign(ring, "ES256", value, tmp_path, "--reading", "served")
    assert verify_card(strict, ring.jwks["keys"], readings=("served",)).status == "verified"
    assert verify_python(strict, ring.jwks) is False
    assert verify_js(node, js, [strict], ring.jwks_file, tmp_path) == [False]


def test_both_sdks_accept_a_card_on_which_one_signature_of_several_verifies(
    ring: KeyRing, node: str, js: Path, tmp_path: Path
) -> None:
    # PROFILE §6.3, the condition for the second signature: shown for both SDKs, with the
    # verifying signature first, last, and after a broken one; none verifying is refused.
    value = variety(ORIGIN)["required false"]
    proto, _ = card_sign(ring, "ES256", value, tmp_path, "--reading", "proto")
    strict, _ = card_sign(ring, "EdDSA", value, tmp_path, "--reading", "served")
    good, sdk_bad = proto["signatures"][0], strict["signatures"][0]
    broken = {**good, "signature": _last(good["signature"][:-2]) + good["signature"][-2:]}
    cases = {
        "proto then served": ([good, sdk_bad], True),
        "served then proto": ([sdk_bad, good], True),
        "broken then proto": ([broken, good], True),
        "served and broken": ([sdk_bad, broken], False),
        "broken alone": ([broken], False),
    }
    cards = [{**value, "signatures": sigs} for sigs, _ in cases.values()]
    by_js = verify_js(node, js, cards, ring.jwks_file, tmp_path)
    for (name, (_, want)), signed, js_ok in zip(cases.items(), cards, by_js, strict=True):
        assert (verify_python(signed, ring.jwks), js_ok) == (want, want), name
        # Ours agrees, the served signature counting too.
        assert ours(signed, ring) is (want or name == "served and broken"), name


# -- sign_agent_card (the a2a-sdk integration) ---------------------------------------------


def test_sign_agent_card_verifies_with_both_sdks_and_ours(
    ring: KeyRing, node: str, js: Path, tmp_path: Path
) -> None:
    # PROFILE §6.3: every card of the variety set the SDK's AgentCard can hold, signed by
    # sign_agent_card and served as the integration serves it (0.3 members merged in).
    from google.protobuf.json_format import ParseError

    from a2a_interview.server.sdk import agent_card_from_json, served_card, sign_agent_card

    signed = {}
    for i, (name, value) in enumerate(variety(ORIGIN).items()):
        try:
            agent_card = agent_card_from_json(value)
        except ParseError:
            continue  # members the 1.0 card does not define: not an AgentCard
        alg = ALGS[i % len(ALGS)]
        key = load_private_key(ring.files[alg].read_bytes())
        signed[name] = served_card(sign_agent_card(agent_card, key, kid=ring.kid(alg), alg=alg))
    assert len(signed) == 14  # all but "unknown members" and "as a2a-sdk serves it"
    check_everywhere(signed, ring, node, js, tmp_path)


# -- proxy --declare --card-key ----------------------------------------------------------


def _static_upstream(state: dict[str, bytes]) -> Any:
    """An agent that serves ``state["card"]`` as its card and the test proposal."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = {CARD_PATH: state.get("card"), PROPOSAL_PATH: PROPOSAL_FILE.read_bytes()}.get(
            scope["path"]
        )
        status = 200 if body is not None else 404
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        await send({"type": "http.response.body", "body": body or b"{}"})

    return app


def test_proxy_re_signed_cards_verify_with_both_sdks_and_ours(
    ring: KeyRing, node: str, js: Path, tmp_path: Path
) -> None:
    # PROFILE §6.3, "the same holds for every card the proxy re-signs": each card of the
    # variety set, signed upstream, served by `proxy --declare --card-key` (interfaces
    # moved to its public URL, the interview declared where missing, so re-signed).
    state: dict[str, bytes] = {}
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    with serve(lambda origin: _static_upstream(state)) as upstream:
        cards = variety(upstream)
        # The proxy serves on the interfaces it reads under their JSON names only: a card
        # naming them `supported_interfaces` is refused there (no interface to serve on).
        del cards["proto field names"]
        key = load_private_key(ring.files["ES384"].read_bytes())  # the proxy replaces it

        def publish(value: dict[str, Any]) -> None:
            signed = sign_card(value, key, kid=ring.kid("ES384"))
            state["card"] = json.dumps(signed, ensure_ascii=False).encode()

        first = next(iter(cards.values()))
        publish(first)
        argv = proxy_argv(
            upstream,
            port,
            "--declare",
            "--public-url",
            public,
            "--poll",
            "0",
            "--card-key",
            str(ring.files["EdDSA"]),
            "--kid",
            ring.kid("EdDSA"),
        )
        re_signed: dict[str, dict[str, Any]] = {}
        with running(argv, port, tmp_path) as proxy:
            for name, value in cards.items():
                publish(value)
                deadline = time.monotonic() + 20
                while True:
                    served = httpx.get(proxy.origin + CARD_PATH, timeout=10).json()
                    if served["name"] == value["name"]:
                        break
                    assert time.monotonic() < deadline, f"{name}: not served\n{proxy.output()}"
                    time.sleep(0.05)
                assert _interfaces(served)[0]["url"].startswith(public), name
                kids = {protected_header({"signatures": [s]})["kid"] for s in served["signatures"]}
                assert kids == {ring.kid("EdDSA")}, name  # re-signed by the proxy
                re_signed[name] = served
    assert len(re_signed) == len(cards)
    check_everywhere(re_signed, ring, node, js, tmp_path)


def test_proxy_refuses_to_re_sign_a_card_the_sdks_cannot_check(
    ring: KeyRing, tmp_path: Path
) -> None:
    # PROFILE §6.3: a card that does not fit the 1.0 messages has no signature both SDKs
    # accept; the proxy says so in one line instead of serving one they would reject.
    state: dict[str, bytes] = {}
    with serve(lambda origin: _static_upstream(state)) as upstream:
        value = card(upstream, terms=False)
        value["capabilities"]["streaming"] = "yes"  # a2a-sdk refuses it, a2a-js coerces it
        key = load_private_key(ring.files["ES256"].read_bytes())
        state["card"] = json.dumps(sign_card(value, key, kid="u", reading="served")).encode()
        port = free_port()
        argv = proxy_argv(
            upstream,
            port,
            "--declare",
            "--public-url",
            f"http://127.0.0.1:{port}",
            "--card-key",
            str(ring.files["EdDSA"]),
            "--kid",
            ring.kid("EdDSA"),
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 3 and len(lines) == 1, done.stderr
    assert "cannot re-sign the upstream card" in lines[0]
    assert "can verify with the SDKs' verifiers" in lines[0]
