"""The chunks only the current ``ai`` 7 client has (citations, reasoning-file, reset-step, custom,
steering-message) and the tool fields of late 6.x/7.x (inputEncoding, toolMetadata): the exact chunks per
sdk_version, the nearest form older clients get, and the real clients accepting them."""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest

from streamkit.aisdk import AISDKMapper, UIMessageFolder, encode, fold
from streamkit.events import (
    ChatEvent,
    Citation,
    File,
    ProtocolError,
    ProviderPart,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunFinished,
    RunStarted,
    Source,
    StateUpdate,
    StepFinished,
    StepReset,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolApprovalRequest,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UserFile,
    UserMessage,
)
from streamkit.stringify import dumps
from tests.aisdk.model import check_invariants, split_frames
from tests.support.oracle import JsOracle
from tests.support.streams import collect_bytes

VERSIONS = [5, 6, 7]


def chunks_of(events: list[ChatEvent], version: int = 7, **options: Any) -> list[dict[str, Any]]:
    mapper = AISDKMapper(sdk_version=version, message_id="m", **options)
    out = [c for e in [RunStarted(), *events] for c in mapper.feed(e)]
    return out + mapper.close()


def body_of(events: list[ChatEvent], **options: Any) -> bytes:
    return collect_bytes(encode(events, **options))


def run_client(js: JsOracle, body: bytes, **req: Any) -> dict[str, Any]:
    answer = js.call("aisdk", {"body": body.decode(), **req})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == [], answer["warnings"]
    result: dict[str, Any] = answer["result"]
    return result


def middle(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks between ``start`` and ``finish``."""
    assert chunks[0]["type"] == "start" and chunks[-1]["type"] == "finish"
    return chunks[1:-1]


# -- citations ------------------------------------------------------------------------------------------

CITED = [
    TextStart(id="t"),
    TextDelta(id="t", delta="Paris is the capital."),
    TextEnd(
        id="t",
        provider_metadata={"p": {"x": 1}},
        citations=[
            Citation(
                source=Source(id="s1", url="https://example.com/paris", title="Paris"), start_index=0, end_index=5
            ),
            Citation(source=Source(id="s2", media_type="application/pdf", filename="atlas.pdf"), cited_text="Paris"),
            Citation(source=Source(id="s1", url="https://example.com/paris", title="Paris")),
        ],
    ),
]


def test_citations_on_text_end_for_7() -> None:
    end = middle(chunks_of(CITED))[-1]
    assert end == {
        "type": "text-end",
        "id": "t",
        "citations": [
            {
                "source": {
                    "type": "source",
                    "sourceType": "url",
                    "id": "s1",
                    "url": "https://example.com/paris",
                    "title": "Paris",
                },
                "startIndex": 0,
                "endIndex": 5,
            },
            {
                "source": {
                    "type": "source",
                    "sourceType": "document",
                    "id": "s2",
                    "mediaType": "application/pdf",
                    "title": "atlas.pdf",
                    "filename": "atlas.pdf",
                },
                "citedText": "Paris",
            },
            {
                "source": {
                    "type": "source",
                    "sourceType": "url",
                    "id": "s1",
                    "url": "https://example.com/paris",
                    "title": "Paris",
                }
            },
        ],
        "providerMetadata": {"p": {"x": 1}},
    }
    assert list(end) == ["type", "id", "citations", "providerMetadata"]  # the reference key order


@pytest.mark.parametrize("version", [5, 6])
def test_citations_before_7_are_source_parts_once_per_source(version: int) -> None:
    events = [Source(id="s2", media_type="application/pdf", title="Atlas"), *CITED]
    chunks = middle(chunks_of(events, version))
    assert [c["type"] for c in chunks] == ["source-document", "text-start", "text-delta", "text-end", "source-url"]
    assert chunks[-2:] == [
        {"type": "text-end", "id": "t", "providerMetadata": {"p": {"x": 1}}},  # s2 was sent before, s1 once
        {"type": "source-url", "sourceId": "s1", "url": "https://example.com/paris", "title": "Paris"},
    ]


# -- files, provider parts, steering ----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_reasoning_file(version: int) -> None:
    chunk = middle(chunks_of([File(url="data:image/png;base64,AA", media_type="image/png", reasoning=True)], version))
    kind = "reasoning-file" if version == 7 else "file"
    assert chunk == [{"type": kind, "mediaType": "image/png", "url": "data:image/png;base64,AA"}]


@pytest.mark.parametrize("version", VERSIONS)
def test_provider_part_is_a_custom_part_on_7_and_dropped_before(version: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streamkit.aisdk")
    events: list[ChatEvent] = [
        ProviderPart(kind="openai.compaction", provider_metadata={"openai": {"id": "c1"}}),
        ProviderPart(kind="anthropic.marker"),
    ]
    chunks = middle(chunks_of(events, version))
    if version == 7:
        assert chunks == [
            {"type": "custom", "kind": "openai.compaction", "providerMetadata": {"openai": {"id": "c1"}}},
            {"type": "custom", "kind": "anthropic.marker"},
        ]
    else:
        assert chunks == []
        assert "dropped ProviderPart('openai.compaction')" in caplog.text


@pytest.mark.parametrize("version", VERSIONS)
def test_user_message_is_a_steering_message_on_7_and_dropped_before(
    version: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="streamkit.aisdk")
    events: list[ChatEvent] = [
        UserMessage(id="u1", text="Use metric units."),
        UserMessage(id="u2", files=[UserFile(url="data:text/plain;base64,aGk=", media_type="text/plain")]),
        UserMessage(
            id="u3",
            text="and this",
            files=[UserFile(url="https://x/a.pdf", media_type="application/pdf", filename="a.pdf")],
        ),
        UserMessage(id="u4"),
    ]
    chunks = middle(chunks_of(events, version))
    if version < 7:
        assert chunks == []
        assert "dropped UserMessage('u1')" in caplog.text
        return
    assert chunks == [
        {"type": "steering-message", "id": "u1", "parts": [{"type": "text", "text": "Use metric units."}]},
        {
            "type": "steering-message",
            "id": "u2",
            "parts": [{"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,aGk="}],
        },
        {
            "type": "steering-message",
            "id": "u3",
            "parts": [
                {"type": "text", "text": "and this"},
                {"type": "file", "mediaType": "application/pdf", "url": "https://x/a.pdf", "filename": "a.pdf"},
            ],
        },
        {"type": "steering-message", "id": "u4", "parts": [{"type": "text", "text": ""}]},
    ]


# -- tool inputEncoding and toolMetadata -----------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_tool_input_encoding_and_metadata(version: int) -> None:
    events: list[ChatEvent] = [
        ToolCallStart(
            id="c",
            name="shell",
            input_encoding="text",
            tool_metadata={"risk": "low"},
            provider_executed=True,
            provider_metadata={"p": {"a": 1}},
            dynamic=True,
            title="Shell",
        ),
        ToolCallArgsDelta(id="c", delta="ls -la "),
        ToolCallArgsDelta(id="c", delta="{not json"),
        ToolCallEnd(id="c"),
        ToolResult(id="c", output="ok", tool_metadata={"risk": "none"}),
        ToolCallStart(id="e", name="echo", input_encoding="text"),
        ToolCallEnd(id="e"),
        ToolCallEnd(id="w", name="whole", input={"a": 1}, tool_metadata={"k": True}),
        ToolResult(id="w", error="failed", tool_metadata={"k": False}),
    ]
    chunks = middle(chunks_of(events, version))
    start, _, _, available, output, start_e, available_e, whole, error = chunks
    if version == 5:
        assert start == {
            "type": "tool-input-start",
            "toolCallId": "c",
            "toolName": "shell",
            "providerExecuted": True,
            "dynamic": True,
        }
        assert "toolMetadata" not in output and "toolMetadata" not in whole
    else:
        assert start == {
            "type": "tool-input-start",
            "toolCallId": "c",
            "toolName": "shell",
            "inputEncoding": "text",
            "providerExecuted": True,
            "providerMetadata": {"p": {"a": 1}},
            "toolMetadata": {"risk": "low"},
            "dynamic": True,
            "title": "Shell",
        }
        assert list(start) == [
            "type", "toolCallId", "toolName", "inputEncoding", "providerExecuted", "providerMetadata",
            "toolMetadata", "dynamic", "title",
        ]  # fmt: skip
        assert available["toolMetadata"] == {"risk": "low"}
        assert output == {
            "type": "tool-output-available",
            "toolCallId": "c",
            "output": "ok",
            "providerExecuted": True,
            "toolMetadata": {"risk": "none"},
            "dynamic": True,
        }
        assert whole["toolMetadata"] == {"k": True} and error["toolMetadata"] == {"k": False}
    # with inputEncoding "text" the argument text is the input as it is, even when it looks like broken JSON
    assert available["type"] == "tool-input-available" and available["input"] == "ls -la {not json"
    assert start_e["type"] == "tool-input-start"
    assert available_e["type"] == "tool-input-available" and available_e["input"] == ""
    check_invariants(chunks_of(events, version), sdk_version=version)


# -- reset-step -------------------------------------------------------------------------------------------

RETRY = [
    StepStarted(name="call-1"),
    TextStart(id="t"),
    TextDelta(id="t", delta="Par"),
    ReasoningStart(id="r"),
    ToolCallEnd(id="c0", name="lookup", input={"q": 1}),
    ToolCallStart(id="c1", name="lookup"),
    ToolCallArgsDelta(id="c1", delta='{"q":'),
    StepReset(),
    TextStart(id="t"),
    TextDelta(id="t", delta="Paris."),
    TextEnd(id="t"),
    StepFinished(name="call-1"),
]


def test_reset_step_drops_the_current_step_without_ending_its_parts() -> None:
    chunks = middle(chunks_of(RETRY))
    assert [c["type"] for c in chunks] == [
        "start-step", "text-start", "text-delta", "reasoning-start", "tool-input-available", "tool-input-start",
        "tool-input-delta", "reset-step", "text-start", "text-delta", "text-end", "finish-step",
    ]  # fmt: skip
    check_invariants(chunks_of(RETRY))
    message = fold(chunks_of(RETRY))
    assert message["parts"] == [{"type": "step-start"}, {"type": "text", "text": "Paris.", "state": "done"}]


@pytest.mark.parametrize("version", [5, 6])
def test_before_7_a_reset_ends_what_is_open_and_drops_nothing(version: int) -> None:
    chunks = middle(chunks_of(RETRY, version))
    reset_at = [c["type"] for c in chunks].index("tool-input-delta") + 1
    assert chunks[reset_at : reset_at + 3] == [
        {"type": "text-end", "id": "t"},
        {"type": "reasoning-end", "id": "r"},
        {
            "type": "tool-input-error",
            "toolCallId": "c1",
            "toolName": "lookup",
            "input": '{"q":',
            "errorText": "The tool call was discarded with its step.",
        },
    ]
    assert "reset-step" not in [c["type"] for c in chunks]
    texts = [p["text"] for p in fold(chunks_of(RETRY, version), sdk_version=version)["parts"] if p["type"] == "text"]
    assert texts == ["Par", "Paris."]


def test_reset_without_steps_drops_the_whole_run_and_keeps_the_state() -> None:
    events: list[ChatEvent] = [
        StateUpdate(state={"n": 1}),
        TextStart(id="t"),
        TextDelta(id="t", delta="x"),
        StepReset(),
        TextDelta(id="t", delta="y"),
    ]
    chunks = middle(chunks_of(events))
    assert chunks[3:] == [
        {"type": "reset-step"},
        {"type": "data-state", "id": "state", "data": {"n": 1}},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "y"},
        {"type": "text-end", "id": "t"},
    ]
    assert fold(chunks_of(events))["parts"] == [
        {"type": "data-state", "id": "state", "data": {"n": 1}},
        {"type": "text", "text": "y", "state": "done"},
    ]


@pytest.mark.parametrize(
    "events",
    [
        [
            StepStarted(name="a"),
            TextStart(id="t"),
            TextDelta(id="t", delta="kept"),
            StepFinished(name="a"),
            StepReset(),
        ],
        [TextStart(id="t"), TextDelta(id="t", delta="kept"), StepStarted(name="a"), StepReset()],  # nothing sent yet
    ],
    ids=["between steps", "step not begun on the wire"],
)
def test_a_reset_the_client_cannot_scope_to_the_step_drops_nothing(events: list[ChatEvent]) -> None:
    chunks = chunks_of([*events, RunFinished()])
    assert "reset-step" not in [c["type"] for c in chunks]
    check_invariants(chunks)
    assert [p["text"] for p in fold(chunks)["parts"] if p["type"] == "text"] == ["kept"]


def test_a_continuation_without_a_step_is_never_reset() -> None:
    chunks = chunks_of([TextStart(id="t"), StepReset()], continuation=True, known_tool_calls=["old"])
    assert "reset-step" not in [c["type"] for c in chunks]


def test_a_text_opened_before_the_step_is_ended_not_dropped() -> None:
    events: list[ChatEvent] = [
        TextStart(id="early"),
        TextDelta(id="early", delta="kept"),
        StepStarted(name="s"),
        TextStart(id="t"),
        StepReset(),
        StepFinished(name="s"),
    ]
    chunks = middle(chunks_of(events))
    assert chunks[-3:] == [{"type": "text-end", "id": "early"}, {"type": "reset-step"}, {"type": "finish-step"}]
    assert fold(chunks_of(events))["parts"] == [
        {"type": "text", "text": "kept", "state": "done"},
        {"type": "step-start"},
    ]


def test_outputs_for_calls_the_client_dropped_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="streamkit.aisdk")
    events: list[ChatEvent] = [
        ToolCallEnd(id="c0", name="lookup", input={}),
        StepReset(),
        ToolResult(id="c0", output=1),
        ToolApprovalRequest(id="a", tool_call_id="c0"),
    ]
    chunks = middle(chunks_of(events))
    assert [c["type"] for c in chunks] == ["tool-input-available", "reset-step"]
    assert "tool call 'c0' was dropped with its step by the client" in caplog.text
    with pytest.raises(ProtocolError, match="dropped with its step"):
        chunks_of(events, strict=True)
    assert [c["type"] for c in middle(chunks_of(events, 6))] == [
        "tool-input-available", "tool-output-available", "tool-approval-request",
    ]  # fmt: skip


def test_the_delta_fast_path_follows_a_reset() -> None:
    """``encode`` writes deltas from the published prefixes: after a reset they must be gone or new."""
    events: list[ChatEvent] = [
        RunStarted(message_id="m"),
        StepStarted(name="s"),
        TextStart(id="t"),
        TextDelta(id="t", delta="a"),
        ReasoningStart(id="r"),
        ReasoningDelta(id="r", delta="b"),
        StepReset(),
        TextDelta(id="t", delta="c"),
        ReasoningDelta(id="r", delta="d"),
        StepFinished(name="s"),
        RunFinished(),
    ]
    for version in VERSIONS:
        mapper = AISDKMapper(sdk_version=version)
        expected = [c for e in events for c in mapper.feed(e)] + mapper.close()
        body = body_of(events, sdk_version=version)
        assert split_frames(body) == [orjson.loads(dumps(c)) for c in expected]
        check_invariants(split_frames(body), sdk_version=version)


# -- the real clients ------------------------------------------------------------------------------------

EVERY_NEW: list[ChatEvent] = [
    RunStarted(message_id="msg-7"),
    StepStarted(name="call-1"),
    TextStart(id="t0"),
    TextDelta(id="t0", delta="draft answer"),
    ToolCallEnd(id="c0", name="search", input={"q": "draft"}),
    StepReset(),
    ReasoningStart(id="r1"),
    ReasoningDelta(id="r1", delta="Look it up."),
    ReasoningEnd(id="r1"),
    File(url="data:image/png;base64,AAAA", media_type="image/png", reasoning=True, provider_metadata={"p": {"k": 1}}),
    ToolCallStart(id="c1", name="shell", input_encoding="text", tool_metadata={"risk": "low"}, title="Shell"),
    ToolCallArgsDelta(id="c1", delta="ls "),
    ToolCallArgsDelta(id="c1", delta="-la"),
    ToolCallEnd(id="c1"),
    ToolResult(id="c1", output="a.txt", tool_metadata={"risk": "none"}),
    ToolCallStart(id="c2", name="calc", dynamic=True, tool_metadata={"n": 1}),
    ToolCallArgsDelta(id="c2", delta='{"x": 2}'),
    ToolCallEnd(id="c2", tool_metadata={"n": 2}),
    ToolResult(id="c2", error="division by zero"),
    ProviderPart(kind="openai.compaction", provider_metadata={"openai": {"id": "cmp-1"}}),
    UserMessage(
        id="steer-1",
        text="Answer in French.",
        files=[UserFile(url="data:text/plain;base64,aGk=", media_type="text/plain", filename="hi.txt")],
    ),
    TextStart(id="t1"),
    TextDelta(id="t1", delta="Paris est la capitale."),
    TextEnd(
        id="t1",
        citations=[
            Citation(
                source=Source(id="s1", url="https://example.com/paris", title="Paris"), start_index=0, end_index=5
            ),
            Citation(
                source=Source(id="s2", media_type="application/pdf", title="Atlas", filename="atlas.pdf"),
                cited_text="Paris",
            ),
        ],
    ),
    StepFinished(name="call-1"),
    RunFinished(),
]


@pytest.mark.parametrize("client", ["chat", "read"])
@pytest.mark.parametrize("version", VERSIONS)
def test_every_new_chunk_through_the_real_client(js: JsOracle, version: int, client: str) -> None:
    body = body_of(EVERY_NEW, sdk_version=version)
    check_invariants(split_frames(body), sdk_version=version)
    result = run_client(js, body, version=version, client=client)
    assert result["error"] is None
    folder = UIMessageFolder(sdk_version=version)
    for chunk in split_frames(body):
        folder.feed(chunk)
    message = result["message"]
    assert message == orjson.loads(dumps(folder.message))
    parts = message["parts"]
    kinds = [p["type"] for p in parts]
    tools = {p["toolCallId"]: p for p in parts if "toolCallId" in p}
    assert tools["c1"]["input"] == "ls -la" and tools["c1"]["output"] == "a.txt"
    assert tools["c2"]["type"] == "dynamic-tool" and tools["c2"]["errorText"] == "division by zero"
    text = next(p for p in parts if p["type"] == "text" and p["text"].startswith("Paris"))
    if version == 7:
        assert "draft answer" not in orjson.dumps(message).decode() and "c0" not in tools
        assert kinds == [
            "step-start", "reasoning", "reasoning-file", "tool-shell", "dynamic-tool", "custom",
            "steering-message", "text",
        ]  # fmt: skip
        assert tools["c1"]["toolMetadata"] == {"risk": "none"}  # inputEncoding is gone once the input is complete
        assert tools["c2"]["toolMetadata"] == {"n": 2}
        assert parts[5] == {
            "type": "custom",
            "kind": "openai.compaction",
            "providerMetadata": {"openai": {"id": "cmp-1"}},
        }
        assert parts[6]["parts"][1] == {
            "type": "file",
            "mediaType": "text/plain",
            "url": "data:text/plain;base64,aGk=",
            "filename": "hi.txt",
        }
        assert [c["source"]["id"] for c in text["citations"]] == ["s1", "s2"]
        assert text["citations"][0]["startIndex"] == 0 and text["citations"][1]["citedText"] == "Paris"
    else:
        assert "draft answer" in [p.get("text") for p in parts]  # older clients keep what was sent
        assert tools["c0"]["state"] == "input-available"
        assert "citations" not in text
        assert kinds[-2:] == ["source-url", "source-document"]
        assert "file" in kinds and "custom" not in kinds and "steering-message" not in kinds
        assert ("toolMetadata" in tools["c1"]) is (version == 6)
