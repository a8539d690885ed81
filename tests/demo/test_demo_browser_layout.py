"""The demo page's layout in headless Chromium: usable on a phone (390 px: stacked panels, no horizontal
overflow, both tabs reachable), the frame inspector following new frames while the plan panel grows, and the
inspector showing a delta's text first. Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.demo import test_demo_browser as base

pytestmark = pytest.mark.browser

ARTIFACTS = base.ARTIFACTS
chat = base.chat
browser = base.browser  # the fixtures, shared with the other browser tests
demo_url = base.demo_url

# Whether the frame list is scrolled to its end (what "following" means), and how far off it is.
FRAMES_AT_END = """
pane => {
  const el = document.querySelector(`[data-testid="${pane}"] [data-testid="frame-log"] .frames`);
  return el.scrollHeight - el.scrollTop - el.clientHeight;
}
"""

# Widest element box right edge on the page, and the document's scroll width.
OVERFLOW = """
() => {
  let right = 0;
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width && box.height && getComputedStyle(el).visibility !== "hidden") right = Math.max(right, box.right);
  }
  return { scrollWidth: document.documentElement.scrollWidth, right: Math.ceil(right) };
}
"""


def box(locator: Any) -> dict[str, float]:
    found: dict[str, float] | None = locator.bounding_box()
    assert found is not None, "not rendered"
    return found


def fits(page: Any, width: int) -> None:
    sizes = page.evaluate(OVERFLOW)
    assert sizes["scrollWidth"] <= width, sizes
    assert sizes["right"] <= width, sizes


@pytest.mark.parametrize("width", [390, 420])
def test_the_page_is_usable_on_a_phone(browser: Any, demo_url: str, width: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": 844}, device_scale_factor=2, has_touch=True)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.goto(demo_url + "/")
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)
    fits(page, width)
    for tab in ("tab-aisdk", "tab-agui"):  # both tabs on screen, tappable
        found = box(page.get_by_test_id(tab))
        assert found["x"] >= 0 and found["x"] + found["width"] <= width, (tab, found)
        assert found["height"] >= 32, (tab, found)  # a finger's worth

    page.get_by_test_id("tab-agui").click()
    pane = page.get_by_test_id("pane-agui")
    chat(page, "pane-agui", "What's the weather in Lisbon?")
    fits(page, width)
    answer = pane.get_by_test_id("answer-text").last
    assert "sunny in Lisbon" in answer.inner_text()
    answer_box = box(answer)
    assert answer_box["width"] > width * 0.5 and answer_box["x"] + answer_box["width"] <= width
    # stacked: the chat, then the state panel and the frames below it, each the width of the screen
    chat_box = box(pane.locator(".chat"))
    state_box = box(pane.get_by_test_id("state-panel"))
    frames_box = box(pane.get_by_test_id("frame-log"))
    assert state_box["y"] >= chat_box["y"] + chat_box["height"] - 1
    assert frames_box["y"] >= state_box["y"] + state_box["height"] - 1
    for found in (chat_box, state_box, frames_box):
        assert found["width"] >= width * 0.9 and found["x"] + found["width"] <= width
    assert pane.get_by_test_id("composer-input").is_visible()
    page.screenshot(path=str(ARTIFACTS / f"demo-phone-{width}.png"), full_page=True)

    page.get_by_test_id("tab-aisdk").click()
    chat(page, "pane-aisdk", "Hi there!")
    fits(page, width)
    assert page.get_by_test_id("pane-aisdk").get_by_test_id("answer-text").last.inner_text() != ""
    assert problems == []
    page.close()


def test_the_frame_inspector_follows_while_the_plan_grows(browser: Any, demo_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(demo_url + "/")
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)
    for tab, pane in (("tab-aisdk", "pane-aisdk"), ("tab-agui", "pane-agui")):
        page.get_by_test_id(tab).click()
        root = page.get_by_test_id(pane)
        # runs started from the suggestion chips: each one's plan resizes the state panel, squeezing the
        # frame list while frames arrive
        for i, label in enumerate(("Parallel tools", "Say hi", "One tool call", "Sources", "Tool failure")):
            chips = root.locator(".empty .suggestions button" if i == 0 else ".composer .suggestions button")
            chips.filter(has_text=label).click()
            root.get_by_test_id("stop-button").wait_for(state="attached", timeout=10_000)
            root.get_by_test_id("send-button").wait_for(state="attached", timeout=30_000)
            page.wait_for_timeout(150)  # the inspector's last animation frame
            assert page.evaluate(FRAMES_AT_END, pane) <= 2, (pane, label)
    page.close()


def test_the_inspector_shows_the_delta_text_first(browser: Any, demo_url: str) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(demo_url + "/#agui")
    page.get_by_text("Offline scripted agent").wait_for(timeout=10_000)
    for pane, kinds in (
        ("pane-agui", ("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "REASONING_MESSAGE_CONTENT")),
        ("pane-aisdk", ("text-delta", "tool-input-delta", "reasoning-delta")),
    ):
        if pane == "pane-aisdk":
            page.get_by_test_id("tab-aisdk").click()
        chat(page, pane, "What's the weather in Lisbon?")
        log = page.get_by_test_id(pane).get_by_test_id("frame-log")
        for kind in kinds:
            row = log.locator(".frame", has=page.locator(".pill", has_text=kind)).first
            shown = row.locator(".frame-text").inner_text()
            assert shown.startswith('"') and not shown.startswith('"messageId"'), (kind, shown)
            full = row.get_attribute("title") or ""
            assert ("messageId" in full or "toolCallId" in full or '"id"' in full), (kind, full)
    page.close()
