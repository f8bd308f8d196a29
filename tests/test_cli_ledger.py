"""``a2a-interview ledger ...`` and ``verify``/``verify-many --store`` through
``main(argv)``, over real loopback agents (D-STORE-1): import with refusals named,
list and show with standing recomputed, export byte for byte, hostile files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import nkeys
from a2a_interview.record import sign_record, verify_record_signature
from agents import honest
from needs import module as need_module
from support.cli import run
from support.servers import closed_port_url, serve, serve_many

need_module("sqlalchemy", "the ledger extra (sqlalchemy)", "pip install -e '.[ledger]'")

from a2a_interview.ledger import Ledger  # noqa: E402
from support.ledger import INSANE, compact, record, signed  # noqa: E402

FAST = ["--churn-delay", "0"]
SEED = nkeys.generate_seed()


# --- import ---------------------------------------------------------------------------


def test_import_keeps_the_good_and_names_each_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-STORE-4: a record whose signature fails is refused on import with the reason;
    # the others are kept.
    store = str(tmp_path / "l.db")
    tampered = sign_record(record("https://t.example"), SEED)
    tampered["ran_by"]["name"] = "Someone Else"
    lines = [signed(record("https://a.example")), compact(tampered), b"{oops",
             compact(record("https://b.example", party="self"))]  # fmt: skip
    jsonl = tmp_path / "many.jsonl"
    jsonl.write_bytes(b"\n".join(lines[:2]) + b"\n\n" + b"\n".join(lines[2:]) + b"\n")
    single = tmp_path / "one.json"
    single.write_text(json.dumps(record("https://c.example"), indent=2) + "\n")

    code, out, err = run(capsys, "ledger", "import", str(jsonl), str(single), "--store", store)
    assert code == 1
    assert f"{jsonl}:2: refused: the runner signature does not verify (PROFILE §8) " \
           "[bad_signature]" in err  # fmt: skip
    assert f"{jsonl}:4: refused: not strict I-JSON (malformed) [not_a_record]" in err
    assert "Someone Else" not in err
    assert out == "kept 3 record(s) (3 new, 0 already present); refused 2\n"

    code, out, _ = run(capsys, "ledger", "import", str(jsonl), "--store", store, "--json")
    assert code == 1
    report = json.loads(out)
    assert [(k["line"], k["new"]) for k in report["kept"]] == [(1, False), (5, False)]
    assert [(r["line"], r["code"]) for r in report["refused"]] == [
        (2, "bad_signature"), (4, "not_a_record"),
    ]  # fmt: skip

    with Ledger.open(store) as ledger:
        assert [r.body for r in ledger.records()] == [
            lines[0], lines[3], single.read_bytes().strip()
        ]  # fmt: skip


def test_import_refuses_each_insane_record_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-STORE-12, PROFILE §8 (amended): ledger import runs the same sanity as
    # every reader; `record verify` shows the same records as claims with the reason.
    lines = [signed(record("https://a.example"))]
    lines += [compact(document) for _, document, _ in INSANE]
    path = tmp_path / "attacks.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    store = str(tmp_path / "l.db")
    code, out, err = run(capsys, "ledger", "import", str(path), "--store", store, "--json")
    assert code == 1
    refused = json.loads(out)["refused"]
    assert [r["code"] for r in refused] == ["not_sane"] * len(INSANE)
    assert "Traceback" not in err
    for (label, _, reason), line in zip(INSANE, lines[1:], strict=True):
        single = tmp_path / "one.json"
        single.write_bytes(line)
        code, out, _ = run(capsys, "record", "verify", str(single))
        assert code == 1 and f"standing: claim ({reason})" in out, label
    with Ledger.open(store) as ledger:
        assert ledger.count() == 1


def test_import_exits_0_when_everything_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(signed(record()))
    code, out, _ = run(capsys, "ledger", "import", str(path), "--store", str(tmp_path / "l.db"))
    assert (code, out) == (0, "kept 1 record(s) (1 new, 0 already present); refused 0\n")


def test_hostile_import_files_give_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "l.db")
    huge_line = tmp_path / "huge.jsonl"  # a 3 MiB line between two good records
    huge_line.write_bytes(
        signed(record("https://a.example")) + b"\n" + b'{"x":"' + b"A" * (3 << 20) + b'"}\n'
        + signed(record("https://b.example")) + b"\n"
    )  # fmt: skip
    huge_doc = tmp_path / "huge.json"
    huge_doc.write_bytes(b'{\n  "x": "' + b"A" * (2 << 20) + b'"\n}\n')
    binary = tmp_path / "bin.dat"
    binary.write_bytes(bytes(range(256)) * 10)
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    code, out, err = run(capsys, "ledger", "import", str(huge_line), str(huge_doc),
                         str(binary), str(empty), "--store", store, "--json")  # fmt: skip
    assert code == 1
    report = json.loads(out)
    assert [(k["file"], k["line"]) for k in report["kept"]] == [
        (str(huge_line), 1), (str(huge_line), 3),
    ]  # fmt: skip
    assert [(r["file"], r["line"], r["reason"]) for r in report["refused"]] == [
        (str(huge_line), 2, "not strict I-JSON (too_large)"),
        (str(huge_doc), 1, "not strict I-JSON (too_large)"),
        (str(binary), 1, "not strict I-JSON (not_utf8)"),
    ]
    assert "Traceback" not in err


def test_json_lines_that_begin_with_a_blank_line_are_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review finding 3 (decisions D-STORE-2: one document, else JSON Lines): the
    # first line was taken as is, so a blank first line made the file "one document":
    # every record refused as malformed, or, over 1 MiB, the whole file as too_large.
    good = [signed(record("https://a.example")), signed(record("https://b.example"))]
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"\n" + b"\n".join(good) + b"\n")
    big = tmp_path / "big.jsonl"
    filler = [signed(record(f"https://{i}.example", name="x" * 1000)) for i in range(1200)]
    big.write_bytes(b"\r\n  \r\n" + b"\r\n".join(filler) + b"\r\n")
    assert big.stat().st_size > (1 << 20)
    store = str(tmp_path / "l.db")
    code, out, _ = run(capsys, "ledger", "import", str(small), str(big), "--store", store,
                       "--json")  # fmt: skip
    report = json.loads(out)
    assert (code, report["refused"]) == (0, [])
    assert [k["line"] for k in report["kept"]][:3] == [2, 3, 3]
    assert len(report["kept"]) == 2 + 1200


def test_show_of_an_agent_no_store_can_hold_is_no_such_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review finding 8 (exit 1 for no such agent, never a traceback): undecodable bytes
    # on the command line are lone surrogates in argv, which the driver refused with a
    # UnicodeEncodeError traceback.
    store = str(tmp_path / "l.db")
    for agent in ("http://a\udcff.example", "http://a.example/\x00", "http://a/" + "x" * 5000):
        code, out, err = run(capsys, "ledger", "show", agent, "--store", store)
        assert (code, out) == (1, ""), err
        assert err.startswith("a2a-interview: the ledger holds no record of ")


def test_import_of_a_missing_file_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(signed(record()))
    store = tmp_path / "l.db"
    code, _, err = run(capsys, "ledger", "import", str(good), str(tmp_path / "nope.json"),
                       "--store", str(store))  # fmt: skip
    assert code == 2
    assert "nope.json" in err and "not a file" in err
    assert not store.exists()  # checked before the store is even opened


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ledger", "list", "--store", "mysql://u:hunter2@h/db"], "the store URL must be"),
        (["ledger", "schedule", "--older-than", "soon"], "an age such as"),
        (["ledger", "schedule", "--older-than", "99999d"], "at most 3650 days"),
        (["worker", "--stalled-after", "0"], "between 0.1 and 86400"),
    ],
)
def test_usage_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert "hunter2" not in err and "Traceback" not in err


# --- list, show, export ---------------------------------------------------------------


def test_list_and_show_recompute_standing_and_never_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "l.db")
    claims_evidence = record("https://z.example", party="self")
    claims_evidence["standing"] = "evidence"  # what the record says: not believed
    with Ledger.open(store) as ledger:
        ledger.add(compact(claims_evidence))
        ledger.add(signed(record("https://m.example", outcome="not_offered")))  # type: ignore[arg-type]
        ledger.add(signed(record("https://a.example", outcome="non_conformant")))  # type: ignore[arg-type]
        ledger.add(signed(record("https://z.example", finished="2026-11-30T00:00:00Z")))

    code, out, _ = run(capsys, "ledger", "list", "--store", store, "--json")
    assert code == 0
    listed = json.loads(out)
    assert [(a["card_url"], a["count"], a["latest"]["outcome"]) for a in listed] == [
        ("https://a.example/.well-known/agent-card.json", 1, "non_conformant"),
        ("https://m.example/.well-known/agent-card.json", 1, "not_offered"),
        ("https://z.example/.well-known/agent-card.json", 2, "consistent"),
    ]
    code, out, _ = run(capsys, "ledger", "list", "--store", store)
    assert "never ranked" in out and out.index("a.example") < out.index("m.example")

    code, out, _ = run(capsys, "ledger", "show", "https://z.example", "--store", store, "--json")
    assert code == 0
    shown = json.loads(out)
    assert [(r["party"], r["standing"]) for r in shown["records"]] == [
        ("self", "claim"), ("third_party", "evidence"),
    ]  # fmt: skip
    assert shown["records"][0]["record"]["standing"] == "evidence"  # kept as given
    card_url = "https://z.example/.well-known/agent-card.json"
    code, out, _ = run(capsys, "ledger", "show", card_url, "--store", store)
    assert code == 0
    assert "2 record(s), oldest first" in out and "Conformance is not competence" in out

    code, _, err = run(capsys, "ledger", "show", "https://nobody.example\x1b[31m", "--store", store)
    assert code == 1
    assert "no record of" in err and "\x1b" not in err


def test_list_and_show_name_the_agent_as_its_card_does_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-STORE-16: the agent's name (agent.name, its latest record's) beside its
    # card URL; peer text, so escaped to one line of ASCII (no terminal control).
    store = str(tmp_path / "l.db")
    document = record("https://n.example")
    document["agent"]["name"] = "Stonework \x1b[31mRed\u202e"
    with Ledger.open(store) as ledger:
        ledger.add(signed(document))
        ledger.add(signed(record("https://o.example")))
    code, out, _ = run(capsys, "ledger", "list", "--store", store, "--json")
    listed = json.loads(out)
    assert code == 0 and [a["name"] for a in listed] == [document["agent"]["name"], None]
    assert listed[0]["latest"]["agent_name"] == document["agent"]["name"]
    code, out, _ = run(capsys, "ledger", "list", "--store", store)
    assert 'as the card names itself: "Stonework \\u001b[31mRed\\u202e"' in out
    assert "\x1b" not in out and "\u202e" not in out and out.count("as the card names") == 1
    code, out, _ = run(capsys, "ledger", "show", "https://n.example", "--store", store)
    assert code == 0 and "\x1b" not in out
    assert 'name, as the card names itself (the card URL is who it is): "Stonework' in out


def test_export_writes_the_stored_bytes_as_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "l.db")
    one_line = [signed(record("https://a.example", name="Zoë")),
                compact(record("https://b.example"))]  # fmt: skip
    pretty = json.dumps(sign_record(record("https://c.example"), SEED), indent=2).encode()
    with Ledger.open(store) as ledger:
        for body in [*one_line, pretty]:
            ledger.add(body)
    out_file = tmp_path / "all.jsonl"
    code, _, err = run(capsys, "ledger", "export", "--store", store, "--out", str(out_file))
    assert code == 0 and "exported 3 record(s)" in err
    lines = out_file.read_bytes().split(b"\n")
    assert lines[:2] == one_line  # byte for byte
    assert lines[2] == pretty.replace(b"\n", b"")  # only the line breaks are gone
    assert lines[3:] == [b""]
    assert verify_record_signature(json.loads(lines[2])).status == "valid"
    # And back: importing the export into a new ledger keeps the same bytes.
    again = str(tmp_path / "again.db")
    assert run(capsys, "ledger", "import", str(out_file), "--store", again)[0] == 0
    with Ledger.open(again) as ledger:
        assert [r.body for r in ledger.records()] == lines[:3]


def test_the_store_defaults_to_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("A2A_INTERVIEW_STORE", str(tmp_path / "env.db"))
    path = tmp_path / "r.json"
    path.write_bytes(signed(record()))
    assert run(capsys, "ledger", "import", str(path))[0] == 0
    assert (tmp_path / "env.db").is_file()
    code, out, _ = run(capsys, "ledger", "migrate", "--json")
    assert code == 0
    assert json.loads(out) == {"migrated": True, "dialect": "sqlite", "records": 1}


@pytest.mark.parametrize("command", [["list"], ["show", "https://a.example"], ["export"]])
def test_reading_with_no_store_configured_is_a_usage_error_naming_the_default(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    # D-STORE-15: `ledger list` with no --store silently created
    # ./a2a-interview-ledger.db. Reading commands now say what to give instead.
    monkeypatch.delenv("A2A_INTERVIEW_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "ledger", *command)
    assert code == 2 and out == ""
    assert "no store: give --store URL or set $A2A_INTERVIEW_STORE" in err
    assert "./a2a-interview-ledger.db, does not exist here" in err
    assert list(tmp_path.iterdir()) == []  # nothing created
    # Once the default exists (an import made it), it is used.
    (tmp_path / "r.json").write_bytes(signed(record()))
    assert run(capsys, "ledger", "import", "r.json")[0] == 0
    assert run(capsys, "ledger", *command)[0] in (0, 1)


# --- verify --store -------------------------------------------------------------------


def test_verify_store_keeps_the_signed_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "l.db")
    with serve(honest) as origin:
        code, out, _ = run(capsys, "verify", origin, *FAST, "--json", "--store", store,
                           "--as", "platform", "--name", "Acme", "--runner-key", SEED)  # fmt: skip
    assert code == 0
    printed = json.loads(out)
    with Ledger.open(store) as ledger:
        [agent] = ledger.agents()
    assert agent.latest.document == printed
    assert agent.latest.signature == "valid"
    assert agent.latest.standing == "evidence"
    assert agent.card_url == origin + "/.well-known/agent-card.json"


def test_verify_many_store_keeps_the_lines_it_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "l.db")
    with serve_many([honest, honest]) as origins:
        urls = tmp_path / "agents.txt"
        urls.write_text("\n".join([*origins, closed_port_url()]) + "\n")
        code, out, _ = run(capsys, "verify-many", str(urls), *FAST, "--no-progress",
                           "--store", store)  # fmt: skip
    assert code == 3  # one unreachable
    printed = out.encode("utf-8").splitlines()
    with Ledger.open(store) as ledger:
        stored = sorted(r.body for r in ledger.records())
    assert stored == sorted(printed)  # the same bytes, line for line
    assert len(stored) == 3


def test_a_bad_store_fails_before_any_agent_is_contacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[Any] = []

    def counting(origin: str) -> Any:
        app = honest(origin)

        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            seen.append(scope.get("path"))
            await app(scope, receive, send)

        return wrapped

    with serve(counting) as origin:
        for argv in (["verify", origin], ["verify-many", str(tmp_path / "u.txt")]):
            (tmp_path / "u.txt").write_text(origin + "\n")
            code, _, err = run(capsys, *argv, *FAST, "--store",
                               str(tmp_path / "missing" / "l.db"))  # fmt: skip
            assert code == 2
            assert "folder does not exist [store_unavailable]" in err
    assert seen == []
