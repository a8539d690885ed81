"""The Ollama source driven through the real ``ollama`` package (and over plain httpx), offline.

``ollama.AsyncClient(host, transport=httpx.MockTransport(...))`` (the client passes its keyword arguments to
``httpx.AsyncClient``) talks to :class:`~tests.sources.support.Replay`, which serves ``/api/chat`` NDJSON
bodies in small uneven pieces. Recorded bodies, in ``streamkit-tests/`` of the provider fixtures beside the
project (see :mod:`tests.support.fixtures`; those tests skip without them, and the same two shapes run over
the project's own bodies):

* ``ollama_chat_stream.ndjson``: the ``Chat Request (Streaming)`` response of Ollama's ``docs/api.md``
  (ollama/ollama), a content chunk and the final chunk with the eval counts. The docs' final chunk has no
  ``message``; the server sends an empty one (``{"role": "assistant", "content": ""}``) and the SDK's
  ``ChatResponse`` requires it, so the recording has it;
* ``ollama_chat_tools.ndjson``: the ``Chat request (with tools)`` response of the same page (one whole tool
  call without an id, ``done_reason: "stop"``).

Streams the page has no example of (thinking, several calls per chunk and across chunks, ``length``, an
``error`` line) are built by :func:`~tests.sources.support.ndjson` in the same format.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import ollama
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import agui, aisdk
from streamkit.events import (
    ContextItem,
    FilePart,
    Message,
    ReasoningPart,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    TextPart,
    Tool,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
)
from streamkit.sources.ollama import OllamaAgent, OllamaTranslator, chat_events, to_ollama_messages, to_ollama_tools
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources.support import (
    Meant,
    Plan,
    agui_body,
    aisdk_body,
    assert_clients_agree,
    collect,
    meant_of_events,
    ndjson,
    plans,
    summarize,
)
from tests.support.fixtures import provider_fixture
from tests.support.oracle import JsOracle

HOST = "http://ollama.test"


def chunk(content: str = "", *, thinking: str | None = None, calls: list[Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if calls is not None:
        message["tool_calls"] = calls
    return {"model": "qwen3", "created_at": "2025-05-29T09:00:00.000Z", "message": message, "done": False}


def done(reason: str = "stop", prompt: int = 12, evals: int = 30) -> dict[str, Any]:
    end = chunk()
    end.update(done=True, done_reason=reason, prompt_eval_count=prompt, eval_count=evals, total_duration=1)
    return end


def fn(name: str, /, **arguments: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": arguments}}


def sdk(replay: Replay) -> ollama.AsyncClient:
    return ollama.AsyncClient(host=HOST, transport=httpx.MockTransport(replay))


async def sdk_events(replay: Replay) -> list[Any]:
    stream = await sdk(replay).chat(model="qwen3", messages=[{"role": "user", "content": "hi"}], stream=True)
    return await collect(chat_events(stream, prefix="p"))


def user(text: str, mid: str = "u1", *parts: Any) -> Message:
    return Message(id=mid, role="user", parts=[TextPart(text=text), *parts])


# --- the stream, through the real SDK ------------------------------------------------------------


def recorded(name: str) -> bytes:
    return provider_fixture(f"streamkit-tests/{name}")


async def test_a_final_chunk_without_done_reason_is_a_stop() -> None:
    end = done()
    del end["done_reason"]  # as the docs' examples show the final chunk
    said = summarize(await sdk_events(Replay(Recording(ndjson([chunk("Hi"), chunk(" you"), end])))))
    assert said[1:] == [
        ("text", "Hi you"),
        ("run-finished", "stop", {"input_tokens": 12, "output_tokens": 30, "total_tokens": 42, "provider": "ollama",
                                  "model": "qwen3"}),
    ]  # fmt: skip


async def test_a_whole_call_without_an_id_and_done_reason_stop_is_tool_calls() -> None:
    body = ndjson([chunk(calls=[fn("get_tide", harbour="Porto")]), done("stop")])
    events = await sdk_events(Replay(Recording(body, content_type="application/x-ndjson")))
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert (start.name, start.id) == ("get_tide", "call_p_1")
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.input == {"harbour": "Porto"}
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "tool-calls"


async def test_plain_text_and_usage_from_the_docs() -> None:
    replay = Replay(Recording(recorded("ollama_chat_stream.ndjson"), content_type="application/x-ndjson"))
    events = await sdk_events(replay)
    assert summarize(events) == [
        ("run-started",),
        ("text", "The"),
        (
            "run-finished",
            "stop",
            {"input_tokens": 26, "output_tokens": 282, "total_tokens": 308, "provider": "ollama", "model": "llama3.2"},
        ),
    ]
    assert replay.paths == ["/api/chat"] and replay.requests[0]["stream"] is True


async def test_a_whole_tool_call_without_an_id_gets_a_unique_one() -> None:
    replay = Replay(Recording(recorded("ollama_chat_tools.ndjson"), content_type="application/x-ndjson"))
    events = await sdk_events(replay)
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert start.name == "get_current_weather" and start.id == "call_p_1"
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.input == {"format": "celsius", "location": "Paris, FR"}
    args = "".join(e.delta for e in events if e.type == "tool-call-args-delta")
    assert json.loads(args) == end.input  # the arguments also stream, as one JSON delta
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "tool-calls"  # done_reason was "stop"


async def test_thinking_then_content() -> None:
    body = ndjson([chunk(thinking="The user "), chunk(thinking="greets."), chunk("Hello"), chunk(" there!"), done()])
    events = await sdk_events(Replay(Recording(body)))
    assert summarize(events)[1:3] == [("reasoning", "The user greets."), ("text", "Hello there!")]


async def test_three_parallel_calls_in_one_chunk_and_across_chunks() -> None:
    body = ndjson(
        [
            chunk(calls=[fn("get_weather", city="Paris"), fn("get_weather", city="Rome")]),
            chunk(calls=[{"id": "call_srv_9", **fn("calc", expression="2*21")}]),  # newer servers send ids
            done(),
        ]
    )
    events = await sdk_events(Replay(Recording(body)))
    calls = [(e.id, e.input) for e in events if isinstance(e, ToolCallEnd)]
    assert calls[0] == ("call_p_1", {"city": "Paris"}) and calls[1] == ("call_p_2", {"city": "Rome"})
    # the SDK's ToolCall model drops an id; over plain httpx it is kept (see below)
    assert calls[2][1] == {"expression": "2*21"} and calls[2][0] == "call_p_3"
    plain = await collect(chat_events([json.loads(line) for line in body.splitlines()], prefix="q"))
    assert [e.id for e in plain if isinstance(e, ToolCallEnd)] == ["call_q_1", "call_q_2", "call_srv_9"]


async def test_length_stop() -> None:
    events = await sdk_events(Replay(Recording(ndjson([chunk("Once upon a"), done("length")]))))
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "length"


async def test_an_http_error_status_ends_the_run_with_the_servers_message() -> None:
    replay = Replay(Recording.error(404, {"error": "model 'qwen9' not found, try pulling it first"}))
    out = await collect(OllamaAgent(sdk(replay), model="qwen9")(RunInput(thread_id="t", run_id="r")))
    assert out[-1] == RunError(message="model 'qwen9' not found, try pulling it first", code="http_404")
    # the same over plain httpx
    http = OllamaAgent(httpx.AsyncClient(transport=httpx.MockTransport(replay), base_url=HOST), model="qwen9")
    out = await collect(http(RunInput(thread_id="t", run_id="r")))
    assert out[-1] == RunError(message="model 'qwen9' not found, try pulling it first", code="http_404")


async def test_an_error_line_inside_the_stream_ends_the_run() -> None:
    body = ndjson([chunk("Partial"), {"error": "an error was encountered while running the model: unexpected EOF"}])
    out = await sdk_events(Replay(Recording(body)))
    assert summarize(out)[-1] == (
        "run-error",
        "model_error",
        "an error was encountered while running the model: unexpected EOF",
    )


async def test_a_connection_dropped_mid_stream_ends_the_run() -> None:
    body = ndjson([chunk("Hel"), chunk("lo"), done()])
    out = await sdk_events(Replay(Recording(body, cut=len(body) - 20)))
    error = out[-1]
    assert isinstance(error, RunError) and error.code == "model_unreachable" and "peer closed" in error.message


async def test_a_stream_without_done_is_an_error() -> None:
    out = await collect(chat_events([chunk("Hi")], prefix="p"))
    assert isinstance(out[-1], RunError) and out[-1].code == "incomplete_stream"


def test_the_translator_accepts_sdk_objects_and_dicts_alike() -> None:
    raw = [chunk(thinking="hm"), chunk("ok", calls=[fn("f", a=1)]), done()]
    a, b = OllamaTranslator("x"), OllamaTranslator("x")
    from_dicts = [e for c in raw for e in a.feed(c)] + a.close()
    from_objects = [e for c in raw for e in b.feed(ollama.ChatResponse.model_validate(c))] + b.close()
    assert from_dicts == from_objects and a.usage == b.usage


# --- the input conversion ------------------------------------------------------------------------


def test_history_becomes_chat_messages_in_causal_order() -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    messages = [
        Message(id="s", role="system", parts=[TextPart(text="Be brief.")]),
        user("what is this and the weather?", "u1", FilePart(url=png, media_type="image/png")),
        Message(
            id="a1",
            role="assistant",
            parts=[
                ReasoningPart(text="Two things."),
                TextPart(text="Checking."),
                ToolCallPart(id="c1", name="get_weather", input={"city": "Paris"}),
                ToolCallPart(id="c2", name="lookup", input='{"q": "png"}'),
                ToolResultPart(id="c1", name="get_weather", output={"tempC": 21.0}),  # sent as 21
                TextPart(text="A small image; 21C."),
            ],
        ),
        Message(id="t", role="tool", parts=[ToolResultPart(id="c2", name="lookup", error="offline")]),
        user("thanks", "u2", FilePart(url="https://example.com/a.pdf", media_type="application/pdf")),
    ]
    assert to_ollama_messages(messages, system="You help.", context=[ContextItem(description="tz", value="UTC")]) == [
        {"role": "system", "content": "You help.\n\nContext:\n- tz: UTC"},
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "what is this and the weather?", "images": ["iVBORw0KGgo="]},
        {
            "role": "assistant",
            "content": "Checking.",
            "thinking": "Two things.",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "lookup", "arguments": {"q": "png"}}},
            ],
        },
        {"role": "tool", "content": '{"tempC":21}', "tool_name": "get_weather"},
        {"role": "tool", "content": "Error: offline", "tool_name": "lookup"},
        {"role": "assistant", "content": "A small image; 21C."},
        {"role": "user", "content": "thanks[attached file https://example.com/a.pdf (application/pdf)]"},
    ]
    assert to_ollama_tools([Tool(name="pick", description="Pick one")]) == [
        {
            "type": "function",
            "function": {"name": "pick", "description": "Pick one", "parameters": {"type": "object", "properties": {}}},
        }
    ]


# --- the agent -----------------------------------------------------------------------------------


@server_tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "tempC": 21}


@pytest.mark.parametrize("transport", ["sdk", "httpx"])
async def test_agent_runs_a_server_tool_and_feeds_the_result_back(transport: str) -> None:
    replay = Replay(
        Recording(ndjson([chunk(thinking="Need weather."), chunk(calls=[fn("get_weather", city="Paris")]), done()])),
        Recording(ndjson([chunk("21C in Paris."), done(evals=5)])),
    )
    client: Any = sdk(replay) if transport == "sdk" else httpx.AsyncClient(transport=httpx.MockTransport(replay))
    agent = OllamaAgent(
        client, model="qwen3", base_url=HOST if transport == "httpx" else None, tools=[get_weather], think=True
    )
    run = RunInput(thread_id="t", run_id="r1", messages=[user("Weather in Paris?")], tools=[Tool(name="pick_color")])
    out = await collect(agent(run))
    (result,) = [e for e in out if isinstance(e, ToolResult)]
    assert result.output == {"city": "Paris", "tempC": 21} and re.fullmatch(r"call_r1_1_\d+", result.id)
    finished = out[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "stop"
    assert finished.usage is not None and (finished.usage.input_tokens, finished.usage.output_tokens) == (24, 35)
    first, second = replay.requests
    assert (first["model"], first["stream"], first["think"]) == ("qwen3", True, True)
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "pick_color"]
    assert first["messages"] == [{"role": "user", "content": "Weather in Paris?"}]
    expected = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "thinking": "Need weather.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": '{"city":"Paris","tempC":21}', "tool_name": "get_weather"},
    ]
    if transport == "sdk":  # the SDK leaves out empty fields of a message (its _copy_messages)
        expected = [{k: v for k, v in m.items() if v} for m in expected]
    assert second["messages"] == expected


async def test_agent_leaves_frontend_tool_calls_pending() -> None:
    replay = Replay(Recording(ndjson([chunk(calls=[fn("pick_color", options=["red"])]), done()])))
    agent = OllamaAgent(sdk(replay), tools=[get_weather])
    run = RunInput(thread_id="t", run_id="r", messages=[user("pick")], tools=[Tool(name="pick_color")])
    out = await collect(agent(run))
    assert not [e for e in out if isinstance(e, ToolResult)]
    assert [e.input for e in out if isinstance(e, ToolCallEnd)] == [{"options": ["red"]}]
    assert isinstance(out[-1], RunFinished) and out[-1].finish_reason == "tool-calls"
    assert len(replay.requests) == 1


def test_the_sdk_is_an_optional_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ollama", None)
    with pytest.raises(ImportError, match=r"streamkit\[ollama\]"):
        OllamaAgent()
    assert OllamaAgent("http://localhost:11434").url == "http://localhost:11434/api/chat"  # httpx needs no SDK


# --- through the real clients --------------------------------------------------------------------


@st.composite
def ollama_streams(draw: st.DrawFn) -> tuple[list[dict[str, Any]], Meant]:
    """A generated ``/api/chat`` stream (thinking pieces, content pieces, up to three whole tool calls
    grouped into chunks at random: several in one chunk or one per chunk) and what it means."""
    plan: Plan = draw(plans())
    lines = [chunk(thinking=piece) for piece in plan.reasoning]
    lines += [chunk(piece) for piece in plan.text]
    calls = [fn(c.name, **c.input) for c in plan.calls]
    while calls:
        n = draw(st.integers(1, len(calls)))
        lines.append(chunk(calls=calls[:n]))
        calls = calls[n:]
    usage = plan.usage or (0, 0)
    lines.append(done("length" if plan.finish == "length" else "stop", *usage))
    meant = Meant(finish=plan.finish)
    meant.add("reasoning", "".join(plan.reasoning))
    meant.add("text", "".join(plan.text))
    for n, c in enumerate(plan.calls, 1):
        meant.add("tool", f"call_g_{n}", c.name, c.input)  # Ollama sends no ids: the translator's
    return lines, meant


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=ollama_streams())
def test_generated_streams_reach_both_real_clients_as_meant(js: JsOracle, stream: Any) -> None:
    lines, meant = stream
    out = asyncio.run(collect(chat_events(lines, prefix="g")))
    assert meant_of_events(out).blocks == meant.blocks
    assert_clients_agree(js, out, meant)


async def weather_run() -> list[Any]:
    replay = Replay(
        Recording(ndjson([chunk(thinking="Need weather."), chunk(calls=[fn("get_weather", city="Paris")]), done()])),
        Recording(ndjson([chunk("21C in Paris."), done(evals=5)])),
    )
    agent = OllamaAgent(sdk(replay), model="qwen3", tools=[get_weather])
    return await collect(agent(RunInput(thread_id="thread-1", run_id="r1", messages=[user("Weather in Paris?")])))


ROUND_TRIP = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "thinking": "Need weather.",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
    },
    {"role": "tool", "content": '{"city":"Paris","tempC":21}', "tool_name": "get_weather"},
    {"role": "assistant", "content": "21C in Paris."},
    {"role": "user", "content": "thanks"},
]


def test_a_conversation_folded_by_use_chat_round_trips(js: JsOracle) -> None:
    events = asyncio.run(weather_run())
    answer = js.call(
        "aisdk",
        {
            "body": [aisdk_body(events).decode(), aisdk_body([RunStarted(), RunFinished()]).decode()],
            "version": 7,
            "steps": [
                {"do": "sendMessage", "args": {"text": "Weather in Paris?"}},
                {"do": "sendMessage", "args": {"text": "thanks"}},
            ],
        },
    )
    assert answer["ok"], answer.get("error")
    run = aisdk.to_run_input(aisdk.parse_chat_request(answer["result"]["requests"][1]["body"]))
    assert to_ollama_messages(run.messages) == ROUND_TRIP


def test_a_conversation_folded_by_http_agent_round_trips(js: JsOracle) -> None:
    events = asyncio.run(weather_run())
    answer = js.call(
        "agui",
        {
            "runs": [
                {
                    "body": agui_body(events),
                    "addMessages": [{"id": "u1", "role": "user", "content": "Weather in Paris?"}],
                },
                {
                    "body": agui_body([RunStarted(), RunFinished()]),
                    "addMessages": [{"id": "u2", "role": "user", "content": "thanks"}],
                },
            ],
            "messages": [],
            "state": {},
        },
    )
    assert answer["ok"], answer.get("error")
    run = agui.to_run_input(agui.parse_run_agent_input(answer["result"]["runs"][1]["request"]["body"]))
    assert to_ollama_messages(run.messages) == ROUND_TRIP
