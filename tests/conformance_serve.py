"""Serve a conformance vector's declarations with ``InterviewMiddleware`` in front of a
host that gives -32601 to any JSON-RPC method and 404 to any route, until stopped:
``python tests/conformance_serve.py CARD PROPOSALS PORT`` (the ``{card}``,
``{proposals}`` and ``{port}`` of ``a2a-interview conformance --vectors --target``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import uvicorn

from a2a_interview.declarations import load
from a2a_interview.rpc import rpc_error
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.spec import RPC_METHOD_NOT_FOUND


async def host(scope: Any, receive: Any, send: Any) -> None:
    """A host's own dispatch: -32601 for any JSON-RPC method, 404 for any route."""
    if scope["type"] != "http":
        return
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    if scope["method"] == "POST":
        try:
            request_id = json.loads(body).get("id")
        except (ValueError, AttributeError):
            request_id = None
        status, out = 200, rpc_error(request_id, RPC_METHOD_NOT_FOUND)
    else:
        status, out = 404, b'{"error":"not found"}'
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})  # fmt: skip
    await send({"type": "http.response.body", "body": out})


def main(argv: list[str]) -> None:
    card, proposals, port = Path(argv[0]), Path(argv[1]), int(argv[2])
    texts = json.loads(proposals.read_text(encoding="utf-8"))
    files = {url: text.encode("utf-8") for url, text in texts.items()}
    app = InterviewMiddleware(host, load(card.read_bytes(), files))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
