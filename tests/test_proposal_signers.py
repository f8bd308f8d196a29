"""Agent keys from committed proposals only (PROFILE §8): the nkey of a signer whose
signature verifies on a proposal the card commits to (its digest is the terms entry's)
is the agent's key; a key that signed a document the card does not commit to, or is
merely listed on one, is not. Over real loopback HTTP, with the real verifier."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from a2a_interview import nkeys, reference
from a2a_interview.cli import main
from a2a_interview.jcs import digest
from a2a_interview.record import committed_signers, standing_reason
from a2a_interview.spec import TERMS_URI
from a2a_interview.strictjson import loads
from a2a_interview.terms import sign_proposal
from agents import honest
from support.servers import serve

RUNNER_SEED = nkeys.generate_seed()
RUNNER = nkeys.public_of(nkeys.private_key(RUNNER_SEED))
FIRST = reference.PROPOSAL_FILES[0]


def _proposal() -> dict[str, Any]:
    document = loads(reference.read_bytes(FIRST))
    assert isinstance(document, dict)
    return document


def _bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document).encode()


def _forged_signature() -> dict[str, str]:
    """A signature item naming the runner's key over nothing it signed."""
    sig = base64.urlsafe_b64encode(bytes(64)).decode().rstrip("=")
    return {"role": "provider", "key": RUNNER, "signed_at": "2026-01-01T00:00:00Z", "sig": sig}


def test_only_a_committed_documents_verified_signers_count() -> None:
    # PROFILE §8. The runner's key listed first with a signature that does not verify,
    # then the provider's that does: only the provider counts (a key named first is not
    # a signer for being first). Another digest: nobody counts, whoever signed.
    document = _proposal()
    document["signatures"] = [_forged_signature(), *document["signatures"]]
    body = _bytes(document)
    assert committed_signers(digest(document), body) == (reference.PROPOSAL_KEY,)
    assert committed_signers("sha256:" + "0" * 64, body) == ()
    by_runner = sign_proposal(_proposal(), RUNNER_SEED, "2026-01-01T00:00:00Z")
    assert committed_signers(digest(by_runner), _bytes(by_runner)) == (RUNNER,)
    assert committed_signers("sha256:" + "0" * 64, _bytes(by_runner)) == ()
    assert committed_signers("sha256:nope", _bytes(by_runner)) == ()
    assert committed_signers(digest(by_runner), None) == ()
    assert committed_signers(digest(by_runner), b"{oops") == ()


def _run(capsys: pytest.CaptureFixture[str], factory: Any) -> dict[str, Any]:
    with serve(factory) as origin:
        main(["verify", origin, "--as", "platform", "--runner-key", RUNNER_SEED,
              "--churn-delay", "0", "--json"])  # fmt: skip
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def _terms(card: dict[str, Any]) -> list[dict[str, Any]]:
    [ext] = [e for e in card["capabilities"]["extensions"] if e["uri"] == TERMS_URI]
    entries: list[dict[str, Any]] = ext["params"]["proposals"]
    return entries


def test_a_document_the_card_does_not_commit_to_names_no_agent_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # PROFILE §8: a terms entry with a zero digest pointing at any document the
    # platform's runner key signed turned the platform's run into a claim (the signer
    # of every fetched proposal entered agent.keys).
    signed_by_runner = _bytes(sign_proposal(_proposal(), RUNNER_SEED, "2026-01-01T00:00:00Z"))

    def agent(origin: str) -> Any:
        url = f"{origin}/terms/other.sow.json"

        def commit_to_zero(card: dict[str, Any]) -> dict[str, Any]:
            entries = _terms(card)
            entries.append({**copy.deepcopy(entries[0]), "url": url,
                            "digest": "sha256:" + "0" * 64})  # fmt: skip
            return card

        files = {**reference.proposals(origin), url: signed_by_runner}
        return honest(origin, edit_card=commit_to_zero, proposals=files, self_check=False)

    document = _run(capsys, agent)
    assert RUNNER not in document["agent"]["keys"]
    [entry] = [p for p in document["runs"][0]["proposals"] if p["url"].endswith("other.sow.json")]
    assert (entry["result"], entry["signer"]) == ("digest_mismatch", None)
    committed = [p for p in document["runs"][0]["proposals"] if p["result"] == "ok"]
    assert committed and all(p["signer"] == reference.PROPOSAL_KEY for p in committed)
    assert reference.PROPOSAL_KEY in document["agent"]["keys"]
    assert standing_reason(document) == ("evidence", "evidence")


def test_a_key_listed_first_on_a_committed_proposal_is_not_a_signer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # PROFILE §8: the agent lists the platform's runner key first among a committed
    # proposal's signatures, with a signature that does not verify. Listing is not
    # signing: the key is listed only, the provider's key is the agent's, the run stays
    # evidence. (Kills "the first listed proposal key counts as a signer".)
    def agent(origin: str) -> Any:
        files = reference.proposals(origin)
        url = f"{origin}/terms/{FIRST}"
        document = loads(files[url])
        assert isinstance(document, dict)
        document["signatures"] = [_forged_signature(), *document["signatures"]]
        files[url] = _bytes(document)

        def commit(card: dict[str, Any]) -> dict[str, Any]:
            for entry in _terms(card):
                if entry["url"] == url:
                    entry["digest"] = digest(document)
            return card

        return honest(origin, edit_card=commit, proposals=files, self_check=False)

    document = _run(capsys, agent)
    [entry] = [p for p in document["runs"][0]["proposals"] if p["url"].endswith(FIRST)]
    assert entry["signer"] == reference.PROPOSAL_KEY
    assert RUNNER not in document["agent"]["keys"]
    assert RUNNER in document["agent"]["listed_keys"]
    assert reference.PROPOSAL_KEY in document["agent"]["keys"]
    assert standing_reason(document) == ("evidence", "evidence")


@pytest.mark.parametrize(
    ("result", "standing"),
    [("digest_mismatch", "evidence"), ("fetch_failed", "evidence"), ("ok", "claim"),
     ("not_standing_proposal", "claim")],
)  # fmt: skip
def test_a_signer_recorded_for_an_uncommitted_document_is_no_agent_key(
    result: str, standing: str
) -> None:
    # PROFILE §8: a reader, too, counts a recorded proposal signer only where the
    # record says the document was the one the card commits to (a record written before
    # the rule names the signer of a mismatched document).
    from a2a_interview.record import sign_record
    from support.ledger import record

    document = record(party="platform")
    document["runs"] = [{"calls": [], "conflicts": [], "proposals": [
        {"url": "https://a.example/p.json", "digest": "sha256:" + "0" * 64, "result": result,
         "signer": RUNNER}]}]  # fmt: skip
    assert standing_reason(sign_record(document, RUNNER_SEED))[0] == standing
