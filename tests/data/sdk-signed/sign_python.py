"""Sign card-*.json with a2a-sdk 1.3's own signer; write python-signed-*.json.

Run from the repository root with the project's venv (a2a-sdk is a dev dependency):

    .venv/bin/python tests/data/sdk-signed/sign_python.py

The card is parsed into the SDK's AgentCard (members the 1.0 messages do not define are
ignored, as the SDK's card resolver does), signed with ``create_agent_card_signer``, and
the new signature is appended to the card JSON *as authored*: what an agent that writes
its card by hand and signs it with the SDK serves.
"""

import json
import pathlib

from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.api_jwk import PyJWK

HERE = pathlib.Path(__file__).parent


def main() -> None:
    key = PyJWK(json.loads((HERE / "TEST-ONLY-py-es256.private.jwk.json").read_text()))
    # jku=None is what a caller without a JWKS URL passes; the SDK emits "jku": null.
    signer = create_agent_card_signer(
        key, {"alg": "ES256", "kid": "py-es256", "jku": None, "typ": "JOSE"}
    )
    for path in sorted(HERE.glob("card-*.json")):
        authored = json.loads(path.read_text())
        card = ParseDict(authored, AgentCard(), ignore_unknown_fields=True)
        signature = MessageToDict(signer(card).signatures[-1])
        out = {**authored, "signatures": [*authored.get("signatures", []), signature]}
        target = HERE / path.name.replace("card-", "python-signed-")
        target.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
