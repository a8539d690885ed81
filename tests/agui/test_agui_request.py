"""RunAgentInput: real bodies sent by ``HttpAgent`` parse and convert to RunInput; malformed ones get a clear 4xx."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit import agui
from streamkit.agui.request import RunAgentInput, pending_tool_calls
from streamkit.events import FilePart, ReasoningPart, RunFinished, RunStarted, TextPart, ToolCallPart, ToolResultPart
from streamkit.http import HTTPError, Limits
from tests.agui.support import body_of, client_runs
from tests.support.oracle import JsOracle

EVERY_ROLE: list[dict[str, Any]] = [
    {"id": "dev", "role": "developer", "content": "You are terse.", "name": "ops"},
    {"id": "sys", "role": "system", "content": "Be nice."},
    {"id": "u1", "role": "user", "content": "Weather in Paris?", "metadata": {"lang": "en"}},
    {
        "id": "u2",
        "role": "user",
        "content": [
            {"type": "text", "text": "and this picture"},
            {"type": "image", "source": {"type": "data", "value": "iVBORw0KGgo=", "mimeType": "image/png"}},
            {
                "type": "document",
                "source": {"type": "url", "value": "https://example.com/a.pdf"},
                "metadata": {"filename": "a.pdf"},
            },
            {
                "type": "audio",
                "source": {"type": "file", "value": "file-123", "provider": "openai", "mimeType": "audio/wav"},
            },
        ],
    },
    {"id": "r1", "role": "reasoning", "content": "They want weather.", "encryptedValue": "enc"},
    {
        "id": "a1",
        "role": "assistant",
        "content": "Let me check.",
        "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "c2", "type": "function", "function": {"name": "bad_args", "arguments": "{oops"}},
            {"id": "c3", "type": "function", "function": {"name": "pending_one", "arguments": ""}},
        ],
    },
    {"id": "t1", "role": "tool", "toolCallId": "c1", "content": '{"tempC":21}'},
    {"id": "t2", "role": "tool", "toolCallId": "c2", "content": "", "error": "invalid arguments"},
    {"id": "act", "role": "activity", "activityType": "progress", "content": {"pct": 50}},
]


def _real_request(js: JsOracle, messages: list[dict[str, Any]], **parameters: Any) -> dict[str, Any]:
    """The body the real HttpAgent POSTs for ``messages`` and run ``parameters``."""
    result = client_runs(
        js,
        [{"body": body_of([RunStarted(), RunFinished()]), "parameters": parameters}],
        messages=messages,
        state={"counter": 1, "items": ["a"]},
    )
    body: dict[str, Any] = result["runs"][0]["request"]["body"]
    return body


def test_a_real_request_with_every_role_parses(js: JsOracle) -> None:
    body = _real_request(
        js,
        EVERY_ROLE,
        tools=[{"name": "pick", "description": "Pick one", "parameters": {"type": "object", "properties": {}}}],
        context=[{"description": "user timezone", "value": "Europe/Paris"}],
        forwardedProps={"app": {"mode": "dark"}},
    )
    assert "activity" not in {m["role"] for m in body["messages"]}  # the client keeps activity to itself
    parsed = agui.parse_run_agent_input(body)
    run = agui.to_run_input(parsed, principal="alice")
    assert (run.thread_id, run.run_id, run.principal) == ("thread-1", "run-1", "alice")
    assert run.state == {"counter": 1, "items": ["a"]}
    assert run.forwarded_props == {"app": {"mode": "dark"}}
    assert [(t.name, t.description, t.parameters) for t in run.tools] == [
        ("pick", "Pick one", {"type": "object", "properties": {}})
    ]
    assert [(c.description, c.value) for c in run.context] == [("user timezone", "Europe/Paris")]
    by_id = {m.id: m for m in run.messages}
    assert [m.id for m in run.messages] == ["dev", "sys", "u1", "u2", "r1", "a1", "t1", "t2"]
    assert by_id["dev"].role == "developer" and by_id["dev"].text == "You are terse."
    assert by_id["u1"].metadata == {"lang": "en"}
    assert by_id["u2"].parts == [
        TextPart(text="and this picture"),
        FilePart(url="data:image/png;base64,iVBORw0KGgo=", media_type="image/png"),
        FilePart(url="https://example.com/a.pdf", media_type="application/octet-stream", filename="a.pdf"),
        FilePart(url="file-123", media_type="audio/wav"),
    ]
    assert by_id["r1"].role == "assistant" and by_id["r1"].parts == [
        ReasoningPart(text="They want weather.", encrypted_value="enc")
    ]
    assert by_id["a1"].parts == [
        TextPart(text="Let me check."),
        ToolCallPart(id="c1", name="get_weather", input={"city": "Paris"}),
        ToolCallPart(id="c2", name="bad_args", input="{oops"),
        ToolCallPart(id="c3", name="pending_one", input=None),
    ]
    assert by_id["t1"].parts == [ToolResultPart(id="c1", name="get_weather", output='{"tempC":21}')]
    assert by_id["t2"].parts == [ToolResultPart(id="c2", name="bad_args", output="", error="invalid arguments")]
    assert pending_tool_calls(parsed) == ["c3"]
    assert agui.from_agui_messages(parsed.messages) == run.messages


def test_resume_and_parent_run(js: JsOracle) -> None:
    body = _real_request(
        js,
        [{"id": "u", "role": "user", "content": "hi"}],
        resume=[{"interruptId": "i1", "status": "cancelled", "metadata": {"why": "timeout"}}],
    )
    body["parentRunId"] = "run-0"
    run = agui.to_run_input(agui.parse_run_agent_input(body))
    assert [(r.interrupt_id, r.status, r.payload) for r in run.resume] == [("i1", "cancelled", None)]
    assert run.parent_run_id == "run-0"


def test_tolerant_of_unknown_keys_nulls_and_legacy_parts() -> None:
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {
                "id": "u",
                "role": "user",
                "name": None,
                "content": [
                    {"type": "binary", "mimeType": "image/png", "data": "AAAA", "filename": "x.png"},
                    {"type": "binary", "mimeType": "image/png", "url": "https://x/y.png"},
                    {"type": "binary", "mimeType": "image/png", "id": "only-an-id"},
                ],
                "someFutureField": 1,
            },
            {"id": "a", "role": "assistant"},
        ],
        "state": None,
        "tools": None,
        "context": None,
        "forwardedProps": None,
        "newTopLevelKey": {"x": 1},
    }
    run = agui.to_run_input(agui.parse_run_agent_input(body))
    assert run.messages[0].parts == [
        FilePart(url="data:image/png;base64,AAAA", media_type="image/png", filename="x.png"),
        FilePart(url="https://x/y.png", media_type="image/png"),
    ]
    assert run.messages[1].parts == []
    assert run.extra == {"newTopLevelKey": {"x": 1}}
    assert run.state is None and run.tools == [] and run.context == []


def test_snake_case_and_non_object_tool_parameters() -> None:
    body = {
        "thread_id": "t",
        "run_id": "r",
        "messages": [],
        "tools": [{"name": "any", "description": "d", "parameters": True}, {"name": "bare"}],
    }
    run = agui.to_run_input(agui.parse_run_agent_input(body))
    assert run.thread_id == "t" and [(t.name, t.parameters) for t in run.tools] == [("any", None), ("bare", None)]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ("text", "body"),
        ({"runId": "r", "messages": []}, "threadId"),
        ({"threadId": 1, "runId": "r", "messages": []}, "threadId"),
        ({"threadId": "t", "runId": "r"}, "messages"),
        ({"threadId": "t", "runId": "r", "messages": {}}, "messages"),
        ({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "wizard", "content": "x"}]}, "messages.0"),
        ({"threadId": "t", "runId": "r", "messages": [{"role": "user", "content": "x"}]}, "messages.0.id"),
        ({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user"}]}, "messages.0.content"),
        (
            {
                "threadId": "t",
                "runId": "r",
                "messages": [{"id": "m", "role": "user", "content": [{"type": "hologram"}]}],
            },
            "messages.0.content.0",
        ),
        (
            {
                "threadId": "t",
                "runId": "r",
                "messages": [
                    {
                        "id": "m",
                        "role": "user",
                        "content": [{"type": "image", "source": {"type": "data", "value": "x"}}],
                    }
                ],
            },
            "messages.0.content.0.source.mimeType",
        ),
        (
            {
                "threadId": "t",
                "runId": "r",
                "messages": [
                    {
                        "id": "m",
                        "role": "assistant",
                        "toolCalls": [{"id": "c", "function": {"name": "f", "arguments": {}}}],
                    }
                ],
            },
            "messages.0.toolCalls.0.function.arguments",
        ),
        (
            {"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "tool", "content": "x"}]},
            "messages.0.toolCallId",
        ),
        ({"threadId": "t", "runId": "r", "messages": [], "tools": [{"description": "d"}]}, "tools.0.name"),
        ({"threadId": "t", "runId": "r", "messages": [], "context": [{"value": "v"}]}, "context.0.description"),
        (
            {"threadId": "t", "runId": "r", "messages": [], "resume": [{"interruptId": "i", "status": "maybe"}]},
            "resume.0.status",
        ),
    ],
)
def test_malformed_bodies_name_the_field(body: Any, field: str) -> None:
    with pytest.raises(HTTPError) as info:
        agui.parse_run_agent_input(body)
    assert info.value.status == 422
    assert info.value.field == field, info.value.message
    assert info.value.message.startswith(field)


def test_limits_on_messages() -> None:
    messages = [{"id": str(i), "role": "user", "content": "x"} for i in range(3)]
    with pytest.raises(HTTPError) as many:
        agui.parse_run_agent_input({"threadId": "t", "runId": "r", "messages": messages}, Limits(max_messages=2))
    assert (many.value.status, many.value.field) == (413, "limits.max_messages")
    big = [{"id": "b", "role": "user", "content": "x" * 100}]
    with pytest.raises(HTTPError) as large:
        agui.parse_run_agent_input({"threadId": "t", "runId": "r", "messages": big}, Limits(max_message_bytes=50))
    assert (large.value.status, large.value.field) == (413, "limits.max_message_bytes")
    assert "messages.0" in large.value.message


def test_the_model_is_the_wire_shape() -> None:
    parsed = RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": [
                {"id": "u", "role": "user", "content": [{"type": "image", "source": {"type": "url", "value": "u"}}]}
            ],
        }
    )
    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped == {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {"id": "u", "role": "user", "content": [{"type": "image", "source": {"type": "url", "value": "u"}}]}
        ],
    }
