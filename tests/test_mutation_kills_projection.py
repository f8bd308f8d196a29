"""projection.py under mutation (D-TEST-13, bench/mutation.py): member order by UTF-16
code units, a card without skills, proposals scoped by ``scope.offerings`` only when that
is a list, and the fixed errors. Expected member lists written by hand (interview §5,
PROFILE §4.3, §4.4; RFC 8785 §3.2.3 for the order)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import rfc8785

from a2a_interview.errors import DeclarationError
from a2a_interview.projection import CommittedProposal, Interview
from a2a_interview.terms import TermsEntry

DIGEST = "sha256:" + "ab" * 32
CARD: dict[str, Any] = {"name": "N", "skills": [{"id": "s1"}, {"id": "s2"}]}


def entry(offering: str | None = None, url: str | None = "https://a.example/p.json",
          digest: str | None = DIGEST) -> TermsEntry:  # fmt: skip
    return TermsEntry(url, digest, offering, None, "/capabilities/extensions/0/params/proposals/0")


def members(answer: bytes) -> list[str]:
    return [p["source"]["member"] for p in json.loads(answer)["projections"]]


def test_terms_members_go_in_utf16_code_unit_order() -> None:
    # PROFILE §4.3: a proposal's members in RFC 8785 order, by UTF-16 code units: a
    # character beyond the BMP (a surrogate pair, D800..) sorts before U+E000..U+FFFF,
    # though its code point is larger.
    document = {"\ue000": 1, "\U00010000": 2, "b": 3, "a": 4}
    iv = Interview(CARD, [CommittedProposal(entry(), document)])
    assert members(iv.answer("terms")) == ["/a", "/b", "/\U00010000", "/\ue000"]


def test_a_card_without_skills_has_answers_and_no_skill_ids() -> None:
    iv = Interview({"name": "N"})
    assert iv.skill_ids == ()
    assert members(iv.answer("identity")) == ["/name"]
    assert json.loads(iv.refusal)["declared_skills"] == []


@pytest.mark.parametrize("skills", [{}, "s1", 1, None])
def test_skills_that_are_not_an_array_are_a_fixed_error(skills: Any) -> None:
    with pytest.raises(DeclarationError) as caught:
        Interview({"name": "N", "skills": skills})
    assert str(caught.value) == "the card's skills member is not an array"


@pytest.mark.parametrize(("url", "digest"), [(None, DIGEST), ("https://a.example/p", None),
                                             (None, None)])  # fmt: skip
def test_a_committed_proposal_needs_url_and_digest(url: str | None, digest: str | None) -> None:
    with pytest.raises(DeclarationError) as caught:
        CommittedProposal(entry(url=url, digest=digest), {"a": 1})
    assert str(caught.value) == "a committed proposal needs its entry's url and digest"


@pytest.mark.parametrize(
    "scope",
    [
        {"offerings": "s1-and-more"},  # a string: "s1" in it is a substring, not a member
        {"offerings": {"s1": True}},
        {"offerings": None},
        "s1",
        ["s1"],
        None,
    ],
)
def test_only_a_list_of_offerings_scopes_a_proposal(scope: Any) -> None:
    # PROFILE §4.4: an entry without "offering" applies to the skills its document's
    # scope.offerings lists; anything but a list lists none.
    iv = Interview(CARD, [CommittedProposal(entry(), {"scope": scope, "price": 1})])
    assert json.loads(iv.answer("terms", "s1"))["projections"] == []
    listed = Interview(CARD, [CommittedProposal(entry(), {"scope": {"offerings": ["s1"]}})])
    assert members(listed.answer("terms", "s1")) == ["/scope"]


@pytest.mark.parametrize("skills", [["s1"], [None], [{"id": 1}], [{"name": "no id"}]])
def test_a_skill_without_a_string_id_is_a_fixed_error(skills: list[Any]) -> None:
    with pytest.raises(DeclarationError) as caught:
        Interview({"name": "N", "skills": skills})
    assert str(caught.value) == "skill 0 of the card has no string id"


@pytest.mark.parametrize("card", [[], "card", None, 1])
def test_a_card_that_is_not_an_object_is_a_fixed_error(card: Any) -> None:
    with pytest.raises(DeclarationError) as caught:
        Interview(card)
    assert str(caught.value) == "the card is not a JSON object"


def test_the_interview_keeps_the_card_its_bytes_and_digest() -> None:
    # PROFILE §1.2, §1.3: the card's JCS bytes and their sha256, by rfc8785 and hashlib.
    iv = Interview(CARD)
    assert iv.card is CARD
    assert iv.card_bytes == rfc8785.dumps(CARD)
    assert iv.card_digest == "sha256:" + hashlib.sha256(rfc8785.dumps(CARD)).hexdigest()


def test_identity_projects_the_card_signatures() -> None:
    # PROFILE §4.3: identity is name, provider, the interface URLs, version, signatures.
    signatures = [{"protected": "p", "signature": "s"}]
    iv = Interview({"name": "N", "version": "1", "signatures": signatures})
    assert members(iv.answer("identity")) == ["/name", "/version", "/signatures"]


def test_terms_without_proposals_is_declared_false() -> None:
    # interview §4 rule 4: no committed terms is "declared": false, written out.
    assert (
        Interview(CARD).answer("terms") == b'{"declared":false,"projections":[],"question":"terms"}'
    )
