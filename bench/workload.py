"""Workload W, the one run every benchmark streams, as plain data and as ``ChatEvent``\\ s.

W is one run: a reasoning block of 200 deltas; 3 tool calls, each with 20 argument deltas and a result of
about 2 KB of JSON; a text answer of 5,000 deltas of about 4 characters; two steps, and the run's start
and finish around them. The content is generated from a fixed seed, so every run streams the same bytes.

The state workload (benchmark 5, and the server's ``/state`` route): a shared state of N documents and a
sequence of updates of it (:func:`state_updates`).
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from streamkit.events import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunFinished,
    RunStarted,
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

__all__ = [
    "ToolCall",
    "Workload",
    "agent_events",
    "build_events",
    "chat_events",
    "document",
    "state_updates",
    "workload",
]

REASONING_DELTAS = 200
TOOL_CALLS = 3
ARG_DELTAS = 20
RESULT_BYTES = 2048
TEXT_DELTAS = 5000

_WORDS = (
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "for",
    "on",
    "with",
    "as",
    "at",
    "by",
    "from",
    "this",
    "that",
    "we",
    "can",
    "data",
    "call",
    "tool",
    "run",
    "step",
    "text",
    "will",
    "then",
    "each",
    "user",
    "so",
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of W: its argument text in pieces, the parsed input, and the output."""

    id: str
    name: str
    arg_deltas: tuple[str, ...]
    input: dict[str, Any]
    output: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Workload:
    """The content of W as plain values (ids, delta strings, tool inputs and outputs)."""

    thread_id: str
    run_id: str
    message_id: str
    reasoning_id: str
    reasoning: tuple[str, ...]
    tools: tuple[ToolCall, ...]
    text_id: str
    text: tuple[str, ...]
    steps: tuple[str, str] = ("think-and-search", "answer")


def _token(rng: random.Random) -> str:
    """About four characters: a space and a short word, trimmed to at most four characters."""
    return (" " + rng.choice(_WORDS))[:4]


def _result(rng: random.Random, query: str) -> dict[str, Any]:
    """A search-like tool result of about :data:`RESULT_BYTES` of JSON."""
    results: list[dict[str, Any]] = []
    out: dict[str, Any] = {"query": query, "total": 0, "results": results}
    i = 0
    while len(orjson.dumps(out)) < RESULT_BYTES - 200:
        i += 1
        results.append(
            {
                "rank": i,
                "title": " ".join(rng.choice(_WORDS) for _ in range(6)).capitalize(),
                "url": f"https://example.org/{query.replace(' ', '-')}/{i}",
                "snippet": " ".join(rng.choice(_WORDS) for _ in range(18)) + ".",
                "score": round(1 - i / 50, 3),
            }
        )
        out["total"] = i
    return out


def _split(text: str, parts: int) -> tuple[str, ...]:
    cuts = [round(i * len(text) / parts) for i in range(parts + 1)]
    pieces = tuple(text[a:b] for a, b in itertools.pairwise(cuts))
    assert "".join(pieces) == text and all(pieces)
    return pieces


def workload(seed: int = 7) -> Workload:
    """W, generated from ``seed``."""
    rng = random.Random(seed)
    tools = []
    for n in range(TOOL_CALLS):
        query = " ".join(rng.choice(_WORDS) for _ in range(4))
        tool_input = {"query": query, "limit": 10, "filters": {"lang": "en", "since": "2024-01-01", "safe": True}}
        args = orjson.dumps(tool_input).decode()
        tools.append(
            ToolCall(
                id=f"call_{n + 1}",
                name="web_search",
                arg_deltas=_split(args, ARG_DELTAS),
                input=tool_input,
                output=_result(rng, query),
            )
        )
    return Workload(
        thread_id="thread_1",
        run_id="run_1",
        message_id="msg_1",
        reasoning_id="reasoning_1",
        reasoning=tuple(_token(rng) for _ in range(REASONING_DELTAS)),
        tools=tuple(tools),
        text_id="text_1",
        text=tuple(_token(rng) for _ in range(TEXT_DELTAS)),
    )


def build_events(w: Workload) -> Iterator[ChatEvent]:
    """W as ``ChatEvent``\\ s, each constructed as it is yielded (what an agent core does)."""
    yield RunStarted(thread_id=w.thread_id, run_id=w.run_id, message_id=w.message_id)
    yield StepStarted(name=w.steps[0])
    rid = w.reasoning_id
    yield ReasoningStart(id=rid)
    for delta in w.reasoning:
        yield ReasoningDelta(id=rid, delta=delta)
    yield ReasoningEnd(id=rid)
    for call in w.tools:
        yield ToolCallStart(id=call.id, name=call.name)
        for delta in call.arg_deltas:
            yield ToolCallArgsDelta(id=call.id, delta=delta)
        yield ToolCallEnd(id=call.id, input=call.input)
        yield ToolResult(id=call.id, output=call.output)
    yield StepFinished(name=w.steps[0])
    yield StepStarted(name=w.steps[1])
    tid = w.text_id
    yield TextStart(id=tid)
    for delta in w.text:
        yield TextDelta(id=tid, delta=delta)
    yield TextEnd(id=tid)
    yield StepFinished(name=w.steps[1])
    yield RunFinished(finish_reason="stop")


def tool_parent(w: Workload, index: int) -> str:
    """The AG-UI ``parentMessageId`` of W's ``index``-th call: the run's message for the first; each later
    call follows a tool result, so it opens a new assistant message, which the client names after the call."""
    return w.message_id if index == 0 else w.tools[index].id


def chat_events(w: Workload) -> list[ChatEvent]:
    """W as a list of ``ChatEvent``\\ s built beforehand."""
    return list(build_events(w))


async def agent_events(w: Workload) -> AsyncIterator[ChatEvent]:
    """W as an agent core streams it: an async generator constructing each event as it goes."""
    for event in build_events(w):
        yield event


def document(i: int) -> dict[str, Any]:
    """Document ``i`` of the shared state (about 150 bytes of JSON)."""
    return {
        "id": f"doc-{i:06d}",
        "title": f"Document number {i}",
        "body": "Some words of the document body.",
        "tags": ["draft", "shared"],
        "score": round(i * 0.37, 2) + 0.01,
        "done": i % 2 == 0,
    }


def _state(n: int) -> dict[str, Any]:
    return {"title": "Shared documents", "documents": [document(i) for i in range(n)], "meta": {"version": 0}}


def state_updates(n: int, count: int, seed: int = 7) -> list[Any]:
    """``count + 1`` states: the first, then each a deep copy of the one before with two leaves changed."""
    rng = random.Random(seed)
    states = [_state(n)]
    for k in range(count):
        new = copy.deepcopy(states[-1])
        new["documents"][rng.randrange(n)]["score"] = k + 0.5
        new["documents"][rng.randrange(n)]["done"] = k % 2 == 1
        states.append(new)
    return states
