"""The ``useChat`` POST body: its pydantic model, the parser, and its conversion to a neutral :class:`RunInput`.

``DefaultChatTransport`` posts ``{...app keys, "id", "messages", "trigger", "messageId"?}`` where
``messages`` is the whole conversation as ``UIMessage`` objects, modelled (part by part) in
:mod:`~streamkit.aisdk.messages`; unknown keys of the body are kept as model extras, never rejected.

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

Besides the body, :func:`continued_message`, :func:`known_ids` and :func:`answered_interrupts` read what the
route needs from it: the assistant message it continues, the tool calls and approvals that message holds,
and the interrupts ``resume`` answers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import ValidationError

from ..events import ResumeEntry, RunInput
from ..http import HTTPError, Limits, check_messages, field_error, field_errors, validate_listed
from .messages import DataUIPart, DynamicToolUIPart, ToolUIPart, UIMessage, UIModel, from_ui_messages

__all__ = [
    "STATE_PART_ID",
    "ChatRequest",
    "ResumeItem",
    "answered_interrupts",
    "continued_message",
    "known_ids",
    "parse_chat_request",
    "request_error",
    "to_run_input",
]

STATE_PART_ID = "state"
"""The id of the ``data-state`` part that carries the shared state: the client replaces that part in place
on every change, and the last one in a request's history is the state the client holds."""


class ResumeItem(UIModel):
    """The answer to an interrupt that ended the previous run (a ``data-interrupt`` part, by its id).

    The shape of AG-UI's ``RunAgentInput.resume`` items: ``status`` ``"resolved"`` with the answer as
    ``payload``, or ``"cancelled"``. It reaches the agent as a :class:`~streamkit.events.ResumeEntry`.
    """

    interruptId: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None


class ChatRequest(UIModel):
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

    With ``limits``, more than ``max_messages`` messages, one message over ``max_message_bytes`` or over
    ``max_message_parts`` parts, is a 413.
    """
    if limits is not None:
        check_messages(data, limits)
    elif not isinstance(data, dict):
        raise HTTPError("body: expected a JSON object (a useChat request)", field="body", status=422)
    try:
        return validate_listed(ChatRequest, data)
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


_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def _run_id() -> str:
    """``run-`` and the hex of a random version 4 UUID: ``uuid.uuid4().hex``'s bits without its object."""
    return f"run-{int.from_bytes(os.urandom(16)) & _UUID4_CLEAR | _UUID4_SET:032x}"


def to_run_input(
    request: ChatRequest,
    *,
    run_id: str | None = None,
    principal: Any = None,
    allow_system_messages: bool = False,
) -> RunInput:
    """The neutral :class:`~streamkit.events.RunInput` for a ``useChat`` body (see the module docstring)."""
    messages = from_ui_messages(m for m in request.messages if allow_system_messages or m.role != "system")
    continued = continued_message(request)
    return RunInput(
        thread_id=request.id,
        run_id=run_id or _run_id(),
        messages=messages,
        state=_last_state(request.messages),
        resume=[
            ResumeEntry(interrupt_id=r.interruptId, status=r.status, payload=r.payload) for r in request.resume or ()
        ],
        message_id=continued.id if continued is not None else None,
        principal=principal,
        extra=request.app_keys,
    )
