"""The shape of the package: a pure core, a pinned public surface (docs/style.md)."""

from __future__ import annotations

import subprocess
import sys

import a2a_interview

CORE = [
    "spec", "errors", "ijson", "jcs", "pointer", "models", "nkeys", "terms", "cardsig",
    "cardreadings", "jose", "cardproto",
    "projection", "declarations", "rpc", "reference", "findings", "responses", "outcome",
    "checks", "cardurl", "sanity", "agentkeys", "standing", "record", "pace",
]  # fmt: skip
FORBIDDEN = ["httpx", "starlette", "a2a", "asyncio", "anyio", "uvicorn", "jwt"]


def test_core_imports_no_io_framework() -> None:
    # docs/style.md: the core imports no httpx, starlette, a2a, asyncio.
    code = (
        "import importlib, sys\n"
        f"for m in {CORE!r}:\n"
        "    try:\n"
        "        importlib.import_module('a2a_interview.' + m)\n"
        "    except ModuleNotFoundError as e:\n"
        "        if e.name != 'a2a_interview.' + m: raise\n"
        f"print(sorted(m for m in {FORBIDDEN!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_check_itself_can_fail() -> None:
    code = f"import asyncio, sys; print(sorted(m for m in {FORBIDDEN!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['asyncio']"


def test_public_surface_is_pinned() -> None:
    assert sorted(a2a_interview.__all__) == sorted([
        "INTERVIEW_URI", "METHODS", "QUESTIONS", "TERMS_URI", "AlgorithmRefused", "Answer",
        "CanonicalizationError", "CommittedProposal", "DeclarationError", "Declarations",
        "IngressError", "Interview", "InterviewError", "KeyFormatError", "PointerError",
        "Projection", "ProposalVerdict", "Refusal", "SignatureError", "Source", "TermsEntry",
        "WireFormatError", "__version__", "build", "canonicalize", "digest", "escape",
        "format_pointer", "load", "loads", "read_terms_entries", "resolve",
        "result_from_json", "sign_proposal", "verify_proposal",
    ])  # fmt: skip
    for name in a2a_interview.__all__:
        assert hasattr(a2a_interview, name), name
