"""Files and outputs across the CLI (D-CLI-10 to D-CLI-12): every input file is read
through the network's 1 MiB bound, never whole first; every output is written
atomically, only to a regular file, and never over an existing secret key without
``--force``. Real files, real FIFOs and symbolic links, ``main(argv)`` and, for the
memory bound, a real subprocess under an address-space limit."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from a2a_interview import nkeys, reference
from a2a_interview.cli import main
from a2a_interview.cli.files import open_atomic, read_input, write_atomic
from a2a_interview.cli.usage import UsageError
from needs import need

GIB = 1 << 30
MIB = 1 << 20
# Nothing listens here: a command reaching the network would end 3, not 2.
NOWHERE = "https://127.0.0.1:9"
ENTRY = "from a2a_interview.cli import entry; entry()"


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """Small valid inputs for the commands that take more than one file."""
    from a2a_interview.card import generate_key, private_jwk

    card = tmp_path / "card.json"
    card.write_bytes(json.dumps(reference.unsigned_card()).encode())
    key = tmp_path / "card.jwk"
    key.write_text(json.dumps(private_jwk(generate_key("EdDSA"), "k1")))
    doc = tmp_path / "doc.json"
    doc.write_bytes(reference.read_bytes(reference.PROPOSAL_FILES[0]))
    seed = tmp_path / "provider.seed"
    seed.write_text(reference.PROPOSAL_SEED + "\n")
    return {"card": card, "key": key, "doc": doc, "seed": seed}


# Every command that reads a file, with BIG where the oversized file goes.
READERS: list[list[str]] = [
    ["card", "sign", "BIG", "--key", "{key}", "--kid", "k1"],
    ["card", "sign", "{card}", "--key", "BIG", "--kid", "k1"],
    ["card", "verify", "BIG"],
    ["card", "verify", "{card}", "--jwks", "BIG"],
    ["proposal", "sign", "BIG", "--seed", "{seed}"],
    ["proposal", "sign", "{doc}", "--seed", "BIG"],
    ["proposal", "digest", "BIG"],
    ["proposal", "verify", "BIG"],
    ["answer", "BIG", "identity"],
    ["answer", "{card}", "identity", "--proposal", "https://a.example/t.json=BIG"],
    ["verify", NOWHERE, "--jwks", "BIG"],
    ["verify", NOWHERE, "--runner-key", "BIG"],
    ["verify-many", "BIG"],
    ["record", "show", "BIG"],
    ["record", "verify", "BIG"],
]


def _argv(template: list[str], big: str, inputs: dict[str, Path]) -> list[str]:
    names = {k: str(v) for k, v in inputs.items()}
    return [a.replace("BIG", big).format(**names) for a in template]


def _id(template: list[str]) -> str:
    where = next(i for i, a in enumerate(template) if "BIG" in a)
    return "-".join(template[:2]) + f"-{where}"


def _one_clear_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    path = tmp_path / "sparse.json"
    with path.open("wb") as handle:
        handle.truncate(3 * GIB)  # sparse: no disk is used
    return path


@pytest.mark.parametrize("template", READERS, ids=_id)
def test_a_3_gib_sparse_file_is_refused_in_one_line(
    template: list[str],
    sparse: Path,
    inputs: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D-CLI-10: a 3 GiB file took 3.1 GB of memory before the 1 MiB check.
    assert main(_argv(template, str(sparse), inputs)) == 2
    line = _one_clear_line(capsys.readouterr().err)
    assert "larger than 1 MiB" in line


@pytest.mark.parametrize("template", READERS, ids=_id)
def test_dev_zero_is_refused_in_one_line(
    template: list[str], inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # D-CLI-10: /dev/zero under a memory limit: MemoryError, traceback, exit 1.
    assert main(_argv(template, "/dev/zero", inputs)) == 2
    line = _one_clear_line(capsys.readouterr().err)
    assert "larger than" in line


def _limited() -> None:
    limit = 512 * MIB  # far below a 3 GiB file, well above what the CLI needs
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize("source", ["/dev/zero", "sparse"])
def test_memory_stays_bounded_in_a_real_process(source: str, sparse: Path) -> None:
    # D-CLI-10: the bound holds in a process that cannot take more than 512 MiB.
    path = str(sparse) if source == "sparse" else source
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "card", "verify", path],
        preexec_fn=_limited,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "larger than 1 MiB" in _one_clear_line(done.stderr)


def test_stdin_is_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    with open("/dev/zero", "rb") as zero:
        monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": zero})())
        with pytest.raises(UsageError, match="larger than 1 MiB"):
            read_input("-", "card")


def test_a_file_at_the_bound_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * MIB)
    assert len(read_input(str(path), "card")) == MIB
    path.write_bytes(b"x" * (MIB + 1))
    with pytest.raises(UsageError, match="larger than 1 MiB"):
        read_input(str(path), "card")


def test_a_fifo_is_read_up_to_the_bound(tmp_path: Path) -> None:
    # `<(...)` names a pipe: it may be read, but only so far.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(fifo)!r}, 'wb').write(b'[1]')"])
    try:
        assert read_input(str(fifo), "card") == b"[1]"
    finally:
        writer.wait(timeout=30)


@pytest.mark.parametrize("path", ["missing", "."])
def test_unreadable_inputs_are_usage_errors(path: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read card"):
        read_input(str(tmp_path / path), "card")


# --- outputs ------------------------------------------------------------------------


def _writers(tmp: Path, inputs: dict[str, Path]) -> list[list[str]]:
    """Every command that writes a file, OUT where the target goes. The verify commands
    must refuse the target before reaching the network (NOWHERE)."""
    urls = tmp / "urls.txt"
    urls.write_text(NOWHERE + "\n")
    return [
        ["keygen", "--out", "OUT", "--force"],
        ["keygen", "--alg", "EdDSA", "--out", "OUT", "--force"],
        ["card", "sign", str(inputs["card"]), "--key", str(inputs["key"]), "--kid", "k1",
         "--out", "OUT"],
        ["proposal", "sign", str(inputs["doc"]), "--seed", str(inputs["seed"]), "--out", "OUT"],
        ["verify", NOWHERE, "--record", "OUT"],
        ["verify", NOWHERE, "--junit", "OUT"],
        ["verify-many", str(urls), "--out", "OUT", "--no-progress"],
    ]  # fmt: skip


def _targets(tmp: Path) -> dict[str, tuple[Path, Any]]:
    """Targets that are not regular files, each with a check that it is unchanged."""
    victim = tmp / "victim.txt"
    victim.write_text("keep me")
    link = tmp / "link"
    link.symlink_to(victim)
    dangling = tmp / "dangling"
    dangling.symlink_to(tmp / "nothing-here")
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    folder = tmp / "folder"
    folder.mkdir()
    sock_path = tmp / "sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock_path))
    listener.close()  # the socket file stays
    # A device node of our own (a copy of /dev/null's numbers), never the system's: a
    # broken writer would replace it. Creating one needs CAP_MKNOD; else the socket and
    # the FIFO stand for it.
    device = tmp / "null-device"
    with contextlib.suppress(OSError):
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    return {
        "symlink": (link, lambda: link.is_symlink() and victim.read_text() == "keep me"),
        "dangling_symlink": (
            dangling, lambda: dangling.is_symlink() and not (tmp / "nothing-here").exists()
        ),
        "fifo": (fifo, lambda: stat.S_ISFIFO(fifo.lstat().st_mode)),
        "directory": (folder, lambda: folder.is_dir() and not any(folder.iterdir())),
        "socket": (sock_path, lambda: stat.S_ISSOCK(sock_path.lstat().st_mode)),
        "device": (device, lambda: stat.S_ISCHR(device.lstat().st_mode)),
    }  # fmt: skip


@pytest.mark.parametrize(
    "kind", ["symlink", "dangling_symlink", "fifo", "directory", "socket", "device"]
)
@pytest.mark.parametrize("writer", range(7))
def test_outputs_go_only_to_regular_files(
    kind: str,
    writer: int,
    tmp_path: Path,
    inputs: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D-CLI-11: --out replaced device nodes and symlinks with regular files.
    target, unchanged = _targets(tmp_path)[kind]
    if kind == "device":
        need(target.exists(), "a device node (mknod needs CAP_MKNOD)", "run as root, as CI does")
    argv = [str(target) if a == "OUT" else a for a in _writers(tmp_path, inputs)[writer]]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(argv) == 2
    line = _one_clear_line(capsys.readouterr().err)
    assert "nothing was written" in line
    assert unchanged()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary file left


def test_keygen_never_overwrites_a_secret_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # D-CLI-12: `keygen --out` silently overwrote an existing secret key.
    for alg in ("nkey", "EdDSA"):
        secret = tmp_path / f"{alg}.secret"
        secret.write_text("the old secret")
        assert main(["keygen", "--alg", alg, "--out", str(secret)]) == 2
        assert "--force" in _one_clear_line(capsys.readouterr().err)
        assert secret.read_text() == "the old secret"
        assert main(["keygen", "--alg", alg, "--out", str(secret), "--force"]) == 0
        assert secret.read_text() != "the old secret"
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    capsys.readouterr()


def test_keygen_writes_a_new_secret_0600(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "new.seed"
    assert main(["keygen", "--out", str(secret)]) == 0
    public = capsys.readouterr().out.strip()
    assert nkeys.public_of(nkeys.private_key(secret.read_text().strip())) == public
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["new.seed"]


def test_an_existing_regular_output_is_replaced_atomically(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    inode = target.stat().st_ino
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_ino != inode  # renamed over, not written in place
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), open_atomic(target) as handle:
        handle.write(b"half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_target_turned_into_a_link_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    with pytest.raises(UsageError, match="symbolic link"), open_atomic(target) as handle:
        handle.write(b"new")
        target.symlink_to(victim)
    assert target.is_symlink() and victim.read_text() == "keep me"


def test_an_exclusive_write_loses_to_a_file_created_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    with (
        pytest.raises(UsageError, match="already exists"),
        open_atomic(target, exclusive=True) as handle,
    ):
        handle.write(b"new")
        target.write_text("theirs")
    assert target.read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]


def test_an_exclusive_write_without_hard_links_is_still_exclusive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some file systems (vfat, some FUSE mounts) refuse link(2): O_EXCL takes its place.
    def no_links(*_: Any) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    target = tmp_path / "secret"
    write_atomic(target, b"new", mode=0o600, exclusive=True)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    with pytest.raises(UsageError, match="already exists"):
        write_atomic(target, b"newer", exclusive=True)
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]
