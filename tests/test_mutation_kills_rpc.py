"""Tests of rpc.py that close what mutation testing found unchecked (issue 17 finding 6,
bench/mutation.py). Values are written out by hand from PROFILE §3 and RFC 9110: these
pin values, they do not compare with the code's own output."""

from __future__ import annotations

import pytest

from a2a_interview import reference, rpc
from a2a_interview.declarations import build

IV = build(reference.unsigned_card(), reference.proposals()).interview
ON = rpc.Activation(current=True)
REPLY = rpc.Reply(200, b"{}", (), 7)


@pytest.mark.parametrize("rest", [False, True])
@pytest.mark.parametrize(("asked", "sent"), [(-5, "1"), (0, "1"), (1, "1"), (2, "2"), (90, "90")])
def test_retry_after_is_at_least_one_second(asked: int, sent: str, rest: bool) -> None:
    # PROFILE §3.7: a 429 carries Retry-After; RFC 9110 §10.2.3 delay-seconds. The
    # floor of 1 is rpc's own (the limiter floors too, so only this test sees it): a 0
    # or a negative would tell clients to come back at once, or be no delay at all.
    limited = rpc.too_many_requests(asked, REPLY, ON, rest=rest)
    assert limited.status == 429
    assert [v for n, v in limited.headers if n == "Retry-After"] == [sent]
