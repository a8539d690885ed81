"""Hypothesis strategies for ChatEvent sequences: well-formed runs and the sloppy ones real cores produce."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import strategies as st

from streamkit.events import (
    ChatEvent,
    Citation,
    Custom,
    Data,
    File,
    Interrupt,
    MessageMetadata,
    MessagesSnapshot,
    ProviderPart,
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
    StepReset,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UserFile,
    UserMessage,
)

__all__ = ["FULL_RUN", "chat_events", "json_values", "sloppy_runs", "well_formed_runs"]

_KEYS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["__proto__", "constructor", "prototype", "0", "10", "2", "a", "b"]),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)

json_values = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
        st.fixed_dictionaries({"constructor": st.fixed_dictionaries({"prototype": inner})}),
    ),
    max_leaves=12,
)
"""Any JSON value, now and then with keys the AI SDK client refuses (``__proto__``, ``constructor``)."""

_TEXT = st.text(max_size=8)
_NAMES = st.sampled_from(["weather", "search", "get-time", "x"])
_PM = st.none() | st.dictionaries(
    st.sampled_from(["openai", "anthropic"]), st.dictionaries(_KEYS, json_values, max_size=2), max_size=2
)


_SOURCES = st.one_of(
    st.builds(Source, id=st.sampled_from(["s1", "s2"]), url=st.just("https://example.com/a"), title=st.none() | _TEXT),
    st.builds(Source, id=st.just("s3"), media_type=st.just("application/pdf"), title=_TEXT, filename=st.none() | _TEXT),
)
_CITATIONS = st.none() | st.lists(
    st.builds(
        Citation,
        source=_SOURCES,
        start_index=st.none() | st.integers(0, 9),
        end_index=st.none() | st.integers(0, 9),
        cited_text=st.none() | _TEXT,
    ),
    max_size=3,
)
_TOOL_METADATA = st.none() | st.dictionaries(_KEYS, json_values, max_size=2)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(text[last:p])
        last = p
    pieces.append(text[last:])
    return [p for p in pieces if p]


@st.composite
def _text_block(draw: st.DrawFn, bid: str, reasoning: bool) -> list[ChatEvent]:
    deltas = draw(st.lists(_TEXT, max_size=4))
    pm = draw(_PM)
    if reasoning:
        return [
            ReasoningStart(id=bid, provider_metadata=pm),
            *(ReasoningDelta(id=bid, delta=d) for d in deltas),
            ReasoningEnd(id=bid),
        ]
    citations = draw(_CITATIONS)
    return [
        TextStart(id=bid),
        *(TextDelta(id=bid, delta=d) for d in deltas),
        TextEnd(id=bid, provider_metadata=pm, citations=citations),
    ]


@st.composite
def _tool_block(draw: st.DrawFn, cid: str, approvals: list[str]) -> list[ChatEvent]:
    name = draw(_NAMES)
    value = draw(json_values)
    dynamic = draw(st.booleans())
    provider_executed = draw(st.booleans())
    title = draw(st.none() | _TEXT)
    metadata = draw(_TOOL_METADATA)
    how = draw(st.sampled_from(["streamed", "streamed", "whole", "invalid", "error", "text"]))
    out: list[ChatEvent] = []
    if how == "whole":
        out.append(ToolCallEnd(id=cid, name=name, input=value, tool_metadata=metadata))
    elif how == "text":  # the argument text is the input as it is
        out.append(ToolCallStart(id=cid, name=name, dynamic=dynamic, input_encoding="text", tool_metadata=metadata))
        text = draw(st.sampled_from(["", "ls -la", '{"not": json', "[1, 2]"]))
        out += [ToolCallArgsDelta(id=cid, delta=p) for p in _split(text, draw(st.lists(st.integers(0, 99))))]
        out.append(ToolCallEnd(id=cid))
    else:
        out.append(
            ToolCallStart(
                id=cid,
                name=name,
                dynamic=dynamic,
                provider_executed=provider_executed,
                title=title,
                input_encoding=draw(st.none() | st.just("json")),
                tool_metadata=metadata,
            )
        )
        text = orjson.dumps(value).decode() if how != "invalid" else '{"broken": '
        if how == "streamed" and draw(st.booleans()):
            out += [ToolCallArgsDelta(id=cid, delta=p) for p in _split(text, draw(st.lists(st.integers(0, 99))))]
            out.append(ToolCallEnd(id=cid))
        elif how == "invalid":
            out += [ToolCallArgsDelta(id=cid, delta=text), ToolCallEnd(id=cid)]
        elif how == "error":
            out.append(ToolCallEnd(id=cid, input=value, error=draw(_TEXT)))
            return out
        else:
            out.append(ToolCallEnd(id=cid, input=value))
    if draw(st.booleans()):
        aid = f"ap-{cid}"
        approvals.append(aid)
        out.append(ToolApprovalRequest(id=aid, tool_call_id=cid, reason=draw(st.none() | _TEXT)))
        if draw(st.booleans()):
            out.append(ToolApprovalResponse(id=aid, approved=draw(st.booleans()), reason=draw(st.none() | _TEXT)))
    outcome = draw(st.sampled_from(["output", "output", "error", "denied", "preliminary", "none"]))
    if outcome == "output":
        out.append(
            ToolResult(
                id=cid, output=draw(json_values), provider_metadata=draw(_PM), tool_metadata=draw(_TOOL_METADATA)
            )
        )
    elif outcome == "error":
        out.append(ToolResult(id=cid, error=draw(_TEXT)))
    elif outcome == "denied":
        out.append(ToolResult(id=cid, denied=True))
    elif outcome == "preliminary":
        out.append(ToolResult(id=cid, output=draw(json_values), preliminary=True))
        out.append(ToolResult(id=cid, output=draw(json_values)))
    return out


def _extras() -> st.SearchStrategy[ChatEvent]:
    return st.one_of(
        st.builds(
            Data,
            name=st.sampled_from(["progress", "card", "weather"]),
            data=json_values,
            id=st.none() | st.sampled_from(["d1", "d2"]),
            transient=st.booleans(),
        ),
        st.builds(
            Source, id=st.sampled_from(["s1", "s2"]), url=st.just("https://example.com/a"), title=st.none() | _TEXT
        ),
        st.builds(
            Source,
            id=st.sampled_from(["s3"]),
            media_type=st.just("application/pdf"),
            title=_TEXT,
            filename=st.none() | _TEXT,
        ),
        st.builds(
            File, url=st.just("data:text/plain;base64,SGk="), media_type=st.just("text/plain"), reasoning=st.booleans()
        ),
        st.builds(ProviderPart, kind=st.sampled_from(["openai.compaction", "x.y"]), provider_metadata=_PM),
        st.builds(
            UserMessage,
            id=st.sampled_from(["u1", "u2"]),
            text=_TEXT,
            files=st.none()
            | st.lists(
                st.builds(
                    UserFile,
                    url=st.just("data:text/plain;base64,SGk="),
                    media_type=st.just("text/plain"),
                    filename=st.none() | st.just("a.txt"),
                ),
                max_size=2,
            ),
        ),
        st.builds(MessageMetadata, metadata=json_values),
        st.builds(StateSnapshot, state=json_values),
        st.builds(StateUpdate, state=json_values),
        st.builds(StateDelta, patch=st.just([{"op": "add", "path": "/k", "value": 1}])),
        st.builds(Custom, name=_TEXT, value=json_values),
        st.builds(Raw, event=json_values, source=st.none() | _TEXT),
    )


def _end(draw: st.DrawFn) -> list[ChatEvent]:
    kind = draw(st.sampled_from(["finished", "finished", "finished", "error", "aborted", "none"]))
    if kind == "finished":
        usage = draw(
            st.none()
            | st.builds(
                Usage, input_tokens=st.none() | st.integers(0, 999), output_tokens=st.none() | st.integers(0, 999)
            )
        )
        interrupts = draw(
            st.none()
            | st.lists(
                st.builds(Interrupt, id=st.sampled_from(["i1", "i2"]), reason=_TEXT),
                max_size=2,
                unique_by=lambda i: i.id,
            )
        )
        reason = draw(st.sampled_from(["stop", "length", "tool-calls", "other", "interrupted"]))
        metadata = draw(st.none() | st.dictionaries(_KEYS, json_values, max_size=2))
        return [RunFinished(finish_reason=reason, usage=usage, interrupts=interrupts, metadata=metadata)]
    if kind == "error":
        return [RunError(message=draw(_TEXT), code=draw(st.none() | _TEXT))]
    if kind == "aborted":
        return [RunAborted(reason=draw(st.none() | _TEXT))]
    return []


@st.composite
def well_formed_runs(draw: st.DrawFn) -> list[ChatEvent]:
    """A run that keeps every rule: blocks interleaved but opened, streamed and closed, in steps."""
    out: list[ChatEvent] = [
        RunStarted(
            message_id=draw(st.none() | st.just("msg-1")),
            metadata=draw(st.none() | st.dictionaries(_KEYS, json_values, max_size=2)),
        )
    ]
    approvals: list[str] = []
    n = 0
    for step in range(draw(st.integers(1, 3))):
        use_step = draw(st.booleans())
        if use_step:
            out.append(StepStarted(name=f"step-{step}"))
        blocks: list[list[ChatEvent]] = []
        for _ in range(draw(st.integers(0, 4))):
            n += 1
            kind = draw(st.sampled_from(["text", "text", "reasoning", "tool", "extra"]))
            if kind == "tool":
                blocks.append(draw(_tool_block(f"call-{n}", approvals)))
            elif kind == "extra":
                blocks.append([draw(_extras())])
            else:
                blocks.append(draw(_text_block(f"{kind[0]}{n}", kind == "reasoning")))
        # interleave the blocks, keeping each block's own order
        while any(blocks):
            live = [b for b in blocks if b]
            pick = live[draw(st.integers(0, len(live) - 1))]
            out.append(pick.pop(0))
        if draw(st.integers(0, 4)) == 0:  # the step is retried: its output is discarded
            n += 1
            out += [StepReset(), *draw(_text_block(f"t{n}", False))]
        if use_step:
            out.append(StepFinished(name=f"step-{step}"))
    return out + _end(draw)


_IDS = st.sampled_from(["a", "b", "c1", "x"])


def _any_event() -> st.SearchStrategy[ChatEvent]:
    return st.one_of(
        st.builds(TextStart, id=_IDS),
        st.builds(TextDelta, id=_IDS, delta=_TEXT),
        st.builds(TextEnd, id=_IDS),
        st.builds(ReasoningStart, id=_IDS),
        st.builds(ReasoningDelta, id=_IDS, delta=_TEXT),
        st.builds(ReasoningEnd, id=_IDS),
        st.builds(ToolCallStart, id=_IDS, name=_NAMES, dynamic=st.booleans()),
        st.builds(ToolCallArgsDelta, id=_IDS, delta=st.sampled_from(['{"a":', "1}", "[", "x"])),
        st.builds(
            ToolCallEnd, id=_IDS, input=st.none() | json_values, name=st.none() | _NAMES, error=st.none() | _TEXT
        ),
        st.builds(
            ToolResult,
            id=_IDS,
            output=json_values,
            error=st.none() | _TEXT,
            denied=st.booleans(),
            preliminary=st.booleans(),
        ),
        st.builds(ToolApprovalRequest, id=st.sampled_from(["ap1", "ap2"]), tool_call_id=_IDS),
        st.builds(ToolApprovalResponse, id=st.sampled_from(["ap1", "ap2", "ap3"]), approved=st.booleans()),
        st.builds(StepStarted, name=st.sampled_from(["s1", "s2"])),
        st.builds(StepFinished, name=st.sampled_from(["s1", "s2"])),
        st.builds(RunStarted, message_id=st.none() | st.sampled_from(["m1", "m2"])),
        st.builds(TextEnd, id=_IDS, citations=_CITATIONS),
        st.builds(ToolCallStart, id=_IDS, name=_NAMES, input_encoding=st.just("text")),
        st.just(StepReset()),
        _extras(),
    )


@st.composite
def sloppy_runs(draw: st.DrawFn) -> list[ChatEvent]:
    """What a careless core yields: deltas without a start, blocks left open, ids reused across kinds,
    results for unknown calls, events after the end, steps that never finish."""
    events = draw(st.lists(_any_event(), max_size=25))
    return events + _end(draw) + draw(st.lists(_any_event(), max_size=2))


chat_events = st.one_of(well_formed_runs(), sloppy_runs())
"""A ChatEvent sequence, well-formed or sloppy."""


def describe(events: list[ChatEvent]) -> list[dict[str, Any]]:
    """The events as JSON-able dicts (for failure messages)."""
    return [e.model_dump(mode="json", exclude_defaults=True) for e in events]


# A hand-written run using every event type (and most options).
FULL_RUN: list[ChatEvent] = [
    RunStarted(message_id="msg-1", metadata={"model": "m", "n": 1.0}),
    StepStarted(name="call-1"),
    ReasoningStart(id="r1", provider_metadata={"openai": {"itemId": "x"}}),
    ReasoningDelta(id="r1", delta="Need "),
    ReasoningDelta(id="r1", delta="weather."),
    ReasoningEnd(id="r1"),
    TextStart(id="t1"),
    TextDelta(id="t1", delta="Let me check "),
    TextEnd(id="t1", provider_metadata={"openai": {"done": True}}),
    ToolCallStart(id="call-1", name="weather", title="Weather"),
    ToolCallArgsDelta(id="call-1", delta='{"city":'),
    ToolCallArgsDelta(id="call-1", delta='"Paris"}'),
    ToolCallEnd(id="call-1"),
    ToolCallStart(id="call-2", name="lookup", dynamic=True, provider_executed=True),
    ToolCallArgsDelta(id="call-2", delta='{"q": 1}'),
    ToolCallEnd(id="call-2", provider_metadata={"p": {"a": 1}}),
    ToolCallEnd(id="call-3", name="broken", input="{oops", error="Invalid input"),
    ToolCallEnd(id="call-4", name="delete_all", input={"really": True}),
    ToolApprovalRequest(id="ap-4", tool_call_id="call-4", reason="destructive"),
    ToolApprovalResponse(id="ap-4", approved=False, reason="no"),
    ToolResult(id="call-4", denied=True),
    ToolCallEnd(id="call-5", name="search", input={"q": "x"}),
    ToolResult(id="call-5", error="search is down"),
    ToolResult(id="call-1", output={"tempC": 20.5}, preliminary=True),
    ToolResult(id="call-1", output={"city": "Paris", "tempC": 21.0}, provider_metadata={"p": {"b": 2}}),
    ToolResult(id="call-2", output=[1, 2, 3]),
    StepFinished(name="call-1"),
    StepStarted(name="call-2"),
    StateSnapshot(state={"count": 1, "items": []}),
    StateDelta(
        patch=[{"op": "add", "path": "/items/-", "value": "a"}, {"op": "replace", "path": "/count", "value": 2}]
    ),
    StateUpdate(state={"count": 3, "items": ["a", "b"]}),
    Data(name="progress", data={"pct": 10}, id="p1"),
    Data(name="progress", data={"pct": 100}, id="p1"),
    Data(name="card", data={"title": "t"}),
    Data(name="toast", data="hi", transient=True),
    Source(id="src-1", url="https://example.com", title="Example"),
    Source(id="src-2", media_type="application/pdf", title="Doc", filename="doc.pdf"),
    File(url="data:image/png;base64,AAAA", media_type="image/png"),
    MessageMetadata(metadata={"stage": "answer", "n": {"deep": 1}}),
    MessageMetadata(metadata={"n": {"deeper": 2}}),
    Custom(name="thinking", value={"x": 1}),
    Raw(event={"provider": "event"}, source="openai"),
    MessagesSnapshot(messages=[{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]),
    TextStart(id="t2"),
    TextDelta(id="t2", delta="It is 21°C in Paris."),
    TextEnd(id="t2"),
    StepFinished(name="call-2"),
    RunFinished(
        finish_reason="stop",
        usage=Usage(
            input_tokens=10, output_tokens=20, total_tokens=30, cached_input_tokens=4, cache_write_input_tokens=2
        ),
        metadata={"totalTokens": 30},
        interrupts=[Interrupt(id="int-1", reason="confirm", message="Go on?")],
    ),
]
