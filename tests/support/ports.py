"""Loopback ports and sockets for tests: free ones to listen on, closed ones to be
refused by."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    """A port nothing listens on now (bound, then freed): for a child process that binds
    it itself; another program may take it first (D-TEST-27), so callers retry."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports, each held bound until all are chosen (so the system
    cannot hand out one twice); like :func:`free_port`, another program may take one
    before the child binds it (D-TEST-27)."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def free_socket() -> socket.socket:
    """A listening loopback socket on a free port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on, for as long as the block runs: bound, never
    listening, so a connection is refused and no other program can take the port (a
    port freed and then named could be listening again by the time it is used)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])
