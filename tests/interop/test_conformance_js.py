"""The conformance runner against the proxy in front of a stock ``@a2a-js/sdk`` agent
(docs/conformance.md, D-CONF-6): real processes on loopback ports (node, the proxy, the
COMMAND), every call the runner derives from the card the proxy serves."""

from __future__ import annotations

import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

from cards import card
from processes import js_agent_argv, proxy_argv, running, write_json

from support.cli import COMMAND
from support.ports import free_port


def test_the_proxy_in_front_of_the_js_agent_passes_the_runner(
    node: str, js: Path, tmp_path: Path
) -> None:
    """Every draft-level and profile-level call passes through the proxy (PROFILE
    §3-§5), the JS SDK answering everything the interview leaves to the host."""
    agent_port, proxy_port = free_port(), free_port()
    agent, public = f"http://127.0.0.1:{agent_port}", f"http://127.0.0.1:{proxy_port}"
    card_file = write_json(tmp_path / "card.json", card(public))
    junit = tmp_path / "conformance.xml"
    with (
        running(js_agent_argv(node, js, agent_port, card_file), agent_port, tmp_path),
        running(proxy_argv(agent, proxy_port, "--public-url", public), proxy_port, tmp_path),
    ):
        done = subprocess.run(
            [*COMMAND, "conformance", public, "--junit", str(junit)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    suite = ET.fromstring(junit.read_bytes())
    failing = {
        c.get("name"): c.find("failure").text  # type: ignore[union-attr]
        for c in suite.findall("testcase")
        if c.find("failure") is not None
    }
    assert failing == {}
    assert int(suite.get("tests", "0")) > 50
