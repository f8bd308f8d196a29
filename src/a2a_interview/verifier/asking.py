"""One question, asked once (``ask``): the card fetched, the question asked activated on
its first JSON-RPC interface (else HTTP+JSON), the reply read strictly.

``ask`` never hides a failure (PROFILE §3.10, docs/decisions.md D-VERIFY-48): it returns
only a well-formed result (an answer, or the standard refusal); anything else raises an
exception of the package's tree, each with its ``code``, so a caller that reads
``result.read.canonical`` never meets ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import anyio

from ..checks import Binding, Exchange, Interface, ResultRead, find_interfaces
from ..declarations import interview_entry, read_card
from ..errors import InterviewError
from ..net.failures import DeadlineExceeded, TransportFailure
from ..net.urls import card_url_for
from ..spec import DEFAULT_DEADLINE
from .calls import Calls
from .client import ClientOptions, Interviewer
from .state import Abandoned, RunState, Stop

__all__ = [
    "AskResult",
    "AuthenticationRequired",
    "CredentialsNotSent",
    "NoInterface",
    "NotAnswered",
    "NotOffered",
    "ask",
]


class NotOffered(InterviewError):
    """The card does not declare the interview (absence states nothing: interview §9)."""

    code = "not_offered"


class NoInterface(InterviewError):
    """The card declares the interview on no interface able to carry it (gRPC only):
    non-conformance under ``declaration`` (PROFILE §7), as ``verify`` reports it."""

    code = "no_interface"


class AuthenticationRequired(InterviewError):
    """The agent answered 401 or 403: it requires credentials (interview §10). Never
    non-conformance. ``schemes`` names the card's ``securitySchemes`` (peer data: kept
    out of the message)."""

    code = "authentication_required"

    def __init__(self, schemes: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.schemes = schemes


class CredentialsNotSent(AuthenticationRequired):
    """A 401/403 from an origin the credentials were not sent to (an interface on another
    origin than the card): name it in ``ClientOptions.credential_origins`` (PROFILE §7).
    ``origin`` is that origin (peer data: kept out of the message)."""

    code = "credentials_not_sent"

    def __init__(self, origin: str, schemes: tuple[str, ...] = ()) -> None:
        super().__init__(schemes)
        self.origin = origin


@dataclass(frozen=True, slots=True)
class AskResult:
    """One activated call: the interface asked, the raw exchange and its reading (a
    well-formed result: ``read.model`` is the answer or the standard refusal,
    ``read.canonical`` its JCS bytes)."""

    interface: Interface
    exchange: Exchange
    read: ResultRead


class NotAnswered(InterviewError):
    """The reply is not a well-formed result (PROFILE §3.10: a ``-32009`` for a version
    the host refuses, any other JSON-RPC error, a status other than 200, a body that is
    not the answer's or the refusal's shape). ``reason`` is the reading's problem code
    (``http_status``, ``not_json``, ``envelope``, ``error_response``, ``wire_format``),
    ``error_code`` the JSON-RPC error code if any, ``result`` the exchange as read."""

    code = "not_answered"

    def __init__(self, result: AskResult) -> None:
        reason, detail = result.read.problem or ("no_result", "no result")
        super().__init__(detail)
        self.reason = reason
        self.error_code = result.read.error_code
        self.result = result


async def ask(
    url: str,
    question: str,
    skill: str | None = None,
    *,
    options: ClientOptions | None = None,
    transport: Any = None,
    deadline: float | None = DEFAULT_DEADLINE,
    http: Any = None,
) -> AskResult:
    """Fetch the card at ``url`` and ask ``question`` once, activated, on the first
    JSON-RPC interface (else the first HTTP+JSON one), all within ``deadline`` seconds
    (``None``: unbounded).

    ``http``: an ``httpx.AsyncClient`` to share (the one an ``a2a-sdk`` client was made
    with, say); it is not closed here, redirects stay the interviewer's (same origin,
    GET only), and ``options.headers`` still go to the origin of ``url`` (and to
    ``options.credential_origins``) only, while the client's own headers go wherever it
    does.

    Returns only a well-formed result: the answer or the standard refusal. Raises
    ``NotAnswered`` for any other reply (a JSON-RPC error such as ``-32009``, a status
    other than 200, a malformed body); ``TransportFailure`` (its subclasses; also for a
    502/503/504, and when the card URL does not answer 200; ``DeadlineExceeded`` when the
    deadline passes, and ``AddressRefused`` for a card or interface on an address that
    is not public); ``AuthenticationRequired`` for a 401/403 (``CredentialsNotSent``
    when it came from an origin the credentials were not sent to); ``NotOffered`` when
    the card does not declare the interview; ``NoInterface`` when it declares it on no
    JSONRPC or HTTP+JSON interface (gRPC only); ``IngressError`` or ``DeclarationError``
    for a card that is not a strict I-JSON object. All are ``InterviewError``.
    """
    seconds = math.inf if deadline is None else deadline
    with anyio.move_on_after(seconds) as scope:
        return await _ask(
            url,
            question,
            skill,
            options,
            (transport, http),
            deadline=anyio.current_time() + seconds,
        )
    assert scope.cancelled_caught
    raise DeadlineExceeded


async def _ask(
    url: str,
    question: str,
    skill: str | None,
    options: ClientOptions | None,
    through: tuple[Any, Any],
    *,
    deadline: float,
) -> AskResult:
    transport, http = through
    async with Interviewer(
        options, credential_origin=url, transport=transport, http=http
    ) as session:
        session.deadline = deadline  # a 429 wait past it ends the ask rate_limited now
        response = await session.get(card_url_for(url), (("Accept", "application/json"),))
        if response.status in (401, 403):
            raise AuthenticationRequired
        if response.status != 200:  # as verify's card_status: unreachable, not absence
            raise TransportFailure("the card URL did not answer 200")
        card = read_card(response.body)
        if interview_entry(card) is None:
            raise NotOffered("the card does not declare the interview")
        interfaces, _ = find_interfaces(card)
        interfaces.sort(key=lambda i: i.binding is not Binding.JSONRPC)
        if not interfaces:  # PROFILE §7: as verify says it, nothing asked
            raise NoInterface("the card declares the interview on no interface able to carry it")
        calls = Calls(session, session.options)
        state = RunState(card=card)
        try:
            exchange, read = await calls.call(state, interfaces[0], question, skill)
        except Abandoned as abandoned:  # the third transport failure in a row
            raise abandoned.failure or TransportFailure() from None
        except Stop as stop:
            incomplete = stop.incomplete
            if incomplete.reason == "credentials_not_sent":
                raise CredentialsNotSent(incomplete.url or "", incomplete.schemes) from None
            if incomplete.reason == "authentication_required":
                raise AuthenticationRequired(incomplete.schemes) from None
            raise TransportFailure(incomplete.detail) from None
        result = AskResult(interfaces[0], exchange, read)
        if read.problem is not None or read.canonical is None:
            raise NotAnswered(result)
        return result
