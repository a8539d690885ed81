"""``examples/nextjs-copilotkit`` built with ``next build`` and served by ``next start``: CopilotKit's v2 runtime route
reaches a streamkit AG-UI server through ``@ag-ui/client`` 0.0.59's ``HttpAgent``, and the page (``CopilotChat``,
``useAgent``, a wildcard tool renderer) is driven in headless Chromium: the answer streams in, the backend tool
calls are drawn with their results, and the demo's plan arrives through the agent state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import create_app
from tests.examples.support import ARTIFACTS, WATCH_TEXT, browser, build, next_start
from tests.support.server import LiveServer

__all__ = ["browser"]  # the shared fixture

# the long timeout: the module's first test builds the app (a few minutes on two cores)
pytestmark = [pytest.mark.nextjs, pytest.mark.browser, pytest.mark.timeout(900)]

ANSWER = '[data-testid="copilot-assistant-message"]'


@pytest.fixture(scope="module")
def app() -> Iterator[str]:
    folder = build("nextjs-copilotkit", {})
    agent = ScriptedAgent(Pacing().scaled(0.25))
    with LiveServer(create_app(agent, static_dir=None)) as streamkit, next_start(
        folder, {"STREAMKIT_URL": streamkit.url}
    ) as url:
        yield url


def ask(browser: Any, url: str, prompt: str, shot: str) -> tuple[Any, list[dict[str, Any]]]:
    """Send ``prompt`` in CopilotChat and wait until the run's plan is done; the page and the answer's updates."""
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    page.goto(url)
    page.evaluate(WATCH_TEXT, ANSWER)
    page.get_by_test_id("copilot-chat-textarea").fill(prompt)
    page.get_by_test_id("copilot-send-button").click()
    page.locator('[data-testid="plan"][data-status="done"]').wait_for(timeout=60_000)
    page.wait_for_timeout(300)  # the last frames after the plan's final update
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    return page, page.evaluate("window.__updates")


def test_the_answer_streams_in(app: str, browser: Any) -> None:
    page, updates = ask(browser, app, "Tell me a long story", "example-copilotkit-long.png")
    final = page.locator(ANSWER).last.inner_text()
    assert len(final) > 400
    assert len(updates) >= 10, updates
    assert updates[-1]["at"] - updates[0]["at"] > 500
    page.close()


def test_tool_calls_and_the_plan_reach_the_page(app: str, browser: Any) -> None:
    page, _ = ask(browser, app, "Compare the weather in Paris, Tokyo and New York", "example-copilotkit-tools.png")
    cards = page.get_by_test_id("tool")
    page.locator('[data-testid="tool"][data-name="calculate"][data-status="complete"]').wait_for(timeout=10_000)
    names = [cards.nth(i).get_attribute("data-name") for i in range(cards.count())]
    assert sorted(names) == ["calculate", "get_weather", "get_weather", "get_weather"], names
    assert {cards.nth(i).get_attribute("data-status") for i in range(cards.count())} == {"complete"}
    results = page.get_by_test_id("tool-result").all_inner_texts()
    assert any('"city":"Tokyo"' in r and '"temperature":24' in r for r in results), results
    plan = page.get_by_test_id("plan")
    steps = plan.locator("li")
    assert steps.count() == 6
    assert {steps.nth(i).get_attribute("data-status") for i in range(6)} == {"done"}
    assert "Weather in Tokyo" in plan.inner_text()
    assert "Tokyo is the warmest" in page.locator(ANSWER).last.inner_text()
    page.close()
