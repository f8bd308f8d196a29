"""The offline commands (PROFILE §9, publishing part) through main(argv)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import jcs, reference
from a2a_interview.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main
from a2a_interview.declarations import build

REF = Path(reference.__file__).parent
CARD = REF / "stonework-card.json"
PROPOSALS = [f"--proposal={url}={REF / url.rsplit('/', 1)[1]}" for url in reference.proposals()]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


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
                                     vectors: Path) -> None:  # fmt: skip
    vector = vectors / "stonework-standing-proposal.json"
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


def test_keygen_nkey(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from a2a_interview import nkeys

    code, out, _ = run(capsys, "keygen")
    pair = json.loads(out)
    assert (
        code == EXIT_OK and nkeys.public_of(nkeys.private_key(pair["seed"])) == pair["public_key"]
    )
    code, out, _ = run(capsys, "keygen", "--out", str(tmp_path / "s"))
    assert out.strip() == nkeys.public_of(nkeys.private_key((tmp_path / "s").read_text().strip()))


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "answer")[0] == EXIT_USAGE
    assert run(capsys, "no-such-command")[0] == EXIT_USAGE
    assert run(capsys)[0] == EXIT_USAGE
    code, out, _ = run(capsys, "--help")
    assert code == EXIT_OK and "exit codes" in out
