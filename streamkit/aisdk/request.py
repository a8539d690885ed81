"""The ``useChat`` POST body: pydantic models, the parser, and its conversion to a neutral :class:`RunInput`.

``DefaultChatTransport`` posts ``{...app keys, "id", "messages", "trigger", "messageId"?}`` where
``messages`` is the whole conversation as ``UIMessage`` objects. Every part type the client can send has a
model here; unknown part types and unknown keys are kept (as :class:`UnknownUIPart` and model extras), never
rejected, since the client sends back whatever it built from earlier streams.

:func:`to_run_input` turns the body into a :class:`~streamkit.events.RunInput`:

* the messages become neutral messages as :func:`~streamkit.aisdk.messages.from_ui_messages` converts them
  (tool parts into calls and results, one assistant message per step, sources and ``data-*`` parts dropped).
* ``system`` messages are dropped unless the app opts in: the history comes from the browser.
* the last ``data-state`` part (see :data:`STATE_PART_ID`) becomes ``state``.
* ``resume`` (a key the page adds with ``sendMessage(undefined, { body: { resume } })``), the answers to
  the interrupts that ended the previous run (its ``data-interrupt`` parts), becomes ``resume``: the same
  ``[{interruptId, status, payload?}]`` as AG-UI's ``RunAgentInput.resume``.
* when the body continues an assistant message (``trigger`` ``submit-message`` with the ``messageId`` of
  the last message, an assistant one), its id becomes ``message_id``.
* app keys go to ``extra``.

:mod:`~streamkit.aisdk.messages` is built on this module's models, so :func:`to_run_input` imports it when
called rather than at the top (the one import that would otherwise go both ways).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from ..events import ResumeEntry, RunInput
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
    from .messages import from_ui_messages  # built on this module's models

    messages = from_ui_messages(m for m in request.messages if allow_system_messages or m.role != "system")
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
