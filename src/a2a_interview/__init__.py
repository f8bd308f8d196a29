"""a2a-interview: the A2A Interview Extension, byte-exact.

The pure core (strict JSON, RFC 8785, pointers, wire models, the projection engine,
terms and card signatures) is importable without any server or client dependency.
"""

from __future__ import annotations

from . import _moved
from .declarations import Declarations, build, load
from .errors import (
    AlgorithmRefused,
    CanonicalizationError,
    DeclarationError,
    IngressError,
    InterviewError,
    KeyFormatError,
    PointerError,
    SignatureError,
    WireFormatError,
)
from .jcs import canonicalize, digest
from .models import Answer, Projection, Refusal, Source, result_from_json
from .pointer import escape, format_pointer, resolve
from .projection import CommittedProposal, Interview
from .spec import INTERVIEW_URI, METHODS, QUESTIONS, TERMS_URI
from .strictjson import loads
from .terms import ProposalVerdict, TermsEntry, read_terms_entries, sign_proposal, verify_proposal

__version__ = "0.7.0"

_moved.install()  # the module paths of 0.6, for a deprecation period (D-CORE-23)

__all__ = [
    "INTERVIEW_URI",
    "METHODS",
    "QUESTIONS",
    "TERMS_URI",
    "AlgorithmRefused",
    "Answer",
    "CanonicalizationError",
    "CommittedProposal",
    "DeclarationError",
    "Declarations",
    "IngressError",
    "Interview",
    "InterviewError",
    "KeyFormatError",
    "PointerError",
    "Projection",
    "ProposalVerdict",
    "Refusal",
    "SignatureError",
    "Source",
    "TermsEntry",
    "WireFormatError",
    "__version__",
    "build",
    "canonicalize",
    "digest",
    "escape",
    "format_pointer",
    "load",
    "loads",
    "read_terms_entries",
    "resolve",
    "result_from_json",
    "sign_proposal",
    "verify_proposal",
]
