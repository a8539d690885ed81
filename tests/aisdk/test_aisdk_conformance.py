"""Conformance with the real client: our bytes through the `ai` package's chunk schema, stream processor
and Chat state machine (tests/js/aisdk.mjs), for `ai` 7 (with `@ai-sdk/react`'s Chat), 6 and 5."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from streamkit.aisdk import UIMessageFolder, encode
from streamkit.events import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunStarted,
    StepFinished,
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
from streamkit.stringify import dumps
from streamkit.testing import validate
from tests.aisdk.model import comparable, meaning, observed, split_frames
from tests.aisdk.strategies import FULL_RUN, chat_events, describe
from tests.support.oracle import JsOracle
from tests.support.streams import collect_bytes

pytestmark = pytest.mark.usefixtures("quiet_checker")

VERSIONS = [5, 6, 7]


def body_of(events: Any, **options: Any) -> bytes:
    return collect_bytes(encode(events, **options))


def python_fold(body: bytes, message: dict[str, Any] | None = None, version: int = 7) -> UIMessageFolder:
    folder = UIMessageFolder(message, sdk_version=version)
    for chunk in split_frames(body):
        folder.feed(chunk)
    return folder


def run_client(js: JsOracle, body: bytes | list[bytes], **req: Any) -> dict[str, Any]:
    bodies = [b.decode() for b in body] if isinstance(body, list) else body.decode()
    answer = js.call("aisdk", {"body": bodies, **req})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == [], answer["warnings"]
    result: dict[str, Any] = answer["result"]
    return result


def as_json(value: Any) -> Any:
    return orjson.loads(dumps(value))


def js_numbers(value: Any) -> Any:
    """``value`` with every number a double, as JavaScript holds it (tuples as lists)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        return {k: js_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [js_numbers(v) for v in value]
    return value


# -- every chunk type, through every client version ----------------------------------------------------


@pytest.mark.parametrize("client", ["chat", "read"])
@pytest.mark.parametrize("version", VERSIONS)
def test_every_chunk_type_through_the_real_client(js: JsOracle, version: int, client: str) -> None:
    body = body_of(FULL_RUN, sdk_version=version)
    result = run_client(js, body, version=version, client=client)
    folder = python_fold(body, version=version)
    assert result["error"] is None
    assert result["message"] == as_json(folder.message)
    msg = result["message"]
    assert msg["id"] == "msg-1"
    assert msg["metadata"]["n"] == {"deep": 1, "deeper": 2}
    assert msg["metadata"]["usage"] == {
        "inputTokens": 10,
        "outputTokens": 20,
        "totalTokens": 30,
        "cachedInputTokens": 4,
        "cacheWriteInputTokens": 2,
    }
    tools = {p["toolCallId"]: p for p in msg["parts"] if "toolCallId" in p}
    assert tools["call-1"]["state"] == "output-available" and tools["call-1"]["output"]["tempC"] == 21
    assert tools["call-1"]["input"] == {"city": "Paris"}
    assert tools["call-2"]["type"] == "dynamic-tool" and tools["call-2"]["providerExecuted"] is True
    assert tools["call-3"]["state"] == "output-error" and tools["call-3"]["errorText"] == "Invalid input"
    assert tools["call-4"]["state"] == ("output-denied" if version >= 6 else "output-error")
    assert tools["call-5"]["errorText"] == "search is down"
    state = [p for p in msg["parts"] if p["type"] == "data-state"]
    assert state == [{"type": "data-state", "id": "state", "data": {"count": 3, "items": ["a", "b"]}}]
    progress = [p for p in msg["parts"] if p["type"] == "data-progress"]
    assert progress == [{"type": "data-progress", "id": "p1", "data": {"pct": 100}}]
    assert [p["type"] for p in msg["parts"]].count("step-start") == 2
    assert not any(p["type"] in ("data-toast", "data-custom", "data-raw", "data-messages") for p in msg["parts"])
    if client == "chat":
        assert result["status"] == "ready"
        assert result["finishReason"] == ("interrupted" if version == 7 else "other")
        transient = {d["type"] for d in result["data"] if d.get("transient")}
        assert transient == {"data-toast", "data-custom", "data-raw", "data-messages"}
        snapshot = next(d for d in result["data"] if d["type"] == "data-messages")
        assert snapshot["data"] == [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
        if version >= 6:
            approval = tools["call-4"]["approval"]
            assert approval["id"] == "ap-4"
            assert approval.get("approved") is (False if version == 7 else None)


@pytest.mark.parametrize("version", VERSIONS)
def test_run_error_stops_the_chat_with_its_text(js: JsOracle, version: int) -> None:
    events = [RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="partial"), RunError(message="Model overloaded")]
    body = body_of(events, sdk_version=version)
    result = run_client(js, body, version=version)
    assert result["status"] == "error"
    assert result["error"]["message"] == "Model overloaded"
    assert result["message"]["parts"] == [{"type": "text", "text": "partial", "state": "done"}]
    assert result["message"] == as_json(python_fold(body, version=version).message)


@pytest.mark.parametrize("expose", [False, True])
def test_agent_exception_reaches_the_client_masked(js: JsOracle, expose: bool) -> None:
    async def agent() -> Any:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="so far")
        yield ToolCallStart(id="c", name="x")
        yield ToolCallArgsDelta(id="c", delta='{"a": 1')
        raise ValueError("db password is hunter2")

    body = body_of(agent(), expose_errors=expose)
    result = run_client(js, body)
    assert result["status"] == "error"
    assert result["error"]["message"] == ("db password is hunter2" if expose else "An error occurred.")
    parts = result["message"]["parts"]
    assert parts[0] == {"type": "text", "text": "so far", "state": "done"}
    assert parts[1]["state"] == "output-error"  # the cut-off input is closed as an invalid call


@pytest.mark.parametrize("version", VERSIONS)
def test_abort_is_an_orderly_stop(js: JsOracle, version: int) -> None:
    events = [RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="Hel"), RunAborted(reason="user left")]
    body = body_of(events, sdk_version=version)
    assert (b'"reason":"user left"' in body) is (version >= 6)
    result = run_client(js, body, version=version)
    assert result["status"] == "ready" and result["error"] is None
    assert result["finishReason"] is None
    assert result["message"]["parts"] == [{"type": "text", "text": "Hel", "state": "done"}]


def test_continuation_keeps_the_message_and_reaches_earlier_tool_calls(js: JsOracle) -> None:
    # 1. the run asks for approval and stops
    first = body_of(
        [
            RunStarted(message_id="msg-a"),
            ToolCallEnd(id="call-1", name="delete_file", input={"path": "/tmp/x"}),
            ToolApprovalRequest(id="ap-1", tool_call_id="call-1"),
            RunFinished(finish_reason="tool-calls"),
        ]
    )
    # 2. the continuation (same message id, known call and approval) executes the tool
    second = body_of(
        [
            RunStarted(),
            ToolApprovalResponse(id="ap-1", approved=True),
            ToolResult(id="call-1", output={"deleted": True}),
            TextStart(id="t"),
            TextDelta(id="t", delta="Done."),
            TextEnd(id="t"),
            RunFinished(),
        ],
        message_id="msg-a",
        known_tool_calls=["call-1"],
        known_approvals=["ap-1"],
    )
    result = run_client(
        js,
        [first, second],
        steps=[
            {"do": "sendMessage", "args": {"text": "delete it"}},
            {"do": "addToolApprovalResponse", "args": {"id": "ap-1", "approved": True}},
        ],
        auto="approvals",
    )
    assert result["error"] is None
    bodies = [r["body"] for r in result["requests"]]
    assert len(bodies) == 2
    assert bodies[1]["messageId"] == "msg-a" and bodies[1]["trigger"] == "submit-message"
    assistants = [m for m in result["messages"] if m["role"] == "assistant"]
    assert len(assistants) == 1  # continued, not duplicated
    parts = assistants[0]["parts"]
    assert parts[0]["state"] == "output-available" and parts[0]["output"] == {"deleted": True}
    assert parts[0]["approval"] == {"id": "ap-1", "approved": True}
    assert parts[-1]["text"] == "Done."
    earlier = python_fold(first).message
    assert (
        as_json(python_fold(second, message=earlier | {"parts": bodies[1]["messages"][-1]["parts"]}).message)
        == (assistants[0])
    )


def test_the_reference_example_bytes() -> None:
    """Spec section 3.1: the reference server's bytes for one tool round trip, reproduced exactly."""
    events = [
        RunStarted(message_id="msg-assistant-1"),
        StepStarted(name="1"),
        ReasoningStart(id="r1"),
        ReasoningDelta(id="r1", delta="Need weather."),
        ReasoningEnd(id="r1"),
        TextStart(id="t1"),
        TextDelta(id="t1", delta="Let me check "),
        TextEnd(id="t1"),
        ToolCallStart(id="call-1", name="weather"),
        ToolCallArgsDelta(id="call-1", delta='{"city":'),
        ToolCallArgsDelta(id="call-1", delta='"Paris"}'),
        ToolCallEnd(id="call-1"),
        ToolResult(id="call-1", output={"city": "Paris", "tempC": 21}),
        StepFinished(name="1"),
        StepStarted(name="2"),
        TextStart(id="t2"),
        TextDelta(id="t2", delta="It is 21°C in Paris."),
        TextEnd(id="t2"),
        StepFinished(name="2"),
        RunFinished(metadata={"totalTokens": 20}),
    ]
    expected = (
        '{"type":"start","messageId":"msg-assistant-1"}\n{"type":"start-step"}\n'
        '{"type":"reasoning-start","id":"r1"}\n{"type":"reasoning-delta","id":"r1","delta":"Need weather."}\n'
        '{"type":"reasoning-end","id":"r1"}\n{"type":"text-start","id":"t1"}\n'
        '{"type":"text-delta","id":"t1","delta":"Let me check "}\n{"type":"text-end","id":"t1"}\n'
        '{"type":"tool-input-start","toolCallId":"call-1","toolName":"weather"}\n'
        '{"type":"tool-input-delta","toolCallId":"call-1","inputTextDelta":"{\\"city\\":"}\n'
        '{"type":"tool-input-delta","toolCallId":"call-1","inputTextDelta":"\\"Paris\\"}"}\n'
        '{"type":"tool-input-available","toolCallId":"call-1","toolName":"weather","input":{"city":"Paris"}}\n'
        '{"type":"tool-output-available","toolCallId":"call-1","output":{"city":"Paris","tempC":21}}\n'
        '{"type":"finish-step"}\n{"type":"start-step"}\n{"type":"text-start","id":"t2"}\n'
        '{"type":"text-delta","id":"t2","delta":"It is 21°C in Paris."}\n{"type":"text-end","id":"t2"}\n'
        '{"type":"finish-step"}\n{"type":"finish","finishReason":"stop","messageMetadata":{"totalTokens":20}}'
    )
    frames = "".join(f"data: {line}\n\n" for line in expected.split("\n")) + "data: [DONE]\n\n"
    assert body_of(events) == frames.encode()


# -- generated sequences --------------------------------------------------------------------------------


def _check_against_client(js: JsOracle, events: list[ChatEvent], version: int, client: str) -> None:
    body = body_of(events, sdk_version=version)
    result = run_client(js, body, version=version, client=client)
    folder = python_fold(body, version=version)
    context = describe(events)
    assert validate(body, "aisdk", version).findings == [], context  # the validator finds nothing to say
    assert (result["error"] or {}).get("message") == folder.error, context
    assert js_numbers(result["message"]) == js_numbers(as_json(folder.message)), context
    if client == "chat":
        assert result["finishReason"] == folder.finish_reason, context
        assert result["status"] == ("error" if folder.error is not None else "ready"), context
    got = comparable(observed(result["message"], finish_reason=folder.finish_reason, error=folder.error))
    # numbers compared as JavaScript holds them (2**64 as a float comes back written 18446744073709552000)
    assert js_numbers(got) == js_numbers(comparable(meaning(events, sdk_version=version))), context


def _settings(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_settings(200)
@given(events=chat_events)
def test_generated_runs_through_the_v7_chat(js: JsOracle, events: list[ChatEvent]) -> None:
    _check_against_client(js, events, 7, "chat")


@_settings(60)
@given(events=chat_events, version=st.sampled_from([5, 6]))
def test_generated_runs_through_the_v5_and_v6_chat(js: JsOracle, events: list[ChatEvent], version: int) -> None:
    _check_against_client(js, events, version, "chat")


@_settings(60)
@given(events=chat_events, version=st.sampled_from(VERSIONS))
@example(  # a float JavaScript writes as an integer too long for a double to hold exactly
    events=[ToolCallEnd(id="c", name="f", input={}), ToolResult(id="c", output=float(2**64)), RunFinished()],
    version=7,
)
def test_generated_runs_through_read_ui_message_stream(js: JsOracle, events: list[ChatEvent], version: int) -> None:
    _check_against_client(js, events, version, "read")


# -- empty deltas ----------------------------------------------------------------------------------------

EMPTY_DELTAS: list[ChatEvent] = [
    RunStarted(),
    ReasoningStart(id="r"),
    ReasoningDelta(id="r", delta=""),
    ReasoningEnd(id="r"),
    TextStart(id="t"),
    TextDelta(id="t", delta=""),
    TextDelta(id="t", delta="Hi"),
    TextDelta(id="t", delta=""),
    TextEnd(id="t"),
    TextDelta(id="implied", delta=""),  # opens the block, sends no delta
    TextEnd(id="implied"),
    ToolCallStart(id="c", name="f"),
    ToolCallArgsDelta(id="c", delta=""),
    ToolCallArgsDelta(id="c", delta='{"a":1}'),
    ToolCallArgsDelta(id="c", delta=""),
    ToolCallEnd(id="c"),
    RunFinished(),
]


@pytest.mark.parametrize("ready", [True, False], ids=["list", "async"])
@pytest.mark.parametrize("version", VERSIONS)
def test_empty_deltas_send_no_chunk_but_open_and_close_their_part(js: JsOracle, version: int, ready: bool) -> None:
    async def agent() -> Any:
        for event in EMPTY_DELTAS:
            yield event

    body = body_of(list(EMPTY_DELTAS) if ready else agent(), sdk_version=version)
    chunks = split_frames(body)
    assert not [c for c in chunks if c.get("delta") == "" or c.get("inputTextDelta") == ""]
    types = [c["type"] for c in chunks]
    assert types.count("text-start") == types.count("text-end") == 2
    assert types.count("reasoning-start") == types.count("reasoning-end") == 1
    assert types.count("text-delta") == types.count("tool-input-delta") == 1
    result = run_client(js, body, version=version)
    assert result["status"] == "ready"
    parts = [p for p in result["message"]["parts"] if p["type"] != "step-start"]
    assert parts[0]["type"] == "reasoning" and parts[0]["text"] == ""
    assert parts[1] == {"type": "text", "text": "Hi", "state": "done"}
    assert parts[2] == {"type": "text", "text": "", "state": "done"}
    assert parts[3]["input"] == {"a": 1} and parts[3]["state"] == "input-available"
