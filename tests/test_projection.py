"""The projection engine (interview §4–§6; PROFILE §4–§5)."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import unicodedata
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview import jcs, pointer, reference
from a2a_interview.declarations import build
from a2a_interview.errors import DeclarationError
from a2a_interview.models import Answer, Projection, Refusal, Source, result_from_json
from a2a_interview.projection import CommittedProposal, Interview
from a2a_interview.spec import QUESTIONS, TERMS_URI, RefusalReason
from a2a_interview.strictjson import loads
from a2a_interview.terms import TermsEntry

EXAMPLE_DIGEST = "sha256:9f2c41d08a6b57e3c1d94f0b2a7e86c5d13f9a04b8e62d7c50a1f3e8b96c4d27"
EXAMPLE_URL = "https://stonework.example/terms/reconcile-statement.sow.json"

# The draft's §5 example answer and §6 refusal, as printed there (member order and all).
DRAFT_ANSWER = """{
  "question": "terms",
  "declared": true,
  "projections": [
    {
      "source": {
        "document": "proposal",
        "url": "https://stonework.example/terms/reconcile-statement.sow.json",
        "digest": "sha256:9f2c41d08a6b57e3c1d94f0b2a7e86c5d13f9a04b8e62d7c50a1f3e8b96c4d27",
        "member": "/price"
      },
      "value": {
        "arrangement": "fixed_fee",
        "currency": "XCR",
        "rates": [ { "offering": "reconcile-statement", "per_task": 2500000 } ],
        "grade": "enforced"
      }
    }
  ]
}"""
DRAFT_REFUSAL = """{
  "refused": true,
  "reason": "out_of_scope",
  "detail": "no declared skill matches",
  "declared_skills": ["reconcile-statement", "flag-exceptions"]
}"""


def entry(url: str, digest: str, offering: str | None = None) -> TermsEntry:
    return TermsEntry(url, digest, offering, None, "/capabilities/extensions/0/params/proposals/0")


def test_draft_section5_example_answer_byte_for_byte() -> None:
    # interview §5: a proposal whose only top-level member is /price projects exactly it.
    price = json.loads(DRAFT_ANSWER)["projections"][0]["value"]
    committed = CommittedProposal(entry(EXAMPLE_URL, EXAMPLE_DIGEST), {"price": price})
    interview = Interview({"name": "Stonework", "skills": []}, [committed])
    assert interview.answer("terms") == jcs.canonicalize(json.loads(DRAFT_ANSWER))


def test_draft_section6_refusal_byte_for_byte() -> None:
    # interview §6 and PROFILE §5: the refusal from the declared skill ids alone.
    card = {"skills": [{"id": "reconcile-statement"}, {"id": "flag-exceptions"}]}
    expected = jcs.canonicalize(json.loads(DRAFT_REFUSAL))
    assert expected == (
        b'{"declared_skills":["reconcile-statement","flag-exceptions"],'
        b'"detail":"no declared skill matches","reason":"out_of_scope","refused":true}'
    )
    interview = Interview(card)
    assert interview.refusal == expected
    assert interview.answer("weather") == expected  # interview §6 rule 1
    assert interview.answer("usage", "file-the-return") == expected  # interview §4 rule 3


def stonework() -> Interview:
    return build(reference.unsigned_card(), reference.proposals()).interview


def members(answer: bytes) -> list[str]:
    return [p["source"]["member"] for p in json.loads(answer)["projections"]]


def test_stonework_member_lists_and_order() -> None:
    # PROFILE §4.3, written out by hand for the reference card.
    iv = stonework()
    assert members(iv.answer("identity")) == [
        "/name", "/provider", "/supportedInterfaces/0/url", "/supportedInterfaces/1/url",
        "/version",
    ]  # fmt: skip
    assert members(iv.answer("capabilities")) == [
        "/skills/0/id", "/skills/0/description", "/skills/1/id", "/skills/1/description",
        "/skills/2/id", "/skills/2/description",
    ]  # fmt: skip
    assert members(iv.answer("usage")) == [
        "/supportedInterfaces", "/defaultInputModes", "/defaultOutputModes",
        "/skills/0/inputModes", "/skills/0/outputModes", "/skills/2/inputModes",
        "/skills/2/outputModes",
    ]  # fmt: skip
    assert members(iv.answer("usage", "flag-exceptions")) == [
        "/supportedInterfaces", "/defaultInputModes", "/defaultOutputModes",
    ]  # fmt: skip
    assert members(iv.answer("refusals")) == ["/skills/0/id", "/skills/1/id", "/skills/2/id"]
    terms = json.loads(iv.answer("terms"))
    assert [p["source"]["member"] for p in terms["projections"]][:3] == [
        "/change_control", "/confidentiality", "/disputes",
    ]  # fmt: skip
    assert len(terms["projections"]) == 2 * 16  # two proposals, sixteen members each


def test_a2a_03_card_shape() -> None:
    # PROFILE §4.3 lists the 0.3 members too; only those present are projected.
    card = {
        "name": "Old", "url": "https://old.example/rpc", "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "https://old.example/rest", "transport": "HTTP+JSON"}],
        "version": "0.9", "protocolVersion": "0.3", "defaultInputModes": ["text/plain"],
        "security": [{"oauth": ["read"]}],
        "securitySchemes": {"oauth": {"type": "oauth2"}},
        "skills": [{"id": "s", "description": None, "inputModes": ["text/plain"],
                    "security": [{"oauth": []}]}],
    }  # fmt: skip
    iv = Interview(card)
    assert members(iv.answer("identity")) == ["/name", "/url", "/version"]
    assert members(iv.answer("usage")) == [
        "/url", "/preferredTransport", "/additionalInterfaces", "/defaultInputModes",
        "/skills/0/inputModes", "/securitySchemes", "/security",
    ]  # fmt: skip
    assert members(iv.answer("refusals")) == ["/skills/0/id", "/securitySchemes", "/security"]
    # A member present with the value null is present, and projected (PROFILE §4.3).
    projections = json.loads(iv.answer("capabilities"))["projections"]
    assert projections[1] == {"source": {"document": "card", "member": "/skills/0/description"},
                              "value": None}  # fmt: skip


def test_terms_without_entry_is_declared_false() -> None:
    # interview §4 rule 4: an answer, not an error and not a blank.
    assert Interview({"skills": [{"id": "a"}]}).answer("terms") == (
        b'{"declared":false,"projections":[],"question":"terms"}'
    )


def _proposal(offerings: list[str]) -> dict[str, Any]:
    return {"sow": "v1", "scope": {"offerings": offerings}}


def test_terms_selection_rules() -> None:
    # PROFILE §4.4: offering first; else entries without offering listing the skill in
    # /scope/offerings; else declared:false.
    d = "sha256:" + "1" * 64
    proposals = [
        CommittedProposal(entry("u1", d, "a"), _proposal(["a"])),
        CommittedProposal(entry("u2", d), _proposal(["a", "b"])),
        CommittedProposal(entry("u3", d), _proposal(["b"])),
    ]
    iv = Interview({"skills": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}, proposals)

    def urls(answer: bytes) -> list[str]:
        return sorted({p["source"]["url"] for p in json.loads(answer)["projections"]})

    assert urls(iv.answer("terms", "a")) == ["u1"]
    assert urls(iv.answer("terms", "b")) == ["u2", "u3"]
    assert json.loads(iv.answer("terms", "c"))["declared"] is False
    assert urls(iv.answer("terms")) == ["u1", "u2", "u3"]
    assert iv.answer("terms", "d") == iv.refusal


def test_selectors_match_code_point_for_code_point() -> None:
    # PROFILE §4.4: no case folding, trimming or normalization.
    iv = stonework()
    nfc = reference.NON_ASCII_SKILL
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    assert iv.answer("usage", nfc) != iv.refusal
    for other in (nfd, nfc.upper(), f" {nfc}", f"{nfc}\n", "reconcile-statement "):
        assert iv.answer("usage", other) == iv.refusal
        assert iv.answer("terms", other) == iv.refusal


def test_expected_models() -> None:
    # interview §5 and §6, PROFILE §4.3 and §5: the wire models of the reference card's
    # answers, their values written out by hand from the card and the proposal files
    # (the digest by the rfc8785 package and hashlib, not by this package's jcs).
    iv = stonework()

    def card(member: str, value: Any) -> Projection:
        return Projection(Source("card", member), value)

    assert iv.expected("identity") == Answer("identity", True, (
        card("/name", "Stonework"),
        card("/provider", {"organization": "Stonework Analytics",
                           "url": "https://stonework.example"}),
        card("/supportedInterfaces/0/url", "https://stonework.example/a2a/jsonrpc"),
        card("/supportedInterfaces/1/url", "https://stonework.example/a2a/rest"),
        card("/version", "1.4.0"),
    ))  # fmt: skip
    skills = ("reconcile-statement", "flag-exceptions", "r\u00e4kna-moms")
    assert iv.expected("refusals") == Answer(
        "refusals", True, tuple(card(f"/skills/{i}/id", s) for i, s in enumerate(skills))
    )
    refusal = Refusal(skills, RefusalReason.OUT_OF_SCOPE, "no declared skill matches")
    assert iv.expected("usage", "nope") == refusal
    assert iv.expected("bogus") == refusal  # type: ignore[arg-type]
    url = "https://stonework.example/terms/flag-exceptions.sow.json"
    document = json.loads(reference.proposals()[url])
    digest = "sha256:" + hashlib.sha256(rfc8785.dumps(document)).hexdigest()
    terms = iv.expected("terms", "flag-exceptions")
    assert isinstance(terms, Answer) and (terms.question, terms.declared) == ("terms", True)
    assert list(terms.projections) == [
        Projection(Source("proposal", f"/{name}", url, digest), document[name])
        for name in sorted(document)
    ]


# -- properties ------------------------------------------------------------------------

_text = st.text(max_size=8)
_leaf = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _text
_value = st.recursive(
    _leaf, lambda v: st.lists(v, max_size=3) | st.dictionaries(_text, v, max_size=3),
    max_leaves=8,
)  # fmt: skip
_optional = st.sampled_from(["inputModes", "outputModes", "securityRequirements", "description"])
_skill = st.builds(
    lambda i, extra: {"id": i, **extra},
    st.text(max_size=6),
    st.dictionaries(_optional, _value, max_size=3),
)
_card_member = st.sampled_from([
    "name", "provider", "url", "version", "signatures", "supportedInterfaces",
    "preferredTransport", "additionalInterfaces", "defaultInputModes", "defaultOutputModes",
    "securitySchemes", "securityRequirements", "security", "description", "a/b~c",
])  # fmt: skip
_cards = st.builds(
    lambda members, skills: {**members, "skills": skills},
    st.dictionaries(_card_member, _value | st.lists(st.dictionaries(st.just("url"), _value))),
    st.lists(_skill, max_size=4),
)
_documents = st.dictionaries(st.text(max_size=6), _value, max_size=5)


@st.composite
def _declarations(draw: st.DrawFn) -> tuple[dict[str, Any], list[CommittedProposal]]:
    card = draw(_cards)
    ids = [s["id"] for s in card["skills"]] + ["elsewhere"]
    proposals = []
    for n, document in enumerate(draw(st.lists(_documents, max_size=3))):
        offering = draw(st.none() | st.sampled_from(ids))
        document["scope"] = {"offerings": draw(st.lists(st.sampled_from(ids), max_size=2))}
        proposals.append(CommittedProposal(entry(f"u{n}", jcs.digest(document), offering),
                                           document))  # fmt: skip
    return card, proposals


def _documents_of(card: dict[str, Any], proposals: list[CommittedProposal]) -> dict[Any, Any]:
    docs: dict[Any, Any] = {("card", None, None): card}
    for p in proposals:
        docs["proposal", p.entry.url, p.entry.digest] = p.document
    return docs


@settings(max_examples=300)
@given(_declarations())
def test_every_value_is_what_its_pointer_resolves_to(decl: Any) -> None:
    # interview §5 rule 2: value equals, under JCS, the value at source.member.
    card, proposals = decl
    iv = Interview(card, proposals)
    docs = _documents_of(card, proposals)
    for question, skill in iv.selectors():
        result = result_from_json(loads(iv.answer(question, skill)))
        assert isinstance(result, Answer)
        for projection in result.projections:
            s = projection.source
            resolved = pointer.resolve(docs[s.document, s.url, s.digest], s.member)
            assert jcs.canonicalize(resolved) == jcs.canonicalize(projection.value)


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@settings(max_examples=200)
@given(_declarations(), st.randoms())
def test_answers_are_deterministic(decl: Any, rng: random.Random) -> None:
    # interview §4 rule 1: two interviews of an unchanged agent return identical answers,
    # whatever order the documents' members arrived in.
    card, proposals = decl
    first = Interview(card, proposals)
    again = Interview(
        _shuffled(copy.deepcopy(card), rng),
        [CommittedProposal(p.entry, _shuffled(p.document, rng)) for p in proposals],
    )
    assert list(first.selectors()) == list(again.selectors())
    for question, skill in first.selectors():
        assert first.answer(question, skill) == again.answer(question, skill)


@settings(max_examples=200)
@given(_declarations(), st.text(), st.sampled_from([*QUESTIONS, "bogus", "identity "]))
def test_refusals_carry_nothing_from_the_request(decl: Any, selector: str, question: str) -> None:
    # interview §6 rule 3: the refusal is assembled from declared ids alone, so every
    # unmatched request gets the same bytes, whatever it said.
    card, proposals = decl
    iv = Interview(card, proposals)
    if selector in iv.skill_ids:
        return
    assert iv.answer(question, selector) == iv.refusal
    assert iv.refusal == Refusal(tuple(s["id"] for s in card["skills"])).to_bytes()


def test_terms_entries_must_name_the_card_extension() -> None:
    assert TERMS_URI.endswith("/a2a-terms/v1")


# ---------------------------------------------------------------- closing mutation testing's gaps
# projection.py under mutation (bench/mutation.py): member order by UTF-16 code units, a
# card without skills, proposals scoped by ``scope.offerings`` only when that is a list,
# and the fixed errors. Expected member lists written by hand (interview §5, PROFILE §4.3,
# §4.4; RFC 8785 §3.2.3 for the order).


DIGEST = "sha256:" + "ab" * 32
CARD: dict[str, Any] = {"name": "N", "skills": [{"id": "s1"}, {"id": "s2"}]}


def entry_with(offering: str | None = None, url: str | None = "https://a.example/p.json",
          digest: str | None = DIGEST) -> TermsEntry:  # fmt: skip
    return TermsEntry(url, digest, offering, None, "/capabilities/extensions/0/params/proposals/0")


def test_terms_members_go_in_utf16_code_unit_order() -> None:
    # PROFILE §4.3: a proposal's members in RFC 8785 order, by UTF-16 code units: a
    # character beyond the BMP (a surrogate pair, D800..) sorts before U+E000..U+FFFF,
    # though its code point is larger.
    document = {"\ue000": 1, "\U00010000": 2, "b": 3, "a": 4}
    iv = Interview(CARD, [CommittedProposal(entry_with(), document)])
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
        CommittedProposal(entry_with(url=url, digest=digest), {"a": 1})
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
    iv = Interview(CARD, [CommittedProposal(entry_with(), {"scope": scope, "price": 1})])
    assert json.loads(iv.answer("terms", "s1"))["projections"] == []
    listed = Interview(CARD, [CommittedProposal(entry_with(), {"scope": {"offerings": ["s1"]}})])
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
