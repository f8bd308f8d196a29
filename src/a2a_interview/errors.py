"""The package's exceptions: one tree, each class with a stable short ``code``.

Exceptions mean a caller's misuse or input that cannot be used at all. A refusal, a
conflict or a failed proposal is a *value* (see ``models`` and ``terms``), never raised.
No message interpolates a declared document or anything a peer sent.

    InterviewError                      code
    ├── IngressError                    ingress        (strict I-JSON, PROFILE §1)
    │   ├── TooLarge                    too_large
    │   ├── TooDeep                     too_deep
    │   ├── NotUTF8                     not_utf8
    │   ├── ByteOrderMark               bom
    │   ├── MalformedJSON               malformed
    │   ├── DuplicateKey                duplicate_key
    │   ├── NonFiniteNumber             non_finite
    │   ├── IntegerOutOfRange           integer_range
    │   └── LoneSurrogate               lone_surrogate
    ├── CanonicalizationError           canonicalization
    ├── PointerError                    pointer        (RFC 6901)
    │   ├── PointerSyntaxError          pointer_syntax
    │   └── PointerNotFound             pointer_not_found
    ├── WireFormatError                 wire_format    (a model's from_json)
    ├── DeclarationError                declaration    (a card or proposal we cannot serve)
    ├── KeyFormatError                  key_format     (nkeys, JWKs, seeds)
    ├── SignatureError                  signature
    │   └── AlgorithmRefused            alg_refused    (none, HS*, anything unlisted)
    │
    │   The drivers add theirs beside their code, on the same root:
    ├── client.TransportFailure         transport      (an exchange with a peer failed)
    │   ├── InsecureURL                 insecure_url
    │   ├── ConnectFailed               connect_failed
    │   ├── TimedOut                    timeout
    │   ├── BodyTooLarge                too_large
    │   ├── RedirectRefused             redirect_refused
    │   ├── Unavailable                 unavailable    (502, 503, 504)
    │   ├── RateLimited                 rate_limited   (429 beyond the wait budget)
    │   ├── EncodingRefused             bad_encoding   (stacked, unknown, corrupt)
    │   ├── AddressRefused              address_refused (not a public address)
    │   └── DeadlineExceeded            deadline       (the overall deadline passed)
    ├── verify.NotOffered               not_offered
    ├── verify.NoInterface              no_interface   (gRPC only: nothing to ask on)
    ├── verify.NotAnswered              not_answered   (ask: not a well-formed result)
    ├── verify.AuthenticationRequired   authentication_required
    │   └── CredentialsNotSent          credentials_not_sent (an origin sent none)
    └── server.proxy.ProxyError         proxy          (cannot start, or read upstream)
"""

from __future__ import annotations


class InterviewError(Exception):
    """Root of every exception this package raises."""

    code = "error"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.__doc__ or self.code)


class IngressError(InterviewError, ValueError):
    """The bytes are not strict I-JSON within the configured bounds."""

    code = "ingress"


class TooLarge(IngressError):
    """The document is larger than the size bound."""

    code = "too_large"


class TooDeep(IngressError):
    """The document nests deeper than the depth bound."""

    code = "too_deep"


class NotUTF8(IngressError):
    """The document is not valid UTF-8."""

    code = "not_utf8"


class ByteOrderMark(IngressError):
    """The document starts with a byte order mark (I-JSON forbids it)."""

    code = "bom"


class MalformedJSON(IngressError):
    """The document is not JSON."""

    code = "malformed"


class DuplicateKey(IngressError):
    """An object has the same member name twice."""

    code = "duplicate_key"


class NonFiniteNumber(IngressError):
    """A number is NaN, Infinity, or overflows a double."""

    code = "non_finite"


class IntegerOutOfRange(IngressError):
    """An integer lies outside ±(2^53−1)."""

    code = "integer_range"


class LoneSurrogate(IngressError):
    """A string holds an unpaired UTF-16 surrogate."""

    code = "lone_surrogate"


class CanonicalizationError(InterviewError, ValueError):
    """The value has no RFC 8785 form (an unsupported type, a non-finite or huge number)."""

    code = "canonicalization"


class PointerError(InterviewError, ValueError):
    """An RFC 6901 pointer problem."""

    code = "pointer"


class PointerSyntaxError(PointerError):
    """The string is not an RFC 6901 JSON Pointer."""

    code = "pointer_syntax"


class PointerNotFound(PointerError, LookupError):
    """The pointer names no value in the document."""

    code = "pointer_not_found"


class WireFormatError(InterviewError, ValueError):
    """A JSON value does not have the exact members and types of the wire model."""

    code = "wire_format"


class DeclarationError(InterviewError, ValueError):
    """A declared document cannot be served (PROFILE §2.4)."""

    code = "declaration"


class KeyFormatError(InterviewError, ValueError):
    """A key, seed or JWK is malformed (wrong prefix, length, checksum or members)."""

    code = "key_format"


class SignatureError(InterviewError, ValueError):
    """A signature cannot be produced or checked as asked."""

    code = "signature"


class AlgorithmRefused(SignatureError):
    """The algorithm is not on the allowlist (never none, never HS*)."""

    code = "alg_refused"
