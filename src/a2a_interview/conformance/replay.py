"""Verifier vectors: a verify run's exchanges recorded, and served again.

A verifier vector (``conformance/vectors/verifier/*.json``, format
``a2a-interview-conformance/verifier/1``) holds every request a verifier made of a
server and the response it got, the server's origin replaced by ``{origin}``, and the
verdict the project's verifier reached: outcome, checks, conflicts and advisories.
:class:`Replay` is an ASGI app that serves those responses again on any origin, so
another verifier can be pointed at it and its verdict compared (D-CONF-11).

A request is matched by method, target, the request fields that steer an interview
(``A2A-Extensions``, ``X-A2A-Extensions``, ``A2A-Version``) and its body with any
JSON-RPC ``id`` left out; the same request asked again gets the next recorded response,
then the last one again. A JSON-RPC response carries the id of the request it answers.
Unknown requests get 404. Pure ASGI, no framework.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from .._moved import moved_name
from ..errors import InterviewError
from ..jcs import canonicalize
from ..strictjson import loads
from .vectors import DRAFT

FORMAT: Final = "a2a-interview-conformance/verifier/1"
ORIGIN: Final = "{origin}"
STEERING: Final = ("a2a-extensions", "x-a2a-extensions", "a2a-version")
KEPT_RESPONSE: Final = ("content-type", "a2a-extensions", "x-a2a-extensions", "retry-after")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def __getattr__(name: str) -> object:  # a name of 0.6 renamed here (D-CORE-34)
    return moved_name(__name__, name)


@dataclass(frozen=True, slots=True)
class RecordedExchange:
    """One request and the response it got (text, the origin as ``{origin}``)."""

    method: str
    target: str  # path, and ?query when there is one
    headers: tuple[tuple[str, str], ...]  # the steering fields, lower-cased names
    body: str
    status: int
    response_headers: tuple[tuple[str, str], ...]
    response_body: str

    def to_json(self) -> dict[str, Any]:
        return {
            "request": {"method": self.method, "target": self.target,
                        "headers": [list(h) for h in self.headers], "body": self.body},
            "response": {"status": self.status,
                         "headers": [list(h) for h in self.response_headers],
                         "body": self.response_body},
        }  # fmt: skip


def _without_id(body: str) -> tuple[str, Any]:
    """``body`` with a JSON-RPC id left out (JCS), and that id."""
    try:
        data = loads(body.encode("utf-8"))
    except InterviewError:
        return body, None
    if isinstance(data, dict) and "id" in data:
        rest = {k: v for k, v in data.items() if k != "id"}
        return canonicalize(rest).decode("utf-8"), data["id"]
    return body, None


def key(method: str, target: str, headers: Iterable[tuple[str, str]], body: str) -> tuple[Any, ...]:
    steering = tuple(sorted((n.lower(), v) for n, v in headers if n.lower() in STEERING))
    return (method, target, steering, _without_id(body)[0])


def steering(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The request fields a recording keeps."""
    return tuple((n.lower(), v) for n, v in headers if n.lower() in STEERING)


def kept(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The response fields a recording keeps."""
    return tuple((n.lower(), v) for n, v in headers if n.lower() in KEPT_RESPONSE)


def vector_json(name: str, description: str, exchanges: Iterable[RecordedExchange],
                expected: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    return {"format": FORMAT, "draft": DRAFT, "name": name, "description": description,
            "exchanges": [e.to_json() for e in exchanges], "expected": expected}  # fmt: skip


def read(data: bytes) -> tuple[list[RecordedExchange], dict[str, Any]]:
    """A verifier vector's exchanges and expected verdict. Raises ``ValueError``."""
    try:
        doc = loads(data)
    except InterviewError as exc:
        raise ValueError(f"not strict I-JSON ({exc.code})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    try:
        exchanges = [
            RecordedExchange(e["request"]["method"], e["request"]["target"],
                     tuple((n, v) for n, v in e["request"]["headers"]), e["request"]["body"],
                     e["response"]["status"],
                     tuple((n, v) for n, v in e["response"]["headers"]),
                     e["response"]["body"])
            for e in doc["exchanges"]
        ]  # fmt: skip
        expected = dict(doc["expected"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a member is missing or malformed ({exc})") from None
    return exchanges, expected


class Replay:
    """An ASGI app serving recorded exchanges at ``origin``."""

    def __init__(self, exchanges: Iterable[RecordedExchange], origin: str) -> None:
        self.origin = origin.rstrip("/")
        self.queues: dict[tuple[Any, ...], list[RecordedExchange]] = {}
        self.asked: dict[tuple[Any, ...], int] = {}
        for e in exchanges:
            k = key(e.method, self._here(e.target), e.headers, self._here(e.body))
            self.queues.setdefault(k, []).append(e)

    def _here(self, text: str) -> str:
        return text.replace(ORIGIN, self.origin)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = scope.get("query_string", b"").decode("latin-1")
        target = scope["path"] + ("?" + query if query else "")
        headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in scope["headers"]]
        text = body.decode("utf-8", "replace")
        k = key(scope["method"], target, headers, text)
        queue = self.queues.get(k)
        if not queue:
            await _respond(send, 404, (("content-type", "application/json"),),
                           b'{"error":"not recorded"}')  # fmt: skip
            return
        n = self.asked.get(k, 0)
        self.asked[k] = n + 1
        e = queue[min(n, len(queue) - 1)]
        out = self._here(e.response_body).encode("utf-8")
        _, asked_id = _without_id(text)
        _, recorded_id = _without_id(self._here(e.body))
        if asked_id != recorded_id:
            out = _with_id(out, asked_id)
        response_headers = tuple((n_, self._here(v)) for n_, v in e.response_headers)
        await _respond(send, e.status, response_headers, out)


def _with_id(body: bytes, request_id: Any) -> bytes:
    try:
        data = loads(body)
    except InterviewError:
        return body
    if isinstance(data, dict) and "id" in data:
        data["id"] = request_id
        return canonicalize(data)
    return body


async def _respond(
    send: Send, status: int, headers: Iterable[tuple[str, str]], body: bytes
) -> None:
    raw = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in headers]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
