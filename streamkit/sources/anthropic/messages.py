"""Anthropic's input: a :class:`~streamkit.events.RunInput` as a Messages request (the package face is
:mod:`streamkit.sources.anthropic`).

:func:`to_anthropic_request` makes the Messages API's ``system``, ``messages`` and ``tools``
(:func:`to_anthropic_system`, :func:`to_anthropic_messages`, :func:`to_anthropic_tools` for the pieces).
Reasoning goes back as ``thinking`` blocks with the ``signature`` the stream gave (restored from the part's
provider metadata, or from the AG-UI ``encryptedValue``), redacted thinking as ``redacted_thinking``:
Anthropic rejects a tool-use continuation whose thinking lost its signature. Tools Anthropic ran itself go
back as their ``server_tool_use`` block with its ``*_tool_result`` block right after it, in the same
assistant turn.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

from ...events import FilePart, Message, ReasoningPart, RunInput, TextPart, Tool, ToolCallPart, ToolResultPart
from ..history import denied_text, input_object, is_part, provider_text, steps, tool_results, unanswered_text
from ._common import PROVIDER, REDACTED_PREFIX

__all__ = [
    "to_anthropic_messages",
    "to_anthropic_request",
    "to_anthropic_system",
    "to_anthropic_tools",
]


_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def to_anthropic_system(run: RunInput, system: str | None = None) -> str | None:
    """The ``system`` prompt: ``system``, then the history's system/developer messages, then the client's
    context items (``description: value`` lines). None when there is none."""
    pieces = [system] if system else []
    pieces += [m.text for m in run.messages if m.role in ("system", "developer") and m.text]
    if run.context:
        pieces.append("Context:\n" + "\n".join(f"- {c.description}: {c.value}" for c in run.context))
    return "\n\n".join(pieces) or None


def to_anthropic_tools(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """Tool specs (``name``, ``description``, ``input_schema``) for neutral tools."""
    out = []
    for tool in tools:
        spec: dict[str, Any] = {
            "name": tool.name,
            "input_schema": tool.parameters or {"type": "object", "properties": {}},
        }
        if tool.description:
            spec["description"] = tool.description
        out.append(spec)
    return out


def _data_url(url: str) -> tuple[str, str, bool] | None:
    """``(media type, payload, is base64)`` of a ``data:`` URL."""
    if not url.startswith("data:") or "," not in url:
        return None
    head, payload = url[5:].split(",", 1)
    is_b64 = head.endswith(";base64")
    media = head.removesuffix(";base64").split(";", 1)[0]
    return media, payload, is_b64


def _file_block(part: FilePart) -> dict[str, Any]:
    media = part.media_type
    data = _data_url(part.url)
    web = part.url.startswith(("http://", "https://"))
    if media in _IMAGE_TYPES or (data is not None and data[0] in _IMAGE_TYPES):
        if data is not None and data[2]:
            return {"type": "image", "source": {"type": "base64", "media_type": data[0] or media, "data": data[1]}}
        if web:
            return {"type": "image", "source": {"type": "url", "url": part.url}}
    if media == "application/pdf":
        if data is not None and data[2]:
            return {"type": "document", "source": {"type": "base64", "media_type": media, "data": data[1]}}
        if web:
            return {"type": "document", "source": {"type": "url", "url": part.url}}
    if media.startswith("text/") and data is not None:
        raw = data[1]
        text = base64.b64decode(raw).decode("utf-8", "replace") if data[2] else urllib.parse.unquote(raw)
        block: dict[str, Any] = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
        }
        if part.filename:
            block["title"] = part.filename
        return block
    name = part.filename or part.url[:60]
    return {"type": "text", "text": f"[attached file {name} ({media})]"}


def _reasoning_block(part: ReasoningPart) -> dict[str, Any] | None:
    meta = (part.provider_metadata or {}).get(PROVIDER) or {}
    redacted = meta.get("redactedData")
    signature = meta.get("signature")
    if redacted is None and signature is None and part.encrypted_value:
        if part.encrypted_value.startswith(REDACTED_PREFIX):
            redacted = part.encrypted_value[len(REDACTED_PREFIX) :]
        else:
            signature = part.encrypted_value
    if isinstance(redacted, str):
        return {"type": "redacted_thinking", "data": redacted}
    if isinstance(signature, str) and signature:
        return {"type": "thinking", "thinking": part.text, "signature": signature}
    return None  # reasoning without a signature is not accepted back; it is left out


def _result_block(call_id: str, result: ToolResultPart | None, call: ToolCallPart | None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
    if result is None:
        block["content"] = unanswered_text(call)
        block["is_error"] = True
    elif result.denied:
        block["content"] = denied_text(result.error)
        block["is_error"] = True
    elif result.error is not None:
        block["content"] = result.error or "The tool failed."
        block["is_error"] = True
    else:
        block["content"] = provider_text(result.output)
    return block


def _provider_result(value: Any) -> Any:
    """A provider-executed tool's output as structured data (AG-UI keeps tool results as JSON text)."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, list | dict) else value
    return value


def _server_blocks(call: ToolCallPart, result: ToolResultPart | None) -> list[dict[str, Any]]:
    """A tool Anthropic ran itself, as it came: the ``server_tool_use`` (or ``mcp_tool_use``) block, then its
    ``*_tool_result`` block with the content Anthropic sent. Nothing for a call Anthropic did not make or
    whose result was never recorded (the API takes no unanswered server tool call back)."""
    meta = (call.provider_metadata or {}).get(PROVIDER)
    if result is None or (meta is None and not call.id.startswith("srvtoolu_")):
        return []
    meta = meta or {}
    kind = meta.get("blockType") or "server_tool_use"
    use: dict[str, Any] = {"type": kind, "id": call.id, "name": call.name, "input": input_object(call.input)}
    if kind == "mcp_tool_use":
        use["server_name"] = meta.get("serverName") or ""
    if "caller" in meta:
        use["caller"] = meta["caller"]
    rmeta = (result.provider_metadata or {}).get(PROVIDER) or {}
    if rmeta.get("blockType"):
        result_kind = rmeta["blockType"]
    elif kind == "mcp_tool_use":
        result_kind = "mcp_tool_result"
    elif call.name.startswith("tool_search_tool_"):
        result_kind = "tool_search_tool_result"
    else:
        result_kind = f"{call.name}_tool_result"
    failed = result.error is not None or result.denied or "content" in rmeta  # only an error keeps its content
    if failed:
        content = rmeta.get("content")
        if content is None:
            if result_kind == "mcp_tool_result":
                content = result.error or "The tool failed."
            else:  # the error content every server tool's result takes: its type and error code
                content = {"type": f"{result_kind}_error", "error_code": result.error or "unavailable"}
    else:
        content = _provider_result(result.output)
    block: dict[str, Any] = {"type": result_kind, "tool_use_id": call.id, "content": content}
    if result_kind == "mcp_tool_result":
        block["is_error"] = failed
    if "caller" in rmeta:
        block["caller"] = rmeta["caller"]
    return [use, block]


def to_anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The Messages API ``messages`` for a neutral history (system and developer messages left out: see
    :func:`to_anthropic_system`).

    Every part becomes a content block; consecutive turns of one role are merged (the API alternates user
    and assistant). An assistant message that goes on after tool results (the AI SDK keeps a multi-step
    turn in one message) is split there, and each ``tool_use`` turn is followed by one user turn holding
    a ``tool_result`` for each of its calls, in call order and ahead of any other user content: results
    are taken from wherever the history holds them; a call without one gets an error result (a denial
    when its approval was refused), since the API rejects an unanswered ``tool_use``.

    A tool Anthropic ran itself (a provider-executed call: web search, web fetch, code execution, an MCP
    server's tool) goes back as it came: its ``server_tool_use`` (``mcp_tool_use`` with its
    ``server_name``) block directly followed, in the same assistant turn, by its ``*_tool_result`` block
    holding the content Anthropic sent (web search results with their ``encrypted_content``); no user
    ``tool_result`` answers it. The block kinds come from the parts' provider metadata (``blockType``), or
    from the tool's name when a client kept only the call's. Such a call without a recorded result, or
    one another provider ran, is left out.
    """
    answers = tool_results(messages)
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            merged = out[-1]["content"] + blocks
            if role == "user":  # tool results lead their user turn
                merged = [b for b in merged if b["type"] == "tool_result"] + [
                    b for b in merged if b["type"] != "tool_result"
                ]
            out[-1]["content"] = merged
        else:
            out.append({"role": role, "content": blocks})

    def flush(blocks: list[dict[str, Any]], calls: list[ToolCallPart]) -> None:
        push("assistant", blocks)
        if calls:
            push("user", [_result_block(c.id, answers.get(c.id), c) for c in calls])

    for message in messages:
        if message.role in ("system", "developer"):
            continue
        if message.role in ("user", "tool"):
            blocks: list[dict[str, Any]] = []
            for part in message.parts:
                if isinstance(part, TextPart) and part.text:
                    blocks.append({"type": "text", "text": part.text})
                elif isinstance(part, FilePart):
                    blocks.append(_file_block(part))
            push("user", blocks)  # tool results were placed after their calls
            continue
        for parts in steps(message, is_part):  # a turn that went on after tool calls: one step at a time
            step: list[dict[str, Any]] = []
            calls: list[ToolCallPart] = []
            for part in parts:
                if isinstance(part, ToolResultPart):
                    continue
                if isinstance(part, ToolCallPart) and part.provider_executed:  # answered within the turn
                    step += _server_blocks(part, answers.get(part.id))
                elif isinstance(part, ToolCallPart):
                    step.append(
                        {"type": "tool_use", "id": part.id, "name": part.name, "input": input_object(part.input)}
                    )
                    calls.append(part)
                elif isinstance(part, TextPart) and part.text:
                    step.append({"type": "text", "text": part.text})
                elif isinstance(part, ReasoningPart):
                    block = _reasoning_block(part)
                    if block is not None:
                        step.append(block)
                elif isinstance(part, FilePart):
                    step.append({"type": "text", "text": f"[file {part.filename or part.media_type}]"})
            flush(step, calls)  # consecutive assistant turns merge: a step without calls joins the next
    return out


def to_anthropic_request(run: RunInput, *, system: str | None = None, tools: Iterable[Tool] = ()) -> dict[str, Any]:
    """``messages``, and ``system`` and ``tools`` when there are any, for ``client.messages.create``.

    ``tools`` are offered first, then the client's frontend tools (``run.tools``) not named the same."""
    request: dict[str, Any] = {"messages": to_anthropic_messages(run.messages)}
    prompt = to_anthropic_system(run, system)
    if prompt:
        request["system"] = prompt
    offered = list(tools)
    names = {t.name for t in offered}
    offered += [t for t in run.tools if t.name not in names]
    if offered:
        request["tools"] = to_anthropic_tools(offered)
    return request
