"""Human in the loop, protocol-neutral: tool approvals and frontend tools, for any agent core.

A run can pause for a person (approve or deny a tool call) or for the browser (run a *frontend tool*, one
the client executes), and the next request resumes it with the answer. The protocols carry this
differently; this module gives an agent core one way to do it, whatever protocol the request came in.

**Asking for approval.** Stream the tool call as usual (``ToolCallStart`` ... ``ToolCallEnd``), then yield
:func:`request_approval` for it instead of running it, and end the run with :func:`pause`::

    yield ToolCallEnd(id=call_id, name="delete_file", input={"path": "notes.txt"})
    yield hitl.request_approval(call_id, reason="Delete notes.txt?")
    yield hitl.pause()                       # RunFinished(finish_reason="tool-calls")

What the client receives:

* AI SDK: ``tool-approval-request`` (``approvalId`` = :func:`approval_id` of the call), the tool part goes to
  ``approval-requested``; ``finish`` with ``finishReason: "tool-calls"``. (A pause must not finish as
  ``"interrupted"``: the ``ai`` client never resends such a response automatically.)
* AG-UI: ``RUN_FINISHED`` with ``outcome: {"type": "interrupt", "interrupts": [...]}``, one interrupt per
  call: ``{id: <approval id>, reason: "tool_approval", toolCallId, message?, responseSchema}`` where
  ``responseSchema`` is :data:`APPROVAL_SCHEMA` (``{approved: boolean, reason?: string}``).

**Learning the answer.** On the next request, :func:`continuation` reads the :class:`RunInput`:

* AI SDK: the user called ``addToolApprovalResponse({id, approved, reason?})`` and the client resent the
  conversation (``sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses``); the call's
  tool part is in ``approval-responded`` state, which the request conversion puts on the
  :class:`~streamkit.events.ToolCallPart` as ``approval=ApprovalState(id, approved, reason)``.
* AG-UI: the client started a new run with ``resume: [{interruptId, status, payload?}]``: ``status:
  "resolved"`` approves (unless ``payload`` is ``{"approved": false, ...}``), ``"cancelled"`` denies;
  ``payload.reason`` is the user's reason. The interrupt id is the approval id, which names the call.

Each answered call is a :class:`Decision`. Run the approved ones and report the denied ones (a
``ToolResult`` with ``denied=True``: AI SDK ``tool-output-denied``, AG-UI a ``TOOL_CALL_RESULT`` marked
denied), then go on in a **new step** so the answer is a new assistant message after the results::

    turn = hitl.continuation(run)
    yield RunStarted(thread_id=run.thread_id, run_id=run.run_id, message_id=run.message_id)
    async for result in hitl.settle(turn.decisions, execute):   # approved: run it; denied: a denial
        yield result
    yield StepStarted(name="answer")
    ...

:func:`settle` runs ``execute(call)`` for each approved call (sync or async; an exception becomes the
result's ``error`` text) and yields :meth:`Decision.denial` for the others. :func:`with_results` gives the
run with those results in its history, for a core that hands the history to a model next.

**Frontend tools.** A tool the client executes (AG-UI lists them in ``RunAgentInput.tools``, see
``RunInput.tools``; with the AI SDK the app knows them: tools without a server ``execute``) is called and
left without a result: stream the call, end the run with :func:`pause`. The client runs it (AI SDK:
``onToolCall`` then ``addToolOutput``, resent with ``lastAssistantMessageIsCompleteWithToolCalls``; AG-UI:
the app appends a ``tool`` message and runs the agent again) and the next request carries the result:
``continuation(run).results`` holds it (a :class:`~streamkit.events.ToolResultPart`), and
``continuation(run).waiting`` lists calls that still have neither result nor answer.

A :class:`Continuation` is about the *open turn*: the messages after the last user message. It is falsy
when the request starts a new turn (the last message is the user's), so an agent can branch on it.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .input import Message, Part, ResumeEntry, RunInput, ToolCallPart, ToolResultPart
from .models import Interrupt, RunFinished, ToolApprovalRequest, ToolResult, Usage

__all__ = [
    "APPROVAL_REASON",
    "APPROVAL_SCHEMA",
    "Continuation",
    "Decision",
    "approval_id",
    "approval_interrupt",
    "continuation",
    "pause",
    "request_approval",
    "resume_entry",
    "settle",
    "with_results",
]

APPROVAL_REASON = "tool_approval"
"""The ``reason`` of an approval interrupt (AG-UI ``Interrupt.reason``)."""

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true runs the tool call, false denies it"},
        "reason": {"type": "string", "description": "why (shown to the agent)"},
    },
    "required": ["approved"],
    "additionalProperties": False,
}
"""The JSON Schema of the answer to an approval interrupt (its AG-UI ``responseSchema``): the ``payload``
of a ``resolved`` resume entry. ``cancelled`` (no payload) denies too."""


def approval_id(tool_call_id: str) -> str:
    """The approval id streamkit uses for the approval of the tool call ``tool_call_id``.

    It is the AI SDK ``approvalId`` and the AG-UI interrupt id, derived from the call so that the answer
    names the call on every protocol (AG-UI's ``resume`` carries only the interrupt id).
    """
    return f"approval-{tool_call_id}"


def request_approval(tool_call_id: str, *, reason: str | None = None, id: str | None = None) -> ToolApprovalRequest:
    """The event asking the user to approve the tool call ``tool_call_id`` (yield it after the call's end).

    ``reason`` is shown to the user (AG-UI: the interrupt's ``message``). ``id`` overrides the approval id
    (:func:`approval_id` of the call by default); an id of your own must be unique in the conversation, and
    an AG-UI answer finds the call through it only if the call keeps it (see :func:`continuation`).
    """
    return ToolApprovalRequest(id=id or approval_id(tool_call_id), tool_call_id=tool_call_id, reason=reason)


def pause(*, usage: Usage | None = None, metadata: dict[str, Any] | None = None) -> RunFinished:
    """The end of a run that waits for approvals or frontend tools: ``RunFinished(finish_reason="tool-calls")``.

    The AG-UI adapter turns the run's approval requests into the interrupt outcome; the AI SDK client
    resends once every call of the step is answered (``interrupted`` would stop it from resending).
    """
    return RunFinished(finish_reason="tool-calls", usage=usage, metadata=metadata)


def approval_interrupt(request: ToolApprovalRequest) -> Interrupt:
    """The interrupt an approval request becomes where the protocol pauses with interrupts (AG-UI)."""
    return Interrupt(
        id=request.id,
        reason=APPROVAL_REASON,
        message=request.reason,
        tool_call_id=request.tool_call_id,
        response_schema=APPROVAL_SCHEMA,
    )


@dataclass(frozen=True, slots=True)
class Decision:
    """The user's answer to the approval of ``call``: ``approved`` or not, with their ``reason`` if any.

    ``approval_id`` is the approval (interrupt) id answered; ``payload`` the AG-UI resume payload as sent.
    """

    call: ToolCallPart
    approved: bool
    approval_id: str
    reason: str | None = None
    payload: Any = None

    def denial(self, message: str | None = None) -> ToolResult:
        """The result reporting the call denied (``message``, else the user's reason, as its text)."""
        return ToolResult(id=self.call.id, denied=True, error=message or self.reason)


@dataclass(frozen=True, slots=True)
class Continuation:
    """What a request brings back for the open turn (the messages after the last user message).

    ``calls`` are the turn's tool calls in order; ``results`` the outcomes already in the history, by call
    id (tools the agent ran, and frontend tools the client ran); ``decisions`` the answered approvals of
    calls without a result (to run or to deny now); ``waiting`` the calls with neither result nor answer.
    ``message_id`` is the assistant message the request continues (AI SDK), if any.
    """

    calls: tuple[ToolCallPart, ...] = ()
    results: Mapping[str, ToolResultPart] = field(default_factory=dict)
    decisions: tuple[Decision, ...] = ()
    waiting: tuple[ToolCallPart, ...] = ()
    message_id: str | None = None

    def __bool__(self) -> bool:
        """True when the request continues a turn with tool calls (rather than starting a new one)."""
        return bool(self.calls)

    @property
    def approved(self) -> tuple[Decision, ...]:
        """The decisions that approve their call."""
        return tuple(d for d in self.decisions if d.approved)

    @property
    def denied(self) -> tuple[Decision, ...]:
        """The decisions that deny their call."""
        return tuple(d for d in self.decisions if not d.approved)

    def result(self, tool_call_id: str) -> ToolResultPart | None:
        """The outcome of the call ``tool_call_id`` in the history, if any."""
        return self.results.get(tool_call_id)

    def call(self, tool_call_id: str) -> ToolCallPart | None:
        """The turn's call ``tool_call_id``, if any."""
        return next((c for c in self.calls if c.id == tool_call_id), None)


def _open_turn(messages: list[Message]) -> list[Message]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return messages[i + 1 :]
    return list(messages)


def _from_resume(call: ToolCallPart, entry: ResumeEntry) -> Decision:
    payload = entry.payload
    approved = entry.status == "resolved"
    reason: str | None = None
    if isinstance(payload, dict):
        if payload.get("approved") is False:
            approved = False
        if isinstance(payload.get("reason"), str):
            reason = payload["reason"]
    return Decision(call=call, approved=approved, approval_id=entry.interrupt_id, reason=reason, payload=payload)


def resume_entry(run: RunInput, interrupt_id: str) -> ResumeEntry | None:
    """The request's answer to the interrupt ``interrupt_id`` (AG-UI ``resume``), if any."""
    return next((e for e in run.resume if e.interrupt_id == interrupt_id), None)


def continuation(run: RunInput) -> Continuation:
    """Read the open turn of ``run``: its calls, their results, the approvals answered (see the module doc).

    A call's approval is answered by its tool part's ``approval`` (AI SDK) or by a ``resume`` entry whose
    interrupt id is the call's approval id (the part's ``approval.id``, else :func:`approval_id` of the call,
    or the call's own id for a core that names its interrupts after the calls).
    """
    calls: list[ToolCallPart] = []
    results: dict[str, ToolResultPart] = {}
    for message in _open_turn(run.messages):
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                calls.append(part)
            elif isinstance(part, ToolResultPart):
                results[part.id] = part
    decisions: list[Decision] = []
    waiting: list[ToolCallPart] = []
    for call in calls:
        if call.id in results:
            continue
        approval = call.approval
        if approval is not None and approval.approved is not None:
            decisions.append(
                Decision(call=call, approved=approval.approved, approval_id=approval.id, reason=approval.reason)
            )
            continue
        names = [approval.id] if approval is not None else [approval_id(call.id), call.id]
        entry = next((e for e in (resume_entry(run, n) for n in names) if e is not None), None)
        if entry is not None:
            decisions.append(_from_resume(call, entry))
        else:
            waiting.append(call)
    return Continuation(
        calls=tuple(calls),
        results=results,
        decisions=tuple(decisions),
        waiting=tuple(waiting),
        message_id=run.message_id,
    )


Execute = Callable[[ToolCallPart], Any | Awaitable[Any]]
"""Runs one approved call: returns its output (or an awaitable of it), raises to report an error."""


async def settle(decisions: Iterable[Decision], execute: Execute) -> AsyncIterator[ToolResult]:
    """The results of answered approvals, in order: ``execute(call)`` for approved calls, denials for the rest.

    ``execute`` may be sync or async; an exception it raises becomes the result's ``error`` text.
    """
    for decision in decisions:
        if not decision.approved:
            yield decision.denial()
            continue
        try:
            output = execute(decision.call)
            if inspect.isawaitable(output):
                output = await output
        except Exception as exc:
            yield ToolResult(id=decision.call.id, error=str(exc) or type(exc).__name__)
        else:
            yield ToolResult(id=decision.call.id, output=output)


def with_results(run: RunInput, results: Iterable[ToolResult]) -> RunInput:
    """``run`` with ``results`` in its history, each as a result part right after its call (for a core
    that sends the history to a model after settling the decisions). Preliminary results are left out."""
    by_id = {r.id: r for r in results if not r.preliminary}
    if not by_id:
        return run
    messages: list[Message] = []
    for message in run.messages:
        parts: list[Part] = []
        for part in message.parts:
            parts.append(part)
            if isinstance(part, ToolCallPart) and part.id in by_id:
                r = by_id.pop(part.id)
                parts.append(
                    ToolResultPart(id=part.id, name=part.name, output=r.output, error=r.error, denied=r.denied)
                )
        changed = len(parts) != len(message.parts)
        messages.append(message.model_copy(update={"parts": parts}) if changed else message)
    return run.model_copy(update={"messages": messages})
