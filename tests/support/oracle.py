"""The node conformance oracle: the real client packages (``tests/js``) run in one long-lived node process."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

JS_DIR = Path(__file__).resolve().parents[1] / "js"


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
        """End the node process (its stdin closed, it exits)."""
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)
