"""Folding a UI Message Stream into the final ``UIMessage``, as the ``useChat`` client does.

:class:`UIMessageFolder` follows the client's stream processor (``ai`` 7): the same parts, the same tool
part states and fields, data parts replaced in place by ``type`` and ``id``, metadata deep-merged, and the
same failures (a delta for a part that is not open, an output for an unknown tool call) recorded in
:attr:`UIMessageFolder.error`, after which, like ``useChat``, it ignores the rest. An ``error`` chunk stops
it the same way. A tool input being streamed is read as the client reads it
(:func:`~streamkit.aisdk.partial_json.parse_partial_json`).

:func:`fold` takes chunk dicts, ``ChatEvent`` objects (mapped with :class:`AISDKMapper`) or an SSE body
(``bytes`` or ``str``, as :func:`streamkit.aisdk.encode` writes it); :func:`afold` does the same for an
async stream. :func:`parse_sse` reads the chunks of an SSE body.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any

import orjson
from pydantic import BaseModel

from ..events import ChatEvent
from .mapping import AISDKMapper, Chunk
from .partial_json import has_unsafe_key, parse_partial_json

__all__ = ["UIMessageFolder", "afold", "fold", "parse_sse"]

_UNSET: Any = object()


def parse_sse(body: bytes | str) -> list[Chunk]:
    """The chunks of an SSE body (``data:`` lines of complete events; ``[DONE]`` and comments skipped)."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    chunks: list[Chunk] = []
    data: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line:
            if data:
                payload = "\n".join(data)
                data = []
                if payload != "[DONE]":
                    chunks.append(orjson.loads(payload))
            continue
        if line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
    return chunks


def _merge(base: Any, overrides: Any) -> Any:
    """The client's ``mergeObjects``: a deep merge of JSON objects; anything else replaces."""
    result = dict(base) if isinstance(base, dict) else _spread(base)
    items = overrides.items() if isinstance(overrides, dict) else _spread(overrides).items()
    for key, value in items:
        if key in ("__proto__", "constructor", "prototype"):
            continue
        current = result.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            result[key] = _merge(current, value)
        else:
            result[key] = value
    return result


def _spread(value: Any) -> dict[str, Any]:
    """``{...value}`` in JavaScript, for a JSON value that is not an object."""
    if isinstance(value, list | str):
        return {str(i): v for i, v in enumerate(value)}
    return {}


def _is_tool(part: dict[str, Any]) -> bool:
    kind: str = part["type"]
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _is_static_tool(part: dict[str, Any]) -> bool:
    kind: str = part["type"]
    return kind.startswith("tool-")


def _is_dynamic_tool(part: dict[str, Any]) -> bool:
    return bool(part["type"] == "dynamic-tool")


_SILENT = frozenset({"start-step", "finish-step", "error", "abort"})


def _publishes(chunk: Chunk, reset_parts: int) -> bool:
    """Whether the client publishes its message after ``chunk`` (its ``write()`` calls)."""
    kind = chunk["type"]
    if kind in _SILENT:
        return False
    if kind == "start":
        return chunk.get("messageId") is not None or chunk.get("messageMetadata") is not None
    if kind in ("finish", "message-metadata"):
        return chunk.get("messageMetadata") is not None
    if kind == "reset-step":
        return reset_parts > 0
    if kind.startswith("data-"):
        return not chunk.get("transient")
    return True


class StreamError(Exception):
    """The client would stop at this chunk (the text is the client's message)."""


class UIMessageFolder:
    """Builds the assistant ``UIMessage`` from chunks, one :meth:`feed` at a time, like the client.

    ``message`` is the assistant message a continuation starts from (it is copied, not changed).
    ``sdk_version`` selects the few places where older clients fold differently (5 and 6 keep the input
    of a ``tool-input-error`` for a static tool as ``rawInput``, and forget open text and reasoning parts at
    ``finish-step``).
    After the stream: :attr:`message` (the ``UIMessage`` dict), :attr:`finish_reason`, :attr:`error` (the
    text of an ``error`` chunk or of the failure the client would report), :attr:`data` (every data chunk,
    transient ones included, as the app's ``onData`` sees them) and :attr:`aborted`.
    """

    def __init__(self, message: dict[str, Any] | None = None, *, message_id: str = "", sdk_version: int = 7) -> None:
        self.sdk_version = sdk_version
        if message is not None and message.get("role") == "assistant":
            self._message: dict[str, Any] = copy.deepcopy(message)
        else:
            self._message = {"id": message_id, "role": "assistant", "parts": []}
        self._unwritten = 0  # step-start parts added since the client last published the message
        self.finish_reason: str | None = None
        self.error: str | None = None
        self.aborted = False
        self.data: list[Chunk] = []
        self._text: dict[str, dict[str, Any]] = {}
        self._reasoning: dict[str, dict[str, Any]] = {}
        self._partial: dict[str, dict[str, Any]] = {}
        self._handlers: dict[str, Callable[[Chunk], None]] = {
            "start": self._start,
            "finish": self._finish,
            "message-metadata": self._metadata_chunk,
            "abort": self._abort,
            "error": self._error,
            "start-step": self._start_step,
            "finish-step": self._finish_step,
            "reset-step": self._reset_step,
            "text-start": self._text_start,
            "text-delta": self._text_delta,
            "text-end": self._text_end,
            "reasoning-start": self._reasoning_start,
            "reasoning-delta": self._reasoning_delta,
            "reasoning-end": self._reasoning_end,
            "tool-input-start": self._tool_input_start,
            "tool-input-delta": self._tool_input_delta,
            "tool-input-available": self._tool_input_available,
            "tool-input-error": self._tool_input_error,
            "tool-approval-request": self._approval_request,
            "tool-approval-response": self._approval_response,
            "tool-output-available": self._tool_output,
            "tool-output-error": self._tool_output,
            "tool-output-denied": self._tool_output_denied,
            "source-url": self._source_url,
            "source-document": self._source_document,
            "file": self._file,
            "reasoning-file": self._file,
            "custom": self._custom,
            "steering-message": self._steering,
        }

    @property
    def message(self) -> dict[str, Any]:
        """The message as ``useChat`` shows it (and sends it back): the client publishes its state on every
        chunk but ``start-step``, so step starts not followed by anything are not in it."""
        if not self._unwritten:
            return self._message
        return self._message | {"parts": self._message["parts"][: -self._unwritten]}

    @property
    def stopped(self) -> bool:
        """True once an error stopped processing (later chunks are ignored)."""
        return self.error is not None

    def feed(self, chunk: Chunk) -> None:
        """Apply one chunk to the message."""
        if self.error is not None:
            return
        kind = chunk.get("type")
        if has_unsafe_key(chunk):
            self.error = (
                f"JSON parsing failed: Text: {orjson.dumps(chunk).decode()}.\n"
                "Error message: SyntaxError: Object contains forbidden prototype property"
            )
            return
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        steps = len(self._step_parts()) if kind == "reset-step" else 0
        try:
            if handler is not None:
                handler(chunk)
            elif isinstance(kind, str) and kind.startswith("data-"):
                self._data(chunk)
            else:
                raise StreamError(f"unknown chunk type {kind!r}")
            if _publishes(chunk, steps):
                self._unwritten = 0
        except StreamError as exc:
            self.error = str(exc)
        except (KeyError, TypeError, AttributeError) as exc:
            self.error = f"invalid {kind} chunk: {exc!r}"

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def _parts(self) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = self._message["parts"]
        return parts

    def _step_parts(self) -> list[dict[str, Any]]:
        parts = self._parts
        i = len(parts) - 1
        while i >= 0 and parts[i]["type"] != "step-start":
            i -= 1
        return parts[i + 1 :]

    def _tool(self, tool_call_id: str, dynamic: bool | None = None) -> dict[str, Any]:
        """The tool part of ``tool_call_id``: of either kind, or only a dynamic (``True``) or a static one."""
        is_kind = _is_tool if dynamic is None else _is_dynamic_tool if dynamic else _is_static_tool
        part: dict[str, Any]
        for part in self._step_parts():
            if is_kind(part) and part.get("toolCallId") == tool_call_id:
                return part
        for part in reversed(self._parts):
            if is_kind(part) and part.get("toolCallId") == tool_call_id:
                return part
        if dynamic is not None:  # ai 5's words, for an output of either kind
            raise StreamError("tool-output-error must be preceded by a tool-input-available")
        raise StreamError(f'No tool invocation found for tool call ID "{tool_call_id}".')

    def _update_metadata(self, metadata: Any) -> None:
        if metadata is not None:
            current = self._message.get("metadata")
            self._message["metadata"] = _merge(current, metadata) if current is not None else metadata

    def _update_tool(self, dynamic: bool, options: dict[str, Any], existing: dict[str, Any] | None = None) -> None:
        """The client's ``updateToolPart`` / ``updateDynamicToolPart`` (absent keys are ``undefined``)."""
        name = options["toolName"]
        part = existing
        if part is None:
            for candidate in self._step_parts():
                if candidate.get("toolCallId") != options["toolCallId"]:
                    continue
                if (dynamic and candidate["type"] == "dynamic-tool") or (
                    not dynamic and candidate["type"].startswith("tool-")
                ):
                    part = candidate
                    break
        state = options["state"]
        result = state in ("output-available", "output-error")
        pm = options.get("providerMetadata")
        if part is not None:
            part["state"] = state
            if dynamic:
                part["toolName"] = name
            else:
                part["type"] = f"tool-{name}"
            for key in ("input", "output", "errorText", "rawInput", "preliminary"):
                if key in options:
                    part[key] = options[key]
                else:
                    part.pop(key, None)
            if options.get("inputEncoding") is not None:
                part["inputEncoding"] = options["inputEncoding"]
            else:
                part.pop("inputEncoding", None)
            for key in ("title", "toolMetadata"):
                if key in options:
                    part[key] = options[key]
            if options.get("providerExecuted") is not None:
                part["providerExecuted"] = options["providerExecuted"]
            if pm is not None:
                part["resultProviderMetadata" if result else "callProviderMetadata"] = pm
            return
        new: dict[str, Any] = {"type": "dynamic-tool", "toolName": name} if dynamic else {"type": f"tool-{name}"}
        new["toolCallId"] = options["toolCallId"]
        new["state"] = state
        keys = ["title", "toolMetadata", "input", "inputEncoding", "output"]
        keys += ["errorText", "preliminary", "providerExecuted"] if dynamic else ["rawInput", "errorText"]
        if not dynamic:
            keys += ["providerExecuted", "preliminary"]
        for key in keys:
            if options.get(key, _UNSET) is not _UNSET and not (key == "inputEncoding" and options[key] is None):
                new[key] = options[key]
        if pm is not None:
            new["resultProviderMetadata" if result else "callProviderMetadata"] = pm
        self._parts.append(new)

    @staticmethod
    def _opts(chunk: Chunk, *keys: str, **values: Any) -> dict[str, Any]:
        out = {k: chunk[k] for k in keys if k in chunk}
        out.update({k: v for k, v in values.items() if v is not _UNSET})
        return out

    # -- framing -----------------------------------------------------------------------------------

    def _start(self, chunk: Chunk) -> None:
        if chunk.get("messageId") is not None:
            self._message["id"] = chunk["messageId"]
        self._update_metadata(chunk.get("messageMetadata"))

    def _finish(self, chunk: Chunk) -> None:
        if chunk.get("finishReason") is not None:
            self.finish_reason = chunk["finishReason"]
        self._update_metadata(chunk.get("messageMetadata"))

    def _metadata_chunk(self, chunk: Chunk) -> None:
        self._update_metadata(chunk.get("messageMetadata"))

    def _abort(self, chunk: Chunk) -> None:
        self.aborted = True

    def _error(self, chunk: Chunk) -> None:
        raise StreamError(str(chunk.get("errorText", "")))

    def _start_step(self, chunk: Chunk) -> None:
        self._parts.append({"type": "step-start"})
        self._unwritten += 1

    def _finish_step(self, chunk: Chunk) -> None:
        if self.sdk_version < 7:  # 5 and 6 forget the open text and reasoning parts at a step's end
            self._text.clear()
            self._reasoning.clear()

    def _reset_step(self, chunk: Chunk) -> None:
        count = len(self._step_parts())
        self._text.clear()
        self._reasoning.clear()
        self._partial.clear()
        if count:
            del self._parts[-count:]

    # -- text and reasoning ------------------------------------------------------------------------

    def _open(self, kind: str, chunk: Chunk, active: dict[str, dict[str, Any]]) -> None:
        part: dict[str, Any] = {"type": kind}
        if kind == "reasoning":
            part["id"] = chunk["id"]
        part["text"] = ""
        if chunk.get("providerMetadata") is not None:
            part["providerMetadata"] = chunk["providerMetadata"]
        part["state"] = "streaming"
        active[chunk["id"]] = part
        self._parts.append(part)

    def _get(self, kind: str, chunk: Chunk, active: dict[str, dict[str, Any]]) -> dict[str, Any]:
        part = active.get(chunk["id"])
        if part is None:
            raise StreamError(
                f'Received {chunk["type"]} for missing {kind} part with ID "{chunk["id"]}". '
                f'Ensure a "{kind}-start" chunk is sent before any "{chunk["type"]}" chunks.'
            )
        return part

    def _delta(self, kind: str, chunk: Chunk, active: dict[str, dict[str, Any]]) -> None:
        part = self._get(kind, chunk, active)
        part["text"] += chunk["delta"]
        if chunk.get("providerMetadata") is not None:
            part["providerMetadata"] = chunk["providerMetadata"]

    def _end(self, kind: str, chunk: Chunk, active: dict[str, dict[str, Any]]) -> None:
        part = self._get(kind, chunk, active)
        part["state"] = "done"
        if chunk.get("citations") is not None and kind == "text":
            part["citations"] = chunk["citations"]
        if chunk.get("providerMetadata") is not None:
            part["providerMetadata"] = chunk["providerMetadata"]
        del active[chunk["id"]]

    def _text_start(self, chunk: Chunk) -> None:
        self._open("text", chunk, self._text)

    def _text_delta(self, chunk: Chunk) -> None:
        self._delta("text", chunk, self._text)

    def _text_end(self, chunk: Chunk) -> None:
        self._end("text", chunk, self._text)

    def _reasoning_start(self, chunk: Chunk) -> None:
        self._open("reasoning", chunk, self._reasoning)

    def _reasoning_delta(self, chunk: Chunk) -> None:
        self._delta("reasoning", chunk, self._reasoning)

    def _reasoning_end(self, chunk: Chunk) -> None:
        self._end("reasoning", chunk, self._reasoning)

    # -- tools -------------------------------------------------------------------------------------

    def _tool_input_start(self, chunk: Chunk) -> None:
        partial: dict[str, Any] = {"text": "", "toolName": chunk["toolName"], "dynamic": bool(chunk.get("dynamic"))}
        for key in ("inputEncoding", "title", "toolMetadata"):
            if key in chunk:
                partial[key] = chunk[key]
        self._partial[chunk["toolCallId"]] = partial
        options = self._opts(
            chunk, "toolCallId", "toolName", "inputEncoding", "providerExecuted", "title", "toolMetadata",
            "providerMetadata", state="input-streaming",
        )  # fmt: skip
        self._update_tool(bool(chunk.get("dynamic")), options)

    def _tool_input_delta(self, chunk: Chunk) -> None:
        partial = self._partial.get(chunk["toolCallId"])
        if partial is None:
            raise StreamError(
                f'Received tool-input-delta for missing tool call with ID "{chunk["toolCallId"]}". '
                'Ensure a "tool-input-start" chunk is sent before any "tool-input-delta" chunks.'
            )
        partial["text"] += chunk["inputTextDelta"]
        if partial.get("inputEncoding") == "text":
            value = partial["text"]
        else:
            parsed, how = parse_partial_json(partial["text"])
            value = _UNSET if how == "failed-parse" else parsed
        options = self._opts(
            partial, "toolName", "inputEncoding", "title", "toolMetadata",
            toolCallId=chunk["toolCallId"], state="input-streaming", input=value, rawInput=partial["text"],
        )  # fmt: skip
        self._update_tool(partial["dynamic"], options)

    def _tool_input_available(self, chunk: Chunk) -> None:
        options = self._opts(
            chunk, "toolCallId", "toolName", "input", "providerExecuted", "providerMetadata", "title",
            "toolMetadata", state="input-available",
        )  # fmt: skip
        self._update_tool(bool(chunk.get("dynamic")), options)

    def _tool_input_error(self, chunk: Chunk) -> None:
        existing = next(
            (p for p in self._step_parts() if _is_tool(p) and p.get("toolCallId") == chunk["toolCallId"]), None
        )
        dynamic = bool(chunk.get("dynamic"))
        if existing is not None and self.sdk_version >= 6:
            dynamic = existing["type"] == "dynamic-tool"
        options = self._opts(
            chunk, "toolCallId", "toolName", "input", "errorText", "providerExecuted", "providerMetadata",
            "toolMetadata", state="output-error",
        )  # fmt: skip
        if not dynamic and self.sdk_version < 7 and "input" in options:
            options["rawInput"] = options.pop("input")
        self._update_tool(dynamic, options)

    def _approval_request(self, chunk: Chunk) -> None:
        part = self._tool(chunk["toolCallId"])
        part["state"] = "approval-requested"
        approval: dict[str, Any] = {"id": chunk["approvalId"]}
        if chunk.get("approvalDescriptor") is not None:
            approval["descriptor"] = chunk["approvalDescriptor"]
        if "inputSchemaInput" in chunk:
            approval["inputSchemaInput"] = chunk["inputSchemaInput"]
        if chunk.get("reason") is not None:
            approval["requestReason"] = chunk["reason"]
        if chunk.get("isAutomatic") is True:
            approval["isAutomatic"] = True
        if chunk.get("signature") is not None:
            approval["signature"] = chunk["signature"]
        part["approval"] = approval

    def _approval_response(self, chunk: Chunk) -> None:
        approval_id = chunk["approvalId"]
        part = next(
            (p for p in self._parts if _is_tool(p) and (p.get("approval") or {}).get("id") == approval_id), None
        )
        if part is None:
            raise StreamError(f'No tool invocation found for approval ID "{approval_id}".')
        approval = dict(part.get("approval") or {"id": approval_id})
        approval["id"] = approval_id
        approval["approved"] = chunk["approved"]
        if chunk.get("reason") is not None:
            approval["reason"] = chunk["reason"]
        part["state"] = "approval-responded"
        part["approval"] = approval
        if chunk.get("providerExecuted") is not None:
            part["providerExecuted"] = chunk["providerExecuted"]
        if chunk.get("providerMetadata") is not None:
            part["callProviderMetadata"] = chunk["providerMetadata"]

    def _tool_output_denied(self, chunk: Chunk) -> None:
        self._tool(chunk["toolCallId"])["state"] = "output-denied"

    def _tool_output(self, chunk: Chunk) -> None:
        # ai 5 looks the call up by the chunk's own ``dynamic`` flag (a dynamic call's output without it is not
        # found); 6 and later by the part the call made.
        part = self._tool(chunk["toolCallId"], bool(chunk.get("dynamic")) if self.sdk_version < 6 else None)
        dynamic = part["type"] == "dynamic-tool"
        name = part["toolName"] if dynamic else part["type"][5:]
        available = chunk["type"] == "tool-output-available"
        options: dict[str, Any] = {
            "toolCallId": chunk["toolCallId"],
            "toolName": name,
            "state": "output-available" if available else "output-error",
        }
        if "input" in part:
            options["input"] = part["input"]
        if available:
            options["output"] = chunk["output"]
            if "preliminary" in chunk:
                options["preliminary"] = chunk["preliminary"]
        else:
            options["errorText"] = chunk["errorText"]
            if not dynamic and "rawInput" in part:
                options["rawInput"] = part["rawInput"]
        for key in ("providerExecuted", "providerMetadata"):
            if key in chunk:
                options[key] = chunk[key]
        if "title" in part:
            options["title"] = part["title"]
        metadata = chunk.get("toolMetadata", part.get("toolMetadata", _UNSET))
        if metadata is not _UNSET and metadata is not None:
            options["toolMetadata"] = metadata
        self._update_tool(dynamic, options, part)

    # -- sources, files, data ----------------------------------------------------------------------

    def _source_url(self, chunk: Chunk) -> None:
        self._parts.append({"type": "source-url"} | self._opts(chunk, "sourceId", "url", "title", "providerMetadata"))

    def _source_document(self, chunk: Chunk) -> None:
        self._parts.append(
            {"type": "source-document"}
            | self._opts(chunk, "sourceId", "mediaType", "title", "filename", "providerMetadata")
        )

    def _file(self, chunk: Chunk) -> None:
        part = {"type": chunk["type"], "mediaType": chunk["mediaType"], "url": chunk["url"]}
        if chunk.get("providerMetadata") is not None and self.sdk_version >= 6:  # 5 drops it
            part["providerMetadata"] = chunk["providerMetadata"]
        self._parts.append(part)

    def _custom(self, chunk: Chunk) -> None:
        self._parts.append({"type": "custom"} | self._opts(chunk, "kind", "providerMetadata"))

    def _steering(self, chunk: Chunk) -> None:
        self._parts.append({"type": "steering-message", "id": chunk["id"], "parts": chunk["parts"]})

    def _data(self, chunk: Chunk) -> None:
        self.data.append(chunk)
        if chunk.get("transient"):
            return
        if chunk.get("id") is not None:
            for part in self._parts:
                if part["type"] == chunk["type"] and part.get("id") == chunk["id"]:
                    part["data"] = chunk.get("data")
                    return
        self._parts.append(dict(chunk))


def _chunks(items: Iterable[Any], mapper: AISDKMapper | None) -> Iterable[Chunk]:
    for item in items:
        if isinstance(item, BaseModel):
            if mapper is None:
                raise TypeError("pass either chunk dicts or ChatEvents, not both")
            yield from mapper.feed(item)  # type: ignore[arg-type]
        else:
            yield item
    if mapper is not None:
        yield from mapper.close()


def fold(
    items: Iterable[Chunk] | Iterable[ChatEvent] | bytes | str,
    *,
    message: dict[str, Any] | None = None,
    sdk_version: int = 7,
    message_id: str | None = None,
) -> dict[str, Any]:
    """The final assistant ``UIMessage`` the client builds from a stream.

    ``items`` are chunk dicts, ``ChatEvent`` objects (mapped with :class:`AISDKMapper` using
    ``sdk_version`` and ``message_id``) or an SSE body. ``message`` is the assistant message a
    continuation builds on. Use :class:`UIMessageFolder` to also see the finish reason and errors.
    """
    folder = UIMessageFolder(message, message_id=message_id or "", sdk_version=sdk_version)
    if isinstance(items, bytes | str):
        stream: Iterable[Chunk] = parse_sse(items)
    else:
        materialized = list(items)
        events = bool(materialized) and isinstance(materialized[0], BaseModel)
        mapper = AISDKMapper(sdk_version=sdk_version, message_id=message_id) if events else None
        stream = _chunks(materialized, mapper)
    for chunk in stream:
        folder.feed(chunk)
    return folder.message


async def afold(
    items: AsyncIterable[Chunk] | AsyncIterable[ChatEvent] | AsyncIterable[bytes],
    *,
    message: dict[str, Any] | None = None,
    sdk_version: int = 7,
    message_id: str | None = None,
) -> dict[str, Any]:
    """:func:`fold` for an async stream of chunks, events, or SSE bytes (``encode``'s output)."""
    collected: list[Any] = [item async for item in items]
    if collected and isinstance(collected[0], bytes):
        return fold(b"".join(collected), message=message, sdk_version=sdk_version, message_id=message_id)
    return fold(collected, message=message, sdk_version=sdk_version, message_id=message_id)
