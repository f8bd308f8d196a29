"""``record show`` and ``record verify`` over real record files (PROFILE §8,
D-RECORD-7): records written by a real ``verify --record`` against the reference
agent on loopback, then edited as a forger would. Standing is recomputed offline; exit 0
evidence, 1 claim or a bad signature, 2 unreadable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import nkeys, reference
from a2a_interview.cli import main
from a2a_interview.record import sign_record
from a2a_interview.terms import sign_proposal
from agents import honest
from support.cli import run
from support.keys import card_key_seed
from support.servers import serve

STRANGER = nkeys.generate_seed()  # a platform's key: none of the agent's
SIGNED_AT = "2026-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with serve(honest) as served:
        yield served


def recorded(origin: str, path: Path, *argv: str) -> dict[str, Any]:
    """Run a real verify writing --record ``path``; the record as written."""
    code = main(["verify", origin, "--churn-delay", "0", "--record", str(path), *argv])
    assert code == 0
    document: dict[str, Any] = json.loads(path.read_bytes())
    return document


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_a_platform_record_verifies_as_evidence(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    recorded(origin, path, "--as", "platform", "--name", "Acme", "--runner-key", STRANGER)
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(path))
    assert code == 0
    assert "standing: evidence" in out and "runner signature: valid" in out
    code, out, _ = run(capsys, "record", "show", str(path))
    assert code == 0
    assert "Standing: EVIDENCE" in out and "Outcome: CONSISTENT" in out
    code, out, _ = run(capsys, "record", "verify", str(path), "--json")
    assert json.loads(out) == {
        "standing": "evidence", "reason": "evidence", "runner_signature": "valid",
        "ran_by": {"party": "platform", "name": "Acme",
                   "key": nkeys.public_of(nkeys.private_key(STRANGER))},
        "outcome": "consistent",
    }  # fmt: skip
    code, out, _ = run(capsys, "record", "show", str(path), "--json")
    shown = json.loads(out)
    assert shown["standing"] == "evidence"
    assert shown["record"] == json.loads(path.read_bytes())


def test_an_unsigned_record_is_a_claim(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    document = recorded(origin, path, "--as", "platform")
    assert document["standing"] == "claim"
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(path))
    assert code == 1 and "standing: claim (unsigned)" in out


@pytest.mark.parametrize("edit", ["standing", "outcome", "party", "keys"])
def test_an_edited_signed_record_is_a_claim(
    edit: str, origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-RECORD-7: a record edited after signing shows EVIDENCE nowhere.
    path = tmp_path / "r.json"
    document = recorded(origin, path, "--as", "self", "--runner-key", STRANGER)
    {
        "standing": lambda: document.update(standing="evidence"),
        "outcome": lambda: document.update(outcome="consistent", standing="evidence"),
        "party": lambda: document["ran_by"].update(party="third_party"),
        "keys": lambda: document["agent"].update(keys=[]),
    }[edit]()
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(write(path, document)))
    assert code == 1
    assert "standing: claim" in out
    code, out, _ = run(capsys, "record", "show", str(path))
    assert code == 0 and "Standing: CLAIM" in out and "EVIDENCE" not in out


def test_self_changed_to_third_party_and_left_unsigned_is_a_claim(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-RECORD-7: `self` changed to `third_party` and left unsigned.
    path = tmp_path / "r.json"
    document = recorded(origin, path, "--as", "self")
    document["ran_by"]["party"] = "third_party"
    document["standing"] = "evidence"
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(write(path, document)))
    assert code == 1 and "standing: claim (unsigned)" in out
    assert "Standing: CLAIM" in run(capsys, "record", "show", str(path))[1]


@pytest.mark.parametrize("seed", [card_key_seed(), reference.PROPOSAL_SEED])
def test_an_agent_key_edited_out_and_resigned_is_a_claim(
    seed: str, origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-RECORD-7: thumbprint set to null, proposal signers set to null, then
    # re-signed with the agent's key: agent.keys, written by the verifier, still names it.
    path = tmp_path / "r.json"
    document = recorded(origin, path, "--as", "platform", "--runner-key", seed)
    assert document["standing"] == "claim"
    document["agent"]["card_signature"]["thumbprint"] = None
    for run_ in document["runs"]:
        for proposal in run_["proposals"]:
            proposal["signer"] = None
    document.pop("signatures")
    forged = sign_record(document, seed)
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(write(path, forged)))
    assert code == 1
    assert "standing: claim (agent_key)" in out and "runner signature: valid" in out


def test_a_record_without_agent_keys_is_a_claim(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # PROFILE §8: "A record without agent.keys is a claim" (a record from before them).
    path = tmp_path / "r.json"
    document = recorded(origin, path, "--as", "platform")
    del document["agent"]["keys"]
    document.pop("signatures", None)
    write(path, sign_record(document, STRANGER))
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(path))
    assert code == 1 and "standing: claim (agent_keys_missing)" in out
    assert "Agent keys: not recorded" in run(capsys, "record", "show", str(path))[1]


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b'{"a": 1, "a": 2}',
        b"[]",
        b'{"format": "a2a-interview-result/2"}',
        b"\xff\xfe",
        b" " * (1 << 20) + b"{}",
    ],
    ids=["not_json", "duplicate_key", "array", "other_format", "not_utf8", "over_1_mib"],
)
@pytest.mark.parametrize("action", ["show", "verify"])
def test_an_unreadable_record_exits_2(
    content: bytes, action: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    code, out, err = run(capsys, "record", action, str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "record" in err


@pytest.mark.parametrize("action", ["show", "verify"])
def test_a_missing_record_exits_2(
    action: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "record", action, str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read record" in err


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(runs="x"),
        lambda d: d.update(ran_by=[1]),
        lambda d: d.update(agent=None),
        lambda d: d.update(checks=[]),
        lambda d: d.update(advisories={"a": 1}),
        lambda d: d.update(signatures=[{"key": 1, "sig": None}]),
        lambda d: d["runs"][0].update(conflicts=[1, None, "x"]),
        lambda d: d.update(incomplete=7, outcome=None),
    ],
)
def test_show_renders_a_malformed_record_without_a_traceback(
    mutate: Any, origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A record of the right format but hostile shape: a display shows what it can.
    path = tmp_path / "r.json"
    document = recorded(origin, path, "--as", "platform", "--runner-key", STRANGER)
    mutate(document)
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "show", str(write(path, document)))
    assert code == 0 and "Standing: CLAIM" in out
    assert run(capsys, "record", "verify", str(path))[0] == 1


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for action in ("show", "verify"):
        assert main(["record", action, "--help"]) == 0
        assert f"a2a-interview record {action} result.json" in capsys.readouterr().out


# --- with the agent's documents in hand ---------------------------------------------


def wholesale_lie(document: dict[str, Any], seed: str) -> dict[str, Any]:
    """What a runner holding an agent key can do: erase every trace of it, re-sign."""
    document["agent"]["keys"] = []
    document["agent"]["card_signature"].update(thumbprint=None, kid=None)
    for run_ in document["runs"]:
        for proposal in run_["proposals"]:
            proposal["signer"] = None
    document.pop("signatures")
    return sign_record(document, seed)


def fetch(url: str, path: Path) -> Path:
    import httpx

    path.write_bytes(httpx.get(url).content)
    return path


def test_a_wholesale_lie_is_caught_with_the_card_in_hand(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/security.md: offline, a record rewritten wholesale by an agent-key holder reads
    # as evidence; with the agent's card in hand, it is a claim again.
    seed = card_key_seed()
    path = tmp_path / "r.json"
    write(path, wholesale_lie(recorded(origin, path, "--as", "platform", "--runner-key", seed),
                              seed))  # fmt: skip
    card = fetch(origin + "/.well-known/agent-card.json", tmp_path / "card.json")
    jwks = fetch(origin + reference.JWKS_PATH, tmp_path / "jwks.json")
    capsys.readouterr()
    assert run(capsys, "record", "verify", str(path))[0] == 0  # the documented limit
    code, out, _ = run(capsys, "record", "verify", str(path), "--card", str(card))
    assert code == 1 and "standing: claim (agent_key)" in out
    assert "checked against card: the one recorded" in out
    # PROFILE §8 (amended): a JWKS alone only lists keys; with the card, the key in it
    # that verifies the card's signature counts.
    code, out, _ = run(capsys, "record", "verify", str(path), "--jwks", str(jwks))
    assert code == 0 and "do not count" in out
    code, out, _ = run(capsys, "record", "verify", str(path), "--jwks", str(jwks),
                       "--card", str(card))  # fmt: skip
    assert code == 1 and "standing: claim (agent_key)" in out


def test_a_wholesale_lie_is_caught_with_the_proposal_in_hand(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = reference.PROPOSAL_SEED
    path = tmp_path / "r.json"
    write(path, wholesale_lie(recorded(origin, path, "--as", "platform", "--runner-key", seed),
                              seed))  # fmt: skip
    doc = tmp_path / "terms.json"
    doc.write_bytes(reference.read_bytes(reference.PROPOSAL_FILES[0]))
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(path), "--proposal", str(doc), "--json")
    verdict = json.loads(out)
    assert code == 1 and (verdict["standing"], verdict["reason"]) == ("claim", "agent_key")


def test_a_document_the_card_does_not_commit_to_names_no_agent_key(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # PROFILE §8: a key that signed a document the card does not commit to is not the
    # agent's key. The platform's runner key signed some other document (anyone can get
    # a platform to sign something); handed to `record verify --proposal`, it must not
    # turn the platform's evidence into a claim. The committed proposal, re-signed by
    # the same key, does (control: the digest is what decides).
    path = tmp_path / "r.json"
    recorded(origin, path, "--as", "platform", "--runner-key", STRANGER)
    other = tmp_path / "other.json"
    document = json.loads(reference.read_bytes(reference.PROPOSAL_FILES[0]))
    document["id"] = "sow_unrelated"  # a standing proposal, but not the committed one
    other.write_text(json.dumps(sign_proposal(document, STRANGER, SIGNED_AT)))
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(path), "--proposal", str(other))
    assert code == 0 and "standing: evidence" in out
    assert "its signer does not count" in out
    code, out, _ = run(capsys, "record", "verify", str(path), "--proposal", str(other), "--json")
    assert json.loads(out)["standing"] == "evidence"


def test_an_honest_record_stays_evidence_with_the_documents_in_hand(
    origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    recorded(origin, path, "--as", "platform", "--runner-key", STRANGER)
    card = fetch(origin + "/.well-known/agent-card.json", tmp_path / "card.json")
    jwks = fetch(origin + reference.JWKS_PATH, tmp_path / "jwks.json")
    doc = tmp_path / "terms.json"
    doc.write_bytes(reference.read_bytes(reference.PROPOSAL_FILES[0]))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**json.loads(card.read_bytes()), "name": "changed"}))
    capsys.readouterr()
    code, out, _ = run(capsys, "record", "verify", str(path), "--card", str(card),
                       "--jwks", str(jwks), "--proposal", str(doc))  # fmt: skip
    assert code == 0 and "standing: evidence" in out
    code, out, _ = run(capsys, "record", "verify", str(path), "--card", str(other))
    assert code == 0 and "card: NOT the one recorded" in out


@pytest.mark.parametrize("option", ["--card", "--jwks", "--proposal"])
def test_unusable_documents_in_hand_exit_2(
    option: str, origin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    recorded(origin, path, "--as", "platform", "--runner-key", STRANGER)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{not json")
    for given in (str(bad), "/dev/zero", str(tmp_path / "missing")):
        if option == "--proposal" and given == str(bad):
            continue  # a proposal that is not JSON names no key: nothing to refuse
        capsys.readouterr()
        code, _, err = run(capsys, "record", "verify", str(path), option, given)
        assert code == 2 and len(err.strip().splitlines()) == 1
