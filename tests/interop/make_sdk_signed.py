"""Re-make ``tests/data/interop-signed``: the interop card signed by both SDKs' own signers.

Run by hand, from the repo root, after ``make test`` installed ``tests/interop/js``:
``.venv/bin/python tests/interop/make_sdk_signed.py``. A fresh TEST-ONLY key each time;
the tests read whatever this wrote (they never compute what they compare against).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from cards import card, sign_js, sign_python  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402

from a2a_interview.card import generate_key, private_jwk, public_jwk  # noqa: E402
from needs import DATA  # noqa: E402

KID = "sdk-signed-test-es256"


def main() -> None:
    out = DATA / "interop-signed"
    out.mkdir(exist_ok=True)
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    key = generate_key("ES256")
    jwk = out / "TEST-ONLY-private.jwk.json"
    jwk.write_text(json.dumps(private_jwk(key, KID, "ES256"), indent=1) + "\n")
    (out / "jwks.json").write_text(
        json.dumps({"keys": [public_jwk(key, KID, "ES256")]}, indent=1) + "\n"
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    unsigned = card("https://agent.example")
    with tempfile.TemporaryDirectory() as tmp:
        cards = {
            "js-required-false.json": sign_js(node, HERE / "js", unsigned, jwk, KID, Path(tmp)),
            "python-required-false.json": sign_python(unsigned, pem, KID),
            "python-jku-null.json": sign_python(unsigned, pem, KID, jku_null=True),
        }
    for name, signed in cards.items():
        (out / name).write_text(json.dumps(signed, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main()
