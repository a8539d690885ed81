"""An agent failing at any point (an exception, an unserializable value, a deliberate RunError) ends the
stream in a form both real clients accept: the AI SDK client reports the error, the AG-UI client gets a
RUN_ERROR, and neither sees a torn or malformed stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import agui, aisdk
from streamkit.events import (
    ChatEvent,
    Data,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunError,
    RunStarted,
    Source,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from streamkit.frames import DEFAULT_ERROR_TEXT
from tests.support.oracle import JsOracle


def script() -> list[ChatEvent]:
    """A realistic run, cut anywhere by the failure."""
    return [
        RunStarted(message_id="m1"),
        StepStarted(name="step-1"),
        ReasoningStart(id="r1"),
        ReasoningDelta(id="r1", delta="Let me "),
        ReasoningDelta(id="r1", delta="think."),
        ReasoningEnd(id="r1"),
        StateUpdate(state={"plan": ["look up"], "done": 0}),
        ToolCallStart(id="c1", name="weather"),
        ToolCallArgsDelta(id="c1", delta='{"city":'),
        ToolCallArgsDelta(id="c1", delta='"Paris"}'),
        ToolCallStart(id="c2", name="weather"),
        ToolCallArgsDelta(id="c2", delta='{"city":"Rome"}'),
        ToolCallEnd(id="c1", input={"city": "Paris"}),
        ToolCallEnd(id="c2", input={"city": "Rome"}),
        ToolResult(id="c2", output={"tempC": 25}),
        ToolResult(id="c1", output={"tempC": 21}),
        StateUpdate(state={"plan": ["look up", "answer"], "done": 1}),
        StepFinished(name="step-1"),
        Source(id="s1", url="https://example.org/weather", title="Weather"),
        Data(name="progress", id="p1", data={"pct": 50}),
        TextStart(id="t1"),
        TextDelta(id="t1", delta="It is 21°C "),
        TextDelta(id="t1", delta="in Paris"),
        TextDelta(id="t1", delta=" and 25°C in Rome."),
        TextEnd(id="t1"),
    ]


class Unserializable:
    pass


FAILURES = st.sampled_from(["exception", "unserializable", "run-error"])


def failing_agent(cut: int, failure: str) -> Any:
    async def agent() -> AsyncIterator[ChatEvent]:
        for event in script()[:cut]:
            yield event
        if failure == "exception":
            raise RuntimeError("the model server fell over: password=hunter2")
        if failure == "unserializable":
            yield Data(name="bad", data={"x": Unserializable()})
            yield TextDelta(id="t9", delta="never seen")
        else:
            yield RunError(message="Quota exceeded for this month.", code="quota")

    return agent


def expected_error(failure: str) -> str:
    return "Quota exceeded for this month." if failure == "run-error" else DEFAULT_ERROR_TEXT


async def body(stream: AsyncIterator[bytes]) -> str:
    return b"".join([chunk async for chunk in stream]).decode()


def run_async(coro: Any) -> Any:
    import anyio

    return anyio.run(lambda: coro)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(script())), failure=FAILURES)
def test_ai_sdk_client_reports_the_failure(js: JsOracle, cut: int, failure: str) -> None:
    text = run_async(body(aisdk.encode(failing_agent(cut, failure)())))
    assert "hunter2" not in text
    assert text.endswith("data: [DONE]\n\n")
    answer = js.call("aisdk", {"body": text, "version": 7})
    assert answer["ok"], answer.get("error")
    result = answer["result"]
    assert result["status"] == "error"
    assert result["error"]["message"] == expected_error(failure)
    parts = (result["message"] or {}).get("parts", [])
    assert all(p.get("state") != "streaming" for p in parts), parts  # open parts were closed
    assert answer["warnings"] == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(script())), failure=FAILURES)
def test_ag_ui_client_gets_a_run_error(js: JsOracle, cut: int, failure: str) -> None:
    text = run_async(body(agui.encode(failing_agent(cut, failure)(), thread_id="th", run_id="r1")))
    assert "hunter2" not in text
    answer = js.call("agui", {"runs": [{"body": text}], "threadId": "th"})
    assert answer["ok"], answer.get("error")
    run = answer["result"]["runs"][0]
    assert not run.get("failed"), run
    assert run["runError"]["message"] == expected_error(failure)
    assert answer["warnings"] == []
