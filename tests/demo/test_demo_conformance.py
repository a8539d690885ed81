"""The demo's agents through the real routes and the real clients: ``useChat``'s Chat and AG-UI's HttpAgent.

Every path of the offline agent (and the OpenAI-compatible agent on a recorded response) is served by the
demo app on a loopback port; the AI SDK client talks to it over HTTP, and the AG-UI client pipeline reads
the bytes the AG-UI route sent for the request the client would make.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamkit.demo.agent import INSTANT, ScriptedAgent, script
from streamkit.demo.app import create_app
from streamkit.demo.models import OpenAIAgent
from streamkit.events import ChatEvent, Message, RunInput, TextPart
from tests.demo.openai_replay import replay_app, serve
from tests.support.oracle import JsOracle

PROMPTS: dict[str, str] = {
    "chat": "Hi there!",
    "weather": "What's the weather in Lisbon?",
    "math": "what is 12 * 7?",
    "several": "Compare the weather in Paris, Tokyo and New York",
    "failure": "What is 1/0?",
    "long": "Tell me a long story",
    "crash": "crash",
    "search": "What is AG-UI?",
}
CRASH_MESSAGE = "The scripted agent crashed on purpose (you asked for it)."


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    with serve(create_app(ScriptedAgent(INSTANT), static_dir=None)) as url:
        yield url


@pytest.fixture(scope="module")
def model_demo() -> Iterator[str]:
    """The demo app driving the OpenAI-compatible agent, itself talking to the replay server."""
    with serve(replay_app()) as model_url:
        agent = OpenAIAgent(model_url + "/v1", "parallel_tools", max_steps=3)
        with serve(create_app(agent, static_dir=None)) as url:
            yield url


def expected(prompt: str) -> list[ChatEvent]:
    run = RunInput(thread_id="t", run_id="r", messages=[Message(id="u", role="user", parts=[TextPart(text=prompt)])])
    return [event for _, event in script(run)]


def answer_text(events: list[ChatEvent]) -> str:
    return "".join(e.delta for e in events if e.type == "text-delta")  # type: ignore[union-attr]


def final_state(events: list[ChatEvent]) -> Any:
    states = [e.state for e in events if e.type in ("state-snapshot", "state-update")]  # type: ignore[union-attr]
    return states[-1] if states else None


def tool_calls(events: list[ChatEvent]) -> list[tuple[str, Any, Any, str | None]]:
    """(name, input, output, error) of each call, in order."""
    names = {e.id: e.name for e in events if e.type == "tool-call-start"}  # type: ignore[union-attr]
    inputs = {e.id: e.input for e in events if e.type == "tool-call-end"}  # type: ignore[union-attr]
    return [
        (names[e.id], inputs[e.id], e.output, e.error)  # type: ignore[union-attr]
        for e in events
        if e.type == "tool-result"
    ]


# --- AI SDK: useChat's Chat over HTTP --------------------------------------------------------------


def send(js: JsOracle, url: str, *texts: str) -> dict[str, Any]:
    steps = [{"do": "sendMessage", "args": {"text": text}} for text in texts]
    answer = js.call("aisdk", {"api": f"{url}/api/chat", "steps": steps})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == []
    result: dict[str, Any] = answer["result"]
    return result


@pytest.mark.parametrize("path", sorted(PROMPTS))
def test_aisdk_client_builds_the_message(path: str, js: JsOracle, demo: str) -> None:
    events = expected(PROMPTS[path])
    result = send(js, demo, PROMPTS[path])
    message = result["message"]
    parts = message["parts"]
    kinds = [p["type"] for p in parts]
    texts = "".join(p["text"] for p in parts if p["type"] == "text")
    reasoning = [p for p in parts if p["type"] == "reasoning"]
    if path == "crash":
        assert result["status"] == "error"
        assert result["error"]["message"] == CRASH_MESSAGE
        assert texts == answer_text(events)  # what streamed before the error stays
        return
    assert result["status"] == "ready" and result["error"] is None
    assert result["finishReason"] == "stop"
    assert texts == answer_text(events)
    assert reasoning and all(p["state"] == "done" for p in reasoning)
    assert all(p["state"] == "done" for p in parts if p["type"] == "text")
    # tools: one part per call, in its final state
    calls = tool_calls(events)
    tool_parts = [p for p in parts if p["type"].startswith("tool-")]
    assert [p["type"] for p in tool_parts] == [f"tool-{name}" for name, *_ in calls]
    for part, (_, given, output, error) in zip(tool_parts, calls, strict=True):
        assert part["input"] == given
        if error is None:
            assert (part["state"], part["output"]) == ("output-available", output)
        else:
            assert (part["state"], part["errorText"]) == ("output-error", error)
    # sources, and the shared state as one data-state part replaced in place
    sources = [e.url for e in events if e.type == "source"]  # type: ignore[union-attr]
    assert [p["url"] for p in parts if p["type"] == "source-url"] == sources
    assert kinds.count("data-state") == 1
    (state,) = [p["data"] for p in parts if p["type"] == "data-state"]
    assert state == final_state(events)
    updates = [d for d in result["data"] if d["type"] == "data-state"]
    assert len(updates) == len([e for e in events if e.type in ("state-snapshot", "state-update")])


def test_aisdk_client_continues_the_conversation(js: JsOracle, demo: str) -> None:
    result = send(js, demo, PROMPTS["weather"], PROMPTS["failure"])
    assert result["status"] == "ready" and result["error"] is None
    assert [m["role"] for m in result["messages"]] == ["user", "assistant", "user", "assistant"]
    second = result["requests"][1]["body"]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert any(p["type"] == "tool-get_weather" for p in second[1]["parts"])  # the history went back, tools and all
    assert answer_text(expected(PROMPTS["failure"])) in "".join(p.get("text", "") for p in result["message"]["parts"])


# --- AG-UI: the HttpAgent pipeline on the route's bytes --------------------------------------------


def agui_bytes(url: str, run_id: str, messages: list[dict[str, Any]], state: Any) -> str:
    body = {
        "threadId": "thread-1",
        "runId": run_id,
        "state": state,
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    response = httpx.post(f"{url}/api/agui", json=body, timeout=30)
    assert response.status_code == 200
    return response.text


def agui_run(
    js: JsOracle, url: str, text: str, history: list[dict[str, Any]] | None = None, state: Any = None
) -> dict[str, Any]:
    history = history or []
    user = {"id": f"u{len(history)}", "role": "user", "content": text}
    run_id = f"run-{len(history)}"
    body = agui_bytes(url, run_id, [*history, user], state if state is not None else {})
    answer = js.call(
        "agui",
        {
            "threadId": "thread-1",
            "messages": history,
            "state": state if state is not None else {},
            "runs": [{"body": body, "runId": run_id, "addMessages": [user]}],
        },
    )
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == []  # nothing stripped, converted or dropped by the client
    result: dict[str, Any] = answer["result"]
    return result


@pytest.mark.parametrize("path", sorted(PROMPTS))
def test_agui_client_builds_messages_and_state(path: str, js: JsOracle, demo: str) -> None:
    events = expected(PROMPTS[path])
    result = agui_run(js, demo, PROMPTS[path])
    (run,) = result["runs"]
    assert run["failed"] is None
    messages = result["messages"]
    text = "".join(m.get("content", "") for m in messages if m["role"] == "assistant")
    reasoning = "".join(m["content"] for m in messages if m["role"] == "reasoning")
    assert text == answer_text(events)
    assert reasoning == "".join(e.delta for e in events if e.type == "reasoning-delta")  # type: ignore[union-attr]
    if path == "crash":
        assert run["runError"] == {"message": CRASH_MESSAGE, "code": "demo_crash"}
        return
    assert run["runError"] is None and run["outcome"] == "success"
    assert run["pendingToolCallIds"] == []
    assert result["state"] == final_state(events)
    # each tool call sits on an assistant message, its result in a tool message
    calls = tool_calls(events)
    made = [c for m in messages if m["role"] == "assistant" for c in m.get("toolCalls", [])]
    results = {m["toolCallId"]: m for m in messages if m["role"] == "tool"}
    assert [c["function"]["name"] for c in made] == [name for name, *_ in calls]
    for call, (_, given, output, error) in zip(made, calls, strict=True):
        assert json.loads(call["function"]["arguments"]) == given
        tool_message = results[call["id"]]
        if error is None:
            assert json.loads(tool_message["content"]) == output
        else:
            assert tool_message["content"] == error
    sources = [e["value"]["url"] for e in run["events"] if e["type"] == "CUSTOM" and e["name"] == "streamkit.source"]
    assert sources == [e.url for e in events if e.type == "source"]  # type: ignore[union-attr]
    deltas = [e for e in run["events"] if e["type"] == "STATE_DELTA"]
    assert len(deltas) == len([e for e in events if e.type == "state-update"])  # every update as a patch


def test_agui_client_continues_the_thread(js: JsOracle, demo: str) -> None:
    first = agui_run(js, demo, PROMPTS["weather"])
    second = agui_run(js, demo, PROMPTS["math"], history=first["messages"], state=first["state"])
    (run,) = second["runs"]
    assert run["failed"] is None and run["runError"] is None
    roles = [m["role"] for m in second["messages"]]
    assert roles.count("user") == 2
    ids = [m["id"] for m in second["messages"]]
    assert len(ids) == len(set(ids))  # no message of run 2 reuses an id of run 1
    assert second["state"] == final_state(expected(PROMPTS["math"]))


# --- the OpenAI-compatible agent behind both routes ------------------------------------------------


def test_model_agent_through_usechat(js: JsOracle, model_demo: str) -> None:
    result = send(js, model_demo, "Weather in Paris and Tokyo?")
    assert result["status"] == "ready" and result["error"] is None
    parts = result["message"]["parts"]
    tools = [p for p in parts if p["type"] == "tool-get_weather"]
    assert [(p["toolCallId"], p["state"], p["input"]) for p in tools] == [
        ("chatcmpl-tool-a1", "output-available", {"city": "Paris"}),
        ("chatcmpl-tool-b2", "output-available", {"city": "Tokyo"}),
    ]
    assert [p["type"] for p in parts].count("step-start") == 2
    assert "".join(p["text"] for p in parts if p["type"] == "text").startswith("Paris is 21°C")
    (state,) = [p["data"] for p in parts if p["type"] == "data-state"]
    assert state["status"] == "done" and len(state["steps"]) == 4


def test_model_agent_through_agui(js: JsOracle, model_demo: str) -> None:
    result = agui_run(js, model_demo, "Weather in Paris and Tokyo?")
    (run,) = result["runs"]
    assert run["failed"] is None and run["runError"] is None
    calls = [c["id"] for m in result["messages"] if m["role"] == "assistant" for c in m.get("toolCalls", [])]
    assert calls == ["chatcmpl-tool-a1", "chatcmpl-tool-b2"]
    assert {m["toolCallId"] for m in result["messages"] if m["role"] == "tool"} == set(calls)
    assert result["state"]["status"] == "done"


def test_model_agent_leaves_frontend_tool_calls_to_the_agui_client(js: JsOracle) -> None:
    """A call to a tool of the client's (RunAgentInput.tools) ends the run with that call pending."""
    tool = {
        "name": "confirm_booking",
        "description": "Ask the user to confirm a hotel booking.",
        "parameters": {"type": "object", "properties": {"hotel": {"type": "string"}, "nights": {"type": "integer"}}},
    }
    user = {"id": "u0", "role": "user", "content": "Book me two nights in Lisbon"}
    with serve(replay_app()) as model_url:
        agent = OpenAIAgent(model_url + "/v1", "frontend_tool", max_steps=3)
        with serve(create_app(agent, static_dir=None)) as url:
            body = {
                "threadId": "thread-1",
                "runId": "run-0",
                "state": {},
                "messages": [user],
                "tools": [tool],
                "context": [],
                "forwardedProps": {},
            }
            response = httpx.post(f"{url}/api/agui", json=body, timeout=30)
    assert response.status_code == 200
    answer = js.call(
        "agui",
        {
            "threadId": "thread-1",
            "runs": [{"body": response.text, "runId": "run-0", "addMessages": [user], "parameters": {"tools": [tool]}}],
        },
    )
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == []
    (run,) = answer["result"]["runs"]
    assert run["failed"] is None and run["runError"] is None
    assert run["outcome"] == "success"
    assert run["pendingToolCallIds"] == ["call_Fr0nt7oolK2x"]
    (call,) = [c for m in answer["result"]["messages"] if m["role"] == "assistant" for c in m.get("toolCalls", [])]
    assert call["function"] == {"name": "confirm_booking", "arguments": '{"hotel":"Lisbon Central","nights":2}'}
    assert not [m for m in answer["result"]["messages"] if m["role"] == "tool"]
