"""Stonework, the bundled reference agent's declarations (see README.txt beside this file).

TEST KEYS ONLY: the proposal seed and the card key here are public test data. They sign
nothing real; never trust what they sign outside tests and demos.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Final

from ..strictjson import JSONObject, loads

ORIGIN: Final = "https://stonework.example"
CARD_KID: Final = "stonework-test-2026"
JWKS_PATH: Final = "/.well-known/jwks.json"
# TEST ONLY: the Agent SoW family's public test seed (the test data of tests/data/README.md).
PROPOSAL_SEED: Final = "SUAEGDPNTWXACIF45CA23BUY36RIMWZXW5LEHSEOK2ONS5JWJ7PBC2EWBA"
PROPOSAL_KEY: Final = "UBMBH4BK6EIHQFVMHLSABFSQXB3JXUFZOXVZQTIERO33AD4HHAI3D7QP"
PROPOSAL_FILES: Final = ("reconcile-statement.sow.json", "flag-exceptions.sow.json")
# The non-ASCII skill id, spelled in NFC (U+00E4). Its NFD spelling is another selector.
NON_ASCII_SKILL: Final = "r\u00e4kna-moms"


def read_bytes(name: str) -> bytes:
    """The bytes of one bundled file."""
    return resources.files(__package__).joinpath(name).read_bytes()


def _rebase(url: Any, origin: str) -> Any:
    if isinstance(url, str) and url.startswith(ORIGIN):
        return origin.rstrip("/") + url[len(ORIGIN) :]
    return url


def unsigned_card(origin: str = ORIGIN) -> JSONObject:
    """The card with its interface and proposal urls moved to ``origin``."""
    card: dict[str, Any] = loads(read_bytes("stonework-card.json"))
    for interface in card["supportedInterfaces"]:
        interface["url"] = _rebase(interface["url"], origin)
    for ext in card["capabilities"]["extensions"]:
        for entry in ext.get("params", {}).get("proposals", []):
            entry["url"] = _rebase(entry["url"], origin)
    return card


def proposals(origin: str = ORIGIN) -> dict[str, bytes]:
    """Each standing proposal's bytes by the url the card commits to."""
    return {f"{origin.rstrip('/')}/terms/{name}": read_bytes(name) for name in PROPOSAL_FILES}


def card_key_jwk() -> JSONObject:
    """TEST ONLY: the card signing key as a private JWK."""
    jwk = loads(read_bytes("TEST-ONLY-card-key.jwk.json"))
    assert isinstance(jwk, dict)
    return jwk


def jwks() -> JSONObject:
    """The public JWK Set a verifier pins or fetches from the card's ``jku``."""
    public = {k: v for k, v in card_key_jwk().items() if k != "d"}
    return {"keys": [public]}


def signed_card(origin: str = ORIGIN, *, jku: bool = True) -> JSONObject:
    """The card moved to ``origin`` and signed with the test key (EdDSA), its ``jku``
    the same-origin JWKS when ``jku`` is true."""
    from ..card import load_private_key, sign_card

    key = load_private_key(read_bytes("TEST-ONLY-card-key.jwk.json"))
    jku_url = origin.rstrip("/") + JWKS_PATH if jku else None
    return sign_card(unsigned_card(origin), key, kid=CARD_KID, alg="EdDSA", jku=jku_url)
