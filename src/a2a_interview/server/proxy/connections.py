"""The proxy's connections to upstream: read no further ahead than ``READ_AHEAD`` bytes.

httpx reads through httpcore, whose default network layer (anyio) lets the event loop
read a socket until a task comes to take the bytes: under uvloop that is megabytes a
read, kept for a client that takes a byte a second, and kept after it leaves (the
buffers sit in reference cycles until a full garbage collection). A proxy of 256
streams held 842 MiB so (D-PROXY-40).

:class:`BoundedBackend` is httpcore's network layer on plain asyncio transports: each
connection's protocol owns one buffer of ``READ_AHEAD`` bytes, and the socket is read
only while that buffer has room (``pause_reading`` as soon as it is full, ``resume``
when the reader took bytes). Upstream is thus read exactly as fast as the pass-through
hands bytes on, which is as fast as the client takes them (uvicorn's ``send`` waits
while the client's transport is over its high-water mark). Closing a connection drops
its buffer and every reference between transport, protocol and stream, so nothing is
left for the garbage collector. :func:`upstream_transport` is the httpx transport on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterable
from typing import Any, Final, cast

import httpcore
import httpx

READ_AHEAD: Final = 64 * 1024  # the bytes of one upstream connection read and not yet taken


class _Reader(asyncio.BufferedProtocol):
    """One upstream connection's bytes: a fixed buffer the loop reads into, paused
    when full; write flow control for requests with large bodies."""

    def __init__(self, size: int) -> None:
        self.buffer = bytearray(size)
        self.start = 0  # bytes before `start` were taken
        self.end = 0  # bytes up to `end` were read
        self.transport: asyncio.Transport | None = None
        self.paused = False
        self.eof = False
        self.error: BaseException | None = None
        self.readable: asyncio.Event = asyncio.Event()
        self.writable: asyncio.Event = asyncio.Event()
        self.writable.set()

    # -- asyncio.BufferedProtocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def get_buffer(self, sizehint: int) -> memoryview:
        if self.start and self.end == len(self.buffer):
            self._compact()
        return memoryview(self.buffer)[self.end :]

    def buffer_updated(self, nbytes: int) -> None:
        self.end += nbytes
        self.readable.set()
        if self.end == len(self.buffer) and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self.eof = True
        self.readable.set()
        return False  # close: an HTTP/1.1 client has nothing more to say either

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self.transport = None  # no cycle transport <-> protocol outlives the connection
        self.readable.set()
        self.writable.set()

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    # -- for the stream

    def _compact(self) -> None:
        held = self.end - self.start
        self.buffer[:held] = self.buffer[self.start : self.end]
        self.start, self.end = 0, held

    def take(self, max_bytes: int) -> bytes:
        n = min(max_bytes, self.end - self.start)
        data = bytes(self.buffer[self.start : self.start + n])
        self.start += n
        if self.start == self.end:
            self.start = self.end = 0
            self.readable.clear()
        if self.paused and self.transport is not None:
            self._compact()
            self.paused = False
            self.transport.resume_reading()
        return data

    def release(self) -> None:
        self.buffer = bytearray()
        self.start = self.end = 0
        self.transport = None


class BoundedStream(httpcore.AsyncNetworkStream):
    """One upstream connection (module docstring)."""

    def __init__(self, transport: asyncio.Transport, protocol: _Reader) -> None:
        self._transport: asyncio.Transport | None = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        try:
            async with asyncio.timeout(timeout):
                while protocol.start == protocol.end and not protocol.eof:
                    await protocol.readable.wait()
        except TimeoutError:
            raise httpcore.ReadTimeout("no bytes from upstream in time") from None
        if protocol.start == protocol.end:
            if protocol.error is not None:
                raise httpcore.ReadError(type(protocol.error).__name__)
            return b""
        return protocol.take(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        transport, protocol = self._transport, self._protocol
        if transport is None or transport.is_closing() or protocol.error is not None:
            raise httpcore.WriteError("the upstream connection is closed")
        transport.write(buffer)
        try:
            async with asyncio.timeout(timeout):
                await protocol.writable.wait()
        except TimeoutError:
            raise httpcore.WriteTimeout("upstream did not take the request in time") from None
        if protocol.error is not None:
            raise httpcore.WriteError(type(protocol.error).__name__)

    async def aclose(self) -> None:
        transport, self._transport = self._transport, None
        if transport is not None:
            # Nothing worth flushing is ever left: a response broke off, or a request did.
            transport.abort()
        self._protocol.release()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._require(), self._protocol, ssl_context,
                    server_hostname=server_hostname,
                )  # fmt: skip
        except TimeoutError:
            await self.aclose()
            raise httpcore.ConnectTimeout("no TLS handshake in time") from None
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(type(exc).__name__) from None
        if transport is None:  # pragma: no cover - only when the loop has no TLS at all
            await self.aclose()
            raise httpcore.ConnectError("TLS is not available")
        self._protocol.transport = transport
        return BoundedStream(transport, self._protocol)

    def _require(self) -> asyncio.Transport:
        if self._transport is None:
            raise httpcore.ConnectError("the upstream connection is closed")
        return self._transport

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if transport is None:
            return None
        if info == "is_readable":
            # A pooled idle connection with bytes or an end waiting was closed by upstream.
            return self._protocol.eof or self._protocol.end > self._protocol.start
        name = {"ssl_object": "ssl_object", "client_addr": "sockname",
                "server_addr": "peername", "socket": "socket"}.get(info)  # fmt: skip
        return None if name is None else transport.get_extra_info(name)


class BoundedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network layer with :class:`BoundedStream` connections."""

    def __init__(self, read_ahead: int = READ_AHEAD) -> None:
        self.read_ahead = read_ahead

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    lambda: _Reader(self.read_ahead), host, port, local_addr=local
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout("no connection to upstream in time") from None
        except OSError as exc:
            raise httpcore.ConnectError(exc.strerror or type(exc).__name__) from None
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            with contextlib.suppress(OSError):
                sock.setsockopt(*option)
        return BoundedStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:  # pragma: no cover - the proxy speaks TCP only
        raise httpcore.ConnectError("the proxy connects to upstream over TCP only")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def upstream_transport(
    limits: httpx.Limits, read_ahead: int = READ_AHEAD
) -> httpx.AsyncHTTPTransport:
    """httpx's own transport (certificate checks, error mapping) on
    :class:`BoundedBackend`: its connection pool replaced by one with the same limits."""
    transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=False)
    transport._pool = httpcore.AsyncConnectionPool(  # httpx has no network_backend option
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=BoundedBackend(read_ahead),
    )
    return transport
