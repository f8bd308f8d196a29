"""Outcomes and statuses (PROFILE §7, §8): from the conflicts and advisories of one or
two complete runs, the outcome (:func:`derive_outcome`), each run's status per check
(:func:`run_statuses`) and the record's across runs (:func:`overall_statuses`). The
names are re-exported by :mod:`a2a_interview.checks`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from ._findings import CHECKS, Advisory, Check, Conflict

__all__ = ["CheckStatus", "Outcome", "derive_outcome", "overall_statuses", "run_statuses"]


class Outcome(StrEnum):
    """A result's outcome (PROFILE §7, §8)."""

    consistent = "consistent"
    churn = "churn"
    non_conformant = "non_conformant"
    not_offered = "not_offered"
    unreachable = "unreachable"


class CheckStatus(StrEnum):
    """How one check came out. ``churn`` only appears across runs (a conflict that did
    not survive the re-run); ``advisory`` means advisories but no conflict."""

    passed = "passed"
    failed = "failed"
    churn = "churn"
    advisory = "advisory"
    skipped = "skipped"


def derive_outcome(
    first: Sequence[Conflict], second: Sequence[Conflict] | None
) -> tuple[Outcome, frozenset[tuple[object, ...]]]:
    """PROFILE §7 from two complete runs' conflicts: the outcome and the persistent keys.

    No conflict in the first run: ``consistent``. A key in both runs: ``non_conformant``.
    Otherwise ``churn`` (every first-run conflict vanished; conflicts new in the re-run
    have not survived a re-run of their own, so they cannot be persistent). ``second``
    is ``None`` only when the first run had no conflict.
    """
    if not first:
        return Outcome.consistent, frozenset()
    if second is None:
        raise ValueError("a run with conflicts needs its re-run")
    persistent = frozenset(c.key for c in first) & frozenset(c.key for c in second)
    return (Outcome.non_conformant if persistent else Outcome.churn), persistent


def run_statuses(
    performed: Iterable[Check],
    conflicts: Iterable[Conflict],
    advisories: Iterable[Advisory],
    failed: Iterable[Check] = (),
) -> dict[Check, CheckStatus]:
    """One run's status per check, in report order. ``failed`` names checks that failed
    without a conflict (``card_fetch``: the run could not read the card)."""
    done = set(performed)
    failing = {c.check for c in conflicts} | set(failed)
    advised = {a.code for a in advisories}
    out: dict[Check, CheckStatus] = {}
    for check in CHECKS:
        if check in failing:
            out[check] = CheckStatus.failed
        elif check in advised:
            out[check] = CheckStatus.advisory
        elif check in done:
            out[check] = CheckStatus.passed
        else:
            out[check] = CheckStatus.skipped
    return out


def overall_statuses(
    runs: Sequence[Mapping[Check, CheckStatus]], persistent_checks: Iterable[Check]
) -> dict[Check, CheckStatus]:
    """The record's status per check across runs: ``failed`` for a check with a
    persistent conflict; with two runs, ``churn`` for one that failed in one run only;
    else the last run's status (a lone run fails what it failed: it was incomplete)."""
    persistent = set(persistent_checks)
    out: dict[Check, CheckStatus] = {}
    for check in CHECKS:
        seen = [run[check] for run in runs if check in run]
        if check in persistent:
            out[check] = CheckStatus.failed
        elif len(seen) > 1 and CheckStatus.failed in seen:
            out[check] = CheckStatus.churn
        else:
            out[check] = seen[-1] if seen else CheckStatus.skipped
    return out
