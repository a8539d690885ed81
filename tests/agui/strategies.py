"""Hypothesis strategies for the AG-UI tests: JSON states and ChatEvent runs (careful ones and sloppy ones)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from streamkit.agui.state import diff
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
    TextPart,
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
from streamkit.stringify import to_json

# --- JSON states ------------------------------------------------------------------------------------

# Keys that need RFC 6901 escaping, look like array indices, are empty, or are special to JavaScript.
KEYS = st.one_of(
    st.sampled_from(
        [
            "",
            "a",
            "b",
            "a/b",
            "/",
            "~",
            "~0",
            "~1",
            "a~/b",
            "0",
            "1",
            "01",
            "-",
            "__proto__",
            "constructor",
            "prototype",
            "toString",
            "é",
            "sp ace",
        ]
    ),
    st.text(max_size=3),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, -1, 1.0, 0.0, -0.0, 1.5, 1e21, 1e-7, 2**53 - 1]),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=4)),
    max_leaves=14,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    copy = list(value)
    copy[head] = _set(copy[head], rest, new)
    return copy


@st.composite
def edit(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one small change somewhere inside (what a real agent's state update looks like)."""
    path = draw(st.sampled_from(_paths(value)))
    target: Any = value
    for step in path:
        target = target[step]
    kind = draw(st.sampled_from(["replace", "retype", "insert", "delete", "wrap", "nest"]))
    if kind == "retype":  # the edits jsonpatch gets wrong: True <-> 1, 1 <-> 1.0, [] <-> {}
        if type(target) is bool:
            new = int(target)
        elif type(target) is int and target in (0, 1):
            new = bool(target)
        elif type(target) is int:
            new = float(target)
        elif isinstance(target, list):
            new = {str(i): v for i, v in enumerate(target)}
        elif isinstance(target, dict):
            new = list(target.values())
        else:
            new = draw(SCALARS)
    elif kind == "insert" and isinstance(target, list):
        at = draw(st.integers(0, len(target)))
        new = [*target[:at], draw(JSON), *target[at:]]
    elif kind == "insert" and isinstance(target, dict):
        new = {**target, draw(KEYS): draw(JSON)}
    elif kind == "delete" and isinstance(target, list) and target:
        at = draw(st.integers(0, len(target) - 1))
        new = target[:at] + target[at + 1 :]
    elif kind == "delete" and isinstance(target, dict) and target:
        gone = draw(st.sampled_from(sorted(target)))
        new = {k: v for k, v in target.items() if k != gone}
    elif kind == "wrap":
        new = [target] if draw(st.booleans()) else {draw(KEYS): target}
    elif kind == "nest" and isinstance(target, list) and target:
        at = draw(st.integers(0, len(target) - 1))
        new = [*target[:at], [target[at]], *target[at + 1 :]]
    else:
        new = draw(JSON)
    return _set(value, path, new)


@st.composite
def state_sequences(draw: st.DrawFn, max_size: int = 6) -> list[Any]:
    """A run of states: each a fresh JSON value or a few edits of the one before (root scalars included)."""
    states = [draw(JSON)]
    for _ in range(draw(st.integers(0, max_size))):
        if draw(st.integers(0, 4)) == 0:
            states.append(draw(JSON))
        else:
            value = states[-1]
            for _ in range(draw(st.integers(1, 3))):
                value = draw(edit(value))
            states.append(value)
    return states


# --- ChatEvent runs ---------------------------------------------------------------------------------

TEXT = st.text(max_size=6)
OUTPUTS = st.one_of(st.text(max_size=6), JSON)
CUSTOM_EVENTS = st.one_of(
    st.builds(
        Data,
        name=st.sampled_from(["weather", "chart"]),
        data=JSON,
        id=st.sampled_from([None, "d1"]),
        transient=st.booleans(),
    ),
    st.builds(
        Source,
        id=st.sampled_from(["s1", "s2"]),
        url=st.sampled_from([None, "https://example.com/a"]),
        title=st.sampled_from([None, "A"]),
        media_type=st.sampled_from([None, "application/pdf"]),
        filename=st.sampled_from([None, "a.pdf"]),
    ),
    st.builds(
        File, url=st.just("data:text/plain;base64,aGk="), media_type=st.just("text/plain"), reasoning=st.booleans()
    ),
    st.builds(MessageMetadata, metadata=JSON),
    st.builds(
        ProviderPart,
        kind=st.sampled_from(["openai.compaction", "anthropic.marker"]),
        provider_metadata=st.one_of(
            st.none(),
            st.dictionaries(st.sampled_from(["openai", "x"]), st.dictionaries(KEYS, JSON, max_size=2), max_size=2),
        ),
    ),
    st.builds(
        UserMessage,
        id=st.sampled_from(["u1", "u2", "h-user"]),
        text=TEXT,
        files=st.one_of(
            st.none(),
            st.lists(
                st.builds(
                    UserFile,
                    url=st.just("data:text/plain;base64,aGk="),
                    media_type=st.just("text/plain"),
                    filename=st.sampled_from([None, "hi.txt"]),
                ),
                max_size=2,
            ),
        ),
    ),
    st.builds(Custom, name=st.sampled_from(["progress", "ui.toast"]), value=JSON),
    st.builds(Raw, event=JSON, source=st.sampled_from([None, "openai"])),
)
HISTORY = [Message(id="h-user", role="user", parts=[TextPart(text="earlier")])]


@st.composite
def careful_runs(draw: st.DrawFn) -> list[ChatEvent]:
    """A run a careful core would yield: blocks opened before use and closed, one terminal event at the end."""
    events: list[ChatEvent] = [RunStarted(message_id=draw(st.sampled_from([None, "asst"])))]
    if draw(st.integers(0, 5)) == 0:
        events.append(
            MessagesSnapshot(
                messages=[*HISTORY, Message(id="h-asst", role="assistant", parts=[TextPart(text="before")])]
            )
        )
    texts: dict[str, None] = {}
    used_texts: list[str] = []
    reasonings: dict[str, None] = {}
    tools: dict[str, bool] = {}  # open tool call -> whether args were streamed
    ended: list[str] = []
    results: set[str] = set()
    approvals: list[str] = []
    steps: dict[str, None] = {}
    state: Any = {}
    counter = iter(range(1000))
    for _ in range(draw(st.integers(0, 24))):
        action = draw(
            st.sampled_from(
                [
                    "text",
                    "text",
                    "reasoning",
                    "tool",
                    "tool",
                    "whole-call",
                    "result",
                    "approval",
                    "step",
                    "snapshot",
                    "update",
                    "update",
                    "delta",
                    "custom",
                    "bad-delta",
                    "reset",
                ]
            )
        )
        n = next(counter)
        if action == "text":
            if texts and draw(st.booleans()):
                tid = draw(st.sampled_from(sorted(texts)))
                if draw(st.booleans()):
                    events.append(TextDelta(id=tid, delta=draw(TEXT)))
                else:
                    events.append(TextEnd(id=tid, citations=draw(CITATIONS)))
                    del texts[tid]
            else:
                tid = f"t{n}"
                texts[tid] = None
                used_texts.append(tid)
                events += [TextStart(id=tid), TextDelta(id=tid, delta=draw(TEXT))]
        elif action == "reasoning":
            if reasonings and draw(st.booleans()):
                rid = draw(st.sampled_from(sorted(reasonings)))
                if draw(st.booleans()):
                    events.append(ReasoningDelta(id=rid, delta=draw(TEXT)))
                else:
                    events.append(ReasoningEnd(id=rid, encrypted_value=draw(st.sampled_from([None, "enc"]))))
                    del reasonings[rid]
            else:
                rid = f"r{n}"
                reasonings[rid] = None
                events += [ReasoningStart(id=rid), ReasoningDelta(id=rid, delta=draw(TEXT))]
        elif action == "tool":
            if tools and draw(st.booleans()):
                cid = draw(st.sampled_from(sorted(tools)))
                if draw(st.booleans()):
                    events.append(ToolCallArgsDelta(id=cid, delta=draw(st.sampled_from(['{"a":', "1}", "", "x"]))))
                    tools[cid] = True
                else:
                    error = draw(st.sampled_from([None, "invalid input"]))
                    events.append(
                        ToolCallEnd(
                            id=cid,
                            input=draw(st.one_of(st.none(), JSON)),
                            error=error,
                            tool_metadata=draw(TOOL_METADATA),
                        )
                    )
                    del tools[cid]
                    ended.append(cid)
            else:
                cid = f"c{n}"
                tools[cid] = False
                events.append(
                    ToolCallStart(
                        id=cid,
                        name=draw(st.sampled_from(["search", "front_tool"])),
                        title=draw(st.sampled_from([None, "Search"])),
                        dynamic=draw(st.booleans()),
                        provider_executed=draw(st.booleans()),
                        input_encoding=draw(st.sampled_from([None, "json", "text"])),
                        tool_metadata=draw(TOOL_METADATA),
                    )
                )
        elif action == "whole-call":
            cid = f"c{n}"
            events.append(ToolCallEnd(id=cid, name="lookup", input=draw(JSON)))
            ended.append(cid)
        elif action == "result":
            waiting = [c for c in ended if c not in results]
            if waiting:
                cid = draw(st.sampled_from(waiting))
                kind = draw(st.sampled_from(["output", "output", "error", "denied", "preliminary"]))
                if kind == "preliminary":
                    events.append(ToolResult(id=cid, output=draw(OUTPUTS), preliminary=True))
                else:
                    results.add(cid)
                    events.append(
                        ToolResult(
                            id=cid,
                            output=draw(OUTPUTS) if kind == "output" else None,
                            error="it failed" if kind == "error" else None,
                            denied=kind == "denied",
                            tool_metadata=draw(TOOL_METADATA),
                        )
                    )
        elif action == "approval":
            waiting = [c for c in ended if c not in results]
            if approvals and draw(st.booleans()):
                events.append(ToolApprovalResponse(id=draw(st.sampled_from(approvals)), approved=draw(st.booleans())))
            elif waiting:
                aid = f"ap{n}"
                approvals.append(aid)
                events.append(
                    ToolApprovalRequest(
                        id=aid,
                        tool_call_id=draw(st.sampled_from(waiting)),
                        reason=draw(st.sampled_from([None, "Run it?"])),
                    )
                )
        elif action == "step":
            if steps and draw(st.booleans()):
                name = draw(st.sampled_from(sorted(steps)))
                events.append(StepFinished(name=name))
                del steps[name]
            else:
                steps[f"step{n}"] = None
                events.append(StepStarted(name=f"step{n}"))
        elif action == "snapshot":
            state = draw(JSON)
            events.append(StateSnapshot(state=state))
        elif action == "update":
            new = draw(edit(state)) if draw(st.booleans()) else draw(JSON)
            events.append(StateUpdate(state=new))
            state = new
        elif action == "delta":
            new = draw(edit(state))
            patch = diff(to_json(state), to_json(new), snapshot_when_larger=False)
            if patch is not None:
                events.append(StateDelta(patch=patch))
                state = new
        elif action == "reset":  # what is open is discarded; its ids may come back (tool call ids may not)
            events.append(StepReset())
            texts.clear()
            reasonings.clear()
            tools.clear()
            if draw(st.booleans()) and used_texts:  # a retry that reuses a text id: a new message
                tid = draw(st.sampled_from(used_texts))
                events += [TextStart(id=tid), TextDelta(id=tid, delta="again")]
                texts[tid] = None
        elif action == "bad-delta":  # a patch that would fail on the client: it must never be sent
            events.append(StateDelta(patch=[{"op": "replace", "path": "/no/such/path", "value": 1}]))
        else:
            events.append(draw(CUSTOM_EVENTS))
    # Close most of what is open (the checker closes the rest).
    for tid in texts:
        if draw(st.booleans()):
            events.append(TextEnd(id=tid))
    for rid in reasonings:
        if draw(st.booleans()):
            events.append(ReasoningEnd(id=rid))
    for cid in tools:
        if draw(st.booleans()):
            events.append(ToolCallEnd(id=cid))
    for name in steps:
        if draw(st.booleans()):
            events.append(StepFinished(name=name))
    end = draw(st.sampled_from(["finish", "finish", "interrupt", "error", "abort", "none"]))
    if end == "finish":
        events.append(
            RunFinished(
                finish_reason=draw(st.sampled_from(["stop", "tool-calls", "length"])),
                usage=draw(
                    st.sampled_from(
                        [
                            None,
                            Usage(input_tokens=3, output_tokens=5, total_tokens=8),
                            Usage(
                                input_tokens=30,
                                output_tokens=5,
                                total_tokens=35,
                                reasoning_tokens=2,
                                cached_input_tokens=20,
                                cache_write_input_tokens=7,
                                provider="anthropic",
                                model="m",
                            ),
                        ]
                    )
                ),
                result=draw(st.one_of(st.none(), JSON)),
            )
        )
    elif end == "interrupt":
        events.append(
            RunFinished(
                interrupts=[Interrupt(id="i1", reason="confirm", message="Sure?", response_schema={"type": "boolean"})]
            )
        )
    elif end == "error":
        events.append(RunError(message="the model failed", code=draw(st.sampled_from([None, "model_error"]))))
    elif end == "abort":
        events.append(RunAborted(reason=draw(st.sampled_from([None, "user stop"]))))
    return events


CITATIONS = st.one_of(
    st.none(),
    st.lists(
        st.builds(
            Citation,
            source=st.builds(
                Source,
                id=st.sampled_from(["s1", "s2"]),
                url=st.sampled_from([None, "https://example.com/a"]),
                title=st.sampled_from([None, "A"]),
                media_type=st.sampled_from([None, "application/pdf"]),
            ),
            start_index=st.sampled_from([None, 0, 7]),
            end_index=st.sampled_from([None, 3]),
            cited_text=st.sampled_from([None, "cited"]),
        ),
        max_size=2,
    ),
)
TOOL_METADATA = st.one_of(st.none(), st.dictionaries(KEYS, JSON, max_size=2))


# Sloppy cores: tiny shared id alphabets (so ids collide across kinds), blocks used before they are opened,
# never closed, results for unknown calls, events after the end, no RunStarted.
_IDS = st.sampled_from(["a", "b", "c"])
_SLOPPY_EVENT = st.one_of(
    st.builds(RunStarted),
    st.builds(RunFinished),
    st.builds(RunError, message=st.just("boom")),
    st.builds(RunAborted),
    st.builds(StepStarted, name=st.sampled_from(["s1", "s2"])),
    st.builds(StepFinished, name=st.sampled_from(["s1", "s2"])),
    st.builds(TextStart, id=_IDS),
    st.builds(TextDelta, id=_IDS, delta=TEXT),
    st.builds(TextEnd, id=_IDS),
    st.builds(ReasoningStart, id=_IDS),
    st.builds(ReasoningDelta, id=_IDS, delta=TEXT),
    st.builds(ReasoningEnd, id=_IDS),
    st.builds(ToolCallStart, id=_IDS, name=st.just("f")),
    st.builds(ToolCallArgsDelta, id=_IDS, delta=st.sampled_from(['{"x":', "1}", ""])),
    st.builds(ToolCallEnd, id=_IDS, name=st.sampled_from([None, "f"]), input=st.sampled_from([None, {"x": 1}])),
    st.builds(ToolResult, id=_IDS, output=st.just("ok"), preliminary=st.booleans()),
    st.builds(ToolApprovalRequest, id=st.sampled_from(["p1", "p2"]), tool_call_id=_IDS),
    st.builds(ToolApprovalResponse, id=st.sampled_from(["p1", "p2"]), approved=st.booleans()),
    st.builds(StateUpdate, state=JSON),
    st.builds(StepReset),
    st.builds(TextEnd, id=_IDS, citations=CITATIONS),
    st.builds(
        StateDelta,
        patch=st.sampled_from(
            [
                [{"op": "add", "path": "/n", "value": 1}],
                [{"op": "replace", "path": "/n", "value": 2}],
                [{"op": "remove", "path": "/missing"}],
                [{"op": "add", "path": "", "value": {"n": 0}}],
            ]
        ),
    ),
    CUSTOM_EVENTS,
)
sloppy_runs = st.lists(_SLOPPY_EVENT, max_size=30)
