"""``streamkit.testing`` for users' tests: a route called in-process, scripted agents, recorded provider
streams replayed through the provider's SDK."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette

from streamkit import agui, aisdk, dsh
from streamkit.events import RunInput, TextDelta
from streamkit.testing import (
    Replay,
    ScriptedRun,
    acall_route,
    anthropic_client,
    approval,
    call_route,
    openai_client,
    scripted,
    text,
    tool_call,
)
from tests.sources import bodies
from tests.support.fixtures import provider_fixture


def app_of(agent: Any) -> Starlette:
    return Starlette(routes=[*aisdk.routes(agent), *agui.routes(agent), *dsh.routes(agent)])


WEATHER = scripted(
    text("Let me look."),
    tool_call("get_weather", {"city": "Paris"}, output={"tempC": 21}, id="c1"),
    text("It is 21 °C.", chunks=3),
)


@pytest.mark.parametrize("protocol", ["aisdk", "agui", "dsh"])
def test_a_route_called_in_process_reports_what_the_client_shows(protocol: str) -> None:
    report = call_route(app_of(WEATHER), protocol, message="Weather in Paris?")
    report.raise_for_errors()
    assert report.status == 200 and report.headers["content-type"].startswith("text/event-stream")
    assert report.text == "Let me look.It is 21 °C."
    assert len(report.tool_calls) == 1 and report.pending_tool_calls == []


async def test_the_async_call_in_a_test_with_a_loop() -> None:
    report = await acall_route(app_of(WEATHER), "aisdk", version=5)
    assert report.ok and report.version == "5"
    with pytest.raises(RuntimeError, match="acall_route"):
        call_route(app_of(WEATHER))


def test_an_approval_ends_the_run_waiting() -> None:
    agent = scripted(text("I will delete it."), approval("delete_file", {"path": "/tmp/x"}, id="c9"))
    report = call_route(app_of(agent), "aisdk")
    assert report.ok and report.outcome == "tool-calls" and report.pending_tool_calls == ["c9"]
    assert report.tool_calls[0]["state"] == "approval-requested"
    interrupted = call_route(app_of(agent), "agui")
    assert interrupted.ok and interrupted.outcome == "interrupt"


def test_a_scripted_run_plays_runs_in_order_and_keeps_inputs() -> None:
    agent = ScriptedRun([TextDelta(id="a", delta="one")], [TextDelta(id="b", delta="two")])
    assert call_route(app_of(agent), message="first").text == "one"
    assert call_route(app_of(agent), message="second").text == "two"
    assert call_route(app_of(agent)).text == "two"
    assert [isinstance(i, RunInput) for i in agent.inputs] == [True] * 3
    with pytest.raises(ValueError):
        ScriptedRun()


def test_a_broken_route_fails_the_test() -> None:
    async def broken(request: Any) -> Any:
        from starlette.responses import Response

        return Response('data: {"type":"text-delta","id":"t","delta":"x"}\n\n', media_type="text/event-stream")

    from starlette.routing import Route

    report = call_route(Starlette(routes=[Route("/api/chat", broken, methods=["POST"])]))
    assert "aisdk.part-not-open" in report.rules()
    with pytest.raises(AssertionError, match="part-not-open"):
        report.raise_for_errors()
    missing = call_route(Starlette(routes=[]), "agui")
    assert missing.status == 404
    with pytest.raises(AssertionError, match="HTTP 404"):
        missing.raise_for_errors()


def test_a_recorded_openai_stream_through_the_sdk() -> None:
    pytest.importorskip("openai")
    from streamkit.sources.openai import OpenAIChatAgent
    from streamkit.sources.tools import server_tool

    @server_tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        return {"tempC": 21}

    replay = Replay(bodies.chat_tool_call(), bodies.chat_text())
    agent = OpenAIChatAgent(openai_client(replay, base_url="http://model.test/v1"), model="gpt-4o", tools=[get_weather])
    report = call_route(app_of(agent), message="Weather?")
    report.raise_for_errors()
    assert [t["state"] for t in report.tool_calls] == ["output-available"]
    assert report.text and len(replay.requests) == 2 and replay.paths[0].endswith("/chat/completions")


def test_a_recorded_anthropic_stream_through_the_sdk() -> None:
    pytest.importorskip("anthropic")
    from streamkit.sources.anthropic import AnthropicAgent

    replay = Replay(provider_fixture("streamkit-tests/anthropic_basic_response.sse"))
    agent = AnthropicAgent(anthropic_client(replay, base_url="http://model.test"), model="claude-sonnet-4-5")
    report = call_route(app_of(agent), "agui", message="Hi")
    report.raise_for_errors()
    assert report.text and report.outcome == "success" and replay.paths == ["/v1/messages"]
