"""The shape of the package: a pure core, a pinned public surface (docs/style.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import a2a_interview

CORE = [
    "spec", "errors", "strictjson", "jcs", "pointer", "models", "nkeys", "terms", "cardproto",
    "card", "card._sig", "card._readings", "card._jose",
    "projection", "declarations", "reference",
    "rpc", "rpc._bindings", "rpc._activation", "rpc._paths", "rpc._envelopes",
    "rpc._codings", "rpc._versions", "rpc._scan", "rpc._fast",
    "checks", "checks._findings", "checks._responses", "checks._outcome", "checks._checks",
    "cardurl", "record", "record._sanity", "record._keys", "record._standing",
    "record._record", "pace", "report", "_moved", "codings",
]  # fmt: skip
# The driver families (docs/architecture.md "Drivers") and the drivers' shared floor.
FAMILIES = {"server", "verifier", "ledger", "cli", "conformance", "net"}
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


def test_every_core_module_is_checked() -> None:
    # A module the list above misses is not checked: every module of the core is in it.
    package = Path(a2a_interview.__file__).parent
    found = set()
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[0] in FAMILIES or parts == ["__init__"]:
            continue
        found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert found == set(CORE)


def test_the_serving_floor_does_not_load_the_card_signature() -> None:
    # D-CORE-24: cardproto.py stays outside card/, so the package, the bindings and the
    # middleware load neither the card part nor joserfc.
    code = (
        "import sys, a2a_interview, a2a_interview.rpc, a2a_interview.server.asgi\n"
        "print(sorted(m for m in ('joserfc', 'a2a_interview.card') if m in sys.modules))\n"
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
