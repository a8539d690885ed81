"""The Responses API source, driven through the real ``openai`` SDK over an ``httpx.MockTransport``.

Recorded bodies (``streamkit-tests/openai_responses`` of the provider fixtures beside the project, see
:mod:`tests.support.fixtures`; those tests skip without them) are the AI SDK's OpenAI provider fixtures
(vercel/ai ``packages/openai/src/responses/__fixtures__/*.chunks.txt``, recorded from the live API), put in
the SSE wire format (an ``event:`` line with the type, then the ``data:`` line): ``reasoning_loop.1-4``
(``openai-reasoning-encrypted-content.1``: four responses of one tool loop, reasoning with
``encrypted_content``, then function calls, then the answer), ``web_search`` (``openai-web-search-tool.1``:
provider-run searches and ``url_citation`` annotations), ``two_messages`` (``openai-phase.1``: two message
items, their deltas trimmed in the fixture, the whole text restated by ``output_text.done``) and ``error``
(``openai-error.1``: an ``error`` event then ``response.failed``). Parallel calls with interleaved argument
deltas and the incomplete (length / content filter) endings are built here in the same wire format, and the
tool loop also runs over the project's own bodies (:mod:`tests.sources.bodies`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from openai import AsyncOpenAI

from streamkit.events import (
    Message,
    ReasoningEnd,
    ReasoningPart,
    RunInput,
    Source,
    TextEnd,
    TextPart,
    Tool,
    ToolCallArgsDelta,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
)
from streamkit.sources.openai import OpenAIResponsesAgent, responses_events, responses_input
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources import bodies
from tests.sources.support import collect, sse, summarize
from tests.support.fixtures import provider_fixture

MODEL = "gpt-5.1-codex-max"


def sdk(replay: Replay) -> AsyncOpenAI:
    return AsyncOpenAI(api_key="sk-test", base_url="http://model.test/v1", http_client=replay.client(), max_retries=0)


async def stream_of(*replies: Recording) -> Any:
    client = sdk(Replay(*replies))
    return await client.responses.create(model="m", input="hi", stream=True)


def user_run(text: str = "Compute (12 + 7) * 3 * 10 with the calculator.", **update: Any) -> RunInput:
    run = RunInput(thread_id="t1", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])])
    return run.model_copy(update=update)


def loop_replies() -> list[Recording]:
    return [Recording(recorded(f"reasoning_loop.{n}")) for n in (1, 2, 3, 4)]


def recorded(name: str) -> bytes:
    """A recorded Responses body of the provider fixtures (the test skips without them)."""
    return provider_fixture(f"streamkit-tests/openai_responses/{name}.sse")


def body_events(name: str) -> list[dict[str, Any]]:
    return bodies.body_events(recorded(name))


@server_tool
def calculator(a: float, b: float, op: str) -> float:
    """Add or multiply two numbers."""
    return a + b if op == "add" else a * b


CALLS = ["call_AB6AaRZ1FYZB2RwS6A5vbdqn", "call_Q6pW65MUgW9vF59BmItYGos3", "call_Zl5vIMnD7dVAjgU6FkhmiCZh"]
SUMMARY = (
    "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, "
    "and finally multiply that by 10, reporting the final product."
)


async def test_reasoning_tool_loop_restores_encrypted_reasoning() -> None:
    replay = Replay(*loop_replies())
    agent = OpenAIResponsesAgent(sdk(replay), model=MODEL, tools=[calculator], system_prompt="Use the calculator.")
    events = await collect(agent(user_run()))
    assert summarize(events) == [
        ("run-started",),
        ("step", "model-call-1"),
        ("reasoning", SUMMARY),
        ("tool-call", CALLS[0], '{"a":12,"b":7,"op":"add"}', {"a": 12, "b": 7, "op": "add"}),
        ("tool-result", CALLS[0], 19.0),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("tool-call", CALLS[1], '{"a":19,"b":3,"op":"multiply"}', {"a": 19, "b": 3, "op": "multiply"}),
        ("tool-result", CALLS[1], 57.0),
        ("/step", "model-call-2"),
        ("step", "model-call-3"),
        ("tool-call", CALLS[2], '{"a":57,"b":10,"op":"multiply"}', {"a": 57, "b": 10, "op": "multiply"}),
        ("tool-result", CALLS[2], 570.0),
        ("/step", "model-call-3"),
        ("step", "model-call-4"),
        ("text", "The final result is **570**."),
        ("/step", "model-call-4"),
        ("run-finished", "stop", {"input_tokens": 914, "output_tokens": 92, "total_tokens": 1006, "model": MODEL}),
    ]
    # the function call streams under its call_id; the fc_ item id is provider metadata
    start = next(e for e in events if isinstance(e, ToolCallStart))
    assert start.id == CALLS[0]
    assert start.provider_metadata == {"openai": {"itemId": "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f"}}
    end = next(e for e in events if isinstance(e, ReasoningEnd))
    encrypted = end.encrypted_value
    assert encrypted is not None and encrypted.startswith("gAAAAABpPDIVOKrs")
    rs_id = "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"
    assert end.provider_metadata == {"openai": {"itemId": rs_id, "reasoningEncryptedContent": encrypted}}

    first, second, _, fourth = replay.requests
    assert replay.paths == ["/v1/responses"] * 4
    assert first["instructions"] == "Use the calculator." and first["store"] is False
    assert first["include"] == ["reasoning.encrypted_content"]
    assert first["tools"] == [
        {
            "type": "function",
            "name": "calculator",
            "description": "Add or multiply two numbers.",
            "parameters": {
                "additionalProperties": False,
                "properties": {
                    "a": {"title": "A", "type": "number"},
                    "b": {"title": "B", "type": "number"},
                    "op": {"title": "Op", "type": "string"},
                },
                "required": ["a", "b", "op"],
                "type": "object",
            },
            "strict": False,
        }
    ]
    user = {"role": "user", "content": [{"type": "input_text", "text": user_run().messages[0].text}]}
    reasoning = {
        "type": "reasoning",
        "id": rs_id,
        "summary": [{"type": "summary_text", "text": SUMMARY}],
        "encrypted_content": encrypted,
    }
    call_1 = {
        "type": "function_call",
        "call_id": CALLS[0],
        "name": "calculator",
        "arguments": '{"a":12,"b":7,"op":"add"}',
    }
    assert second["input"] == [
        user,
        reasoning,
        call_1,
        {"type": "function_call_output", "call_id": CALLS[0], "output": "19"},
    ]
    assert fourth["input"][-2:] == [
        {
            "type": "function_call",
            "call_id": CALLS[2],
            "name": "calculator",
            "arguments": '{"a":57,"b":10,"op":"multiply"}',
        },
        {"type": "function_call_output", "call_id": CALLS[2], "output": "570"},
    ]


async def test_own_reasoning_loop_sends_the_reasoning_item_back() -> None:
    replay = Replay(Recording(bodies.responses_reasoning_call()), Recording(bodies.responses_answer()))
    agent = OpenAIResponsesAgent(sdk(replay), model=MODEL, tools=[calculator])
    said = summarize(await collect(agent(user_run())))
    assert said[2:4] == [
        ("reasoning", bodies.SUMMARY),
        ("tool-call", bodies.CALC_CALL, bodies.CALC_ARGS, {"a": 12, "b": 7, "op": "add"}),
    ]
    assert ("text", bodies.ANSWER) in said
    assert replay.requests[1]["input"][1:] == [
        {
            "type": "reasoning",
            "id": bodies.REASONING_ID,
            "summary": [{"type": "summary_text", "text": bodies.SUMMARY}],
            "encrypted_content": bodies.ENCRYPTED,
        },
        {"type": "function_call", "call_id": bodies.CALC_CALL, "name": "calculator", "arguments": bodies.CALC_ARGS},
        {"type": "function_call_output", "call_id": bodies.CALC_CALL, "output": "19"},
    ]


async def test_frontend_tool_left_pending() -> None:
    replay = Replay(Recording(bodies.responses_reasoning_call()))
    agent = OpenAIResponsesAgent(sdk(replay), model=MODEL)
    browser = Tool(name="calculator", description="The page's calculator.")
    said = summarize(await collect(agent(user_run(tools=[browser]))))
    assert said[-1] == (
        "run-finished",
        "tool-calls",
        {"input_tokens": 120, "output_tokens": 40, "total_tokens": 160, "model": bodies.RESPONSES_MODEL},
    )
    assert not any(entry[0] == "tool-result" for entry in said) and len(replay.requests) == 1
    assert replay.requests[0]["tools"][0]["name"] == "calculator"


async def test_annotations_become_cited_sources_and_hosted_search_is_provider_executed() -> None:
    events = await collect(responses_events(await stream_of(Recording(recorded("web_search")))))
    sources = [e for e in events if isinstance(e, Source)]
    assert len(sources) == 12
    assert sources[0].url is not None and sources[0].url.startswith("https://techcrunch.com/2025/12/05/pe")
    assert sources[0].title == "Petco confirms security lapse exposed customers\u2019 personal data | TechCrunch"
    end = next(e for e in events if isinstance(e, TextEnd))
    assert end.citations is not None and [c.source for c in end.citations] == sources
    assert (end.citations[0].start_index, end.citations[0].end_index) == (277, 411)
    searches = [e for e in events if isinstance(e, ToolCallStart)]
    assert len(searches) == 6 and all(e.provider_executed and e.name == "web_search" for e in searches)
    said = summarize(events)
    assert said[-1] == (
        "run-finished",
        "stop",
        {
            "input_tokens": 31073,
            "output_tokens": 4416,
            "total_tokens": 35489,
            "reasoning_tokens": 3712,
            "cached_input_tokens": 3712,
            "model": "gpt-5-mini-2025-08-07",
        },
    )
    done = [e for e in body_events("web_search") if e["type"] == "response.output_text.done"]
    assert [x[1] for x in said if x[0] == "text"] == [done[0]["text"]]


async def test_text_restated_by_done_is_completed() -> None:
    said = summarize(await collect(responses_events(await stream_of(Recording(recorded("two_messages"))))))
    done = [e["text"] for e in body_events("two_messages") if e["type"] == "response.output_text.done"]
    assert [x[1] for x in said if x[0] == "text"] == done


async def test_error_event_inside_the_stream() -> None:
    said = summarize(await collect(responses_events(await stream_of(Recording(recorded("error"))))))
    message = body_events("error")[2]["error"]["message"]
    assert said == [("run-started",), ("run-error", "insufficient_quota", message)]


async def test_response_failed_as_dicts() -> None:
    async def events() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5"}}
        yield {"type": "response.failed", "response": {"error": {"code": "server_error", "message": "It broke."}}}

    assert summarize(await collect(responses_events(events()))) == [
        ("run-started",),
        ("run-error", "server_error", "It broke."),
    ]


def incomplete(reason: str) -> list[dict[str, Any]]:
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    usage = {"input_tokens": 5, "output_tokens": 16, "total_tokens": 21}
    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "incomplete", "output": []}
    return [
        {"type": "response.created", "sequence_number": 0, "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {
            "type": "response.output_text.delta",
            "sequence_number": 2,
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Once upon",
            "logprobs": [],
        },
        {
            "type": "response.incomplete",
            "sequence_number": 3,
            "response": {**response, "incomplete_details": {"reason": reason}, "usage": usage},
        },
    ]


@pytest.mark.parametrize(("reason", "finish"), [("max_output_tokens", "length"), ("content_filter", "content-filter")])
async def test_incomplete_response(reason: str, finish: str) -> None:
    said = summarize(await collect(responses_events(await stream_of(Recording(sse(incomplete(reason), named=True))))))
    assert said == [
        ("run-started",),
        ("text", "Once upon"),
        ("run-finished", finish, {"input_tokens": 5, "output_tokens": 16, "total_tokens": 21, "model": "gpt-5"}),
    ]


def function_call(n: int, call_id: str, done_args: str | None = None) -> dict[str, Any]:
    item = {"id": f"fc_{n}", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id}
    item["name"] = "get_weather"
    if done_args is not None:
        item.update(status="completed", arguments=done_args)
    return item


def args_delta(n: int, delta: str, seq: int) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": f"fc_{n}",
        "output_index": n,
        "delta": delta,
        "sequence_number": seq,
    }


PARALLEL = [
    {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_p", "model": "gpt-5", "output": []}},
    *[
        {
            "type": "response.output_item.added",
            "sequence_number": 1 + n,
            "output_index": n,
            "item": function_call(n, cid),
        }
        for n, cid in enumerate(["call_paris", "call_tokyo", "call_nyc"])
    ],
    args_delta(0, '{"ci', 4),
    args_delta(2, '{"city": "New', 5),
    args_delta(1, '{"city"', 6),
    args_delta(0, 'ty": "Paris"}', 7),
    args_delta(1, ': "Tokyo"}', 8),
    args_delta(2, ' York"}', 9),
    *[
        {
            "type": "response.output_item.done",
            "sequence_number": 10 + n,
            "output_index": n,
            "item": function_call(n, cid, a),
        }
        for n, (cid, a) in enumerate(
            [
                ("call_paris", '{"city": "Paris"}'),
                ("call_tokyo", '{"city": "Tokyo"}'),
                ("call_nyc", '{"city": "New York"}'),
            ]
        )
    ],
    {
        "type": "response.completed",
        "sequence_number": 13,
        "response": {
            "id": "resp_p",
            "model": "gpt-5",
            "usage": {"input_tokens": 9, "output_tokens": 30, "total_tokens": 39},
        },
    },
]


async def test_three_parallel_calls_with_interleaved_argument_deltas() -> None:
    events = await collect(responses_events(await stream_of(Recording(sse(PARALLEL, named=True)))))
    said = summarize(events)
    assert said[1:4] == [
        ("tool-call", "call_paris", '{"city": "Paris"}', {"city": "Paris"}),
        ("tool-call", "call_tokyo", '{"city": "Tokyo"}', {"city": "Tokyo"}),
        ("tool-call", "call_nyc", '{"city": "New York"}', {"city": "New York"}),
    ]
    assert [e.id for e in events if isinstance(e, ToolCallArgsDelta)] == [
        "call_paris", "call_nyc", "call_tokyo", "call_paris", "call_tokyo", "call_nyc"
    ]  # fmt: skip
    assert said[-1] == (
        "run-finished",
        "tool-calls",
        {"input_tokens": 9, "output_tokens": 30, "total_tokens": 39, "model": "gpt-5"},
    )


async def test_http_error_status_and_dropped_connection() -> None:
    replay = Replay(
        Recording.error(401, {"error": {"message": "Incorrect API key provided.", "code": "invalid_api_key"}})
    )
    said = summarize(await collect(OpenAIResponsesAgent(sdk(replay), model=MODEL)(user_run())))
    assert said[-1] == (
        "run-error",
        "http_401",
        "The model server answered HTTP 401 (unauthorized: check the API key): Incorrect API key provided.",
    )
    body = bodies.responses_reasoning_call()
    events = await collect(responses_events(await stream_of(Recording(body, cut=len(body) // 2))))
    assert summarize(events)[-1][:2] == ("run-error", "model_unreachable")


def test_responses_input_causal_order() -> None:
    run = RunInput(
        thread_id="t",
        run_id="r",
        messages=[
            Message(id="u1", role="user", parts=[TextPart(text="hi")]),
            Message(
                id="a1",
                role="assistant",
                parts=[
                    ReasoningPart(text="plan", provider_metadata={"openai": {"itemId": "rs_1"}}, encrypted_value="enc"),
                    ReasoningPart(text="not from openai"),
                    ToolCallPart(id="call_1", name="calc", input={"a": 1}),
                    ToolResultPart(id="call_1", name="calc", output={"r": 2}),
                    TextPart(text="Two."),
                    ToolCallPart(id="call_2", name="ask", input={}),
                ],
            ),
            Message(id="tool", role="tool", parts=[ToolResultPart(id="call_2", name="ask", denied=True)]),
        ],
    )
    assert responses_input(run) == [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "enc",
        },
        {"type": "function_call", "call_id": "call_1", "name": "calc", "arguments": '{"a":1}'},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"r":2}'},
        {"role": "assistant", "content": "Two."},
        {"type": "function_call", "call_id": "call_2", "name": "ask", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_2", "output": "The user denied this tool call."},
    ]
