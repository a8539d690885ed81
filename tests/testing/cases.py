"""The smallest body that breaks each rule of the validator, and bodies that break none."""

from __future__ import annotations

from typing import Any

import orjson


def sse(*frames: Any, done: bool = True) -> str:
    """An SSE body of ``frames`` (dicts as JSON ``data:`` lines, strings as they are), AI SDK style."""
    body = "".join(f if isinstance(f, str) else "data: " + orjson.dumps(f).decode() + "\n\n" for f in frames)
    return body + ("data: [DONE]\n\n" if done else "")


def agui_sse(*events: Any) -> str:
    """An AG-UI SSE body of ``events``."""
    return sse(*events, done=False)


def named(*frames: tuple[str, Any]) -> str:
    """A dialect body of ``(event, data)`` frames."""
    return "".join(f"event: {name}\ndata: {orjson.dumps(data).decode()}\n\n" for name, data in frames)


S = {"type": "start"}
F = {"type": "finish"}
TS = {"type": "text-start", "id": "t"}
TD = {"type": "text-delta", "id": "t", "delta": "hi"}
TE = {"type": "text-end", "id": "t"}
RS = {"type": "RUN_STARTED", "threadId": "th", "runId": "r"}
RF = {"type": "RUN_FINISHED", "threadId": "th", "runId": "r"}
MS = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
MC = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}
ME = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
DONE = ("done", {"messages": []})

CLEAN: list[tuple[str, Any, str]] = [
    ("aisdk", 7, sse(S, TS, TD, TE, F)),
    ("aisdk", 5, sse(S, TS, TD, TE, F)),
    ("agui", "1.0", agui_sse(RS, MS, MC, ME, RF)),
    ("agui", "0.0", agui_sse(RS, MS, MC, ME, RF)),
    ("dsh", None, named(("chunk", {"id": "t", "content": "hi"}), DONE)),
    ("agui", "1.0", agui_sse({"type": "RUN_ERROR", "message": "boom"})),  # an error before the run started
]

# (rule, protocol, version, body)
CASES: list[tuple[str, str, Any, str]] = [
    ("sse.empty", "aisdk", 7, ""),
    ("sse.unterminated", "aisdk", 7, sse(S, TS, TD, TE, done=False) + 'data: {"type":"finish"}'),
    ("sse.truncated", "aisdk", 7, sse(S, TS, TD, TE, F, done=False) + 'data: {"type":"fin'),
    ("sse.unterminated-kept", "agui", "1.0", agui_sse(RS) + "data: " + orjson.dumps(RF).decode()),
    ("sse.crlf-frames", "agui", "1.0", agui_sse(RS, RF).replace("\n\n", "\r\n\r\n")),
    ("sse.stray-line", "aisdk", 7, "hello\n\n" + sse(S, F)),
    ("sse.json-invalid", "aisdk", 7, sse(S, "data: {nope\n\n", F)),
    ("sse.not-object", "aisdk", 7, sse(S, "data: [1]\n\n", F)),
    ("aisdk.done-missing", "aisdk", 7, sse(S, F, done=False)),
    ("schema.type-missing", "aisdk", 7, sse(S, {"id": "t"}, F)),
    ("schema.type-unknown", "aisdk", 7, sse(S, {"type": "bogus"}, F)),
    ("schema.type-not-in-version", "aisdk", 5, sse(S, {"type": "tool-output-denied", "toolCallId": "c"}, F)),
    ("schema.field-missing", "aisdk", 7, sse(S, TS, {"type": "text-delta", "id": "t"}, TE, F)),
    ("schema.field-type", "aisdk", 7, sse(S, {"type": "finish", "finishReason": "weird"})),
    ("schema.field-null", "aisdk", 7, sse({"type": "start", "messageId": None}, F)),
    ("schema.null-tolerated", "agui", "1.0", agui_sse(RS, {**RF, "outcome": None})),
    ("schema.unsafe-key", "aisdk", 7, sse(S, {"type": "data-x", "data": {"__proto__": {"a": 1}}}, F)),
    ("aisdk.field-not-in-version", "aisdk", 6, sse(S, TS, TD, {**TE, "citations": []}, F)),
    ("agui.field-not-in-version", "agui", "0.0", agui_sse({**RS, "protocolVersion": "1.0"}, RF)),
    ("schema.field-unknown", "aisdk", 7, sse(S, {**TS, "zzz": 1}, TD, TE, F)),
    ("agui.deprecated-event", "agui", "1.0", agui_sse(RS, {"type": "THINKING_START"}, {"type": "THINKING_END"}, RF)),
    ("seq.terminal-missing", "aisdk", 7, sse(S, TS, TD, TE)),
    ("seq.empty-delta", "aisdk", 7, sse(S, TS, {**TD, "delta": ""}, TE, F)),
    ("seq.open-at-end", "aisdk", 7, sse(S, TS, TD, F)),
    ("aisdk.start-missing", "aisdk", 7, sse(TS, TD, TE, F)),
    ("aisdk.start-repeated", "aisdk", 7, sse(S, S, F)),
    ("aisdk.part-not-open", "aisdk", 7, sse(S, TD, F)),
    ("aisdk.part-reopened", "aisdk", 7, sse(S, TS, TS, TD, TE, F)),
    ("aisdk.tool-input-not-started", "aisdk", 7,
     sse(S, {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{"}, F)),
    ("aisdk.tool-call-unknown", "aisdk", 7,
     sse(S, {"type": "tool-output-available", "toolCallId": "c", "output": 1}, F)),
    ("aisdk.approval-unknown", "aisdk", 7,
     sse(S, {"type": "tool-approval-response", "approvalId": "a", "approved": True}, F)),
    ("aisdk.after-finish", "aisdk", 7, sse(S, F, TS, TD, TE)),
    ("aisdk.after-error", "aisdk", 7, sse(S, {"type": "error", "errorText": "boom"}, TS)),
    ("aisdk.finish-step-open", "aisdk", 7, sse(S, {"type": "start-step"}, TS, {"type": "finish-step"}, TE, F)),
    ("agui.run-not-started", "agui", "1.0", agui_sse(MS, ME, RF)),
    ("agui.run-restarted", "agui", "1.0", agui_sse(RS, RS, RF)),
    ("agui.after-terminal", "agui", "1.0", agui_sse(RS, RF, MS)),
    ("agui.message-not-active", "agui", "1.0", agui_sse(RS, MC, RF)),
    ("agui.message-active", "agui", "1.0", agui_sse(RS, MS, MS, ME, RF)),
    ("agui.tool-call-not-active", "agui", "1.0",
     agui_sse(RS, {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}, RF)),
    ("agui.tool-call-active", "agui", "1.0",
     agui_sse(RS, *[{"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"}] * 2, RF)),
    ("agui.step-active", "agui", "1.0", agui_sse(RS, *[{"type": "STEP_STARTED", "stepName": "s"}] * 2, RF)),
    ("agui.chunk-without-id", "agui", "1.0", agui_sse(RS, {"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}, RF)),
    ("agui.step-not-started", "agui", "1.0", agui_sse(RS, {"type": "STEP_FINISHED", "stepName": "s"}, RF)),
    ("agui.open-at-finish", "agui", "1.0", agui_sse(RS, MS, RF)),
    ("agui.patch-failed", "agui", "1.0",
     agui_sse(RS, {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/x", "value": 1}]}, RF)),
    ("agui.result-unknown-call", "agui", "1.0",
     agui_sse(RS, {"type": "TOOL_CALL_RESULT", "messageId": "x", "toolCallId": "c", "content": "1"}, RF)),
    ("dsh.event-unknown", "dsh", None, named(("bogus", {}), DONE)),
    ("dsh.after-terminal", "dsh", None, named(DONE, ("chunk", {"id": "t", "content": "late"}))),
]  # fmt: skip
