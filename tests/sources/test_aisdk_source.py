"""``streamkit.sources.aisdk``: UI Message Stream chunks back to ChatEvents, proven by protocol round trips
through the real clients (streamkit's AI SDK output fed to the source and re-encoded as AG-UI must give the real
``@ag-ui/client`` the messages and state the direct AG-UI encoding gives), a ``RemoteAISDKAgent`` in front of a
live AI SDK route serving the real ``HttpAgent``, and the failures a remote server can cause."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jsonpatch
import pytest
from hypothesis import HealthCheck, example, given, settings
from starlette.applications import Starlette

from streamkit import agui, aisdk
from streamkit.aisdk.fold import parse_sse
from streamkit.aisdk.mapping import safe_json
from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import create_app
from streamkit.events import (
    ChatEvent,
    Citation,
    Custom,
    Data,
    File,
    Interrupt,
    Message,
    MessageMetadata,
    MessagesSnapshot,
    ProviderPart,
    Raw,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    ResumeEntry,
    RunAborted,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    Source,
    StateDelta,
    StateSnapshot,
    StateUpdate,
    StepFinished,
    StepReset,
    StepStarted,
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
    Usage,
    UserMessage,
)
from streamkit.events.input import ApprovalState
from streamkit.sources.aisdk import AISDKTranslator, RemoteAISDKAgent, chat_events, to_chat_request
from tests.agui.model import repaired, same
from tests.agui.strategies import careful_runs
from tests.agui.support import HISTORY, client_run, client_runs
from tests.aisdk.strategies import FULL_RUN, describe
from tests.support.oracle import JsOracle
from tests.support.streams import collect, collect_bytes

pytestmark = pytest.mark.usefixtures("quiet")


def aisdk_chunks(events: list[ChatEvent]) -> list[dict[str, Any]]:
    return list(parse_sse(collect_bytes(aisdk.encode(events))))


def translated(chunks: list[dict[str, Any]]) -> list[ChatEvent]:
    return collect(chat_events(chunks))


def agui_body(events: list[ChatEvent]) -> str:
    options = {"thread_id": "th", "run_id": "run", "state": {}, "reserved_ids": [m["id"] for m in HISTORY]}
    return b"".join(collect(agui.encode(events, **options))).decode()


def _invalid(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


_PAYLOADS = {"input", "output", "state", "data", "value", "metadata", "tool_metadata", "provider_metadata", "event"}


def _as_aisdk_source(source: Source) -> Source:
    """A source as the AI SDK carries it: a ``source-url`` has no media type or file name, a ``source-document``
    always has a media type and a title (the adapter's defaults)."""
    if source.url is not None:
        return source.model_copy(update={"media_type": None, "filename": None})
    return source.model_copy(
        update={
            "media_type": source.media_type or "application/octet-stream",
            "title": source.title or source.filename or source.id,
        }
    )


def through_aisdk(events: list[ChatEvent], message_id: str | None) -> list[ChatEvent]:
    """What the UI Message Stream carries of a run, as ChatEvents: the direct AG-UI encoding these must match.

    The stream always names the assistant message (``start.messageId``); a tool call's input is a value
    (streamed JSON text that does not parse is an invalid call with the client's error text, no text at all
    is ``{}``); a tool result has no message id; a denial carries nothing but the call; errors have no code; reasoning
    keeps no encrypted value; sources (also a citation's) keep what a ``source-url`` / ``source-document`` holds;
    a state delta is the whole state it makes; payloads lose the keys the ``ai`` client refuses.
    """
    out: list[ChatEvent] = []
    args: dict[str, list[str]] = {}
    text_input: set[str] = set()
    open_blocks: dict[str, type[TextEnd] | type[ReasoningEnd]] = {}
    ended: dict[str, type[TextStart] | type[ReasoningStart]] = {}  # blocks a step's end ended before the core did
    depth, in_step, inputs = 0, False, set[str]()
    state: Any = {}
    for ev in repaired(events):
        # Steps on the wire are flat: a step started inside another, or while a tool input streams (the client
        # looks a streaming call up in the current step), belongs to the step around it. ``start-step`` ends
        # nothing (``ai`` keeps its open parts across it); the mapping ends the open text and reasoning parts at
        # ``finish-step`` (``ai`` clients before 7.0.79 forget them there). A core's later end adds nothing to
        # such a part (its citations arrive as plain sources); a later delta opens a new part with the same id.
        if isinstance(ev, StepStarted):
            depth += 1
            in_step = in_step or (depth == 1 and not inputs)
        elif isinstance(ev, StepFinished):
            depth = max(depth - 1, 0)
            if depth == 0 and in_step:
                in_step = False
                for block, end in open_blocks.items():
                    out.append(end(id=block))
                    ended[block] = TextStart if end is TextEnd else ReasoningStart
                open_blocks.clear()
        elif isinstance(ev, StepReset):
            open_blocks.clear()
            ended.clear()
            inputs.clear()
        elif isinstance(ev, TextStart):
            open_blocks[ev.id] = TextEnd
        elif isinstance(ev, ReasoningStart):
            open_blocks[ev.id] = ReasoningEnd
        elif isinstance(ev, TextDelta | ReasoningDelta) and ev.id in ended:
            out.append(ended.pop(ev.id)(id=ev.id))
            open_blocks[ev.id] = TextEnd if isinstance(ev, TextDelta) else ReasoningEnd
        elif isinstance(ev, TextEnd | ReasoningEnd):
            open_blocks.pop(ev.id, None)
            if ended.pop(ev.id, None) is not None:
                if isinstance(ev, TextEnd):
                    out += [_as_aisdk_source(c.source) for c in ev.citations or ()]
                continue
        elif isinstance(ev, ToolCallStart):
            inputs.add(ev.id)
        elif isinstance(ev, ToolCallEnd):
            inputs.discard(ev.id)
        if isinstance(ev, RunStarted):
            ev = ev.model_copy(update={"message_id": message_id})
        elif isinstance(ev, StateSnapshot | StateUpdate):
            state = ev.state
        elif isinstance(ev, StateDelta):
            # The stream has no state delta: the mapping applies the patch to the state it holds and sends the
            # whole state (a ``data-state`` part, its payload's refused keys dropped); a patch that fails is dropped.
            try:
                state = jsonpatch.apply_patch(state, ev.patch, in_place=False)
            except Exception:
                continue
            ev = StateUpdate(state=state)
        elif isinstance(ev, ToolCallStart):
            args[ev.id] = []
            if ev.input_encoding == "text":
                text_input.add(ev.id)
        elif isinstance(ev, ToolCallArgsDelta):
            args.setdefault(ev.id, []).append(ev.delta)
        elif isinstance(ev, ToolCallEnd) and ev.input is None and ev.id not in text_input:
            text = "".join(args.get(ev.id, ()))
            if not text.strip():
                ev = ev.model_copy(update={"input": {}})
            elif _invalid(text) and ev.error is None:
                ev = ev.model_copy(update={"input": text, "error": "The tool call's input is not valid JSON."})
        elif isinstance(ev, ToolResult):
            ev = ev.model_copy(update={"message_id": None, "error": None if ev.denied else ev.error})
            if ev.denied:  # tool-output-denied carries nothing but the call id
                ev = ev.model_copy(update={"tool_metadata": None, "provider_metadata": None})
        elif isinstance(ev, RunError):
            ev = ev.model_copy(update={"code": None})
        elif isinstance(ev, ReasoningEnd):
            ev = ev.model_copy(update={"encrypted_value": None})
        elif isinstance(ev, Source):
            ev = _as_aisdk_source(ev)
        elif isinstance(ev, TextEnd) and ev.citations:
            cited = [c.model_copy(update={"source": _as_aisdk_source(c.source)}) for c in ev.citations]
            ev = ev.model_copy(update={"citations": cited})
        # Payloads lose the keys the ai client refuses to parse (``__proto__``...).
        payloads = {k: safe_json(v) for k, v in ev if k in _PAYLOADS and isinstance(v, dict | list)}
        out.append(ev.model_copy(update=payloads) if payloads else ev)
    return out


def _round_trip(js: JsOracle, events: list[ChatEvent]) -> None:
    chunks = aisdk_chunks(events)
    message_id = next(c["messageId"] for c in chunks if c["type"] == "start")
    back = translated(chunks)
    got = client_run(js, agui_body(back), state={})
    meant = client_run(js, agui_body(through_aisdk(events, message_id)), state={})
    context = (describe(events), describe(back))
    differing = [(a, b) for a, b in zip(got["messages"], meant["messages"], strict=False) if not same(a, b)]
    assert same(got["messages"], meant["messages"]), (differing or (got["messages"], meant["messages"]), context)
    assert same(got["state"], meant["state"]), context
    assert got["outcome"] == meant["outcome"] and got["runError"] == meant["runError"], context


# -- protocol round trips ---------------------------------------------------------------------------


def test_a_full_run_round_trips_to_the_agui_client(js: JsOracle) -> None:
    _round_trip(js, FULL_RUN)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(events=careful_runs().map(lambda run: [e for e in run if not isinstance(e, StepReset)]))
@example(  # a citation of a source with no URL: the AI SDK gives it a media type and a title
    events=[
        RunStarted(),
        TextStart(id="t0"),
        TextStart(id="t1"),
        TextEnd(id="t0", citations=[Citation(source=Source(id="s1"))]),
        TextEnd(id="t1"),
        RunFinished(),
    ]
)
@example(  # a text open across start-step keeps its part there: the citations of its end are its own
    events=[
        RunStarted(),
        TextStart(id="t0"),
        StepStarted(name="s1"),
        TextEnd(id="t0", citations=[Citation(source=Source(id="s1", url="https://a.example"))]),
        RunFinished(),
    ]
)
@example(  # a delta to a state with a key the ai client refuses: the state part goes without it
    events=[
        RunStarted(),
        StateDelta(patch=[{"op": "replace", "path": "", "value": {"__proto__": {"a": 1}, "b": 1}}]),
        RunFinished(),
    ]
)
def test_generated_runs_round_trip_to_the_agui_client(js: JsOracle, events: list[ChatEvent]) -> None:
    # Without StepReset: the AI SDK client drops a reset step's parts, an AG-UI client keeps them, so a reset
    # cannot mean the same to both (see the adapters' tables).
    _round_trip(js, events)


def test_ai_sdk_output_translates_back_to_the_same_message(js: JsOracle) -> None:
    """AI SDK -> source -> AI SDK: the real ``useChat`` ends with the same message."""
    direct = b"".join(collect(aisdk.encode(FULL_RUN))).decode()
    again = b"".join(collect(aisdk.encode(translated(aisdk_chunks(FULL_RUN))))).decode()
    one = js.call("aisdk", {"body": direct, "version": 7})["result"]
    two = js.call("aisdk", {"body": again, "version": 7})["result"]
    assert one["message"] == two["message"] and one["finishReason"] == two["finishReason"]


# -- the translator ---------------------------------------------------------------------------------


def test_every_chunk_type_has_its_event() -> None:
    chunks: list[dict[str, Any]] = [
        {"type": "start", "messageId": "m1", "messageMetadata": {"model": "x"}},
        {"type": "start-step"},
        {"type": "reasoning-start", "id": "r"},
        {"type": "reasoning-delta", "id": "r", "delta": "hm"},
        {"type": "reasoning-end", "id": "r"},
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f", "inputEncoding": "json", "title": "F"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a":1}'},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {"a": 1}},
        {"type": "tool-input-available", "toolCallId": "c2", "toolName": "g", "input": {}, "dynamic": True},
        {"type": "tool-input-error", "toolCallId": "c3", "toolName": "h", "input": "{x", "errorText": "bad"},
        {"type": "tool-approval-request", "approvalId": "ap", "toolCallId": "c1", "reason": "sure?"},
        {"type": "tool-approval-response", "approvalId": "ap", "approved": True},
        {"type": "tool-output-available", "toolCallId": "c1", "output": 1, "preliminary": True},
        {"type": "tool-output-available", "toolCallId": "c1", "output": 2},
        {"type": "tool-output-error", "toolCallId": "c2", "errorText": "down"},
        {"type": "tool-output-denied", "toolCallId": "c3"},
        {"type": "finish-step"},
        {"type": "reset-step"},
        {"type": "source-url", "sourceId": "s1", "url": "https://a", "title": "A"},
        {"type": "source-document", "sourceId": "s2", "mediaType": "application/pdf", "title": "D"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AA"},
        {"type": "reasoning-file", "mediaType": "image/png", "url": "data:image/png;base64,AA"},
        {"type": "custom", "kind": "openai.compaction", "providerMetadata": {"openai": {"k": 1}}},
        {"type": "steering-message", "id": "u2", "parts": [{"type": "text", "text": "also"}]},
        {"type": "data-state", "id": "state", "data": {"n": 1}},
        {"type": "data-messages", "data": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]},
        {"type": "data-custom", "data": {"name": "toast", "value": 1}, "transient": True},
        {"type": "data-raw", "data": {"event": {"e": 1}, "source": "p"}, "transient": True},
        {"type": "data-weather", "id": "w", "data": {"t": 21}},
        {"type": "data-tool-approval", "id": "ap5", "data": {"approvalId": "ap5", "toolCallId": "c2"}},
        {"type": "message-metadata", "messageMetadata": {"stage": 2}},
        {"type": "data-interrupt", "id": "i1", "data": {"id": "i1", "reason": "confirm"}},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "ok"},
        {
            "type": "text-end",
            "id": "t",
            "citations": [{"source": {"type": "source", "sourceType": "url", "id": "s1", "url": "https://a"}}],
        },
        {"type": "finish", "finishReason": "interrupted", "messageMetadata": {"usage": {"inputTokens": 3}, "k": 1}},
        {"type": "text-delta", "id": "t", "delta": "after the end"},
    ]
    events = translated(chunks)
    by_type: dict[str, list[Any]] = {}
    for e in events:
        by_type.setdefault(e.type, []).append(e)
    assert events[0] == RunStarted(message_id="m1", metadata={"model": "x"})
    assert [e.type for e in events[1:3]] == ["step-started", "reasoning-start"]
    ends = by_type["tool-call-end"]
    assert [(e.id, e.input, e.error, e.name) for e in ends] == [
        ("c1", {"a": 1}, None, None),
        ("c2", {}, None, None),  # started first, to keep the dynamic flag
        ("c3", "{x", "bad", "h"),
    ]
    assert [s.id for s in by_type["tool-call-start"]] == ["c1", "c2"] and by_type["tool-call-start"][1].dynamic
    results = by_type["tool-result"]
    assert [(r.output, r.preliminary, r.error, r.denied) for r in results] == [
        (1, True, None, False),
        (2, False, None, False),
        (None, False, "down", False),
        (None, False, None, True),
    ]
    assert by_type["tool-approval-request"] == [
        ToolApprovalRequest(id="ap", tool_call_id="c1", reason="sure?"),
        ToolApprovalRequest(id="ap5", tool_call_id="c2"),
    ]
    assert by_type["tool-approval-response"] == [ToolApprovalResponse(id="ap", approved=True)]
    assert [s.media_type for s in by_type["source"]] == [None, "application/pdf"]
    assert [f.reasoning for f in by_type["file"]] == [False, True]
    assert by_type["provider-part"] == [ProviderPart(kind="openai.compaction", provider_metadata={"openai": {"k": 1}})]
    assert by_type["user-message"] == [UserMessage(id="u2", text="also")]
    assert by_type["state-update"] == [StateUpdate(state={"n": 1})]
    snapshot = by_type["messages-snapshot"][0]
    assert isinstance(snapshot, MessagesSnapshot)
    assert snapshot.messages == [Message(id="u", role="user", parts=[TextPart(text="hi")])]
    assert by_type["custom"] == [Custom(name="toast", value=1)]
    assert by_type["raw"] == [Raw(event={"e": 1}, source="p")]
    assert by_type["data"] == [Data(name="weather", data={"t": 21}, id="w")]
    assert by_type["message-metadata"] == [MessageMetadata(metadata={"stage": 2})]
    assert by_type["step-reset"] and by_type["step-finished"] == [StepFinished(name="step-1")]
    assert by_type["text-end"][0].citations[0].source.url == "https://a"
    assert events[-1] == RunFinished(
        finish_reason="stop",
        usage=Usage(input_tokens=3),
        metadata={"k": 1},
        interrupts=[Interrupt(id="i1", reason="confirm")],
    )


def test_done_abort_error_and_bad_chunks() -> None:
    assert translated([{"type": "start"}, {"type": "abort", "reason": "user"}]) == [
        RunStarted(),
        RunAborted(reason="user"),
    ]
    assert translated([{"type": "error", "errorText": "overloaded"}]) == [RunError(message="overloaded")]
    events = translated([{"type": "start"}, {"kind": "no type"}])
    assert events[-1].type == "run-error" and events[-1].code == "invalid_chunk"  # type: ignore[union-attr]
    assert translated([{"type": "future-chunk", "x": 1}]) == [
        Raw(event={"type": "future-chunk", "x": 1}, source="ai-sdk")
    ]
    translator = AISDKTranslator()
    assert translator.feed({"type": "start-step"}) == [StepStarted(name="step-1")]
    assert translator.close() == [StepFinished(name="step-1")]


# -- the input -----------------------------------------------------------------------------------------


def test_run_input_becomes_the_use_chat_body_the_aisdk_request_reads_back() -> None:
    run = RunInput(
        thread_id="chat-1",
        run_id="r",
        messages=[
            Message(id="u1", role="user", parts=[TextPart(text="delete it")]),
            Message(
                id="a1",
                role="assistant",
                parts=[
                    ToolCallPart(
                        id="c1", name="delete", input={"p": 1}, approval=ApprovalState(id="ap1", approved=True)
                    )
                ],
            ),
        ],
        state={"n": 1},
        message_id="a1",
        forwarded_props={"model": "m"},
        extra={"temperature": 0.2},
        resume=[
            ResumeEntry(interrupt_id="i1", status="resolved", payload={"ok": True}),
            ResumeEntry(interrupt_id="i2", status="cancelled"),
        ],
    )
    body = to_chat_request(run)
    assert body["resume"] == [
        {"interruptId": "i1", "status": "resolved", "payload": {"ok": True}},
        {"interruptId": "i2", "status": "cancelled"},
    ]
    assert body["messageId"] == "a1" and body["trigger"] == "submit-message" and body["id"] == "chat-1"
    assert body["model"] == "m" and body["temperature"] == 0.2
    back = aisdk.to_run_input(aisdk.parse_chat_request(body))
    assert back.state == {"n": 1} and back.message_id == "a1" and back.thread_id == "chat-1"
    call = back.messages[1].parts[0]
    assert isinstance(call, ToolCallPart) and call.approval == ApprovalState(id="ap1", approved=True)
    assert back.extra == {"model": "m", "temperature": 0.2}
    assert back.resume == run.resume  # the answers reach a remote AI SDK server as a page sends them


# -- a remote AI SDK server ------------------------------------------------------------------------------


def test_remote_aisdk_agent_serves_an_agui_client_from_a_live_ai_sdk_route(js: JsOracle, live_server: Any) -> None:
    """HttpAgent -> streamkit AG-UI route -> RemoteAISDKAgent -> live AI SDK route (the demo) -> back."""
    backend = live_server(create_app(ScriptedAgent(Pacing().scaled(0)), static_dir=None))
    agent = RemoteAISDKAgent(f"{backend.url}/api/chat")
    front = live_server(Starlette(routes=agui.routes(agent, path="/api/agui")))
    ask = [{"id": "u1", "role": "user", "content": "What's the weather in Lisbon?"}]
    remote = client_runs(js, [{}], url=f"{front.url}/api/agui", messages=ask)["runs"][0]
    direct = client_runs(js, [{}], url=f"{backend.url}/api/agui", messages=ask)["runs"][0]
    assert remote["failed"] is None and remote["runError"] is None and remote["outcome"] == direct["outcome"]

    def shape(run: dict[str, Any]) -> list[Any]:
        return [(m["role"], m.get("content") if m["role"] != "tool" else "result") for m in run["messages"]]

    assert [m for m in shape(remote) if m[0] == "assistant" and m[1]] == [
        m for m in shape(direct) if m[0] == "assistant" and m[1]
    ]
    assert same(remote["state"], direct["state"])
    tools = [c["function"]["name"] for m in remote["messages"] for c in m.get("toolCalls") or ()]
    assert tools == [c["function"]["name"] for m in direct["messages"] for c in m.get("toolCalls") or ()]


def _run() -> RunInput:
    return RunInput(thread_id="t", run_id="r", messages=[Message(id="u", role="user", parts=[TextPart(text="hi")])])


def remote_events(handler: Any) -> list[ChatEvent]:
    async def go() -> list[ChatEvent]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return [e async for e in RemoteAISDKAgent("http://ai.test/api/chat", http_client=client)(_run())]

    return asyncio.run(go())


def _sse(*lines: str) -> bytes:
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def test_a_stream_with_done_and_keepalives_is_read_whole() -> None:
    body = b": stream-open\n\n" + _sse('{"type":"start","messageId":"m"}', '{"type":"text-start","id":"t"}')
    body += b": keep-alive\n\n" + _sse('{"type":"text-delta","id":"t","delta":"hi"}', '{"type":"text-end","id":"t"}')
    body += _sse('{"type":"finish","finishReason":"stop"}', "[DONE]")

    def handler(request: httpx.Request) -> httpx.Response:
        assert json.loads(request.content)["messages"][0]["parts"] == [{"type": "text", "text": "hi"}]
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    events = remote_events(handler)
    assert [e.type for e in events] == ["run-started", "text-start", "text-delta", "text-end", "run-finished"]


@pytest.mark.parametrize(
    ("status", "content", "message"),
    [
        (400, b'{"error":{"status":400,"message":"messages: Field required","field":"messages"}}',
         "HTTP 400: messages: Field required"),
        (500, b"Internal Server Error", "HTTP 500: Internal Server Error"),
    ],
)  # fmt: skip
def test_http_errors_become_run_errors(status: int, content: bytes, message: str) -> None:
    events = remote_events(lambda request: httpx.Response(status, content=content))
    assert [e.type for e in events] == ["run-started", "run-error"]
    assert events[-1] == RunError(message=message, code=f"http_{status}")


def test_not_an_event_stream_garbage_and_a_dropped_connection() -> None:
    events = remote_events(lambda request: httpx.Response(200, text="<html>hello</html>"))
    assert events[-1].code == "not_event_stream"  # type: ignore[union-attr]

    garbage = _sse('{"type":"start"}', "{nope")
    events = remote_events(
        lambda request: httpx.Response(200, content=garbage, headers={"content-type": "text/event-stream"})
    )
    assert [e.type for e in events] == ["run-started", "run-error"] and events[-1].code == "invalid_chunk"  # type: ignore[union-attr]

    class Dropping(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield _sse('{"type":"start","messageId":"m"}', '{"type":"text-start","id":"t"}')
            raise httpx.ReadError("connection reset by peer")

    events = remote_events(
        lambda request: httpx.Response(200, stream=Dropping(), headers={"content-type": "text/event-stream"})
    )
    assert [e.type for e in events] == ["run-started", "text-start", "run-error"]
    assert "connection reset" in events[-1].message  # type: ignore[union-attr]


def test_a_continued_message_keeps_its_id() -> None:
    body = _sse('{"type":"start","messageId":"other"}', '{"type":"finish"}')

    async def go() -> list[ChatEvent]:
        transport = httpx.MockTransport(
            lambda request: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})
        )
        async with httpx.AsyncClient(transport=transport) as client:
            run = _run().model_copy(
                update={"message_id": "a1", "messages": [*_run().messages, Message(id="a1", role="assistant")]}
            )
            return [e async for e in RemoteAISDKAgent("http://ai.test/", http_client=client)(run)]

    assert asyncio.run(go())[0] == RunStarted(message_id="a1")


def test_files_survive(js: JsOracle) -> None:
    events = [RunStarted(), File(url="data:text/plain;base64,SGk=", media_type="text/plain"), RunFinished()]
    assert translated(aisdk_chunks(events))[1] == events[1]
