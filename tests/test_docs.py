"""The documentation cannot rot: the site builds in strict mode, and the code in it runs.

* ``mkdocs build --strict`` into a temporary directory: a broken link, a missing anchor or a reference to a
  module that does not exist fails it; the built site has every page of the navigation and the generated API
  reference of every public module.
* Every Python code block of ``docs/`` and of ``README.md`` is compiled, and run where it runs offline: the
  blocks of one page run in order in one namespace (a tutorial's later blocks use the earlier ones' names),
  which starts with ``agent``, the offline scripted agent (:class:`streamkit.demo.ScriptedAgent`, no pauses).
  Whenever a block leaves an ASGI ``app``, each protocol's ``POST`` route in it is sent a request through
  ``httpx.ASGITransport`` and must stream a whole run.

A comment just before a block says how far it can go offline:

* ``<!-- docs-test: no-request -->``: it runs, but the app talks to a real model, so no request is sent;
* ``<!-- docs-test: compile -->``: a fragment of a larger app (or code that needs a network): compiled only.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamkit.demo import Pacing, ScriptedAgent

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
README = ROOT / "README.md"
BLOCK = re.compile(
    r"(?:<!-- docs-test: (?P<mode>[a-z-]+) -->\n)?^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL
)
MODES = {"run", "no-request", "compile"}
HEADERS = {"authorization": "Bearer key-1"}
# A first request for each protocol; the scripted agent answers "Hi there!" with reasoning and text.
BODIES: dict[str, Any] = {
    "aisdk": {
        "id": "chat-1",
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi there!"}]}],
    },
    "agui": {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "Hi there!"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    },
    "dsh": {"agentId": "a1", "message": "Hi there!"},
    "ask": {"question": "Hi there!"},  # the protocol of "Adding a protocol"
}
OWN_PATHS = {"/api/chat": "aisdk", "/api/agui": "agui", "/api/ask": "ask"}
ENDS = {"aisdk": "data: [DONE]", "agui": '"type":"RUN_FINISHED"', "dsh": "event: done", "ask": "event: end"}


@dataclass(frozen=True)
class Block:
    """One fenced Python block of a page: where it is, how far it runs, its code."""

    page: Path
    line: int
    mode: str
    code: str

    @property
    def where(self) -> str:
        """``page:line``, for messages."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The Python blocks of ``page``, in order."""
    text = page.read_text()
    found = []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start("code"))
        found.append(Block(page, line, match.group("mode") or "run", match.group("code")))
    return found


def test_every_block_is_found() -> None:
    """Every ```python fence is parsed as a block (none hides in a list's indentation), every mode is known."""
    for page in [README, *PAGES]:
        fences = len(re.findall(r"^\s*```python$", page.read_text(), re.MULTILINE))
        found = blocks(page)
        assert len(found) == fences, f"{page}: a ```python block is indented or unterminated"
        assert {b.mode for b in found} <= MODES, page


@pytest.mark.parametrize("block", [b for p in [README, *PAGES] for b in blocks(p)], ids=lambda b: b.where)
def test_every_block_compiles(block: Block) -> None:
    compile(block.code, block.where, "exec")


def _protocol(route: Any) -> str | None:
    """Which protocol's first request a route takes (None for the resume, cancel and status routes)."""
    methods = getattr(route, "methods", None) or set()
    path = getattr(route, "path", "")
    module = getattr(getattr(route, "endpoint", None), "__module__", "") or ""
    if "POST" not in methods or "{" in path or path.endswith(("/reattach", "/cancel", "/message")):
        return None
    for name in ("aisdk", "agui", "dsh"):
        if module.startswith(f"streamkit.{name}.") and (name != "dsh" or path.endswith("/stream")):
            return name
    # an endpoint of the page's own, at the path the pages give each protocol
    return OWN_PATHS.get(path) if module.startswith("docs_") else None


async def _probe(app: Any, where: str) -> int:
    """Send each protocol route of ``app`` its first request; the stream must hold a whole run."""
    sent = 0
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://docs") as client:
        for route in getattr(app, "routes", []):
            protocol = _protocol(route)
            if protocol is None:
                continue
            response = await client.post(route.path, json=BODIES[protocol], headers=HEADERS)
            assert response.status_code == 200, (where, route.path, response.text)
            assert response.headers["content-type"].startswith("text/event-stream"), (where, route.path)
            assert ENDS[protocol] in response.text, (where, route.path, response.text[-500:])
            assert "An error occurred." not in response.text, (where, route.path, response.text[-500:])
            sent += 1
    assert sent, (where, "the app has no protocol route")
    return sent


RUNNABLE = [p for p in [README, *PAGES] if any(b.mode != "compile" for b in blocks(p))]


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_blocks_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's blocks, in order, in one namespace; each app left behind serves a whole run."""
    runnable = [b for b in blocks(page) if b.mode != "compile"]
    # SDK clients that refuse to be built without a key get a fake one (no-request blocks send nothing)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(key, os.environ.get(key) or "sk-docs")
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem}", "agent": ScriptedAgent(Pacing().scaled(0))}
    for block in runnable:
        exec(compile(block.code, block.where, "exec"), namespace)
        app = namespace.get("app")
        if block.mode == "run" and app is not None and "app" in block.code:
            asyncio.run(_probe(app, block.where))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with ``mkdocs build --strict`` into a temporary directory."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_site_builds_strict(site: Path) -> None:
    """The build passed (the fixture); the home page and its picture are there."""
    assert (site / "index.html").is_file()
    assert (site / "demo.png").is_file()


def _nav_pages() -> list[str]:
    return re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)


def test_site_has_every_page(site: Path) -> None:
    """Every page of docs/ is in the navigation and built; no page is left out of either."""
    nav = _nav_pages()
    on_disk = sorted(str(p.relative_to(ROOT / "docs")) for p in PAGES)
    assert sorted(nav) == on_disk
    for page in nav:
        assert (site / page.removesuffix(".md")).with_suffix(".html").is_file(), page


def _public_modules() -> list[str]:
    """Every module and package of streamkit whose name has no part starting with ``_``."""
    names = []
    for path in sorted((ROOT / "streamkit").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if any(p.startswith("_") for p in parts):
            continue
        names.append(".".join(parts))
    return names


def test_reference_covers_every_public_module(site: Path) -> None:
    """The API reference is generated (``::: module`` directives) for every public module, and rendered."""
    directives = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        directives |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(), re.MULTILINE))
    missing = [name for name in _public_modules() if name not in directives]
    assert missing == []
    html = "".join(p.read_text() for p in (site / "reference").glob("*.html"))
    for name in ("streamkit.serve.StreamOptions", "streamkit.aisdk.routes.routes", "streamkit.agui.routes.routes"):
        assert f'id="{name}"' in html, name


def test_docs_need_no_network(site: Path) -> None:
    """The theme's fonts and assets are local: no page loads anything from another host."""
    for page in site.rglob("*.html"):
        text = page.read_text()
        for url in re.findall(r'(?:src|href)="(https?://[^"]+)"', text):
            assert not url.startswith(("https://fonts.", "https://cdn", "https://unpkg")), (page, url)
