"""What the verifier's checks find (PROFILE §7, §8): the check codes, and the two kinds
of finding, :class:`Conflict` (a disagreement between the agent and its declarations)
and :class:`Advisory` (a finding that is never a conflict), each with the call it
belongs to (:class:`Where`) and JSON values (:data:`ABSENT` where none applies).

No message built here interpolates anything a peer sent: ``detail`` strings are fixed,
and peer values travel only as data in ``expected``/``got``. The names are re-exported
by :mod:`a2a_interview.checks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Final, Literal

from ..models import Source
from ..strictjson import JSON, JSONObject

__all__ = ["ABSENT", "CHECKS", "NOWHERE", "Advisory", "Check", "Conflict", "Value", "Where"]


class Check(StrEnum):
    """The check codes of PROFILE §7, in report order."""

    card_fetch = "card_fetch"
    card_signature = "card_signature"
    declaration = "declaration"
    inactive_probe = "inactive_probe"
    activation_echo = "activation_echo"
    answer_shape = "answer_shape"
    determinism = "determinism"
    projection = "projection"
    terms_declared = "terms_declared"
    closure_method = "closure_method"
    closure_selector = "closure_selector"
    coverage = "coverage"


CHECKS: Final[tuple[Check, ...]] = tuple(Check)


class _Absent(Enum):
    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent.ABSENT
"""Marks ``expected``/``got`` as not applying (``None`` is the JSON value null)."""

Value = JSON | Literal[_Absent.ABSENT]


# ---------------------------------------------------------------------------------------
# Findings


@dataclass(frozen=True, slots=True)
class Where:
    """The call a finding belongs to: interface url, question (without ``interview/``)
    and skill selector, each ``None`` when it does not apply."""

    interface: str | None = None
    question: str | None = None
    skill: str | None = None


NOWHERE: Final = Where()


def _locate(where: Where, source: Source | None) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    if where.interface is not None:
        out["interface"] = where.interface
    if where.question is not None:
        out["question"] = where.question
    if where.skill is not None:
        out["skill"] = where.skill
    if source is not None:
        out["source"] = source.to_json()
    return out


@dataclass(frozen=True, slots=True)
class Conflict:
    """One disagreement between the agent and its declarations (PROFILE §7, §8).

    ``check`` is the code it is reported under; ``reason`` a fixed short code saying
    how it failed; ``source`` names the declared document and member where one applies
    (its ``member`` is the pointer); ``expected``/``got`` are JSON values or
    :data:`ABSENT`; ``detail`` is fixed text, never peer content.
    """

    check: Check
    reason: str
    where: Where = NOWHERE
    source: Source | None = None
    expected: Value = ABSENT
    got: Value = ABSENT
    detail: str | None = None

    @property
    def question(self) -> str | None:
        return self.where.question

    @property
    def member(self) -> str | None:
        return self.source.member if self.source is not None else None

    @property
    def key(self) -> tuple[object, ...]:
        """The identity PROFILE §7 compares across runs: (check, question, source,
        member), the question refined by the interface and selector it was asked on
        (``where``), the member carried by ``source``."""
        return (self.check, self.where, self.source)

    def to_json(self) -> JSONObject:
        out: JSONObject = {"check": str(self.check), "reason": self.reason}
        out.update(_locate(self.where, self.source))
        if self.expected is not ABSENT:
            out["expected"] = self.expected
        if self.got is not ABSENT:
            out["got"] = self.got
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class Advisory:
    """A finding that is never a conflict (PROFILE §7 coverage, §8 advisories).

    ``code`` is ``coverage``, ``card_signature``, ``transport``, ``terms``,
    ``interface``, ``inactive_probe`` or ``card_variants``; ``reason`` a fixed short
    code; ``value`` optional JSON data.
    """

    code: str
    reason: str
    where: Where = NOWHERE
    source: Source | None = None
    value: Value = ABSENT
    detail: str | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"code": str(self.code), "reason": self.reason}
        out.update(_locate(self.where, self.source))
        if self.value is not ABSENT:
            out["value"] = self.value
        if self.detail is not None:
            out["detail"] = self.detail
        return out
