"""pydantic-ai source: real ``pydantic_ai.Agent``\\ s run offline on pydantic-ai's own test doubles
(``FunctionModel`` with a streaming function: text, thinking with a signature, tool-call deltas by index;
``TestModel``), through the strict checker, both protocols' routes and the real clients over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent, ModelRetry
from pydantic_ai import messages as pai
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel

from streamkit.events import (
    ApprovalState,
    Message,
    ReasoningEnd,
    ReasoningPart,
    RunInput,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
)
from streamkit.sources.pydantic_ai import PydanticAIAgent, to_model_messages
from tests.sources.support import (
    assert_clients_agree,
    collect,
    frontend_tool_runs,
    interleave,
    js_result,
    meant_of_events,
    plans,
    serve,
    summarize,
)
from tests.support.oracle import JsOracle


class Script:
    """A ``FunctionModel`` stream function playing one scripted turn per model call (a list of what
    ``FunctionModel`` streams: text deltas, ``{index: DeltaToolCall}``, ``{index: DeltaThinkingPart}``; or
    an exception to raise), recording the messages each call received."""

    def __init__(self, *turns: Any) -> None:
        self.turns = list(turns)
        self.calls: list[list[pai.ModelMessage]] = []

    async def __call__(self, messages: list[pai.ModelMessage], info: AgentInfo) -> Any:
        self.calls.append(list(messages))
        turn = self.turns.pop(0)
        if isinstance(turn, BaseException):
            raise turn
        for item in turn:
            yield item

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self)


def weather_agent(script: Script) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(script.model())

    @agent.tool_plain
    def get_weather(city: str) -> dict[str, Any]:
        """The weather in a city."""
        return {"city": city, "tempC": 21 if city == "Paris" else 18}

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @agent.tool_plain
    def flaky(n: int) -> int:
        """Always fails."""
        raise RuntimeError("the disk is on fire")

    return agent


def user_run(text: str = "hi", **update: Any) -> RunInput:
    return RunInput(
        thread_id="th", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])], **update
    )


WEATHER = [
    {0: DeltaThinkingPart(content="Two cities, ")},
    {0: DeltaThinkingPart(content="two calls.", signature="sig-1")},
    "Checking ",
    "both.",
    {2: DeltaToolCall(name="get_weather", json_args='{"ci', tool_call_id="c1")},
    {3: DeltaToolCall(name="get_weather", json_args='{"city": ', tool_call_id="c2")},
    {2: DeltaToolCall(json_args='ty": "Paris"}')},
    {3: DeltaToolCall(json_args='"Tokyo"}')},
]
ANSWER = ["Paris 21 °C, ", "Tokyo 18 °C."]


# --- text, reasoning, tools ---------------------------------------------------------------------------


async def test_text_reasoning_and_parallel_tool_calls_with_results() -> None:
    script = Script(WEATHER, ANSWER)
    events = await collect(PydanticAIAgent(weather_agent(script))(user_run()))
    summary = summarize(events)
    summary[6:8] = sorted(summary[6:8])  # the agent runs the two tools concurrently
    assert summary == [
        ("run-started",),
        ("step", "model-call-1"),
        ("reasoning", "Two cities, two calls."),
        ("text", "Checking both."),
        ("tool-call", "c1", '{"city": "Paris"}', {"city": "Paris"}),
        ("tool-call", "c2", '{"city": "Tokyo"}', {"city": "Tokyo"}),
        ("tool-result", "c1", {"city": "Paris", "tempC": 21}),
        ("tool-result", "c2", {"city": "Tokyo", "tempC": 18}),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", "Paris 21 °C, Tokyo 18 °C."),
        ("/step", "model-call-2"),
        ("run-finished", "stop", {"input_tokens": 100, "output_tokens": 28, "total_tokens": 128}),
    ]
    end = next(e for e in events if isinstance(e, ReasoningEnd))
    assert end.provider_metadata == {"pydantic_ai": {"signature": "sig-1", "provider_name": "function"}}
    # the second model call saw the calls, then their returns
    second = script.calls[1]
    assert isinstance(second[-1], pai.ModelRequest)
    assert [(p.tool_call_id, p.content) for p in second[-1].parts if isinstance(p, pai.ToolReturnPart)] == [
        ("c1", {"city": "Paris", "tempC": 21}),
        ("c2", {"city": "Tokyo", "tempC": 18}),
    ]


def test_both_real_clients_over_http(js: JsOracle, live_server: Any) -> None:
    url = serve(live_server, PydanticAIAgent(weather_agent(Script(WEATHER, ANSWER))))
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

    url = serve(live_server, PydanticAIAgent(weather_agent(Script(WEATHER, ANSWER))))
    user = {"id": "u1", "role": "user", "content": "Weather?"}
    run = js_result(js, "agui", {"url": f"{url}/api/agui", "runs": [{"addMessages": [user]}]})["runs"][0]
    assert run["failed"] is None and run["outcome"] == "success"
    roles = [(m["role"], m.get("toolCallId")) for m in run["messages"]]
    roles[3:5] = sorted(roles[3:5])  # results in the order the concurrent tools finished
    assert roles == [
        ("user", None),
        ("reasoning", None),
        ("assistant", None),
        ("tool", "c1"),
        ("tool", "c2"),
        ("assistant", None),
    ]
    assert [c["id"] for c in run["messages"][2]["toolCalls"]] == ["c1", "c2"]
    assert run["messages"][5]["content"] == "Paris 21 °C, Tokyo 18 °C."


async def test_a_tool_asking_for_a_retry_reports_its_error_and_the_run_goes_on() -> None:
    script = Script([{0: DeltaToolCall(name="picky", json_args='{"n": 1}', tool_call_id="p1")}], ["Sorry."])
    agent = weather_agent(script)

    @agent.tool_plain
    def picky(n: int) -> int:
        """Wants a bigger number."""
        raise ModelRetry("n must be at least 2")

    events = await collect(PydanticAIAgent(agent)(user_run()))
    summary = summarize(events)
    [error] = [e for e in summary if e[0] == "tool-error"]
    assert error[1] == "p1" and "n must be at least 2" in error[2]
    assert ("text", "Sorry.") in summary and summary[-1][:2] == ("run-finished", "stop")


async def test_an_exception_in_a_tool_ends_the_run_with_run_error() -> None:
    script = Script([{0: DeltaToolCall(name="flaky", json_args='{"n": 1}', tool_call_id="f1")}], ["Sorry."])
    events = await collect(PydanticAIAgent(weather_agent(script))(user_run()))
    assert summarize(events)[-3:] == [
        ("tool-call", "f1", '{"n": 1}', {"n": 1}),
        ("/step", "model-call-1"),
        ("run-error", "model_error", "the disk is on fire"),
    ]


def test_an_exception_inside_the_agent_ends_the_run_with_run_error(js: JsOracle) -> None:
    script = Script(
        ["Let me ", {1: DeltaToolCall(name="get_weather", json_args='{"city": "Paris"}', tool_call_id="c1")}],
        RuntimeError("model exploded"),
    )
    events = asyncio.run(collect(PydanticAIAgent(weather_agent(script))(user_run())))
    summary = summarize(events)
    assert summary[-2:] == [("/step", "model-call-1"), ("run-error", "model_error", "model exploded")]
    assert ("tool-result", "c1", {"city": "Paris", "tempC": 21}) in summary
    meant = meant_of_events(events)
    assert meant.error == "model exploded"
    assert_clients_agree(js, events, meant)


async def test_test_model_calls_every_tool() -> None:
    agent: Agent[None, str] = Agent(TestModel(call_tools=["get_weather"]))

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Weather."""
        return f"sunny in {city}"

    events = await collect(PydanticAIAgent(agent)(user_run()))
    summary = summarize(events)
    assert [e[0] for e in summary if e[0].startswith("tool")] == ["tool-call", "tool-result"]
    assert summary[-1][:2] == ("run-finished", "stop")


async def test_structured_output_is_the_run_result() -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        population: int

    agent: Agent[None, City] = Agent(
        TestModel(custom_output_args={"name": "Lisbon", "population": 545_000}), output_type=City
    )
    events = await collect(PydanticAIAgent(agent)(user_run()))
    assert events[-1].type == "run-finished"
    assert events[-1].result == {"name": "Lisbon", "population": 545_000}  # type: ignore[union-attr]


# --- approvals and frontend tools -------------------------------------------------------------------


DELETE = [
    "Deleting.",
    {1: DeltaToolCall(name="delete_file", json_args='{"path": "notes.txt"}', tool_call_id="d1")},
]


async def test_a_tool_needing_approval_pauses_and_resumes_with_the_answer() -> None:
    script = Script(DELETE, ["Deleted."], ["Kept it."])
    agent = PydanticAIAgent(weather_agent(script))
    events = await collect(agent(user_run("delete notes.txt")))
    summary = summarize(events)
    assert summary[-3:-1] == [("/step", "model-call-1"), ("approval", "d1")]
    assert summary[-1][:2] == ("run-finished", "tool-calls")
    approval = next(e for e in events if e.type == "tool-approval-request")
    assert approval.id == "approval-d1"  # type: ignore[union-attr]

    def answered(approved: bool) -> RunInput:
        call = ToolCallPart(
            id="d1",
            name="delete_file",
            input={"path": "notes.txt"},
            approval=ApprovalState(id="approval-d1", approved=approved, reason=None if approved else "no"),
        )
        return RunInput(
            thread_id="th",
            run_id="r2",
            messages=[
                Message(id="u1", role="user", parts=[TextPart(text="delete notes.txt")]),
                Message(id="a1", role="assistant", parts=[TextPart(text="Deleting."), call]),
            ],
        )

    events = await collect(agent(answered(True)), known_tool_calls=["d1"])
    summary = summarize(events)
    assert summary[1:-1] == [
        ("tool-result", "d1", "deleted notes.txt"),
        ("step", "model-call-1"),
        ("text", "Deleted."),
        ("/step", "model-call-1"),
    ]
    assert summary[-1][:2] == ("run-finished", "stop")
    events = await collect(agent(answered(False)), known_tool_calls=["d1"])
    assert summarize(events)[1] == ("tool-denied", "d1")
    assert next(e for e in events if e.type == "tool-result").error == "no"  # type: ignore[union-attr]
    # what the model saw after the denial: the user's reason as the call's return
    last = script.calls[-1][-1]
    assert isinstance(last, pai.ModelRequest)
    assert [(p.content, p.outcome) for p in last.parts if isinstance(p, pai.ToolReturnPart)] == [("no", "denied")]


def test_approval_through_the_real_ai_sdk_chat(js: JsOracle, live_server: Any) -> None:
    script = Script(DELETE, ["Deleted."])
    url = serve(live_server, PydanticAIAgent(weather_agent(script)))
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
    assert len(chat["requests"]) == 2  # the client resent on its own once the approval was given
    [part] = [p for p in chat["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert (part["state"], part["output"]) == ("output-available", "deleted notes.txt")
    assert [p["text"] for p in chat["message"]["parts"] if p["type"] == "text"] == ["Deleting.", "Deleted."]


def test_approval_through_the_real_ag_ui_client_as_an_interrupt(js: JsOracle, live_server: Any) -> None:
    script = Script(DELETE, ["I left it alone."])
    url = serve(live_server, PydanticAIAgent(weather_agent(script)))
    user = {"id": "u1", "role": "user", "content": "delete notes.txt"}
    resume = {"resume": [{"interruptId": "approval-d1", "status": "cancelled"}]}
    result = js_result(
        js, "agui", {"url": f"{url}/api/agui", "runs": [{"addMessages": [user]}, {"parameters": resume}]}
    )
    first, second = result["runs"]
    assert first["outcome"] == "interrupt"
    assert [(i["id"], i["toolCallId"], i["reason"]) for i in first["interrupts"]] == [
        ("approval-d1", "d1", "tool_approval")
    ]
    assert second["failed"] is None and second["outcome"] == "success"
    tool = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["toolCallId"] for m in tool] == ["d1"]
    assert second["messages"][-1]["content"] == "I left it alone."


def test_frontend_tools_are_left_pending_then_answered(js: JsOracle, live_server: Any) -> None:
    theme = [{0: DeltaToolCall(name="set_theme", json_args='{"theme": "dark"}', tool_call_id="t1")}]
    script = Script(theme, ["Done, the page is now dark."])
    url = serve(live_server, PydanticAIAgent(weather_agent(script)))
    first, second = frontend_tool_runs(js, url)
    assert first["outcome"] == "success" and first["pendingToolCallIds"] == ["t1"]
    assert second["messages"][-1]["content"] == "Done, the page is now dark."
    # the model's second call saw the client's result after its call
    returns = [p for p in script.calls[1][-1].parts if isinstance(p, pai.ToolReturnPart)]
    assert [(p.tool_call_id, p.content) for p in returns] == [("t1", '{"ok": true}')]  # AG-UI tool content is text


# --- input ------------------------------------------------------------------------------------------


def test_history_becomes_model_messages_in_causal_order() -> None:
    signature = {"pydantic_ai": {"signature": "s1", "provider_name": "anthropic"}}
    history = [
        Message(id="s", role="system", parts=[TextPart(text="Be brief.")]),
        Message(id="u1", role="user", parts=[TextPart(text="weather?")]),
        # AI SDK form: the results inside the assistant message, after their calls
        Message(
            id="a1",
            role="assistant",
            parts=[
                ReasoningPart(text="think", provider_metadata=signature),
                TextPart(text="Checking."),
                ToolCallPart(id="c1", name="get_weather", input={"city": "Paris"}),
                ToolCallPart(id="c2", name="set_theme", input={"theme": "dark"}),
                ToolResultPart(id="c1", name="get_weather", output={"tempC": 21}),
                ToolResultPart(id="c2", name="set_theme", denied=True, error="not now"),
                TextPart(text="Done."),
            ],
        ),
        Message(id="u2", role="user", parts=[TextPart(text="and then?")]),
        # AG-UI form: a tool message after the assistant message
        Message(id="a2", role="assistant", parts=[ToolCallPart(id="c3", name="get_weather", input={"city": "Oslo"})]),
        Message(id="t3", role="tool", parts=[ToolResultPart(id="c3", error="no network")]),
        Message(id="a3", role="assistant", parts=[ToolCallPart(id="c4", name="set_theme", input={"theme": "x"})]),
        Message(id="u3", role="user", parts=[TextPart(text="never mind")]),
    ]
    out = to_model_messages(history)

    def brief(m: pai.ModelMessage) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for p in m.parts:
            if isinstance(p, pai.ToolReturnPart):
                rows.append(("return", p.tool_call_id, p.content, p.outcome))
            elif isinstance(p, pai.ToolCallPart):
                rows.append(("call", p.tool_call_id, p.args))
            elif isinstance(p, pai.ThinkingPart):
                rows.append(("thinking", p.content, p.signature, p.provider_name))
            else:
                rows.append((type(p).__name__, getattr(p, "content", None)))
        return rows

    assert [brief(m) for m in out] == [
        [("SystemPromptPart", "Be brief.")],
        [("UserPromptPart", "weather?")],
        [
            ("thinking", "think", "s1", "anthropic"),
            ("TextPart", "Checking."),
            ("call", "c1", {"city": "Paris"}),
            ("call", "c2", {"theme": "dark"}),
        ],
        [("return", "c1", {"tempC": 21}, "success"), ("return", "c2", "not now", "denied")],
        [("TextPart", "Done.")],
        [("UserPromptPart", "and then?")],
        [("call", "c3", {"city": "Oslo"})],
        [("return", "c3", "no network", "failed")],
        [("call", "c4", {"theme": "x"})],
        [("return", "c4", "The client did not run this tool call.", "failed")],  # a model rejects an open call
        [("UserPromptPart", "never mind")],
    ]


# --- generated streams through both real clients ------------------------------------------------------


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_streams_reach_both_clients_as_meant(js: JsOracle, data: st.DataObject) -> None:
    plan = data.draw(plans(id_prefix="call_"))
    assume(plan.text or plan.calls)  # a response with neither makes pydantic-ai ask the model again
    order = data.draw(interleave(plan.calls))
    turn: list[Any] = [{0: DeltaThinkingPart(content=piece)} for piece in plan.reasoning]
    turn += list(plan.text)
    for n, call in enumerate(plan.calls):  # each call opens with its id and name, then pieces interleave
        turn.append({2 + n: DeltaToolCall(name=call.name, json_args="", tool_call_id=call.id)})
    turn += [{2 + n: DeltaToolCall(json_args=piece)} for n, piece in order]
    tools = [Tool(name=name, parameters={"type": "object"}) for name in ("get_weather", "search", "calc")]
    agent: Agent[None, str] = Agent(Script(turn).model())
    events = asyncio.run(collect(PydanticAIAgent(agent)(user_run(tools=tools))))
    meant = plan.meant(finish="tool-calls" if plan.calls else "stop")
    assert meant_of_events(events).blocks == meant.blocks
    assert meant_of_events(events).finish == meant.finish
    assert_clients_agree(js, events, meant)


def test_without_the_extra_the_import_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "pydantic_ai.toolsets", None)
    monkeypatch.delitem(sys.modules, "streamkit.sources.pydantic_ai")
    with pytest.raises(ImportError, match=r"pip install 'streamkit\[pydantic-ai\]'"):
        importlib.import_module("streamkit.sources.pydantic_ai")
