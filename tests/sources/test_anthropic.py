"""The Anthropic source driven through the real ``anthropic`` SDK, offline.

``AsyncAnthropic`` talks to :class:`streamkit.testing.Replay` through ``Replay.httpx2_client`` (anthropic 2 is built on
``httpx2`` and refuses httpx objects), which serves Messages streams in Anthropic's wire format (SSE with
``event:`` lines) in small uneven pieces. Recorded bodies, in ``streamkit-tests/`` of the provider fixtures
beside the project (see :mod:`tests.support.fixtures`; those tests skip without them):

* ``anthropic_basic_response.sse``, ``anthropic_tool_use_response.sse``,
  ``anthropic_incomplete_partial_json_response.sse``: the anthropic-sdk-python test suite,
  ``tests/lib/streaming/fixtures/`` (basic text; text + one ``tool_use``; a ``tool_use`` cut by ``max_tokens``);
* ``anthropic_thinking_refusal.sse``, ``anthropic_server_tool_refusal.sse``: the same suite,
  ``tests/fixtures/fable-fallback/stream-a-refusal.sse`` and ``stream-a-toolrefusal.sse`` (a thinking block
  with its ``signature_delta``, then text, stopped with ``refusal``; a ``server_tool_use`` web search with its
  ``web_search_tool_result`` and a text, stopped with ``refusal``).

Streams the suite has no recording of (parallel ``tool_use`` blocks, citations, redacted thinking, an ``error``
event) are built by :func:`wire` in the same format, with the payload shapes of Anthropic's streaming and
citations documentation.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import agui, aisdk
from streamkit.events import (
    ApprovalState,
    ChatEvent,
    ContextItem,
    FilePart,
    Message,
    ReasoningEnd,
    ReasoningPart,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    TextEnd,
    TextPart,
    Tool,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    check,
)
from streamkit.sources.anthropic import (
    REDACTED_PREFIX,
    AnthropicAgent,
    AnthropicTranslator,
    message_events,
    to_anthropic_messages,
    to_anthropic_request,
)
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources.support import (
    Meant,
    Plan,
    agui_body,
    aisdk_body,
    assert_clients_agree,
    collect,
    interleave,
    meant_of_events,
    plans,
    sse,
    through_agui,
    through_aisdk,
)
from tests.support.fixtures import provider_fixture
from tests.support.oracle import JsOracle


def recorded_sse(name: str) -> bytes:
    return provider_fixture(f"streamkit-tests/anthropic_{name}.sse")


def wire(events: list[dict[str, Any]]) -> bytes:
    """Events in Anthropic's wire format: ``event: <type>`` then ``data: <json>``, a blank line after each."""
    return sse(events, named=True)


def message_start(model: str = "claude-sonnet-4-5", **usage: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01Test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1, **usage},
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, d: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_end(reason: str, output_tokens: int = 5) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def tool_use_stream(calls: list[tuple[str, str, list[str]]], *, interleave: bool = True) -> list[dict[str, Any]]:
    """Several ``tool_use`` blocks (id, name, argument pieces), their ``input_json_delta``\\ s interleaved."""
    events = [message_start()]
    for index, (cid, name, _) in enumerate(calls):
        events.append(block_start(index, {"type": "tool_use", "id": cid, "name": name, "input": {}}))
    longest = max(len(pieces) for _, _, pieces in calls)
    for step in range(longest):
        for index, (_, _, pieces) in enumerate(calls):
            if step < len(pieces):
                events.append(delta(index, {"type": "input_json_delta", "partial_json": pieces[step]}))
    events += [block_stop(i) for i in range(len(calls))]
    return events + message_end("tool_use")


def anthropic_client(replay: Replay) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test-key", max_retries=0, http_client=replay.httpx2_client())


async def sdk_events(replay: Replay, **request: Any) -> list[ChatEvent]:
    client = anthropic_client(replay)
    stream = await client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        **request,
    )
    return await collect(message_events(stream, prefix="p"))


def of(events: list[ChatEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def text_of(events: list[ChatEvent]) -> str:
    return "".join(e.delta for e in events if e.type == "text-delta")


# --- the stream, through the real SDK ------------------------------------------------------------


async def test_plain_text_from_the_sdk_suite() -> None:
    events = await sdk_events(Replay(Recording(recorded_sse("basic_response"))))
    assert isinstance(events[0], RunStarted) and events[0].thread_id is None and events[0].run_id is None
    assert [e.type for e in events] == [
        "run-started", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "run-finished",
    ]  # fmt: skip
    assert text_of(events) == "Hello there!"
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "stop"
    assert finished.usage is not None
    assert finished.usage.model_dump(exclude_none=True) == {
        "input_tokens": 11,
        "output_tokens": 6,
        "total_tokens": 17,
        "provider": "anthropic",
        "model": "claude-3-opus-latest",
    }


async def test_one_tool_call_from_the_sdk_suite() -> None:
    events = await sdk_events(Replay(Recording(recorded_sse("tool_use_response"))))
    assert text_of(events) == "I'll check the current weather in Paris for you."
    start = of(events, ToolCallStart)
    assert [(s.id, s.name) for s in start] == [("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather")]
    args = "".join(e.delta for e in events if e.type == "tool-call-args-delta")
    assert args == '{"location": "Paris"}'  # every input_json_delta piece, the empty one skipped
    assert [(e.id, e.input, e.error) for e in of(events, ToolCallEnd)] == [
        ("toolu_01NRLabsLyVHZPKxbKvkfSMn", {"location": "Paris"}, None)
    ]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "tool-calls"
    assert finished.usage is not None and (finished.usage.input_tokens, finished.usage.output_tokens) == (377, 65)
    assert finished.usage.cached_input_tokens is None  # the cache counts were 0


async def test_max_tokens_cuts_a_tool_call_from_the_sdk_suite() -> None:
    events = await sdk_events(Replay(Recording(recorded_sse("incomplete_partial_json_response"))))
    (end,) = of(events, ToolCallEnd)
    assert end.id == "toolu_01EKqbqmZrGRXy18eN7m9kvY" and end.error is not None  # its JSON was cut off
    assert isinstance(end.input, str) and end.input.startswith('{"filename": "taxes.txt"')
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "length"


async def test_thinking_keeps_its_signature_and_refusal_is_content_filter() -> None:
    events = await sdk_events(Replay(Recording(recorded_sse("thinking_refusal"))))
    types = [e.type for e in events]
    assert types[:2] == ["run-started", "reasoning-start"]
    reasoning = "".join(e.delta for e in events if e.type == "reasoning-delta")
    assert reasoning.startswith("Simple educational question") and reasoning.endswith("roll with it politely.")
    (end,) = of(events, ReasoningEnd)
    signature = "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU="
    assert end.provider_metadata == {"anthropic": {"signature": signature}}
    assert end.encrypted_value == signature
    assert text_of(events) == "Hi"
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "content-filter"
    assert finished.usage is not None
    assert (finished.usage.input_tokens, finished.usage.output_tokens, finished.usage.reasoning_tokens) == (28, 106, 67)


async def test_server_tool_use_is_provider_executed_with_its_results_as_sources() -> None:
    events = await sdk_events(Replay(Recording(recorded_sse("server_tool_refusal"))))
    (start,) = of(events, ToolCallStart)
    assert (start.id, start.name, start.provider_executed) == ("srvtoolu_fixture_a_0001", "web_search", True)
    (end,) = of(events, ToolCallEnd)
    assert end.input == {"query": "solar eclipse viewing safety news 2026"}
    (result,) = of(events, ToolResult)
    assert result.id == start.id and [r["url"] for r in result.output] == [
        "https://www.example.com/eclipse-viewing-safety",
        "https://www.example.com/eclipses-2026",
    ]
    sources = [(e.url, e.title) for e in events if e.type == "source"]
    assert sources[0] == (
        "https://www.example.com/eclipse-viewing-safety",
        "How to Watch a Solar Eclipse Safely | Example Observatory",
    )
    assert text_of(events) == "Here's a summary of this year's solar eclipses and how"
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "content-filter"


async def test_three_parallel_tool_calls_with_interleaved_argument_deltas() -> None:
    calls = [
        ("toolu_A", "get_weather", ['{"ci', 'ty": "Par', 'is"}']),
        ("toolu_B", "get_weather", ["", '{"city"', ': "Rome"', "}"]),
        ("toolu_C", "calculate", ['{"expression": "2*21"}']),
    ]
    events = await sdk_events(Replay(Recording(wire(tool_use_stream(calls)))))
    assert [(s.id, s.name) for s in of(events, ToolCallStart)] == [(c[0], c[1]) for c in calls]
    for cid, _, pieces in calls:
        assert "".join(e.delta for e in events if e.type == "tool-call-args-delta" and e.id == cid) == "".join(pieces)
    assert [(e.id, e.input) for e in of(events, ToolCallEnd)] == [
        ("toolu_A", {"city": "Paris"}),
        ("toolu_B", {"city": "Rome"}),
        ("toolu_C", {"expression": "2*21"}),
    ]
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "tool-calls"


async def test_citations_redacted_thinking_and_cache_usage() -> None:
    events = [
        message_start(cache_creation_input_tokens=100, cache_read_input_tokens=2000),
        block_start(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        delta(1, {"type": "text_delta", "text": "The grass is green."}),
        delta(
            1,
            {
                "type": "citations_delta",
                "citation": {
                    "type": "char_location",
                    "cited_text": "The grass is green. ",
                    "document_index": 0,
                    "document_title": "My Document",
                    "start_char_index": 0,
                    "end_char_index": 20,
                },
            },
        ),
        block_stop(1),
        *message_end("end_turn"),
    ]
    out = await sdk_events(Replay(Recording(wire(events))))
    (end,) = of(out, ReasoningEnd)
    assert end.provider_metadata == {"anthropic": {"redactedData": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}}
    assert end.encrypted_value == REDACTED_PREFIX + "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"
    (text_end,) = of(out, TextEnd)
    assert text_end.citations is not None
    (citation,) = text_end.citations
    assert (citation.source.id, citation.source.title, citation.source.media_type) == (
        "document-0",
        "My Document",
        "text/plain",
    )
    assert (citation.start_index, citation.end_index, citation.cited_text) == (0, 20, "The grass is green. ")
    usage = out[-1].usage  # type: ignore[union-attr]
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (2110, 2000, 5)
    assert usage.cache_write_input_tokens == 100  # written to the cache, counted in input_tokens too


async def test_an_http_error_status_ends_the_run_with_the_providers_message() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server = Replay(Recording.error(529, body))
    agent = AnthropicAgent(anthropic_client(server), model="claude-sonnet-4-5")
    out = await collect(agent(RunInput(thread_id="t", run_id="r", messages=[user("hi")])))
    assert out[-1] == RunError(message="Overloaded", code="overloaded_error")


async def test_an_error_event_inside_the_stream_ends_the_run() -> None:
    # The error event of Anthropic's streaming docs, after some text.
    events = [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "Partial"}),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    out = await sdk_events(Replay(Recording(wire(events))))
    assert text_of(out) == "Partial"
    assert out[-1] == RunError(message="Overloaded", code="overloaded_error")
    # the same event as a plain dict, without the SDK (which raises it as an APIStatusError)
    plain = await collect(message_events(events, prefix="p"))
    assert plain[-1] == RunError(message="Overloaded", code="overloaded_error")


async def test_a_connection_dropped_mid_stream_ends_the_run() -> None:
    texts = [delta(0, {"type": "text_delta", "text": t}) for t in ("Hello", " there", "!")]
    body = wire(
        [message_start(), block_start(0, {"type": "text", "text": ""}), *texts, block_stop(0), *message_end("end_turn")]
    )
    out = await sdk_events(Replay(Recording(body, cut=body.index(b'" there"'))))
    assert text_of(out) == "Hello"
    error = out[-1]
    assert isinstance(error, RunError) and error.code == "model_unreachable"
    assert "peer closed connection" in error.message


async def test_a_message_that_starts_whole_keeps_its_blocks_and_stop_reason() -> None:
    # a programmatic tool call the API resumes: the tool_use block and the stop reason in message_start itself
    start = message_start()
    call = {"type": "tool_use", "id": "toolu_sk0whole", "name": "roll", "input": {"sides": 6},
            "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_sk0run"}}  # fmt: skip
    start["message"].update(content=[call], stop_reason="tool_use")
    events = await sdk_events(Replay(Recording(wire([start, {"type": "message_stop"}]))))
    assert [(e.id, e.input) for e in of(events, ToolCallEnd)] == [("toolu_sk0whole", {"sides": 6})]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "tool-calls"


async def test_a_stream_that_just_stops_is_an_error_not_a_finish() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "Hi"}),
    ]
    out = await collect(message_events(events, prefix="p"))
    assert isinstance(out[-1], RunError) and out[-1].code == "incomplete_stream"


def test_the_translator_accepts_sdk_objects_and_dicts_alike() -> None:
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    raw = tool_use_stream([("toolu_A", "f", ['{"a":', " 1}"])])
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    a, b = AnthropicTranslator("x"), AnthropicTranslator("x")
    from_dicts = [e for event in raw for e in a.feed(event)] + a.close()
    from_objects = [e for event in raw for e in b.feed(adapter.validate_python(event))] + b.close()
    assert from_dicts == from_objects and a.finish == b.finish == "tool-calls"


# --- the input conversion ------------------------------------------------------------------------


def user(text: str, mid: str = "u1", *parts: Any) -> Message:
    return Message(id=mid, role="user", parts=[TextPart(text=text), *parts])


SIGNED = ReasoningPart(text="Let me think.", provider_metadata={"anthropic": {"signature": "sig-1"}})


def test_history_becomes_messages_with_thinking_signatures_and_tool_results_in_causal_order() -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    run = RunInput(
        thread_id="t",
        run_id="r",
        messages=[
            Message(id="s", role="system", parts=[TextPart(text="Be brief.")]),
            user("weather in Paris and Rome?", "u1", FilePart(url=png, media_type="image/png")),
            Message(
                id="a1",
                role="assistant",
                parts=[  # one AI SDK message: two steps, the results kept next to their calls
                    SIGNED,
                    TextPart(text="Checking."),
                    ToolCallPart(id="toolu_1", name="get_weather", input={"city": "Paris"}),
                    ToolResultPart(id="toolu_1", name="get_weather", output={"tempC": 21.0}),  # sent as 21
                    ToolCallPart(id="toolu_2", name="get_weather", input={"city": "Rome"}),
                    ToolResultPart(id="toolu_2", name="get_weather", error="timeout"),
                    ReasoningPart(text="", encrypted_value=REDACTED_PREFIX + "opaque"),
                    ReasoningPart(text="unsigned thoughts are left out"),
                    TextPart(text="Paris is 21C."),
                ],
            ),
            user("thanks", "u2"),
        ],
        context=[ContextItem(description="user timezone", value="Europe/Paris")],
        tools=[Tool(name="pick_color", description="Ask the user", parameters={"type": "object", "properties": {}})],
    )
    request = to_anthropic_request(run, system="You are helpful.")
    assert request["system"] == "You are helpful.\n\nBe brief.\n\nContext:\n- user timezone: Europe/Paris"
    assert request["tools"] == [
        {"name": "pick_color", "input_schema": {"type": "object", "properties": {}}, "description": "Ask the user"}
    ]
    assert request["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "weather in Paris and Rome?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Let me think.", "signature": "sig-1"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"tempC":21}'},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "timeout", "is_error": True},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "redacted_thinking", "data": "opaque"}, {"type": "text", "text": "Paris is 21C."}],
        },
        {"role": "user", "content": [{"type": "text", "text": "thanks"}]},
    ]


def test_agui_shaped_history_merges_turns_and_answers_every_call() -> None:
    messages = [
        user("go"),
        Message(id="r1", role="assistant", parts=[ReasoningPart(text="hmm", encrypted_value="sig-9")]),
        Message(
            id="a1",
            role="assistant",
            parts=[
                ToolCallPart(id="c1", name="a", input='{"x": 1}'),
                ToolCallPart(id="c2", name="b", approval=ApprovalState(id="ap", approved=False, reason="no")),
                ToolCallPart(id="c3", name="c"),
            ],
        ),
        Message(id="t1", role="tool", parts=[ToolResultPart(id="c1", name="a", output="one")]),
        user("and now?", "u2"),
    ]
    assert to_anthropic_messages(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig-9"},
                {"type": "tool_use", "id": "c1", "name": "a", "input": {"x": 1}},
                {"type": "tool_use", "id": "c2", "name": "b", "input": {}},
                {"type": "tool_use", "id": "c3", "name": "c", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "one"},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": "The user denied this tool call. Reason: no",
                    "is_error": True,
                },
                {"type": "tool_result", "tool_use_id": "c3", "content": "No result was recorded.", "is_error": True},
                {"type": "text", "text": "and now?"},
            ],
        },
    ]


def test_files_become_documents_or_a_note() -> None:
    parts = [
        FilePart(url="data:application/pdf;base64,JVBERi0=", media_type="application/pdf"),
        FilePart(url="https://example.com/cat.jpg", media_type="image/jpeg"),
        FilePart(url="data:text/plain;base64,aGVsbG8=", media_type="text/plain", filename="notes.txt"),
        FilePart(url="data:audio/wav;base64,AAAA", media_type="audio/wav", filename="a.wav"),
    ]
    (message,) = to_anthropic_messages([Message(id="u", role="user", parts=parts)])
    assert message["content"] == [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "hello"},
            "title": "notes.txt",
        },
        {"type": "text", "text": "[attached file a.wav (audio/wav)]"},
    ]


# --- the agent -----------------------------------------------------------------------------------


@server_tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "tempC": 21}


def thinking_then_tool_call() -> bytes:
    return wire(
        [
            message_start(),
            block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, {"type": "thinking_delta", "thinking": "Weather needs the tool."}),
            delta(0, {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}),
            block_stop(0),
            block_start(1, {"type": "tool_use", "id": "toolu_W", "name": "get_weather", "input": {}}),
            delta(1, {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}),
            block_stop(1),
            *message_end("tool_use", 20),
        ]
    )


async def test_agent_runs_a_server_tool_and_sends_the_signed_thinking_back() -> None:
    answer = wire(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "It is 21C in Paris."}),
            block_stop(0),
            *message_end("end_turn", 7),
        ]
    )
    server = Replay(Recording(thinking_then_tool_call()), Recording(answer))
    agent = AnthropicAgent(
        anthropic_client(server),
        model="claude-sonnet-4-5",
        max_tokens=2048,
        system="Be brief.",
        tools=[get_weather],
        thinking={"type": "enabled", "budget_tokens": 1024},
    )
    run = RunInput(
        thread_id="t",
        run_id="r1",
        messages=[user("Weather in Paris?")],
        tools=[Tool(name="pick_color", description="Ask the user for a color")],
    )
    out = await collect(agent(run))
    (result,) = of(out, ToolResult)
    assert (result.id, result.output) == ("toolu_W", {"city": "Paris", "tempC": 21})
    assert text_of(out) == "It is 21C in Paris."
    finished = out[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "stop"
    assert finished.usage is not None and finished.usage.output_tokens == 27  # summed over both calls
    first, second = server.requests
    assert first["model"] == "claude-sonnet-4-5" and first["max_tokens"] == 2048 and first["stream"] is True
    assert first["system"] == "Be brief."
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert [t["name"] for t in first["tools"]] == ["get_weather", "pick_color"]
    assert first["tools"][0]["input_schema"]["properties"]["city"]["type"] == "string"
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}]
    # the second request: the history, the signed thinking, the tool_use and its result, field by field
    assert second["messages"][0] == first["messages"][0]
    assistant, results = second["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Weather needs the tool.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            },
            {"type": "tool_use", "id": "toolu_W", "name": "get_weather", "input": {"city": "Paris"}},
        ],
    }
    assert results == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_W", "content": '{"city":"Paris","tempC":21}'}],
    }
    assert len(second["messages"]) == 3


async def test_agent_leaves_frontend_tool_calls_pending() -> None:
    stream = wire(tool_use_stream([("toolu_F", "pick_color", ['{"options": ["red"]}'])]))
    server = Replay(Recording(stream))
    agent = AnthropicAgent(anthropic_client(server), tools=[get_weather])
    run = RunInput(thread_id="t", run_id="r", messages=[user("pick")], tools=[Tool(name="pick_color")])
    out = await collect(agent(run))
    assert of(out, ToolResult) == []
    assert [(e.id, e.input) for e in of(out, ToolCallEnd)] == [("toolu_F", {"options": ["red"]})]
    assert isinstance(out[-1], RunFinished) and out[-1].finish_reason == "tool-calls"
    assert len(server.requests) == 1


def test_the_sdk_is_an_optional_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ImportError, match=r"streamkit\[anthropic\]"):
        AnthropicAgent()


# --- through the real clients --------------------------------------------------------------------

FINISH_WIRE = {"stop": "end_turn", "length": "max_tokens", "tool-calls": "tool_use"}


@st.composite
def anthropic_streams(draw: st.DrawFn) -> tuple[list[dict[str, Any]], Meant, str | None]:
    """A generated Messages stream (thinking with a signature, text, up to three ``tool_use`` blocks whose
    argument JSON is split anywhere and interleaved), what it means, and the thinking's signature."""
    plan: Plan = draw(plans(id_prefix="toolu_"))
    events: list[dict[str, Any]] = [message_start(**({"input_tokens": plan.usage[0]} if plan.usage else {}))]
    index = 0
    signature = None
    if plan.reasoning:
        signature = draw(st.text("ABCDEFabcdef0123456789+/=", min_size=8, max_size=40))
        events.append(block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
        events += [delta(index, {"type": "thinking_delta", "thinking": piece}) for piece in plan.reasoning]
        events.append(delta(index, {"type": "signature_delta", "signature": signature}))
        events.append(block_stop(index))
        index += 1
    if plan.text:
        events.append(block_start(index, {"type": "text", "text": ""}))
        events += [delta(index, {"type": "text_delta", "text": piece}) for piece in plan.text]
        events.append(block_stop(index))
        index += 1
    first = index
    for call in plan.calls:
        events.append(block_start(index, {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}))
        index += 1
    for n, piece in draw(interleave(plan.calls)):
        events.append(delta(first + n, {"type": "input_json_delta", "partial_json": piece}))
    events += [block_stop(first + n) for n in range(len(plan.calls))]
    events += message_end(FINISH_WIRE[plan.finish], plan.usage[1] if plan.usage else 1)
    return events, plan.meant(), signature


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=anthropic_streams())
def test_generated_streams_reach_both_real_clients_as_meant(js: JsOracle, stream: Any) -> None:
    events, meant, signature = stream
    out = asyncio.run(collect(message_events(events, prefix="g")))
    assert meant_of_events(out).blocks == meant.blocks
    assert_clients_agree(js, out, meant)
    if signature is not None:  # the signature reaches both clients where they keep it for the next request
        _, ai = through_aisdk(js, out)
        (part,) = [p for p in ai["message"]["parts"] if p["type"] == "reasoning"]
        assert part["providerMetadata"] == {"anthropic": {"signature": signature}}
        _, ag = through_agui(js, out)
        (reasoning,) = [m for m in ag["messages"] if m["role"] == "reasoning"]
        assert reasoning["encryptedValue"] == signature


async def weather_run() -> list[ChatEvent]:
    answer = wire(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "It is 21C in Paris."}),
            block_stop(0),
            *message_end("end_turn", 7),
        ]
    )
    server = Replay(Recording(thinking_then_tool_call()), Recording(answer))
    agent = AnthropicAgent(
        anthropic_client(server), tools=[get_weather], thinking={"type": "enabled", "budget_tokens": 1024}
    )
    return await collect(agent(RunInput(thread_id="thread-1", run_id="r1", messages=[user("Weather in Paris?")])))


# What the next request must send Anthropic, whichever client folded the run.
ROUND_TRIP = [
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Weather needs the tool.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            },
            {"type": "tool_use", "id": "toolu_W", "name": "get_weather", "input": {"city": "Paris"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_W", "content": '{"city":"Paris","tempC":21}'}],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "It is 21C in Paris."}]},
    {"role": "user", "content": [{"type": "text", "text": "thanks"}]},
]


def test_a_conversation_folded_by_use_chat_round_trips(js: JsOracle) -> None:
    events = asyncio.run(weather_run())
    simple = aisdk_body([RunStarted(), RunFinished()]).decode()
    answer = js.call(
        "aisdk",
        {
            "body": [aisdk_body(events).decode(), simple],
            "version": 7,
            "steps": [
                {"do": "sendMessage", "args": {"text": "Weather in Paris?"}},
                {"do": "sendMessage", "args": {"text": "thanks"}},
            ],
        },
    )
    assert answer["ok"], answer.get("error")
    body = answer["result"]["requests"][1]["body"]
    run = aisdk.to_run_input(aisdk.parse_chat_request(body))
    assert to_anthropic_messages(run.messages) == ROUND_TRIP


def test_a_conversation_folded_by_http_agent_round_trips(js: JsOracle) -> None:
    events = asyncio.run(weather_run())
    first = {"id": "u1", "role": "user", "content": "Weather in Paris?"}
    second = {"id": "u2", "role": "user", "content": "thanks"}
    answer = js.call(
        "agui",
        {
            "runs": [
                {"body": agui_body(events), "addMessages": [first]},
                {"body": agui_body([RunStarted(), RunFinished()]), "addMessages": [second]},
            ],
            "messages": [],
            "state": {},
        },
    )
    assert answer["ok"], answer.get("error")
    request = answer["result"]["runs"][1]["request"]["body"]
    run = agui.to_run_input(agui.parse_run_agent_input(request))
    assert to_anthropic_messages(run.messages) == ROUND_TRIP


async def _recorded_events(name: str) -> list[ChatEvent]:
    return await sdk_events(Replay(Recording(recorded_sse(name))))


def test_server_tools_citations_and_refusals_reach_both_real_clients(js: JsOracle) -> None:
    events = asyncio.run(_recorded_events("server_tool_refusal"))
    meant, ai = through_aisdk(js, events)
    parts = ai["message"]["parts"]
    (tool,) = [p for p in parts if p.get("toolCallId") == "srvtoolu_fixture_a_0001"]
    assert tool["state"] == "output-available" and tool["providerExecuted"] is True
    assert tool["input"] == {"query": "solar eclipse viewing safety news 2026"}
    urls = [p["url"] for p in parts if p["type"] == "source-url"]
    assert urls == ["https://www.example.com/eclipse-viewing-safety", "https://www.example.com/eclipses-2026"]
    assert meant.finish == "content-filter"
    _, ag = through_agui(js, events)
    (call,) = [c for m in ag["messages"] if m["role"] == "assistant" for c in m.get("toolCalls") or []]
    assert call["id"] == "srvtoolu_fixture_a_0001"
    (result,) = [m for m in ag["messages"] if m["role"] == "tool"]
    assert result["toolCallId"] == call["id"] and "eclipse-viewing-safety" in result["content"]
    # a cited text block: the citation reaches the AI SDK client on its text part
    cited = asyncio.run(
        collect(
            message_events(
                [
                    message_start(),
                    block_start(0, {"type": "text", "text": ""}),
                    delta(0, {"type": "text_delta", "text": "The grass is green."}),
                    delta(
                        0,
                        {
                            "type": "citations_delta",
                            "citation": {
                                "type": "web_search_result_location",
                                "cited_text": "grass is green",
                                "url": "https://example.com/grass",
                                "title": "Grass",
                                "encrypted_index": "Eo8BCioIAhgBIiQ",
                            },
                        },
                    ),
                    block_stop(0),
                    *message_end("end_turn"),
                ],
                prefix="c",
            )
        )
    )
    _, ai = through_aisdk(js, cited)
    (text,) = [p for p in ai["message"]["parts"] if p["type"] == "text"]
    (citation,) = text["citations"]
    assert citation["source"]["url"] == "https://example.com/grass" and citation["citedText"] == "grass is green"


async def test_agent_offers_provider_tools_and_continues_a_paused_turn() -> None:
    # Anthropic pauses a long turn of its own server tools with stop_reason pause_turn: the content goes
    # back as it is and the model goes on, in the same step.
    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    paused = wire(
        [
            message_start(),
            block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
            delta(0, {"type": "input_json_delta", "partial_json": '{"query": "eclipse'}),
            delta(0, {"type": "input_json_delta", "partial_json": ' 2026"}'}),
            block_stop(0),
            block_start(
                1,
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": [
                        {
                            "type": "web_search_result",
                            "title": "E",
                            "url": "https://e.example",
                            "encrypted_content": "x",
                        }
                    ],
                },
            ),
            block_stop(1),
            *message_end("pause_turn", 10),
        ]
    )
    resumed = wire(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Two eclipses."}),
            block_stop(0),
            *message_end("end_turn", 4),
        ]
    )
    server = Replay(Recording(paused), Recording(resumed))
    agent = AnthropicAgent(anthropic_client(server), provider_tools=[search])
    out = await collect(agent(RunInput(thread_id="t", run_id="r", messages=[user("eclipses?")])))
    assert [e.type for e in out if e.type in ("step-started", "tool-call-start", "tool-result", "text-end")] == [
        "step-started", "tool-call-start", "tool-result", "text-end",
    ]  # fmt: skip
    assert text_of(out) == "Two eclipses."
    finished = out[-1]
    assert isinstance(finished, RunFinished) and finished.finish_reason == "stop"
    assert finished.usage is not None and (finished.usage.input_tokens, finished.usage.output_tokens) == (20, 14)
    first, second = server.requests
    assert first["tools"] == [search] and second["tools"] == [search]
    assert second["messages"] == [
        first["messages"][0],
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "eclipse 2026"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": [
                        {
                            "type": "web_search_result",
                            "title": "E",
                            "url": "https://e.example",
                            "encrypted_content": "x",
                        }
                    ],
                },
            ],
        },
    ]


async def test_an_approved_call_runs_before_the_model_sees_its_result() -> None:
    @server_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    answer = wire(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Done."}),
            block_stop(0),
            *message_end("end_turn"),
        ]
    )
    server = Replay(Recording(answer))
    agent = AnthropicAgent(anthropic_client(server), tools=[delete_file])
    call = ToolCallPart(
        id="toolu_D", name="delete_file", input={"path": "a.txt"}, approval=ApprovalState(id="ap", approved=True)
    )
    run = RunInput(
        thread_id="t",
        run_id="r2",
        messages=[user("delete a.txt"), Message(id="a1", role="assistant", parts=[call])],
        message_id="a1",
    )
    out = [e async for e in agent(run)]
    # well-formed for the route's checker, which knows the continued message's calls
    assert [e async for e in check(out, strict=True, known_tool_calls=["toolu_D"])][-1] == out[-1]
    assert [(e.id, e.output) for e in of(out, ToolResult)] == [("toolu_D", "deleted a.txt")]
    (request,) = server.requests
    assert request["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_D", "name": "delete_file", "input": {"path": "a.txt"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_D", "content": "deleted a.txt"}]},
    ]
