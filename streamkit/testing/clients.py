"""``streamkit check --clients``: the body through the real JavaScript client packages, beside the validator.

The packages are the ones streamkit's own conformance suite pins (:data:`PACKAGES`), installed once with npm
into a cache folder (``$STREAMKIT_CLIENTS_DIR``, else ``~/.cache/streamkit/clients``); :func:`run_client` runs
``clients.mjs`` there with node on one body: the AI SDK's Chat (the state machine behind ``useChat``) for ``ai``
5, 6 or 7, or ``@ag-ui/client``'s ``HttpAgent`` (1.0, or 0.0.59 for ``0.0``). :func:`client_rejects` reads its
answer the way the validator's agreement is measured: an error other than the body's own ``error`` chunk or
``RUN_ERROR``, a failed run, a dropped event or state patch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PACKAGES", "ClientAnswer", "ClientsUnavailable", "client_rejects", "clients_dir", "run_client"]

PACKAGES = {
    "@ag-ui/client": "1.0.0",
    "@ag-ui/core": "1.0.0",
    "agui0": "npm:@ag-ui/client@0.0.59",
    "ai": "7.0.173",
    "ai5": "npm:ai@5.0.277",
    "ai6": "npm:ai@6.0.326",
    "zod": "^4.1.0",
}
"""The client packages, pinned as streamkit's conformance suite pins them."""

_SCRIPT = Path(__file__).with_name("clients.mjs")


class ClientsUnavailable(RuntimeError):
    """node or npm is missing, or the packages could not be installed."""


@dataclass
class ClientAnswer:
    """What the real client made of a body: its error (None when it accepted it), console warnings, and what it
    holds after the stream (``message`` for the AI SDK; ``messages``/``state`` for AG-UI; ``outcome``)."""

    error: str | None
    warnings: list[str] = field(default_factory=list)
    message: Any = None
    messages: Any = None
    state: Any = None
    outcome: Any = None


def clients_dir() -> Path:
    """The folder the client packages are installed into."""
    env = os.environ.get("STREAMKIT_CLIENTS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "streamkit" / "clients"


def _install(folder: Path) -> None:
    if (folder / "node_modules" / "ai").is_dir() and (folder / "node_modules" / "agui0").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise ClientsUnavailable("--clients needs npm to install the client packages once")
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"name": "streamkit-check-clients", "private": True, "type": "module", "dependencies": PACKAGES}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2))
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        raise ClientsUnavailable(f"npm install failed in {folder}: {done.stderr.strip()[-500:]}")


def run_client(
    body: str, protocol: str, version: int | str, *, messages: Any = None, state: Any = None, timeout: float = 60
) -> ClientAnswer:
    """Run ``body`` through the real ``protocol`` client of ``version`` (installing the packages first)."""
    node = shutil.which("node")
    if node is None:
        raise ClientsUnavailable("--clients needs node (20 or later)")
    if protocol not in ("aisdk", "agui"):
        raise ClientsUnavailable(f"no JavaScript client for {protocol}")
    folder = clients_dir()
    _install(folder)
    script = folder / "streamkit-clients.mjs"
    shutil.copyfile(_SCRIPT, script)
    request = {"protocol": protocol, "version": version, "body": body, "messages": messages or [], "state": state}
    done = subprocess.run(
        [node, str(script)], input=json.dumps(request), capture_output=True, text=True, timeout=timeout, cwd=folder
    )
    if done.returncode != 0:
        raise ClientsUnavailable(f"the client run failed: {done.stderr.strip()[-500:]}")
    answer = json.loads(done.stdout)
    return ClientAnswer(
        error=answer.get("error"),
        warnings=answer.get("warnings") or [],
        message=answer.get("message"),
        messages=answer.get("messages"),
        state=answer.get("state"),
        outcome=answer.get("outcome"),
    )


def _frames(body: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
        try:
            value = json.loads(data) if data and data != "[DONE]" else None
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def client_rejects(answer: ClientAnswer, body: str, protocol: str) -> str | None:
    """Why the client rejected ``body`` or lost part of it (None when it showed what the frames say)."""
    frames = _frames(body)
    if protocol == "aisdk":
        own = next((f.get("errorText") for f in frames if f.get("type") == "error"), None)
        if answer.error is not None and answer.error != own:
            return answer.error
        at = next((i for i, f in enumerate(frames) if f.get("type") == "error"), len(frames))
        if answer.error is not None and at < len(frames) - 1:
            return "stopped at the error chunk: later frames never shown"
        return None
    own = next((f.get("message") for f in frames if f.get("type") == "RUN_ERROR"), None)
    if answer.error is not None and answer.error != own:
        return answer.error
    for warning in answer.warnings:
        if "Failed to apply state patch" in warning or "Dropping unrecognised event" in warning:
            return warning.split("\n")[0]
    return None
