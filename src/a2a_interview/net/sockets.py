"""Listening sockets, as every server of the package binds them (the proxy, the demo
agent, the ledger's page): one helper for the socket and one for the origin it serves.
"""

from __future__ import annotations

import socket

__all__ = ["bind", "socket_origin"]


def bind(host: str = "127.0.0.1", port: int = 0, *, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one). Raises ``OSError``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only when
    # the listening socket says TCP (with proto 0, Nagle and delayed ACKs add ~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def socket_origin(sock: socket.socket) -> str:
    """``http://host:port`` of a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
