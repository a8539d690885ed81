"""The AG-UI message history: its pydantic models, and its conversion to and from neutral
:class:`~streamkit.events.Message` objects, both ways.

The models follow the 1.0 schema (camelCase on the wire, snake_case attributes) and are open: unknown keys
are kept rather than rejected, and optional fields tolerate ``null``. Messages of every role parse; the
retired ``binary`` content part is still read.

:func:`to_agui_messages` writes neutral messages as AG-UI message dicts (for ``MESSAGES_SNAPSHOT``). AG-UI
keeps one content string per message, tool calls on the assistant message and tool results as messages of
their own, so one neutral message may become several AG-UI messages:

* ``system`` / ``developer`` → one message with the text;
* ``user`` → one message, its content a string, or content parts when it carries files;
* ``assistant`` → its reasoning parts as ``reasoning`` messages (``<id>-reasoning``, ``<id>-reasoning-2``…),
  then the assistant message (text as ``content``, tool calls as ``toolCalls``), then one ``tool`` message per
  tool result it holds (``<id>-<toolCallId>-result``);
* ``tool`` → one ``tool`` message per result (the first keeps the message id).

A failed tool result has its error text as ``content`` and ``error``, and ``metadata.isError``; a denied one
``metadata.denied`` (as when streamed). A tool call's approval, ``dynamic`` and ``providerExecuted`` flags and
``providerMetadata`` go in its ``metadata`` (a result's ``providerMetadata`` in the tool message's).

:func:`from_agui_messages` reads the history of a parsed ``RunAgentInput`` (for
:func:`~streamkit.agui.request.to_run_input`), one neutral message per AG-UI message, metadata kept:

* ``system`` / ``developer`` → a message with the text;
* ``user`` → text and file parts (media parts, and the retired ``binary`` part, as files; inline data as a
  ``data:`` URL);
* ``assistant`` → its text, then a tool call part per tool call (the arguments parsed as JSON, kept as text
  when they do not parse; ``providerExecuted`` and ``providerMetadata`` read from the call's ``metadata``);
* ``tool`` → a tool result part (its content, ``error``, and the name of the call it answers);
* ``reasoning`` → an assistant message with a reasoning part (``encryptedValue`` kept);
* ``activity`` messages are display-only and are left out of the neutral history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..events import FilePart, Message, Part, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from ..http import json_value
from ..stringify import dumps, js_value

__all__ = [
    "AGUIMessage",
    "ActivityMessage",
    "AssistantMessage",
    "BinaryPart",
    "ContentPart",
    "DataSource",
    "DeveloperMessage",
    "FileSource",
    "FunctionCall",
    "MediaPart",
    "ReasoningMessage",
    "SystemMessage",
    "TextContent",
    "ToolCall",
    "ToolMessage",
    "UrlSource",
    "UserMessage",
    "file_part",
    "from_agui_messages",
    "json_text",
    "to_agui_messages",
    "tool_content",
]


class AGUIModel(BaseModel):
    """The base of AG-UI's wire models: camelCase on the wire (snake_case accepted too), unknown fields kept."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=AliasGenerator(validation_alias=to_camel, serialization_alias=to_camel),
        validate_by_name=True,
        validate_by_alias=True,
    )


# --- content parts ---------------------------------------------------------------------------------


class DataSource(AGUIModel):
    """Inline base64 data."""

    type: Literal["data"]
    value: str
    mime_type: str


class UrlSource(AGUIModel):
    """A URL (http(s) or ``data:``)."""

    type: Literal["url"]
    value: str
    mime_type: str | None = None


class FileSource(AGUIModel):
    """A provider file handle."""

    type: Literal["file"]
    value: str
    provider: str | None = None
    mime_type: str | None = None


PartSource = Annotated[DataSource | UrlSource | FileSource, Field(discriminator="type")]


class TextContent(AGUIModel):
    """A text content part."""

    type: Literal["text"]
    text: str
    id: str | None = None
    metadata: Any = None


class MediaPart(AGUIModel):
    """An image, audio, video or document content part."""

    type: Literal["image", "audio", "video", "document"]
    source: PartSource
    id: str | None = None
    metadata: Any = None


class BinaryPart(AGUIModel):
    """The 0.x ``binary`` content part (retired in 1.0, still read)."""

    type: Literal["binary"]
    mime_type: str
    data: str | None = None
    url: str | None = None
    id: str | None = None
    filename: str | None = None


ContentPart = Annotated[TextContent | MediaPart | BinaryPart, Field(discriminator="type")]


# --- messages --------------------------------------------------------------------------------------


class _Message(AGUIModel):
    id: str
    metadata: dict[str, Any] | None = None
    subagent_run_id: str | None = None
    encrypted_value: str | None = None


class DeveloperMessage(_Message):
    """Instructions from the application developer."""

    role: Literal["developer"]
    content: str
    name: str | None = None


class SystemMessage(_Message):
    """A system prompt."""

    role: Literal["system"]
    content: str
    name: str | None = None


class FunctionCall(AGUIModel):
    """The function a tool call invokes; ``arguments`` is the raw argument text."""

    name: str
    arguments: str


class ToolCall(AGUIModel):
    """One tool call of an assistant message; ``metadata`` is what the client merged into it from the
    call's ``TOOL_CALL_START``/``TOOL_CALL_END`` events (``providerExecuted``, ``providerMetadata``...)."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall
    metadata: dict[str, Any] | None = None


class AssistantMessage(_Message):
    """What the assistant said (``content``) and the tools it called."""

    role: Literal["assistant"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    name: str | None = None


class UserMessage(_Message):
    """What the user said: text, or content parts."""

    role: Literal["user"]
    content: str | list[ContentPart]
    name: str | None = None


class ToolMessage(_Message):
    """The result of the tool call ``tool_call_id`` (``error`` when it failed)."""

    role: Literal["tool"]
    content: str | list[ContentPart]
    tool_call_id: str
    error: str | None = None


class ActivityMessage(_Message):
    """Client-side display state (never part of the model's history)."""

    role: Literal["activity"]
    activity_type: str
    content: dict[str, Any]


class ReasoningMessage(_Message):
    """Reasoning the assistant produced."""

    role: Literal["reasoning"]
    content: str


AGUIMessage = Annotated[
    DeveloperMessage
    | SystemMessage
    | AssistantMessage
    | UserMessage
    | ToolMessage
    | ActivityMessage
    | ReasoningMessage,
    Field(discriminator="role"),
]


# --- neutral messages to AG-UI messages ------------------------------------------------------------


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


# --- AG-UI messages to neutral messages ------------------------------------------------------------

_DEFAULT_MEDIA = {"image": "image/*", "audio": "audio/*", "video": "video/*", "document": "application/octet-stream"}


def _file(part: MediaPart | BinaryPart) -> FilePart | None:
    if isinstance(part, BinaryPart):
        if part.data is not None:
            return FilePart(
                url=f"data:{part.mime_type};base64,{part.data}", media_type=part.mime_type, filename=part.filename
            )
        if part.url is not None:
            return FilePart(url=part.url, media_type=part.mime_type, filename=part.filename)
        return None
    source = part.source
    media_type = source.mime_type or _DEFAULT_MEDIA[part.type]
    filename = part.metadata.get("filename") if isinstance(part.metadata, dict) else None
    url = f"data:{media_type};base64,{source.value}" if isinstance(source, DataSource) else source.value
    return FilePart(url=url, media_type=media_type, filename=filename if isinstance(filename, str) else None)


def _parts(content: str | list[TextContent | MediaPart | BinaryPart]) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(text=content)]
    out: list[Part] = []
    for part in content:
        if isinstance(part, TextContent):
            out.append(TextPart(text=part.text))
        else:
            file = _file(part)
            if file is not None:
                out.append(file)
    return out


def _arguments(text: str) -> Any:
    try:
        return json_value(text) if text else None
    except ValueError:
        return text


def _tool_output(content: str | list[TextContent | MediaPart | BinaryPart]) -> Any:
    if isinstance(content, str):
        return content
    return [part.model_dump(mode="json", by_alias=True, exclude_none=True) for part in content]


def _provider_metadata(metadata: Any) -> dict[str, dict[str, Any]] | None:
    """The ``providerMetadata`` a tool call's or result's metadata carries (as the mapping streamed it)."""
    value = metadata.get("providerMetadata") if isinstance(metadata, dict) else None
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        return value
    return None


def _neutral_message(message: Any, tool_names: dict[str, str]) -> Message | None:
    metadata = message.metadata
    if isinstance(message, (DeveloperMessage, SystemMessage)):
        return Message(id=message.id, role=message.role, parts=[TextPart(text=message.content)], metadata=metadata)
    if isinstance(message, UserMessage):
        return Message(id=message.id, role="user", parts=_parts(message.content), metadata=metadata)
    if isinstance(message, AssistantMessage):
        parts: list[Part] = []
        if message.content:
            parts.append(TextPart(text=message.content))
        for call in message.tool_calls or ():
            tool_names[call.id] = call.function.name
            meta = call.metadata or {}
            parts.append(
                ToolCallPart(
                    id=call.id,
                    name=call.function.name,
                    input=_arguments(call.function.arguments),
                    provider_executed=meta.get("providerExecuted") is True,
                    provider_metadata=_provider_metadata(meta),
                )
            )
        return Message(id=message.id, role="assistant", parts=parts, metadata=metadata)
    if isinstance(message, ToolMessage):
        result = ToolResultPart(
            id=message.tool_call_id,
            name=tool_names.get(message.tool_call_id),
            output=_tool_output(message.content),
            error=message.error,
            provider_metadata=_provider_metadata(metadata),
        )
        return Message(id=message.id, role="tool", parts=[result], metadata=metadata)
    if isinstance(message, ReasoningMessage):
        return Message(
            id=message.id,
            role="assistant",
            parts=[ReasoningPart(text=message.content, encrypted_value=message.encrypted_value)],
            metadata=metadata,
        )
    return None  # activity: display-only


def from_agui_messages(messages: Iterable[AGUIMessage]) -> list[Message]:
    """Parsed AG-UI messages as neutral messages, in order (``activity`` messages left out)."""
    tool_names: dict[str, str] = {}
    return [m for m in (_neutral_message(x, tool_names) for x in messages) if m is not None]
