"""standing.py under mutation (D-TEST-13, bench/mutation.py): the standing rule of
PROFILE §8 on hostile records, the reader's clock, and the keys a reader adds. Records
are written here; keys are fresh nkeys."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from a2a_interview import nkeys
from a2a_interview.record import sign_record, standing_of, standing_reason

SEED = nkeys.generate_seed()
KEY = nkeys.public_of(nkeys.private_key(SEED))
AGENT = nkeys.public_of(nkeys.private_key(nkeys.generate_seed()))
CARD = "https://a.example/.well-known/agent-card.json"


def _record(**extra: Any) -> dict[str, Any]:
    """A sane third-party record that, signed, is evidence (PROFILE §8)."""
    return {"agent": {"url": "https://a.example/", "card_url": CARD, "keys": [AGENT]},
            "ran_by": {"party": "third_party", "name": "R"},
            "started_at": "2026-06-01T11:00:00Z", "finished_at": "2026-06-01T11:01:00Z",
            "runs": [{"calls": [{"interface": "https://a.example/rpc"}],
                      "proposals": [{"signer": AGENT}]}], **extra}  # fmt: skip


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_the_reference_record_is_evidence() -> None:
    assert standing_reason(sign_record(_record(), SEED), now=NOW) == ("evidence", "evidence")


@pytest.mark.parametrize("runs", [5, [{"proposals": 5}], [{"proposals": [5, {"signer": 5}]}], [7]])
def test_runs_or_proposals_that_are_not_lists_name_no_signer(runs: Any) -> None:
    # PROFILE §8: never raises on a hostile record; what is not a list names no key.
    assert standing_reason(sign_record(_record(runs=runs), SEED), now=NOW) == (
        "evidence", "evidence")  # fmt: skip


@pytest.mark.parametrize("keys", [[5], [None], [AGENT, ["x"]], [{"kty": "OKP"}]])
def test_agent_keys_holding_what_is_no_key_id_cannot_clear_the_runner(keys: Any) -> None:
    # PROFILE §8: agent.keys malformed (an item that is neither a thumbprint nor an
    # nkey): the runner cannot be told apart from the agent, so a claim.
    agent = {"url": "https://a.example/", "card_url": CARD, "keys": keys}
    signed = sign_record(_record(agent=agent), SEED)
    assert standing_reason(signed, now=NOW) == ("claim", "agent_keys_missing")


def test_the_readers_clock_is_the_one_given() -> None:
    # PROFILE §8: sanity is as a reader whose clock reads `now` sees it: a record that
    # finished in 2999 is from the future now, and not for a reader in 3000.
    later = _record(started_at="2999-01-01T00:00:00Z", finished_at="2999-01-01T00:01:00Z")
    signed = sign_record(later, SEED)
    reader = datetime(3000, 1, 1, tzinfo=UTC)
    assert standing_reason(signed, now=reader) == ("evidence", "evidence")
    assert standing_of(signed, now=reader) == "evidence"
    assert standing_reason(signed) == ("claim", "from_the_future")
    assert standing_of(signed) == "claim"


def test_extra_keys_known_to_the_reader_count_as_agent_keys() -> None:
    # PROFILE §8: a key the reader knows to be the agent's (card_key_ids) makes a
    # runner holding it a claim, like one in agent.keys.
    signed = sign_record(_record(), SEED)
    assert standing_reason(signed, extra_keys=[KEY], now=NOW) == ("claim", "agent_key")
    assert standing_reason(signed, extra_keys=[AGENT], now=NOW) == ("evidence", "evidence")
