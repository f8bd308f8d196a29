"""An ``a2a-sdk`` 0.3.x agent for the interop suite. Our own code.

Run by the interpreter of the 0.3 venv the suite creates (``requirements-a2a03.txt``),
never by the project's venv, which holds a2a-sdk 1.x::

    python a2a03_agent.py --port N --url URL [--declare]

Serves a stock 0.3 app (``A2AStarletteApplication``): the card at
``/.well-known/agent-card.json`` naming ``URL`` (JSON-RPC, the SDK's default ``/``
route), and an executor that answers every message with ``echo: <text>``. ``--declare``
puts the interview extension in the card (``required: false``) without serving it: that
is the proxy's job. Prints ``listening <port>`` once it accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentExtension, AgentSkill
from a2a.utils import new_agent_text_message

INTERVIEW = "https://agentsow.com/extensions/a2a-interview/v1"


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        await event_queue.enqueue_event(
            new_agent_text_message(f"echo: {text}", context.context_id, context.task_id)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def card(url: str, declare: bool) -> AgentCard:
    extensions = []
    if declare:
        extensions.append(
            AgentExtension(uri=INTERVIEW, description="The five questions", required=False)
        )
    return AgentCard(
        name="Echo 0.3",
        description="An a2a-sdk 0.3 agent that says back what it is told",
        url=url,
        version="0.3.0",
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        capabilities=AgentCapabilities(streaming=True, extensions=extensions or None),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Says it back", tags=["echo"])],
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--declare", action="store_true")
    args = parser.parse_args()
    agent_card = card(args.url, args.declare)
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=agent_card, http_handler=handler).build()
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.05)
    print(f"listening {args.port}", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(main())
