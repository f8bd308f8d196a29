"""The cards the interop suite's agents serve, and the two SDK signers run on them.

A card names where clients reach the agent (``origin``: the proxy's public URL in the
normal layout) and, when it declares terms, a proposal on that same origin: the agent
publishes its terms next to its card, and the proxy reads them from the upstream at the
same path (issue 7 "What to build" 3).
"""

from __future__ import annotations

import base64
import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization

from a2a_interview.cardsig import generate_key, private_jwk, public_jwk
from a2a_interview.spec import INTERVIEW_URI
from needs import DATA

TERMS_URI = "https://agentsow.com/extensions/a2a-terms/v1"
PROPOSAL_FILE = DATA / "stonework-standing-proposal.json"
PROPOSAL_PATH = "/terms/reconcile-statement.sow.json"
PROPOSAL_DIGEST = "sha256:e8bba098630d3635b0bd8479de1c1efac9dbacbe22ecace54354264ac6da5648"


def interview_entry() -> dict[str, Any]:
    # interview §3 rule 1, the draft's own example: required is false, spelled out.
    return {
        "uri": INTERVIEW_URI,
        "description": "The five questions, answered from declared documents",
        "required": False,
    }


def terms_entry(origin: str) -> dict[str, Any]:
    return {
        "uri": TERMS_URI,
        "description": "Published terms: signed Agent SoW standing proposals",
        "params": {
            "sow_spec": "0.18.0-draft",
            "proposals": [
                {
                    "url": origin + PROPOSAL_PATH,
                    "digest": PROPOSAL_DIGEST,
                    "sow": "sow_hyrq5jthv0zn7h64",
                    "offering": "reconcile-statement",
                }
            ],
        },
    }


def card(
    origin: str, *, declare: bool = True, terms: bool = True, legacy: bool = False
) -> dict[str, Any]:
    """A 1.0 card for the JS agent (its JSON-RPC at /a2a/jsonrpc, REST at /a2a/rest);
    ``legacy`` adds the 0.3 JSON-RPC interface the SDK's compatibility layer needs."""
    extensions = []
    if declare:
        extensions.append(interview_entry())
    if terms:
        extensions.append(terms_entry(origin))
    capabilities: dict[str, Any] = {"streaming": True, "pushNotifications": False}
    if extensions:
        capabilities["extensions"] = extensions
    interfaces = [
        {"url": origin + "/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": origin + "/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    if legacy:
        interfaces.append(
            {"url": origin + "/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        )
    return {
        "name": "JS Echo",
        "description": "A stock @a2a-js/sdk agent that says back what it is told",
        "provider": {"organization": "Interop Tests", "url": "https://interop.example"},
        "version": "1.0.0",
        "supportedInterfaces": interfaces,
        "capabilities": capabilities,
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "reconcile-statement",
                "name": "Reconcile a statement",
                "description": "Matches a bank statement against the ledger.",
                "tags": ["bookkeeping"],
            },
            {"id": "echo", "name": "Echo", "description": "Says it back", "tags": ["echo"]},
        ],
    }


def sign_js(node: str, js: Path, card_json: dict[str, Any], key: Path, kid: str,
            tmp: Path) -> dict[str, Any]:  # fmt: skip
    """``card_json`` signed by ``@a2a-js/sdk``'s ``generateAgentCardSignature``."""
    source = tmp / "unsigned-card.json"
    source.write_text(json.dumps(card_json), "utf-8")
    done = subprocess.run(
        [node, str(js / "sign.mjs"), str(source), str(key), kid],
        capture_output=True, text=True, timeout=60, check=False, cwd=js,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    signed: dict[str, Any] = json.loads(done.stdout)
    return signed


def sign_python(card_json: dict[str, Any], private_pem: bytes, kid: str,
                *, jku_null: bool = False) -> dict[str, Any]:  # fmt: skip
    """``card_json`` signed by ``a2a-sdk`` 1.x's ``create_agent_card_signer``, the
    signature added to the card JSON as authored (what a publisher of a JSON card does).
    ``jku_null`` passes ``jku=None``, which the SDK writes as ``"jku": null``."""
    from a2a.types import AgentCard
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import ParseDict

    header: dict[str, Any] = {"alg": "ES256", "kid": kid, "typ": "JOSE"}
    if jku_null:
        header["jku"] = None
    signer = create_agent_card_signer(private_pem, header)  # type: ignore[arg-type]
    proto = signer(ParseDict(card_json, AgentCard()))
    item = proto.signatures[-1]
    out = copy.deepcopy(card_json)
    out["signatures"] = [{"protected": item.protected, "signature": item.signature}]
    return out


def protected_header(signed: dict[str, Any]) -> dict[str, Any]:
    text = signed["signatures"][-1]["protected"]
    header: dict[str, Any] = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    return header


class Keys:
    """A fresh ES256 key in the forms the signers and `card verify --jwks` take."""

    def __init__(self, tmp: Path) -> None:
        key = generate_key("ES256")
        self.kid = "interop-es256"
        self.jwk = tmp / "private.jwk.json"
        self.jwk.write_text(json.dumps(private_jwk(key, self.kid, "ES256")))
        self.jwks = tmp / "jwks.json"
        self.jwks.write_text(json.dumps({"keys": [public_jwk(key, self.kid, "ES256")]}))
        self.pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
