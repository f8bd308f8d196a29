"""The stock agents of the matrix (``test_stock_matrix.py``) and the entry points it drives
them through, as real processes on loopback ports, started once per module and only when
a cell needs them.

Agents (made only from each SDK's documented defaults: ``js/stock_agents.mjs``,
``stock_sdk_agents.py``, ``a2a03_agent.py``) run in three processes: one node process for
every ``@a2a-js/sdk`` variant, one Python process for every ``a2a-sdk`` 1.x variant (the
project's integration), and one ``a2a-sdk`` 0.3 process per 0.3 variant. Proxies
(``a2a-interview proxy``, the CLI as a user runs it) start on first use.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from cards import Keys
from processes import START_SECONDS, proxy_argv, running, write_json

from needs import ROOT, binary
from support.cli import COMMAND
from support.ports import free_port, free_ports

HERE = Path(__file__).resolve().parent
CARD = "/.well-known/agent-card.json"
TOKEN_VARIABLE = "STOCK_MATRIX_TOKEN"  # the bearer token's variable (never on a command line)
TOKEN = "stock-matrix-token"
CI_SCRIPT = ROOT / "examples" / "ci" / "verify-agent.sh"

JS_VARIANTS = ("unsigned", "signed", "legacy", "extended", "signed-extended", "grpc-only",
               "grpc-jsonrpc")  # fmt: skip
PY_VARIANTS = ("starlette", "signed", "fastapi", "bearer", "split", "subpath", "mount",
               "extended", "grpc-jsonrpc")  # fmt: skip


def _wait(urls: list[str], log: Path, popen: subprocess.Popen[bytes]) -> None:
    """Until every URL answers 200 (the process's other apps may start a little later)."""
    deadline = time.monotonic() + START_SECONDS
    for url in urls:
        while True:
            if popen.poll() is not None:
                pytest.fail(f"exited {popen.returncode}:\n{log.read_text('utf-8', 'replace')}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"{url} not ready in {START_SECONDS} s")
            time.sleep(0.1)


class _Failed:
    def __init__(self, why: str) -> None:
        self.why = why


class Lab:
    """Every process of the matrix, each started on first use and stopped at the end."""

    def __init__(self, tmp: Path, request: pytest.FixtureRequest) -> None:
        self.tmp, self.request = tmp, request
        self.stack = contextlib.ExitStack()
        self.keys = Keys(tmp)
        self.pem = tmp / "card-key.pem"
        self.pem.write_bytes(self.keys.pem)
        self._started: dict[str, Any] = {}
        # Distinct ports: two variants handed the same freed port failed a whole SDK's
        # start with "Address already in use".
        ports = free_ports(len(JS_VARIANTS) + len(PY_VARIANTS) + 1)
        self.js_ports = dict(zip(JS_VARIANTS, ports, strict=False))
        self.py_ports = dict(zip(PY_VARIANTS, ports[len(JS_VARIANTS) :], strict=False))
        self.api_port = ports[-1]  # the split agent's second origin
        self.proxy_ports: dict[str, int] = {}

    def close(self) -> None:
        self.stack.close()

    def once(self, name: str, start: Callable[[], Any]) -> Any:
        """``start()``'s value, made on first use; a start that failed fails again at
        once (every cell behind it shows the same failure, none waits for it twice)."""
        if name not in self._started:
            try:
                self._started[name] = start()
            except BaseException as exc:
                self._started[name] = _Failed(f"{type(exc).__name__}: {exc}")
                raise
        value = self._started[name]
        if isinstance(value, _Failed):
            pytest.fail(f"{name} did not start (an earlier cell says why): {value.why}")
        return value

    # -- agents ---------------------------------------------------------------------

    def js(self, variant: str) -> str:
        """The origin of the ``@a2a-js/sdk`` agent ``variant``."""

        def start() -> None:
            js = self.request.getfixturevalue("js")
            node = self.request.getfixturevalue("node")
            agents = []
            for name, port in self.js_ports.items():
                item: dict[str, Any] = {"variant": name, "port": port}
                if name.startswith("signed"):
                    item |= {"key": str(self.keys.jwk), "kid": self.keys.kid}
                if name.endswith("extended"):
                    item["token"] = TOKEN
                if name == "grpc-jsonrpc":
                    item["public"] = self.proxy_origin("js-grpc-jsonrpc")
                agents.append(item)
            config = write_json(self.tmp / "js-agents.json", {"agents": agents})
            first = next(iter(self.js_ports.values()))
            argv = [node, str(js / "stock_agents.mjs"), "--config", str(config)]
            process = self.stack.enter_context(running(argv, first, self.tmp))
            urls = [f"http://127.0.0.1:{p}{CARD}" for p in self.js_ports.values()]
            _wait(urls, process.log, process.popen)

        self.once("js", start)
        return f"http://127.0.0.1:{self.js_ports[variant]}"

    def py(self, variant: str) -> str:
        """The origin of the ``a2a-sdk`` 1.x agent ``variant`` (its card's base URL)."""

        def start() -> None:
            agents = []
            for name, port in self.py_ports.items():
                item: dict[str, Any] = {"variant": name, "port": port}
                if name == "signed":
                    item |= {"key": str(self.pem), "kid": self.keys.kid}
                if name in ("bearer", "split", "extended"):
                    item["token"] = TOKEN
                if name == "split":
                    item["api_port"] = self.api_port
                agents.append(item)
            config = write_json(self.tmp / "py-agents.json", {"agents": agents})
            first = self.py_ports["starlette"]
            argv = [sys.executable, str(HERE / "stock_sdk_agents.py"), str(config)]
            process = self.stack.enter_context(running(argv, first, self.tmp))
            urls = [self.py_base(n) + CARD for n in self.py_ports]
            _wait(urls, process.log, process.popen)

        self.once("py", start)
        return self.py_base(variant)

    def py_base(self, variant: str) -> str:
        prefix = {"subpath": "/agents/echo", "mount": "/agent"}.get(variant, "")
        return f"http://127.0.0.1:{self.py_ports[variant]}{prefix}"

    def a2a03(self, declare: bool) -> str:
        """The origin of an ``a2a-sdk`` 0.3 agent; ``declare``: its card declares the
        interview (naming itself, nothing in front)."""

        def start() -> str:
            python = self.request.getfixturevalue("a2a03_python")
            port = free_port()
            origin = f"http://127.0.0.1:{port}"
            argv = [str(python), str(HERE / "a2a03_agent.py"), "--port", str(port),
                    "--url", origin + "/", *(["--declare"] if declare else [])]  # fmt: skip
            self.stack.enter_context(running(argv, port, self.tmp))
            return origin

        origin: str = self.once(f"a2a03-{declare}", start)
        return origin

    # -- proxies --------------------------------------------------------------------

    def proxy_origin(self, name: str) -> str:
        port = self.proxy_ports.setdefault(name, free_port())
        return f"http://127.0.0.1:{port}"

    def proxy(self, name: str, upstream: str, *extra: str) -> str:
        """The public origin of the proxy ``name`` in front of ``upstream``."""

        def start() -> str:
            public = self.proxy_origin(name)
            port = self.proxy_ports[name]
            argv = proxy_argv(upstream, port, "--public-url", public, *extra)
            self.stack.enter_context(running(argv, port, self.tmp))
            return public

        origin: str = self.once(f"proxy-{name}", start)
        return origin

    def proxy_refused(self, upstream: str, *extra: str) -> subprocess.CompletedProcess[str]:
        """A proxy that must refuse to start: its exit and output, bounded."""
        port = free_port()
        argv = proxy_argv(upstream, port, "--public-url", f"http://127.0.0.1:{port}", *extra)
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        except subprocess.TimeoutExpired:
            pytest.fail("the proxy started (it did not exit within 30 s)")


# -- entry points -------------------------------------------------------------------------


def env() -> dict[str, str]:
    return {**os.environ, TOKEN_VARIABLE: TOKEN, "OTEL_SDK_DISABLED": "true", "NO_COLOR": "1"}


def run_verify(url: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    """``a2a-interview verify URL --json``: exit code, record, stderr."""
    done = subprocess.run(
        [*COMMAND, "verify", url, "--json", "--churn-delay", "0", *extra],
        capture_output=True, text=True, timeout=120, check=False, env=env(),
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    record: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, record, done.stderr


def run_verify_many(
    tmp: Path, urls: list[str], credentials: dict[str, Any]
) -> tuple[int, list[dict[str, Any]], str]:
    """``a2a-interview verify-many FILE --credentials FILE``: exit, records, stderr."""
    listed = tmp / "urls.txt"
    listed.write_text("".join(u + "\n" for u in urls), "utf-8")
    creds = write_json(tmp / "credentials.json", credentials)
    out = tmp / "records.jsonl"
    done = subprocess.run(
        [*COMMAND, "verify-many", str(listed), "--out", str(out), "--credentials", str(creds),
         "--churn-delay", "0", "--workers", "1", "--no-progress"],
        capture_output=True, text=True, timeout=180, check=False, env=env(),
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    records = []
    if out.is_file():
        records = [json.loads(line) for line in out.read_text("utf-8").splitlines() if line]
    return done.returncode, records, done.stderr


def run_ci(tmp: Path, url: str) -> tuple[int, dict[str, Any], str]:
    """``examples/ci/verify-agent.sh URL`` with its defaults (the agent already running)."""
    out = tmp / "ci-results"
    bin_dir = Path(sys.executable).parent
    run_env = {**env(), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               "OUT": str(out), "WAIT": "10"}  # fmt: skip
    run_env.pop("VERIFY_ARGS", None)
    done = subprocess.run(
        [binary("sh", "any POSIX shell"), str(CI_SCRIPT), url],
        capture_output=True, text=True, env=run_env, timeout=180, check=False,
    )  # fmt: skip
    record_file = out / "record.json"
    record = json.loads(record_file.read_text("utf-8")) if record_file.is_file() else {}
    return done.returncode, record, done.stderr


def run_js_ask(node: str, js: Path, url: str, question: str) -> subprocess.CompletedProcess[str]:
    """The README's JavaScript recipe (``js/interview.mjs``) on the card of ``url``."""
    return subprocess.run(
        [node, str(js / "interview.mjs"), "--card-url", url + CARD, "--question", question],
        capture_output=True, text=True, timeout=60, check=False, cwd=js,
    )  # fmt: skip
