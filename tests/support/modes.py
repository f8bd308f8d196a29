"""The two modes of a zoo (D-TEST-45, D-TEST-56): each test runs sampled under several
seeded draws and ``thorough``; a test that never verifies under the draw runs sampled
once. A zoo module keeps its own ``SEEDS`` and ``MODE`` and hands them here."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pytest


def calls(function: Any, name: str) -> bool:
    """Whether ``function`` calls ``name`` (in its body, or a lambda or function in it)."""
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        if name in code.co_names:
            return True
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return False


def parametrize(metafunc: pytest.Metafunc, seeds: tuple[int, ...], verifier: str) -> None:
    """Every test in each mode, sampled under each of ``seeds``; one that never calls
    ``verifier`` (the module's helper that verifies) runs sampled once."""
    drawn = seeds if calls(metafunc.function, verifier) else seeds[:1]
    modes = [*(f"sampled-{seed}" for seed in drawn), "thorough"]
    metafunc.parametrize("mode", modes, indirect=True)


def entered(
    request: pytest.FixtureRequest, mode: dict[str, Any], seeds: tuple[int, ...]
) -> Iterator[str]:
    """Set ``mode`` (the module's ``MODE``) for the test's parameter, and reset it after."""
    mode["thorough"] = request.param == "thorough"
    mode["seed"] = seeds[0] if mode["thorough"] else int(request.param.split("-")[1])
    yield request.param
    mode["thorough"], mode["seed"] = False, seeds[0]
