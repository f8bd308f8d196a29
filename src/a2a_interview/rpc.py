"""The interview's bindings as pure functions: request bytes in, a reply or ``None`` out.

``None`` means "not ours": the driver passes the request to the host untouched, so
everything outside the activated ``interview/`` namespace (and the host's own
``-32601`` for an interview method without activation, PROFILE §3.3) stays the host's.
Drivers (the ASGI layer, the ``a2a-sdk`` route wrapper, the proxy) only move bytes.
"""

from __future__ import annotations

import json
import re
import unicodedata
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from .cardproto import spelling
from .errors import InterviewError
from .ijson import loads
from .jcs import canonicalize
from .projection import Interview
from .spec import (
    ACCEPTED_CODINGS,
    DEFAULT_A2A_VERSION,
    EXTENSIONS_HEADER,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    MAX_SAFE_INTEGER,
    METHOD_PREFIX,
    QUESTIONS,
    RPC_INVALID_PARAMS,
    RPC_INVALID_REQUEST,
    RPC_TOO_MANY_REQUESTS,
    RPC_VERSION_NOT_SUPPORTED,
    SELECTOR_QUESTIONS,
    VERSION_HEADER,
)

# The largest body answered (docs/decisions.md D-SERVE-12): an interview call is a few
# hundred bytes. A larger activated body is still judged (PROFILE §3.9), without a parse.
MAX_REQUEST_BYTES = 64 * 1024
JSON_CONTENT_TYPE = "application/json"
_NAMESPACE = METHOD_PREFIX.encode()
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})


@dataclass(frozen=True, slots=True)
class Activation:
    """Which request headers named the interview URI (PROFILE §3.2)."""

    current: bool = False
    legacy: bool = False

    def __bool__(self) -> bool:
        return self.current or self.legacy

    def echo(self) -> tuple[tuple[str, str], ...]:
        """The response headers every activated response carries."""
        if not self:
            return ()
        if self.legacy:
            return ((EXTENSIONS_HEADER, INTERVIEW_URI), (LEGACY_EXTENSIONS_HEADER, INTERVIEW_URI))
        return ((EXTENSIONS_HEADER, INTERVIEW_URI),)


NOT_ACTIVATED = Activation()


_HEADER_NAMES = {b"a2a-extensions": 0, b"x-a2a-extensions": 1}
_VERSION_NAME = VERSION_HEADER.lower().encode()

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SLASHES = re.compile(r"/{2,}")


def _percent(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def normalize_path(path: str | bytes) -> str:
    """The path a host or intermediary may take ``path`` to mean (PROFILE §3.9).

    ``path`` is the raw request target's path, still percent-encoded (ASGI's
    ``raw_path`` without the query). Applied in this order: percent-encoded unreserved
    characters decoded and other escapes upper-cased (RFC 3986 §6.2.2.1, §6.2.2.2);
    runs of ``/`` collapsed to one; dot segments removed (RFC 3986 §5.2.4); a trailing
    ``/`` dropped (interface paths are compared without one). The result always starts
    with ``/``. Bytes outside ASCII are read as Latin-1, so no input raises.
    """
    text = path.decode("latin-1") if isinstance(path, bytes) else path
    text = _SLASHES.sub("/", _PERCENT.sub(_percent, text))
    out: list[str] = []
    for segment in text.split("/"):
        if segment == "..":
            if out:
                out.pop()
        elif segment not in (".", ""):
            out.append(segment)
    return "/" + "/".join(out)


_DECODE_ROUNDS = 4  # `%25252F` is `/` after three rounds; more is no host's reading


def path_segments(path: str | bytes) -> tuple[str, ...]:
    """The segments of ``path`` as the most lenient common host reads them (PROFILE
    §3.9), case kept; compare them with :func:`path_key`.

    ``path`` is the raw request target's path. Applied in this order: percent-escapes
    decoded until none is left (double encoding: ``%252F`` is ``/``); the path cut at
    the first NUL (``%00``); Unicode compatibility forms folded (NFKC: full-width
    ``／`` is ``/``); ``\\`` read as ``/`` (IIS); each segment cut at its first ``;``
    (path parameters: Tomcat, Jetty); trailing dots and blanks dropped from a segment
    (IIS: ``jsonrpc.`` is ``jsonrpc``); empty segments (``//``) dropped and dot
    segments removed (RFC 3986 §5.2.4). Never raises.
    """
    raw = path.encode("utf-8", "surrogateescape") if isinstance(path, str) else path
    for _ in range(_DECODE_ROUNDS):
        if b"%" not in raw:
            break
        decoded = unquote_to_bytes(raw)
        if decoded == raw:
            break
        raw = decoded
    text = raw.split(b"\x00", 1)[0].decode("utf-8", "replace")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for piece in text.replace("\\", "/").split("/"):
        segment = piece.split(";", 1)[0]
        if segment not in (".", ".."):
            segment = segment.rstrip(". ")
        if segment == "..":
            if out:
                out.pop()
        elif segment not in (".", ""):
            out.append(segment)
    return tuple(out)


def path_key(path: str | bytes | tuple[str, ...]) -> tuple[str, ...]:
    """:func:`path_segments` without case (PROFILE §3.9: hosts such as Express and
    ASP.NET match paths case-insensitively): what two paths are compared by."""
    segments = path if isinstance(path, tuple) else path_segments(path)
    return tuple(s.lower() for s in segments)


def content_codings(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, ...]:
    """The request's ``Content-Encoding`` codings in order, lower-cased, every field
    joined (RFC 9110 §8.4); ``identity`` and empty items left out."""
    out: list[str] = []
    for name, value in headers:
        if name.lower() == b"content-encoding":
            for item in value.decode("latin-1").split(","):
                coding = item.strip(" \t").lower()
                if coding and coding != "identity":
                    out.append(coding)
    return tuple(out)


def _inflate(body: bytes, coding: str, max_bytes: int) -> bytes | int:
    """One layer of ``coding`` undone, at most ``max_bytes`` out; else the refusal's
    status: 413 when it inflates past the bound, 400 when it is corrupt or truncated.
    Concatenated gzip members are read as one body (as zlib-based hosts read them);
    zlib-wrapped and raw deflate both count as ``deflate`` (hosts differ on which they
    accept)."""
    attempts = (31,) if coding != "deflate" else (15, -15)
    for wbits in attempts:
        out = bytearray()
        data = body
        try:
            while True:
                inflater = zlib.decompressobj(wbits)
                out += inflater.decompress(data, max_bytes + 1 - len(out))
                if len(out) > max_bytes:
                    return 413
                if not inflater.eof:
                    break  # truncated, or output held back at the bound
                data = inflater.unused_data
                if not data:
                    return bytes(out)
                if wbits != 31:
                    break  # bytes after a deflate stream: not a body any host reads
        except zlib.error:
            continue
    return 400


# PROFILE §3.9: why an activated request at an interview path cannot be judged.
_UNSUPPORTED = b'{"error":{"code":-32600,"message":"Content-Encoding not supported"},' \
    b'"id":null,"jsonrpc":"2.0"}'  # fmt: skip
_UNDECODABLE = b'{"error":{"code":-32600,"message":"Body not decodable"},"id":null,' \
    b'"jsonrpc":"2.0"}'  # fmt: skip
_TOO_LARGE = b'{"error":{"code":-32600,"message":"Request too large"},"id":null,' \
    b'"jsonrpc":"2.0"}'  # fmt: skip


def too_large(act: Activation) -> Reply:
    """PROFILE §3.9: an activated request at an interview path whose body is past what
    the layer reads cannot be judged, and is refused (413, with the echo)."""
    return _reply(_TOO_LARGE, act, 413)


def decoded_body(
    headers: Iterable[tuple[bytes, bytes]], body: bytes, act: Activation, max_bytes: int
) -> bytes | Reply:
    """An activated JSON-RPC body as the host would read it (PROFILE §3.9): ``body``
    itself, or with one layer of gzip or deflate (any case of the name) undone, at most
    ``max_bytes`` of it. A reply refusing the request, with the activation echo, when it
    cannot be judged: any other coding or a stack of codings (415, with
    ``Accept-Encoding``), a body that does not inflate (400), or one past ``max_bytes``
    before or after decoding (413)."""
    if len(body) > max_bytes:
        return too_large(act)
    codings = content_codings(headers)
    if not codings:
        return body
    if len(codings) > 1 or codings[0] not in ACCEPTED_CODINGS:
        refused = _reply(_UNSUPPORTED, act, 415)
        extra = (("Accept-Encoding", "gzip, deflate"),)
        return Reply(refused.status, refused.body, refused.headers + extra)
    inflated = _inflate(body, codings[0], max_bytes)
    if inflated == 413:
        return too_large(act)
    if isinstance(inflated, int):
        return _reply(_UNDECODABLE, act, 400)
    return inflated


_VERSION_TEXT = re.compile(r"v?([0-9]{1,9})(?:\.([0-9]{1,9}))?(?:\.[0-9]{1,9}){0,2}")
Version = tuple[int, int]


def parse_version(text: str) -> Version | None:
    """``Major.Minor`` of an ``A2A-Version`` value (A2A 1.0 §3.6: a patch is ignored);
    ``None`` when it does not read as a version."""
    match = _VERSION_TEXT.fullmatch(text.strip(" \t"))
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def declared_versions(card: Any, binding: str = "JSONRPC") -> frozenset[Version]:
    """The protocol versions a card's ``binding`` interfaces declare: each
    ``supportedInterfaces`` item's ``protocolVersion`` (``1.0`` when absent), and, for the
    0.3 shape (a top-level ``url``), the top-level ``protocolVersion`` (``0.3`` when
    absent) when ``url`` or an ``additionalInterfaces`` item is on ``binding``."""
    found: set[Version] = set()
    if not isinstance(card, dict):
        return frozenset()

    def add(value: Any) -> None:
        version = parse_version(value) if isinstance(value, str) else None
        if version is not None:
            found.add(version)

    items = card.get(spelling(card, "supportedInterfaces"))  # either spelling: D-VERIFY-39
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get(spelling(item, "protocolBinding")) == binding:
            add(item.get(spelling(item, "protocolVersion"), "1.0"))
    if "url" in card:
        extra = card.get("additionalInterfaces")
        transports = [card.get("preferredTransport", "JSONRPC")] + [
            i.get("transport") for i in (extra if isinstance(extra, list) else ())
            if isinstance(i, dict)
        ]  # fmt: skip
        if binding in transports:
            add(card.get("protocolVersion", DEFAULT_A2A_VERSION))
    return frozenset(found)


def negotiated_versions(card: Any, binding: str = "JSONRPC") -> frozenset[Version]:
    """The versions a layer in front of the host accepts on ``binding`` (PROFILE §3.10,
    docs/decisions.md D-CORE-15):
    those the binding's interfaces declare (:func:`declared_versions`) when the host
    negotiates, that is when some interface of the card, on any binding, declares 1.0 or
    later; otherwise (a 0.3 host, which negotiates nothing) the empty set, under which
    :func:`version_supported` refuses nothing. Never stricter than the host."""
    if not isinstance(card, dict):
        return frozenset()
    bindings = {binding, card.get("preferredTransport", "JSONRPC")}
    for member, name in (("supportedInterfaces", "protocolBinding"),
                         ("additionalInterfaces", "transport")):  # fmt: skip
        items = card.get(spelling(card, member))
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                bindings.add(item.get(spelling(item, name)))
    found = (v for b in bindings if isinstance(b, str) for v in declared_versions(card, b))
    if all(v < (1, 0) for v in found):
        return frozenset()
    return declared_versions(card, binding)


def requested_version(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The request's ``A2A-Version`` (the first field), or ``0.3`` when it is absent or
    empty (A2A 1.0 §3.6)."""
    for name, value in headers:
        if name.lower() == _VERSION_NAME:
            text = value.decode("latin-1").strip(" \t")
            return text or DEFAULT_A2A_VERSION
    return DEFAULT_A2A_VERSION


_MAJOR_MINOR = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})")


def version_supported(requested: str, versions: frozenset[Version]) -> bool:
    """Whether every common host serving ``versions`` accepts an ordinary call under
    ``requested`` (PROFILE §3.10): exactly ``Major.Minor`` (A2A 1.0 §3.6) of a declared
    version. Hosts differ beyond that (``a2a-sdk`` serves ``1.5`` and ``1.0.7`` on a 1.0
    card, ``@a2a-js/sdk`` neither), so those are refused: never an answer where a host
    would refuse. A card declaring no version refuses nothing."""
    if not versions:
        return True
    match = _MAJOR_MINOR.fullmatch(requested)
    return match is not None and (int(match.group(1)), int(match.group(2))) in versions


def version_refusal(
    headers: Iterable[tuple[bytes, bytes]],
    versions: frozenset[Version],
    reply: Reply,
    act: Activation,
    *,
    rest: bool = False,
) -> Reply:
    """``reply`` itself, or in its place the host's ``VersionNotSupportedError`` when the
    request's ``A2A-Version`` is one the host refuses (PROFILE §3.10): ``-32009`` with the
    request's id on JSON-RPC, HTTP 400 ``FAILED_PRECONDITION`` on HTTP+JSON (A2A 1.0
    §5.4). The activation echo is kept."""
    if version_supported(requested_version(headers), versions):
        return reply
    if rest:
        return _reply(REST_VERSION_NOT_SUPPORTED, act, 400)
    body = rpc_error(reply.request_id, RPC_VERSION_NOT_SUPPORTED, data=_VERSION_INFO)
    return _reply(body, act, 200, reply.request_id)


def activation(headers: Iterable[tuple[str | bytes, str | bytes]]) -> Activation:
    """Read activation from request headers: a comma-separated list, each element trimmed
    of blanks and compared exactly with the URI (PROFILE §3.2). Header names match
    case-insensitively, as HTTP requires; values never do."""
    found = [False, False]
    for raw_name, raw_value in headers:
        name = raw_name if isinstance(raw_name, bytes) else raw_name.encode("latin-1")
        which = _HEADER_NAMES.get(name.lower())
        if which is None:
            continue
        value = raw_value.decode("latin-1") if isinstance(raw_value, bytes) else raw_value
        if any(item.strip(" \t") == INTERVIEW_URI for item in value.split(",")):
            found[which] = True
    return Activation(*found)


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete HTTP response for the driver to send."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]
    request_id: Any = None  # the JSON-RPC id, for a later 429 in its place


def _reply(body: bytes, act: Activation, status: int = 200, request_id: Any = None) -> Reply:
    return Reply(status, body, (("Content-Type", JSON_CONTENT_TYPE), *act.echo()), request_id)


def _id_bytes(request_id: Any) -> bytes:
    # The JCS form of a safe integer is its decimal digits (RFC 8785 §3.2.2.3); most ids
    # are integers, and this skips the general serializer on every answer.
    if type(request_id) is int and -MAX_SAFE_INTEGER <= request_id <= MAX_SAFE_INTEGER:
        return b"%d" % request_id
    return canonicalize(request_id)


def rpc_error(request_id: Any, error: tuple[int, str], *, data: bytes | None = None) -> bytes:
    """A JSON-RPC error response with a fixed message (no request content); ``data``,
    when given, is the JCS bytes of the error's ``data`` member."""
    code, message = error
    extra = b',"data":' + data if data is not None else b""
    return b'{"error":{"code":%d%s,"message":%s},"id":%s,"jsonrpc":"2.0"}' % (
        code,
        extra,
        canonicalize(message),
        _id_bytes(request_id),
    )


# A2A 1.0 §9.5, §11.6: the ErrorInfo the SDKs attach to VersionNotSupportedError.
_ERROR_INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
               "domain": "a2a-protocol.org", "reason": "VERSION_NOT_SUPPORTED"}  # fmt: skip
_VERSION_INFO = canonicalize([_ERROR_INFO])
REST_VERSION_NOT_SUPPORTED = canonicalize({"error": {
    "code": 400, "details": [_ERROR_INFO], "message": RPC_VERSION_NOT_SUPPORTED[1],
    "status": "FAILED_PRECONDITION",
}})  # fmt: skip


def _rpc_result(request_id: Any, result: bytes) -> bytes:
    return b'{"id":%s,"jsonrpc":"2.0","result":%s}' % (_id_bytes(request_id), result)


def _valid_id(request_id: Any) -> bool:
    return request_id is None or type(request_id) in (str, int)


def _selector(question: str, params: Any) -> tuple[bool, str | None]:
    """PROFILE §3.5: (valid, skill). Omitted params read as ``{}``; ``null`` is invalid."""
    if not isinstance(params, dict):
        return False, None
    if not params:
        return True, None
    if question in SELECTOR_QUESTIONS and params.keys() == {"skill"}:
        skill = params["skill"]
        return (True, skill) if isinstance(skill, str) else (False, None)
    return False, None


def _names_namespace(item: Any) -> bool:
    return isinstance(item, dict) and str(item.get("method", "")).startswith(METHOD_PREFIX)


def _char_pattern(char: str) -> str:
    # A JSON string spells a character itself or as `\u00XX` (hex in either case);
    # `/` also as `\/`.
    code = f"{ord(char):04x}"
    hexes = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in code)
    forms = [re.escape(char), r"\\u" + hexes]
    if char == "/":
        forms.append(r"\\/")
    return "(?:" + "|".join(forms) + ")"


# The opening of a JSON string whose value begins with the namespace, in any escaping.
_NAMESPACE_STRING = '"' + "".join(_char_pattern(c) for c in METHOD_PREFIX)
_NAMESPACE_TEXT = re.compile(_NAMESPACE_STRING)
_NAMESPACE_BYTES = re.compile(_NAMESPACE_STRING.encode("ascii"))
_LITERAL = b'"' + METHOD_PREFIX.encode()


SCAN_SLICE = 512 * 1024  # what a driver scans between two turns of its event loop
_SCAN_OVERLAP = len(_NAMESPACE_STRING)  # a match begun in one slice ends in the next


def may_name_namespace(body: bytes, start: int = 0, stop: int | None = None) -> bool:
    """Whether any JSON reader could find a string beginning with ``interview/`` in
    ``body``: one linear scan, no parse (PROFILE §3.9, D-SERVE-12). ``False``
    means no reading of ``body`` names the namespace.

    ``start`` and ``stop`` bound where a match may begin, so a driver can scan a large
    body in slices (:data:`SCAN_SLICE`) between turns of its event loop. A body without
    a backslash can only spell the namespace literally (a fast substring search); UTF-16
    and UTF-32 bodies (as ``json.loads`` detects them) are scanned decoded, whole."""
    if b"\x00" in body[:4]:
        try:
            text = body.decode(json.detect_encoding(body), "replace")
        except LookupError:  # pragma: no cover - detect_encoding names known codecs
            return True
        return _NAMESPACE_TEXT.search(text) is not None
    end = len(body) if stop is None else min(len(body), stop + _SCAN_OVERLAP)
    if body.find(b"\\", start, end) < 0:
        return body.find(_LITERAL, start, end) >= 0
    return _NAMESPACE_BYTES.search(body, start, end) is not None


def _lenient_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Hosts differ on a repeated member (the last wins in Python and JavaScript, the
    # first in others): a "method" naming the namespace in any of its places counts.
    obj = dict(pairs)
    methods = [v for k, v in pairs if k == "method"]
    if len(methods) > 1:
        named = [m for m in methods if isinstance(m, str) and m.startswith(METHOD_PREFIX)]
        if named:
            obj["method"] = named[0]
    return obj


def _leniently_names_namespace(body: bytes) -> bool:
    """Whether a lenient reader could take ``body`` for an interview request (PROFILE
    §3.9): Python's ``json.loads`` of the bytes, as Starlette and the ``a2a-sdk`` read a
    body, accepts what strict I-JSON refuses (UTF-16 and UTF-32, a BOM, ``NaN``, lone
    surrogates, huge numbers, either of two equal keys). Nesting past what this reader
    can follow is not judged, and counts as naming it (a host may read deeper)."""
    try:
        request = json.loads(body, object_pairs_hook=_lenient_pairs)
    except RecursionError:
        return True
    except ValueError:
        return False
    if isinstance(request, list):
        return any(_names_namespace(item) for item in request)
    return _names_namespace(request)


def jsonrpc(
    body: bytes,
    act: Activation,
    interview: Interview,
    *,
    max_bytes: int = MAX_REQUEST_BYTES,
    scanned: bool | None = None,
) -> Reply | None:
    """Answer a JSON-RPC POST body if it is an activated interview call, else ``None``.

    ``body`` is the decoded body (:func:`decoded_body`). Returns, under activation and
    for a method in the ``interview/`` namespace:

    - the answer, or the standard refusal for a method outside ``QUESTIONS``, as ``result``
      (PROFILE §3.4, §3.6);
    - ``-32602`` for params of the wrong shape (PROFILE §3.5);
    - ``-32600`` for an envelope that is not JSON-RPC 2.0, and for a batch (an array)
      any element of which names an ``interview/`` method (PROFILE §3.9).

    A body that is not strict I-JSON is never answered, but when a lenient reader (a
    host's ``json.loads``) would read it as naming the namespace it is refused with
    ``-32600`` rather than passed on (PROFILE §3.9). A body over ``max_bytes`` is never
    parsed: when it holds a JSON string beginning with the namespace (in any escaping)
    it is refused with ``-32600``, else it is not ours (PROFILE §3.9, D-SERVE-12:
    judged at any size, in one linear scan).

    Returns ``None`` for everything else, including other bodies that are not strict
    I-JSON and interview methods without activation (the host's ``-32601``, PROFILE §3.3).
    ``scanned`` is :func:`may_name_namespace` of ``body`` when the driver has it already
    (a large body, scanned in slices).
    """
    if not act:
        return None
    # Cheap: a body without a string that begins with the namespace cannot name it, in
    # any reading; the parsed method is what counts (PROFILE §3.4).
    if not (may_name_namespace(body) if scanned is None else scanned):
        return None
    if len(body) > max_bytes:
        return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
    try:
        request = loads(body, max_bytes=max_bytes)
    except InterviewError:
        # PROFILE §3.9: what a host would read as an interview request is refused whole,
        # never passed on (its -32601 would carry no echo, PROFILE §3.4).
        if _leniently_names_namespace(body):
            return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
        return None
    if isinstance(request, list):
        # PROFILE §3.9: a batch naming the namespace anywhere is an interview request;
        # it is refused whole, never split between us and the host.
        if any(_names_namespace(item) for item in request):
            return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
        return None
    if not isinstance(request, dict):
        return None
    method = request.get("method")
    if not isinstance(method, str) or not method.startswith(METHOD_PREFIX):
        return None
    request_id = request.get("id")
    if request.get("jsonrpc") != "2.0" or not _valid_id(request_id) or request.keys() - _ENVELOPE:
        return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
    question = method[len(METHOD_PREFIX) :]
    if question not in QUESTIONS:  # interview §6 rule 1: the method set is closed
        return _reply(_rpc_result(request_id, interview.refusal), act, 200, request_id)
    valid, skill = _selector(question, request.get("params", {}))
    if not valid:
        return _reply(rpc_error(request_id, RPC_INVALID_PARAMS), act, 200, request_id)
    return _reply(_rpc_result(request_id, interview.answer(question, skill)), act, 200, request_id)


REST_INVALID = b'{"error":{"code":400,"message":"Invalid params","status":"INVALID_ARGUMENT"}}'
REST_SEGMENT = "/interview/"


def rest(
    method: str, question: str, query: bytes, act: Activation, interview: Interview
) -> Reply | None:
    """Answer ``GET {url}/interview/{question}`` (PROFILE §3b), else ``None``.

    ``question`` is the path segment after ``/interview/``, already percent-decoded;
    ``query`` is the raw query string. Returns ``None`` without activation (the host's
    own 404) and for methods other than GET; a 200 refusal for a question outside
    ``QUESTIONS``; 400 for unknown query parameters, a repeated ``skill``, or ``skill`` on a
    question that takes no selector.
    """
    if method != "GET" or not act:
        return None
    if question not in QUESTIONS:
        return _reply(interview.refusal, act)
    try:
        pairs = parse_qsl(
            query.decode("ascii"), keep_blank_values=True, strict_parsing=bool(query),
            errors="strict",
        )  # fmt: skip
    except (UnicodeDecodeError, ValueError):
        return _reply(REST_INVALID, act, 400)
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            return _reply(REST_INVALID, act, 400)
        params[name] = value
    valid, skill = _selector(question, params)
    if not valid:
        return _reply(REST_INVALID, act, 400)
    return _reply(interview.answer(question, skill), act)


REST_TOO_MANY = (
    b'{"error":{"code":429,"message":"Too many requests","status":"RESOURCE_EXHAUSTED"}}'
)


def too_many_requests(
    retry_after: int, reply: Reply, act: Activation, *, rest: bool = False
) -> Reply:
    """PROFILE §3.7: HTTP 429 with ``Retry-After`` in place of ``reply``.

    The body is the JSON-RPC error ``-32000`` carrying the request's id (on the HTTP+JSON
    binding, a fixed error object); the activation echo is kept.
    """
    body = REST_TOO_MANY if rest else rpc_error(reply.request_id, RPC_TOO_MANY_REQUESTS)
    headers = (("Content-Type", JSON_CONTENT_TYPE), ("Retry-After", str(max(1, retry_after))))
    return Reply(429, body, headers + act.echo(), reply.request_id)
