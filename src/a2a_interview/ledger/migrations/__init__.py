"""The ledger's schema migrations (Alembic), run by ``Ledger.open`` and ``ledger migrate``."""
