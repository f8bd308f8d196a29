"""Runners are keys (PROFILE §8, "Who ran it"; D-WEB-16).

A runner is named by its key. An operator lists the runner keys it trusts, with the
names it gives them, in a runners file (``ledger serve/list/show --runners FILE``)::

    {"runners": [{"key": "UA...", "name": "Acme Market"}]}

Everywhere a result is shown, :func:`runner_view` says who ran it: the operator's name
for a listed key; otherwise the key's fingerprint, with the name written in the record
marked as self-declared. Evidence by a key the operator does not list is worded apart
(:data:`EVIDENCE_WORDS`). Pure: no I/O here, the CLI reads the file.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..errors import IngressError
from ..record import nkey_thumbprint
from ..strictjson import loads
from .errors import LedgerError

__all__ = [
    "EVIDENCE_WORDS",
    "NO_RUNNERS",
    "BadRunners",
    "RunnerView",
    "Runners",
    "fingerprint",
    "read_runners",
    "runner_view",
]

MAX_RUNNERS: Final = 10_000
MAX_RUNNER_NAME: Final = 200

Evidence = Literal["listed", "unlisted"]

# How evidence is worded, by whether its runner key is on the operator's list
# (PROFILE §8: never in the same words).
EVIDENCE_WORDS: Final[Mapping[Evidence, str]] = {
    "listed": "evidence",
    "unlisted": "evidence by an unlisted runner",
}


class BadRunners(LedgerError):
    """The runners file is not a list of runner keys with names."""

    code = "bad_runners"


@dataclass(frozen=True, slots=True)
class Runners:
    """The operator's trusted runner keys (nkeys) and the names it gives them."""

    names: Mapping[str, str]

    def name_of(self, key: str | None) -> str | None:
        return self.names.get(key) if key is not None else None


NO_RUNNERS: Final = Runners({})


# Scripts whose letters pass for one another ("Асme" with a Cyrillic А is not "Acme").
_CONFUSABLE_SCRIPTS: Final = ("LATIN", "CYRILLIC", "GREEK")


def _clean_name(value: Any) -> str | None:
    """A listed runner's name, or ``None`` for one the page could not show as what it
    is: empty, too long, holding a control, format (bidirectional overrides, zero-width
    characters, the BOM), separator, private-use or unassigned character, or mixing
    Latin, Cyrillic and Greek letters (confusables)."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_RUNNER_NAME:
        return None
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs") for c in value):
        return None
    scripts = {
        unicodedata.name(c, "").split(" ")[0] for c in value if unicodedata.category(c)[0] == "L"
    }
    if len(scripts & set(_CONFUSABLE_SCRIPTS)) > 1:
        return None
    return value.strip()


def _same_name(name: str) -> str:
    """What two names must differ in to be told apart: NFKC, case folded, spaces as one."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def read_runners(data: bytes) -> Runners:
    """The runners file's list. Raises :class:`BadRunners` naming what is wrong (never
    echoing a value): not strict I-JSON, not ``{"runners": [...]}``, an item without a
    valid nkey ``key`` or a ``name`` of 1-200 printable characters (none invisible or
    direction-changing, no mixed Latin, Cyrillic and Greek letters), a key listed twice,
    a name given twice (NFKC, case folded)."""
    try:
        value = loads(data)
    except IngressError as exc:
        raise BadRunners(f"the runners file is not strict I-JSON [{exc.code}]") from None
    items = value.get("runners") if isinstance(value, dict) else None
    if not isinstance(items, list) or len(items) > MAX_RUNNERS:
        raise BadRunners('the runners file must be {"runners": [{"key": ..., "name": ...}]}')
    names: dict[str, str] = {}
    seen: set[str] = set()
    for index, item in enumerate(items, 1):
        key = item.get("key") if isinstance(item, dict) else None
        name = _clean_name(item.get("name")) if isinstance(item, dict) else None
        if not isinstance(key, str) or nkey_thumbprint(key) is None:
            raise BadRunners(f"runner {index}: key is not a public nkey (U...)")
        if name is None:
            raise BadRunners(
                f"runner {index}: name must be 1-{MAX_RUNNER_NAME} printable characters, "
                "without invisible or direction-changing ones or mixed Latin, Cyrillic "
                "and Greek letters"
            )
        if key in names:
            raise BadRunners(f"runner {index}: this key is listed twice")
        if _same_name(name) in seen:
            raise BadRunners(f"runner {index}: another runner has this name")
        seen.add(_same_name(name))
        names[key] = name
    return Runners(names)


@functools.lru_cache(maxsize=4096)
def fingerprint(key: str | None) -> str | None:
    """A runner key's short fingerprint: the first 16 characters (96 bits) of its RFC
    7638 thumbprint; ``None`` for no key or a malformed one. Remembered for the last
    4,096 keys: a pure function of the key, asked for on every line of every list
    (decoding the key and its JCS thumbprint was a third of an index page:
    docs/benchmarks.md)."""
    thumb = nkey_thumbprint(key) if isinstance(key, str) else None
    return thumb[:16] if thumb else None


@dataclass(frozen=True, slots=True)
class RunnerView:
    """Who ran a result, as every surface says it. ``label`` is the text to show;
    ``listed_name`` the operator's name for a listed key; ``declared_name`` the name
    written in the record (self-declared, agent data when self-run)."""

    key: str | None
    fingerprint: str | None
    listed: bool
    listed_name: str | None
    declared_name: str
    label: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fingerprint": self.fingerprint,
            "listed": self.listed,
            "listed_name": self.listed_name,
            "self_declared_name": self.declared_name,
            "label": self.label,
        }


def runner_view(key: str | None, declared_name: str, runners: Runners) -> RunnerView:
    """Who ran it (PROFILE §8): the listed name for a key the operator lists; else the
    key's fingerprint with the record's name marked self-declared; for a record with no
    verified runner key, only the self-declared name. ``key`` must be a key whose
    signature verified on the record (PROFILE §8): an unsigned record's ``ran_by.key``
    is self-declared text and is never passed here."""
    listed_name = runners.name_of(key)
    short = fingerprint(key)
    if listed_name is not None:
        label = f"{listed_name} (listed runner, key {short})"
    elif short is not None:
        label = f"unlisted key {short} (self-declared name: {declared_name})"
    else:
        label = f"no verified runner key (self-declared name: {declared_name})"
    return RunnerView(key, short, listed_name is not None, listed_name, declared_name, label)
