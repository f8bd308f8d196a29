"""NATS nkey encoding of Ed25519 keys, as Agent SoW §6 uses it (terms-extension.md §5).

A public user key is RFC 4648 base32 (no padding) of ``[0xA0] + key + CRC-16/XMODEM``
(little-endian), giving ``U`` and 55 characters; a seed is ``SU`` and 56 characters.
Decoding is strict: prefix, length and checksum are all checked.
"""

from __future__ import annotations

import base64
import binascii
import functools

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .errors import KeyFormatError

_USER = 20 << 3  # 0xA0: the 'U' prefix byte
_SEED = 18 << 3  # 0x90: the 'S' prefix byte


def _crc_table() -> tuple[int, ...]:
    table = []
    for high in range(256):
        crc = high << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16_xmodem(data: bytes) -> int:
    """CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection (a byte at a
    time from a table: every record's runner key is decoded on import)."""
    crc = 0
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


def _encode(payload: bytes) -> str:
    checked = payload + crc16_xmodem(payload).to_bytes(2, "little")
    return base64.b32encode(checked).decode("ascii").rstrip("=")


def _decode(text: str, size: int) -> bytes:
    if not isinstance(text, str) or not text.isascii() or not text.isalnum():
        raise KeyFormatError("an nkey is base32 text")
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError):
        raise KeyFormatError("an nkey is base32 text") from None
    if len(raw) != size:
        raise KeyFormatError("the nkey has the wrong length")
    payload, crc = raw[:-2], int.from_bytes(raw[-2:], "little")
    if crc16_xmodem(payload) != crc:
        raise KeyFormatError("the nkey checksum does not match")
    return payload


def encode_public(key: bytes) -> str:
    """The ``U...`` nkey of a 32-byte Ed25519 public key."""
    if len(key) != 32:
        raise KeyFormatError("an Ed25519 public key is 32 bytes")
    return _encode(bytes([_USER]) + key)


def decode_public(text: str) -> bytes:
    """The 32-byte key of a ``U...`` nkey. Raises ``KeyFormatError``."""
    if not isinstance(text, str):
        raise KeyFormatError("an nkey is base32 text")
    return _decode_public(text)


@functools.lru_cache(maxsize=1024)  # a store reads the same few runner keys again and again
def _decode_public(text: str) -> bytes:
    payload = _decode(text, 35)
    if payload[0] != _USER:
        raise KeyFormatError("not a user public nkey (prefix 'U')")
    return payload[1:]


def encode_seed(seed: bytes) -> str:
    """The ``SU...`` nkey of a 32-byte Ed25519 seed."""
    if len(seed) != 32:
        raise KeyFormatError("an Ed25519 seed is 32 bytes")
    prefix = bytes([_SEED | (_USER >> 5), (_USER & 31) << 3])
    return _encode(prefix + seed)


def decode_seed(text: str) -> bytes:
    """The 32-byte seed of an ``SU...`` nkey. Raises ``KeyFormatError``."""
    payload = _decode(text.strip() if isinstance(text, str) else text, 36)
    if payload[0] & 0xF8 != _SEED or (((payload[0] & 7) << 5) | (payload[1] >> 3)) != _USER:
        raise KeyFormatError("not a user seed nkey (prefix 'SU')")
    return payload[2:]


def private_key(seed_text: str) -> Ed25519PrivateKey:
    """The Ed25519 private key of an ``SU...`` seed."""
    return Ed25519PrivateKey.from_private_bytes(decode_seed(seed_text))


def public_of(key: Ed25519PrivateKey) -> str:
    """The ``U...`` nkey of a private key's public half."""
    return encode_public(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))


def generate_seed() -> str:
    """A fresh random ``SU...`` seed."""
    from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat

    raw = Ed25519PrivateKey.generate().private_bytes(
        Encoding.Raw, PrivateFormat.Raw, NoEncryption()
    )
    return encode_seed(raw)
