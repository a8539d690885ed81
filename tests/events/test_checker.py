"""The sequence checker: strict mode raises exactly on ill-formed runs; repair mode always yields a
well-formed run that keeps every delta of every block the core opened, in order."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit.events import (
    ChatEvent,
    Data,
    ProtocolError,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunStarted,
    SequenceChecker,
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
)

pytestmark = pytest.mark.usefixtures("quiet_checker")

# Small id alphabets so that reuse, collisions between kinds and unopened ids happen often.
TEXT_IDS = st.sampled_from(["a", "t"])
REASONING_IDS = st.sampled_from(["a", "r"])
TOOL_IDS = st.sampled_from(["a", "c1", "c2"])
STEPS = st.sampled_from(["s1", "s2"])
APPROVALS = st.sampled_from(["p1", "p2"])
DELTAS = st.text(alphabet="xyz", min_size=0, max_size=3)

EVENT = st.one_of(
    st.builds(RunStarted),
    st.builds(RunFinished),
    st.builds(RunError, message=st.just("boom")),
    st.builds(RunAborted),
    st.builds(StepStarted, name=STEPS),
    st.builds(StepFinished, name=STEPS),
    st.builds(TextStart, id=TEXT_IDS),
    st.builds(TextDelta, id=TEXT_IDS, delta=DELTAS),
    st.builds(TextEnd, id=TEXT_IDS),
    st.builds(ReasoningStart, id=REASONING_IDS),
    st.builds(ReasoningDelta, id=REASONING_IDS, delta=DELTAS),
    st.builds(ReasoningEnd, id=REASONING_IDS),
    st.builds(ToolCallStart, id=TOOL_IDS, name=st.just("f")),
    st.builds(ToolCallArgsDelta, id=TOOL_IDS, delta=DELTAS),
    st.builds(ToolCallEnd, id=TOOL_IDS, name=st.sampled_from([None, "f"])),
    st.builds(ToolResult, id=TOOL_IDS, output=st.just(1), preliminary=st.booleans()),
    st.builds(ToolApprovalRequest, id=APPROVALS, tool_call_id=TOOL_IDS),
    st.builds(ToolApprovalResponse, id=APPROVALS, approved=st.booleans()),
    st.builds(StateUpdate, state=st.just({"n": 1})),
    st.builds(Data, name=st.just("x"), data=st.just(1)),
    st.builds(StepReset),
)

# Mostly-sensible runs: a start, a body, usually an end.
RUNS = st.tuples(
    st.booleans(), st.lists(EVENT, max_size=25), st.sampled_from(["finish", "error", "abort", "none"])
).map(
    lambda t: (
        ([RunStarted()] if t[0] else [])
        + t[1]
        + {"finish": [RunFinished()], "error": [RunError(message="e")], "abort": [RunAborted()], "none": []}[t[2]]
    )
)


def _interpret(actions: list[tuple[int, int, str]], end: str) -> list[ChatEvent]:
    """Turn random choices into a well-formed run: each action does one valid thing given what is open."""
    out: list[ChatEvent] = [RunStarted()]
    text: list[str] = []
    reasoning: list[str] = []
    tools: list[str] = []
    ended: list[str] = []
    results: set[str] = set()
    steps: list[str] = []
    approvals: list[str] = []
    n = 0
    for kind, pick, delta in actions:
        n += 1
        if kind == 0:
            if text and pick % 3:
                out.append(TextDelta(id=text[pick % len(text)], delta=delta))
            elif text and pick % 2:
                out.append(TextEnd(id=text.pop(pick % len(text))))
            else:
                text.append(f"t{n}")
                out.append(TextStart(id=f"t{n}"))
        elif kind == 1:
            if reasoning and pick % 3:
                out.append(ReasoningDelta(id=reasoning[pick % len(reasoning)], delta=delta))
            elif reasoning and pick % 2:
                out.append(ReasoningEnd(id=reasoning.pop(pick % len(reasoning))))
            else:
                reasoning.append(f"r{n}")
                out.append(ReasoningStart(id=f"r{n}"))
        elif kind == 2:
            if tools and pick % 3:
                out.append(ToolCallArgsDelta(id=tools[pick % len(tools)], delta=delta))
            elif tools and pick % 2:
                done = tools.pop(pick % len(tools))
                ended.append(done)
                out.append(ToolCallEnd(id=done, input={"d": delta}))
            elif pick % 5 == 4:
                ended.append(f"c{n}")
                out.append(ToolCallEnd(id=f"c{n}", name="f", input={}))
            else:
                tools.append(f"c{n}")
                out.append(ToolCallStart(id=f"c{n}", name="f"))
        elif kind == 3:
            waiting = [c for c in ended if c not in results]
            if waiting and pick % 4 == 3:
                approvals.append(f"p{n}")
                out.append(ToolApprovalRequest(id=f"p{n}", tool_call_id=waiting[pick % len(waiting)]))
            elif waiting:
                call = waiting[pick % len(waiting)]
                prelim = pick % 3 == 1
                if not prelim:
                    results.add(call)
                out.append(ToolResult(id=call, output=delta, preliminary=prelim))
            elif approvals:
                out.append(ToolApprovalResponse(id=approvals[pick % len(approvals)], approved=True))
        elif kind == 4:
            if steps and pick % 2:
                out.append(StepFinished(name=steps.pop(pick % len(steps))))
            else:
                steps.append(f"s{n}")
                out.append(StepStarted(name=f"s{n}"))
        elif kind == 6:
            # discards what is open: text and reasoning ids may come back, open tool calls may not
            text.clear()
            reasoning.clear()
            tools.clear()
            out.append(StepReset())
        else:
            out.append(StateUpdate(state={"n": n}))
    if end == "finish":
        out += [TextEnd(id=i) for i in text] + [ReasoningEnd(id=i) for i in reasoning]
        out += [ToolCallEnd(id=i) for i in tools] + [StepFinished(name=s) for s in steps]
        out.append(RunFinished())
    elif end == "error":
        out.append(RunError(message="e"))
    elif end == "abort":
        out.append(RunAborted())
    return out


ACTIONS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 11), DELTAS), max_size=30)
WELL_FORMED = st.builds(_interpret, ACTIONS, st.sampled_from(["finish", "finish", "error", "abort"]))


@st.composite
def _mutated(draw: st.DrawFn) -> list[ChatEvent]:
    events = draw(WELL_FORMED)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(events)))
        if draw(st.booleans()) and events:
            del events[min(i, len(events) - 1)]
        else:
            events.insert(i, draw(EVENT))
    return events


ANY_RUN = st.one_of(RUNS, WELL_FORMED, _mutated())


def violations(events: Sequence[ChatEvent], *, open_at_stop: bool) -> list[str]:
    """Independent statement of the rules: every way ``events`` is not a well-formed run.

    ``open_at_stop`` allows blocks to be open at RunError/RunAborted (strict mode accepts that and closes them).
    """
    found: list[str] = []
    if not events or not isinstance(events[0], RunStarted):
        found.append("no RunStarted first")
    terminals = [i for i, e in enumerate(events) if isinstance(e, (RunFinished, RunError, RunAborted))]
    if len(terminals) != 1 or terminals[0] != len(events) - 1:
        found.append("not exactly one terminal, last")
    kind_of: dict[str, str] = {}
    text: set[str] = set()
    reasoning: set[str] = set()
    tools_open: set[str] = set()
    tools_seen: set[str] = set()
    final_results: set[str] = set()
    approvals: set[str] = set()
    steps: set[str] = set()
    discarded: set[str] = set()

    def claim(kind: str, bid: str) -> None:
        if kind_of.setdefault(bid, kind) != kind:
            found.append(f"id {bid} shared by {kind_of[bid]} and {kind}")

    for i, e in enumerate(events):
        if isinstance(e, RunStarted) and i != 0:
            found.append("second RunStarted")
        elif isinstance(e, TextStart):
            claim("text", e.id)
            if e.id in text:
                found.append("text reopened")
            text.add(e.id)
        elif isinstance(e, TextDelta):
            if e.id not in text:
                found.append("text delta unopened")
        elif isinstance(e, TextEnd):
            if e.id not in text:
                found.append("text end unopened")
            text.discard(e.id)
        elif isinstance(e, ReasoningStart):
            claim("reasoning", e.id)
            if e.id in reasoning:
                found.append("reasoning reopened")
            reasoning.add(e.id)
        elif isinstance(e, ReasoningDelta):
            if e.id not in reasoning:
                found.append("reasoning delta unopened")
        elif isinstance(e, ReasoningEnd):
            if e.id not in reasoning:
                found.append("reasoning end unopened")
            reasoning.discard(e.id)
        elif isinstance(e, ToolCallStart):
            claim("tool-call", e.id)
            if e.id in tools_seen:
                found.append("tool id reused")
            tools_seen.add(e.id)
            tools_open.add(e.id)
        elif isinstance(e, ToolCallArgsDelta):
            if e.id not in tools_open:
                found.append("args delta unopened")
        elif isinstance(e, ToolCallEnd):
            if e.id in tools_open:
                tools_open.discard(e.id)
            elif e.id in tools_seen or e.name is None:
                found.append("tool end invalid")
            else:
                claim("tool-call", e.id)
                tools_seen.add(e.id)
        elif isinstance(e, StepReset):
            text.clear()
            reasoning.clear()
            discarded |= tools_open
            tools_open.clear()
        elif isinstance(e, ToolResult):
            if e.id not in tools_seen or e.id in tools_open or e.id in discarded:
                found.append("result for unknown, open or discarded call")
            elif e.id in final_results:
                found.append("second final result")
            elif not e.preliminary:
                final_results.add(e.id)
        elif isinstance(e, ToolApprovalRequest):
            if e.tool_call_id not in tools_seen or e.tool_call_id in tools_open or e.tool_call_id in discarded:
                found.append("approval for unknown, open or discarded call")
            elif e.id in approvals:
                found.append("approval id reused")
            approvals.add(e.id)
        elif isinstance(e, ToolApprovalResponse):
            if e.id not in approvals:
                found.append("response to unknown approval")
        elif isinstance(e, StepStarted):
            if e.name in steps:
                found.append("step reopened")
            steps.add(e.name)
        elif isinstance(e, StepFinished):
            if e.name not in steps:
                found.append("step not open")
            steps.discard(e.name)
        elif isinstance(e, (RunFinished, RunError, RunAborted)):
            stop = not isinstance(e, RunFinished)
            if (text or reasoning or tools_open or steps) and not (stop and open_at_stop):
                found.append("blocks open at the end")
            if stop:
                text.clear()
                reasoning.clear()
                tools_open.clear()
                steps.clear()
            if i != len(events) - 1:
                found.append("event after the end")
                break
    return found


def run(checker: SequenceChecker, events: Sequence[ChatEvent]) -> list[ChatEvent]:
    out: list[ChatEvent] = []
    for e in events:
        out += checker.feed(e)
    out += checker.close()
    return out


def deltas(events: Sequence[ChatEvent], *, until_end: bool) -> list[tuple[str, str, str]]:
    """(kind, original id, delta) of every delta, up to the first terminal when ``until_end``."""
    found = []
    for e in events:
        if until_end and isinstance(e, (RunFinished, RunError, RunAborted)):
            break
        for cls, kind in ((TextDelta, "text"), (ReasoningDelta, "reasoning"), (ToolCallArgsDelta, "tool-call")):
            if isinstance(e, cls):
                assert isinstance(e, (TextDelta, ReasoningDelta, ToolCallArgsDelta))
                found.append((kind, e.id.removesuffix(f"-{kind}"), e.delta))
    return found


def opened_deltas(events: Sequence[ChatEvent]) -> list[tuple[str, str, str]]:
    """The deltas the checker must keep: text/reasoning always (blocks are implied), tool arguments only
    for calls the core opened and had not yet closed."""
    kept = []
    tools_open: set[str] = set()
    seen: set[str] = set()
    for e in events:
        if isinstance(e, (RunFinished, RunError, RunAborted)):
            break
        if isinstance(e, ToolCallStart) and e.id not in seen:
            tools_open.add(e.id)
            seen.add(e.id)
        elif isinstance(e, ToolCallEnd):
            if e.id not in seen and e.name is not None:
                seen.add(e.id)
            tools_open.discard(e.id)
        elif isinstance(e, (ToolResult, ToolApprovalRequest)):
            tools_open.discard(e.id if isinstance(e, ToolResult) else e.tool_call_id)
        elif isinstance(e, StepReset):
            tools_open.clear()
        elif isinstance(e, (TextDelta, ReasoningDelta)):
            kind = "text" if isinstance(e, TextDelta) else "reasoning"
            kept.append((kind, e.id, e.delta))
        elif isinstance(e, ToolCallArgsDelta) and e.id in tools_open:
            kept.append(("tool-call", e.id, e.delta))
    return kept


def sent(events: list[ChatEvent]) -> list[ChatEvent]:
    """``events`` without their empty deltas, which the checker passes on as nothing."""
    return [e for e in events if not (isinstance(e, TextDelta | ReasoningDelta | ToolCallArgsDelta) and not e.delta)]


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_RUN)
def test_strict_raises_exactly_on_ill_formed_runs(events: list[ChatEvent]) -> None:
    bad = violations(events, open_at_stop=True)
    checker = SequenceChecker(strict=True)
    if bad:
        with pytest.raises(ProtocolError):
            run(checker, events)
    else:
        out = run(checker, events)
        assert violations(out, open_at_stop=False) == []
        assert [e for e in out if e in events] == sent(events)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_RUN)
def test_repair_always_yields_a_well_formed_run_keeping_every_delta(events: list[ChatEvent]) -> None:
    out = run(SequenceChecker(), events)
    assert violations(out, open_at_stop=False) == []
    assert deltas(out, until_end=False) == [d for d in opened_deltas(events) if d[2]]


@given(ANY_RUN)
def test_well_formed_runs_pass_repair_unchanged(events: list[ChatEvent]) -> None:
    if not violations(events, open_at_stop=False):
        assert run(SequenceChecker(), events) == sent(events)


def test_protocol_error_names_the_event_and_the_reason() -> None:
    checker = SequenceChecker(strict=True)
    checker.feed(RunStarted())
    with pytest.raises(ProtocolError, match=r"TextDelta\(id='t9'\): delta for an unopened text id 't9'") as info:
        checker.feed(TextDelta(id="t9", delta="x"))
    assert info.value.event == TextDelta(id="t9", delta="x")


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        ([TextStart(id="a"), TextStart(id="a")], "reused while open"),
        ([RunFinished(), TextStart(id="a")], "after the run ended"),
        ([ToolResult(id="nope", output=1)], "unknown tool call"),
        ([ToolCallStart(id="c", name="f"), ToolCallStart(id="c", name="f")], "already used"),
        ([TextStart(id="a"), ReasoningStart(id="a")], "already used by a text block"),
        ([TextStart(id="a"), RunFinished()], "blocks still open: text 'a'"),
        ([StepFinished(name="s")], "not open"),
        ([ToolApprovalResponse(id="p", approved=True)], "unknown approval"),
    ],
)
def test_strict_reasons(events: list[ChatEvent], reason: str) -> None:
    checker = SequenceChecker(strict=True)
    checker.feed(RunStarted())
    with pytest.raises(ProtocolError, match=reason):
        for e in events:
            checker.feed(e)


def test_strict_requires_run_started_and_an_end() -> None:
    with pytest.raises(ProtocolError, match="has not started"):
        SequenceChecker(strict=True).feed(TextStart(id="a"))
    checker = SequenceChecker(strict=True)
    checker.feed(RunStarted())
    with pytest.raises(ProtocolError, match="end of stream: the stream ended without RunFinished"):
        checker.close()


def test_repair_synthesizes_start_and_finish_and_closes_blocks(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streamkit.events")
    out = run(SequenceChecker(), [TextDelta(id="t", delta="hi"), ToolCallStart(id="c", name="f")])
    assert out == [
        RunStarted(),
        TextStart(id="t"),
        TextDelta(id="t", delta="hi"),
        ToolCallStart(id="c", name="f"),
        TextEnd(id="t"),
        ToolCallEnd(id="c"),
        RunFinished(),
    ]
    assert "synthesized RunStarted" in caplog.text
    assert "synthesized RunFinished" in caplog.text


def test_repair_renames_an_id_used_by_another_kind() -> None:
    out = run(
        SequenceChecker(),
        [RunStarted(), ReasoningStart(id="m"), ReasoningEnd(id="m"), TextStart(id="m"), TextDelta(id="m", delta="x")],
    )
    assert TextStart(id="m-text") in out
    assert TextDelta(id="m-text", delta="x") in out
    assert TextEnd(id="m-text") in out


def test_error_closes_open_blocks_in_both_modes() -> None:
    for strict in (True, False):
        out = run(SequenceChecker(strict=strict), [RunStarted(), TextStart(id="t"), RunError(message="x")])
        assert out == [RunStarted(), TextStart(id="t"), TextEnd(id="t"), RunError(message="x")]


def test_known_tool_calls_accept_results_from_a_continued_message() -> None:
    checker = SequenceChecker(strict=True, known_tool_calls=["old"])
    out = run(checker, [RunStarted(), ToolResult(id="old", output="ok"), RunFinished()])
    assert out[1] == ToolResult(id="old", output="ok")


def test_whole_tool_call_in_one_event() -> None:
    out = run(
        SequenceChecker(strict=True),
        [RunStarted(), ToolCallEnd(id="c", name="f", input={"a": 1}), ToolResult(id="c", output=2), RunFinished()],
    )
    assert len(out) == 4


def test_step_reset_closes_open_blocks_silently_and_discards_open_tool_calls() -> None:
    for strict in (True, False):
        checker = SequenceChecker(strict=strict)
        events = [
            RunStarted(),
            StepStarted(name="s"),
            TextStart(id="t"),
            TextDelta(id="t", delta="draft"),
            ReasoningStart(id="r"),
            ToolCallStart(id="c", name="f"),
            ToolCallEnd(id="d", name="g", input={}),
            StepReset(),
        ]
        out = [o for e in events for o in checker.feed(e)]
        assert out == events  # nothing added: no ends for what the reset discards
        assert checker.open_blocks == [("step", "s")]  # the step stays open
        # the ids of discarded text and reasoning come back; the discarded call's does not
        assert checker.feed(TextStart(id="t")) == [TextStart(id="t")]
        assert checker.feed(ReasoningStart(id="r")) == [ReasoningStart(id="r")]
        assert checker.feed(ToolResult(id="d", output=1)) == [ToolResult(id="d", output=1)]  # ended before: kept
        for late in (
            ToolResult(id="c", output=1),
            ToolApprovalRequest(id="p", tool_call_id="c"),
            ToolCallArgsDelta(id="c", delta="{"),
            ToolCallStart(id="c", name="f"),
        ):
            if strict:
                with pytest.raises(ProtocolError):
                    checker.feed(late)
            else:
                assert checker.feed(late) == []
        ends = (TextEnd(id="t"), ReasoningEnd(id="r"), StepFinished(name="s"), RunFinished())
        assert [o for e in ends for o in checker.feed(e)] == list(ends)
