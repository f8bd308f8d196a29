"""Keys that cost too much and work that outlives its run (PROFILE §6.2, §7).

An agent's JWK Set of RSA keys with 3,071-bit public exponents made every check cost
thousands of modular squarings: 16 signatures under 64 such keys kept a verifier's
abandoned thread computing 15 s of CPU past ``--deadline 5``. Two rules close it:
``jose`` refuses an RSA key outside the sizes RFC 7518 and common practice use (a modulus
of 2048 to 8192 bits, an odd exponent from 3 to 2^32 - 1; D-VERIFY-55), so one check
costs what a common key costs; and ``cardsig.verify_card`` stops when the run that asked
gives up, asked before every key and check (D-VERIFY-56), so no work outlives its run.
The contract is checked whole: ``verify --deadline 5`` against the hostile agent on
loopback ends within 7 s of wall-clock and of CPU (PROFILE §7: the deadline bounds the
run, CPU work included). A bound of the product's contract, not a benchmark.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import re
import resource
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from a2a_interview import reference
from a2a_interview.card import jwk_to_public_key, public_jwk, verify_card
from a2a_interview.card._jose import key_algs
from a2a_interview.card._sig import STOPPED
from a2a_interview.errors import KeyFormatError, SignatureError
from a2a_interview.verifier.state import off_loop
from agents import Call, Reply, Wrap, honest
from support.cli import COMMAND
from support.servers import serve


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _uint(value: int) -> str:
    return _b64(value.to_bytes((value.bit_length() + 7) // 8))


def _odd(bits: int, rng: random.Random) -> int:
    """An odd number of exactly ``bits`` bits."""
    return rng.getrandbits(bits) | (1 << (bits - 1)) | 1


def _rsa(n: int, e: int) -> dict[str, str]:
    return {"kty": "RSA", "n": _uint(n), "e": _uint(e)}


RNG = random.Random(7)
N2048 = _odd(2048, RNG)


# --- the key bounds (D-VERIFY-55) -----------------------------------------------------


@pytest.mark.parametrize(
    ("n", "e", "message"),
    [
        (_odd(3072, RNG), _odd(3071, RNG), "exponent"),  # the finding's key
        (N2048, 2**32 + 1, "exponent"),  # one bit past the bound, odd
        (N2048, 2**64 + 1, "exponent"),
        (N2048, 65536, "exponent"),  # even
        (N2048, 1, "exponent"),
        (_odd(8193, RNG), 65537, "longer than 8192"),
        (_odd(16384, RNG), 3, "longer than 8192"),
        (_odd(2047, RNG), 65537, "shorter than 2048"),
    ],
    ids=["e-3071-bits", "e-2^32+1", "e-2^64+1", "e-even", "e-1", "n-8193", "n-16384", "n-2047"],
)
def test_an_rsa_key_outside_common_sizes_is_refused(n: int, e: int, message: str) -> None:
    with pytest.raises(KeyFormatError, match=message):
        jwk_to_public_key(_rsa(n, e))


@pytest.mark.parametrize(
    ("n", "e"),
    [(N2048, 3), (N2048, 65537), (N2048, 2**32 - 1), (_odd(8192, RNG), 65537)],
    ids=["e-3", "e-65537", "e-2^32-1", "n-8192"],
)
def test_an_rsa_key_at_the_bounds_is_used(n: int, e: int) -> None:
    key = jwk_to_public_key(_rsa(n, e))
    assert key_algs(key) == {"RS256", "PS256"}


def test_a_library_key_outside_the_bounds_serves_no_algorithm() -> None:
    # key_algs holds the same rule for keys that never were JWKs (a PEM, a cryptography
    # object): what it refuses is neither signed with nor verified against.
    big = rsa.RSAPublicNumbers(_odd(3071, RNG), _odd(3072, RNG)).public_key()
    assert key_algs(big) == frozenset()
    fine = rsa.RSAPublicNumbers(65537, N2048).public_key()
    assert key_algs(fine) == {"RS256", "PS256"}


# --- the hostile agent -------------------------------------------------------------------

SIGNATURES = 16
KEYS = 64


def _hostile_jwks(rng: random.Random) -> list[dict[str, str]]:
    return [_rsa(_odd(3072, rng), _odd(3071, rng)) for _ in range(KEYS)]


def _rs256_signatures(jku: str, count: int) -> list[dict[str, str]]:
    protected = _b64(json.dumps({"alg": "RS256", "jku": jku}).encode())
    # 384 octets, less than any 3072-bit modulus: each one is computed, then fails.
    return [{"protected": protected, "signature": _b64((1 << 3000).to_bytes(384))}] * count


def hostile(origin: str) -> Any:
    """The reference agent whose card carries 16 RS256 signatures naming its own JWKS,
    which lists 64 RSA keys of 3072 bits with 3,071-bit exponents, no ``kid``."""
    jku = origin + reference.JWKS_PATH

    def tamper(card: dict[str, Any]) -> dict[str, Any]:
        return {**card, "signatures": _rs256_signatures(jku, SIGNATURES)}

    body = json.dumps({"keys": _hostile_jwks(random.Random(3))}).encode()

    def jwks(call: Call) -> Reply | None:
        if call.path == reference.JWKS_PATH:
            return Reply(200, [(b"content-type", b"application/json")], body)
        return None

    return Wrap(honest(origin, tamper=tamper), on_request=jwks)


def test_verify_with_a_deadline_ends_within_it_cpu_included() -> None:
    """PROFILE §7: ``--deadline`` bounds the whole run, CPU work included. Before, the
    record came at 5.07 s and the process computed on to 21.5 s (15 s of CPU)."""
    with serve(hostile) as origin:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run(
            [*COMMAND, "verify", origin, "--json", "--churn-delay", "0", "--deadline", "5"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert wall < 7 and cpu < 7, (wall, cpu, done.stderr[-500:])
    document = json.loads(done.stdout)
    assert document["agent"]["card_signature"]["status"] != "verified"
    refused = [a for a in document["advisories"] if a["reason"] == "keys_refused"]
    assert [a["value"] for a in refused] == [KEYS], document["advisories"]
    assert "exponent" in refused[0]["detail"]


# --- work that outlives its run (D-VERIFY-56) ------------------------------------------


def _rs256_card(count: int) -> dict[str, Any]:
    card = reference.unsigned_card("https://stonework.example")
    return {**card, "signatures": _rs256_signatures("https://stonework.example/jwks", count)}


def _real_rsa_jwks(count: int) -> list[dict[str, str]]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {k: v for k, v in public_jwk(key, kid="k").items() if k != "kid"}  # tried for all
    return [jwk] * count


def test_verify_card_asks_to_go_on_before_every_key_and_check() -> None:
    asked = [0]

    def never() -> bool:
        asked[0] += 1
        return False

    report = verify_card(_rs256_card(4), _real_rsa_jwks(8), stop=never)
    assert report.status == "invalid"
    assert asked[0] >= 4 * 8 * 2  # each key read, each check made, of every signature


def test_verify_card_stops_as_soon_as_told() -> None:
    asked = [0]

    def after_three() -> bool:
        asked[0] += 1
        return asked[0] > 3

    with pytest.raises(SignatureError, match=re.escape(STOPPED)):
        verify_card(_rs256_card(SIGNATURES), _real_rsa_jwks(KEYS), stop=after_three)
    assert asked[0] == 4


@pytest.mark.anyio
async def test_work_abandoned_by_its_run_stops() -> None:
    # verifier/state.py off_loop: a run cancelled (its deadline) leaves the thread, and the
    # thread's stop() turns true, so it ends at its next step instead of computing on.
    started, ended = threading.Event(), threading.Event()
    steps = [0]

    def work(stop: Callable[[], bool]) -> None:
        started.set()
        while not stop() and steps[0] < 100_000:  # the bound only guards the test
            steps[0] += 1
            time.sleep(0.001)
        ended.set()

    with anyio.move_on_after(10) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(off_loop, work, stoppable=True))
            await anyio.to_thread.run_sync(started.wait, 10)
            group.cancel_scope.cancel()
    assert not scope.cancelled_caught
    assert await anyio.to_thread.run_sync(ended.wait, 10)
    assert steps[0] < 100_000  # it stopped because it was told, not at its bound
