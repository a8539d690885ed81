"""Responses items of tools OpenAI runs itself, whose result or question is an item of its own.

An MCP call OpenAI asks the user to approve (``mcp_approval_request``) pauses the run like any approval, and
the answer goes back as an ``mcp_approval_response``; a shell call OpenAI ran in its container
(``shell_call`` + ``shell_call_output``), a server-run tool search (``tool_search_call`` +
``tool_search_output``) and a program (``program`` + ``program_output``, its nested function calls the
client's) are provider-executed calls with their results. Each goes back to the API as the items it came
as. The bodies are the project's own, in the Responses SSE wire format (:func:`tests.sources.bodies.
responses_body`), driven through the real ``openai`` SDK; the AI SDK client folds the approval and answers it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from streamkit import aisdk
from streamkit.aisdk.fold import fold
from streamkit.events import (
    ApprovalState,
    ChatEvent,
    Message,
    ResumeEntry,
    RunInput,
    TextPart,
    ToolApprovalRequest,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
)
from streamkit.sources.openai import OpenAIResponsesAgent, responses_input
from streamkit.sources.tools import server_tool
from tests.sources.bodies import message_item, responses_body
from tests.sources.support import Replay, Reply, aisdk_body, collect, summarize
from tests.sources.test_openai_responses import sdk
from tests.support.oracle import JsOracle

MODEL = "gpt-5-mini"
REQUEST_ID = "mcpr_sk0own0approval01"
LINK_ARGS = '{"url":"https://example.org/long/page","max_clicks":10}'


def ask(text: str) -> RunInput:
    return RunInput(thread_id="t", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])])


def items_done(body: bytes) -> list[dict[str, Any]]:
    lines = body.decode().splitlines()
    events = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


# --- an MCP call waiting for approval -------------------------------------------------------------

LIST_TOOLS = {
    "id": "mcpl_sk0own0list01",
    "type": "mcp_list_tools",
    "server_label": "links",
    "tools": [{"name": "make_link", "input_schema": {"type": "object"}, "annotations": {"read_only": False}}],
}
APPROVAL = {
    "id": REQUEST_ID,
    "type": "mcp_approval_request",
    "arguments": LINK_ARGS,
    "name": "make_link",
    "server_label": "links",
}
MCP_CALL = {
    "id": "mcp_sk0own0call01",
    "type": "mcp_call",
    "status": "completed",
    "approval_request_id": REQUEST_ID,
    "arguments": LINK_ARGS,
    "error": None,
    "name": "make_link",
    "output": "https://ex.org/s/k0",
    "server_label": "links",
}


def approval_body() -> bytes:
    return responses_body("resp_sk0own0ask", [(LIST_TOOLS, []), (APPROVAL, [])], (300, 40))


def approved_body() -> bytes:
    done = message_item("msg_sk0own0linked", "Here is your link: https://ex.org/s/k0")
    return responses_body("resp_sk0own0did", [(LIST_TOOLS, []), (MCP_CALL, []), done], (420, 30))


def test_an_mcp_approval_request_pauses_the_run_for_the_user() -> None:
    replay = Replay(Reply(approval_body()))
    events = asyncio.run(collect(OpenAIResponsesAgent(sdk(replay), model=MODEL)(ask("Shorten my link."))))
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert (start.id, start.name, start.provider_executed, start.dynamic) == (REQUEST_ID, "mcp.make_link", True, True)
    (request,) = [e for e in events if isinstance(e, ToolApprovalRequest)]
    assert request.tool_call_id == REQUEST_ID
    said = summarize(events)
    assert ("tool-call", REQUEST_ID, LINK_ARGS, json.loads(LINK_ARGS)) in said
    assert said[-1][:2] == ("run-finished", "tool-calls")  # a pause: the user answers in the next request
    assert len(replay.requests) == 1


def _answered(approved: bool, reason: str | None = None) -> RunInput:
    meta = {"openai": {"itemId": REQUEST_ID, "itemType": "mcp_approval_request", "serverLabel": "links"}}
    call = ToolCallPart(
        id=REQUEST_ID,
        name="mcp.make_link",
        input=json.loads(LINK_ARGS),
        provider_executed=True,
        provider_metadata=meta,
        approval=ApprovalState(id=f"approval-{REQUEST_ID}", approved=approved, reason=reason),
    )
    history = [*ask("Shorten my link.").messages, Message(id="a1", role="assistant", parts=[call])]
    return ask("").model_copy(update={"messages": history})


def test_the_answer_goes_back_as_an_mcp_approval_response_and_openai_runs_the_call() -> None:
    replay = Replay(Reply(approved_body()))
    said = summarize(
        asyncio.run(collect(OpenAIResponsesAgent(sdk(replay), model=MODEL)(_answered(True)), [REQUEST_ID]))
    )
    assert (
        "tool-result",
        "mcp_sk0own0call01",
        {k: v for k, v in MCP_CALL.items() if k not in ("id", "type") and v is not None},
    ) in said
    assert said[-1][:2] == ("run-finished", "stop")
    _, request, answer = replay.requests[0]["input"]
    assert request == APPROVAL  # as it came
    assert answer == {"type": "mcp_approval_response", "approval_request_id": REQUEST_ID, "approve": True}
    # denied, with a reason: the provider hears it; no server tool runs either way
    assert responses_input(_answered(False, "not now"))[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": REQUEST_ID,
        "approve": False,
        "reason": "not now",
    }


def test_an_agui_resume_answers_the_provider_approval() -> None:
    run = _answered(True)
    unanswered = [m.model_copy(update={"parts": [p.model_copy(update={"approval": None}) for p in m.parts]})
                  for m in run.messages]  # fmt: skip
    resume = [ResumeEntry(interrupt_id=f"approval-{REQUEST_ID}", status="resolved", payload={"approved": True})]
    replay = Replay(Reply(approved_body()))
    agent = OpenAIResponsesAgent(sdk(replay), model=MODEL)
    asyncio.run(collect(agent(run.model_copy(update={"messages": unanswered, "resume": resume})), [REQUEST_ID]))
    assert replay.requests[0]["input"][-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": REQUEST_ID,
        "approve": True,
    }


def test_the_ai_sdk_client_approves_the_mcp_call_and_the_answer_reaches_openai(js: JsOracle) -> None:
    first = Replay(Reply(approval_body()))
    events = asyncio.run(collect(OpenAIResponsesAgent(sdk(first), model=MODEL)(ask("Shorten my link."))))
    steps = [
        {"do": "sendMessage", "args": {"text": "Shorten my link."}},
        {"do": "answerApprovals", "args": {"approved": True}},
    ]
    body = [aisdk_body(events).decode(), aisdk_body([]).decode()]
    answer = js.call("aisdk", {"body": body, "steps": steps, "auto": "approvals"})
    assert answer["ok"], answer.get("error")
    sent = answer["result"]["requests"][1]["body"]
    (part,) = [p for p in sent["messages"][-1]["parts"] if p.get("toolCallId") == REQUEST_ID]
    assert part["state"] == "approval-responded" and part["providerExecuted"] is True
    run = aisdk.to_run_input(aisdk.parse_chat_request(sent))
    replay = Replay(Reply(approved_body()))
    asyncio.run(collect(OpenAIResponsesAgent(sdk(replay), model=MODEL)(run), [REQUEST_ID]))
    assert replay.requests[0]["input"][1:] == [
        APPROVAL,
        {"type": "mcp_approval_response", "approval_request_id": REQUEST_ID, "approve": True},
    ]


# --- a shell call OpenAI ran in its container -----------------------------------------------------

CONTAINER = {"type": "container_reference", "container_id": "cntr_sk0own0box"}
SHELL_CALL = {
    "id": "sh_sk0own0shell01",
    "type": "shell_call",
    "status": "completed",
    "action": {"commands": ["ls /data"], "max_output_length": None, "timeout_ms": None},
    "call_id": "call_sk0own0shell01",
    "environment": CONTAINER,
}
SHELL_OUTPUT = {
    "id": "sho_sk0own0shell01",
    "type": "shell_call_output",
    "status": "completed",
    "call_id": "call_sk0own0shell01",
    "max_output_length": None,
    "output": [{"outcome": {"type": "exit", "exit_code": 0}, "stderr": "", "stdout": "notes.md\n"}],
}


def shell_body() -> bytes:
    done = message_item("msg_sk0own0listed", "The folder holds notes.md.")
    return responses_body("resp_sk0own0shell", [(SHELL_CALL, []), (SHELL_OUTPUT, []), done], (500, 60))


async def _run_and_next_request(first: bytes, **agent: Any) -> tuple[list[ChatEvent], list[dict[str, Any]]]:
    """The events of a run over ``first``, and the ``input`` the next request sends after the AI SDK's fold
    of that run (the assistant message a browser client sends back)."""
    replay = Replay(Reply(first))
    events = await collect(OpenAIResponsesAgent(sdk(replay), model=MODEL, **agent)(ask("Go.")))
    folded = {**fold(events), "id": "a1", "role": "assistant"}
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Go."}]}
    run = aisdk.to_run_input(aisdk.parse_chat_request({"id": "c", "messages": [user, folded]}))
    return events, responses_input(run)


def test_a_shell_call_openai_ran_is_provider_executed_with_its_output() -> None:
    events, items = asyncio.run(_run_and_next_request(shell_body()))
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert (start.id, start.name, start.provider_executed) == ("call_sk0own0shell01", "shell", True)
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.id == start.id and result.output == SHELL_OUTPUT["output"]
    assert summarize(events)[-1][:2] == ("run-finished", "stop")  # nothing left for the client to run
    no_nulls = {**SHELL_CALL, "action": {"commands": ["ls /data"]}}
    output = {k: v for k, v in SHELL_OUTPUT.items() if v is not None}
    assert items[1:3] == [no_nulls, output]  # as they came (nulls left out)
