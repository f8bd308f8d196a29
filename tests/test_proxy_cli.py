"""``a2a-interview proxy`` flags of D-PROXY-20, as a user runs them (a subprocess)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.card import generate_key, private_jwk
from a2a_interview.spec import INTERVIEW_URI
from support.ports import closed_port
from support.proxy import CARD, cli_serving, proxy_command, refusal, stopped, upstream_running
from support.recorder import signed_undeclared, undeclared


def test_an_undeclared_card_is_refused_telling_the_user_about_declare() -> None:
    with upstream_running(undeclared) as up, closed_port() as port:
        line = refusal("--upstream", up.origin, "--port", str(port))  # refused before binding
        assert "--declare" in line


def test_a_signed_card_declare_would_change_is_refused_without_a_key() -> None:
    with upstream_running(signed_undeclared) as up:
        line = refusal("--upstream", up.origin, "--port", "0", "--declare")
        assert "--card-key KEY --kid KID" in line


def test_a_missing_proposal_names_the_entry_the_url_and_the_cause() -> None:
    def card(origin: str) -> dict[str, Any]:
        value = reference.unsigned_card(origin)
        value["capabilities"]["extensions"][1]["params"]["proposals"][0]["url"] = (
            origin + "/terms/gone.json"
        )
        return value

    with upstream_running(card) as up:
        line = refusal("--upstream", up.origin, "--port", "0")
    assert line == (
        "a2a-interview proxy: refusing to start: terms entry "
        f"/capabilities/extensions/1/params/proposals/0 ({up.origin}/terms/gone.json): "
        "fetch failed: the server answered 404 [declaration]"
    )


def test_declare_with_a_key_serves_the_card_re_signed_and_warns_of_nothing(
    tmp_path: Path,
) -> None:
    key = tmp_path / "card.jwk.json"
    key.write_text(json.dumps(private_jwk(generate_key("EdDSA"), "proxy-1")))
    with upstream_running(signed_undeclared) as up:
        process, port, first = cli_serving("--upstream", up.origin, "--poll", "0", "--declare",
                                           "--card-key", str(key), "--kid", "proxy-1")  # fmt: skip
        try:
            assert first.startswith(f"a2a-interview proxy: serving at http://127.0.0.1:{port}/")
            card = httpx.get(f"http://127.0.0.1:{port}{CARD}", timeout=10).json()
            assert {"uri": INTERVIEW_URI} in card["capabilities"]["extensions"]
            assert card["supportedInterfaces"][0]["url"].startswith(f"http://127.0.0.1:{port}/")
            assert [s["protected"] for s in card["signatures"]] != [
                s["protected"] for s in reference.signed_card(up.origin, jku=False)["signatures"]
            ]
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=20)
        finally:
            stopped(process)
    assert process.returncode == 0, err
    assert "WARNING" not in err and "Traceback" not in err


def test_interfaces_bypassing_the_proxy_are_a_warning_at_start() -> None:
    with upstream_running() as up:
        process, _, _ = cli_serving("--upstream", up.origin, "--poll", "0",
                                    "--public-url", "https://agent.example")  # fmt: skip
        try:
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=20)
        finally:
            stopped(process)
    assert "WARNING: the card's interface" in err
    assert "bypass the interview" in err


def test_new_flags_usage_errors(tmp_path: Path) -> None:
    base = ("--upstream", "http://127.0.0.1:9/", "--port", "9")
    cases = [
        (("--proposal", "https://a.example/x.json"), "is not URL=FILE"),
        (("--proposal", "ftp://a.example/x=" + str(tmp_path)), "not an http:// or https:// URL"),
        (("--proposal", f"https://a.example/x={tmp_path / 'none.json'}"), "cannot read proposal"),
        (("--card-key", str(tmp_path / "k"), "--declare"), "--card-key and --kid go together"),
        (("--card-key", str(tmp_path / "k"), "--kid", "k"), "add --declare"),
        (("--public-url", "ftp://agent.example"), "not an http:// or https:// URL"),
        (("--max-body", "0"), "not a number of bytes > 0"),
        (("--body-timeout", "0"), "not a number of seconds > 0"),
        (("--card-cache-control", "a\nb"), "printable ASCII"),
    ]
    (tmp_path / "k").write_text("not a key")
    cases.append(
        (("--card-key", str(tmp_path / "k"), "--kid", "k", "--declare"), "not a usable private key")
    )
    for extra, message in cases:
        process = proxy_command(*base, *extra)
        _, err = process.communicate(timeout=30)
        assert (process.returncode, "Traceback" in err) == (2, False), (extra, err)
        assert message in err, (extra, err)


def test_the_connection_bounds_are_the_proxys_options_too() -> None:
    # D-SERVE-14: the proxy's listening server keeps the bounds its flags name; a
    # head over --max-header-bytes is answered 431 by the proxy (the upstream, had it been
    # forwarded, would have answered 404 for /x).
    import socket

    with upstream_running() as up:
        process, port, _ = cli_serving("--upstream", up.origin, "--poll", "0",
                                       "--max-header-bytes", "2048")  # fmt: skip
        try:
            assert httpx.get(f"http://127.0.0.1:{port}{CARD}", timeout=10).status_code == 200
            with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                conn.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\nX-Big: " + b"y" * 4096 + b"\r\n\r\n")
                reply = conn.recv(4096)
            assert reply.startswith(b"HTTP/1.1 431"), reply[:60]
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=20)
        finally:
            stopped(process)


@pytest.mark.parametrize(
    ("alg", "named", "signed_as"),
    [("PS256", True, "PS256"), ("RS256", True, "RS256"), ("PS256", False, "RS256"),
     ("ES256", True, "ES256")],
)  # fmt: skip
def test_declare_re_signs_with_the_algorithm_the_card_keys_jwk_names(
    tmp_path: Path, alg: str, named: bool, signed_as: str
) -> None:
    # PROFILE §6.3 (re-signed as `card sign` signs): a private JWK's `alg` is the one the
    # proxy signs with; it used to sign every RSA key RS256, so a PS256 JWK's signature
    # was refused by verifiers holding its PS256 public JWK. An RSA key naming none gets
    # the RS256 default, as `card sign` gives it.
    import base64

    from a2a_interview.card import public_jwk, verify_card

    secret = generate_key(alg)
    key = tmp_path / "card.jwk.json"
    key.write_text(json.dumps(private_jwk(secret, "proxy-1", alg if named else None)))
    with upstream_running(signed_undeclared) as up:
        process, port, first = cli_serving("--upstream", up.origin, "--poll", "0", "--declare",
                                           "--card-key", str(key), "--kid", "proxy-1")  # fmt: skip
        try:
            assert first.startswith("a2a-interview proxy: serving at"), first
            card = httpx.get(f"http://127.0.0.1:{port}{CARD}", timeout=10).json()
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=20)
        finally:
            stopped(process)
    assert process.returncode == 0, err
    for item in card["signatures"]:
        header = json.loads(base64.urlsafe_b64decode(item["protected"] + "=="))
        assert header["alg"] == signed_as, header
    jwks = [public_jwk(secret, "proxy-1", signed_as)]
    assert verify_card(card, jwks).status == "verified"


def test_a_card_key_whose_jwk_alg_does_not_fit_the_key_is_a_usage_error(tmp_path: Path) -> None:
    # PROFILE §6.3: refused at start, before any upstream is read, as `card sign` refuses
    # to sign with it; `none`, HS256 and another key type's algorithm alike.
    base = ("--upstream", "http://127.0.0.1:9/", "--port", "9", "--declare", "--kid", "k")
    for kind, alg in [("PS256", "ES256"), ("PS256", "HS256"), ("EdDSA", "none"),
                      ("ES256", "ES384"), ("EdDSA", "RS256")]:  # fmt: skip
        jwk = private_jwk(generate_key(kind), "k")
        jwk["alg"] = alg
        path = tmp_path / f"{kind}-{alg}.jwk.json"
        path.write_text(json.dumps(jwk))
        process = proxy_command(*base, "--card-key", str(path))
        _, err = process.communicate(timeout=30)
        assert (process.returncode, "Traceback" in err) == (2, False), (kind, alg, err)
        assert f"--card-key {str(path)!r}" in err and alg in err, (kind, alg, err)
