"""Cards signed by the official SDKs' own signers verify with ``a2a-interview card verify``
under the reading ``proto`` (D-VERIFY-26, PROFILE §6.3, §6.6).

Live: a card declaring the interview with ``"required": false`` (the draft's example) is
signed right now by ``@a2a-js/sdk`` 1.3 (``generateAgentCardSignature``, through node) and
by ``a2a-sdk`` 1.x (``create_agent_card_signer``, the signature added to the card JSON as
authored), then checked by the command a user runs. Kept: the cards the same signers made
once, in ``tests/data/interop-signed`` (see its README), checked without node.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cards import Keys, card, protected_header, sign_js, sign_python

from needs import DATA

SIGNED = DATA / "interop-signed"


def card_verify(path: Path, jwks: Path, *extra: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", "from a2a_interview.cli import entry; entry()",
         "card", "verify", str(path), "--jwks", str(jwks), *extra],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    return Keys(tmp_path)


def _write(tmp: Path, name: str, value: dict[str, Any]) -> Path:
    path = tmp / name
    path.write_text(json.dumps(value), "utf-8")
    return path


def _required_false(signed: dict[str, Any]) -> None:
    # The card keeps what its author wrote: the case the finding is about.
    extensions = signed["capabilities"]["extensions"]
    assert extensions[0]["required"] is False
    assert signed["capabilities"]["pushNotifications"] is False


# -- live: the JS SDK's signer ----------------------------------------------------------


def test_js_signed_card_does_not_verify_under_prune_empty(
    node: str, js: Path, keys: Keys, tmp_path: Path
) -> None:
    # D-VERIFY-26, the control: the SDK signs the protobuf JSON form (required: false
    # omitted), so the readings before `proto` cannot verify it. Stays true after proto.
    signed = sign_js(node, js, card("https://agent.example"), keys.jwk, keys.kid, tmp_path)
    _required_false(signed)
    assert protected_header(signed) == {"alg": "ES256", "kid": keys.kid, "typ": "JOSE"}
    path = _write(tmp_path, "js-signed.json", signed)
    for reading in ("served", "prune-empty"):
        code, out = card_verify(path, keys.jwks, "--reading", reading)
        assert code == 1 and re.search(r"status:\s+invalid", out), out


def test_js_signed_card_verifies_under_proto(
    node: str, js: Path, keys: Keys, tmp_path: Path
) -> None:
    # PROFILE §6.3: a card declaring an extension with required: false, signed by
    # @a2a-js/sdk's generateAgentCardSignature, must verify; the reading is reported.
    signed = sign_js(node, js, card("https://agent.example"), keys.jwk, keys.kid, tmp_path)
    path = _write(tmp_path, "js-signed.json", signed)
    code, out = card_verify(path, keys.jwks)
    assert code == 0 and re.search(r"status:\s+verified", out), out
    assert re.search(r"reading:\s+proto", out), out
    code, out = card_verify(path, keys.jwks, "--reading", "proto")
    assert code == 0, out


# -- live: the Python SDK's signer ------------------------------------------------------


def test_python_signed_card_does_not_verify_under_prune_empty(keys: Keys, tmp_path: Path) -> None:
    # D-VERIFY-26, the control, for a2a-sdk's create_agent_card_signer.
    signed = sign_python(card("https://agent.example"), keys.pem, keys.kid)
    _required_false(signed)
    path = _write(tmp_path, "py-signed.json", signed)
    for reading in ("served", "prune-empty"):
        code, out = card_verify(path, keys.jwks, "--reading", reading)
        assert code == 1 and re.search(r"status:\s+invalid", out), out


def test_python_signed_card_verifies_under_proto(keys: Keys, tmp_path: Path) -> None:
    # PROFILE §6.3: the same card signed by a2a-sdk 1.x verifies under proto.
    signed = sign_python(card("https://agent.example"), keys.pem, keys.kid)
    path = _write(tmp_path, "py-signed.json", signed)
    code, out = card_verify(path, keys.jwks)
    assert code == 0 and re.search(r"reading:\s+proto", out), out


def test_python_signed_card_with_jku_null_verifies(keys: Keys, tmp_path: Path) -> None:
    # PROFILE §6.6: a2a-sdk writes "jku": null for jku=None; read as absent (an advisory),
    # never "malformed".
    signed = sign_python(card("https://agent.example"), keys.pem, keys.kid, jku_null=True)
    assert protected_header(signed)["jku"] is None
    path = _write(tmp_path, "py-signed-jku-null.json", signed)
    code, out = card_verify(path, keys.jwks)
    assert code == 0 and re.search(r"reading:\s+proto", out), out


# -- kept: the cards the SDKs signed once (tests/data/interop-signed) ---------------

KEPT = ["js-required-false.json", "python-required-false.json",
        "python-jku-null.json"]  # fmt: skip


def test_kept_cards_are_what_the_readme_says() -> None:
    # tests/data/README.md (interop-signed): each card declares the interview with
    # required: false, signed by the key of jwks.json, and is otherwise unchanged.
    for name in KEPT:
        signed = json.loads((SIGNED / name).read_bytes())
        _required_false(signed)
        header = protected_header(signed)
        assert header["kid"] == "sdk-signed-test-es256" and header["alg"] == "ES256"
        unsigned = {k: v for k, v in signed.items() if k != "signatures"}
        assert unsigned == card("https://agent.example")


@pytest.mark.parametrize("name", KEPT)
def test_kept_cards_do_not_verify_under_prune_empty(name: str) -> None:
    # D-VERIFY-26, on the kept cards: invalid under the readings before proto.
    code, out = card_verify(SIGNED / name, SIGNED / "jwks.json", "--reading", "prune-empty")
    assert code == 1, out


@pytest.mark.parametrize("name", KEPT)
def test_kept_cards_verify_under_proto(name: str) -> None:
    # PROFILE §6.3, §6.6 on the kept cards: verified, reading proto.
    code, out = card_verify(SIGNED / name, SIGNED / "jwks.json")
    assert code == 0 and re.search(r"reading:\s+proto", out), out
