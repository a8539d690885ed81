"""AI SDK side of human in the loop: the request conversion keeps history causal, and the chunks an
approval or a frontend tool produce (exact, before the real clients see them in tests/demo); an interrupt
answered from the real ``Chat`` with ``body.resume``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette

from streamkit import aisdk
from streamkit.aisdk import AISDKMapper, ChatRequest, to_run_input
from streamkit.events import (
    ChatEvent,
    Interrupt,
    RunFinished,
    RunInput,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallEnd,
    ToolCallPart,
    ToolResult,
    ToolResultPart,
    hitl,
)
from streamkit.serve import StreamOptions
from tests.support.oracle import JsOracle


def test_each_step_of_an_assistant_message_is_its_own_message() -> None:
    def tool(cid: str, name: str) -> dict[str, Any]:
        return {"type": f"tool-{name}", "toolCallId": cid, "state": "output-available", "input": {}, "output": 1}

    assistant = {
        "id": "a1",
        "role": "assistant",
        "metadata": {"m": 1},
        "parts": [
            {"type": "step-start"},
            tool("w1", "get_weather"),
            tool("w2", "get_weather"),
            {"type": "step-start"},
            {"type": "reasoning", "text": "spread"},
            tool("c1", "calculate"),
            {"type": "step-start"},
            {"type": "text", "text": "Done."},
        ],
    }
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "compare"}]}
    run = to_run_input(ChatRequest.model_validate({"id": "c", "messages": [user, assistant]}))
    assert [(m.id, m.role, m.metadata) for m in run.messages] == [
        ("u1", "user", None),
        ("a1", "assistant", {"m": 1}),
        ("a1-step-2", "assistant", None),
        ("a1-step-3", "assistant", None),
    ]
    kinds = [[(type(p).__name__, getattr(p, "id", None)) for p in m.parts] for m in run.messages[1:]]
    assert kinds == [
        [("ToolCallPart", "w1"), ("ToolResultPart", "w1"), ("ToolCallPart", "w2"), ("ToolResultPart", "w2")],
        [("ReasoningPart", None), ("ToolCallPart", "c1"), ("ToolResultPart", "c1")],
        [("TextPart", None)],
    ]


def _chunks(mapper: AISDKMapper, *events: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for event in events:
        out += mapper.feed(event)
    return out + mapper.close()


def test_an_approval_pauses_with_tool_calls_and_resumes_in_the_same_message() -> None:
    first = _chunks(
        AISDKMapper(),
        RunStarted(message_id="m1"),
        StepStarted(name="s"),
        ToolCallEnd(id="c1", name="delete_file", input={"path": "notes.txt"}),
        hitl.request_approval("c1", reason="Delete notes.txt?"),
        StepFinished(name="s"),
        hitl.pause(),
    )
    assert first == [
        {"type": "start", "messageId": "m1"},
        {"type": "start-step"},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "delete_file", "input": {"path": "notes.txt"}},
        {
            "type": "tool-approval-request",
            "approvalId": "approval-c1",
            "toolCallId": "c1",
            "reason": "Delete notes.txt?",
        },
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},  # never "interrupted": the client must resend
    ]
    resumed = _chunks(
        AISDKMapper(message_id="m1", continuation=True, known_tool_calls=["c1"], known_approvals=["approval-c1"]),
        RunStarted(message_id="m1"),
        ToolResult(id="c1", denied=True),
        StepStarted(name="answer"),
        TextStart(id="t"),
        TextDelta(id="t", delta="Kept it."),
        TextEnd(id="t"),
        StepFinished(name="answer"),
    )
    assert resumed == [
        {"type": "start", "messageId": "m1"},
        {"type": "tool-output-denied", "toolCallId": "c1"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "Kept it."},
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


def test_the_neutral_parts_of_a_denied_call() -> None:
    part = {
        "type": "tool-delete_file",
        "toolCallId": "c1",
        "state": "output-denied",
        "input": {"path": "x"},
        "approval": {"id": "approval-c1", "approved": False, "reason": "no"},
    }
    body = {"id": "c", "messages": [{"id": "a", "role": "assistant", "parts": [part]}]}
    (message,) = to_run_input(ChatRequest.model_validate(body)).messages
    call, result = message.parts
    assert isinstance(call, ToolCallPart) and call.approval is not None and call.approval.approved is False
    assert result == ToolResultPart(id="c1", name="delete_file", denied=True)


def test_an_interrupt_for_an_approved_call_is_that_approval() -> None:
    """A core that also reports its approval as an interrupt still pauses the way the client resends on."""
    base = [
        RunStarted(message_id="m1"),
        ToolCallEnd(id="c1", name="delete_file", input={}),
        hitl.request_approval("c1"),
    ]
    same = hitl.approval_interrupt(hitl.request_approval("c1"))
    other = Interrupt(id="i2", reason="input_required")
    chunks = _chunks(AISDKMapper(), *base, RunFinished(finish_reason="interrupted", interrupts=[same]))
    assert chunks[-1] == {"type": "finish", "finishReason": "tool-calls"}
    assert not [c for c in chunks if c["type"] == "data-interrupt"]
    chunks = _chunks(AISDKMapper(), *base, RunFinished(interrupts=[same, other]))
    assert [c["id"] for c in chunks if c["type"] == "data-interrupt"] == ["i2"]
    assert chunks[-1] == {"type": "finish", "finishReason": "interrupted"}


CITY = Interrupt(
    id="pick-city",
    reason="input_required",
    message="Which city?",
    response_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def booking(run: RunInput) -> AsyncIterator[ChatEvent]:
    """A core of its own (no framework): asks which city with an interrupt, answers from ``run.resume``."""
    yield RunStarted(message_id=run.message_id)
    answer = hitl.resume_entry(run, CITY.id)
    if answer is None:
        yield RunFinished(interrupts=[CITY])
        return
    city = answer.payload["city"] if answer.status == "resolved" else None
    yield TextStart(id="t")
    yield TextDelta(id="t", delta=f"Booked {city}." if city else "Nothing booked.")
    yield TextEnd(id="t")
    yield RunFinished()


def test_any_core_reads_the_answer_use_chat_sends_for_its_interrupt(js: JsOracle, live_server: Any) -> None:
    url = live_server(Starlette(routes=aisdk.routes(booking, options=StreamOptions(strict=True)))).url
    steps = [
        {"do": "sendMessage", "args": {"text": "Book a trip."}},
        {"do": "answerInterrupts", "args": {"status": "resolved", "payload": {"city": "Lyon"}}},
        {"do": "sendMessage", "args": {"text": "Another one."}},
        {"do": "answerInterrupts", "args": {"status": "cancelled"}},
    ]
    answer = js.call("aisdk", {"api": f"{url}/api/chat", "steps": steps})
    assert answer["ok"] and answer["warnings"] == [], answer
    chat = answer["result"]
    assert chat["error"] is None, chat["error"]
    assert [f["finishReason"] for f in chat["finishes"]] == ["interrupted", "stop", "interrupted", "stop"]
    first = chat["messages"][1]
    [part] = [p for p in first["parts"] if p["type"] == "data-interrupt"]
    # replaced in place by the run that resumed the message: the same part, with the answer's status
    assert part == {
        "type": "data-interrupt",
        "id": "pick-city",
        "data": {"id": "pick-city", "reason": "input_required", "message": "Which city?",
                 "responseSchema": CITY.response_schema, "status": "resolved"},
    }  # fmt: skip
    assert [p["text"] for p in first["parts"] if p["type"] == "text"] == ["Booked Lyon."]  # the same message
    assert [p["text"] for p in chat["message"]["parts"] if p["type"] == "text"] == ["Nothing booked."]
    resumes = [r["body"].get("resume") for r in chat["requests"]]
    assert resumes == [
        None,
        [{"interruptId": "pick-city", "status": "resolved", "payload": {"city": "Lyon"}}],
        None,
        [{"interruptId": "pick-city", "status": "cancelled"}],
    ]
