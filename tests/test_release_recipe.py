"""Install lines that work today, and the release that makes `pip install a2a-interview`
work (docs/decisions.md D-EXTRAS-4, D-EXTRAS-5): the README installs from the repository
until a release is on the index; examples/ci/release.yml builds, checks the metadata,
tries the wheel alone and publishes on a version tag; pyproject.toml names its URLs."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import yaml

from needs import ROOT

RELEASE = ROOT / "examples" / "ci" / "release.yml"


def _release() -> dict[Any, Any]:
    workflow = yaml.safe_load(RELEASE.read_text("utf-8"))
    assert isinstance(workflow, dict)
    return workflow


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_the_release_runs_on_a_version_tag_only() -> None:
    workflow = _release()
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}


def test_the_release_builds_checks_tries_then_publishes() -> None:
    jobs = _release()["jobs"]
    build = _runs(jobs["build"])
    assert "python -m build" in build
    assert "twine check --strict dist/*" in build
    assert '"v$version" = "$GITHUB_REF_NAME"' in build  # the tag names pyproject's version
    assert 'pip" install dist/*.whl' in build and 'a2a-interview" profile 7' in build
    publish = jobs["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing, no token
    uses = [step.get("uses", "") for step in publish["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert "password" not in RELEASE.read_text() and "TOKEN" not in RELEASE.read_text()


def test_pyproject_names_its_urls() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    urls = project["urls"]
    assert "https://agentsow.com/extensions/a2a-interview/v1" in urls.values()
    assert all(url.startswith("https://") for url in urls.values())


def test_the_readme_installs_what_exists() -> None:
    install = (ROOT / "README.md").read_text("utf-8").split("## Install", 1)[1]
    install = install.split("\n## ", 1)[0]
    commands = re.findall(r"^    (pip [^\n#]*?)\s*(?:#.*)?$", install, re.M)
    assert commands[0] == "pip install 'a2a-interview @ git+https://github.com/OWNER/a2a-interview'"
    assert "pip install a2a-interview" not in commands  # finds nothing until a release
    assert "pip install ." in commands
    assert "release.yml" in install
