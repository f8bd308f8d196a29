"""Stonework, the bundled reference agent, as a real ``a2a-sdk`` application.

It is an ordinary SDK agent (an executor behind ``DefaultRequestHandler`` with an
``InMemoryTaskStore``, the SDK's JSON-RPC and HTTP+JSON routes) with the interview added
by :func:`a2a_interview.server.sdk.interview_routes`. On the same origin it serves:

- the card at ``/.well-known/agent-card.json``, signed (EdDSA, the TEST-ONLY key of
  :mod:`a2a_interview.reference`) over the card exactly as the SDK serves it, with a
  same-origin ``jku``;
- the JWK Set at that ``jku`` (``/.well-known/jwks.json``);
- the two standing proposals at the urls the card commits to (``/terms/<name>.sow.json``);
- JSON-RPC and HTTP+JSON at the paths of the card's interfaces (``/a2a/jsonrpc``,
  ``/a2a/rest``), both answering the interview under activation; JSON-RPC also at
  ``/a2a/jsonrpc/``, the spelling the A2A TCK posts to (README, "The A2A TCK").

The executor is trivial: it answers ``Stonework demo: <your text>`` in a completed task.
It holds no model; the interview never reaches it anyway.

The card names its own origin, so the app is built for the address it is served on:
:func:`serve` binds the socket first and builds the app for the port it got.

Requires the ``sdk`` and ``server`` extras.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .. import reference
from ..jcs import canonicalize
from ..net.sockets import bind, socket_origin
from .listen import Bounds

if TYPE_CHECKING:
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskStore
    from starlette.applications import Starlette

    from .sdk import Limiter

__all__ = ["BOUNDS", "build_app", "executor", "serve"]


JSON = "application/json"

# The demo's connection bounds (server/listen.py): the defaults, and request bodies of at
# most 1 MiB, since the SDK reads a whole body into memory before looking at it.
BOUNDS = Bounds(max_body=1024 * 1024)


def _require() -> None:
    try:
        import a2a.server  # noqa: F401
        import starlette  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "the demo agent needs the 'sdk' and 'server' extras: "
            "pip install 'a2a-interview[sdk,server]'"
        ) from exc


def executor() -> AgentExecutor:
    """The demo's executor: every message becomes a completed task whose one artifact
    reads ``Stonework demo: <the message's text>``. No model, no tools, no memory."""
    _require()
    from a2a.helpers import get_message_text, new_task, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater
    from a2a.types import TaskState

    class StoneworkExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            task_id, context_id = context.task_id or "", context.context_id or ""
            if context.current_task is None:
                history = [context.message] if context.message else []
                submitted = TaskState.TASK_STATE_SUBMITTED
                await event_queue.enqueue_event(
                    new_task(task_id, context_id, submitted, history=history)
                )
            text = get_message_text(context.message) if context.message else ""
            updater = TaskUpdater(event_queue, task_id, context_id)
            await updater.start_work()
            await updater.add_artifact([new_text_part(f"Stonework demo: {text}")], name="reply")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            await updater.cancel()

    return StoneworkExecutor()


def _bytes_route(path: str, body: bytes, media_type: str = JSON) -> Any:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def endpoint(request: Request) -> Response:
        return Response(body, media_type=media_type)

    return Route(path, endpoint, methods=["GET"])


def build_app(
    origin: str,
    *,
    agent_executor: AgentExecutor | None = None,
    task_store: TaskStore | None = None,
    limiter: Limiter | None = None,
    signed: bool = True,
) -> Starlette:
    """The Stonework agent served at ``origin`` (``http://127.0.0.1:8000``), as an app.

    ``agent_executor`` and ``task_store`` replace the demo's own (:func:`executor`, an
    ``InMemoryTaskStore``), for tests that watch them. ``limiter`` rate-limits interview
    calls (none by default). With ``signed`` false the card carries no signature.

    Raises ``ImportError`` naming the extras when ``a2a-sdk`` or ``starlette`` is
    missing; ``DeclarationError`` if the bundled declarations fail their self-check
    (PROFILE §2.4); ``SignatureError`` if the card as served would not verify.
    """
    _require()
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette

    from ..card import load_private_key
    from ..declarations import interfaces
    from .sdk import agent_card_from_json, interview_routes, sign_agent_card

    base = origin.rstrip("/")
    card = agent_card_from_json(reference.unsigned_card(base))
    if signed:
        key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
        jku = base + reference.JWKS_PATH
        card = sign_agent_card(card, key, kid=reference.CARD_KID, alg="EdDSA", jku=jku)

    declared = interfaces(reference.unsigned_card(base))
    rpc_path = next(urlsplit(i.url).path for i in declared if i.binding == "JSONRPC")
    rest_path = next(urlsplit(i.url).path for i in declared if i.binding == "HTTP+JSON")

    handler = DefaultRequestHandler(
        agent_executor=agent_executor if agent_executor is not None else executor(),
        task_store=task_store if task_store is not None else InMemoryTaskStore(),
        agent_card=card,
    )
    proposals = reference.proposals(base)
    routes = interview_routes(
        card,
        # Both spellings of the JSON-RPC URL, as README recommends: the card's, and the
        # A2A TCK's `{url}/` (its client posts to the interface URL plus a slash).
        jsonrpc_routes=[
            *create_jsonrpc_routes(handler, rpc_url=rpc_path),
            *create_jsonrpc_routes(handler, rpc_url=rpc_path.rstrip("/") + "/"),
        ],
        rest_routes=create_rest_routes(handler, path_prefix=rest_path),
        proposals=proposals,
        limiter=limiter,
    )
    # Before the SDK's REST routes: their Mount('/{tenant}') takes any two-segment path.
    documents = [_bytes_route(reference.JWKS_PATH, canonicalize(reference.jwks()))]
    documents += [_bytes_route(urlsplit(url).path, body) for url, body in proposals.items()]
    return Starlette(routes=[*documents, *routes])


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    limiter: Limiter | None = None,
    on_ready: Callable[[str], None] | None = None,
    bounds: Bounds = BOUNDS,
) -> None:
    """Serve the Stonework agent until interrupted (SIGINT/SIGTERM end it cleanly).

    Binds first, then builds the app for the origin it got, so the card's urls name the
    port actually served. ``on_ready(origin)`` is called once the socket is bound.
    ``bounds`` are the connection bounds (:mod:`a2a_interview.server.listen`). Raises
    ``OSError`` when the address cannot be bound, and what :func:`build_app` raises.
    """
    import uvicorn

    from . import listen

    sock = bind(host, port)
    try:
        origin = socket_origin(sock)
        app = build_app(origin, limiter=limiter)
        config = listen.config(app, bounds, log_level="warning", access_log=False, lifespan="off")
        if on_ready is not None:
            on_ready(origin)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
