"""``ask`` never hides a failure, and a gRPC-only card is judged without asking.

- PROFILE §3.10 context: a reply that is not a well-formed result (``-32009`` for a
  version the agent refuses, another JSON-RPC error, a status other than 200) raises
  ``NotAnswered``; ``ask`` returns only an answer or the standard refusal, so the
  README's recipe (``result.read.canonical``) never meets ``None``.
- PROFILE §7: a card declaring the interview on no interface able to carry it (gRPC
  only) is ``non_conformant`` under ``declaration`` (``no_interface``), without a re-run;
  ``ask`` says the same (``NoInterface``, exit 1).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from a2a_interview.cli import main
from a2a_interview.errors import InterviewError
from a2a_interview.rpc import rpc_error
from a2a_interview.spec import RPC_VERSION_NOT_SUPPORTED
from a2a_interview.verifier import NoInterface, NotAnswered, ask, verify
from agents import JSONRPC_PATH, Call, Reply, Wrap, honest
from support.servers import serve

pytestmark = pytest.mark.anyio

README = Path(__file__).resolve().parents[1] / "README.md"


def _refuses_the_version(origin: str) -> Any:
    """An agent whose host answers every activated JSON-RPC call ``-32009``."""

    def on_request(call: Call) -> Reply | None:
        if call.method == "POST" and call.path == JSONRPC_PATH and call.activated:
            body = rpc_error(call.body and _id(call.body), RPC_VERSION_NOT_SUPPORTED)
            return Reply(200, [(b"content-type", b"application/json")], body)
        return None

    return Wrap(honest(origin), on_request)


def _id(body: bytes) -> Any:
    import json

    return json.loads(body).get("id")


def _grpc_only(origin: str) -> Wrap:
    def edit(card: dict[str, Any]) -> dict[str, Any]:
        card["supportedInterfaces"] = [
            {"url": origin + "/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        ]
        return card

    return Wrap(honest(origin, edit_card=edit, self_check=False))


async def test_a_version_refusal_raises_not_answered() -> None:
    # Before: ask returned a result with error_code -32009 and canonical None.
    with serve(_refuses_the_version) as origin, pytest.raises(NotAnswered) as caught:
        await ask(origin, "identity")
    failure = caught.value
    assert isinstance(failure, InterviewError)
    assert (failure.code, failure.reason) == ("not_answered", "error_response")
    assert failure.error_code == RPC_VERSION_NOT_SUPPORTED[0]
    assert failure.result.read.canonical is None


def test_the_cli_says_not_answered_with_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(_refuses_the_version) as origin:
        assert main(["ask", origin, "identity"]) == 1
    err = capsys.readouterr().err
    assert "-32009" in err and "[error_response]" in err and "§3.10" in err
    assert "Traceback" not in err


async def test_the_standard_refusal_is_a_result_not_a_failure() -> None:
    with serve(honest) as origin:
        agent = honest(origin)
        result = await ask(origin, "usage", "nothing-like-it")
    assert result.read.canonical == agent.interview.refusal


async def test_a_grpc_only_card_is_non_conformant_without_a_re_run() -> None:
    # Before: the no_interface conflict started the churn re-run (a second card fetch
    # after the delay) although nothing had been asked.
    served: list[Wrap] = []

    def factory(origin: str) -> Wrap:
        served.append(_grpc_only(origin))
        return served[-1]

    with serve(factory) as origin:
        record = (await verify(origin, churn_delay=30)).to_json()
    assert record["outcome"] == "non_conformant"
    assert len(record["runs"]) == 1
    assert served[0].cards == 1
    (conflict,) = record["runs"][0]["conflicts"]
    assert (conflict["check"], conflict["reason"]) == ("declaration", "no_interface")
    assert record["checks"]["declaration"] == "failed"
    assert record["runs"][0]["calls"] == []


async def test_ask_raises_no_interface_for_a_grpc_only_card() -> None:
    with serve(_grpc_only) as origin, pytest.raises(NoInterface):
        await ask(origin, "identity")


def test_the_cli_says_the_same_of_a_grpc_only_card(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(_grpc_only) as origin:
        assert main(["ask", origin, "identity"]) == 1  # before: "not offered", exit 4
        assert main(["verify", origin, "--churn-delay", "0"]) == 1
    err = capsys.readouterr().err
    assert "non_conformant" in err and "[no_interface]" in err and "not offered" not in err


def _ask_recipe() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```$", README.read_text("utf-8"), re.S | re.M)
    (recipe,) = [b for b in blocks if "await ask(" in b]
    return recipe


async def test_the_readme_ask_recipe_runs_against_a_local_agent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The recipe, as written, with the agent's URL made a local one.
    recipe = _ask_recipe()
    assert "NotAnswered" in recipe and "canonical" in recipe
    with serve(honest) as origin:
        body = recipe.replace("https://agent.example", origin)
        source = "async def recipe():\n" + textwrap.indent(body, "    ")
        source += "    return result\n"
        namespace: dict[str, Any] = {}
        exec(compile(source, str(README), "exec"), namespace)
        result = await namespace["recipe"]()
    assert result.read.canonical == honest(origin).interview.answer("terms", "reconcile-statement")
    with serve(_refuses_the_version) as origin:
        body = recipe.replace("https://agent.example", origin)
        source = "async def recipe():\n" + textwrap.indent(body, "    ")
        namespace = {}
        exec(compile(source, str(README), "exec"), namespace)
        await namespace["recipe"]()
    assert "not answered: error_response -32009" in capsys.readouterr().out
