"""The peers streamkit is measured against, each fed W in its own vocabulary.

* ``ag-ui-protocol``: the official AG-UI Python SDK. Its pydantic event models, serialized by its
  ``EventEncoder`` (``data: <model_dump_json>\\n\\n``), over the same frames streamkit sends for W.
* ``pydantic-ai-slim``: its AI SDK (``VercelAIEventStream``) and AG-UI (``AGUIEventStream``) adapters,
  fed W as pydantic-ai's own agent stream events (part start / delta / end, tool call and result
  events), through ``transform_stream`` and ``encode_stream``, as its ``UIAdapter`` does for a response.

Both are optional (``pip install -e '.[bench]'``); :func:`available` says which are installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson

from .workload import Workload, tool_parent

__all__ = [
    "agui_protocol_construct",
    "agui_protocol_encode",
    "agui_protocol_events",
    "available",
    "pydantic_ai_agui",
    "pydantic_ai_aisdk",
    "pydantic_ai_events",
]


def available() -> dict[str, bool]:
    """Which peer packages are importable."""
    return {
        "ag-ui-protocol": importlib.util.find_spec("ag_ui") is not None,
        "pydantic-ai-slim": importlib.util.find_spec("pydantic_ai") is not None,
    }


# --- ag-ui-protocol ---------------------------------------------------------------------------------


def _agui_protocol_iter(w: Workload) -> Iterator[Any]:
    """W as ``ag_ui.core`` events, each constructed as it is yielded (the frames of ``floor_agui``)."""
    from ag_ui.core import (
        ReasoningEndEvent,
        ReasoningMessageContentEvent,
        ReasoningMessageEndEvent,
        ReasoningMessageStartEvent,
        ReasoningStartEvent,
        RunFinishedEvent,
        RunStartedEvent,
        StepFinishedEvent,
        StepStartedEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        ToolCallArgsEvent,
        ToolCallEndEvent,
        ToolCallResultEvent,
        ToolCallStartEvent,
    )

    yield RunStartedEvent(thread_id=w.thread_id, run_id=w.run_id, protocol_version="1.0")
    yield StepStartedEvent(step_name=w.steps[0])
    rid = w.reasoning_id
    yield ReasoningStartEvent(message_id=rid)
    yield ReasoningMessageStartEvent(message_id=rid, role="reasoning")
    for delta in w.reasoning:
        yield ReasoningMessageContentEvent(message_id=rid, delta=delta)
    yield ReasoningMessageEndEvent(message_id=rid)
    yield ReasoningEndEvent(message_id=rid)
    for i, call in enumerate(w.tools):
        cid = call.id
        yield ToolCallStartEvent(tool_call_id=cid, tool_call_name=call.name, parent_message_id=tool_parent(w, i))
        for delta in call.arg_deltas:
            yield ToolCallArgsEvent(tool_call_id=cid, delta=delta)
        yield ToolCallEndEvent(tool_call_id=cid)
        yield ToolCallResultEvent(
            message_id=f"{cid}-result", tool_call_id=cid, content=orjson.dumps(call.output).decode()
        )
    yield StepFinishedEvent(step_name=w.steps[0])
    yield StepStartedEvent(step_name=w.steps[1])
    tid = w.text_id
    yield TextMessageStartEvent(message_id=tid, role="assistant")
    for delta in w.text:
        yield TextMessageContentEvent(message_id=tid, delta=delta)
    yield TextMessageEndEvent(message_id=tid)
    yield StepFinishedEvent(step_name=w.steps[1])
    yield RunFinishedEvent(thread_id=w.thread_id, run_id=w.run_id)


def agui_protocol_events(w: Workload) -> list[Any]:
    """W as ``ag_ui.core`` events, built beforehand."""
    return list(_agui_protocol_iter(w))


def agui_protocol_encode(events: list[Any]) -> bytes:
    """Encode pre-built ``ag_ui.core`` events with the SDK's ``EventEncoder`` (the encoder alone)."""
    from ag_ui.encoder import EventEncoder

    encode = EventEncoder().encode
    return "".join([encode(e) for e in events]).encode()


def agui_protocol_construct(w: Workload) -> bytes:
    """Construct W's ``ag_ui.core`` events in the loop and encode each with ``EventEncoder``."""
    from ag_ui.encoder import EventEncoder

    encode = EventEncoder().encode
    return "".join([encode(e) for e in _agui_protocol_iter(w)]).encode()


# --- pydantic-ai ------------------------------------------------------------------------------------


def pydantic_ai_events(w: Workload) -> list[Any]:
    """W as pydantic-ai agent stream events (what ``Agent.run_stream_events`` yields), built beforehand.

    One model response streams the thinking part and the three tool call parts; the tools run (call and
    result events); a second model response streams the text part.
    """
    from pydantic_ai.messages import (
        FunctionToolCallEvent,
        FunctionToolResultEvent,
        PartDeltaEvent,
        PartEndEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
        ThinkingPart,
        ThinkingPartDelta,
        ToolCallPart,
        ToolCallPartDelta,
        ToolReturnPart,
    )

    out: list[Any] = [PartStartEvent(index=0, part=ThinkingPart(content=""))]
    out += [PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta=d)) for d in w.reasoning]
    out.append(PartEndEvent(index=0, part=ThinkingPart(content="".join(w.reasoning)), next_part_kind="tool-call"))
    parts = []
    for i, call in enumerate(w.tools, start=1):
        out.append(
            PartStartEvent(
                index=i,
                part=ToolCallPart(tool_name=call.name, args="", tool_call_id=call.id),
                previous_part_kind="thinking" if i == 1 else "tool-call",
            )
        )
        out += [
            PartDeltaEvent(index=i, delta=ToolCallPartDelta(args_delta=d, tool_call_id=call.id))
            for d in call.arg_deltas
        ]
        part = ToolCallPart(tool_name=call.name, args="".join(call.arg_deltas), tool_call_id=call.id)
        parts.append(part)
        out.append(PartEndEvent(index=i, part=part, next_part_kind="tool-call" if i < len(w.tools) else None))
    out += [FunctionToolCallEvent(part=p) for p in parts]
    out += [
        FunctionToolResultEvent(part=ToolReturnPart(tool_name=c.name, content=c.output, tool_call_id=c.id))
        for c in w.tools
    ]
    out.append(PartStartEvent(index=0, part=TextPart(content="")))
    out += [PartDeltaEvent(index=0, delta=TextPartDelta(content_delta=d)) for d in w.text]
    out.append(PartEndEvent(index=0, part=TextPart(content="".join(w.text))))
    return out


async def _aiter(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


async def _drain(stream: Any, events: list[Any]) -> bytes:
    out = [chunk async for chunk in stream.encode_stream(stream.transform_stream(_aiter(events)))]
    return "".join(out).encode()


async def pydantic_ai_aisdk(w: Workload, events: list[Any]) -> bytes:
    """pydantic-ai's AI SDK adapter (``VercelAIEventStream``, SDK v6 wire) over pre-built events."""
    from pydantic_ai.ui.vercel_ai import VercelAIEventStream

    stream: Any = VercelAIEventStream(sdk_version=6, server_message_id=w.message_id)
    return await _drain(stream, events)


async def pydantic_ai_agui(w: Workload, events: list[Any]) -> bytes:
    """pydantic-ai's AG-UI adapter (``AGUIEventStream``) over pre-built events."""
    from pydantic_ai.ui.ag_ui import AGUIEventStream

    stream: Any = AGUIEventStream(thread_id=w.thread_id, run_id=w.run_id)
    return await _drain(stream, events)
