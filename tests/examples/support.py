"""Helpers for the example apps' tests: install, build and start a Next.js example against a streamkit server,
and watch a page element in headless Chromium.

A Next.js build fixes its rewrites (the streamkit server's URL) at build time, so each test module starts its
streamkit server first and builds the example against it; ``compress`` is read when ``next start`` starts, so
one build serves both the streaming app and the compressed control.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.demo.test_demo_browser import ARGS, CHROMIUM, require_chromium  # the demo's browser settings, shared
from tests.support.server import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ARTIFACTS = ROOT / "test-artifacts"
QUIET = {"NEXT_TELEMETRY_DISABLED": "1", "COPILOTKIT_TELEMETRY_DISABLED": "true", "DO_NOT_TRACK": "1"}

__all__ = ["ARTIFACTS", "EXAMPLES", "WATCH_TEXT", "browser", "build", "free_port", "next_start"]

# Records, for the element matching the selector, every distinct text and when it appeared, so a test can tell
# an answer that streamed in (many updates spread over the run) from one that arrived at once at the end.
WATCH_TEXT = """
selector => {
  window.__updates = [];
  const note = () => {
    const nodes = document.querySelectorAll(selector);
    const text = nodes.length ? nodes[nodes.length - 1].innerText : "";
    const seen = window.__updates;
    if (text && (!seen.length || seen[seen.length - 1].text !== text)) seen.push({ text, at: performance.now() });
  };
  new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
}
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright, for one test module."""
    sync_api = pytest.importorskip("playwright.sync_api")
    require_chromium()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is required for the example apps' tests")
    return npm


def build(example: str, env: Mapping[str, str]) -> Path:
    """``npm ci`` (when the lockfile changed) and ``next build`` of ``examples/<example>`` with ``env``."""
    folder = EXAMPLES / example
    modules = folder / "node_modules"
    lock = folder / "package-lock.json"
    if not modules.exists() or modules.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run([_npm(), "ci", "--no-audit", "--no-fund"], cwd=folder, check=True, capture_output=True)
        modules.touch()
    done = subprocess.run(
        [_npm(), "run", "build"],
        cwd=folder,
        env={**os.environ, **QUIET, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return folder


@contextmanager
def next_start(folder: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``next start`` of a built example on a free port; yields its URL, stops it afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [str(folder / "node_modules" / ".bin" / "next"), "start", "-p", str(port), "-H", "127.0.0.1"],
        cwd=folder,
        env={**os.environ, **QUIET, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"next start exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(url, timeout=2).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("next start did not answer within 60 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
