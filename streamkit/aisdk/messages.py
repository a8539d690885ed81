"""The ``UIMessage`` history: its pydantic models, and its conversion to and from neutral
:class:`~streamkit.events.Message` objects, both ways.

Every part type the client can send has a model here; unknown part types and unknown keys are kept (as
:class:`UnknownUIPart` and model extras), never rejected, since the client sends back whatever it built from
earlier streams.

:func:`from_ui_messages` reads the history a ``useChat`` body carries (for
:func:`~streamkit.aisdk.request.to_run_input`):

* ``text``, ``file``, ``reasoning`` (and ``reasoning-file``) parts become neutral parts; each tool part
  becomes a :class:`~streamkit.events.ToolCallPart` (with its approval, if any) followed, once the call has
  an outcome, by a :class:`~streamkit.events.ToolResultPart` in the same message (``providerExecuted``,
  ``callProviderMetadata`` and ``resultProviderMetadata`` kept on them); a ``steering-message``
  part becomes a user message between the two halves of its assistant message.
* each step of an assistant message (its parts from one ``step-start`` to the next) becomes an assistant
  message of its own, as the AI SDK's ``convertToModelMessages`` splits it, so the history stays causal: a
  step's calls, their results, then the next step. The first keeps the message id, the later ones are
  ``<id>-step-2``, ``<id>-step-3``...
* sources, ``custom`` and ``data-*`` parts carry nothing an agent needs and are dropped.

:func:`to_ui_messages` goes the other way, for a ``MessagesSnapshot``: ``UIMessage`` dicts, each ``tool``
message folded into the tool parts of the calls it answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from ..events import (
    ApprovalState,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

__all__ = [
    "CustomUIPart",
    "DataUIPart",
    "DynamicToolUIPart",
    "FileUIPart",
    "ReasoningFileUIPart",
    "ReasoningUIPart",
    "SourceDocumentUIPart",
    "SourceUrlUIPart",
    "SteeringMessageUIPart",
    "StepStartUIPart",
    "TextUIPart",
    "ToolApproval",
    "ToolState",
    "ToolUIPart",
    "UIMessage",
    "UIPart",
    "UnknownUIPart",
    "from_ui_messages",
    "to_ui_messages",
]

# -- the UIMessage models ---------------------------------------------------------------------------

ToolState: TypeAlias = Literal[
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
]
"""The states of a tool part, in the order a call moves through them."""

ProviderMetadata: TypeAlias = dict[str, dict[str, Any]]


class UIModel(BaseModel):
    """The base of the AI SDK's message models: fields the client adds and this model does not name are kept."""

    model_config = ConfigDict(extra="allow")


class TextUIPart(UIModel):
    """Text, as streamed by ``text-*`` chunks or typed by the user."""

    type: Literal["text"]
    text: str
    state: Literal["streaming", "done"] | None = None
    providerMetadata: ProviderMetadata | None = None
    citations: list[Any] | None = None


class ReasoningUIPart(UIModel):
    """Reasoning text."""

    type: Literal["reasoning"]
    text: str
    id: str | None = None
    state: Literal["streaming", "done"] | None = None
    providerMetadata: ProviderMetadata | None = None


class FileUIPart(UIModel):
    """A file by URL (often a ``data:`` URL)."""

    type: Literal["file"]
    mediaType: str
    url: str
    filename: str | None = None
    providerReference: dict[str, str] | None = None
    providerMetadata: ProviderMetadata | None = None


class ReasoningFileUIPart(UIModel):
    """A file produced while reasoning (v7)."""

    type: Literal["reasoning-file"]
    mediaType: str
    url: str
    providerMetadata: ProviderMetadata | None = None


class SourceUrlUIPart(UIModel):
    """A cited URL."""

    type: Literal["source-url"]
    sourceId: str
    url: str
    title: str | None = None
    providerMetadata: ProviderMetadata | None = None


class SourceDocumentUIPart(UIModel):
    """A cited document."""

    type: Literal["source-document"]
    sourceId: str
    mediaType: str
    title: str
    filename: str | None = None
    providerMetadata: ProviderMetadata | None = None


class StepStartUIPart(UIModel):
    """The start of a step."""

    type: Literal["step-start"]


class ToolApproval(UIModel):
    """The approval asked for a tool call; ``approved`` is set once the user answered."""

    id: str
    approved: bool | None = None
    reason: str | None = None
    requestReason: str | None = None
    isAutomatic: bool | None = None
    signature: str | None = None
    descriptor: Any = None
    inputSchemaInput: Any = None


class _ToolFields(UIModel):
    toolCallId: str
    state: ToolState
    input: Any = None
    output: Any = None
    errorText: str | None = None
    rawInput: Any = None
    inputEncoding: Literal["json", "text"] | None = None
    providerExecuted: bool | None = None
    preliminary: bool | None = None
    title: str | None = None
    toolMetadata: dict[str, Any] | None = None
    callProviderMetadata: ProviderMetadata | None = None
    resultProviderMetadata: ProviderMetadata | None = None
    approval: ToolApproval | None = None


class ToolUIPart(_ToolFields):
    """A call of a tool the app declared: ``type`` is ``tool-<name>``."""

    type: Annotated[str, Field(pattern=r"^tool-.+")]

    @property
    def tool_name(self) -> str:
        """The tool's name (``type`` without the ``tool-`` prefix)."""
        return self.type[5:]


class DynamicToolUIPart(_ToolFields):
    """A call of a tool not known ahead of time."""

    type: Literal["dynamic-tool"]
    toolName: str

    @property
    def tool_name(self) -> str:
        """The tool's name."""
        return self.toolName


class DataUIPart(UIModel):
    """Application data: ``type`` is ``data-<name>``."""

    type: Annotated[str, Field(pattern=r"^data-")]
    id: str | None = None
    data: Any = None


class CustomUIPart(UIModel):
    """Provider-specific content (v7)."""

    type: Literal["custom"]
    kind: str
    providerMetadata: ProviderMetadata | None = None


class UnknownUIPart(UIModel):
    """A part of a type this version does not know; kept as is and ignored by the conversion."""

    type: str


def _part_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return "part:unknown"
    if kind in _TAGGED:
        return f"part:{kind}"
    if kind.startswith("tool-") and len(kind) > 5:
        return "part:tool"
    if kind.startswith("data-"):
        return "part:data"
    return "part:unknown"


class SteeringMessageUIPart(UIModel):
    """A user message added while the assistant was answering (v7, experimental)."""

    type: Literal["steering-message"]
    id: str
    parts: list[UIPart]


UIPart: TypeAlias = Annotated[
    Annotated[TextUIPart, Tag("part:text")]
    | Annotated[ReasoningUIPart, Tag("part:reasoning")]
    | Annotated[FileUIPart, Tag("part:file")]
    | Annotated[ReasoningFileUIPart, Tag("part:reasoning-file")]
    | Annotated[SourceUrlUIPart, Tag("part:source-url")]
    | Annotated[SourceDocumentUIPart, Tag("part:source-document")]
    | Annotated[StepStartUIPart, Tag("part:step-start")]
    | Annotated[ToolUIPart, Tag("part:tool")]
    | Annotated[DynamicToolUIPart, Tag("part:dynamic-tool")]
    | Annotated[DataUIPart, Tag("part:data")]
    | Annotated[CustomUIPart, Tag("part:custom")]
    | Annotated[SteeringMessageUIPart, Tag("part:steering-message")]
    | Annotated[UnknownUIPart, Tag("part:unknown")],
    Discriminator(_part_tag),
]
"""Any part of a ``UIMessage``, chosen by its ``type``."""

_TAGGED = frozenset(
    {"text", "reasoning", "file", "reasoning-file", "source-url", "source-document", "step-start",
     "dynamic-tool", "custom", "steering-message"}
)  # fmt: skip

SteeringMessageUIPart.model_rebuild()


class UIMessage(UIModel):
    """One message of the conversation as the client holds it."""

    id: str
    role: Literal["system", "user", "assistant"]
    metadata: Any = None
    parts: list[UIPart] = Field(default_factory=list)


# -- UIMessages to neutral messages -----------------------------------------------------------------


def _tool_to_neutral(part: ToolUIPart | DynamicToolUIPart) -> list[Part]:
    approval = None
    if part.approval is not None:
        reason = part.approval.reason if part.approval.approved is not None else part.approval.requestReason
        approval = ApprovalState(id=part.approval.id, approved=part.approval.approved, reason=reason)
    out: list[Part] = [
        ToolCallPart(
            id=part.toolCallId,
            name=part.tool_name,
            input=part.input,
            approval=approval,
            dynamic=isinstance(part, DynamicToolUIPart),
            provider_executed=part.providerExecuted is True,
            provider_metadata=part.callProviderMetadata,
        )
    ]
    meta = part.resultProviderMetadata
    if part.state == "output-available":
        out.append(ToolResultPart(id=part.toolCallId, name=part.tool_name, output=part.output, provider_metadata=meta))
    elif part.state == "output-error":
        error = part.errorText or ""
        out.append(ToolResultPart(id=part.toolCallId, name=part.tool_name, error=error, provider_metadata=meta))
    elif part.state == "output-denied":
        out.append(ToolResultPart(id=part.toolCallId, name=part.tool_name, denied=True))
    return out


def _part_to_neutral(part: Any) -> list[Part]:
    if isinstance(part, TextUIPart):
        return [TextPart(text=part.text)]
    if isinstance(part, FileUIPart | ReasoningFileUIPart):
        filename = part.filename if isinstance(part, FileUIPart) else None
        return [FilePart(url=part.url, media_type=part.mediaType, filename=filename)]
    if isinstance(part, ReasoningUIPart):
        return [ReasoningPart(text=part.text, provider_metadata=part.providerMetadata)]
    if isinstance(part, ToolUIPart | DynamicToolUIPart):
        return _tool_to_neutral(part)
    return []


def _message_to_neutral(message: UIMessage) -> list[Message]:
    metadata = message.metadata if isinstance(message.metadata, dict) else None
    out: list[Message] = []
    parts: list[Part] = []
    step = 1  # the step the parts belong to (a steering message splits a step, keeping its id)

    def flush() -> None:
        nonlocal parts
        mid = message.id if step == 1 else f"{message.id}-step-{step}"
        out.append(Message(id=mid, role=message.role, parts=parts, metadata=metadata if step == 1 else None))
        parts = []

    for part in message.parts:
        if isinstance(part, SteeringMessageUIPart):
            if parts:
                flush()
            steering = [p for sub in part.parts for p in _part_to_neutral(sub)]
            out.append(Message(id=part.id, role="user", parts=steering))
            continue
        if isinstance(part, StepStartUIPart) and parts and message.role == "assistant":
            flush()  # each step is its own assistant message: its calls, then their results, then the next step
            step += 1
            continue
        parts += _part_to_neutral(part)
    if parts or not out:
        flush()
    return out


def from_ui_messages(messages: Iterable[UIMessage]) -> list[Message]:
    """``UIMessage`` objects as neutral messages, in order (see the module docstring); an assistant message of
    several steps becomes one neutral message per step."""
    return [m for message in messages for m in _message_to_neutral(message)]


# -- neutral messages to UIMessages -----------------------------------------------------------------


def _ui_tool_part(part: ToolCallPart) -> dict[str, Any]:
    out: dict[str, Any] = (
        {"type": "dynamic-tool", "toolName": part.name} if part.dynamic else {"type": f"tool-{part.name}"}
    )
    out["toolCallId"] = part.id
    out["state"] = "input-available"
    out["input"] = part.input
    if part.provider_executed:
        out["providerExecuted"] = True
    if part.provider_metadata is not None:
        out["callProviderMetadata"] = part.provider_metadata
    if part.approval is not None:
        approval: dict[str, Any] = {"id": part.approval.id}
        if part.approval.approved is None:
            out["state"] = "approval-requested"
            if part.approval.reason is not None:
                approval["requestReason"] = part.approval.reason
        else:
            out["state"] = "approval-responded"
            approval["approved"] = part.approval.approved
            if part.approval.reason is not None:
                approval["reason"] = part.approval.reason
        out["approval"] = approval
    return out


def _apply_result(tool: dict[str, Any], result: ToolResultPart) -> None:
    if result.denied:
        tool["state"] = "output-denied"
    elif result.error is not None:
        tool["state"] = "output-error"
        tool["errorText"] = result.error
    else:
        tool["state"] = "output-available"
        tool["output"] = result.output
    if result.provider_metadata is not None:
        tool["resultProviderMetadata"] = result.provider_metadata


def to_ui_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages as ``UIMessage`` dicts (``tool`` messages folded into the calls they answer)."""
    out: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            elif isinstance(part, ReasoningPart):
                reasoning: dict[str, Any] = {"type": "reasoning", "text": part.text}
                if part.provider_metadata is not None:
                    reasoning["providerMetadata"] = part.provider_metadata
                parts.append(reasoning)
            elif isinstance(part, FilePart):
                file: dict[str, Any] = {"type": "file", "mediaType": part.media_type, "url": part.url}
                if part.filename is not None:
                    file["filename"] = part.filename
                parts.append(file)
            elif isinstance(part, ToolCallPart):
                tool = tools[part.id] = _ui_tool_part(part)
                parts.append(tool)
            elif isinstance(part, ToolResultPart):
                tool = tools.get(part.id) or {}
                if not tool:
                    name = part.name or "unknown"
                    tool = tools[part.id] = {"type": f"tool-{name}", "toolCallId": part.id, "input": None}
                    parts.append(tool)
                _apply_result(tool, part)
        if message.role == "tool":
            if parts and out and out[-1]["role"] == "assistant":
                out[-1]["parts"] += parts
            continue
        role = "system" if message.role in ("system", "developer") else message.role
        ui: dict[str, Any] = {"id": message.id, "role": role, "parts": parts}
        if message.metadata is not None:
            ui["metadata"] = message.metadata
        out.append(ui)
    return out
