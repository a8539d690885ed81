"""The sequence checker: a per-run state machine that keeps a ``ChatEvent`` stream well-formed.

A well-formed run is ``RunStarted``, then content, then exactly one terminal event (``RunFinished``,
``RunError`` or ``RunAborted``), where every block (text, reasoning, tool call input, step) is opened
before its deltas and closed before ``RunFinished``, ids are not reused while open and not shared between
kinds of block, and tool results and approvals refer to known calls.

In **repair** mode (the default) the checker fixes what a sloppy core gets wrong: it opens implied
blocks, closes what is still open before the end, synthesizes ``RunStarted``/``RunFinished``, renames an id
that another kind of block already uses, and drops what cannot be repaired, logging each change on the
``streamkit.events`` logger: a repair at INFO (all of the run's content still gets through), a drop at
WARNING (content was lost, which a default server log shows). In **strict** mode it raises
:class:`ProtocolError` instead.

A ``RunError`` or ``RunAborted`` may arrive with blocks open in both modes: they are closed first.

An empty text, reasoning or tool-argument delta is passed on as nothing (in both modes; a delta that implies
its block still opens it): the protocols want non-empty chunks, and an empty one changes nothing.

A ``StepReset`` closes every open text, reasoning and tool-call-input block *without* an end event (their
content is discarded with the step; their ids may be opened again). Steps stay open. A tool call whose input
was still open is discarded: its id stays taken, and a result or approval request for it is refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from typing import Any, Literal

from .logs import run_logger
from .models import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
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

__all__ = ["ProtocolError", "SequenceChecker", "check"]

logger = run_logger("streamkit.events")

_TERMINAL = frozenset({"run-finished", "run-error", "run-aborted"})


class ProtocolError(ValueError):
    """An event that breaks the stream's rules (raised by the checker in strict mode)."""

    def __init__(self, event: ChatEvent | None, reason: str) -> None:
        self.event = event
        self.reason = reason
        where = f"{type(event).__name__}({_short(event)})" if event is not None else "end of stream"
        super().__init__(f"{where}: {reason}")


def _short(event: ChatEvent) -> str:
    fields = []
    for name in ("id", "name", "tool_call_id"):
        value = getattr(event, name, None)
        if value is not None:
            fields.append(f"{name}={value!r}")
    return ", ".join(fields)


class SequenceChecker:
    """Checks (and by default repairs) one run's event sequence.

    ``feed(event)`` returns the events to pass on in place of ``event`` (usually ``[event]``);
    ``close()`` returns what must follow when the core's stream ends. ``known_tool_calls`` are the ids of
    tool calls made in earlier requests (a continued message), whose results may arrive in this run;
    ``known_approvals`` likewise for approval ids.
    """

    __slots__ = (
        "_alias",
        "_approvals",
        "_discarded",
        "_done",
        "_kind",
        "_reasoning",
        "_results",
        "_started",
        "_steps",
        "_text",
        "_tool_names",
        "_tools_ended",
        "_tools_open",
        "strict",
    )

    def __init__(
        self,
        *,
        strict: bool = False,
        known_tool_calls: Iterable[str] = (),
        known_approvals: Iterable[str] = (),
    ) -> None:
        self.strict = strict
        self._started = False
        self._done = False
        self._text: dict[str, None] = {}
        self._reasoning: dict[str, None] = {}
        self._tools_open: dict[str, str] = {}
        self._tools_ended: dict[str, None] = dict.fromkeys(known_tool_calls)
        self._tool_names: dict[str, str] = {}
        self._results: dict[str, None] = {}
        self._approvals: dict[str, None] = dict.fromkeys(known_approvals)
        self._discarded: dict[str, None] = {}
        self._steps: dict[str, None] = {}
        self._kind: dict[str, str] = {}
        self._alias: dict[tuple[str, str], str] = {}

    # -- public ------------------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once a terminal event has passed."""
        return self._done

    @property
    def open_blocks(self) -> list[tuple[str, str]]:
        """The ``(kind, id)`` of every block still open, in the order they will be closed."""
        return (
            [("text", i) for i in self._text]
            + [("reasoning", i) for i in self._reasoning]
            + [("tool-call", i) for i in self._tools_open]
            + [("step", n) for n in self._steps]
        )

    def tool_name(self, tool_call_id: str) -> str | None:
        """The name of a tool call seen in this run, if known."""
        return self._tool_names.get(tool_call_id)

    def streaming(self, kind: Literal["text", "reasoning", "tool-call"]) -> Mapping[str, object]:
        """The ids of the open blocks of ``kind`` (tool calls: those whose input is still streaming).

        A live, read-only view: a non-empty delta for one of these ids passes :meth:`feed` unchanged and
        changes nothing (an empty one is dropped), which lets a mapper take a fast path for it without
        feeding it.
        """
        if kind == "text":
            return self._text
        if kind == "reasoning":
            return self._reasoning
        if kind == "tool-call":
            return self._tools_open
        raise ValueError(f"no streaming blocks of kind {kind!r}")

    def feed(self, event: ChatEvent) -> list[ChatEvent]:
        """Check one event; return what to pass on in its place."""
        if self._started and not self._done:
            handler = _HANDLERS.get(event.type)
            return [event] if handler is None else handler(self, event)
        if self._done:
            return self._reject(event, "event after the run ended")
        if event.type != "run-started":
            if self.strict:
                raise ProtocolError(event, "the run has not started (RunStarted must come first)")
            self._started = True
            logger.info("synthesized RunStarted before %s", type(event).__name__)
            return [RunStarted(), *self.feed(event)]
        return self._run_started(event)

    def close(self) -> list[ChatEvent]:
        """The core's stream ended: return what must follow to end the run properly."""
        if self._done:
            return []
        if self.strict:
            raise ProtocolError(None, "the stream ended without RunFinished, RunError or RunAborted")
        logger.info("synthesized RunFinished at the end of the stream")
        out: list[ChatEvent] = []
        if not self._started:
            self._started = True
            out.append(RunStarted())
        out += self._close_all()
        out.append(RunFinished())
        self._done = True
        return out

    # -- helpers -----------------------------------------------------------------------------------

    def _reject(self, event: ChatEvent, reason: str) -> list[ChatEvent]:
        if self.strict:
            raise ProtocolError(event, reason)
        logger.warning("dropped %s(%s): %s", type(event).__name__, _short(event), reason)
        return []

    def _claim(self, event: ChatEvent, kind: str, block_id: str) -> str | None:
        """Register ``block_id`` for ``kind``; return the id to use, or None when it cannot be used."""
        owner = self._kind.get(block_id)
        if owner is None:
            self._kind[block_id] = kind
            return block_id
        if owner == kind:
            return self._alias.get((kind, block_id), block_id)
        if self.strict:
            raise ProtocolError(event, f"id {block_id!r} is already used by a {owner} block")
        alias = self._alias.get((kind, block_id))
        if alias is None:
            alias = f"{block_id}-{kind}"
            while alias in self._kind:
                alias += "_"
            self._kind[alias] = kind
            self._alias[(kind, block_id)] = alias
            logger.info("renamed %s id %r to %r: the id is used by a %s block", kind, block_id, alias, owner)
        return alias

    def _resolve(self, kind: str, block_id: str) -> str:
        if self._alias:
            return self._alias.get((kind, block_id), block_id)
        return block_id

    def _close_all(self) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        out += [TextEnd(id=i) for i in self._text]
        out += [ReasoningEnd(id=i) for i in self._reasoning]
        for i in self._tools_open:
            out.append(ToolCallEnd(id=i))
            self._tools_ended[i] = None
        out += [StepFinished(name=n) for n in self._steps]
        self._text.clear()
        self._reasoning.clear()
        self._tools_open.clear()
        self._steps.clear()
        return out

    # -- lifecycle ---------------------------------------------------------------------------------

    def _run_started(self, event: ChatEvent) -> list[ChatEvent]:
        if self._started:
            return self._reject(event, "the run has already started")
        self._started = True
        return [event]

    def _run_finished(self, event: ChatEvent) -> list[ChatEvent]:
        self._done = True
        if self._text or self._reasoning or self._tools_open or self._steps:
            if self.strict:
                self._done = False
                opened = ", ".join(f"{k} {i!r}" for k, i in self.open_blocks)
                raise ProtocolError(event, f"the run finished with blocks still open: {opened}")
            logger.info("closed open blocks before RunFinished: %s", self.open_blocks)
            return [*self._close_all(), event]
        return [event]

    def _run_stop(self, event: ChatEvent) -> list[ChatEvent]:
        self._done = True
        if self._text or self._reasoning or self._tools_open or self._steps:
            return [*self._close_all(), event]
        return [event]

    def _step_started(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, StepStarted)
        if event.name in self._steps:
            return self._reject(event, f"step {event.name!r} is already open")
        self._steps[event.name] = None
        return [event]

    def _step_finished(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, StepFinished)
        if event.name not in self._steps:
            return self._reject(event, f"step {event.name!r} is not open")
        del self._steps[event.name]
        return [event]

    def _step_reset(self, event: ChatEvent) -> list[ChatEvent]:
        if self._text or self._reasoning or self._tools_open:
            logger.debug("StepReset discards open blocks: %s", self.open_blocks)
        for i in self._tools_open:
            self._tools_ended[i] = None
            self._discarded[i] = None
        self._text.clear()
        self._reasoning.clear()
        self._tools_open.clear()
        return [event]

    # -- text and reasoning ------------------------------------------------------------------------

    def _text_start(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, TextStart)
        bid = self._claim(event, "text", event.id)
        if bid is None or bid in self._text:
            return self._reject(event, f"text id {event.id!r} is reused while open")
        self._text[bid] = None
        return [event if bid == event.id else event.model_copy(update={"id": bid})]

    def _text_delta(self, event: TextDelta) -> list[ChatEvent]:
        bid = event.id
        if bid in self._text and not self._alias:
            return [event] if event.delta else []  # an empty delta sends nothing
        bid = self._resolve("text", bid)
        if bid in self._text:
            if not event.delta:
                return []
            return [event if bid == event.id else TextDelta(id=bid, delta=event.delta)]
        if self.strict:
            raise ProtocolError(event, f"delta for an unopened text id {event.id!r}")
        start = self._text_start(TextStart(id=event.id))
        bid = self._resolve("text", event.id)
        logger.info("opened text block %r implied by a delta", bid)
        if not event.delta:
            return start  # the implied block opens; its empty delta sends nothing
        return [*start, event if bid == event.id else TextDelta(id=bid, delta=event.delta)]

    def _text_end(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, TextEnd)
        bid = self._resolve("text", event.id)
        if bid not in self._text:
            return self._reject(event, f"end of an unopened text id {event.id!r}")
        del self._text[bid]
        return [event if bid == event.id else event.model_copy(update={"id": bid})]

    def _reasoning_start(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ReasoningStart)
        bid = self._claim(event, "reasoning", event.id)
        if bid is None or bid in self._reasoning:
            return self._reject(event, f"reasoning id {event.id!r} is reused while open")
        self._reasoning[bid] = None
        return [event if bid == event.id else event.model_copy(update={"id": bid})]

    def _reasoning_delta(self, event: ReasoningDelta) -> list[ChatEvent]:
        bid = event.id
        if bid in self._reasoning and not self._alias:
            return [event] if event.delta else []  # an empty delta sends nothing
        bid = self._resolve("reasoning", bid)
        if bid in self._reasoning:
            if not event.delta:
                return []
            return [event if bid == event.id else ReasoningDelta(id=bid, delta=event.delta)]
        if self.strict:
            raise ProtocolError(event, f"delta for an unopened reasoning id {event.id!r}")
        start = self._reasoning_start(ReasoningStart(id=event.id))
        bid = self._resolve("reasoning", event.id)
        logger.info("opened reasoning block %r implied by a delta", bid)
        if not event.delta:
            return start  # the implied block opens; its empty delta sends nothing
        return [*start, event if bid == event.id else ReasoningDelta(id=bid, delta=event.delta)]

    def _reasoning_end(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ReasoningEnd)
        bid = self._resolve("reasoning", event.id)
        if bid not in self._reasoning:
            return self._reject(event, f"end of an unopened reasoning id {event.id!r}")
        del self._reasoning[bid]
        return [event if bid == event.id else event.model_copy(update={"id": bid})]

    # -- tools -------------------------------------------------------------------------------------

    def _tool_start(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ToolCallStart)
        if event.id in self._tools_open or event.id in self._tools_ended:
            return self._reject(event, f"tool call id {event.id!r} is already used")
        bid = self._claim(event, "tool-call", event.id)
        if bid is None or bid in self._tools_open or bid in self._tools_ended:
            return self._reject(event, f"tool call id {event.id!r} is already used")
        self._tools_open[bid] = event.name
        self._tool_names[bid] = event.name
        if bid != event.id:
            self._alias[("tool-call", event.id)] = bid
            return [event.model_copy(update={"id": bid})]
        return [event]

    def _tool_delta(self, event: ToolCallArgsDelta) -> list[ChatEvent]:
        bid = event.id
        if bid in self._tools_open and not self._alias:
            return [event] if event.delta else []  # an empty delta sends nothing
        bid = self._resolve("tool-call", bid)
        if bid in self._tools_open:
            if not event.delta:
                return []
            return [event if bid == event.id else ToolCallArgsDelta(id=bid, delta=event.delta)]
        return self._reject(event, f"argument delta for an unopened tool call {event.id!r}")

    def _tool_end(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ToolCallEnd)
        bid = self._resolve("tool-call", event.id)
        if bid in self._tools_open:
            del self._tools_open[bid]
            self._tools_ended[bid] = None
            return [event if bid == event.id else event.model_copy(update={"id": bid})]
        if bid in self._tools_ended:
            return self._reject(event, f"tool call {event.id!r} has already ended")
        if event.name is None:
            return self._reject(event, f"end of an unopened tool call {event.id!r} (give name= to report a whole call)")
        bid2 = self._claim(event, "tool-call", event.id)
        if bid2 is None:
            return []
        self._tools_ended[bid2] = None
        self._tool_names[bid2] = event.name
        if bid2 != event.id:
            self._alias[("tool-call", event.id)] = bid2
            return [event.model_copy(update={"id": bid2})]
        return [event]

    def _tool_result(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ToolResult)
        bid = self._resolve("tool-call", event.id)
        out: list[ChatEvent] = []
        if bid in self._tools_open:
            if self.strict:
                raise ProtocolError(event, f"result for tool call {event.id!r} whose input is still open")
            logger.info("closed tool call %r before its result", bid)
            del self._tools_open[bid]
            self._tools_ended[bid] = None
            out.append(ToolCallEnd(id=bid))
        elif bid not in self._tools_ended:
            return self._reject(event, f"result for an unknown tool call {event.id!r}")
        elif bid in self._discarded:
            return self._reject(event, f"result for tool call {event.id!r}, discarded by StepReset")
        if bid in self._results:
            return self._reject(event, f"tool call {event.id!r} already has its final result")
        if not event.preliminary:
            self._results[bid] = None
        out.append(event if bid == event.id else event.model_copy(update={"id": bid}))
        return out

    def _approval_request(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ToolApprovalRequest)
        bid = self._resolve("tool-call", event.tool_call_id)
        out: list[ChatEvent] = []
        if bid in self._tools_open:
            if self.strict:
                raise ProtocolError(event, f"approval for tool call {event.tool_call_id!r} whose input is open")
            del self._tools_open[bid]
            self._tools_ended[bid] = None
            out.append(ToolCallEnd(id=bid))
        elif bid not in self._tools_ended:
            return self._reject(event, f"approval request for an unknown tool call {event.tool_call_id!r}")
        elif bid in self._discarded:
            return self._reject(event, f"approval request for tool call {event.tool_call_id!r}, discarded by StepReset")
        if event.id in self._approvals:
            return self._reject(event, f"approval id {event.id!r} is already used")
        self._approvals[event.id] = None
        out.append(event if bid == event.tool_call_id else event.model_copy(update={"tool_call_id": bid}))
        return out

    def _approval_response(self, event: ChatEvent) -> list[ChatEvent]:
        assert isinstance(event, ToolApprovalResponse)
        if event.id not in self._approvals:
            return self._reject(event, f"response to an unknown approval request {event.id!r}")
        return [event]


_HANDLERS: dict[str, Callable[[SequenceChecker, Any], list[ChatEvent]]] = {
    "run-started": SequenceChecker._run_started,
    "run-finished": SequenceChecker._run_finished,
    "run-error": SequenceChecker._run_stop,
    "run-aborted": SequenceChecker._run_stop,
    "step-started": SequenceChecker._step_started,
    "step-finished": SequenceChecker._step_finished,
    "step-reset": SequenceChecker._step_reset,
    "text-start": SequenceChecker._text_start,
    "text-delta": SequenceChecker._text_delta,
    "text-end": SequenceChecker._text_end,
    "reasoning-start": SequenceChecker._reasoning_start,
    "reasoning-delta": SequenceChecker._reasoning_delta,
    "reasoning-end": SequenceChecker._reasoning_end,
    "tool-call-start": SequenceChecker._tool_start,
    "tool-call-args-delta": SequenceChecker._tool_delta,
    "tool-call-end": SequenceChecker._tool_end,
    "tool-result": SequenceChecker._tool_result,
    "tool-approval-request": SequenceChecker._approval_request,
    "tool-approval-response": SequenceChecker._approval_response,
}
"""The checker's handler for each event type (one table for all checkers)."""


async def check(
    events: AsyncIterable[ChatEvent] | Iterable[ChatEvent],
    *,
    strict: bool = False,
    known_tool_calls: Iterable[str] = (),
) -> AsyncIterator[ChatEvent]:
    """Pass a stream of events through a :class:`SequenceChecker`, yielding a well-formed run."""
    checker = SequenceChecker(strict=strict, known_tool_calls=known_tool_calls)
    if isinstance(events, AsyncIterable):
        async for event in events:
            for out in checker.feed(event):
                yield out
    else:
        for event in events:
            for out in checker.feed(event):
                yield out
    for out in checker.close():
        yield out
