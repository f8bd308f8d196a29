"""Evidence cannot be forged (D-RECORD-7, PROFILE §8): ``verify`` over real
loopback HTTP records ``agent.keys`` itself, and a runner holding an agent key gets a
claim whatever JWKS it pins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from a2a_interview import nkeys, reference
from a2a_interview.card import generate_key, load_private_key, public_jwk, sign_card, thumbprint
from a2a_interview.cli import main
from a2a_interview.record import nkey_jwk, nkey_thumbprint, schema, standing_reason
from agents import honest
from support.keys import card_key_seed
from support.servers import serve

VALIDATOR = jsonschema.Draft202012Validator(schema())
FAST = ["--churn-delay", "0", "--json"]
CARD_THUMBPRINT = "snh9Wn5o_ibdcTy7ZNR1HksDAfUxtNaVBRboW6-EjrQ"  # the reference card key


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
    # D-RECORD-7: verify --as platform --runner-key <the card's key as an nkey
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
    # PROFILE §8 (amended): agent.keys holds the keys that signed (the card key, the
    # proposal key); the pinned "other" key signed nothing: it is only listed.
    assert document["agent"]["keys"] == sorted((CARD_THUMBPRINT, reference.PROPOSAL_KEY))
    other = json.loads(unrelated_jwks.read_text())["keys"][0]
    assert document["agent"]["listed_keys"] == [thumbprint(other)]
    VALIDATOR.validate(document)
    assert standing_reason(document) == ("evidence", "evidence")


def test_an_unsigned_third_party_run_is_a_claim(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(honest) as origin:
        document = run(capsys, origin)
    assert document["ran_by"]["party"] == "third_party"
    assert standing_reason(document) == ("claim", "unsigned")


@pytest.mark.parametrize("pinned", [False, True], ids=["jku", "pinned_jwks"])
def test_an_agent_listing_the_runner_key_cannot_veto_the_evidence(
    pinned: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-RECORD-8, PROFILE §8 (amended): the platform's runner key is public (it
    # is in every record). An agent whose JWKS lists it turned the platform's signed run
    # into "CLAIM (the runner key is one of the agent's own keys)". Listing a key is not
    # signing with it: the key goes to agent.listed_keys and the run stays evidence.
    seed = nkeys.generate_seed()
    runner = nkeys.public_of(nkeys.private_key(seed))

    def listing(origin: str) -> Any:
        agent = honest(origin)
        agent.listed_keys.append({**nkey_jwk(runner), "kid": "platform", "use": "sig"})
        return agent

    extra: list[str] = []
    if pinned:  # the same JWKS, runner key included, pinned by the user
        jwks = {"keys": [{k: v for k, v in reference.card_key_jwk().items() if k != "d"},
                         nkey_jwk(runner)]}  # fmt: skip
        path = tmp_path / "with-runner.jwks.json"
        path.write_text(json.dumps(jwks))
        extra = ["--jwks", str(path)]
    with serve(listing) as origin:
        document = run(capsys, origin, "--as", "platform", "--runner-key", seed, *extra)
    assert document["agent"]["card_signature"]["status"] == "verified"
    assert nkey_thumbprint(runner) not in document["agent"]["keys"]
    assert nkey_thumbprint(runner) in document["agent"]["listed_keys"]
    VALIDATOR.validate(document)
    assert standing_reason(document) == ("evidence", "evidence")
    assert document["standing"] == "evidence"
