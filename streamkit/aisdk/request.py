"""The ``useChat`` POST body: pydantic models, and its conversion to a neutral :class:`RunInput`.

``DefaultChatTransport`` posts ``{...app keys, "id", "messages", "trigger", "messageId"?}`` where
``messages`` is the whole conversation as ``UIMessage`` objects. Every part type the client can send has a
model here; unknown part types and unknown keys are kept (as :class:`UnknownUIPart` and model extras), never
rejected, since the client sends back whatever it built from earlier streams.

:func:`to_run_input` turns the body into a :class:`~streamkit.events.RunInput`:

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
* ``system`` messages are dropped unless the app opts in: the history comes from the browser.
* the last ``data-state`` part (see :data:`STATE_PART_ID`) becomes ``state``.
* ``resume`` (a key the page adds with ``sendMessage(undefined, { body: { resume } })``), the answers to
  the interrupts that ended the previous run (its ``data-interrupt`` parts), becomes ``resume``: the same
  ``[{interruptId, status, payload?}]`` as AG-UI's ``RunAgentInput.resume``.
* when the body continues an assistant message (``trigger`` ``submit-message`` with the ``messageId`` of
  the last message, an assistant one), its id becomes ``message_id``.
* app keys go to ``extra``.

:func:`to_ui_messages` goes the other way, for a ``MessagesSnapshot``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from ..events import (
    ApprovalState,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    ResumeEntry,
    RunInput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ..http import HTTPError, Limits, check_messages, field_error, field_errors

__all__ = [
    "STATE_PART_ID",
    "ChatRequest",
    "CustomUIPart",
    "DataUIPart",
    "DynamicToolUIPart",
    "FileUIPart",
    "ReasoningFileUIPart",
    "ReasoningUIPart",
    "ResumeItem",
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
    "continued_message",
    "request_error",
    "to_run_input",
    "to_ui_messages",
]

STATE_PART_ID = "state"
"""The id of the ``data-state`` part that carries the shared state: the client replaces that part in place
on every change, and the last one in a request's history is the state the client holds."""

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


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class TextUIPart(_Loose):
    """Text, as streamed by ``text-*`` chunks or typed by the user."""

    type: Literal["text"]
    text: str
    state: Literal["streaming", "done"] | None = None
    providerMetadata: ProviderMetadata | None = None
    citations: list[Any] | None = None


class ReasoningUIPart(_Loose):
    """Reasoning text."""

    type: Literal["reasoning"]
    text: str
    id: str | None = None
    state: Literal["streaming", "done"] | None = None
    providerMetadata: ProviderMetadata | None = None


class FileUIPart(_Loose):
    """A file by URL (often a ``data:`` URL)."""

    type: Literal["file"]
    mediaType: str
    url: str
    filename: str | None = None
    providerReference: dict[str, str] | None = None
    providerMetadata: ProviderMetadata | None = None


class ReasoningFileUIPart(_Loose):
    """A file produced while reasoning (v7)."""

    type: Literal["reasoning-file"]
    mediaType: str
    url: str
    providerMetadata: ProviderMetadata | None = None


class SourceUrlUIPart(_Loose):
    """A cited URL."""

    type: Literal["source-url"]
    sourceId: str
    url: str
    title: str | None = None
    providerMetadata: ProviderMetadata | None = None


class SourceDocumentUIPart(_Loose):
    """A cited document."""

    type: Literal["source-document"]
    sourceId: str
    mediaType: str
    title: str
    filename: str | None = None
    providerMetadata: ProviderMetadata | None = None


class StepStartUIPart(_Loose):
    """The start of a step."""

    type: Literal["step-start"]


class ToolApproval(_Loose):
    """The approval asked for a tool call; ``approved`` is set once the user answered."""

    id: str
    approved: bool | None = None
    reason: str | None = None
    requestReason: str | None = None
    isAutomatic: bool | None = None
    signature: str | None = None
    descriptor: Any = None
    inputSchemaInput: Any = None


class _ToolFields(_Loose):
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


class DataUIPart(_Loose):
    """Application data: ``type`` is ``data-<name>``."""

    type: Annotated[str, Field(pattern=r"^data-")]
    id: str | None = None
    data: Any = None


class CustomUIPart(_Loose):
    """Provider-specific content (v7)."""

    type: Literal["custom"]
    kind: str
    providerMetadata: ProviderMetadata | None = None


class UnknownUIPart(_Loose):
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


class SteeringMessageUIPart(_Loose):
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


class UIMessage(_Loose):
    """One message of the conversation as the client holds it."""

    id: str
    role: Literal["system", "user", "assistant"]
    metadata: Any = None
    parts: list[UIPart] = Field(default_factory=list)


class ResumeItem(_Loose):
    """The answer to an interrupt that ended the previous run (a ``data-interrupt`` part, by its id).

    The shape of AG-UI's ``RunAgentInput.resume`` items: ``status`` ``"resolved"`` with the answer as
    ``payload``, or ``"cancelled"``. It reaches the agent as a :class:`~streamkit.events.ResumeEntry`.
    """

    interruptId: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None


class ChatRequest(_Loose):
    """The body ``DefaultChatTransport`` posts; app keys (from ``body`` options) are kept as extras.

    ``resume`` is the one body key streamkit reads besides the transport's own: the page's answers to the
    previous run's interrupts, sent with ``sendMessage(undefined, { body: { resume: [...] } })``.
    """

    id: str
    messages: list[UIMessage]
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    messageId: str | None = None
    resume: list[ResumeItem] | None = None

    @property
    def app_keys(self) -> dict[str, Any]:
        """The keys the app added to the body."""
        return dict(self.model_extra or {})


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc if not (isinstance(p, str) and p.startswith("part:"))) or "body"


def request_error(exc: ValidationError, *, status: int = 422) -> HTTPError:
    """An :class:`~streamkit.http.HTTPError` naming the first invalid field of a body (``messages.0.role``)
    and listing every invalid field in ``errors``."""
    errors = field_errors(exc, _field_path)
    if not errors:
        return HTTPError("invalid request body", status=status)
    return field_error(errors[0]["field"], errors, status=status)


def parse_chat_request(data: Any, limits: Limits | None = None) -> ChatRequest:
    """Validate a decoded JSON body as a :class:`ChatRequest`, or raise :class:`~streamkit.http.HTTPError`.

    With ``limits``, more than ``max_messages`` messages, or one message over ``max_message_bytes``, is a 413.
    """
    if limits is not None:
        check_messages(data, limits)
    elif not isinstance(data, dict):
        raise HTTPError("body: expected a JSON object (a useChat request)", field="body", status=422)
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        raise request_error(exc) from None


def continued_message(request: ChatRequest) -> UIMessage | None:
    """The assistant message the request continues (tool outputs or approvals added), if any."""
    if request.trigger != "submit-message" or request.messageId is None or not request.messages:
        return None
    last = request.messages[-1]
    if last.role == "assistant" and last.id == request.messageId:
        return last
    return None


def answered_interrupts(message: UIMessage | None, resume: Iterable[ResumeEntry]) -> dict[str, Any]:
    """The ``data-interrupt`` parts of ``message`` that ``resume`` answers: each part's data, as the client
    holds it, with the answer's ``status`` (``"resolved"`` or ``"cancelled"``) added; keyed by part id."""
    status = {entry.interrupt_id: entry.status for entry in resume}
    if message is None or not status:
        return {}
    out: dict[str, Any] = {}
    parts = [p for p in message.parts if isinstance(p, DataUIPart) and p.type == "data-interrupt"]
    for part in parts:
        if part.id is not None and part.id in status and isinstance(part.data, dict):
            out[part.id] = {**part.data, "status": status[part.id]}
    return out


def _tool_parts(message: UIMessage) -> list[ToolUIPart | DynamicToolUIPart]:
    return [p for p in message.parts if isinstance(p, ToolUIPart | DynamicToolUIPart)]


def known_ids(message: UIMessage | None) -> tuple[list[str], list[str]]:
    """The tool call ids and approval ids of ``message`` (targets of outputs and answers in this run)."""
    if message is None:
        return [], []
    tools = _tool_parts(message)
    return [p.toolCallId for p in tools], [p.approval.id for p in tools if p.approval is not None]


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


def _last_state(messages: list[UIMessage]) -> Any:
    for message in reversed(messages):
        for part in reversed(message.parts):
            if isinstance(part, DataUIPart) and part.type == "data-state" and part.id == STATE_PART_ID:
                return part.data
    return None


def to_run_input(
    request: ChatRequest,
    *,
    run_id: str | None = None,
    principal: Any = None,
    allow_system_messages: bool = False,
) -> RunInput:
    """The neutral :class:`~streamkit.events.RunInput` for a ``useChat`` body (see the module docstring)."""
    messages: list[Message] = []
    for message in request.messages:
        if message.role == "system" and not allow_system_messages:
            continue
        messages += _message_to_neutral(message)
    continued = continued_message(request)
    return RunInput(
        thread_id=request.id,
        run_id=run_id or f"run-{uuid.uuid4().hex}",
        messages=messages,
        state=_last_state(request.messages),
        resume=[
            ResumeEntry(interrupt_id=r.interruptId, status=r.status, payload=r.payload) for r in request.resume or ()
        ],
        message_id=continued.id if continued is not None else None,
        principal=principal,
        extra=request.app_keys,
    )


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
