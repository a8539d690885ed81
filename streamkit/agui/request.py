"""The AG-UI request: the pydantic model of ``RunAgentInput``, the parser, and its conversion to a neutral
:class:`RunInput`.

The models follow the 1.0 schema (camelCase on the wire, snake_case attributes) and, like it, are open:
unknown keys are kept rather than rejected (the top-level ones reach the agent as ``RunInput.extra``).
Optional fields tolerate ``null``. The history's message models live in :mod:`~streamkit.agui.messages`.

:func:`parse_run_agent_input` validates a decoded JSON body and raises :class:`~streamkit.http.HTTPError`
(422, naming the offending field as a dotted path such as ``messages.2.toolCalls.0.function.arguments``; 413
for the ``Limits`` on messages; 400 for tool call ``arguments`` whose JSON nests deeper than
``Limits.max_json_depth``); :func:`to_run_input` converts the result, its messages as
:func:`~streamkit.agui.messages.from_agui_messages` converts them (``activity`` messages, display-only, left
out).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from ..events import ContextItem, ResumeEntry, RunInput, Tool
from ..http import HTTPError, Limits, check_json, check_messages, field_error, field_errors, validate_listed
from .messages import AGUIMessage, AGUIModel, AssistantMessage, ToolMessage, from_agui_messages

__all__ = [
    "Context",
    "ResumeItem",
    "RunAgentInput",
    "ToolDefinition",
    "parse_run_agent_input",
    "pending_tool_calls",
    "to_run_input",
]


# --- the request -----------------------------------------------------------------------------------


class ToolDefinition(AGUIModel):
    """A tool the client executes (a frontend tool)."""

    name: str
    description: str = ""
    parameters: Any = None
    metadata: dict[str, Any] | None = None


class Context(AGUIModel):
    """An ambient ``{description, value}`` pair."""

    description: str
    value: str


class ResumeItem(AGUIModel):
    """The answer to an interrupt that ended the previous run."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    metadata: dict[str, Any] | None = None


class RunAgentInput(AGUIModel):
    """The body an AG-UI client POSTs to start a run."""

    thread_id: str
    run_id: str
    messages: list[AGUIMessage]
    protocol_version: str | None = None
    parent_run_id: str | None = None
    state: Any = None
    tools: list[ToolDefinition] | None = None
    context: list[Context] | None = None
    forwarded_props: Any = None
    resume: list[ResumeItem] | None = None


# --- parsing ---------------------------------------------------------------------------------------

_TAGS = frozenset(
    {
        "developer",
        "system",
        "assistant",
        "user",
        "tool",
        "activity",
        "reasoning",
        "text",
        "image",
        "audio",
        "video",
        "document",
        "binary",
        "data",
        "url",
        "file",
    }
)


def _field_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as the wire's dotted path (union tags and member labels left out)."""
    parts: list[str] = []
    previous: int | str | None = None
    for item in loc:
        skip = (isinstance(item, str) and item in _TAGS and (isinstance(previous, int) or previous == "source")) or (
            isinstance(item, str) and ("[" in item or item in ("str", "list", "dict", "int", "bool", "none"))
        )
        if not skip:
            parts.append(str(item))
        previous = item
    return ".".join(parts) or "body"


def parse_run_agent_input(data: Any, limits: Limits | None = None) -> RunAgentInput:
    """Validate a decoded JSON body as a :class:`RunAgentInput`, or raise :class:`HTTPError`.

    With ``limits``, more than ``max_messages`` messages, one message over ``max_message_bytes`` or over
    ``max_message_parts`` items of ``content`` or ``toolCalls``, is a 413; tool call ``arguments`` are JSON
    text the server parses, and nesting deeper than ``max_json_depth`` there is a 400 naming the field.
    """
    if limits is not None:
        check_messages(data, limits, parts=("content", "toolCalls"))
    elif not isinstance(data, dict):
        raise HTTPError("body: expected a JSON object (a RunAgentInput)", field="body", status=422)
    try:
        body = validate_listed(RunAgentInput, data)
    except ValidationError as exc:
        errors = field_errors(exc, _field_path)
        if not errors:
            raise HTTPError("invalid request body", status=422) from None
        # Of a union's alternatives, the one that got furthest names the field best.
        best = max(errors, key=lambda e: e["field"].count("."))["field"]
        raise field_error(best, errors) from None
    _check_arguments(body, limits or Limits())
    return body


def _check_arguments(body: RunAgentInput, limits: Limits) -> None:
    """Tool call ``arguments`` within ``max_json_depth`` (text that is not JSON is kept as text)."""
    for i, message in enumerate(body.messages):
        if isinstance(message, AssistantMessage):
            for j, call in enumerate(message.tool_calls or ()):
                check_json(call.function.arguments, limits, f"messages.{i}.toolCalls.{j}.function.arguments")


def pending_tool_calls(body: RunAgentInput) -> list[str]:
    """Ids of the history's tool calls that have no tool message yet (their results may come in this run)."""
    answered = {m.tool_call_id for m in body.messages if isinstance(m, ToolMessage)}
    return [
        call.id
        for m in body.messages
        if isinstance(m, AssistantMessage)
        for call in m.tool_calls or ()
        if call.id not in answered
    ]


def to_run_input(body: RunAgentInput, *, principal: Any = None) -> RunInput:
    """The neutral :class:`RunInput` for a parsed request (``principal`` from the route's ``authorize``)."""
    messages = from_agui_messages(body.messages)
    tools = [
        Tool(
            name=t.name,
            description=t.description,
            parameters=t.parameters if isinstance(t.parameters, dict) else None,
        )
        for t in body.tools or ()
    ]
    return RunInput(
        thread_id=body.thread_id,
        run_id=body.run_id,
        messages=messages,
        state=body.state,
        tools=tools,
        context=[ContextItem(description=c.description, value=c.value) for c in body.context or ()],
        forwarded_props=body.forwarded_props,
        resume=[
            ResumeEntry(interrupt_id=r.interrupt_id, status=r.status, payload=r.payload) for r in body.resume or ()
        ],
        parent_run_id=body.parent_run_id,
        principal=principal,
        extra=dict(body.model_extra or {}),
    )
