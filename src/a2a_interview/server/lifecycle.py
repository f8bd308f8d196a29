"""Declarations that live: loaded and self-checked at start, reloaded on change, with the
last good set kept when a reload fails (PROFILE §2.4).

A loader is any callable returning :class:`~a2a_interview.declarations.Declarations`
(or an awaitable of one) and raising ``DeclarationError`` or ``IngressError`` when the
declarations cannot be served. :func:`file_loader` reads a card and proposal files.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from ..declarations import Declarations, load
from ..errors import DeclarationError, InterviewError
from ..projection import Interview
from ..spec import MAX_DOCUMENT_BYTES

log = logging.getLogger("a2a_interview.server")

Loader = Callable[[], Declarations | Awaitable[Declarations]]
ErrorHook = Callable[[InterviewError], None]


def _report(exc: InterviewError) -> None:
    log.error("declarations reload failed, serving the last good set: %s [%s]", exc, exc.code)


class LiveDeclarations:
    """The declarations currently served, swapped whole and only for a set that verified.

    Build with :meth:`start` (async) or from an already built set. ``interview`` is the
    current :class:`Interview`; reading it is a plain attribute access.
    """

    def __init__(
        self,
        initial: Declarations,
        loader: Loader | None = None,
        *,
        on_error: ErrorHook = _report,
        fingerprint: Callable[[], object] | None = None,
    ) -> None:
        self.declarations = initial
        self.interview: Interview = initial.interview
        self.loader = loader
        self.on_error = on_error
        self.last_error: InterviewError | None = None
        self._fingerprint = fingerprint
        self._seen = fingerprint() if fingerprint else None

    @classmethod
    async def start(cls, loader: Loader, **options: object) -> LiveDeclarations:
        """Load once. Raises the loader's ``InterviewError``: a server must not start on
        declarations that fail their self-check."""
        result = loader()
        initial = await result if inspect.isawaitable(result) else result
        return cls(initial, loader, **options)  # type: ignore[arg-type]

    def replace(self, declarations: Declarations) -> None:
        self.declarations = declarations
        self.interview = declarations.interview

    async def reload(self) -> bool:
        """Load again. Returns ``True`` when the new set is now served; on failure keeps
        the last good set, reports through ``on_error`` and returns ``False``."""
        if self.loader is None:
            return False
        try:
            result = self.loader()
            fresh = await result if inspect.isawaitable(result) else result
        except InterviewError as exc:
            self.last_error = exc
            self.on_error(exc)
            return False
        self.last_error = None
        self.replace(fresh)
        return True

    async def watch(self, interval: float = 2.0) -> None:
        """Reload whenever the fingerprint changes (or every ``interval`` seconds without
        one). Runs until cancelled."""
        while True:
            await asyncio.sleep(interval)
            if self._fingerprint is not None:
                seen = self._fingerprint()
                if seen == self._seen:
                    continue
                self._seen = seen
            await self.reload()


def _read(path: Path) -> bytes:
    # PROFILE §1.4 before the bytes are held: a huge file (or a device) is never read whole.
    with path.open("rb") as handle:
        data = handle.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DeclarationError("a declarations file is larger than the 1 MiB bound")
    return data


def file_loader(
    card_path: str | os.PathLike[str], proposals: Mapping[str, str | os.PathLike[str]]
) -> tuple[Loader, Callable[[], object]]:
    """A loader over files and the fingerprint that tells when they changed.

    ``proposals`` maps each url the card commits to onto the file holding its bytes.
    """
    paths = [Path(card_path), *(Path(p) for p in proposals.values())]

    def loader() -> Declarations:
        try:
            card = _read(paths[0])
            fetched = {url: _read(Path(p)) for url, p in proposals.items()}
        except OSError as exc:
            raise DeclarationError(f"cannot read a declarations file ({exc.strerror})") from None
        return load(card, fetched)

    def fingerprint() -> object:
        stamps: list[tuple[int, int] | None] = []
        for path in paths:
            try:
                stat = path.stat()
                stamps.append((stat.st_mtime_ns, stat.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    return loader, fingerprint
