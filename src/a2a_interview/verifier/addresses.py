"""Which addresses the interviewer connects to: public ones only (docs/style.md,
"Security code").

:func:`address_kind` judges one address (an IPv6 address that embeds an IPv4 one judged
by it too); :class:`AddressPolicy` is what one interviewer allows (loopback when the
target the user named is itself loopback, everything with ``allow_private``);
:class:`GuardedBackend` is httpcore's network backend under that policy: a host name is
resolved once, every address it resolves to judged, and the connection made to the
judged address, so DNS rebinding cannot slip past. A refused address is never contacted.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio
import httpcore

from ..net.failures import AddressRefused

__all__ = [
    "AddressKind",
    "AddressPolicy",
    "GuardedBackend",
    "Resolver",
    "address_kind",
    "system_resolver",
]

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``resolve(host, port) -> addresses``: the name lookup seam (tests map names)."""


AddressKind = Literal["public", "loopback", "private"]

# Not public: IANA's special-purpose registries (RFC 6890 and successors), the ranges a
# card could use to reach a platform's own network or its cloud's metadata service.
_NOT_PUBLIC_V4: Final = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
))  # fmt: skip
_NOT_PUBLIC_V6: Final = tuple(ipaddress.IPv6Network(n) for n in (
    "::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
    "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
))  # fmt: skip
# The IPv6 forms that carry an IPv4 address in their last 32 bits (D-NET-5):
# IPv4-mapped and IPv4-translated (RFC 4291, RFC 2765), NAT64 (RFC 6052), the deprecated
# IPv4-compatible ::a.b.c.d. 6to4 (2002::/16) carries it in bits 16-47, ISATAP in the
# interface identifier ::5efe:a.b.c.d (RFC 5214) under any prefix; Teredo (2001::/32)
# is refused whole by 2001::/23 above.
_EMBEDDING_V6: Final = tuple(ipaddress.IPv6Network(n) for n in (
    "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96", "::/96",
))  # fmt: skip
_ISATAP_IDS: Final = frozenset({0x00005EFE, 0x02005EFE})
_STRICTNESS: Final[dict[AddressKind, int]] = {"public": 0, "loopback": 1, "private": 2}


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``ip`` carries, if it is one of the embedding forms."""
    if ip.sixtofour is not None:
        return ip.sixtofour
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip in net for net in _EMBEDDING_V6) or (int(ip) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        return low
    return None


def address_kind(address: str) -> AddressKind:
    """``loopback`` (127.0.0.0/8, ``::1``), ``public``, or ``private`` for every other
    special-purpose address: RFC 1918, CGNAT 100.64/10, link-local (169.254.169.254,
    the metadata service, among them), unique-local fd00::/8, multicast, unspecified,
    documentation, reserved. An IPv6 address that embeds an IPv4 one (IPv4-mapped
    ``::ffff:a.b.c.d``, IPv4-translated ``::ffff:0:a.b.c.d``, IPv4-compatible,
    NAT64, 6to4, ISATAP) is judged by it too, the stricter judgement winning. Anything
    that does not parse as an IP address is ``private`` (refused)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return "private"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip == ipaddress.IPv6Address("::1"):
            return "loopback"
        own: AddressKind = "private" if any(ip in net for net in _NOT_PUBLIC_V6) else "public"
        embedded = _embedded_v4(ip)
        if embedded is None:
            return own
        inner = _v4_kind(embedded)
        return max(own, inner, key=_STRICTNESS.__getitem__)
    return _v4_kind(ip)


def _v4_kind(ip: ipaddress.IPv4Address) -> AddressKind:
    if ip.is_loopback:
        return "loopback"
    if ip == ipaddress.IPv4Address("255.255.255.255"):
        return "private"
    return "private" if any(ip in net for net in _NOT_PUBLIC_V4) else "public"


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    allow_private: bool
    allow_loopback: bool

    def allows(self, address: str) -> bool:
        kind = address_kind(address)
        if kind == "public" or self.allow_private:
            return True
        return kind == "loopback" and self.allow_loopback

    def check_host(self, host: str) -> None:
        """Refuse a literal address (or ``localhost``) before any connection; a name is
        judged when it is resolved (:class:`GuardedBackend`)."""
        name = host.strip("[]").lower()
        if name == "localhost" or name.endswith(".localhost"):
            name = "127.0.0.1"
        try:
            ipaddress.ip_address(name.split("%", 1)[0])
        except ValueError:
            return
        if not self.allows(name):
            raise AddressRefused


async def system_resolver(host: str, port: int) -> Sequence[str]:
    found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(sockaddr[0]) for *_, sockaddr in found]


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address policy: resolve the host once,
    refuse if any address it resolves to is not allowed, then connect to those
    addresses in order until one answers (so the address judged is the address
    connected to: no second lookup a rebinding DNS server could answer differently)."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver | None) -> None:
        self._policy = policy
        self._resolve = resolver or system_resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self._policy.check_host(host)
        try:
            ipaddress.ip_address(host)
            literal = [host]  # an address: nothing to resolve
        except ValueError:
            literal = []
        try:
            with anyio.fail_after(timeout):
                addresses = literal or list(dict.fromkeys(await self._resolve(host, port)))
        except TimeoutError:
            raise httpcore.ConnectTimeout from None
        except OSError:
            raise httpcore.ConnectError from None
        if not addresses:
            raise httpcore.ConnectError
        if not all(self._policy.allows(a) for a in addresses):
            raise AddressRefused  # one bad answer spoils the lookup: no picking around it
        failure: Exception = httpcore.ConnectError()
        for address in addresses:  # in the resolver's order, each one judged above
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:  # pragma: no cover - never configured
        raise AddressRefused

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
