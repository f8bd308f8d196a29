"""Terms entries, standing proposals and nkeys (terms-extension.md §1–§6)."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import jcs, nkeys, terms
from a2a_interview.errors import KeyFormatError
from a2a_interview.reference import PROPOSAL_KEY, PROPOSAL_SEED
from a2a_interview.spec import ProposalFailure

KNOWN_DIGEST = "sha256:e8bba098630d3635b0bd8479de1c1efac9dbacbe22ecace54354264ac6da5648"


@pytest.fixture
def vector_bytes(data: Path) -> bytes:
    return (data / "stonework-standing-proposal.json").read_bytes()


@pytest.fixture
def document(vector_bytes: bytes) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(vector_bytes)
    return value


def test_vector_known_answers(vector_bytes: bytes, document: dict[str, Any]) -> None:
    # terms §6: JCS length 1426, the digest, the provider signature.
    canonical = jcs.canonicalize(document)
    assert len(canonical) == 1426
    assert jcs.digest_bytes(canonical) == KNOWN_DIGEST
    verdict = terms.verify_proposal(KNOWN_DIGEST, vector_bytes)
    assert verdict.ok and verdict.result == "ok"
    assert verdict.signer == PROPOSAL_KEY


def test_vector_price_is_the_drafts_example(document: dict[str, Any]) -> None:
    # terms §6: its /price equals the draft's §5 example /price under JCS.
    example = {"arrangement": "fixed_fee", "currency": "XCR",
               "rates": [{"offering": "reconcile-statement", "per_task": 2500000}],
               "grade": "enforced"}  # fmt: skip
    assert jcs.canonicalize(document["price"]) == jcs.canonicalize(example)


def test_signing_reproduces_the_vector_signature(document: dict[str, Any]) -> None:
    # Agent SoW §6: Ed25519 is deterministic, so the same seed and time give the same bytes.
    resigned = terms.sign_proposal(document, PROPOSAL_SEED, "2026-08-11T09:00:00Z")
    assert jcs.canonicalize(resigned) == jcs.canonicalize(document)


def test_bundled_reference_proposal_is_the_vector(vector_bytes: bytes) -> None:
    from a2a_interview.reference import read_bytes

    assert read_bytes("reconcile-statement.sow.json") == vector_bytes


def _body(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _case(document: dict[str, Any], edit: Any) -> tuple[str, bytes]:
    doc = copy.deepcopy(document)
    edit(doc)
    return jcs.digest(doc), _body(doc)


def _resign(doc: dict[str, Any]) -> None:
    signed = terms.sign_proposal(doc, PROPOSAL_SEED, "2026-08-11T09:00:00Z")
    doc.clear()
    doc.update(signed)


def test_each_failure_reason(vector_bytes: bytes, document: dict[str, Any]) -> None:
    # terms §3: the closed set of reasons, each produced by its own defect.
    F = ProposalFailure
    assert terms.verify_proposal(KNOWN_DIGEST, None).reason is F.FETCH_FAILED
    assert terms.verify_proposal(KNOWN_DIGEST, b"<html>").reason is F.NOT_JSON
    assert terms.verify_proposal(KNOWN_DIGEST, b"[1]").reason is F.NOT_JSON
    assert terms.verify_proposal(KNOWN_DIGEST.upper(), vector_bytes).reason is F.DIGEST_SPELLING
    assert terms.verify_proposal(None, vector_bytes).reason is F.DIGEST_SPELLING
    other = "sha256:" + "0" * 64
    assert terms.verify_proposal(other, vector_bytes).reason is F.DIGEST_MISMATCH

    def unsigned(d: dict[str, Any]) -> None:
        del d["signatures"]

    def empty(d: dict[str, Any]) -> None:
        d["signatures"] = []

    def bad_key(d: dict[str, Any]) -> None:
        d["signatures"][0]["key"] = d["signatures"][0]["key"][:-1] + "A"

    def short_sig(d: dict[str, Any]) -> None:
        d["signatures"][0]["sig"] = d["signatures"][0]["sig"][:40]

    def tampered(d: dict[str, Any]) -> None:
        d["price"]["rates"][0]["per_task"] = 1

    def client_seat(d: dict[str, Any]) -> None:
        d["parties"]["client"] = {"owner": "someone"}
        _resign(d)

    def directed(d: dict[str, Any]) -> None:
        d["parties"]["offered_to"] = "UA..."
        _resign(d)

    def not_v1(d: dict[str, Any]) -> None:
        d["sow"] = "v2"
        _resign(d)

    def two_signatures(d: dict[str, Any]) -> None:
        d["signatures"].append(copy.deepcopy(d["signatures"][0]))

    def client_role(d: dict[str, Any]) -> None:
        d["signatures"][0]["role"] = "client"

    cases = {
        unsigned: F.UNSIGNED, empty: F.UNSIGNED, bad_key: F.SIGNATURE_MALFORMED,
        short_sig: F.SIGNATURE_MALFORMED, tampered: F.SIGNATURE_INVALID,
        client_seat: F.NOT_STANDING_PROPOSAL, directed: F.DIRECTED_ON_PUBLIC_CARD,
        not_v1: F.NOT_STANDING_PROPOSAL, two_signatures: F.NOT_STANDING_PROPOSAL,
        client_role: F.NOT_STANDING_PROPOSAL,
    }  # fmt: skip
    for edit, reason in cases.items():
        digest, body = _case(document, edit)
        verdict = terms.verify_proposal(digest, body)
        assert verdict.reason is reason, edit.__name__
        assert verdict.document is None


def test_signature_accepts_padded_and_standard_base64(document: dict[str, Any]) -> None:
    # terms §5: accept padded or standard base64 on input, exactly 64 bytes.
    raw = base64.urlsafe_b64decode(document["signatures"][0]["sig"] + "==")
    for spelling in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        doc = copy.deepcopy(document)
        doc["signatures"][0]["sig"] = spelling
        assert terms.verify_proposal(jcs.digest(doc), _body(doc)).ok


def test_read_terms_entries_in_card_order() -> None:
    # PROFILE §2.2: several items in card order, their lists concatenated.
    def item(url: str) -> dict[str, Any]:
        return {"url": url, "digest": KNOWN_DIGEST}

    card = {"capabilities": {"extensions": [
        {"uri": terms.TERMS_URI, "params": {"proposals": [item("a"), "junk", item("b")]}},
        {"uri": "https://other.example/ext"},
        {"uri": terms.TERMS_URI, "params": {"proposals": [{**item("c"), "offering": "x"}]}},
    ]}}  # fmt: skip
    entries = terms.read_terms_entries(card)
    assert [e.url for e in entries] == ["a", "b", "c"]
    assert entries[2].offering == "x"
    assert entries[1].member == "/capabilities/extensions/0/params/proposals/2"
    assert terms.read_terms_entries({"capabilities": "no"}) == []


def test_nkeys_round_trip_and_strict_decoding() -> None:
    seed = nkeys.decode_seed(PROPOSAL_SEED)
    assert nkeys.encode_seed(seed) == PROPOSAL_SEED
    public = nkeys.decode_public(PROPOSAL_KEY)
    assert nkeys.encode_public(public) == PROPOSAL_KEY
    assert nkeys.public_of(nkeys.private_key(PROPOSAL_SEED)) == PROPOSAL_KEY
    assert PROPOSAL_KEY.startswith("U") and len(PROPOSAL_KEY) == 56
    flipped = PROPOSAL_KEY[:10] + ("A" if PROPOSAL_KEY[10] != "A" else "B") + PROPOSAL_KEY[11:]
    for bad in [flipped, PROPOSAL_KEY[:-2], PROPOSAL_SEED, "U" + "!" * 55, ""]:
        with pytest.raises(KeyFormatError):
            nkeys.decode_public(bad)
    with pytest.raises(KeyFormatError):
        nkeys.decode_seed(PROPOSAL_KEY)


def test_crc16_xmodem_check_value() -> None:
    # The catalogued check value of CRC-16/XMODEM over "123456789".
    assert nkeys.crc16_xmodem(b"123456789") == 0x31C3
