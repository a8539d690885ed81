"""Serving an app for a test: in a background thread of the test process (:class:`LiveServer`), or in a
uvicorn process of its own that the test can send signals (:func:`serve_in_subprocess`)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

TESTS_DIR = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


class LiveServer:
    """An ASGI app served by uvicorn on a free loopback port, in a background thread."""

    def __init__(self, app: Any, **config: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        options: dict[str, Any] = {"log_level": "warning", "lifespan": "off"}
        options.update(config)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, **options))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
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


def serve_in_subprocess(app: str) -> tuple[Any, int]:
    """Start ``uvicorn tests/<app>`` in a process of its own (so it can be sent signals); return it and its port."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--port", str(port), "--log-level", "warning"],
        cwd=TESTS_DIR,
    )
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("uvicorn did not start") from None
            time.sleep(0.05)


def shutdown_mid_stream(method: str, url: str, proc: Any, **request: Any) -> bytes:
    """Read a stream, SIGTERM the server after a few deltas, return everything received."""
    received = b""
    signalled = False
    with httpx.stream(method, url, timeout=20, **request) as response:
        for chunk in response.iter_raw():
            received += chunk
            if not signalled and received.count(b"-delta") + received.count(b"_CONTENT") >= 3:
                proc.send_signal(signal.SIGTERM)
                signalled = True
    assert signalled
    return received
