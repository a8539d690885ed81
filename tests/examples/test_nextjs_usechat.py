"""``examples/nextjs-usechat`` built with ``next build``, served by ``next start`` against a streamkit server, and
driven in headless Chromium: the answer streams in (several DOM updates, not one at the end), tool cards reach
their final state and the shared state reaches the page. A control with Next's compression left on is detected
as buffered, which is why the example sets ``compress: false``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import create_app
from tests.examples.support import ARTIFACTS, WATCH_TEXT, browser, build, next_start
from tests.support.server import LiveServer

__all__ = ["browser"]  # the shared fixture

# the long timeout: the module's first test builds the app (a few minutes on two cores)
pytestmark = [pytest.mark.nextjs, pytest.mark.browser, pytest.mark.timeout(900)]

ANSWER = '[data-testid="message-assistant"] [data-testid="text"]'


@pytest.fixture(scope="module")
def apps() -> Iterator[dict[str, str]]:
    """The example served twice from one build: as shipped, and with compression turned on (the control)."""
    # a realistic rhythm, a few times faster: the long answer streams for about two seconds
    with LiveServer(create_app(ScriptedAgent(Pacing().scaled(0.25)), static_dir=None)) as streamkit:
        folder = build("nextjs-usechat", {"STREAMKIT_URL": streamkit.url})
        with next_start(folder) as shipped, next_start(folder, {"STREAMKIT_COMPRESS": "1"}) as compressed:
            yield {"shipped": shipped, "compressed": compressed}


def ask(browser: Any, url: str, prompt: str, shot: str) -> tuple[Any, list[dict[str, Any]]]:
    """Send ``prompt`` on the page at ``url``, wait for the run to end; the page and the answer's updates."""
    page = browser.new_page(viewport={"width": 900, "height": 1000})
    page.goto(url)
    page.evaluate(WATCH_TEXT, ANSWER)
    page.get_by_label("message").fill(prompt)
    page.get_by_role("button", name="Send").click()
    page.get_by_role("button", name="Stop").wait_for(timeout=15_000)
    page.get_by_role("button", name="Send").wait_for(timeout=60_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(Path(ARTIFACTS) / shot), full_page=True)
    return page, page.evaluate("window.__updates")


def spread(updates: list[dict[str, Any]]) -> float:
    return float(updates[-1]["at"] - updates[0]["at"]) if updates else 0.0


def test_the_answer_streams_in_through_the_rewrite(apps: dict[str, str], browser: Any) -> None:
    page, updates = ask(browser, apps["shipped"], "Tell me a long story", "example-usechat-long.png")
    final = page.locator(ANSWER).last.inner_text()
    assert len(final) > 400
    assert len(updates) >= 10, updates  # text appeared piece by piece
    assert spread(updates) > 500  # over the run, not in one burst at the end
    assert updates[-1]["text"] == final
    page.close()


def test_tool_cards_and_shared_state_reach_the_page(apps: dict[str, str], browser: Any) -> None:
    prompt = "Compare the weather in Paris, Tokyo and New York"
    page, _ = ask(browser, apps["shipped"], prompt, "example-usechat-tools.png")
    cards = page.get_by_test_id("tool")
    names = [cards.nth(i).get_attribute("data-name") for i in range(cards.count())]
    assert names.count("get_weather") == 3 and "calculate" in names, names
    assert {cards.nth(i).get_attribute("data-state") for i in range(cards.count())} == {"output-available"}
    state = page.get_by_test_id("state").inner_text()
    assert '"title": "Weather in Tokyo"' in state and '"status": "done"' in state, state
    assert page.get_by_test_id("error").count() == 0
    page.close()


def test_with_compression_on_the_answer_arrives_at_once(apps: dict[str, str], browser: Any) -> None:
    """The control: Next's gzip holds the proxied stream back, so the page sees the answer only at the end."""
    page, updates = ask(browser, apps["compressed"], "Tell me a long story", "example-usechat-compressed.png")
    assert len(page.locator(ANSWER).last.inner_text()) > 400
    assert spread(updates) < 300, updates  # everything in one burst
    page.close()
