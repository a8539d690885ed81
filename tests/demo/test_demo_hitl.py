"""Human in the loop through the real clients, end to end: the demo app on a loopback port, ``useChat``'s Chat
(``ai`` 7, and ``ai`` 6) and AG-UI's ``HttpAgent`` driving each loop to its end: approve, deny, a frontend
tool the client runs, and two approvals in one run. The final folded message(s) and state are checked
field by field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from streamkit import aisdk
from streamkit.demo.agent import INSTANT, ScriptedAgent, script
from streamkit.demo.app import create_app, offering
from streamkit.demo.models import OpenAIAgent
from streamkit.demo.paths import choose_path
from streamkit.demo.tools import FRONTEND_TOOLS, SET_THEME
from streamkit.events import (
    APPROVAL_SCHEMA,
    ApprovalState,
    Message,
    RunError,
    RunInput,
    RunStarted,
    StateUpdate,
    StepStarted,
    TextPart,
    ToolApprovalRequest,
    ToolCallPart,
    ToolResult,
    hitl,
)
from tests.demo.openai_replay import call_number, serve
from tests.support.oracle import JsOracle

DELETE = "Delete the file notes.txt"
DELETE_TWO = "Delete notes.txt and todo.txt"
THEME = "Switch to dark mode"
PAGE_TOOLS = [{"name": SET_THEME.name, "description": SET_THEME.description, "parameters": SET_THEME.parameters}]


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    with serve(create_app(ScriptedAgent(INSTANT), static_dir=None)) as url:
        yield url


@pytest.fixture(scope="module")
def demo_v6() -> Iterator[str]:
    """The same agent for an ``ai`` 6 page (the route's ``sdk_version=6``)."""
    agent = offering(ScriptedAgent(INSTANT), FRONTEND_TOOLS)
    with serve(Starlette(routes=aisdk.routes(agent, path="/api/chat", sdk_version=6))) as url:
        yield url


def chat(js: JsOracle, url: str, steps: list[dict[str, Any]], version: int = 7, **options: Any) -> dict[str, Any]:
    answer = js.call("aisdk", {"api": f"{url}/api/chat", "steps": steps, "version": version, **options})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == []
    result: dict[str, Any] = answer["result"]
    assert result["error"] is None and result["status"] == "ready"
    return result


def tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


def texts(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def plan_of(message: dict[str, Any]) -> dict[str, Any]:
    (state,) = [p["data"] for p in message["parts"] if p["type"] == "data-state"]
    return state  # type: ignore[no-any-return]


def statuses(plan: dict[str, Any]) -> dict[str, str]:
    return {s["id"]: s["status"] for s in plan["steps"]}


# --- AI SDK ----------------------------------------------------------------------------------------


def _approval_session(js: JsOracle, url: str, prompt: str, approved: Any, version: int = 7) -> dict[str, Any]:
    steps = [{"do": "sendMessage", "args": {"text": prompt}}, {"do": "answerApprovals", "args": {"approved": approved}}]
    return chat(js, url, steps, version=version, auto="approvals")


@pytest.mark.parametrize("version", [7, 6])
def test_aisdk_approve_runs_the_tool_and_continues_the_same_message(
    js: JsOracle, demo: str, demo_v6: str, version: int
) -> None:
    result = _approval_session(js, demo if version == 7 else demo_v6, DELETE, True, version)
    _, second = result["requests"]
    assert [m["role"] for m in result["messages"]] == ["user", "assistant"]  # one assistant message, continued
    message = result["message"]
    assert second["body"]["trigger"] == "submit-message" and second["body"]["messageId"] == message["id"]
    (asked,) = tool_parts(second["body"]["messages"][-1])
    assert asked["state"] == "approval-responded"
    assert asked["approval"]["id"] == f"approval-{asked['toolCallId']}" and asked["approval"]["approved"] is True
    (part,) = tool_parts(message)
    assert part["type"] == "tool-delete_file" and part["toolCallId"] == asked["toolCallId"]
    assert part["state"] == "output-available"
    assert part["input"] == {"path": "notes.txt"}
    assert part["output"] == {"path": "notes.txt", "deleted": True, "bytes": 1284}
    assert part["approval"]["approved"] is True
    # the answer is a new step after the tool part: the client does not resend in a loop
    kinds = [p["type"] for p in message["parts"]]
    assert kinds.index("tool-delete_file") < max(i for i, k in enumerate(kinds) if k == "step-start")
    assert texts(message) == "Done: I deleted **notes.txt** (1.3 KB)."
    plan = plan_of(message)
    assert plan["status"] == "done"
    assert statuses(plan) == {"understand": "done", "call-1": "done", "answer": "done"}
    assert [f["finishReason"] for f in result["finishes"]] == ["tool-calls", "stop"]
    assert len(result["requests"]) == 2


def test_aisdk_deny_reports_the_call_denied(js: JsOracle, demo: str) -> None:
    result = _approval_session(js, demo, DELETE, False)
    message = result["message"]
    (part,) = tool_parts(message)
    assert part["state"] == "output-denied" and "output" not in part
    assert part["approval"]["approved"] is False
    assert texts(message) == "I did not delete anything: you denied deleting notes.txt."
    assert statuses(plan_of(message)) == {"understand": "done", "call-1": "denied", "answer": "done"}
    assert len(result["requests"]) == 2


def test_aisdk_two_approvals_in_one_run(js: JsOracle, demo: str) -> None:
    result = _approval_session(js, demo, DELETE_TWO, [True, False])
    message = result["message"]
    notes, todo = tool_parts(message)
    assert (notes["input"], notes["state"]) == ({"path": "notes.txt"}, "output-available")
    assert (todo["input"], todo["state"]) == ({"path": "todo.txt"}, "output-denied")
    (asked_notes, asked_todo) = tool_parts(result["requests"][1]["body"]["messages"][-1])
    assert (asked_notes["approval"]["approved"], asked_todo["approval"]["approved"]) == (True, False)
    assert texts(message) == "Done: I deleted **notes.txt** (1.3 KB). I left todo.txt alone, as you asked."
    assert statuses(plan_of(message)) == {"understand": "done", "call-1": "done", "call-2": "denied", "answer": "done"}


def test_aisdk_a_second_approval_later_in_the_chat(js: JsOracle, demo: str) -> None:
    steps = [
        {"do": "sendMessage", "args": {"text": DELETE}},
        {"do": "answerApprovals", "args": {"approved": True}},
        {"do": "sendMessage", "args": {"text": "Now delete draft.md"}},
        {"do": "answerApprovals", "args": {"approved": True}},
    ]
    result = chat(js, demo, steps, auto="approvals")
    assert [m["role"] for m in result["messages"]] == ["user", "assistant", "user", "assistant"]
    assert len(result["requests"]) == 4
    (part,) = tool_parts(result["message"])
    assert part["output"] == {"path": "draft.md", "deleted": True, "bytes": 5120}
    assert texts(result["message"]) == "Done: I deleted **draft.md** (5.0 KB)."


@pytest.mark.parametrize("version", [7, 6])
def test_aisdk_frontend_tool(js: JsOracle, demo: str, demo_v6: str, version: int) -> None:
    steps = [{"do": "sendMessage", "args": {"text": THEME}}]
    url = demo if version == 7 else demo_v6
    result = chat(js, url, steps, version=version, auto="toolCalls", clientTools={"set_theme": {"theme": "dark"}})
    (call,) = result["toolCalls"]
    assert (call["toolName"], call["input"]) == ("set_theme", {"theme": "dark"})
    assert len(result["requests"]) == 2  # the automatic resend after addToolOutput, and no loop after it
    resent = tool_parts(result["requests"][1]["body"]["messages"][-1])
    assert [(p["state"], p["output"]) for p in resent] == [("output-available", {"theme": "dark"})]
    message = result["message"]
    (part,) = tool_parts(message)
    assert (part["type"], part["state"], part["output"]) == ("tool-set_theme", "output-available", {"theme": "dark"})
    assert texts(message) == "Done, the page is now dark."
    assert statuses(plan_of(message)) == {"understand": "done", "call-1": "done", "answer": "done"}


# --- AG-UI -----------------------------------------------------------------------------------------


def agui(js: JsOracle, url: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    answer = js.call("agui", {"url": f"{url}/api/agui", "threadId": "thread-hitl", "runs": runs})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == []
    result: dict[str, Any] = answer["result"]
    for run in result["runs"]:
        assert run["runError"] is None and run["failed"] is None
    return result


def user(text: str, n: int = 1) -> dict[str, Any]:
    return {"id": f"u{n}", "role": "user", "content": text}


def _agui_approval(js: JsOracle, url: str, prompt: str, answer: Any) -> dict[str, Any]:
    return agui(
        js,
        url,
        [
            {"runId": "run-1", "addMessages": [user(prompt)], "parameters": {"tools": PAGE_TOOLS}},
            {"runId": "run-2", "resumePending": answer, "parameters": {"tools": PAGE_TOOLS}},
        ],
    )


def test_agui_approve_resolves_the_interrupt_and_the_run_continues(js: JsOracle, demo: str) -> None:
    result = _agui_approval(js, demo, DELETE, {"status": "resolved", "payload": {"approved": True}})
    first, second = result["runs"]
    assert first["outcome"] == "interrupt"
    assert first["interrupts"] == [
        {
            "id": "approval-call_run-1_1",
            "reason": "tool_approval",
            "message": "Delete notes.txt? This cannot be undone.",
            "toolCallId": "call_run-1_1",
            "responseSchema": APPROVAL_SCHEMA,
        }
    ]
    assert second["request"]["body"]["resume"] == [
        {"interruptId": "approval-call_run-1_1", "status": "resolved", "payload": {"approved": True}}
    ]
    assert second["outcome"] == "success" and result["pendingInterrupts"] == []
    messages = result["messages"]
    assert [(m["role"], m["id"]) for m in messages if m["role"] != "reasoning"] == [
        ("user", "u1"),
        ("assistant", "call_run-1_1"),
        ("tool", "call_run-1_1-result"),
        ("assistant", "text_run-2_1"),
    ]
    holder = next(m for m in messages if m["id"] == "call_run-1_1")
    assert holder["toolCalls"] == [
        {
            "id": "call_run-1_1",
            "type": "function",
            "function": {"name": "delete_file", "arguments": '{"path": "notes.txt"}'},
        }
    ]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool == {
        "id": "call_run-1_1-result",
        "role": "tool",
        "toolCallId": "call_run-1_1",
        "content": '{"path":"notes.txt","deleted":true,"bytes":1284}',
    }
    assert messages[-1]["content"] == "Done: I deleted **notes.txt** (1.3 KB)."
    assert result["state"]["status"] == "done"
    assert statuses(result["state"]) == {"understand": "done", "call-1": "done", "answer": "done"}


@pytest.mark.parametrize(
    "answer",
    [{"status": "cancelled"}, {"status": "resolved", "payload": {"approved": False, "reason": "keep it"}}],
    ids=["cancelled", "resolved-false"],
)
def test_agui_deny(js: JsOracle, demo: str, answer: dict[str, Any]) -> None:
    result = _agui_approval(js, demo, DELETE, answer)
    tool = next(m for m in result["messages"] if m["role"] == "tool")
    assert tool["content"] == "The user denied deleting notes.txt."
    assert tool["metadata"] == {"denied": True}
    assert result["messages"][-1]["content"] == "I did not delete anything: you denied deleting notes.txt."
    assert statuses(result["state"])["call-1"] == "denied" and result["state"]["status"] == "done"


def test_agui_two_approvals_in_one_run(js: JsOracle, demo: str) -> None:
    answers = [{"status": "resolved", "payload": {"approved": True}}, {"status": "cancelled"}]
    result = _agui_approval(js, demo, DELETE_TWO, answers)
    first = result["runs"][0]
    assert [(i["id"], i["toolCallId"]) for i in first["interrupts"]] == [
        ("approval-call_run-1_1", "call_run-1_1"),
        ("approval-call_run-1_2", "call_run-1_2"),
    ]
    tools = [m for m in result["messages"] if m["role"] == "tool"]
    assert [(t["toolCallId"], t.get("metadata")) for t in tools] == [
        ("call_run-1_1", None),
        ("call_run-1_2", {"denied": True}),
    ]
    assert result["messages"][-1]["content"] == (
        "Done: I deleted **notes.txt** (1.3 KB). I left todo.txt alone, as you asked."
    )


def test_agui_client_refuses_a_run_that_leaves_an_interrupt_unanswered(js: JsOracle, demo: str) -> None:
    answer = js.call(
        "agui",
        {
            "url": f"{demo}/api/agui",
            "runs": [
                {"runId": "run-1", "addMessages": [user(DELETE_TWO)]},
                {"runId": "run-2", "resumePending": [{"status": "cancelled"}]},
            ],
        },
    )
    assert answer["ok"]
    second = answer["result"]["runs"][1]
    assert "pending interrupt(s) not addressed by resume" in second["failed"]
    assert second["request"]["body"]["runId"] == "run-1"  # nothing was sent for the refused run


def test_agui_frontend_tool(js: JsOracle, demo: str) -> None:
    result = agui(
        js,
        demo,
        [
            {"runId": "run-1", "addMessages": [user(THEME)], "parameters": {"tools": PAGE_TOOLS}},
            {"runId": "run-2", "answerPending": {"set_theme": '{"theme":"dark"}'}, "parameters": {"tools": PAGE_TOOLS}},
        ],
    )
    first, second = result["runs"]
    assert first["outcome"] == "success" and first["pendingToolCallIds"] == ["call_run-1_1"]
    assert first["request"]["body"]["tools"] == PAGE_TOOLS
    sent = second["request"]["body"]["messages"]
    assert sent[-1] == {
        "id": "tool-call_run-1_1",
        "role": "tool",
        "toolCallId": "call_run-1_1",
        "content": '{"theme":"dark"}',
    }
    assert second["outcome"] == "success" and second["pendingToolCallIds"] == []
    messages = [m for m in result["messages"] if m["role"] != "reasoning"]
    assert [(m["role"], m["id"]) for m in messages] == [
        ("user", "u1"),
        ("assistant", "call_run-1_1"),
        ("tool", "tool-call_run-1_1"),
        ("assistant", "text_run-2_1"),
    ]
    assert messages[1]["toolCalls"][0]["function"] == {"name": "set_theme", "arguments": '{"theme": "dark"}'}
    assert messages[-1]["content"] == "Done, the page is now dark."
    assert statuses(result["state"]) == {"understand": "done", "call-1": "done", "answer": "done"}


# --- the OpenAI-compatible agent offers the same two tools ------------------------------------------

HITL_RECORDINGS = Path(__file__).parent / "hitl_recordings"


def model_server() -> Starlette:
    """Chat Completions bodies for the model calls of a run (``hitl_recordings/<model>/NN.sse``, written in
    the wire format of the recorded OpenAI streams in ``recordings/``); every request body is kept."""
    requests: list[dict[str, Any]] = []

    async def completions(request: Request) -> Response:
        body = await request.json()
        requests.append(body)
        path = HITL_RECORDINGS / body["model"] / f"{call_number(body['messages']):02d}.sse"
        return Response(path.read_bytes(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.requests = requests
    return app


@pytest.mark.parametrize("approved", [True, False], ids=["approve", "deny"])
def test_model_agent_asks_approval_for_delete_file(js: JsOracle, approved: bool) -> None:
    server = model_server()
    with serve(server) as model_url:
        agent = OpenAIAgent(model_url + "/v1", "approval", max_steps=3)
        with serve(create_app(agent, static_dir=None)) as url:
            result = _approval_session(js, url, DELETE, approved)
    first, second = server.state.requests
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"get_weather", "calculate", "search_docs", "delete_file", "set_theme"} <= offered
    (part,) = tool_parts(result["message"])
    assert part["toolCallId"] == "call_Dl3tN0t3s" and part["input"] == {"path": "notes.txt"}
    tool_message = second["messages"][-1]  # what the model is told after the user's answer
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_Dl3tN0t3s"
    if approved:
        assert part["state"] == "output-available"
        assert part["output"] == {"path": "notes.txt", "deleted": True, "bytes": 1284}
    else:
        assert part["state"] == "output-denied"
    assert texts(result["message"]) == "I deleted notes.txt."  # the recorded model's answer either way
    assert [f["finishReason"] for f in result["finishes"]] == ["tool-calls", "stop"]


def test_model_agent_calls_the_page_theme_tool(js: JsOracle) -> None:
    server = model_server()
    with serve(server) as model_url:
        agent = OpenAIAgent(model_url + "/v1", "theme_tool", max_steps=3)
        with serve(create_app(agent, static_dir=None)) as url:
            steps = [{"do": "sendMessage", "args": {"text": THEME}}]
            result = chat(js, url, steps, auto="toolCalls", clientTools={"set_theme": {"theme": "dark"}})
    assert len(server.state.requests) == 2
    (part,) = tool_parts(result["message"])
    assert (part["type"], part["state"], part["output"]) == ("tool-set_theme", "output-available", {"theme": "dark"})
    assert server.state.requests[1]["messages"][-1]["role"] == "tool"
    assert texts(result["message"]) == "Done, the page is now dark."


# --- the offline agent's script (pure) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "path"),
    [
        (DELETE, "delete"),
        ("please remove draft.md", "delete"),
        (THEME, "theme"),
        ("Light mode, please", "theme"),
        ("change the theme", "theme"),
        ("crash and delete", "crash"),
    ],
)
def test_paths(prompt: str, path: str) -> None:
    assert choose_path(prompt) == path


def _run(*messages: Message, state: Any = None) -> RunInput:
    return RunInput(thread_id="t", run_id="r1", messages=list(messages), state=state)


def test_the_delete_script_pauses_and_resumes() -> None:
    ask = _run(Message(id="u", role="user", parts=[TextPart(text=DELETE_TWO)]))
    events = [e for _, e in script(ask)]
    approvals = [e for e in events if isinstance(e, ToolApprovalRequest)]
    assert [(a.id, a.tool_call_id) for a in approvals] == [
        ("approval-call_r1_1", "call_r1_1"),
        ("approval-call_r1_2", "call_r1_2"),
    ]
    assert not [e for e in events if isinstance(e, ToolResult)]
    assert events[-1] == hitl.pause(usage=events[-1].usage)  # type: ignore[union-attr]
    plan = [e.state for e in events if isinstance(e, StateUpdate)][-1]
    assert plan["status"] == "waiting for approval"
    calls = [
        ToolCallPart(
            id="call_r1_1",
            name="delete_file",
            input={"path": "notes.txt"},
            approval=ApprovalState(id="approval-call_r1_1", approved=True),
        ),
        ToolCallPart(
            id="call_r1_2",
            name="delete_file",
            input={"path": "todo.txt"},
            approval=ApprovalState(id="approval-call_r1_2", approved=False),
        ),
    ]
    resumed = _run(ask.messages[0], Message(id="a", role="assistant", parts=list(calls)), state=plan).model_copy(
        update={"run_id": "r2", "message_id": "a"}
    )
    events = [e for _, e in script(resumed)]
    assert events[0] == RunStarted(thread_id="t", run_id="r2", message_id="a")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert results == [
        ToolResult(id="call_r1_1", output={"path": "notes.txt", "deleted": True, "bytes": 1284}),
        ToolResult(id="call_r1_2", denied=True, error="The user denied deleting todo.txt."),
    ]
    first_step = next(i for i, e in enumerate(events) if isinstance(e, StepStarted))
    assert first_step > events.index(results[-1])  # the answer is a new step after the results
    assert events[-1].finish_reason == "stop"  # type: ignore[union-attr]
    final = [e.state for e in events if isinstance(e, StateUpdate)][-1]
    assert final["status"] == "done"
    assert statuses(final) == {"understand": "done", "call-1": "done", "call-2": "denied", "answer": "done"}


def test_the_crash_plan_ends_failed() -> None:
    events = [e for _, e in script(_run(Message(id="u", role="user", parts=[TextPart(text="crash")])))]
    plan = [e.state for e in events if isinstance(e, StateUpdate)][-1]
    assert plan["status"] == "failed"
    assert isinstance(events[-1], RunError)
