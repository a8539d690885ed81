"""Neutral :class:`~streamkit.events.Message` objects written as AG-UI message dicts (for ``MESSAGES_SNAPSHOT``).

AG-UI keeps one content string per message, tool calls on the assistant message and tool results as messages
of their own, so one neutral message may become several AG-UI messages:

* ``system`` / ``developer`` → one message with the text;
* ``user`` → one message, its content a string, or content parts when it carries files;
* ``assistant`` → its reasoning parts as ``reasoning`` messages (``<id>-reasoning``, ``<id>-reasoning-2``…),
  then the assistant message (text as ``content``, tool calls as ``toolCalls``), then one ``tool`` message per
  tool result it holds (``<id>-<toolCallId>-result``);
* ``tool`` → one ``tool`` message per result (the first keeps the message id).

A failed tool result has its error text as ``content`` and ``error``, and ``metadata.isError``; a denied one
``metadata.denied`` (as when streamed). A tool call's approval, ``dynamic`` and ``providerExecuted`` flags and
``providerMetadata`` go in its ``metadata`` (a result's ``providerMetadata`` in the tool message's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..events import FilePart, Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from ..stringify import dumps, js_value

__all__ = ["file_part", "json_text", "to_agui_messages", "tool_content"]


def json_text(value: Any) -> str:
    """``value`` as JSON text, byte for byte what ``JSON.stringify`` would write."""
    return dumps(js_value(value)).decode()


def tool_content(output: Any) -> str:
    """A tool's output as the ``content`` string of an AG-UI tool message (strings as they are, else JSON)."""
    return output if isinstance(output, str) else json_text(output)


def file_part(url: str, media_type: str, filename: str | None = None) -> dict[str, Any]:
    """A file as an AG-UI media content part (``image``/``audio``/``video``, else ``document``)."""
    major = media_type.split("/", 1)[0]
    kind = major if major in ("image", "audio", "video") else "document"
    source: dict[str, Any]
    if url.startswith("data:") and ";base64," in url:
        header, data = url[5:].split(";base64,", 1)
        source = {"type": "data", "value": data, "mimeType": header or media_type}
    else:
        source = {"type": "url", "value": url, "mimeType": media_type}
    part: dict[str, Any] = {"type": kind, "source": source}
    if filename is not None:
        part["metadata"] = {"filename": filename}
    return part


def _tool_message(mid: str, part: ToolResultPart) -> dict[str, Any]:
    out: dict[str, Any] = {"id": mid, "role": "tool", "toolCallId": part.id}
    if part.denied:
        out["content"] = part.error or ""
        out["metadata"] = {"denied": True}
    elif part.error is not None:
        out["content"] = part.error
        out["error"] = part.error
        out["metadata"] = {"isError": True}
    else:
        out["content"] = tool_content(part.output)
    if part.provider_metadata is not None:
        out["metadata"] = {**out.get("metadata", {}), "providerMetadata": js_value(part.provider_metadata)}
    return out


def _tool_call(part: ToolCallPart) -> dict[str, Any]:
    arguments = "" if part.input is None else json_text(part.input)
    call: dict[str, Any] = {"id": part.id, "type": "function", "function": {"name": part.name, "arguments": arguments}}
    extra: dict[str, Any] = {}
    if part.approval is not None:
        extra["approval"] = part.approval.model_dump(exclude_none=True)
    if part.dynamic:
        extra["dynamic"] = True
    if part.provider_executed:
        extra["providerExecuted"] = True
    if part.provider_metadata is not None:
        extra["providerMetadata"] = js_value(part.provider_metadata)
    if extra:
        call["metadata"] = extra
    return call


def _with_metadata(out: dict[str, Any], message: Message) -> dict[str, Any]:
    if message.metadata is not None:
        out["metadata"] = js_value(message.metadata)
    return out


def _user(message: Message) -> dict[str, Any]:
    if all(isinstance(p, TextPart) for p in message.parts):
        return _with_metadata({"id": message.id, "role": "user", "content": message.text}, message)
    parts: list[dict[str, Any]] = []
    for p in message.parts:
        if isinstance(p, TextPart):
            parts.append({"type": "text", "text": p.text})
        elif isinstance(p, FilePart):
            parts.append(file_part(p.url, p.media_type, p.filename))
        elif isinstance(p, ReasoningPart):
            parts.append({"type": "text", "text": p.text})
    return _with_metadata({"id": message.id, "role": "user", "content": parts}, message)


def _assistant(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    reasoning = [p for p in message.parts if isinstance(p, ReasoningPart)]
    for n, p in enumerate(reasoning, 1):
        rid = f"{message.id}-reasoning" if n == 1 else f"{message.id}-reasoning-{n}"
        entry: dict[str, Any] = {"id": rid, "role": "reasoning", "content": p.text}
        if p.encrypted_value is not None:
            entry["encryptedValue"] = p.encrypted_value
        out.append(entry)
    main: dict[str, Any] = {"id": message.id, "role": "assistant"}
    calls = [_tool_call(p) for p in message.parts if isinstance(p, ToolCallPart)]
    text = message.text
    if text or not calls:
        main["content"] = text
    if calls:
        main["toolCalls"] = calls
    out.append(_with_metadata(main, message))
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            out.append(_tool_message(f"{message.id}-{part.id}-result", part))
    return out


def to_agui_messages(messages: Iterable[Message | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages (or dicts that validate as such) as AG-UI message dicts, in order."""
    out: list[dict[str, Any]] = []
    for item in messages:
        message = item if isinstance(item, Message) else Message.model_validate(item)
        role = message.role
        if role == "user":
            out.append(_user(message))
        elif role == "assistant":
            out += _assistant(message)
        elif role == "tool":
            results = [p for p in message.parts if isinstance(p, ToolResultPart)]
            for n, p in enumerate(results):
                out.append(_tool_message(message.id if n == 0 else f"{message.id}-{n + 1}", p))
        else:
            out.append(_with_metadata({"id": message.id, "role": role, "content": message.text}, message))
    return out
