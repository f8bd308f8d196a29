"""The offline commands (PROFILE §9, publishing part) through main(argv)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import jcs, reference
from a2a_interview.cli import main
from a2a_interview.cli.usage import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from a2a_interview.declarations import build
from support.cli import run

REF = Path(reference.__file__).parent
CARD = REF / "stonework-card.json"
PROPOSALS = [f"--proposal={url}={REF / url.rsplit('/', 1)[1]}" for url in reference.proposals()]


def test_answer_prints_the_server_bytes(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    iv = build(reference.unsigned_card(), reference.proposals()).interview
    cases: list[tuple[list[str], bytes]] = [
        (["identity"], iv.answer("identity")),
        (
            ["interview/usage", "--skill", reference.NON_ASCII_SKILL],
            iv.answer("usage", reference.NON_ASCII_SKILL),
        ),
        (
            [*PROPOSALS, "terms", "--skill", "reconcile-statement"],
            iv.answer("terms", "reconcile-statement"),
        ),
        (["weather"], iv.refusal),
    ]
    for argv, expected in cases:
        assert main(["answer", str(CARD), *argv]) == EXIT_OK
        assert capsysbinary.readouterr().out == expected


def test_answer_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "answer", str(CARD), "terms")
    assert code == EXIT_USAGE and "no --proposal URL=FILE" in err
    code, _, err = run(capsys, "answer", str(CARD), "identity", "--skill", "x")
    assert code == EXIT_USAGE and "usage and terms only" in err
    bad = tmp_path / "dup.json"
    bad.write_bytes(b'{"name":"a","name":"b"}')
    code, _, err = run(capsys, "answer", str(bad), "identity")
    assert code == EXIT_USAGE and "duplicate_key" in err and "Traceback" not in err
    code, _, err = run(capsys, "answer", str(tmp_path / "missing.json"), "identity")
    assert code == EXIT_USAGE and "cannot read card" in err
    wrong = [f"--proposal={next(iter(reference.proposals()))}={REF / 'flag-exceptions.sow.json'}"]
    code, _, err = run(capsys, "answer", str(CARD), *wrong, "identity")
    assert code == EXIT_USAGE and "digest_mismatch" in err


def test_proposal_digest_sign_verify(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     data: Path) -> None:  # fmt: skip
    vector = data / "stonework-standing-proposal.json"
    code, out, _ = run(capsys, "proposal", "digest", str(vector))
    assert (code, out.strip()) == (EXIT_OK, jcs.digest(json.loads(vector.read_bytes())))
    known = "sha256:e8bba098630d3635b0bd8479de1c1efac9dbacbe22ecace54354264ac6da5648"
    assert out.strip() == known

    seed = tmp_path / "seed"
    seed.write_text(reference.PROPOSAL_SEED + "\n")
    out_file = tmp_path / "signed.json"
    code, _, err = run(capsys, "proposal", "sign", str(vector), "--seed", str(seed),
                       "--signed-at", "2026-08-11T09:00:00Z", "--out", str(out_file))  # fmt: skip
    assert code == EXIT_OK and known in err
    assert jcs.canonicalize(json.loads(out_file.read_bytes())) == jcs.canonicalize(
        json.loads(vector.read_bytes())
    )
    code, out, _ = run(capsys, "proposal", "verify", str(out_file), "--digest", known)
    assert (code, out.strip()) == (EXIT_OK, "ok")
    code, out, _ = run(
        capsys, "proposal", "verify", str(out_file), "--digest", "sha256:" + "0" * 64
    )
    assert (code, out.strip()) == (EXIT_FAILED, "digest_mismatch")
    unsigned: dict[str, Any] = json.loads(vector.read_bytes())
    del unsigned["signatures"]
    (tmp_path / "u.json").write_text(json.dumps(unsigned))
    code, out, _ = run(capsys, "proposal", "verify", str(tmp_path / "u.json"))
    assert (code, out.strip()) == (EXIT_FAILED, "unsigned")


def test_keygen_and_card_sign_verify(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for alg in ("EdDSA", "ES256"):
        key = tmp_path / f"{alg}.jwk"
        code, jwks, _ = run(capsys, "keygen", "--alg", alg, "--kid", "k1", "--out", str(key))
        assert code == EXIT_OK and key.stat().st_mode & 0o777 == 0o600
        (tmp_path / "jwks.json").write_text(jwks)
        signed = tmp_path / "signed.json"
        code, _, _ = run(capsys, "card", "sign", str(CARD), "--key", str(key), "--kid", "k1",
                         "--out", str(signed))  # fmt: skip
        assert code == EXIT_OK
        code, out, _ = run(
            capsys, "card", "verify", str(signed), "--jwks", str(tmp_path / "jwks.json")
        )
        assert code == EXIT_OK and "verified" in out and "served" in out
        tampered = json.loads(signed.read_text())
        tampered["name"] = "Not Stonework"
        (tmp_path / "t.json").write_text(json.dumps(tampered))
        code, out, _ = run(
            capsys,
            "card",
            "verify",
            str(tmp_path / "t.json"),
            "--jwks",
            str(tmp_path / "jwks.json"),
        )
        assert code == EXIT_FAILED and "invalid" in out
    code, out, _ = run(capsys, "card", "verify", str(CARD))
    assert code == EXIT_FAILED and "unsigned" in out


def test_keygen_kid_without_a_jwk_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "keygen", "--kid", "k1")
    assert code == EXIT_USAGE and "--kid names a JWK" in err


def test_keygen_nkey(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from a2a_interview import nkeys

    code, out, _ = run(capsys, "keygen")
    pair = json.loads(out)
    assert (
        code == EXIT_OK and nkeys.public_of(nkeys.private_key(pair["seed"])) == pair["public_key"]
    )
    code, out, _ = run(capsys, "keygen", "--out", str(tmp_path / "s"))
    assert out.strip() == nkeys.public_of(nkeys.private_key((tmp_path / "s").read_text().strip()))


def test_an_unwritable_out_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Path
) -> None:
    # cli/__init__: bad input is a one-line usage error (exit 2), never a traceback; an
    # --out naming a folder, or a file in a folder that does not exist, is bad input.
    seed = tmp_path / "seed"
    seed.write_text(reference.PROPOSAL_SEED + "\n")
    key = tmp_path / "k.jwk"
    assert run(capsys, "keygen", "--alg", "EdDSA", "--out", str(key))[0] == EXIT_OK
    proposal = str(data / "stonework-standing-proposal.json")
    for out in (str(tmp_path), str(tmp_path / "missing" / "x.json")):
        for argv in (
            ["keygen", "--out", out],
            ["keygen", "--alg", "EdDSA", "--out", out],
            ["card", "sign", str(CARD), "--key", str(key), "--kid", "k", "--out", out],
            ["proposal", "sign", proposal, "--seed", str(seed), "--out", out],
        ):
            code, _, err = run(capsys, *argv)
            # cli/files.py: the message names the option and the file (D-CLI-11)
            assert code == EXIT_USAGE and err.startswith(f"a2a-interview: error: --out {out!r}")
            assert len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.jwk", "seed"]  # no leftovers


def test_proposal_sign_refuses_a_signed_at_that_is_not_rfc3339_utc(
    capsys: pytest.CaptureFixture[str], data: Path
) -> None:
    # Agent SoW §6 (terms-extension.md §5): signed_at is an RFC 3339 UTC time with Z;
    # the command must not sign a record that other verifiers would call malformed.
    proposal = str(data / "stonework-standing-proposal.json")
    for bad in ("yesterday", "2026-08-11", "2026-08-11T09:00:00+02:00", "2026-02-30T09:00:00Z"):
        code, out, err = run(capsys, "proposal", "sign", proposal,
                             "--seed", reference.PROPOSAL_SEED, "--signed-at", bad)  # fmt: skip
        assert (code, out) == (EXIT_USAGE, "") and "is not an RFC 3339 UTC time" in err
    code, out, _ = run(capsys, "proposal", "sign", proposal, "--seed", reference.PROPOSAL_SEED,
                       "--signed-at", "2026-08-11T09:00:00.25Z")  # fmt: skip
    assert code == EXIT_OK and json.loads(out)["signatures"][0]["signed_at"].endswith(".25Z")


def test_answer_takes_a_committed_url_with_a_query(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    # --proposal URL=FILE splits at the last '=': the url is the card's, '=' and all.
    card = reference.unsigned_card()
    entry = card["capabilities"]["extensions"][1]["params"]["proposals"][0]
    body = reference.proposals()[entry["url"]]
    entry["url"] += "?v=2"
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    proposal = tmp_path / "p.json"
    proposal.write_bytes(body)
    others = [p for p in PROPOSALS if entry["url"].removesuffix("?v=2") not in p]
    argv = ["answer", str(path), f"--proposal={entry['url']}={proposal}", *others, "terms"]
    assert main(argv) == EXIT_OK
    fetched = {**reference.proposals(), entry["url"]: body}
    assert capsysbinary.readouterr().out == build(card, fetched).interview.answer("terms")


@pytest.mark.parametrize(
    "command",
    [["keygen"], ["card", "sign"], ["card", "verify"], ["proposal", "sign"],
     ["proposal", "digest"], ["proposal", "verify"], ["answer"]],
)  # fmt: skip
def test_every_command_has_help_with_examples(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    # README.md, "Command line": every command has --help with examples, readable on a
    # terminal (argparse wraps to COLUMNS; a raw description would not be).
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, *command, "--help")
    assert code == EXIT_OK and "\nexample" in out and f"a2a-interview {' '.join(command)} " in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "answer")[0] == EXIT_USAGE
    assert run(capsys, "no-such-command")[0] == EXIT_USAGE
    assert run(capsys)[0] == EXIT_USAGE
    code, out, _ = run(capsys, "--help")
    assert code == EXIT_OK and "exit codes" in out


SDK_SIGNED = Path(__file__).resolve().parent / "data" / "sdk-signed"


@pytest.mark.parametrize("name", ["python-signed-plain.json", "js-signed-compat.json"])
def test_card_verify_names_the_proto_reading(capsys: pytest.CaptureFixture[str], name: str) -> None:
    # D-VERIFY-26 / PROFILE §6.3: an SDK-signed card verifies, and card verify
    # says under which reading; §6.6: the null jku is said, never silently passed.
    jwks = str(SDK_SIGNED / "jwks.json")
    code, out, _ = run(capsys, "card", "verify", str(SDK_SIGNED / name), "--jwks", jwks)
    assert code == EXIT_OK
    assert "status:     verified" in out and "reading:    proto" in out
    assert ("null_header_member" in out) is name.startswith("python")
    assert ("uncovered_members" in out) is name.endswith("compat.json")
    assert '  "/url"' in out or not name.endswith("compat.json")
    code, out, _ = run(capsys, "card", "verify", str(SDK_SIGNED / name), "--jwks", jwks,
                       "--reading", "served")  # fmt: skip
    assert code == EXIT_FAILED and "invalid" in out
    code, out, _ = run(capsys, "card", "verify", str(SDK_SIGNED / name), "--jwks", jwks,
                       "--reading", "proto", "--json")  # fmt: skip
    body = json.loads(out)
    assert code == EXIT_OK
    assert (body["status"], body["reading"], body["readings"]) == ("verified", "proto", ["proto"])
    codes = [a["code"] for a in body["advisories"]]
    assert ("null_header_member" in codes) is name.startswith("python")


def test_card_verify_escapes_the_peer_kid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/security.md "Peer content never drives the terminal": the kid of a card's
    # protected header is the peer's (the report names it even unverified); printed raw,
    # an ESC in it drove the terminal.
    header = {"alg": "EdDSA", "typ": "JOSE", "kid": "\u001b[2Jk\u007f"}
    protected = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=").decode()
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"name": "x", "signatures": [
        {"protected": protected, "signature": "A" * 86}]}))  # fmt: skip
    code, out, _ = run(capsys, "card", "verify", str(card))
    assert code == EXIT_FAILED
    assert "\x1b" not in out and "\x7f" not in out
    assert 'kid:        "\\u001b[2Jk\\u007f"' in out


def test_card_verify_reading_choices(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "card", "verify", str(CARD), "--reading", "protobuf")
    assert code == EXIT_USAGE and "'served', 'prune-empty', 'proto'" in err


# -- card sign: signatures the SDKs accept (D-VERIFY-36, PROFILE §6.3) -----------


def _required_false_card(tmp_path: Path) -> Path:
    card = reference.unsigned_card()
    card["capabilities"]["extensions"][0]["required"] = False  # the draft's own example
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    return path


def _key(capsys: pytest.CaptureFixture[str], tmp_path: Path, alg: str) -> tuple[Path, Path]:
    key, jwks = tmp_path / f"{alg}.jwk", tmp_path / f"{alg}-jwks.json"
    code, out, _ = run(capsys, "keygen", "--alg", alg, "--kid", "k1", "--out", str(key))
    assert code == EXIT_OK
    jwks.write_text(out)
    return key, jwks


def _sign(capsys: pytest.CaptureFixture[str], card: Path, key: Path,
          *extra: str) -> tuple[int, dict[str, Any], str]:  # fmt: skip
    code, out, err = run(capsys, "card", "sign", str(card), "--key", str(key), "--kid", "k1",
                         *extra)  # fmt: skip
    return code, (json.loads(out) if code == EXIT_OK else {}), err


def test_card_sign_verifies_under_proto_with_required_false(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # PROFILE §6.3: a 1.0 card with "required": false is signed under proto (what both
    # SDKs' verifiers check), then under served; each reading verifies on its own.
    key, jwks = _key(capsys, tmp_path, "EdDSA")
    code, signed, err = _sign(capsys, _required_false_card(tmp_path), key)
    assert code == EXIT_OK and err.startswith("signed: proto, served\n")
    assert len(signed["signatures"]) == 2
    path = tmp_path / "signed.json"
    for reading in ("proto", "served"):
        path.write_text(json.dumps(signed))
        code, out, _ = run(capsys, "card", "verify", str(path), "--jwks", str(jwks),
                           "--reading", reading)  # fmt: skip
        assert code == EXIT_OK, out
    proto_only = {**signed, "signatures": signed["signatures"][:1]}
    path.write_text(json.dumps(proto_only))
    code, out, _ = run(capsys, "card", "verify", str(path), "--jwks", str(jwks), "--json")
    assert code == EXIT_OK and json.loads(out)["readings"] == ["proto"]


def test_card_sign_reading_asks_for_one_signature(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, jwks = _key(capsys, tmp_path, "ES256")
    card = _required_false_card(tmp_path)
    for reading in ("proto", "served"):
        code, signed, err = _sign(capsys, card, key, "--reading", reading)
        assert code == EXIT_OK and err == f"signed: {reading}\n"
        path = tmp_path / f"{reading}.json"
        path.write_text(json.dumps(signed))
        code, out, _ = run(capsys, "card", "verify", str(path), "--jwks", str(jwks), "--json")
        assert code == EXIT_OK and reading in json.loads(out)["readings"]
        assert len(signed["signatures"]) == 1


def test_card_sign_one_signature_when_nothing_differs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The stonework card has no "required": false, no empties, no unknown members: the
    # proto bytes are the served bytes, so one signature verifies under every reading.
    key, _ = _key(capsys, tmp_path, "EdDSA")
    code, signed, err = _sign(capsys, CARD, key)
    assert code == EXIT_OK and err == "signed: proto\n" and len(signed["signatures"]) == 1


def test_card_sign_a_0_3_card_is_signed_as_served_and_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, _ = _key(capsys, tmp_path, "EdDSA")
    card = tmp_path / "old.json"
    card.write_text(json.dumps({"name": "Old", "url": "https://old.example/rpc",
                                "protocolVersion": "0.3.0", "capabilities": {}}))  # fmt: skip
    code, signed, err = _sign(capsys, card, key)
    assert code == EXIT_OK and len(signed["signatures"]) == 1
    assert err.startswith("signed: served\nnote: not an A2A 1.0 card")


def test_card_sign_names_members_outside_the_1_0_card(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, _ = _key(capsys, tmp_path, "EdDSA")
    card = reference.unsigned_card()
    card["x-vendor\u202e"] = 1  # a member name shown escaped, never raw
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    code, _, err = _sign(capsys, path, key)
    assert code == EXIT_OK and "not covered by the proto signature" in err
    assert '"/x-vendor\\u202e"' in err and "\u202e" not in err


@pytest.mark.parametrize(
    "bad",
    [{"capabilities": {"streaming": "yes"}}, {"skills": [None]},
     {"supportedInterfaces": [], "supported_interfaces": []}],
)  # fmt: skip
def test_card_sign_refuses_a_card_the_sdks_cannot_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bad: dict[str, Any]
) -> None:
    # PROFILE §6.3: no proto form, no signature the SDKs would accept: one clear line,
    # pointing at --reading served; --reading served signs it.
    key, _ = _key(capsys, tmp_path, "EdDSA")
    path = tmp_path / "card.json"
    path.write_text(json.dumps({"name": "A", "supportedInterfaces": [], **bad}))
    code, _, err = _sign(capsys, path, key)
    assert code != EXIT_OK and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("fix the card, or sign it with --reading served")
    code, signed, _ = _sign(capsys, path, key, "--reading", "served")
    assert code == EXIT_OK and len(signed["signatures"]) == 1


def test_card_sign_takes_the_jwk_alg(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # An RSA JWK from `keygen --alg PS256` signs PS256 (its JWKS says so), not RS256.
    key, jwks = _key(capsys, tmp_path, "PS256")
    code, signed, _ = _sign(capsys, CARD, key)
    assert code == EXIT_OK
    header = json.loads(base64.urlsafe_b64decode(signed["signatures"][0]["protected"] + "=="))
    assert header["alg"] == "PS256"
    path = tmp_path / "signed.json"
    path.write_text(json.dumps(signed))
    assert run(capsys, "card", "verify", str(path), "--jwks", str(jwks))[0] == EXIT_OK
    code, signed, _ = _sign(capsys, CARD, key, "--alg", "RS256")  # --alg still wins
    assert code == EXIT_OK
