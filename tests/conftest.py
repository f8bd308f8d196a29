"""Shared fixtures. The spec vectors are read in place, from ../shared beside the repo."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
VECTORS = SHARED / "spec" / "vectors"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def vectors() -> Path:
    # The vectors are the authority: a missing folder is a failure, never a skip.
    assert VECTORS.is_dir(), f"spec vectors not found at {VECTORS}"
    return VECTORS
