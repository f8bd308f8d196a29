"""The verifier's checks (PROFILE §7): the part's facade, its one public import path.

Its modules are private: ``_findings`` (the check codes, conflicts and advisories and the
call each belongs to), ``_responses`` (the card's interfaces, a raw exchange, a response
read as an interview result), ``_checks`` (every check as a pure function over fetched
bytes) and ``_outcome`` (the outcome from two runs' conflicts, each check's status).
``__all__`` is the part's API; ``tests/test_one_home.py`` pins it.
"""

from __future__ import annotations

from ._checks import (
    Declared,
    check_answer,
    check_card_signature,
    check_closure,
    check_declaration,
    check_determinism,
    check_echo,
    check_inactive,
    check_interfaces_agree,
    check_terms_declared,
    coverage,
    diff_answer,
    no_match_selector,
)
from ._findings import (
    ABSENT,
    CHECKS,
    NOWHERE,
    Advisory,
    Check,
    Conflict,
    Value,
    Where,
)
from ._outcome import (
    CheckStatus,
    Outcome,
    derive_outcome,
    overall_statuses,
    run_statuses,
)
from ._responses import (
    Binding,
    Exchange,
    Interface,
    ResultRead,
    find_interfaces,
    is_binding_answer,
    read_result,
)

__all__ = [
    "ABSENT",
    "CHECKS",
    "NOWHERE",
    "Advisory",
    "Binding",
    "Check",
    "CheckStatus",
    "Conflict",
    "Declared",
    "Exchange",
    "Interface",
    "Outcome",
    "ResultRead",
    "Value",
    "Where",
    "check_answer",
    "check_card_signature",
    "check_closure",
    "check_declaration",
    "check_determinism",
    "check_echo",
    "check_inactive",
    "check_interfaces_agree",
    "check_terms_declared",
    "coverage",
    "derive_outcome",
    "diff_answer",
    "find_interfaces",
    "is_binding_answer",
    "no_match_selector",
    "overall_statuses",
    "read_result",
    "run_statuses",
]
