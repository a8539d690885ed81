"""Shared fixtures: the node conformance oracle (the real client packages, run in node)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

JS_DIR = Path(__file__).parent / "js"

# Under CI the property tests draw the same examples on every run (a submission is judged by one run, so a
# failure must reproduce); elsewhere each run draws new ones and keeps exploring. HYPOTHESIS_PROFILE overrides.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev")
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() in ("true", "1") else "dev")
)

# The protocols' test helpers (strategies, models) are shared: tests/dsh reuses those of tests/aisdk and tests/agui.
for _helpers in ("aisdk", "agui"):
    if str(Path(__file__).parent / _helpers) not in sys.path:
        sys.path.append(str(Path(__file__).parent / _helpers))


class OracleError(AssertionError):
    """The real client rejected what we sent (or the handler failed)."""


class JsOracle:
    """A long-lived ``node tests/js/oracle.mjs`` process answering one JSON request per line."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is required for the conformance tests (see README)")
        if not (JS_DIR / "node_modules").is_dir():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=JS_DIR, check=True)
        self._proc = subprocess.Popen(
            [node, str(JS_DIR / "oracle.mjs")],
            cwd=JS_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def call(self, kind: str, req: Any) -> dict[str, Any]:
        """Run ``req`` through ``tests/js/<kind>.mjs``; return ``{"ok", "result"|"error", "warnings"}``."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with self._lock:
            rid = next(self._ids)
            self._proc.stdin.write(json.dumps({"id": rid, "kind": kind, "req": req}) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the node oracle exited")
        answer: dict[str, Any] = json.loads(line)
        assert answer["id"] == rid
        return answer

    def result(self, kind: str, req: Any) -> Any:
        """Like :meth:`call`, but raise :class:`OracleError` unless the client accepted the request."""
        answer = self.call(kind, req)
        if not answer["ok"]:
            raise OracleError(answer["error"])
        return answer["result"]

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)


@pytest.fixture(scope="session")
def js() -> Iterator[JsOracle]:
    """The node conformance oracle (session-wide; installs ``tests/js`` packages on first use)."""
    oracle = JsOracle()
    yield oracle
    oracle.close()


class LiveServer:
    """An ASGI app served by uvicorn on a free loopback port, in a background thread."""

    def __init__(self, app: Any, **config: Any) -> None:
        import socket

        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        self.url = f"http://127.0.0.1:{self.port}"
        options: dict[str, Any] = {"log_level": "warning", "lifespan": "off"}
        options.update(config)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, **options))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        import time

        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def live_server() -> Iterator[Any]:
    """``live_server(app)`` serves ``app`` on loopback with uvicorn for the test; returns a LiveServer."""
    servers: list[LiveServer] = []

    def start(app: Any, **config: Any) -> LiveServer:
        server = LiveServer(app, **config).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests run on asyncio (anyio auto mode, see pyproject.toml)."""
    return "asyncio"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A throwaway ``redis-server`` (no persistence) on a free loopback port, for the session; its URL.

    Fails (never skips) when ``redis-server`` is not installed: the stream store tests need the real one.
    """
    import socket
    import time

    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is required for the stream store tests: apt-get install -y redis-server")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"redis-server did not start on port {port}")
        time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Report how many hostile request bodies the fuzz tests sent (tests/test_hardening.py)."""
    import sys

    module = sys.modules.get("test_hardening")
    counts = getattr(module, "fuzz_counts", None)
    if counts and any(counts.values()):
        terminalreporter.write_line(
            f"fuzzed request bodies: AI SDK {counts['aisdk']}, AG-UI {counts['agui']} (no 5xx, no hang)"
        )
