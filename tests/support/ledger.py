"""Result records for the ledger's tests: small complete records (PROFILE §8), signed or
not, and the insane ones a store refuses with their reasons."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from a2a_interview import nkeys
from a2a_interview.checks import CHECKS, CheckStatus, Outcome
from a2a_interview.record import (
    CardSignature,
    Incomplete,
    RanBy,
    ResultRecord,
    parse_rfc3339,
    rfc3339,
    sign_record,
)
from a2a_interview.verifier import failed_record
from a2a_interview.verifier.procedure import VerifyOptions

RUNNER_SEED = nkeys.generate_seed()


def record(
    agent: str = "https://a.example",
    *,
    party: str = "third_party",
    outcome: Outcome = Outcome.consistent,
    finished: str = "2026-11-29T10:00:01.250Z",
    name: str = "Acme",
) -> dict[str, Any]:
    """A small but complete record (PROFILE §8) as JSON."""
    return ResultRecord(
        url=agent,
        card_url=agent + "/.well-known/agent-card.json",
        card_digest="sha256:" + "1" * 64,
        card_signature=CardSignature("verified", "served", ("served",), "k1", "t" * 43, "jku"),
        ran_by=RanBy(party, name),  # type: ignore[arg-type]
        started_at=started_before(finished),
        finished_at=finished,
        runs=(),
        advisories=(),
        outcome=outcome,
        checks={c: CheckStatus.passed for c in CHECKS},
        incomplete=(
            Incomplete("connect_failed", "no connection")
            if outcome is Outcome.unreachable
            else None
        ),
    ).to_json()


def started_before(finished: str) -> str:
    """A start one second before ``finished`` (PROFILE §8: started_at ≤ finished_at)."""
    moment = parse_rfc3339(finished)
    return rfc3339(moment - timedelta(seconds=1)) if moment else "2026-11-29T10:00:00.000Z"


def compact(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def migrate_to(connection: Any, revision: str) -> None:
    """Migrate the store on ``connection`` up to ``revision`` only: a store as an older
    release left it, for the migrations after it to upgrade."""
    from alembic import command
    from alembic.config import Config

    from a2a_interview.ledger import store

    config = Config()
    config.set_main_option("script_location", store._MIGRATIONS)
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def signed(document: dict[str, Any], seed: str = RUNNER_SEED) -> bytes:
    return compact(sign_record(document, seed))


STRANGER_SEED = nkeys.generate_seed()


def with_calls(document: dict[str, Any], *interfaces: str, proposal: str | None = None) -> Any:
    """``document`` with one run whose calls went to ``interfaces``."""
    call = {"binding": "JSONRPC", "method": "interview/identity", "params": None,
            "activated": True, "status": 200, "response_digest": "sha256:" + "2" * 64}  # fmt: skip
    document["runs"] = [{
        "card_digest": "sha256:" + "1" * 64,
        "calls": [{"interface": url, **call} for url in interfaces],
        "proposals": [] if proposal is None else [
            {"url": proposal, "digest": "sha256:" + "3" * 64, "result": "ok", "signer": None}
        ],
        "conflicts": [], "checks": {},
    }]  # fmt: skip
    return document


def _edit_member(document: dict[str, Any], path: tuple[str, ...], value: Any) -> Any:
    target = document
    for name in path[:-1]:
        target = target[name]
    target[path[-1]] = value
    return document


def _times(document: dict[str, Any], started: str, finished: str) -> dict[str, Any]:
    document["started_at"], document["finished_at"] = started, finished
    return document


A_RUN = with_calls(record("https://a.example"), "https://a.example/rpc", "https://a.example/rest")


def _filed_as_b(document: dict[str, Any], b: str = "https://b.example") -> dict[str, Any]:
    forged = json.loads(json.dumps(document))
    forged["agent"]["url"], forged["agent"]["card_url"] = b, b + "/.well-known/agent-card.json"
    forged["outcome"] = "non_conformant"
    return forged


INSANE: list[tuple[str, Any, str]] = [
    # finding 2: a record dated 2099 became the agent's latest and blocked scheduling.
    ("2099 signed", sign_record(_times(record(), "2099-01-01T00:00:00Z",
                                       "2099-01-01T00:00:01Z"), RUNNER_SEED), "from_the_future"),
    ("9999 unsigned self-run", _times(record(party="self"), "2026-11-29T10:00:00Z",
                                      "9999-12-31T23:59:59Z"), "from_the_future"),
    ("an hour ahead", _times(record(), "2026-11-29T10:00:00Z",
                             rfc3339(datetime.now(UTC) + timedelta(hours=1))), "from_the_future"),
    ("finished before started", sign_record(_times(record(), "2026-11-29T10:00:01Z",
                                                   "2026-11-29T10:00:00Z"), RUNNER_SEED),
     "finished_before_started"),
    ("finished before started, other zones", _times(record(), "2026-11-29T11:00:00+01:00",
                                                    "2026-11-29T09:59:59Z"),
     "finished_before_started"),
    # finding 3: A's run (its calls name A's interfaces) filed as B's, signed by a stranger.
    ("A's run filed as B's", sign_record(_filed_as_b(A_RUN), STRANGER_SEED), "calls_elsewhere"),
    ("A's run filed under A's parent's sibling", sign_record(
        _filed_as_b(with_calls(record("https://a.shop.example"), "https://a.shop.example/rpc"),
                    "https://b.shop.example"), STRANGER_SEED), "calls_elsewhere"),
    ("calls on an IP for a named host", with_calls(record(), "https://192.0.2.1/rpc"),
     "calls_elsewhere"),
    ("a call with no interface", with_calls(record(), "https:///rpc"), "calls_elsewhere"),
    # finding 3: a card URL of javascript:alert(1) was accepted as an agent.
    ("javascript: card URL", _edit_member(record(), ("agent", "card_url"),
                                         "javascript:alert(1)"), "url_scheme"),
    ("JAVASCRIPT: agent URL", _edit_member(record(), ("agent", "url"),
                                          "JAVASCRIPT:alert(1)//https://a.example"), "url_scheme"),
    ("data: card URL", _edit_member(record(), ("agent", "card_url"),
                                   "data:text/html,<script>1</script>"), "url_scheme"),
    ("ftp: card URL", _edit_member(record(), ("agent", "card_url"), "ftp://a.example/c.json"),
     "url_scheme"),
    ("javascript: interface", with_calls(record(), "javascript:alert(1)"), "url_scheme"),
    ("file: proposal", with_calls(record(), "https://a.example/rpc", proposal="file:///etc/x"),
     "url_scheme"),
]  # fmt: skip


LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def old_record(origin: str) -> bytes:
    options = VerifyOptions(clock=lambda: LONG_AGO)
    return json.dumps(failed_record(origin, options).to_json()).encode()
