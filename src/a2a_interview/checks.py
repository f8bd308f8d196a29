"""The verifier's checks (PROFILE §7) as pure functions over values already fetched.

Nothing here does I/O: the driver (``verifier/procedure.py``) fetches the card, the proposals and
every response, and hands this module parsed documents and raw ``(status, headers,
body)`` exchanges. Each function returns values: :class:`Conflict` (a disagreement
between the agent and its declarations, PROFILE §7) or :class:`Advisory` (a finding that
is not a conflict: coverage, an unsigned card, loopback HTTP, a proposal that failed).

The check codes, in the order a report lists them::

    card_fetch        the card was read as strict I-JSON            (no conflict: unreachable)
    card_signature    A2A §8.4 / PROFILE §6                          conflict when invalid
    declaration       interview §3 rule 1: required is not true      conflict
    inactive_probe    PROFILE §7: -32601 or 404 without activation; a result is a conflict,
                      another error an advisory
    activation_echo   PROFILE §3.2: the response names the URI
    answer_shape      interview §5 / PROFILE §4.1: exact members, well-formed sources
    determinism       interview §4 rule 1: identical JCS bytes on a second ask
                      (and across the card's interfaces)
    projection        interview §7: the diff, per projection
    terms_declared    interview §4 rule 4 / PROFILE §7
    closure_method    interview §6 rule 1: an undefined method gets the refusal
    closure_selector  interview §4 rule 3: an unmatched selector gets the refusal
    coverage          advisory only: members PROFILE §4.3 projects that the answer omits

No message built here interpolates anything a peer sent: ``detail`` strings are fixed,
and peer values travel only as data in ``expected``/``got``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Final, Literal, cast

from . import pointer
from .declarations import interfaces
from .errors import CanonicalizationError, IngressError, PointerError, WireFormatError
from .ijson import JSON, JSONObject, loads
from .jcs import canonicalize, digest_bytes
from .models import Answer, Projection, Refusal, Source, result_from_json
from .projection import CommittedProposal, Interview
from .spec import (
    EXTENSIONS_HEADER,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    METHOD_PREFIX,
    RPC_METHOD_NOT_FOUND,
    Question,
)
from .terms import ProposalVerdict, TermsEntry, card_extensions, terms_extensions

__all__ = [
    "ABSENT",
    "CHECKS",
    "Advisory",
    "Binding",
    "Check",
    "CheckStatus",
    "Conflict",
    "Declared",
    "Exchange",
    "Interface",
    "Outcome",
    "ResultRead",
    "Where",
    "check_answer",
    "check_card_signature",
    "check_closure",
    "check_declaration",
    "check_determinism",
    "check_echo",
    "check_inactive",
    "check_interfaces_agree",
    "check_terms_declared",
    "coverage",
    "derive_outcome",
    "diff_answer",
    "find_interfaces",
    "is_binding_answer",
    "no_match_selector",
    "overall_statuses",
    "read_result",
    "run_statuses",
]


class Check(StrEnum):
    """The check codes of PROFILE §7, in report order."""

    card_fetch = "card_fetch"
    card_signature = "card_signature"
    declaration = "declaration"
    inactive_probe = "inactive_probe"
    activation_echo = "activation_echo"
    answer_shape = "answer_shape"
    determinism = "determinism"
    projection = "projection"
    terms_declared = "terms_declared"
    closure_method = "closure_method"
    closure_selector = "closure_selector"
    coverage = "coverage"


CHECKS: Final[tuple[Check, ...]] = tuple(Check)


class Outcome(StrEnum):
    """A result's outcome (PROFILE §7, §8)."""

    consistent = "consistent"
    churn = "churn"
    non_conformant = "non_conformant"
    not_offered = "not_offered"
    unreachable = "unreachable"


class CheckStatus(StrEnum):
    """How one check came out. ``churn`` only appears across runs (a conflict that did
    not survive the re-run); ``advisory`` means advisories but no conflict."""

    passed = "passed"
    failed = "failed"
    churn = "churn"
    advisory = "advisory"
    skipped = "skipped"


class Binding(StrEnum):
    """The bindings the interview is offered on (PROFILE §3, §3b)."""

    JSONRPC = "JSONRPC"
    HTTP_JSON = "HTTP+JSON"


class _Absent(Enum):
    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent.ABSENT
"""Marks ``expected``/``got`` as not applying (``None`` is the JSON value null)."""

Value = JSON | Literal[_Absent.ABSENT]


# ---------------------------------------------------------------------------------------
# Findings


@dataclass(frozen=True, slots=True)
class Where:
    """The call a finding belongs to: interface url, question (without ``interview/``)
    and skill selector, each ``None`` when it does not apply."""

    interface: str | None = None
    question: str | None = None
    skill: str | None = None


NOWHERE: Final = Where()


def _locate(where: Where, source: Source | None) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    if where.interface is not None:
        out["interface"] = where.interface
    if where.question is not None:
        out["question"] = where.question
    if where.skill is not None:
        out["skill"] = where.skill
    if source is not None:
        out["source"] = source.to_json()
    return out


@dataclass(frozen=True, slots=True)
class Conflict:
    """One disagreement between the agent and its declarations (PROFILE §7, §8).

    ``check`` is the code it is reported under; ``reason`` a fixed short code saying
    how it failed; ``source`` names the declared document and member where one applies
    (its ``member`` is the pointer); ``expected``/``got`` are JSON values or
    :data:`ABSENT`; ``detail`` is fixed text, never peer content.
    """

    check: Check
    reason: str
    where: Where = NOWHERE
    source: Source | None = None
    expected: Value = ABSENT
    got: Value = ABSENT
    detail: str | None = None

    @property
    def question(self) -> str | None:
        return self.where.question

    @property
    def member(self) -> str | None:
        return self.source.member if self.source is not None else None

    @property
    def key(self) -> tuple[object, ...]:
        """The identity PROFILE §7 compares across runs: (check, question, source,
        member), the question refined by the interface and selector it was asked on
        (``where``), the member carried by ``source``."""
        return (self.check, self.where, self.source)

    def to_json(self) -> JSONObject:
        out: JSONObject = {"check": str(self.check), "reason": self.reason}
        out.update(_locate(self.where, self.source))
        if self.expected is not ABSENT:
            out["expected"] = self.expected
        if self.got is not ABSENT:
            out["got"] = self.got
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class Advisory:
    """A finding that is never a conflict (PROFILE §7 coverage, §8 advisories).

    ``code`` is ``coverage``, ``card_signature``, ``transport``, ``terms``,
    ``interface``, ``inactive_probe`` or ``card_variants``; ``reason`` a fixed short
    code; ``value`` optional JSON data.
    """

    code: str
    reason: str
    where: Where = NOWHERE
    source: Source | None = None
    value: Value = ABSENT
    detail: str | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"code": str(self.code), "reason": self.reason}
        out.update(_locate(self.where, self.source))
        if self.value is not ABSENT:
            out["value"] = self.value
        if self.detail is not None:
            out["detail"] = self.detail
        return out


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


def no_match_selector(skill_ids: Iterable[str]) -> str:
    """A selector that matches none of ``skill_ids`` (for the closure_selector probe)."""
    taken = set(skill_ids)
    candidate = "a2a-interview-probe:no-such-skill"
    while candidate in taken:
        candidate += "~"
    return candidate


# ---------------------------------------------------------------------------------------
# The declared documents, as the verifier holds them


@dataclass(frozen=True)
class Declared:
    """The card as fetched and each terms entry's verdict (terms §3), with the answers
    this profile would give built over the proposals that verified.

    Construct with :meth:`from_verdicts`; raises ``DeclarationError`` (via
    :class:`Interview`) when the card's skills cannot be read.
    """

    card: JSONObject
    entries: tuple[tuple[TermsEntry, ProposalVerdict], ...]
    interview: Interview
    verdicts: Mapping[tuple[str | None, str | None], ProposalVerdict] = field(repr=False)
    _expected: dict[tuple[str, str | None], Answer | Refusal] = field(
        default_factory=dict, repr=False, compare=False
    )
    _members: dict[Source, tuple[JSON, bytes | None] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def from_verdicts(
        cls, card: JSONObject, entries: Sequence[tuple[TermsEntry, ProposalVerdict]]
    ) -> Declared:
        committed = [
            CommittedProposal(entry, verdict.document)
            for entry, verdict in entries
            if verdict.document is not None and entry.url is not None
        ]
        return cls(
            card,
            tuple(entries),
            Interview(card, committed),
            {entry.key: verdict for entry, verdict in entries},
        )

    def expected(self, question: str, skill: str | None = None) -> Answer | Refusal:
        """What this profile answers to ``question`` (and selector), as a wire model;
        parsed once per selection (a cache, not state: the value never changes)."""
        key = (question, skill)
        if key not in self._expected:
            self._expected[key] = self.interview.expected(cast(Question, question), skill)
        return self._expected[key]

    def member(self, source: Source, document: Any) -> tuple[JSON, bytes | None] | None:
        """The value ``source.member`` names in ``document`` (the card, or the verified
        proposal ``source`` cites) and its JCS bytes; ``None`` when it names nothing.
        Cached per source: the same members recur across questions and interfaces."""
        if source not in self._members:
            try:
                value = pointer.resolve(document, source.member)
            except PointerError:
                self._members[source] = None
            else:
                try:
                    self._members[source] = (value, canonicalize(value))
                except CanonicalizationError:
                    self._members[source] = (value, None)
        return self._members[source]

    @property
    def has_terms_entry(self) -> bool:
        """The card carries a terms extension entry (interview §4 rule 4)."""
        return bool(terms_extensions(self.card))

    @property
    def signers(self) -> frozenset[str]:
        """The nkeys that signed the proposals that verified."""
        return frozenset(v.signer for _, v in self.entries if v.signer is not None)


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
            return bad("error_response", "a JSON-RPC error where a result was due",
                       code if valid else None)  # fmt: skip
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


# ---------------------------------------------------------------------------------------
# The checks


def check_card_signature(
    status: str, *, require: bool, readings: Sequence[str] = ()
) -> tuple[list[Conflict], list[Advisory]]:
    """PROFILE §8: ``invalid`` is a conflict; ``unsigned`` and ``key_unavailable`` are
    advisories, or conflicts when the user requires a signature. ``status`` is a
    ``cardsig.SignatureStatus`` value."""
    source = Source("card", "/signatures")
    if status == "verified":
        return [], []
    if status == "invalid" or require:
        detail = (
            "no signature on the card verifies"
            if status == "invalid"
            else "a verified card signature is required"
        )
        expected: JSON = {"status": "verified", "readings": list(readings)}
        return [
            Conflict(
                Check.card_signature,
                status,
                source=source,
                expected=expected,
                got={"status": status},
                detail=detail,
            )
        ], []
    detail = (
        "the card carries no signature"
        if status == "unsigned"
        else "no key was available to check the card's signature"
    )
    return [], [Advisory(Check.card_signature, status, source=source, detail=detail)]


def check_declaration(card: JSONObject) -> list[Conflict]:
    """interview §3 rule 1: the interview entry's ``required`` MUST NOT be true."""
    for i, ext in card_extensions(card):
        if ext.get("uri") == INTERVIEW_URI:
            if ext.get("required") is True:
                return [
                    Conflict(
                        Check.declaration,
                        "required_true",
                        source=Source("card", f"/capabilities/extensions/{i}/required"),
                        expected=False,
                        got=True,
                        detail="the interview is offered, never imposed: required must not be true",
                    )
                ]
            return []
    return []


def _named(exchange: Exchange, header: str) -> bool:
    return any(
        INTERVIEW_URI in (item.strip(" \t") for item in value.split(","))
        for value in exchange.header_values(header)
    )


def check_inactive(
    exchange: Exchange, binding: Binding, where: Where
) -> tuple[list[Conflict], list[Advisory]]:
    """PROFILE §7 ``inactive_probe`` (§3.3, §3b): without activation an interview method
    does not exist. Returns ``(conflicts, advisories)``.

    JSON-RPC (the probe is a well-formed call with ``"params": {}``): error ``-32601``
    passes; a ``result`` is the conflict ``answered_without_activation``; any other
    response (another error code, or no JSON-RPC error at all) is the advisory
    ``inactive_error_code``, never a conflict: the host's own dispatch answered it
    (a2a-js checks params before the method). HTTP+JSON: 404 passes; a 2xx is
    ``answered_without_activation``; any other status is ``inactive_error_code``.
    Either way a response naming the interview URI is ``echo_without_activation``.
    """
    got: JSONObject = {"status": exchange.status}
    answered = False
    if binding is Binding.JSONRPC:
        expected: JSON = {"error": {"code": RPC_METHOD_NOT_FOUND[0]}}
        try:
            parsed = loads(exchange.body)
        except IngressError:
            parsed = None
        error = parsed.get("error") if isinstance(parsed, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        got["error"] = {"code": code}
        if isinstance(parsed, dict) and "result" in parsed:
            got["result"] = True
            answered = True
        mismatch = not answered and code != RPC_METHOD_NOT_FOUND[0]
    else:
        expected = {"status": 404}
        answered = 200 <= exchange.status < 300
        mismatch = not answered and exchange.status != 404
    echoed = _named(exchange, EXTENSIONS_HEADER) or _named(exchange, LEGACY_EXTENSIONS_HEADER)
    if echoed:
        got["echo"] = True
    conflicts: list[Conflict] = []
    if answered:
        conflicts.append(
            Conflict(Check.inactive_probe, "answered_without_activation", where,
                     expected=expected, got=got,
                     detail=f"answered {METHOD_PREFIX}{where.question or 'identity'} "
                     "without activation")
        )  # fmt: skip
    elif echoed:
        conflicts.append(
            Conflict(Check.inactive_probe, "echo_without_activation", where,
                     expected=expected, got=got,
                     detail="named the interview URI in a response without activation")
        )  # fmt: skip
    advisories: list[Advisory] = []
    if mismatch:
        advisories.append(
            Advisory(Check.inactive_probe, "inactive_error_code", where,
                     value={"expected": expected, "got": got},
                     detail="the host answered the inactive probe with another error "
                     "than method not found")
        )  # fmt: skip
    return conflicts, advisories


def check_echo(exchange: Exchange, where: Where, *, legacy: bool = False) -> list[Conflict]:
    """PROFILE §3.2: an activated response names the URI in ``A2A-Extensions`` (and in
    ``X-A2A-Extensions`` too when the request activated with the 0.3 spelling)."""
    headers = (EXTENSIONS_HEADER, LEGACY_EXTENSIONS_HEADER) if legacy else (EXTENSIONS_HEADER,)
    missing = [header for header in headers if not _named(exchange, header)]
    if not missing:
        return []
    expected: JSONObject = {h: INTERVIEW_URI for h in missing}
    got: JSONObject = {h: list[JSON](exchange.header_values(h)) for h in missing}
    return [
        Conflict(
            Check.activation_echo,
            "missing_echo",
            where,
            expected=expected,
            got=got,
            detail="an activated response must list the interview URI in its extensions header",
        )
    ]


def check_answer(read: ResultRead, where: Where) -> tuple[Answer | None, list[Conflict]]:
    """answer_shape (interview §5, PROFILE §4.1): the response to ``where.question`` is
    exactly an answer to that question. Returns the answer when it is one."""
    if read.problem is not None:
        reason, detail = read.problem
        return None, [
            Conflict(Check.answer_shape, reason, where, got=read.summary(), detail=detail)
        ]
    if isinstance(read.model, Refusal):
        return None, [
            Conflict(
                Check.answer_shape,
                "refused",
                where,
                got=read.summary(),
                detail="a declared question was refused",
            )
        ]
    assert isinstance(read.model, Answer)
    if read.model.question != where.question:
        return None, [
            Conflict(
                Check.answer_shape,
                "wrong_question",
                where,
                expected=where.question,
                got=read.model.question,
                detail="the answer names another question",
            )
        ]
    return read.model, []


def _diff_one(projection: Projection, declared: Declared, where: Where) -> Conflict | None:
    source = projection.source
    got: JSON = projection.value

    def conflict(reason: str, detail: str, expected: Value = ABSENT) -> Conflict:
        return Conflict(Check.projection, reason, where, source, expected, got, detail)

    if source.document == "card":
        document: Any = declared.card
    else:
        # interview §7 rule 2: the cited url+digest must be committed by a terms entry.
        verdict = declared.verdicts.get((source.url, source.digest))
        if verdict is None:
            return conflict(
                "uncommitted_source", "the cited url and digest appear in no terms entry"
            )
        if not verdict.ok:
            # terms §3: a failing entry states no terms; nothing may be projected from it.
            return conflict("proposal_failed", f"the cited proposal failed: {verdict.result}")
        document = verdict.document
    resolved = declared.member(source, document)
    if resolved is None:
        return conflict("member_unresolved", "the member names nothing in the document")
    expected, expected_bytes = resolved
    try:
        equal = expected_bytes is not None and canonicalize(got) == expected_bytes
    except CanonicalizationError:
        equal = False
    if not equal:  # PROFILE §1.2: equality is equality of the JCS bytes
        return conflict("value_mismatch", "the value differs from the declared one", expected)
    return None


def diff_answer(answer: Answer, declared: Declared, where: Where) -> list[Conflict]:
    """The diff of interview §7, one conflict per failing projection.

    Card sources resolve in the card and match under JCS; proposal sources cite a
    url+digest committed by a terms entry whose proposal verified (terms §3), and the
    member resolves there and matches. Reasons: ``value_mismatch``,
    ``member_unresolved``, ``uncommitted_source``, ``proposal_failed``.
    """
    conflicts = []
    for projection in answer.projections:
        found = _diff_one(projection, declared, where)
        if found is not None:
            conflicts.append(found)
    return conflicts


def check_terms_declared(answer: Answer, declared: Declared, where: Where) -> list[Conflict]:
    """terms_declared (interview §4 rule 4, PROFILE §7).

    ``terms_hidden``: ``declared:false`` while proposals that verified exist for the
    selection (by PROFILE §4.4). ``terms_fabricated``: a terms answer declaring terms
    when the card carries no terms extension entry at all.
    """
    if answer.question != "terms":
        return []
    if not declared.has_terms_entry:
        if answer.declared or answer.projections:
            return [
                Conflict(
                    Check.terms_declared,
                    "terms_fabricated",
                    where,
                    expected={"declared": False, "projections": []},
                    got={"declared": answer.declared, "projections": len(answer.projections)},
                    detail="terms answered although the card carries no terms entry",
                )
            ]
        return []
    expected = declared.expected("terms", where.skill)
    if isinstance(expected, Answer) and expected.declared and not answer.declared:
        return [
            Conflict(
                Check.terms_declared,
                "terms_hidden",
                where,
                expected={"declared": True, "projections": len(expected.projections)},
                got={"declared": False, "projections": 0},
                detail="declared:false while verified terms exist for this selection",
            )
        ]
    return []


def coverage(answer: Answer, declared: Declared, where: Where) -> list[Advisory]:
    """Advisories only (PROFILE §7): members this profile projects that ``answer`` omits
    (``omitted``), and sources it projects that this profile would not (``additional``;
    the diff has already judged their values)."""
    expected = declared.expected(answer.question, where.skill)
    if not isinstance(expected, Answer):
        return []
    want = [p.source for p in expected.projections]
    have = {p.source for p in answer.projections}
    wanted = set(want)
    found = [
        Advisory(Check.coverage, "omitted", where, s, detail="this profile projects the member")
        for s in want
        if s not in have
    ]
    found += [
        Advisory(
            Check.coverage,
            "additional",
            where,
            p.source,
            detail="this profile does not project the member",
        )
        for p in answer.projections
        if p.source not in wanted
    ]
    return found


def check_determinism(first: ResultRead, second: ResultRead, where: Where) -> list[Conflict]:
    """interview §4 rule 1, PROFILE §7: a second ask returns identical JCS bytes.
    Unreadable responses are left to answer_shape."""
    a, b = first.canonical, second.canonical
    if a is None or b is None or a == b:
        return []
    return [
        Conflict(
            Check.determinism,
            "changed_between_asks",
            where,
            expected=digest_bytes(a),
            got=digest_bytes(b),
            detail="two asks of an unchanged agent returned different answers",
        )
    ]


def check_interfaces_agree(
    first: tuple[str, bytes], other: tuple[str, bytes], where: Where
) -> list[Conflict]:
    """interview §4 rule 1 across bindings (A2A §5.1: identical functionality): the
    same question on two interfaces of one card gets the same JCS bytes. ``first`` and
    ``other`` are (interface url, JCS bytes); ``where.interface`` is the other one."""
    if first[1] == other[1]:
        return []
    return [
        Conflict(
            Check.determinism,
            "interfaces_differ",
            where,
            expected={"interface": first[0], "digest": digest_bytes(first[1])},
            got={"interface": other[0], "digest": digest_bytes(other[1])},
            detail="two interfaces of the card answered the same question differently",
        )
    ]


def check_closure(read: ResultRead, refusal: bytes, check: Check, where: Where) -> list[Conflict]:
    """closure_method / closure_selector (interview §6, PROFILE §5): the standard
    refusal, ``refusal`` being its exact JCS bytes (``Interview(card).refusal``)."""
    if read.canonical == refusal:
        return []
    return [
        Conflict(
            check,
            "not_standard_refusal",
            where,
            expected=loads(refusal),
            got=read.summary(),
            detail="the standard refusal was due",
        )
    ]


# ---------------------------------------------------------------------------------------
# Outcomes and statuses


def derive_outcome(
    first: Sequence[Conflict], second: Sequence[Conflict] | None
) -> tuple[Outcome, frozenset[tuple[object, ...]]]:
    """PROFILE §7 from two complete runs' conflicts: the outcome and the persistent keys.

    No conflict in the first run: ``consistent``. A key in both runs: ``non_conformant``.
    Otherwise ``churn`` (every first-run conflict vanished; conflicts new in the re-run
    have not survived a re-run of their own, so they cannot be persistent). ``second``
    is ``None`` only when the first run had no conflict.
    """
    if not first:
        return Outcome.consistent, frozenset()
    if second is None:
        raise ValueError("a run with conflicts needs its re-run")
    persistent = frozenset(c.key for c in first) & frozenset(c.key for c in second)
    return (Outcome.non_conformant if persistent else Outcome.churn), persistent


def run_statuses(
    performed: Iterable[Check],
    conflicts: Iterable[Conflict],
    advisories: Iterable[Advisory],
    failed: Iterable[Check] = (),
) -> dict[Check, CheckStatus]:
    """One run's status per check, in report order. ``failed`` names checks that failed
    without a conflict (``card_fetch``: the run could not read the card)."""
    done = set(performed)
    failing = {c.check for c in conflicts} | set(failed)
    advised = {a.code for a in advisories}
    out: dict[Check, CheckStatus] = {}
    for check in CHECKS:
        if check in failing:
            out[check] = CheckStatus.failed
        elif check in advised:
            out[check] = CheckStatus.advisory
        elif check in done:
            out[check] = CheckStatus.passed
        else:
            out[check] = CheckStatus.skipped
    return out


def overall_statuses(
    runs: Sequence[Mapping[Check, CheckStatus]], persistent_checks: Iterable[Check]
) -> dict[Check, CheckStatus]:
    """The record's status per check across runs: ``failed`` for a check with a
    persistent conflict; with two runs, ``churn`` for one that failed in one run only;
    else the last run's status (a lone run fails what it failed: it was incomplete)."""
    persistent = set(persistent_checks)
    out: dict[Check, CheckStatus] = {}
    for check in CHECKS:
        seen = [run[check] for run in runs if check in run]
        if check in persistent:
            out[check] = CheckStatus.failed
        elif len(seen) > 1 and CheckStatus.failed in seen:
            out[check] = CheckStatus.churn
        else:
            out[check] = seen[-1] if seen else CheckStatus.skipped
    return out
