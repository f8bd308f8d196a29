"""Activation: which request headers named the interview URI (PROFILE §3.2)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..spec import EXTENSIONS_HEADER, INTERVIEW_URI, LEGACY_EXTENSIONS_HEADER


@dataclass(frozen=True, slots=True)
class Activation:
    """Which request headers named the interview URI (PROFILE §3.2)."""

    current: bool = False
    legacy: bool = False

    def __bool__(self) -> bool:
        return self.current or self.legacy

    def echo(self) -> tuple[tuple[str, str], ...]:
        """The response headers every activated response carries."""
        if not self:
            return ()
        if self.legacy:
            return ((EXTENSIONS_HEADER, INTERVIEW_URI), (LEGACY_EXTENSIONS_HEADER, INTERVIEW_URI))
        return ((EXTENSIONS_HEADER, INTERVIEW_URI),)


NOT_ACTIVATED = Activation()


_HEADER_NAMES = {b"a2a-extensions": 0, b"x-a2a-extensions": 1}


def activation(headers: Iterable[tuple[str | bytes, str | bytes]]) -> Activation:
    """Read activation from request headers: a comma-separated list, each element trimmed
    of blanks and compared exactly with the URI (PROFILE §3.2). Header names match
    case-insensitively, as HTTP requires; values never do."""
    found = [False, False]
    for raw_name, raw_value in headers:
        name = raw_name if isinstance(raw_name, bytes) else raw_name.encode("latin-1")
        which = _HEADER_NAMES.get(name.lower())
        if which is None:
            continue
        value = raw_value.decode("latin-1") if isinstance(raw_value, bytes) else raw_value
        if any(item.strip(" \t") == INTERVIEW_URI for item in value.split(",")):
            found[which] = True
    return Activation(*found)
