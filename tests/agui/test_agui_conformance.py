"""Our AG-UI bytes through the real ``@ag-ui/client`` pipeline (SSE parser, compatibility boundary, schema
enforcement, chunk expansion, verifier, message and state reducers): the client must accept every stream without
a warning and end up with exactly the messages, state and outcome the ChatEvents meant."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import agui
from streamkit.agui.routes import mapper_for
from streamkit.events import (
    APPROVAL_SCHEMA,
    ChatEvent,
    Custom,
    Data,
    File,
    Interrupt,
    Message,
    MessageMetadata,
    MessagesSnapshot,
    Raw,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunStarted,
    Source,
    StateDelta,
    StateSnapshot,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextPart,
    TextStart,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
)
from streamkit.testing import validate
from tests.agui.model import expect, repaired, same
from tests.agui.strategies import careful_runs, sloppy_runs
from tests.agui.support import HISTORY, body_of, client_run, client_runs, custom_events, frames_of
from tests.support.oracle import JsOracle

EVERY_EVENT: list[ChatEvent] = [
    RunStarted(thread_id="th", run_id="run", metadata={"model": "m"}),
    StepStarted(name="plan"),
    StateSnapshot(state={"todos": [], "a/b": {"~": 1}}),
    ReasoningStart(id="r1"),
    ReasoningDelta(id="r1", delta="Let me think"),
    ReasoningEnd(id="r1", encrypted_value="opaque"),
    TextStart(id="t1"),
    TextDelta(id="t1", delta="Checking the weather… "),
    TextDelta(id="t1", delta="🌤"),
    TextEnd(id="t1"),
    ToolCallStart(id="c1", name="get_weather", title="Weather"),
    ToolCallArgsDelta(id="c1", delta='{"city":'),
    ToolCallArgsDelta(id="c1", delta='"Paris"}'),
    ToolCallEnd(id="c1", input={"city": "Paris"}),
    ToolResult(id="c1", output={"tempC": 21.0}),
    ToolCallEnd(id="c2", name="lookup", input={"q": 1.5}),
    ToolResult(id="c2", output="partial", preliminary=True),
    ToolResult(id="c2", error="lookup failed"),
    ToolCallStart(id="c3", name="delete_files"),
    ToolCallEnd(id="c3", input={"path": "/tmp"}),
    ToolApprovalRequest(id="ap1", tool_call_id="c3", reason="Delete /tmp?"),
    ToolApprovalResponse(id="ap1", approved=False, reason="no"),
    ToolResult(id="c3", denied=True),
    StateUpdate(state={"todos": ["write tests"], "a/b": {"~": 2}, "big": list(range(20))}),
    StateUpdate(state={"todos": ["write tests", "ship"], "a/b": {"~": 2}, "big": list(range(20))}),
    StateDelta(patch=[{"op": "add", "path": "/todos/-", "value": "rest"}]),
    Data(name="weather", data={"tempC": 21}, id="w1"),
    Data(name="progress", data=0.5, transient=True),
    Source(id="s1", url="https://example.com", title="Example"),
    File(url="data:text/plain;base64,aGk=", media_type="text/plain"),
    MessageMetadata(metadata={"model": "gpt"}),
    Custom(name="app.toast", value={"text": "hi"}),
    Raw(event={"provider": "event"}, source="openai"),
    StepFinished(name="plan"),
    TextStart(id="t2"),
    TextDelta(id="t2", delta="It is 21 °C."),
    TextEnd(id="t2"),
    RunFinished(usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15), result={"ok": True}),
]


def test_every_event_type_reaches_the_client_as_meant(js: JsOracle) -> None:
    body = body_of(EVERY_EVENT, state={})
    run = client_run(js, body)
    assert run["outcome"] == "interrupt"  # the pending approval turns the finish into an interrupt
    assert run["interrupts"] == [
        {
            "id": "ap1",
            "reason": "tool_approval",
            "toolCallId": "c3",
            "message": "Delete /tmp?",
            "responseSchema": APPROVAL_SCHEMA,
        }
    ]
    messages = run["messages"]
    # c2 comes after c1's result and c3 after c2's: each starts a new assistant message (named after it).
    ids = ["h-user", "r1", "t1", "c1-result", "c2", "c2-result", "c3", "c3-result", "t2"]
    assert [m["id"] for m in messages] == ids
    assert messages[1] == {"id": "r1", "role": "reasoning", "content": "Let me think", "encryptedValue": "opaque"}
    assert messages[2] == {
        "id": "t1",
        "role": "assistant",
        "content": "Checking the weather… 🌤",
        "toolCalls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                "metadata": {"title": "Weather"},
            },
        ],
    }
    assert messages[3] == {"id": "c1-result", "toolCallId": "c1", "role": "tool", "content": '{"tempC":21}'}
    assert messages[4] == {
        "id": "c2",
        "role": "assistant",
        "toolCalls": [
            {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": '{"q":1.5}'}},
        ],
    }
    assert messages[5] == {
        "id": "c2-result",
        "toolCallId": "c2",
        "role": "tool",
        "content": "lookup failed",
        "metadata": {"isError": True},
    }
    assert messages[6] == {
        "id": "c3",
        "role": "assistant",
        "toolCalls": [
            {"id": "c3", "type": "function", "function": {"name": "delete_files", "arguments": '{"path":"/tmp"}'}}
        ],
    }
    assert messages[7]["metadata"] == {"denied": True}
    assert messages[8] == {"id": "t2", "role": "assistant", "content": "It is 21 °C."}
    assert run["state"] == {"todos": ["write tests", "ship", "rest"], "a/b": {"~": 2}, "big": list(range(20))}
    assert custom_events(run) == [
        {"name": agui.PRELIMINARY_TOOL_RESULT, "value": {"toolCallId": "c2", "output": "partial"}},
        {"name": agui.TOOL_APPROVAL_RESPONSE, "value": {"id": "ap1", "approved": False, "reason": "no"}},
        {"name": agui.DATA, "value": {"name": "weather", "data": {"tempC": 21}, "id": "w1"}},
        {"name": agui.DATA, "value": {"name": "progress", "data": 0.5, "transient": True}},
        {"name": agui.SOURCE, "value": {"id": "s1", "url": "https://example.com", "title": "Example"}},
        {"name": agui.FILE, "value": {"url": "data:text/plain;base64,aGk=", "mediaType": "text/plain"}},
        {"name": agui.MESSAGE_METADATA, "value": {"model": "gpt"}},
        {"name": "app.toast", "value": {"text": "hi"}},
    ]
    types = [e["type"] for e in run["events"]]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    for kind in (
        "STEP_STARTED",
        "STEP_FINISHED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_END",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "RAW",
        "TOOL_CALL_RESULT",
    ):
        assert kind in types, kind
    assert not any(t.startswith("THINKING") for t in types)
    # The same run, folded in Python, and as the expectation model says.
    meant = expect(repaired(EVERY_EVENT), messages=HISTORY, state={})
    assert same(run["messages"], meant["messages"]) and same(run["state"], meant["state"])
    folded = agui.fold(frames_of(body), messages=HISTORY, state={})
    assert same(folded.messages, run["messages"]) and same(folded.state, run["state"])


def test_success_result_usage_and_pending_frontend_tool(js: JsOracle) -> None:
    events = [
        RunStarted(),
        TextStart(id="t"),
        TextDelta(id="t", delta="Let me ask the browser."),
        TextEnd(id="t"),
        ToolCallEnd(id="fc", name="confirm", input={"question": "OK?"}),
        RunFinished(finish_reason="tool-calls", result={"n": 1}, usage=Usage(input_tokens=1, model="m")),
    ]
    run = client_run(js, body_of(events, state={}))
    assert run["outcome"] == "success"
    assert run["pendingToolCallIds"] == ["fc"]
    assert run["result"] == {"n": 1}
    finished = run["events"][-1]
    assert finished["usage"] == [{"model": "m", "inputTokens": 1}]
    assert finished["metadata"] == {"finishReason": "tool-calls"}


def test_abort_is_a_cancelled_finish_and_error_keeps_its_words(js: JsOracle) -> None:
    aborted = client_run(
        js,
        body_of([RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="x"), RunAborted(reason="user")], state={}),
    )
    assert aborted["outcome"] == "cancelled"
    assert aborted["events"][-2] == {"type": "TEXT_MESSAGE_END", "messageId": "t"}
    errored = client_run(
        js,
        body_of(
            [RunStarted(), ToolCallStart(id="c", name="f"), RunError(message="quota exceeded", code="429")], state={}
        ),
    )
    assert errored["runError"] == {"message": "quota exceeded", "code": "429"}
    assert errored["outcome"] is None


def test_agent_exception_mid_stream_ends_with_a_masked_run_error(js: JsOracle) -> None:
    async def agent() -> Any:
        yield RunStarted()
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="half")
        raise RuntimeError("secret database password")

    seen: list[BaseException] = []
    body = body_of(agent(), state={}, on_error=seen.append)
    assert "secret" not in body
    run = client_run(js, body)
    assert run["runError"] == {"message": "An error occurred."}
    assert run["messages"][-1] == {"id": "t", "role": "assistant", "content": "half"}
    assert isinstance(seen[0], RuntimeError)
    exposed = frames_of(body_of(agent(), state={}, expose_errors=True))
    assert exposed[-1] == {"type": "RUN_ERROR", "message": "secret database password"}


def test_failure_before_anything_still_starts_the_run(js: JsOracle) -> None:
    async def agent() -> Any:
        raise ValueError("boom")
        yield RunStarted()  # pragma: no cover

    body = body_of(agent(), state={})
    assert [f["type"] for f in frames_of(body)] == ["RUN_STARTED", "RUN_ERROR"]
    assert client_run(js, body)["runError"] == {"message": "An error occurred."}


def test_unsendable_result_fails_the_run_instead_of_tearing_it(js: JsOracle) -> None:
    body = body_of([RunStarted(), RunFinished(result={"x": object()})], state={})
    frames = frames_of(body)
    assert [f["type"] for f in frames] == ["RUN_STARTED", "RUN_ERROR"]
    assert client_run(js, body)["runError"] is not None


def test_interrupt_outcome_and_resume_round_trip(js: JsOracle) -> None:
    first = body_of(
        [
            RunStarted(),
            RunFinished(
                interrupts=[
                    Interrupt(
                        id="i1",
                        reason="confirm",
                        message="Go?",
                        response_schema={"type": "boolean"},
                        expires_at="2999-01-01T00:00:00Z",
                        metadata={"k": 1},
                    )
                ]
            ),
        ],
        state={},
    )
    second = body_of(
        [RunStarted(), ToolApprovalResponse(id="i1", approved=True), RunFinished()], state={}, known_approvals=["i1"]
    )
    result = client_runs(
        js,
        [
            {"body": first},
            {"body": second, "parameters": {"resume": [{"interruptId": "i1", "status": "resolved", "payload": True}]}},
        ],
    )
    one, two = result["runs"]
    assert one["outcome"] == "interrupt"
    assert one["interrupts"] == [
        {
            "id": "i1",
            "reason": "confirm",
            "message": "Go?",
            "responseSchema": {"type": "boolean"},
            "expiresAt": "2999-01-01T00:00:00Z",
            "metadata": {"k": 1},
        }
    ]
    assert two["request"]["body"]["resume"] == [{"interruptId": "i1", "status": "resolved", "payload": True}]
    parsed = agui.to_run_input(agui.parse_run_agent_input(two["request"]["body"]))
    assert parsed.resume[0].interrupt_id == "i1" and parsed.resume[0].payload is True
    assert two["outcome"] == "success" and result["pendingInterrupts"] == []
    assert custom_events(two) == [{"name": agui.TOOL_APPROVAL_RESPONSE, "value": {"id": "i1", "approved": True}}]


def test_frontend_tool_round_trip_through_the_request(js: JsOracle) -> None:
    """Spec 10.5: the agent calls a client tool and finishes; the client answers in the next request."""
    first = body_of(
        [
            RunStarted(),
            TextStart(id="t1"),
            TextDelta(id="t1", delta="Asking."),
            TextEnd(id="t1"),
            ToolCallStart(id="fc1", name="pick_color"),
            ToolCallArgsDelta(id="fc1", delta="{}"),
            ToolCallEnd(id="fc1"),
            RunFinished(finish_reason="tool-calls"),
        ],
        state={},
    )
    tool_answer = {"id": "tm1", "role": "tool", "toolCallId": "fc1", "content": '"red"'}
    probe = body_of([RunStarted(), RunFinished()], state={})
    result = client_runs(
        js,
        [
            {
                "body": first,
                "parameters": {
                    "tools": [{"name": "pick_color", "description": "Pick a color", "parameters": {"type": "object"}}]
                },
            },
            {"body": probe, "addMessages": [tool_answer]},
        ],
    )
    one, two = result["runs"]
    assert one["pendingToolCallIds"] == ["fc1"]
    body = agui.parse_run_agent_input(two["request"]["body"])
    run = agui.to_run_input(body)
    assistant, tool = run.messages[1], run.messages[2]
    assert [p.type for p in assistant.parts] == ["text", "tool-call"]
    assert tool.parts[0].model_dump(exclude_none=True) == {
        "type": "tool-result",
        "id": "fc1",
        "name": "pick_color",
        "output": '"red"',
        "denied": False,
    }
    # The client answered the call: a mapper for this request knows it is no longer pending...
    assert [f["type"] for f in mapper_for(body, run).feed(ToolResult(id="fc1", output="again"))] == ["RUN_STARTED"]
    # ...while for a request that still leaves it open, the agent may answer it (a backend result).
    unanswered = agui.parse_run_agent_input(
        {**two["request"]["body"], "messages": two["request"]["body"]["messages"][:-1]}
    )
    frames = mapper_for(unanswered, agui.to_run_input(unanswered)).feed(ToolResult(id="fc1", output="ok"))
    assert [f["type"] for f in frames] == ["RUN_STARTED", "TOOL_CALL_RESULT"]


def test_messages_snapshot_mid_stream_keeps_the_open_message_streaming(js: JsOracle) -> None:
    events = [
        RunStarted(),
        TextStart(id="t"),
        TextDelta(id="t", delta="before "),
        ToolCallStart(id="c", name="f"),
        ToolCallArgsDelta(id="c", delta='{"a":'),
        ReasoningStart(id="r"),
        ReasoningDelta(id="r", delta="hm"),
        MessagesSnapshot(messages=[Message(id="h-user", role="user", parts=[TextPart(text="edited")])]),
        TextDelta(id="t", delta="after"),
        ToolCallArgsDelta(id="c", delta="1}"),
        ReasoningDelta(id="r", delta="m"),
        RunFinished(),
    ]
    run = client_run(js, body_of(events, state={}))
    by_id = {m["id"]: m for m in run["messages"]}
    assert by_id["h-user"]["content"] == "edited"
    assert by_id["t"]["content"] == "after"  # the snapshot is authoritative; the message keeps streaming
    assert by_id["r"]["content"] == "hmm"  # streamed reasoning survives a snapshot without reasoning
    assert by_id["t"]["toolCalls"][0]["function"]["arguments"] == "1}"


def test_bytes_split_anywhere_give_the_same_result(js: JsOracle) -> None:
    """The client decodes a body that arrives in arbitrary pieces, even in the middle of a UTF-8 character."""
    body = body_of(EVERY_EVENT, state={})
    raw = body.encode()
    multibyte = raw.index("🌤".encode()) + 1
    cuts = sorted({1, 7, multibyte, len(raw) // 3, len(raw) // 2 + 1, len(raw) - 2})
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    whole = client_run(js, body)
    chunked = client_runs(js, [{"chunksBase64": [base64.b64encode(p).decode() for p in pieces]}])["runs"][0]
    assert chunked["failed"] is None
    assert chunked["messages"] == whole["messages"] and chunked["state"] == whole["state"]


def test_state_deltas_start_from_the_state_the_request_carried(js: JsOracle) -> None:
    start = {"count": 1, "items": ["a"] * 30}
    events = [RunStarted(), StateUpdate(state={"count": 2, "items": ["a"] * 30}), RunFinished()]
    body = body_of(events, state=start)
    assert frames_of(body)[1] == {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": 2}]}
    assert client_run(js, body, state=start)["state"] == {"count": 2, "items": ["a"] * 30}


def _compare(js: JsOracle, events: list[ChatEvent], client: str = "1.0") -> None:
    """``events`` through the real client of generation ``client`` ("1.0", or "0.0" for @ag-ui/client 0.0.59,
    which declares no protocol version and knows no cancelled outcome) mean what they meant."""
    state = {"seed": [1, True]}
    version = "1.0" if client == "1.0" else None
    body = body_of(events, state=state, reserved_ids=[m["id"] for m in HISTORY], protocol_version=version)
    frames = frames_of(body)
    assert frames[0]["type"] == "RUN_STARTED"
    assert sum(f["type"] in ("RUN_FINISHED", "RUN_ERROR") for f in frames) == 1
    assert frames[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    report = validate(body, "agui", client, messages=HISTORY, state=state)
    # streamkit announces its protocol version in RUN_STARTED, a field the 0.0 client removes unread
    assert report.ok and report.rules() <= {"agui.field-not-in-version"}, report.format()
    meant = expect(repaired(events), messages=HISTORY, state=state)
    folded = agui.fold(frames, messages=HISTORY, state=state)
    run = client_run(js, body, state=state, client=client)
    ids = [m["id"] for m in run["messages"]]
    assert len(ids) == len(set(ids)), ids
    assert same(run["messages"], meant["messages"]), (run["messages"], meant["messages"])
    # 0.0.59 keeps the previous state when the new one is null, false or 0 (`t.state && ...` in the client):
    # no encoding can change that, so a falsy final state is not compared there (see the test below).
    if client == "1.0" or meant["state"]:
        assert same(run["state"], meant["state"])
    assert same(folded.messages, meant["messages"]) and same(folded.state, meant["state"])
    assert folded.warnings == []
    assert same(custom_events(run), meant["custom"])
    if meant["outcome"] == "cancelled" and client != "1.0":
        # A stop reaches a pre-1.0 client as a successful finish marked cancelled.
        assert run["outcome"] == "success"
        assert frames[-1]["metadata"]["cancelled"] is True and "outcome" not in frames[-1]
    elif meant["outcome"] == "error":
        assert run["runError"] == meant["error"]
    else:
        assert run["outcome"] == meant["outcome"]
    if meant["outcome"] == "success":
        if client == "1.0":  # 0.0.59 reports no pending tool calls
            assert run["pendingToolCallIds"] == meant["pending"]
        assert same(run["result"], meant["result"])
    if meant["outcome"] == "interrupt":
        assert same(run["interrupts"], meant["interrupts"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(careful_runs())
def test_generated_runs_mean_the_same_to_the_client(js: JsOracle, events: list[ChatEvent]) -> None:
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    _compare(js, events)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sloppy_runs)
def test_sloppy_runs_are_repaired_into_streams_the_client_accepts(js: JsOracle, events: list[ChatEvent]) -> None:
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    _compare(js, events)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(careful_runs())
def test_generated_runs_mean_the_same_to_the_0_0_client(js: JsOracle, events: list[ChatEvent]) -> None:
    """@ag-ui/client 0.0.59 (pinned by CopilotKit) accepts every generated run, the stopped ones too."""
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    _compare(js, events, client="0.0")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sloppy_runs)
def test_sloppy_runs_are_accepted_by_the_0_0_client(js: JsOracle, events: list[ChatEvent]) -> None:
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    _compare(js, events, client="0.0")


def test_a_stop_reaches_each_client_generation_in_its_own_form(js: JsOracle) -> None:
    events = [RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="x"), RunAborted(reason="user")]
    new = client_run(js, body_of(events, state={}), client="1.0")
    assert new["outcome"] == "cancelled"
    assert new["events"][-1]["outcome"] == {"type": "cancelled"}
    old = client_run(js, body_of(events, state={}, protocol_version=None), client="0.0")
    assert old["outcome"] == "success"
    assert old["events"][-1]["metadata"] == {"cancelled": True, "reason": "user"}
    assert old["messages"][-1] == {"id": "t", "role": "assistant", "content": "x"}
    # The cancelled outcome itself is what 0.0.59 rejects, whole run and all:
    rejected = client_runs(js, [{"body": body_of(events, state={})}], client="0.0", allow_warnings=True)["runs"][0]
    assert rejected["failed"] is not None and "outcome" in rejected["failed"]


def test_the_0_0_client_keeps_its_state_when_the_new_one_is_falsy(js: JsOracle) -> None:
    """A known limit of @ag-ui/client 0.0.59 that no encoding can work around (1.0 holds the new state)."""
    for falsy in (None, False, 0):
        events = [RunStarted(), StateSnapshot(state={"a": 1}), StateSnapshot(state=falsy), RunFinished()]
        assert client_run(js, body_of(events, state={}), client="1.0")["state"] == falsy
        old = client_run(js, body_of(events, state={}, protocol_version=None), client="0.0")
        assert old["state"] == {"a": 1}


def test_ids_that_would_collide_are_renamed(js: JsOracle) -> None:
    events = [
        RunStarted(message_id="c-result"),  # the id a result for call "c" would get
        ToolCallStart(id="c", name="f"),
        ToolResult(id="c", output=1),
        ToolResult.model_validate({"id": "c", "output": 2, "preliminary": True}),
        TextStart(id="h-user"),  # already in the client's history
        TextDelta(id="h-user", delta="new"),
        TextEnd(id="h-user"),
        ReasoningStart(id="h-user"),
        ReasoningEnd(id="h-user"),
        ToolCallEnd(id="d", name="g"),
        ToolResult(id="d", output=3, message_id="h-user"),
        RunFinished(),
    ]
    run = client_run(js, body_of(events, state={}, reserved_ids=["h-user"]))
    ids = [m["id"] for m in run["messages"]]
    assert ids == ["h-user", "c-result", "c-result-2", "h-user-2", "h-user-3", "h-user-reasoning"]
    assert run["messages"][3] == {
        "id": "h-user-2",
        "role": "assistant",
        "content": "new",
        "toolCalls": [{"id": "d", "type": "function", "function": {"name": "g", "arguments": ""}}],
    }


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                TextStart(id="x"),
                TextDelta(id="x", delta="d"),
                ReasoningStart(id="x"),
                ReasoningDelta(id="x", delta="r"),
                ToolCallStart(id="x", name="f"),
                ToolResult(id="x", output=1),
            ]
        ),
        max_size=12,
    )
)
def test_one_id_for_every_kind_never_collides_on_the_client(js: JsOracle, events: list[ChatEvent]) -> None:
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    body = body_of(
        [RunStarted(message_id="x-result"), *events, TextStart(id="h-user"), TextDelta(id="h-user", delta="!")],
        state={},
        reserved_ids=["h-user"],
    )
    run = client_run(js, body)
    ids = [m["id"] for m in run["messages"]]
    assert len(ids) == len(set(ids)), ids
    assert run["messages"][0] == HISTORY[0]


def test_text_written_into_the_runs_assistant_message(js: JsOracle) -> None:
    """A core that names its assistant message and uses that id for its text gets one message, not two."""
    events = [
        RunStarted(message_id="m1"),
        ToolCallEnd(id="c", name="f", input={}),
        ToolResult(id="c", output="ok"),
        TextStart(id="m1"),
        TextDelta(id="m1", delta="done"),
        TextEnd(id="m1"),
        ReasoningStart(id="m1"),
        ReasoningEnd(id="m1"),
        RunFinished(),
    ]
    run = client_run(js, body_of(events, state={}))
    assert [(m["id"], m["role"]) for m in run["messages"]] == [
        ("h-user", "user"),
        ("m1", "assistant"),
        ("c-result", "tool"),
        ("m1-reasoning", "reasoning"),
    ]
    assert run["messages"][1]["content"] == "done" and run["messages"][1]["toolCalls"][0]["id"] == "c"
    # Continuing a message of the history: the run names it, its text is appended to it.
    history = [*HISTORY, {"id": "a0", "role": "assistant", "content": "Hello"}]
    body = body_of(
        [RunStarted(message_id="a0"), TextStart(id="a0"), TextDelta(id="a0", delta=", again"), RunFinished()],
        state={},
        reserved_ids=["h-user", "a0"],
    )
    assert client_run(js, body, messages=history)["messages"][-1] == {
        "id": "a0",
        "role": "assistant",
        "content": "Hello, again",
    }


EMPTY_DELTAS: list[ChatEvent] = [
    RunStarted(),
    ReasoningStart(id="r"),
    ReasoningDelta(id="r", delta=""),
    ReasoningEnd(id="r"),
    TextStart(id="t"),
    TextDelta(id="t", delta=""),
    TextDelta(id="t", delta="Hi"),
    TextDelta(id="t", delta=""),
    TextEnd(id="t"),
    TextDelta(id="implied", delta=""),  # opens the message, sends no content
    TextEnd(id="implied"),
    ToolCallStart(id="c", name="f"),
    ToolCallArgsDelta(id="c", delta=""),
    ToolCallArgsDelta(id="c", delta='{"a":1}'),
    ToolCallArgsDelta(id="c", delta=""),
    ToolCallEnd(id="c"),
    ToolCallStart(id="c2", name="g"),
    ToolCallArgsDelta(id="c2", delta=""),
    ToolCallEnd(id="c2", input={"b": 2}),  # nothing streamed: the final input goes as the arguments
    RunFinished(),
]


@pytest.mark.parametrize("ready", [True, False], ids=["list", "async"])
def test_empty_deltas_send_no_event_but_open_and_close_their_message(js: JsOracle, ready: bool) -> None:
    async def agent() -> Any:
        for event in EMPTY_DELTAS:
            yield event

    frames = frames_of(body := body_of(list(EMPTY_DELTAS) if ready else agent(), state={}))
    assert not [f for f in frames if f.get("delta") == ""]
    types = [f["type"] for f in frames]
    assert types.count("TEXT_MESSAGE_START") == types.count("TEXT_MESSAGE_END") == 2
    assert types.count("REASONING_MESSAGE_START") == types.count("REASONING_MESSAGE_END") == 1
    assert types.count("TEXT_MESSAGE_CONTENT") == 1 and types.count("REASONING_MESSAGE_CONTENT") == 0
    assert [f["delta"] for f in frames if f["type"] == "TOOL_CALL_ARGS"] == ['{"a":1}', '{"b":2}']
    run = client_run(js, body)
    assert run["outcome"] == "success"
    by_id = {m["id"]: m for m in run["messages"]}
    assert by_id["t"]["content"] == "Hi"
    assert by_id["implied"]["content"] == ""
    assert [c["function"]["arguments"] for c in by_id["implied"]["toolCalls"]] == ['{"a":1}', '{"b":2}']
