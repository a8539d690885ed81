"""OpenAI Agents SDK source: real ``agents.Agent`` runs (``Runner.run_streamed``) on a custom ``Model`` that
streams the real Responses API event types (``agents_model.ScriptedModel``), through the strict checker,
both protocols' routes and the real clients over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Agent, FunctionTool, function_tool, set_tracing_disabled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from streamkit.events import Message, ReasoningEnd, RunInput, TextPart, ToolCallPart, ToolResultPart
from streamkit.sources.openai_agents import AgentsSDKAgent, to_input_items
from tests.sources.agents_model import Call, Reasoning, ScriptedModel, Text
from tests.sources.support import (
    assert_clients_agree,
    collect,
    frontend_tool_runs,
    js_result,
    meant_of_events,
    plans,
    serve,
    summarize,
)
from tests.support.oracle import JsOracle

set_tracing_disabled(True)  # offline: no trace export


@function_tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "tempC": 21 if city == "Paris" else 18}


@function_tool(failure_error_function=None)
def explode(reason: str) -> str:
    """Always fails (and lets the exception end the run)."""
    raise RuntimeError(f"tool exploded: {reason}")


async def _echo(context: Any, arguments: str) -> str:
    return "ok"


ECHO = FunctionTool(
    name="echo",
    description="Takes any input.",
    params_json_schema={"type": "object", "additionalProperties": True},
    on_invoke_tool=_echo,
    strict_json_schema=False,
)

WEATHER = [
    Reasoning(["Two cities, ", "two calls."], encrypted="enc-1"),
    Text(["Checking ", "both."]),
    Call("c1", "get_weather", ['{"ci', 'ty": "Paris"}']),
    Call("c2", "get_weather", ['{"city": ', '"Tokyo"}']),
]
ANSWER = [Text(["Paris 21 °C, ", "Tokyo 18 °C."])]
USAGE = {
    "input_tokens": 40,
    "output_tokens": 20,
    "total_tokens": 60,
    "reasoning_tokens": 4,
    "cached_input_tokens": 8,
    "model": "scripted",
}


def user_run(text: str = "hi", **update: Any) -> RunInput:
    return RunInput(
        thread_id="th", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])], **update
    )


def weather_agent(*turns: Any) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(turns=list(turns))
    return Agent(name="Assistant", model=model, tools=[get_weather, explode]), model


# --- text, reasoning, tools ---------------------------------------------------------------------------


async def test_reasoning_text_parallel_calls_and_their_results() -> None:
    agent, model = weather_agent(WEATHER, ANSWER)
    events = await collect(AgentsSDKAgent(agent)(user_run()))
    assert summarize(events) == [
        ("run-started",),
        ("step", "Assistant"),
        ("reasoning", "Two cities, two calls."),
        ("text", "Checking both."),
        ("tool-call", "c1", '{"city": "Paris"}', {"city": "Paris"}),
        ("tool-call", "c2", '{"city": "Tokyo"}', {"city": "Tokyo"}),
        ("tool-result", "c1", {"city": "Paris", "tempC": 21}),
        ("tool-result", "c2", {"city": "Tokyo", "tempC": 18}),
        ("/step", "Assistant"),
        ("step", "Assistant"),
        ("text", "Paris 21 °C, Tokyo 18 °C."),
        ("/step", "Assistant"),
        ("run-finished", "stop", USAGE),
    ]
    # the argument deltas of the two calls arrived interleaved, each under its call_id
    deltas = [(e.id, e.delta) for e in events if e.type == "tool-call-args-delta"]
    assert deltas == [("c1", '{"ci'), ("c2", '{"city": '), ("c1", 'ty": "Paris"}'), ("c2", '"Tokyo"}')]
    end = next(e for e in events if isinstance(e, ReasoningEnd))
    assert end.encrypted_value == "enc-1"
    # the second model call got the SDK's items: the calls, then their outputs
    kinds = [(i.get("type"), i.get("call_id")) for i in model.inputs[1] if i.get("type", "").startswith("function")]
    assert kinds == [
        ("function_call", "c1"),
        ("function_call", "c2"),
        ("function_call_output", "c1"),
        ("function_call_output", "c2"),
    ]


def test_both_real_clients_over_http(js: JsOracle, live_server: Any) -> None:
    url = serve(live_server, AgentsSDKAgent(weather_agent(WEATHER, ANSWER)[0]))
    chat = js_result(js, "aisdk", {"api": f"{url}/api/chat"})
    assert chat["error"] is None and chat["finishReason"] == "stop"
    parts = chat["message"]["parts"]
    assert [p["text"] for p in parts if p["type"] == "reasoning"] == ["Two cities, two calls."]
    assert [p["text"] for p in parts if p["type"] == "text"] == ["Checking both.", "Paris 21 °C, Tokyo 18 °C."]
    tools = [(p["toolCallId"], p["state"], p["output"]) for p in parts if p["type"] == "tool-get_weather"]
    assert tools == [
        ("c1", "output-available", {"city": "Paris", "tempC": 21}),
        ("c2", "output-available", {"city": "Tokyo", "tempC": 18}),
    ]
    assert chat["message"]["metadata"]["usage"]["inputTokens"] == 40

    url = serve(live_server, AgentsSDKAgent(weather_agent(WEATHER, ANSWER)[0]))
    user = {"id": "u1", "role": "user", "content": "Weather?"}
    run = js_result(js, "agui", {"url": f"{url}/api/agui", "runs": [{"addMessages": [user]}]})["runs"][0]
    assert run["failed"] is None and run["outcome"] == "success"
    roles = [(m["role"], m.get("toolCallId")) for m in run["messages"]]
    assert roles == [
        ("user", None),
        ("reasoning", None),
        ("assistant", None),
        ("tool", "c1"),
        ("tool", "c2"),
        ("assistant", None),
    ]
    assert run["messages"][1]["encryptedValue"] == "enc-1"
    assert [c["id"] for c in run["messages"][2]["toolCalls"]] == ["c1", "c2"]


async def test_a_handoff_is_the_next_step_named_for_the_new_agent() -> None:
    model = ScriptedModel(
        turns=[
            [Call("h1", "transfer_to_weather_desk", ["{}"])],
            [Call("c1", "get_weather", ['{"city": "Paris"}'])],
            [Text(["It is 21 °C."])],
        ]
    )
    desk = Agent(name="Weather desk", model=model, tools=[get_weather])
    triage = Agent(name="Triage", model=model, handoffs=[desk])
    summary = summarize(await collect(AgentsSDKAgent(triage)(user_run("weather in Paris?"))))
    assert [e for e in summary if e[0] in ("step", "tool-result")] == [
        ("step", "Triage"),
        ("tool-result", "h1", {"agent": "Weather desk"}),
        ("step", "Weather desk"),
        ("tool-result", "c1", {"city": "Paris", "tempC": 21}),
        ("step", "Weather desk"),
    ]
    assert ("text", "It is 21 °C.") in summary


async def test_structured_output_is_the_run_result() -> None:
    class Forecast(BaseModel):
        city: str
        tempC: int

    model = ScriptedModel(turns=[[Text(['{"city": "Paris", ', '"tempC": 21}'])]])
    agent = Agent(name="Forecaster", model=model, output_type=Forecast)
    events = await collect(AgentsSDKAgent(agent)(user_run()))
    assert events[-1].type == "run-finished"
    assert events[-1].result == {"city": "Paris", "tempC": 21}  # type: ignore[union-attr]


# --- errors -----------------------------------------------------------------------------------------


def test_an_exception_in_the_model_ends_the_run_with_run_error(js: JsOracle) -> None:
    agent, _ = weather_agent([Text(["Let me "]), Call("c1", "get_weather", ['{"city": "Paris"}'])], ValueError("boom"))
    events = asyncio.run(collect(AgentsSDKAgent(agent)(user_run())))
    summary = summarize(events)
    assert ("tool-result", "c1", {"city": "Paris", "tempC": 21}) in summary
    assert summary[-2:] == [("/step", "Assistant"), ("run-error", "model_error", "boom")]
    meant = meant_of_events(events)
    assert_clients_agree(js, events, meant)


async def test_a_tool_exception_and_max_turns_end_the_run_with_run_error() -> None:
    agent, _ = weather_agent([Call("x1", "explode", ['{"reason": "disk"}'])])
    summary = summarize(await collect(AgentsSDKAgent(agent)(user_run())))
    assert summary[-1][0] == "run-error" and "tool exploded: disk" in summary[-1][2]

    loop = [Call(f"c{n}", "get_weather", ['{"city": "Oslo"}']) for n in range(3)]
    agent, _ = weather_agent(*[[call] for call in loop])
    summary = summarize(await collect(AgentsSDKAgent(agent, max_turns=2)(user_run())))
    assert summary[-1][0] == "run-error" and "Max turns (2) exceeded" in summary[-1][2]


def test_frontend_tools_are_left_pending_then_answered(js: JsOracle, live_server: Any) -> None:
    agent, model = weather_agent(
        [Call("c1", "get_weather", ['{"city": "Paris"}']), Call("t1", "set_theme", ['{"theme": "dark"}'])],
        [Text(["Done, the page is now dark."])],
    )
    url = serve(live_server, AgentsSDKAgent(agent))
    first, second = frontend_tool_runs(js, url)
    assert first["failed"] is None and first["outcome"] == "success"
    assert first["pendingToolCallIds"] == ["t1"]  # the server tool ran, the frontend tool waits
    assert [m.get("toolCallId") for m in first["messages"] if m["role"] == "tool"] == ["c1"]
    assert second["messages"][-1]["content"] == "Done, the page is now dark."
    outputs = [(i["call_id"], i["output"]) for i in model.inputs[1] if i.get("type") == "function_call_output"]
    assert outputs == [("c1", '{"city":"Paris","tempC":21}'), ("t1", '{"ok": true}')]


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def approval_agent(*turns: Any) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(turns=list(turns))
    return Agent(name="Assistant", model=model, tools=[delete_file]), model


DELETE = [Text(["Deleting."]), Call("d1", "delete_file", ['{"path": "notes.txt"}'])]


def test_approval_through_the_real_ai_sdk_chat(js: JsOracle, live_server: Any) -> None:
    agent, model = approval_agent(DELETE, [Text(["Deleted."])])
    url = serve(live_server, AgentsSDKAgent(agent))
    chat = js_result(
        js,
        "aisdk",
        {
            "api": f"{url}/api/chat",
            "auto": "approvals",
            "steps": [
                {"do": "sendMessage", "args": {"text": "delete notes.txt"}},
                {"do": "addToolApprovalResponse", "args": {"id": "approval-d1", "approved": True}},
            ],
        },
    )
    assert chat["error"] is None and chat["status"] == "ready"
    assert len(chat["requests"]) == 2
    [part] = [p for p in chat["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert (part["state"], part["output"]) == ("output-available", "deleted notes.txt")
    assert [p["text"] for p in chat["message"]["parts"] if p["type"] == "text"] == ["Deleting.", "Deleted."]
    assert len(model.inputs) == 2  # the paused run resumed: no model call repeated


def test_denial_through_the_real_ag_ui_client(js: JsOracle, live_server: Any) -> None:
    agent, model = approval_agent(DELETE, [Text(["I left it alone."])])
    url = serve(live_server, AgentsSDKAgent(agent))
    user = {"id": "u1", "role": "user", "content": "delete notes.txt"}
    resume = {
        "resume": [
            {"interruptId": "approval-d1", "status": "resolved", "payload": {"approved": False, "reason": "keep it"}}
        ]
    }
    result = js_result(
        js, "agui", {"url": f"{url}/api/agui", "runs": [{"addMessages": [user]}, {"parameters": resume}]}
    )
    first, second = result["runs"]
    assert first["outcome"] == "interrupt"
    assert [(i["id"], i["toolCallId"]) for i in first["interrupts"]] == [("approval-d1", "d1")]
    assert second["failed"] is None and second["outcome"] == "success"
    assert second["messages"][-1]["content"] == "I left it alone."
    # the model saw the user's reason as the call's output
    outputs = [i["output"] for i in model.inputs[1] if i.get("type") == "function_call_output"]
    assert outputs == ["keep it"]


# --- input ------------------------------------------------------------------------------------------


async def test_history_goes_to_the_sdk_as_input_items_in_causal_order() -> None:
    history = [
        Message(id="u1", role="user", parts=[TextPart(text="weather?")]),
        Message(
            id="a1",
            role="assistant",
            parts=[
                TextPart(text="Checking."),
                ToolCallPart(id="c1", name="get_weather", input={"city": "Paris"}),
                ToolResultPart(id="c1", name="get_weather", output={"tempC": 21}),
                TextPart(text="21 °C."),
            ],
        ),
        Message(id="u2", role="user", parts=[TextPart(text="thanks")]),
    ]
    run = RunInput(thread_id="th", run_id="r2", messages=history)
    agent, model = weather_agent([Text(["You're welcome."])])
    events = await collect(AgentsSDKAgent(agent)(run))
    assert summarize(events)[-3] == ("text", "You're welcome.")
    sent = model.inputs[0]
    assert sent == to_input_items(run)
    assert [(i.get("role") or i.get("type"), i.get("call_id")) for i in sent] == [
        ("user", None),
        ("assistant", None),
        ("function_call", "c1"),
        ("function_call_output", "c1"),
        ("assistant", None),
        ("user", None),
    ]


# --- generated streams through both real clients ------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_runs_reach_both_clients_as_meant(js: JsOracle, data: st.DataObject) -> None:
    plan = data.draw(plans(id_prefix="call_"))
    turn: list[Any] = []
    if plan.reasoning:
        turn.append(Reasoning(plan.reasoning))
    if plan.text:
        turn.append(Text(plan.text))
    turn += [Call(c.id, "echo", c.pieces) for c in plan.calls]
    model = ScriptedModel(turns=[turn, [Text(["done"])]] if plan.calls else [turn])
    agent = Agent(name="A", model=model, tools=[ECHO])
    events = asyncio.run(collect(AgentsSDKAgent(agent)(user_run())))
    meant = plan.meant(finish="stop")
    meant.blocks = [("tool", b[1], "echo", b[3]) if b[0] == "tool" else b for b in meant.blocks]
    if plan.calls:
        meant.add("text", "done")
    got = meant_of_events(events)
    assert (got.blocks, got.finish, got.error) == (meant.blocks, meant.finish, meant.error)
    assert_clients_agree(js, events, meant)


def test_without_the_extra_the_import_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "agents.stream_events", None)
    monkeypatch.delitem(sys.modules, "streamkit.sources.openai_agents")
    with pytest.raises(ImportError, match=r"pip install 'streamkit\[openai-agents\]'"):
        importlib.import_module("streamkit.sources.openai_agents")
