"""The proxy's own network layer under httpcore (D-PROXY-40): TLS, timeouts, refusals,
and the read-ahead bound, against real loopback servers (asyncio's, with a certificate
made here)."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpcore
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from a2a_interview.server.proxy.connections import BoundedBackend, BoundedStream
from support.ports import closed_port

pytestmark = pytest.mark.anyio

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@asynccontextmanager
async def server(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    """An asyncio server on a free loopback port running ``handler``; yields the port."""
    running = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)
    try:
        yield running.sockets[0].getsockname()[1]
    finally:
        running.close()  # no wait_closed: a handler may still be sleeping


async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    await writer.drain()
    writer.close()


async def test_an_https_upstream_is_read_through_tls(tmp_path: Path) -> None:
    # httpcore calls start_tls on the plain connection: the handshake, the server's
    # certificate checked against the client's trust, then the bytes as over TCP.
    cert, key = certificate(tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    async with server(hello, served) as port:
        async with httpcore.AsyncConnectionPool(
            ssl_context=trusting, network_backend=BoundedBackend()
        ) as pool:
            response = await pool.request("GET", f"https://127.0.0.1:{port}/")
        assert (response.status, response.content) == (200, b"hello")
        # A certificate the client does not trust is a connect error, not a response.
        async with httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(), network_backend=BoundedBackend()
        ) as pool:
            with pytest.raises(httpcore.ConnectError):
                await pool.request("GET", f"https://127.0.0.1:{port}/")


async def test_a_refused_connection_and_a_silent_upstream_are_transport_errors() -> None:
    backend = BoundedBackend()
    with closed_port() as port, pytest.raises(httpcore.ConnectError):
        await backend.connect_tcp("127.0.0.1", port, timeout=5)

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        await asyncio.sleep(5)
        writer.close()

    async with server(silent) as port:
        stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
        try:
            await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
            with pytest.raises(httpcore.ReadTimeout):
                await stream.read(65536, timeout=0.2)
        finally:
            await stream.aclose()
        with pytest.raises(httpcore.WriteError):
            await stream.write(b"more", timeout=5)


async def test_no_more_than_the_read_ahead_is_read_before_the_reader_takes_it() -> None:
    # D-PROXY-40: the socket is read only while the buffer has room. 4 MiB sent, none
    # taken: the connection holds 4 KiB (the kernel the rest); then all of it arrives,
    # in order, as it is taken.
    size = 4 << 20
    data = bytes(range(256)) * (size // 256)

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        await writer.drain()
        writer.close()

    async with server(flood) as port:
        stream = await BoundedBackend(read_ahead=4096).connect_tcp("127.0.0.1", port, timeout=5)
        assert isinstance(stream, BoundedStream)
        try:
            protocol = stream._protocol
            for _ in range(1000):  # until the buffer is full and reading paused (<= 10 s)
                if protocol.paused:
                    break
                await asyncio.sleep(0.01)
            assert protocol.paused
            await asyncio.sleep(0.1)  # a paused socket is not read, however long
            assert protocol.end - protocol.start <= 4096
            got = bytearray()
            while chunk := await stream.read(65536, timeout=10):
                assert len(chunk) <= 4096
                got += chunk
        finally:
            await stream.aclose()
    assert bytes(got) == data
    assert len(protocol.buffer) == 0 and protocol.transport is None  # released on close
