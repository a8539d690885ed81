"""The dialect's mapping frame by frame, the shared writer's named events, messages, the request and sessions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from streamkit import dsh
from streamkit.events import (
    Message,
    ReasoningDelta,
    RunAborted,
    RunFinished,
    RunStarted,
    StateDelta,
    StateSnapshot,
    TextDelta,
    TextPart,
    ToolApprovalRequest,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
)
from streamkit.frames import frame
from streamkit.http import HTTPError, Limits


def frames_of(events: list[Any], **options: Any) -> list[dict[str, Any]]:
    mapper = dsh.DSHMapper(agent_id="a1", run_id="r1", clock=lambda: 1.5, **options)
    return [f for e in events for f in mapper.feed(e)] + mapper.close()


def test_a_tool_run_frame_by_frame() -> None:
    frames = frames_of(
        [
            RunStarted(metadata={"model": "m-1"}),
            ReasoningDelta(id="r", delta="hmm"),
            TextDelta(id="t", delta="Let me look."),
            ToolCallStart(id="c1", name="weather"),
            ToolCallArgsDelta(id="c1", delta='{"city":'),
            ToolCallArgsDelta(id="c1", delta='"Paris"}'),
            ToolCallEnd(id="c1"),
            ToolResult(id="c1", output={"tempC": 21.0}),
            TextDelta(id="t2", delta="21°C."),
            TextDelta(id="t2", delta=""),
            StateSnapshot(state={"n": 1}),
            StateDelta(patch=[{"op": "replace", "path": "/n", "value": 2}]),
            RunFinished(usage=Usage(input_tokens=3, output_tokens=4)),
        ],
        history=[{"id": "u", "role": "user", "content": "weather?"}],
    )
    assert frames[:-1] == [
        {
            "event": "meta",
            "data": {
                "agentId": "a1",
                "sessionId": "a1",
                "runId": "r1",
                "model": "m-1",
                "timestamp": 1500,
                "metadata": {"model": "m-1"},
            },
        },
        {"event": "reasoning", "data": {"id": "r", "content": "hmm"}},
        {"event": "chunk", "data": {"id": "t", "content": "Let me look."}},
        {
            "event": "step_break",
            "data": {"toolName": "weather", "callId": "c1", "args": {"city": "Paris"}, "status": "started"},
        },
        {
            "event": "step_break",
            "data": {
                "toolName": "weather",
                "callId": "c1",
                "args": {"city": "Paris"},
                "status": "done",
                "result": {"tempC": 21},
            },
        },
        {"event": "chunk", "data": {"id": "t2", "content": "21°C."}},
    ]
    assert frames[-1] == {
        "event": "done",
        "data": {
            "finishReason": "stop",
            "messages": [
                {"id": "u", "role": "user", "content": "weather?"},
                {
                    "id": "r1-1",
                    "role": "assistant",
                    "content": "Let me look.",
                    "reasoning": "hmm",
                    "toolCalls": [{"callId": "c1", "toolName": "weather", "args": {"city": "Paris"}}],
                },
                {
                    "id": "r1-2",
                    "role": "tool",
                    "callId": "c1",
                    "toolName": "weather",
                    "status": "done",
                    "content": {"tempC": 21},
                },
                {"id": "r1-3", "role": "assistant", "content": "21°C."},
            ],
            "state": {"n": 2},
            "usage": {"inputTokens": 3, "outputTokens": 4},
        },
    }


def test_thinking_is_its_own_event_and_chunk_is_the_answer_alone() -> None:
    events = [
        RunStarted(),
        ReasoningDelta(id="r", delta="The user wants "),
        ReasoningDelta(id="r", delta="a greeting."),
        TextDelta(id="t", delta="Hello"),
        TextDelta(id="t", delta="!"),
        RunFinished(),
    ]

    async def body() -> bytes:
        return b"".join([c async for c in dsh.encode(events, agent_id="a", run_id="r")])

    raw = asyncio.run(body())
    assert b'event: reasoning\ndata: {"id":"r","content":"The user wants "}\n\n' in raw
    frames = dsh.parse_sse(raw)
    # the seed's console: chunk is the assistant's text increment, and it knows no other event
    seed_console = "".join(f["data"]["content"] for f in frames if f["event"] == "chunk")
    assert seed_console == "Hello!"
    folded = dsh.fold(frames)
    assert [(b.text, b.reasoning) for b in folded.bubbles] == [("Hello!", "The user wants a greeting.")]
    assert folded.messages is not None
    assert folded.messages[-1]["reasoning"] == "The user wants a greeting."
    assert folded.messages[-1]["content"] == "Hello!"
    assert dsh.REASONING == "reasoning" and dsh.REASONING in dsh.EVENTS


def test_invalid_calls_approvals_denials_and_aborts() -> None:
    frames = frames_of(
        [
            RunStarted(message_id="m"),
            ToolCallEnd(id="bad", name="x", input="{oops", error="invalid JSON"),
            ToolCallEnd(id="c", name="rm", input={"path": "/"}),
            ToolApprovalRequest(id="ap", tool_call_id="c", reason="destructive"),
            RunAborted(reason="user left"),
        ]
    )
    breaks = [f["data"] for f in frames if f["event"] == "step_break"]
    assert breaks[0] == {"toolName": "x", "callId": "bad", "args": "{oops", "status": "error", "error": "invalid JSON"}
    assert breaks[2]["approval"] == {"id": "ap", "reason": "destructive"} and breaks[2]["status"] == "started"
    done = frames[-1]["data"]
    assert done["finishReason"] == "aborted" and done["reason"] == "user left"
    assert done["interrupts"] == [{"id": "ap", "reason": "tool_approval", "toolCallId": "c", "message": "destructive"}]
    assert done["messages"][0]["id"] == "m"  # the run's message id names its first assistant message
    denied = frames_of([ToolCallEnd(id="c", name="rm", input={}), ToolResult(id="c", denied=True)])
    assert denied[-2]["data"]["status"] == "error" and denied[-2]["data"]["denied"] is True
    assert dsh.cards_from_messages(denied[-1]["data"]["messages"])["c"]["denied"] is True


def test_fail_before_anything_sends_meta_then_error() -> None:
    mapper = dsh.DSHMapper(agent_id="a", run_id="r")
    assert [f["event"] for f in mapper.fail("boom", "x")] == ["meta", "error"]
    assert mapper.fail("again") == [] and mapper.finished


def test_the_shared_writer_writes_named_events() -> None:
    assert frame({"a": 1}, "chunk") == b'event: chunk\ndata: {"a":1}\n\n'
    assert frame({"a": 1}) == b'data: {"a":1}\n\n'
    with pytest.raises(ValueError):
        frame({}, "two\nlines")

    async def body() -> bytes:
        return b"".join([c async for c in dsh.encode([TextDelta(id="t", delta="hi")], agent_id="a", run_id="r")])

    raw = asyncio.run(body())
    assert raw.startswith(b"event: meta\ndata: {")
    assert b'\n\nevent: chunk\ndata: {"id":"t","content":"hi"}\n\nevent: done\ndata: {' in raw
    assert raw.endswith(b"\n\n")


def test_messages_round_trip_between_the_dialect_and_neutral_form() -> None:
    neutral = [
        Message(id="u", role="user", parts=[TextPart(text="hi")]),
        Message(id="a", role="assistant", parts=[TextPart(text="ok"), ToolCallPart(id="c", name="t", input={"x": 1})]),
        Message(id="t", role="tool", parts=[ToolResultPart(id="c", name="t", error="failed")]),
    ]
    wire = dsh.to_dsh_messages(neutral)
    assert wire[2] == {
        "id": "t",
        "role": "tool",
        "callId": "c",
        "toolName": "t",
        "status": "error",
        "content": "failed",
        "error": "failed",
    }
    assert dsh.from_dsh_messages(wire) == neutral


def test_the_request_and_its_run_input() -> None:
    body = dsh.parse_agent_request(
        {"agentId": "a", "message": "hi", "channelCode": "web", "maxTokens": 5, "cwd": "/w", "tenant": "t"}
    )
    run = dsh.to_run_input(body, history=[Message(id="h", role="user", parts=[TextPart(text="before")])])
    assert run.thread_id == "a" and [m.text for m in run.messages] == ["before", "hi"]
    assert run.extra == {"channelCode": "web", "maxTokens": 5, "cwd": "/w", "tenant": "t"}
    with pytest.raises(HTTPError) as info:
        dsh.parse_agent_request({"agentId": "a", "message": "x" * 20}, Limits(max_message_bytes=10))
    assert info.value.status == 413 and info.value.field == "limits.max_message_bytes"


async def test_sessions_are_bounded_and_apart_per_principal() -> None:
    sessions = dsh.Sessions(max_agents=2, max_messages=2)
    for agent in ("a", "b", "c"):
        run = await sessions.start("alice", agent)
        await sessions.finish(run, [Message(id=str(i), role="user") for i in range(3)])
    assert len(sessions) == 2 and sessions.get("alice", "a") is None
    assert len(await sessions.history("alice", "c")) == 2
    assert sessions.get("bob", "c") is None
    run = await sessions.start("bob", "c")
    with pytest.raises(HTTPError) as info:
        await sessions.start("bob", "c")
    assert info.value.status == 409 and info.value.field == "agentId"
    status = await sessions.status("bob", "c")
    assert status["status"] == "running" and status["runId"] == run.run_id
