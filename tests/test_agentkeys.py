"""agentkeys.py under mutation (D-TEST-13, bench/mutation.py): the keys a record names
for the agent (PROFILE §8: ``agent.keys`` are keys that verifiably signed for it).
Proposals are the reference agent's, signed by its published proposal key."""

from __future__ import annotations

from a2a_interview import reference
from a2a_interview.card import CardSignatureReport, SignatureCheck
from a2a_interview.record import proposal_signer, verified_key_ids


def test_the_proposal_signer_is_the_key_whose_signature_verifies() -> None:
    # terms §3 steps 4-5 (whatever digest a card commits to), within the byte bound.
    body = next(iter(reference.proposals().values()))
    assert proposal_signer(body) == reference.PROPOSAL_KEY
    assert proposal_signer(body, max_bytes=len(body)) == reference.PROPOSAL_KEY
    assert proposal_signer(body, max_bytes=len(body) - 1) is None
    assert proposal_signer(None) is None
    assert proposal_signer(b'{"signatures": []}') is None


def test_only_keys_that_verified_are_agent_keys() -> None:
    # PROFILE §8 (amended, D-RECORD-8): agent.keys holds the thumbprints of keys
    # that verified a card signature; a check that did not verify names no agent key,
    # whatever thumbprint it carries.
    def check(index: int, status: str, thumbprint: str | None) -> SignatureCheck:
        return SignatureCheck(index, "EdDSA", None, None, status, thumbprint=thumbprint)  # type: ignore[arg-type]

    report = CardSignatureReport(
        "verified",
        checks=(check(0, "invalid", "T-bad"), check(1, "verified", "T-b"),
                check(2, "verified", "T-a"), check(3, "verified", None),
                check(4, "key_unavailable", "T-c"), check(5, "verified", "T-a")),
    )  # fmt: skip
    assert verified_key_ids(report) == ("T-a", "T-b")
    assert verified_key_ids(CardSignatureReport("unsigned")) == ()
