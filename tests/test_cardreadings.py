"""Tests of cardreadings.py that close what mutation testing found unchecked (D-TEST-13,
bench/mutation.py). PROFILE §6.3: the readings of a card signature; a2a-sdk's
``_clean_empty`` (its nesting bound) and its 0.3 compatibility merge. Payload bytes and
JSON Pointers are written out by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_interview.card import signing_payload
from a2a_interview.card._readings import Candidate, candidates
from a2a_interview.errors import CanonicalizationError, SignatureError


def _nested(levels: int, container: str) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"d": value} if container == "object" else [value]
    return value


@pytest.mark.parametrize("container", ["object", "list"])
def test_prune_empty_nests_128_containers_and_no_more(container: str) -> None:
    # PROFILE §6.3 (prune-empty is a2a-sdk's _clean_empty): containers on the path to a
    # value are counted, the card itself the first, and at most 128 are read (a2a-sdk's
    # MAX_DEPTH); past that the card has no canonical form in this reading.
    deepest = {"x": _nested(127, container)}  # 1 + 127 containers
    payload = signing_payload(deepest, "prune-empty")
    opened = "[" if container == "list" else '{"d":'
    closed = "]" if container == "list" else "}"
    assert payload == [b'{"x":' + opened.encode() * 127 + b'"leaf"' + closed.encode() * 127 + b"}"]
    with pytest.raises(CanonicalizationError) as raised:
        signing_payload({"x": _nested(128, container)}, "prune-empty")
    assert str(raised.value) == "nesting too deep to canonicalize"


def test_an_unknown_reading_is_refused_with_its_message() -> None:
    with pytest.raises(SignatureError) as raised:
        signing_payload({}, "strict")  # type: ignore[arg-type]
    assert str(raised.value) == "unknown reading"


SDK_CARD: dict[str, Any] = {
    "name": "P",
    "supportedInterfaces": [{"url": "https://a.example/"}],
    "url": "https://a.example/",
    "securitySchemes": {
        "a/b": {"apiKeySecurityScheme": {"name": "k"}, "type": "apiKey", "name": "k"},
        "flat": {"type": "apiKey", "name": "k"},
        "s": "x",
    },
    "skills": ["x", {"id": "s", "security": [{"a": ["read"]}]}],
}


def test_the_compat_members_are_removed_only_where_the_merge_adds_them() -> None:
    # PROFILE §6.3 (a2a-sdk's 0.3 merge): the second prune-empty candidate drops the
    # top-level compat members, a skill's "security", and the flat 0.3 members beside a
    # 1.0 scheme's wrapper, each named by its JSON Pointer (RFC 6901: "/" is "~1"); a
    # scheme without a wrapper, and members that are not objects, are left as they are.
    served, stripped = candidates(SDK_CARD, "prune-empty")
    assert served == Candidate(
        b'{"name":"P","securitySchemes":{"a/b":{"apiKeySecurityScheme":{"name":"k"},'
        b'"name":"k","type":"apiKey"},"flat":{"name":"k","type":"apiKey"},"s":"x"},'
        b'"skills":["x",{"id":"s","security":[{"a":["read"]}]}],'
        b'"supportedInterfaces":[{"url":"https://a.example/"}],"url":"https://a.example/"}'
    )
    assert stripped == Candidate(
        b'{"name":"P","securitySchemes":{"a/b":{"apiKeySecurityScheme":{"name":"k"}},'
        b'"flat":{"name":"k","type":"apiKey"},"s":"x"},"skills":["x",{"id":"s"}],'
        b'"supportedInterfaces":[{"url":"https://a.example/"}]}',
        ("/url", "/skills/1/security", "/securitySchemes/a~1b/type",
         "/securitySchemes/a~1b/name"),
    )  # fmt: skip


def test_an_all_empty_proto_card_leaves_its_dropped_members_uncovered() -> None:
    # PROFILE §6.3: nothing of the card is left, so a2a-sdk signs "null" and a2a-js "{}";
    # either way the member the 1.0 messages do not define is not covered.
    card = {"name": "", "supportedInterfaces": [{"url": ""}], "x": 1}
    assert candidates(card, "proto") == [Candidate(b"null", ("/x",)), Candidate(b"{}", ("/x",))]
