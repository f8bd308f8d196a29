"""Serve one of the test agents of ``agents.py`` on a loopback port until stopped, as a
process of its own: ``python tests/serve_agent.py NAME PORT`` (NAME: ``honest``,
``liar``, ``tampered``: a card signed without ``jku`` whose skill was changed after
signing, answered consistently, so only a required signature fails it; or ``rogue:R``,
R a serving rogue of ``conformance_rogues.FACTORIES``). For tests that start an agent
the way a user's CI does (test_ci_recipe.py, test_conformance_ci.py)."""

from __future__ import annotations

import sys
from typing import Any

import uvicorn

import agents
import conformance_rogues
from a2a_interview import reference
from a2a_interview.card import load_private_key, sign_card


def tampered(origin: str) -> Any:
    def sign_then_change(card: dict[str, Any]) -> dict[str, Any]:
        key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
        card = sign_card(card, key, kid=reference.CARD_KID, alg="EdDSA")  # no jku
        card["skills"][0]["description"] = "Changed after signing"
        return card

    return agents.honest(origin, edit_card=sign_then_change, signed=False)


def main(argv: list[str]) -> None:
    name, port = argv[0], int(argv[1])
    factories = {"honest": agents.honest, "liar": agents.liar, "tampered": tampered}
    rogues = {f"rogue:{r}": f for r, f in conformance_rogues.FACTORIES.items()}
    factory = {**factories, **rogues}[name]
    app = factory(f"http://127.0.0.1:{port}")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
