"""The verifier: interview any agent over HTTP and keep a signed result record.

A driver family around the pure checks (``a2a_interview.checks``) and the record
(``a2a_interview.record``): ``client`` moves bytes with bounds (its parts ``failures``,
``urls``, ``addresses``, ``bodies``; ``wire`` its own exchanges), ``procedure`` runs the
draft's §8 procedure (its options and a run's state in ``state``; its steps ``cards``,
``signatures``, ``proposals``, ``choosing`` the interfaces, ``interviewing`` each one,
``questions``, ``calls``), ``asking`` asks one question once. Needs the ``client``
extra (``pip install 'a2a-interview[client]'``).
"""

from __future__ import annotations

from ..net.failures import TransportFailure
from .asking import (
    AskResult,
    AuthenticationRequired,
    CredentialsNotSent,
    NoInterface,
    NotAnswered,
    NotOffered,
    ask,
)
from .procedure import failed_record, verify
from .state import VerifyOptions

__all__ = [
    "AskResult",
    "AuthenticationRequired",
    "CredentialsNotSent",
    "NoInterface",
    "NotAnswered",
    "NotOffered",
    "TransportFailure",
    "VerifyOptions",
    "ask",
    "failed_record",
    "verify",
]
