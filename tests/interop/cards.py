"""The cards the interop suite's agents serve, and the two SDK signers run on them.

A card names where clients reach the agent (``origin``: the proxy's public URL in the
normal layout) and, when it declares terms, a proposal on that same origin: the agent
publishes its terms next to its card, and the proxy reads them from the upstream at the
same path (D-PROXY-21).
"""

from __future__ import annotations

import base64
import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization

from a2a_interview.card import generate_key, private_jwk, public_jwk
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


# -- the SDKs' own verifiers ---------------------------------------------------------


def verify_js(node: str, js: Path, cards: list[dict[str, Any]], jwks: Path,
              tmp: Path) -> list[bool]:  # fmt: skip
    """Whether ``@a2a-js/sdk``'s ``verifyAgentCardSignature`` accepts each card (one node
    process for the lot), the key looked up by kid in ``jwks``."""
    source = tmp / "cards-to-verify.json"
    source.write_text(json.dumps(cards), "utf-8")
    done = subprocess.run(
        [node, str(js / "verify.mjs"), str(source), str(jwks)],
        capture_output=True, text=True, timeout=120, check=False, cwd=js,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results: list[bool] = json.loads(done.stdout)
    assert len(results) == len(cards)
    return results


def verify_python(card_json: dict[str, Any], jwks: dict[str, Any]) -> bool:
    """Whether ``a2a-sdk`` 1.x accepts the card as its client does: the card resolver's
    ``parse_agent_card``, then ``create_signature_verifier`` with the key found by kid."""
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
    from google.protobuf.json_format import ParseError
    from jwt import PyJWK

    def key(kid: str | None, jku: str | None) -> PyJWK:
        return PyJWK(next(k for k in jwks["keys"] if k["kid"] == kid))

    try:
        parsed = parse_agent_card(copy.deepcopy(card_json))
        create_signature_verifier(key, sorted(ALGS))(parsed)
    except (SignatureVerificationError, ParseError):
        return False
    return True


# -- the variety set: cards as publishers write them -----------------------------------

ALGS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")


class KeyRing:
    """One key per allowlisted algorithm (PROFILE §6.2), kid ``interop-ALG``: the private
    JWK files ``card sign --key`` and ``proxy --card-key`` take, and one JWK Set."""

    def __init__(self, tmp: Path) -> None:
        public = []
        self.files: dict[str, Path] = {}
        for alg in ALGS:
            key = generate_key(alg)
            kid = self.kid(alg)
            self.files[alg] = tmp / f"private-{alg}.jwk.json"
            self.files[alg].write_text(json.dumps(private_jwk(key, kid, alg)))
            public.append(public_jwk(key, kid, alg))
        self.jwks = {"keys": public}
        self.jwks_file = tmp / "jwks-all.json"
        self.jwks_file.write_text(json.dumps(self.jwks))

    @staticmethod
    def kid(alg: str) -> str:
        return f"interop-{alg.lower()}"


def _security(card: dict[str, Any]) -> None:
    card["securitySchemes"] = {
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key",
                                         "description": ""}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
        "oauth": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "https://auth.example/authorize",
            "tokenUrl": "https://auth.example/token",
            "scopes": {"read": "Read", "write": ""},
            "pkceRequired": False,
        }}}},
        "oidc": {"openIdConnectSecurityScheme": {
            "openIdConnectUrl": "https://auth.example/.well-known/openid-configuration"}},
        "mtls": {"mtlsSecurityScheme": {"description": "client certificates"}},
    }  # fmt: skip
    card["securityRequirements"] = [
        {"schemes": {"bearer": {"list": []}}},
        {"schemes": {"oauth": {"list": ["read", "write"]}, "key": {}}},
    ]
    card["skills"][0]["securityRequirements"] = [{"schemes": {"mtls": {}}}]


def _sdk_served(origin: str) -> dict[str, Any]:
    """The card an a2a-sdk 1.x host serves for a 1.0 card that also lists a 0.3
    interface: its 0.3 compatibility members merged in (``agent_card_to_dict``)."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.types import AgentCard
    from google.protobuf.json_format import ParseDict

    value = card(origin, terms=False, legacy=True)
    _security(value)
    served: dict[str, Any] = json.loads(
        json.dumps(agent_card_to_dict(ParseDict(value, AgentCard())))
    )
    return served


def variety(origin: str) -> dict[str, dict[str, Any]]:
    """Cards as publishers write them, each named by its case (and the name in its
    ``name`` member, so a test can tell them apart through a proxy): ``"required":
    false`` spelled out or left out, the proto3 defaults (``false``, ``0``, ``""``),
    empty values, members the 1.0 card does not define, non-ASCII, 300 skills, every
    security scheme, extension params, a 0.3 interface, a card as a2a-sdk serves it."""
    cards: dict[str, dict[str, Any]] = {}

    def add(name: str, value: dict[str, Any]) -> None:
        value["name"] = f"{value['name']} [{name}]"
        cards[name] = value

    base = card(origin, terms=False)
    add("required false", copy.deepcopy(base))

    value = copy.deepcopy(base)
    del value["capabilities"]["extensions"][0]["required"]
    add("required left out", value)

    add("undeclared", card(origin, declare=False, terms=False))
    add("with terms", card(origin))

    value = copy.deepcopy(base)
    value["capabilities"].update(streaming=False, pushNotifications=False,
                                 extendedAgentCard=False)  # fmt: skip
    add("every capability false", value)

    value = copy.deepcopy(base)
    value["description"] = ""
    value["documentationUrl"] = ""
    value["provider"]["url"] = ""
    value["defaultOutputModes"] = []
    value["skills"][0].update(tags=[], examples=[], inputModes=[""])
    value["capabilities"]["extensions"][0]["description"] = ""
    value["capabilities"]["extensions"].append({"uri": "urn:x-empty", "params": {}})
    add("empty strings and lists", value)

    value = copy.deepcopy(base)
    value["x-vendor"] = {"tier": "gold", "since": 2024}
    value["url"] = origin + "/a2a/jsonrpc"  # a 0.3 member on a 1.0 card
    value["capabilities"]["stateTransitionHistory"] = True
    value["skills"][1]["x-note"] = "not in the 1.0 card"
    value["supportedInterfaces"][0]["x-weight"] = 1
    add("unknown members", value)

    value = copy.deepcopy(base)
    value["name"] = 'Agent é 日本 🚀 \u2028 "quoted" \\ tab\t'
    value["description"] = "Ünïcödé: ﬁ, e\u0301, 𝄞, \u0007"
    value["skills"][0]["name"] = "Réconcilier un relevé"
    value["skills"][0]["tags"] = ["comptabilité", "会計"]
    add("non-ASCII and escapes", value)

    value = copy.deepcopy(base)
    value["skills"] = [
        {"id": f"skill-{i:03d}", "name": f"Skill {i}", "description": f"Does thing {i}",
         "tags": [f"t{i % 7}"], "examples": [f"do {i}"] if i % 3 else []}
        for i in range(300)
    ]  # fmt: skip
    add("300 skills", value)

    value = copy.deepcopy(base)
    _security(value)
    add("security schemes", value)

    value = copy.deepcopy(base)
    value["capabilities"]["extensions"].append({
        "uri": "https://vendor.example/ext/v2",
        "description": "params of every JSON kind",
        "required": True,
        "params": {"zero": 0, "no": False, "yes": True, "half": 1.5, "neg": -3,
                   "big": 9007199254740991, "empty": "", "list": [1, "", None, {}],
                   "nested": {"deep": {"deeper": {"x": None, "y": [0]}}}, "none": None},
    })  # fmt: skip
    add("extension params", value)

    add("0.3 interface listed", card(origin, terms=False, legacy=True))
    add("as a2a-sdk serves it", _sdk_served(origin))

    value = copy.deepcopy(base)
    value["iconUrl"] = origin + "/icon.png"
    value["documentationUrl"] = origin + "/docs"
    value["supportedInterfaces"][0]["tenant"] = "acme"
    add("icon, docs and tenant", value)

    value = copy.deepcopy(base)
    value["supported_interfaces"] = value.pop("supportedInterfaces")
    value["default_input_modes"] = value.pop("defaultInputModes")
    add("proto field names", value)

    value = copy.deepcopy(base)
    value["description"] = "long " * 4000
    add("long description", value)

    return cards
