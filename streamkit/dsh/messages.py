"""The dialect's message form (what ``done.messages`` carries) and its conversion to and from neutral messages.

A message is a JSON object with ``id`` and ``role``:

* ``user`` / ``system``: ``content`` (text), ``files`` (``{url, mediaType, filename?}``) when it has any;
* ``assistant``: ``content`` (text), ``reasoning`` (text, when any), ``toolCalls`` (``{callId, toolName,
  args}``), ``files``;
* ``tool``: ``callId``, ``toolName``, ``status`` (``done`` or ``error``), ``content`` (the result: any JSON
  value; for an error its text), ``error`` (text) and ``denied`` (``true``) when the call failed or was denied.

The server keeps a conversation as neutral :class:`~streamkit.events.Message` objects
(:func:`from_dsh_messages`), and states it in the dialect's form (:func:`to_dsh_messages`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..events import FilePart, Message, Part, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

__all__ = ["from_dsh_messages", "to_dsh_messages"]

Frame = dict[str, Any]


def _files(parts: Iterable[Part]) -> list[Frame]:
    out: list[Frame] = []
    for p in parts:
        if isinstance(p, FilePart):
            f: Frame = {"url": p.url, "mediaType": p.media_type}
            if p.filename is not None:
                f["filename"] = p.filename
            out.append(f)
    return out


def to_dsh_messages(messages: Iterable[Message]) -> list[Frame]:
    """Neutral messages in the dialect's form (a tool message per tool result part)."""
    out: list[Frame] = []
    for m in messages:
        if m.role == "tool":
            for p in m.parts:
                if isinstance(p, ToolResultPart):
                    out.append(_tool_message(m.id if len(m.parts) == 1 else f"{m.id}-{p.id}", p))
            continue
        role = "system" if m.role in ("system", "developer") else m.role
        message: Frame = {"id": m.id, "role": role, "content": m.text}
        if role == "assistant":
            reasoning = "".join(p.text for p in m.parts if isinstance(p, ReasoningPart))
            if reasoning:
                message["reasoning"] = reasoning
            calls = [
                {"callId": p.id, "toolName": p.name, "args": p.input} for p in m.parts if isinstance(p, ToolCallPart)
            ]
            if calls:
                message["toolCalls"] = calls
        files = _files(m.parts)
        if files:
            message["files"] = files
        out.append(message)
        if role == "assistant":  # results kept in the assistant message (as the AI SDK does) follow it
            for p in m.parts:
                if isinstance(p, ToolResultPart):
                    out.append(_tool_message(f"{m.id}-{p.id}", p))
    return out


def _tool_message(mid: str, part: ToolResultPart) -> Frame:
    message: Frame = {"id": mid, "role": "tool", "callId": part.id, "toolName": part.name or ""}
    if part.denied or part.error is not None:
        text = (part.error or "The tool call was denied.") if part.denied else (part.error or "")
        message.update(status="error", content=text, error=text)
        if part.denied:
            message["denied"] = True
    else:
        message.update(status="done", content=part.output)
    return message


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _file_parts(message: Mapping[str, Any]) -> list[Part]:
    out: list[Part] = []
    for f in message.get("files") or ():
        if isinstance(f, Mapping) and isinstance(f.get("url"), str):
            media = f.get("mediaType")
            name = f.get("filename")
            out.append(
                FilePart(
                    url=f["url"],
                    media_type=media if isinstance(media, str) else "application/octet-stream",
                    filename=name if isinstance(name, str) else None,
                )
            )
    return out


def from_dsh_messages(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Messages of the dialect's form as neutral messages (unknown roles and malformed entries are skipped)."""
    out: list[Message] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        mid = m.get("id") if isinstance(m.get("id"), str) else f"m{i}"
        assert isinstance(mid, str)
        if role in ("user", "system"):
            parts: list[Part] = [TextPart(text=_text(m.get("content"))), *_file_parts(m)]
            out.append(Message(id=mid, role=role, parts=parts))
        elif role == "assistant":
            parts = []
            if m.get("reasoning"):
                parts.append(ReasoningPart(text=_text(m.get("reasoning"))))
            if m.get("content"):
                parts.append(TextPart(text=_text(m.get("content"))))
            parts += _file_parts(m)
            for call in m.get("toolCalls") or ():
                if isinstance(call, Mapping) and isinstance(call.get("callId"), str):
                    parts.append(
                        ToolCallPart(id=call["callId"], name=_text(call.get("toolName")), input=call.get("args"))
                    )
            out.append(Message(id=mid, role="assistant", parts=parts))
        elif role == "tool" and isinstance(m.get("callId"), str):
            failed = m.get("status") == "error"
            error = m.get("error") if isinstance(m.get("error"), str) else _text(m.get("content"))
            result = ToolResultPart(
                id=m["callId"],
                name=_text(m.get("toolName")) or None,
                output=None if failed else m.get("content"),
                error=error if failed else None,
                denied=m.get("denied") is True,
            )
            out.append(Message(id=mid, role="tool", parts=[result]))
    return out
