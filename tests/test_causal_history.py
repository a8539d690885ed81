"""Property: history stays causal on both protocols.

For generated multi-step runs (each step: optional text, parallel tool calls, then their results in any
order; a final answer), the messages the real clients fold (``ai`` 7's Chat, AG-UI's HttpAgent), sent back
and converted by each protocol's ``to_run_input``, list every tool result after its call, every step's
calls together in an assistant message of their own, and every result of a step before the next step's
calls, which is the order a model must see them in.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import agui, aisdk
from streamkit.events import (
    ChatEvent,
    RunFinished,
    RunInput,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallEnd,
    ToolCallPart,
    ToolResult,
    ToolResultPart,
)
from tests.support.oracle import JsOracle
from tests.support.streams import collect_bytes

Steps = list[list[str]]  # the tool call ids of each step, in call order


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[ChatEvent], Steps]:
    """A multi-step run and the call ids of each of its tool steps."""
    n_steps = draw(st.integers(1, 4))
    events: list[ChatEvent] = [RunStarted(message_id="m1")]
    steps: Steps = []
    for s in range(1, n_steps + 1):
        events.append(StepStarted(name=f"step-{s}"))
        if draw(st.booleans()):
            events += [TextStart(id=f"t{s}"), TextDelta(id=f"t{s}", delta=f"step {s}"), TextEnd(id=f"t{s}")]
        ids = [f"c{s}_{k}" for k in range(draw(st.integers(1, 3)))]
        events += [ToolCallEnd(id=cid, name="lookup", input={"n": i}) for i, cid in enumerate(ids)]
        for cid in draw(st.permutations(ids)):
            events.append(ToolResult(id=cid, error="no") if draw(st.booleans()) else ToolResult(id=cid, output=cid))
        events.append(StepFinished(name=f"step-{s}"))
        steps.append(ids)
    events += [
        StepStarted(name="answer"),
        TextStart(id="ta"),
        TextDelta(id="ta", delta="done"),
        TextEnd(id="ta"),
        StepFinished(name="answer"),
        RunFinished(),
    ]
    return events, steps


def _sse(stream: Any) -> str:
    return collect_bytes(stream).decode()


def assert_causal(run: RunInput, steps: Steps) -> None:
    """Every result after its call; each step's calls alone in one assistant message; steps in order."""
    seen: list[tuple[str, str, int]] = []  # (kind, call id, message index) in history order
    for m, message in enumerate(run.messages):
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                assert message.role == "assistant"
                seen.append(("call", part.id, m))
            elif isinstance(part, ToolResultPart):
                seen.append(("result", part.id, m))
    calls = {cid: i for i, (kind, cid, _) in enumerate(seen) if kind == "call"}
    results = {cid: i for i, (kind, cid, _) in enumerate(seen) if kind == "result"}
    assert set(calls) == set(results) == {cid for step in steps for cid in step}
    for cid, at in results.items():
        assert at > calls[cid], f"the result of {cid} comes before its call"
    holders: dict[int, list[str]] = {}
    for kind, cid, m in seen:
        if kind == "call":
            holders.setdefault(m, []).append(cid)
    assert list(holders.values()) == steps  # one assistant message per step, holding exactly its calls
    for earlier, later in itertools.pairwise(steps):
        assert max(results[c] for c in earlier) < min(calls[c] for c in later)


USER_AISDK = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}
USER_AGUI = {"id": "u1", "role": "user", "content": "go"}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs())
def test_aisdk_history_is_causal(js: JsOracle, generated: tuple[list[ChatEvent], Steps]) -> None:
    events, steps = generated
    answer = js.call("aisdk", {"body": _sse(aisdk.encode(events)), "messages": [USER_AISDK]})
    assert answer["ok"], answer.get("error")
    message = answer["result"]["message"]
    body = {"id": "chat", "messages": [USER_AISDK, message], "trigger": "submit-message"}
    assert_causal(aisdk.to_run_input(aisdk.ChatRequest.model_validate(body)), steps)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs())
def test_agui_history_is_causal(js: JsOracle, generated: tuple[list[ChatEvent], Steps]) -> None:
    events, steps = generated
    body = _sse(agui.encode(events, thread_id="th", run_id="r1"))
    answer = js.call("agui", {"runs": [{"body": body, "addMessages": [USER_AGUI]}]})
    assert answer["ok"], answer.get("error")
    (run,) = answer["result"]["runs"]
    assert run["failed"] is None
    request = {"threadId": "th", "runId": "r2", "messages": run["messages"], "tools": [], "context": []}
    assert_causal(agui.to_run_input(agui.RunAgentInput.model_validate(request)), steps)
