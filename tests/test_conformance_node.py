"""An independent implementation passes the conformance vectors (docs/conformance.md,
D-CONF-10): ``tests/conformance_js/server.mjs``, a small Node.js server written from
docs/profile.md and the interview draft alone (plain ``node:http``, its own RFC 8785
canonicalizer), started by the runner once per vector file on a loopback port, passes
every draft-level and profile-level call, the amended PROFILE §3.10 ones included.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from a2a_interview.cli import main
from a2a_interview.spec import QUESTIONS
from needs import binary

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "conformance_js" / "server.mjs"
SERVING = ROOT / "conformance" / "vectors" / "serving"


def _command(node: str, server: Path = SERVER) -> str:
    return f"{node} {server} --card {{card}} --proposals {{proposals}} --port {{port}}"


def test_the_node_implementation_passes_every_vector(tmp_path: Path) -> None:
    """Every call of every published vector, both levels (interview §3-§6, PROFILE
    §3-§5): exit 0 and no JUnit failure at all."""
    node = binary("node", "install Node.js 20 or later")
    junit = tmp_path / "node.xml"
    code = main(["conformance", "--vectors", str(SERVING), "--target", _command(node),
                 "--junit", str(junit)])  # fmt: skip
    suite = ET.fromstring(junit.read_bytes())
    failing = [c.get("name") for c in suite.findall("testcase") if c.find("failure") is not None]
    assert (code, failing) == (0, [])
    calls = sum(len(json.loads(p.read_bytes())["calls"]) for p in SERVING.glob("*.json"))
    # and per file, each answer asked twice and each answer compared across bindings
    # (interview §4 rule 1): one more result of each kind per question
    assert int(suite.get("tests", "0")) == calls + 3 * (len(QUESTIONS) + len(QUESTIONS))


@pytest.mark.parametrize(
    ("wrong", "right", "word"),
    [
        # identity leaving out /version: sound by the draft, not PROFILE §4.3's members
        ('present(card, ["version", "signatures"])', 'present(card, ["signatures"])',
         "DIFFERS"),
        # folding case when matching a selector (interview §4 rule 3)
        ("!ids.includes(skill)", "!ids.map((s) => s.toLowerCase()).includes(skill.toLowerCase())",
         "FAIL"),
    ],
)  # fmt: skip
def test_a_changed_node_implementation_is_caught(
    wrong: str, right: str, word: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runner is not blind to this implementation: one change in its source is
    reported (a draft rule broken: exit 1; a profile choice only: exit 0, reported)."""
    node = binary("node", "install Node.js 20 or later")
    source = SERVER.read_text(encoding="utf-8")
    assert wrong in source
    changed = tmp_path / "server.mjs"
    changed.write_text(source.replace(wrong, right), encoding="utf-8")
    one = tmp_path / "vectors"
    one.mkdir()
    (one / "card-1.0.json").write_bytes((SERVING / "card-1.0.json").read_bytes())
    code = main(["conformance", "--vectors", str(one), "--target", _command(node, changed)])
    out = capsys.readouterr().out
    assert word in out
    assert code == (1 if word == "FAIL" else 0)
