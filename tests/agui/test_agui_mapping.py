"""The mapper, event by event: exact AG-UI dicts, the run lifecycle, ids, failure endings, strict mode."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import agui
from streamkit.agui import AGUIMapper
from streamkit.events import (
    APPROVAL_SCHEMA,
    ChatEvent,
    Custom,
    Data,
    File,
    FilePart,
    Interrupt,
    Message,
    MessageMetadata,
    MessagesSnapshot,
    ProtocolError,
    Raw,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningPart,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunStarted,
    Source,
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
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
)
from tests.agui.strategies import careful_runs, sloppy_runs
from tests.agui.support import body_of, frames_of
from tests.support.oracle import JsOracle


def run(*events: ChatEvent, **options: Any) -> list[dict[str, Any]]:
    """Every frame of a run (started by the mapper's own RUN_STARTED unless the events start it)."""
    options.setdefault("thread_id", "th")
    options.setdefault("run_id", "run")
    mapper = AGUIMapper(**options)
    out: list[dict[str, Any]] = []
    for event in events:
        out += mapper.feed(event)
    return out + mapper.close()


def body(*events: ChatEvent, **options: Any) -> list[dict[str, Any]]:
    """The frames between RUN_STARTED and the synthesized RUN_FINISHED."""
    frames = run(RunStarted(), *events, RunFinished(), **options)
    assert frames[0]["type"] == "RUN_STARTED" and frames[-1]["type"] == "RUN_FINISHED"
    return frames[1:-1]


def test_run_started_first_with_the_protocol_version() -> None:
    assert run(RunFinished()) == [
        {"type": "RUN_STARTED", "threadId": "th", "runId": "run", "protocolVersion": "1.0"},
        {"type": "RUN_FINISHED", "threadId": "th", "runId": "run"},
    ]
    started = run(RunStarted(thread_id="t2", run_id="r2", parent_run_id="p", metadata={"a": 1}), RunFinished())
    assert started[0] == {
        "type": "RUN_STARTED",
        "threadId": "t2",
        "runId": "r2",
        "protocolVersion": "1.0",
        "parentRunId": "p",
        "metadata": {"a": 1},
    }
    assert started[1] == {"type": "RUN_FINISHED", "threadId": "t2", "runId": "r2"}
    assert run(parent_run_id="p0")[0]["parentRunId"] == "p0"


def test_run_finished_fields() -> None:
    frames = run(
        RunFinished(
            finish_reason="length",
            usage=Usage(
                input_tokens=1,
                output_tokens=2,
                total_tokens=3,
                reasoning_tokens=1,
                cached_input_tokens=0,
                cache_write_input_tokens=7,
                provider="openai",
                model="gpt",
            ),
            result=[1.0, 2],
            metadata={"k": "v"},
        )
    )
    assert frames[-1] == {
        "type": "RUN_FINISHED",
        "threadId": "th",
        "runId": "run",
        "result": [1, 2],
        "usage": [
            {
                "provider": "openai",
                "model": "gpt",
                "inputTokens": 1,
                "outputTokens": 2,
                "totalTokens": 3,
                "reasoningTokens": 1,
                "cachedInputTokens": 0,
                "cacheWriteInputTokens": 7,
            }
        ],
        "metadata": {"k": "v", "finishReason": "length"},
    }
    assert "usage" not in run(RunFinished(usage=Usage()))[-1]
    assert run(RunFinished(usage=Usage(input_tokens=2**60)))[-1].get("usage") is None  # beyond JS integers


def test_interrupts_and_approvals_end_the_run_with_an_interrupt_outcome() -> None:
    frames = run(
        ToolCallEnd(id="c", name="rm", input={}),
        ToolApprovalRequest(id="ap", tool_call_id="c"),
        RunFinished(interrupts=[Interrupt(id="i", reason="input_required", metadata={"x": 1})]),
    )
    assert frames[-1]["outcome"] == {
        "type": "interrupt",
        "interrupts": [
            {"id": "i", "reason": "input_required", "metadata": {"x": 1}},
            {"id": "ap", "reason": "tool_approval", "toolCallId": "c", "responseSchema": APPROVAL_SCHEMA},
        ],
    }


def test_one_interrupt_per_call() -> None:
    """An interrupt the core gives for a call it asked approval for is that approval's interrupt."""
    frames = run(
        ToolCallEnd(id="c", name="rm", input={}),
        ToolCallEnd(id="d", name="rm", input={}),
        ToolApprovalRequest(id="ap", tool_call_id="c", reason="Remove?"),
        ToolApprovalRequest(id="ap2", tool_call_id="d"),
        RunFinished(
            interrupts=[
                Interrupt(id="ap", reason="tool_approval", tool_call_id="c"),
                Interrupt(id="other", reason="confirm", tool_call_id="d", message="Sure?"),
            ]
        ),
    )
    assert frames[-1]["outcome"]["interrupts"] == [
        {
            "id": "ap",
            "reason": "tool_approval",
            "toolCallId": "c",
            "message": "Remove?",
            "responseSchema": APPROVAL_SCHEMA,
        },
        {"id": "other", "reason": "confirm", "message": "Sure?", "toolCallId": "d", "responseSchema": APPROVAL_SCHEMA},
    ]


def test_calls_after_a_result_start_a_new_assistant_message() -> None:
    frames = run(
        RunStarted(message_id="m"),
        ToolCallEnd(id="a", name="f", input={}),
        ToolCallEnd(id="b", name="f", input={}),
        ToolResult(id="a", output=1),
        ToolResult(id="b", output=2),
        StepStarted(name="two"),
        ToolCallEnd(id="c", name="f", input={}),
        TextStart(id="t"),
        TextEnd(id="t"),
        ToolCallEnd(id="d", name="f", input={}),
    )
    parents = {f["toolCallId"]: f["parentMessageId"] for f in frames if f["type"] == "TOOL_CALL_START"}
    assert parents == {"a": "m", "b": "m", "c": "c", "d": "t"}


def test_abort_and_error_endings() -> None:
    frames = run(TextStart(id="t"), ToolCallStart(id="c", name="f"), StepStarted(name="s"), RunAborted(reason="stop"))
    assert [f["type"] for f in frames[-4:]] == ["TEXT_MESSAGE_END", "TOOL_CALL_END", "STEP_FINISHED", "RUN_FINISHED"]
    assert frames[-1] == {
        "type": "RUN_FINISHED",
        "threadId": "th",
        "runId": "run",
        "outcome": {"type": "cancelled"},
        "metadata": {"reason": "stop"},
    }
    assert run(RunError(message="m", code="c"))[-1] == {"type": "RUN_ERROR", "message": "m", "code": "c"}
    assert run(RunError(message="m"))[-1] == {"type": "RUN_ERROR", "message": "m"}


def test_fail_ends_the_run_once() -> None:
    mapper = AGUIMapper(thread_id="th", run_id="run")
    assert mapper.fail("nope", "E1") == [
        {"type": "RUN_STARTED", "threadId": "th", "runId": "run", "protocolVersion": "1.0"},
        {"type": "RUN_ERROR", "message": "nope", "code": "E1"},
    ]
    assert mapper.fail("again") == [] and mapper.close() == [] and mapper.finished
    busy = AGUIMapper(thread_id="th", run_id="run")
    busy.feed(TextStart(id="t"))
    assert busy.fail("x") == [{"type": "RUN_ERROR", "message": "x"}]  # AG-UI allows an error with things open
    done = AGUIMapper(thread_id="th", run_id="run")
    done.feed(RunFinished())
    assert done.fail("late") == []  # exactly one terminal event


def test_text_and_reasoning() -> None:
    assert body(
        TextStart(id="t", provider_metadata={"p": {"a": 1}}),
        TextDelta(id="t", delta="hi"),
        TextEnd(id="t", provider_metadata={"p": {"a": 2}}),
    ) == [
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "t",
            "role": "assistant",
            "metadata": {"providerMetadata": {"p": {"a": 1}}},
        },
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "t", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "t", "metadata": {"providerMetadata": {"p": {"a": 2}}}},
    ]
    assert body(
        ReasoningStart(id="r"), ReasoningDelta(id="r", delta="so"), ReasoningEnd(id="r", encrypted_value="e")
    ) == [
        {"type": "REASONING_START", "messageId": "r"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "so"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "r", "encryptedValue": "e"},
        {"type": "REASONING_END", "messageId": "r"},
    ]


def test_steps() -> None:
    assert body(StepStarted(name="a"), StepFinished(name="a")) == [
        {"type": "STEP_STARTED", "stepName": "a"},
        {"type": "STEP_FINISHED", "stepName": "a"},
    ]


def test_tool_calls_join_the_current_assistant_message() -> None:
    frames = body(
        ToolCallStart(id="c0", name="f"),  # no text yet: the call names its own message, later calls join it
        ToolCallEnd(id="c0"),
        ToolCallStart(id="c1", name="f"),
        ToolCallEnd(id="c1"),
        TextStart(id="t"),
        TextEnd(id="t"),
        ToolCallStart(id="c2", name="f", parent_message_id="elsewhere"),
        ToolCallEnd(id="c2"),
        ToolCallStart(id="c3", name="f"),
        ToolCallEnd(id="c3"),
    )
    parents = {f["toolCallId"]: f["parentMessageId"] for f in frames if f["type"] == "TOOL_CALL_START"}
    assert parents == {"c0": "c0", "c1": "c0", "c2": "elsewhere", "c3": "t"}
    started = run(RunStarted(message_id="m"), ToolCallStart(id="c", name="f"), RunFinished())
    assert started[1]["parentMessageId"] == "m"


def test_tool_input_given_only_at_the_end_is_streamed_as_one_args_event() -> None:
    assert body(
        ToolCallStart(id="c", name="f", title="T", dynamic=True, provider_executed=True),
        ToolCallEnd(id="c", input={"x": [1.0, "é"]}),
    ) == [
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c",
            "toolCallName": "f",
            "parentMessageId": "c",
            "metadata": {"title": "T", "dynamic": True, "providerExecuted": True},
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '{"x":[1,"é"]}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    ]
    streamed = body(
        ToolCallStart(id="c", name="f"),
        ToolCallArgsDelta(id="c", delta="{}"),
        ToolCallEnd(id="c", input={"ignored": True}),
    )
    assert [f.get("delta") for f in streamed if f["type"] == "TOOL_CALL_ARGS"] == ["{}"]
    whole = body(ToolCallEnd(id="c", name="f", input="not json{", error="invalid JSON"))
    assert whole == [
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "c"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "not json{"},
        {"type": "TOOL_CALL_END", "toolCallId": "c", "metadata": {"error": "invalid JSON"}},
    ]


def test_tool_results() -> None:
    frames = body(
        ToolCallEnd(id="a", name="f"),
        ToolResult(id="a", output={"n": 1.5}),
        ToolCallEnd(id="b", name="f"),
        ToolResult(id="b", error="boom", message_id="m-b"),
        ToolCallEnd(id="c", name="f"),
        ToolResult(id="c", denied=True),
        ToolCallEnd(id="d", name="f"),
        ToolResult(id="d", output=[1], preliminary=True),
        ToolResult(id="d", output="s"),
    )
    results = [f for f in frames if f["type"] in ("TOOL_CALL_RESULT", "CUSTOM")]
    assert results == [
        {"type": "TOOL_CALL_RESULT", "messageId": "a-result", "toolCallId": "a", "content": '{"n":1.5}'},
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m-b",
            "toolCallId": "b",
            "content": "boom",
            "metadata": {"isError": True},
        },
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "c-result",
            "toolCallId": "c",
            "content": "The tool call was denied.",
            "metadata": {"denied": True},
        },
        {"type": "CUSTOM", "name": "streamkit.preliminary_tool_result", "value": {"toolCallId": "d", "output": [1]}},
        {"type": "TOOL_CALL_RESULT", "messageId": "d-result", "toolCallId": "d", "content": "s"},
    ]


def test_results_for_calls_of_earlier_runs() -> None:
    frames = run(ToolResult(id="old", output=1), known_tool_calls=["old"])
    assert frames[1] == {"type": "TOOL_CALL_RESULT", "messageId": "old-result", "toolCallId": "old", "content": "1"}


def test_extras_become_custom_events() -> None:
    assert body(
        Data(name="w", data={"t": 2.0}),
        Data(name="w", data=None, id="d", transient=True),
        Source(id="s", url="u", title="t", media_type="application/pdf", filename="f.pdf"),
        Source(id="s2"),
        File(url="https://x/y.png", media_type="image/png"),
        MessageMetadata(metadata={"m": 1}),
        Custom(name="n", value=None),
        Raw(event=[1], source="src"),
        Raw(event=None),
        ToolApprovalResponse(id="p", approved=True),
        known_approvals=["p"],
    ) == [
        {"type": "CUSTOM", "name": "streamkit.data", "value": {"name": "w", "data": {"t": 2}}},
        {
            "type": "CUSTOM",
            "name": "streamkit.data",
            "value": {"name": "w", "data": None, "id": "d", "transient": True},
        },
        {
            "type": "CUSTOM",
            "name": "streamkit.source",
            "value": {"id": "s", "url": "u", "title": "t", "mediaType": "application/pdf", "filename": "f.pdf"},
        },
        {"type": "CUSTOM", "name": "streamkit.source", "value": {"id": "s2"}},
        {"type": "CUSTOM", "name": "streamkit.file", "value": {"url": "https://x/y.png", "mediaType": "image/png"}},
        {"type": "CUSTOM", "name": "streamkit.message_metadata", "value": {"m": 1}},
        {"type": "CUSTOM", "name": "n", "value": None},
        {"type": "RAW", "event": [1], "source": "src"},
        {"type": "RAW", "event": None},
        {"type": "CUSTOM", "name": "streamkit.tool_approval_response", "value": {"id": "p", "approved": True}},
    ]


def test_messages_snapshot_converts_neutral_messages() -> None:
    frames = body(
        MessagesSnapshot(
            messages=[
                Message(id="s", role="system", parts=[TextPart(text="be nice")]),
                {
                    "id": "u",
                    "role": "user",
                    "parts": [
                        {"type": "text", "text": "look"},
                        {"type": "file", "url": "data:image/png;base64,AAA", "media_type": "image/png"},
                        {
                            "type": "file",
                            "url": "https://x/a.pdf",
                            "media_type": "application/pdf",
                            "filename": "a.pdf",
                        },
                    ],
                },
                Message(
                    id="a",
                    role="assistant",
                    metadata={"k": 1},
                    parts=[
                        ReasoningPart(text="think"),
                        TextPart(text="ok"),
                        ToolCallPart(id="c", name="f", input={"x": 1}),
                        ToolResultPart(id="c", output={"y": 2}),
                    ],
                ),
                Message(id="a2", role="assistant", parts=[ToolCallPart(id="c2", name="g")]),
                Message(
                    id="t",
                    role="tool",
                    parts=[ToolResultPart(id="c2", error="bad"), ToolResultPart(id="c3", denied=True)],
                ),
                Message(id="d", role="developer", parts=[FilePart(url="u", media_type="text/plain")]),
            ]
        )
    )
    assert frames == [
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "s", "role": "system", "content": "be nice"},
                {
                    "id": "u",
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image", "source": {"type": "data", "value": "AAA", "mimeType": "image/png"}},
                        {
                            "type": "document",
                            "source": {"type": "url", "value": "https://x/a.pdf", "mimeType": "application/pdf"},
                            "metadata": {"filename": "a.pdf"},
                        },
                    ],
                },
                {"id": "a-reasoning", "role": "reasoning", "content": "think"},
                {
                    "id": "a",
                    "role": "assistant",
                    "content": "ok",
                    "metadata": {"k": 1},
                    "toolCalls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}}],
                },
                {"id": "a-c-result", "role": "tool", "toolCallId": "c", "content": '{"y":2}'},
                {
                    "id": "a2",
                    "role": "assistant",
                    "toolCalls": [{"id": "c2", "type": "function", "function": {"name": "g", "arguments": ""}}],
                },
                {
                    "id": "t",
                    "role": "tool",
                    "toolCallId": "c2",
                    "content": "bad",
                    "error": "bad",
                    "metadata": {"isError": True},
                },
                {"id": "t-2", "role": "tool", "toolCallId": "c3", "content": "", "metadata": {"denied": True}},
                {"id": "d", "role": "developer", "content": ""},
            ],
        }
    ]


def test_invalid_messages_snapshot_is_dropped_or_raises() -> None:
    assert body(MessagesSnapshot(messages=[{"role": "wizard"}])) == []
    with pytest.raises(ProtocolError, match="messages are not valid"):
        run(RunStarted(), MessagesSnapshot(messages=[{"role": "wizard"}]), strict=True)


def test_strict_mode_raises_instead_of_repairing() -> None:
    with pytest.raises(ProtocolError):
        run(TextDelta(id="t", delta="x"), strict=True)
    frames = frames_of(body_of([TextDelta(id="t", delta="x")], strict=True))
    assert [f["type"] for f in frames] == ["RUN_STARTED", "RUN_ERROR"]


def test_encode_writes_lf_frames_and_no_done_sentinel() -> None:
    text = body_of([RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="a\nb"), RunFinished()])
    assert "[DONE]" not in text and "\r" not in text
    assert text.endswith('"runId":"run"}\n\n')
    assert all(block.startswith("data: {") for block in text.split("\n\n") if block)


def _no_nulls_where_optional(value: Any, path: str = "") -> None:
    # Payload slots (state, values, results, events) may hold null; protocol fields never do.
    payload = {"snapshot", "value", "result", "event", "data", "output", "delta", "metadata", "responseSchema"}
    if isinstance(value, dict):
        for k, v in value.items():
            if k in payload:
                continue
            assert v is not None, f"{path}/{k} is null"
            _no_nulls_where_optional(v, f"{path}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _no_nulls_where_optional(v, f"{path}/{i}")


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(careful_runs(), sloppy_runs), st.booleans())
def test_every_run_is_well_formed(events: list[ChatEvent], strict: bool) -> None:
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    frames = frames_of(body_of(events, strict=strict, state={}))
    assert frames[0]["type"] == "RUN_STARTED"
    terminals = [i for i, f in enumerate(frames) if f["type"] in ("RUN_FINISHED", "RUN_ERROR")]
    assert terminals == [len(frames) - 1]
    for f in frames:
        _no_nulls_where_optional(f)
    open_ids: dict[str, set[str]] = {"TEXT_MESSAGE": set(), "TOOL_CALL": set(), "REASONING_MESSAGE": set()}
    for f in frames:
        for kind, ids in open_ids.items():
            key = "toolCallId" if kind == "TOOL_CALL" else "messageId"
            if f["type"] == f"{kind}_START":
                assert f[key] not in ids
                ids.add(f[key])
            elif f["type"] in (f"{kind}_CONTENT", f"{kind}_ARGS"):
                assert f[key] in ids
            elif f["type"] == f"{kind}_END":
                ids.remove(f[key])
    if frames[-1]["type"] == "RUN_FINISHED":
        assert all(not ids for ids in open_ids.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(careful_runs(), sloppy_runs))
def test_every_frame_passes_the_python_sdk_models(events: list[ChatEvent]) -> None:
    core = pytest.importorskip("ag_ui.core")
    from pydantic import TypeAdapter

    logging.getLogger("streamkit").setLevel(logging.ERROR)
    adapter: TypeAdapter[Any] = TypeAdapter(core.Event)
    for f in frames_of(body_of(events, state={})):
        parsed = adapter.validate_python(f)
        assert parsed.model_dump(mode="json", by_alias=True) == f


def test_every_frame_passes_the_client_schemas(js: JsOracle) -> None:
    from tests.agui.test_agui_conformance import EVERY_EVENT

    frames = frames_of(body_of(EVERY_EVENT, state={}))
    frames += frames_of(body_of([RunStarted(), RunFinished(interrupts=[Interrupt(id="i", reason="r")])]))
    frames += frames_of(body_of([RunStarted(), RunAborted()]))
    frames += frames_of(body_of([RunStarted(), RunError(message="m", code="c")]))
    answer = js.result("agui", {"mode": "parse", "events": frames})
    assert answer["errors"] == [None] * len(frames)
    assert {f["type"] for f in frames} >= {
        "RUN_STARTED",
        "RUN_FINISHED",
        "RUN_ERROR",
        "STEP_STARTED",
        "STEP_FINISHED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "REASONING_ENCRYPTED_VALUE",
        "CUSTOM",
        "RAW",
    }
    snapshot = body(MessagesSnapshot(messages=[Message(id="u", role="user", parts=[TextPart(text="x")])]))
    assert js.result("agui", {"mode": "parse", "events": snapshot})["errors"] == [None]


def test_hot_path_handlers_build_plain_dicts() -> None:
    mapper = AGUIMapper(thread_id="th", run_id="run")
    mapper.feed(TextStart(id="t"))
    frames = mapper.feed(TextDelta(id="t", delta="x"))
    assert frames == [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "t", "delta": "x"}]
    assert type(frames[0]) is dict
    assert agui.encode.__doc__


async def _aiter(events: list[ChatEvent]) -> Any:
    for event in events:
        yield event


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(careful_runs(), sloppy_runs), st.booleans(), st.sampled_from([1, 200, 16384]))
async def test_the_delta_hot_path_writes_the_same_bytes(events: list[ChatEvent], source: bool, coalesce: int) -> None:
    """``delta_prefixes`` let the SSE writer skip ``feed`` for deltas of open blocks: same bytes either way."""
    from streamkit.frames import encode_frames

    logging.getLogger("streamkit").setLevel(logging.ERROR)
    hot = AGUIMapper(thread_id="th", run_id="run", state={})
    cold = AGUIMapper(thread_id="th", run_id="run", state={})
    cold.delta_prefixes = {}
    out = []
    for mapper in (hot, cold):
        stream = _aiter(events) if source else events
        out.append(b"".join([c async for c in encode_frames(stream, mapper, coalesce=coalesce)]))
    assert out[0] == out[1]


def test_delta_prefixes_follow_the_open_blocks() -> None:
    mapper = AGUIMapper(thread_id="th", run_id="run", reserved_ids=["t"])
    mapper.feed(TextStart(id="t"))
    mapper.feed(ToolCallStart(id="c", name="f"))
    assert mapper.delta_prefixes["text-delta"] == {"t": b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"t-2","delta":'}
    assert mapper.delta_prefixes["tool-call-args-delta"] == {}  # the first delta goes through feed
    mapper.feed(ToolCallArgsDelta(id="c", delta="{"))
    assert list(mapper.delta_prefixes["tool-call-args-delta"]) == ["c"]
    mapper.feed(RunFinished())
    assert all(not table for table in mapper.delta_prefixes.values())
