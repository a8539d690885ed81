"""A deterministic, paced agent for the resumable-stream tests: reasoning, steps, text, a tool call with
streamed arguments and a result, state updates, a second text block. Every block spans many frames, so a
connection dropped at any point leaves something open."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from streamkit.events import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunFinished,
    RunInput,
    RunStarted,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)

WORDS = 12


def scripted(pace: float = 0.0, words: int = WORDS) -> AsyncIterator[ChatEvent]:
    """The script, with ``pace`` seconds before each delta."""

    async def run() -> AsyncIterator[ChatEvent]:
        async def tick() -> None:
            if pace:
                await asyncio.sleep(pace)

        yield RunStarted()
        yield StepStarted(name="think")
        yield ReasoningStart(id="r1")
        for i in range(4):
            await tick()
            yield ReasoningDelta(id="r1", delta=f"thought {i}. ")
        yield ReasoningEnd(id="r1")
        yield StepFinished(name="think")
        yield StateUpdate(state={"progress": 0, "notes": []})
        yield StepStarted(name="answer")
        yield TextStart(id="t1")
        for i in range(words):
            await tick()
            yield TextDelta(id="t1", delta=f"word{i} ")
        yield TextEnd(id="t1")
        yield ToolCallStart(id="call-1", name="lookup")
        for piece in ('{"city":', ' "Par', 'is", "days"', ": 3}"):
            await tick()
            yield ToolCallArgsDelta(id="call-1", delta=piece)
        yield ToolCallEnd(id="call-1")
        await tick()
        yield ToolResult(id="call-1", output={"city": "Paris", "tempC": [21, 19, 23]})
        yield StateUpdate(state={"progress": 50, "notes": ["looked up Paris"]})
        yield TextStart(id="t2")
        for i in range(words):
            await tick()
            yield TextDelta(id="t2", delta=f"more{i} ")
        yield TextEnd(id="t2")
        yield StepFinished(name="answer")
        yield StateUpdate(state={"progress": 100, "notes": ["looked up Paris", "answered"]})
        yield RunFinished()

    return run()


def agent(pace: float = 0.0, words: int = WORDS):  # type: ignore[no-untyped-def]
    """An agent core running :func:`scripted` whatever the input."""

    def core(run: RunInput) -> AsyncIterator[ChatEvent]:
        return scripted(pace, words)

    return core
