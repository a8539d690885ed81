"""Responses items the caller runs: custom tools, computer use, shells and patches are tool calls left to the
client (or a server tool), and go back as their own item types with their ``*_output`` answers.

The bodies are written by hand in the Responses SSE wire format (no recorded stream holds these items); every
item carries the fields the ``openai`` SDK's types give it (``ResponseCustomToolCall``,
``ResponseComputerToolCall``, ``response_output_item.LocalShellCall``, ``ResponseFunctionShellToolCall``,
``ResponseApplyPatchToolCall``) and the events those of ``ResponseCustomToolCallInputDeltaEvent`` /
``...InputDoneEvent``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from streamkit import agui, aisdk
from streamkit.events import (
    ChatEvent,
    Message,
    RunInput,
    TextPart,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
)
from streamkit.sources.openai import OpenAIResponsesAgent, ResponsesTranslator, responses_events, responses_input
from streamkit.sources.tools import ServerTool
from streamkit.testing import Recording, Replay
from tests.sources.support import aisdk_body, collect, sse, summarize
from tests.sources.test_openai_responses import sdk, stream_of
from tests.support.oracle import JsOracle

CUSTOM_TOOLS = [
    {"type": "custom", "name": "code_exec", "description": "Runs Python code."},
    {"type": "computer", "display_width": 1024, "display_height": 768, "environment": "browser"},
]
PATCH = "print(2 + 2)\n"
CUSTOM = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_code", "name": "code_exec", "input": ""}
CLICK = {"button": "left", "type": "click", "x": 10, "y": 20}  # in the SDK's field order
CHECKS = [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check the page."}]
COMPUTER = {
    "type": "computer_call",
    "id": "cu_1",
    "call_id": "call_computer",
    "action": CLICK,
    "pending_safety_checks": CHECKS,
    "status": "completed",
}
CLICK_TEXT = '{"button":"left","type":"click","x":10,"y":20}'
SCREENSHOT = "data:image/png;base64,iVBORw0KGgo="


def created(n: int) -> dict[str, Any]:
    response = {"id": f"resp_{n}", "model": "gpt-5", "output": []}
    return {"type": "response.created", "sequence_number": 0, "response": response}


def completed(n: int, seq: int) -> dict[str, Any]:
    usage = {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
    return {"type": "response.completed", "sequence_number": seq, "response": {"id": f"resp_{n}", "usage": usage}}


def item(kind: str, index: int, value: dict[str, Any], seq: int) -> dict[str, Any]:
    return {"type": f"response.output_item.{kind}", "sequence_number": seq, "output_index": index, "item": value}


def input_delta(delta: str, seq: int) -> dict[str, Any]:
    event = {"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1", "output_index": 0, "delta": delta}
    return {**event, "sequence_number": seq}


CALLS = [
    created(1),
    item("added", 0, CUSTOM, 1),
    input_delta("print(2 ", 2),
    input_delta("+ 2)\n", 3),
    {
        "type": "response.custom_tool_call_input.done",
        "sequence_number": 4,
        "item_id": "ctc_1",
        "output_index": 0,
        "input": PATCH,
    },
    item("done", 0, {**CUSTOM, "input": PATCH}, 5),
    item("added", 1, {**COMPUTER, "status": "in_progress"}, 6),
    item("done", 1, COMPUTER, 7),
    completed(1, 8),
]
ANSWER_TEXT = "The code printed 4 and I clicked the button."
ANSWER = [
    created(2),
    item(
        "added", 0, {"type": "message", "id": "msg_2", "role": "assistant", "status": "in_progress", "content": []}, 1
    ),
    {
        "type": "response.output_text.delta",
        "sequence_number": 2,
        "item_id": "msg_2",
        "output_index": 0,
        "content_index": 0,
        "delta": ANSWER_TEXT,
    },
    item("done", 0, {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed", "content": []}, 3),
    completed(2, 4),
]
CUSTOM_META = {"openai": {"itemType": "custom_tool_call", "itemId": "ctc_1"}}
COMPUTER_META = {
    "openai": {
        "itemId": "cu_1",
        "itemType": "computer_call",
        "inputField": "action",
        "itemFields": {"pending_safety_checks": CHECKS},
    }
}
USER = "Run the code, then click."


def agent(replay: Replay, tools: list[Any] | None = None) -> OpenAIResponsesAgent:
    return OpenAIResponsesAgent(sdk(replay), model="gpt-5", tools=tools or [], options={"tools": CUSTOM_TOOLS})


def first_turn() -> RunInput:
    return RunInput(thread_id="t1", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=USER)])])


async def first_run() -> tuple[list[ChatEvent], Replay]:
    replay = Replay(Recording(sse(CALLS, named=True)))
    return await collect(agent(replay)(first_turn())), replay


async def next_items(run: RunInput) -> list[dict[str, Any]]:
    replay = Replay(Recording(sse(ANSWER, named=True)))
    await collect(agent(replay)(run), known_tool_calls=("call_code", "call_computer"))
    items: list[dict[str, Any]] = replay.requests[0]["input"]
    return items


EXPECTED = [
    {"role": "user", "content": [{"type": "input_text", "text": USER}]},
    {"type": "custom_tool_call", "call_id": "call_code", "name": "code_exec", "input": PATCH},
    {
        "type": "computer_call",
        "call_id": "call_computer",
        "id": "cu_1",
        "action": CLICK,
        "pending_safety_checks": CHECKS,
        "status": "completed",
    },
    {"type": "custom_tool_call_output", "call_id": "call_code", "output": "4"},
    {
        "type": "computer_call_output",
        "call_id": "call_computer",
        "output": {"type": "computer_screenshot", "image_url": SCREENSHOT},
    },
]


def test_client_run_calls_are_left_pending_and_go_back_as_their_own_items(js: JsOracle) -> None:
    events, replay = asyncio.run(first_run())
    assert len(replay.requests) == 1 and replay.requests[0]["tools"] == CUSTOM_TOOLS
    said = summarize(events)
    assert said[2:4] == [
        ("tool-call", "call_code", PATCH, PATCH),  # the free-form text streamed by its deltas, kept unparsed
        ("tool-call", "call_computer", CLICK_TEXT, CLICK),
    ]
    assert said[-1][:2] == ("run-finished", "tool-calls")
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(s.name, s.provider_executed) for s in starts] == [("code_exec", False), ("computer", False)]
    assert [e.provider_metadata for e in ends] == [CUSTOM_META, COMPUTER_META]

    # the real `ai` client runs both calls on the page and sends the answers back
    outputs = {"code_exec": "4", "computer": SCREENSHOT}
    for version in (7, 5):
        body = [aisdk_body(events, version).decode(), aisdk_body([]).decode()]
        steps = [{"do": "sendMessage", "args": {"text": USER}}]
        answer = js.call(
            "aisdk", {"body": body, "version": version, "steps": steps, "auto": "toolCalls", "clientTools": outputs}
        )
        assert answer["ok"], answer.get("error")
        assert [c["toolName"] for c in answer["result"]["toolCalls"]] == ["code_exec", "computer"]
        sent = answer["result"]["requests"][1]["body"]
        run = aisdk.to_run_input(aisdk.parse_chat_request(sent))
        assert asyncio.run(next_items(run)) == EXPECTED, version


def test_a_server_tool_runs_a_custom_tool_on_its_text() -> None:
    seen: list[Any] = []

    def code_exec(text: Any) -> str:
        seen.append(text)
        return "4"

    tool = ServerTool(name="code_exec", description="Runs Python code.", parameters={}, run=code_exec)

    async def go() -> tuple[list[ChatEvent], Replay]:
        replay = Replay(Recording(sse(CALLS, named=True)), Recording(sse(ANSWER, named=True)))
        return await collect(agent(replay, [tool])(first_turn())), replay

    events, replay = asyncio.run(go())
    assert seen == [PATCH]
    said = summarize(events)
    assert ("tool-result", "call_code", "4") in said
    assert said[-1][:2] == ("run-finished", "tool-calls")  # the computer call is still the client's
    assert len(replay.requests) == 1


def test_custom_tool_loop_sends_the_pair_back() -> None:
    tool = ServerTool(name="code_exec", description="Runs Python code.", parameters={}, run=lambda text: "4")
    only_custom = [e for e in CALLS if e.get("output_index") != 1]

    async def go() -> tuple[list[ChatEvent], Replay]:
        replay = Replay(Recording(sse(only_custom, named=True)), Recording(sse(ANSWER, named=True)))
        return await collect(agent(replay, [tool])(first_turn())), replay

    events, replay = asyncio.run(go())
    said = summarize(events)
    assert ("text", ANSWER_TEXT) in said and said[-1][:2] == ("run-finished", "stop")
    assert replay.requests[1]["input"] == [EXPECTED[0], EXPECTED[1], EXPECTED[3]]


SHELL_ACTION = {"commands": ["ls"], "timeout_ms": 1000}
LOCAL_ACTION = {"type": "exec", "command": ["ls"], "env": {}}
OPERATION = {"type": "update_file", "path": "a.py", "diff": "@@\n-x\n+y\n"}
LOCAL = {
    "type": "local_shell_call",
    "id": "lsh_1",
    "call_id": "call_local",
    "action": LOCAL_ACTION,
    "status": "completed",
}
SHELL = {"type": "shell_call", "id": "sh_1", "call_id": "call_shell", "action": SHELL_ACTION, "status": "completed"}
PATCH_CALL = {
    "type": "apply_patch_call",
    "id": "apc_1",
    "call_id": "call_patch",
    "operation": OPERATION,
    "status": "completed",
    "created_by": "model",
}


def test_shell_and_patch_calls_round_trip() -> None:
    translator = ResponsesTranslator("p")
    body = [created(3), *[item("done", n, it, n + 1) for n, it in enumerate([LOCAL, SHELL, PATCH_CALL])]]
    for event in body:
        translator.feed(event)
    translator.close()
    assert [(c.id, c.name, c.input, c.provider_tool) for c in translator.tool_calls] == [
        ("call_local", "local_shell", LOCAL_ACTION, True),
        ("call_shell", "shell", SHELL_ACTION, True),
        ("call_patch", "apply_patch", OPERATION, True),
    ]
    entry = {"stdout": "a.py\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}
    answers = [
        ToolResultPart(id="call_local", output="a.py\n"),
        ToolResultPart(id="call_shell", output=entry),
        ToolResultPart(id="call_patch", error="a.py: no such hunk"),
    ]
    run = RunInput(
        thread_id="t",
        run_id="r",
        messages=[Message(id="a1", role="assistant", parts=[*translator.parts, *answers])],
    )
    assert responses_input(run) == [
        LOCAL,
        SHELL,
        {k: v for k, v in PATCH_CALL.items() if k != "created_by"},  # not a field of the input item
        # the SDK's input type names the local shell call by ``id`` (the model's call id)
        {"type": "local_shell_call_output", "id": "call_local", "output": "a.py\n"},
        {"type": "shell_call_output", "call_id": "call_shell", "output": [entry]},
        {
            "type": "apply_patch_call_output",
            "call_id": "call_patch",
            "status": "failed",
            "output": "Error: a.py: no such hunk",
        },
    ]


def test_answers_without_the_required_shape_fall_back_to_function_items() -> None:
    meta = COMPUTER_META
    parts: list[Any] = [
        ToolCallPart(id="call_computer", name="computer", input=CLICK, provider_metadata=meta),
        ToolResultPart(id="call_computer", output="clicked"),  # not a screenshot
        # a frontend tool answered by the browser: an ordinary function call, as before
        ToolCallPart(id="call_fn", name="calculator", input={"a": 1}),
        ToolResultPart(id="call_fn", output=2),
    ]
    run = RunInput(thread_id="t", run_id="r", messages=[Message(id="a1", role="assistant", parts=parts)])
    assert responses_input(run) == [
        {"type": "function_call", "call_id": "call_computer", "name": "computer", "arguments": CLICK_TEXT},
        {"type": "function_call", "call_id": "call_fn", "name": "calculator", "arguments": '{"a":1}'},
        {"type": "function_call_output", "call_id": "call_computer", "output": "clicked"},
        {"type": "function_call_output", "call_id": "call_fn", "output": "2"},
    ]


async def test_hosted_and_unknown_call_items() -> None:
    hosted = {"type": "future_search_call", "id": "fs_9", "status": "completed", "action": {"q": "x"}}
    client = {"type": "future_device_call", "id": "fd_9", "call_id": "call_dev", "status": "completed", "action": {}}
    body = [created(4), item("done", 0, hosted, 1), item("done", 1, client, 2), completed(4, 3)]
    events = await collect(responses_events(await stream_of(Recording(sse(body, named=True)))))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name, s.provider_executed) for s in starts] == [
        ("fs_9", "future_search", True),
        ("call_dev", "future_device", False),
    ]
    assert summarize(events)[-1][:2] == ("run-finished", "tool-calls")


def test_an_agui_history_keeps_the_custom_call() -> None:
    call = ToolCallPart(id="call_code", name="code_exec", input=PATCH, provider_metadata=CUSTOM_META)
    history = [Message(id="a1", role="assistant", parts=[call, ToolResultPart(id="call_code", output="4")])]
    body = {"threadId": "t", "runId": "r", "messages": agui.to_agui_messages(history), "tools": [], "context": []}
    run = agui.to_run_input(agui.parse_run_agent_input({**body, "state": {}, "forwardedProps": {}}))
    assert responses_input(run) == [EXPECTED[1], EXPECTED[3]]
