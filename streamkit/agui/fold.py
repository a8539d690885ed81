"""Folding AG-UI events into messages and state, the way ``@ag-ui/client`` does.

:func:`fold` is a pure reducer over AG-UI event dicts (what :class:`~streamkit.agui.AGUIMapper` returns, or
what any AG-UI server sends). It follows the client's reducer: text and reasoning messages are created on
their START and grow with their CONTENT, tool calls attach to the assistant message their
``parentMessageId`` names (or create it), tool results are inserted right after the assistant message holding
the call, ``MESSAGES_SNAPSHOT`` replaces the history (keeping streamed reasoning when it has none),
``metadata`` on message-building events is merged into the message or tool call, ``STATE_SNAPSHOT`` replaces
the state and a ``STATE_DELTA`` that does not apply is dropped with a warning, as the client drops it.

Use it to keep on the server the conversation and state the client will hold (to persist a thread, or to
answer a reconnect with snapshots), or to check a stream without a browser; :func:`parse_sse` reads the
events of an SSE body as the client's parser does. Patches are applied with
:func:`streamkit.patch.apply_patch`, which refuses the few patches that only apply by accident of
JavaScript; activity and subagent events are not folded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..patch import PatchError, apply_patch
from ..stringify import to_json

__all__ = ["Folded", "fold", "parse_sse"]

Message = dict[str, Any]


def parse_sse(body: bytes | str) -> list[dict[str, Any]]:
    """The events of an SSE body, read as ``@ag-ui/client``'s parser reads them.

    Frames are split at ``\\n\\n`` only; the ``data:`` lines of a frame (one space after the colon dropped)
    are joined with ``\\n`` and parsed as one JSON event, and every other line (a comment such as the
    ``: ping`` heartbeat, ``event:``, ``id:``) is skipped. AG-UI has no ``[DONE]``. As in the client,
    ``\\r\\n\\r\\n`` does not end a frame: a body framed that way is one frame, whose JSON does not parse once
    it holds two events (:class:`ValueError`; the client fails the run).
    """
    text = body.decode() if isinstance(body, bytes) else body
    events: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
        if data:
            events.append(orjson.loads("\n".join(data)))
    return events


@dataclass
class Folded:
    """Messages and state after a stream, and how its run ended.

    ``outcome`` is ``"success"``, ``"interrupt"``, ``"cancelled"``, ``"error"`` (a ``RUN_ERROR``), or None when
    the stream ended without a terminal event. ``pending_tool_call_ids`` are the run's tool calls left without
    a result (a success's own list when it names one), ``custom`` the ``CUSTOM`` events in order, ``warnings``
    what the client would have warned about.
    """

    messages: list[Message]
    state: Any
    outcome: str | None = None
    result: Any = None
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    pending_tool_call_ids: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    custom: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _copy(value: Any) -> Any:
    return to_json(value)  # a deep copy as JavaScript holds it (integers beyond 64 bits as floats)


class _Folder:
    def __init__(self, messages: Iterable[Mapping[str, Any]], state: Any) -> None:
        self.out = Folded(messages=_copy(list(messages)), state=_copy(state))
        self.run_calls: list[str] = []
        self.answered: set[str] = set()

    # -- lookups -----------------------------------------------------------------------------------

    def message(self, mid: str) -> Message | None:
        for m in self.out.messages:
            if m.get("id") == mid:
                return m
        return None

    def holder(self, tool_call_id: str) -> tuple[Message, dict[str, Any]] | None:
        for m in self.out.messages:
            for call in m.get("toolCalls") or ():
                if call.get("id") == tool_call_id:
                    return m, call
        return None

    def warn(self, text: str) -> None:
        self.out.warnings.append(text)

    @staticmethod
    def merge(target: dict[str, Any], event: Mapping[str, Any]) -> None:
        metadata = event.get("metadata")
        if metadata is not None:
            target["metadata"] = {**(target.get("metadata") or {}), **_copy(metadata)}

    # -- events ------------------------------------------------------------------------------------

    def apply(self, event: Mapping[str, Any]) -> None:
        handler = getattr(self, "on_" + str(event.get("type", "")).lower(), None)
        if handler is not None:
            handler(event)

    def _open(self, event: Mapping[str, Any], role: str, kind: str) -> None:
        mid = event["messageId"]
        message = self.message(mid)
        if message is not None and message.get("role") == "activity":
            self.warn(f"{kind}: message {mid!r} is an activity message")
            return
        if message is None:
            message = {"id": mid, "role": role, "content": ""}
            if event.get("name") is not None:
                message["name"] = event["name"]
            self.out.messages.append(message)
        self.merge(message, event)

    def _append(self, event: Mapping[str, Any], kind: str) -> None:
        mid = event["messageId"]
        message = self.message(mid)
        if message is None or message.get("role") == "activity":
            self.warn(f"{kind}: no message found with id {mid!r}")
            return
        content = message.get("content")
        message["content"] = (content if isinstance(content, str) else "") + event["delta"]
        self.merge(message, event)

    def _close(self, event: Mapping[str, Any], kind: str) -> None:
        message = self.message(event["messageId"])
        if message is None or message.get("role") == "activity":
            self.warn(f"{kind}: no message found with id {event['messageId']!r}")
            return
        self.merge(message, event)

    def on_text_message_start(self, event: Mapping[str, Any]) -> None:
        self._open(event, event.get("role") or "assistant", "TEXT_MESSAGE_START")

    def on_text_message_content(self, event: Mapping[str, Any]) -> None:
        self._append(event, "TEXT_MESSAGE_CONTENT")

    def on_text_message_end(self, event: Mapping[str, Any]) -> None:
        self._close(event, "TEXT_MESSAGE_END")

    def on_reasoning_message_start(self, event: Mapping[str, Any]) -> None:
        self._open(event, "reasoning", "REASONING_MESSAGE_START")

    def on_reasoning_message_content(self, event: Mapping[str, Any]) -> None:
        self._append(event, "REASONING_MESSAGE_CONTENT")

    def on_reasoning_message_end(self, event: Mapping[str, Any]) -> None:
        self._close(event, "REASONING_MESSAGE_END")

    def on_reasoning_encrypted_value(self, event: Mapping[str, Any]) -> None:
        if event["subtype"] == "tool-call":
            found = self.holder(event["entityId"])
            if found is not None:
                found[1]["encryptedValue"] = event["encryptedValue"]
        else:
            message = self.message(event["entityId"])
            if message is not None and message.get("role") != "activity":
                message["encryptedValue"] = event["encryptedValue"]

    def on_tool_call_start(self, event: Mapping[str, Any]) -> None:
        tool_call_id = event["toolCallId"]
        name = event["toolCallName"]
        if tool_call_id not in self.run_calls:
            self.run_calls.append(tool_call_id)
        found = self.holder(tool_call_id)
        if found is not None:
            call = found[1]
            if call["function"]["name"] != name:
                self.warn(f"TOOL_CALL_START: tool call {tool_call_id!r} renamed to {name!r}")
                call["function"]["name"] = name
            self.merge(call, event)
            return
        parent = event.get("parentMessageId")
        holder: Message | None = None
        if parent:
            existing = self.message(parent)
            if existing is not None and existing.get("role") == "assistant":
                holder = existing
            elif existing is not None:
                self.warn(f"TOOL_CALL_START: parentMessageId {parent!r} is a {existing.get('role')} message")
        if holder is None:
            holder = {"id": parent if parent and self.message(parent) is None else tool_call_id, "role": "assistant"}
            self.out.messages.append(holder)
        call = {"id": tool_call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        holder.setdefault("toolCalls", []).append(call)
        self.merge(call, event)

    def on_tool_call_args(self, event: Mapping[str, Any]) -> None:
        found = self.holder(event["toolCallId"])
        if found is None:
            self.warn(f"TOOL_CALL_ARGS: no tool call found with id {event['toolCallId']!r}")
            return
        found[1]["function"]["arguments"] += event["delta"]
        self.merge(found[1], event)

    def on_tool_call_end(self, event: Mapping[str, Any]) -> None:
        found = self.holder(event["toolCallId"])
        if found is None:
            self.warn(f"TOOL_CALL_END: no tool call found with id {event['toolCallId']!r}")
            return
        self.merge(found[1], event)

    def on_tool_call_result(self, event: Mapping[str, Any]) -> None:
        tool_call_id = event["toolCallId"]
        self.answered.add(tool_call_id)
        message: Message = {
            "id": event["messageId"],
            "toolCallId": tool_call_id,
            "role": event.get("role") or "tool",
            "content": _copy(event["content"]),
        }
        self.merge(message, event)
        messages = self.out.messages
        owner = next(
            (
                i
                for i, m in enumerate(messages)
                if m.get("role") == "assistant" and any(c.get("id") == tool_call_id for c in m.get("toolCalls") or ())
            ),
            -1,
        )
        if owner == -1:
            messages.append(message)
            return
        at = owner + 1
        while at < len(messages) and messages[at].get("role") == "tool":
            at += 1
        messages.insert(at, message)

    def on_state_snapshot(self, event: Mapping[str, Any]) -> None:
        self.out.state = _copy(event.get("snapshot"))

    def on_state_delta(self, event: Mapping[str, Any]) -> None:
        try:
            self.out.state = apply_patch(self.out.state, event["delta"])
        except PatchError as exc:
            self.warn(f"Failed to apply state patch: {exc}")

    def on_messages_snapshot(self, event: Mapping[str, Any]) -> None:
        snapshot: list[Message] = _copy(event["messages"])
        by_id = {m["id"]: m for m in snapshot}
        has_activity = any(m.get("role") == "activity" for m in snapshot)
        has_reasoning = any(m.get("role") == "reasoning" for m in snapshot)

        def kept(m: Message) -> bool:
            role = m.get("role")
            return (role == "activity" and not has_activity) or (role == "reasoning" and not has_reasoning)

        messages = [by_id.get(m["id"], m) for m in self.out.messages if m["id"] in by_id or kept(m)]
        present = {m["id"] for m in messages}
        messages += [m for m in snapshot if m["id"] not in present]
        self.out.messages = messages

    def on_run_started(self, event: Mapping[str, Any]) -> None:
        self.run_calls = []
        self.answered = set()
        for message in (event.get("input") or {}).get("messages") or ():
            if self.message(message["id"]) is None:
                self.out.messages.append(_copy(message))

    def on_run_finished(self, event: Mapping[str, Any]) -> None:
        outcome = event.get("outcome") or {"type": "success"}
        kind = outcome.get("type")
        if kind == "interrupt":
            self.out.outcome = "interrupt"
            self.out.interrupts = _copy(outcome["interrupts"])
        elif kind == "cancelled":
            self.out.outcome = "cancelled"
        else:
            self.out.outcome = "success"
            self.out.result = _copy(event.get("result"))
            named = outcome.get("pendingToolCallIds") or []
            self.out.pending_tool_call_ids = list(named) or [c for c in self.run_calls if c not in self.answered]

    def on_run_error(self, event: Mapping[str, Any]) -> None:
        self.out.outcome = "error"
        error = {"message": event["message"]}
        if event.get("code") is not None:
            error["code"] = event["code"]
        self.out.error = error

    def on_custom(self, event: Mapping[str, Any]) -> None:
        self.out.custom.append({"name": event["name"], "value": _copy(event.get("value"))})


def fold(
    events: Iterable[Mapping[str, Any]],
    *,
    messages: Iterable[Mapping[str, Any]] = (),
    state: Any = None,
) -> Folded:
    """Apply AG-UI ``events`` to the client's ``messages`` and ``state``; return the result (inputs untouched)."""
    folder = _Folder(messages, state)
    for event in events:
        folder.apply(event)
    return folder.out
