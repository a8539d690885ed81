"""Human in the loop on the demo page, in headless Chromium, on both tabs: click Approve and Deny on an
approval card, let the page run the agent's frontend tool (``set_theme``), and press Stop mid-run (the run
reads as stopped: no error banner, the plan ends "stopped"). Screenshots go to ``test-artifacts/``; with
``STREAMKIT_DOCS_SCREENSHOT=1`` the README's ``docs/demo.png`` (an approval card) is rewritten too.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.demo import test_demo_browser as base
from tests.demo.test_demo_browser import ARTIFACTS, ROOT

pytestmark = pytest.mark.browser

browser = base.browser  # the fixtures, shared with the page's other browser tests
demo_url = base.demo_url

PANES = ["pane-aisdk", "pane-agui"]


def open_page(browser: Any, demo_url: str, pane: str, problems: list[str]) -> Any:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.goto(demo_url + ("/#agui" if pane == "pane-agui" else "/"))
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)
    return page


def send(page: Any, pane: str, prompt: str, until: str) -> None:
    """Send ``prompt`` in a tab and wait until ``until`` (a test id) shows and the run is over.

    Waits for the outcome rather than for the Stop button: on a busy machine a short run can come and go
    between two polls.
    """
    root = page.locator(f'[data-testid="{pane}"]')
    root.get_by_test_id("composer-input").fill(prompt)
    root.get_by_test_id("send-button").click()
    root.get_by_test_id(until).last.wait_for(timeout=30_000)
    root.get_by_test_id("send-button").wait_for(state="attached", timeout=30_000)


def answer(root: Any, text: str) -> Any:
    found = root.get_by_test_id("answer-text").filter(has_text=text)
    found.wait_for(timeout=30_000)
    root.get_by_test_id("send-button").wait_for(state="attached", timeout=30_000)
    return found


def plan_status(root: Any) -> str:
    return str(root.get_by_test_id("plan-status").inner_text())


@pytest.mark.parametrize("pane", PANES)
def test_approve_and_deny(browser: Any, demo_url: str, pane: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    problems: list[str] = []
    page = open_page(browser, demo_url, pane, problems)
    root = page.locator(f'[data-testid="{pane}"]')
    tag = pane.removeprefix("pane-")

    send(page, pane, "Delete the file notes.txt", "approve-button")
    card = root.locator('[data-testid="tool-card"][data-tool="delete_file"]').last
    assert card.get_attribute("data-state") == "approval-requested"
    assert "Delete notes.txt? This cannot be undone." in card.get_by_test_id("approval").inner_text()
    assert plan_status(root) == "waiting for approval"
    page.screenshot(path=str(ARTIFACTS / f"hitl-{tag}-approval.png"))
    card.get_by_test_id("approve-button").click()
    answer(root, "Done: I deleted notes.txt")
    assert card.get_attribute("data-state") == "output-available"
    assert '"deleted": true' in card.get_by_test_id("tool-output").inner_text()
    assert root.get_by_test_id("approve-button").count() == 0
    assert plan_status(root) == "done"
    page.screenshot(path=str(ARTIFACTS / f"hitl-{tag}-approved.png"))

    send(page, pane, "Delete todo.txt", "approve-button")
    card = root.locator('[data-testid="tool-card"][data-tool="delete_file"]').last
    card.get_by_test_id("deny-button").click()
    answer(root, "I did not delete anything: you denied deleting todo.txt.")
    assert card.get_attribute("data-state") == "output-denied"
    assert plan_status(root) == "done"
    assert root.get_by_test_id("run-error").count() == 0
    page.screenshot(path=str(ARTIFACTS / f"hitl-{tag}-denied.png"))
    assert problems == []
    page.close()


@pytest.mark.parametrize("pane", PANES)
def test_frontend_tool_switches_the_theme(browser: Any, demo_url: str, pane: str) -> None:
    problems: list[str] = []
    page = open_page(browser, demo_url, pane, problems)
    root = page.locator(f'[data-testid="{pane}"]')
    assert page.evaluate("document.documentElement.dataset.theme") is None
    send(page, pane, "Switch to dark mode", "tool-card")
    answer(root, "Done, the page is now dark.")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    card = root.locator('[data-testid="tool-card"][data-tool="set_theme"]').last
    assert card.get_attribute("data-state") == "output-available"
    assert '"theme": "dark"' in card.get_by_test_id("tool-output").inner_text()
    assert plan_status(root) == "done"
    page.screenshot(path=str(ARTIFACTS / f"hitl-{pane.removeprefix('pane-')}-dark.png"))
    send(page, pane, "Back to light mode please", "tool-card")
    answer(root, "Done, the page is now light.")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert problems == []
    page.close()


@pytest.mark.parametrize("pane", PANES)
def test_stop_reads_as_a_stop(browser: Any, demo_url: str, pane: str) -> None:
    problems: list[str] = []
    page = open_page(browser, demo_url, pane, problems)
    root = page.locator(f'[data-testid="{pane}"]')
    root.get_by_test_id("composer-input").fill("Tell me a long story")
    root.get_by_test_id("send-button").click()
    root.get_by_test_id("answer-text").filter(has_text="Once upon a time").wait_for(timeout=20_000)
    root.get_by_test_id("stop-button").click()
    root.get_by_test_id("send-button").wait_for(state="attached", timeout=10_000)
    page.wait_for_timeout(300)  # anything late (an error, a state update) would show by now
    assert root.get_by_test_id("run-error").count() == 0
    assert plan_status(root) == "stopped"
    assert "The end" not in root.get_by_test_id("conversation").inner_text()
    page.screenshot(path=str(ARTIFACTS / f"hitl-{pane.removeprefix('pane-')}-stopped.png"))
    # the conversation goes on after a stop
    send(page, pane, "Hi there!", "answer-text")
    answer(root, "Hello!")
    assert plan_status(root) == "done"
    assert problems == []
    page.close()


def test_readme_screenshot_shows_an_approval(browser: Any, demo_url: str) -> None:
    """The README's picture of the page: an approval card waiting for the user."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(demo_url + "/")
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)
    send(page, "pane-aisdk", "Delete the file notes.txt", "approve-button")
    pane = page.get_by_test_id("pane-aisdk")
    pane.locator('[data-testid="reasoning"] summary').first.click()  # show the reasoning
    page.wait_for_timeout(300)
    shot = ARTIFACTS / "demo-readme-approval.png"
    page.screenshot(path=str(shot))
    page.close()
    assert shot.stat().st_size > 10_000
    if os.environ.get("STREAMKIT_DOCS_SCREENSHOT"):
        (ROOT / "docs").mkdir(exist_ok=True)
        (ROOT / "docs" / "demo.png").write_bytes(shot.read_bytes())
