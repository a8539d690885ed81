"""The serialization floor: W's frames as plain dicts built in a loop, serialized with orjson.

This is the least any Python SSE producer of these protocols can do per frame: build the payload dict,
``orjson.dumps`` it and wrap it as ``data: ...\\n\\n``. No checking, no dispatch, no state. The frames
are the ones streamkit's adapters send for W (the encode benchmark checks that, frame by frame).
"""

from __future__ import annotations

from typing import Any

import orjson

from .workload import Workload, tool_parent

__all__ = ["floor_agui", "floor_aisdk"]

_dumps = orjson.dumps


def floor_aisdk(w: Workload) -> bytes:
    """W as AI SDK UI Message Stream bytes."""
    out: list[bytes] = []
    add = out.append

    def put(payload: dict[str, Any]) -> None:
        add(b"data: " + _dumps(payload) + b"\n\n")

    put({"type": "start", "messageId": w.message_id})
    put({"type": "start-step"})
    rid = w.reasoning_id
    put({"type": "reasoning-start", "id": rid})
    for delta in w.reasoning:
        add(b"data: " + _dumps({"type": "reasoning-delta", "id": rid, "delta": delta}) + b"\n\n")
    put({"type": "reasoning-end", "id": rid})
    for call in w.tools:
        cid = call.id
        put({"type": "tool-input-start", "toolCallId": cid, "toolName": call.name})
        for delta in call.arg_deltas:
            add(b"data: " + _dumps({"type": "tool-input-delta", "toolCallId": cid, "inputTextDelta": delta}) + b"\n\n")
        put({"type": "tool-input-available", "toolCallId": cid, "toolName": call.name, "input": call.input})
        put({"type": "tool-output-available", "toolCallId": cid, "output": call.output})
    put({"type": "finish-step"})
    put({"type": "start-step"})
    tid = w.text_id
    put({"type": "text-start", "id": tid})
    for delta in w.text:
        add(b"data: " + _dumps({"type": "text-delta", "id": tid, "delta": delta}) + b"\n\n")
    put({"type": "text-end", "id": tid})
    put({"type": "finish-step"})
    put({"type": "finish", "finishReason": "stop"})
    add(b"data: [DONE]\n\n")
    return b"".join(out)


def floor_agui(w: Workload) -> bytes:
    """W as AG-UI bytes."""
    out: list[bytes] = []
    add = out.append

    def put(payload: dict[str, Any]) -> None:
        add(b"data: " + _dumps(payload) + b"\n\n")

    put({"type": "RUN_STARTED", "threadId": w.thread_id, "runId": w.run_id, "protocolVersion": "1.0"})
    put({"type": "STEP_STARTED", "stepName": w.steps[0]})
    rid = w.reasoning_id
    put({"type": "REASONING_START", "messageId": rid})
    put({"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"})
    for delta in w.reasoning:
        add(b"data: " + _dumps({"type": "REASONING_MESSAGE_CONTENT", "messageId": rid, "delta": delta}) + b"\n\n")
    put({"type": "REASONING_MESSAGE_END", "messageId": rid})
    put({"type": "REASONING_END", "messageId": rid})
    for i, call in enumerate(w.tools):
        cid = call.id
        put(
            {
                "type": "TOOL_CALL_START",
                "toolCallId": cid,
                "toolCallName": call.name,
                "parentMessageId": tool_parent(w, i),
            }
        )
        for delta in call.arg_deltas:
            add(b"data: " + _dumps({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": delta}) + b"\n\n")
        put({"type": "TOOL_CALL_END", "toolCallId": cid})
        put(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": f"{cid}-result",
                "toolCallId": cid,
                "content": _dumps(call.output).decode(),
            }
        )
    put({"type": "STEP_FINISHED", "stepName": w.steps[0]})
    put({"type": "STEP_STARTED", "stepName": w.steps[1]})
    tid = w.text_id
    put({"type": "TEXT_MESSAGE_START", "messageId": tid, "role": "assistant"})
    for delta in w.text:
        add(b"data: " + _dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": tid, "delta": delta}) + b"\n\n")
    put({"type": "TEXT_MESSAGE_END", "messageId": tid})
    put({"type": "STEP_FINISHED", "stepName": w.steps[1]})
    put({"type": "RUN_FINISHED", "threadId": w.thread_id, "runId": w.run_id})
    return b"".join(out)
