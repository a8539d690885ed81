"""The normalized event vocabulary: what an agent core yields.

Every event is a small pydantic model with a literal ``type`` tag; ``ChatEvent`` is the discriminated
union of all of them. Events are built by keyword (``TextDelta(id="t1", delta="Hi")``) and are immutable.

Content blocks (text, reasoning, tool calls) are opened, streamed and closed by id. The ids a core gives
are kept as given on the wire; adapters invent ids only where the core gave none.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "USAGE_COUNTS",
    "ChatEvent",
    "Citation",
    "Custom",
    "Data",
    "File",
    "FinishReason",
    "Interrupt",
    "MessageMetadata",
    "MessagesSnapshot",
    "ProviderMetadata",
    "ProviderPart",
    "Raw",
    "ReasoningDelta",
    "ReasoningEnd",
    "ReasoningStart",
    "RunAborted",
    "RunError",
    "RunFinished",
    "RunStarted",
    "Source",
    "StateDelta",
    "StateSnapshot",
    "StateUpdate",
    "StepFinished",
    "StepReset",
    "StepStarted",
    "TextDelta",
    "TextEnd",
    "TextStart",
    "ToolApprovalRequest",
    "ToolApprovalResponse",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolResult",
    "Usage",
    "UserFile",
    "UserMessage",
    "chat_event_adapter",
]

JSON: TypeAlias = Any
"""Any JSON value: object, array, string, number, boolean or null."""

ProviderMetadata: TypeAlias = dict[str, dict[str, Any]]
"""Provider-specific metadata, keyed by provider name (``{"openai": {"itemId": "x"}}``)."""

FinishReason: TypeAlias = Literal["stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", revalidate_instances="never")


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Part):
    """Token usage of a run (counts are non-negative integers; absent when unknown).

    ``input_tokens`` counts every input token, those read from and written to a prompt cache included;
    ``cached_input_tokens`` are the ones read from the cache, ``cache_write_input_tokens`` the ones written to
    it (the AI SDK's ``cacheReadTokens`` / ``cacheWriteTokens``)."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    total_tokens: int | None = Field(default=None, ge=0)
    reasoning_tokens: int | None = Field(default=None, ge=0)
    cached_input_tokens: int | None = Field(default=None, ge=0)
    cache_write_input_tokens: int | None = Field(default=None, ge=0)
    provider: str | None = None
    model: str | None = None


USAGE_COUNTS: tuple[tuple[str, str], ...] = (
    ("input_tokens", "inputTokens"),
    ("output_tokens", "outputTokens"),
    ("total_tokens", "totalTokens"),
    ("reasoning_tokens", "reasoningTokens"),
    ("cached_input_tokens", "cachedInputTokens"),
    ("cache_write_input_tokens", "cacheWriteInputTokens"),
)
"""The token counts of :class:`Usage`, each with its name on the wire (both protocols write them camelCase)."""


class Interrupt(_Part):
    """A reason the run paused and waits for the user (human in the loop)."""

    id: str
    reason: str
    message: str | None = None
    tool_call_id: str | None = None
    response_schema: dict[str, Any] | None = None
    expires_at: str | None = None
    metadata: dict[str, Any] | None = None


# --- lifecycle -------------------------------------------------------------------------------------


class RunStarted(_Event):
    """The run began. ``message_id`` is the assistant message the run writes into."""

    type: Literal["run-started"] = "run-started"
    thread_id: str | None = None
    run_id: str | None = None
    message_id: str | None = None
    metadata: dict[str, Any] | None = None
    parent_run_id: str | None = None


class StepStarted(_Event):
    """A named step (for example one model call) began."""

    type: Literal["step-started"] = "step-started"
    name: str


class StepFinished(_Event):
    """The step of that name ended."""

    type: Literal["step-finished"] = "step-finished"
    name: str


class StepReset(_Event):
    """The output of the current step is discarded (for example before the step is retried).

    Blocks still open are closed without an end: their content goes with the step. Tool calls whose input
    was still streaming are discarded too (no result may follow for them). The step itself stays open. What
    a protocol can take back differs: see the adapters' tables.
    """

    type: Literal["step-reset"] = "step-reset"


class RunFinished(_Event):
    """The run ended normally.

    ``interrupts`` (and pending approvals) mean the run paused for the user rather than completing.
    ``result`` is an optional final value of the run.
    """

    type: Literal["run-finished"] = "run-finished"
    finish_reason: FinishReason = "stop"
    usage: Usage | None = None
    metadata: dict[str, Any] | None = None
    result: JSON = None
    interrupts: list[Interrupt] | None = None


class RunError(_Event):
    """The run failed. ``message`` reaches the client word for word."""

    type: Literal["run-error"] = "run-error"
    message: str
    code: str | None = None


class RunAborted(_Event):
    """The run was stopped on purpose (an orderly stop, not an error)."""

    type: Literal["run-aborted"] = "run-aborted"
    reason: str | None = None


# --- text and reasoning ----------------------------------------------------------------------------


class TextStart(_Event):
    """Opens a text block."""

    type: Literal["text-start"] = "text-start"
    id: str
    provider_metadata: ProviderMetadata | None = None


class TextDelta(_Event):
    """Appends to an open text block."""

    type: Literal["text-delta"] = "text-delta"
    id: str
    delta: str


class TextEnd(_Event):
    """Closes a text block. ``citations`` name the sources the block's text rests on."""

    type: Literal["text-end"] = "text-end"
    id: str
    provider_metadata: ProviderMetadata | None = None
    citations: list[Citation] | None = None


class ReasoningStart(_Event):
    """Opens a reasoning block."""

    type: Literal["reasoning-start"] = "reasoning-start"
    id: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningDelta(_Event):
    """Appends to an open reasoning block."""

    type: Literal["reasoning-delta"] = "reasoning-delta"
    id: str
    delta: str


class ReasoningEnd(_Event):
    """Closes a reasoning block. ``encrypted_value`` carries an opaque provider blob, if any."""

    type: Literal["reasoning-end"] = "reasoning-end"
    id: str
    provider_metadata: ProviderMetadata | None = None
    encrypted_value: str | None = None


# --- tools -----------------------------------------------------------------------------------------


class ToolCallStart(_Event):
    """Opens a tool call whose arguments will stream as text.

    ``dynamic`` marks a tool not known ahead of time; ``provider_executed`` a tool the model provider ran.
    ``input_encoding`` says how to read the argument text: ``"json"`` (the default) or ``"text"`` (the text
    is the input as it is). ``tool_metadata`` is application data about the call (JSON values by key).
    """

    type: Literal["tool-call-start"] = "tool-call-start"
    id: str
    name: str
    parent_message_id: str | None = None
    title: str | None = None
    dynamic: bool = False
    provider_executed: bool = False
    provider_metadata: ProviderMetadata | None = None
    input_encoding: Literal["json", "text"] | None = None
    tool_metadata: dict[str, Any] | None = None


class ToolCallArgsDelta(_Event):
    """Appends raw argument text (conventionally JSON) to an open tool call."""

    type: Literal["tool-call-args-delta"] = "tool-call-args-delta"
    id: str
    delta: str


class ToolCallEnd(_Event):
    """Closes a tool call's input.

    ``input`` is the parsed input (when absent, adapters parse the streamed argument text). ``error`` marks
    an invalid call (the model produced input that does not parse or validate). ``name`` lets a core report
    a whole call in one event, without a ``ToolCallStart``. ``tool_metadata`` replaces the call's.
    """

    type: Literal["tool-call-end"] = "tool-call-end"
    id: str
    input: JSON = None
    error: str | None = None
    name: str | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None


class ToolResult(_Event):
    """The outcome of a tool call: ``output``, or ``error`` text, or ``denied`` by the user.

    ``preliminary`` outputs are intermediate and replaced by a later result for the same call.
    ``tool_metadata`` replaces the call's.
    """

    type: Literal["tool-result"] = "tool-result"
    id: str
    output: JSON = None
    error: str | None = None
    denied: bool = False
    preliminary: bool = False
    message_id: str | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None


class ToolApprovalRequest(_Event):
    """Asks the user to approve the tool call ``tool_call_id`` before it runs (``id`` is the approval id)."""

    type: Literal["tool-approval-request"] = "tool-approval-request"
    id: str
    tool_call_id: str
    reason: str | None = None


class ToolApprovalResponse(_Event):
    """Reports the user's answer to the approval request ``id``."""

    type: Literal["tool-approval-response"] = "tool-approval-response"
    id: str
    approved: bool
    reason: str | None = None


# --- state and history -----------------------------------------------------------------------------


class StateSnapshot(_Event):
    """Replaces the shared state wholesale. State is any JSON value."""

    type: Literal["state-snapshot"] = "state-snapshot"
    state: JSON


class StateDelta(_Event):
    """An RFC 6902 JSON Patch against the shared state as the client holds it."""

    type: Literal["state-delta"] = "state-delta"
    patch: list[dict[str, Any]]


class StateUpdate(_Event):
    """The new shared state; adapters send the difference to what the client holds."""

    type: Literal["state-update"] = "state-update"
    state: JSON


class MessagesSnapshot(_Event):
    """Restates the conversation (neutral :class:`streamkit.events.Message` objects)."""

    type: Literal["messages-snapshot"] = "messages-snapshot"
    messages: list[Any]


# --- extras ----------------------------------------------------------------------------------------


class Data(_Event):
    """Application data. With an ``id``, a later ``Data`` of the same name and id replaces it in place;
    ``transient`` data is shown live but not kept in the message."""

    type: Literal["data"] = "data"
    name: str
    data: JSON
    id: str | None = None
    transient: bool = False


class Source(_Event):
    """A cited source: a URL (``url``) or a document (``media_type`` and ``title``)."""

    type: Literal["source"] = "source"
    id: str
    url: str | None = None
    title: str | None = None
    media_type: str | None = None
    filename: str | None = None
    provider_metadata: ProviderMetadata | None = None


class File(_Event):
    """A file produced by the run, by URL (often a ``data:`` URL); ``reasoning`` marks one produced while
    reasoning (shown with the reasoning, not the answer)."""

    type: Literal["file"] = "file"
    url: str
    media_type: str
    provider_metadata: ProviderMetadata | None = None
    reasoning: bool = False


class Citation(_Part):
    """A source a text block cites: the ``source`` (a URL or a document), and optionally the cited span of
    the source (``start_index`` to ``end_index``) and its text."""

    source: Source
    start_index: int | None = Field(default=None, ge=0)
    end_index: int | None = Field(default=None, ge=0)
    cited_text: str | None = None


class UserFile(_Part):
    """A file attached to a :class:`UserMessage`, by URL (often a ``data:`` URL)."""

    url: str
    media_type: str
    filename: str | None = None


class UserMessage(_Event):
    """A user message injected while the run goes on (steering): ``text`` and attached ``files``.

    ``id`` is the message's id; the run's own message continues after it.
    """

    type: Literal["user-message"] = "user-message"
    id: str
    text: str = ""
    files: list[UserFile] | None = None


class ProviderPart(_Event):
    """Provider-specific content of kind ``kind`` (by convention ``provider.kind``) kept in the message,
    described by its ``provider_metadata``."""

    type: Literal["provider-part"] = "provider-part"
    kind: str
    provider_metadata: ProviderMetadata | None = None


class MessageMetadata(_Event):
    """Metadata merged into the assistant message."""

    type: Literal["message-metadata"] = "message-metadata"
    metadata: JSON


class Custom(_Event):
    """An application-defined event ``name`` carrying ``value``."""

    type: Literal["custom"] = "custom"
    name: str
    value: JSON = None


class Raw(_Event):
    """A provider-native event passed through for inspection; it changes no message or state."""

    type: Literal["raw"] = "raw"
    event: JSON
    source: str | None = None


ChatEvent: TypeAlias = Annotated[
    RunStarted
    | StepStarted
    | StepFinished
    | StepReset
    | RunFinished
    | RunError
    | RunAborted
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolCallStart
    | ToolCallArgsDelta
    | ToolCallEnd
    | ToolResult
    | ToolApprovalRequest
    | ToolApprovalResponse
    | StateSnapshot
    | StateDelta
    | StateUpdate
    | MessagesSnapshot
    | Data
    | Source
    | File
    | MessageMetadata
    | UserMessage
    | ProviderPart
    | Custom
    | Raw,
    Field(discriminator="type"),
]
"""Any event an agent core may yield (a pydantic discriminated union on ``type``)."""

TextEnd.model_rebuild()

chat_event_adapter: TypeAdapter[ChatEvent] = TypeAdapter(ChatEvent)
"""Validates and dumps ``ChatEvent`` values: ``chat_event_adapter.validate_python({"type": ...})``."""
