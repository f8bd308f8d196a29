"""The ledger's store (D-STORE-1): records kept byte for byte in SQLite and a real
PostgreSQL, refused with the reason when their runner signature fails, standing
recomputed on every read, hostile input refused with fixed words."""

from __future__ import annotations

import base64
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import a2a_interview
from a2a_interview import nkeys
from a2a_interview.checks import Outcome
from a2a_interview.record import (
    sign_record,
    signing_bytes,
    standing_of,
    verify_record_signature,
)
from needs import module as need_module
from support.ledger import (
    INSANE,
    RUNNER_SEED,
    compact,
    migrate_to,
    record,
    signed,
    with_calls,
)

if TYPE_CHECKING:
    from pg import Server

sa = need_module("sqlalchemy", "the ledger extra (sqlalchemy)", "pip install -e '.[ledger]'")

from a2a_interview.ledger import (  # noqa: E402
    BadSignature,
    Ledger,
    LedgerError,
    NotARecord,
    NotSane,
    StoreTooNew,
    StoreUnavailable,
)

pytest_plugins = ["pg"]

OTHER_SEED = nkeys.generate_seed()
_ROLES = iter(range(10**6))  # PostgreSQL roles are the cluster's: one name a test


def corpus() -> list[bytes]:
    """Records spelled in several ways: compact, spaced, pretty, non-ASCII, escaped."""
    pretty = json.dumps(sign_record(record("https://c.example"), RUNNER_SEED), indent=2)
    return [
        signed(record("https://b.example", outcome=Outcome.non_conformant)),
        compact(record("https://a.example", party="self", name="Zoë — 自分")),
        json.dumps(record("https://d.example", outcome=Outcome.not_offered)).encode(),
        pretty.encode("utf-8"),
        json.dumps(record("https://e.example", name="\u00e9t\u00e9 \U0001f600"), ensure_ascii=True)
        .replace(" ", "  ")
        .encode("ascii"),
        signed(record("https://a.example", finished="2026-11-29T12:00:00.000Z")),
    ]


# --- byte for byte --------------------------------------------------------------------


def test_records_round_trip_byte_for_byte(store_url: str) -> None:
    # D-STORE-2: the same records round-trip unchanged, byte for byte.
    given = corpus()
    with Ledger.open(store_url) as ledger:
        ids = [ledger.add(body).id for body in given]
        assert [ledger.get(i).body for i in ids] == given  # type: ignore[union-attr]
    with Ledger.open(store_url) as again:  # a second open migrates nothing and loses nothing
        assert [r.body for r in again.records()] == given
        assert again.count() == len(given)


def test_sqlite_and_postgresql_hold_the_same_bytes(tmp_path: Path, postgres_server: Server) -> None:
    # D-STORE-10: SQLite → export → PostgreSQL → export gives the bytes first given.
    given = corpus()
    with Ledger.open(tmp_path / "one.db") as lite:
        for body in given:
            lite.add(body)
        exported = [r.body for r in lite.records()]
    with Ledger.open(postgres_server.database()) as pg:
        for body in exported:
            pg.add(body)
        assert [r.body for r in pg.records()] == given
        assert [(a.card_url, a.count) for a in pg.agents()] == [
            ("https://a.example/.well-known/agent-card.json", 2),
            ("https://b.example/.well-known/agent-card.json", 1),
            ("https://c.example/.well-known/agent-card.json", 1),
            ("https://d.example/.well-known/agent-card.json", 1),
            ("https://e.example/.well-known/agent-card.json", 1),
        ]


def test_surrounding_whitespace_is_trimmed_and_nothing_else(store_url: str) -> None:
    body = signed(record())
    with Ledger.open(store_url) as ledger:
        assert ledger.add(b"\n  " + body + b"\r\n").body == body


# --- idempotency ----------------------------------------------------------------------


def test_the_same_record_twice_is_one_row(store_url: str) -> None:
    document = sign_record(record(), RUNNER_SEED)
    with Ledger.open(store_url) as ledger:
        first, new = ledger.put(compact(document))
        assert new
        again, new_again = ledger.put(compact(document))
        # The same record in another spelling is the same record (JCS digest).
        respelled, new_respelled = ledger.put(json.dumps(document, indent=4).encode())
        assert (again.id, new_again) == (first.id, False)
        assert (respelled.id, new_respelled) == (first.id, False)
        assert respelled.body == compact(document)  # the first bytes are kept
        assert ledger.count() == 1


def test_put_many_is_put_for_each_in_one_transaction(store_url: str) -> None:
    good = signed(record("https://a.example"))
    tampered = sign_record(record("https://t.example"), RUNNER_SEED)
    tampered["outcome"] = "churn"
    with Ledger.open(store_url) as ledger:
        before = ledger.add(signed(record("https://b.example")))
        results = ledger.put_many(
            [good, compact(tampered), b"[]", good, signed(record("https://b.example"))]
        )
        assert [type(r).__name__ for r in results] == [
            "tuple", "BadSignature", "NotARecord", "tuple", "tuple",
        ]  # fmt: skip
        first, again, old = results[0], results[3], results[4]
        assert isinstance(first, tuple) and isinstance(again, tuple) and isinstance(old, tuple)
        assert first[1] and not again[1] and not old[1]
        assert again[0].id == first[0].id  # a duplicate within the batch is one row
        assert old[0] == before
        assert first[0] == ledger.get(first[0].id)  # what it returns is what is stored
        assert ledger.count() == 2


def test_a_job_writes_at_most_one_record(store_url: str) -> None:
    # D-STORE-8: a job that runs again after its worker died writes nothing more.
    with Ledger.open(store_url) as ledger:
        first, new = ledger.put(signed(record()), job_key="job:7")
        again, new_again = ledger.put(
            signed(record(finished="2026-11-29T11:00:00.000Z")), job_key="job:7"
        )
        assert new and not new_again
        assert again.id == first.id
        assert ledger.by_job("job:7") == first
        assert ledger.count() == 1


# --- reading --------------------------------------------------------------------------


def test_agents_latest_history_and_due(store_url: str) -> None:
    with Ledger.open(store_url) as ledger:
        old = ledger.add(signed(record("https://z.example", finished="2026-11-01T00:00:00Z")))
        new = ledger.add(
            signed(record("https://z.example", outcome=Outcome.unreachable,
                          finished="2026-11-20T00:00:00+01:00"))
        )  # fmt: skip
        ledger.add(signed(record("https://m.example", outcome=Outcome.not_offered)))
        ledger.add(signed(record("https://a.example", outcome=Outcome.non_conformant)))
        # A later-stored record that finished earlier is history, not the latest.
        older = ledger.add(signed(record("https://z.example", finished="2026-10-01T00:00:00Z")))
        agents = ledger.agents()
        # Ordered by card URL, never by outcome (interview §9).
        assert [a.card_url for a in agents] == [
            "https://a.example/.well-known/agent-card.json",
            "https://m.example/.well-known/agent-card.json",
            "https://z.example/.well-known/agent-card.json",
        ]
        z = agents[2]
        assert (z.latest.id, z.count) == (new.id, 3)
        assert z.latest.finished_at == datetime(2026, 11, 19, 23, 0, tzinfo=UTC)
        assert [r.id for r in ledger.history(z.card_url)] == [older.id, old.id, new.id]
        assert ledger.history("https://nobody.example/") == []
        assert ledger.latest(z.card_url) == new
        # PROFILE §8: due by the store's own receipt time, never the record's times.
        received = max(r.stored_at for r in ledger.history(z.card_url))
        assert ledger.due(timedelta(days=5), received + timedelta(days=6)) == [
            a.card_url for a in agents
        ]
        assert ledger.due(timedelta(days=5), received + timedelta(days=4)) == []
        assert ledger.get(10**6) is None
        assert ledger.get(-1) is None


def test_the_longest_urls_are_held_and_found_on_both_stores(store_url: str) -> None:
    # Review finding 6: a card URL at the bound (2076 bytes of random CJK) is held by
    # PostgreSQL's index, and an agent URL at the bound, filed under it plus the card
    # path, is found.
    import random

    rnd = random.Random(7)
    cjk = "".join(chr(rnd.randrange(0x4E00, 0x9FFF)) for _ in range(686))  # 2058 bytes
    near = record("https://a.example")
    near["agent"]["card_url"] = "https://x.example/" + cjk
    far = record("https://b.example", outcome=Outcome.unreachable)
    far["agent"]["url"] = "https://b.example/" + "b" * (2048 - 18)
    far["agent"]["card_url"] = None
    with Ledger.open(store_url) as ledger:
        for document in (near, far):
            stored = ledger.add(compact(document))
            assert [r.id for r in ledger.history(stored.card_url)] == [stored.id]
        assert len(stored.card_url) == 2048 + len("/.well-known/agent-card.json")
        # Review finding 7: re-verifying that agent (a worker's job) records the card URL
        # it fetched, the card path added to an agent URL at the bound: it is stored.
        again = record("https://b.example", finished="2026-11-30T10:00:00.000Z")
        again["agent"]["url"], again["agent"]["card_url"] = far["agent"]["url"], stored.card_url
        assert ledger.add(compact(again)).card_url == stored.card_url
        assert len(ledger.history(stored.card_url)) == 2
        # Review finding 8: a key no store can hold is unknown, not a driver's exception.
        for unknown in ("http://a\udcff", "http://a\x00", stored.card_url + "x"):
            assert ledger.history(unknown) == [] and ledger.latest(unknown) is None


def test_an_unreachable_run_without_a_card_files_under_the_card_url(store_url: str) -> None:
    document = record("https://u.example/agents/one", outcome=Outcome.unreachable)
    document["agent"]["card_url"] = None
    with Ledger.open(store_url) as ledger:
        stored = ledger.add(compact(document))
    assert stored.card_url == "https://u.example/agents/one/.well-known/agent-card.json"


def test_standing_is_recomputed_never_read(store_url: str) -> None:
    # PROFILE §8, interview §8: a self-run record claiming "evidence" is a claim.
    document = record(party="self")
    document["standing"] = "evidence"
    with Ledger.open(store_url) as ledger:
        stored = ledger.add(compact(document))
        assert stored.document["standing"] == "evidence"  # kept as given ...
        assert stored.standing == "claim"  # ... and never believed
        third = ledger.add(signed(record("https://t.example")))
        assert third.standing == "evidence"
        # The runner holding the card's key makes it a claim whatever the party says.
        card_key = nkeys.generate_seed()
        from a2a_interview.record import nkey_thumbprint

        own = record("https://own.example")
        own["agent"]["card_signature"]["thumbprint"] = nkey_thumbprint(
            nkeys.public_of(nkeys.private_key(card_key))
        )
        assert ledger.add(signed(own, card_key)).standing == "claim"


def test_a_new_release_or_migrate_refreshes_the_standing_column(tmp_path: Path) -> None:
    # D-STORE-6: a standing column is fine only if refreshed from standing_of.
    path = tmp_path / "s.db"
    with Ledger.open(path) as ledger:
        stored = ledger.add(compact(record(party="self")))

    def column() -> list[tuple[int, str]]:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT id, standing FROM ledger_records").fetchall()

    def stale(release: str) -> None:  # as an older reading of standing left it
        with sqlite3.connect(path) as db:
            db.execute("UPDATE ledger_records SET standing = 'evidence'")
            db.execute("UPDATE ledger_meta SET value = ? WHERE key = 'standing_by'", (release,))

    stale("0.0.1")
    with Ledger.open(path):  # another release refreshed it last: refreshed on open
        pass
    assert column() == [(stored.id, "claim")]
    from a2a_interview import __version__

    stale(__version__)
    with Ledger.open(path) as ledger:  # the same release: opening costs no full scan ...
        assert column() == [(stored.id, "evidence")]
        assert ledger.get(stored.id).standing == "claim"  # type: ignore[union-attr]
        ledger.migrate()  # ... and `ledger migrate` always refreshes
    assert column() == [(stored.id, "claim")]


# --- refusals -------------------------------------------------------------------------


def test_a_record_whose_signature_fails_is_refused_with_the_reason(store_url: str) -> None:
    # D-STORE-4: refused on import with the reason.
    document = sign_record(record(), RUNNER_SEED)
    document["outcome"] = "consistent" if document["outcome"] != "consistent" else "churn"
    other = sign_record(record("https://o.example"), OTHER_SEED)
    other["ran_by"]["key"] = nkeys.public_of(nkeys.private_key(RUNNER_SEED))
    garbled = sign_record(record("https://g.example"), RUNNER_SEED)
    garbled["signatures"][0]["sig"] = "A" * 86
    with Ledger.open(store_url) as ledger:
        with pytest.raises(BadSignature) as tampered:
            ledger.add(compact(document))
        assert tampered.value.code == "bad_signature"
        assert tampered.value.reason == "the runner signature does not verify (PROFILE §8)"
        with pytest.raises(BadSignature):
            ledger.add(compact(other))
        with pytest.raises(BadSignature):
            ledger.add(compact(garbled))
        assert ledger.count() == 0


# --- sanity (D-STORE-12, PROFILE §8 as amended) ------------------------------


@pytest.mark.parametrize(
    ("document", "reason"), [i[1:] for i in INSANE], ids=[i[0] for i in INSANE]
)
def test_an_insane_record_is_refused_with_its_reason(
    store_url: str, document: Any, reason: str
) -> None:
    # PROFILE §8 (amended): a store refuses a record failing the sanity checks.
    with Ledger.open(store_url) as ledger:
        ledger.add(signed(record("https://a.example")))
        with pytest.raises(NotSane) as refused:
            ledger.add(compact(document))
        assert refused.value.sanity == reason and refused.value.code == "not_sane"
        assert refused.value.reason.endswith("(PROFILE §8)")
        assert ledger.count() == 1
        # ... so no future record becomes the agent's latest or keeps it off the schedule.
        assert ledger.due(timedelta(days=1), datetime.now(UTC) + timedelta(days=2)) == [
            "https://a.example/.well-known/agent-card.json"
        ]


def test_interfaces_on_the_agents_host_or_its_subdomains_are_its_own() -> None:
    # docs/decisions.md D-STORE-12 (sanity): the card's host, a subdomain, a parent,
    # www. set aside; ports and schemes may differ.
    from a2a_interview.record import record_sanity

    now = datetime.now(UTC)
    for interface in ("https://a.example:8443/rpc", "http://api.a.example/rpc",
                      "https://A.EXAMPLE./rpc", "https://www.a.example/rpc"):  # fmt: skip
        assert record_sanity(with_calls(record("https://a.example"), interface), now) is None
    www = with_calls(record("https://www.shop.example"), "https://api.shop.example/rpc")
    assert record_sanity(www, now) is None
    assert record_sanity(record(), now) is None


def test_one_run_is_one_row_whatever_its_signatures(store_url: str) -> None:
    # D-STORE-3, PROFILE §8: the identity is the JCS digest without signatures.
    document = sign_record(record(), RUNNER_SEED)
    repeated = {**document, "signatures": document["signatures"] * 3}
    # A second signature, by another key over the same bytes, appended: it verifies.
    other = nkeys.private_key(OTHER_SEED)
    sig = base64.urlsafe_b64encode(other.sign(signing_bytes(document))).rstrip(b"=").decode()
    added = {**document, "signatures": [*document["signatures"],
                                        {"key": nkeys.public_of(other), "sig": sig}]}  # fmt: skip
    assert verify_record_signature(added).status == "valid"
    with Ledger.open(store_url) as ledger:
        first, new = ledger.put(compact(document))
        for variant in (repeated, added, {**added, "signatures": added["signatures"][::-1]}):
            again, new_again = ledger.put(compact(variant))
            assert new and not new_again and again.id == first.id
        assert ledger.count() == 1
        assert ledger.get(first.id).body == compact(document)  # type: ignore[union-attr]


def test_a_stripped_copy_stored_first_does_not_veto_the_signed_run(store_url: str) -> None:
    # One run, one row: the unsigned copy (anyone can strip a signature) is replaced by
    # the runner's signed bytes when they arrive, never the other way round.
    document = sign_record(record(), RUNNER_SEED)
    stripped = {k: v for k, v in document.items() if k != "signatures"}
    with Ledger.open(store_url) as ledger:
        copy_, _ = ledger.put(compact(stripped))
        assert copy_.standing == "claim"
        kept, new = ledger.put(compact(document))
        assert not new and kept.id == copy_.id
        assert kept.body == compact(document) and kept.standing == "evidence"
        assert ledger.put(compact(stripped))[0].body == compact(document)
        assert ledger.count() == 1


HOSTILE: list[tuple[bytes, str]] = [
    (b"", "not strict I-JSON (malformed)"),
    (b"{not json", "not strict I-JSON (malformed)"),
    (b'{"a":1,"a":2}', "not strict I-JSON (duplicate_key)"),
    (b'{"a":NaN}', "not strict I-JSON (non_finite)"),
    (b'{"a":9007199254740993}', "not strict I-JSON (integer_range)"),
    (b"\xef\xbb\xbf{}", "not strict I-JSON (bom)"),
    (b'{"a":"\xff"}', "not strict I-JSON (not_utf8)"),
    (b'{"a":"\\ud800"}', "not strict I-JSON (lone_surrogate)"),
    (b"[" * 200 + b"]" * 200, "not strict I-JSON (too_deep)"),
    (b'{"a":"' + b"x" * (1 << 20) + b'"}', "not strict I-JSON (too_large)"),
    (b"[]", "not a JSON object"),
    (b'{"format":"<script>"}', "format is not a2a-interview-result/1"),
]


@pytest.mark.parametrize(("body", "reason"), HOSTILE)
def test_hostile_bytes_are_refused_with_fixed_words(body: bytes, reason: str) -> None:
    from a2a_interview.ledger.store.columns import columns as _columns

    with pytest.raises(NotARecord) as refused:
        _columns(body)
    assert refused.value.reason == reason
    assert refused.value.code == "not_a_record"


def _edit(path: str, value: Any) -> dict[str, Any]:
    document = record()
    target = document
    *parents, last = path.split(".")
    for name in parents:
        target = target[name]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return document


MALFORMED: list[tuple[str, Any, str]] = [
    ("agent", KeyError, "agent is not an object"),
    ("agent.url", 7, "agent.url is not a non-empty string"),
    ("agent.url", "", "agent.url is not a non-empty string"),
    ("agent.url", "https://x.example/\u0000<b>", "agent.url holds a NUL character"),
    ("agent.card_url", "https://x.example/" + "a" * 3000,
     "agent.card_url is longer than 2076 bytes in UTF-8"),
    # Review finding 6: the bound was in characters; 2000 CJK characters (6 KB) passed
    # it and PostgreSQL's index refused the row: "the store cannot be reached".
    ("agent.card_url", "https://x.example/" + "\u4e00" * 700,
     "agent.card_url is longer than 2076 bytes in UTF-8"),
    ("ran_by.name", "\U0001f600" * 300, "ran_by.name is longer than 1024 bytes in UTF-8"),
    ("ran_by", "me", "ran_by is not an object"),
    ("ran_by.party", "<i>god</i>", "ran_by.party is not one of self, platform, third_party"),
    ("ran_by.name", None, "ran_by.name is not a non-empty string"),
    ("ran_by.key", 5, "ran_by.key is not a non-empty string"),
    ("outcome", "excellent", "outcome is not one of consistent, churn, non_conformant, "
     "not_offered, unreachable"),
    ("started_at", "yesterday <script>", "started_at is not an RFC 3339 time"),
    ("finished_at", "2026-11-29T10:00:00", "finished_at has no time zone"),
    ("finished_at", 1732874400, "finished_at is not an RFC 3339 time"),
    # Review finding 1 (decisions D-STORE-4: RFC 3339 times with a zone): a time
    # that leaves datetime's range in UTC was an OverflowError traceback, and ISO 8601
    # spellings RFC 3339 does not have were stored.
    ("started_at", "0001-01-01T00:00:00+01:00", "started_at is not an RFC 3339 time"),
    ("finished_at", "9999-12-31T23:59:59-01:00", "finished_at is not an RFC 3339 time"),
    ("finished_at", "20261129T100001Z", "finished_at is not an RFC 3339 time"),
    ("finished_at", "2026-W48-7T10:00:01Z", "finished_at is not an RFC 3339 time"),
    ("finished_at", "2026-11-29T10:00:01+05", "finished_at is not an RFC 3339 time"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "value", "reason"), MALFORMED)
def test_malformed_records_are_refused_naming_the_member(
    tmp_path: Path, path: str, value: Any, reason: str
) -> None:
    with Ledger.open(tmp_path / "m.db") as ledger:
        with pytest.raises(NotARecord) as refused:
            ledger.add(compact(_edit(path, value)))
        assert refused.value.reason == reason
        assert ledger.count() == 0


# --- opening --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["mysql://u:hunter2@db.example/x", "postgresql+asyncpg://u:hunter2@h/x", "sqlite://",
     "sqlite:///:memory:", "", "http://u:hunter2@x/",
     # Review finding 9: undecodable argv bytes were a UnicodeEncodeError traceback.
     "postgresql://u:hunter2@127.0.0.1:1/\udcff"],
)  # fmt: skip
def test_unusable_store_urls_are_refused_without_echoing_them(url: str) -> None:
    with pytest.raises(StoreUnavailable) as refused:
        Ledger.open(url)
    assert "hunter2" not in str(refused.value)
    assert refused.value.code == "store_unavailable"


def test_a_missing_folder_and_an_unreachable_server_are_clear(tmp_path: Path) -> None:
    import socket

    with pytest.raises(StoreUnavailable, match="folder does not exist"):
        Ledger.open(tmp_path / "no" / "such" / "ledger.db")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(StoreUnavailable) as refused:
        Ledger.open(f"postgresql://u:hunter2@127.0.0.1:{port}/x")
    assert "hunter2" not in str(refused.value)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(StoreUnavailable):
        Ledger.open(path)
    assert path.read_bytes().startswith(b"these are my notes")


def test_a_store_from_a_newer_version_is_refused(store_url: str) -> None:
    with Ledger.open(store_url) as ledger, ledger._begin() as connection:
        import sqlalchemy as sa

        connection.execute(sa.text("UPDATE a2a_interview_ledger_version SET version_num = '9999'"))
    with pytest.raises(StoreTooNew) as refused:
        Ledger.open(store_url)
    assert isinstance(refused.value, LedgerError)
    assert refused.value.code == "store_too_new"


def test_postgresql_store_holds_the_job_queue(postgres_server: Server) -> None:
    # The migrations own the whole database, procrastinate's tables included.
    import sqlalchemy as sa

    url = postgres_server.database()
    with Ledger.open(url) as ledger, ledger._begin() as connection:
        names = set(sa.inspect(connection).get_table_names())
    assert {"ledger_records", "procrastinate_jobs", "a2a_interview_ledger_version"} <= names


_COUNT_MIGRATIONS = """
import sys
import sqlalchemy as sa
from a2a_interview.ledger import Ledger

made = []


def seen(conn, cursor, statement, *rest):
    if statement.lstrip().upper().startswith("CREATE TABLE LEDGER_RECORDS"):
        made.append(1)


sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
Ledger.open(sys.argv[1]).count()
print(len(made))
"""


def test_many_openers_of_a_new_store_migrate_it_once(store_url: str) -> None:
    # Workers and cron jobs starting together on a fresh store, as processes and as
    # threads: each open succeeds and the schema is made once (PostgreSQL: an advisory
    # lock; SQLite: BEGIN IMMEDIATE; in one process: a lock around Alembic)
    # (docs/decisions.md D-STORE-11). Each opener counts the statements that create
    # the records table: over all eight openers, exactly one.
    import subprocess
    import sys
    import threading

    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _COUNT_MIGRATIONS, store_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    errors: list[BaseException] = []
    made: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *rest: object) -> None:
        if statement.lstrip().upper().startswith("CREATE TABLE LEDGER_RECORDS"):
            made.append(statement)

    def open_one() -> None:
        try:
            with Ledger.open(store_url) as ledger:
                ledger.count()
        except BaseException as exc:
            errors.append(exc)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
    try:
        threads = [threading.Thread(target=open_one) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", seen)
    outputs = [p.communicate(timeout=60) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, [err for _, err in outputs]
    assert errors == []
    by_processes = sum(int(out.strip()) for out, _ in outputs)
    assert by_processes + len(made) == 1, (by_processes, len(made))
    with Ledger.open(store_url) as ledger:
        assert ledger.count() == 0


def test_the_ledger_surface_is_pinned() -> None:
    import a2a_interview.ledger as ledger

    assert sorted(ledger.__all__) == sorted([
        "DEFAULT_STORE", "AgentLine", "AgentSummary", "BadSignature", "JobsNeedPostgreSQL",
        "Ledger", "LedgerError", "ListedRecord", "NotARecord", "NotSane", "RecordRefused",
        "StoreTooNew", "StoreUnavailable", "StoredRecord", "agent_key", "parse_store_url",
    ])  # fmt: skip
    for name in ledger.__all__:
        assert hasattr(ledger, name), name


def test_a_missing_postgresql_skips_here_and_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The brief's rule for parts CI installs: skip with the reason only where CI is unset.
    import pg

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL binaries not found"):
        pg.missing("PostgreSQL binaries not found")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"a missing part is a failure"):
        pg.missing("PostgreSQL binaries not found")


# --- the summary kept at write time (D-STORE-14) ---------------------------------


def test_the_agent_summary_is_kept_at_write_time(store_url: str) -> None:
    # What the index shows per agent is kept in the store as records are written, so
    # a page reads O(page) rows; it always agrees with the records themselves.
    document = sign_record(record("https://b.example"), RUNNER_SEED)
    stripped = {k: v for k, v in document.items() if k != "signatures"}
    with Ledger.open(store_url) as ledger:
        ledger.put_many([
            signed(record("https://a.example", finished="2026-11-01T00:00:00Z")),
            compact(record("https://a.example", party="self", finished="2026-11-02T00:00:00Z")),
            signed(record("https://a.example", finished="2026-10-01T00:00:00Z")),
            compact(stripped),
            signed(record("https://c_%25.example")),
        ])  # fmt: skip
        a = "https://a.example/.well-known/agent-card.json"
        b = "https://b.example/.well-known/agent-card.json"
        totals = ledger.totals()
        assert (totals.agents, totals.results, totals.evidence, totals.claims) == (3, 5, 3, 2)
        page = ledger.agents_from(2)
        assert [s.card_url for s in page] == [a, b]
        assert (page[0].count, page[0].evidence) == (3, 2)
        assert page[0].latest.finished_at == datetime(2026, 11, 2, tzinfo=UTC)
        assert (page[1].count, page[1].evidence) == (1, 0)
        # The signed bytes replace the stripped copy: the summary follows.
        ledger.put(compact(document))
        assert ledger.summary(b).evidence == 1  # type: ignore[union-attr]
        assert ledger.totals().evidence == 4
        # Search is on the card URL, its % and _ taken literally.
        assert [s.card_url for s in ledger.agents_from(10, "c_%25.exa")] == [
            "https://c_%25.example/.well-known/agent-card.json"
        ]
        assert ledger.matching("A.EXAMPLE", 1000) == 1
        assert ledger.matching("%25.exa", 1000) == 1  # the URL as normalized (PROFILE §8)
        # History a page at a time, newest first; evidence candidates; places.
        newest = ledger.history_page(a, 0, 2)
        assert [r.finished_at.day for r in newest] == [2, 1]
        assert [r.finished_at.month for r in ledger.history_page(a, 2, 2)] == [10]
        [evidence, older] = ledger.latest_evidence(a)
        assert ledger.newer_than(evidence) == 1 and ledger.newer_than(older) == 2
        assert ledger.summary("https://nobody.example/") is None
        # A full recount (ledger migrate) agrees with what was kept.
        kept = ledger.agents()
        ledger.migrate()
        assert ledger.agents() == kept


def test_the_run_identity_migration_keeps_what_it_takes_out(tmp_path: Path) -> None:
    # PROFILE §8 (amended) and migration 0004: a store written before the sanity checks
    # loses its duplicate rows of one run and its insane rows from `ledger_records`; the
    # insane ones are kept byte for byte in `ledger_refused` with their reason, never
    # deleted, so an operator upgrading loses nothing a person could still judge.

    path = tmp_path / "old.db"
    good = sign_record(record(), RUNNER_SEED)
    repeated = {**good, "signatures": good["signatures"] * 2}
    future = record("https://b.example", finished="2099-01-01T00:00:00.000Z")
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        migrate_to(connection, "0003")
        for i, document in enumerate((good, repeated, future)):
            connection.execute(
                sa.text(
                    "INSERT INTO ledger_records (digest, card_url, agent_url, outcome, party,"
                    " runner_name, signature, standing, started_at, finished_at, stored_at,"
                    " body) VALUES (:d, :c, :a, 'consistent', 'third_party', 'Acme', 'valid',"
                    " 'claim', :t, :t, :t, :b)"
                ),
                {"d": f"sha256:{i:064d}", "c": document["agent"]["card_url"],
                 "a": document["agent"]["url"], "t": "2026-11-29 10:00:00", "b": compact(document)},
            )  # fmt: skip
    engine.dispose()
    with Ledger.open(path) as ledger:
        assert ledger.count() == 1
    with sqlite3.connect(path) as db:
        kept = db.execute("SELECT id, body FROM ledger_records").fetchall()
        refused = db.execute("SELECT id, reason, body FROM ledger_refused").fetchall()
    assert kept == [(1, compact(good))]  # the signed row first stored is the one kept
    assert refused == [(3, "from_the_future", compact(future))]


# --- the agent's name (D-STORE-16) ------------------------------------------------


def named(document: dict[str, Any], name: Any) -> dict[str, Any]:
    """``document`` with ``agent.name`` set (as the verifier writes it from the card)."""
    return {**document, "agent": {**document["agent"], "name": name}}


def test_an_agent_is_named_as_its_latest_record_names_it_and_found_by_it(
    store_url: str,
) -> None:
    # D-STORE-16: the index shows the agent's name and search finds it, read from
    # the summary kept at write time; the name is the latest record's (the latest
    # finished_at), never an older record's, and a name that is not a bounded string
    # is no name (record.agent_name: peer text).
    a = "https://a.example/.well-known/agent-card.json"
    with Ledger.open(store_url) as ledger:
        ledger.put_many([
            signed(named(record("https://a.example", finished="2026-11-02T00:00:00Z"),
                         "Stonework Ça Va")),
            signed(named(record("https://a.example", finished="2026-11-01T00:00:00Z"),
                         "Older Name")),
            signed(named(record("https://b.example"), ["not", "a", "string"])),
            signed(named(record("https://c.example"), "x" * 201)),
        ])  # fmt: skip
        page = ledger.agents_from(10)
        assert [s.latest.agent_name for s in page] == ["Stonework Ça Va", None, None]
        assert ledger.agents_from(10, "stonework")[0].card_url == a  # case folded
        assert ledger.matching("older name", 1000) == 0  # not the latest's name
        assert ledger.matching("A.EXAMPLE", 1000) == 1  # the card URL still
        assert ledger.matching("card.json\nstonework", 1000) == 1  # one line each
        # A newer record renames the agent; an older one imported later does not.
        ledger.put(signed(named(record("https://a.example", finished="2026-11-03T00:00:00Z"),
                                "Renamed")))  # fmt: skip
        ledger.put(signed(named(record("https://a.example", finished="2026-10-01T00:00:00Z"),
                                "Ancient")))  # fmt: skip
        assert ledger.summary(a).latest.agent_name == "Renamed"  # type: ignore[union-attr]
        assert ledger.matching("renamed", 1000) == 1
        assert ledger.matching("stonework", 1000) == 0
        kept = [s.latest.agent_name for s in ledger.agents()]
        ledger.migrate()  # a full recount agrees
        assert [s.latest.agent_name for s in ledger.agents()] == kept


def test_the_agent_name_migration_fills_the_names_of_stored_records(tmp_path: Path) -> None:
    # Migration 0006: a store written at 0005 gets its names from its records' bytes on
    # the next open, so search by name covers what it already holds.

    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    body = signed(named(record(), "Stonework"))
    with engine.begin() as connection:
        migrate_to(connection, "0005")
        connection.execute(
            sa.text(
                "INSERT INTO ledger_records (digest, card_url, agent_url, outcome, party,"
                " runner_name, signature, standing, standing_reason, started_at,"
                " finished_at, stored_at, body) VALUES (:d, :c, 'https://a.example',"
                " 'consistent', 'third_party', 'Acme', 'valid', 'evidence', 'evidence',"
                " :t, :t, :t, :b)"
            ),
            {"d": "sha256:" + "0" * 64, "c": "https://a.example/.well-known/agent-card.json",
             "t": "2026-11-29 10:00:00", "b": body},
        )  # fmt: skip
        connection.execute(sa.text(
            "INSERT INTO ledger_meta (key, value) VALUES ('standing_by', :v)"
        ), {"v": a2a_interview.__version__})  # fmt: skip
    engine.dispose()
    with Ledger.open(path) as ledger:
        [found] = ledger.agents_from(10, "stonework")
        assert found.latest.agent_name == "Stonework"


# --- search and paging at scale (D-STORE-17) ------------------------------------


def test_search_finds_the_same_with_the_trigram_index_as_without(store_url: str) -> None:
    # Migration 0007 (docs/decisions.md D-STORE-17): search reads a trigram index (FTS5
    # on SQLite, pg_trgm on PostgreSQL); what it finds is what the LIKE over every
    # agent found: the same agents, card URL order, %, _ and quotes taken literally,
    # a match across the URL/name line break. (A query without three letters or digits
    # in a row is refused: D-STORE-23.)
    names = ["Stonework Çava", "ÇAVA", '100% _sure_ say "hi"', "abc", None]
    with Ledger.open(store_url) as ledger:
        ledger.put_many([
            signed(named(record(f"https://agent-{i}.example"), name))
            for i, name in enumerate(names)
        ])  # fmt: skip
        with ledger._read() as connection:
            kind = connection.execute(
                sa.text("SELECT value FROM ledger_meta WHERE key = 'search_index'")
            ).scalar_one()
        assert kind == ("fts5" if store_url.startswith("sqlite") else "pg_trgm")
        urls = [f"https://agent-{i}.example/.well-known/agent-card.json" for i in range(5)]
        expected = {
            "stonework": [urls[0]], "STONE": [urls[0]], "Çava": urls[:2], "100%": [urls[2]],
            "_sure_": [urls[2]], 'say "hi"': [urls[2]], "abc": [urls[3]], "agent-": urls,
            "card.json\nstone": [urls[0]], "zzz": [], "ent-4.example": [urls[4]],
        }  # fmt: skip
        for query, want in expected.items():
            found = [s.card_url for s in ledger.agents_from(100, query)]
            assert found == want, query
            walked = [s.card_url for s in ledger.agents_from(100, query, dense=True)]
            assert walked == found, query  # with the index or without: the same
            assert ledger.matching(query, 1000) == len(found), query
            assert ledger.matching(query, 1) == min(len(found), 2), query  # capped
            # The index's page reads the agents one scan named (under the cap) or walks
            # the card URL index (over it): the same count and the same pages either way.
            count, page = ledger.search_page(query, 1000, 100)
            assert (count, [s.card_url for s in page]) == (len(found), found), query
            count, page = ledger.search_page(query, 1, 100)
            assert (count, [s.card_url for s in page]) == (min(len(found), 2), found), query
            for cap in (1, 1000):
                for at in urls:
                    page = ledger.search_page(query, cap, 2, after=at)[1]
                    assert [s.card_url for s in page] == [u for u in found if u > at][:2]
                    page = ledger.search_page(query, cap, 2, before=at)[1]
                    assert [s.card_url for s in page] == [u for u in found if u < at][-2:]
        for query in ("çava", "ÇAVA"):  # beyond ASCII: the same either way, whatever it is
            found = [s.card_url for s in ledger.agents_from(100, query)]
            assert found == [s.card_url for s in ledger.agents_from(100, query, dense=True)]
        # Keyset paging: after and before a card URL, in card URL order either way.
        assert [s.card_url for s in ledger.agents_from(2, after=urls[1])] == urls[2:4]
        assert [s.card_url for s in ledger.agents_from(2, before=urls[3])] == urls[1:3]
        assert [s.card_url for s in ledger.agents_from(2, "agent-", after=urls[3])] == [urls[4]]
        assert ledger.agents_from(2, before=urls[0]) == []
        # The index follows renames and new agents (triggers on SQLite).
        ledger.put(signed(named(record("https://agent-0.example",
                                       finished="2026-11-29T11:00:00Z"), "Granite")))  # fmt: skip
        assert [s.card_url for s in ledger.agents_from(10, "granite")] == [urls[0]]
        assert ledger.agents_from(10, "stonework") == []
        ledger.migrate()  # a full recount rebuilds every summary row: the index follows
        assert [s.card_url for s in ledger.agents_from(10, "granite")] == [urls[0]]
        assert ledger.matching("stonework", 1000) == 0


def test_the_search_index_migration_indexes_what_a_store_holds(store_url: str) -> None:
    # Migration 0007 on a store written at 0006: its agents are found through the new
    # index at once (the summary rows kept, SQLite's rebuilt with an integer key), and
    # agents written afterwards too.

    from a2a_interview.ledger.store import parse_store_url

    url, _ = parse_store_url(store_url)
    engine = sa.create_engine(url)
    card = "https://a.example/.well-known/agent-card.json"
    with engine.begin() as connection:
        migrate_to(connection, "0006")
        connection.execute(
            sa.text(
                "INSERT INTO ledger_records (digest, card_url, agent_url, outcome, party,"
                " runner_name, signature, standing, standing_reason, agent_name, started_at,"
                " finished_at, stored_at, body) VALUES (:d, :c, 'https://a.example',"
                " 'consistent', 'third_party', 'Acme', 'valid', 'evidence', 'evidence',"
                " 'Stonework', :t, :t, :t, :b)"
            ),
            {"d": "sha256:" + "0" * 64, "c": card, "t": datetime(2026, 11, 29, tzinfo=UTC),
             "b": signed(named(record(), "Stonework"))},
        )  # fmt: skip
        connection.execute(sa.text(
            "INSERT INTO ledger_agents (card_url, latest_id, results, evidence, name, search)"
            " VALUES (:c, 1, 1, 1, 'Stonework', :s)"
        ), {"c": card, "s": card + "\nStonework"})  # fmt: skip
        connection.execute(
            sa.text("INSERT INTO ledger_meta (key, value) VALUES ('standing_by', :v)"),
            {"v": a2a_interview.__version__},
        )  # fmt: skip (no refresh: the migration alone)
    engine.dispose()
    with Ledger.open(store_url) as ledger:
        if ledger.dialect == "sqlite":
            assert ledger._fts
        [found] = ledger.agents_from(10, "stonework")
        assert (found.card_url, found.count, found.evidence) == (card, 1, 1)
        ledger.put(signed(named(record("https://b.example"), "Basalt Works")))
        assert [s.latest.agent_name for s in ledger.agents_from(10, "work")] == [
            "Stonework",
            "Basalt Works",
        ]  # a.example before b.example
        assert [s.card_url for s in ledger.agents_from(10, "basalt")] == [
            "https://b.example/.well-known/agent-card.json"
        ]
        assert ledger.totals().agents == 2


def test_a_list_reads_no_record_bytes_unless_it_needs_them(store_url: str) -> None:
    # D-WEB-23: a page of the index is made from the columns kept at write time, so its
    # summaries carry no record bytes (PostgreSQL read and sent fifty bodies a page);
    # a row without those columns (from before migration 0005's refresh) still gets
    # its bytes, so the page can recompute it; the agent's own summary reads them.
    body = signed(record())
    card = "https://a.example/.well-known/agent-card.json"
    with Ledger.open(store_url) as ledger:
        ledger.put(body)
        [listed] = ledger.agents_from(10)
        assert listed.latest.body == b"" and listed.latest.standing_reason == "evidence"
        assert ledger.summary(card).latest.body == body  # type: ignore[union-attr]
        with ledger._begin() as connection:
            connection.execute(sa.text("UPDATE ledger_records SET standing_reason = NULL"))
        [listed] = ledger.agents_from(10)
        assert listed.latest.body == body and standing_of(listed.latest.document) == "evidence"


def test_without_the_right_to_create_pg_trgm_search_scans_as_before(
    postgres_server: Server,
) -> None:
    # D-STORE-17: a role that may create tables but not extensions (no CREATE on the
    # database: pg_trgm is a trusted extension, so that is the right it needs) still
    # migrates to 0007: the migration goes on without the index (a savepoint), says so
    # in ledger_meta, and search finds what it found before, by a scan.
    import os

    url = postgres_server.database()
    role = f"ledger_limited_{os.getpid()}_{next(_ROLES)}"
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
        connection.exec_driver_sql(f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
    engine.dispose()
    limited = url.replace(f"//{postgres_server.user}@", f"//{role}@")
    with Ledger.open(limited) as ledger:
        with ledger._read() as connection:
            kind = connection.execute(
                sa.text("SELECT value FROM ledger_meta WHERE key = 'search_index'")
            ).scalar_one()
            installed = connection.execute(
                sa.text("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'")
            ).scalar_one()
        assert (kind, installed) == ("none", 0)
        ledger.put_many([signed(named(record(f"https://agent-{i}.example"), f"Name {i}"))
                         for i in range(3)])  # fmt: skip
        assert [s.latest.agent_name for s in ledger.agents_from(10, "name 1")] == ["Name 1"]
        assert ledger.matching("agent-", 1000) == 3
