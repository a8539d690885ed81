"""``agui.fold`` against the real client on hand-written AG-UI streams, including paths our mapper never takes
(foreign producers): the same messages and state, and a warning where the client warns."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamkit import agui
from streamkit.events import RunFinished, RunStarted, TextDelta, TextEnd, TextStart
from tests.agui.model import same
from tests.agui.support import body_of, frames_of
from tests.support.oracle import JsOracle

S = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
F = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
HISTORY = [
    {"id": "u", "role": "user", "content": "hi"},
    {"id": "act", "role": "activity", "activityType": "progress", "content": {"pct": 1}},
]

STREAMS: dict[str, list[dict[str, Any]]] = {
    "tool call under a user message": [
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "u"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    ],
    "tool call replayed with a new name and metadata": [
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "a"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}", "metadata": {"k": 1}},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "g", "metadata": {"j": 2}},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    ],
    "result without a call, encrypted tool call": [
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "nowhere",
            "content": [{"type": "text", "text": "x"}],
        },
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "tool-call", "entityId": "c", "encryptedValue": "e"},
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "u", "encryptedValue": "e2"},
    ],
    "text into an activity message is dropped": [
        {"type": "TEXT_MESSAGE_START", "messageId": "act"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act", "delta": "x"},
        {"type": "TEXT_MESSAGE_END", "messageId": "act"},
    ],
    "role, name, metadata on text": [
        {"type": "TEXT_MESSAGE_START", "messageId": "s", "role": "system", "name": "boss", "metadata": {"a": 1}},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "s", "delta": "x", "metadata": {"b": 2}},
        {"type": "TEXT_MESSAGE_END", "messageId": "s", "metadata": {"a": 3}},
    ],
    "failing patch keeps the state": [
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1}, {"op": "remove", "path": "/zz"}]},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": [1]}]},
    ],
    "snapshot keeps activity and reasoning": [
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "hm"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "n", "role": "user", "content": "new"}]},
    ],
    "snapshot with reasoning replaces it": [
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "r2", "role": "reasoning", "content": "other"},
                {"id": "u", "role": "user", "content": "edited"},
            ],
        },
    ],
}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_fold_matches_the_client(js: JsOracle, name: str) -> None:
    events = [S, *STREAMS[name], F]
    state = {"x": 0}
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    answer = js.call("agui", {"runs": [{"body": body}], "messages": HISTORY, "state": state})
    assert answer["ok"], answer
    run = answer["result"]["runs"][0]
    assert run["failed"] is None, run["failed"]
    folded = agui.fold(events, messages=HISTORY, state=state)
    assert same(folded.messages, run["messages"]), (folded.messages, run["messages"])
    assert same(folded.state, run["state"])
    assert bool(folded.warnings) == bool(answer["warnings"]), (folded.warnings, answer["warnings"])


def _sse_text(events: list[dict[str, Any]], *, end: str = "\n\n") -> str:
    return "".join(f"data: {json.dumps(e)}{end}" for e in events)


def test_parse_sse_reads_a_body_as_the_client_does(js: JsOracle) -> None:
    events = [S, *STREAMS["role, name, metadata on text"], F]
    multiline = "data:" + json.dumps(events[1], indent=1).replace("\n", "\ndata:") + "\n\n"
    body = (
        ": ping\n\n"
        + _sse_text(events[:1])
        + multiline
        + "".join(f": ping\nevent: x\nid: {n}\ndata:{json.dumps(e)}\n\n" for n, e in enumerate(events[2:4]))
        + _sse_text(events[4:])
        + ": ping\n\n"
    )
    answer = js.call("agui", {"runs": [{"body": body}]})
    assert answer["ok"], answer
    run = answer["result"]["runs"][0]
    assert run["failed"] is None, run["failed"]
    assert agui.parse_sse(body) == agui.parse_sse(body.encode()) == run["events"] == events
    assert agui.parse_sse(_sse_text(events).rstrip("\n")) == events  # the last frame needs no blank line
    assert agui.parse_sse(_sse_text(events, end="\r\n\n")) == events  # a data line may end in \r
    assert agui.parse_sse("") == agui.parse_sse(": ping\n\n") == []
    text = [TextStart(id="t"), TextDelta(id="t", delta="a\n\nb"), TextEnd(id="t")]
    written = body_of([RunStarted(), *text, RunFinished()])
    assert agui.parse_sse(written) == frames_of(written)


def test_parse_sse_splits_at_lf_only_as_the_client_does(js: JsOracle) -> None:
    """``\\r\\n\\r\\n`` ends no AG-UI frame: a CRLF body is one frame of several events, which the client fails on."""
    events = [S, F]
    body = _sse_text(events, end="\r\n\r\n")
    answer = js.call("agui", {"runs": [{"body": body}]})
    assert answer["ok"], answer
    assert answer["result"]["runs"][0]["failed"] is not None
    with pytest.raises(ValueError):
        agui.parse_sse(body)
    assert agui.parse_sse(_sse_text([S], end="\r\n\r\n")) == [S]  # one event: its JSON ends in whitespace


def test_fold_outcomes() -> None:
    calls = [
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    ]
    assert agui.fold([S, *calls, F]).pending_tool_call_ids == ["c"]
    named = {**F, "outcome": {"type": "success", "pendingToolCallIds": ["x"]}, "result": {"n": 1}}
    done = agui.fold([S, *calls, named])
    assert (done.outcome, done.pending_tool_call_ids, done.result) == ("success", ["x"], {"n": 1})
    interrupted = agui.fold([S, {**F, "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "r"}]}}])
    assert (interrupted.outcome, interrupted.interrupts) == ("interrupt", [{"id": "i", "reason": "r"}])
    assert agui.fold([S, {**F, "outcome": {"type": "cancelled"}}]).outcome == "cancelled"
    failed = agui.fold([S, {"type": "RUN_ERROR", "message": "m", "code": "c"}])
    assert (failed.outcome, failed.error) == ("error", {"message": "m", "code": "c"})
    assert agui.fold([S]).outcome is None
    merged = agui.fold(
        [
            {
                **S,
                "input": {
                    "messages": [
                        {"id": "u", "role": "user", "content": "x"},
                        {"id": "v", "role": "user", "content": "y"},
                    ]
                },
            }
        ],
        messages=[{"id": "u", "role": "user", "content": "kept"}],
    )
    assert [m["content"] for m in merged.messages] == ["kept", "y"]
    assert agui.fold([S, {"type": "CUSTOM", "name": "n", "value": [1]}]).custom == [{"name": "n", "value": [1]}]


def test_numbers_javascript_writes_without_an_exponent() -> None:
    """``JSON.stringify(2 ** 64)`` is ``18446744073709552000``: read back, an integer orjson cannot write."""
    wide = 18446744073709552000
    folded = agui.fold(
        [
            S,
            {"type": "STATE_SNAPSHOT", "snapshot": {"n": wide}},
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/m", "value": [wide]}]},
            {"type": "CUSTOM", "name": "n", "value": wide},
            F,
        ],
        messages=[{"id": "u", "role": "user", "content": "x", "metadata": {"big": wide}}],
    )
    assert folded.state == {"n": float(wide), "m": [float(wide)]} and folded.warnings == []
    assert folded.custom == [{"name": "n", "value": float(wide)}]
