"""Serve one of the test agents of ``agents.py`` on a loopback port until stopped, as a
process of its own: ``python tests/serve_agent.py NAME PORT`` (NAME: ``honest``,
``liar``). For tests that start an agent the way a user's CI does (test_ci_recipe.py)."""

from __future__ import annotations

import sys

import uvicorn

import agents


def main(argv: list[str]) -> None:
    name, port = argv[0], int(argv[1])
    factory = {"honest": agents.honest, "liar": agents.liar}[name]
    app = factory(f"http://127.0.0.1:{port}")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
