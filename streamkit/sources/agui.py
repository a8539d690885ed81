"""Any AG-UI server as a source: AG-UI events in, ``ChatEvent``\\ s out.

The three parts of every source:

1. **input**: :func:`to_agui_request` writes a :class:`~streamkit.events.RunInput` as the ``RunAgentInput``
   body an AG-UI server reads (the reverse of :func:`streamkit.agui.to_run_input`): the history as AG-UI
   messages (tool calls on their assistant message, results as ``tool`` messages), state, frontend tools,
   context, ``forwardedProps`` and ``resume`` (answered tool approvals become resume entries too);
2. **a pure translator**: :class:`AGUITranslator`, one AG-UI event dict in, ChatEvents out, and
   :func:`agui_events`, which drives it over an async iterable of event dicts and yields a well-formed run;
3. **an Agent**: :class:`RemoteAGUIAgent` POSTs the run to an AG-UI endpoint (LangGraph, Mastra, CrewAI,
   another streamkit app...) and streams back what it answers, so a ``useChat`` page can talk to it.

What each AG-UI event becomes:

==================================  ========================================================================
AG-UI event                         ChatEvent
==================================  ========================================================================
RUN_STARTED                         ``RunStarted`` (thread, run and parent run ids, metadata)
RUN_FINISHED                        ``RunFinished`` (result, usage, ``metadata.finishReason``); an
                                    ``interrupt`` outcome gives its interrupts (``tool_approval`` ones as
                                    ``ToolApprovalRequest``), a ``cancelled`` one ``RunAborted``
RUN_ERROR                           ``RunError`` (message and code as sent)
STEP_STARTED / STEP_FINISHED        ``StepStarted`` / ``StepFinished``
TEXT_MESSAGE_START/CONTENT/END      ``TextStart``/``TextDelta``/``TextEnd`` (``metadata.providerMetadata``,
                                    ``citations``); role ``user``: one ``UserMessage`` (with the files
                                    streamkit sends after it); ``system``/``developer``: ``Custom``
                                    ``ag-ui.message`` ``{id, role, content}``
REASONING_MESSAGE_START/CONTENT/END ``ReasoningStart``/``ReasoningDelta``/``ReasoningEnd`` (with the
                                    ``REASONING_ENCRYPTED_VALUE`` of the message); spans add nothing
TOOL_CALL_START/ARGS/END            ``ToolCallStart``/``ToolCallArgsDelta``/``ToolCallEnd`` (parsed input;
                                    title, dynamic, providerExecuted, inputEncoding, toolMetadata, error
                                    from ``metadata``)
TOOL_CALL_RESULT                    ``ToolResult`` (content parsed as JSON when it is JSON; ``isError`` /
                                    ``denied`` metadata as error / denied)
``*_CHUNK``                         expanded as the client expands them, then as above
STATE_SNAPSHOT / STATE_DELTA        applied to the held state, which goes out as ``StateUpdate`` (a patch
                                    that does not apply is dropped, as the client drops it)
MESSAGES_SNAPSHOT                   ``MessagesSnapshot`` (neutral messages); the ends and restarts a
                                    producer puts around it for blocks still streaming are left out
ACTIVITY_SNAPSHOT / _DELTA          ``Data`` named ``activity-<activityType>`` with the message id as its
                                    id (replaced in place), the content patched by deltas
CUSTOM                              streamkit's own names back to their events (``streamkit.data`` ->
                                    ``Data``, ``.source``, ``.file``, ``.message_metadata``,
                                    ``.tool_approval_response``, ``.preliminary_tool_result``,
                                    ``.step_reset``); any other name ``Custom``
RAW                                 ``Raw``
anything else (SUBAGENT_*, a        ``Raw`` with source ``ag-ui`` (it changes no message or state)
tool call's encrypted value,
unknown types)
==================================  ========================================================================

The translator stops at the first terminal event. :class:`RemoteAGUIAgent` never raises: an HTTP error, a
body that is not an event stream, a frame that is not an event, a dropped connection or a stream that ends
before the run did all end the run with a ``RunError`` carrying what the server said.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from typing import Any, get_args

from ..agui.messages import to_agui_messages
from ..agui.request import RunAgentInput, to_run_input
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
    Raw,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunAborted,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
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
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
    UserFile,
    UserMessage,
)
from ..patch import apply_patch
from .remote import (
    RemoteAgent,
    Translator,
    citations_of,
    dict_of,
    provider_metadata_of,
    source_of,
    str_of,
    translated,
)

__all__ = [
    "AGUITranslator",
    "RemoteAGUIAgent",
    "agui_events",
    "chat_events",
    "to_agui_request",
    "to_run_agent_input",
]

logger = logging.getLogger("streamkit.sources.agui")

Event = Mapping[str, Any]

_FINISH_REASONS = frozenset(get_args(FinishReason))
_DENIED_TEXT = "The tool call was denied."
_TERMINAL = frozenset({"RUN_FINISHED", "RUN_ERROR"})
# Events that end the lane's chunk-built stream (spec section 8); run events and snapshots end every lane.
_CLOSES_LANE = frozenset(
    {
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS",
        "TOOL_CALL_END", "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "STATE_DELTA", "CUSTOM", "STEP_STARTED",
        "STEP_FINISHED", "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
    }
)  # fmt: skip
_CLOSES_ALL = frozenset({"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"})
_LEGACY = {
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}
_USAGE_KEYS = tuple((wire, name) for name, wire in USAGE_COUNTS)  # wire name, Usage field


# --- input ---------------------------------------------------------------------------------------------


def to_agui_request(run: RunInput) -> dict[str, Any]:
    """``run`` as the ``RunAgentInput`` body an AG-UI server reads (camelCase, optional fields omitted).

    The reverse of :func:`streamkit.agui.to_run_input`. Approvals the user answered for calls that have no
    result yet are added to ``resume`` (``{"interruptId": <approval id>, "status": "resolved",
    "payload": {"approved", "reason"?}}``), since an AG-UI server asks for them as interrupts.
    """
    body: dict[str, Any] = {
        "threadId": run.thread_id,
        "runId": run.run_id,
        "protocolVersion": "1.0",
        "state": {} if run.state is None else run.state,
        "messages": to_agui_messages(run.messages),
        "tools": [_tool(t.name, t.description, t.parameters) for t in run.tools],
        "context": [{"description": c.description, "value": c.value} for c in run.context],
        "forwardedProps": {} if run.forwarded_props is None else run.forwarded_props,
    }
    if run.parent_run_id is not None:
        body["parentRunId"] = run.parent_run_id
    resume = [entry.wire() for entry in run.resume]
    named = {r["interruptId"] for r in resume}
    answered = {p.id for m in run.messages for p in m.parts if isinstance(p, ToolResultPart)}
    for message in run.messages:
        for part in message.parts:
            if not isinstance(part, ToolCallPart) or part.approval is None or part.approval.approved is None:
                continue
            if part.id in answered or part.approval.id in named:
                continue
            payload: dict[str, Any] = {"approved": part.approval.approved}
            if part.approval.reason is not None:
                payload["reason"] = part.approval.reason
            resume.append({"interruptId": part.approval.id, "status": "resolved", "payload": payload})
    if resume:
        body["resume"] = resume
    return body


def _tool(name: str, description: str, parameters: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": description}
    if parameters is not None:
        out["parameters"] = parameters
    return out


# --- the translator ------------------------------------------------------------------------------------


def _json_or_text(text: str) -> Any:
    """``text`` parsed as JSON when it is JSON, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _usage(value: Any) -> Usage | None:
    entries = [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []
    if not entries:
        return None
    counts: dict[str, Any] = {}
    for wire, name in _USAGE_KEYS:
        numbers = [e[wire] for e in entries if isinstance(e.get(wire), int) and e[wire] >= 0]
        if numbers:
            counts[name] = sum(numbers)
    if len(entries) == 1:
        counts["provider"] = str_of(entries[0].get("provider"))
        counts["model"] = str_of(entries[0].get("model"))
    return Usage(**counts)


class _Lane:
    """The chunk-built stream open in one lane (``subagentRunId``), as the client's chunk expansion keeps it."""

    __slots__ = ("id", "kind")

    def __init__(self, kind: str, id: str) -> None:
        self.kind = kind
        self.id = id


class AGUITranslator:
    """Translates one run's AG-UI event dicts into ChatEvents (see the module docstring for the table).

    ``state`` is the state the server starts from (the request's): ``STATE_DELTA`` patches apply to it.
    ``feed(event)`` returns the ChatEvents for one event, ``close()`` those still held back when the stream
    ends. :attr:`finished` turns true at the run's terminal event; later events are ignored.
    """

    def __init__(self, *, state: Any = None) -> None:
        self.state: Any = state
        """The state as the server's events have left it."""
        self.finished = False
        self._lanes: dict[str | None, _Lane] = {}
        self._args: dict[str, list[str]] = {}
        self._encodings: dict[str, str | None] = {}
        self._user: dict[str, dict[str, Any]] = {}  # user / system messages being streamed
        self._held: list[ChatEvent] = []  # ends held for one event (see _hold)
        self._after_snapshot = False
        self._encrypted: dict[str, str] = {}
        self._activities: dict[str, tuple[str, Any]] = {}

    # -- the translator protocol ---------------------------------------------------------------------

    def feed(self, event: Event) -> list[ChatEvent]:
        """The ChatEvents for one AG-UI event dict (raises ``ValueError`` for one that is not an event)."""
        if self.finished:
            return []
        kind = event.get("type") if isinstance(event, Mapping) else None
        if not isinstance(kind, str) or not kind:
            raise ValueError("Invalid event: the frame carries no event type.")
        kind = _LEGACY.get(kind, kind)
        out: list[ChatEvent] = []
        for ev in self._expand(kind, event):
            self._dispatch(ev, out)
            if self.finished:
                break
        return out

    def close(self) -> list[ChatEvent]:
        """What is still held back when the stream ends (a run that did not finish is left open)."""
        out: list[ChatEvent] = []
        self._flush(out)
        return out

    # -- chunk expansion (spec section 8) ------------------------------------------------------------

    def _expand(self, kind: str, event: Event) -> list[tuple[str, Event]]:
        lane_key = str_of(event.get("subagentRunId"))
        if kind in _CLOSES_ALL:
            out = [end for key in list(self._lanes) for end in self._end_lane(key)]
            return [*out, (kind, event)]
        if kind in _CLOSES_LANE:
            return [*self._end_lane(lane_key), (kind, event)]
        if kind not in ("TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK"):
            return [(kind, event)]
        lane = self._lanes.get(lane_key)
        stream = {"TEXT_MESSAGE_CHUNK": "text", "TOOL_CALL_CHUNK": "tool", "REASONING_MESSAGE_CHUNK": "reasoning"}[kind]
        id_key = "toolCallId" if stream == "tool" else "messageId"
        given = str_of(event.get(id_key))
        delta = str_of(event.get("delta"))
        if lane is not None and lane.kind == stream and (given is None or given == lane.id):
            if stream == "tool":
                return [("TOOL_CALL_ARGS", {"toolCallId": lane.id, "delta": delta})] if delta is not None else []
            content = "TEXT_MESSAGE_CONTENT" if stream == "text" else "REASONING_MESSAGE_CONTENT"
            return [(content, {"messageId": lane.id, "delta": delta or "", "metadata": event.get("metadata")})]
        out = self._end_lane(lane_key)
        if given is None:
            raise ValueError(f"First {kind} must have a {id_key}")
        self._lanes[lane_key] = _Lane(stream, given)
        if stream == "text":
            start = {"messageId": given, "role": event.get("role") or "assistant", "metadata": event.get("metadata")}
            out.append(("TEXT_MESSAGE_START", start))
            if delta is not None:
                out.append(("TEXT_MESSAGE_CONTENT", {"messageId": given, "delta": delta}))
        elif stream == "reasoning":
            out.append(("REASONING_MESSAGE_START", {"messageId": given, "metadata": event.get("metadata")}))
            if delta is not None:
                out.append(("REASONING_MESSAGE_CONTENT", {"messageId": given, "delta": delta}))
        else:
            name = str_of(event.get("toolCallName"))
            if name is None:
                raise ValueError("First TOOL_CALL_CHUNK must have a toolCallName")
            start = {
                "toolCallId": given,
                "toolCallName": name,
                "parentMessageId": event.get("parentMessageId"),
                "metadata": event.get("metadata"),
            }
            out.append(("TOOL_CALL_START", start))
            if delta is not None:
                out.append(("TOOL_CALL_ARGS", {"toolCallId": given, "delta": delta}))
        return out

    def _end_lane(self, key: str | None) -> list[tuple[str, Event]]:
        lane = self._lanes.pop(key, None)
        if lane is None:
            return []
        if lane.kind == "tool":
            return [("TOOL_CALL_END", {"toolCallId": lane.id})]
        end = "TEXT_MESSAGE_END" if lane.kind == "text" else "REASONING_MESSAGE_END"
        return [(end, {"messageId": lane.id})]

    # -- held ends -----------------------------------------------------------------------------------
    #
    # A producer ends what is streaming before a MESSAGES_SNAPSHOT and starts it again after it (the client
    # would drop it otherwise). Those ends and restarts are not the core's: ends are held for one event, and
    # a start after a snapshot that matches a held end cancels both. A streamed user message is held the
    # same way, to collect the files streamkit sends right after it.

    def _flush(self, out: list[ChatEvent]) -> None:
        out += self._held
        self._held = []
        self._after_snapshot = False

    def _reopens(self, kind: str, block_id: str) -> bool:
        """Whether a start of ``block_id`` cancels a held end (a restart after a snapshot)."""
        if not self._after_snapshot:
            return False
        for i, held in enumerate(self._held):
            if held.type == kind and getattr(held, "id", None) == block_id:
                del self._held[i]
                return True
        return False

    # -- events --------------------------------------------------------------------------------------

    def _dispatch(self, item: tuple[str, Event], out: list[ChatEvent]) -> None:
        kind, event = item
        handler = _HANDLERS.get(kind)
        if kind == "MESSAGES_SNAPSHOT":
            self._messages_snapshot(event, out)
            return
        if kind in ("TEXT_MESSAGE_START", "REASONING_MESSAGE_START", "TOOL_CALL_START") and self._after_snapshot:
            block = str_of(event.get("toolCallId" if kind == "TOOL_CALL_START" else "messageId")) or ""
            ended = {"TEXT_MESSAGE_START": "text-end", "REASONING_MESSAGE_START": "reasoning-end"}
            if self._reopens(ended.get(kind, "tool-call-end"), block):
                return
        if kind == "REASONING_ENCRYPTED_VALUE" and self._encrypted_value(event):
            return
        if kind == "CUSTOM" and event.get("name") == "streamkit.file" and self._user_file(event):
            return
        if kind not in ("TEXT_MESSAGE_END", "REASONING_MESSAGE_END", "TOOL_CALL_END"):
            self._flush(out)
        if handler is None:
            out.append(Raw(event=dict(event), source="ag-ui"))
            return
        handler(self, event, out)

    def _run_started(self, event: Event, out: list[ChatEvent]) -> None:
        metadata = event.get("metadata")
        out.append(
            RunStarted(
                thread_id=str_of(event.get("threadId")),
                run_id=str_of(event.get("runId")),
                parent_run_id=str_of(event.get("parentRunId")),
                metadata=metadata if isinstance(metadata, dict) else None,
            )
        )

    def _run_finished(self, event: Event, out: list[ChatEvent]) -> None:
        self.finished = True
        outcome = dict_of(event.get("outcome"))
        metadata = dict(dict_of(event.get("metadata")))
        if outcome.get("type") == "cancelled":
            out.append(RunAborted(reason=str_of(metadata.get("reason"))))
            return
        reason = metadata.pop("finishReason", None)
        finish: Any = reason if reason in _FINISH_REASONS else "stop"
        interrupts: list[Interrupt] = []
        if outcome.get("type") == "interrupt":
            for item in outcome.get("interrupts") or ():
                data = dict_of(item)
                iid, why = str_of(data.get("id")), str_of(data.get("reason"))
                if iid is None or why is None:
                    continue
                call = str_of(data.get("toolCallId"))
                if why == "tool_approval" and call is not None:
                    out.append(ToolApprovalRequest(id=iid, tool_call_id=call, reason=str_of(data.get("message"))))
                    continue
                schema, extra = data.get("responseSchema"), data.get("metadata")
                interrupts.append(
                    Interrupt(
                        id=iid,
                        reason=why,
                        message=str_of(data.get("message")),
                        tool_call_id=call,
                        response_schema=schema if isinstance(schema, dict) else None,
                        expires_at=str_of(data.get("expiresAt")),
                        metadata=extra if isinstance(extra, dict) else None,
                    )
                )
        out.append(
            RunFinished(
                finish_reason=finish,
                usage=_usage(event.get("usage")),
                metadata=metadata or None,
                result=event.get("result"),
                interrupts=interrupts or None,
            )
        )

    def _run_error(self, event: Event, out: list[ChatEvent]) -> None:
        self.finished = True
        message = str_of(event.get("message"))
        out.append(RunError(message=message if message is not None else "", code=str_of(event.get("code"))))

    def _step_started(self, event: Event, out: list[ChatEvent]) -> None:
        out.append(StepStarted(name=str(event.get("stepName", ""))))

    def _step_finished(self, event: Event, out: list[ChatEvent]) -> None:
        out.append(StepFinished(name=str(event.get("stepName", ""))))

    # -- text and reasoning --------------------------------------------------------------------------

    def _text_start(self, event: Event, out: list[ChatEvent]) -> None:
        mid = str(event.get("messageId", ""))
        role = event.get("role") or "assistant"
        if role != "assistant":
            self._user[mid] = {"role": role, "text": []}
            return
        meta = dict_of(event.get("metadata"))
        out.append(TextStart(id=mid, provider_metadata=provider_metadata_of(meta)))

    def _text_content(self, event: Event, out: list[ChatEvent]) -> None:
        mid = str(event.get("messageId", ""))
        delta = str_of(event.get("delta")) or ""
        if mid in self._user:
            self._user[mid]["text"].append(delta)
            return
        out.append(TextDelta(id=mid, delta=delta))

    def _text_end(self, event: Event, out: list[ChatEvent]) -> None:
        mid = str(event.get("messageId", ""))
        message = self._user.pop(mid, None)
        if message is not None:
            text = "".join(message["text"])
            if message["role"] == "user":
                self._held.append(UserMessage(id=mid, text=text))
            else:
                out.append(Custom(name="ag-ui.message", value={"id": mid, "role": message["role"], "content": text}))
            return
        meta = dict_of(event.get("metadata"))
        self._held.append(
            TextEnd(id=mid, provider_metadata=provider_metadata_of(meta), citations=citations_of(meta.get("citations")))
        )

    def _user_file(self, event: Event) -> bool:
        value = dict_of(event.get("value"))
        mid = str_of(value.get("messageId"))
        for i, held in enumerate(self._held):
            if isinstance(held, UserMessage) and held.id == mid:
                file = UserFile(
                    url=str(value.get("url", "")),
                    media_type=str(value.get("mediaType", "")),
                    filename=str_of(value.get("filename")),
                )
                self._held[i] = held.model_copy(update={"files": [*(held.files or ()), file]})
                return True
        return False

    def _reasoning_start(self, event: Event, out: list[ChatEvent]) -> None:
        out.append(
            ReasoningStart(
                id=str(event.get("messageId", "")),
                provider_metadata=provider_metadata_of(dict_of(event.get("metadata"))),
            )
        )

    def _reasoning_content(self, event: Event, out: list[ChatEvent]) -> None:
        out.append(ReasoningDelta(id=str(event.get("messageId", "")), delta=str_of(event.get("delta")) or ""))

    def _reasoning_end(self, event: Event, out: list[ChatEvent]) -> None:
        mid = str(event.get("messageId", ""))
        encrypted = self._encrypted.pop(mid, None)
        self._held.append(
            ReasoningEnd(
                id=mid,
                provider_metadata=provider_metadata_of(dict_of(event.get("metadata"))),
                encrypted_value=encrypted,
            )
        )

    def _encrypted_value(self, event: Event) -> bool:
        """Keep a reasoning message's encrypted value for its ``ReasoningEnd`` (False: not a message's)."""
        entity, value = str_of(event.get("entityId")), str_of(event.get("encryptedValue"))
        if event.get("subtype") != "message" or entity is None or value is None:
            return False
        for i, held in enumerate(self._held):
            if isinstance(held, ReasoningEnd) and held.id == entity:
                self._held[i] = held.model_copy(update={"encrypted_value": value})
                return True
        self._encrypted[entity] = value
        return True

    def _span(self, event: Event, out: list[ChatEvent]) -> None:
        """REASONING_START / REASONING_END: a span around reasoning messages; it adds nothing."""

    # -- tools ---------------------------------------------------------------------------------------

    def _tool_start(self, event: Event, out: list[ChatEvent]) -> None:
        cid = str(event.get("toolCallId", ""))
        meta = dict_of(event.get("metadata"))
        encoding = meta.get("inputEncoding") if meta.get("inputEncoding") in ("json", "text") else None
        self._args[cid] = []
        self._encodings[cid] = encoding
        tool_metadata = meta.get("toolMetadata")
        out.append(
            ToolCallStart(
                id=cid,
                name=str(event.get("toolCallName", "")),
                parent_message_id=str_of(event.get("parentMessageId")),
                title=str_of(meta.get("title")),
                dynamic=meta.get("dynamic") is True,
                provider_executed=meta.get("providerExecuted") is True,
                provider_metadata=provider_metadata_of(meta),
                input_encoding=encoding,
                tool_metadata=tool_metadata if isinstance(tool_metadata, dict) else None,
            )
        )

    def _tool_args(self, event: Event, out: list[ChatEvent]) -> None:
        cid = str(event.get("toolCallId", ""))
        delta = str_of(event.get("delta")) or ""
        self._args.setdefault(cid, []).append(delta)
        out.append(ToolCallArgsDelta(id=cid, delta=delta))

    def _tool_end(self, event: Event, out: list[ChatEvent]) -> None:
        cid = str(event.get("toolCallId", ""))
        meta = dict_of(event.get("metadata"))
        text = "".join(self._args.get(cid, ()))  # kept: a restart after a snapshot continues the call
        encoding = self._encodings.get(cid)
        error = str_of(meta.get("error"))
        value: Any = None
        streamed = bool(self._args.get(cid))
        if encoding == "text":
            value = text
        elif error is not None:
            # A call the server marked invalid keeps its argument text as it was (parsed when it is JSON).
            value = (_json_or_text(text) if text.strip() else text) if streamed else None
        elif text.strip():
            parsed = _json_or_text(text)
            # Unparsable text is left to the adapters, which report the call as invalid.
            if parsed is not text:
                value = parsed
        tool_metadata = meta.get("toolMetadata")
        self._held.append(
            ToolCallEnd(
                id=cid,
                input=value,
                error=error,
                provider_metadata=provider_metadata_of(meta),
                tool_metadata=tool_metadata if isinstance(tool_metadata, dict) else None,
            )
        )

    def _tool_result(self, event: Event, out: list[ChatEvent]) -> None:
        meta = dict_of(event.get("metadata"))
        content = event.get("content")
        tool_metadata = meta.get("toolMetadata")
        common: dict[str, Any] = {
            "id": str(event.get("toolCallId", "")),
            "message_id": str_of(event.get("messageId")),
            "provider_metadata": provider_metadata_of(meta),
            "tool_metadata": tool_metadata if isinstance(tool_metadata, dict) else None,
        }
        text = content if isinstance(content, str) else json.dumps(content)
        if meta.get("denied") is True:
            out.append(ToolResult(denied=True, error=None if text == _DENIED_TEXT else text, **common))
        elif meta.get("isError") is True:
            out.append(ToolResult(error=text, **common))
        else:
            output = _json_or_text(content) if isinstance(content, str) else content
            out.append(ToolResult(output=output, **common))

    # -- state and history ---------------------------------------------------------------------------

    def _state_snapshot(self, event: Event, out: list[ChatEvent]) -> None:
        self.state = event.get("snapshot")
        out.append(StateUpdate(state=self.state))

    def _state_delta(self, event: Event, out: list[ChatEvent]) -> None:
        try:
            self.state = apply_patch(self.state, list(event.get("delta") or ()))
        except Exception as exc:  # the client drops a patch that does not apply, and keeps going
            logger.warning("dropped STATE_DELTA: the patch does not apply to the state: %s", exc)
            return
        out.append(StateUpdate(state=self.state))

    def _messages_snapshot(self, event: Event, out: list[ChatEvent]) -> None:
        try:
            body = RunAgentInput.model_validate({"threadId": "", "runId": "", "messages": event.get("messages")})
        except ValueError as exc:
            logger.warning("dropped MESSAGES_SNAPSHOT: the messages are not valid: %s", exc)
            return
        # The ends held right before the snapshot may belong to blocks restarted right after it.
        ends: list[ChatEvent] = [e for e in self._held if e.type in ("text-end", "reasoning-end", "tool-call-end")]
        others = [e for e in self._held if e not in ends]
        out += others
        self._held = ends
        out.append(MessagesSnapshot(messages=to_run_input(body).messages))
        self._after_snapshot = True

    def _activity(self, event: Event, out: list[ChatEvent]) -> None:
        mid = str(event.get("messageId", ""))
        kind = str(event.get("activityType", ""))
        if event.get("type") == "ACTIVITY_SNAPSHOT":
            known = self._activities.get(mid)
            content = event.get("content")
            if known is not None and event.get("replace") is False:
                return
            self._activities[mid] = (kind, content)
        else:
            known = self._activities.get(mid)
            if known is None:
                return  # the client ignores a delta for an activity it does not hold
            try:
                content = apply_patch(known[1], list(event.get("patch") or ()))
            except Exception as exc:
                logger.warning("dropped ACTIVITY_DELTA: the patch does not apply: %s", exc)
                return
            self._activities[mid] = (known[0], content)
        out.append(Data(name=f"activity-{self._activities[mid][0]}", data=content, id=mid))

    # -- extras --------------------------------------------------------------------------------------

    def _custom(self, event: Event, out: list[ChatEvent]) -> None:
        name = str(event.get("name", ""))
        value = event.get("value")
        data = dict_of(value)
        if name == "streamkit.data" and isinstance(data.get("name"), str):
            out.append(
                Data(
                    name=data["name"],
                    data=data.get("data"),
                    id=str_of(data.get("id")),
                    transient=bool(data.get("transient")),
                )
            )
        elif name == "streamkit.source" and source_of(dict_of(value)) is not None:
            source = source_of(dict_of(value))
            assert source is not None
            out.append(source)
        elif name == "streamkit.file" and isinstance(data.get("url"), str) and "messageId" not in data:
            out.append(
                File(url=data["url"], media_type=str(data.get("mediaType", "")), reasoning=bool(data.get("reasoning")))
            )
        elif name == "streamkit.message_metadata":
            out.append(MessageMetadata(metadata=value))
        elif name == "streamkit.tool_approval_response" and isinstance(data.get("id"), str):
            out.append(
                ToolApprovalResponse(
                    id=data["id"], approved=data.get("approved") is True, reason=str_of(data.get("reason"))
                )
            )
        elif name == "streamkit.preliminary_tool_result" and isinstance(data.get("toolCallId"), str):
            out.append(ToolResult(id=data["toolCallId"], output=data.get("output"), preliminary=True))
        elif name == "streamkit.step_reset":
            out.append(StepReset())
        else:
            out.append(Custom(name=name, value=value))

    def _raw(self, event: Event, out: list[ChatEvent]) -> None:
        out.append(Raw(event=event.get("event"), source=str_of(event.get("source"))))


_HANDLERS: dict[str, Any] = {
    "RUN_STARTED": AGUITranslator._run_started,
    "RUN_FINISHED": AGUITranslator._run_finished,
    "RUN_ERROR": AGUITranslator._run_error,
    "STEP_STARTED": AGUITranslator._step_started,
    "STEP_FINISHED": AGUITranslator._step_finished,
    "TEXT_MESSAGE_START": AGUITranslator._text_start,
    "TEXT_MESSAGE_CONTENT": AGUITranslator._text_content,
    "TEXT_MESSAGE_END": AGUITranslator._text_end,
    "REASONING_START": AGUITranslator._span,
    "REASONING_END": AGUITranslator._span,
    "REASONING_MESSAGE_START": AGUITranslator._reasoning_start,
    "REASONING_MESSAGE_CONTENT": AGUITranslator._reasoning_content,
    "REASONING_MESSAGE_END": AGUITranslator._reasoning_end,
    "TOOL_CALL_START": AGUITranslator._tool_start,
    "TOOL_CALL_ARGS": AGUITranslator._tool_args,
    "TOOL_CALL_END": AGUITranslator._tool_end,
    "TOOL_CALL_RESULT": AGUITranslator._tool_result,
    "STATE_SNAPSHOT": AGUITranslator._state_snapshot,
    "STATE_DELTA": AGUITranslator._state_delta,
    "ACTIVITY_SNAPSHOT": AGUITranslator._activity,
    "ACTIVITY_DELTA": AGUITranslator._activity,
    "CUSTOM": AGUITranslator._custom,
    "RAW": AGUITranslator._raw,
}


# --- wrappers ------------------------------------------------------------------------------------------


def agui_events(events: AsyncIterable[Event] | Iterable[Event], *, state: Any = None) -> AsyncIterator[ChatEvent]:
    """The ChatEvents for a stream of AG-UI event dicts (``state``: the state the server starts from).

    A frame that is not an AG-UI event ends the run with a ``RunError``, and so does an exception raised
    while iterating ``events``; nothing escapes as an exception.
    """
    return translated(events, AGUITranslator(state=state), stream="the AG-UI stream", item="event")


class RemoteAGUIAgent(RemoteAgent):
    """An :class:`~streamkit.events.Agent` that runs on a remote AG-UI server at ``url``.

    Each run is POSTed as a ``RunAgentInput`` (:func:`to_agui_request`) with ``headers`` added (an
    ``Authorization``, say); the server's SSE events are translated by :class:`AGUITranslator`. Pass an
    ``http_client`` (an ``httpx.AsyncClient``, kept open) to share connections or set timeouts and
    transports; without one each run makes its own (``timeout``: connect within 5 s, no read limit).
    Failures end the run with a ``RunError`` (codes ``http_<status>``, ``not_event_stream``,
    ``invalid_event``, ``unreachable``, ``timeout``, ``incomplete``), never an exception.
    """

    server = "AG-UI server"
    item = "event"
    framing = "agui"

    def request(self, run: RunInput) -> dict[str, Any]:
        """``run`` as a ``RunAgentInput``."""
        return to_agui_request(run)

    def translator(self, run: RunInput) -> AGUITranslator:
        """A translator holding the client's state (the base of the server's deltas)."""
        return AGUITranslator(state=run.state)

    def parse(self, data: str) -> dict[str, Any]:
        """One frame's event."""
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise ValueError(f"a frame is not JSON ({exc}): {data[:200]!r}") from None
        if not isinstance(event, dict):
            raise ValueError("Invalid event: the frame is not a JSON object.")
        return event

    def unfinished(self, translator: Translator) -> RunError:
        """An AG-UI run ends with ``RUN_FINISHED`` or ``RUN_ERROR``: a stream that stops before is cut short."""
        return RunError(message="the AG-UI server ended the stream before the run finished", code="incomplete")


to_run_agent_input = to_agui_request
"""The earlier name of :func:`to_agui_request`."""
chat_events = agui_events
"""The earlier name of :func:`agui_events`."""
