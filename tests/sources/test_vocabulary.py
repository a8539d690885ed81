"""The sources' one vocabulary: every name the sources promised imports (the earlier names as aliases of
the new ones), every run wrapper takes a sync iterable too, and the causal-history wording is shared."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from streamkit.events import (
    ApprovalState,
    FilePart,
    Message,
    ReasoningPart,
    RunFinished,
    RunStarted,
    TextDelta,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from streamkit.sources import history
from streamkit.sources.loop import aiter_of

# module -> (new name, earlier name) pairs: the earlier name is the same object as the new one
ALIASES = {
    "openai": [
        ("openai_chat_events", "chat_events"),
        ("openai_responses_events", "responses_events"),
        ("to_openai_chat_messages", "chat_messages"),
        ("to_openai_chat_tools", "chat_tools"),
        ("to_openai_responses_messages", "responses_input"),
        ("to_openai_responses_tools", "responses_tools"),
        ("OpenAIChatTranslator", "ChatTranslator"),
        ("OpenAIResponsesTranslator", "ResponsesTranslator"),
    ],
    "anthropic": [("anthropic_events", "message_events")],
    "ollama": [("ollama_events", "chat_events")],
    "langgraph": [("to_langgraph_messages", "to_messages"), ("LangGraphTranslator", "GraphTranslator")],
    "pydantic_ai": [("to_pydantic_ai_messages", "to_model_messages"), ("PydanticAITranslator", "EventTranslator")],
    "openai_agents": [("to_agents_sdk_messages", "to_input_items"), ("AgentsSDKTranslator", "RunTranslator")],
    "agui": [("agui_events", "chat_events"), ("to_agui_request", "to_run_agent_input")],
    "aisdk": [("aisdk_events", "chat_events"), ("to_aisdk_request", "to_chat_request")],
}

AGENTS = {
    "openai": ["OpenAIChatAgent", "OpenAIResponsesAgent"],
    "anthropic": ["AnthropicAgent"],
    "ollama": ["OllamaAgent"],
    "langgraph": ["LangGraphAgent"],
    "pydantic_ai": ["PydanticAIAgent"],
    "openai_agents": ["AgentsSDKAgent"],
    "agui": ["RemoteAGUIAgent"],
    "aisdk": ["RemoteAISDKAgent"],
}


@pytest.mark.parametrize("module", sorted(ALIASES))
def test_every_promised_name_imports_and_the_earlier_names_are_aliases(module: str) -> None:
    mod = importlib.import_module(f"streamkit.sources.{module}")
    for new, old in ALIASES[module]:
        assert getattr(mod, old) is getattr(mod, new)
        assert new in mod.__all__ and old in mod.__all__
    for agent in AGENTS[module]:
        assert agent in mod.__all__ and callable(getattr(mod, agent))


async def _collect(events: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in events]


def test_the_openai_wrappers_take_a_sync_iterable() -> None:
    from streamkit.sources.openai import openai_chat_events, openai_responses_events

    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "Hi"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    events = asyncio.run(_collect(openai_chat_events(chunks)))
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hi"]

    stream = iter(
        [
            {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Yo"},
            {"type": "response.completed", "response": {"model": "m"}},
        ]
    )
    events = asyncio.run(_collect(openai_responses_events(stream)))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Yo"]
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "stop"


def test_aiter_of_keeps_an_async_iterable_and_reads_a_sync_one() -> None:
    async def source() -> AsyncIterator[int]:
        yield 1

    stream = source()
    assert aiter_of(stream) is stream

    async def read() -> list[int]:
        return [item async for item in aiter_of([1, 2, 3])]

    assert asyncio.run(read()) == [1, 2, 3]


def test_the_history_rules() -> None:
    call = ToolCallPart(id="c1", name="f", input={})
    denied = ToolCallPart(id="c2", name="f", input={}, approval=ApprovalState(id="a", approved=False, reason="no"))
    assert history.unanswered_text(call) == "No result was recorded."
    assert history.unanswered_text(denied) == "The user denied this tool call. Reason: no"
    assert history.result_text(ToolResultPart(id="c1", output={"n": 2.0})) == '{"n":2}'
    assert history.result_text(ToolResultPart(id="c1", error="boom")) == "Error: boom"
    assert history.result_text(ToolResultPart(id="c1", denied=True)) == "The user denied this tool call."

    turn = Message(
        id="m",
        role="assistant",
        parts=[
            TextPart(text="a"),
            call,
            ToolResultPart(id="c1", output=1),
            ReasoningPart(text="r"),
            TextPart(text="b"),
        ],
    )
    assert [len(step) for step in history.steps(turn)] == [3, 2]
    assert [len(step) for step in history.steps(turn, history.is_part)] == [3, 2]


def test_a_file_after_a_call_starts_a_step_only_where_every_part_is_sent() -> None:
    file = FilePart(media_type="image/png", url="data:image/png;base64,AA==")
    turn = Message(
        id="m", role="assistant", parts=[ToolCallPart(id="c1", name="f"), file, ToolCallPart(id="c2", name="f")]
    )
    assert len(history.steps(turn)) == 1  # the OpenAI APIs: only text or reasoning starts a step
    assert len(history.steps(turn, history.is_part)) == 2  # Anthropic, Ollama
