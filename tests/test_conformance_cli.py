"""``a2a-interview conformance``: the per-rule table, JUnit XML and exit codes
(D-CLI-26, D-CLI-27), over real loopback HTTP; and the serving rogues of the zoo each
failing the runner on exactly the rule it breaks (docs/conformance.md's table,
D-CONF-8).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import anyio
import httpx
import pytest

from a2a_interview.cli import main
from a2a_interview.conformance.runner import Result, run_live
from agents import honest, params_first
from conformance_rogues import FACTORIES
from support.servers import closed_port_url, serve

ROOT = Path(__file__).resolve().parent.parent
SERVING = ROOT / "conformance" / "vectors" / "serving"
URI = "https://agentsow.com/extensions/a2a-interview/v1"
# The honest agent answers every A2A-Version (it does not negotiate): PROFILE §3.10
# differences, profile level only.
VERSION_CALLS = {"version-absent", "version-unknown", "version-rest-unknown"}


def _run(factory: Callable[[str], Any]) -> list[Result]:
    async def go(origin: str) -> list[Result]:
        async with httpx.AsyncClient(timeout=10) as client:
            _, results = await run_live(client, origin)
        return results

    with serve(factory) as origin:
        return anyio.run(go, origin)


def _failed(results: list[Result]) -> dict[str, set[str]]:
    """Draft-level failures: rule -> the checks that failed."""
    out: dict[str, set[str]] = {}
    for r in results:
        for p in r.problems:
            if p.level == "draft":
                out.setdefault(r.rule, set()).add(p.check)
    return out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([], "give a URL"),
        (["http://x.test", "--vectors", "."], "not both"),
        (["--vectors", "."], "needs --target"),
        (["--target", "http://x.test", "http://x.test"], "goes with --vectors"),
        (["ftp://x.test"], "not an http"),
        (["--vectors", "no-such-folder", "--target", "http://x.test"], "not a folder"),
        (["http://x.test", "--timeout", "0"], "positive"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """D-CLI-26: bad arguments are one line, exit 2, nothing sent."""
    assert main(["conformance", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_an_unreachable_server_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    """D-CLI-26: nothing listening is exit 3, one line."""
    assert main(["conformance", closed_port_url()]) == 3
    assert "unreachable" in capsys.readouterr().err


def test_the_honest_agent_passes_with_a_table_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """D-CLI-27: exit 0 when every draft-level call passes; the table per rule; JUnit XML
    with one case per call, profile-level differences as failures of type profile."""
    junit = tmp_path / "conformance.xml"
    with serve(honest) as origin:
        code = main(["conformance", origin, "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Conformance by rule" in out and "Draft level: PASS" in out
    suite = ET.fromstring(junit.read_bytes())
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests", "0")) > 50
    failing = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failing == VERSION_CALLS
    assert {c.find("failure").get("type") for c in cases if c.find("failure") is not None} == {  # type: ignore[union-attr]
        "profile"
    }


# mode -> (the rules it breaks at draft level, the checks that fail there)
ROGUES: dict[str, tuple[set[str], set[str]]] = {
    "answers without activation": ({"interview §3 rule 2; PROFILE §3.3"}, {"error_code"}),
    "no activation echo": (
        {"interview §5 rule 2; PROFILE §4.3", "interview §4 rule 3; PROFILE §4.4",
         "interview §6 rule 1; PROFILE §3.4", "interview §3 rule 2; PROFILE §3.2"}, {"echo"}),
    "a wrong value": (
        {"interview §5 rule 2; PROFILE §4.3", "interview §3 rule 2; PROFILE §3.2"}, {"answer"}),
    "a member that resolves nowhere": ({"interview §5 rule 2; PROFILE §4.3"}, {"answer"}),
    "an uncommitted proposal url": (
        {"interview §5 rule 2; PROFILE §4.3", "interview §4 rule 3; PROFILE §4.4"}, {"answer"}),
    "an extra member in the answer": ({"interview §5 rule 2; PROFILE §4.3"}, {"answer"}),
    "terms hidden": (
        {"interview §5 rule 2; PROFILE §4.3", "interview §4 rule 3; PROFILE §4.4"},
        {"answer", "body"}),
    "refusing a declared question": (
        {"interview §5 rule 2; PROFILE §4.3", "interview §4 rule 3; PROFILE §4.4"},
        {"answer", "body"}),
    "a refusal that says more": ({"interview §6 rule 1; PROFILE §3.4"}, {"body"}),
    "a selector folded for case": ({"interview §4 rule 3; PROFILE §4.4"}, {"body"}),
    "answers that change between asks": ({"interview §4 rule 1"}, {"determinism"}),
    "interfaces that answer differently": ({"interview §4 rule 1"}, {"determinism"}),
}  # fmt: skip


def test_every_rogue_has_its_rules() -> None:
    assert sorted(ROGUES) == sorted(FACTORIES)


@pytest.mark.parametrize("mode", sorted(ROGUES))
def test_each_rogue_fails_on_exactly_the_rule_it_breaks(mode: str) -> None:
    """D-CONF-8: a rogue serving layer fails the runner at draft level on the rules it
    breaks and on no other rule (docs/conformance.md lists them)."""
    rules, checks = ROGUES[mode]
    failed = _failed(_run(FACTORIES[mode]))
    assert set(failed) == rules, failed
    assert set().union(*failed.values()) == checks


def test_a_host_checking_params_first_passes() -> None:
    """PROFILE §3.3, §7: the inactive calls carry ``"params": {}``, so a host that checks
    params before the method name (as @a2a-js/sdk does) still gives -32601."""
    assert _failed(_run(lambda o: params_first(honest(o)))) == {}


def test_a_draft_failure_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    """D-CLI-26: a draft-level failure is exit 1, named in the output."""
    with serve(FACTORIES["no activation echo"]) as origin:
        assert main(["conformance", origin]) == 1
    out = capsys.readouterr().out
    assert "Draft level: FAIL" in out and "[draft] echo" in out


def test_vectors_against_a_command_target(tmp_path: Path) -> None:
    """D-CLI-27: --vectors with a command: started once per file on a free port, its
    {card}, {proposals} and {port} filled in; the project's own serve command (the
    middleware on uvicorn) passes every call but the amended PROFILE §3.10 ones."""
    one = tmp_path / "vectors"
    one.mkdir()
    (one / "card-1.0.json").write_bytes((SERVING / "card-1.0.json").read_bytes())
    script = ROOT / "tests" / "conformance_serve.py"
    command = f"{sys.executable} {script} {{card}} {{proposals}} {{port}}"
    junit = tmp_path / "j.xml"
    assert main(["conformance", "--vectors", str(one), "--target", command,
                 "--junit", str(junit)]) == 0  # fmt: skip
    suite = ET.fromstring(junit.read_bytes())
    assert suite.get("failures") == "0"
    assert int(suite.get("tests", "0")) > 50


def _readme_reader() -> Any:
    text = (ROOT / "conformance" / "README.md").read_text(encoding="utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {"__name__": "reader"}
    exec(compile(code, "conformance/README.md", "exec"), namespace)
    return namespace["run"]


@pytest.mark.parametrize("name", ["card-1.0.json", "card-no-terms.json"])
def test_the_readme_reference_reader_passes_the_middleware(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """D-CONF-9: the reference reader of conformance/README.md (standard library only,
    every byte) runs as written, and the middleware serving the file's declarations
    passes it; the reader fails a call whose bytes differ."""
    import json

    from a2a_interview.declarations import load
    from a2a_interview.server.asgi import InterviewMiddleware
    from conformance_serve import host

    run = _readme_reader()
    path = SERVING / name
    vector = json.loads(path.read_bytes())
    files = {p["url"]: p["text"].encode() for p in vector["declarations"]["proposals"]}
    declarations = load(vector["declarations"]["card"].encode(), files)
    changed = tmp_path / name
    body = vector["calls"][0]["response"]["body"]
    vector["calls"][0]["response"]["body"] = body.replace('"declared":true', '"declared":false')
    changed.write_text(json.dumps(vector), encoding="utf-8")
    with serve(lambda _: InterviewMiddleware(host, declarations)) as origin:
        assert run(str(path), origin) == 0, capsys.readouterr().out
        assert f"{len(vector['calls'])}/{len(vector['calls'])} passed" in capsys.readouterr().out
        assert run(str(changed), origin) == 1
    assert "FAIL answer-identity" in capsys.readouterr().out


def test_a_card_without_the_interview_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """D-CLI-26: a card the kit cannot test (no interview declared) is one line, exit 2."""

    def undeclared(card: dict[str, Any]) -> dict[str, Any]:
        extensions = card["capabilities"]["extensions"]
        card["capabilities"]["extensions"] = [e for e in extensions if e["uri"] != URI]
        return card

    with serve(lambda o: honest(o, edit_card=undeclared, self_check=False)) as origin:
        assert main(["conformance", origin]) == 2
    err = capsys.readouterr().err
    assert "does not declare the interview" in err and "Traceback" not in err
