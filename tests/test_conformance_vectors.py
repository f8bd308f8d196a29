"""The published serving vectors (conformance/, docs/conformance.md, D-CONF-1..5).

Two halves. The committed files equal what ``conformance/generate.py`` writes from the
core, and each validates against its schema. Then the draft-level facts of every vector
are checked here without the projection code: with ``json`` and the ``rfc8785`` package
only, every projection's value is the member at its pointer (interview §5 rule 2), every
proposal source cites a committed url and a digest that is the SHA-256 of the proposal's
JCS bytes, every refusal is the standard refusal's exact bytes built here (interview §6,
PROFILE §5), every selector matches code point for code point or draws the refusal
(interview §4 rule 3), an inactive call expects the host's -32601 with no echo, an
activated one the echo (interview §3 rule 2), and terms with no entry is declared false
(interview §4 rule 4). So the vectors are not merely the code's own output.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import rfc8785

from a2a_interview.conformance.vectors import generate

ROOT = Path(__file__).resolve().parent.parent / "conformance"
SERVING = ROOT / "vectors" / "serving"
URI = "https://agentsow.com/extensions/a2a-interview/v1"
TERMS = "https://agentsow.com/extensions/a2a-terms/v1"
QUESTIONS = ("identity", "capabilities", "usage", "terms", "refusals")
FILES = sorted(p.name for p in SERVING.glob("*.json"))


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SERVING / name).read_bytes())
    return data


def _resolve(document: Any, pointer: str) -> Any:
    # RFC 6901, written out here: no code of the package.
    assert pointer == "" or pointer.startswith("/")
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(document, list):
            assert token.isdigit() and (token == "0" or not token.startswith("0"))
            document = document[int(token)]
        else:
            document = document[token]
    return document


def _jcs(value: Any) -> bytes:
    return rfc8785.dumps(value)


def _refusal(card: dict[str, Any]) -> dict[str, Any]:
    # interview §6, PROFILE §5: written out by hand.
    return {"refused": True, "reason": "out_of_scope", "detail": "no declared skill matches",
            "declared_skills": [s["id"] for s in card.get("skills", [])]}  # fmt: skip


def _entries(card: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for ext in card.get("capabilities", {}).get("extensions", []):
        if ext.get("uri") == TERMS:
            found.extend(ext.get("params", {}).get("proposals", []))
    return found


def _result(call: dict[str, Any]) -> Any:
    body = call["response"]["body"]
    data = json.loads(body)
    if call["binding"] == "JSONRPC":
        request = json.loads(call["request"]["body"])
        if "error" in data:
            return None
        assert set(data) == {"jsonrpc", "id", "result"}
        assert data["id"] == request["id"]
        assert body.encode() == _jcs(data)  # PROFILE §3.6: JCS form
        return data["result"]
    assert body.encode() == _jcs(data)
    return data


def _request(call: dict[str, Any]) -> tuple[str, Any]:
    """(question or method, skill selector or None) of a call."""
    request = call["request"]
    if call["binding"] == "JSONRPC":
        body = json.loads(request["body"])
        if isinstance(body, list):  # a batch (PROFILE §3.9)
            body = body[0]
        params = body.get("params")
        skill = params.get("skill") if isinstance(params, dict) else None
        return body["method"].removeprefix("interview/"), skill
    question = request["path"].rsplit("/interview/", 1)[1]
    return question, (call["selector"] or {}).get("skill")


def test_committed_vectors_equal_the_generator() -> None:
    """D-CONF-3: the vectors are committed data, and equal what the generator writes."""
    generated = generate()
    assert sorted(generated) == FILES
    for name, data in generated.items():
        assert (SERVING / name).read_bytes() == data, name


@pytest.mark.parametrize("name", FILES)
def test_vectors_follow_their_schema(name: str) -> None:
    """D-CONF-1: each file validates against conformance/schema (draft 0.1.1-draft)."""
    schema = json.loads((ROOT / "schema" / "serving-vectors.schema.json").read_bytes())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(_load(name), schema, cls=jsonschema.Draft202012Validator)
    ids = [c["id"] for c in _load(name)["calls"]]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", FILES)
def test_every_answer_projects_the_member_at_its_pointer(name: str) -> None:
    """interview §5 rules 1-3: exact members; each value equals the member at its pointer
    under JCS; a proposal source cites a committed url and digest (checked here with
    rfc8785 and hashlib, not the package)."""
    vector = _load(name)
    card = json.loads(vector["declarations"]["card"])
    texts = {p["url"]: p["text"] for p in vector["declarations"]["proposals"]}
    committed = {}
    for entry in _entries(card):
        document = json.loads(texts[entry["url"]])
        assert entry["digest"] == "sha256:" + hashlib.sha256(_jcs(document)).hexdigest()
        committed[entry["url"], entry["digest"]] = document
    answers = 0
    for call in vector["calls"]:
        if call["response"]["body"] is None or call["response"]["status"] != 200:
            continue
        result = _result(call)
        if result is None or "projections" not in result:
            continue
        answers += 1
        assert set(result) == {"question", "declared", "projections"}, call["id"]
        question, _ = _request(call)
        assert result["question"] == question, call["id"]
        for item in result["projections"]:
            assert set(item) == {"source", "value"}
            source = item["source"]
            if source["document"] == "card":
                assert set(source) == {"document", "member"}
                document = card
            else:
                assert set(source) == {"document", "url", "digest", "member"}
                document = committed[source["url"], source["digest"]]
            assert _jcs(_resolve(document, source["member"])) == _jcs(item["value"]), call["id"]
    assert answers >= 10


@pytest.mark.parametrize("name", FILES)
def test_selectors_match_code_point_for_code_point(name: str) -> None:
    """interview §4 rule 3, PROFILE §4.4: a selector equal to a declared id selects that
    skill (usage projects only its members); any other (case, NFC/NFD, empty, unknown)
    draws the standard refusal's exact bytes."""
    vector = _load(name)
    card = json.loads(vector["declarations"]["card"])
    ids = [s["id"] for s in card["skills"]]
    refusal = _refusal(card)
    kinds = set()
    for call in vector["calls"]:
        if call["selector"] is None or call["response"]["status"] != 200:
            continue
        question, skill = _request(call)
        kinds.add(call["selector"]["kind"])
        result = _result(call)
        assert result is not None, call["id"]
        if skill not in ids:
            assert _jcs(result) == _jcs(refusal), call["id"]
            continue
        assert result["question"] == question
        if question == "usage":
            chosen = {i for i, s in enumerate(ids) if s == skill}
            for item in result["projections"]:
                member = item["source"]["member"]
                if member.startswith("/skills/"):
                    assert int(member.split("/")[2]) in chosen, (call["id"], member)
    assert {"each", "unmatched", "case-variant"} <= kinds
    assert kinds & {"nfd-variant", "nfc-variant"}
    assert any(unicodedata.normalize("NFC", s) != unicodedata.normalize("NFD", s) for s in ids)


@pytest.mark.parametrize("name", FILES)
def test_closure_activation_and_terms_facts(name: str) -> None:
    """interview §6 rule 1 (an undefined method under activation: the refusal's exact
    bytes), §3 rule 2 (inactive: -32601, no echo; active: the echo, both names for the
    0.3 header), §4 rule 4 (no terms entry: declared false, no projections)."""
    vector = _load(name)
    card = json.loads(vector["declarations"]["card"])
    refusal = _refusal(card)
    seen = set()
    for call in vector["calls"]:
        response = call["response"]
        names = [n for n, v in call["request"]["headers"]
                 if n.lower() in ("a2a-extensions", "x-a2a-extensions")
                 and URI in [x.strip(" \t") for x in v.split(",")]]  # fmt: skip
        if not names:
            seen.add("inactive")
            assert response["echo"] == [], call["id"]
            if call["binding"] == "JSONRPC":
                assert response["error_code"] == -32601 and response["body"] is None
            else:
                assert response["status"] == 404
            continue
        assert "A2A-Extensions" in response["echo"], call["id"]
        if "X-A2A-Extensions" in names:
            seen.add("legacy")
            assert sorted(response["echo"]) == ["A2A-Extensions", "X-A2A-Extensions"]
        question, _ = _request(call)
        if question not in QUESTIONS and response["status"] == 200:
            seen.add("closure")
            assert _jcs(_result(call)) == _jcs(refusal), call["id"]
        if question == "terms" and not _entries(card) and response["status"] == 200:
            seen.add("no-terms")
            result = _result(call)
            if result is not None and "projections" in result:
                assert result == {"question": "terms", "declared": False, "projections": []}
    assert {"inactive", "legacy", "closure"} <= seen
    assert ("no-terms" in seen) == (not _entries(card))


def test_each_rule_named_by_the_brief_has_a_vector() -> None:
    """D-CONF-1: every rule family the kit promises is covered by some call."""
    ids = {c["id"].split("/")[0] for name in FILES for c in _load(name)["calls"]}
    prefixes = ("answer-", "usage-skill-", "terms-skill-", "terms-no-entry", "closure-",
                "activation-", "inactive-", "params-", "batch-", "version-", "rest-")  # fmt: skip
    for prefix in prefixes:
        assert any(i.startswith(prefix) for i in ids), prefix
    shapes = {json.loads(_load(n)["declarations"]["card"]).get("protocolVersion") for n in FILES}
    assert "0.3.0" in shapes and None in shapes  # a 0.3 card and 1.0 cards
