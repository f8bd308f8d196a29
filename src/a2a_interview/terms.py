"""Terms entries and standing proposals (terms-extension.md §1–§5).

Reading a card's terms entries, verifying one committed proposal (a value:
:class:`ProposalVerdict`, never an exception), and signing a proposal with an nkey seed.
The fetch is the caller's: :func:`verify_proposal` takes the fetched bytes.
"""

from __future__ import annotations

import base64
import binascii
import copy
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import nkeys
from ._moved import moved_name
from .errors import IngressError, KeyFormatError
from .jcs import canonicalize, digest_bytes, is_digest
from .spec import MAX_DEPTH, MAX_DOCUMENT_BYTES, SOW_SIGNING_PREFIX, TERMS_URI, ProposalFailure
from .strictjson import JSONObject, loads


@dataclass(frozen=True, slots=True)
class TermsEntry:
    """One item of a terms extension entry's ``params.proposals`` (terms §1).

    ``url`` and ``digest`` are ``None`` when the card does not give them as strings; such
    an entry cannot verify (``fetch_failed`` and ``digest_spelling`` respectively).
    ``member`` is the entry's pointer in the card, for messages.
    """

    url: str | None
    digest: str | None
    offering: str | None
    sow: str | None
    member: str

    @property
    def key(self) -> tuple[str | None, str | None]:
        return (self.url, self.digest)


def __getattr__(name: str) -> object:  # a name of 0.6 renamed here (D-CORE-34)
    return moved_name(__name__, name)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def card_extensions(card: Any) -> list[tuple[int, dict[str, Any]]]:
    """The object items of ``capabilities.extensions`` with their indices."""
    caps = card.get("capabilities") if isinstance(card, dict) else None
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    if not isinstance(exts, list):
        return []
    return [(i, ext) for i, ext in enumerate(exts) if isinstance(ext, dict)]


def terms_extensions(card: Any) -> list[tuple[int, dict[str, Any]]]:
    """The card's terms extension items with their index in ``capabilities.extensions``."""
    return [(i, ext) for i, ext in card_extensions(card) if ext.get("uri") == TERMS_URI]


def read_terms_entries(card: Any) -> list[TermsEntry]:
    """Every committed entry, items in card order, their lists concatenated (PROFILE §2.2).

    Items that are not objects are skipped: they name no document. Unknown members are
    ignored (terms §1).
    """
    entries: list[TermsEntry] = []
    for i, ext in terms_extensions(card):
        params = ext.get("params")
        proposals = params.get("proposals") if isinstance(params, dict) else None
        if not isinstance(proposals, list):
            continue
        for j, item in enumerate(proposals):
            if not isinstance(item, dict):
                continue
            entries.append(
                TermsEntry(
                    url=_string(item.get("url")),
                    digest=_string(item.get("digest")),
                    offering=_string(item.get("offering")),
                    sow=_string(item.get("sow")),
                    member=f"/capabilities/extensions/{i}/params/proposals/{j}",
                )
            )
    return entries


@dataclass(frozen=True, slots=True)
class ProposalVerdict:
    """The outcome of verifying one entry: ``reason is None`` exactly when it verified."""

    reason: ProposalFailure | None
    document: JSONObject | None = None
    signer: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None

    @property
    def result(self) -> str:
        """``ok`` or the reason code, as the result record spells it (PROFILE §8)."""
        return "ok" if self.reason is None else str(self.reason)


def proposal_signing_bytes(document: JSONObject) -> bytes:
    """What the provider signs: ``agent-sow-v1\\n`` + JCS(document without signatures)."""
    unsigned = {k: v for k, v in document.items() if k != "signatures"}
    return SOW_SIGNING_PREFIX + canonicalize(unsigned)


def _b64_signature(text: Any) -> bytes | None:
    # Agent SoW §6: accept base64url or standard base64, padded or not; exactly 64 bytes.
    if not isinstance(text, str) or not text.isascii():
        return None
    s = text.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 64 else None


def _check_signature(record: Any, signed: bytes) -> ProposalFailure | None:
    if not isinstance(record, dict):
        return ProposalFailure.SIGNATURE_MALFORMED
    sig = _b64_signature(record.get("sig"))
    try:
        key = nkeys.decode_public(record.get("key"))  # type: ignore[arg-type]
    except KeyFormatError:
        return ProposalFailure.SIGNATURE_MALFORMED
    if sig is None or not isinstance(record.get("role"), str):
        return ProposalFailure.SIGNATURE_MALFORMED
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(sig, signed)
    except InvalidSignature:
        return ProposalFailure.SIGNATURE_INVALID
    return None


def check_document(document: JSONObject) -> ProposalVerdict:
    """Steps 4 and 5 of terms §3 on a parsed document (signature, then shape).

    Every signature record present must be well formed and valid; then the document must
    be a standing proposal: ``sow == "v1"``, ``parties.client`` null, no
    ``parties.offered_to``, exactly one signature, by the provider.
    """
    signatures = document.get("signatures")
    if signatures is None or signatures == []:
        return ProposalVerdict(ProposalFailure.UNSIGNED)
    if not isinstance(signatures, list):
        return ProposalVerdict(ProposalFailure.SIGNATURE_MALFORMED)
    signed = proposal_signing_bytes(document)
    for record in signatures:
        failure = _check_signature(record, signed)
        if failure is not None:
            return ProposalVerdict(failure)
    parties = document.get("parties")
    if isinstance(parties, dict) and "offered_to" in parties:
        return ProposalVerdict(ProposalFailure.DIRECTED_ON_PUBLIC_CARD)
    standing = (
        document.get("sow") == "v1"
        and isinstance(parties, dict)
        and "client" in parties
        and parties["client"] is None
        and len(signatures) == 1
        and signatures[0].get("role") == "provider"
    )
    if not standing:
        return ProposalVerdict(ProposalFailure.NOT_STANDING_PROPOSAL)
    return ProposalVerdict(None, document, signatures[0]["key"])


def _parse(body: bytes | None, max_bytes: int, max_depth: int) -> JSONObject | ProposalVerdict:
    if body is None:
        return ProposalVerdict(ProposalFailure.FETCH_FAILED)
    try:
        document = loads(body, max_bytes=max_bytes, max_depth=max_depth)
    except IngressError:
        return ProposalVerdict(ProposalFailure.NOT_JSON)
    if not isinstance(document, dict):
        return ProposalVerdict(ProposalFailure.NOT_JSON)
    return document


def verify_proposal(
    digest: str | None,
    body: bytes | None,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_depth: int = MAX_DEPTH,
) -> ProposalVerdict:
    """Verify fetched ``body`` against an entry's ``digest`` (terms §3 steps 1–5).

    ``body`` is ``None`` when the fetch failed (transport error, non-2xx, over the size
    bound): ``fetch_failed``. The digest's spelling is checked first, since a misspelled
    digest can commit to nothing. Returns a verdict; never raises.
    """
    if not is_digest(digest):
        return ProposalVerdict(ProposalFailure.DIGEST_SPELLING)
    document = _parse(body, max_bytes, max_depth)
    if isinstance(document, ProposalVerdict):
        return document
    if digest_bytes(canonicalize(document)) != digest:  # terms §5: the whole document
        return ProposalVerdict(ProposalFailure.DIGEST_MISMATCH)
    return check_document(document)


def verify_uncommitted(
    body: bytes | None, *, max_bytes: int = MAX_DOCUMENT_BYTES, max_depth: int = MAX_DEPTH
) -> ProposalVerdict:
    """Terms §3 without step 3: for a publisher checking a document no card commits to
    yet. Every other step, and every reason but the digest's, as :func:`verify_proposal`."""
    document = _parse(body, max_bytes, max_depth)
    return document if isinstance(document, ProposalVerdict) else check_document(document)


def sign_proposal(document: JSONObject, seed: str, signed_at: str) -> JSONObject:
    """A copy of ``document`` carrying one provider signature by ``seed`` (Agent SoW §6).

    Any earlier ``signatures`` are replaced: a standing proposal carries exactly one.
    ``signed_at`` is an RFC 3339 UTC time, injected so that signing is reproducible.
    Raises ``KeyFormatError`` for a malformed seed.
    """
    key = nkeys.private_key(seed)
    signed = copy.deepcopy({k: v for k, v in document.items() if k != "signatures"})
    sig = key.sign(proposal_signing_bytes(signed))
    signed["signatures"] = [
        {
            "role": "provider",
            "key": nkeys.public_of(key),
            "signed_at": signed_at,
            "sig": base64.urlsafe_b64encode(sig).decode("ascii").rstrip("="),
        }
    ]
    return signed
