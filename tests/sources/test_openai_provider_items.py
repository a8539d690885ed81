"""Responses items of tools OpenAI runs itself, whose result or question is an item of its own.

An MCP call OpenAI asks the user to approve (``mcp_approval_request``) pauses the run like any approval, and
the answer goes back as an ``mcp_approval_response``; a shell call OpenAI ran in its container
(``shell_call`` + ``shell_call_output``), a server-run tool search (``tool_search_call`` +
``tool_search_output``) and a program (``program`` + ``program_output``, its nested function calls the
client's) are provider-executed calls with their results. Each goes back to the API as the items it came
as. The bodies are the project's own, in the Responses SSE wire format
(:func:`tests.sources.bodies.responses_body`), driven through the real ``openai`` SDK; the real AI SDK client
answers the approval, and the real clients fold the runs whose next request must carry the items back.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from streamkit import agui, aisdk
from streamkit.aisdk.fold import fold
from streamkit.events import (
    ApprovalState,
    ChatEvent,
    Message,
    ResumeEntry,
    RunInput,
    TextPart,
    Tool,
    ToolApprovalRequest,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
)
from streamkit.sources.openai import OpenAIResponsesAgent, responses_input
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources.bodies import message_item, responses_body
from tests.sources.support import agui_body, aisdk_body, collect, summarize
from tests.sources.test_openai_responses import sdk
from tests.support.oracle import JsOracle

MODEL = "gpt-5-mini"
REQUEST_ID = "mcpr_sk0own0approval01"
LINK_ARGS = '{"url":"https://example.org/long/page","max_clicks":10}'


def ask(text: str, tools: list[Tool] | None = None) -> RunInput:
    messages = [Message(id="u1", role="user", parts=[TextPart(text=text)])]
    return RunInput(thread_id="t", run_id="r1", messages=messages, tools=tools or [])


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
    replay = Replay(Recording(approval_body()))
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
    replay = Replay(Recording(approved_body()))
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
    replay = Replay(Recording(approved_body()))
    agent = OpenAIResponsesAgent(sdk(replay), model=MODEL)
    asyncio.run(collect(agent(run.model_copy(update={"messages": unanswered, "resume": resume})), [REQUEST_ID]))
    assert replay.requests[0]["input"][-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": REQUEST_ID,
        "approve": True,
    }


def test_the_ai_sdk_client_approves_the_mcp_call_and_the_answer_reaches_openai(js: JsOracle) -> None:
    first = Replay(Recording(approval_body()))
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
    replay = Replay(Recording(approved_body()))
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


async def _run_and_next_request(
    first: bytes, tools: list[Tool] | None = None
) -> tuple[list[ChatEvent], list[dict[str, Any]]]:
    """The events of a run over ``first``, and the ``input`` the next request sends after the AI SDK's fold
    of that run (the assistant message a browser client sends back)."""
    replay = Replay(Recording(first))
    events = await collect(OpenAIResponsesAgent(sdk(replay), model=MODEL)(ask("Go.", tools or [])))
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


# --- a tool search OpenAI ran ---------------------------------------------------------------------

TIDE_TOOL = {
    "type": "function",
    "defer_loading": True,
    "description": "Tide times for a harbour",
    "name": "get_tide",
    "parameters": {"type": "object", "properties": {"harbour": {"type": "string"}}, "required": ["harbour"]},
    "strict": True,
}
SEARCH_CALL = {
    "id": "tsc_sk0own0search01",
    "type": "tool_search_call",
    "status": "completed",
    "arguments": {"paths": ["get_tide"]},
    "call_id": None,
    "execution": "server",
}
SEARCH_OUTPUT = {
    "id": "tso_sk0own0search01",
    "type": "tool_search_output",
    "status": "completed",
    "call_id": None,
    "execution": "server",
    "tools": [TIDE_TOOL],
}
TIDE_CALL = {
    "id": "fc_sk0own0tide01",
    "type": "function_call",
    "status": "completed",
    "arguments": '{"harbour":"Porto"}',
    "call_id": "call_sk0own0tide01",
    "name": "get_tide",
}


def test_a_server_run_tool_search_keeps_its_output() -> None:
    body = responses_body("resp_sk0own0found", [(SEARCH_CALL, []), (SEARCH_OUTPUT, []), (TIDE_CALL, [])], (90, 20))
    events, items = asyncio.run(_run_and_next_request(body, [Tool(name="get_tide", description="Tides.")]))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name, s.provider_executed) for s in starts] == [
        ("tsc_sk0own0search01", "tool_search", True),
        ("call_sk0own0tide01", "get_tide", False),
    ]
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.id == "tsc_sk0own0search01" and result.output == [TIDE_TOOL]
    assert summarize(events)[-1][:2] == ("run-finished", "tool-calls")  # get_tide is the client's
    no_nulls = {k: v for k, v in SEARCH_CALL.items() if v is not None}
    output = {k: v for k, v in SEARCH_OUTPUT.items() if v is not None}
    assert items[1:3] == [no_nulls, output]
    assert items[3]["type"] == "function_call" and items[3]["call_id"] == "call_sk0own0tide01"


# --- a program OpenAI runs, calling the client's tools --------------------------------------------

PROGRAM = {
    "id": "cm_sk0own0program01",
    "type": "program",
    "call_id": "call_sk0own0program01",
    "code": 'const t = await tools.get_tide({harbour: "Porto"});\ntext(JSON.stringify(t));\n',
    "fingerprint": "gAAAAABsk0own0opaque0fingerprint==",
}
CALLER = {"type": "program", "caller_id": "call_sk0own0program01"}
NESTED = {**TIDE_CALL, "status": "in_progress", "caller": CALLER}
PROGRAM_OUTPUT = {
    "id": "cmo_sk0own0program01",
    "type": "program_output",
    "status": "completed",
    "call_id": "call_sk0own0program01",
    "result": '{"harbour":"Porto","high":"14:10"}',
}


@server_tool
def get_tide(harbour: str) -> dict[str, str]:
    """Tide times for a harbour."""
    return {"harbour": harbour, "high": "14:10"}


def test_a_program_is_provider_executed_and_its_nested_calls_carry_their_caller() -> None:
    first = responses_body("resp_sk0own0prog1", [(PROGRAM, []), (NESTED, [])], (200, 50))
    done = message_item("msg_sk0own0tide", "High tide in Porto is at 14:10.")
    second = responses_body("resp_sk0own0prog2", [(PROGRAM_OUTPUT, []), done], (260, 15))
    replay = Replay(Recording(first), Recording(second))
    events = asyncio.run(collect(OpenAIResponsesAgent(sdk(replay), model=MODEL, tools=[get_tide])(ask("Tides?"))))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name, s.provider_executed) for s in starts] == [
        ("call_sk0own0program01", "program", True),
        ("call_sk0own0tide01", "get_tide", False),
    ]
    results = [(e.id, e.output) for e in events if isinstance(e, ToolResult)]
    assert results == [
        ("call_sk0own0tide01", {"harbour": "Porto", "high": "14:10"}),  # the server tool the program called
        ("call_sk0own0program01", PROGRAM_OUTPUT["result"]),  # the program's own result, in the next response
    ]
    assert summarize(events)[-1][:2] == ("run-finished", "stop")
    # the second call sends the program as it came, then the nested call and its answer, with their caller
    sent = replay.requests[1]["input"]
    assert sent[1:] == [
        PROGRAM,
        {"type": "function_call", "call_id": "call_sk0own0tide01", "name": "get_tide",
         "arguments": '{"harbour":"Porto"}', "caller": CALLER},
        {"type": "function_call_output", "call_id": "call_sk0own0tide01",
         "output": '{"harbour":"Porto","high":"14:10"}', "caller": CALLER},
    ]  # fmt: skip


def test_a_program_output_in_a_later_request_answers_the_program_call() -> None:
    events, items = asyncio.run(_run_and_next_request(responses_body("resp_sk0own0p", [(PROGRAM, [])], (9, 9))))
    assert summarize(events)[-1][:2] == ("run-finished", "stop")
    assert items[1:] == [PROGRAM]  # no output yet: the program waits
    meta = {"openai": {"itemId": "cm_sk0own0program01", "itemType": "program", "itemFields": {
        "call_id": "call_sk0own0program01", "fingerprint": PROGRAM["fingerprint"]}}}  # fmt: skip
    call = ToolCallPart(
        id="call_sk0own0program01",
        name="program",
        input=PROGRAM["code"],
        provider_executed=True,
        provider_metadata=meta,
    )
    result_meta = {"openai": {"itemId": "cmo_sk0own0program01", "itemType": "program_output", "itemFields": {
        "status": "completed", "call_id": "call_sk0own0program01"}}}  # fmt: skip
    answered = ToolResultPart(
        id=call.id, name="program", output=PROGRAM_OUTPUT["result"], provider_metadata=result_meta
    )
    history = [*ask("Tides?").messages, Message(id="a", role="assistant", parts=[call, answered])]
    run = ask("").model_copy(update={"messages": history})
    assert responses_input(run)[1:] == [PROGRAM, PROGRAM_OUTPUT]


def test_provider_run_items_survive_the_agui_client(js: JsOracle) -> None:
    replay = Replay(Recording(shell_body()))
    events = asyncio.run(collect(OpenAIResponsesAgent(sdk(replay), model=MODEL)(ask("Go."))))
    first = {"id": "u1", "role": "user", "content": "Go."}
    then = {"id": "u2", "role": "user", "content": "thanks"}
    runs = [{"body": agui_body(events), "addMessages": [first]}, {"body": agui_body([]), "addMessages": [then]}]
    answer = js.call("agui", {"runs": runs, "messages": [], "state": {}})
    assert answer["ok"], answer.get("error")
    sent = answer["result"]["runs"][1]["request"]["body"]
    items = responses_input(agui.to_run_input(agui.parse_run_agent_input(sent)))
    no_nulls = {**SHELL_CALL, "action": {"commands": ["ls /data"]}}
    output = {k: v for k, v in SHELL_OUTPUT.items() if v is not None}
    assert items[1:3] == [no_nulls, output]
    assert [i.get("type") for i in items].count("function_call_output") == 0  # not answered twice
