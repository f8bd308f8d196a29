"""The result record (PROFILE §8): its values and its JSON.

A record is built from the verifier's runs as a :class:`ResultRecord` value and
exchanged as JSON (``to_json()``). The functions that read a record take the JSON, so a
display can check a record it did not produce. They live in modules of their own, and
this one re-exports their names (``from a2a_interview.record import standing_of`` keeps
working):

- :mod:`~a2a_interview.record._standing`: :func:`standing_of` recomputes ``claim`` or
  ``evidence`` from the record's contents and its runner signature; a display uses it
  and never trusts the stored ``standing`` (PROFILE §8, interview §8, §9 rule 4);
  :func:`standing_reason` says why; :func:`sign_record` and
  :func:`verify_record_signature` are the runner's Ed25519 signature.
- :mod:`~a2a_interview.record._keys`: :func:`agent_key_ids` and :func:`proposal_keys`
  collect ``agent.keys``: what the verifier itself saw of the agent's keys, so a
  display needs no network.
- :mod:`~a2a_interview.record._sanity`: :func:`record_sanity`, the sanity every reader checks,
  and the record's times (:func:`rfc3339`, :func:`parse_rfc3339`).
- here: the values, :func:`read_record` (a stored record: bounded, strict, the right
  ``format``), the fixed words of outcomes, :func:`schema`.

The member names, and everything PROFILE leaves open, are written down in
``docs/decisions/record.md`` (``D-RECORD-n``) and in the JSON Schema shipped at
``a2a_interview/schema/result-record.schema.json`` (:func:`schema`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any, Final, Literal, get_args

from .. import nkeys
from ..checks import Advisory, Check, CheckStatus, Conflict, Outcome
from ..errors import SignatureError, WireFormatError
from ..spec import MAX_DEPTH, MAX_DOCUMENT_BYTES, RESULT_FORMAT
from ..strictjson import JSONObject, loads
from ._sanity import (
    member_at,
)
from ._standing import (
    sign_record,
    standing_given,
)

__all__ = [
    "DOES_NOT_ESTABLISH",
    "PARTIES",
    "CallRecord",
    "CardSignature",
    "CredentialKind",
    "Credentials",
    "Incomplete",
    "Party",
    "ProposalRecord",
    "RanBy",
    "ResultRecord",
    "Run",
    "Sampling",
    "read_record",
    "schema",
]

Party = Literal["self", "platform", "third_party"]
PARTIES: Final[tuple[Party, ...]] = get_args(Party)

# The one vocabulary of outcomes (PROFILE §8's codes; D-WEB-21): outcome ->
# (label, meaning), used by the report (`verify`, `record show`), `ledger list`/`show`,
# the ledger's pages and its API (`outcome_label`). Absence and an incomplete run are
# worded so that nothing is read into them (interview §9 rule 2).
OUTCOME_WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "consistent": ("consistent", "its live answers matched its declared documents"),
    "churn": (
        "churn",
        "a conflict on the first run was gone on the re-run (an agent mid-update), "
        "which is not non-conformance",
    ),
    "non_conformant": (
        "non-conformant",
        "a conflict with its declared documents persisted across a re-run with a fresh card",
    ),
    "not_offered": (
        "does not offer the interview",
        "the card does not declare the interview; that says nothing about the agent, "
        "and it is never ranked as a failure",
    ),
    "unreachable": (
        "not completed",
        "the interview could not complete (network, credentials or time); nothing is "
        "concluded about the agent",
    ),
}
UNKNOWN_OUTCOME_WORDS: Final = ("unrecognised outcome", "this version cannot read it")


def outcome_words(outcome: object) -> tuple[str, str]:
    """(label, meaning) of an outcome code (:data:`OUTCOME_WORDS`); an unknown one, or
    a value that is not a string, is :data:`UNKNOWN_OUTCOME_WORDS`."""
    found = OUTCOME_WORDS.get(outcome) if isinstance(outcome, str) else None
    return found if found is not None else UNKNOWN_OUTCOME_WORDS


# agent.name: the name the agent's card gives itself, at most this many characters.
# Peer text, shown escaped, never the agent's identity (its card URL is).
MAX_AGENT_NAME: Final = 200


def card_name(card: Any) -> str | None:
    """What a record's ``agent.name`` holds for ``card``: the card's ``name`` when it is
    a non-empty string, cut at :data:`MAX_AGENT_NAME` characters, NUL characters
    replaced by U+FFFD (no store could hold them); ``None`` otherwise."""
    name = card.get("name") if isinstance(card, dict) else None
    if not isinstance(name, str) or not name:
        return None
    return name[:MAX_AGENT_NAME].replace("\x00", "\ufffd")


def agent_name(record: Any) -> str | None:
    """The record's ``agent.name`` (PROFILE §8 allows added members) when it is a
    non-empty string of at most :data:`MAX_AGENT_NAME` characters without NUL, else
    ``None``: a name is peer text the card gave itself, never who the agent is."""
    name = member_at(record, "agent", "name")
    if not isinstance(name, str) or not 0 < len(name) <= MAX_AGENT_NAME or "\x00" in name:
        return None
    return name


# PROFILE §8: fixed; interview §9 rule 1 (conformance is not competence) and §10
# (selective honesty: conduct is reputation's territory).
DOES_NOT_ESTABLISH: Final[tuple[str, ...]] = (
    "the agent's competence at its skills",
    "the agent's conduct outside these calls",
)


# ---------------------------------------------------------------------------------------
# The values


@dataclass(frozen=True, slots=True)
class RanBy:
    """Who ran the procedure (interview §8): ``party``, a ``name``, optionally the
    runner's nkey (set by :func:`sign_record`)."""

    party: Party
    name: str
    key: str | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"party": self.party, "name": self.name}
        if self.key is not None:
            out["key"] = self.key
        return out


@dataclass(frozen=True, slots=True)
class CardSignature:
    """``agent.card_signature`` (PROFILE §6.4, §6.5, §8). ``key_source`` is ``pinned``
    (a JWKS the user gave), ``jku`` (fetched from the card's same-origin ``jku``) or
    ``None`` when no key verified."""

    status: str
    reading: str | None = None
    readings: tuple[str, ...] = ()
    kid: str | None = None
    thumbprint: str | None = None
    key_source: Literal["pinned", "jku"] | None = None

    def to_json(self) -> JSONObject:
        return {
            "status": self.status,
            "reading": self.reading,
            "readings": list(self.readings),
            "kid": self.kid,
            "thumbprint": self.thumbprint,
            "key_source": self.key_source,
        }


CredentialKind = Literal["none", "bearer", "basic", "authorization", "header"]


@dataclass(frozen=True, slots=True)
class Credentials:
    """``credentials``: which kind of credentials the runner sent to the agent's origin,
    never their values (docs/decisions.md D-CLI-4c). ``kind`` is ``none``
    (nothing sent), ``bearer`` / ``basic`` (an ``Authorization`` header of that scheme),
    ``authorization`` (another scheme) or ``header`` (only other headers, such as an API
    key's); ``headers`` the names sent, lowercased and sorted; ``origins`` the further
    origins (``scheme://host:port``) the user named for them beside the agent's own
    (PROFILE §7; a member only when there are some, so older records read the same)."""

    kind: CredentialKind = "none"
    headers: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()

    @classmethod
    def of(cls, headers: Iterable[tuple[str, str]], origins: Iterable[str] = ()) -> Credentials:
        """What a record says of the credential ``headers`` (name, value) a run sent,
        and of the further ``origins`` they were sent to."""
        pairs = [(name.lower(), value) for name, value in headers]
        names = tuple(sorted({name for name, _ in pairs}))
        if not pairs:
            return cls()
        kind: CredentialKind = "header"
        scheme = next((v.split(" ", 1)[0].lower() for n, v in pairs if n == "authorization"), None)
        if scheme is not None:
            kind = scheme if scheme in ("bearer", "basic") else "authorization"  # type: ignore[assignment]
        return cls(kind, names, tuple(sorted(set(origins))))

    def to_json(self) -> JSONObject:
        out: JSONObject = {"kind": self.kind, "headers": list(self.headers)}
        if self.origins:
            out["origins"] = list(self.origins)
        return out


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call of a run: where, what, the HTTP status, and SHA-256 of the raw body."""

    interface: str
    binding: str
    method: str
    params: JSONObject | None
    activated: bool
    status: int
    response_digest: str

    def to_json(self) -> JSONObject:
        return {
            "interface": self.interface,
            "binding": self.binding,
            "method": self.method,
            "params": self.params,
            "activated": self.activated,
            "status": self.status,
            "response_digest": self.response_digest,
        }


@dataclass(frozen=True, slots=True)
class ProposalRecord:
    """One terms entry's verification (terms §3): ``result`` is ``ok`` or the reason;
    ``signer`` the provider's nkey when it verified."""

    url: str | None
    digest: str | None
    result: str
    signer: str | None = None

    def to_json(self) -> JSONObject:
        return {
            "url": self.url,
            "digest": self.digest,
            "result": self.result,
            "signer": self.signer,
        }


@dataclass(frozen=True, slots=True)
class ExtendedCard:
    """``agent.extended_card`` (PROFILE §7): whether the verifier fetched the extended
    card the agent's card offers (``fetched``), its ``digest`` (sha256 over its JCS
    bytes) when it did, else the ``reason`` it did not (``no_credentials``,
    ``credentials_not_sent``, ``no_interface``, ``http_status``, ``error_response``,
    ``unreadable``, or a transport code), with the ``url`` asked and the HTTP
    ``status`` where there was one. Absent from a record when the card offers none."""

    fetched: bool
    digest: str | None = None
    reason: str | None = None
    url: str | None = None
    status: int | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"fetched": self.fetched}
        for name in ("digest", "reason", "url", "status"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class Incomplete:
    """Why a run could not complete (outcome ``unreachable``): a fixed ``reason`` code,
    fixed ``detail`` text, and for ``authentication_required`` the names of the card's
    ``securitySchemes``. A transport failure also keeps the ``url`` whose exchange
    failed (without credentials) and, for ``connect_failed`` and ``timeout``, its
    ``cause`` (``name``, ``refused``, ``unreachable``, ``timeout``, ``tls``, ``reset``,
    ``closed``, ``protocol``, ``connect``: D-CLI-9)."""

    reason: str
    detail: str
    schemes: tuple[str, ...] = ()
    url: str | None = None
    cause: str | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"reason": self.reason, "detail": self.detail}
        if self.schemes:
            out["schemes"] = list(self.schemes)
        if self.url is not None:
            out["url"] = self.url
        if self.cause is not None:
            out["cause"] = self.cause
        return out


@dataclass(frozen=True, slots=True)
class Sampling:
    """``runs[i].sampling`` (D-RECORD-25): what a run asked of what it could have.
    ``mode`` is ``thorough`` (every interface and skill selector, within the bounds) or
    ``sampled`` (D-VERIFY-63): each binding on one of its interfaces (``interfaces``:
    binding, the interface interviewed or ``None``, of how many the card declares) and
    each selector question with ``per_question`` of the ``skills`` declared skill ids
    (``selectors``: question, the ids asked); ``twice``: the asks made a second time
    (interface, question, skill: D-VERIFY-72; absent from a 0.6.0 record, whose first
    interface of each card variant asked every question twice). A record without it is
    an older one, whose runs were thorough."""

    mode: Literal["sampled", "thorough"]
    per_question: int | None = None
    skills: int = 0
    interfaces: tuple[tuple[str, str | None, int], ...] = ()
    selectors: tuple[tuple[str, tuple[str, ...]], ...] = ()
    twice: tuple[tuple[str, str, str | None], ...] = ()

    def to_json(self) -> JSONObject:
        if self.mode == "thorough":
            return {"mode": "thorough"}
        return {
            "mode": self.mode,
            "selectors_per_question": self.per_question,
            "skills": self.skills,
            "interfaces": [
                {"binding": binding, "interface": url, "of": of}
                for binding, url, of in self.interfaces
            ],
            "selectors": {question: list(ids) for question, ids in self.selectors},
            "asked_twice": [
                {"interface": url, "question": question, "skill": skill}
                for url, question, skill in self.twice
            ],
        }


@dataclass(frozen=True, slots=True)
class Run:
    """One pass of the whole procedure (PROFILE §7, §8)."""

    card_digest: str | None
    calls: tuple[CallRecord, ...]
    proposals: tuple[ProposalRecord, ...]
    conflicts: tuple[Conflict, ...]
    checks: Mapping[Check, CheckStatus]
    incomplete: Incomplete | None = None
    sampling: Sampling | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "card_digest": self.card_digest,
            "calls": [c.to_json() for c in self.calls],
            "proposals": [p.to_json() for p in self.proposals],
            "conflicts": [c.to_json() for c in self.conflicts],
            "checks": {str(k): str(v) for k, v in self.checks.items()},
        }
        if self.incomplete is not None:
            out["incomplete"] = self.incomplete.to_json()
        if self.sampling is not None:
            out["sampling"] = self.sampling.to_json()
        return out


@dataclass(frozen=True)
class ResultRecord:
    """The result record of PROFILE §8 as a value; :meth:`to_json` is the document.

    ``standing`` is derived, never stored: see :func:`standing_of`.
    """

    url: str
    card_url: str | None
    card_digest: str | None
    card_signature: CardSignature | None
    ran_by: RanBy
    started_at: str
    finished_at: str
    runs: tuple[Run, ...]
    advisories: tuple[Advisory, ...]
    outcome: Outcome
    checks: Mapping[Check, CheckStatus] = field(default_factory=dict)
    incomplete: Incomplete | None = None
    # agent.keys (PROFILE §8): RFC 7638 thumbprints of keys that verified a card
    # signature and nkeys of proposal signers whose signature verified, sorted.
    agent_keys: tuple[str, ...] = ()
    # credentials: the kind sent to the agent's origin (None: not stated, older records).
    credentials: Credentials | None = None
    # agent.listed_keys: keys the agent merely lists (its JWKS, an unverified kid, a
    # proposal's unverified signer); informational, never affecting standing.
    listed_keys: tuple[str, ...] = ()
    # agent.name: the card's own name (card_name), None when no card was read.
    agent_name: str | None = None
    # agent.extended_card (PROFILE §7): fetched or why not; None when none is offered.
    extended_card: ExtendedCard | None = None
    # agent.card_signature.variants: the signature of each A2A-Version variant whose
    # bytes differ from the default card's (PROFILE §7), by version.
    variant_signatures: tuple[tuple[str, CardSignature], ...] = ()

    signatures: tuple[tuple[str, str], ...] = ()

    def signed(self, seed: str) -> ResultRecord:
        """This record with ``ran_by.key`` set to the seed's nkey and the runner's
        signature (PROFILE §8). Raises as :func:`sign_record`."""
        key = nkeys.public_of(nkeys.private_key(seed))
        if self.ran_by.key not in (None, key):
            raise SignatureError("the record names another runner key")
        unsigned = replace(self, ran_by=replace(self.ran_by, key=key), signatures=())
        document = sign_record(unsigned.to_json(), seed)
        items = document["signatures"]
        assert isinstance(items, list) and isinstance(items[0], dict)
        return replace(unsigned, signatures=((key, str(items[0]["sig"])),))

    @property
    def conflicts(self) -> tuple[Conflict, ...]:
        """The last run's conflicts (the persistent ones, when non_conformant)."""
        return self.runs[-1].conflicts if self.runs else ()

    def _card_signature(self) -> JSONObject | None:
        if self.card_signature is None:
            return None
        out = self.card_signature.to_json()
        if self.variant_signatures:
            out["variants"] = [
                {"version": version, **signature.to_json()}
                for version, signature in self.variant_signatures
            ]
        return out

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "format": RESULT_FORMAT,
            "agent": {
                "url": self.url,
                "card_url": self.card_url,
                "card_digest": self.card_digest,
                "card_signature": self._card_signature(),
                "keys": sorted(set(self.agent_keys)),
                "listed_keys": sorted(set(self.listed_keys) - set(self.agent_keys)),
                # agent.name: the card's own name (peer text, never the identity)
                **({"name": self.agent_name} if self.agent_name is not None else {}),
                **(
                    {"extended_card": self.extended_card.to_json()}
                    if self.extended_card is not None
                    else {}
                ),
            },
            "ran_by": self.ran_by.to_json(),
            "standing": "claim",
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "runs": [r.to_json() for r in self.runs],
            "checks": {str(c): str(s) for c, s in self.checks.items()},
            "advisories": [a.to_json() for a in self.advisories],
            "outcome": str(self.outcome),
            "does_not_establish": list(DOES_NOT_ESTABLISH),
        }
        if self.incomplete is not None:
            out["incomplete"] = self.incomplete.to_json()
        if self.credentials is not None:
            out["credentials"] = self.credentials.to_json()
        # Signatures come only from signed(), over exactly this document.
        out["standing"] = standing_given(out, "valid" if self.signatures else "unsigned")[0]
        if self.signatures:
            out["signatures"] = [{"key": k, "sig": s} for k, s in self.signatures]
        return out


# ---------------------------------------------------------------------------------------
# Reading a stored record


def read_record(data: bytes, max_bytes: int = MAX_DOCUMENT_BYTES) -> JSONObject:
    """A stored record's JSON, for a display (``record show``/``record verify``).

    Raises ``IngressError`` (its subclasses: ``TooLarge`` beyond ``max_bytes``) for
    bytes that are not strict I-JSON, and ``WireFormatError`` for a JSON value that is
    not an object whose ``format`` is ``a2a-interview-result/1``. Nothing else is
    checked here: a display shows what it can and recomputes the standing.
    """
    value = loads(data, max_bytes=max_bytes, max_depth=MAX_DEPTH)
    if not isinstance(value, dict) or value.get("format") != RESULT_FORMAT:
        raise WireFormatError("not an object whose format is a2a-interview-result/1")
    return value


# ---------------------------------------------------------------------------------------
# The schema


def schema() -> JSONObject:
    """The JSON Schema (2020-12) of a result record, shipped with the package."""
    data = (
        resources.files("a2a_interview").joinpath("schema/result-record.schema.json").read_bytes()
    )
    value = loads(data)
    assert isinstance(value, dict)
    return value
