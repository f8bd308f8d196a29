"""``ledger import``: result records from files into the store, in one pass (D-CLI-23).

Memory stays flat in the number of lines: the files are read a line at a time, the
records go to the store in batches (one transaction each, ``_BATCH`` records or
``_BATCH_BYTES`` bytes), what was kept and refused is counted, and each refusal is told
as it is met (stderr; with ``--json``, the report's ``refused`` list is kept in a
temporary file until the end, its ``kept`` list written as it goes). On a terminal a
progress line is kept up to date on stderr. The summary comes even when the import
stops short: Ctrl-C (exit 130) or memory running out (exit 1), then naming the line it
stopped at; what was committed before stays stored.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from ..spec import MAX_DOCUMENT_BYTES
from .options import open_store
from .usage import EXIT_FAILED, EXIT_OK, UsageError

if TYPE_CHECKING:
    from ..ledger import Ledger

# Records per transaction, and the bytes a batch may hold before it is written.
_BATCH: Final = 500
_BATCH_BYTES: Final = 16 << 20
_CHUNK: Final = 1 << 16
_PROGRESS_EVERY: Final = 0.5  # seconds between progress lines on a terminal
EXIT_INTERRUPTED: Final = 130


# ---------------------------------------------------------------------------------------
# Reading import files


def records_of(path: str) -> Iterator[tuple[int, bytes | None]]:
    """The records of one file as (line, bytes): the whole file when it is one JSON
    document, else one per non-blank line (JSON Lines). A line over the 1 MiB bound
    yields ``None`` (refused without being read into memory)."""
    handle: IO[bytes]
    if path == "-":
        handle = sys.stdin.buffer
    else:
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UsageError(f"cannot read {path!r}: {exc.strerror}") from None
    try:
        head = handle.read(MAX_DOCUMENT_BYTES + 1)
        # The first line that is not blank: JSON Lines may begin with blank lines.
        first_line = head.lstrip().split(b"\n", 1)[0].strip()
        whole = len(head) <= MAX_DOCUMENT_BYTES and (
            b"\n" not in head.strip() or not first_line.endswith(b"}")
        )
        if whole:  # one document (pretty-printed, or a single line)
            if head.strip():
                yield 1, head
            return
        if not first_line.endswith(b"}"):  # one document, over the bound
            yield 1, None
            return
        yield from _lines(head, handle)
    except OSError as exc:
        raise UsageError(f"cannot read {path!r}: {exc.strerror}") from None
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def _lines(head: bytes, handle: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    # A window of the file and where its next line starts: each line is cut out once
    # (slicing the rest of the window after every line cost O(window) a line).
    number = 0
    buffer, start = head, 0
    while True:
        cut = buffer.find(b"\n", start)
        if cut < 0:
            rest = buffer[start:]
            while cut < 0 and len(rest) <= MAX_DOCUMENT_BYTES:
                more = handle.read(_CHUNK)
                if not more:
                    break
                seen = len(rest)
                rest += more
                cut = rest.find(b"\n", seen)
            buffer, start = rest, 0
            if cut < 0 and len(buffer) > MAX_DOCUMENT_BYTES:
                number += 1
                yield number, None
                while cut < 0:  # skip the rest of the oversized line
                    buffer = handle.read(_CHUNK)
                    if not buffer:
                        return
                    cut = buffer.find(b"\n")
                start = cut + 1
                continue
            if cut < 0:  # the last line, without a line break
                number += 1
                if buffer.strip():
                    yield number, buffer
                return
        line = buffer[start:cut]
        start = cut + 1
        number += 1
        if line.strip():
            yield number, line


# ---------------------------------------------------------------------------------------
# The command


@dataclass
class _Tally:
    kept: int = 0
    new: int = 0
    refused: int = 0
    lines: int = 0  # the line of the last record told (kept or refused), in its file
    file: str = ""


class _Report:
    """Where kept and refused records are told: counts always; with ``--json`` the
    report's two lists (``kept`` written to stdout as it goes, ``refused`` held in a
    temporary file), else each refusal as a line on stderr."""

    def __init__(self, as_json: bool, spool: IO[str] | None) -> None:
        self.tally = _Tally()
        self._json = as_json
        self._spool = spool
        self._first_kept = True
        self._first_refused = True
        self._progress = sys.stderr.isatty()
        self._began = self._shown = time.monotonic()
        if as_json:
            sys.stdout.write('{"kept": [')

    def kept(self, where: dict[str, Any], card_url: str, record_id: int, new: bool) -> None:
        self.tally.file, self.tally.lines = where["file"], where["line"]
        self.tally.kept += 1
        self.tally.new += new
        if self._json:
            item = where | {"id": record_id, "new": new, "card_url": card_url}
            sys.stdout.write(("\n  " if self._first_kept else ",\n  ") + _dumps(item))
            self._first_kept = False

    def refused(self, where: dict[str, Any], code: str, reason: str) -> None:
        self.tally.file, self.tally.lines = where["file"], where["line"]
        self.tally.refused += 1
        if self._json:
            assert self._spool is not None
            item = where | {"code": code, "reason": reason}
            self._spool.write(("\n  " if self._first_refused else ",\n  ") + _dumps(item))
            self._first_refused = False
        else:
            self._clear()
            print(f"{where['file']}:{where['line']}: refused: {reason} [{code}]",
                  file=sys.stderr)  # fmt: skip

    def read(self, path: str, number: int) -> None:
        if self._progress and time.monotonic() - self._shown >= _PROGRESS_EVERY:
            self._shown = time.monotonic()
            t = self.tally
            rate = (t.kept + t.refused) / max(self._shown - self._began, 1e-9)
            sys.stderr.write(f"\r\x1b[K{_short(path)}:{number}: kept {t.kept}, refused "
                             f"{t.refused} ({rate:,.0f} records/s)")  # fmt: skip
            sys.stderr.flush()

    def _clear(self) -> None:
        if self._progress and self._shown != self._began:
            sys.stderr.write("\r\x1b[K")

    def finish(self, stopped: str | None) -> None:
        """The summary (and, with ``--json``, the end of the report); ``stopped``: why
        the import ended before the end of its files."""
        self._clear()
        t = self.tally
        if self._json:
            sys.stdout.write('\n], "refused": [')
            if self._spool is not None:
                self._spool.seek(0)
                while chunk := self._spool.read(_CHUNK):
                    sys.stdout.write(chunk)
            counts = {"kept": t.kept, "new": t.new, "refused": t.refused}
            end = {"counts": counts} | ({"stopped": stopped} if stopped else {})
            sys.stdout.write("\n], " + _dumps(end)[1:] + "\n")
        else:
            if stopped:
                last = f"after {t.file}:{t.lines}" if t.file else "before the first record"
                print(f"a2a-interview: ledger import stopped ({stopped}) {last}; the "
                      "records told are all there is", file=sys.stderr)  # fmt: skip
            print(f"kept {t.kept} record(s) ({t.new} new, {t.kept - t.new} already "
                  f"present); refused {t.refused}")  # fmt: skip
        sys.stdout.flush()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _short(path: str) -> str:
    return path if len(path) <= 40 else "…" + path[-39:]


def run_import(args: argparse.Namespace) -> int:
    """``ledger import``: exit 0 all kept, 1 some refused (or stopped for want of
    memory), 130 stopped by Ctrl-C; the summary in every case."""
    from ..ledger import LedgerError

    for path in args.files:
        if path != "-" and not Path(path).is_file():
            raise UsageError(f"cannot read {path!r}: not a file")
    with contextlib.ExitStack() as stack:
        spool = None
        if args.json:
            spool = stack.enter_context(
                tempfile.TemporaryFile("w+", encoding="utf-8", prefix="a2a-import-")
            )
        ledger = stack.enter_context(open_store(args.store))
        report = _Report(args.json, spool)
        stopped: str | None = None
        code = EXIT_OK
        try:
            _import_files(ledger, args.files, report)
        except KeyboardInterrupt:
            stopped, code = "Ctrl-C", EXIT_INTERRUPTED
        except MemoryError:
            stopped, code = "out of memory", EXIT_FAILED
        except (UsageError, LedgerError):  # a file or the store failed: said by main
            report.finish("an error, said next")
            raise
        report.finish(stopped)
    if code != EXIT_OK:
        return code
    return EXIT_FAILED if report.tally.refused else EXIT_OK


def _import_files(ledger: Ledger, files: list[str], report: _Report) -> None:
    from ..ledger import RecordRefused

    batch: list[tuple[dict[str, Any], bytes]] = []
    held = 0

    def flush() -> None:
        nonlocal held
        if not batch:
            return
        # One transaction per batch: a commit (an fsync) per record would cost the most.
        results = ledger.put_many([body for _, body in batch])
        for (where, _), result in zip(batch, results, strict=True):
            if isinstance(result, RecordRefused):
                report.refused(where, result.code, result.reason)
            else:
                stored, new = result
                report.kept(where, stored.card_url, stored.id, new)
        batch.clear()
        held = 0

    try:
        for path in files:
            for number, body in records_of(path):
                report.read(path, number)
                where = {"file": path, "line": number}
                if body is None:
                    flush()  # keep the report in file order
                    report.refused(where, "not_a_record", "not strict I-JSON (too_large)")
                    continue
                batch.append((where, body))
                held += len(body)
                if len(batch) >= _BATCH or held >= _BATCH_BYTES:
                    flush()
        flush()
    finally:
        batch.clear()  # a stop in the middle: what the batch held is not stored
