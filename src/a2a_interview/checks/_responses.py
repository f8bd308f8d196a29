"""Where the interview is asked and what comes back (PROFILE §3, §3b, §7): the card's
interfaces the verifier may call (:func:`find_interfaces`), a raw response
(:class:`Exchange`) and its reading as an interview result (:func:`read_result`,
:class:`ResultRead`). Pure: the driver (``verifier/procedure.py``) moves the bytes.
The names are re-exported by :mod:`a2a_interview.checks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ..declarations import interfaces
from ..errors import CanonicalizationError, IngressError, WireFormatError
from ..jcs import canonicalize
from ..models import Answer, Refusal, Source, result_from_json
from ..strictjson import JSON, JSONObject, loads
from ._findings import ABSENT, Advisory, Value

__all__ = [
    "Binding",
    "Exchange",
    "Interface",
    "ResultRead",
    "find_interfaces",
    "is_binding_answer",
    "read_result",
]


class Binding(StrEnum):
    """The bindings the interview is offered on (PROFILE §3, §3b)."""

    JSONRPC = "JSONRPC"
    HTTP_JSON = "HTTP+JSON"


# ---------------------------------------------------------------------------------------
# Interfaces


@dataclass(frozen=True, slots=True)
class Interface:
    """One interface the card declares that the interview can be asked on."""

    url: str
    binding: Binding
    protocol_version: str | None
    member: str  # the interface's pointer in the card

    @property
    def legacy(self) -> bool:
        """An A2A 0.3 interface: activate with ``X-A2A-Extensions`` too, send no
        ``A2A-Version`` (an empty version means 0.3)."""
        return self.protocol_version is not None and self.protocol_version.startswith("0.")


_TRANSPORTS: Final = {b.value: b for b in Binding}


def find_interfaces(card: JSONObject) -> tuple[list[Interface], list[Advisory]]:
    """Every JSON-RPC and HTTP+JSON interface ``card`` declares, in card order
    (:func:`~a2a_interview.declarations.interfaces` reads both card shapes). Other
    bindings (gRPC, custom URIs; PROFILE §3b: gRPC is not offered) are returned as
    advisories.
    """
    found: list[Interface] = []
    skipped: list[Advisory] = []
    for declared in interfaces(card):
        kind = _TRANSPORTS.get(declared.binding)
        if kind is None:
            skipped.append(
                Advisory(
                    "interface",
                    "binding_not_interviewed",
                    source=Source("card", declared.member),
                    detail="the interview is asked on JSONRPC and HTTP+JSON interfaces only",
                )
            )
        else:
            found.append(Interface(declared.url, kind, declared.protocol_version, declared.member))
    return found, skipped


# ---------------------------------------------------------------------------------------
# Reading one response


@dataclass(frozen=True, slots=True)
class Exchange:
    """A raw response: status, headers (names lowercased) and body bytes."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header_values(self, name: str) -> list[str]:
        lname = name.lower()
        return [v for n, v in self.headers if n == lname]


@dataclass(frozen=True, slots=True)
class ResultRead:
    """A response read as an interview result.

    ``value`` is the JSON-RPC ``result`` (or the HTTP+JSON body), :data:`ABSENT` when
    there is none, and ``canonical`` its JCS bytes (``None`` without a value); ``model``
    the answer or refusal it parses as; ``problem`` a ``(reason, detail)`` pair when
    the response is not a well-formed result; ``error_code`` the JSON-RPC error code of
    an error response.
    """

    value: Value
    model: Answer | Refusal | None
    problem: tuple[str, str] | None
    status: int
    canonical: bytes | None = None
    error_code: int | None = None

    def summary(self) -> JSON:
        """What a report shows as ``got`` for this response."""
        if self.value is not ABSENT:
            return self.value
        out: JSONObject = {"status": self.status}
        if self.error_code is not None:
            out["error"] = {"code": self.error_code}
        return out


_RESULT_ENVELOPE: Final = frozenset({"jsonrpc", "id", "result"})
_ERROR_ENVELOPE: Final = frozenset({"jsonrpc", "id", "error"})


def read_result(exchange: Exchange, binding: Binding, request_id: int | str | None) -> ResultRead:
    """Read ``exchange`` as the result of one activated interview call.

    Returns a :class:`ResultRead` whose ``problem`` is, when not ``None``:
    ``http_status`` (not 200), ``not_json`` (not strict I-JSON), ``envelope`` (not a
    JSON-RPC 2.0 response to ``request_id``), ``error_response`` (a JSON-RPC error
    where a result was due), or ``wire_format`` (neither exactly an answer nor exactly
    the refusal; the detail is the model's fixed message). Never raises.
    """

    status = exchange.status

    def bad(reason: str, detail: str, code: int | None = None) -> ResultRead:
        return ResultRead(ABSENT, None, (reason, detail), status, None, code)

    if status != 200:
        return bad("http_status", "the response status is not 200")
    try:
        parsed = loads(exchange.body)
    except IngressError as exc:
        return bad("not_json", f"the body is not strict I-JSON ({exc.code})")
    value: JSON = parsed
    if binding is Binding.JSONRPC:
        if not isinstance(parsed, dict) or parsed.get("jsonrpc") != "2.0":
            return bad("envelope", "the body is not a JSON-RPC 2.0 response")
        if parsed.keys() == _ERROR_ENVELOPE:
            error = parsed["error"]
            code = error.get("code") if isinstance(error, dict) else None
            valid = isinstance(code, int) and not isinstance(code, bool)
            return bad(
                "error_response", "a JSON-RPC error where a result was due", code if valid else None
            )
        if parsed.keys() != _RESULT_ENVELOPE or parsed["id"] != request_id:
            return bad("envelope", "the body is not a JSON-RPC 2.0 result for this request")
        value = parsed["result"]
    try:
        canonical = canonicalize(value)
    except CanonicalizationError:
        return bad("not_json", "the result has no RFC 8785 form")
    try:
        model = result_from_json(value)
    except WireFormatError as exc:
        return ResultRead(value, None, ("wire_format", str(exc)), status, canonical)
    return ResultRead(value, model, None, status, canonical)


def is_binding_answer(exchange: Exchange, binding: Binding, read: ResultRead) -> bool:
    """Whether ``exchange`` is an answer of ``binding`` at all, whatever it says: for
    JSON-RPC a JSON-RPC 2.0 response object (any status), for HTTP+JSON a JSON body.
    An HTML 404 is neither. Three that are not, in a row, abandon an interface
    (PROFILE §7); ``read`` is the exchange's :func:`read_result`, which mostly decides."""
    if read.problem is None or read.problem[0] in ("error_response", "wire_format"):
        return True
    try:
        parsed = loads(exchange.body)
    except IngressError:
        return False
    if binding is Binding.JSONRPC:
        return isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0"
    return True
