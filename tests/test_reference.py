"""The bundled Stonework declarations (issue: the reference declarations)."""

from __future__ import annotations

import re

from a2a_interview import reference
from a2a_interview.card import verify_card
from a2a_interview.declarations import build, interview_entry
from a2a_interview.terms import read_terms_entries


def test_reference_card_is_what_the_demo_promises() -> None:
    card = reference.unsigned_card("http://127.0.0.1:9")
    ids = [s["id"] for s in card["skills"]]
    assert len(ids) >= 2 and not all(i.isascii() for i in ids)
    assert reference.NON_ASCII_SKILL in ids
    entry = interview_entry(card)
    assert entry is not None and entry.get("required") is not True
    entries = read_terms_entries(card)
    assert len(entries) == 2
    assert {e.url for e in entries} == set(reference.proposals("http://127.0.0.1:9"))
    assert all(i["url"].startswith("http://127.0.0.1:9/") for i in card["supportedInterfaces"])


def test_every_committed_proposal_verifies() -> None:
    # PROFILE §2.4: the reference agent's self-check passes.
    declarations = build(reference.unsigned_card(), reference.proposals())
    assert [v.result for _, v in declarations.verdicts] == ["ok", "ok"]
    assert all(v.signer == reference.PROPOSAL_KEY for _, v in declarations.verdicts)


def test_signed_card_verifies_under_served_with_its_jwks() -> None:
    origin = "http://127.0.0.1:8123"
    card = reference.signed_card(origin)
    (protected,) = [s["protected"] for s in card["signatures"]]
    report = verify_card(card, reference.jwks()["keys"])
    assert report.status == "verified" and report.reading == "served"
    assert report.kid == reference.CARD_KID
    assert report.checks[0].jku == origin + reference.JWKS_PATH
    assert protected  # a detached JWS: the payload is not carried
    tampered = {**card, "version": "9.9.9"}
    assert verify_card(tampered, reference.jwks()["keys"]).status == "invalid"


def test_test_keys_are_labelled() -> None:
    readme = reference.read_bytes("README.txt").decode()
    assert "TEST KEYS ONLY" in readme
    assert "d" not in reference.jwks()["keys"][0]  # the published set holds no secret
    assert reference.card_key_jwk()["kid"] == reference.CARD_KID
    assert "TEST-ONLY" in reference.read_bytes("README.txt").decode()


def test_the_readme_names_functions_that_exist() -> None:
    # README.txt beside the declarations is documentation of this module: every
    # `reference.NAME(` it names must be a function here.
    text = reference.read_bytes("README.txt").decode("utf-8")
    names = re.findall(r"reference\.(\w+)\(", text)
    assert names
    assert [n for n in names if not callable(getattr(reference, n, None))] == []
