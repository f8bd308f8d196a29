"""Record verifier vectors: the project's verifier run against the honest test agent and
each serving rogue (``conformance_rogues.py``), every exchange kept, the origin written
as ``{origin}``, the verdict reached (docs/conformance.md, D-CONF-11).

    python tests/conformance_record.py   # rewrites conformance/vectors/verifier/*.json

The cards are unsigned, so a recording replays on any origin (a signature would cover
the recorded one).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from a2a_interview.conformance.replay import ORIGIN, RecordedExchange, kept, steering, vector_json
from a2a_interview.conformance.vectors import dump
from a2a_interview.verifier import verify
from agents import honest
from conformance_rogues import FACTORIES
from support.servers import serve

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "conformance" / "vectors" / "verifier"


class Recorder:
    """ASGI middleware keeping every exchange, the origin replaced by ``{origin}``."""

    def __init__(self, app: Any, origin: str) -> None:
        self.app, self.origin = app, origin
        self.exchanges: list[RecordedExchange] = []

    def _token(self, text: str) -> str:
        return text.replace(self.origin, ORIGIN)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        sent = False
        start: dict[str, Any] = {}
        out = b""

        async def replay_receive() -> Any:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def keep(message: Any) -> None:
            nonlocal out
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                out += message.get("body", b"")
            await send(message)

        await self.app(scope, replay_receive, keep)
        query = scope.get("query_string", b"").decode("latin-1")
        headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in scope["headers"]]
        response = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in start["headers"]]
        self.exchanges.append(RecordedExchange(
            scope["method"], scope["path"] + ("?" + query if query else ""),
            steering(headers), self._token(body.decode("utf-8")), start["status"],
            tuple((n, self._token(v)) for n, v in kept(response)),
            self._token(out.decode("utf-8")),
        ))  # fmt: skip


def verdict(document: dict[str, Any]) -> dict[str, Any]:
    """What a replay must reach again: outcome, checks, conflicts per run, advisories."""
    return {
        "outcome": document["outcome"],
        "checks": document["checks"],
        "conflicts": [sorted({f"{c['check']}/{c['reason']}" for c in run["conflicts"]})
                      for run in document["runs"]],
        "advisories": sorted({f"{a['code']}/{a['reason']}" for a in document["advisories"]}),
    }  # fmt: skip


def _unsigned_honest(origin: str) -> Any:
    return honest(origin, signed=False)


MODES: dict[str, Callable[[str], Any]] = {
    "honest": _unsigned_honest,
    **{mode: (lambda o, f=f: f(o, signed=False)) for mode, f in FACTORIES.items()},
}


def record(mode: str) -> dict[str, Any]:
    """One verifier vector: the verifier run against ``mode``, recorded."""
    recorders: list[Recorder] = []

    def factory(origin: str) -> Any:
        recorders.append(Recorder(MODES[mode](origin), origin))
        return recorders[-1]

    with serve(factory) as origin:
        document = anyio.run(_verify, origin)
    name = mode.replace(" ", "-")
    description = f"The verifier against the test agent: {mode} (an unsigned card)."
    return vector_json(name, description, recorders[0].exchanges, verdict(document))


async def _verify(origin: str) -> dict[str, Any]:
    # Thorough (D-TEST-45): a vector holds every ask, replayed thorough.
    result = await verify(origin, churn_delay=0, thorough=True)
    document: dict[str, Any] = result.to_json()  # type: ignore[union-attr]
    return document


def main() -> int:
    VERIFIER.mkdir(parents=True, exist_ok=True)
    for mode in MODES:
        vector = record(mode)
        (VERIFIER / f"{vector['name']}.json").write_bytes(dump(vector))
        print(vector["name"], vector["expected"]["outcome"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
