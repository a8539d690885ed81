"""Any AI SDK UI Message Stream as a source: its chunks in, ``ChatEvent``\\ s out.

The three parts of every source:

1. **input**: :func:`to_aisdk_request` writes a :class:`~streamkit.events.RunInput` as the body ``useChat``'s
   ``DefaultChatTransport`` posts (the reverse of :func:`streamkit.aisdk.to_run_input`): ``id`` (the thread),
   the history as ``UIMessage`` objects (the state as the ``data-state`` part streamkit reads it from),
   ``trigger`` and, when the run continues an assistant message, its ``messageId``; ``forwarded_props`` (an
   object) and ``extra`` become the app's own body keys;
2. **a pure translator**: :class:`AISDKTranslator`, one chunk dict in, ChatEvents out, and
   :func:`aisdk_events`, which drives it over an async iterable of chunks;
3. **an Agent**: :class:`RemoteAISDKAgent` POSTs the run to an AI SDK chat endpoint (a Next.js route using
   ``toUIMessageStreamResponse``, another streamkit app...) and streams back what it answers, so an AG-UI
   client (CopilotKit, ``HttpAgent``) can talk to an AI SDK backend.

Every chunk type of ``ai`` 7 (and the older ones' subset):

==============================  ===========================================================================
chunk                           ChatEvent
==============================  ===========================================================================
start                           ``RunStarted`` (``messageId``; object ``messageMetadata`` as its metadata,
                                other metadata as ``MessageMetadata``)
start-step / finish-step        ``StepStarted`` / ``StepFinished`` (named ``step-1``, ``step-2``...)
reset-step                      ``StepReset``
finish                          ``RunFinished`` (finish reason; ``messageMetadata`` as its metadata, with
                                streamkit's ``usage`` and ``result`` keys read back); the
                                ``data-interrupt`` parts before it as its interrupts
abort / error                   ``RunAborted`` / ``RunError``
message-metadata                ``MessageMetadata``
text-* / reasoning-*            ``TextStart``/``TextDelta``/``TextEnd`` (citations), ``Reasoning*``
tool-input-start / -delta       ``ToolCallStart`` / ``ToolCallArgsDelta``
tool-input-available / -error   ``ToolCallEnd`` (input; ``errorText`` as its error), after a
                                ``ToolCallStart`` when the call was not started and carries flags
tool-approval-request/-response ``ToolApprovalRequest`` / ``ToolApprovalResponse``
tool-output-available/-error    ``ToolResult`` (output, preliminary / error)
tool-output-denied              ``ToolResult(denied=True)``
source-url / source-document    ``Source``
file / reasoning-file           ``File`` (``reasoning`` for the latter)
custom                          ``ProviderPart``
steering-message                ``UserMessage`` (text and files)
data-state (id ``state``)       ``StateUpdate``
data-messages                   ``MessagesSnapshot``
data-custom / data-raw          ``Custom`` / ``Raw`` (streamkit's transient forms)
data-tool-approval              ``ToolApprovalRequest`` / ``ToolApprovalResponse`` (the ``ai`` 5 form)
other data-<name>               ``Data`` (id, transient)
anything else                   ``Raw`` with source ``ai-sdk``
==============================  ===========================================================================

``[DONE]`` is skipped wherever it appears; the translator stops at ``finish``'s run end, ``abort`` or
``error``. A stream that just ends is finished by the checker downstream, as ``useChat`` takes it.
:class:`RemoteAISDKAgent` never raises: an HTTP error, a body that is not an event stream, a chunk that is
not JSON or a dropped connection end the run with a ``RunError`` carrying what the server said.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from typing import Any, get_args

from ..aisdk.messages import to_ui_messages
from ..aisdk.request import ChatRequest, to_run_input
from ..events import (
    USAGE_COUNTS,
    ChatEvent,
    Custom,
    Data,
    File,
    FinishReason,
    Interrupt,
    MessageMetadata,
    MessagesSnapshot,
    ProviderPart,
    Raw,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    Source,
    StateUpdate,
    StepFinished,
    StepReset,
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
    UserFile,
    UserMessage,
)
from .remote import (
    RemoteAgent,
    citations_of,
    dict_of,
    provider_metadata_of,
    source_of,
    str_of,
    translated,
)

__all__ = [
    "AISDKTranslator",
    "RemoteAISDKAgent",
    "aisdk_events",
    "chat_events",
    "to_aisdk_request",
    "to_chat_request",
]

logger = logging.getLogger("streamkit.sources.aisdk")

Chunk = Mapping[str, Any]

STATE_PART_ID = "state"
_FINISH_REASONS = frozenset(get_args(FinishReason))
_USAGE_KEYS = tuple((wire, name) for name, wire in USAGE_COUNTS)  # wire name, Usage field


# --- input ---------------------------------------------------------------------------------------------


def to_aisdk_request(run: RunInput) -> dict[str, Any]:
    """``run`` as the body ``useChat`` posts (the reverse of :func:`streamkit.aisdk.to_run_input`)."""
    messages = to_ui_messages(run.messages)
    if run.state is not None:
        holder = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
        if holder is None and messages:
            holder = messages[-1]
        if holder is not None:
            holder["parts"] = [*holder["parts"], {"type": "data-state", "id": STATE_PART_ID, "data": run.state}]
    body: dict[str, Any] = {}
    if isinstance(run.forwarded_props, dict):
        body.update(run.forwarded_props)
    body.update(run.extra)
    body.update({"id": run.thread_id, "messages": messages, "trigger": "submit-message"})
    if run.message_id is not None and messages and messages[-1]["id"] == run.message_id:
        body["messageId"] = run.message_id
    if run.resume:  # the answers to the interrupts that ended the last run, as a page sends them
        body["resume"] = [entry.wire() for entry in run.resume]
    return body


# --- the translator ------------------------------------------------------------------------------------


def _ui_source(data: Mapping[str, Any], id_key: str = "sourceId") -> Source | None:
    """An AI SDK source (a ``source-url``/``source-document`` part, or a citation's ``source`` by ``id``): a
    URL source has no media type; its provider metadata is kept."""
    return source_of(data, id_key, media_type_with_url=False, metadata_key="providerMetadata")


def _cited_source(data: dict[str, Any]) -> Source | None:
    return _ui_source(data, "id")


def _usage(value: Any) -> Usage | None:
    data = dict_of(value)
    counts: dict[str, Any] = {name: data[wire] for wire, name in _USAGE_KEYS if isinstance(data.get(wire), int)}
    if any(v < 0 for v in counts.values()) or not (counts or data.get("provider") or data.get("model")):
        return None
    if set(data) - {w for w, _ in _USAGE_KEYS} - {"provider", "model"}:
        return None  # not streamkit's usage shape: leave it in the metadata
    return Usage(**counts, provider=str_of(data.get("provider")), model=str_of(data.get("model")))


def _interrupt(data: Mapping[str, Any]) -> Interrupt | None:
    iid, reason = str_of(data.get("id")), str_of(data.get("reason"))
    if iid is None or reason is None:
        return None
    schema, extra = data.get("responseSchema"), data.get("metadata")
    return Interrupt(
        id=iid,
        reason=reason,
        message=str_of(data.get("message")),
        tool_call_id=str_of(data.get("toolCallId")),
        response_schema=schema if isinstance(schema, dict) else None,
        expires_at=str_of(data.get("expiresAt")),
        metadata=extra if isinstance(extra, dict) else None,
    )


class AISDKTranslator:
    """Translates one response's UI Message Stream chunks into ChatEvents (the module docstring has the table).

    ``feed(chunk)`` returns the ChatEvents for one chunk dict, ``close()`` those for the end of the stream.
    :attr:`finished` turns true at ``finish``, ``abort`` or ``error``; later chunks are ignored (``useChat``
    ignores what follows an ``error``).
    """

    def __init__(self) -> None:
        self.finished = False
        self.message_id: str | None = None
        """The assistant message id the server named in ``start``."""
        self._steps = 0
        self._step: str | None = None
        self._started: set[str] = set()  # tool calls whose input started
        self._text_args: dict[str, list[str]] = {}  # argument text of the calls with text input
        self._interrupts: list[Interrupt] = []

    def feed(self, chunk: Chunk) -> list[ChatEvent]:
        """The ChatEvents for one chunk (raises ``ValueError`` for one without a string ``type``)."""
        if self.finished:
            return []
        kind = chunk.get("type") if isinstance(chunk, Mapping) else None
        if not isinstance(kind, str):
            raise ValueError("the chunk has no string type")
        handler = _HANDLERS.get(kind)
        if handler is None and kind.startswith("data-"):
            handler = AISDKTranslator._data
        if handler is None:
            return [Raw(event=dict(chunk), source="ai-sdk")]
        out: list[ChatEvent] = []
        handler(self, chunk, out)
        return out

    def close(self) -> list[ChatEvent]:
        """The end of the stream: the open step is finished (the checker downstream closes the rest)."""
        out: list[ChatEvent] = []
        if not self.finished:
            self._end_step(out)
        return out

    # -- lifecycle -----------------------------------------------------------------------------------

    def _start(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        self.message_id = str_of(chunk.get("messageId")) or self.message_id
        metadata = chunk.get("messageMetadata")
        is_dict = isinstance(metadata, dict)
        out.append(RunStarted(message_id=self.message_id, metadata=metadata if is_dict else None))
        if metadata is not None and not is_dict:
            out.append(MessageMetadata(metadata=metadata))

    def _start_step(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        self._end_step(out)
        self._steps += 1
        self._step = f"step-{self._steps}"
        out.append(StepStarted(name=self._step))

    def _finish_step(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        self._end_step(out)

    def _end_step(self, out: list[ChatEvent]) -> None:
        if self._step is not None:
            out.append(StepFinished(name=self._step))
            self._step = None

    def _reset_step(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(StepReset())

    def _finish(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        self._end_step(out)
        self.finished = True
        reason = chunk.get("finishReason")
        finish: Any = reason if reason in _FINISH_REASONS else ("other" if reason == "unknown" else "stop")
        raw = chunk.get("messageMetadata")
        metadata: dict[str, Any] | None = None
        usage = result = None
        if isinstance(raw, dict):
            metadata = dict(raw)
            usage = _usage(metadata.get("usage"))
            if usage is not None:
                del metadata["usage"]
            result = metadata.pop("result", None)
        elif raw is not None:
            out.append(MessageMetadata(metadata=raw))
        interrupts = self._interrupts or None
        if interrupts and finish == "interrupted":
            finish = "stop"  # the interrupts say it; the finish reason was theirs
        out.append(
            RunFinished(
                finish_reason=finish, usage=usage, metadata=metadata or None, result=result, interrupts=interrupts
            )
        )

    def _abort(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        self._end_step(out)
        self.finished = True
        out.append(RunAborted(reason=str_of(chunk.get("reason"))))

    def _error(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        self.finished = True
        text = chunk.get("errorText")
        out.append(RunError(message=text if isinstance(text, str) else json.dumps(text)))

    def _message_metadata(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(MessageMetadata(metadata=chunk.get("messageMetadata")))

    # -- text and reasoning --------------------------------------------------------------------------

    def _text_start(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(TextStart(id=str(chunk.get("id", "")), provider_metadata=provider_metadata_of(chunk)))

    def _text_delta(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(TextDelta(id=str(chunk.get("id", "")), delta=str_of(chunk.get("delta")) or ""))

    def _text_end(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(
            TextEnd(
                id=str(chunk.get("id", "")),
                provider_metadata=provider_metadata_of(chunk),
                citations=citations_of(chunk.get("citations"), _cited_source),
            )
        )

    def _reasoning_start(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(ReasoningStart(id=str(chunk.get("id", "")), provider_metadata=provider_metadata_of(chunk)))

    def _reasoning_delta(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(ReasoningDelta(id=str(chunk.get("id", "")), delta=str_of(chunk.get("delta")) or ""))

    def _reasoning_end(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(ReasoningEnd(id=str(chunk.get("id", "")), provider_metadata=provider_metadata_of(chunk)))

    # -- tools ---------------------------------------------------------------------------------------

    def _tool_call_start(self, chunk: Chunk) -> ToolCallStart:
        encoding = chunk.get("inputEncoding")
        metadata = chunk.get("toolMetadata")
        return ToolCallStart(
            id=str(chunk.get("toolCallId", "")),
            name=str(chunk.get("toolName", "")),
            title=str_of(chunk.get("title")),
            dynamic=chunk.get("dynamic") is True,
            provider_executed=chunk.get("providerExecuted") is True,
            provider_metadata=provider_metadata_of(chunk) if chunk.get("type") == "tool-input-start" else None,
            input_encoding=encoding if encoding in ("json", "text") else None,
            tool_metadata=metadata if isinstance(metadata, dict) else None,
        )

    def _tool_input_start(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        cid = str(chunk.get("toolCallId", ""))
        self._started.add(cid)
        if chunk.get("inputEncoding") == "text":
            self._text_args[cid] = []
        out.append(self._tool_call_start(chunk))

    def _tool_input_delta(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        cid = str(chunk.get("toolCallId", ""))
        delta = str_of(chunk.get("inputTextDelta")) or ""
        if cid in self._text_args:
            self._text_args[cid].append(delta)
        out.append(ToolCallArgsDelta(id=cid, delta=delta))

    def _tool_input_end(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        cid = str(chunk.get("toolCallId", ""))
        name = str_of(chunk.get("toolName"))
        flags = any(chunk.get(k) for k in ("dynamic", "providerExecuted", "title", "toolMetadata"))
        if cid not in self._started and flags:
            out.append(self._tool_call_start(chunk))
            self._started.add(cid)
        metadata = chunk.get("toolMetadata")
        error = chunk.get("errorText") if chunk.get("type") == "tool-input-error" else None
        value = chunk.get("input")
        if cid in self._text_args and "".join(self._text_args.pop(cid)) == value:
            value = None  # a text input is its streamed text, as it streamed
        out.append(
            ToolCallEnd(
                id=cid,
                input=value,
                error=None if error is None else str(error),
                name=name if cid not in self._started else None,
                provider_metadata=provider_metadata_of(chunk),
                tool_metadata=metadata if isinstance(metadata, dict) else None,
            )
        )
        self._started.add(cid)

    def _tool_output(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        kind = chunk.get("type")
        metadata = chunk.get("toolMetadata")
        common: dict[str, Any] = {
            "id": str(chunk.get("toolCallId", "")),
            "provider_metadata": provider_metadata_of(chunk),
            "tool_metadata": metadata if isinstance(metadata, dict) else None,
        }
        if kind == "tool-output-denied":
            out.append(ToolResult(denied=True, **common))
        elif kind == "tool-output-error":
            out.append(ToolResult(error=str(chunk.get("errorText", "")), **common))
        else:
            out.append(ToolResult(output=chunk.get("output"), preliminary=chunk.get("preliminary") is True, **common))

    def _approval_request(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(
            ToolApprovalRequest(
                id=str(chunk.get("approvalId", "")),
                tool_call_id=str(chunk.get("toolCallId", "")),
                reason=str_of(chunk.get("reason")),
            )
        )

    def _approval_response(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(
            ToolApprovalResponse(
                id=str(chunk.get("approvalId", "")),
                approved=chunk.get("approved") is True,
                reason=str_of(chunk.get("reason")),
            )
        )

    # -- extras --------------------------------------------------------------------------------------

    def _source_part(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        source = _ui_source(chunk)
        if source is not None:
            out.append(source)

    def _file(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(
            File(
                url=str(chunk.get("url", "")),
                media_type=str(chunk.get("mediaType", "")),
                provider_metadata=provider_metadata_of(chunk),
                reasoning=chunk.get("type") == "reasoning-file",
            )
        )

    def _custom(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        out.append(ProviderPart(kind=str(chunk.get("kind", "")), provider_metadata=provider_metadata_of(chunk)))

    def _steering(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        parts = [p for p in chunk.get("parts") or () if isinstance(p, dict)]
        text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
        files = [
            UserFile(
                url=str(p.get("url", "")), media_type=str(p.get("mediaType", "")), filename=str_of(p.get("filename"))
            )
            for p in parts
            if p.get("type") == "file"
        ]
        out.append(UserMessage(id=str(chunk.get("id", "")), text=text, files=files or None))

    def _data(self, chunk: Chunk, out: list[ChatEvent]) -> None:
        kind = str(chunk["type"])[5:]
        data = chunk.get("data")
        part_id = str_of(chunk.get("id"))
        value = dict_of(data)
        if kind == "state" and part_id == STATE_PART_ID:
            out.append(StateUpdate(state=data))
        elif kind == "messages" and isinstance(data, list):
            self._messages(data, out)
        elif kind == "custom" and isinstance(value.get("name"), str):
            out.append(Custom(name=value["name"], value=value.get("value")))
        elif kind == "raw" and "event" in value:
            out.append(Raw(event=value.get("event"), source=str_of(value.get("source"))))
        elif kind == "interrupt" and _interrupt(value) is not None:
            interrupt = _interrupt(value)
            assert interrupt is not None
            self._interrupts.append(interrupt)
        elif kind == "tool-approval" and isinstance(value.get("approvalId"), str):
            if "approved" in value:
                out.append(
                    ToolApprovalResponse(
                        id=value["approvalId"],
                        approved=value.get("approved") is True,
                        reason=str_of(value.get("reason")),
                    )
                )
            elif isinstance(value.get("toolCallId"), str):
                out.append(
                    ToolApprovalRequest(
                        id=value["approvalId"], tool_call_id=value["toolCallId"], reason=str_of(value.get("reason"))
                    )
                )
        else:
            out.append(Data(name=kind, data=data, id=part_id, transient=chunk.get("transient") is True))

    def _messages(self, data: list[Any], out: list[ChatEvent]) -> None:
        try:
            request = ChatRequest.model_validate({"id": "", "messages": data})
        except ValueError as exc:
            logger.warning("dropped data-messages: the messages are not valid: %s", exc)
            return
        out.append(MessagesSnapshot(messages=to_run_input(request, run_id="", allow_system_messages=True).messages))


_HANDLERS: dict[str, Any] = {
    "start": AISDKTranslator._start,
    "start-step": AISDKTranslator._start_step,
    "finish-step": AISDKTranslator._finish_step,
    "reset-step": AISDKTranslator._reset_step,
    "finish": AISDKTranslator._finish,
    "abort": AISDKTranslator._abort,
    "error": AISDKTranslator._error,
    "message-metadata": AISDKTranslator._message_metadata,
    "text-start": AISDKTranslator._text_start,
    "text-delta": AISDKTranslator._text_delta,
    "text-end": AISDKTranslator._text_end,
    "reasoning-start": AISDKTranslator._reasoning_start,
    "reasoning-delta": AISDKTranslator._reasoning_delta,
    "reasoning-end": AISDKTranslator._reasoning_end,
    "tool-input-start": AISDKTranslator._tool_input_start,
    "tool-input-delta": AISDKTranslator._tool_input_delta,
    "tool-input-available": AISDKTranslator._tool_input_end,
    "tool-input-error": AISDKTranslator._tool_input_end,
    "tool-approval-request": AISDKTranslator._approval_request,
    "tool-approval-response": AISDKTranslator._approval_response,
    "tool-output-available": AISDKTranslator._tool_output,
    "tool-output-error": AISDKTranslator._tool_output,
    "tool-output-denied": AISDKTranslator._tool_output,
    "source-url": AISDKTranslator._source_part,
    "source-document": AISDKTranslator._source_part,
    "file": AISDKTranslator._file,
    "reasoning-file": AISDKTranslator._file,
    "custom": AISDKTranslator._custom,
    "steering-message": AISDKTranslator._steering,
}


# --- wrappers ------------------------------------------------------------------------------------------


def aisdk_events(chunks: AsyncIterable[Chunk] | Iterable[Chunk]) -> AsyncIterator[ChatEvent]:
    """The ChatEvents for a stream of UI Message Stream chunk dicts.

    A chunk without a type, or an exception raised while iterating ``chunks``, ends the run with a
    ``RunError``; nothing escapes as an exception.
    """
    return translated(chunks, AISDKTranslator(), stream="the stream", item="chunk")


class RemoteAISDKAgent(RemoteAgent):
    """An :class:`~streamkit.events.Agent` that runs on a remote AI SDK chat endpoint at ``url``.

    Each run is POSTed as a ``useChat`` body (:func:`to_aisdk_request`) with ``headers`` added; the UI
    Message Stream it answers is translated by :class:`AISDKTranslator`. ``http_client`` (an
    ``httpx.AsyncClient``, kept open) shares connections and sets timeouts; without one each run makes its
    own (``timeout``: connect within 5 s, no read limit). Failures end the run with a ``RunError`` (codes
    ``http_<status>``, ``not_event_stream``, ``invalid_chunk``, ``unreachable``, ``timeout``), never an
    exception. When the run continues an assistant message, that id is kept on ``RunStarted``.
    """

    server = "AI SDK server"
    item = "chunk"
    framing = "sse"

    def request(self, run: RunInput) -> dict[str, Any]:
        """``run`` as the body ``useChat`` posts."""
        return to_aisdk_request(run)

    def translator(self, run: RunInput) -> AISDKTranslator:
        """A fresh translator."""
        return AISDKTranslator()

    def parse(self, data: str) -> dict[str, Any] | None:
        """One event's chunk (``[DONE]`` is skipped)."""
        if data == "[DONE]":
            return None
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise ValueError(f"a chunk is not JSON ({exc}): {data[:200]!r}") from None
        if not isinstance(chunk, dict):
            raise ValueError("a chunk is not a JSON object")
        return chunk

    def started(self, event: RunStarted, run: RunInput) -> RunStarted:
        """The run continues the assistant message the request named, when it named one."""
        if run.message_id is None or event.message_id == run.message_id:
            return event
        return event.model_copy(update={"message_id": run.message_id})


to_chat_request = to_aisdk_request
"""The earlier name of :func:`to_aisdk_request`."""
chat_events = aisdk_events
"""The earlier name of :func:`aisdk_events`."""
