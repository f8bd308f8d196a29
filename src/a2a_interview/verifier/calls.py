"""One call to an interface, and the failures in a row that abandon one (PROFILE §7).

A call is built for the interface's binding (a JSON-RPC envelope, or PROFILE §3b's
``GET {url}/interview/{question}``), carries the ``A2A-Version`` of the interface
(:func:`version_for`) and, when activated, the extension's header; it is recorded in the
run's account before it is judged. A transport failure is tried again until it is the
third in a row on that interface; three transport failures or answers not of the
interface's binding in a row abandon it for the run (:class:`~.state.Abandoned`).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote

from ..checks import Binding, Exchange, Interface, ResultRead, is_binding_answer, read_result
from ..jcs import canonicalize, digest_bytes
from ..net.failures import (
    BodyTooLarge,
    ConnectFailed,
    EncodingRefused,
    TimedOut,
    without_credentials,
)
from ..record import CallRecord, Incomplete
from ..spec import (
    EXTENSIONS_HEADER,
    FAILURES_IN_A_ROW,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    METHOD_PREFIX,
    VERSION_HEADER,
)
from ..strictjson import JSONObject
from .client import ClientOptions, Interviewer, Response
from .state import Abandoned, RunState, Stop, auth_required

__all__ = ["A2A_VERSION", "Calls", "version_for"]

A2A_VERSION: Final = "1.0"
# Failures that say nothing about the agent's answers but that it did not give one: three
# in a row on an interface abandon it (PROFILE §7).
_STRIKES: Final = (ConnectFailed, TimedOut, BodyTooLarge, EncodingRefused)
_VERSION: Final = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?")


def version_for(interface: Interface) -> str | None:
    """The ``A2A-Version`` sent to ``interface`` and for its card variant (PROFILE §7):
    none for 0.3, else its ``protocolVersion`` as Major.Minor (A2A 1.0 §3.6), ``1.0``
    when it names none that reads as a version."""
    if interface.legacy:
        return None
    match = _VERSION.fullmatch(interface.protocol_version or "")
    return f"{int(match[1])}.{int(match[2])}" if match else A2A_VERSION


class Calls:
    """The calls of one procedure over one interviewer session: the JSON-RPC ids, and
    the failures in a row on each interface."""

    def __init__(self, session: Interviewer, client: ClientOptions) -> None:
        self.session = session
        self.client = client
        self._ids = 0
        self._strikes: dict[str, int] = {}  # interface url: failures in a row
        self._abandoned: set[str] = set()  # interfaces whose last answer was the third
        # Interfaces that gave at least one answer of their binding this run: one that
        # never did is judged as unreachable, not for what it sent (PROFILE §7).
        self.answered: set[str] = set()

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def new_run(self) -> None:
        """A run starts with no failures counted and no interface abandoned."""
        self._strikes.clear()
        self._abandoned.clear()
        self.answered.clear()

    async def call(
        self,
        state: RunState,
        interface: Interface,
        question: str,
        skill: str | None,
        *,
        activated: bool = True,
        request_id: int | None = None,
        same_as: tuple[Exchange, ResultRead] | None = None,
    ) -> tuple[Exchange, ResultRead]:
        """One call, recorded. With ``same_as`` (an earlier call with the same id), a
        response with the same status and body reuses that call's reading."""
        if interface.url in self._abandoned:
            raise Abandoned(None)  # the third answer not of its binding was judged
        method = METHOD_PREFIX + question
        params: JSONObject | None = {"skill": skill} if skill is not None else None
        if not activated and interface.binding is Binding.JSONRPC:
            params = {}  # PROFILE §7: the inactive probe is a well-formed call, "params": {}
        headers = _headers(interface, activated=activated)
        body: bytes | None = None
        if interface.binding is Binding.JSONRPC:
            if request_id is None:
                request_id = self.next_id()
            envelope: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                envelope["params"] = params
            headers.append(("Content-Type", "application/json"))
            body = canonicalize(envelope)
            target = interface.url
        else:
            # PROFILE §3b: GET {url}/interview/{question}[?skill=...]
            target = interface.url.rstrip("/") + "/interview/" + quote(question, safe="")
            if skill is not None:
                target += "?skill=" + quote(skill, safe="")
        response = await self._send(interface, target, body, headers)
        state.calls.append(
            CallRecord(
                interface.url,
                str(interface.binding),
                method,
                params,
                activated,
                response.status,
                digest_bytes(response.body),
            )
        )
        if response.status in (401, 403):
            sent = self.session.sends_credentials(response.url)
            raise auth_required(state.card, self.client, response.url, sent=sent)
        if response.status in (502, 503, 504):
            where = without_credentials(target)
            detail = "the agent answered 502, 503 or 504"
            raise Stop(Incomplete("agent_unavailable", detail, url=where))
        exchange = Exchange(response.status, response.headers, response.body)
        if same_as is not None and (same_as[0].status, same_as[0].body) == (
            exchange.status,
            exchange.body,
        ):
            read = same_as[1]
        else:
            read = read_result(exchange, interface.binding, request_id)
        self._count(interface, exchange, read, activated=activated)
        return exchange, read

    def _count(
        self, interface: Interface, exchange: Exchange, read: ResultRead, *, activated: bool
    ) -> None:
        """PROFILE §7: answers that are not of the interface's binding, three in a row,
        abandon it (the REST inactive probe's expected answer is the host's own 404)."""
        expected_404 = not activated and interface.binding is Binding.HTTP_JSON
        if is_binding_answer(exchange, interface.binding, read):
            self._strikes[interface.url] = 0
            self.answered.add(interface.url)
        elif expected_404:
            self._strikes[interface.url] = 0
        elif self._strike(interface):
            self._abandoned.add(interface.url)  # after this answer is judged

    def _strike(self, interface: Interface) -> bool:
        """Count a failure; whether it is the third in a row on ``interface``."""
        strikes = self._strikes.get(interface.url, 0) + 1
        self._strikes[interface.url] = strikes
        return strikes >= FAILURES_IN_A_ROW

    async def _send(
        self,
        interface: Interface,
        url: str,
        body: bytes | None,
        headers: list[tuple[str, str]],
    ) -> Response:
        """One exchange with an interface; a transport failure is tried again until it
        is the third in a row on that interface, which abandons it (PROFILE §7)."""
        while True:
            try:
                if body is None:
                    return await self.session.get(url, headers)
                return await self.session.post(url, body, headers)
            except _STRIKES as exc:
                # A host name that did not resolve will not on the next ask of the run:
                # abandoned at once (D-VERIFY-51), not after three tries.
                if self._strike(interface) or exc.cause == "name":
                    raise Abandoned(exc) from None


def _headers(interface: Interface, *, activated: bool) -> list[tuple[str, str]]:
    """A call's headers: its binding's ``A2A-Version`` and, activated, the interview's
    URI (under the legacy name too for a 0.3 interface)."""
    headers = [("Accept", "application/json")]
    version = version_for(interface)
    if version is not None:  # none for 0.3: an empty version means 0.3
        headers.append((VERSION_HEADER, version))
    if activated:
        headers.append((EXTENSIONS_HEADER, INTERVIEW_URI))
        if interface.legacy:
            headers.append((LEGACY_EXTENSIONS_HEADER, INTERVIEW_URI))
    return headers
