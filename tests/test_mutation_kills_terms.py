"""terms.py under mutation (D-TEST-13, bench/mutation.py): every member of an entry read
as given, hostile shapes read as nothing, each failure reason on its own, the uncommitted
check, and signing that leaves its input alone. Expectations written by hand from
terms-extension.md §1–§6 and PROFILE §2.2; the signed vector is tests/data's."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import jcs, terms
from a2a_interview.reference import PROPOSAL_KEY, PROPOSAL_SEED
from a2a_interview.spec import TERMS_URI, ProposalFailure


@pytest.fixture
def document(data: Path) -> dict[str, Any]:
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
    document: dict[str, Any], sig: Any
) -> None:
    document["signatures"][0]["sig"] = sig
    verdict = terms.verify_proposal(jcs.digest(document), jcs.canonicalize(document))
    assert verdict.reason is ProposalFailure.SIGNATURE_MALFORMED


@pytest.mark.parametrize("where", [0, 10, 85])
@pytest.mark.parametrize("junk", ["!!!!", "    ", "\n\n\n\n", "*.*."])
def test_a_signature_with_characters_outside_base64_is_malformed(
    document: dict[str, Any], where: int, junk: str
) -> None:
    # terms §5: padded or standard base64, nothing else (validate=True). Four junk
    # characters keep the padding arithmetic whole, so only the alphabet check refuses.
    sig = document["signatures"][0]["sig"]
    document["signatures"][0]["sig"] = sig[:where] + junk + sig[where:]
    verdict = terms.verify_proposal(jcs.digest(document), jcs.canonicalize(document))
    assert verdict.reason is ProposalFailure.SIGNATURE_MALFORMED


@pytest.mark.parametrize("padding", ["", "=", "==", "===", "===="])
def test_trailing_padding_is_ignored_however_much(document: dict[str, Any], padding: str) -> None:
    document["signatures"][0]["sig"] = document["signatures"][0]["sig"].rstrip("=") + padding
    assert terms.verify_proposal(jcs.digest(document), jcs.canonicalize(document)).ok


@pytest.mark.parametrize("signatures", [{"key": "x"}, "sig", 1, True])
def test_signatures_that_are_not_a_list_are_malformed(
    document: dict[str, Any], signatures: Any
) -> None:
    document["signatures"] = signatures
    verdict = terms.verify_proposal(jcs.digest(document), jcs.canonicalize(document))
    assert verdict.reason is ProposalFailure.SIGNATURE_MALFORMED


def test_a_verified_proposal_carries_its_document_and_signer(document: dict[str, Any]) -> None:
    verdict = terms.verify_proposal(jcs.digest(document), jcs.canonicalize(document))
    assert (verdict.ok, verdict.result, verdict.signer) == (True, "ok", PROPOSAL_KEY)
    assert verdict.document == document


def test_the_bounds_given_are_the_bounds_used(document: dict[str, Any]) -> None:
    body = jcs.canonicalize(document)
    digest = jcs.digest(document)
    assert terms.verify_proposal(digest, body, max_bytes=len(body)).ok
    small = terms.verify_proposal(digest, body, max_bytes=len(body) - 1)
    assert small.reason is ProposalFailure.NOT_JSON
    shallow = terms.verify_proposal(digest, body, max_depth=2)
    assert shallow.reason is ProposalFailure.NOT_JSON
    assert terms.verify_uncommitted(body, max_bytes=len(body) - 1).reason is (
        ProposalFailure.NOT_JSON
    )
    assert terms.verify_uncommitted(body, max_depth=2).reason is ProposalFailure.NOT_JSON


def test_verify_uncommitted_is_every_step_but_the_digest(document: dict[str, Any]) -> None:
    # terms §3 without step 3 (the publisher's check before a card commits).
    body = jcs.canonicalize(document)
    verdict = terms.verify_uncommitted(body)
    assert (verdict.ok, verdict.signer, verdict.document) == (True, PROPOSAL_KEY, document)
    assert terms.verify_uncommitted(None).reason is ProposalFailure.FETCH_FAILED
    assert terms.verify_uncommitted(b"[1]").reason is ProposalFailure.NOT_JSON
    assert terms.verify_uncommitted(b"{").reason is ProposalFailure.NOT_JSON
    unsigned = {k: v for k, v in document.items() if k != "signatures"}
    got = terms.verify_uncommitted(jcs.canonicalize(unsigned))
    assert got.reason is ProposalFailure.UNSIGNED
    document["price"] = "changed"
    tampered = terms.verify_uncommitted(jcs.canonicalize(document))
    assert tampered.reason is ProposalFailure.SIGNATURE_INVALID


def test_signing_replaces_every_signature_and_leaves_its_input_alone(
    document: dict[str, Any],
) -> None:
    before = copy.deepcopy(document)
    document["signatures"].append({"role": "client", "key": "x", "sig": "y"})
    given = copy.deepcopy(document)
    signed = terms.sign_proposal(document, PROPOSAL_SEED, "2026-08-11T09:00:00Z")
    assert document == given  # the input is untouched
    assert signed == before  # the vector's own single signature, reproduced
    signed["parties"]["provider"] = "changed"  # the copy shares nothing with the input
    assert document["parties"] == given["parties"]
    sig = signed["signatures"][0]["sig"]
    assert "=" not in sig and len(base64.urlsafe_b64decode(sig + "==")) == 64


@pytest.mark.parametrize("name", ["SIGNATURES", "XXsignaturesXX", "Signatures", "signature"])
def test_signing_keeps_every_member_but_signatures_itself(
    document: dict[str, Any], name: str
) -> None:
    # Agent SoW §6: only the member named exactly "signatures" is left out of what is
    # signed and replaced; a member whose name merely resembles it is content, kept in
    # the copy and covered by the signature (JSON names are case-sensitive, RFC 8259 §4).
    given = {**document, name: ["kept"]}
    signed = terms.sign_proposal(given, PROPOSAL_SEED, "2026-08-11T09:00:00Z")
    assert signed[name] == ["kept"]
    assert [s["role"] for s in signed["signatures"]] == ["provider"]
    assert terms.check_document(signed).reason is None  # it verifies, the member covered
    changed = {**signed, name: ["changed"]}
    assert terms.check_document(changed).reason is ProposalFailure.SIGNATURE_INVALID


def test_a_64_byte_signature_that_does_not_verify_is_invalid_not_malformed(
    document: dict[str, Any],
) -> None:
    # terms §3 step 4: well-formed (86 base64url characters, 64 bytes) but wrong is
    # signature_invalid. "X" as the last character still decodes to 64 bytes.
    document["signatures"][0]["sig"] = document["signatures"][0]["sig"][:-1] + "X"
    verdict = terms.verify_proposal(jcs.digest(document), jcs.canonicalize(document))
    assert verdict.reason is ProposalFailure.SIGNATURE_INVALID
