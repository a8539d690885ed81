"""AISDKMapper, event by event: the exact chunks, the version gating of spec section 9, and the repairs."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest

from streamkit.aisdk import CHUNK_FIELDS, CHUNK_TYPES, AISDKMapper
from streamkit.aisdk.mapping import safe_json
from streamkit.events import (
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
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
)
from streamkit.stringify import dumps
from tests.aisdk.model import check_invariants
from tests.aisdk.strategies import FULL_RUN

pytestmark = pytest.mark.usefixtures("quiet_checker")


def run(events: list[ChatEvent], version: int = 7, **options: Any) -> list[dict[str, Any]]:
    mapper = AISDKMapper(sdk_version=version, message_id="m", **options)
    return [c for e in events for c in mapper.feed(e)] + mapper.close()


def body(events: list[ChatEvent], version: int = 7, **options: Any) -> list[dict[str, Any]]:
    """The chunks between ``start`` and ``finish`` (when both are the mapper's defaults)."""
    chunks = run([RunStarted(), *events, RunFinished()], version, **options)
    assert chunks[0] == {"type": "start", "messageId": "m"}
    assert chunks[-1] == {"type": "finish", "finishReason": "stop"}
    return chunks[1:-1]


# -- one event at a time ---------------------------------------------------------------------------------

PM = {"openai": {"itemId": "x"}}


@pytest.mark.parametrize(
    ("events", "chunks"),
    [
        (
            [TextStart(id="t", provider_metadata=PM), TextDelta(id="t", delta="Hi"), TextEnd(id="t")],
            [
                {"type": "text-start", "id": "t", "providerMetadata": PM},
                {"type": "text-delta", "id": "t", "delta": "Hi"},
                {"type": "text-end", "id": "t"},
            ],
        ),
        (
            [ReasoningStart(id="r"), ReasoningDelta(id="r", delta="Hm"), ReasoningEnd(id="r", encrypted_value="e")],
            [
                {"type": "reasoning-start", "id": "r"},
                {"type": "reasoning-delta", "id": "r", "delta": "Hm"},
                {"type": "reasoning-end", "id": "r"},
            ],
        ),
        (
            [
                ToolCallStart(id="c", name="search", title="Search", provider_executed=True, provider_metadata=PM),
                ToolCallArgsDelta(id="c", delta='{"q":'),
                ToolCallArgsDelta(id="c", delta='"x"}'),
                ToolCallEnd(id="c"),
                ToolResult(id="c", output={"hits": 3}, provider_metadata=PM),
            ],
            [
                {
                    "type": "tool-input-start",
                    "toolCallId": "c",
                    "toolName": "search",
                    "providerExecuted": True,
                    "providerMetadata": PM,
                    "title": "Search",
                },
                {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"q":'},
                {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '"x"}'},
                {
                    "type": "tool-input-available",
                    "toolCallId": "c",
                    "toolName": "search",
                    "input": {"q": "x"},
                    "providerExecuted": True,
                    "title": "Search",
                },
                {
                    "type": "tool-output-available",
                    "toolCallId": "c",
                    "output": {"hits": 3},
                    "providerExecuted": True,
                    "providerMetadata": PM,
                },
            ],
        ),
        (
            [ToolCallStart(id="c", name="x", dynamic=True), ToolCallEnd(id="c", input=None), ToolResult(id="c")],
            [
                {"type": "tool-input-start", "toolCallId": "c", "toolName": "x", "dynamic": True},
                {"type": "tool-input-available", "toolCallId": "c", "toolName": "x", "input": {}, "dynamic": True},
                {"type": "tool-output-available", "toolCallId": "c", "output": None, "dynamic": True},
            ],
        ),
        (
            [ToolCallEnd(id="c", name="x", input=[1]), ToolResult(id="c", output=1, preliminary=True)],
            [
                {"type": "tool-input-available", "toolCallId": "c", "toolName": "x", "input": [1]},
                {"type": "tool-output-available", "toolCallId": "c", "output": 1, "preliminary": True},
            ],
        ),
        (
            [ToolCallEnd(id="c", name="x", input="{bad", error="Invalid input"), ToolResult(id="c", error="boom")],
            [
                {
                    "type": "tool-input-error",
                    "toolCallId": "c",
                    "toolName": "x",
                    "input": "{bad",
                    "errorText": "Invalid input",
                },
                {"type": "tool-output-error", "toolCallId": "c", "errorText": "boom"},
            ],
        ),
        (
            [
                ToolCallEnd(id="c", name="rm", input={}),
                ToolApprovalRequest(id="a", tool_call_id="c", reason="risky"),
                ToolApprovalResponse(id="a", approved=False, reason="no"),
                ToolResult(id="c", denied=True),
            ],
            [
                {"type": "tool-input-available", "toolCallId": "c", "toolName": "rm", "input": {}},
                {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c", "reason": "risky"},
                {"type": "tool-approval-response", "approvalId": "a", "approved": False, "reason": "no"},
                {"type": "tool-output-denied", "toolCallId": "c"},
            ],
        ),
        (
            [StateSnapshot(state={"a": 1}), StateDelta(patch=[{"op": "add", "path": "/b", "value": 2.0}])],
            [
                {"type": "data-state", "id": "state", "data": {"a": 1}},
                {"type": "data-state", "id": "state", "data": {"a": 1, "b": 2}},
            ],
        ),
        ([StateUpdate(state=[1, "x"])], [{"type": "data-state", "id": "state", "data": [1, "x"]}]),
        (
            [Data(name="card", data={"t": 1}, id="c1"), Data(name="toast", data="hi", transient=True)],
            [
                {"type": "data-card", "id": "c1", "data": {"t": 1}},
                {"type": "data-toast", "data": "hi", "transient": True},
            ],
        ),
        (
            [
                Source(id="s1", url="https://a.example", title="A", provider_metadata=PM),
                Source(id="s2", media_type="application/pdf", title="Doc", filename="d.pdf"),
                Source(id="s3", filename="n.txt"),
            ],
            [
                {
                    "type": "source-url",
                    "sourceId": "s1",
                    "url": "https://a.example",
                    "title": "A",
                    "providerMetadata": PM,
                },
                {
                    "type": "source-document",
                    "sourceId": "s2",
                    "mediaType": "application/pdf",
                    "title": "Doc",
                    "filename": "d.pdf",
                },
                {
                    "type": "source-document",
                    "sourceId": "s3",
                    "mediaType": "application/octet-stream",
                    "title": "n.txt",
                    "filename": "n.txt",
                },
            ],
        ),
        (
            [File(url="data:image/png;base64,AAAA", media_type="image/png")],
            [{"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AAAA"}],
        ),
        ([MessageMetadata(metadata={"a": 1})], [{"type": "message-metadata", "messageMetadata": {"a": 1}}]),
        (
            [Custom(name="n", value=[1]), Raw(event={"e": 1}, source="openai"), Raw(event=None)],
            [
                {"type": "data-custom", "data": {"name": "n", "value": [1]}, "transient": True},
                {"type": "data-raw", "data": {"event": {"e": 1}, "source": "openai"}, "transient": True},
                {"type": "data-raw", "data": {"event": None}, "transient": True},
            ],
        ),
    ],
)
def test_events_map_to_these_chunks(events: list[ChatEvent], chunks: list[dict[str, Any]]) -> None:
    assert body(events) == chunks


def test_lifecycle_chunks() -> None:
    assert run([RunStarted(message_id="given", metadata={"a": 1}), RunFinished(finish_reason="length")]) == [
        {"type": "start", "messageMetadata": {"a": 1}, "messageId": "given"},
        {"type": "finish", "finishReason": "length"},
    ]
    usage = Usage(
        input_tokens=1,
        output_tokens=2,
        total_tokens=3,
        reasoning_tokens=0,
        cached_input_tokens=4,
        cache_write_input_tokens=5,
    )
    assert run([RunFinished(usage=usage, metadata={"k": "v"}, result={"r": 1})])[-1] == {
        "type": "finish",
        "finishReason": "stop",
        "messageMetadata": {
            "k": "v",
            "usage": {
                "inputTokens": 1,
                "outputTokens": 2,
                "totalTokens": 3,
                "reasoningTokens": 0,
                "cachedInputTokens": 4,
                "cacheWriteInputTokens": 5,
            },
            "result": {"r": 1},
        },
    }
    assert run([RunError(message="exact words", code="E1")])[-1] == {"type": "error", "errorText": "exact words"}
    assert run([RunAborted(reason="stop")])[-1] == {"type": "abort", "reason": "stop"}
    assert run([RunAborted()])[-1] == {"type": "abort"}


def test_message_id_comes_from_the_run_then_the_option_then_is_generated() -> None:
    assert run([RunStarted(message_id="core")])[0]["messageId"] == "core"
    assert run([RunStarted()])[0]["messageId"] == "m"
    mapper = AISDKMapper()
    first = mapper.feed(RunStarted())[0]["messageId"]
    assert first.startswith("msg-") and first != AISDKMapper().feed(RunStarted())[0]["messageId"]
    assert mapper.message_id == first


def test_a_continuation_keeps_the_continued_message_id() -> None:
    mapper = AISDKMapper(message_id="continued", continuation=True)
    assert mapper.feed(RunStarted(message_id="other"))[0]["messageId"] == "continued"
    assert AISDKMapper(message_id="m", continuation=True).feed(RunStarted())[0]["messageId"] == "m"


def test_interrupts_become_data_parts_and_the_interrupted_reason() -> None:
    interrupt = Interrupt(id="i1", reason="confirm", message="Sure?", tool_call_id="c", metadata={"x": 1})
    for version, reason in ((7, "interrupted"), (6, "other"), (5, "other")):
        chunks = run([RunFinished(interrupts=[interrupt])], version)
        assert chunks[-2:] == [
            {
                "type": "data-interrupt",
                "id": "i1",
                "data": {"id": "i1", "reason": "confirm", "message": "Sure?", "toolCallId": "c", "metadata": {"x": 1}},
            },
            {"type": "finish", "finishReason": reason},
        ]
    assert run([RunFinished(finish_reason="interrupted")], 6)[-1]["finishReason"] == "other"


def test_messages_snapshot_is_sent_as_ui_messages() -> None:
    messages = [
        Message(id="u", role="user", parts=[TextPart(text="hi"), FilePart(url="data:,x", media_type="text/plain")]),
        Message(id="a", role="assistant", parts=[ToolCallPart(id="c", name="w", input={"q": 1})]),
        Message(id="t", role="tool", parts=[ToolResultPart(id="c", output=3)]),
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "be nice"}]},
    ]
    [chunk] = body([MessagesSnapshot(messages=messages)])
    assert chunk == {
        "type": "data-messages",
        "data": [
            {
                "id": "u",
                "role": "user",
                "parts": [
                    {"type": "text", "text": "hi"},
                    {"type": "file", "mediaType": "text/plain", "url": "data:,x"},
                ],
            },
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {"type": "tool-w", "toolCallId": "c", "state": "output-available", "input": {"q": 1}, "output": 3}
                ],
            },
            {"id": "s", "role": "system", "parts": [{"type": "text", "text": "be nice"}]},
        ],
        "transient": True,
    }


# -- version gating (spec section 9) -----------------------------------------------------------------


@pytest.mark.parametrize("version", [5, 6, 7])
def test_every_chunk_is_in_the_schema_of_the_chosen_client(version: int) -> None:
    chunks = run(FULL_RUN, version)
    check_invariants(chunks, sdk_version=version, message_id="msg-1")
    for chunk in chunks:
        kind = chunk["type"]
        if kind.startswith("data-"):
            assert set(chunk) <= {"type", "id", "data", "transient"}
            continue
        assert kind in CHUNK_TYPES[version]
        assert set(chunk) - {"type"} <= CHUNK_FIELDS[version][kind], chunk


def test_version_5_degrades_what_it_lacks() -> None:
    events = [
        ToolCallStart(id="c", name="rm", title="Remove", dynamic=True, provider_metadata=PM),
        ToolCallEnd(id="c", input={}),
        ToolApprovalRequest(id="a", tool_call_id="c", reason="why"),
        ToolApprovalResponse(id="a", approved=False),
        ToolResult(id="c", denied=True, provider_metadata=PM),
    ]
    assert body(events, 5) == [
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "rm", "dynamic": True},
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "rm", "input": {}, "dynamic": True},
        {"type": "data-tool-approval", "id": "a", "data": {"approvalId": "a", "toolCallId": "c", "reason": "why"}},
        {"type": "data-tool-approval", "id": "a", "data": {"approvalId": "a", "toolCallId": "c", "approved": False}},
        {"type": "tool-output-error", "toolCallId": "c", "errorText": "The tool call was denied.", "dynamic": True},
    ]
    assert run([RunAborted(reason="r")], 5)[-1] == {"type": "abort"}


def test_version_6_has_approvals_but_no_server_answers() -> None:
    events = [
        ToolCallStart(id="c", name="rm", title="Remove"),
        ToolCallEnd(id="c", input={}),
        ToolApprovalRequest(id="a", tool_call_id="c", reason="why"),
        ToolApprovalResponse(id="a", approved=True),
        ToolResult(id="c", output=1, provider_metadata=PM),
    ]
    assert body(events, 6) == [
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "rm", "title": "Remove"},
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "rm", "input": {}, "title": "Remove"},
        {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"},
        {"type": "tool-output-available", "toolCallId": "c", "output": 1, "providerMetadata": PM},
    ]


def test_unsupported_version_is_refused() -> None:
    with pytest.raises(ValueError, match="sdk_version"):
        AISDKMapper(sdk_version=4)


# -- payloads ---------------------------------------------------------------------------------------------


def test_payloads_are_json_the_client_parses() -> None:
    value = {
        "__proto__": {"polluted": True},
        "constructor": {"prototype": {"x": 1}},
        "ok": [1.0, math.nan, math.inf, 1e21, 1e-7, {"__proto__": 1, "keep": 2.5}],
        "10": "a",
        "2": "b",
    }
    cleaned = safe_json(value)
    assert dumps(cleaned) == b'{"2":"b","10":"a","ok":[1,null,null,1e+21,1e-7,{"keep":2.5}]}'
    assert value["__proto__"] == {"polluted": True}  # the caller's value is not changed
    assert safe_json({"constructor": {"name": "x"}}) == {"constructor": {"name": "x"}}
    plain = {"a": [1, "x", None, True]}
    assert safe_json(plain) is plain  # nothing to change: no copy


def test_tool_input_parsing() -> None:
    chunks = body([ToolCallStart(id="c", name="x"), ToolCallArgsDelta(id="c", delta="{oops"), ToolCallEnd(id="c")])
    assert chunks[-1] == {
        "type": "tool-input-error",
        "toolCallId": "c",
        "toolName": "x",
        "input": "{oops",
        "errorText": "The tool call's input is not valid JSON.",
    }
    chunks = body([ToolCallStart(id="c", name="x"), ToolCallArgsDelta(id="c", delta=" "), ToolCallEnd(id="c")])
    assert chunks[-1]["input"] == {}
    chunks = body(
        [ToolCallStart(id="c", name="x"), ToolCallArgsDelta(id="c", delta="[1]"), ToolCallEnd(id="c", input=2)]
    )
    assert chunks[-1]["input"] == 2  # the core's parsed input wins over the streamed text


def test_message_metadata_must_be_an_object() -> None:
    assert body([MessageMetadata(metadata=[1]), MessageMetadata(metadata="x")]) == []
    with pytest.raises(ProtocolError, match="JSON object"):
        run([RunStarted(), MessageMetadata(metadata=3)], strict=True)


def test_a_patch_that_does_not_apply_is_dropped_or_refused() -> None:
    bad = StateDelta(patch=[{"op": "replace", "path": "/missing", "value": 1}])
    assert body([bad]) == []
    with pytest.raises(ProtocolError, match="does not apply"):
        run([RunStarted(), bad], strict=True)
    # the first delta applies to the state the client sent
    assert body([StateDelta(patch=[{"op": "replace", "path": "/n", "value": 2}])], state={"n": 1}) == [
        {"type": "data-state", "id": "state", "data": {"n": 2}}
    ]


# -- steps --------------------------------------------------------------------------------------------------


def test_steps_are_flat_and_empty_ones_send_nothing() -> None:
    events = [
        StepStarted(name="outer"),
        StepStarted(name="inner"),
        TextStart(id="t"),
        TextEnd(id="t"),
        StepFinished(name="inner"),
        StepFinished(name="outer"),
        StepStarted(name="empty"),
        Custom(name="transient only", value=1),
        StepFinished(name="empty"),
    ]
    types = [c["type"] for c in body(events)]
    assert types == ["start-step", "text-start", "text-end", "finish-step", "data-custom"]


def test_text_open_at_the_end_of_a_step_is_closed_and_continues_in_a_new_part() -> None:
    events = [
        StepStarted(name="s"),
        TextStart(id="t"),
        TextDelta(id="t", delta="a"),
        ReasoningStart(id="r"),
        StepFinished(name="s"),
        TextDelta(id="t", delta="b"),
        TextEnd(id="t"),
        ReasoningEnd(id="r"),
    ]
    assert body(events) == [
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "a"},
        {"type": "reasoning-start", "id": "r"},
        {"type": "text-end", "id": "t"},
        {"type": "reasoning-end", "id": "r"},
        {"type": "finish-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "b"},
        {"type": "text-end", "id": "t"},
    ]


def test_a_step_that_starts_while_tool_input_streams_joins_the_current_step() -> None:
    events = [
        ToolCallStart(id="c", name="x"),
        StepStarted(name="s"),
        ToolCallArgsDelta(id="c", delta="{}"),
        ToolCallEnd(id="c"),
        StepFinished(name="s"),
    ]
    assert [c["type"] for c in body(events)] == ["tool-input-start", "tool-input-delta", "tool-input-available"]


# -- the fast path and failures -----------------------------------------------------------------------------


def test_delta_prefixes_give_the_bytes_feed_gives() -> None:
    mapper = AISDKMapper(message_id="m")
    mapper.feed(RunStarted())
    mapper.feed(TextStart(id="t"))
    mapper.feed(ReasoningStart(id="r"))
    mapper.feed(ToolCallStart(id='c"1', name="f"))
    for kind, event in (
        ("text-delta", TextDelta(id="t", delta='é"\n')),
        ("reasoning-delta", ReasoningDelta(id="r", delta="x")),
        ("tool-call-args-delta", ToolCallArgsDelta(id='c"1', delta='{"a":')),
    ):
        prefix = mapper.delta_prefixes[kind][event.id]
        [chunk] = mapper.feed(event)
        assert prefix + orjson.dumps(event.delta) + b"}" == dumps(chunk)
    # The writer keeps a tool input's argument text where the mapper reads it at the input's end.
    mapper.delta_pieces['c"1'].append("1}")
    assert mapper.feed(ToolCallEnd(id='c"1'))[-1]["input"] == {"a": 1}
    assert mapper.delta_prefixes["tool-call-args-delta"] == {} and mapper.delta_pieces == {}
    mapper.feed(StepStarted(name="s"))  # start-step is pending: deltas must go through feed
    assert mapper.delta_prefixes == {"text-delta": {}, "reasoning-delta": {}, "tool-call-args-delta": {}}
    assert [c["type"] for c in mapper.feed(TextDelta(id="t", delta="x"))] == ["start-step", "text-delta"]
    assert set(mapper.delta_prefixes["text-delta"]) == {"t"}
    mapper.feed(TextEnd(id="t"))
    assert mapper.delta_prefixes["text-delta"] == {}


def test_fail_closes_open_parts_then_sends_one_error() -> None:
    mapper = AISDKMapper(message_id="m")
    mapper.feed(RunStarted())
    mapper.feed(StepStarted(name="s"))
    mapper.feed(TextStart(id="t"))
    mapper.feed(ToolCallStart(id="c", name="x"))
    mapper.feed(ToolCallArgsDelta(id="c", delta='{"a":1}'))
    assert mapper.fail("An error occurred.") == [
        {"type": "text-end", "id": "t"},
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "x", "input": {"a": 1}},
        {"type": "finish-step"},
        {"type": "error", "errorText": "An error occurred."},
    ]
    assert mapper.fail("again") == []  # the run already ended with an error
    finished = AISDKMapper()
    finished.feed(RunFinished())
    assert finished.fail("late") == [{"type": "error", "errorText": "late"}]
    strict = AISDKMapper(strict=True, message_id="m")
    assert strict.fail("x") == [{"type": "start", "messageId": "m"}, {"type": "error", "errorText": "x"}]


def test_continuation_reaches_known_tool_calls_and_approvals() -> None:
    chunks = run(
        [RunStarted(), ToolApprovalResponse(id="a", approved=True), ToolResult(id="old", output=1), RunFinished()],
        known_tool_calls=["old"],
        known_approvals=["a"],
    )
    check_invariants(chunks, message_id="m", known_tool_calls=("old",), known_approvals=("a",))
    assert [c["type"] for c in chunks] == ["start", "tool-approval-response", "tool-output-available", "finish"]
    # without them, both are unknown and dropped
    assert [c["type"] for c in run([ToolApprovalResponse(id="a", approved=True), ToolResult(id="old")])] == [
        "start",
        "finish",
    ]
