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

The checks and the declared documents they compare with (:class:`Declared`) are here;
the rest of the verifier's judging lives in modules of their own, whose names this one
re-exports (``from a2a_interview.checks import read_result`` keeps working):
:mod:`~a2a_interview.checks._findings` (the check codes, :class:`Conflict`, :class:`Advisory`),
:mod:`~a2a_interview.checks._responses` (the card's interfaces, reading one response) and
:mod:`~a2a_interview.checks._outcome` (the outcome and the statuses of runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from .. import pointer
from ..errors import CanonicalizationError, IngressError, PointerError
from ..jcs import canonicalize, digest_bytes
from ..models import Answer, Projection, Refusal, Source
from ..projection import CommittedProposal, Interview
from ..spec import (
    EXTENSIONS_HEADER,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    METHOD_PREFIX,
    RPC_METHOD_NOT_FOUND,
    Question,
)
from ..strictjson import JSON, JSONObject, loads
from ..terms import ProposalVerdict, TermsEntry, card_extensions, terms_extensions
from ._findings import ABSENT, Advisory, Check, Conflict, Value, Where
from ._responses import (
    Binding,
    Exchange,
    ResultRead,
)

__all__ = [
    "Declared",
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
    "diff_answer",
    "no_match_selector",
]


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
            Conflict(
                Check.inactive_probe,
                "answered_without_activation",
                where,
                expected=expected,
                got=got,
                detail=f"answered {METHOD_PREFIX}{where.question or 'identity'} without activation",
            )
        )
    elif echoed:
        conflicts.append(
            Conflict(
                Check.inactive_probe,
                "echo_without_activation",
                where,
                expected=expected,
                got=got,
                detail="named the interview URI in a response without activation",
            )
        )
    advisories: list[Advisory] = []
    if mismatch:
        advisories.append(
            Advisory(
                Check.inactive_probe,
                "inactive_error_code",
                where,
                value={"expected": expected, "got": got},
                detail="the host answered the inactive probe with another error "
                "than method not found",
            )
        )
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
