"""``ledger import`` in one pass (D-CLI-23): memory flat in the number of lines, counts
instead of lists, a progress line on a terminal only, a summary however it ends (the
end of its files, Ctrl-C, memory running out), never a traceback; the records kept are
those signed records the store takes, each checked once."""

from __future__ import annotations

import json
import os
import pty
import resource
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from needs import module as need_module
from support.cli import COMMAND

need_module("sqlalchemy", "the ledger extra (SQLAlchemy)", "pip install -e '.[ledger]'")

from a2a_interview.cli import main  # noqa: E402
from a2a_interview.ledger import Ledger  # noqa: E402
from ledger_records import build  # noqa: E402

SUMMARY = "kept {} record(s) ({} new, {} already present); refused {}"


def _junk(path: Path, lines: int) -> Path:
    """``lines`` cheap refused lines: JSON objects that are not records."""
    with path.open("wb") as handle:
        handle.write(b"{}\n" * lines)
    return path


def _address_space_512_mib() -> None:
    limit = 512 << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
def test_two_million_lines_under_512_mib_end_with_the_summary(tmp_path: Path) -> None:
    """D-CLI-23: 2,000,000 lines under a 512 MiB address space (``ulimit -v 524288``):
    it held every line (1M refused lines: 392 MB) and ended in a MemoryError traceback
    with nothing stored and no summary. Now the summary, every line told."""
    source = _junk(tmp_path / "two-million.jsonl", 2_000_000)
    err_path = tmp_path / "err.txt"
    with err_path.open("wb") as err:
        done = subprocess.run(
            [*COMMAND, "ledger", "import", str(source), "--store", str(tmp_path / "l.db")],
            stdout=subprocess.PIPE, stderr=err, preexec_fn=_address_space_512_mib,
            timeout=1200, check=False,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert done.stdout.decode() == SUMMARY.format(0, 0, 0, 2_000_000) + "\n"
    with err_path.open("rb") as err:
        err.seek(max(0, err_path.stat().st_size - 4096))
        tail = err.read().decode()
    assert tail.endswith(f"{source}:2000000: refused: format is not a2a-interview-result/1 "
                         "[not_a_record]\n")  # fmt: skip
    assert b"Traceback" not in err_path.read_bytes()


def _mixed(tmp_path: Path) -> tuple[Path, list[bytes]]:
    records = build().bodies
    lines = []
    for i, body in enumerate(records):
        lines += [body, b"{oops", b"[]", b""]
        if i % 3 == 0:
            lines.append(body)  # the same record again: already present
    lines.append(b'{"x": "' + b"A" * (1 << 20) + b'"}')  # over the 1 MiB bound
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, records


def test_a_mix_of_signed_records_and_refusals_is_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """D-CLI-23: real signed records among junk, repeats and a line over the bound: the
    counts, the refusals told in file order, the records stored once; ``--json`` gives
    the same report as before plus its counts."""
    path, records = _mixed(tmp_path)
    store = str(tmp_path / "l.db")
    again = len(range(0, len(records), 3))
    code = main(["ledger", "import", str(path), "--store", store])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == SUMMARY.format(len(records) + again, len(records), again,
                                 2 * len(records) + 1) + "\n"  # fmt: skip
    refused = [line for line in err.splitlines() if ": refused: " in line]
    numbers = [int(line.split(":")[1]) for line in refused]
    assert numbers == sorted(numbers) and len(numbers) == 2 * len(records) + 1
    assert refused[-1].endswith("not strict I-JSON (too_large) [not_a_record]")
    with Ledger.open(store) as ledger:
        assert ledger.count() == len(records)

    code = main(["ledger", "import", str(path), "--store", store, "--json"])
    out, _ = capsys.readouterr()
    report = json.loads(out)
    assert code == 1
    assert len(report["kept"]) == len(records) + again
    assert not any(k["new"] for k in report["kept"])
    assert [r["code"] for r in report["refused"]] == ["not_a_record"] * (2 * len(records) + 1)
    assert report["counts"] == {"kept": len(records) + again, "new": 0,
                                "refused": 2 * len(records) + 1}  # fmt: skip
    assert "stopped" not in report


def test_running_out_of_memory_ends_with_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """D-CLI-23: memory running out mid-import (here: on the third batch) is the
    summary of what was stored and one line saying where it stopped, exit 1, no
    traceback; the batches before stay stored."""
    from a2a_interview.cli import ledger_import

    path, _ = _mixed(tmp_path)
    monkeypatch.setattr(ledger_import, "_BATCH", 2)
    calls = []
    real = Ledger.put_many

    def put_many(self: Ledger, bodies: list[bytes]) -> list[object]:
        calls.append(len(bodies))
        if len(calls) == 3:
            raise MemoryError
        return real(self, bodies)  # type: ignore[return-value]

    monkeypatch.setattr(Ledger, "put_many", put_many)
    store = str(tmp_path / "l.db")
    code = main(["ledger", "import", str(path), "--store", store])
    out, err = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in err
    assert "ledger import stopped (out of memory) after " in err
    # Two batches went in: a record and junk, then junk and the record again.
    assert out == SUMMARY.format(2, 1, 1, 2) + "\n"
    with Ledger.open(store) as ledger:
        assert ledger.count() == 1


def test_ctrl_c_ends_with_the_summary(tmp_path: Path) -> None:
    """D-CLI-23: Ctrl-C mid-import: the summary of what was stored, a line saying where
    it stopped, exit 130, no traceback."""
    source = _junk(tmp_path / "many.jsonl", 3_000_000)
    process = subprocess.Popen(
        [*COMMAND, "ledger", "import", str(source), "--store", str(tmp_path / "l.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()  # a refusal: it is importing
        assert ": refused: " in first, first
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    assert "ledger import stopped (Ctrl-C) after " in err
    assert out.startswith("kept 0 record(s) (0 new, 0 already present); refused ")
    assert not out.endswith("refused 3000000\n")  # stopped before the end


def _through_a_terminal(args: list[str], seconds: float) -> tuple[int, bytes]:
    """Run ``args`` with stderr on a pseudo-terminal: its exit status and what it wrote
    there (stdout and stdin elsewhere)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=follower,
                               stdin=subprocess.DEVNULL)  # fmt: skip
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 1 << 16)
                except OSError:  # the terminal closed: the process ended
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        return process.wait(timeout=max(1.0, deadline - time.monotonic())), seen
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_progress_is_shown_on_a_terminal_only(tmp_path: Path) -> None:
    """D-CLI-23: on a terminal, a progress line kept up to date (carriage return, no
    new line per update) while the import runs; in a pipe or a file, none."""
    path, _ = _mixed(tmp_path)
    many = tmp_path / "many.jsonl"
    many.write_bytes(path.read_bytes() + b"[]\n" * 400_000)
    args = [*COMMAND, "ledger", "import", str(many), "--store", str(tmp_path / "l.db"), "--json"]
    code, seen = _through_a_terminal(args, 300)
    assert code == 1
    assert b"\r\x1b[K" in seen and b" records/s)" in seen
    assert b"Traceback" not in seen
    piped = subprocess.run(args, capture_output=True, timeout=300, check=False)
    assert piped.returncode == 1
    assert b"\r" not in piped.stderr and b"records/s" not in piped.stderr


def test_a_store_that_fails_mid_import_ends_with_the_summary_then_its_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """D-CLI-23: the store failing on a later batch (PostgreSQL gone, say): what was
    stored is summed up, then the store's one line, exit 2, no traceback."""
    from a2a_interview.cli import ledger_import
    from a2a_interview.ledger import StoreUnavailable

    path, _ = _mixed(tmp_path)
    monkeypatch.setattr(ledger_import, "_BATCH", 2)
    calls = []
    real = Ledger.put_many

    def put_many(self: Ledger, bodies: list[bytes]) -> list[object]:
        calls.append(len(bodies))
        if len(calls) == 2:
            raise StoreUnavailable("the store cannot be opened or reached")
        return real(self, bodies)  # type: ignore[return-value]

    monkeypatch.setattr(Ledger, "put_many", put_many)
    code = main(["ledger", "import", str(path), "--store", str(tmp_path / "l.db")])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == SUMMARY.format(1, 1, 0, 1) + "\n"
    assert "ledger import stopped (an error, said next) after " in err
    assert err.rstrip().endswith("the store cannot be opened or reached [store_unavailable]")
    assert "Traceback" not in err
