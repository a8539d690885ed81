"""ChatEvents to AG-UI events: a pure, synchronous state machine for one run.

:class:`AGUIMapper` implements :class:`streamkit.frames.Mapper`. Every event first goes through a
:class:`~streamkit.events.SequenceChecker` (repairing a sloppy core, or raising in strict mode), then a dispatch
table of small handlers turns it into AG-UI event dicts: camelCase keys, optional fields omitted (never
``null``), payloads rewritten with :func:`streamkit.stringify.js_value` so the bytes match ``JSON.stringify``.

What the client receives for each ChatEvent:

==========================  ==========================================================================
ChatEvent                   AG-UI events
==========================  ==========================================================================
RunStarted                  ``RUN_STARTED`` (``protocolVersion`` "1.0")
RunFinished                 ``RUN_FINISHED`` (``result``, ``usage``; ``outcome`` interrupt when the run
                            has interrupts or pending tool approvals)
RunError                    ``RUN_ERROR`` (message word for word)
RunAborted                  ``RUN_FINISHED`` with ``outcome: {"type": "cancelled"}`` (a client that declared no
                            ``protocolVersion``, pre-1.0: no outcome, ``metadata.cancelled: true``)
StepStarted / StepFinished  ``STEP_STARTED`` / ``STEP_FINISHED``
TextStart/Delta/End         ``TEXT_MESSAGE_START`` (assistant) / ``_CONTENT`` / ``_END``
ReasoningStart/Delta/End    ``REASONING_START`` + ``REASONING_MESSAGE_START`` / ``_CONTENT`` /
                            ``REASONING_MESSAGE_END`` (+ ``REASONING_ENCRYPTED_VALUE``) + ``REASONING_END``
ToolCallStart/ArgsDelta     ``TOOL_CALL_START`` (``parentMessageId``: the current assistant message; after a
                            tool result, a new one, so history stays causal) /
                            ``TOOL_CALL_ARGS``
ToolCallEnd                 ``TOOL_CALL_END`` (a final ``input`` never streamed goes out as one
                            ``TOOL_CALL_ARGS`` first; a whole call reported at once gets its START too)
ToolResult                  ``TOOL_CALL_RESULT`` (errors and denials as content + metadata); preliminary
                            results as ``CUSTOM streamkit.preliminary_tool_result``
ToolApprovalRequest         an ``Interrupt`` (reason ``tool_approval``, ``toolCallId``, ``responseSchema``
                            :data:`~streamkit.events.hitl.APPROVAL_SCHEMA`) in the final ``RUN_FINISHED``;
                            one per call, merged with an interrupt the core gives for the same call
ToolApprovalResponse        ``CUSTOM streamkit.tool_approval_response``
StateSnapshot               ``STATE_SNAPSHOT``
StateUpdate                 ``STATE_DELTA`` against what the client holds (or a snapshot, see below)
StateDelta                  ``STATE_DELTA`` once checked against what the client holds
MessagesSnapshot            ``MESSAGES_SNAPSHOT``
Data / Source / File        ``CUSTOM streamkit.data`` / ``streamkit.source`` / ``streamkit.file``
MessageMetadata             ``CUSTOM streamkit.message_metadata``
StepReset                   open messages and tool calls ended, then ``CUSTOM streamkit.step_reset`` (the client
                            keeps what was sent; a block id used before the reset starts a new message)
UserMessage                 ``TEXT_MESSAGE_START`` (role ``user``) / ``_CONTENT`` / ``_END``; files as
                            ``CUSTOM streamkit.file`` with the message's id
ProviderPart                ``CUSTOM`` named by its kind, value the provider metadata (or null)
Custom / Raw                ``CUSTOM`` / ``RAW``
==========================  ==========================================================================

State: the mapper tracks the state the client holds (the request's ``state``, then whatever was sent) as JSON
bytes (:class:`streamkit.agui.state.ClientState`). A ``StateUpdate`` is diffed against it at close to the cost of
serializing what changed and sent as a patch, or as a snapshot when (with ``snapshot_when_larger``) the patch
would outweigh the state.
A core's ``StateDelta`` is applied to it first: one that would fail on the client is dropped (repair mode) or
raises :class:`~streamkit.events.ProtocolError` (strict mode).

Ids: text, reasoning and tool-result messages never share an id with each other, with a tool call, or with a
message already in the client's history (``reserved_ids``); a clashing id gets a ``-2``, ``-3``… suffix.

Facts AG-UI has no field for go in event ``metadata``, which the client merges into the message or tool call:
``providerMetadata`` (text, reasoning, tools), ``citations`` (``TEXT_MESSAGE_END``),
``title``/``dynamic``/``providerExecuted``/``inputEncoding``/``toolMetadata``/``error`` (tool calls),
``isError``/``denied``/``toolMetadata`` (tool results), ``finishReason``/``reason`` (``RUN_FINISHED``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..events import (
    USAGE_COUNTS,
    ChatEvent,
    Citation,
    Custom,
    Data,
    File,
    MessageMetadata,
    MessagesSnapshot,
    ProtocolError,
    ProviderPart,
    Raw,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunStarted,
    SequenceChecker,
    Source,
    StateDelta,
    StateSnapshot,
    StateUpdate,
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
    Usage,
    UserMessage,
    hitl,
)
from ..events.logs import run_logger
from ..frames import MapperBase
from ..offload import LARGE_STATE, heavy
from ..patch import PatchError, apply_patch, check_patch
from ..stringify import dumps, js_value, to_json
from .messages import json_text, to_agui_messages, tool_content
from .state import ClientState

__all__ = [
    "DATA",
    "FILE",
    "MESSAGE_METADATA",
    "PRELIMINARY_TOOL_RESULT",
    "PROTOCOL_VERSION",
    "SOURCE",
    "STEP_RESET",
    "TOOL_APPROVAL_RESPONSE",
    "AGUIMapper",
]

logger = run_logger("streamkit.agui")

PROTOCOL_VERSION = "1.0"
"""The AG-UI protocol version announced in ``RUN_STARTED``."""

DATA = "streamkit.data"
"""CUSTOM name for ``Data``: value ``{"name", "data", "id"?, "transient"?}``."""
SOURCE = "streamkit.source"
"""CUSTOM name for ``Source``: value ``{"id", "url"?, "title"?, "mediaType"?, "filename"?}``."""
FILE = "streamkit.file"
"""CUSTOM name for ``File`` and a ``UserMessage``'s files: value ``{"url", "mediaType", "reasoning"?, "filename"?,
"messageId"?}`` (``messageId``: the user message the file belongs to)."""
MESSAGE_METADATA = "streamkit.message_metadata"
"""CUSTOM name for ``MessageMetadata``: value = the metadata."""
TOOL_APPROVAL_RESPONSE = "streamkit.tool_approval_response"
"""CUSTOM name for ``ToolApprovalResponse``: value ``{"id", "approved", "reason"?}``."""
PRELIMINARY_TOOL_RESULT = "streamkit.preliminary_tool_result"
"""CUSTOM name for a preliminary ``ToolResult``: value ``{"toolCallId", "output"}``."""
STEP_RESET = "streamkit.step_reset"
"""CUSTOM name for ``StepReset``: value ``{}``. AG-UI clients keep what the step sent."""

_MAX_SAFE = 2**53 - 1
_STATE_EVENTS = frozenset({"state-snapshot", "state-update", "state-delta"})

Frame = dict[str, Any]


def _usage(usage: Usage) -> Frame:
    out: Frame = {}
    if usage.provider is not None:
        out["provider"] = usage.provider
    if usage.model is not None:
        out["model"] = usage.model
    for name, key in USAGE_COUNTS:
        value = getattr(usage, name)
        if value is not None and value <= _MAX_SAFE:
            out[key] = value
    return out


def _source_value(source: Source) -> Frame:
    """A source as the ``streamkit.source`` value: ``{"id", "url"?, "title"?, "mediaType"?, "filename"?}``."""
    value: Frame = {"id": source.id}
    if source.url is not None:
        value["url"] = source.url
    if source.title is not None:
        value["title"] = source.title
    if source.media_type is not None:
        value["mediaType"] = source.media_type
    if source.filename is not None:
        value["filename"] = source.filename
    return value


def _citation(citation: Citation) -> Frame:
    out: Frame = {"source": _source_value(citation.source)}
    if citation.start_index is not None:
        out["startIndex"] = citation.start_index
    if citation.end_index is not None:
        out["endIndex"] = citation.end_index
    if citation.cited_text is not None:
        out["citedText"] = citation.cited_text
    return out


def _meta(**fields: Any) -> dict[str, Any] | None:
    """Event metadata with the fields that have a value (None, False left out), or None when there are none."""
    kept = {k: v for k, v in fields.items() if v is not None and v is not False}
    return js_value(kept) if kept else None


class AGUIMapper(MapperBase):
    """Maps one run's ``ChatEvent`` stream to AG-UI event dicts (implements :class:`streamkit.frames.Mapper`).

    ``thread_id``/``run_id`` are the request's (a ``RunStarted`` that names its own wins); ``state`` is the
    state the client holds (the request's ``state``). ``known_tool_calls`` are tool calls of earlier runs whose
    results may arrive in this one, ``known_approvals`` the interrupt ids the request resumes, ``reserved_ids``
    the ids of the messages already in the client's history. ``strict`` raises
    :class:`~streamkit.events.ProtocolError` on a malformed sequence or a patch that would not apply, instead of
    repairing. ``snapshot_when_larger`` sends a ``STATE_SNAPSHOT`` instead of a ``STATE_DELTA`` that would weigh
    more than the state. ``protocol_version`` is the one the client declared (``RunAgentInput.protocolVersion``,
    sent by ``@ag-ui/client`` 1.0 and later); with ``None`` (a client from before 1.0, such as the 0.0.x
    releases CopilotKit pins, whose schema knows only the ``success`` and ``interrupt`` outcomes) a
    ``RunAborted`` becomes a ``RUN_FINISHED`` without outcome carrying ``metadata.cancelled: true``.
    """

    __slots__ = (
        "_approvals",
        "_args_prefix",
        "_assistant",
        "_cancelled_outcome",
        "_checker",
        "_done",
        "_ids",
        "_open_reasoning",
        "_open_text",
        "_open_tools",
        "_parent_run_id",
        "_reasoning_prefix",
        "_reasoning_wire",
        "_run_id",
        "_started",
        "_state",
        "_streamed",
        "_text_prefix",
        "_text_wire",
        "_thread_id",
        "_tools_seen",
        "delta_prefixes",
        "snapshot_when_larger",
        "strict",
    )

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        state: Any = None,
        strict: bool = False,
        snapshot_when_larger: bool = True,
        known_tool_calls: Iterable[str] = (),
        known_approvals: Iterable[str] = (),
        reserved_ids: Iterable[str] = (),
        parent_run_id: str | None = None,
        protocol_version: str | None = PROTOCOL_VERSION,
    ) -> None:
        self.strict = strict
        # AG-UI 1.0 clients declare their protocol version in the request and know the cancelled outcome;
        # earlier ones (@ag-ui/client 0.0.x, pinned by CopilotKit) reject the whole run on it.
        self._cancelled_outcome = protocol_version is not None
        self.snapshot_when_larger = snapshot_when_larger
        self._checker = SequenceChecker(
            strict=strict, known_tool_calls=known_tool_calls, known_approvals=known_approvals
        )
        self._thread_id = thread_id
        self._run_id = run_id
        self._parent_run_id = parent_run_id
        self._state = ClientState(state)
        self._started = False
        self._done = False
        self._assistant: str | None = None
        self._ids: dict[str, str] = dict.fromkeys(reserved_ids, "history")
        self._text_wire: dict[str, str] = {}
        self._reasoning_wire: dict[str, str] = {}
        self._open_text: dict[str, str] = {}
        self._open_reasoning: dict[str, str] = {}
        self._open_tools: dict[str, Frame] = {}
        self._tools_seen: dict[str, None] = {}
        self._streamed: dict[str, None] = {}
        self._approvals: list[Frame] = []
        # The hot path for streamkit.frames.encode_frames: for a block open here and in the checker, a delta's
        # frame is this prefix + JSON(delta) + "}", and feeding it would change nothing.
        self._text_prefix: dict[str, bytes] = {}
        self._reasoning_prefix: dict[str, bytes] = {}
        self._args_prefix: dict[str, bytes] = {}
        self.delta_prefixes: dict[str, dict[str, bytes]] = {
            "text-delta": self._text_prefix,
            "reasoning-delta": self._reasoning_prefix,
            "tool-call-args-delta": self._args_prefix,
        }

    # -- the Mapper protocol -----------------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The state the client holds once it has applied everything returned so far (a fresh copy)."""
        return self._state.value

    def offload(self, event: ChatEvent) -> bool:
        """Whether feeding ``event`` is heavy enough to run off the event loop (a large payload, or a state
        event on a large state); :func:`streamkit.frames.encode_frames` asks before each event."""
        if event.type in _STATE_EVENTS and self._state.size > LARGE_STATE:
            return True
        return heavy(event)

    @property
    def finished(self) -> bool:
        """True once the terminal event (``RUN_FINISHED`` or ``RUN_ERROR``) has been returned."""
        return self._done

    def feed(self, event: ChatEvent) -> list[Frame]:
        """The AG-UI events for one ChatEvent (after the sequence checker)."""
        events = self._checker.feed(event)
        if len(events) == 1:
            ev = events[0]
            return _HANDLERS[ev.type](self, ev)
        out: list[Frame] = []
        for ev in events:
            out += _HANDLERS[ev.type](self, ev)
        return out

    def close(self) -> list[Frame]:
        """The core's stream ended: close what is open and end the run (nothing if it already ended)."""
        if self._done:
            return []
        out: list[Frame] = []
        for ev in self._checker.close():
            out += _HANDLERS[ev.type](self, ev)
        return out

    def fail(self, message: str, code: str | None = None) -> list[Frame]:
        """End the run with ``RUN_ERROR`` (after ``RUN_STARTED`` if nothing was sent yet); nothing if it ended."""
        if self._done:
            return []
        self._done = True
        for prefixes in self.delta_prefixes.values():
            prefixes.clear()
        out: list[Frame] = []
        if not self._started:
            self._started = True
            out.append(self._run_started_frame(None))
        error: Frame = {"type": "RUN_ERROR", "message": message}
        if code is not None:
            error["code"] = code
        out.append(error)
        return out

    # -- ids ---------------------------------------------------------------------------------------

    def _fresh(self, base: str, kind: str) -> str:
        wire = base
        n = 1
        while wire in self._ids:
            n += 1
            wire = f"{base}-{n}"
        self._ids[wire] = kind
        return wire

    def _claim(self, block_id: str, kind: str, aliases: dict[str, str]) -> str:
        """The wire id of a text/reasoning block: its own unless another message already uses it."""
        wire = aliases.get(block_id)
        if wire is not None:
            return wire
        owner = self._ids.get(block_id)
        if owner is None:
            self._ids[block_id] = kind
            return block_id
        if owner == kind or (owner == "assistant" and kind == "text"):
            return block_id  # the same message again, or text written into the run's assistant message
        wire = self._fresh(block_id, kind)
        aliases[block_id] = wire
        logger.warning("renamed %s message %r to %r: the id is already used by a %s", kind, block_id, wire, owner)
        return wire

    # -- lifecycle ---------------------------------------------------------------------------------

    def _run_started_frame(self, event: RunStarted | None) -> Frame:
        frame: Frame = {
            "type": "RUN_STARTED",
            "threadId": self._thread_id,
            "runId": self._run_id,
            "protocolVersion": PROTOCOL_VERSION,
        }
        if self._parent_run_id is not None:
            frame["parentRunId"] = self._parent_run_id
        if event is not None and event.metadata is not None:
            frame["metadata"] = js_value(event.metadata)
        return frame

    def _run_started(self, event: RunStarted) -> list[Frame]:
        if event.thread_id is not None:
            self._thread_id = event.thread_id
        if event.run_id is not None:
            self._run_id = event.run_id
        if event.parent_run_id is not None:
            self._parent_run_id = event.parent_run_id
        if event.message_id is not None:  # the assistant message the run writes into (may continue one)
            self._assistant = event.message_id
            self._ids[event.message_id] = "assistant"
        self._started = True
        return [self._run_started_frame(event)]

    def _end(self, frame: Frame) -> list[Frame]:
        dumps(frame)  # a payload that cannot be sent must fail here, before the run counts as ended
        self._done = True
        return [frame]

    def _run_finished(self, event: RunFinished) -> list[Frame]:
        frame: Frame = {"type": "RUN_FINISHED", "threadId": self._thread_id, "runId": self._run_id}
        if event.result is not None:
            frame["result"] = js_value(event.result)
        interrupts = _one_per_call([_interrupt(i) for i in event.interrupts or ()], self._approvals)
        if interrupts:
            frame["outcome"] = {"type": "interrupt", "interrupts": interrupts}
        if event.usage is not None:
            usage = _usage(event.usage)
            if usage:
                frame["usage"] = [usage]
        metadata = dict(event.metadata) if event.metadata else {}
        if event.finish_reason != "stop":
            metadata["finishReason"] = event.finish_reason
        if metadata:
            frame["metadata"] = js_value(metadata)
        return self._end(frame)

    def _run_error(self, event: RunError) -> list[Frame]:
        frame: Frame = {"type": "RUN_ERROR", "message": event.message}
        if event.code is not None:
            frame["code"] = event.code
        return self._end(frame)

    def _run_aborted(self, event: RunAborted) -> list[Frame]:
        frame: Frame = {"type": "RUN_FINISHED", "threadId": self._thread_id, "runId": self._run_id}
        metadata: dict[str, Any] = {}
        if self._cancelled_outcome:
            frame["outcome"] = {"type": "cancelled"}
        else:
            metadata["cancelled"] = True
        if event.reason is not None:
            metadata["reason"] = event.reason
        if metadata:
            frame["metadata"] = metadata
        return self._end(frame)

    def _step_started(self, event: StepStarted) -> list[Frame]:
        return [{"type": "STEP_STARTED", "stepName": event.name}]

    def _step_finished(self, event: StepFinished) -> list[Frame]:
        return [{"type": "STEP_FINISHED", "stepName": event.name}]

    # -- text and reasoning ------------------------------------------------------------------------

    def _text_start(self, event: TextStart) -> list[Frame]:
        mid = self._claim(event.id, "text", self._text_wire)
        self._assistant = mid
        self._open_text[event.id] = mid
        self._text_prefix[event.id] = b'{"type":"TEXT_MESSAGE_CONTENT","messageId":' + dumps(mid) + b',"delta":'
        frame: Frame = {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}
        if event.provider_metadata is not None:
            frame["metadata"] = _meta(providerMetadata=event.provider_metadata)
        return [frame]

    def _text_delta(self, event: TextDelta) -> list[Frame]:
        bid = event.id
        wire = self._text_wire
        mid = wire.get(bid, bid) if wire else bid
        return [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": event.delta}]

    def _text_end(self, event: TextEnd) -> list[Frame]:
        mid = self._open_text.pop(event.id, event.id)
        self._text_prefix.pop(event.id, None)
        frame: Frame = {"type": "TEXT_MESSAGE_END", "messageId": mid}
        if event.provider_metadata is not None or event.citations:
            citations = [_citation(c) for c in event.citations] if event.citations else None
            frame["metadata"] = _meta(providerMetadata=event.provider_metadata, citations=citations)
        return [frame]

    def _reasoning_start(self, event: ReasoningStart) -> list[Frame]:
        mid = self._claim(event.id, "reasoning", self._reasoning_wire)
        self._open_reasoning[event.id] = mid
        self._reasoning_prefix[event.id] = (
            b'{"type":"REASONING_MESSAGE_CONTENT","messageId":' + dumps(mid) + b',"delta":'
        )
        frame: Frame = {"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"}
        if event.provider_metadata is not None:
            frame["metadata"] = _meta(providerMetadata=event.provider_metadata)
        return [{"type": "REASONING_START", "messageId": mid}, frame]

    def _reasoning_delta(self, event: ReasoningDelta) -> list[Frame]:
        bid = event.id
        wire = self._reasoning_wire
        mid = wire.get(bid, bid) if wire else bid
        return [{"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": event.delta}]

    def _reasoning_end(self, event: ReasoningEnd) -> list[Frame]:
        mid = self._open_reasoning.pop(event.id, event.id)
        self._reasoning_prefix.pop(event.id, None)
        end: Frame = {"type": "REASONING_MESSAGE_END", "messageId": mid}
        if event.provider_metadata is not None:
            end["metadata"] = _meta(providerMetadata=event.provider_metadata)
        out = [end]
        if event.encrypted_value is not None:
            out.append(
                {
                    "type": "REASONING_ENCRYPTED_VALUE",
                    "subtype": "message",
                    "entityId": mid,
                    "encryptedValue": event.encrypted_value,
                }
            )
        out.append({"type": "REASONING_END", "messageId": mid})
        return out

    # -- tools -------------------------------------------------------------------------------------

    def _tool_start_frame(self, event: ToolCallStart | ToolCallEnd, name: str) -> Frame:
        parent = getattr(event, "parent_message_id", None) or self._assistant
        if parent is None:
            # The client names a parentless call's assistant message after the call: later calls join it.
            parent = self._assistant = event.id
        self._ids.setdefault(event.id, "tool-call")
        frame: Frame = {"type": "TOOL_CALL_START", "toolCallId": event.id, "toolCallName": name}
        frame["parentMessageId"] = parent
        if isinstance(event, ToolCallStart):
            metadata = _meta(
                title=event.title,
                dynamic=event.dynamic,
                providerExecuted=event.provider_executed,
                providerMetadata=event.provider_metadata,
                inputEncoding=event.input_encoding,
                toolMetadata=event.tool_metadata,
            )
            if metadata is not None:
                frame["metadata"] = metadata
        self._tools_seen[event.id] = None
        return frame

    def _tool_start(self, event: ToolCallStart) -> list[Frame]:
        frame = self._tool_start_frame(event, event.name)
        self._open_tools[event.id] = frame
        return [frame]

    def _tool_delta(self, event: ToolCallArgsDelta) -> list[Frame]:
        if event.id not in self._streamed:  # the first delta marks the call; later ones change nothing
            self._streamed[event.id] = None
            self._args_prefix[event.id] = b'{"type":"TOOL_CALL_ARGS","toolCallId":' + dumps(event.id) + b',"delta":'
        return [{"type": "TOOL_CALL_ARGS", "toolCallId": event.id, "delta": event.delta}]

    def _tool_end(self, event: ToolCallEnd) -> list[Frame]:
        out: list[Frame] = []
        if event.id not in self._tools_seen:
            out.append(self._tool_start_frame(event, event.name or ""))
        self._open_tools.pop(event.id, None)
        self._args_prefix.pop(event.id, None)
        if event.id not in self._streamed and event.input is not None:
            # An invalid call keeps the model's unparsable argument text as it was.
            raw = event.error is not None and isinstance(event.input, str)
            text = event.input if raw else json_text(event.input)
            if text:  # an empty delta sends no frame
                out.append({"type": "TOOL_CALL_ARGS", "toolCallId": event.id, "delta": text})
        self._streamed.pop(event.id, None)
        end: Frame = {"type": "TOOL_CALL_END", "toolCallId": event.id}
        metadata = _meta(error=event.error, providerMetadata=event.provider_metadata, toolMetadata=event.tool_metadata)
        if metadata is not None:
            end["metadata"] = metadata
        out.append(end)
        return out

    def _tool_result(self, event: ToolResult) -> list[Frame]:
        if event.preliminary:
            value = {"toolCallId": event.id, "output": js_value(event.output)}
            return [{"type": "CUSTOM", "name": PRELIMINARY_TOOL_RESULT, "value": value}]
        if event.message_id is not None:
            mid = self._fresh(event.message_id, "tool-result")
        else:
            mid = self._fresh(f"{event.id}-result", "tool-result")
        # What the run writes after a result follows it: later calls go in a new assistant message.
        self._assistant = None
        frame: Frame = {"type": "TOOL_CALL_RESULT", "messageId": mid, "toolCallId": event.id}
        pm, tm = event.provider_metadata, event.tool_metadata
        if event.denied:
            frame["content"] = event.error or "The tool call was denied."
            metadata = _meta(denied=True, providerMetadata=pm, toolMetadata=tm)
        elif event.error is not None:
            frame["content"] = event.error
            metadata = _meta(isError=True, providerMetadata=pm, toolMetadata=tm)
        else:
            frame["content"] = tool_content(event.output)
            metadata = _meta(providerMetadata=pm, toolMetadata=tm)
        if metadata is not None:
            frame["metadata"] = metadata
        return [frame]

    def _approval_request(self, event: ToolApprovalRequest) -> list[Frame]:
        self._approvals.append(_interrupt(hitl.approval_interrupt(event)))
        return []

    def _approval_response(self, event: ToolApprovalResponse) -> list[Frame]:
        value: Frame = {"id": event.id, "approved": event.approved}
        if event.reason is not None:
            value["reason"] = event.reason
        return [{"type": "CUSTOM", "name": TOOL_APPROVAL_RESPONSE, "value": value}]

    # -- state and history -------------------------------------------------------------------------

    def _state_snapshot(self, event: StateSnapshot) -> list[Frame]:
        state = self._state.replace(event.state)
        return [{"type": "STATE_SNAPSHOT", "snapshot": js_value(state)}]

    def _state_update(self, event: StateUpdate) -> list[Frame]:
        patch, target = self._state.update(event.state, snapshot_when_larger=self.snapshot_when_larger)
        if patch is None:
            return [{"type": "STATE_SNAPSHOT", "snapshot": js_value(target)}]
        if not patch:
            return []
        return [{"type": "STATE_DELTA", "delta": js_value(patch)}]

    def _state_delta(self, event: StateDelta) -> list[Frame]:
        try:
            patch = check_patch(to_json(event.patch))
            state = apply_patch(self._state.value, patch)
        except PatchError as exc:
            if self.strict:
                raise ProtocolError(event, f"the patch would fail on the client: {exc}") from None
            logger.warning("dropped StateDelta: the patch would fail on the client: %s", exc)
            return []
        self._state.replace(state)
        return [{"type": "STATE_DELTA", "delta": js_value(patch)}]

    def _messages_snapshot(self, event: MessagesSnapshot) -> list[Frame]:
        try:
            messages = to_agui_messages(event.messages)
        except ValueError as exc:
            if self.strict:
                raise ProtocolError(event, f"the messages are not valid: {exc}") from None
            logger.warning("dropped MessagesSnapshot: the messages are not valid: %s", exc)
            return []
        # The client drops what the snapshot leaves out: end what is streaming, restart it after the snapshot.
        before: list[Frame] = []
        after: list[Frame] = []
        for mid in self._open_text.values():
            before.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
            after.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
        for mid in self._open_reasoning.values():
            before.append({"type": "REASONING_MESSAGE_END", "messageId": mid})
            after.append({"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"})
        for tool_call_id, start in self._open_tools.items():
            before.append({"type": "TOOL_CALL_END", "toolCallId": tool_call_id})
            after.append(start)
        for message in messages:
            self._ids.setdefault(message["id"], "history")
        return [*before, {"type": "MESSAGES_SNAPSHOT", "messages": messages}, *after]

    # -- extras ------------------------------------------------------------------------------------

    def _data(self, event: Data) -> list[Frame]:
        value: Frame = {"name": event.name, "data": js_value(event.data)}
        if event.id is not None:
            value["id"] = event.id
        if event.transient:
            value["transient"] = True
        return [{"type": "CUSTOM", "name": DATA, "value": value}]

    def _source(self, event: Source) -> list[Frame]:
        return [{"type": "CUSTOM", "name": SOURCE, "value": _source_value(event)}]

    def _file(self, event: File) -> list[Frame]:
        value: Frame = {"url": event.url, "mediaType": event.media_type}
        if event.reasoning:
            value["reasoning"] = True
        return [{"type": "CUSTOM", "name": FILE, "value": value}]

    def _user_message(self, event: UserMessage) -> list[Frame]:
        mid = event.id if event.id not in self._ids else self._fresh(event.id, "user")
        self._ids[mid] = "user"
        self._assistant = None  # what the run writes next follows the user's message
        out: list[Frame] = [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "user"}]
        if event.text:
            out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": event.text})
        out.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        for file in event.files or ():
            value: Frame = {"url": file.url, "mediaType": file.media_type}
            if file.filename is not None:
                value["filename"] = file.filename
            value["messageId"] = mid
            out.append({"type": "CUSTOM", "name": FILE, "value": value})
        return out

    def _provider_part(self, event: ProviderPart) -> list[Frame]:
        value = js_value(event.provider_metadata) if event.provider_metadata is not None else None
        return [{"type": "CUSTOM", "name": event.kind, "value": value}]

    def _step_reset(self, event: Any) -> list[Frame]:
        out: list[Frame] = []
        for bid in list(self._open_text):
            out += self._text_end(TextEnd(id=bid))
        for bid in list(self._open_reasoning):
            out += self._reasoning_end(ReasoningEnd(id=bid))
        for bid in list(self._open_tools):
            out += self._tool_end(ToolCallEnd(id=bid))
        # The client keeps the step's messages: a block id used before the reset starts a new message.
        for wire, kind in self._ids.items():
            if kind in ("text", "reasoning"):
                self._ids[wire] = "message of a reset step"
        self._text_wire.clear()
        self._reasoning_wire.clear()
        out.append({"type": "CUSTOM", "name": STEP_RESET, "value": {}})
        return out

    def _message_metadata(self, event: MessageMetadata) -> list[Frame]:
        return [{"type": "CUSTOM", "name": MESSAGE_METADATA, "value": js_value(event.metadata)}]

    def _custom(self, event: Custom) -> list[Frame]:
        return [{"type": "CUSTOM", "name": event.name, "value": js_value(event.value)}]

    def _raw(self, event: Raw) -> list[Frame]:
        frame: Frame = {"type": "RAW", "event": js_value(event.event)}
        if event.source is not None:
            frame["source"] = event.source
        return [frame]


_HANDLERS: dict[str, Callable[[AGUIMapper, Any], list[Frame]]] = {
    "run-started": AGUIMapper._run_started,
    "run-finished": AGUIMapper._run_finished,
    "run-error": AGUIMapper._run_error,
    "run-aborted": AGUIMapper._run_aborted,
    "step-started": AGUIMapper._step_started,
    "step-finished": AGUIMapper._step_finished,
    "step-reset": AGUIMapper._step_reset,
    "text-start": AGUIMapper._text_start,
    "text-delta": AGUIMapper._text_delta,
    "text-end": AGUIMapper._text_end,
    "reasoning-start": AGUIMapper._reasoning_start,
    "reasoning-delta": AGUIMapper._reasoning_delta,
    "reasoning-end": AGUIMapper._reasoning_end,
    "tool-call-start": AGUIMapper._tool_start,
    "tool-call-args-delta": AGUIMapper._tool_delta,
    "tool-call-end": AGUIMapper._tool_end,
    "tool-result": AGUIMapper._tool_result,
    "tool-approval-request": AGUIMapper._approval_request,
    "tool-approval-response": AGUIMapper._approval_response,
    "state-snapshot": AGUIMapper._state_snapshot,
    "state-update": AGUIMapper._state_update,
    "state-delta": AGUIMapper._state_delta,
    "messages-snapshot": AGUIMapper._messages_snapshot,
    "data": AGUIMapper._data,
    "source": AGUIMapper._source,
    "file": AGUIMapper._file,
    "message-metadata": AGUIMapper._message_metadata,
    "user-message": AGUIMapper._user_message,
    "provider-part": AGUIMapper._provider_part,
    "custom": AGUIMapper._custom,
    "raw": AGUIMapper._raw,
}
"""The mapper's handler for each (checked) event type: one table for all mappers."""


def _interrupt(interrupt: Any) -> Frame:
    out: Frame = {"id": interrupt.id, "reason": interrupt.reason}
    if interrupt.message is not None:
        out["message"] = interrupt.message
    if interrupt.tool_call_id is not None:
        out["toolCallId"] = interrupt.tool_call_id
    if interrupt.response_schema is not None:
        out["responseSchema"] = js_value(interrupt.response_schema)
    if interrupt.expires_at is not None:
        out["expiresAt"] = interrupt.expires_at
    if interrupt.metadata is not None:
        out["metadata"] = js_value(interrupt.metadata)
    return out


def _one_per_call(interrupts: list[Frame], approvals: list[Frame]) -> list[Frame]:
    """The run's interrupts then its approvals' ones, one per id and tool call: an interrupt the core gave
    for a call it also asked approval for is that approval's (its fields win, the approval's fill gaps)."""
    out = list(interrupts)
    for approval in approvals:
        same = next(
            (i for i in out if i["id"] == approval["id"] or i.get("toolCallId") == approval["toolCallId"]), None
        )
        if same is None:
            out.append(approval)
        else:
            for key, value in approval.items():
                same.setdefault(key, value)
    return out
