"""Agents named by normalized card URLs (PROFILE §8, RFC 3986 §6.2.2): the one pure
normalization, property-tested; userinfo refused; a record naming a URL with userinfo
is not sane."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview.cardurl import NotAnHTTPURL, UserInfo, has_userinfo, normalize_url
from a2a_interview.record import record_sanity, standing_reason

CARD = "https://a.example/.well-known/agent-card.json"
NOW = datetime(2026, 12, 1, tzinfo=UTC)

_UNRESERVED = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
_SUB_DELIMS = "!$&'()*+,;="


def test_the_spellings_of_one_card_url_are_one_name() -> None:
    # PROFILE §8: one agent, one line. Each spelling the index showed as a line of its
    # own (//.well-known, HTTP://, ?x=1, #frag) names the one card URL.
    for spelling in [
        "https://a.example//.well-known/agent-card.json",
        "HTTP://A.EXAMPLE:80/.well-known/agent-card.json".replace("HTTP", "HTTPS").replace(
            ":80", ":443"
        ),
        "https://a.example/.well-known/agent-card.json?x=1",
        "https://a.example/.well-known/agent-card.json#frag",
        "https://a.example/.well-known/./x/../agent-card.json",
        "https://a.example:/.well-known/agent-card.json/",
        "https://a.example/%2Ewell-known/agent%2dcard.json",
        "hTTpS://a.EXAMPLE///.well-known//agent-card.json??#",
    ]:
        assert normalize_url(spelling) == CARD, spelling
    assert normalize_url("HTTP://LocalHost:80/A/%7e%2f") == "http://localhost/A/~%2F"
    assert normalize_url("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080/x"
    assert normalize_url("https://[::1]:443/") == "https://[::1]/"
    assert normalize_url("https://a.example") == "https://a.example/"
    # Case in the path is the path's: a different resource, a different name.
    assert normalize_url("https://a.example/Card.json") != normalize_url(
        "https://a.example/card.json"
    )
    # A % that begins no triplet is written %25: normalizing twice changes nothing.
    assert normalize_url("https://a.example/%2%45") == "https://a.example/%252E"


@pytest.mark.parametrize(
    "url",
    [
        "https://trusted.example:" + "x" * 1200 + "@evil.example/.well-known/agent-card.json",
        "https://user@a.example/.well-known/agent-card.json",
        "https://user:pass@a.example/",
        "https://@a.example/",
        "https://:@a.example/",
        "https://a.example@b.example:443/",
        "HTTPS://TRUSTED.EXAMPLE@evil.example",
    ],
)
def test_a_url_with_userinfo_names_no_agent(url: str) -> None:
    # PROFILE §8: userinfo hides the host a person reads; such a URL names no agent.
    assert has_userinfo(url)
    with pytest.raises(UserInfo):
        normalize_url(url)


@pytest.mark.parametrize(
    "url",
    ["ftp://a.example/", "https:///x", "https:a.example/x", "https://a.example:99999/",
     "https://a.example:8o/", "https://a b.example/", "https://a.exa\nmple/", " https://a.example/",
     "https://[::1/", "https://<x>/", "javascript://a.example/%0Aalert(1)", "a.example"],
)  # fmt: skip
def test_what_is_not_an_http_url_with_a_host_names_no_agent(url: str) -> None:
    # urlsplit would delete the line break and keep the space: refused, never reread.
    with pytest.raises(NotAnHTTPURL):
        normalize_url(url)


# --- properties -----------------------------------------------------------------------

_segment = st.text(alphabet=_UNRESERVED + _SUB_DELIMS + ":@", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)
_label = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=10)


@st.composite
def _canonical(draw: st.DrawFn) -> tuple[str, str, int | None, list[str]]:
    scheme = draw(st.sampled_from(["http", "https"]))
    host = ".".join(draw(st.lists(_label, min_size=1, max_size=3)))
    port = draw(st.one_of(st.none(), st.integers(1, 65535)))
    return scheme, host, port, draw(st.lists(_segment, max_size=5))


def _spell(draw: st.DrawFn, scheme: str, host: str, port: int | None, path: list[str]) -> str:
    """One of the many spellings RFC 3986 §6.2.2 holds equal to the canonical URL."""

    def case(text: str) -> str:
        flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
        return "".join(c.upper() if f else c for c, f in zip(text, flips, strict=True))

    def encode(segment: str) -> str:
        out = []
        for c in segment:
            if c in _UNRESERVED and draw(st.booleans()):
                out.append("%" + case(f"{ord(c):02x}"))
            else:
                out.append(c)
        return "".join(out)

    default = 80 if scheme == "http" else 443
    if port is None:
        authority = case(host) + draw(st.sampled_from(["", ":", f":{default}", f":0{default}"]))
    else:
        authority = f"{case(host)}:{port}"
    segments: list[str] = []
    for segment in path:
        segments += draw(st.sampled_from([[], [""], ["."], ["zz", ".."], ["%2E"]]))
        segments.append(encode(segment))
    spelled = case(scheme) + "://" + authority + "/" + "/".join(segments)
    spelled += draw(st.sampled_from(["", "/", "//"]))
    spelled += draw(st.sampled_from(["", "?", "?x=1", "?a=%41"]))
    return spelled + draw(st.sampled_from(["", "#", "#frag"]))


@st.composite
def _equal_pair(draw: st.DrawFn) -> tuple[str, str]:
    scheme, host, port, path = draw(_canonical())
    return _spell(draw, scheme, host, port, path), _spell(draw, scheme, host, port, path)


@settings(max_examples=300, deadline=None)
@given(_equal_pair())
def test_urls_equal_by_rfc_3986_normalize_equal(pair: tuple[str, str]) -> None:
    # PROFILE §8: two spellings of one URL (case of scheme and host, default port,
    # dot and empty segments, percent-encoding of unreserved characters and hex case,
    # query, fragment) are one agent.
    first, second = pair
    assert normalize_url(first) == normalize_url(second)


_any_url = st.one_of(
    st.text(max_size=60).map(lambda s: "https://a.example/" + s),
    st.text(alphabet="%aA/.:?#@[]-_~0123456789xX", max_size=30).map(lambda s: "http://" + s),
    st.builds(
        lambda host, rest: f"HTTPS://{host}{rest}",
        st.text(alphabet="aB%41-._~!$&'()*+,;=:[]", min_size=1, max_size=12),
        st.text(alphabet="/.%2eE0aF~", max_size=20),
    ),
)


@settings(max_examples=500, deadline=None)
@given(_any_url)
def test_normalizing_is_idempotent(url: str) -> None:
    # PROFILE §8: a name normalized names itself: never a second line for one agent.
    try:
        once = normalize_url(url)
    except (UserInfo, NotAnHTTPURL):
        return
    assert normalize_url(once) == once


# --- sanity: a URL with userinfo makes a record insane --------------------------------


def _record() -> dict[str, Any]:
    return {
        "format": "a2a-interview-result/1",
        "agent": {"url": "https://a.example/", "card_url": CARD},
        "ran_by": {"party": "third_party", "name": "n"},
        "started_at": "2026-11-29T10:00:00Z",
        "finished_at": "2026-11-29T10:00:01Z",
        "runs": [
            {
                "calls": [{"interface": "https://a.example/rpc"}],
                "proposals": [{"url": "https://a.example/p.json"}],
            }
        ],
    }


@pytest.mark.parametrize(
    ("path", "url"),
    [
        (("agent", "card_url"), "https://trusted.example:" + "x" * 1200 + "@a.example/c.json"),
        (("agent", "url"), "https://u@a.example/"),
        (("runs", 0, "calls", 0, "interface"), "https://a.example@a.example/rpc"),
        (("runs", 0, "proposals", 0, "url"), "https://u:p@a.example/p.json"),
    ],
)
def test_a_record_naming_a_url_with_userinfo_is_not_sane(path: tuple[Any, ...], url: str) -> None:
    # PROFILE §8: today `https://trusted.example:<x...>@evil.example/...` passed and sat
    # in the index as trusted.example. Every URL a record names is held to it.
    assert record_sanity(_record(), NOW) is None
    document = copy.deepcopy(_record())
    place: Any = document
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = url
    insane = record_sanity(document, NOW)
    assert insane is not None and insane.reason == "url_userinfo"
    assert "x" * 10 not in insane.detail  # fixed words, never the value
    assert standing_reason(document, now=NOW) == ("claim", "url_userinfo")


def test_a_record_whose_card_url_names_no_host_is_not_sane() -> None:
    document = _record()
    document["agent"]["card_url"] = "https:///.well-known/agent-card.json"
    insane = record_sanity(document, NOW)
    assert insane is not None and insane.reason == "url_scheme"
