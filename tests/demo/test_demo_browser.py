"""The demo page in headless Chromium: chat in both tabs, watch tools, answers and the shared state.

Uses the system Chromium (``/usr/bin/chromium``, installed with apt-get) through Playwright. Screenshots go
to ``test-artifacts/``; with ``STREAMKIT_DOCS_SCREENSHOT=1`` the README's ``docs/demo.png`` is rewritten too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import create_app
from tests.demo.openai_replay import serve

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path(os.environ.get("STREAMKIT_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

# Records every distinct text of the state panel, so the test sees it change while the run streams.
WATCH_STATE = """
pane => {
  const panel = document.querySelector(`[data-testid="${pane}"] [data-testid="state-panel"]`);
  window.__states = window.__states || {};
  const seen = (window.__states[pane] = []);
  const note = () => { const t = panel.innerText; if (seen[seen.length - 1] !== t) seen.push(t); };
  note();
  new MutationObserver(note).observe(panel, { subtree: true, childList: true, characterData: true, attributes: true });
}
"""

NO_CHROMIUM = f"no Chromium at {CHROMIUM}: apt-get install -y chromium (make test does it as root)"


def require_chromium() -> None:
    """Skip without the browser, but fail under CI (``CI=true``), as a missing redis-server fails."""
    if CHROMIUM.exists():
        return
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(NO_CHROMIUM)
    pytest.skip(NO_CHROMIUM)


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    # realistic rhythm, ten times faster: streaming stays visible, the test stays quick
    with serve(create_app(ScriptedAgent(Pacing().scaled(0.1)))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_chromium()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


def chat(page: object, pane: str, prompt: str) -> None:
    """Send ``prompt`` in a tab and wait for the run to finish."""
    root = page.locator(f'[data-testid="{pane}"]')  # type: ignore[attr-defined]
    page.evaluate(WATCH_STATE, pane)  # type: ignore[attr-defined]
    sent = root.get_by_test_id("message-user").count()
    root.get_by_test_id("composer-input").fill(prompt)
    root.get_by_test_id("send-button").click()
    # the run started (its user message shows with the Stop button; a short run's Stop button can come and
    # go between two polls on a busy machine, the message stays)
    root.get_by_test_id("message-user").nth(sent).wait_for(timeout=10_000)
    root.get_by_test_id("message-assistant").nth(sent).wait_for(timeout=10_000)  # the answer streams
    root.get_by_test_id("send-button").wait_for(state="attached", timeout=30_000)  # and finished


def check_pane(page: object, pane: str, tool_state: str, answer: str, task: str) -> None:
    root = page.locator(f'[data-testid="{pane}"]')  # type: ignore[attr-defined]
    assert root.get_by_test_id("message-user").last.inner_text() != ""
    card = root.get_by_test_id("tool-card").last
    assert card.get_attribute("data-state") == tool_state
    assert root.get_by_test_id("answer-text").last.inner_text().find(answer) >= 0
    assert root.get_by_test_id("reasoning").count() >= 1
    panel = root.get_by_test_id("state-panel")
    assert task in panel.inner_text()
    assert int(panel.get_attribute("data-updates") or 0) > 2
    states = page.evaluate(f"window.__states[{pane!r}]")  # type: ignore[attr-defined]
    assert len(states) >= 3, states  # empty or previous, then several steps of the plan
    assert states[-1] != states[1]
    frames = root.get_by_test_id("frame-log")
    assert int(frames.get_attribute("data-count") or 0) > 20


def test_chat_in_both_tabs(browser: object, demo_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})  # type: ignore[attr-defined]
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.goto(demo_url + "/")
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)

    # AI SDK: useChat
    page.get_by_test_id("tab-aisdk").click()
    chat(page, "pane-aisdk", "What's the weather in Lisbon?")
    check_pane(page, "pane-aisdk", "output-available", "sunny in Lisbon", "Weather in Lisbon")
    aisdk = page.get_by_test_id("pane-aisdk")
    assert aisdk.get_by_test_id("sources").inner_text().find("Lisbon (Wikipedia)") >= 0
    assert "tool-input-delta" in aisdk.get_by_test_id("frame-log").inner_text()
    page.screenshot(path=str(ARTIFACTS / "demo-aisdk.png"))

    # AG-UI: HttpAgent, in the other tab; the first tab keeps its conversation
    page.get_by_test_id("tab-agui").click()
    assert not aisdk.is_visible()
    chat(page, "pane-agui", "Compare the weather in Paris and Tokyo")
    check_pane(page, "pane-agui", "output-available", "Tokyo is the warmest", "Compare the weather in Paris and Tokyo")
    agui = page.get_by_test_id("pane-agui")
    assert agui.get_by_test_id("tool-card").count() == 3
    assert "STATE_DELTA" in agui.get_by_test_id("frame-log").inner_text()
    page.screenshot(path=str(ARTIFACTS / "demo-agui.png"))

    # a failing tool in the AG-UI tab ends in the card's error state, and the run still finishes
    chat(page, "pane-agui", "What is 1/0?")
    failed = agui.locator('[data-testid="tool-card"][data-state="output-error"]')
    assert failed.count() == 1
    assert "division by zero" in failed.get_by_test_id("tool-error").inner_text()

    page.get_by_test_id("tab-aisdk").click()
    assert "sunny in Lisbon" in aisdk.get_by_test_id("conversation").inner_text()
    assert problems == []
    page.close()


def test_agent_error_is_shown(browser: object, demo_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    page.goto(demo_url + "/#agui")
    for pane in ("pane-agui", "pane-aisdk"):
        if pane == "pane-aisdk":
            page.get_by_test_id("tab-aisdk").click()
        chat(page, pane, "crash")
        banner = page.locator(f'[data-testid="{pane}"] [data-testid="run-error"]')
        assert "crashed on purpose" in banner.inner_text()
    page.close()


def test_readme_screenshot(browser: object, demo_url: str) -> None:
    """The README's picture of the page (``STREAMKIT_DOCS_SCREENSHOT=1`` copies it to docs/demo.png)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})  # type: ignore[attr-defined]
    page.goto(demo_url + "/")
    chat(page, "pane-aisdk", "What's the weather in Lisbon?")
    pane = page.get_by_test_id("pane-aisdk")
    pane.locator('[data-testid="reasoning"] summary').first.click()  # show the reasoning
    pane.get_by_text("show deltas").click()  # one frame of each kind, so the picture shows them all
    page.wait_for_timeout(300)
    shot = ARTIFACTS / "demo-readme.png"
    page.screenshot(path=str(shot))
    page.close()
    assert shot.stat().st_size > 10_000
    if os.environ.get("STREAMKIT_DOCS_SCREENSHOT"):
        (ROOT / "docs").mkdir(exist_ok=True)
        (ROOT / "docs" / "demo.png").write_bytes(shot.read_bytes())
