"""LangGraph source: real compiled graphs run offline with a langchain-core chat model test double (a
``BaseChatModel`` subclass that streams scripted ``AIMessageChunk``\\ s: tokens, reasoning blocks, tool-call
chunks), through both protocols' routes and the real clients (``@ag-ui/client`` ``HttpAgent``, ``ai``'s
``Chat``) over HTTP."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.func import entrypoint
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from starlette.applications import Starlette

from streamkit import aisdk
from streamkit.events import (
    ChatEvent,
    Custom,
    Data,
    Message,
    ReasoningEnd,
    ResumeEntry,
    RunError,
    RunFinished,
    RunInput,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextDelta,
    TextPart,
    ToolCallPart,
    ToolResult,
    ToolResultPart,
)
from streamkit.serve import StreamOptions
from streamkit.sources.langgraph import LangGraphAgent, to_messages
from tests.sources.support import assert_clients_agree, collect, interleave, js_result, meant_of_events, plans, serve
from tests.support.oracle import JsOracle

# --- the chat model test double ---------------------------------------------------------------------


class ScriptedChatModel(BaseChatModel):
    """Streams one scripted turn (a list of ``AIMessageChunk``, or an exception to raise) per call and
    records the messages each call received. ``bind_tools`` keeps the script (the tools are the graph's)."""

    turns: list[Any]
    calls: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _next(self, messages: list[BaseMessage]) -> list[AIMessageChunk]:
        self.calls.append(list(messages))
        turn = self.turns.pop(0)
        if isinstance(turn, BaseException):
            raise turn
        return list(turn)

    def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        for chunk in self._next(messages):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=generation)
            yield generation

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        chunks = self._next(messages)
        whole = chunks[0]
        for chunk in chunks[1:]:
            whole = whole + chunk
        message = AIMessage(content=whole.content, id=whole.id, tool_calls=whole.tool_calls)
        return ChatResult(generations=[ChatGeneration(message=message)])


def chunks(mid: str, *pieces: Any) -> list[AIMessageChunk]:
    """A turn of message ``mid``: strings are text tokens, dicts tool-call chunks (or content blocks when
    they have a ``type``); the last chunk is marked ``last``."""
    out = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(AIMessageChunk(content=piece, id=mid))
        elif "type" in piece:
            out.append(AIMessageChunk(content=[piece], id=mid))
        else:
            out.append(AIMessageChunk(content="", id=mid, tool_call_chunks=[{"type": "tool_call_chunk", **piece}]))
    out.append(AIMessageChunk(content="", id=mid, chunk_position="last"))
    return out


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "tempC": 21 if city == "Paris" else 18}


class PlanState(MessagesState):
    plan: list[str]
    mood: str  # a key the client may set


def agent_graph(model: ScriptedChatModel, *, checkpointer: Any = None, approve: bool = False) -> Any:
    """A ReAct-style graph: ``agent`` (the model, one plan step per call) and ``tools`` (``ToolNode``)."""

    async def agent(state: PlanState) -> dict[str, Any]:
        get_stream_writer()({"name": "progress", "data": {"calls": len(state.get("plan", []))}, "transient": True})
        message = await model.ainvoke(state["messages"])
        return {"messages": [message], "plan": [*state.get("plan", []), f"call {len(state.get('plan', [])) + 1}"]}

    def review(state: PlanState) -> dict[str, Any]:
        answer = interrupt({"question": "Send the report?", "plan": state["plan"]})
        return {"plan": [*state["plan"], f"review: {answer}"]}

    builder = StateGraph(PlanState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([get_weather]))
    builder.add_edge(START, "agent")
    if approve:
        builder.add_node("review", review)
        builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "review"})
        builder.add_edge("review", END)
    else:
        builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def events_of(agent: LangGraphAgent, run: RunInput, known_tool_calls: tuple[str, ...] = ()) -> list[ChatEvent]:
    """The run's events, checked by the strict checker (a source's stream needs no repair)."""
    return asyncio.run(collect(agent(run), known_tool_calls))


def user_run(text: str = "hi", *, thread: str = "th", run_id: str = "r1", **kw: Any) -> RunInput:
    return RunInput(
        thread_id=thread, run_id=run_id, messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])], **kw
    )


def agui_runs(js: JsOracle, url: str, runs: list[dict[str, Any]], **req: Any) -> dict[str, Any]:
    result = js_result(js, "agui", {"url": f"{url}/api/agui", "runs": runs, **req})
    for run in result["runs"]:
        assert run["failed"] is None, run["failed"]
    return result


def aisdk_chat(js: JsOracle, url: str, **req: Any) -> dict[str, Any]:
    return js_result(js, "aisdk", {"api": f"{url}/api/chat", **req})


USER = {"id": "u1", "role": "user", "content": "Weather in Paris and Tokyo?"}

WEATHER_TURNS = [
    chunks(
        "m1",
        {"type": "reasoning", "reasoning": "Two cities: "},
        {"type": "reasoning", "reasoning": "two calls."},
        "Checking ",
        "both.",
        {"name": "get_weather", "args": '{"ci', "id": "c1", "index": 0},
        {"name": "get_weather", "args": '{"city": ', "id": "c2", "index": 1},
        {"name": None, "args": 'ty": "Paris"}', "id": None, "index": 0},
        {"name": None, "args": '"Tokyo"}', "id": None, "index": 1},
    ),
    chunks("m2", "Paris ", "21 °C, ", "Tokyo 18 °C."),
]


# --- text, tools, reasoning -------------------------------------------------------------------------


def test_text_streams_token_by_token_in_a_node_step() -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "Hello", " ", "world.")], calls=[])
    events = events_of(LangGraphAgent(agent_graph(model)), user_run())
    kinds = [e.type for e in events]
    assert kinds[0] == "run-started" and kinds[-1] == "run-finished"
    assert [e.delta for e in events if e.type == "text-delta"] == ["Hello", " ", "world."]
    assert StepStarted(name="agent") in events and StepFinished(name="agent") in events
    assert (
        kinds.index("step-started") < kinds.index("text-start") < kinds.index("text-end") < kinds.index("step-finished")
    )
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "stop"
    assert [m.content for m in model.calls[0]] == ["hi"]


def test_parallel_tool_calls_results_and_reasoning(js: JsOracle, live_server: Any) -> None:
    model = ScriptedChatModel(turns=[list(t) for t in WEATHER_TURNS], calls=[])
    agent = LangGraphAgent(agent_graph(model))
    events = events_of(agent, user_run())
    starts = [(e.id, e.name) for e in events if e.type == "tool-call-start"]
    assert starts == [("c1", "get_weather"), ("c2", "get_weather")]
    ends = {e.id: e.input for e in events if e.type == "tool-call-end"}
    assert ends == {"c1": {"city": "Paris"}, "c2": {"city": "Tokyo"}}
    results = {e.id: e.output for e in events if isinstance(e, ToolResult)}
    assert results == {"c1": {"city": "Paris", "tempC": 21}, "c2": {"city": "Tokyo", "tempC": 18}}
    assert "".join(e.delta for e in events if e.type == "reasoning-delta") == "Two cities: two calls."
    steps = [e.name for e in events if isinstance(e, StepStarted)]
    assert steps == ["agent", "tools", "agent"]
    # the model's second call saw the results after the calls (what ToolNode appended)
    second = model.calls[1]
    assert [type(m).__name__ for m in second] == ["HumanMessage", "AIMessage", "ToolMessage", "ToolMessage"]

    url = serve(
        live_server, LangGraphAgent(agent_graph(ScriptedChatModel(turns=[list(t) for t in WEATHER_TURNS], calls=[])))
    )
    result = agui_runs(js, url, [{"addMessages": [USER]}], state={"plan": []})
    messages = result["messages"]
    assert [m["role"] for m in messages] == ["user", "reasoning", "assistant", "tool", "tool", "assistant"]
    assert messages[1]["content"] == "Two cities: two calls."
    assert messages[2]["content"] == "Checking both."
    calls = [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in messages[2]["toolCalls"]]
    assert calls == [("c1", "get_weather", '{"city": "Paris"}'), ("c2", "get_weather", '{"city": "Tokyo"}')]
    assert [(m["toolCallId"], m["content"]) for m in messages[3:5]] == [
        ("c1", '{"city":"Paris","tempC":21}'),
        ("c2", '{"city":"Tokyo","tempC":18}'),
    ]
    assert messages[5]["content"] == "Paris 21 °C, Tokyo 18 °C."
    assert result["state"] == {"plan": ["call 1", "call 2"]}

    url = serve(
        live_server, LangGraphAgent(agent_graph(ScriptedChatModel(turns=[list(t) for t in WEATHER_TURNS], calls=[])))
    )
    chat = aisdk_chat(js, url, steps=[{"do": "sendMessage", "args": {"text": "Weather in Paris and Tokyo?"}}])
    assert chat["error"] is None and chat["status"] == "ready"
    parts = chat["message"]["parts"]
    tools = [p for p in parts if p["type"] == "tool-get_weather"]
    assert [(p["toolCallId"], p["state"], p["input"], p["output"]) for p in tools] == [
        ("c1", "output-available", {"city": "Paris"}, {"city": "Paris", "tempC": 21}),
        ("c2", "output-available", {"city": "Tokyo"}, {"city": "Tokyo", "tempC": 18}),
    ]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts == ["Checking both.", "Paris 21 °C, Tokyo 18 °C."]
    assert [p["text"] for p in parts if p["type"] == "reasoning"] == ["Two cities: two calls."]
    state = [p["data"] for p in parts if p["type"] == "data-state"]
    assert state == [{"plan": ["call 1", "call 2"]}]


def test_anthropic_style_thinking_keeps_its_signature() -> None:
    turn = [
        AIMessageChunk(
            content=[{"type": "thinking", "thinking": "Hmm.", "index": 0}],
            id="m1",
            response_metadata={"model_provider": "anthropic"},
        ),
        AIMessageChunk(
            content=[{"type": "thinking", "signature": "sig-1", "index": 0}],
            id="m1",
            response_metadata={"model_provider": "anthropic"},
        ),
        AIMessageChunk(
            content=[{"type": "text", "text": "Done.", "index": 1}],
            id="m1",
            response_metadata={"model_provider": "anthropic"},
        ),
        AIMessageChunk(
            content="",
            id="m1",
            chunk_position="last",
            usage_metadata={"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
        ),
    ]
    model = ScriptedChatModel(turns=[turn], calls=[])
    events = events_of(LangGraphAgent(agent_graph(model)), user_run())
    end = next(e for e in events if isinstance(e, ReasoningEnd))
    assert end.provider_metadata == {"anthropic": {"signature": "sig-1"}}
    assert [e.delta for e in events if e.type == "reasoning-delta"] == ["Hmm."]
    assert [e.delta for e in events if e.type == "text-delta"] == ["Done."]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.usage is not None
    assert (finished.usage.input_tokens, finished.usage.output_tokens, finished.usage.total_tokens) == (5, 7, 12)


def test_a_node_returning_a_whole_message_and_custom_writes() -> None:
    async def node(state: MessagesState) -> dict[str, Any]:
        writer = get_stream_writer()
        writer({"name": "weather", "data": {"tempC": 21}, "id": "w1"})
        writer({"name": "toast", "value": "saved"})
        writer(42)
        writer(Data(name="typed", data=[1, 2]))
        return {
            "messages": [
                AIMessage(
                    content="Handmade.",
                    id="hm",
                    tool_calls=[{"name": "open_page", "args": {"url": "/docs"}, "id": "fc1", "type": "tool_call"}],
                )
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    events = events_of(LangGraphAgent(builder.compile()), user_run())
    assert [e for e in events if isinstance(e, Data | Custom)] == [
        Data(name="weather", data={"tempC": 21}, id="w1"),
        Custom(name="toast", value="saved"),
        Custom(name="custom", value=42),
        Data(name="typed", data=[1, 2]),
    ]
    assert [e.delta for e in events if e.type == "text-delta"] == ["Handmade."]
    end = next(e for e in events if e.type == "tool-call-end")
    assert (end.id, end.input) == ("fc1", {"url": "/docs"})
    # a call nobody answered (a frontend tool): the run ends waiting for it
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "tool-calls"


def test_subgraph_nodes_are_steps_and_their_tokens_stream() -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "From ", "inside.")], calls=[])

    async def inner(state: PlanState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])], "plan": ["inner"]}

    sub = StateGraph(PlanState)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    outer = StateGraph(PlanState)
    outer.add_node("research", sub.compile())
    outer.add_edge(START, "research")
    events = events_of(LangGraphAgent(outer.compile()), user_run())
    steps = [(e.type, e.name) for e in events if isinstance(e, StepStarted | StepFinished)]
    assert steps == [
        ("step-started", "research"),
        ("step-started", "research/inner"),
        ("step-finished", "research/inner"),
        ("step-finished", "research"),
    ]
    assert [e.delta for e in events if e.type == "text-delta"] == ["From ", "inside."]
    # the state is the top-level graph's, once the subgraph's update reached it
    assert [e.state for e in events if isinstance(e, StateUpdate)] == [{}, {"plan": ["inner"]}]


# --- errors -----------------------------------------------------------------------------------------


def test_an_exception_inside_the_graph_ends_the_run_with_run_error(js: JsOracle, live_server: Any) -> None:
    def script() -> list[Any]:
        return [
            chunks("m1", {"name": "get_weather", "args": '{"city": "Paris"}', "id": "c1", "index": 0}),
            RuntimeError("model exploded"),
        ]

    events = events_of(LangGraphAgent(agent_graph(ScriptedChatModel(turns=script(), calls=[]))), user_run())
    assert isinstance(events[-1], RunError) and events[-1].message == "model exploded"
    assert any(isinstance(e, ToolResult) and e.id == "c1" for e in events)
    # every step closed before the error
    assert [e.name for e in events if isinstance(e, StepFinished)] == ["agent", "tools", "agent"]

    url = serve(live_server, LangGraphAgent(agent_graph(ScriptedChatModel(turns=script(), calls=[]))))
    run = agui_runs(js, url, [{"addMessages": [USER]}])["runs"][0]
    assert run["runError"] == {"message": "model exploded", "code": "model_error"}
    url = serve(live_server, LangGraphAgent(agent_graph(ScriptedChatModel(turns=script(), calls=[]))))
    chat = aisdk_chat(js, url)
    assert chat["status"] == "error" and chat["error"]["message"] == "model exploded"
    assert [p["state"] for p in chat["message"]["parts"] if p["type"] == "tool-get_weather"] == ["output-available"]


# --- state ------------------------------------------------------------------------------------------


def test_state_changes_mid_run_reach_the_ag_ui_client_as_json_patch_deltas(js: JsOracle, live_server: Any) -> None:
    model = ScriptedChatModel(turns=[list(t) for t in WEATHER_TURNS], calls=[])
    url = serve(live_server, LangGraphAgent(agent_graph(model)))
    start = {"plan": ["draft"], "mood": "curious " * 20}  # big enough that a patch beats a snapshot
    run = agui_runs(js, url, [{"addMessages": [USER]}], state=start)["runs"][0]
    kinds = [e["type"] for e in run["events"]]
    deltas = [e["delta"] for e in run["events"] if e["type"] == "STATE_DELTA"]
    assert "STATE_DELTA" in kinds
    # the client's state went in as the graph's input: the plan grows from it, one delta per model call
    assert deltas == [
        [{"op": "add", "path": "/plan/1", "value": "call 2"}],
        [{"op": "add", "path": "/plan/2", "value": "call 3"}],
    ]
    assert run["state"] == {"plan": ["draft", "call 2", "call 3"], "mood": "curious " * 20}
    assert "STATE_SNAPSHOT" not in kinds
    # the first delta came while the run was still going (before the second model call's text)
    first_delta = kinds.index("STATE_DELTA")
    last_text = len(kinds) - 1 - kinds[::-1].index("TEXT_MESSAGE_START")
    assert first_delta < last_text


# --- interrupts ---------------------------------------------------------------------------------------


def test_interrupt_and_resume_through_the_real_ag_ui_client(js: JsOracle, live_server: Any) -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "Report ready.")], calls=[])
    url = serve(live_server, LangGraphAgent(agent_graph(model, checkpointer=InMemorySaver(), approve=True)))
    first = agui_runs(js, url, [{"addMessages": [USER]}], threadId="t-int")
    run = first["runs"][0]
    assert run["outcome"] == "interrupt"
    [pending] = run["interrupts"]
    assert pending["reason"] == "interrupt"
    assert pending["metadata"] == {"value": {"question": "Send the report?", "plan": ["call 1"]}}
    assert run["state"] == {"plan": ["call 1"]}

    resume = {"resume": [{"interruptId": pending["id"], "status": "resolved", "payload": "yes"}]}
    # the same thread, the client's conversation and state as the first run left them
    second = agui_runs(
        js, url, [{"parameters": resume}], threadId="t-int", messages=first["messages"], state=run["state"]
    )
    again = second["runs"][0]
    assert again["outcome"] == "success", again
    assert again["state"] == {"plan": ["call 1", "review: yes"]}
    assert [m["role"] for m in again["messages"]] == ["user", "assistant"]  # nothing new, nothing lost
    assert len(model.calls) == 1  # no second model call: the graph resumed at the review node

    # useChat: the interrupt reaches it as a data part of the message (answered below, from useChat too)
    model = ScriptedChatModel(turns=[chunks("m1", "Report ready.")], calls=[])
    url = serve(live_server, LangGraphAgent(agent_graph(model, checkpointer=InMemorySaver(), approve=True)))
    chat = aisdk_chat(js, url)
    assert chat["error"] is None and chat["finishReason"] == "interrupted"
    [part] = [p for p in chat["message"]["parts"] if p["type"] == "data-interrupt"]
    assert part["data"]["reason"] == "interrupt"
    assert part["data"]["metadata"] == {"value": {"question": "Send the report?", "plan": ["call 1"]}}


def report_graph(model: ScriptedChatModel) -> Any:
    """``agent`` (the model) then ``review``: asks with ``interrupt()`` whether to send the report and says
    what it did with the answer (a whole ``AIMessage``), also in the state's plan."""

    async def agent(state: PlanState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def review(state: PlanState) -> dict[str, Any]:
        answer = interrupt({"question": "Send the report?"})
        if isinstance(answer, dict) and answer.get("send"):
            text = f"Report sent to {', '.join(answer['to'])}."
        else:
            text = f"Report not sent ({answer!r})."
        reply = AIMessage(content=text, id=f"review-{len(state['messages'])}")
        return {"messages": [reply], "plan": [*state.get("plan", []), f"review: {answer!r}"]}

    builder = StateGraph(PlanState)
    builder.add_node("agent", agent)
    builder.add_node("review", review)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=InMemorySaver())


def texts(message: dict[str, Any]) -> list[str]:
    return [p["text"] for p in message["parts"] if p["type"] == "text"]


@pytest.mark.parametrize("version", [7, 6, 5])
def test_use_chat_answers_an_interrupt_and_the_graph_resumes(js: JsOracle, live_server: Any, version: int) -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "Report ready."), chunks("m2", "Glad to help.")], calls=[])
    agent = LangGraphAgent(report_graph(model))
    routes = aisdk.routes(agent, sdk_version=version, options=StreamOptions(strict=True))
    url = live_server(Starlette(routes=routes)).url
    answer = {"send": True, "to": ["ops", "legal"]}
    chat = aisdk_chat(
        js,
        url,
        version=version,
        steps=[
            {"do": "sendMessage", "args": {"text": "Write the report."}},
            # the page answers the data-interrupt part: sendMessage(undefined, {body: {resume: [...]}})
            {"do": "answerInterrupts", "args": {"status": "resolved", "payload": answer}},
            {"do": "sendMessage", "args": {"text": "Thanks."}},
        ],
    )
    assert chat["error"] is None, chat["error"]
    # run 1 paused on the interrupt (ai 5 and 6 have no "interrupted": the stream says "other")
    paused = "interrupted" if version == 7 else "other"
    assert [f["finishReason"] for f in chat["finishes"]] == [paused, "stop", paused]
    first, second, third = (r["body"] for r in chat["requests"])
    assert "resume" not in first
    [interrupt_id] = [e["interruptId"] for e in second["resume"]]
    assert second["resume"] == [{"interruptId": interrupt_id, "status": "resolved", "payload": answer}]
    # the answer continues the interrupted assistant message (no new user message)
    assert second["trigger"] == "submit-message" and second["messageId"] == first_assistant(chat)["id"]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant"]
    assert "resume" not in third  # a per-request body: the answer is sent once

    # run 2 resumed the graph at the review node with Command(resume=...): no second model call for it
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "user", "assistant"]
    assistant, assistant2 = chat["messages"][1], chat["messages"][3]
    [asked] = [p for p in assistant["parts"] if p["type"] == "data-interrupt"]
    assert asked["id"] == interrupt_id and asked["data"]["metadata"] == {"value": {"question": "Send the report?"}}
    assert asked["data"]["status"] == "resolved"  # restated, as answered, by the run that resumed it
    assert texts(assistant) == ["Report ready.", "Report sent to ops, legal."]
    states = [p["data"] for p in assistant["parts"] if p["type"] == "data-state"]
    assert states == [{"plan": [f"review: {answer!r}"]}]
    # the conversation goes on from the checkpoint: each message once, the review's reply included
    assert [(type(m).__name__, m.content) for m in model.calls[1]] == [
        ("HumanMessage", "Write the report."),
        ("AIMessage", "Report ready."),
        ("AIMessage", "Report sent to ops, legal."),
        ("HumanMessage", "Thanks."),
    ]
    assert texts(assistant2) == ["Glad to help."]
    assert [p["type"] for p in assistant2["parts"]].count("data-interrupt") == 1  # the review asks again


def first_assistant(chat: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in chat["messages"] if m["role"] == "assistant")


def test_use_chat_cancels_an_interrupt_with_a_message_of_its_own(js: JsOracle, live_server: Any) -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "Report ready.")], calls=[])
    agent = LangGraphAgent(report_graph(model), cancel_value="cancelled by the user")
    url = live_server(Starlette(routes=aisdk.routes(agent, options=StreamOptions(strict=True)))).url
    chat = aisdk_chat(
        js,
        url,
        steps=[
            {"do": "sendMessage", "args": {"text": "Write the report."}},
            {"do": "answerInterrupts", "args": {"status": "cancelled", "text": "No, keep it."}},
        ],
    )
    assert chat["error"] is None, chat["error"]
    assert [f["finishReason"] for f in chat["finishes"]] == ["interrupted", "stop"]
    second = chat["requests"][1]["body"]
    assert [(e["status"], "payload" in e) for e in second["resume"]] == [("cancelled", False)]
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "user", "assistant"]
    assert texts(chat["message"]) == ["Report not sent ('cancelled by the user')."]
    assert len(model.calls) == 1  # resumed at the review node, with the agent's cancel_value


def test_an_answer_to_an_interrupt_the_thread_does_not_hold_resumes_nothing(js: JsOracle, live_server: Any) -> None:
    # as on AG-UI: an entry for an interrupt that is not pending is ignored and the request runs as a new turn
    model = ScriptedChatModel(turns=[chunks("m1", "Report ready."), chunks("m2", "Again.")], calls=[])
    agent = LangGraphAgent(report_graph(model))
    url = live_server(Starlette(routes=aisdk.routes(agent, options=StreamOptions(strict=True)))).url
    stale = {"body": {"resume": [{"interruptId": "not-raised", "status": "resolved", "payload": {"send": True}}]}}
    chat = aisdk_chat(
        js,
        url,
        steps=[
            {"do": "sendMessage", "args": {"text": "Write the report."}},
            {"do": "sendMessage", "args": [{"text": "Start over."}, stale]},
        ],
    )
    assert chat["error"] is None, chat["error"]
    assert [f["finishReason"] for f in chat["finishes"]] == ["interrupted", "interrupted"]
    assert texts(chat["message"]) == ["Again."]  # the model ran again; the review did not take the answer
    assert not any("Report sent" in t for m in chat["messages"] for t in texts(m) if m["role"] == "assistant")


def test_resume_maps_entries_to_command_and_cancel_value() -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "ok")], calls=[])
    agent = LangGraphAgent(agent_graph(model, checkpointer=InMemorySaver(), approve=True), cancel_value="no")
    events = events_of(agent, user_run(thread="t-c"))
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.interrupts
    iid = finished.interrupts[0].id
    events = events_of(
        agent, user_run(thread="t-c", run_id="r2", resume=[ResumeEntry(interrupt_id=iid, status="cancelled")])
    )
    assert events[-1] == RunFinished(finish_reason="stop")
    assert [e.state for e in events if isinstance(e, StateUpdate)][-1] == {"plan": ["call 1", "review: no"]}


# --- input ------------------------------------------------------------------------------------------


def test_history_with_tool_results_becomes_langchain_messages_in_causal_order() -> None:
    history = [
        Message(id="u1", role="user", parts=[TextPart(text="weather?")]),
        # AI SDK form: two steps of one assistant message, results inside it
        Message(
            id="a1",
            role="assistant",
            parts=[
                TextPart(text="Checking."),
                ToolCallPart(id="c1", name="get_weather", input={"city": "Paris"}),
                ToolResultPart(id="c1", name="get_weather", output={"tempC": 21}),
                TextPart(text="And a note."),
                ToolCallPart(id="c2", name="note", input={"text": "x"}),
                ToolResultPart(id="c2", name="note", error="disk full"),
                TextPart(text="Done."),
            ],
        ),
        Message(id="u2", role="user", parts=[TextPart(text="thanks")]),
        # AG-UI form: a tool message after the assistant message
        Message(id="a2", role="assistant", parts=[ToolCallPart(id="c3", name="delete", input={"p": 1})]),
        Message(id="t3", role="tool", parts=[ToolResultPart(id="c3", denied=True)]),
    ]
    out = to_messages(history)
    assert [(type(m).__name__, m.content) for m in out] == [
        ("HumanMessage", "weather?"),
        ("AIMessage", "Checking."),
        ("ToolMessage", '{"tempC": 21}'),
        ("AIMessage", "And a note."),
        ("ToolMessage", "disk full"),
        ("AIMessage", "Done."),
        ("HumanMessage", "thanks"),
        ("AIMessage", ""),
        ("ToolMessage", "The user denied this tool call."),
    ]
    assert out[1].tool_calls == [{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}]
    assert isinstance(out[4], ToolMessage) and out[4].status == "error" and out[4].tool_call_id == "c2"
    assert [m.id for m in out if isinstance(m, AIMessage)] == ["a1", "a1-1", "a1-2", "a2"]


def test_a_checkpointed_thread_gets_only_what_is_new(js: JsOracle, live_server: Any) -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "First."), chunks("m2", "Second.")], calls=[])
    url = serve(live_server, LangGraphAgent(agent_graph(model, checkpointer=InMemorySaver())))
    more = {"id": "u2", "role": "user", "content": "and now?"}
    agui_runs(js, url, [{"addMessages": [USER]}, {"addMessages": [more]}], threadId="t-ck")
    second = model.calls[1]
    # the checkpoint's conversation plus the one new user message: nothing added twice
    assert [(type(m).__name__, m.content) for m in second] == [
        ("HumanMessage", "Weather in Paris and Tokyo?"),
        ("AIMessage", "First."),
        ("HumanMessage", "and now?"),
    ]


def test_without_a_checkpointer_the_whole_history_goes_in(js: JsOracle, live_server: Any) -> None:
    model = ScriptedChatModel(turns=[chunks("m1", "First."), chunks("m2", "Second.")], calls=[])
    url = serve(live_server, LangGraphAgent(agent_graph(model)))
    chat = aisdk_chat(
        js, url, steps=[{"do": "sendMessage", "args": {"text": "one"}}, {"do": "sendMessage", "args": {"text": "two"}}]
    )
    assert chat["error"] is None
    assert [(type(m).__name__, m.content) for m in model.calls[1]] == [
        ("HumanMessage", "one"),
        ("AIMessage", "First."),
        ("HumanMessage", "two"),
    ]
    assert isinstance(model.calls[1][0], HumanMessage)


# --- generated model streams through both real clients ------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_model_streams_reach_both_clients_as_meant(js: JsOracle, data: st.DataObject) -> None:
    """Reasoning and text tokens, then tool calls whose argument JSON is split anywhere and interleaved by
    index (ids and names in each call's first chunk only), through a one-node graph."""
    plan = data.draw(plans(id_prefix="call_"))
    pieces: list[Any] = [{"type": "reasoning", "reasoning": r} for r in plan.reasoning] + list(plan.text)
    for n, call in enumerate(plan.calls):
        pieces.append({"name": call.name, "args": "", "id": call.id, "index": n})
    pieces += [{"name": None, "args": piece, "id": None, "index": n} for n, piece in data.draw(interleave(plan.calls))]
    model = ScriptedChatModel(turns=[chunks("m1", *pieces)], calls=[])

    async def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", node)
    builder.add_edge(START, "model")
    events = events_of(LangGraphAgent(builder.compile()), user_run())
    meant = plan.meant(finish="tool-calls" if plan.calls else "stop")
    got = meant_of_events(events)
    assert (got.blocks, got.finish) == (meant.blocks, meant.finish)
    assert_clients_agree(js, events, meant)


# --- the client's state as the graph's input ------------------------------------------------------------

CounterState = TypedDict(  # noqa: UP013 - the functional form is the point: users write it
    "CounterState", {"messages": Annotated[list[AnyMessage], add_messages], "counter": int, "plan": list[str]}
)


class ClassCounterState(TypedDict):  # typing's TypedDict, which pydantic cannot schema before Python 3.12
    messages: Annotated[list[AnyMessage], add_messages]
    counter: int
    plan: list[str]


def counter_graph(state: type[Any], *, checkpointer: Any = None, input_schema: type[Any] | None = None) -> Any:
    """One node: the model answers (langchain_core's own fake model), the counter counts, the plan grows."""
    model = GenericFakeChatModel(messages=iter(["Counted it.", "Again."]))

    async def agent(s: Any) -> dict[str, Any]:
        message = await model.ainvoke(s["messages"])
        return {"messages": [message], "counter": s.get("counter", 0) + 1, "plan": [*s.get("plan", []), "count"]}

    builder = StateGraph(state, input_schema=input_schema)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("state", [CounterState, ClassCounterState], ids=["functional", "class"])
def test_the_clients_state_reaches_a_typing_typed_dict_graph(
    state: type[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="streamkit.sources.langgraph")
    agent = LangGraphAgent(counter_graph(state))
    assert agent.input_keys() == {"messages", "counter", "plan"}
    events = events_of(agent, user_run(state={"counter": 41, "plan": ["draft"]}))
    assert [e.state for e in events if isinstance(e, StateUpdate)][-1] == {"counter": 42, "plan": ["draft", "count"]}
    assert "Counted it." in "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert caplog.records == []


def test_client_state_the_graphs_input_does_not_take_is_dropped_with_a_warning_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="streamkit.sources.langgraph")
    agent = LangGraphAgent(counter_graph(CounterState))
    events_of(agent, user_run(state={"counter": 41, "mood": "calm", "theme": "dark"}))
    assert [r.getMessage() for r in caplog.records] == [
        "dropped the client's state keys 'mood', 'theme': the graph's input has no such keys "
        "(it takes 'counter', 'messages', 'plan')"
    ]


def test_state_the_client_sends_back_as_the_checkpoint_holds_it_is_not_a_loss(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="streamkit.sources.langgraph")
    only_messages = TypedDict("OnlyMessages", {"messages": Annotated[list[AnyMessage], add_messages]})  # noqa: UP013
    agent = LangGraphAgent(counter_graph(CounterState, checkpointer=InMemorySaver(), input_schema=only_messages))
    assert agent.input_keys() == {"messages"}
    first = events_of(agent, user_run(thread="t-echo"))
    sent = [e.state for e in first if isinstance(e, StateUpdate)][-1]
    assert sent == {"counter": 1, "plan": ["count"]}
    second = events_of(agent, user_run("again", thread="t-echo", run_id="r2", state=sent))  # sent back as it was
    assert caplog.records == []
    sent = [e.state for e in second if isinstance(e, StateUpdate)][-1]
    assert sent == {"counter": 2, "plan": ["count", "count"]}
    events_of(agent, user_run("edit", thread="t-echo", run_id="r3", state={**sent, "counter": 7}))
    assert [r.getMessage() for r in caplog.records] == [
        "dropped the client's state keys 'counter': the graph's input has no such keys (it takes 'messages')"
    ]


def test_a_graph_that_does_not_say_its_input_keys_drops_client_state_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="streamkit.sources.langgraph")

    @entrypoint()
    async def workflow(inputs: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"{len(inputs['messages'])} message(s)", id="m1")]}

    agent = LangGraphAgent(workflow)
    assert agent.input_keys() == {"messages"}
    events_of(agent, user_run(state={"counter": 41}))
    assert [r.getMessage() for r in caplog.records] == [
        "dropped the client's state keys 'counter': the graph does not say its input keys, so only 'messages' goes in"
    ]


def test_without_the_extra_the_import_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "langgraph.types", None)
    monkeypatch.delitem(sys.modules, "streamkit.sources.langgraph")
    with pytest.raises(ImportError, match=r"pip install 'streamkit\[langgraph\]'"):
        importlib.import_module("streamkit.sources.langgraph")
