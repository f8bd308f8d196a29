"""Evidence cannot be forged (issue 8 finding 5, PROFILE §8): ``verify`` over real
loopback HTTP records ``agent.keys`` itself, and a runner holding an agent key gets a
claim whatever JWKS it pins."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from a2a_interview import nkeys, reference
from a2a_interview.cardsig import generate_key, load_private_key, public_jwk, sign_card
from a2a_interview.cli import main
from a2a_interview.record import schema, standing_reason
from agents import honest
from servers import serve

VALIDATOR = jsonschema.Draft202012Validator(schema())
FAST = ["--churn-delay", "0", "--json"]
CARD_THUMBPRINT = "snh9Wn5o_ibdcTy7ZNR1HksDAfUxtNaVBRboW6-EjrQ"  # the reference card key


def card_key_seed() -> str:
    """The card's Ed25519 signing key as an nkey seed (the agent's own key)."""
    d = reference.card_key_jwk()["d"]
    assert isinstance(d, str)
    return nkeys.encode_seed(base64.urlsafe_b64decode(d + "=" * (-len(d) % 4)))


def without_jku(origin: str) -> Any:
    """The reference agent, its card signed with no jku: no verifier can fetch its key."""

    def resign(card: dict[str, Any]) -> dict[str, Any]:
        key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
        bare = {k: v for k, v in card.items() if k != "signatures"}
        return sign_card(bare, key, kid=reference.CARD_KID, alg="EdDSA")

    return honest(origin, tamper=resign)


@pytest.fixture
def unrelated_jwks(tmp_path: Path) -> Path:
    path = tmp_path / "unrelated.jwks.json"
    path.write_text(json.dumps({"keys": [public_jwk(generate_key("EdDSA"), "other")]}))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    main(["verify", *argv, *FAST])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


@pytest.mark.parametrize("factory", [honest, without_jku], ids=["jku", "no_jku"])
def test_the_cards_own_key_as_runner_key_is_a_claim(
    factory: Any, unrelated_jwks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 8 finding 5: verify --as platform --runner-key <the card's key as an nkey
    # seed> --jwks <an unrelated JWKS> said EVIDENCE (key_unavailable, no thumbprint).
    with serve(factory) as origin:
        document = run(capsys, origin, "--as", "platform", "--runner-key", card_key_seed(),
                       "--jwks", str(unrelated_jwks))  # fmt: skip
    assert document["agent"]["card_signature"]["status"] == "key_unavailable"
    assert CARD_THUMBPRINT in document["agent"]["keys"]
    assert standing_reason(document) == ("claim", "agent_key")
    assert document["standing"] == "claim"


def test_a_proposal_key_as_runner_key_is_a_claim(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(honest) as origin:
        document = run(capsys, origin, "--as", "platform", "--runner-key",
                       reference.PROPOSAL_SEED)  # fmt: skip
    assert reference.PROPOSAL_KEY in document["agent"]["keys"]
    assert standing_reason(document) == ("claim", "agent_key")


def test_an_independent_runner_is_evidence_and_the_jwks_is_collected(
    unrelated_jwks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # PROFILE §8: keys the card's jku JWKS holds are recorded even when a JWKS is pinned.
    with serve(honest) as origin:
        document = run(capsys, origin, "--as", "platform", "--runner-key",
                       nkeys.generate_seed(), "--jwks", str(unrelated_jwks))  # fmt: skip
    assert CARD_THUMBPRINT in document["agent"]["keys"]
    assert reference.PROPOSAL_KEY in document["agent"]["keys"]
    assert len(document["agent"]["keys"]) == 3  # the card key, the proposal key, "other"
    VALIDATOR.validate(document)
    assert standing_reason(document) == ("evidence", "evidence")


def test_an_unsigned_third_party_run_is_a_claim(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(honest) as origin:
        document = run(capsys, origin)
    assert document["ran_by"]["party"] == "third_party"
    assert standing_reason(document) == ("claim", "unsigned")
