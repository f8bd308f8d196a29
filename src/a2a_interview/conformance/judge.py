"""One response against its expectation: what differs, and at which level.

A call fails at the ``draft`` level when the response breaks what the interview draft
requires of every implementation (activation and the echo, the method-not-found of an
inactive call, the closure's refusal bytes, ``declared: false`` without terms, an
answer's shape or any projection whose value is not the member at its pointer). It
differs at the ``profile`` level when it is sound by the draft but not the bytes this
profile fixes (which members are projected and in which order, PROFILE §4.3; params
shapes, batches, HTTP+JSON, versions). Pure: no I/O (D-CONF-4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InterviewError
from ..jcs import canonicalize
from ..pointer import resolve
from ..spec import INTERVIEW_URI
from ..strictjson import loads
from .calls import Expect, Level

_ANSWER = frozenset({"question", "declared", "projections"})
_PREVIEW = 160


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a response is not what was expected."""

    level: Level
    check: str  # status, echo, error_code, content_type, body, answer
    detail: str


def echo_of(headers: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The names (lower-cased) of the response fields that list the interview URI."""
    found = {
        name.lower()
        for name, value in headers
        if any(item.strip(" \t") == INTERVIEW_URI for item in value.split(","))
    }
    return tuple(sorted(found))


def _preview(data: bytes) -> str:
    text = data[:_PREVIEW].decode("utf-8", "replace")
    return text + ("…" if len(data) > _PREVIEW else "")


Proposals = Mapping[tuple[str, str], Any]  # (url, digest) -> the committed document


def answer_problems(body: bytes, expected: bytes, card: Any, proposals: Proposals) -> list[str]:
    """The draft's facts about an answer (interview §5): the exact member set, the
    question and ``declared`` expected, and every projection's value equal under JCS
    to the member at its pointer in the document its source names (a proposal source
    citing a committed url and digest). Empty when the answer is sound."""
    try:
        got = loads(body)
        want = loads(expected)
    except InterviewError as exc:
        return [f"the answer is not strict I-JSON ({exc.code})"]
    if not isinstance(got, dict) or set(got) != _ANSWER:
        return ["the answer's members are not exactly question, declared, projections"]
    problems = []
    assert isinstance(want, dict)
    for name in ("question", "declared"):
        if got[name] != want[name]:
            problems.append(f"{name} is {canonicalize(got[name]).decode()}")
    projections = got["projections"]
    if not isinstance(projections, list):
        return [*problems, "projections is not an array"]
    if want["declared"] is False and projections:
        problems.append("projections where no terms are declared")
    for i, item in enumerate(projections):
        problem = _projection(item, card, proposals)
        if problem:
            problems.append(f"projection {i}: {problem}")
    return problems


def _projection(item: Any, card: Any, proposals: Proposals) -> str | None:
    if not isinstance(item, dict) or set(item) != {"source", "value"}:
        return "members are not exactly source, value"
    source = item["source"]
    if not isinstance(source, dict) or not isinstance(source.get("member"), str):
        return "source has no member pointer"
    if source.get("document") == "card" and set(source) == {"document", "member"}:
        document = card
    elif source.get("document") == "proposal" and set(source) == {
        "document", "url", "digest", "member"
    }:  # fmt: skip
        document = proposals.get((source["url"], source["digest"]))
        if document is None:
            return "cites a url and digest the card does not commit to"
    else:
        return "source is neither a card nor a proposal source"
    try:
        value = resolve(document, source["member"])
    except InterviewError:
        return f"{source['member']} does not resolve"
    if canonicalize(value) != canonicalize(item["value"]):
        return f"value is not the member at {source['member']}"
    return None


def judge(
    level: Level,
    expect: Expect,
    status: int,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    *,
    card: Any,
    proposals: Proposals,
) -> list[Problem]:
    """Every problem of one response; empty when it is what ``expect`` says.

    ``level`` is the call's own level (its rule's); a difference in an answer's exact
    bytes counts at ``expect.body_level`` when the answer is sound by the draft."""
    headers = list(headers)
    problems: list[Problem] = []
    if status != expect.status:
        problems.append(Problem(level, "status", f"HTTP {status}, expected {expect.status}"))
    echo = echo_of(headers)
    if echo != tuple(sorted(n.lower() for n in expect.echo)):
        want = ", ".join(expect.echo) or "none"
        problems.append(Problem(level, "echo", f"echo {', '.join(echo) or 'none'}, "
                                               f"expected {want}"))  # fmt: skip
    if expect.content_type is not None:
        got = next((v for n, v in headers if n.lower() == "content-type"), "")
        if got.split(";")[0].strip().lower() != expect.content_type:
            problems.append(Problem(level, "content_type", f"Content-Type {got!r}"))
    if expect.error_code is not None:
        code = _error_code(body)
        if code != expect.error_code:
            detail = f"error code {code}, expected {expect.error_code}"
            problems.append(Problem(level, "error_code", detail))
    if expect.body is None or body == expect.body:
        return problems
    if expect.body_level == "profile" and level == "draft":
        wanted = result_bytes(expect.body)
        inner = body if wanted is None else result_bytes(body)
        if inner is None:
            problems.append(Problem("draft", "answer", f"no JSON-RPC result: {_preview(body)}"))
            return problems
        found = answer_problems(inner, wanted or expect.body, card, proposals)
        if found:
            problems.extend(Problem("draft", "answer", p) for p in found)
            return problems
        detail = "sound by the draft, but not the members PROFILE §4.3 projects"
        problems.append(Problem("profile", "body", f"{detail}: {_preview(body)}"))
        return problems
    problems.append(Problem(expect.body_level if level == "profile" else level, "body",
                            f"got {_preview(body)}"))  # fmt: skip
    return problems


def result_bytes(body: bytes) -> bytes | None:
    """The ``result`` member's JCS bytes of a JSON-RPC response, else ``None``."""
    try:
        data = loads(body)
    except InterviewError:
        return None
    if isinstance(data, dict) and "result" in data and "jsonrpc" in data:
        return canonicalize(data["result"])
    return None


def _error_code(body: bytes) -> Any:
    try:
        data = loads(body)
    except InterviewError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error.get("code") if isinstance(error, dict) else None
