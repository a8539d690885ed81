"""The AG-UI forms of what AG-UI has no event for: citations, reasoning files, a step reset, provider parts,
a user message injected mid-run, tool input encoding and tool metadata — exact frames, and the real client
accepting them without a warning, holding what the ChatEvents meant."""

from __future__ import annotations

from typing import Any

from streamkit import agui
from streamkit.agui import AGUIMapper
from streamkit.events import (
    ChatEvent,
    Citation,
    File,
    ProviderPart,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunFinished,
    RunStarted,
    Source,
    StepFinished,
    StepReset,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UserFile,
    UserMessage,
)
from tests.agui.model import expect, repaired, same
from tests.agui.support import HISTORY, body_of, client_run, custom_events, frames_of
from tests.support.oracle import JsOracle


def frames(events: list[ChatEvent], **options: Any) -> list[dict[str, Any]]:
    mapper = AGUIMapper(thread_id="th", run_id="run", **options)
    out = [f for e in events for f in mapper.feed(e)] + mapper.close()
    assert out[0]["type"] == "RUN_STARTED" and out[-1]["type"] == "RUN_FINISHED"
    return out[1:-1]


def test_citations_go_in_the_text_message_end_metadata() -> None:
    events: list[ChatEvent] = [
        RunStarted(),
        TextStart(id="t"),
        TextEnd(
            id="t",
            provider_metadata={"p": {"a": 1}},
            citations=[
                Citation(source=Source(id="s1", url="https://x", title="X"), start_index=0, end_index=4),
                Citation(source=Source(id="s2", media_type="application/pdf", filename="a.pdf"), cited_text="a"),
            ],
        ),
    ]
    assert frames(events)[-1] == {
        "type": "TEXT_MESSAGE_END",
        "messageId": "t",
        "metadata": {
            "providerMetadata": {"p": {"a": 1}},
            "citations": [
                {"source": {"id": "s1", "url": "https://x", "title": "X"}, "startIndex": 0, "endIndex": 4},
                {"source": {"id": "s2", "mediaType": "application/pdf", "filename": "a.pdf"}, "citedText": "a"},
            ],
        },
    }


def test_reasoning_files_and_provider_parts_are_custom_events() -> None:
    events: list[ChatEvent] = [
        RunStarted(),
        File(url="data:image/png;base64,AA", media_type="image/png", reasoning=True),
        ProviderPart(kind="openai.compaction", provider_metadata={"openai": {"id": "c"}}),
        ProviderPart(kind="anthropic.marker"),
    ]
    assert frames(events) == [
        {
            "type": "CUSTOM",
            "name": agui.FILE,
            "value": {"url": "data:image/png;base64,AA", "mediaType": "image/png", "reasoning": True},
        },
        {"type": "CUSTOM", "name": "openai.compaction", "value": {"openai": {"id": "c"}}},
        {"type": "CUSTOM", "name": "anthropic.marker", "value": None},
    ]


def test_a_user_message_mid_run_is_a_user_text_message_with_a_free_id() -> None:
    events: list[ChatEvent] = [
        RunStarted(),
        UserMessage(
            id="h-user", text="Use metric.", files=[UserFile(url="data:a", media_type="text/plain", filename="a.txt")]
        ),
        UserMessage(id="u2"),
        ToolCallEnd(id="c", name="f", input={}),
    ]
    assert frames(events, reserved_ids=["h-user"]) == [
        {"type": "TEXT_MESSAGE_START", "messageId": "h-user-2", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "h-user-2", "delta": "Use metric."},
        {"type": "TEXT_MESSAGE_END", "messageId": "h-user-2"},
        {
            "type": "CUSTOM",
            "name": agui.FILE,
            "value": {"url": "data:a", "mediaType": "text/plain", "filename": "a.txt", "messageId": "h-user-2"},
        },
        {"type": "TEXT_MESSAGE_START", "messageId": "u2", "role": "user"},
        {"type": "TEXT_MESSAGE_END", "messageId": "u2"},
        # a tool call after the user's message starts a new assistant message, not the one before it
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "c"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    ]


def test_tool_encoding_and_metadata_go_in_the_event_metadata() -> None:
    events: list[ChatEvent] = [
        RunStarted(message_id="m"),
        ToolCallStart(id="c", name="shell", input_encoding="text", tool_metadata={"risk": "low"}),
        ToolCallArgsDelta(id="c", delta="ls"),
        ToolCallEnd(id="c", tool_metadata={"risk": "lower"}),
        ToolResult(id="c", output="a.txt", tool_metadata={"risk": "none"}),
    ]
    start, args, end, result = frames(events)
    assert start["metadata"] == {"inputEncoding": "text", "toolMetadata": {"risk": "low"}}
    assert args == {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "ls"}
    assert end["metadata"] == {"toolMetadata": {"risk": "lower"}}
    assert result["metadata"] == {"toolMetadata": {"risk": "none"}}


def test_a_step_reset_ends_what_is_open_and_says_so() -> None:
    events: list[ChatEvent] = [
        RunStarted(),
        StepStarted(name="s"),
        TextStart(id="t"),
        TextDelta(id="t", delta="draft"),
        ReasoningStart(id="r"),
        ToolCallStart(id="c", name="f"),
        StepReset(),
        TextStart(id="t"),
        TextDelta(id="t", delta="final"),
        TextEnd(id="t"),
        StepFinished(name="s"),
    ]
    out = frames(events)
    reset = [f["type"] for f in out].index("CUSTOM")
    assert out[reset - 4 : reset + 1] == [
        {"type": "TEXT_MESSAGE_END", "messageId": "t"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        {"type": "REASONING_END", "messageId": "r"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "CUSTOM", "name": agui.STEP_RESET, "value": {}},
    ]
    # the client keeps the draft: the retried text gets a message of its own
    assert out[reset + 1] == {"type": "TEXT_MESSAGE_START", "messageId": "t-2", "role": "assistant"}
    assert out[reset + 2] == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "t-2", "delta": "final"}


EVENTS: list[ChatEvent] = [
    RunStarted(thread_id="th", run_id="run"),
    StepStarted(name="call-1"),
    TextStart(id="t"),
    TextDelta(id="t", delta="draft"),
    ToolCallStart(id="c0", name="search"),
    ToolCallArgsDelta(id="c0", delta='{"q":'),
    StepReset(),
    ReasoningStart(id="r"),
    ReasoningDelta(id="r", delta="Think."),
    ReasoningEnd(id="r"),
    File(url="data:image/png;base64,AAAA", media_type="image/png", reasoning=True),
    ToolCallStart(id="c1", name="shell", input_encoding="text", tool_metadata={"risk": "low"}),
    ToolCallArgsDelta(id="c1", delta="ls -la"),
    ToolCallEnd(id="c1"),
    ToolResult(id="c1", output="a.txt", tool_metadata={"risk": "none"}),
    ProviderPart(kind="openai.compaction", provider_metadata={"openai": {"id": "cmp"}}),
    UserMessage(
        id="h-user", text="In French.", files=[UserFile(url="data:text/plain;base64,aGk=", media_type="text/plain")]
    ),
    TextStart(id="t"),
    TextDelta(id="t", delta="Paris."),
    TextEnd(
        id="t", citations=[Citation(source=Source(id="s1", url="https://x", title="X"), start_index=0, end_index=5)]
    ),
    StepFinished(name="call-1"),
    RunFinished(),
]


def test_the_real_client_holds_what_the_events_meant(js: JsOracle) -> None:
    body = body_of(EVENTS, state={}, reserved_ids=["h-user"])
    run = client_run(js, body)
    messages = run["messages"]
    assert [(m["id"], m["role"]) for m in messages] == [
        ("h-user", "user"),
        ("t", "assistant"),
        ("c1-result", "tool"),  # results follow the message holding the call
        ("r", "reasoning"),
        ("h-user-2", "user"),
        ("t-2", "assistant"),
    ]
    assert messages[1]["content"] == "draft"  # AG-UI clients keep what a reset step sent
    assert [c["id"] for c in messages[1]["toolCalls"]] == ["c0", "c1"]
    assert messages[1]["toolCalls"][1]["metadata"] == {"inputEncoding": "text", "toolMetadata": {"risk": "low"}}
    assert messages[2]["metadata"] == {"toolMetadata": {"risk": "none"}}
    assert messages[4]["content"] == "In French."
    assert messages[5]["metadata"]["citations"][0]["source"] == {"id": "s1", "url": "https://x", "title": "X"}
    assert [e["name"] for e in custom_events(run)] == [agui.STEP_RESET, agui.FILE, "openai.compaction", agui.FILE]
    meant = expect(repaired(EVENTS), messages=HISTORY, state={})
    assert same(messages, meant["messages"]) and same(custom_events(run), meant["custom"])
    folded = agui.fold(frames_of(body), messages=HISTORY, state={})
    assert same(folded.messages, messages) and folded.warnings == []
