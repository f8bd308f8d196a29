"""Files named on the command line: bounded reads and atomic, refusing writes.

Every command reads its input files through :func:`read_input` and writes its outputs
through :func:`write_atomic` or :func:`open_atomic` (D-CLI-10 to D-CLI-12):

- A read is bounded as a network body is (PROFILE §1: 1 MiB by default): the file is
  read in chunks and abandoned as soon as it passes the bound, so ``/dev/zero`` or a
  3 GiB sparse file ends with one line and exit 2, never with the whole file in memory.
  A regular file's size is checked before its first byte is read.
- A write goes to a temporary file in the target's own folder, flushed and fsynced,
  then renamed over the target, so a reader sees the old file or the new one, never a
  part. The target must be a regular file or not exist: a symbolic link, a directory,
  a device node, a FIFO or a socket is refused and left as it was (a rename would
  replace the link or the node with a regular file). With ``exclusive`` (a secret key),
  an existing file is never replaced: the new file is linked into place, which fails if
  anything is there.

Every refusal is a :class:`~a2a_interview.cli.UsageError` naming the file and the rule,
never a traceback. The paths in messages are the user's own arguments.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from ..spec import MAX_DOCUMENT_BYTES
from .usage import UsageError

__all__ = ["MAX_INPUT_BYTES", "check_output", "open_atomic", "read_input", "write_atomic"]

MAX_INPUT_BYTES: Final = MAX_DOCUMENT_BYTES  # the network's bound (PROFILE §1)
_CHUNK: Final = 64 * 1024


def _size_words(limit: int) -> str:
    if limit % (1 << 20) == 0:
        return f"{limit >> 20} MiB"
    return f"{limit} bytes"


def _read_bounded(handle: IO[bytes], limit: int, what: str, path: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = handle.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise UsageError(f"{what} {path!r} is larger than {_size_words(limit)}")
        chunks.append(chunk)


def read_input(path: str, what: str, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a file named on the command line (``-`` is stdin), at most
    ``max_bytes``.

    Raises ``UsageError`` naming ``what`` when the file cannot be opened or read (missing,
    a directory, no permission) or holds more than ``max_bytes``. A pipe or a device
    may be read (``<(...)`` names one); it is read only up to the bound.
    """
    if path == "-":
        return _read_bounded(sys.stdin.buffer, max_bytes, what, path)
    try:
        with open(path, "rb", buffering=0) as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise UsageError(f"cannot read {what} {path!r}: it is a directory")
            if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
                raise UsageError(f"{what} {path!r} is larger than {_size_words(max_bytes)}")
            return _read_bounded(handle, max_bytes, what, path)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path!r}: {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _check_target(target: Path, option: str, *, exclusive: bool) -> None:
    """Refuse a target that is not a regular file (or absent); with ``exclusive``,
    refuse one that exists at all."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"{option} {str(target)!r}: cannot write ({_reason(exc)})") from None
    if stat.S_ISLNK(info.st_mode):
        kind = "a symbolic link"
    elif stat.S_ISDIR(info.st_mode):
        kind = "a directory"
    elif not stat.S_ISREG(info.st_mode):
        kind = "not a regular file (a device, a FIFO or a socket)"
    elif exclusive:
        raise UsageError(f"{option} {str(target)!r} already exists; pass --force to replace it")
    else:
        return
    raise UsageError(f"{option} {str(target)!r} is {kind}; nothing was written")


def check_output(path: str | os.PathLike[str], option: str, *, exclusive: bool = False) -> None:
    """Refuse an output target early, before a long run (the rules of
    :func:`open_atomic`, which checks again when it writes). Raises ``UsageError``."""
    _check_target(Path(path), option, exclusive=exclusive)


def _link_new(tmp: str, target: Path, mode: int) -> None:
    """Put ``tmp``'s contents at ``target`` only if nothing is there. Raises
    ``FileExistsError`` otherwise."""
    try:
        os.link(tmp, target)  # atomic, and fails if anything is there: never replaces
        return
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    # A file system without hard links: still exclusive, though not atomic for readers.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as out, open(tmp, "rb") as source:
        out.write(source.read())
        out.flush()
        os.fsync(out.fileno())


@contextlib.contextmanager
def open_atomic(
    path: str | os.PathLike[str],
    *,
    option: str = "--out",
    mode: int = 0o644,
    exclusive: bool = False,
) -> Iterator[IO[bytes]]:
    """A binary file to write ``path``'s new contents into; they replace ``path`` when
    the block ends without an exception, else nothing changes.

    ``option`` names the flag in messages. ``mode`` is the new file's permission bits.
    ``exclusive``: never replace an existing file (a secret key without ``--force``).
    Raises ``UsageError`` for a target that is a symbolic link, a directory, a device,
    a FIFO or a socket (checked before and again at the end), for an existing file with
    ``exclusive``, and when the folder cannot be written.
    """
    target = Path(path)
    _check_target(target, option, exclusive=exclusive)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"{option} {str(target)!r}: cannot write ({_reason(exc)})") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        # Checked again: the block may have run long (verify-many); a target that turned
        # into a link or a node meanwhile is still never replaced.
        _check_target(target, option, exclusive=exclusive)
        if exclusive:
            try:
                _link_new(tmp, target, mode)
            except FileExistsError:
                raise UsageError(
                    f"{option} {str(target)!r} already exists; pass --force to replace it"
                ) from None
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if exc.errno == errno.ENOSPC:
            raise UsageError(f"{option} {str(target)!r}: no space left on the device") from None
        raise UsageError(f"{option} {str(target)!r}: cannot write ({_reason(exc)})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    option: str = "--out",
    mode: int = 0o644,
    exclusive: bool = False,
) -> None:
    """Write ``data`` to ``path`` atomically (:func:`open_atomic`, same rules and
    errors)."""
    with open_atomic(path, option=option, mode=mode, exclusive=exclusive) as handle:
        handle.write(data)
