"""ChatEvents to UI Message Stream chunks: a pure, per-run state machine.

:class:`AISDKMapper` implements :class:`streamkit.frames.Mapper`. Every event goes through a
:class:`~streamkit.events.SequenceChecker` first, so the chunks it returns always form a stream the
``useChat`` client accepts (spec section 5.2): deltas only for open parts, text and reasoning closed before
``finish-step``, tool outputs only for known calls, one ``start`` with one message id, ``error`` last.

``sdk_version`` (5, 6 or 7) names the major version of the ``ai`` package in the browser; the mapper emits
only chunk types and fields that the current release of that major has in its chunk schema, degrading what
it lacks to the nearest form it has (see :data:`CHUNK_TYPES` and :data:`CHUNK_FIELDS`).

Payload values (tool input and output, data, state, metadata) go through :func:`streamkit.stringify.js_value`,
and keys the client refuses to parse (``__proto__``, and ``constructor`` holding a ``prototype``) are
dropped from them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from ..events import (
    USAGE_COUNTS,
    ChatEvent,
    Citation,
    Custom,
    Data,
    File,
    Interrupt,
    Message,
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
)
from ..events.logs import run_logger
from ..frames import MapperBase
from ..offload import LARGE_STATE, breathe, heavy, large, offloaded
from ..patch import PatchError, apply_patch
from ..stringify import JsText, Pieces, changed_span, dumps, js_json, js_value, js_walk, needs_rewrite
from .messages import to_ui_messages
from .request import STATE_PART_ID

__all__ = [
    "CHUNK_FIELDS",
    "CHUNK_TYPES",
    "STATE_PART_ID",
    "SUPPORTED_VERSIONS",
    "AISDKMapper",
    "Chunk",
    "safe_json",
]

logger = run_logger("streamkit.aisdk")

Chunk = dict[str, Any]
"""One UI Message Stream chunk: a JSON object with a string ``type``."""

SUPPORTED_VERSIONS = (5, 6, 7)
"""The ``ai`` package majors the mapper can target."""

_COMMON = frozenset(
    {
        "start", "start-step", "finish-step", "finish", "abort", "error", "message-metadata",
        "text-start", "text-delta", "text-end", "reasoning-start", "reasoning-delta", "reasoning-end",
        "tool-input-start", "tool-input-delta", "tool-input-available", "tool-input-error",
        "tool-output-available", "tool-output-error", "source-url", "source-document", "file",
    }
)  # fmt: skip

CHUNK_TYPES: Mapping[int, frozenset[str]] = {
    5: _COMMON,
    6: _COMMON | {"tool-approval-request", "tool-output-denied"},
    7: _COMMON
    | {
        "tool-approval-request", "tool-output-denied", "tool-approval-response", "custom", "reasoning-file",
        "reset-step", "steering-message",
    },
}  # fmt: skip
"""The chunk types (besides ``data-*``) in the chunk schema of the current ``ai`` release of each major."""

_PM = "providerMetadata"
_TEXT_FIELDS = frozenset({"id", _PM})
_V5_FIELDS: dict[str, frozenset[str]] = {
    "start": frozenset({"messageId", "messageMetadata"}),
    "start-step": frozenset(),
    "finish-step": frozenset(),
    "finish": frozenset({"finishReason", "messageMetadata"}),
    "abort": frozenset(),
    "error": frozenset({"errorText"}),
    "message-metadata": frozenset({"messageMetadata"}),
    "text-start": _TEXT_FIELDS,
    "text-delta": _TEXT_FIELDS | {"delta"},
    "text-end": _TEXT_FIELDS,
    "reasoning-start": _TEXT_FIELDS,
    "reasoning-delta": _TEXT_FIELDS | {"delta"},
    "reasoning-end": _TEXT_FIELDS,
    "tool-input-start": frozenset({"toolCallId", "toolName", "providerExecuted", "dynamic"}),
    "tool-input-delta": frozenset({"toolCallId", "inputTextDelta"}),
    "tool-input-available": frozenset({"toolCallId", "toolName", "input", "providerExecuted", _PM, "dynamic"}),
    "tool-input-error": frozenset({"toolCallId", "toolName", "input", "providerExecuted", _PM, "dynamic", "errorText"}),
    "tool-output-available": frozenset({"toolCallId", "output", "providerExecuted", "dynamic", "preliminary"}),
    "tool-output-error": frozenset({"toolCallId", "errorText", "providerExecuted", "dynamic"}),
    "source-url": frozenset({"sourceId", "url", "title", _PM}),
    "source-document": frozenset({"sourceId", "mediaType", "title", "filename", _PM}),
    "file": frozenset({"url", "mediaType", _PM}),
    "data-*": frozenset({"id", "data", "transient"}),
}
_TOOL_META = frozenset({_PM, "toolMetadata", "title", "inputEncoding"})
_V6_FIELDS: dict[str, frozenset[str]] = {
    **_V5_FIELDS,
    "abort": frozenset({"reason"}),
    "tool-input-start": _V5_FIELDS["tool-input-start"] | _TOOL_META,
    "tool-input-available": _V5_FIELDS["tool-input-available"] | {"toolMetadata", "title"},
    "tool-input-error": _V5_FIELDS["tool-input-error"] | {"toolMetadata", "title"},
    "tool-output-available": _V5_FIELDS["tool-output-available"] | {_PM, "toolMetadata"},
    "tool-output-error": _V5_FIELDS["tool-output-error"] | {_PM, "toolMetadata"},
    "tool-approval-request": frozenset(
        {"approvalId", "toolCallId", "approvalDescriptor", "inputSchemaInput", "signature"}
    ),
    "tool-output-denied": frozenset({"toolCallId"}),
}
_V7_FIELDS: dict[str, frozenset[str]] = {
    **_V6_FIELDS,
    "text-end": _TEXT_FIELDS | {"citations"},
    "tool-approval-request": _V6_FIELDS["tool-approval-request"] | {"reason", "isAutomatic"},
    "tool-approval-response": frozenset({"approvalId", "approved", "reason", "providerExecuted", _PM}),
    "custom": frozenset({"kind", _PM}),
    "reasoning-file": frozenset({"url", "mediaType", _PM}),
    "reset-step": frozenset(),
    "steering-message": frozenset({"id", "parts"}),
}
CHUNK_FIELDS: Mapping[int, Mapping[str, frozenset[str]]] = {5: _V5_FIELDS, 6: _V6_FIELDS, 7: _V7_FIELDS}
"""Per major and chunk type, the fields (besides ``type``) of that chunk in the current release's schema;
``data-*`` stands for every data chunk."""

FINISH_REASONS: Mapping[int, frozenset[str]] = {
    5: frozenset({"stop", "length", "content-filter", "tool-calls", "error", "other", "unknown"}),
    6: frozenset({"stop", "length", "content-filter", "tool-calls", "error", "other"}),
    7: frozenset({"stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"}),
}
"""The ``finish.finishReason`` values each major accepts."""

_STATE_EVENTS = frozenset({"state-snapshot", "state-update", "state-delta"})
_FRAGMENT = 65536  # a state part at least this long is put in its chunk as JSON bytes (orjson.Fragment)
_WINDOW = 32  # longer than any pattern needs_rewrite and _unsafe look for, with its context
_NO_PARTS = frozenset({"start", "finish", "finish-step", "abort", "error", "message-metadata"})
_DENIED_TEXT = "The tool call was denied."
_INVALID_INPUT_TEXT = "The tool call's input is not valid JSON."
_DISCARDED_TEXT = "The tool call was discarded with its step."


def _strip_unsafe(value: Any) -> Any:
    """``value`` without the object keys the client's JSON parser refuses (copied only when needed)."""
    kind = type(value)
    if kind is dict:
        out = None
        for key, item in value.items():
            if key == "__proto__" or (key == "constructor" and type(item) is dict and "prototype" in item):
                if out is None:
                    out = dict(value)
                del out[key]
                continue
            new = _strip_unsafe(item)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if kind is list:
        items = [_strip_unsafe(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def safe_json(value: Any) -> Any:
    """A payload value ready for a chunk: :func:`~streamkit.stringify.js_value`, minus keys the client refuses.

    The keys are looked for in orjson's JSON of the value; only a value that holds one is walked."""
    if value is None or type(value) in (str, bool):
        return value
    if type(value) is int:
        return js_value(value)
    try:
        raw = dumps(value)
    except TypeError:
        return _strip_unsafe(js_walk(value))
    if len(raw) < 512 or _unsafe(raw):  # a small value is walked: that costs less than searching its JSON
        return _strip_unsafe(js_walk(value))
    return js_value(value)


def _unsafe(raw: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether JSON ``raw`` (or ``raw[start:end]``) may hold a key :func:`_strip_unsafe` removes."""
    stop = len(raw) if end is None else end
    return raw.find(b'"__proto__":', start, stop) >= 0 or raw.find(b'"constructor":{', start, stop) >= 0


def _prefix(kind: str, block_id: str) -> bytes:
    """The bytes of a ``kind`` chunk for ``block_id`` up to its ``delta`` value."""
    return b'{"type":"' + kind.encode() + b'","id":' + dumps(block_id) + b',"delta":'


def _usage(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key in USAGE_COUNTS:
        value = getattr(usage, name)
        if value is not None:
            out[key] = value
    if usage.provider is not None:
        out["provider"] = usage.provider
    if usage.model is not None:
        out["model"] = usage.model
    return out


def _interrupt(interrupt: Interrupt) -> dict[str, Any]:
    out: dict[str, Any] = {"id": interrupt.id, "reason": interrupt.reason}
    for key, value in (
        ("message", interrupt.message),
        ("toolCallId", interrupt.tool_call_id),
        ("responseSchema", interrupt.response_schema),
        ("expiresAt", interrupt.expires_at),
        ("metadata", interrupt.metadata),
    ):
        if value is not None:
            out[key] = safe_json(value)
    return out


class _Call:
    """What the mapper remembers of one tool call."""

    __slots__ = ("args", "dynamic", "metadata", "name", "provider_executed", "text_input", "title")

    def __init__(
        self,
        name: str,
        dynamic: bool,
        provider_executed: bool,
        title: str | None,
        metadata: dict[str, Any] | None = None,
        text_input: bool = False,
    ) -> None:
        self.name = name
        self.dynamic = dynamic
        self.provider_executed = provider_executed
        self.title = title
        self.metadata = metadata
        self.text_input = text_input
        self.args: list[str] = []


def _source_fields(source: Source) -> Chunk:
    """The fields of a ``source-url``/``source-document`` chunk for ``source`` (after ``type``)."""
    out: Chunk
    if source.url is not None:
        out = {"sourceId": source.id, "url": source.url}
        if source.title is not None:
            out["title"] = source.title
    else:
        out = {
            "sourceId": source.id,
            "mediaType": source.media_type or "application/octet-stream",
            "title": source.title or source.filename or source.id,
        }
        if source.filename is not None:
            out["filename"] = source.filename
    if source.provider_metadata is not None:
        out[_PM] = safe_json(source.provider_metadata)
    return out


def _citation(citation: Citation) -> Chunk:
    """A ``text-end`` citation: the source in the client's citation form, then the cited span."""
    fields = _source_fields(citation.source)
    source: Chunk = {
        "type": "source",
        "sourceType": "url" if "url" in fields else "document",
        "id": fields.pop("sourceId"),
    }
    source.update(fields)
    out: Chunk = {"source": source}
    if citation.start_index is not None:
        out["startIndex"] = citation.start_index
    if citation.end_index is not None:
        out["endIndex"] = citation.end_index
    if citation.cited_text is not None:
        out["citedText"] = citation.cited_text
    return out


class AISDKMapper(MapperBase):
    """Maps one run's ``ChatEvent`` stream to UI Message Stream chunk dicts.

    ``feed(event)`` returns the chunks for one event, ``close()`` those that end the run when the core's
    stream ended, ``fail(message)`` those that end it with an error (open parts closed, one ``error``).

    ``message_id`` is the assistant message id to use when ``RunStarted`` carries none; without either, one
    is generated. With ``continuation``, ``message_id`` is the message the request continues, and it is used
    even when ``RunStarted`` names another (the client would show the message twice otherwise). ``known_tool_calls`` and
    ``known_approvals`` are the tool call and approval ids of that continued message, whose outputs and
    answers may arrive in this run. ``state`` is the state the client holds (the base of the first
    ``StateDelta``). ``strict`` makes the sequence checker raise instead of repairing.

    ``delta_prefixes`` publishes the hot path for :func:`streamkit.frames.encode_frames`: the frame prefix of
    every text and reasoning part open on the wire and of every tool input streaming, whose argument text the
    writer keeps in ``delta_pieces`` (see :class:`streamkit.frames.Mapper`).
    """

    __slots__ = (
        "_answered",
        "_approvals",
        "_args_prefix",
        "_calls",
        "_check",
        "_checker",
        "_continuation",
        "_depth",
        "_discarded",
        "_errored",
        "_in_step",
        "_open_inputs",
        "_reasoning",
        "_reasoning_prefix",
        "_sources",
        "_state",
        "_state_clean",
        "_state_sent",
        "_state_size",
        "_state_text",
        "_step_pending",
        "_stepped",
        "_text",
        "_text_prefix",
        "_v6",
        "_v7",
        "_wire_step",
        "delta_pieces",
        "delta_prefixes",
        "message_id",
        "sdk_version",
    )

    def __init__(
        self,
        *,
        sdk_version: int = 7,
        message_id: str | None = None,
        strict: bool = False,
        known_tool_calls: Iterable[str] = (),
        known_approvals: Iterable[str] = (),
        state: Any = None,
        continuation: bool = False,
        answered: Mapping[str, Any] | None = None,
    ) -> None:
        if sdk_version not in SUPPORTED_VERSIONS:
            raise ValueError(f"sdk_version must be one of {SUPPORTED_VERSIONS}, not {sdk_version!r}")
        self.sdk_version = sdk_version
        self._v6 = sdk_version >= 6
        self._v7 = sdk_version >= 7
        self.message_id = message_id
        self._continuation = continuation and message_id is not None
        self._answered = dict(answered or {})
        self._checker = SequenceChecker(
            strict=strict, known_tool_calls=known_tool_calls, known_approvals=known_approvals
        )
        self._check = self._checker.feed
        self._text: dict[str, None] = {}
        self._reasoning: dict[str, None] = {}
        self._text_prefix: dict[str, bytes] = {}
        self._reasoning_prefix: dict[str, bytes] = {}
        self._args_prefix: dict[str, bytes] = {}
        self.delta_prefixes: dict[str, dict[str, bytes]] = {
            "text-delta": self._text_prefix,
            "reasoning-delta": self._reasoning_prefix,
            "tool-call-args-delta": self._args_prefix,
        }
        # The argument text of each tool input on the hot path (its call's ``args``): ``tool-input-available``
        # carries the input parsed from it when ToolCallEnd brings none.
        self.delta_pieces: dict[str, list[str]] = {}
        self._calls: dict[str, _Call] = {}
        self._open_inputs: dict[str, None] = {}
        self._approvals: dict[str, str] = {}
        self._state: Any = {} if state is None else state
        self._depth = 0
        self._in_step = False
        self._step_pending = False
        self._errored = False
        # For StepReset and citations (rare events, kept off the delta path):
        self._stepped = False  # a step has begun in this run
        self._wire_step: dict[str, None] = {}  # text, reasoning and tool call ids with a part in the wire step
        self._discarded: dict[str, None] = {}  # tool calls whose part the client dropped at a reset-step
        self._state_sent = False
        self._state_clean: bytes | None = None  # the JSON of the last small state sent, when it needed no rewriting
        self._state_text = JsText(_unsafe)  # the pieces of the last large state sent
        self._state_size = 0  # the length of the last state's JSON
        self._sources: dict[str, None] = {}  # ids of the source parts sent

    # -- the Mapper protocol -----------------------------------------------------------------------

    def offload(self, event: ChatEvent) -> bool:
        """Whether feeding ``event`` is heavy enough to run off the event loop (a large payload, or a state
        event on a large state); :func:`streamkit.frames.encode_frames` asks before each event."""
        if event.type in _STATE_EVENTS and (self._state_size > LARGE_STATE or large(self._state)):
            return True
        return heavy(event)

    def feed(self, event: ChatEvent) -> list[Chunk]:
        """The chunks for one event (after the sequence checker)."""
        checked = self._check(event)
        handlers = _HANDLERS
        if len(checked) == 1:
            ev = checked[0]
            out = handlers[ev.type](self, ev)
        else:
            out = []
            for ev in checked:
                out += handlers[ev.type](self, ev)
        if self._step_pending and out:
            return self._flush_step(out)
        return out

    def close(self) -> list[Chunk]:
        """The chunks that end the run when the core's stream ended (nothing if it ended properly)."""
        out: list[Chunk] = []
        for ev in self._checker.close():
            out += _HANDLERS[ev.type](self, ev)
        if self._step_pending and out:
            return self._flush_step(out)
        return out

    def fail(self, message: str, code: str | None = None) -> list[Chunk]:
        """Open parts closed, then one ``error`` chunk with ``message``."""
        if self._checker.finished:
            # An exception after the run's end: one error still tells the client, a second would not.
            return [] if self._errored else [{"type": "error", "errorText": message}]
        self._checker.strict = False  # the run is ending: repair rather than raise
        return self.feed(RunError(message=message, code=code))

    @property
    def finished(self) -> bool:
        """True once the run has ended (``finish``, ``abort`` or ``error`` was produced)."""
        return self._checker.finished

    # -- lifecycle ---------------------------------------------------------------------------------

    def _run_started(self, ev: RunStarted) -> list[Chunk]:
        if self._continuation and ev.message_id not in (None, self.message_id):
            logger.warning(
                "RunStarted names message %r, but the run continues message %r: kept %r (the client would "
                "show the message twice)",
                ev.message_id,
                self.message_id,
                self.message_id,
            )
            mid = self.message_id
        else:
            mid = ev.message_id or self.message_id or f"msg-{uuid.uuid4().hex}"
        self.message_id = mid
        chunk: Chunk = {"type": "start"}
        if ev.metadata is not None:
            chunk["messageMetadata"] = safe_json(ev.metadata)
        chunk["messageId"] = mid
        if not (self._continuation and self._answered):
            return [chunk]
        # The interrupts this run's request answers: their parts restated, as answered, in the same message.
        parts = [{"type": "data-interrupt", "id": iid, "data": safe_json(d)} for iid, d in self._answered.items()]
        return [chunk, *parts]

    def _run_finished(self, ev: RunFinished) -> list[Chunk]:
        # An interrupt for a call of this run's approval requests is that approval (already a tool part in
        # approval-requested state): no data part for it, and the run pauses the way the client resends on.
        asked = self._approvals
        interrupts = [i for i in ev.interrupts or () if i.id not in asked and i.tool_call_id not in asked.values()]
        out: list[Chunk] = [{"type": "data-interrupt", "id": i.id, "data": _interrupt(i)} for i in interrupts]
        reason: str = ev.finish_reason
        if interrupts:
            reason = "interrupted"
        elif ev.interrupts:
            reason = "tool-calls"
        if reason == "interrupted" and not self._v7:
            reason = "other"
        chunk: Chunk = {"type": "finish", "finishReason": reason}
        metadata: dict[str, Any] = dict(ev.metadata) if ev.metadata else {}
        if ev.usage is not None:
            metadata["usage"] = _usage(ev.usage)
        if ev.result is not None:
            metadata["result"] = ev.result
        if metadata:
            chunk["messageMetadata"] = safe_json(metadata)
        out.append(chunk)
        return out

    def _run_error(self, ev: RunError) -> list[Chunk]:
        self._errored = True
        return [{"type": "error", "errorText": ev.message}]

    def _run_aborted(self, ev: RunAborted) -> list[Chunk]:
        if ev.reason is not None and self._v6:
            return [{"type": "abort", "reason": ev.reason}]
        return [{"type": "abort"}]

    # Steps are flat on the wire: a step inside a step belongs to the outer one. ``start-step`` is sent
    # just before the step's first part, so a step without parts sends nothing.

    def _step_started(self, ev: Any) -> list[Chunk]:
        self._depth += 1
        if self._depth > 1 or self._in_step:
            return []
        if self._open_inputs:
            # A new step would hide the streaming tool part from the client's lookup: stay in this one.
            logger.debug("step started while tool input %s is open: merged into the current step", ev.name)
            return []
        self._in_step = True
        self._stepped = True
        self._step_pending = True
        self._wire_step.clear()  # parts from here on follow this step's ``start-step``
        # Until ``start-step`` is out, a delta's frames are not just the delta: keep deltas on ``feed``.
        self._text_prefix.clear()
        self._reasoning_prefix.clear()
        return []

    def _flush_step(self, out: list[Chunk]) -> list[Chunk]:
        for i, chunk in enumerate(out):
            if chunk["type"] not in _NO_PARTS and not chunk.get("transient"):
                self._step_pending = False
                for bid in self._text:
                    self._text_prefix[bid] = _prefix("text-delta", bid)
                for bid in self._reasoning:
                    self._reasoning_prefix[bid] = _prefix("reasoning-delta", bid)
                return [*out[:i], {"type": "start-step"}, *out[i:]]
        return out

    def _step_finished(self, ev: Any) -> list[Chunk]:
        self._depth = max(self._depth - 1, 0)
        if self._depth or not self._in_step:
            return []
        self._in_step = False
        out = self._close_parts()
        if self._step_pending:
            self._step_pending = False
            return out
        out.append({"type": "finish-step"})
        return out

    def _close_parts(self) -> list[Chunk]:
        """End open text and reasoning parts (clients before 7.0.79 forget them at ``finish-step``)."""
        out: list[Chunk] = [{"type": "text-end", "id": i} for i in self._text]
        out += [{"type": "reasoning-end", "id": i} for i in self._reasoning]
        self._text.clear()
        self._reasoning.clear()
        self._text_prefix.clear()
        self._reasoning_prefix.clear()
        return out

    def _step_reset(self, ev: Any) -> list[Chunk]:
        """``reset-step`` when the client can drop exactly the current step's parts, else ends for what is open.

        The client drops every part after the last ``start-step`` (all parts when there is none) and forgets
        open ids. That is the current step when a step's ``start-step`` is out, or when the run has had no step
        and continues no message; otherwise (and before 7) what is open is ended instead and nothing is dropped.
        """
        wire = self._wire_step
        discard = self._v7 and (
            (self._in_step and not self._step_pending) or not (self._in_step or self._stepped or self._continuation)
        )
        out: list[Chunk] = []
        for bid in list(self._text):
            if not (discard and bid in wire):
                out.append({"type": "text-end", "id": bid})
        for bid in list(self._reasoning):
            if not (discard and bid in wire):
                out.append({"type": "reasoning-end", "id": bid})
        self._text.clear()
        self._reasoning.clear()
        self._text_prefix.clear()
        self._reasoning_prefix.clear()
        for bid in list(self._open_inputs):
            if not (discard and bid in wire):
                out += self._tool_end(ToolCallEnd(id=bid, error=_DISCARDED_TEXT))
        self._open_inputs.clear()
        self._args_prefix.clear()
        self.delta_pieces.clear()
        if not discard:
            logger.info("StepReset: open parts ended, nothing dropped (the client cannot drop this step's parts)")
            return out
        for bid in wire:
            if self._calls.pop(bid, None) is not None:
                self._discarded[bid] = None
        wire.clear()
        out.append({"type": "reset-step"})
        if self._state_sent:
            out += self._state_part()  # the state part may have been in the step: the state itself stays
        return out

    def _refuse_discarded(self, ev: ChatEvent, tool_call_id: str) -> list[Chunk]:
        reason = f"tool call {tool_call_id!r} was dropped with its step by the client"
        if self._checker.strict:
            raise ProtocolError(ev, reason)
        logger.warning("dropped %s: %s", type(ev).__name__, reason)
        return []

    # -- text and reasoning ------------------------------------------------------------------------

    def _text_start(self, ev: TextStart) -> list[Chunk]:
        self._text[ev.id] = None
        self._wire_step[ev.id] = None
        if not self._step_pending:
            self._text_prefix[ev.id] = _prefix("text-delta", ev.id)
        if ev.provider_metadata is not None:
            return [{"type": "text-start", "id": ev.id, _PM: safe_json(ev.provider_metadata)}]
        return [{"type": "text-start", "id": ev.id}]

    def _text_delta(self, ev: TextDelta) -> list[Chunk]:
        if ev.id in self._text:
            return [{"type": "text-delta", "id": ev.id, "delta": ev.delta}]
        self._text[ev.id] = None  # closed at a step boundary, still open for the core
        self._wire_step[ev.id] = None
        if not self._step_pending:
            self._text_prefix[ev.id] = _prefix("text-delta", ev.id)
        return [{"type": "text-start", "id": ev.id}, {"type": "text-delta", "id": ev.id, "delta": ev.delta}]

    def _text_end(self, ev: TextEnd) -> list[Chunk]:
        if ev.id not in self._text:  # ended at its step's end: citations can only go as sources
            return self._cited_sources(ev.citations) if ev.citations else []
        del self._text[ev.id]
        self._text_prefix.pop(ev.id, None)
        if ev.citations:
            return self._cited_text_end(ev)
        if ev.provider_metadata is not None:
            return [{"type": "text-end", "id": ev.id, _PM: safe_json(ev.provider_metadata)}]
        return [{"type": "text-end", "id": ev.id}]

    def _cited_text_end(self, ev: TextEnd) -> list[Chunk]:
        """``text-end`` with ``citations`` (7), else followed by a source part per cited source not yet sent."""
        citations = ev.citations or []
        chunk: Chunk = {"type": "text-end", "id": ev.id}
        if self._v7:
            chunk["citations"] = [_citation(c) for c in citations]
        if ev.provider_metadata is not None:
            chunk[_PM] = safe_json(ev.provider_metadata)
        return [chunk] if self._v7 else [chunk, *self._cited_sources(citations)]

    def _cited_sources(self, citations: list[Citation]) -> list[Chunk]:
        out: list[Chunk] = []
        for citation in citations:
            if citation.source.id not in self._sources:
                out += self._source(citation.source)
        return out

    def _reasoning_start(self, ev: ReasoningStart) -> list[Chunk]:
        self._reasoning[ev.id] = None
        self._wire_step[ev.id] = None
        if not self._step_pending:
            self._reasoning_prefix[ev.id] = _prefix("reasoning-delta", ev.id)
        if ev.provider_metadata is not None:
            return [{"type": "reasoning-start", "id": ev.id, _PM: safe_json(ev.provider_metadata)}]
        return [{"type": "reasoning-start", "id": ev.id}]

    def _reasoning_delta(self, ev: ReasoningDelta) -> list[Chunk]:
        if ev.id in self._reasoning:
            return [{"type": "reasoning-delta", "id": ev.id, "delta": ev.delta}]
        self._reasoning[ev.id] = None
        self._wire_step[ev.id] = None
        if not self._step_pending:
            self._reasoning_prefix[ev.id] = _prefix("reasoning-delta", ev.id)
        return [
            {"type": "reasoning-start", "id": ev.id},
            {"type": "reasoning-delta", "id": ev.id, "delta": ev.delta},
        ]

    def _reasoning_end(self, ev: ReasoningEnd) -> list[Chunk]:
        if ev.id not in self._reasoning:
            return []
        del self._reasoning[ev.id]
        self._reasoning_prefix.pop(ev.id, None)
        if ev.provider_metadata is not None:
            return [{"type": "reasoning-end", "id": ev.id, _PM: safe_json(ev.provider_metadata)}]
        return [{"type": "reasoning-end", "id": ev.id}]

    # -- tools -------------------------------------------------------------------------------------

    def _tool_fields(self, chunk: Chunk, call: _Call, provider_metadata: Any) -> Chunk:
        """Add the optional fields shared by ``tool-input-*`` chunks, in the reference key order."""
        if call.provider_executed:
            chunk["providerExecuted"] = True
        if provider_metadata is not None and (self._v6 or chunk["type"] != "tool-input-start"):
            chunk[_PM] = safe_json(provider_metadata)
        if call.metadata is not None and self._v6:
            chunk["toolMetadata"] = safe_json(call.metadata)
        if call.dynamic:
            chunk["dynamic"] = True
        if call.title is not None and self._v6:
            chunk["title"] = call.title
        return chunk

    def _tool_start(self, ev: ToolCallStart) -> list[Chunk]:
        call = _Call(ev.name, ev.dynamic, ev.provider_executed, ev.title, ev.tool_metadata, ev.input_encoding == "text")
        self._calls[ev.id] = call
        self._open_inputs[ev.id] = None
        self._wire_step[ev.id] = None
        self._args_prefix[ev.id] = b'{"type":"tool-input-delta","toolCallId":' + dumps(ev.id) + b',"inputTextDelta":'
        self.delta_pieces[ev.id] = call.args
        chunk: Chunk = {"type": "tool-input-start", "toolCallId": ev.id, "toolName": ev.name}
        if ev.input_encoding is not None and self._v6:
            chunk["inputEncoding"] = ev.input_encoding
        return [self._tool_fields(chunk, call, ev.provider_metadata)]

    def _tool_delta(self, ev: ToolCallArgsDelta) -> list[Chunk]:
        call = self._calls.get(ev.id)
        if call is not None:
            call.args.append(ev.delta)
        return [{"type": "tool-input-delta", "toolCallId": ev.id, "inputTextDelta": ev.delta}]

    def _tool_end(self, ev: ToolCallEnd) -> list[Chunk]:
        call = self._calls.get(ev.id)
        if call is None:
            call = self._calls[ev.id] = _Call(ev.name or "unknown", False, False, None)
            self._wire_step[ev.id] = None
        if ev.tool_metadata is not None:
            call.metadata = ev.tool_metadata
        self._open_inputs.pop(ev.id, None)
        self._args_prefix.pop(ev.id, None)
        self.delta_pieces.pop(ev.id, None)
        error = ev.error
        value: Any = ev.input
        if value is None:
            text = "".join(call.args)
            call.args.clear()
            if call.text_input:
                value = text  # the argument text is the input as it is
            elif not text.strip():
                value = {}
            else:
                try:
                    value = orjson.loads(text)
                except orjson.JSONDecodeError:
                    value = text
                    if error is None:
                        error = _INVALID_INPUT_TEXT
        chunk: Chunk = {
            "type": "tool-input-error" if error is not None else "tool-input-available",
            "toolCallId": ev.id,
            "toolName": call.name,
            "input": safe_json(value),
        }
        self._tool_fields(chunk, call, ev.provider_metadata)
        if error is not None:
            title = chunk.pop("title", None)
            chunk["errorText"] = error
            if title is not None:
                chunk["title"] = title
        return [chunk]

    def _tool_result(self, ev: ToolResult) -> list[Chunk]:
        if ev.id in self._discarded:
            return self._refuse_discarded(ev, ev.id)
        call = self._calls.get(ev.id)
        chunk: Chunk
        if ev.denied:
            if self._v6:
                return [{"type": "tool-output-denied", "toolCallId": ev.id}]
            chunk = {"type": "tool-output-error", "toolCallId": ev.id, "errorText": ev.error or _DENIED_TEXT}
        elif ev.error is not None:
            chunk = {"type": "tool-output-error", "toolCallId": ev.id, "errorText": ev.error}
        else:
            chunk = {"type": "tool-output-available", "toolCallId": ev.id, "output": safe_json(ev.output)}
        if call is not None and call.provider_executed:
            chunk["providerExecuted"] = True
        if ev.provider_metadata is not None and self._v6:
            chunk[_PM] = safe_json(ev.provider_metadata)
        if ev.tool_metadata is not None and self._v6:
            chunk["toolMetadata"] = safe_json(ev.tool_metadata)
            if call is not None:
                call.metadata = ev.tool_metadata
        if ev.preliminary and chunk["type"] == "tool-output-available":
            chunk["preliminary"] = True
        if call is not None and call.dynamic:
            chunk["dynamic"] = True
        return [chunk]

    def _approval_request(self, ev: ToolApprovalRequest) -> list[Chunk]:
        if ev.tool_call_id in self._discarded:
            return self._refuse_discarded(ev, ev.tool_call_id)
        self._approvals[ev.id] = ev.tool_call_id
        if not self._v6:
            data: dict[str, Any] = {"approvalId": ev.id, "toolCallId": ev.tool_call_id}
            if ev.reason is not None:
                data["reason"] = ev.reason
            return [{"type": "data-tool-approval", "id": ev.id, "data": data}]
        chunk: Chunk = {"type": "tool-approval-request", "approvalId": ev.id, "toolCallId": ev.tool_call_id}
        if ev.reason is not None and self._v7:
            chunk["reason"] = ev.reason
        return [chunk]

    def _approval_response(self, ev: ToolApprovalResponse) -> list[Chunk]:
        if self._approvals.get(ev.id) in self._discarded:
            return self._refuse_discarded(ev, self._approvals[ev.id])
        if self._v7:
            chunk: Chunk = {"type": "tool-approval-response", "approvalId": ev.id, "approved": ev.approved}
            if ev.reason is not None:
                chunk["reason"] = ev.reason
            return [chunk]
        if self._v6:
            # The v6 client records the user's own answer; it has no chunk for a server-side answer.
            logger.info("dropped ToolApprovalResponse(%r): the sdk_version 6 client has no chunk for it", ev.id)
            return []
        data: dict[str, Any] = {"approvalId": ev.id}
        tool_call_id = self._approvals.get(ev.id)
        if tool_call_id is not None:
            data["toolCallId"] = tool_call_id
        data["approved"] = ev.approved
        if ev.reason is not None:
            data["reason"] = ev.reason
        return [{"type": "data-tool-approval", "id": ev.id, "data": data}]

    # -- state and history -------------------------------------------------------------------------

    def _state_part(self) -> list[Chunk]:
        self._state_sent = True
        return [{"type": "data-state", "id": STATE_PART_ID, "data": self._state_data()}]

    def _state_data(self) -> Any:
        """The state as :func:`safe_json` gives it. A large state goes out as its ``JSON.stringify`` bytes,
        kept in pieces from one part to the next so that only the pieces that changed are searched and
        rewritten (:class:`~streamkit.stringify.JsText`); a small one is found in orjson's JSON of it, the bytes
        around what changed since the last clean state being all that is searched."""
        value = self._state
        if value is None or type(value) in (str, int, bool):
            return js_value(value)
        if self._state_size >= _FRAGMENT or offloaded():  # the last state was large, or this one is
            pieces = self._state_text.pieces(value)
            breathe()
            size = -1 if pieces is None else sum(map(len, pieces))
            if pieces is not None and size >= _FRAGMENT:
                self._state_size = size
                self._state_clean = None
                # Off the loop the frame writer writes the pieces as they are, never joined (streamkit.frames).
                return Pieces(pieces) if offloaded() else orjson.Fragment(b"".join(pieces))
        return self._small_state_data(value)

    def _small_state_data(self, value: Any) -> Any:
        try:
            raw = dumps(value)
        except TypeError:
            self._state_clean = None
            self._state_size = 0
            return safe_json(value)
        self._state_size = len(raw)
        last = self._state_clean
        if last is None:
            lo, hi = 0, len(raw)
        else:
            p, s = changed_span(last, raw)
            lo, hi = max(0, p - _WINDOW), min(len(raw), len(raw) - s + _WINDOW)
        text = None
        if not needs_rewrite(raw, lo, hi, floats=False) and not _unsafe(raw, lo, hi):
            text = js_json(raw, checked=True)
        if text is None:
            self._state_clean = None
            return safe_json(value)
        self._state_clean = raw
        if len(text) >= _FRAGMENT:
            return orjson.Fragment(text)
        return value if text is raw else safe_json(value)

    def _state_snapshot(self, ev: StateSnapshot | StateUpdate) -> list[Chunk]:
        self._state = ev.state
        return self._state_part()

    def _state_delta(self, ev: StateDelta) -> list[Chunk]:
        try:
            self._state = apply_patch(self._state, ev.patch)
        except PatchError as exc:
            if self._checker.strict:
                raise ProtocolError(ev, f"the patch does not apply to the current state: {exc}") from exc
            logger.warning("dropped StateDelta: the patch does not apply to the current state: %s", exc)
            return []
        return self._state_part()

    def _messages_snapshot(self, ev: MessagesSnapshot) -> list[Chunk]:
        messages: list[Any] = []
        neutral: list[Message] = []
        for item in ev.messages:
            if isinstance(item, Message):
                neutral.append(item)
            else:
                try:
                    neutral.append(Message.model_validate(item))
                except ValueError:
                    messages.append(item)
        data = to_ui_messages(neutral) if not messages else [*to_ui_messages(neutral), *messages]
        return [{"type": "data-messages", "data": safe_json(data), "transient": True}]

    # -- extras ------------------------------------------------------------------------------------

    def _data(self, ev: Data) -> list[Chunk]:
        chunk: Chunk = {"type": f"data-{ev.name}"}
        if ev.id is not None:
            chunk["id"] = ev.id
        chunk["data"] = safe_json(ev.data)
        if ev.transient:
            chunk["transient"] = True
        return [chunk]

    def _source(self, ev: Source) -> list[Chunk]:
        self._sources[ev.id] = None
        chunk: Chunk = {"type": "source-url" if ev.url is not None else "source-document"}
        chunk.update(_source_fields(ev))
        return [chunk]

    def _file(self, ev: File) -> list[Chunk]:
        kind = "reasoning-file" if ev.reasoning and self._v7 else "file"
        chunk: Chunk = {"type": kind, "mediaType": ev.media_type, "url": ev.url}
        if ev.provider_metadata is not None:
            chunk[_PM] = safe_json(ev.provider_metadata)
        return [chunk]

    def _user_message(self, ev: UserMessage) -> list[Chunk]:
        if not self._v7:
            logger.info(
                "dropped UserMessage(%r): the sdk_version %d client has no chunk for it", ev.id, self.sdk_version
            )
            return []
        parts: list[Chunk] = [{"type": "text", "text": ev.text}] if ev.text or not ev.files else []
        for file in ev.files or ():
            part: Chunk = {"type": "file", "mediaType": file.media_type, "url": file.url}
            if file.filename is not None:
                part["filename"] = file.filename
            parts.append(part)
        return [{"type": "steering-message", "id": ev.id, "parts": parts}]

    def _provider_part(self, ev: ProviderPart) -> list[Chunk]:
        if not self._v7:
            logger.info(
                "dropped ProviderPart(%r): the sdk_version %d client has no chunk for it", ev.kind, self.sdk_version
            )
            return []
        chunk: Chunk = {"type": "custom", "kind": ev.kind}
        if ev.provider_metadata is not None:
            chunk[_PM] = safe_json(ev.provider_metadata)
        return [chunk]

    def _message_metadata(self, ev: MessageMetadata) -> list[Chunk]:
        if type(ev.metadata) is not dict:
            # The client deep-merges metadata: a later merge into a non-object crashes it.
            if self._checker.strict:
                raise ProtocolError(ev, "message metadata must be a JSON object")
            logger.warning("dropped MessageMetadata: the metadata is not a JSON object")
            return []
        return [{"type": "message-metadata", "messageMetadata": safe_json(ev.metadata)}]

    def _custom(self, ev: Custom) -> list[Chunk]:
        return [{"type": "data-custom", "data": {"name": ev.name, "value": safe_json(ev.value)}, "transient": True}]

    def _raw(self, ev: Raw) -> list[Chunk]:
        data: dict[str, Any] = {"event": safe_json(ev.event)}
        if ev.source is not None:
            data["source"] = ev.source
        return [{"type": "data-raw", "data": data, "transient": True}]


_HANDLERS: dict[str, Callable[[AISDKMapper, Any], list[Chunk]]] = {
    "run-started": AISDKMapper._run_started,
    "run-finished": AISDKMapper._run_finished,
    "run-error": AISDKMapper._run_error,
    "run-aborted": AISDKMapper._run_aborted,
    "step-started": AISDKMapper._step_started,
    "step-finished": AISDKMapper._step_finished,
    "step-reset": AISDKMapper._step_reset,
    "text-start": AISDKMapper._text_start,
    "text-delta": AISDKMapper._text_delta,
    "text-end": AISDKMapper._text_end,
    "reasoning-start": AISDKMapper._reasoning_start,
    "reasoning-delta": AISDKMapper._reasoning_delta,
    "reasoning-end": AISDKMapper._reasoning_end,
    "tool-call-start": AISDKMapper._tool_start,
    "tool-call-args-delta": AISDKMapper._tool_delta,
    "tool-call-end": AISDKMapper._tool_end,
    "tool-result": AISDKMapper._tool_result,
    "tool-approval-request": AISDKMapper._approval_request,
    "tool-approval-response": AISDKMapper._approval_response,
    "state-snapshot": AISDKMapper._state_snapshot,
    "state-update": AISDKMapper._state_snapshot,
    "state-delta": AISDKMapper._state_delta,
    "messages-snapshot": AISDKMapper._messages_snapshot,
    "data": AISDKMapper._data,
    "source": AISDKMapper._source,
    "file": AISDKMapper._file,
    "message-metadata": AISDKMapper._message_metadata,
    "user-message": AISDKMapper._user_message,
    "provider-part": AISDKMapper._provider_part,
    "custom": AISDKMapper._custom,
    "raw": AISDKMapper._raw,
}
"""The mapper's handler for each (checked) event type: one table for all mappers."""
