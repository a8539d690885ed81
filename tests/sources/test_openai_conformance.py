"""The OpenAI sources through both protocols and the real JS clients.

Generated provider streams (reasoning, text, up to three tool calls whose argument JSON is split anywhere
and interleaved, a finish, usage) go through ``chat_events`` / ``responses_events``, then ``aisdk`` and
``agui``; the real ``ai`` Chat and ``@ag-ui/client`` ``HttpAgent`` must end with the assistant turn the
provider stream meant. Then the round trip: a tool-loop conversation folded by each real client is sent
back as the client's next request, parsed by the protocol's request model, and converted for OpenAI: it
must be exactly the message list the API expects, every tool result right after its call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai import AsyncOpenAI
from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from streamkit import agui, aisdk
from streamkit.events import ChatEvent, Message, RunInput, TextPart
from streamkit.sources.openai import (
    OpenAIChatAgent,
    OpenAIResponsesAgent,
    chat_events,
    chat_messages,
    responses_events,
    responses_input,
)
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources.bodies import (
    ANSWER,
    CHAT_CALL,
    CHAT_TEXT,
    ENCRYPTED,
    chat_text,
    chat_tool_call,
    responses_answer,
    responses_reasoning_call,
)
from tests.sources.support import Plan, agui_body, aisdk_body, assert_clients_agree, collect, interleave, plans
from tests.support.oracle import JsOracle

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


async def _iterate(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


def events_of(stream: Any) -> list[ChatEvent]:
    return asyncio.run(collect(stream))


# --- generated Chat Completions streams ------------------------------------------------------------

_CHAT_FINISH = {"stop": "stop", "length": "length", "tool-calls": "tool_calls"}


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
    out = {"id": "chatcmpl-g", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x", "choices": choices}
    if usage is not None:
        out["usage"] = usage
    return out


@st.composite
def chat_streams(draw: st.DrawFn) -> tuple[Plan, list[dict[str, Any]]]:
    """A plan and the Chat Completions chunks that say it."""
    plan = draw(plans())
    field = draw(st.sampled_from(["reasoning_content", "reasoning"]))
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({field: piece}) for piece in plan.reasoning]
    chunks += [_chunk({"content": piece}) for piece in plan.text]
    heads = {}
    for i, call in enumerate(plan.calls):  # id and name come first, with or without a first piece
        heads[i] = {"index": i, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
    for i, piece in draw(interleave(plan.calls)):
        for j in [j for j in heads if j < i]:  # calls start in index order (their pieces then interleave)
            chunks.append(_chunk({"tool_calls": [heads.pop(j)]}))
        head = heads.pop(i, None)
        if head is not None and draw(st.booleans()):  # the call's first chunk carries its first piece
            head["function"]["arguments"] = piece
            chunks.append(_chunk({"tool_calls": [head]}))
            continue
        if head is not None:
            chunks.append(_chunk({"tool_calls": [head]}))
        chunks.append(_chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    chunks += [_chunk({"tool_calls": [head]}) for head in heads.values()]
    chunks.append(_chunk({}, _CHAT_FINISH[plan.finish]))
    if plan.usage is not None:
        i, o = plan.usage
        chunks.append(_chunk(None, usage={"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}))
    return plan, chunks


_CHUNK = TypeAdapter(ChatCompletionChunk)


@SETTINGS
@given(stream=chat_streams(), as_sdk_objects=st.booleans())
def test_generated_chat_streams_reach_both_clients_as_meant(
    js: JsOracle, stream: tuple[Plan, list[dict[str, Any]]], as_sdk_objects: bool
) -> None:
    plan, chunks = stream
    items: list[Any] = [_CHUNK.validate_python(c) for c in chunks] if as_sdk_objects else chunks
    events = events_of(chat_events(_iterate(items)))
    assert_clients_agree(js, events, plan.meant())


# --- generated Responses streams -------------------------------------------------------------------


@st.composite
def responses_streams(draw: st.DrawFn) -> tuple[Plan, list[dict[str, Any]]]:
    """A plan and the Responses API events that say it (reasoning item, message item, function calls)."""
    plan = draw(plans(finishes=("stop", "length")))
    seq = iter(range(10_000))
    out: list[dict[str, Any]] = []

    def add(kind: str, **fields: Any) -> None:
        out.append({"type": kind, "sequence_number": next(seq), **fields})

    response = {"id": "resp_g", "object": "response", "model": "gpt-x", "output": [], "status": "in_progress"}
    add("response.created", response=response)
    index = 0
    if plan.reasoning:
        item = {"id": "rs_g", "type": "reasoning", "summary": []}
        add("response.output_item.added", output_index=index, item=item)
        for piece in plan.reasoning:
            add(
                "response.reasoning_summary_text.delta",
                item_id="rs_g",
                output_index=index,
                summary_index=0,
                delta=piece,
            )
        done = {**item, "summary": [{"type": "summary_text", "text": "".join(plan.reasoning)}]}
        if draw(st.booleans()):
            done["encrypted_content"] = "gAAAA-opaque"
        add("response.output_item.done", output_index=index, item=done)
        index += 1
    if plan.text:
        text = "".join(plan.text)
        item = {"id": "msg_g", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
        add("response.output_item.added", output_index=index, item=item)
        for piece in plan.text:
            add(
                "response.output_text.delta",
                item_id="msg_g",
                output_index=index,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
        add("response.output_text.done", item_id="msg_g", output_index=index, content_index=0, text=text, logprobs=[])
        content = [{"type": "output_text", "text": text, "annotations": []}]
        add("response.output_item.done", output_index=index, item={**item, "status": "completed", "content": content})
        index += 1
    first = index
    for i, call in enumerate(plan.calls):
        item = {"id": f"fc_{i}", "type": "function_call", "call_id": call.id, "name": call.name, "arguments": ""}
        add("response.output_item.added", output_index=first + i, item={**item, "status": "in_progress"})
    for i, piece in draw(interleave(plan.calls)):
        add("response.function_call_arguments.delta", item_id=f"fc_{i}", output_index=first + i, delta=piece)
    for i, call in enumerate(plan.calls):
        arguments = "".join(call.pieces)
        add("response.function_call_arguments.done", item_id=f"fc_{i}", output_index=first + i, arguments=arguments)
        item = {"id": f"fc_{i}", "type": "function_call", "call_id": call.id, "name": call.name}
        add(
            "response.output_item.done",
            output_index=first + i,
            item={**item, "arguments": arguments, "status": "completed"},
        )
    usage = None
    if plan.usage is not None:
        usage = {"input_tokens": plan.usage[0], "output_tokens": plan.usage[1], "total_tokens": sum(plan.usage)}
    if plan.finish == "length":
        details = {"reason": "max_output_tokens"}
        add(
            "response.incomplete",
            response={**response, "status": "incomplete", "incomplete_details": details, "usage": usage},
        )
    else:
        add("response.completed", response={**response, "status": "completed", "usage": usage})
    return plan, out


def _sdk_event(data: dict[str, Any]) -> Any:
    """The SDK object the ``openai`` client itself makes of a streamed event (it constructs, never validates)."""
    return construct_type(type_=ResponseStreamEvent, value=data)


@SETTINGS
@given(stream=responses_streams(), as_sdk_objects=st.booleans())
def test_generated_responses_streams_reach_both_clients_as_meant(
    js: JsOracle, stream: tuple[Plan, list[dict[str, Any]]], as_sdk_objects: bool
) -> None:
    plan, items = stream
    given_items: list[Any] = [_sdk_event(e) for e in items] if as_sdk_objects else items
    events = events_of(responses_events(_iterate(given_items)))
    assert_clients_agree(js, events, plan.meant())


# --- the input round trip through the real clients -------------------------------------------------

WEATHER = {"city": "New York City", "temperature": 18}
CALL = CHAT_CALL
PLAIN = CHAT_TEXT


@server_tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {**WEATHER, "city": city}


def sdk(replay: Replay) -> AsyncOpenAI:
    return AsyncOpenAI(api_key="sk", base_url="http://model.test/v1", http_client=replay.client(), max_retries=0)


def chat_run_events() -> list[ChatEvent]:
    replay = Replay(Recording(chat_tool_call()), Recording(chat_text()))
    run = RunInput(thread_id="t", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text="hi")])])
    return events_of(OpenAIChatAgent(sdk(replay), model="gpt-4o", tools=[get_weather])(run))


EXPECTED_CHAT = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": CALL,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"New York City"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": CALL, "content": json.dumps(WEATHER, separators=(",", ":"))},
    {"role": "assistant", "content": PLAIN},
    {"role": "user", "content": "and tomorrow?"},
]


def aisdk_next_request(js: JsOracle, events: list[ChatEvent]) -> RunInput:
    """The run input of the request the real ``ai`` Chat sends after folding ``events``."""
    second = aisdk_body([]).decode()  # an answer for the second request (not looked at)
    steps = [{"do": "sendMessage", "args": {"text": "hi"}}, {"do": "sendMessage", "args": {"text": "and tomorrow?"}}]
    answer = js.call("aisdk", {"body": [aisdk_body(events).decode(), second], "steps": steps, "version": 7})
    assert answer["ok"], answer.get("error")
    body = answer["result"]["requests"][1]["body"]
    return aisdk.to_run_input(aisdk.parse_chat_request(body if isinstance(body, dict) else json.loads(body)))


def agui_next_request(js: JsOracle, events: list[ChatEvent]) -> RunInput:
    """The run input of the request the real ``HttpAgent`` sends after folding ``events``."""
    user = {"id": "u1", "role": "user", "content": "hi"}
    then = {"id": "u2", "role": "user", "content": "and tomorrow?"}
    runs = [{"body": agui_body(events)}, {"body": agui_body([]), "addMessages": [then]}]
    answer = js.call("agui", {"runs": runs, "messages": [user], "state": {}})
    assert answer["ok"], answer.get("error")
    body = answer["result"]["runs"][1]["request"]["body"]
    return agui.to_run_input(agui.parse_run_agent_input(body))


@pytest.fixture(scope="module")
def chat_events_of_a_tool_loop() -> Iterator[list[ChatEvent]]:
    yield chat_run_events()


@pytest.mark.parametrize("client", ["aisdk", "agui"])
def test_chat_history_round_trips_through_the_real_clients(
    js: JsOracle, client: str, chat_events_of_a_tool_loop: list[ChatEvent]
) -> None:
    ask = aisdk_next_request if client == "aisdk" else agui_next_request
    run = ask(js, chat_events_of_a_tool_loop)
    assert chat_messages(run) == EXPECTED_CHAT


@server_tool
def calculator(a: float, b: float, op: str) -> float:
    """Add or multiply two numbers."""
    return a + b if op == "add" else a * b


@pytest.mark.parametrize("client", ["aisdk", "agui"])
def test_responses_history_round_trips_with_encrypted_reasoning(js: JsOracle, client: str) -> None:
    replay = Replay(Recording(responses_reasoning_call()), Recording(responses_answer()))
    run = RunInput(thread_id="t", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text="hi")])])
    events = events_of(OpenAIResponsesAgent(sdk(replay), model="gpt-5-mini", tools=[calculator])(run))
    ask = aisdk_next_request if client == "aisdk" else agui_next_request
    items = responses_input(ask(js, events))
    # what the agent sent in its last model call is what the next request sends, plus the answer and the question
    sent = replay.requests[-1]["input"]
    assert items[: len(sent)] == sent
    assert items[len(sent) :] == [
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": [{"type": "input_text", "text": "and tomorrow?"}]},
    ]
    assert sent[1]["type"] == "reasoning" and sent[1]["encrypted_content"] == ENCRYPTED
