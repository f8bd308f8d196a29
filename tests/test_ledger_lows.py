"""The ledger's smaller lows (PROFILE §8 display rules, the command line's manners): the
operator's runner names shown as what they are, a claim's card signature "as stated",
`ledger list` into a closed pipe, `schedule --help` in the words of its code."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import httpx
import pytest

from a2a_interview import nkeys
from a2a_interview.record import sign_record
from needs import module as need_module
from support.cli import COMMAND

need_module("sqlalchemy", "the ledger extra (sqlalchemy)", "pip install -e '.[ledger]'")

from a2a_interview.ledger import Ledger  # noqa: E402
from a2a_interview.ledger.runners import BadRunners, read_runners  # noqa: E402
from a2a_interview.ledger.web import app  # noqa: E402
from support.ledger import compact, record  # noqa: E402


def _key() -> str:
    return nkeys.public_of(nkeys.private_key(nkeys.generate_seed()))


@pytest.mark.parametrize(
    ("names", "says"),
    [
        (["Acme \u202eMarket"], "invisible"),  # RLO: reverses what follows
        (["Acme\u200bMarket"], "invisible"),  # zero width space
        (["\ufeffAcme"], "invisible"),  # BOM
        (["Acme\u2028Market"], "invisible"),  # line separator
        (["\u0410cme Market"], "Cyrillic"),  # a Cyrillic А among Latin letters
        (["Acme \u039carket"], "Cyrillic"),  # a Greek Μ
        (["Acme Market", "acme  market"], "another runner has this name"),
        (["Acme Market", "Ａｃｍｅ Market"], "another runner has this name"),  # fullwidth
    ],
)
def test_a_runner_name_that_would_not_show_as_what_it_is_is_refused(
    names: list[str], says: str
) -> None:
    # PROFILE §8: a listed name is the operator's word for a key; the list accepted
    # names with an RLO, zero-width characters, confusables and duplicates, drawn raw.
    data = json.dumps({"runners": [{"key": _key(), "name": n} for n in names]}).encode()
    with pytest.raises(BadRunners) as caught:
        read_runners(data)
    assert says in str(caught.value)
    assert "\u202e" not in str(caught.value)  # never echoing the value


def test_plain_names_in_any_one_script_are_listed() -> None:
    names = ["Acme Market", "Ёлка Аудит", "Ωμέγα", "自分 監査", "Zoë — Ça va"]
    runners = read_runners(
        json.dumps({"runners": [{"key": _key(), "name": n} for n in names]}).encode()
    )
    assert sorted(runners.names.values()) == sorted(names)


def test_a_claims_verified_card_signature_is_as_stated(tmp_path: Path) -> None:
    # PROFILE §8: a claim's "Card signature: verified" is the record's word, said so; an
    # evidence record's is the independent runner's check.
    seed = nkeys.generate_seed()
    with Ledger.open(tmp_path / "l.db") as ledger:
        ledger.add(compact(record("https://claim.example", party="self")))
        ledger.add(compact(sign_record(record("https://evidence.example"), seed)))

        async def pages() -> list[str]:
            transport = httpx.ASGITransport(app=app(ledger))
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                paths = [
                    "/",
                    "/agents/https://claim.example/.well-known/agent-card.json",
                    "/agents/https://evidence.example/.well-known/agent-card.json",
                ]
                return [(await c.get(p)).text for p in paths]  # fmt: skip

        index, claim, evidence = asyncio.run(pages())
    assert index.count("(as stated in the record)") == 1
    assert 'verified <span class="meaning">(as stated in the record)</span>' in claim
    assert "(as stated in the record)" not in evidence


def test_ledger_list_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    # `ledger list | head -1` said "cannot use: Broken pipe" and exited 2. A reader
    # closing the pipe ends the listing as it ends the shell's tools: no message, 141.
    store = tmp_path / "l.db"
    with Ledger.open(store) as ledger:
        ledger.put_many([compact(record(f"https://a{i}.example")) for i in range(3)])
    process = subprocess.Popen(
        [*COMMAND, "ledger", "list", "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before a line is written
    try:
        code = process.wait(timeout=60)
        err = process.stderr.read().decode()
    finally:
        process.kill()
        process.stderr.close()
    assert (code, err) == (141, "")


def test_schedule_help_speaks_of_receipt_time(capsys: pytest.CaptureFixture[str]) -> None:
    # PROFILE §8: a store schedules by its own receipt time, never a time a record
    # claims; the help said "finished".
    from a2a_interview.cli import main

    assert main(["ledger", "schedule", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "received more than AGE ago" in text and "finished" not in text
    assert "interviews the card URL the ledger keeps" in text
