"""Anthropic Messages: the history in, the Messages stream out, and an agent over ``AsyncAnthropic``.

The three parts every source has:

1. **Input**: :func:`to_anthropic_request` turns a :class:`~streamkit.events.RunInput` into the Messages
   API's ``system``, ``messages`` and ``tools`` (:func:`to_anthropic_messages`, :func:`to_anthropic_tools`
   for the pieces). Reasoning goes back as ``thinking`` blocks with the ``signature`` the stream gave
   (restored from the part's provider metadata, or from the AG-UI ``encryptedValue``), redacted thinking as
   ``redacted_thinking``: Anthropic rejects a tool-use continuation whose thinking lost its signature.
   Tools Anthropic ran itself go back as their ``server_tool_use`` block with its ``*_tool_result`` block
   right after it, in the same assistant turn.
2. **Stream translation**: :class:`AnthropicTranslator` is the pure state machine (one raw stream event in,
   ``ChatEvent``\\ s out); :func:`anthropic_events` wraps it into a well-formed run. It reads the ``anthropic``
   SDK's raw events (``client.messages.create(..., stream=True)``) or the same events as plain dicts.
3. **An agent**: :class:`AnthropicAgent` runs the model over your ``AsyncAnthropic`` client with the
   client's frontend tools and your server tools, through the shared tool loop
   (:func:`streamkit.sources.loop.run_tool_loop`).

To splice one Messages stream into a longer run of your own, use
:func:`streamkit.sources.loop.stream_step` with an :class:`AnthropicTranslator` instead of
:func:`anthropic_events`, then read the translator's ``error``, ``finish`` and ``usage``.

**Usage** is the SDK's top-level ``usage`` counts, as its final message reports them (``input_tokens``
counting the cache reads and writes too, which are also given apart). After context compaction the stream's
``usage`` carries an ``iterations`` list (the compaction pass, then the message); the counts stay the
top-level ones, the message after compaction, without the compaction pass's own tokens: read
``usage.iterations`` from the raw events to account for those.

The ``anthropic`` package is needed for :class:`AnthropicAgent` only (``pip install 'streamkit[anthropic]'``).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Mapping, Sequence
from typing import Any

from ..events import (
    ChatEvent,
    Citation,
    FilePart,
    FinishReason,
    Message,
    ProviderPart,
    ReasoningPart,
    RunError,
    RunInput,
    Source,
    TextPart,
    Tool,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
)
from .history import denied_text, is_part, provider_text, steps, tool_results, unanswered_text
from .loop import StepTranslator, describe_error, run_tool_loop, translate
from .tools import ServerTool, as_server_tools

__all__ = [
    "REDACTED_PREFIX",
    "AnthropicAgent",
    "AnthropicTranslator",
    "anthropic_events",
    "message_events",
    "to_anthropic_messages",
    "to_anthropic_request",
    "to_anthropic_system",
    "to_anthropic_tools",
]

PROVIDER = "anthropic"

REDACTED_PREFIX = "redacted_thinking:"
"""Starts the ``encrypted_value`` of a redacted thinking block (the rest is its ``data``), so that the one
opaque string AG-UI keeps tells a redacted block from a signed one."""

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
    "pause_turn": "other",
}

_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _g(obj: Any, key: str) -> Any:
    """``obj[key]`` for a dict, ``obj.key`` for an SDK object (None when absent)."""
    if type(obj) is dict:  # the common case first: an ABC isinstance check costs more than the lookup
        return obj.get(key)
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _plain(obj: Any) -> Any:
    """An SDK object as plain JSON data (dicts pass through)."""
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(mode="json", exclude_none=True)
    return obj


# --- RunInput -> Messages request ------------------------------------------------------------------


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


def _tool_input(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


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
    use: dict[str, Any] = {"type": kind, "id": call.id, "name": call.name, "input": _tool_input(call.input)}
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
                        {"type": "tool_use", "id": part.id, "name": part.name, "input": _tool_input(part.input)}
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


# --- Messages stream -> ChatEvents -----------------------------------------------------------------


def _citation(raw: Any) -> Citation | None:
    c = _plain(raw)
    if not isinstance(c, dict):
        return None
    kind = c.get("type")
    cited = c.get("cited_text")
    meta = {PROVIDER: {k: v for k, v in c.items() if k != "cited_text"}}
    if kind == "web_search_result_location" and c.get("url"):
        source = Source(id=c["url"], url=c["url"], title=c.get("title") or None, provider_metadata=meta)
        return Citation(source=source, cited_text=cited)
    if kind == "search_result_location":
        ref = str(c.get("source") or f"search-result-{c.get('search_result_index', 0)}")
        url = ref if ref.startswith(("http://", "https://")) else None
        source = Source(id=ref, url=url, title=c.get("title") or None, media_type=None if url else "text/plain")
        return Citation(source=source.model_copy(update={"provider_metadata": meta}), cited_text=cited)
    if kind in ("char_location", "page_location", "content_block_location"):
        index = c.get("document_index", 0)
        media = "application/pdf" if kind == "page_location" else "text/plain"
        source = Source(
            id=f"document-{index}", title=c.get("document_title") or None, media_type=media, provider_metadata=meta
        )
        start = c.get("start_char_index") if kind == "char_location" else None
        end = c.get("end_char_index") if kind == "char_location" else None
        return Citation(source=source, start_index=start, end_index=end, cited_text=cited)
    return None


def _block_meta(block: Any, kind: str) -> dict[str, dict[str, Any]]:
    """The provider metadata of a server tool's call or result block: its ``blockType`` (and ``caller``),
    what the input conversion needs to send the block back as it came."""
    meta: dict[str, Any] = {"blockType": kind}
    caller = _g(block, "caller")
    if caller is not None:
        meta["caller"] = _plain(caller)
    return {PROVIDER: meta}


class _ServerCall:
    """A server tool call being streamed: its id, name, provider metadata and argument pieces."""

    __slots__ = ("args", "id", "meta", "name")

    def __init__(self, cid: str, name: str, meta: dict[str, dict[str, Any]], args: list[str]) -> None:
        self.id = cid
        self.name = name
        self.meta = meta
        self.args = args


class AnthropicTranslator(StepTranslator):
    """Messages stream events (SDK objects or dicts) -> ``ChatEvent``\\ s, for one model call.

    ``text`` blocks stream as text (``citations_delta`` collected onto the ``TextEnd``), ``thinking`` as
    reasoning whose ``ReasoningEnd`` keeps the ``signature`` (provider metadata ``anthropic.signature`` and
    ``encrypted_value``), ``redacted_thinking`` as an empty reasoning block keeping its data, ``tool_use``
    as a tool call under Anthropic's id. Server tools Anthropic runs itself (``server_tool_use``,
    ``mcp_tool_use``) are provider-executed calls with their ``*_tool_result`` blocks as results (web
    search results also as ``Source``\\ s); the call's and the result's provider metadata name the block
    kind (``anthropic.blockType``, with ``serverName`` and ``caller`` where given, and an error result's
    own ``content``), so :func:`to_anthropic_messages` sends them back as they came. Other block types
    become ``ProviderPart``\\ s. ``message_delta`` gives the finish reason and usage, ``error`` ends the
    step with a ``RunError``.
    """

    provider = PROVIDER

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        super().__init__(prefix, taken)
        self._kinds: dict[int, str] = {}
        self._signature: dict[int, str] = {}
        self._block_citations: dict[int, list[Citation]] = {}
        self._server: dict[int, _ServerCall] = {}
        self._initial: dict[int, str] = {}  # a tool_use block's input given whole in its start
        self._usage: dict[str, int] = {}
        self._carried: dict[str, int] = {}  # usage of earlier messages of a paused turn (pause_turn)
        self._model: str | None = None
        self._stop_reason: str | None = None
        self._stopped = False
        self._started = False
        self._messages = 0

    def feed(self, event: Any) -> list[ChatEvent]:
        if type(event) is dict and event.get("type") == "content_block_delta":  # the common event: a piece
            delta = event.get("delta")
            if type(delta) is dict:
                dtype = delta.get("type")
                fast: list[ChatEvent] = []
                if dtype == "text_delta":
                    self.text(delta.get("text") or "", fast)
                    return fast
                if dtype == "thinking_delta":
                    self.reasoning(delta.get("thinking") or "", fast)
                    return fast
        kind = _g(event, "type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return []
        out: list[ChatEvent] = []
        handler(self, event, out)
        return out

    def close(self) -> list[ChatEvent]:
        out = super().close()
        for index in list(self._server):
            self._end_server(index, out)
        if self.error is None and not self._stopped and self._stop_reason is None:
            what = "before the message started" if not self._started else "before the message was complete"
            self.error = RunError(message=f"The Anthropic stream ended {what}.", code="incomplete_stream")
        return out

    def fail(self, exc: BaseException) -> RunError:
        """The provider's own message for an ``anthropic.APIStatusError`` (also an ``error`` event the SDK
        raised), with the error type as the code; otherwise :func:`~streamkit.sources.loop.describe_error`."""
        body = getattr(exc, "body", None)
        error = _g(body, "error") if isinstance(body, Mapping) else None
        message = _g(error, "message") if isinstance(error, Mapping) else None
        if isinstance(message, str) and message:
            code = _g(error, "type")
            return RunError(message=message, code=code if isinstance(code, str) and code else "model_error")
        if _is_transport_error(exc):  # the SDK's own httpx (httpx2 since anthropic 2) lost the connection
            detail = str(exc) or type(exc).__name__
            return RunError(message=f"The connection to the model server failed: {detail}", code="model_unreachable")
        return describe_error(exc)

    # -- events --------------------------------------------------------------------------------------

    def _message_start(self, event: Any, out: list[ChatEvent]) -> None:
        if self._started:  # the continuation of a paused turn: its counts add to the earlier ones
            for key, value in self._usage.items():
                self._carried[key] = self._carried.get(key, 0) + value
            self._usage = {}
            self._stop_reason = None
            self._stopped = False
        self._started = True
        self._messages += 1  # tool calls are keyed by (message, block index)
        message = _g(event, "message")
        model = _g(message, "model")
        self._model = model if isinstance(model, str) else None
        self._add_usage(_g(message, "usage"))
        # A message can start whole (a programmatic tool call the API resumes sends its tool_use blocks, and
        # its stop reason, in message_start, with no block events): its blocks as if each was streamed.
        for index, block in enumerate(_g(message, "content") or ()):
            self._block_start({"type": "content_block_start", "index": index, "content_block": block}, out)
            self._block_stop({"type": "content_block_stop", "index": index}, out)
        reason = _g(message, "stop_reason")
        if isinstance(reason, str):
            self._stop_reason = reason
            self.finish_reason = _FINISH.get(reason, "other")

    def _block_start(self, event: Any, out: list[ChatEvent]) -> None:
        index = _g(event, "index")
        block = _g(event, "content_block")
        kind = _g(block, "type")
        if not isinstance(index, int) or not isinstance(kind, str):
            return
        self._kinds[index] = kind
        if kind == "text":
            self.end_text(out)
            self.text(_g(block, "text") or "", out)
            initial = [c for c in (_citation(x) for x in _g(block, "citations") or ()) if c is not None]
            self._block_citations[index] = initial
        elif kind == "thinking":
            self.end_reasoning(out)
            self.reasoning(_g(block, "thinking") or "", out)
            signature = _g(block, "signature")
            if signature:
                self._signature[index] = signature
        elif kind == "redacted_thinking":
            self.end_reasoning(out)
            data = _g(block, "data") or ""
            self.reasoning("", out)
            self.end_reasoning(
                out, provider_metadata={PROVIDER: {"redactedData": data}}, encrypted_value=REDACTED_PREFIX + data
            )
        elif kind == "tool_use":
            self.call((self._messages, index), out, id=_g(block, "id"), name=_g(block, "name"))
            initial = _g(block, "input")
            if initial:
                self._initial[index] = provider_text(_plain(initial))
        elif kind in ("server_tool_use", "mcp_tool_use"):
            self.end_reasoning(out)
            self.end_text(out)
            cid = _g(block, "id") or self.new_id("call")
            self.taken.add(cid)
            name = _g(block, "name") or kind
            meta = _block_meta(block, kind)
            if kind == "mcp_tool_use":
                meta[PROVIDER]["serverName"] = _g(block, "server_name")
            out.append(ToolCallStart(id=cid, name=name, provider_executed=True, provider_metadata=meta))
            initial = _g(block, "input")
            args = [provider_text(_plain(initial))] if initial else []
            if args:
                out.append(ToolCallArgsDelta(id=cid, delta=args[0]))
            self._server[index] = _ServerCall(cid, name, meta, args)
        elif kind.endswith("_tool_result") and _g(block, "tool_use_id"):
            self.end_reasoning(out)
            self.end_text(out)
            self._server_result(block, out)
        else:
            self.end_reasoning(out)
            self.end_text(out)
            out.append(ProviderPart(kind=f"{PROVIDER}.{kind}", provider_metadata={PROVIDER: _plain(block)}))

    def _block_delta(self, event: Any, out: list[ChatEvent]) -> None:
        index = _g(event, "index")
        delta = _g(event, "delta")
        kind = _g(delta, "type")
        if kind == "text_delta":
            self.text(_g(delta, "text") or "", out)
        elif kind == "thinking_delta":
            self.reasoning(_g(delta, "thinking") or "", out)
        elif kind == "signature_delta":
            self._signature[index] = self._signature.get(index, "") + (_g(delta, "signature") or "")
        elif kind == "input_json_delta":
            piece = _g(delta, "partial_json") or ""
            if index in self._server:
                if piece:
                    server = self._server[index]
                    server.args.append(piece)
                    out.append(ToolCallArgsDelta(id=server.id, delta=piece))
            else:
                self.call_args((self._messages, index), piece, out)
        elif kind == "citations_delta":
            citation = _citation(_g(delta, "citation"))
            if citation is not None:
                self._block_citations.setdefault(index, []).append(citation)

    def _block_stop(self, event: Any, out: list[ChatEvent]) -> None:
        index = _g(event, "index")
        kind = self._kinds.get(index) if isinstance(index, int) else None
        if kind == "text":
            self.end_text(out, citations=self._block_citations.pop(index, None) or None)
        elif kind == "thinking":
            signature = self._signature.pop(index, None)
            if signature:
                self.end_reasoning(
                    out, provider_metadata={PROVIDER: {"signature": signature}}, encrypted_value=signature
                )
            else:
                self.end_reasoning(out)
        elif kind == "tool_use":
            initial = self._initial.pop(index, None)
            key = (self._messages, index)
            self.end_call(key, out, arguments=initial if initial is not None and not self._streamed(key) else None)
        elif index in self._server:
            self._end_server(index, out)

    def _message_delta(self, event: Any, out: list[ChatEvent]) -> None:
        delta = _g(event, "delta")
        reason = _g(delta, "stop_reason")
        if isinstance(reason, str):
            self._stop_reason = reason
            self.finish_reason = _FINISH.get(reason, "other")
            if reason == "refusal":
                explanation = _g(_g(delta, "stop_details"), "explanation")
                if isinstance(explanation, str) and explanation:
                    self.end_text(out)
                    self.text(explanation, out)
        self._add_usage(_g(event, "usage"))

    def _message_stop(self, event: Any, out: list[ChatEvent]) -> None:
        self._stopped = True

    def _error(self, event: Any, out: list[ChatEvent]) -> None:
        error = _g(event, "error")
        message = _g(error, "message")
        code = _g(error, "type")
        self.error = RunError(
            message=message if isinstance(message, str) and message else "The Anthropic API reported an error.",
            code=code if isinstance(code, str) and code else "model_error",
        )

    # -- helpers -------------------------------------------------------------------------------------

    def _streamed(self, key: tuple[int, int]) -> bool:
        state = self._calls.get(key)
        return bool(state is not None and state.args)

    def _end_server(self, index: int, out: list[ChatEvent]) -> None:
        server = self._server.pop(index)
        text = "".join(server.args)
        try:
            parsed: Any = json.loads(text) if text.strip() else {}
            error = None
        except ValueError:
            parsed, error = text, "the tool input is not valid JSON"
        out.append(ToolCallEnd(id=server.id, input=parsed, error=error, provider_metadata=server.meta))
        self.parts.append(
            ToolCallPart(
                id=server.id, name=server.name, input=parsed, provider_executed=True, provider_metadata=server.meta
            )
        )

    def _server_result(self, block: Any, out: list[ChatEvent]) -> None:
        data = _plain(block)
        kind = str(_g(block, "type"))
        content = data.get("content") if isinstance(data, dict) else None
        meta = _block_meta(block, kind)
        error = None
        if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
            error = str(content.get("error_code") or content.get("type"))
        elif _g(block, "is_error") is True:  # an MCP tool's failure: its content is the message
            texts = [c.get("text", "") for c in content if isinstance(c, dict)] if isinstance(content, list) else []
            error = content if isinstance(content, str) else "\n".join(t for t in texts if t) or "The tool failed."
        if error is not None:
            meta[PROVIDER]["content"] = content  # the provider's own error content, to send back as it was
        cid = _g(block, "tool_use_id")
        output = None if error else content
        out.append(ToolResult(id=cid, output=output, error=error, provider_metadata=meta))
        self.parts.append(ToolResultPart(id=cid, output=output, error=error, provider_metadata=meta))
        if isinstance(content, list):
            for item in content:
                if isinstance(item, dict) and item.get("type") == "web_search_result" and item.get("url"):
                    out.append(Source(id=item["url"], url=item["url"], title=item.get("title") or None))

    def _add_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            value = _g(usage, key)
            if isinstance(value, int):
                self._usage[key] = value
        thinking = _g(_g(usage, "output_tokens_details"), "thinking_tokens")
        if isinstance(thinking, int):
            self._usage["thinking_tokens"] = thinking
        u = {k: self._usage.get(k, 0) + self._carried.get(k, 0) for k in {*self._usage, *self._carried}}
        fresh, created, read = (
            u.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        inputs = (
            None if fresh is None and created is None and read is None else (fresh or 0) + (created or 0) + (read or 0)
        )
        outputs = u.get("output_tokens")
        total = None if inputs is None and outputs is None else (inputs or 0) + (outputs or 0)
        self.usage = Usage(
            input_tokens=inputs,
            output_tokens=outputs,
            total_tokens=total,
            reasoning_tokens=u.get("thinking_tokens"),
            cached_input_tokens=read or None,
            cache_write_input_tokens=created or None,
            provider=PROVIDER,
            model=self._model,
        )


def _is_transport_error(exc: BaseException) -> bool:
    return any(
        cls.__name__ == "TransportError" and cls.__module__.partition(".")[0] in ("httpx", "httpx2")
        for cls in type(exc).__mro__
    )


_HANDLERS: dict[str, Any] = {
    "message_start": AnthropicTranslator._message_start,
    "content_block_start": AnthropicTranslator._block_start,
    "content_block_delta": AnthropicTranslator._block_delta,
    "content_block_stop": AnthropicTranslator._block_stop,
    "message_delta": AnthropicTranslator._message_delta,
    "message_stop": AnthropicTranslator._message_stop,
    "error": AnthropicTranslator._error,
}


def anthropic_events(
    events: AsyncIterable[Any] | Iterable[Any], *, prefix: str | None = None
) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from a Messages stream: ``RunStarted``, the content, then ``RunFinished`` (finish
    reason, usage) or a ``RunError`` with Anthropic's message (an ``error`` event, an ``APIStatusError``
    or a dropped connection while iterating: nothing escapes as an exception).

    ``events``: what ``await client.messages.create(..., stream=True)`` returns, or the same events as
    dicts (sync or async iterable). Block ids start with ``prefix`` (default: random)."""
    return translate(events, AnthropicTranslator(prefix))


# --- the agent -------------------------------------------------------------------------------------


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise ImportError("AnthropicAgent needs the anthropic package: pip install 'streamkit[anthropic]'") from exc
    return anthropic


class _Content:
    """The content blocks of one streamed message, as the API takes them back (to continue a paused turn)."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, list[str]] = {}
        self.stop_reason: str | None = None

    def feed(self, event: Any) -> None:
        kind = _g(event, "type")
        index = _g(event, "index")
        if kind == "content_block_start" and isinstance(index, int):
            block = _plain(_g(event, "content_block"))
            self.blocks[index] = dict(block) if isinstance(block, dict) else {}
        elif kind == "content_block_delta" and index in self.blocks:
            block, d = self.blocks[index], _g(event, "delta")
            dtype = _g(d, "type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + (_g(d, "text") or "")
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + (_g(d, "thinking") or "")
            elif dtype == "signature_delta":
                block["signature"] = block.get("signature", "") + (_g(d, "signature") or "")
            elif dtype == "input_json_delta":
                self.json.setdefault(index, []).append(_g(d, "partial_json") or "")
            elif dtype == "citations_delta":
                block.setdefault("citations", []).append(_plain(_g(d, "citation")))
        elif kind == "content_block_stop" and index in self.json:
            text = "".join(self.json.pop(index))
            try:
                self.blocks[index]["input"] = json.loads(text) if text.strip() else {}
            except ValueError:
                self.blocks[index]["input"] = {}
        elif kind == "message_delta":
            reason = _g(_g(event, "delta"), "stop_reason")
            self.stop_reason = reason if isinstance(reason, str) else self.stop_reason

    def message(self) -> dict[str, Any]:
        return {"role": "assistant", "content": [self.blocks[i] for i in sorted(self.blocks)]}


class _Run:
    """The tool loop's provider for one run (it holds the run's system prompt)."""

    def __init__(self, agent: AnthropicAgent, run: RunInput) -> None:
        self.agent = agent
        self.system = to_anthropic_system(run, agent.system)

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return to_anthropic_messages(run.messages)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return AnthropicTranslator(prefix, taken)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        for message in to_anthropic_messages(turn):
            if messages and messages[-1]["role"] == message["role"]:
                messages[-1] = {"role": message["role"], "content": messages[-1]["content"] + message["content"]}
            else:
                messages.append(message)

    async def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncGenerator[Any, None]:
        agent = self.agent
        request: dict[str, Any] = {
            "model": agent.model,
            "max_tokens": agent.max_tokens,
            "messages": messages,
            "stream": True,
            **agent.options,
        }
        if self.system:
            request["system"] = self.system
        specs = to_anthropic_tools(tools) + [dict(t) for t in agent.provider_tools]
        if specs:
            request["tools"] = specs
        if agent.thinking is not None:
            request["thinking"] = agent.thinking
        for _ in range(agent.max_continuations + 1):
            content = _Content()
            stream = await agent.client.messages.create(**request)
            try:
                async for event in stream:
                    content.feed(event)
                    yield event
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    await close()
            if content.stop_reason != "pause_turn":
                return
            # Anthropic paused a long turn (its own server tools): send the content back to continue it
            request["messages"] = [*request["messages"], content.message()]


class AnthropicAgent:
    """An agent core over the Anthropic Messages API (an ``anthropic.AsyncAnthropic`` client).

    Each run converts the history (:func:`to_anthropic_request`), streams the model with the client's
    frontend tools and ``tools`` (server tools: :class:`~streamkit.sources.tools.ServerTool`\\ s or plain
    functions), runs the server tools and calls the model again until it stops calling them or
    ``max_steps`` calls were made; frontend tool calls are left pending for the client. ``thinking``
    (``{"type": "enabled", "budget_tokens": 2048}``) turns on extended thinking; its signatures travel
    with the reasoning parts so the next request restores them. ``provider_tools`` are tool definitions
    Anthropic runs itself, offered as they are (``{"type": "web_search_20250305", "name": "web_search"}``):
    their calls and results stream as provider-executed tool calls, and a turn Anthropic pauses
    (``pause_turn``) is continued within the same step, at most ``max_continuations`` times. ``options``
    are passed to ``messages.create`` as they are (``temperature``, ``metadata``, ...).
    """

    def __init__(
        self,
        client: Any = None,
        *,
        model: str = "claude-sonnet-4-5",
        max_tokens: int = 4096,
        system: str | None = None,
        tools: Sequence[Any] = (),
        thinking: dict[str, Any] | None = None,
        provider_tools: Sequence[Mapping[str, Any]] = (),
        max_steps: int = 8,
        max_continuations: int = 4,
        **options: Any,
    ) -> None:
        if client is None:
            client = _import_anthropic().AsyncAnthropic()
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.system = system
        self.tools: list[ServerTool] = as_server_tools(tools)
        self.thinking = thinking
        self.provider_tools = list(provider_tools)
        self.max_steps = max_steps
        self.max_continuations = max_continuations
        self.options = options

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        return run_tool_loop(run, _Run(self, run), self.tools, max_steps=self.max_steps)


message_events = anthropic_events
"""The earlier name of :func:`anthropic_events`."""
