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
from a2a_interview.spec import TERMS_URI, ProposalFailure

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


# ---------------------------------------------------------------- closing mutation testing's gaps
# terms.py under mutation (bench/mutation.py): every member of an entry read as given,
# hostile shapes read as nothing, each failure reason on its own, the uncommitted check,
# and signing that leaves its input alone. Expectations written by hand from
# terms-extension.md §1–§6 and PROFILE §2.2; the signed vector is tests/data's.


@pytest.fixture
def proposal_document(data: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((data / "stonework-standing-proposal.json").read_bytes())
    return value


def _card(*extensions: Any) -> dict[str, Any]:
    return {"capabilities": {"extensions": list(extensions)}}


def test_an_entry_keeps_every_member_as_given() -> None:
    item = {"url": "https://a.example/p.json", "digest": "sha256:" + "0" * 64,
            "offering": "skill-a", "sow": "v1", "other": 1}  # fmt: skip
    ext = {"uri": TERMS_URI, "params": {"proposals": [item]}}
    assert terms.read_terms_entries(_card({"uri": "x"}, ext)) == [
        terms.TermsEntry(
            item["url"],
            item["digest"],
            "skill-a",
            "v1",
            "/capabilities/extensions/1/params/proposals/0",
        )
    ]


def test_members_that_are_not_strings_read_as_none() -> None:
    item = {"url": 1, "digest": ["sha256:x"], "offering": {"a": 1}, "sow": True}
    (entry,) = terms.read_terms_entries(_card({"uri": TERMS_URI, "params": {"proposals": [item]}}))
    assert (entry.url, entry.digest, entry.offering, entry.sow) == (None, None, None, None)


@pytest.mark.parametrize("card", [[], "card", None, 7, {"capabilities": []},
                                  {"capabilities": {"extensions": {}}}])  # fmt: skip
def test_a_card_of_the_wrong_shape_has_no_extensions(card: Any) -> None:
    assert terms.card_extensions(card) == []
    assert terms.read_terms_entries(card) == []


@pytest.mark.parametrize("params", [None, [], "p", {"proposals": {}}, {"proposals": None}])
def test_an_item_without_a_proposal_list_is_skipped_and_the_next_read(params: Any) -> None:
    good = {"uri": TERMS_URI, "params": {"proposals": [{"url": "u", "digest": "d"}]}}
    entries = terms.read_terms_entries(_card({"uri": TERMS_URI, "params": params}, good))
    assert [(e.url, e.member) for e in entries] == [
        ("u", "/capabilities/extensions/1/params/proposals/0")
    ]


@pytest.mark.parametrize("sig", [123, None, ["x"], "\u00e9" * 86])
def test_a_signature_that_is_not_ascii_text_is_malformed(
    proposal_document: dict[str, Any], sig: Any
) -> None:
    proposal_document["signatures"][0]["sig"] = sig
    verdict = terms.verify_proposal(
        jcs.digest(proposal_document), jcs.canonicalize(proposal_document)
    )
    assert verdict.reason is ProposalFailure.SIGNATURE_MALFORMED


@pytest.mark.parametrize("where", [0, 10, 85])
@pytest.mark.parametrize("junk", ["!!!!", "    ", "\n\n\n\n", "*.*."])
def test_a_signature_with_characters_outside_base64_is_malformed(
    proposal_document: dict[str, Any], where: int, junk: str
) -> None:
    # terms §5: padded or standard base64, nothing else (validate=True). Four junk
    # characters keep the padding arithmetic whole, so only the alphabet check refuses.
    sig = proposal_document["signatures"][0]["sig"]
    proposal_document["signatures"][0]["sig"] = sig[:where] + junk + sig[where:]
    verdict = terms.verify_proposal(
        jcs.digest(proposal_document), jcs.canonicalize(proposal_document)
    )
    assert verdict.reason is ProposalFailure.SIGNATURE_MALFORMED


@pytest.mark.parametrize("padding", ["", "=", "==", "===", "===="])
def test_trailing_padding_is_ignored_however_much(
    proposal_document: dict[str, Any], padding: str
) -> None:
    proposal_document["signatures"][0]["sig"] = (
        proposal_document["signatures"][0]["sig"].rstrip("=") + padding
    )
    assert terms.verify_proposal(
        jcs.digest(proposal_document), jcs.canonicalize(proposal_document)
    ).ok


@pytest.mark.parametrize("signatures", [{"key": "x"}, "sig", 1, True])
def test_signatures_that_are_not_a_list_are_malformed(
    proposal_document: dict[str, Any], signatures: Any
) -> None:
    proposal_document["signatures"] = signatures
    verdict = terms.verify_proposal(
        jcs.digest(proposal_document), jcs.canonicalize(proposal_document)
    )
    assert verdict.reason is ProposalFailure.SIGNATURE_MALFORMED


def test_a_verified_proposal_carries_its_document_and_signer(
    proposal_document: dict[str, Any],
) -> None:
    verdict = terms.verify_proposal(
        jcs.digest(proposal_document), jcs.canonicalize(proposal_document)
    )
    assert (verdict.ok, verdict.result, verdict.signer) == (True, "ok", PROPOSAL_KEY)
    assert verdict.document == proposal_document


def test_the_bounds_given_are_the_bounds_used(proposal_document: dict[str, Any]) -> None:
    body = jcs.canonicalize(proposal_document)
    digest = jcs.digest(proposal_document)
    assert terms.verify_proposal(digest, body, max_bytes=len(body)).ok
    small = terms.verify_proposal(digest, body, max_bytes=len(body) - 1)
    assert small.reason is ProposalFailure.NOT_JSON
    shallow = terms.verify_proposal(digest, body, max_depth=2)
    assert shallow.reason is ProposalFailure.NOT_JSON
    assert terms.verify_uncommitted(body, max_bytes=len(body) - 1).reason is (
        ProposalFailure.NOT_JSON
    )
    assert terms.verify_uncommitted(body, max_depth=2).reason is ProposalFailure.NOT_JSON


def test_verify_uncommitted_is_every_step_but_the_digest(proposal_document: dict[str, Any]) -> None:
    # terms §3 without step 3 (the publisher's check before a card commits).
    body = jcs.canonicalize(proposal_document)
    verdict = terms.verify_uncommitted(body)
    assert (verdict.ok, verdict.signer, verdict.document) == (True, PROPOSAL_KEY, proposal_document)
    assert terms.verify_uncommitted(None).reason is ProposalFailure.FETCH_FAILED
    assert terms.verify_uncommitted(b"[1]").reason is ProposalFailure.NOT_JSON
    assert terms.verify_uncommitted(b"{").reason is ProposalFailure.NOT_JSON
    unsigned = {k: v for k, v in proposal_document.items() if k != "signatures"}
    got = terms.verify_uncommitted(jcs.canonicalize(unsigned))
    assert got.reason is ProposalFailure.UNSIGNED
    proposal_document["price"] = "changed"
    tampered = terms.verify_uncommitted(jcs.canonicalize(proposal_document))
    assert tampered.reason is ProposalFailure.SIGNATURE_INVALID


def test_signing_replaces_every_signature_and_leaves_its_input_alone(
    proposal_document: dict[str, Any],
) -> None:
    before = copy.deepcopy(proposal_document)
    proposal_document["signatures"].append({"role": "client", "key": "x", "sig": "y"})
    given = copy.deepcopy(proposal_document)
    signed = terms.sign_proposal(proposal_document, PROPOSAL_SEED, "2026-08-11T09:00:00Z")
    assert proposal_document == given  # the input is untouched
    assert signed == before  # the vector's own single signature, reproduced
    signed["parties"]["provider"] = "changed"  # the copy shares nothing with the input
    assert proposal_document["parties"] == given["parties"]
    sig = signed["signatures"][0]["sig"]
    assert "=" not in sig and len(base64.urlsafe_b64decode(sig + "==")) == 64


@pytest.mark.parametrize("name", ["SIGNATURES", "XXsignaturesXX", "Signatures", "signature"])
def test_signing_keeps_every_member_but_signatures_itself(
    proposal_document: dict[str, Any], name: str
) -> None:
    # Agent SoW §6: only the member named exactly "signatures" is left out of what is
    # signed and replaced; a member whose name merely resembles it is content, kept in
    # the copy and covered by the signature (JSON names are case-sensitive, RFC 8259 §4).
    given = {**proposal_document, name: ["kept"]}
    signed = terms.sign_proposal(given, PROPOSAL_SEED, "2026-08-11T09:00:00Z")
    assert signed[name] == ["kept"]
    assert [s["role"] for s in signed["signatures"]] == ["provider"]
    assert terms.check_document(signed).reason is None  # it verifies, the member covered
    changed = {**signed, name: ["changed"]}
    assert terms.check_document(changed).reason is ProposalFailure.SIGNATURE_INVALID


def test_a_64_byte_signature_that_does_not_verify_is_invalid_not_malformed(
    proposal_document: dict[str, Any],
) -> None:
    # terms §3 step 4: well-formed (86 base64url characters, 64 bytes) but wrong is
    # signature_invalid. "X" as the last character still decodes to 64 bytes.
    proposal_document["signatures"][0]["sig"] = proposal_document["signatures"][0]["sig"][:-1] + "X"
    verdict = terms.verify_proposal(
        jcs.digest(proposal_document), jcs.canonicalize(proposal_document)
    )
    assert verdict.reason is ProposalFailure.SIGNATURE_INVALID
