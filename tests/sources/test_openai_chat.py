"""The Chat Completions source, driven through the real ``openai`` SDK over an ``httpx.MockTransport``.

Recorded bodies (``streamkit-tests/openai_chat`` of the provider fixtures beside the project, see
:mod:`tests.support.fixtures`; those tests skip without them): ``plain_text``, ``refusal``, ``tool_call``,
``two_tools`` and ``length`` are the streaming bodies openai-python's own tests replay
(``.inline-snapshot/external/*.bin`` of ``tests/lib/chat/test_completions_streaming.py``: test_parse_nothing,
test_parse_pydantic_model_refusal, test_allows_non_strict_tools_but_no_parsing,
test_parse_multiple_pydantic_tools, test_parse_max_tokens_reached), recorded from the live API. The
reasoning and in-stream error bodies are the demo's recordings (``tests/demo/recordings``: DeepSeek's
``reasoning_content``, Ollama's ``reasoning``, an OpenAI-compatible server's ``error`` chunk). The three
interleaved parallel calls and the content-filter stop are built here in the same wire format (no public
recording has them). The tool loop runs over the project's own bodies (:mod:`tests.sources.bodies`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

from streamkit.events import (
    ApprovalState,
    ContextItem,
    FilePart,
    Message,
    ReasoningPart,
    RunInput,
    TextPart,
    Tool,
    ToolCallArgsDelta,
    ToolCallPart,
    ToolResultPart,
)
from streamkit.sources.openai import ChatTranslator, OpenAIChatAgent, chat_events, chat_messages
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources.bodies import (
    CHAT_CALL,
    CHAT_CALL_USAGE,
    CHAT_MODEL,
    CHAT_TEXT,
    CHAT_TEXT_USAGE,
    chat_text,
    chat_tool_call,
)
from tests.sources.support import collect, sse, summarize
from tests.support.fixtures import provider_fixture

DEMO = Path(__file__).parent.parent / "demo" / "recordings"
MODEL = "gpt-4o-2024-08-06"


def sdk(replay: Replay) -> AsyncOpenAI:
    return AsyncOpenAI(api_key="sk-test", base_url="http://model.test/v1", http_client=replay.client(), max_retries=0)


async def stream_of(*replies: Recording) -> tuple[Any, Replay]:
    replay = Replay(*replies)
    client = sdk(replay)
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True, stream_options={"include_usage": True}
    )
    return stream, replay


def user_run(text: str = "What's the weather in New York City?", **update: Any) -> RunInput:
    run = RunInput(thread_id="t1", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])])
    return run.model_copy(update=update)


def usage(i: int, o: int, model: str = MODEL, **more: int) -> dict[str, Any]:
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o, "model": model, **more}


# --- the translator over recorded bodies -----------------------------------------------------------

PLAIN = (
    "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend "
    "checking a reliable weather website or a weather app."
)
RECORDED = {
    "plain_text": [("run-started",), ("text", PLAIN), ("run-finished", "stop", usage(14, 30))],
    "refusal": [  # delta.refusal is shown as text
        ("run-started",),
        ("text", "I'm sorry, I can't assist with that request."),
        ("run-finished", "stop", usage(79, 11)),
    ],
    "tool_call": [
        ("run-started",),
        ("tool-call", "call_4XzlGBLtUe9dy3GVNV4jhq7h", '{"city":"New York City"}', {"city": "New York City"}),
        ("run-finished", "tool-calls", usage(44, 16)),
    ],
    "two_tools": [
        ("run-started",),
        (
            "tool-call",
            "call_JMW1whyEaYG438VE1OIflxA2",
            '{"city": "Edinburgh", "country": "GB", "units": "c"}',
            {"city": "Edinburgh", "country": "GB", "units": "c"},
        ),
        (
            "tool-call",
            "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            '{"ticker": "AAPL", "exchange": "NASDAQ"}',
            {"ticker": "AAPL", "exchange": "NASDAQ"},
        ),
        ("run-finished", "tool-calls", usage(149, 60)),
    ],
    "length": [("run-started",), ("text", '{"'), ("run-finished", "length", usage(79, 1))],
}


@pytest.mark.parametrize("name", sorted(RECORDED))
async def test_recorded_stream(name: str) -> None:
    stream, _ = await stream_of(Recording(provider_fixture(f"streamkit-tests/openai_chat/{name}.sse")))
    events = await collect(chat_events(stream))
    assert summarize(events) == RECORDED[name]
    assert events[0].model_dump(exclude_none=True) == {"type": "run-started"}  # the route's ids, not ours


@pytest.mark.parametrize(
    ("path", "reasoning", "text"),
    [
        (
            "reasoning_content/01.sse",
            "The user asks for 17 times 23. 17 * 20 = 340, 17 * 3 = 51, so 340 + 51 = 391.",
            "17 \u00d7 23 = **391**.",
        ),
        (
            "reasoning_field/01.sse",
            "Okay, the user just said hi. I should greet them back briefly.",
            "Hi there! What would you like to talk about?",
        ),
    ],
)
async def test_reasoning_content_and_reasoning_fields(path: str, reasoning: str, text: str) -> None:
    stream, _ = await stream_of(Recording((DEMO / path).read_bytes()))
    said = summarize(await collect(chat_events(stream)))
    assert said[1:3] == [("reasoning", reasoning), ("text", text)]


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **more: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": choices,
        **more,
    }


def call_delta(index: int, args: str, cid: str | None = None, name: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if cid is not None:
        call.update(id=cid, type="function")
        call["function"]["name"] = name
    return chunk({"tool_calls": [call]})


THREE_INTERLEAVED = [
    chunk({"role": "assistant", "content": None}),
    call_delta(0, "", "call_paris", "get_weather"),
    call_delta(1, "", "call_tokyo", "get_weather"),
    call_delta(0, '{"ci'),
    call_delta(2, '{"city"', "call_nyc", "get_weather"),
    call_delta(1, '{"city": "To'),
    call_delta(0, 'ty": "Paris"}'),
    call_delta(2, ': "New York"}'),
    call_delta(1, 'kyo"}'),
    chunk({}, "tool_calls"),
    chunk(None, usage={"prompt_tokens": 80, "completion_tokens": 40, "total_tokens": 120}),
]


async def test_three_parallel_calls_with_interleaved_argument_deltas() -> None:
    stream, _ = await stream_of(Recording(sse(THREE_INTERLEAVED, done=True)))
    events = await collect(chat_events(stream))
    assert summarize(events)[1:4] == [
        ("tool-call", "call_paris", '{"city": "Paris"}', {"city": "Paris"}),
        ("tool-call", "call_tokyo", '{"city": "Tokyo"}', {"city": "Tokyo"}),
        ("tool-call", "call_nyc", '{"city": "New York"}', {"city": "New York"}),
    ]
    deltas = [(e.id, e.delta) for e in events if isinstance(e, ToolCallArgsDelta)]
    assert deltas == [  # streamed as they came, each under its own call
        ("call_paris", '{"ci'),
        ("call_nyc", '{"city"'),
        ("call_tokyo", '{"city": "To'),
        ("call_paris", 'ty": "Paris"}'),
        ("call_nyc", ': "New York"}'),
        ("call_tokyo", 'kyo"}'),
    ]
    assert summarize(events)[-1] == ("run-finished", "tool-calls", usage(80, 40))


async def test_content_filter_stop() -> None:
    body = sse([chunk({"role": "assistant", "content": "Here is"}), chunk({}, "content_filter")], done=True)
    stream, _ = await stream_of(Recording(body))
    assert summarize(await collect(chat_events(stream)))[-1] == ("run-finished", "content-filter", None)


async def test_error_object_inside_the_stream() -> None:
    stream, _ = await stream_of(Recording((DEMO / "stream_error/01.sse").read_bytes()))
    events = await collect(chat_events(stream))  # the SDK raises APIError at the error chunk
    assert summarize(events)[-1] == ("run-error", "backend_error", "The upstream model backend crashed.")
    assert [e.type for e in events[1:3]] == ["text-start", "text-delta"]  # the text before it was streamed


async def test_dict_chunks_with_an_error_object() -> None:
    async def chunks() -> AsyncIterator[dict[str, Any]]:
        yield chunk({"content": "Hel"})
        yield {"error": {"message": "overloaded", "code": "server_busy"}}
        yield chunk({"content": "never"})

    said = summarize(await collect(chat_events(chunks())))
    assert said == [("run-started",), ("run-error", "server_busy", "overloaded")]


async def test_http_error_status() -> None:
    body = json.loads((DEMO / "rate_limited/01.429.json").read_text())
    replay = Replay(Recording.error(429, body))
    agent = OpenAIChatAgent(sdk(replay), model="gpt-4o-mini")
    said = summarize(await collect(agent(user_run())))
    assert said[-1] == (
        "run-error",
        "http_429",
        "The model server answered HTTP 429 (rate limited: try again later): " + body["error"]["message"],
    )


async def test_connection_dropped_mid_stream() -> None:
    body = chat_text()
    stream, _ = await stream_of(Recording(body, cut=len(body) // 2))
    events = await collect(chat_events(stream))
    said = summarize(events)
    assert said[0] == ("run-started",) and said[-1][:2] == ("run-error", "model_unreachable")
    assert "connection" in said[-1][2].lower()
    assert any(e.type == "text-delta" for e in events)  # what came before the drop was streamed


# --- the agent: the tool loop over the real SDK ----------------------------------------------------

WEATHER: dict[str, Any] = {"city": "New York City", "temperature": 18, "conditions": "clear"}


@server_tool
async def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {**WEATHER, "city": city}


async def test_tool_result_fed_back_to_the_model() -> None:
    replay = Replay(Recording(chat_tool_call()), Recording(chat_text()))
    agent = OpenAIChatAgent(sdk(replay), model="gpt-4o", tools=[get_weather], system_prompt="Be brief.")
    said = summarize(await collect(agent(user_run())))
    cid = CHAT_CALL
    assert said == [
        ("run-started",),
        ("step", "model-call-1"),
        ("tool-call", cid, '{"city":"New York City"}', {"city": "New York City"}),
        ("tool-result", cid, WEATHER),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", CHAT_TEXT),
        ("/step", "model-call-2"),
        (
            "run-finished",
            "stop",
            usage(CHAT_CALL_USAGE[0] + CHAT_TEXT_USAGE[0], CHAT_CALL_USAGE[1] + CHAT_TEXT_USAGE[1], CHAT_MODEL),
        ),
    ]
    first, second = replay.requests
    assert replay.paths == ["/v1/chat/completions"] * 2
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"title": "City", "type": "string"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
        }
    ]
    assert second["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What's the weather in New York City?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"New York City"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": cid, "content": json.dumps(WEATHER, separators=(",", ":"))},
    ]
    assert replay.headers[0]["authorization"] == "Bearer sk-test"


async def test_frontend_tools_are_offered_and_left_pending() -> None:
    replay = Replay(Recording(chat_tool_call()))
    browser_tool = Tool(name="get_weather", description="Ask the browser.", parameters={"type": "object"})
    agent = OpenAIChatAgent(sdk(replay), model="gpt-4o")
    said = summarize(await collect(agent(user_run(tools=[browser_tool]))))
    assert said[-2:] == [("/step", "model-call-1"), ("run-finished", "tool-calls", usage(*CHAT_CALL_USAGE, CHAT_MODEL))]
    assert not any(entry[0] == "tool-result" for entry in said)
    assert len(replay.requests) == 1  # no second call: the client runs it
    assert replay.requests[0]["tools"][0]["function"] == {
        "name": "get_weather",
        "description": "Ask the browser.",
        "parameters": {"type": "object"},
    }


async def test_max_steps_bounds_the_loop() -> None:
    replay = Replay(Recording(chat_tool_call()))  # the model asks again and again
    agent = OpenAIChatAgent(sdk(replay), model="gpt-4o", tools=[get_weather], max_steps=2)
    said = summarize(await collect(agent(user_run())))
    assert [e for e in said if e[0] == "step"] == [("step", "model-call-1"), ("step", "model-call-2")]
    assert said[-1] == ("run-finished", "tool-calls", usage(2 * CHAT_CALL_USAGE[0], 2 * CHAT_CALL_USAGE[1], CHAT_MODEL))
    with pytest.raises(ValueError):
        OpenAIChatAgent(sdk(replay), model="m", max_steps=0)


async def test_a_server_tool_that_needs_approval_pauses_then_runs_once_approved() -> None:
    ran: list[str] = []

    @server_tool(name="get_weather", needs_approval=True)
    def guarded(city: str) -> dict[str, Any]:
        """Weather, after the user says yes."""
        ran.append(city)
        return WEATHER

    cid = CHAT_CALL
    replay = Replay(Recording(chat_tool_call()), Recording(chat_text()))
    agent = OpenAIChatAgent(sdk(replay), model="gpt-4o", tools=[guarded])
    said = summarize(await collect(agent(user_run())))
    assert ("approval", cid) in said and ran == []
    assert said[-1][:2] == ("run-finished", "tool-calls")
    # the next request: the assistant message with the call, its approval answered
    answered = ToolCallPart(
        id=cid,
        name="get_weather",
        input={"city": "New York City"},
        approval=ApprovalState(id=f"approval-{cid}", approved=True),
    )
    history = [*user_run().messages, Message(id="a1", role="assistant", parts=[answered])]
    said = summarize(await collect(agent(user_run().model_copy(update={"messages": history})), [cid]))
    assert said[:3] == [("run-started",), ("tool-result", cid, WEATHER), ("step", "model-call-1")]
    assert ran == ["New York City"]
    assert replay.requests[-1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": cid,
        "content": json.dumps(WEATHER, separators=(",", ":")),
    }
    # denied: the model hears it, the tool does not run
    denied = answered.model_copy(update={"approval": ApprovalState(id=f"approval-{cid}", approved=False, reason="no")})
    history = [*user_run().messages, Message(id="a1", role="assistant", parts=[denied])]
    said = summarize(await collect(agent(user_run().model_copy(update={"messages": history})), [cid]))
    assert said[1] == ("tool-denied", cid) and ran == ["New York City"]
    assert replay.requests[-1]["messages"][-1]["content"] == "The user denied this tool call. Reason: no"


async def test_tool_errors_and_bad_arguments_go_back_to_the_model() -> None:
    @server_tool(name="get_weather")
    def broken(city: str) -> None:
        """Always fails."""
        raise RuntimeError("station offline")

    replay = Replay(Recording(chat_tool_call()), Recording(chat_text()))
    said = summarize(await collect(OpenAIChatAgent(sdk(replay), model="m", tools=[broken])(user_run())))
    cid = CHAT_CALL
    assert ("tool-error", cid, "get_weather failed: RuntimeError: station offline") in said
    assert replay.requests[1]["messages"][-1]["content"] == "Error: get_weather failed: RuntimeError: station offline"


# --- the plain-httpx path (any OpenAI-compatible server, no SDK) -----------------------------------


async def test_base_url_over_plain_httpx() -> None:
    replay = Replay(Recording(chat_tool_call()), Recording(chat_text()))
    agent = OpenAIChatAgent(
        model="llama3.2",
        base_url="http://localhost:11434/v1/",
        api_key="sk-local",
        tools=[get_weather],
        http_client=replay.client(),
        options={"temperature": 0.2},
    )
    said = summarize(await collect(agent(user_run())))
    assert [e[0] for e in said] == [
        "run-started", "step", "tool-call", "tool-result", "/step", "step", "text", "/step", "run-finished"
    ]  # fmt: skip
    assert replay.paths == ["/v1/chat/completions"] * 2
    assert replay.headers[0]["authorization"] == "Bearer sk-local"
    assert replay.requests[0]["temperature"] == 0.2
    assert "localhost:11434" in repr(agent) and "sk-local" not in repr(agent)


async def test_base_url_error_status() -> None:
    replay = Replay(Recording.error(500, {"error": {"message": "boom"}}))
    agent = OpenAIChatAgent(model="m", base_url="http://h/v1", http_client=replay.client())
    said = summarize(await collect(agent(user_run())))
    assert said[-1] == ("run-error", "http_500", "The model server answered HTTP 500: boom")


# --- input conversion ------------------------------------------------------------------------------


def test_chat_messages_causal_order_files_context() -> None:
    run = RunInput(
        thread_id="t",
        run_id="r",
        context=[ContextItem(description="user's city", value="Lisbon")],
        messages=[
            Message(id="s", role="system", parts=[TextPart(text="House rules.")]),
            Message(
                id="u1",
                role="user",
                parts=[
                    TextPart(text="What is in this picture?"),
                    FilePart(url="data:image/png;base64,AAAA", media_type="image/png"),
                    FilePart(url="data:application/pdf;base64,JVBE", media_type="application/pdf", filename="a.pdf"),
                ],
            ),
            Message(
                id="a1",
                role="assistant",
                parts=[
                    ReasoningPart(text="thinking"),
                    TextPart(text="Checking."),
                    ToolCallPart(id="c1", name="calc", input={"x": 1}),
                    ToolCallPart(id="c2", name="calc", input={"x": 2}),
                    ToolResultPart(id="c2", name="calc", output=2),
                    ToolResultPart(id="c1", name="calc", error="bad"),
                    TextPart(text="Now the browser."),
                    ToolCallPart(id="c3", name="confirm", input={}),
                ],
            ),
        ],
    )
    assert chat_messages(run, "Be brief.") == [
        {"role": "system", "content": "Be brief.\n\nContext from the application:\n- user's city: Lisbon"},
        {"role": "system", "content": "House rules."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": '{"x":1}'}},
                {"id": "c2", "type": "function", "function": {"name": "calc", "arguments": '{"x":2}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: bad"},
        {"role": "tool", "tool_call_id": "c2", "content": "2"},
        {
            "role": "assistant",
            "content": "Now the browser.",
            "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "confirm", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "No result was recorded."},
    ]


# --- the translator on its own ---------------------------------------------------------------------


def test_arguments_before_the_name_are_buffered() -> None:
    translator = ChatTranslator("p")
    assert translator.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]})) == []
    started = translator.feed(chunk({"tool_calls": [{"index": 0, "function": {"name": "calc", "arguments": ": 1}"}}]}))
    assert [(e.type, getattr(e, "id", None)) for e in started] == [
        ("tool-call-start", "call_p_1"),
        ("tool-call-args-delta", "call_p_1"),  # what came before the name
        ("tool-call-args-delta", "call_p_1"),
    ]
    assert "".join(e.delta for e in started[1:]) == '{"a": 1}'  # type: ignore[union-attr]
    (end,) = translator.close()
    assert end.type == "tool-call-end" and end.input == {"a": 1}  # type: ignore[union-attr]


def test_what_cannot_be_used_is_ignored() -> None:
    translator = ChatTranslator("p")
    assert translator.feed({"choices": None}) == []
    assert translator.feed({"choices": [{"index": 1, "delta": {"content": "another choice"}}]}) == []
    assert translator.feed({"choices": [{"index": 0, "delta": {"content": None, "tool_calls": [{"index": 0}]}}]}) == []
    assert translator.close() == []  # a call that never got a name is dropped
    assert translator.tool_calls == [] and translator.text_content == ""


def test_reasoning_and_text_alternate_in_blocks() -> None:
    translator = ChatTranslator("p")
    events = []
    for delta in ({"reasoning": "a"}, {"content": "b"}, {"reasoning_content": "c"}, {"content": "d"}):
        events += translator.feed(chunk(delta))
    events += translator.close()
    assert [e.type for e in events] == [
        "reasoning-start", "reasoning-delta", "reasoning-end",
        "text-start", "text-delta", "text-end",
        "reasoning-start", "reasoning-delta", "reasoning-end",
        "text-start", "text-delta", "text-end",
    ]  # fmt: skip
    assert len({e.id for e in events}) == 4  # type: ignore[union-attr]
    assert translator.text_content == "bd"


def test_empty_arguments_mean_no_input_and_bad_json_is_an_invalid_call() -> None:
    translator = ChatTranslator("p")
    translator.feed(chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "x"}}]}))
    translator.feed(chunk({"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "y", "arguments": '{"a":'}}]}))
    first, second = translator.close()
    assert first.input == {}  # type: ignore[union-attr]
    assert second.input == '{"a":' and second.error is not None  # type: ignore[union-attr]
    assert second.error.startswith("the model sent arguments that are not valid JSON")  # type: ignore[union-attr]


def test_repeated_call_ids_are_made_unique_within_the_run() -> None:
    taken: set[str] = set()
    ids = []
    for step in (1, 2):
        translator = ChatTranslator(f"s{step}", taken)
        translator.feed(chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "x"}}]}))
        ids += [e.id for e in translator.close()]  # type: ignore[union-attr]
    assert ids == ["call_1", "call_1_2"]


def test_text_files_are_inlined() -> None:
    run = user_run().model_copy(
        update={
            "messages": [
                Message(
                    id="u",
                    role="user",
                    parts=[FilePart(url="data:text/plain;base64,aGVsbG8=", media_type="text/plain", filename="a.txt")],
                )
            ]
        }
    )
    assert chat_messages(run)[0]["content"] == [{"type": "text", "text": "[attached file a.txt (text/plain)]\nhello"}]


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from streamkit.sources.openai import OpenAIResponsesAgent

    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"pip install 'streamkit\[openai\]'"):
        OpenAIResponsesAgent(model="gpt-5-mini")
    with pytest.raises(ImportError, match=r"streamkit\[openai\]"):
        OpenAIChatAgent(model="gpt-4o-mini")  # no client and no base URL: the SDK's client
    OpenAIChatAgent(model="m", base_url="http://localhost:11434/v1")  # plain httpx needs no SDK
