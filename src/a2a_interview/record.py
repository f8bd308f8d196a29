"""The result record (PROFILE §8): its values, the runner's signature, its standing.

A record is built from the verifier's runs as a :class:`ResultRecord` value and
exchanged as JSON (``to_json()``). The functions that read a record take the JSON, so a
display can check a record it did not produce:

- :func:`standing_of` recomputes ``claim`` or ``evidence`` from the record's contents
  and its runner signature; a display uses it and never trusts the stored ``standing``
  (PROFILE §8, interview §8, §9 rule 4). :func:`standing_reason` says why.
- :func:`agent_key_ids` and :func:`proposal_keys` collect ``agent.keys``: what the
  verifier itself saw of the agent's keys, so a display needs no network.
- :func:`read_record` reads a stored record (bounded, strict, the right ``format``).
- :func:`sign_record` and :func:`verify_record_signature`: the runner's Ed25519
  signature, nkey-encoded key, base64url, over ``a2a-interview-result-v1\\n`` + JCS of
  the record without ``signatures``.

The member names, and everything PROFILE leaves open, are written down in
``docs/decisions.md`` (part "Record and evidence") and in the JSON Schema shipped at
``a2a_interview/schema/result-record.schema.json`` (:func:`schema`).
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any, Final, Literal, get_args
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import nkeys
from .cardsig import CardSignatureReport, thumbprint, verify_card
from .checks import Advisory, Check, CheckStatus, Conflict, Outcome
from .errors import IngressError, KeyFormatError, SignatureError, WireFormatError
from .ijson import JSONObject, loads
from .jcs import canonicalize, digest
from .spec import MAX_DEPTH, MAX_DOCUMENT_BYTES, RESULT_FORMAT, RESULT_SIGNING_PREFIX
from .terms import verify_uncommitted

__all__ = [
    "CLOCK_SKEW",
    "DOES_NOT_ESTABLISH",
    "PARTIES",
    "SANITY_REASONS",
    "STANDING_REASONS",
    "STANDING_WHY",
    "CallRecord",
    "CardSignature",
    "CredentialKind",
    "Credentials",
    "Incomplete",
    "Insane",
    "Party",
    "ProposalRecord",
    "RanBy",
    "RecordSignature",
    "ResultRecord",
    "Run",
    "SanityReason",
    "Standing",
    "StandingReason",
    "agent_key_ids",
    "card_key_ids",
    "member_at",
    "nkey_jwk",
    "nkey_thumbprint",
    "parse_rfc3339",
    "proposal_keys",
    "proposal_signer",
    "read_record",
    "record_identity",
    "record_sanity",
    "rfc3339",
    "schema",
    "sign_record",
    "signing_bytes",
    "standing_of",
    "standing_reason",
    "verified_key_ids",
    "verify_record_signature",
]

Party = Literal["self", "platform", "third_party"]
PARTIES: Final[tuple[Party, ...]] = get_args(Party)
Standing = Literal["claim", "evidence"]

# Why a record has the standing it has (standing_reason), as the report names it.
# Why a record fails the sanity of PROFILE §8 (record_sanity): a store refuses it, a
# display shows it as a claim with this reason.
SanityReason = Literal[
    "times_unreadable",  # started_at or finished_at is not an RFC 3339 time with a zone
    "finished_before_started",  # finished_at is earlier than started_at
    "from_the_future",  # finished_at is later than the reader's clock + 5 minutes
    "url_scheme",  # a URL of the record is not http or https
    "calls_elsewhere",  # a call names an interface that is not the named agent's
]
SANITY_REASONS: Final[tuple[SanityReason, ...]] = get_args(SanityReason)
# PROFILE §8: the reader's clock may lag the runner's by this much.
CLOCK_SKEW: Final = timedelta(minutes=5)

StandingReason = Literal[
    SanityReason,
    "evidence",  # an independent runner, signed, holding none of the agent's keys
    "self_run",  # ran_by.party is self (or not a party at all)
    "unsigned",  # nothing binds the record to the runner it names
    "signature_invalid",  # altered, or not signed by the key ran_by names
    "agent_key",  # the runner key is one of the agent's keys
    "agent_keys_missing",  # agent.keys absent or malformed: the runner cannot be cleared
]
STANDING_REASONS: Final[tuple[StandingReason, ...]] = get_args(StandingReason)  # flattened

# PROFILE §8: why a record has the standing it has, one fixed line per reason: the one
# vocabulary of the report, `record verify`, the ledger's pages and its API.
STANDING_WHY: Final[Mapping[StandingReason, str]] = {
    "evidence": "an independent runner signed it with a key that is none of the agent's",
    "self_run": "the agent ran it against itself: a claim, never evidence",
    "unsigned": "no runner signature binds it to the party it names",
    "signature_invalid": "the runner signature does not verify",
    "agent_key": "the runner key is one of the agent's own keys",
    "agent_keys_missing": "it does not record the agent's keys, so the runner cannot be "
    "told apart from the agent",
    "times_unreadable": "its times are not RFC 3339 times with a zone",
    "finished_before_started": "it says it finished before it started",
    "from_the_future": "it says it finished later than now",
    "url_scheme": "it names a URL that is not http or https",
    "calls_elsewhere": "its calls were made to another agent's interfaces than the one it names",
}

# The one vocabulary of outcomes (PROFILE §8's codes; issue 13 finding 7): outcome ->
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


def rfc3339(moment: datetime) -> str:
    """``moment`` as RFC 3339 UTC with milliseconds and ``Z``. Raises ``ValueError``
    for a naive datetime (a clock must say which zone it reads)."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no zone")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


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
    key's); ``headers`` the names sent, lowercased and sorted."""

    kind: CredentialKind = "none"
    headers: tuple[str, ...] = ()

    @classmethod
    def of(cls, headers: Iterable[tuple[str, str]]) -> Credentials:
        """What a record says of the credential ``headers`` (name, value) a run sent."""
        pairs = [(name.lower(), value) for name, value in headers]
        names = tuple(sorted({name for name, _ in pairs}))
        if not pairs:
            return cls()
        kind: CredentialKind = "header"
        scheme = next((v.split(" ", 1)[0].lower() for n, v in pairs if n == "authorization"),
                      None)  # fmt: skip
        if scheme is not None:
            kind = scheme if scheme in ("bearer", "basic") else "authorization"  # type: ignore[assignment]
        return cls(kind, names)

    def to_json(self) -> JSONObject:
        return {"kind": self.kind, "headers": list(self.headers)}


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
        return {"url": self.url, "digest": self.digest, "result": self.result,
                "signer": self.signer}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Incomplete:
    """Why a run could not complete (outcome ``unreachable``): a fixed ``reason`` code,
    fixed ``detail`` text, and for ``authentication_required`` the names of the card's
    ``securitySchemes``. A transport failure also keeps the ``url`` whose exchange
    failed (without credentials) and, for ``connect_failed`` and ``timeout``, its
    ``cause`` (``name``, ``refused``, ``unreachable``, ``timeout``, ``tls``, ``reset``,
    ``closed``, ``protocol``, ``connect``: issue 12 item 7)."""

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
class Run:
    """One pass of the whole procedure (PROFILE §7, §8)."""

    card_digest: str | None
    calls: tuple[CallRecord, ...]
    proposals: tuple[ProposalRecord, ...]
    conflicts: tuple[Conflict, ...]
    checks: Mapping[Check, CheckStatus]
    incomplete: Incomplete | None = None

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

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "format": RESULT_FORMAT,
            "agent": {
                "url": self.url,
                "card_url": self.card_url,
                "card_digest": self.card_digest,
                "card_signature": (
                    self.card_signature.to_json() if self.card_signature is not None else None
                ),
                "keys": sorted(set(self.agent_keys)),
                "listed_keys": sorted(set(self.listed_keys) - set(self.agent_keys)),
                # agent.name: the card's own name (peer text, never the identity)
                **({"name": self.agent_name} if self.agent_name is not None else {}),
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
        out["standing"] = _standing(out, "valid" if self.signatures else "unsigned")[0]
        if self.signatures:
            out["signatures"] = [{"key": k, "sig": s} for k, s in self.signatures]
        return out


# ---------------------------------------------------------------------------------------
# Sanity (PROFILE §8): checked by every reader before a record is shown or stored

# RFC 3339 §5.6 date-time (``T`` or a space, any fraction), and the same without a
# zone so that its absence is named. ``datetime.fromisoformat`` alone takes ISO 8601
# spellings RFC 3339 does not (``20261129T100000Z``, ``2026-W48-7``, ``+05``).
_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,
)


def parse_rfc3339(text: Any) -> datetime | None:
    """``text`` as an aware UTC datetime when it is an RFC 3339 date-time with a zone;
    ``None`` otherwise (no zone, another ISO 8601 spelling, out of range). Never raises."""
    shape = _RFC3339.fullmatch(text) if isinstance(text, str) and len(text) <= 64 else None
    if shape is None or shape["zone"] is None:
        return None
    try:
        # OverflowError: a year-1 time east of UTC, or a year-9999 one west of it.
        return datetime.fromisoformat(text.upper().replace(" ", "T")).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def record_identity(record: Mapping[str, Any]) -> str:
    """A run's identity (PROFILE §8): ``sha256:`` of the JCS of the record without
    ``signatures``, so the same run with signatures repeated, added or removed is one
    record. Raises ``CanonicalizationError`` for a record JSON cannot carry."""
    return digest({k: v for k, v in record.items() if k != "signatures"})


@dataclass(frozen=True, slots=True)
class Insane:
    """Why a record fails the sanity of PROFILE §8: a fixed ``reason`` code and fixed
    ``detail`` words (never a value from the record)."""

    reason: SanityReason
    detail: str


def _host(url: Any) -> str | Literal[False] | None:
    """The lowercased host of an ``http``/``https`` URL; ``None`` for a URL without
    one; ``False`` for anything that is not an http(s) URL."""
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme.lower() not in ("http", "https"):
        return False
    return host.rstrip(".") if host else None


def _site(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


def _same_agent(call: str, agent: str) -> bool:
    """Whether an interface host can belong to the agent whose card is on ``agent``:
    the same host, or one a subdomain of the other (``www.`` set aside), per
    ``docs/decisions.md`` D-STORE-12 (sanity)."""
    a, b = _site(call), _site(agent)
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def record_sanity(record: Mapping[str, Any], now: datetime) -> Insane | None:
    """The sanity of PROFILE §8, as a reader whose clock reads ``now`` (aware) sees it;
    ``None`` when the record passes. In order:

    - ``started_at`` and ``finished_at`` are RFC 3339 with a zone, ``started_at`` ≤
      ``finished_at`` ≤ ``now`` + :data:`CLOCK_SKEW`;
    - every URL the record names (``agent.url``, ``agent.card_url``, each call's
      ``interface``, each proposal's ``url``) is ``http`` or ``https``;
    - every call was made to the agent the record names: each call's interface host is
      the card URL's host (``agent.url``'s without a card URL) or a subdomain of it, or
      the other way round.

    One run is one record (its identity, :func:`record_identity`) is the store's to keep.
    Never raises on a hostile record; raises ``ValueError`` for a naive ``now``.
    """
    if now.tzinfo is None:
        raise ValueError("a naive datetime has no zone")
    started = parse_rfc3339(record.get("started_at"))
    finished = parse_rfc3339(record.get("finished_at"))
    if started is None or finished is None:
        return Insane("times_unreadable", "started_at or finished_at is not an RFC 3339 time")
    if finished < started:
        return Insane("finished_before_started", "finished_at is earlier than started_at")
    if finished > now + CLOCK_SKEW:
        return Insane("from_the_future", "finished_at is later than the reader's clock")
    agent_url = member_at(record, "agent", "url")
    card_url = member_at(record, "agent", "card_url")
    # PROFILE §8 lists agent.card_url, not agent.url: a record without the latter is sane.
    agent_host = _host(agent_url) if agent_url is not None else None
    card_host = _host(card_url) if card_url is not None else None
    if agent_host is False or card_host is False:
        return Insane("url_scheme", "the agent's URL is not an http or https URL")
    calls: list[Any] = []
    proposals: list[Any] = []
    runs = record.get("runs")
    for run in runs if isinstance(runs, list) else ():
        for name, into in (("calls", calls), ("proposals", proposals)):
            items = member_at(run, name)
            into.extend(items if isinstance(items, list) else ())
    for proposal in proposals:
        url = member_at(proposal, "url")
        if url is not None and _host(url) is False:
            return Insane("url_scheme", "a proposal URL is not an http or https URL")
    home = card_host or agent_host
    for call in calls:
        host = _host(member_at(call, "interface"))
        if host is False:
            return Insane("url_scheme", "a call's interface is not an http or https URL")
        if host is None or home is None or not _same_agent(host, home):
            return Insane("calls_elsewhere", "a call was made to another agent's interface")
    return None


# ---------------------------------------------------------------------------------------
# Standing


def nkey_jwk(key: str) -> dict[str, str]:
    """An nkey's Ed25519 public key as an OKP JWK (RFC 8037), so it can be compared with
    card keys and tried against card signatures. Raises ``KeyFormatError`` for a
    malformed nkey."""
    raw = nkeys.decode_public(key)
    x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    return {"kty": "OKP", "crv": "Ed25519", "x": x}


def nkey_thumbprint(key: str) -> str | None:
    """The RFC 7638 thumbprint of an nkey's Ed25519 key as an OKP JWK, so a runner key
    can be compared with a card signing key; ``None`` for a malformed nkey."""
    try:
        return thumbprint(nkey_jwk(key))
    except KeyFormatError:
        return None


def agent_key_ids(jwks: Iterable[Any], nkey_signers: Iterable[str] = ()) -> tuple[str, ...]:
    """``agent.keys`` (PROFILE §8): the RFC 7638 thumbprint of each JWK in ``jwks`` (a JWK
    whose thumbprint cannot be computed is skipped: it names no key) and each nkey in
    ``nkey_signers`` as it is (a malformed one is skipped), sorted, without repeats."""
    ids: set[str] = set()
    for jwk in jwks:
        try:
            ids.add(thumbprint(jwk))
        except KeyFormatError:
            continue
    ids.update(k for k in nkey_signers if nkey_thumbprint(k) is not None)
    return tuple(sorted(ids))


def proposal_keys(body: bytes | None, max_bytes: int = MAX_DOCUMENT_BYTES) -> tuple[str, ...]:
    """The nkeys a fetched proposal's ``signatures`` name, whether or not they verify:
    ``agent.listed_keys`` (PROFILE §8), informational. A key that verifiably signed it is
    :func:`proposal_signer`'s. Never raises; an unreadable body names none."""
    if body is None:
        return ()
    try:
        document = loads(body, max_bytes=max_bytes, max_depth=MAX_DEPTH)
    except IngressError:
        return ()
    items = document.get("signatures") if isinstance(document, dict) else None
    found: list[str] = []
    for item in items if isinstance(items, list) else ():
        key = item.get("key") if isinstance(item, dict) else None
        if isinstance(key, str) and nkey_thumbprint(key) is not None:
            found.append(key)
    return tuple(dict.fromkeys(found))


def proposal_signer(body: bytes | None, max_bytes: int = MAX_DOCUMENT_BYTES) -> str | None:
    """The nkey whose signature verifies on a fetched proposal (terms §3 steps 4–5,
    whatever digest a card commits to): an ``agent.keys`` member (PROFILE §8). ``None``
    when none does. Never raises."""
    return verify_uncommitted(body, max_bytes=max_bytes).signer


def member_at(value: Any, *path: str) -> Any:
    """``value[path[0]][path[1]]...`` through objects only; ``None`` where a step is not
    an object or lacks the member (reading a record that may be malformed)."""
    for name in path:
        if not isinstance(value, dict):
            return None
        value = value.get(name)
    return value


def _proposal_signers(record: Mapping[str, Any]) -> set[str]:
    signers: set[str] = set()
    runs = record.get("runs")
    for run in runs if isinstance(runs, list) else ():
        proposals = member_at(run, "proposals")
        for item in proposals if isinstance(proposals, list) else ():
            signer = member_at(item, "signer")
            if isinstance(signer, str):
                signers.add(signer)
    return signers


_THUMBPRINT_CHARS: Final = 43  # base64url of a SHA-256 digest, unpadded
_B64U: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _key_id(value: Any) -> bool:
    """An ``agent.keys`` item: an RFC 7638 thumbprint or an nkey."""
    if not isinstance(value, str):
        return False
    if len(value) == _THUMBPRINT_CHARS and set(value) <= _B64U:
        return True
    return nkey_thumbprint(value) is not None


def _standing(
    record: Mapping[str, Any],
    signature: Literal["unsigned", "valid", "invalid"],
    extra_keys: Iterable[str] = (),
) -> tuple[Standing, StandingReason]:
    """The standing rule of PROFILE §8, the signature's status given."""
    ran_by = record.get("ran_by")
    if not isinstance(ran_by, dict) or ran_by.get("party") not in ("platform", "third_party"):
        return "claim", "self_run"
    if signature == "unsigned":
        return "claim", "unsigned"
    key = ran_by.get("key")
    runner = nkey_thumbprint(key) if isinstance(key, str) else None
    if signature != "valid" or runner is None:
        return "claim", "signature_invalid"
    keys = member_at(record, "agent", "keys")
    if not isinstance(keys, list) or not all(_key_id(k) for k in keys):
        return "claim", "agent_keys_missing"
    # Besides agent.keys, every place the record names a key that *signed* for the
    # agent: the thumbprint of the key that verified the card, each proposal signer.
    # Never a key the agent merely lists (agent.listed_keys, a kid): an agent listing a
    # platform's public runner key must not turn its evidence into a claim (PROFILE §8).
    named = set(keys) | _proposal_signers(record) | set(extra_keys)
    if member_at(record, "agent", "card_signature", "status") == "verified":
        value = member_at(record, "agent", "card_signature", "thumbprint")
        if isinstance(value, str):
            named.add(value)
    if key in named or runner in named:
        return "claim", "agent_key"
    return "evidence", "evidence"


def standing_reason(
    record: Mapping[str, Any], extra_keys: Iterable[str] = (), now: datetime | None = None
) -> tuple[Standing, StandingReason]:
    """:func:`standing_of` with the reason it came to that (one of
    :data:`STANDING_REASONS`). ``extra_keys``: more agent key ids (thumbprints, nkeys)
    known to the reader, from documents in hand (:func:`card_key_ids`). A record failing
    :func:`record_sanity` (``now``: the reader's clock, read when not given) is a claim
    with the sanity reason (PROFILE §8). Never raises."""
    insane = record_sanity(record, now if now is not None else datetime.now(UTC))
    if insane is not None:
        return "claim", insane.reason
    return _standing(record, verify_record_signature(record).status, extra_keys)


def card_key_ids(record: Mapping[str, Any], card: Any, jwks: Iterable[Any] = ()) -> tuple[str, ...]:
    """Agent key ids a reader can add from a card in hand, offline (PROFILE §8): the
    thumbprint of each key of ``jwks`` that verifies one of ``card``'s signatures, and the
    runner key's own when it does (then it *is* an agent key, whatever the record says).
    A key ``jwks`` merely holds names no agent key. Never raises on a hostile card or
    record."""
    if not isinstance(card, dict):
        return ()
    candidates = [jwk for jwk in jwks if isinstance(jwk, dict)]
    key = member_at(record, "ran_by", "key")
    try:
        if isinstance(key, str):
            candidates.append(nkey_jwk(key))
    except KeyFormatError:
        pass
    return verified_key_ids(verify_card(card, candidates))


def verified_key_ids(report: CardSignatureReport) -> tuple[str, ...]:
    """The RFC 7638 thumbprints of the keys that verified one of a card's signatures, under
    any reading (``agent.keys``, PROFILE §8), sorted."""
    return tuple(
        sorted({c.thumbprint for c in report.checks if c.status == "verified" and c.thumbprint})
    )


def standing_of(record: Mapping[str, Any], now: datetime | None = None) -> Standing:
    """Recompute a record's standing from what can be checked in it (PROFILE §8).

    Returns ``evidence`` only when all hold: ``ran_by.party`` is ``platform`` or
    ``third_party``; the record carries a runner signature that verifies and is by
    ``ran_by.key`` (:func:`verify_record_signature`); ``agent.keys`` is present and
    well formed; and the runner key is none of the agent's keys: not in ``agent.keys``
    (as nkey or as RFC 7638 thumbprint), not a proposal signer, not the card key's
    thumbprint or a card signature's ``kid``. Returns ``claim`` otherwise: self-run,
    unsigned, a signature that does not verify, signed with an agent key, or
    ``agent.keys`` missing; a record failing :func:`record_sanity` as a reader with
    clock ``now`` (read when not given) sees it; and for anything too malformed to tell.

    The stored ``standing`` is ignored: a display calls this, never reads that. Never
    raises.
    """
    return standing_reason(record, now=now)[0]


# ---------------------------------------------------------------------------------------
# The runner's signature


def signing_bytes(record: Mapping[str, Any]) -> bytes:
    """What the runner signs: ``a2a-interview-result-v1\\n`` + JCS(record without
    ``signatures``) (PROFILE §8). Raises ``CanonicalizationError`` for a record JSON
    cannot carry."""
    return RESULT_SIGNING_PREFIX + canonicalize(
        {k: v for k, v in record.items() if k != "signatures"}
    )


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign_record(record: Mapping[str, Any], seed: str) -> JSONObject:
    """A copy of ``record`` signed by the runner's nkey ``seed`` (PROFILE §8).

    Sets ``ran_by.key`` to the seed's public nkey, recomputes ``standing`` as it will
    read once signed (the key can make it a claim), and replaces ``signatures`` with
    ``[{"key": nkey, "sig": base64url}]``. Raises ``KeyFormatError`` for a malformed seed and
    ``SignatureError`` when ``ran_by`` is missing or names another key.
    """
    private = nkeys.private_key(seed)
    public = nkeys.public_of(private)
    signed: JSONObject = copy.deepcopy(dict(record))
    signed.pop("signatures", None)
    ran_by = signed.get("ran_by")
    if not isinstance(ran_by, dict):
        raise SignatureError("the record has no ran_by object")
    if ran_by.get("key", public) != public:
        raise SignatureError("the record names another runner key")
    ran_by["key"] = public
    signed["standing"] = _standing(signed, "valid")[0]  # as it will verify once signed
    sig = private.sign(signing_bytes(signed))
    signed["signatures"] = [{"key": public, "sig": _b64u(sig)}]
    return signed


@dataclass(frozen=True, slots=True)
class RecordSignature:
    """The runner signature's status: ``unsigned`` (no ``signatures``), ``valid``
    (every signature verifies and one is by ``ran_by.key``), or ``invalid``;
    ``keys`` are the nkeys whose signatures verified."""

    status: Literal["unsigned", "valid", "invalid"]
    keys: tuple[str, ...] = ()


def _sig_bytes(text: Any) -> bytes | None:
    if not isinstance(text, str) or not text.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 64 and _b64u(raw) == text else None


def verify_record_signature(record: Mapping[str, Any]) -> RecordSignature:
    """Check the runner's signature on ``record`` (PROFILE §8). Never raises."""
    if "signatures" not in record:
        return RecordSignature("unsigned")
    items = record["signatures"]
    if not isinstance(items, list) or not items:
        return RecordSignature("invalid")
    try:
        signed = signing_bytes(record)
    except ValueError:
        return RecordSignature("invalid")
    keys: list[str] = []
    for item in items:
        if not isinstance(item, dict) or set(item) != {"key", "sig"}:
            return RecordSignature("invalid")
        sig = _sig_bytes(item["sig"])
        try:
            public = nkeys.decode_public(item["key"])
        except KeyFormatError:
            return RecordSignature("invalid")
        if sig is None:
            return RecordSignature("invalid")
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(sig, signed)
        except InvalidSignature:
            return RecordSignature("invalid")
        keys.append(item["key"])
    if member_at(record, "ran_by", "key") not in keys:
        return RecordSignature("invalid", tuple(keys))
    return RecordSignature("valid", tuple(keys))


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
    data = resources.files(__package__).joinpath("schema/result-record.schema.json").read_bytes()
    value = loads(data)
    assert isinstance(value, dict)
    return value
