"""The demo page's console tab in headless Chromium: the named-event dialect read by plain fetch code.

Drives the offline agent's paths (one tool, parallel tools, a failing tool, a crash) through the third tab
and checks what such a console shows: bubbles split at ``step_break``, tool cards between them with their
status, and the final view rebuilt from ``done.messages`` (the conversation the server keeps per agent id).
Screenshots go to ``test-artifacts/``. The browser and the demo server come from ``test_demo_browser``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo.test_demo_browser import ARTIFACTS, browser, demo_url

pytestmark = pytest.mark.browser

__all__ = ["browser", "demo_url"]

PANE = "pane-dsh"

# Records, on every change of the console, whether the view is live or rebuilt and what it holds.
WATCH = """
() => {
  const root = document.querySelector('[data-testid="pane-dsh"]');
  const box = root.querySelector('[data-testid="dsh-console"]');
  const seen = (window.__dsh = []);
  const note = () => {
    const last = [...root.querySelectorAll('[data-testid="message-assistant"]')].pop();
    const kinds = last ? [...last.querySelectorAll('[data-testid="answer-text"], [data-testid="tool-card"]')]
      .map((el) => (el.dataset.testid === "tool-card" ? "tool" : "bubble")) : [];
    const answers = last ? [...last.querySelectorAll('[data-testid="answer-text"]')].map((el) => el.textContent) : [];
    const thinking = last ? [...last.querySelectorAll('[data-testid="reasoning"]')].map((el) => el.textContent) : [];
    seen.push({ rebuilt: box.dataset.rebuilt, breaks: Number(box.dataset.stepBreaks), kinds: kinds.join(","),
      answers, thinking });
  };
  new MutationObserver(note).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
}
"""


def chat(page: Any, pane: str, prompt: str) -> None:
    """Send ``prompt`` in the console and wait until its run has ended (however quickly it streamed)."""
    box = page.locator(f'[data-testid="{pane}"] [data-testid="dsh-console"]')
    runs = int(box.get_attribute("data-runs") or 0)
    root = page.locator(f'[data-testid="{pane}"]')
    root.get_by_test_id("composer-input").fill(prompt)
    root.get_by_test_id("send-button").click()
    page.wait_for_function(
        f"""() => Number(document.querySelector('[data-testid="{pane}"] [data-testid="dsh-console"]')
            .dataset.runs) > {runs}""",
        timeout=30_000,
    )


def _last_answer(page: Any) -> Any:
    return page.locator(f'[data-testid="{PANE}"] [data-testid="message-assistant"]').last


def test_the_console_tab_through_the_agents_paths(browser: Any, demo_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.goto(demo_url + "/#dsh")
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)
    pane = page.get_by_test_id(PANE)
    box = pane.get_by_test_id("dsh-console")

    # one tool: live, a bubble closes at the step_break, the card sits between bubbles; then the rebuild
    page.evaluate(WATCH)
    chat(page, PANE, "What's the weather in Lisbon?")
    live = [s for s in page.evaluate("window.__dsh") if s["rebuilt"] == "false"]
    assert any("tool" in s["kinds"] and s["kinds"].endswith("bubble") for s in live), live
    assert box.get_attribute("data-rebuilt") == "true"
    assert int(box.get_attribute("data-step-breaks") or 0) == 2  # started, then done
    card = _last_answer(page).get_by_test_id("tool-card")
    assert card.count() == 1 and card.get_attribute("data-state") == "output-available"
    assert card.get_attribute("data-tool") == "get_weather"
    assert "sunny in Lisbon" in _last_answer(page).get_by_test_id("answer-text").last.inner_text()
    # the thinking (its own `reasoning` event) shows in a reasoning block, live and rebuilt, never in the answer
    thought = "The user wants the current weather in Lisbon"
    assert any(any(thought in t for t in s["thinking"]) for s in live), live
    assert not any(thought in a for s in page.evaluate("window.__dsh") for a in s["answers"])
    reasoning = _last_answer(page).get_by_test_id("reasoning")
    assert reasoning.count() == 1 and thought in (reasoning.text_content() or "")
    assert "Lisbon (Wikipedia)" in pane.get_by_test_id("sources").inner_text()
    assert pane.get_by_test_id("dsh-done").get_attribute("data-finish") == "stop"
    log = pane.get_by_test_id("frame-log").inner_text()
    assert "meta" in log and "reasoning" in log and "step_break" in log and "done" in log
    page.screenshot(path=str(ARTIFACTS / "demo-dsh-tool.png"))

    # parallel tools: three cards in one bubble gap, then a second step, all done; history kept by the server
    chat(page, PANE, "Compare the weather in Paris, Tokyo and New York")
    cards = _last_answer(page).get_by_test_id("tool-card")
    assert cards.count() == 4
    assert [cards.nth(i).get_attribute("data-state") for i in range(4)] == ["output-available"] * 4
    assert "Tokyo" in _last_answer(page).get_by_test_id("answer-text").last.inner_text()
    assert "sunny in Lisbon" in pane.get_by_test_id("conversation").inner_text()  # rebuilt with the first turn
    assert pane.get_by_test_id("message-user").count() == 2
    page.screenshot(path=str(ARTIFACTS / "demo-dsh-parallel.png"))

    # a failing tool: the card ends in its error state, the run still finishes
    chat(page, PANE, "What is 1/0?")
    failed = _last_answer(page).locator('[data-testid="tool-card"][data-state="output-error"]')
    assert failed.count() == 1
    assert "division by zero" in failed.get_by_test_id("tool-error").inner_text()
    assert pane.get_by_test_id("dsh-done").get_attribute("data-finish") == "stop"
    page.screenshot(path=str(ARTIFACTS / "demo-dsh-failure.png"))

    # a crash: the error frame ends the stream and shows; the page stays usable
    chat(page, PANE, "crash")
    assert "crashed on purpose" in pane.get_by_test_id("run-error").inner_text()
    assert box.get_attribute("data-rebuilt") == "false"
    page.screenshot(path=str(ARTIFACTS / "demo-dsh-crash.png"))
    assert problems == []
    page.close()
