"""Shared fixtures. The project's own test data is in ``tests/data``; the third-party
vector corpora are read in place from ``needs.SHARED_VECTORS`` (``needs.py`` says where
that is and what happens when they are missing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from needs import DATA, shared_vectors

pytest_plugins = ["kinds"]  # marks each test vectors, transport or behaviour

# No timed assertions in tests (the brief's bar): Hypothesis's per-example deadline is
# one, and it failed property tests on the shared machine under load. No deadline.
settings.register_profile("a2a-interview", deadline=None)
settings.load_profile("a2a-interview")


# The per-test bound of a test marked `slow` (D-TEST-30): pyproject.toml's `timeout`
# (300 s) bounds the others. A test's own @pytest.mark.timeout wins over both.
SLOW_TIMEOUT = 1200


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def data() -> Path:
    """``tests/data``: the project's own vectors (see its README for their origin)."""
    return DATA


@pytest.fixture
def jcs_vectors() -> Path:
    """The RFC 8785 corpus (``jcs/`` of ``needs.SHARED_VECTORS``): skips outside CI when
    absent."""
    return shared_vectors("jcs")


@pytest.fixture
def vectors() -> Path:
    """``needs.SHARED_VECTORS``, read in place: skips outside CI when absent. Only for
    the third-party corpora; the project's own data is the ``data`` fixture."""
    return shared_vectors(".")
