"""What a test needs from outside the repository, and the one rule for when it is missing.

A clone stands alone: the project's own test data lives in ``tests/data``. A few tests need
more: the third-party vector corpora read in place from the folder ``A2A_INTERVIEW_VECTORS``
names, by default ``shared/spec/vectors`` in the clone's parent folder (``CORPORA`` says
what each is and where to get it), a ``redis-server`` binary,
``node``/``npm``. When such a part is missing, the test SKIPS with the reason on a
developer's machine and FAILS under CI (the environment variable ``CI`` set to anything
but ``""``, ``0``, ``false`` or ``no``): CI must install everything, so there a missing
part is a broken CI set-up, never a silent skip (``.ci/run`` installs them).

Use :func:`need` for every such check (:func:`module` for an optional Python package); do
not write ``pytest.skip`` or ``pytest.importorskip`` anywhere else:
``tests/test_suite_rules.py`` reads every test file to hold that.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
# The folder holding the third-party corpora: the one A2A_INTERVIEW_VECTORS names, else
# shared/spec/vectors in the clone's parent folder (where CI's checkout puts them).
VECTORS_VARIABLE = "A2A_INTERVIEW_VECTORS"
DEFAULT_VECTORS = "../shared/spec/vectors"
SHARED_VECTORS = Path(os.environ.get(VECTORS_VARIABLE) or ROOT / DEFAULT_VECTORS).resolve()

_NOT_CI = ("", "0", "false", "no")


def in_ci() -> bool:
    """True when the environment variable ``CI`` says this run is CI's."""
    return os.environ.get("CI", "").strip().lower() not in _NOT_CI


def need(present: object, what: str, how: str) -> None:
    """Go on when ``present`` is true; else skip (outside CI) or fail (under CI).

    ``what`` names the missing part, ``how`` says how to get it; both are the reason shown.
    """
    if present:
        return
    reason = f"{what} is missing: {how}"
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so a missing part is a failure)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)  # also at a module's top: all its tests


# The third-party corpora read in place (tests/data/README.md says why they are not copied):
# what each is, and where to get it.
CORPORA = {
    "jcs": (
        "the RFC 8785 (JCS) input/output corpus of Anders Rundgren's json-canonicalization "
        "test suite",
        "copy input/ and output/ of testdata/ in "
        "https://github.com/cyberphone/json-canonicalization there",
    ),
    "card-sign": (
        "the signed Agent Card corpus a2a-card-sign-v01 (42 vectors)",
        "copy conformance-vectors/a2a-card-sign-v01/ of "
        "https://github.com/ogasurfproject-jpg/a2a-tck there",
    ),
    ".": (
        "the spec vector folder holding the jcs/ and card-sign/ corpora",
        "create it and copy the two corpora into it (see tests/needs.py CORPORA)",
    ),
}


def shared_vectors(corpus: str) -> Path:
    """The third-party corpus ``<corpus>`` of :data:`SHARED_VECTORS` (``"."``: the folder
    itself), read in place. The reason of a skip says what the corpus is, where it is
    expected, how to get it and how to point the tests elsewhere."""
    path = SHARED_VECTORS / corpus if corpus != "." else SHARED_VECTORS
    named = os.environ.get(VECTORS_VARIABLE)
    folder = named or DEFAULT_VECTORS
    where = folder if corpus == "." else f"{folder}/{corpus}"
    if not named:
        where += " beside the repository"
    what, how = CORPORA[corpus]
    need(
        path.is_dir(),
        f"{what}, expected at {where} ({path})",
        f"{how}, or set {VECTORS_VARIABLE} to the folder holding jcs/ and card-sign/; "
        "it is read in place, never copied into the repository",
    )
    return path


def binary(name: str, how: str) -> str:
    """The path of the program ``name`` on ``PATH``."""
    path = shutil.which(name)
    need(path is not None, f"the program {name!r} (not on PATH)", how)
    assert path is not None
    return path


def module(name: str, what: str, how: str) -> ModuleType:
    """The optional package ``name``, imported; when it is not installed, :func:`need`'s
    rule (skip, or fail under CI). Usable at a test module's top level. Only a missing
    ``name`` (or a package above it) counts as missing: any other import error raises."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
            raise
        need(False, what, how)
        raise  # unreachable: need skipped or failed
