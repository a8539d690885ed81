"""The human-in-the-loop helper: what an agent yields to pause, and what it reads back from each protocol's
request (built from the bodies the real clients send, converted by the adapters' own request code)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from streamkit import agui, aisdk
from streamkit.events import (
    Message,
    RunFinished,
    RunInput,
    TextPart,
    ToolApprovalRequest,
    ToolCallPart,
    ToolResult,
    ToolResultPart,
    hitl,
)


def _aisdk_run(body: dict[str, Any]) -> RunInput:
    return aisdk.to_run_input(aisdk.ChatRequest.model_validate(body), run_id="r2")


def _agui_run(body: dict[str, Any]) -> RunInput:
    return agui.to_run_input(agui.RunAgentInput.model_validate(body))


USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Delete notes.txt"}]}


def _tool_part(state: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "tool-delete_file",
        "toolCallId": "c1",
        "state": state,
        "input": {"path": "notes.txt"},
        **extra,
    }


def test_request_approval_and_pause() -> None:
    request = hitl.request_approval("c1", reason="Delete notes.txt?")
    assert request == ToolApprovalRequest(id="approval-c1", tool_call_id="c1", reason="Delete notes.txt?")
    assert hitl.request_approval("c1", id="mine").id == "mine"
    assert hitl.pause() == RunFinished(finish_reason="tool-calls")
    interrupt = hitl.approval_interrupt(request)
    assert (interrupt.id, interrupt.reason, interrupt.tool_call_id, interrupt.message) == (
        "approval-c1",
        "tool_approval",
        "c1",
        "Delete notes.txt?",
    )
    assert interrupt.response_schema == hitl.APPROVAL_SCHEMA
    assert hitl.APPROVAL_SCHEMA["required"] == ["approved"]


def test_new_turn_is_not_a_continuation() -> None:
    run = _aisdk_run({"id": "chat", "messages": [USER]})
    turn = hitl.continuation(run)
    assert not turn
    assert (turn.calls, turn.decisions, turn.waiting, dict(turn.results)) == ((), (), (), {})


@pytest.mark.parametrize(("approved", "reason"), [(True, None), (False, "keep it")])
def test_aisdk_approval_response(approved: bool, reason: str | None) -> None:
    approval: dict[str, Any] = {"id": "approval-c1", "approved": approved}
    if reason is not None:
        approval["reason"] = reason
    assistant = {
        "id": "a1",
        "role": "assistant",
        "parts": [{"type": "step-start"}, _tool_part("approval-responded", approval=approval)],
    }
    body = {"id": "chat", "messages": [USER, assistant], "trigger": "submit-message", "messageId": "a1"}
    turn = hitl.continuation(_aisdk_run(body))
    assert turn and turn.message_id == "a1"
    (decision,) = turn.decisions
    assert (decision.call.id, decision.call.name, decision.call.input) == ("c1", "delete_file", {"path": "notes.txt"})
    assert (decision.approved, decision.approval_id, decision.reason) == (approved, "approval-c1", reason)
    assert turn.waiting == ()
    assert (turn.approved if approved else turn.denied) == (decision,)
    assert decision.denial() == ToolResult(id="c1", denied=True, error=reason)


def test_aisdk_approval_still_requested_is_waiting() -> None:
    assistant = {
        "id": "a1",
        "role": "assistant",
        "parts": [_tool_part("approval-requested", approval={"id": "approval-c1"})],
    }
    turn = hitl.continuation(_aisdk_run({"id": "chat", "messages": [USER, assistant]}))
    assert turn.decisions == ()
    assert [c.id for c in turn.waiting] == ["c1"]


def test_aisdk_frontend_tool_output() -> None:
    assistant = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-set_theme",
                "toolCallId": "t1",
                "state": "output-available",
                "input": {"theme": "dark"},
                "output": {"theme": "dark"},
            },
        ],
    }
    body = {"id": "chat", "messages": [USER, assistant], "trigger": "submit-message", "messageId": "a1"}
    turn = hitl.continuation(_aisdk_run(body))
    assert turn and turn.decisions == () and turn.waiting == ()
    assert turn.result("t1") == ToolResultPart(id="t1", name="set_theme", output={"theme": "dark"})
    assert turn.call("t1") is not None and turn.call("t1").input == {"theme": "dark"}  # type: ignore[union-attr]


def _agui_body(resume: list[dict[str, Any]] | None = None, tool_message: bool = False) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"id": "u1", "role": "user", "content": "Delete notes.txt and todo.txt"},
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "delete_file", "arguments": '{"path":"notes.txt"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "delete_file", "arguments": '{"path":"todo.txt"}'},
                },
            ],
        },
    ]
    if tool_message:
        messages.append({"id": "t1", "role": "tool", "toolCallId": "c1", "content": '{"deleted":"notes.txt"}'})
    body: dict[str, Any] = {"threadId": "th", "runId": "r2", "messages": messages, "tools": [], "context": []}
    if resume is not None:
        body["resume"] = resume
    return body


def test_agui_resume_resolved_and_cancelled() -> None:
    resume = [
        {"interruptId": "approval-c1", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "approval-c2", "status": "cancelled"},
    ]
    turn = hitl.continuation(_agui_run(_agui_body(resume)))
    first, second = turn.decisions
    assert (first.call.id, first.approved, first.payload) == ("c1", True, {"approved": True})
    assert (second.call.id, second.approved, second.reason) == ("c2", False, None)
    assert turn.approved == (first,) and turn.denied == (second,)


def test_agui_resolved_with_approved_false_denies() -> None:
    resume = [
        {"interruptId": "approval-c1", "status": "resolved", "payload": {"approved": False, "reason": "no"}},
        {"interruptId": "approval-c2", "status": "resolved"},
    ]
    first, second = hitl.continuation(_agui_run(_agui_body(resume))).decisions
    assert (first.approved, first.reason) == (False, "no")
    assert second.approved is True


def test_agui_results_and_waiting() -> None:
    turn = hitl.continuation(_agui_run(_agui_body(tool_message=True)))
    assert turn and [c.id for c in turn.calls] == ["c1", "c2"]
    assert turn.result("c1") is not None and turn.result("c1").output == '{"deleted":"notes.txt"}'  # type: ignore[union-attr]
    assert [c.id for c in turn.waiting] == ["c2"]
    assert turn.decisions == ()
    assert hitl.resume_entry(_agui_run(_agui_body([{"interruptId": "x", "status": "cancelled"}])), "x") is not None


def test_settle_runs_approved_and_denies_the_rest() -> None:
    resume = [
        {"interruptId": "approval-c1", "status": "resolved"},
        {"interruptId": "approval-c2", "status": "cancelled", "payload": {"reason": "keep"}},
    ]
    turn = hitl.continuation(_agui_run(_agui_body(resume)))

    async def collect(execute: Any) -> list[ToolResult]:
        return [r async for r in hitl.settle(turn.decisions, execute)]

    def sync(call: ToolCallPart) -> Any:
        return {"deleted": call.input["path"]}

    async def asynchronous(call: ToolCallPart) -> Any:
        return {"deleted": call.input["path"]}

    def failing(call: ToolCallPart) -> Any:
        raise OSError("disk on fire")

    expected_denial = ToolResult(id="c2", denied=True, error="keep")
    assert anyio.run(collect, sync) == [ToolResult(id="c1", output={"deleted": "notes.txt"}), expected_denial]
    assert anyio.run(collect, asynchronous) == [ToolResult(id="c1", output={"deleted": "notes.txt"}), expected_denial]
    assert anyio.run(collect, failing) == [ToolResult(id="c1", error="disk on fire"), expected_denial]


def test_with_results_puts_each_result_after_its_call() -> None:
    run = _agui_run(_agui_body())
    done = hitl.with_results(
        run, [ToolResult(id="c2", denied=True), ToolResult(id="c1", output=1), ToolResult(id="zz", output=0)]
    )
    assistant = done.messages[1]
    assert [(type(p).__name__, p.id) for p in assistant.parts] == [  # type: ignore[union-attr]
        ("ToolCallPart", "c1"),
        ("ToolResultPart", "c1"),
        ("ToolCallPart", "c2"),
        ("ToolResultPart", "c2"),
    ]
    assert assistant.parts[1] == ToolResultPart(id="c1", name="delete_file", output=1)
    assert assistant.parts[3] == ToolResultPart(id="c2", name="delete_file", denied=True)
    assert done.messages[0] is run.messages[0]
    assert hitl.with_results(run, []) is run
    assert not hitl.continuation(done).waiting


def test_turn_starts_after_the_last_user_message() -> None:
    call = ToolCallPart(id="old", name="x")
    run = RunInput(
        thread_id="t",
        run_id="r",
        messages=[
            Message(id="u0", role="user", parts=[TextPart(text="a")]),
            Message(id="a0", role="assistant", parts=[call]),
            Message(id="u1", role="user", parts=[TextPart(text="b")]),
        ],
    )
    assert not hitl.continuation(run)


def test_an_interrupt_named_after_the_call_answers_it() -> None:
    turn = hitl.continuation(_agui_run(_agui_body([{"interruptId": "c2", "status": "resolved"}])))
    (decision,) = turn.decisions
    assert (decision.call.id, decision.approved, decision.approval_id) == ("c2", True, "c2")
    assert [c.id for c in turn.waiting] == ["c1"]
