"""What a ChatEvent run means for an AG-UI client, written down independently of the mapper.

:func:`expect` reads a (repaired) ChatEvent run and says which messages, state, outcome and custom events
the client must end up with: text blocks are assistant messages, reasoning blocks reasoning messages, tool
calls join the assistant message of the text before them (or the run's message, or the first call's), their
arguments are the streamed text or the final input as JSON, results follow the message that made the call.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence
from typing import Any

from streamkit.agui import (
    DATA,
    FILE,
    MESSAGE_METADATA,
    PRELIMINARY_TOOL_RESULT,
    SOURCE,
    STEP_RESET,
    TOOL_APPROVAL_RESPONSE,
)
from streamkit.events import (
    APPROVAL_SCHEMA,
    ChatEvent,
    Custom,
    Data,
    File,
    Message,
    MessageMetadata,
    MessagesSnapshot,
    ProviderPart,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
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
    TextStart,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    UserMessage,
)
from streamkit.patch import PatchError, apply_patch, json_equal
from streamkit.stringify import dumps, js_value, to_json


def repaired(events: Sequence[ChatEvent]) -> list[ChatEvent]:
    """The run as the sequence checker (repair mode) passes it on."""
    checker = SequenceChecker()
    out: list[ChatEvent] = []
    for event in events:
        out += checker.feed(event)
    return out + checker.close()


def _json_text(value: Any) -> str:
    return dumps(js_value(value)).decode()


def _source(source: Source) -> dict[str, Any]:
    value: dict[str, Any] = {"id": source.id}
    for key, attr in (("url", "url"), ("title", "title"), ("mediaType", "media_type"), ("filename", "filename")):
        if getattr(source, attr) is not None:
            value[key] = getattr(source, attr)
    return value


def _simple(message: Message) -> dict[str, Any]:
    return {"id": message.id, "role": message.role, "content": message.text}


def expect(
    events: Sequence[ChatEvent], *, messages: Sequence[dict[str, Any]] = (), state: Any = None
) -> dict[str, Any]:
    """Messages, state, outcome (and more) the client must hold after ``events``, from ``messages``/``state``."""
    msgs: list[dict[str, Any]] = copy.deepcopy(list(messages))
    current: str | None = None
    calls: dict[str, dict[str, Any]] = {}
    holders: dict[str, str] = {}
    streamed: set[str] = set()
    run_calls: list[str] = []
    answered: set[str] = set()
    approvals: list[dict[str, Any]] = []
    custom: list[dict[str, Any]] = []
    state = to_json(state)
    out: dict[str, Any] = {"outcome": None, "result": None, "interrupts": None, "pending": None, "error": None}
    # Wire ids: a block id is its message's id unless the id is taken (by the history, another kind of
    # message, or a message a StepReset left behind): then it gets the first free "-2", "-3"... suffix.
    owners: dict[str, str] = {m["id"]: "history" for m in msgs}
    aliases: dict[str, dict[str, str]] = {"text": {}, "reasoning": {}}

    def fresh(base: str, kind: str) -> str:
        wire, n = base, 1
        while wire in owners:
            n += 1
            wire = f"{base}-{n}"
        owners[wire] = kind
        return wire

    def claim(bid: str, kind: str) -> str:
        if bid in aliases[kind]:
            return aliases[kind][bid]
        owner = owners.get(bid)
        if owner is None:
            owners[bid] = kind
            return bid
        if owner == kind or (owner == "assistant" and kind == "text"):
            return bid
        wire = aliases[kind][bid] = fresh(bid, kind)
        return wire

    def find(mid: str) -> dict[str, Any] | None:
        return next((m for m in msgs if m["id"] == mid), None)

    def start_call(cid: str, name: str, parent: str | None, metadata: dict[str, Any]) -> None:
        nonlocal current
        if parent is None:
            parent = current
        if parent is None:
            parent = current = cid
        holder = find(parent)
        if holder is None or holder["role"] != "assistant":
            holder = {"id": parent, "role": "assistant"}
            msgs.append(holder)
        call: dict[str, Any] = {"id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        if metadata:
            call["metadata"] = metadata
        holder.setdefault("toolCalls", []).append(call)
        owners.setdefault(cid, "tool-call")
        calls[cid] = call
        holders[cid] = holder["id"]
        run_calls.append(cid)

    for ev in events:
        if isinstance(ev, RunStarted):
            current = ev.message_id or current
            if ev.message_id is not None:
                owners[ev.message_id] = "assistant"
        elif isinstance(ev, TextStart):
            wire = claim(ev.id, "text")
            if find(wire) is None:
                msgs.append({"id": wire, "role": "assistant", "content": ""})
            current = wire
        elif isinstance(ev, TextDelta):
            msg = find(aliases["text"].get(ev.id, ev.id))
            assert msg is not None
            msg["content"] += ev.delta
        elif isinstance(ev, TextEnd):
            metadata = {}
            if ev.provider_metadata is not None:
                metadata["providerMetadata"] = to_json(ev.provider_metadata)
            if ev.citations:
                metadata["citations"] = [
                    {
                        "source": _source(c.source),
                        **{
                            k: v
                            for k, v in (
                                ("startIndex", c.start_index),
                                ("endIndex", c.end_index),
                                ("citedText", c.cited_text),
                            )
                            if v is not None
                        },
                    }
                    for c in ev.citations
                ]
            if metadata:
                msg = find(aliases["text"].get(ev.id, ev.id))
                assert msg is not None
                msg["metadata"] = {**msg.get("metadata", {}), **metadata}
        elif isinstance(ev, ReasoningStart):
            wire = claim(ev.id, "reasoning")
            if find(wire) is None:
                msgs.append({"id": wire, "role": "reasoning", "content": ""})
        elif isinstance(ev, ReasoningDelta):
            msg = find(aliases["reasoning"].get(ev.id, ev.id))
            assert msg is not None
            msg["content"] += ev.delta
        elif isinstance(ev, ReasoningEnd):
            if ev.encrypted_value is not None:
                msg = find(aliases["reasoning"].get(ev.id, ev.id))
                assert msg is not None
                msg["encryptedValue"] = ev.encrypted_value
        elif isinstance(ev, StepReset):
            # the client keeps what the step sent; block ids used so far start new messages from here on
            for wire, kind in owners.items():
                if kind in ("text", "reasoning"):
                    owners[wire] = "discarded"
            aliases["text"].clear()
            aliases["reasoning"].clear()
            custom.append({"name": STEP_RESET, "value": {}})
        elif isinstance(ev, UserMessage):
            wire = fresh(ev.id, "user")
            msgs.append({"id": wire, "role": "user", "content": ev.text})
            current = None
            for file in ev.files or ():
                value = {"url": file.url, "mediaType": file.media_type}
                if file.filename is not None:
                    value["filename"] = file.filename
                custom.append({"name": FILE, "value": {**value, "messageId": wire}})
        elif isinstance(ev, ProviderPart):
            custom.append({"name": ev.kind, "value": to_json(ev.provider_metadata)})
        elif isinstance(ev, ToolCallStart):
            metadata: dict[str, Any] = {}
            if ev.title is not None:
                metadata["title"] = ev.title
            if ev.dynamic:
                metadata["dynamic"] = True
            if ev.provider_executed:
                metadata["providerExecuted"] = True
            if ev.input_encoding is not None:
                metadata["inputEncoding"] = ev.input_encoding
            if ev.tool_metadata is not None:
                metadata["toolMetadata"] = to_json(ev.tool_metadata)
            start_call(ev.id, ev.name, ev.parent_message_id, metadata)
        elif isinstance(ev, ToolCallArgsDelta):
            calls[ev.id]["function"]["arguments"] += ev.delta
            streamed.add(ev.id)
        elif isinstance(ev, ToolCallEnd):
            if ev.id not in calls:
                start_call(ev.id, ev.name or "", None, {})
            call = calls[ev.id]
            if ev.id not in streamed and ev.input is not None:
                raw = ev.error is not None and isinstance(ev.input, str)
                call["function"]["arguments"] = ev.input if raw else _json_text(ev.input)
            if ev.error is not None:
                call["metadata"] = {**call.get("metadata", {}), "error": ev.error}
            if ev.tool_metadata is not None:
                call["metadata"] = {**call.get("metadata", {}), "toolMetadata": to_json(ev.tool_metadata)}
        elif isinstance(ev, ToolResult):
            if ev.preliminary:
                custom.append(
                    {"name": PRELIMINARY_TOOL_RESULT, "value": {"toolCallId": ev.id, "output": to_json(ev.output)}}
                )
                continue
            answered.add(ev.id)
            current = None  # later calls go in a new assistant message
            tool: dict[str, Any] = {"id": fresh(f"{ev.id}-result", "tool-result"), "toolCallId": ev.id, "role": "tool"}
            if ev.denied:
                tool["content"] = ev.error or "The tool call was denied."
                tool["metadata"] = {"denied": True}
            elif ev.error is not None:
                tool["content"] = ev.error
                tool["metadata"] = {"isError": True}
            else:
                tool["content"] = ev.output if isinstance(ev.output, str) else _json_text(ev.output)
            if ev.tool_metadata is not None:
                tool["metadata"] = {**tool.get("metadata", {}), "toolMetadata": to_json(ev.tool_metadata)}
            owner = next((i for i, m in enumerate(msgs) if m["id"] == holders.get(ev.id)), None)
            if owner is None:
                msgs.append(tool)
            else:
                at = owner + 1
                while at < len(msgs) and msgs[at]["role"] == "tool":
                    at += 1
                msgs.insert(at, tool)
        elif isinstance(ev, ToolApprovalRequest):
            interrupt = {"id": ev.id, "reason": "tool_approval", "toolCallId": ev.tool_call_id}
            if ev.reason is not None:
                interrupt["message"] = ev.reason
            interrupt["responseSchema"] = APPROVAL_SCHEMA
            approvals.append(interrupt)
        elif isinstance(ev, ToolApprovalResponse):
            value: dict[str, Any] = {"id": ev.id, "approved": ev.approved}
            if ev.reason is not None:
                value["reason"] = ev.reason
            custom.append({"name": TOOL_APPROVAL_RESPONSE, "value": value})
        elif isinstance(ev, (StateSnapshot, StateUpdate)):
            state = to_json(ev.state)
        elif isinstance(ev, StateDelta):
            with contextlib.suppress(PatchError):  # a patch that would fail is never sent
                state = apply_patch(state, to_json(ev.patch))
        elif isinstance(ev, MessagesSnapshot):
            snapshot = [_simple(m) for m in ev.messages]
            for m in snapshot:
                owners.setdefault(m["id"], "history")
            by_id = {m["id"]: m for m in snapshot}
            keep_reasoning = not any(m["role"] == "reasoning" for m in snapshot)
            msgs = [
                by_id.get(m["id"], m) for m in msgs if m["id"] in by_id or (keep_reasoning and m["role"] == "reasoning")
            ]
            msgs += [m for m in snapshot if m["id"] not in {x["id"] for x in msgs}]
        elif isinstance(ev, Data):
            value = {"name": ev.name, "data": to_json(ev.data)}
            if ev.id is not None:
                value["id"] = ev.id
            if ev.transient:
                value["transient"] = True
            custom.append({"name": DATA, "value": value})
        elif isinstance(ev, Source):
            custom.append({"name": SOURCE, "value": _source(ev)})
        elif isinstance(ev, File):
            value = {"url": ev.url, "mediaType": ev.media_type}
            if ev.reasoning:
                value["reasoning"] = True
            custom.append({"name": FILE, "value": value})
        elif isinstance(ev, MessageMetadata):
            custom.append({"name": MESSAGE_METADATA, "value": to_json(ev.metadata)})
        elif isinstance(ev, Custom):
            custom.append({"name": ev.name, "value": to_json(ev.value)})
        elif isinstance(ev, RunFinished):
            interrupts = [
                {
                    k: v
                    for k, v in {
                        "id": i.id,
                        "reason": i.reason,
                        "message": i.message,
                        "toolCallId": i.tool_call_id,
                        "responseSchema": i.response_schema,
                        "expiresAt": i.expires_at,
                        "metadata": i.metadata,
                    }.items()
                    if v is not None
                }
                for i in ev.interrupts or ()
            ]
            for approval in approvals:  # one interrupt per call
                same = [
                    i for i in interrupts if approval["id"] == i["id"] or approval["toolCallId"] == i.get("toolCallId")
                ]
                if same:
                    same[0].update({k: v for k, v in approval.items() if k not in same[0]})
                else:
                    interrupts.append(approval)
            if interrupts:
                out["outcome"] = "interrupt"
                out["interrupts"] = interrupts
            else:
                out["outcome"] = "success"
                out["pending"] = [c for c in run_calls if c not in answered]
                out["result"] = to_json(ev.result)
        elif isinstance(ev, RunError):
            out["outcome"] = "error"
            out["error"] = {"message": ev.message, **({"code": ev.code} if ev.code is not None else {})}
        elif ev.type == "run-aborted":
            out["outcome"] = "cancelled"
    out.update(messages=msgs, state=state, custom=custom)
    return out


def _numbers(value: Any) -> Any:
    if type(value) is int:
        return float(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def same(a: Any, b: Any) -> bool:
    """JSON equality as JavaScript sees it: numbers by value (``1`` is ``1.0``), but ``true`` is not ``1``."""
    return json_equal(_numbers(a), _numbers(b))
