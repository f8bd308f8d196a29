"""The one place for each fact the specifications name.

Every URI, method name, header name, refusal member and reason code used anywhere in the
package is defined here once, spelled as the texts spell it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final, Literal

# interview §2
INTERVIEW_URI: Final = "https://agentsow.com/extensions/a2a-interview/v1"
# terms §1
TERMS_URI: Final = "https://agentsow.com/extensions/a2a-terms/v1"

# PROFILE §3.2: the 1.0 header and its 0.3 spelling.
EXTENSIONS_HEADER: Final = "A2A-Extensions"
LEGACY_EXTENSIONS_HEADER: Final = "X-A2A-Extensions"
VERSION_HEADER: Final = "A2A-Version"

CARD_PATH: Final = "/.well-known/agent-card.json"

METHOD_PREFIX: Final = "interview/"
# The type of a question's name. A type checker reads a Literal only as written, so this is
# the one restatement of the registry's names; tests/test_spec_registry.py ties the two.
Question = Literal["identity", "capabilities", "usage", "terms", "refusals"]


@dataclass(frozen=True, slots=True)
class QuestionSpec:
    """One question of the closed method set (interview §4, PROFILE §4.3, D-CORE-28).

    ``members`` are the card members the answer projects, in answer order, as RFC 6901
    pointers; ``{i}`` runs over the array's indices in document order, and consecutive
    members under the same array are taken element by element. With ``selector`` the
    question takes the ``skill`` selector (interview §4 rule 3), which narrows
    ``/skills/{i}/...`` to the matched skills. ``document`` names what is projected:
    ``proposal`` projects every top-level member of each selected committed proposal in
    JCS member order (``members`` is then empty), and its answer is ``declared:false``
    when no proposal is selected (interview §4 rule 4).
    """

    name: Question
    selector: bool
    members: tuple[str, ...]
    document: Literal["card", "proposal"] = "card"


_SECURITY = ("/securitySchemes", "/securityRequirements", "/security")

# interview §4: the closed method set, in the draft's order; PROFILE §4.3: the members.
REGISTRY: Final[tuple[QuestionSpec, ...]] = (
    QuestionSpec("identity", False, ("/name", "/provider", "/url",
                                     "/supportedInterfaces/{i}/url", "/version", "/signatures")),
    QuestionSpec("capabilities", False, ("/skills/{i}/id", "/skills/{i}/description")),
    QuestionSpec("usage", True, ("/supportedInterfaces", "/url", "/preferredTransport",
                                 "/additionalInterfaces", "/defaultInputModes",
                                 "/defaultOutputModes", "/skills/{i}/inputModes",
                                 "/skills/{i}/outputModes", "/skills/{i}/securityRequirements",
                                 *_SECURITY)),
    QuestionSpec("terms", True, (), document="proposal"),
    QuestionSpec("refusals", False, ("/skills/{i}/id", *_SECURITY)),
)  # fmt: skip
SPECS: Final[Mapping[str, QuestionSpec]] = MappingProxyType({q.name: q for q in REGISTRY})
QUESTIONS: Final[tuple[Question, ...]] = tuple(q.name for q in REGISTRY)
METHODS: Final = tuple(METHOD_PREFIX + q for q in QUESTIONS)
# interview §4 rule 3: only these take the `skill` selector.
SELECTOR_QUESTIONS: Final[frozenset[str]] = frozenset(q.name for q in REGISTRY if q.selector)


class RefusalReason(StrEnum):
    """interview §6 rule 2: a closed set that grows only by revision."""

    OUT_OF_SCOPE = "out_of_scope"
    NOT_DECLARED = "not_declared"  # reserved; never produced (PROFILE §5)


REFUSAL_DETAIL: Final = "no declared skill matches"  # interview §6, PROFILE §5

# PROFILE §3.3, §3.5, §3.7: the fixed JSON-RPC errors. No message carries request content.
# (-32700 is never ours: a body that is not strict I-JSON goes to the host.)
RPC_INVALID_REQUEST: Final = (-32600, "Invalid Request")
RPC_METHOD_NOT_FOUND: Final = (-32601, "Method not found")
RPC_INVALID_PARAMS: Final = (-32602, "Invalid params")
RPC_TOO_MANY_REQUESTS: Final = (-32000, "Too many requests")
# PROFILE §3.10: the host's version negotiation (A2A 1.0 §3.6, §5.4), fixed message.
RPC_VERSION_NOT_SUPPORTED: Final = (-32009, "Version not supported")
# A2A 1.0 §3.6: a request without A2A-Version (or with an empty one) is a 0.3 request.
DEFAULT_A2A_VERSION: Final = "0.3"
# PROFILE §3.9: content codings an activated body may carry (one layer, any case).
ACCEPTED_CODINGS: Final[frozenset[str]] = frozenset({"gzip", "x-gzip", "deflate"})

# Serving bounds (docs/decisions.md D-SERVE-12): the largest activated body a server layer
# reads to judge it; past it an activated request at an interview path is refused.
MAX_JUDGED_BYTES: Final = 10 * 1024 * 1024

# PROFILE §1.4 defaults.
MAX_DOCUMENT_BYTES: Final = 1 << 20
MAX_DEPTH: Final = 64
MAX_SAFE_INTEGER: Final = (1 << 53) - 1

# PROFILE §7: the bounds of one verifier run, so that a hostile card can make the verifier
# neither a load generator nor a CPU sink (D-CLI-6).
MAX_SIGNATURES_TRIED: Final = 16  # a card's signatures checked, in card order
MAX_KEYS_TRIED: Final = 64  # JWKS keys tried, in document order
MAX_INTERFACES: Final = 16  # interfaces interviewed; the rest is an advisory
MAX_REQUESTS: Final = 2048  # the default request budget of one run (--max-requests)
FAILURES_IN_A_ROW: Final = 3  # transport failures or non-protocol answers: abandoned

# The verifier's defaults: its options (``VerifyOptions``, ``ClientOptions``) and the
# command line's options read these, so a default is changed here alone (D-CLI-39).
DEFAULT_DEADLINE: Final = 120.0  # seconds for one agent's whole procedure (--deadline)
DEFAULT_TIMEOUT: Final = 10.0  # seconds for one HTTP exchange (--timeout)
DEFAULT_CHURN_DELAY: Final = 2.0  # seconds before the re-run after a conflict
DEFAULT_MAX_SKILLS: Final = 256  # skills whose selectors a thorough run asks (--max-skills)
SELECTORS_PER_QUESTION: Final = 2  # k: the skill ids a default run asks each with

# PROFILE §7: the serving layers' default rate limit per client, sized with the verifier's
# defaults so that one thorough verify of 100 skills on 3 interfaces, or of DEFAULT_MAX_SKILLS
# skills on one, finishes without a wait (D-CLI-8; tests/test_spec_registry.py counts them).
DEFAULT_RATE_LIMIT: Final = "1200/minute"

# Agent SoW §6: the provider signature's domain separator.
SOW_SIGNING_PREFIX: Final = b"agent-sow-v1\n"
# PROFILE §8: the runner's signature over a result record.
RESULT_SIGNING_PREFIX: Final = b"a2a-interview-result-v1\n"
RESULT_FORMAT: Final = "a2a-interview-result/1"


class ProposalFailure(StrEnum):
    """terms §3 (terms-extension.md §3): why an entry states no terms. Closed."""

    FETCH_FAILED = "fetch_failed"
    NOT_JSON = "not_json"
    DIGEST_SPELLING = "digest_spelling"
    DIGEST_MISMATCH = "digest_mismatch"
    UNSIGNED = "unsigned"
    SIGNATURE_MALFORMED = "signature_malformed"
    SIGNATURE_INVALID = "signature_invalid"
    NOT_STANDING_PROPOSAL = "not_standing_proposal"
    DIRECTED_ON_PUBLIC_CARD = "directed_on_public_card"
