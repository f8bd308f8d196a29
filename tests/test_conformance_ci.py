"""The conformance kit's CI recipe (docs/conformance.md "In CI", examples/ci/conformance.sh,
D-CONF-13), run as a user's CI runs it: exit 0 against the honest agent, exit 1 against a
serving rogue, 3 when the agent never serves its card, 2 without a URL; the page shows
the script as the file holds it, and its Actions job parses and runs that script with the
command the page's "Running it" names (D-CLI-26's exit codes)."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from needs import ROOT, binary
from support.ports import free_port

SCRIPT = ROOT / "examples" / "ci" / "conformance.sh"
PAGE = ROOT / "docs" / "conformance.md"
BIN = Path(sys.executable).parent
SERVE = ROOT / "tests" / "serve_agent.py"


def _blocks(section: str) -> list[tuple[str, str]]:
    """The fenced blocks (language, text) of one section of the page."""
    page = PAGE.read_text("utf-8")
    start = page.index(f"\n{section}\n") + 1
    after = re.search(r"\n#{2,3} ", page[start:])
    text = page[start : start + after.start()] if after else page[start:]
    return re.findall(r"```(\w+)\n(.*?)```", text, re.S)


def _job() -> dict[str, Any]:
    [yml] = [text for lang, text in _blocks("### In CI") if lang == "yaml"]
    workflow = yaml.safe_load(yml)
    assert isinstance(workflow, dict) and list(workflow) == ["conformance"]
    job: dict[str, Any] = workflow["conformance"]
    return job


def _recipe(out: Path, *args: str, wait: int = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "OUT": str(out), "WAIT": str(wait)}  # fmt: skip
    return subprocess.run(
        [binary("sh", "any POSIX shell"), str(SCRIPT), *args],
        capture_output=True, text=True, env=env, timeout=180, check=False,
    )  # fmt: skip


def _failures(junit: Path) -> dict[str, int]:
    """Failures in the kit's JUnit report, by type (``draft`` or ``profile``)."""
    counts = {"draft": 0, "profile": 0}
    for failure in ET.parse(junit).getroot().iter("failure"):
        counts[failure.get("type", "draft")] += 1
    return counts


def test_the_page_shows_the_script_as_the_file_holds_it() -> None:
    """D-CONF-13: the recipe on the page is the file the tests run, byte for byte."""
    shown = [text for lang, text in _blocks("### In CI") if lang == "sh"]
    assert shown == [SCRIPT.read_text("utf-8")]


def test_the_actions_job_parses_and_runs_the_script_with_the_pages_command() -> None:
    """D-CONF-13, D-EXTRAS-4: the job installs as the other CI examples do, runs the
    script on the URL the page's "Running it" gives, and keeps its report whatever the
    outcome; the script runs the command "Running it" names."""
    steps = _job()["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    example = (ROOT / "examples" / "ci" / "github-actions.yml").read_text("utf-8")
    [install] = [r for r in runs if r.startswith("pip install")]
    assert f"run: {install}\n" in example  # the same line as examples/ci/github-actions.yml
    [step] = [s for s in steps if "conformance.sh" in s.get("run", "")]
    sh, path, url, *command = shlex.split(step["run"])
    assert (sh, Path(path).name) == ("sh", SCRIPT.name)
    assert command and command[-2:] == ["--port", url.rsplit(":", 1)[1]]
    [running] = [text for lang, text in _blocks("## Running it") if lang == "sh"]
    assert f"a2a-interview conformance {url}/ --junit conformance.xml" in running
    assert 'a2a-interview conformance "$url" --junit "$out/conformance.xml"' in (
        SCRIPT.read_text("utf-8")
    )
    [upload] = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload["if"] == "always()"
    assert upload["with"]["path"].rstrip("/") == step["env"]["OUT"]


def test_the_script_passes_the_honest_agent(tmp_path: Path) -> None:
    """D-CONF-13: exit 0 when every draft-level call passes; profile-level differences
    (the honest agent does not negotiate versions, PROFILE §3.10) are in the report but
    fail nothing."""
    port = free_port()
    out = tmp_path / "results"
    agent = [sys.executable, str(SERVE), "honest", str(port)]
    done = _recipe(out, f"http://127.0.0.1:{port}", *agent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Draft level: PASS" in done.stdout
    assert _failures(out / "conformance.xml")["draft"] == 0
    assert (out / "agent.log").exists()
    with socket.socket() as sock:  # the agent was stopped with the script: none listens
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine
        sock.bind(("127.0.0.1", port))
        sock.listen()


@pytest.mark.parametrize("rogue", ["a wrong value", "no activation echo"])
def test_the_script_fails_a_rogue(rogue: str, tmp_path: Path) -> None:
    """D-CONF-13: a rogue that breaks a draft-level rule (interview §5, §3 rule 2) fails
    the build, exit 1, with the failure in the JUnit report."""
    port = free_port()
    out = tmp_path / "results"
    agent = [sys.executable, str(SERVE), f"rogue:{rogue}", str(port)]
    done = _recipe(out, f"http://127.0.0.1:{port}", *agent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "a draft-level failure" in done.stderr
    assert _failures(out / "conformance.xml")["draft"] >= 1


def test_an_agent_that_never_serves_its_card_is_exit_3(tmp_path: Path) -> None:
    """D-CONF-13: the kit's exit 3 (unreachable) also when the agent never came up."""
    out = tmp_path / "results"
    command = [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(1)"]
    done = _recipe(out, f"http://127.0.0.1:{free_port()}", *command, wait=30)
    assert done.returncode == 3
    assert "exited before serving" in done.stderr
    assert "boom" in (out / "agent.log").read_text()
    assert not (out / "conformance.xml").exists()


def test_no_url_is_a_usage_error_exit_2(tmp_path: Path) -> None:
    """D-CONF-13: the kit's exit 2 for usage."""
    done = _recipe(tmp_path / "r")
    assert done.returncode == 2
    assert "usage:" in done.stderr
