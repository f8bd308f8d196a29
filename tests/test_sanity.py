"""sanity.py under mutation (D-TEST-13, bench/mutation.py): the record's times, its
identity, and the sanity every reader checks (PROFILE §8; docs/decisions.md D-STORE-12).
Records are written here by hand; expected values are pinned by hand."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from a2a_interview.record import Insane, parse_rfc3339, record_identity, record_sanity

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CARD = "https://a.example/.well-known/agent-card.json"


def _sane(**extra: Any) -> dict[str, Any]:
    return {"agent": {"url": "https://a.example/", "card_url": CARD},
            "started_at": "2026-06-01T11:00:00Z", "finished_at": "2026-06-01T11:01:00Z",
            "runs": [{"calls": [{"interface": "https://a.example/rpc"}]}], **extra}  # fmt: skip


def test_a_time_is_read_as_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    # PROFILE §8: a record's times are RFC 3339 with a zone, read as aware UTC times.
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        moment = parse_rfc3339("2026-06-01T13:30:00+02:00")
        assert moment == datetime(2026, 6, 1, 11, 30, tzinfo=UTC)
        assert moment is not None and moment.utcoffset() == timedelta(0)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_rfc_3339_allows_a_space_or_a_lowercase_t_between_date_and_time() -> None:
    # RFC 3339 §5.6 (the note: "T" may be a space or lowercase, and so may "Z").
    expected = datetime(2026, 6, 1, 11, 0, tzinfo=UTC)
    assert parse_rfc3339("2026-06-01 11:00:00Z") == expected
    assert parse_rfc3339("2026-06-01t11:00:00z") == expected
    assert parse_rfc3339("2026-06-01 11:00:00.5+00:00") == expected.replace(microsecond=500000)
    assert parse_rfc3339("2026-06-01 11:00:00") is None  # no zone


def test_a_records_identity_is_the_digest_of_its_jcs_without_signatures() -> None:
    # PROFILE §8: one run is one record, with or without signatures: sha256 of the JCS
    # (RFC 8785: members sorted, no whitespace) of the record without "signatures".
    jcs = b'{"a":"x","b":[1,true]}'
    expected = "sha256:" + hashlib.sha256(jcs).hexdigest()
    assert record_identity({"b": [1, True], "a": "x"}) == expected
    assert record_identity({"signatures": [{"key": "K", "sig": "S"}], "b": [1, True], "a": "x"}
                           ) == expected  # fmt: skip
    assert record_identity({"a": "x"}) != expected


def test_an_interface_that_is_no_url_at_all_is_a_url_scheme_failure() -> None:
    # PROFILE §8 sanity (never raises on a hostile record): a URL that cannot be split
    # (an unclosed IPv6 literal) is not an http or https URL.
    runs = [{"calls": [{"interface": "https://[::1/rpc"}]}]
    assert record_sanity(_sane(runs=runs), NOW) == Insane(
        "url_scheme", "a call's interface is not an http or https URL")  # fmt: skip


def test_www_is_set_aside_on_either_side() -> None:
    # docs/decisions.md D-STORE-12: a call's host belongs to the agent when it is the
    # card's host or a subdomain of it (or the other way round), "www." set aside: an
    # interface on api.a.example belongs to a card on www.a.example.
    runs = [{"calls": [{"interface": "https://api.a.example/rpc"}]}]
    agent = {"url": "https://www.a.example/", "card_url": "https://www.a.example/card"}
    assert record_sanity(_sane(agent=agent, runs=runs), NOW) is None
    agent = {"url": "https://WWW.a.example/", "card_url": "https://WWW.A.EXAMPLE/card"}
    assert record_sanity(_sane(agent=agent, runs=runs), NOW) is None
    runs = [{"calls": [{"interface": "https://api.b.example/rpc"}]}]
    assert record_sanity(_sane(agent=agent, runs=runs), NOW) == Insane(
        "calls_elsewhere", "a call was made to another agent's interface")  # fmt: skip


@pytest.mark.parametrize("runs", [5, "runs", None, {"calls": []}])
def test_runs_that_are_not_a_list_hold_no_call(runs: Any) -> None:
    # PROFILE §8 sanity never raises on a hostile record: runs that are not a list name
    # no call and no proposal, so nothing in them fails.
    assert record_sanity(_sane(runs=runs), NOW) is None
