"""``streamkit.sources.agui``: AG-UI events back to ChatEvents, proven by protocol round trips through the real
clients (streamkit's AG-UI output fed to the source and re-encoded for ``useChat`` must give the ``ai`` client
the message the direct AI SDK encoding gives), a ``RemoteAGUIAgent`` in front of a live AG-UI server, and the
failures a remote server can cause."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from starlette.applications import Starlette

from streamkit import agui, aisdk
from streamkit.agui.state import diff
from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import create_app
from streamkit.events import (
    ChatEvent,
    Custom,
    Data,
    File,
    Message,
    MessagesSnapshot,
    ProviderPart,
    Raw,
    ReasoningEnd,
    RunAborted,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    Source,
    StateDelta,
    StateSnapshot,
    StateUpdate,
    TextDelta,
    TextEnd,
    TextPart,
    TextStart,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
)
from streamkit.events.input import ApprovalState, ContextItem, ResumeEntry, Tool
from streamkit.patch import PatchError, apply_patch
from streamkit.sources.agui import AGUITranslator, RemoteAGUIAgent, chat_events, to_run_agent_input
from tests.agui.model import repaired
from tests.aisdk.strategies import FULL_RUN, describe, well_formed_runs
from tests.support.oracle import JsOracle
from tests.support.streams import collect, collect_bytes, parse_agui_sse

pytestmark = pytest.mark.usefixtures("quiet")


def agui_frames(events: list[ChatEvent], state: Any = None) -> list[dict[str, Any]]:
    return parse_agui_sse(collect_bytes(agui.encode(events, thread_id="th", run_id="run", state=state)))


def translated(frames: list[dict[str, Any]], state: Any = None) -> list[ChatEvent]:
    return collect(chat_events(frames, state=state))


def aisdk_body(events: list[ChatEvent]) -> str:
    return b"".join(collect(aisdk.encode(events))).decode()


def use_chat(js: JsOracle, body: str) -> dict[str, Any]:
    answer = js.call("aisdk", {"body": body, "version": 7})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == [], answer["warnings"]
    result: dict[str, Any] = answer["result"]
    return result


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def through_agui(events: list[ChatEvent]) -> list[ChatEvent]:
    """What AG-UI carries of a run, as ChatEvents: the direct encoding these must match.

    AG-UI has no assistant message id of the run; a tool approval is an interrupt of ``RUN_FINISHED`` (so it
    comes at the end, and an answer within the same run has nothing to answer yet); a tool result is a content
    string (read back as JSON when it is JSON); a provider part is a ``CUSTOM`` event; files and sources carry
    no provider metadata.
    """
    out: list[ChatEvent] = []
    approvals: list[ChatEvent] = []
    state: Any = {}
    for ev in repaired(events):
        if isinstance(ev, StateSnapshot):
            state = ev.state
        elif isinstance(ev, StateUpdate):
            if diff(state, ev.state) == []:
                continue  # nothing changed: AG-UI sends nothing
            state = ev.state
        elif isinstance(ev, StateDelta):
            try:
                state = apply_patch(state, ev.patch)
            except PatchError:
                continue
        if isinstance(ev, ToolApprovalRequest):
            approvals.append(ev)
            continue
        if isinstance(ev, ToolApprovalResponse) and any(a.id == ev.id for a in approvals):  # type: ignore[union-attr]
            continue
        if isinstance(ev, RunStarted):
            ev = ev.model_copy(update={"message_id": None})
        elif isinstance(ev, ToolResult):
            ev = ev.model_copy(update={"output": _parsed(ev.output), "message_id": None})
        elif isinstance(ev, ToolCallEnd) and ev.error is not None:
            ev = ev.model_copy(update={"input": _parsed(ev.input)})
        elif isinstance(ev, ProviderPart):
            ev = Custom(name=ev.kind, value=ev.provider_metadata)
        elif isinstance(ev, File | Source):
            ev = ev.model_copy(update={"provider_metadata": None})
        elif isinstance(ev, TextEnd) and ev.citations:
            cited = [
                c.model_copy(update={"source": c.source.model_copy(update={"provider_metadata": None})})
                for c in ev.citations
            ]
            ev = ev.model_copy(update={"citations": cited})
        elif isinstance(ev, RunFinished):
            out += approvals
            if ev.usage is not None and not ev.usage.model_dump(exclude_none=True):
                ev = ev.model_copy(update={"usage": None})  # an empty usage is not sent
        out.append(ev)
    return out


def without_id(result: dict[str, Any]) -> dict[str, Any]:
    message = dict(result["message"] or {})
    message.pop("id", None)
    # AG-UI message ids are unique: a steering message whose id is taken arrives renamed (``u1-2``).
    message["parts"] = [
        {k: v for k, v in p.items() if not (k == "id" and p["type"] == "steering-message")}
        for p in message.get("parts", ())
    ]
    return {
        "message": message,
        "error": result["error"],
        "finishReason": result["finishReason"],
        "status": result["status"],
    }


def _round_trip(js: JsOracle, events: list[ChatEvent]) -> None:
    frames = agui_frames(events, state={})
    back = translated(frames, state={})
    got = use_chat(js, aisdk_body(back))
    meant = use_chat(js, aisdk_body(through_agui(events)))
    assert without_id(got) == without_id(meant), (describe(events), describe(back))


# -- protocol round trips ---------------------------------------------------------------------------


def test_a_full_run_round_trips_to_the_ai_sdk_client(js: JsOracle) -> None:
    _round_trip(js, FULL_RUN)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(events=well_formed_runs())
@example(  # an integral float beyond 64 bits: AG-UI writes its digits, which read back as a Python int
    events=[RunStarted(), ToolCallEnd(id="c1", name="lookup", input={"n": 1e20}), RunFinished()]
)
def test_generated_runs_round_trip_to_the_ai_sdk_client(js: JsOracle, events: list[ChatEvent]) -> None:
    _round_trip(js, events)


def test_agui_output_translates_back_to_the_same_agui_run(js: JsOracle) -> None:
    """AG-UI -> source -> AG-UI: the real AG-UI client ends with the same messages and state."""
    from tests.agui.support import HISTORY, client_run

    events = [e for e in FULL_RUN if not isinstance(e, MessagesSnapshot)]
    direct = agui_frames(events, state={})
    again = agui_frames(translated(direct, state={}), state={})
    body = "".join(f"data: {json.dumps(f)}\n\n" for f in direct)
    body_again = "".join(f"data: {json.dumps(f)}\n\n" for f in again)
    one, two = client_run(js, body, messages=HISTORY), client_run(js, body_again, messages=HISTORY)
    assert one["messages"] == two["messages"] and one["state"] == two["state"]
    assert one["interrupts"] == two["interrupts"] and one["outcome"] == two["outcome"]


# -- the translator ---------------------------------------------------------------------------------


def test_chunk_events_expand_as_the_client_expands_them() -> None:
    frames = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "m1", "delta": '{"a"'},
        {"type": "TOOL_CALL_CHUNK", "delta": ":1}"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r1", "delta": "hm"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    events = translated(frames)
    assert [e.type for e in events] == [
        "run-started", "text-start", "text-delta", "text-delta", "text-end", "tool-call-start",
        "tool-call-args-delta", "tool-call-args-delta", "tool-call-end", "reasoning-start", "reasoning-delta",
        "reasoning-end", "run-finished",
    ]  # fmt: skip
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end.input == {"a": 1}
    assert next(e for e in events if isinstance(e, ToolCallStart)).parent_message_id == "m1"
    with pytest.raises(ValueError, match="must have a messageId"):
        AGUITranslator().feed({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"})


def test_state_snapshot_and_deltas_come_out_as_state_updates() -> None:
    frames = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 1}]},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/missing/x", "value": 1}]},  # dropped
        {"type": "STATE_SNAPSHOT", "snapshot": [1]},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/-", "value": 2}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    states = [e.state for e in translated(frames, state={"seed": True}) if isinstance(e, StateUpdate)]
    assert states == [{"seed": True, "n": 1}, [1], [1, 2]]


def test_outcomes_interrupts_and_errors() -> None:
    finished = translated(
        [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {
                "type": "RUN_FINISHED",
                "threadId": "t",
                "runId": "r",
                "result": {"ok": 1},
                "usage": [{"model": "m", "inputTokens": 3}],
                "metadata": {"finishReason": "tool-calls", "k": 1},
                "outcome": {
                    "type": "interrupt",
                    "interrupts": [
                        {"id": "ap", "reason": "tool_approval", "toolCallId": "c", "message": "Sure?"},
                        {"id": "i1", "reason": "confirm", "responseSchema": {"type": "boolean"}},
                    ],
                },
            },
            {"type": "TEXT_MESSAGE_START", "messageId": "late"},  # after the end: ignored
        ]
    )
    approval, end = finished[1], finished[2]
    assert approval == ToolApprovalRequest(id="ap", tool_call_id="c", reason="Sure?")
    assert isinstance(end, RunFinished) and end.finish_reason == "tool-calls" and end.metadata == {"k": 1}
    assert end.result == {"ok": 1} and end.usage is not None and end.usage.input_tokens == 3
    assert end.interrupts is not None and end.interrupts[0].response_schema == {"type": "boolean"}
    assert len(finished) == 3
    cancelled = translated([{"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "cancelled"}}])
    assert cancelled == [RunAborted()]
    assert translated([{"type": "RUN_ERROR", "message": "quota", "code": "429"}]) == [
        RunError(message="quota", code="429")
    ]


def test_activity_subagents_legacy_and_unknown_events() -> None:
    frames = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "plan", "content": {"steps": []}},
        {
            "type": "ACTIVITY_DELTA",
            "messageId": "a1",
            "activityType": "plan",
            "patch": [{"op": "add", "path": "/steps/-", "value": "x"}],
        },
        {"type": "ACTIVITY_DELTA", "messageId": "nope", "activityType": "plan", "patch": []},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "helper"},
        {"type": "THINKING_TEXT_MESSAGE_START", "messageId": "th"},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "messageId": "th", "delta": "old"},
        {"type": "THINKING_TEXT_MESSAGE_END", "messageId": "th"},
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "th", "encryptedValue": "blob"},
        {"type": "RAW", "event": {"x": 1}, "source": "p"},
        {"type": "CUSTOM", "name": "app.toast", "value": None},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    events = translated(frames)
    data = [e for e in events if isinstance(e, Data)]
    assert [(d.name, d.id, d.data) for d in data] == [
        ("activity-plan", "a1", {"steps": []}),
        ("activity-plan", "a1", {"steps": ["x"]}),
    ]
    assert any(isinstance(e, Raw) and e.source == "ag-ui" and e.event["type"] == "SUBAGENT_STARTED" for e in events)
    assert next(e for e in events if isinstance(e, ReasoningEnd)).encrypted_value == "blob"
    assert Raw(event={"x": 1}, source="p") in events and Custom(name="app.toast") in events


def test_a_snapshot_mid_stream_does_not_split_the_open_blocks() -> None:
    events = [
        RunStarted(),
        TextStart(id="t"),
        TextDelta(id="t", delta="before "),
        ToolCallStart(id="c", name="f"),
        ToolCallArgsDelta(id="c", delta='{"a":'),
        MessagesSnapshot(messages=[Message(id="u", role="user", parts=[TextPart(text="hi")])]),
        TextDelta(id="t", delta="after"),
        ToolCallArgsDelta(id="c", delta="1}"),
        ToolCallEnd(id="c"),
        TextEnd(id="t"),
        RunFinished(),
    ]
    back = translated(agui_frames(events))
    kinds = [e.type for e in back]
    assert kinds.count("text-start") == 1 and kinds.count("text-end") == 1 and kinds.count("tool-call-start") == 1
    assert next(e for e in back if isinstance(e, ToolCallEnd)).input == {"a": 1}
    snapshot = next(e for e in back if isinstance(e, MessagesSnapshot))
    assert snapshot.messages == [Message(id="u", role="user", parts=[TextPart(text="hi")])]


def test_bad_frames_end_the_run_with_an_error() -> None:
    events = translated([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, {"no": "type"}])
    assert isinstance(events[-1], RunError) and events[-1].code == "invalid_event"

    async def broken() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
        raise ConnectionError("gone")

    events = collect(chat_events(broken()))
    assert events[-1] == RunError(message="gone", code="source_error")


# -- the input -----------------------------------------------------------------------------------------


def test_run_input_becomes_the_run_agent_input_the_agui_request_reads_back() -> None:
    run = RunInput(
        thread_id="th",
        run_id="r2",
        parent_run_id="r1",
        messages=[
            Message(id="u1", role="user", parts=[TextPart(text="delete it")]),
            Message(
                id="a1",
                role="assistant",
                parts=[
                    TextPart(text="Sure."),
                    ToolCallPart(
                        id="c1",
                        name="delete",
                        input={"p": 1},
                        approval=ApprovalState(id="ap1", approved=False, reason="no"),
                    ),
                    ToolCallPart(id="c2", name="look", input={}),
                    ToolResultPart(id="c2", name="look", output={"ok": True}),
                ],
            ),
        ],
        state={"n": 1},
        tools=[Tool(name="confirm", description="Ask", parameters={"type": "object"})],
        context=[ContextItem(description="tz", value="UTC")],
        forwarded_props={"x": 1},
        resume=[ResumeEntry(interrupt_id="i9", status="cancelled")],
    )
    body = to_run_agent_input(run)
    assert body["resume"] == [
        {"interruptId": "i9", "status": "cancelled"},
        {"interruptId": "ap1", "status": "resolved", "payload": {"approved": False, "reason": "no"}},
    ]
    back = agui.to_run_input(agui.parse_run_agent_input(body))
    assert back.thread_id == "th" and back.run_id == "r2" and back.parent_run_id == "r1"
    assert back.state == {"n": 1} and back.forwarded_props == {"x": 1}
    assert back.tools == run.tools and back.context == run.context
    assert [m.text for m in back.messages] == ["delete it", "Sure.", ""]
    calls = [p for m in back.messages for p in m.parts if isinstance(p, ToolCallPart)]
    assert [(c.id, c.name, c.input) for c in calls] == [("c1", "delete", {"p": 1}), ("c2", "look", {})]
    result = back.messages[-1].parts[0]
    assert isinstance(result, ToolResultPart) and result.output == '{"ok":true}'


# -- a remote AG-UI server -------------------------------------------------------------------------------


def _scripted() -> ScriptedAgent:
    return ScriptedAgent(Pacing().scaled(0))


def test_remote_agui_agent_serves_use_chat_from_a_live_agui_server(js: JsOracle, live_server: Any) -> None:
    """useChat -> streamkit AI SDK route -> RemoteAGUIAgent -> live AG-UI server (the demo) -> back."""
    backend = live_server(create_app(_scripted(), static_dir=None))
    front = live_server(Starlette(routes=aisdk.routes(RemoteAGUIAgent(f"{backend.url}/api/agui"), path="/api/chat")))
    answer = js.call("aisdk", {"api": f"{front.url}/api/chat", "version": 7})
    assert answer["ok"], answer.get("error")
    remote = answer["result"]
    direct = js.call("aisdk", {"api": f"{backend.url}/api/chat", "version": 7})["result"]
    assert remote["status"] == "ready" and remote["error"] is None
    assert remote["finishReason"] == direct["finishReason"]

    def parts(result: dict[str, Any]) -> list[Any]:
        return [
            {k: v for k, v in p.items() if k not in ("toolCallId", "providerMetadata")}
            for p in result["message"]["parts"]
            if p["type"] not in ("step-start",)
        ]

    got, meant = parts(remote), parts(direct)
    text = [p["text"] for p in got if p["type"] == "text"]
    assert text and text == [p["text"] for p in meant if p["type"] == "text"]
    assert [p["type"] for p in got] == [p["type"] for p in meant]


def _mock(handler: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def _run() -> RunInput:
    return RunInput(thread_id="t", run_id="r", messages=[Message(id="u", role="user", parts=[TextPart(text="hi")])])


def remote_events(handler: Any) -> list[ChatEvent]:
    async def go() -> list[ChatEvent]:
        async with _mock(handler) as client:
            return [e async for e in RemoteAGUIAgent("http://agui.test/run", http_client=client)(_run())]

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("status", "body", "content_type", "message"),
    [
        (422, {"error": {"status": 422, "message": "messages.0.role: bad", "field": "x"}}, "application/json",
         "HTTP 422: messages.0.role: bad"),
        (401, {"detail": "Not authenticated"}, "application/json", "HTTP 401: Not authenticated"),
        (503, "upstream overloaded", "text/plain", "HTTP 503: upstream overloaded"),
    ],
)  # fmt: skip
def test_http_errors_become_run_errors_with_the_servers_message(
    status: int, body: Any, content_type: str, message: str
) -> None:
    content = json.dumps(body).encode() if not isinstance(body, str) else body.encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=content, headers={"content-type": content_type})

    events = remote_events(handler)
    assert [e.type for e in events] == ["run-started", "run-error"]
    assert events[-1] == RunError(message=message, code=f"http_{status}")


def test_a_body_that_is_not_an_event_stream_is_an_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"message": "use POST /v2"})

    events = remote_events(handler)
    assert events[-1].type == "run-error" and events[-1].code == "not_event_stream"  # type: ignore[union-attr]
    assert "use POST /v2" in events[-1].message  # type: ignore[union-attr]


def test_garbage_frames_and_a_missing_end_are_errors() -> None:
    garbage = b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\ndata: {not json\n\n'

    def bad(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=garbage, headers={"content-type": "text/event-stream"})

    events = remote_events(bad)
    assert [e.type for e in events] == ["run-started", "run-error"]
    assert events[-1].code == "invalid_event"  # type: ignore[union-attr]

    cut = (
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
        b'data: {"type":"TEXT_MESSAGE_START","messageId":"m"}'
    )

    def short(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=cut, headers={"content-type": "text/event-stream"})

    events = remote_events(short)
    assert [e.type for e in events] == ["run-started", "text-start", "run-error"]  # the last frame still counts
    assert events[-1].code == "incomplete"  # type: ignore[union-attr]


def test_a_dropped_connection_is_an_error_and_the_request_is_a_run_agent_input() -> None:
    seen: list[dict[str, Any]] = []

    class Dropping(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
            yield b'data: {"type":"TEXT_MESSAGE_START","messageId":"m"}\n\n'
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append({"headers": dict(request.headers), "body": orjson.loads(request.content)})
        return httpx.Response(200, stream=Dropping(), headers={"content-type": "text/event-stream"})

    events = remote_events(handler)
    assert [e.type for e in events] == ["run-started", "text-start", "run-error"]
    assert events[-1].code == "unreachable" and "peer closed" in events[-1].message  # type: ignore[union-attr]
    assert seen[0]["headers"]["accept"] == "text/event-stream"
    assert agui.parse_run_agent_input(seen[0]["body"]).messages[0].id == "u"


def test_an_unreachable_server_is_an_error(live_server: Any) -> None:
    async def go() -> list[ChatEvent]:
        agent = RemoteAGUIAgent("http://127.0.0.1:9/api/agui", timeout=2.0)
        return [e async for e in agent(_run())]

    events = asyncio.run(go())
    assert events[-1].type == "run-error" and events[-1].code == "unreachable"  # type: ignore[union-attr]
