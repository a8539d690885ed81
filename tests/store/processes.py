"""The processes of the stream store tests: uvicorn workers serving ``tests.store.resume_app`` and a redis-server
of a test's own (one it may kill and start again without disturbing the session's)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


class Worker:
    """``uvicorn tests.store.resume_app:create_app`` in a process of its own on a free loopback port.

    ``lease`` and ``pace`` are the app's (seconds); ``env`` adds to its environment; ``stderr`` receives what it
    logs (inherited by default).
    """

    def __init__(
        self,
        redis_url: str,
        prefix: str,
        *,
        lease: float = 1.5,
        pace: float = 0.03,
        env: dict[str, str] | None = None,
        stderr: IO[Any] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environment = dict(os.environ)
        environment.update(
            STREAMKIT_REDIS_URL=redis_url, STREAMKIT_PREFIX=prefix, STREAMKIT_LEASE=str(lease), STREAMKIT_PACE=str(pace)
        )
        environment.update(env or {})
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "uvicorn", "tests.store.resume_app:create_app", "--factory"),
                *("--app-dir", str(ROOT)),
                *("--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"),
            ],
            env=environment,
            stderr=stderr,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    raise RuntimeError("the worker did not start") from None
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the process dies without ending anything."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop the worker (SIGTERM, then SIGKILL if it lingers)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class RedisServer:
    """A ``redis-server`` (no persistence) on a loopback port of its own, which :meth:`kill` ends with SIGKILL
    and :meth:`start` brings back on the same port."""

    def __init__(self) -> None:
        server = shutil.which("redis-server")
        if server is None:
            raise RuntimeError("redis-server is required for the stream store tests: apt-get install -y redis-server")
        self.server = server
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it answers ``PING``."""
        self.proc = subprocess.Popen(
            [self.server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.proc.kill()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the server dies at once, its connections reset, everything it held lost."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop it if it runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
