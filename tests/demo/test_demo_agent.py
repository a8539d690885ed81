"""The offline scripted agent and the demo's tools: paths, well-formedness, determinism, pacing."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit.demo.agent import INSTANT, Pacing, ScriptedAgent, script
from streamkit.demo.models import OpenAIAgent
from streamkit.demo.paths import choose_path
from streamkit.demo.tools import DEFAULT_TOOLS, run_now, sources_of, tools_by_name
from streamkit.demo.writer import split_tokens
from streamkit.events import (
    ChatEvent,
    Message,
    RunError,
    RunFinished,
    RunInput,
    SequenceChecker,
    Source,
    StateSnapshot,
    StateUpdate,
    TextPart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from streamkit.sources.loop import run_tag

TOOLS = tools_by_name(DEFAULT_TOOLS)

PROMPTS: dict[str, str] = {
    "chat": "Hi there!",
    "weather": "What's the weather in Lisbon?",
    "math": "what is 12 * 7?",
    "several": "Compare the weather in Paris, Tokyo and New York",
    "failure": "What is 1/0?",
    "long": "Tell me a long story",
    "crash": "crash",
    "search": "What is AG-UI?",
}


def run_for(prompt: str, run_id: str = "run-1", history: list[Message] | None = None) -> RunInput:
    messages = [*(history or []), Message(id=f"u-{run_id}", role="user", parts=[TextPart(text=prompt)])]
    return RunInput(thread_id="thread-1", run_id=run_id, messages=messages)


def events_of(prompt: str, pacing: Pacing = INSTANT, run_id: str = "run-1") -> list[ChatEvent]:
    return [event for _, event in script(run_for(prompt, run_id), pacing)]


def text_of(events: list[ChatEvent]) -> str:
    return "".join(e.delta for e in events if e.type == "text-delta")


# --- paths -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "path"),
    [
        *[(prompt, path) for path, prompt in PROMPTS.items()],
        ("hello", "chat"),
        ("thanks!", "chat"),
        ("", "chat"),
        ("weather in Springfield?", "weather"),
        ("Is it raining in london", "weather"),
        ("plan a trip", "several"),
        ("Tokyo versus Sydney", "several"),
        ("2 ^ 10", "math"),
        ("make the tool fail", "failure"),
        ("what is 10 ** 40", "failure"),  # too large: the calculator refuses
        ("write an essay about streams", "long"),
        ("how does json patch work", "search"),
        ("please crash now", "crash"),
    ],
)
def test_choose_path(prompt: str, path: str) -> None:
    assert choose_path(prompt) == path


@pytest.mark.parametrize("path", sorted(PROMPTS))
def test_every_path_is_a_well_formed_run(path: str) -> None:
    events = events_of(PROMPTS[path])
    checker = SequenceChecker(strict=True)
    for event in events[:-1]:
        assert checker.feed(event) == [event]  # nothing to repair
    ending = checker.feed(events[-1])
    assert ending[-1] == events[-1]
    if path != "crash":  # an error may end a run with blocks open: the checker closes them first
        assert ending == [events[-1]]
    assert checker.finished
    assert events[0].type == "run-started"
    assert events[-1].type == ("run-error" if path == "crash" else "run-finished")
    assert any(e.type == "reasoning-delta" for e in events)
    assert text_of(events)


@pytest.mark.parametrize("path", sorted(set(PROMPTS) - {"crash"}))
def test_state_is_a_snapshot_then_step_by_step_updates(path: str) -> None:
    events = events_of(PROMPTS[path])
    states = [e for e in events if isinstance(e, (StateSnapshot, StateUpdate))]
    assert isinstance(states[0], StateSnapshot)
    assert all(isinstance(s, StateUpdate) for s in states[1:])
    first, last = states[0].state, states[-1].state
    assert first["status"] == "working"
    assert {s["status"] for s in first["steps"]} == {"pending"}
    assert last["status"] == ("failed" if path == "failure" else "done")
    assert {s["status"] for s in last["steps"]} <= {"done", "failed"}
    # step by step: each update changes one step (or the task status), never the whole plan at once
    for before, after in itertools.pairwise(states):
        changed = [a for b, a in zip(before.state["steps"], after.state["steps"], strict=True) if a != b]
        assert len(changed) <= 1
        assert changed or before.state["status"] != after.state["status"]
    # every state event holds its own copy
    assert states[0].state is not states[-1].state
    assert first["steps"][0]["status"] == "pending"


@pytest.mark.parametrize("path", ["weather", "math", "several", "failure", "search"])
def test_tool_calls_stream_arguments_then_end_with_the_parsed_input(path: str) -> None:
    events = events_of(PROMPTS[path])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts
    for start in starts:
        deltas = [e.delta for e in events if isinstance(e, ToolCallArgsDelta) and e.id == start.id]
        (end,) = [e for e in events if isinstance(e, ToolCallEnd) and e.id == start.id]
        (result,) = [e for e in events if isinstance(e, ToolResult) and e.id == start.id]
        assert len(deltas) > 1  # streamed in pieces
        assert json.loads("".join(deltas)) == end.input
        output, error = run_now(TOOLS, start.name, end.input)
        assert (result.output, result.error) == (output, error)
        assert events.index(start) < events.index(end) < events.index(result)


def test_one_tool_call_path() -> None:
    events = events_of(PROMPTS["weather"])
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert start.name == "get_weather"
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.output["city"] == "Lisbon" and result.error is None
    assert "**23°C**" in text_of(events)
    (source,) = [e for e in events if isinstance(e, Source)]
    assert source.url == "https://en.wikipedia.org/wiki/Lisbon"


def test_several_tool_calls_interleave_their_arguments_then_compute() -> None:
    events = events_of(PROMPTS["several"])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["get_weather"] * 3 + ["calculate"]
    weather_ids = [s.id for s in starts[:3]]
    # the three weather calls are open together and their deltas alternate
    order = [e.id for e in events if isinstance(e, ToolCallArgsDelta) and e.id in weather_ids]
    assert order[:3] == weather_ids
    first_end = min(i for i, e in enumerate(events) if isinstance(e, ToolCallEnd))
    last_start = max(i for i, e in enumerate(events) if isinstance(e, ToolCallStart) and e.id in weather_ids)
    assert last_start < first_end
    # the second step computes the spread with the calculator: 24 (Tokyo) - 20 (New York) = 4
    (spread,) = [e for e in events if isinstance(e, ToolResult) and e.id == starts[3].id]
    assert spread.output == {"expression": "24 - 20", "result": 4}
    assert [e.name for e in events if e.type == "step-started"] == ["call-tools", "compute", "answer"]
    assert len([e for e in events if isinstance(e, Source)]) == 3


def test_tool_failure_path_reports_the_error_and_recovers() -> None:
    events = events_of(PROMPTS["failure"])
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.error == "division by zero in '1/0'"
    assert result.output is None
    assert "division by zero" in text_of(events)
    assert isinstance(events[-1], RunFinished) and events[-1].finish_reason == "stop"
    failed = [e for e in events if isinstance(e, StateUpdate)][-1].state
    assert [s["status"] for s in failed["steps"]] == ["done", "failed", "done"]


def test_long_path_is_long() -> None:
    events = events_of(PROMPTS["long"])
    assert len([e for e in events if e.type == "text-delta"]) > 300
    assert len(text_of(events)) > 1500


def test_search_path_cites_the_search_results() -> None:
    events = events_of(PROMPTS["search"])
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    cited = [(e.url, e.title) for e in events if isinstance(e, Source)]
    assert cited == [(s["url"], s["title"]) for s in sources_of(result.output)]
    assert cited and all(url.startswith("https://") for url, _ in cited)


def test_crash_path_ends_with_the_agents_error() -> None:
    events = events_of(PROMPTS["crash"])
    assert isinstance(events[-1], RunError)
    assert events[-1].code == "demo_crash"
    assert not any(isinstance(e, RunFinished) for e in events)


def test_chat_path_has_no_tools() -> None:
    events = events_of(PROMPTS["chat"])
    assert not any(e.type.startswith("tool") for e in events)
    assert "Hello!" in text_of(events)
    usage = events[-1].usage  # type: ignore[union-attr]
    assert usage is not None and usage.output_tokens and usage.total_tokens == usage.input_tokens + usage.output_tokens


# --- determinism, ids, pacing ---------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(PROMPTS))
def test_a_script_is_deterministic(path: str) -> None:
    pacing = Pacing(seed=7)
    first = script(run_for(PROMPTS[path]), pacing)
    again = script(run_for(PROMPTS[path]), pacing)
    assert first == again
    assert all(delay >= 0 for delay, _ in first)


def test_seed_changes_only_the_rhythm_of_the_text() -> None:
    a = script(run_for(PROMPTS["chat"]), Pacing(seed=1))
    b = script(run_for(PROMPTS["chat"]), Pacing(seed=2))
    assert [d for d, _ in a] != [d for d, _ in b]
    assert [e for _, e in a] == [e for _, e in b]


def test_ids_are_unique_within_a_run_and_differ_between_runs() -> None:
    one = events_of(PROMPTS["several"], run_id="run-1")
    two = events_of(PROMPTS["several"], run_id="run-2")

    def ids(events: list[ChatEvent]) -> set[str]:
        return {e.id for e in events if e.type in ("text-start", "reasoning-start", "tool-call-start", "source")}  # type: ignore[union-attr]

    assert len(ids(one)) == len(
        [e for e in one if e.type in ("text-start", "reasoning-start", "tool-call-start", "source")]
    )
    assert not ids(one) & ids(two)


def test_run_tag_is_short() -> None:
    assert run_tag("run-1") == "run-1"
    long = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
    assert len(run_tag(long)) == 8 and run_tag(long) == run_tag(long) != run_tag(long[:-1] + "7")


def test_pacing_scales() -> None:
    slow = Pacing().scaled(2)
    assert slow.token == pytest.approx(0.06) and slow.tool == pytest.approx(1.4)
    assert Pacing().scaled(0).token == 0
    with pytest.raises(ValueError):
        Pacing().scaled(-1)
    total = sum(d for d, _ in script(run_for(PROMPTS["weather"]), Pacing()))
    assert 1.0 < total < 10.0  # realistic, not instant and not sluggish
    assert sum(d for d, _ in script(run_for(PROMPTS["weather"]), INSTANT)) == 0


async def test_the_agent_sleeps_between_beats() -> None:
    pacing = Pacing(token=0.002, tool=0.05, think=0.01, jitter=0)
    beats = script(run_for(PROMPTS["math"]), pacing)
    started = time.monotonic()
    seen = [event async for event in ScriptedAgent(pacing)(run_for(PROMPTS["math"]))]
    elapsed = time.monotonic() - started
    assert seen == [e for _, e in beats]
    assert elapsed >= sum(d for d, _ in beats) * 0.9


async def test_closing_the_agent_early_stops_it() -> None:
    agent = ScriptedAgent(Pacing(token=0.01, jitter=0))
    stream = agent(run_for(PROMPTS["long"]))
    got = []
    async for event in stream:
        got.append(event)
        if len(got) == 5:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert len(got) == 5


# --- tokens ----------------------------------------------------------------------------------------


@settings(max_examples=200)
@given(st.text())
def test_split_tokens_round_trips(text: str) -> None:
    tokens = split_tokens(text)
    assert "".join(tokens) == text
    assert all(len(t.strip()) <= 7 for t in tokens)


# --- tools -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("(3 + 4) * 2", 14),
        ("7/2", 3.5),
        ("2^10", 1024),
        ("-3 ** 2", -9),
        ("10 // 3 + 10 % 3", 4),
        ("2**0.5", 1.4142135624),
    ],
)
def test_calculate(expression: str, expected: Any) -> None:
    assert run_now(TOOLS, "calculate", {"expression": expression}) == (
        {"expression": expression, "result": expected},
        None,
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"expression": "1/0"}, "division by zero in '1/0'"),
        ({"expression": "(-8) ** 0.5"}, "the result is not a real number"),
        ({"expression": "9 ** 64"}, "the result is too large for this calculator"),
        ({"expression": "2 ** 100"}, "exponent too large"),
        ({"expression": "__import__('os')"}, "unsupported expression element: Call"),
        ({"expression": "1 +"}, "cannot parse '1 +' as arithmetic"),
        ({"expression": ""}, "calculate needs a non-empty 'expression' string"),
        ({}, "calculate needs a non-empty 'expression' string"),
    ],
)
def test_calculate_errors(args: dict[str, Any], error: str) -> None:
    assert run_now(TOOLS, "calculate", args) == (None, error)


def test_weather_is_stable_and_validated() -> None:
    known, _ = run_now(TOOLS, "get_weather", {"city": "  lisbon "})
    assert known == {"city": "Lisbon", "temperature": 23, "unit": "celsius", "conditions": "sunny", "humidity": 55}
    made_up, _ = run_now(TOOLS, "get_weather", {"city": "Springfield"})
    assert made_up == run_now(TOOLS, "get_weather", {"city": "springfield"})[0]
    fahrenheit, _ = run_now(TOOLS, "get_weather", {"city": "Lisbon", "unit": "fahrenheit"})
    assert fahrenheit["temperature"] == 73
    assert run_now(TOOLS, "get_weather", {"city": 3})[1] == "get_weather needs a non-empty 'city' string"
    assert run_now(TOOLS, "get_weather", {"city": "Oslo", "unit": "kelvin"})[1] is not None


def test_search_docs() -> None:
    found, _ = run_now(TOOLS, "search_docs", {"query": "How do JSON Patch state deltas work?"})
    assert found["matched"] is True
    assert [r["title"] for r in found["results"]] == ["AG-UI: State Management", "RFC 6902: JSON Patch"]
    nothing, _ = run_now(TOOLS, "search_docs", {"query": "quantum chromodynamics", "limit": 1})
    assert nothing["matched"] is False and len(nothing["results"]) == 1
    assert run_now(TOOLS, "search_docs", {"query": "x", "limit": 9})[1] == "'limit' must be an integer from 1 to 5"


def test_run_now_never_raises() -> None:
    assert run_now(TOOLS, "nope", {}) == (None, "unknown tool 'nope'")
    assert run_now(TOOLS, "calculate", "1+1") == (None, "calculate expects a JSON object as input, got str")


def test_tool_specs_are_openai_functions() -> None:
    specs = OpenAIAgent("http://h/v1", "m").request_body([])["tools"]
    for tool, spec in zip(DEFAULT_TOOLS, specs, strict=True):
        assert spec["type"] == "function"
        assert spec["function"]["name"] == tool.name
        assert spec["function"]["parameters"]["type"] == "object"
        assert set(spec["function"]["parameters"]["required"]) <= set(spec["function"]["parameters"]["properties"])
