"""Property tests: for generated runs (careful and sloppy cores), the dialect's stream keeps its rules and the
console's fold of it shows what the events meant: text per bubble in order, every tool call with its args,
status and result, and the final messages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from streamkit.dsh import EVENTS, DSHMapper, encode, fold, parse_sse
from streamkit.events import (
    ChatEvent,
    ProtocolError,
    RunFinished,
    RunStarted,
    SequenceChecker,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallEnd,
    ToolResult,
)
from streamkit.frames import frame
from streamkit.stringify import dumps, js_value, to_json
from tests.agui import strategies as agui_strategies
from tests.aisdk import strategies as aisdk_strategies
from tests.dsh.model import meaning
from tests.support.streams import collect_bytes

HISTORY = [{"id": "u0", "role": "user", "content": "hello"}]

runs = st.one_of(
    aisdk_strategies.well_formed_runs(),
    aisdk_strategies.sloppy_runs(),
    agui_strategies.careful_runs(),
    agui_strategies.sloppy_runs,
)


def wire(value: Any) -> Any:
    """A value as the client parses it from the wire."""
    return orjson.loads(dumps(js_value(to_json(value))))


def _map(events: list[ChatEvent], **options: Any) -> list[dict[str, Any]]:
    mapper = DSHMapper(agent_id="agent-1", run_id="run-1", history=HISTORY, **options)
    return [f for e in events for f in mapper.feed(e)] + mapper.close()


def _strip_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if k != "id"} for m in messages]


def check_rules(frames: list[dict[str, Any]]) -> None:
    names = [f["event"] for f in frames]
    assert set(names) <= set(EVENTS)
    assert names[0] == "meta" and names.count("meta") == 1
    assert names[-1] in ("done", "error")
    assert names.count("done") + names.count("error") == 1
    for f in frames:
        data = f["data"]
        if f["event"] == "step_break":
            assert set(data) >= {"toolName", "callId", "args", "status"}
            assert data["status"] in ("started", "done", "error")
        elif f["event"] in ("chunk", "reasoning"):
            assert set(data) == {"id", "content"}  # no flag to know: the name says which it is
            assert isinstance(data["content"], str) and data["content"]


@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(events=runs)
@example(  # an approval answered twice: the second answer shows nothing
    events=[
        RunStarted(),
        ToolCallEnd(id="c3", name="lookup"),
        ToolApprovalRequest(id="ap4", tool_call_id="c3"),
        ToolApprovalResponse(id="ap4", approved=False),
        ToolApprovalResponse(id="ap4", approved=False),
        RunFinished(),
    ]
)
@example(  # an error with an empty text is an error, not a denial
    events=[RunStarted(), ToolCallEnd(id="c", name="weather"), ToolResult(id="c", error=""), RunFinished()]
)
def test_the_fold_shows_what_the_events_meant(events: list[ChatEvent]) -> None:
    frames = _map(events)
    check_rules(frames)
    folded = fold(orjson.loads(dumps(frames)))
    want = meaning(events, HISTORY)
    assert [[b.text, b.reasoning] for b in folded.bubbles] == want["bubbles"]
    # a console that listens for chunk alone shows the answer, and none of the thinking
    assert "".join(f["data"]["content"] for f in frames if f["event"] == "chunk") == want["answer"]
    assert "".join(f["data"]["content"] for f in frames if f["event"] == "reasoning") == want["thinking"]
    assert folded.step_breaks == sum(1 for f in frames if f["event"] == "step_break")
    assert folded.streamed_tools == wire(want["tools"])
    kind, detail = want["terminal"]
    if kind == "done":
        assert folded.done is not None and folded.done["finishReason"] == detail
        assert _strip_ids(folded.messages or []) == wire(want["messages"])
        # the page's rebuild from done.messages agrees with what the step_breaks showed
        for call_id, card in folded.tools.items():
            if call_id in folded.streamed_tools:
                assert card == folded.streamed_tools[call_id]
        assert (
            sorted(i["id"] for i in folded.done.get("interrupts", []) if i["reason"] == "tool_approval")
            == (want["pending_approvals"])
        )
    else:
        assert folded.error is not None and folded.error["message"] == detail


@settings(max_examples=80, deadline=None)
@given(events=runs, live=st.booleans())
def test_encode_writes_the_mapped_frames_as_named_events(events: list[ChatEvent], live: bool) -> None:
    async def stream() -> AsyncIterator[ChatEvent]:
        for event in events:
            yield event

    source = stream() if live else events
    body = collect_bytes(encode(source, agent_id="agent-1", run_id="run-1", history=HISTORY))
    frames = _map(events)
    for got, want in zip(parse_sse(body), frames, strict=True):
        if want["event"] == "meta":
            got["data"].pop("timestamp"), want["data"].pop("timestamp")
        assert got == orjson.loads(dumps(want))
    expected = b"".join(frame(f["data"], f["event"]) for f in _map(events, clock=lambda: 0.0))
    assert body.count(b"\n\n") == expected.count(b"\n\n")


@settings(max_examples=60, deadline=None)
@given(events=runs, cut=st.integers(min_value=0, max_value=30))
def test_an_agent_exception_ends_the_stream_with_error(events: list[ChatEvent], cut: int) -> None:
    async def agent() -> AsyncIterator[ChatEvent]:
        for event in events[:cut]:
            yield event
        raise RuntimeError("secret detail")

    seen: list[BaseException] = []
    checker = SequenceChecker()
    before = [out for event in events[:cut] for out in checker.feed(event)]
    frames = parse_sse(collect_bytes(encode(agent(), agent_id="a", run_id="r", on_error=seen.append)))
    check_rules(frames)
    assert [str(e) for e in seen] == ["secret detail"]
    assert b"secret detail" not in dumps(frames)
    folded = fold(frames)
    if checker.finished:  # the run had ended on its own: its terminal frame stands
        assert frames[-1]["event"] == ("error" if before[-1].type == "run-error" else "done")
    else:
        assert folded.error == {"message": "An error occurred."}


@settings(max_examples=40, deadline=None)
@given(events=aisdk_strategies.sloppy_runs())
def test_strict_mode_raises_or_keeps_the_rules(events: list[ChatEvent]) -> None:
    try:
        frames = _map(events, strict=True)
    except ProtocolError:
        return
    check_rules(frames)
