"""The ledger's exceptions, on the package's one root (``a2a_interview.errors``).

    InterviewError
    └── LedgerError                     ledger
        ├── StoreUnavailable            store_unavailable  (bad URL, cannot connect/open)
        ├── StoreTooNew                 store_too_new      (migrated by a newer version)
        ├── JobsNeedPostgreSQL          jobs_need_postgresql
        └── RecordRefused               refused            (one record, not stored)
            ├── NotARecord              not_a_record       (not strict I-JSON, or not a
            │                                               result record of PROFILE §8)
            ├── BadSignature            bad_signature      (the runner signature fails)
            └── NotSane                 not_sane           (fails the sanity of PROFILE §8:
                                                            times, URLs, calls elsewhere)

No message interpolates anything from a record: a refusal names the member or the
ingress code (ours), never the value.
"""

from __future__ import annotations

from ..errors import InterviewError

__all__ = [
    "BadSignature",
    "JobsNeedPostgreSQL",
    "LedgerError",
    "NotARecord",
    "NotSane",
    "RecordRefused",
    "StoreTooNew",
    "StoreUnavailable",
]


class LedgerError(InterviewError):
    """The ledger cannot do what was asked."""

    code = "ledger"


class StoreUnavailable(LedgerError):
    """The store URL is not usable, or the database cannot be opened or reached;
    ``transient`` when the server did not answer (it may be starting or restarting)."""

    code = "store_unavailable"
    transient: bool = False


class StoreTooNew(LedgerError):
    """The store was migrated by a newer a2a-interview; upgrade before using it."""

    code = "store_too_new"


class JobsNeedPostgreSQL(LedgerError):
    """Scheduling and workers need a PostgreSQL store (the job queue lives there)."""

    code = "jobs_need_postgresql"


class RecordRefused(LedgerError):
    """A record was not stored; ``reason`` says why in fixed words."""

    code = "refused"

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = str(self)


class NotARecord(RecordRefused):
    """Not a result record (PROFILE §8)."""

    code = "not_a_record"


class BadSignature(RecordRefused):
    """The record's runner signature does not verify (PROFILE §8)."""

    code = "bad_signature"


class NotSane(RecordRefused):
    """The record fails the sanity of PROFILE §8 (``record.record_sanity``): ``sanity``
    is its fixed reason code."""

    code = "not_sane"

    def __init__(self, reason: str, sanity: str) -> None:
        super().__init__(reason)
        self.sanity = sanity
