"""ChatEvents to the dialect's named events: a pure, synchronous state machine for one run.

:class:`DSHMapper` implements :class:`streamkit.frames.Mapper` with ``named_events``: every frame is
``{"event": name, "data": payload}``, written by the shared SSE writer as ``event: <name>`` and ``data: <json>``
lines. Every event first goes through a :class:`~streamkit.events.SequenceChecker` (repairing a sloppy core, or
raising in strict mode); the mapper also keeps the conversation the ``done`` frame carries.

What the client receives for each ChatEvent:

==========================  ==========================================================================
ChatEvent                   dialect event
==========================  ==========================================================================
RunStarted                  ``meta`` ``{agentId, sessionId, runId, messageId?, model?, timestamp,
                            metadata?}``; always the first frame
TextDelta                   ``chunk`` ``{id, content}`` (empty deltas send nothing)
ReasoningDelta              ``reasoning`` ``{id, content}``: the model's thinking, under its own name so
                            that ``chunk`` is the answer alone (a console that does not listen for it
                            shows no thinking); ``reasoning`` of the assistant message in ``done.messages``
ToolCallEnd                 ``step_break`` ``{toolName, callId, args, status: "started"}``; an invalid call
                            (``error``) goes straight to ``status: "error"`` with ``error``
ToolResult                  ``step_break`` with ``status: "done"`` and ``result``, or ``"error"`` and
                            ``error`` (a denial: ``denied: true``); preliminary results send nothing
ToolApprovalRequest         ``step_break`` (status ``started``) with ``approval: {id, reason?}``; listed in
                            ``done.interrupts`` until answered
ToolApprovalResponse        ``step_break`` (status ``started``) with ``approval: {id, approved, reason?}``
RunFinished                 ``done`` ``{finishReason, messages, usage?, result?, interrupts?, metadata?,
                            state?, sources?, data?}``
RunAborted                  ``done`` with ``finishReason: "aborted"`` (and ``reason``)
RunError                    ``error`` ``{message, code?}`` (word for word)
StateSnapshot/Update/Delta  no frame: the final state goes in ``done.state``
MessagesSnapshot            no frame: it replaces the conversation ``done.messages`` starts from
Source / Data               no frame: ``done.sources`` / ``done.data`` (transient data is dropped)
File                        no frame: ``files`` of the assistant message in ``done.messages``
MessageMetadata             no frame: merged into ``done.metadata``
UserMessage                 no frame: a ``user`` message in ``done.messages``
TextStart/End, Reasoning-   no frame (blocks have no wire form; bubbles split only at ``step_break``)
Start/End, ToolCallStart,
ToolCallArgsDelta, Step*,
ProviderPart, Custom, Raw
==========================  ==========================================================================

Each ``step_break`` closes the page's current bubble; the first one for a ``callId`` inserts its tool card,
later ones update it. ``done.messages`` is the whole conversation: the history the run was given, the user's
message, then the run's messages (``assistant`` messages with ``content``, ``reasoning``, ``toolCalls`` and
``files``; a ``tool`` message per result with ``callId``, ``toolName``, ``status``, ``content``, ``error``,
``denied``). An assistant message ends where a tool result follows it, as in a ReAct loop.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from ..events import (
    ChatEvent,
    Data,
    File,
    Message,
    MessageMetadata,
    MessagesSnapshot,
    ProtocolError,
    ReasoningDelta,
    ReasoningEnd,
    RunAborted,
    RunError,
    RunFinished,
    RunStarted,
    SequenceChecker,
    Source,
    StateDelta,
    StateSnapshot,
    StateUpdate,
    StepReset,
    TextDelta,
    TextEnd,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UserMessage,
)
from ..events.logs import run_logger
from ..frames import MapperBase
from ..patch import PatchError, apply_patch, check_patch
from ..stringify import dumps, js_value, to_json
from .messages import to_dsh_messages

__all__ = ["CHUNK", "DONE", "ERROR", "EVENTS", "META", "REASONING", "STEP_BREAK", "DSHMapper"]

logger = run_logger("streamkit.dsh")

META = "meta"
CHUNK = "chunk"
REASONING = "reasoning"
STEP_BREAK = "step_break"
DONE = "done"
ERROR = "error"
EVENTS = (META, CHUNK, REASONING, STEP_BREAK, DONE, ERROR)
"""The dialect's SSE event names."""

Frame = dict[str, Any]

_CHUNK_LEAD = b"event: " + CHUNK.encode() + b'\ndata: {"id":'
_REASONING_LEAD = b"event: " + REASONING.encode() + b'\ndata: {"id":'
_CONTENT = b',"content":'


def _named(event: str, data: Frame) -> Frame:
    return {"event": event, "data": data}


def _arguments(text: str, encoding: str | None) -> Any:
    """A call's streamed argument text as its args: JSON parsed (``{}`` when empty), kept as text otherwise."""
    if encoding == "text":
        return text
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


class _Turn:
    """An assistant message being written (text and reasoning kept as pieces, joined once at the end)."""

    __slots__ = ("calls", "content", "files", "id", "reasoning")

    def __init__(self, mid: str) -> None:
        self.id = mid
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[Frame] = []
        self.files: list[Frame] = []

    def message(self) -> Frame:
        out: Frame = {"id": self.id, "role": "assistant", "content": "".join(self.content)}
        if self.reasoning:
            out["reasoning"] = "".join(self.reasoning)
        if self.calls:
            out["toolCalls"] = [dict(c) for c in self.calls]
        if self.files:
            out["files"] = list(self.files)
        return out


class DSHMapper(MapperBase):
    """Maps one run's ``ChatEvent`` stream to the dialect's named events (a :class:`streamkit.frames.Mapper`).

    ``agent_id`` names the agent (and, unless ``thread_id`` says otherwise, the session); ``run_id`` the run.
    ``history`` is the conversation before the run in the dialect's message form (see
    :func:`~streamkit.dsh.messages.to_dsh_messages`), the user's new message included: ``done.messages``
    continues it. ``state`` is the state the run starts from, ``model`` what ``meta`` announces (else a
    string ``model`` of ``RunStarted.metadata``), ``clock`` the time source of ``meta.timestamp`` (seconds).
    ``known_tool_calls`` are calls of the history whose results may arrive in this run. ``strict`` raises
    :class:`~streamkit.events.ProtocolError` on a malformed sequence instead of repairing it.
    """

    named_events = True
    """Frames are ``{"event", "data"}``: the SSE writer writes ``event:`` lines (see
    :class:`~streamkit.frames.Mapper`)."""

    __slots__ = (
        "_agent_id",
        "_approvals",
        "_args",
        "_calls",
        "_checker",
        "_clock",
        "_count",
        "_data",
        "_done",
        "_first_id",
        "_messages",
        "_metadata",
        "_model",
        "_reasoning_open",
        "_reasoning_prefix",
        "_results",
        "_run_id",
        "_sources",
        "_started",
        "_state",
        "_state_set",
        "_text_open",
        "_text_prefix",
        "_thread_id",
        "_turn",
        "delta_pieces",
        "delta_prefixes",
        "strict",
    )

    def __init__(
        self,
        *,
        agent_id: str,
        run_id: str,
        thread_id: str | None = None,
        history: Iterable[Mapping[str, Any]] = (),
        state: Any = None,
        model: str | None = None,
        clock: Callable[[], float] = time.time,
        known_tool_calls: Iterable[str] = (),
        strict: bool = False,
    ) -> None:
        self.strict = strict
        self._agent_id = agent_id
        self._run_id = run_id
        self._thread_id = thread_id if thread_id is not None else agent_id
        self._model = model
        self._clock = clock
        # What the conversation holds is JavaScript-exact from the start (see js_value), so done writes it as is.
        self._messages: list[Frame | _Turn] = [js_value(dict(m)) for m in history]
        self._calls: dict[str, Frame] = {}  # callId -> {"toolName", "args", "status"} as last sent
        for m in self._messages:
            assert isinstance(m, dict)
            for call in m.get("toolCalls") or ():
                self._calls[call["callId"]] = {"toolName": call.get("toolName", ""), "args": call.get("args")}
        known = list(known_tool_calls)
        self._checker = SequenceChecker(strict=strict, known_tool_calls=known)
        self._args: dict[str, tuple[str | None, list[str]]] = {}  # streaming input: encoding, text pieces
        self._results: dict[str, Frame] = {}  # callId -> its tool message
        self._approvals: dict[str, Frame] = {}  # approval id -> the pending interrupt
        self._turn: _Turn | None = None
        # The hot path (streamkit.frames.encode_frames): a delta of a block open in the checker, while an assistant
        # message is being written, is written from its prefix and its text kept in that message's pieces,
        # without a feed. Whenever the message being written changes, the blocks leave the hot path; the next
        # delta of each, fed, puts it back with the new message's pieces.
        self._text_open = self._checker.streaming("text")
        self._reasoning_open = self._checker.streaming("reasoning")
        self._text_prefix: dict[str, bytes] = {}
        self._reasoning_prefix: dict[str, bytes] = {}
        self.delta_prefixes: dict[str, dict[str, bytes]] = {
            "text-delta": self._text_prefix,
            "reasoning-delta": self._reasoning_prefix,
        }
        self.delta_pieces: dict[str, list[str]] = {}
        self._first_id: str | None = None
        self._count = 0
        self._state = to_json(state)
        self._state_set = False
        self._sources: dict[str, Frame] = {}
        self._data: list[Frame] = []
        self._metadata: Any = None
        self._started = False
        self._done = False

    # -- the Mapper protocol -----------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once the terminal frame (``done`` or ``error``) has been returned."""
        return self._done

    @property
    def messages(self) -> list[Frame]:
        """The conversation as ``done.messages`` carries it (so far)."""
        return [m.message() if isinstance(m, _Turn) else dict(m) for m in self._messages]

    def feed(self, event: ChatEvent) -> list[Frame]:
        """The frames for one ChatEvent (after the sequence checker)."""
        events = self._checker.feed(event)
        if len(events) == 1:
            ev = events[0]
            if ev.type == "text-delta":  # the hot path
                assert isinstance(ev, TextDelta)
                return self._text_delta(ev)
            handler = _HANDLERS.get(ev.type)
            return [] if handler is None else handler(self, ev)
        out: list[Frame] = []
        for ev in events:
            handler = _HANDLERS.get(ev.type)
            if handler is not None:
                out += handler(self, ev)
        return out

    def close(self) -> list[Frame]:
        """The core's stream ended: end the run (nothing if it already ended)."""
        if self._done:
            return []
        out: list[Frame] = []
        for ev in self._checker.close():
            handler = _HANDLERS.get(ev.type)
            if handler is not None:
                out += handler(self, ev)
        return out

    def fail(self, message: str, code: str | None = None) -> list[Frame]:
        """End the run with an ``error`` frame (after ``meta`` if nothing was sent yet); nothing if it ended."""
        if self._done:
            return []
        self._done = True
        self._cold()
        out: list[Frame] = []
        if not self._started:
            out.append(self._meta(None))
        out.append(self._error(message, code))
        return out

    # -- helpers -----------------------------------------------------------------------------------

    def _meta(self, event: RunStarted | None) -> Frame:
        self._started = True
        data: Frame = {"agentId": self._agent_id, "sessionId": self._thread_id, "runId": self._run_id}
        if event is not None and event.message_id is not None:
            data["messageId"] = event.message_id
        model = self._model
        if model is None and event is not None and event.metadata is not None:
            named = event.metadata.get("model")
            model = named if isinstance(named, str) else None
        if model is not None:
            data["model"] = model
        data["timestamp"] = int(self._clock() * 1000)
        if event is not None and event.metadata is not None:
            data["metadata"] = js_value(event.metadata)
        return _named(META, data)

    @staticmethod
    def _error(message: str, code: str | None) -> Frame:
        data: Frame = {"message": message}
        if code is not None:
            data["code"] = code
        return _named(ERROR, data)

    def _cold(self) -> None:
        """Take every block off the hot path (the message being written changes, or the run ends)."""
        self._text_prefix.clear()
        self._reasoning_prefix.clear()
        self.delta_pieces.clear()

    def _new_turn(self) -> None:
        """What the run writes next is a new assistant message."""
        self._turn = None
        self._cold()

    def _current(self) -> _Turn:
        """The assistant message being written; a new one after a tool result or a user message."""
        if self._turn is None:
            self._count += 1
            mid, self._first_id = self._first_id or f"{self._run_id}-{self._count}", None
            self._turn = _Turn(mid)
            self._messages.append(self._turn)
        return self._turn

    def _break(self, call_id: str, status: str, **extra: Any) -> list[Frame]:
        call = self._calls.get(call_id)
        if call is None:  # a call of an earlier request the history did not name
            call = self._calls[call_id] = {"toolName": self._checker.tool_name(call_id) or "", "args": None}
        data: Frame = {"toolName": call["toolName"], "callId": call_id, "args": call["args"], "status": status}
        approval = extra.pop("approval", None)
        if approval is None:  # the status changes: what it came with is kept for later frames of the call
            call["status"] = status
            call["outcome"] = extra
        data.update(call.get("outcome") or {})
        if approval is not None:
            data["approval"] = approval
        return [_named(STEP_BREAK, data)]

    # -- lifecycle ---------------------------------------------------------------------------------

    def _run_started(self, event: RunStarted) -> list[Frame]:
        if event.thread_id is not None:
            self._thread_id = event.thread_id
        if event.run_id is not None:
            self._run_id = event.run_id
        if event.message_id is not None:
            self._first_id = event.message_id  # the run's first assistant message gets this id
        return [self._meta(event)]

    def _end(self, frame: Frame) -> list[Frame]:
        dumps(frame["data"])  # a payload that cannot be sent must fail here, before the run counts as ended
        self._done = True
        self._cold()
        return [frame]

    def _done_frame(self, finish_reason: str) -> Frame:
        data: Frame = {"finishReason": finish_reason, "messages": self.messages}
        if self._approvals:
            data["interrupts"] = list(self._approvals.values())
        if self._metadata is not None:
            data["metadata"] = js_value(self._metadata)
        if self._state_set:
            data["state"] = js_value(self._state)
        if self._sources:
            data["sources"] = list(self._sources.values())
        if self._data:
            data["data"] = self._data
        return _named(DONE, data)

    def _run_finished(self, event: RunFinished) -> list[Frame]:
        frame = self._done_frame(event.finish_reason)
        data = frame["data"]
        if event.interrupts:
            interrupts = [i.model_dump(mode="json", by_alias=False, exclude_none=True) for i in event.interrupts]
            camel = [{to_camel(k): v for k, v in i.items()} for i in interrupts]
            data["interrupts"] = js_value(camel) + data.get("interrupts", [])
        if event.usage is not None:
            usage = {to_camel(k): v for k, v in event.usage.model_dump(exclude_none=True).items()}
            if usage:
                data["usage"] = usage
        if event.result is not None:
            data["result"] = js_value(event.result)
        if event.metadata:
            before = data.get("metadata")
            data["metadata"] = {**(before if isinstance(before, dict) else {}), **js_value(event.metadata)}
        return self._end(frame)

    def _run_error(self, event: RunError) -> list[Frame]:
        return self._end(self._error(event.message, event.code))

    def _run_aborted(self, event: RunAborted) -> list[Frame]:
        frame = self._done_frame("aborted")
        if event.reason is not None:
            frame["data"]["reason"] = event.reason
        return self._end(frame)

    # -- text and reasoning ------------------------------------------------------------------------

    def _text_delta(self, event: TextDelta) -> list[Frame]:
        delta = event.delta
        if not delta:
            return []
        pieces = self._current().content
        pieces.append(delta)
        bid = event.id
        if bid in self._text_open:  # on the hot path from here on
            self._text_prefix[bid] = _CHUNK_LEAD + dumps(bid) + _CONTENT
            self.delta_pieces[bid] = pieces
        return [{"event": CHUNK, "data": {"id": bid, "content": delta}}]

    def _reasoning_delta(self, event: ReasoningDelta) -> list[Frame]:
        delta = event.delta
        if not delta:
            return []
        pieces = self._current().reasoning
        pieces.append(delta)
        bid = event.id
        if bid in self._reasoning_open:
            self._reasoning_prefix[bid] = _REASONING_LEAD + dumps(bid) + _CONTENT
            self.delta_pieces[bid] = pieces
        return [_named(REASONING, {"id": bid, "content": delta})]

    def _text_end(self, event: TextEnd) -> list[Frame]:
        self._text_prefix.pop(event.id, None)
        self.delta_pieces.pop(event.id, None)
        return []

    def _reasoning_end(self, event: ReasoningEnd) -> list[Frame]:
        self._reasoning_prefix.pop(event.id, None)
        self.delta_pieces.pop(event.id, None)
        return []

    def _step_reset(self, event: StepReset) -> list[Frame]:
        self._cold()  # the checker forgot the open blocks
        return []

    # -- tools -------------------------------------------------------------------------------------

    def _tool_start(self, event: ToolCallStart) -> list[Frame]:
        self._calls[event.id] = {"toolName": event.name, "args": None}
        self._args[event.id] = (event.input_encoding, [])
        return []

    def _tool_delta(self, event: ToolCallArgsDelta) -> list[Frame]:
        self._args[event.id][1].append(event.delta)
        return []

    def _tool_end(self, event: ToolCallEnd) -> list[Frame]:
        encoding, pieces = self._args.pop(event.id, (None, []))
        call = self._calls.get(event.id)
        if call is None:  # a whole call reported at once
            call = self._calls[event.id] = {"toolName": event.name or "", "args": None}
        if event.input is not None:
            args = event.input
        elif event.error is not None and pieces:
            args = "".join(pieces)  # an invalid call keeps the model's text as it was
        else:
            args = _arguments("".join(pieces), encoding)
        call["args"] = js_value(to_json(args))
        self._current().calls.append({"callId": event.id, "toolName": call["toolName"], "args": call["args"]})
        if event.error is None:
            return self._break(event.id, "started")
        self._tool_message(event.id, "error", event.error, error=event.error)
        return self._break(event.id, "error", error=event.error)

    def _tool_message(self, call_id: str, status: str, content: Any, **extra: Any) -> None:
        message = self._results.get(call_id)
        if message is None:
            self._count += 1
            message = {"id": f"{self._run_id}-{self._count}", "role": "tool", "callId": call_id}
            self._results[call_id] = message
            self._messages.append(message)
        for key in ("error", "denied"):
            message.pop(key, None)
        message.update(toolName=self._calls[call_id]["toolName"], status=status, content=content, **extra)
        self._new_turn()

    def _tool_result(self, event: ToolResult) -> list[Frame]:
        if event.preliminary:
            return []
        if event.id not in self._calls:
            self._calls[event.id] = {"toolName": self._checker.tool_name(event.id) or "", "args": None}
        if event.denied:
            text = event.error or "The tool call was denied."
            self._tool_message(event.id, "error", text, error=text, denied=True)
            return self._break(event.id, "error", error=text, denied=True)
        if event.error is not None:
            self._tool_message(event.id, "error", event.error, error=event.error)
            return self._break(event.id, "error", error=event.error)
        result = js_value(to_json(event.output))
        self._tool_message(event.id, "done", result)
        return self._break(event.id, "done", result=result)

    def _approval_request(self, event: ToolApprovalRequest) -> list[Frame]:
        approval: Frame = {"id": event.id}
        if event.reason is not None:
            approval["reason"] = event.reason
        interrupt: Frame = {"id": event.id, "reason": "tool_approval", "toolCallId": event.tool_call_id}
        if event.reason is not None:
            interrupt["message"] = event.reason
        self._approvals[event.id] = interrupt
        status = self._calls.get(event.tool_call_id, {}).get("status", "started")
        return self._break(event.tool_call_id, status, approval=approval)

    def _approval_response(self, event: ToolApprovalResponse) -> list[Frame]:
        interrupt = self._approvals.pop(event.id, None)
        if interrupt is None:  # an approval of an earlier request: no call to show it on
            return []
        approval: Frame = {"id": event.id, "approved": event.approved}
        if event.reason is not None:
            approval["reason"] = event.reason
        call_id = interrupt["toolCallId"]
        status = self._calls.get(call_id, {}).get("status", "started")
        return self._break(call_id, status, approval=approval)

    # -- what goes into done -----------------------------------------------------------------------

    def _state_snapshot(self, event: StateSnapshot | StateUpdate) -> list[Frame]:
        self._state = to_json(event.state)
        self._state_set = True
        return []

    def _state_delta(self, event: StateDelta) -> list[Frame]:
        try:
            self._state = apply_patch(self._state, check_patch(to_json(event.patch)))
        except PatchError as exc:
            if self.strict:
                raise ProtocolError(event, f"the patch does not apply: {exc}") from None
            logger.warning("dropped StateDelta: the patch does not apply: %s", exc)
            return []
        self._state_set = True
        return []

    def _messages_snapshot(self, event: MessagesSnapshot) -> list[Frame]:
        try:
            neutral = [m if isinstance(m, Message) else Message.model_validate(m) for m in event.messages]
            messages = [js_value(m) for m in to_dsh_messages(neutral)]
        except (ValidationError, ValueError) as exc:
            if self.strict:
                raise ProtocolError(event, f"the messages are not valid: {exc}") from None
            logger.warning("dropped MessagesSnapshot: the messages are not valid: %s", exc)
            return []
        self._messages = list(messages)
        self._results = {}
        self._new_turn()
        for m in messages:
            for call in m.get("toolCalls") or ():
                self._calls.setdefault(call["callId"], {"toolName": call["toolName"], "args": call.get("args")})
            if m.get("role") == "tool":
                self._results[m["callId"]] = m
        return []

    def _source(self, event: Source) -> list[Frame]:
        value: Frame = {"id": event.id}
        for key, field in (("url", "url"), ("title", "title"), ("mediaType", "media_type"), ("filename", "filename")):
            v = getattr(event, field)
            if v is not None:
                value[key] = v
        self._sources[event.id] = value
        return []

    def _data_event(self, event: Data) -> list[Frame]:
        if event.transient:
            return []
        value: Frame = {"name": event.name, "data": js_value(to_json(event.data))}
        if event.id is not None:
            value["id"] = event.id
            for i, old in enumerate(self._data):
                if old["name"] == event.name and old.get("id") == event.id:
                    self._data[i] = value
                    return []
        self._data.append(value)
        return []

    def _file(self, event: File) -> list[Frame]:
        value: Frame = {"url": event.url, "mediaType": event.media_type}
        if event.reasoning:
            value["reasoning"] = True
        self._current().files.append(value)
        return []

    def _message_metadata(self, event: MessageMetadata) -> list[Frame]:
        value = to_json(event.metadata)
        if isinstance(value, dict) and isinstance(self._metadata, dict):
            self._metadata = {**self._metadata, **value}
        else:
            self._metadata = value
        return []

    def _user_message(self, event: UserMessage) -> list[Frame]:
        message: Frame = {"id": event.id, "role": "user", "content": event.text}
        if event.files:
            message["files"] = [
                {"url": f.url, "mediaType": f.media_type, **({"filename": f.filename} if f.filename else {})}
                for f in event.files
            ]
        self._messages.append(message)
        self._new_turn()
        return []


_HANDLERS: dict[str, Callable[[DSHMapper, Any], list[Frame]]] = {
    "run-started": DSHMapper._run_started,
    "run-finished": DSHMapper._run_finished,
    "run-error": DSHMapper._run_error,
    "run-aborted": DSHMapper._run_aborted,
    "text-delta": DSHMapper._text_delta,
    "text-end": DSHMapper._text_end,
    "reasoning-delta": DSHMapper._reasoning_delta,
    "reasoning-end": DSHMapper._reasoning_end,
    "step-reset": DSHMapper._step_reset,
    "tool-call-start": DSHMapper._tool_start,
    "tool-call-args-delta": DSHMapper._tool_delta,
    "tool-call-end": DSHMapper._tool_end,
    "tool-result": DSHMapper._tool_result,
    "tool-approval-request": DSHMapper._approval_request,
    "tool-approval-response": DSHMapper._approval_response,
    "state-snapshot": DSHMapper._state_snapshot,
    "state-update": DSHMapper._state_snapshot,
    "state-delta": DSHMapper._state_delta,
    "messages-snapshot": DSHMapper._messages_snapshot,
    "source": DSHMapper._source,
    "data": DSHMapper._data_event,
    "file": DSHMapper._file,
    "message-metadata": DSHMapper._message_metadata,
    "user-message": DSHMapper._user_message,
}
"""The mapper's handler for each (checked) event type; the others send nothing (see the module's table)."""
