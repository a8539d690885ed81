"""The AG-UI request: pydantic models of ``RunAgentInput``, the parser, and its conversion to a neutral
:class:`RunInput`.

The models follow the 1.0 schema (camelCase on the wire, snake_case attributes) and, like it, are open:
unknown keys are kept rather than rejected (the top-level ones reach the agent as ``RunInput.extra``).
Optional fields tolerate ``null``. Messages of every role parse; the retired ``binary`` content part is
still read.

:func:`parse_run_agent_input` validates a decoded JSON body and raises :class:`~streamkit.http.HTTPError`
(422, naming the offending field as a dotted path such as ``messages.2.toolCalls.0.function.arguments``; 413
for the ``Limits`` on messages); :func:`to_run_input` converts the result, its messages as
:func:`~streamkit.agui.messages.from_agui_messages` converts them (``activity`` messages, display-only, left
out). :mod:`~streamkit.agui.messages` is built on this module's models, so :func:`to_run_input` imports it
when called rather than at the top (the one import that would otherwise go both ways).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ..events import ContextItem, ResumeEntry, RunInput, Tool
from ..http import HTTPError, Limits, check_messages, field_error, field_errors

__all__ = [
    "ActivityMessage",
    "AssistantMessage",
    "BinaryPart",
    "ContentPart",
    "Context",
    "DataSource",
    "DeveloperMessage",
    "FileSource",
    "FunctionCall",
    "MediaPart",
    "ReasoningMessage",
    "ResumeItem",
    "RunAgentInput",
    "SystemMessage",
    "TextContent",
    "ToolCall",
    "ToolDefinition",
    "ToolMessage",
    "UrlSource",
    "UserMessage",
    "parse_run_agent_input",
    "pending_tool_calls",
    "to_run_input",
]


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        alias_generator=AliasGenerator(validation_alias=to_camel, serialization_alias=to_camel),
        validate_by_name=True,
        validate_by_alias=True,
    )


# --- content parts ---------------------------------------------------------------------------------


class DataSource(_Model):
    """Inline base64 data."""

    type: Literal["data"]
    value: str
    mime_type: str


class UrlSource(_Model):
    """A URL (http(s) or ``data:``)."""

    type: Literal["url"]
    value: str
    mime_type: str | None = None


class FileSource(_Model):
    """A provider file handle."""

    type: Literal["file"]
    value: str
    provider: str | None = None
    mime_type: str | None = None


PartSource = Annotated[DataSource | UrlSource | FileSource, Field(discriminator="type")]


class TextContent(_Model):
    """A text content part."""

    type: Literal["text"]
    text: str
    id: str | None = None
    metadata: Any = None


class MediaPart(_Model):
    """An image, audio, video or document content part."""

    type: Literal["image", "audio", "video", "document"]
    source: PartSource
    id: str | None = None
    metadata: Any = None


class BinaryPart(_Model):
    """The 0.x ``binary`` content part (retired in 1.0, still read)."""

    type: Literal["binary"]
    mime_type: str
    data: str | None = None
    url: str | None = None
    id: str | None = None
    filename: str | None = None


ContentPart = Annotated[TextContent | MediaPart | BinaryPart, Field(discriminator="type")]


# --- messages --------------------------------------------------------------------------------------


class _Message(_Model):
    id: str
    metadata: dict[str, Any] | None = None
    subagent_run_id: str | None = None
    encrypted_value: str | None = None


class DeveloperMessage(_Message):
    """Instructions from the application developer."""

    role: Literal["developer"]
    content: str
    name: str | None = None


class SystemMessage(_Message):
    """A system prompt."""

    role: Literal["system"]
    content: str
    name: str | None = None


class FunctionCall(_Model):
    """The function a tool call invokes; ``arguments`` is the raw argument text."""

    name: str
    arguments: str


class ToolCall(_Model):
    """One tool call of an assistant message; ``metadata`` is what the client merged into it from the
    call's ``TOOL_CALL_START``/``TOOL_CALL_END`` events (``providerExecuted``, ``providerMetadata``...)."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall
    metadata: dict[str, Any] | None = None


class AssistantMessage(_Message):
    """What the assistant said (``content``) and the tools it called."""

    role: Literal["assistant"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    name: str | None = None


class UserMessage(_Message):
    """What the user said: text, or content parts."""

    role: Literal["user"]
    content: str | list[ContentPart]
    name: str | None = None


class ToolMessage(_Message):
    """The result of the tool call ``tool_call_id`` (``error`` when it failed)."""

    role: Literal["tool"]
    content: str | list[ContentPart]
    tool_call_id: str
    error: str | None = None


class ActivityMessage(_Message):
    """Client-side display state (never part of the model's history)."""

    role: Literal["activity"]
    activity_type: str
    content: dict[str, Any]


class ReasoningMessage(_Message):
    """Reasoning the assistant produced."""

    role: Literal["reasoning"]
    content: str


AGUIMessage = Annotated[
    DeveloperMessage
    | SystemMessage
    | AssistantMessage
    | UserMessage
    | ToolMessage
    | ActivityMessage
    | ReasoningMessage,
    Field(discriminator="role"),
]


# --- the request -----------------------------------------------------------------------------------


class ToolDefinition(_Model):
    """A tool the client executes (a frontend tool)."""

    name: str
    description: str = ""
    parameters: Any = None
    metadata: dict[str, Any] | None = None


class Context(_Model):
    """An ambient ``{description, value}`` pair."""

    description: str
    value: str


class ResumeItem(_Model):
    """The answer to an interrupt that ended the previous run."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    metadata: dict[str, Any] | None = None


class RunAgentInput(_Model):
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

    With ``limits``, more than ``max_messages`` messages, or one message over ``max_message_bytes``, is a 413.
    """
    if limits is not None:
        check_messages(data, limits)
    elif not isinstance(data, dict):
        raise HTTPError("body: expected a JSON object (a RunAgentInput)", field="body", status=422)
    try:
        return RunAgentInput.model_validate(data)
    except ValidationError as exc:
        errors = field_errors(exc, _field_path)
        if not errors:
            raise HTTPError("invalid request body", status=422) from None
        # Of a union's alternatives, the one that got furthest names the field best.
        best = max(errors, key=lambda e: e["field"].count("."))["field"]
        raise field_error(best, errors) from None


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
    from .messages import from_agui_messages  # built on this module's models

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
