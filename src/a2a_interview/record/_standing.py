"""A result record's standing (PROFILE §8) and the runner's signature it rests on.

- :func:`standing_of` recomputes ``claim`` or ``evidence`` from the record's contents
  and its runner signature; a display uses it and never trusts the stored ``standing``
  (PROFILE §8, interview §8, §9 rule 4). :func:`standing_reason` says why, in the one
  vocabulary of :data:`STANDING_WHY`.
- :func:`sign_record` and :func:`verify_record_signature`: the runner's Ed25519
  signature, nkey-encoded key, base64url, over ``a2a-interview-result-v1\\n`` + JCS of
  the record without ``signatures`` (:func:`signing_bytes`).

Pure; the names are re-exported by :mod:`a2a_interview.record`.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, get_args

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .. import nkeys
from ..errors import KeyFormatError, SignatureError
from ..jcs import canonicalize
from ..spec import RESULT_SIGNING_PREFIX
from ..strictjson import JSONObject
from ._keys import nkey_thumbprint
from ._sanity import SanityReason, member_at, record_sanity

__all__ = [
    "STANDING_REASONS",
    "STANDING_WHY",
    "RecordSignature",
    "Standing",
    "StandingReason",
    "sign_record",
    "signing_bytes",
    "standing_given",
    "standing_of",
    "standing_reason",
    "verify_record_signature",
]

Standing = Literal["claim", "evidence"]

# Why a record has the standing it has (standing_reason), as the report names it.
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
    "url_userinfo": "it names a URL with userinfo (user@host), which hides its host",
    "calls_elsewhere": "its calls were made to another agent's interfaces than the one it names",
}


# A proposal entry with one of these results names a document the card does not commit
# to (or none at all): its signer is no agent key (PROFILE §8). A record written before
# that rule could name one.
_UNCOMMITTED: Final = frozenset({"fetch_failed", "not_json", "digest_spelling", "digest_mismatch"})


def _proposal_signers(record: Mapping[str, Any]) -> set[str]:
    signers: set[str] = set()
    runs = record.get("runs")
    for run in runs if isinstance(runs, list) else ():
        proposals = member_at(run, "proposals")
        for item in proposals if isinstance(proposals, list) else ():
            signer = member_at(item, "signer")
            if isinstance(signer, str) and member_at(item, "result") not in _UNCOMMITTED:
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


def standing_given(
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
    return standing_given(record, verify_record_signature(record).status, extra_keys)


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
    signed["standing"] = standing_given(signed, "valid")[0]  # as it will verify once signed
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


def verify_record_signature(
    record: Mapping[str, Any], canonical: bytes | None = None
) -> RecordSignature:
    """Check the runner's signature on ``record`` (PROFILE §8). ``canonical``: the JCS of
    ``record`` without ``signatures`` when the caller has it already (the store computes
    it once for the record's identity too); computed here otherwise. Never raises."""
    if "signatures" not in record:
        return RecordSignature("unsigned")
    items = record["signatures"]
    if not isinstance(items, list) or not items:
        return RecordSignature("invalid")
    try:
        signed = signing_bytes(record) if canonical is None else RESULT_SIGNING_PREFIX + canonical
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
