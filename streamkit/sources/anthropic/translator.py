"""Anthropic's Messages stream as ``ChatEvent``\\ s (the package face is :mod:`streamkit.sources.anthropic`).

:class:`AnthropicTranslator` is the pure state machine (one raw stream event in, ``ChatEvent``\\ s out,
each event dispatched by its ``type``, ``_HANDLERS``); :func:`anthropic_events` wraps it into a well-formed
run. It reads the ``anthropic`` SDK's raw events (``client.messages.create(..., stream=True)``) or the same
events as plain dicts. What the usage counts are after context compaction: see the package face.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Mapping
from typing import Any

from ...events import (
    ChatEvent,
    Citation,
    FinishReason,
    ProviderPart,
    RunError,
    Source,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
)
from ..history import provider_text
from ..loop import StepTranslator, describe_error, translate
from ._common import PROVIDER, REDACTED_PREFIX, attr, plain

__all__ = [
    "AnthropicTranslator",
    "anthropic_events",
]


_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
    "pause_turn": "other",
}


def _citation(raw: Any) -> Citation | None:
    c = plain(raw)
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
    caller = attr(block, "caller")
    if caller is not None:
        meta["caller"] = plain(caller)
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
        kind = attr(event, "type")
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
        error = attr(body, "error") if isinstance(body, Mapping) else None
        message = attr(error, "message") if isinstance(error, Mapping) else None
        if isinstance(message, str) and message:
            code = attr(error, "type")
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
        message = attr(event, "message")
        model = attr(message, "model")
        self._model = model if isinstance(model, str) else None
        self._add_usage(attr(message, "usage"))
        # A message can start whole (a programmatic tool call the API resumes sends its tool_use blocks, and
        # its stop reason, in message_start, with no block events): its blocks as if each was streamed.
        for index, block in enumerate(attr(message, "content") or ()):
            self._block_start({"type": "content_block_start", "index": index, "content_block": block}, out)
            self._block_stop({"type": "content_block_stop", "index": index}, out)
        reason = attr(message, "stop_reason")
        if isinstance(reason, str):
            self._stop_reason = reason
            self.finish_reason = _FINISH.get(reason, "other")

    def _block_start(self, event: Any, out: list[ChatEvent]) -> None:
        index = attr(event, "index")
        block = attr(event, "content_block")
        kind = attr(block, "type")
        if not isinstance(index, int) or not isinstance(kind, str):
            return
        self._kinds[index] = kind
        if kind == "text":
            self.end_text(out)
            self.text(attr(block, "text") or "", out)
            initial = [c for c in (_citation(x) for x in attr(block, "citations") or ()) if c is not None]
            self._block_citations[index] = initial
        elif kind == "thinking":
            self.end_reasoning(out)
            self.reasoning(attr(block, "thinking") or "", out)
            signature = attr(block, "signature")
            if signature:
                self._signature[index] = signature
        elif kind == "redacted_thinking":
            self.end_reasoning(out)
            data = attr(block, "data") or ""
            self.reasoning("", out)
            self.end_reasoning(
                out, provider_metadata={PROVIDER: {"redactedData": data}}, encrypted_value=REDACTED_PREFIX + data
            )
        elif kind == "tool_use":
            self.call((self._messages, index), out, id=attr(block, "id"), name=attr(block, "name"))
            initial = attr(block, "input")
            if initial:
                self._initial[index] = provider_text(plain(initial))
        elif kind in ("server_tool_use", "mcp_tool_use"):
            self.end_reasoning(out)
            self.end_text(out)
            cid = attr(block, "id") or self.new_id("call")
            self.taken.add(cid)
            name = attr(block, "name") or kind
            meta = _block_meta(block, kind)
            if kind == "mcp_tool_use":
                meta[PROVIDER]["serverName"] = attr(block, "server_name")
            out.append(ToolCallStart(id=cid, name=name, provider_executed=True, provider_metadata=meta))
            initial = attr(block, "input")
            args = [provider_text(plain(initial))] if initial else []
            if args:
                out.append(ToolCallArgsDelta(id=cid, delta=args[0]))
            self._server[index] = _ServerCall(cid, name, meta, args)
        elif kind.endswith("_tool_result") and attr(block, "tool_use_id"):
            self.end_reasoning(out)
            self.end_text(out)
            self._server_result(block, out)
        else:
            self.end_reasoning(out)
            self.end_text(out)
            out.append(ProviderPart(kind=f"{PROVIDER}.{kind}", provider_metadata={PROVIDER: plain(block)}))

    def _block_delta(self, event: Any, out: list[ChatEvent]) -> None:
        index = attr(event, "index")
        delta = attr(event, "delta")
        kind = attr(delta, "type")
        if kind == "text_delta":
            self.text(attr(delta, "text") or "", out)
        elif kind == "thinking_delta":
            self.reasoning(attr(delta, "thinking") or "", out)
        elif kind == "signature_delta":
            self._signature[index] = self._signature.get(index, "") + (attr(delta, "signature") or "")
        elif kind == "input_json_delta":
            piece = attr(delta, "partial_json") or ""
            if index in self._server:
                if piece:
                    server = self._server[index]
                    server.args.append(piece)
                    out.append(ToolCallArgsDelta(id=server.id, delta=piece))
            else:
                self.call_args((self._messages, index), piece, out)
        elif kind == "citations_delta":
            citation = _citation(attr(delta, "citation"))
            if citation is not None:
                self._block_citations.setdefault(index, []).append(citation)

    def _block_stop(self, event: Any, out: list[ChatEvent]) -> None:
        index = attr(event, "index")
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
        delta = attr(event, "delta")
        reason = attr(delta, "stop_reason")
        if isinstance(reason, str):
            self._stop_reason = reason
            self.finish_reason = _FINISH.get(reason, "other")
            if reason == "refusal":
                explanation = attr(attr(delta, "stop_details"), "explanation")
                if isinstance(explanation, str) and explanation:
                    self.end_text(out)
                    self.text(explanation, out)
        self._add_usage(attr(event, "usage"))

    def _message_stop(self, event: Any, out: list[ChatEvent]) -> None:
        self._stopped = True

    def _error(self, event: Any, out: list[ChatEvent]) -> None:
        error = attr(event, "error")
        message = attr(error, "message")
        code = attr(error, "type")
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
        data = plain(block)
        kind = str(attr(block, "type"))
        content = data.get("content") if isinstance(data, dict) else None
        meta = _block_meta(block, kind)
        error = None
        if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
            error = str(content.get("error_code") or content.get("type"))
        elif attr(block, "is_error") is True:  # an MCP tool's failure: its content is the message
            texts = [c.get("text", "") for c in content if isinstance(c, dict)] if isinstance(content, list) else []
            error = content if isinstance(content, str) else "\n".join(t for t in texts if t) or "The tool failed."
        if error is not None:
            meta[PROVIDER]["content"] = content  # the provider's own error content, to send back as it was
        cid = attr(block, "tool_use_id")
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
            value = attr(usage, key)
            if isinstance(value, int):
                self._usage[key] = value
        thinking = attr(attr(usage, "output_tokens_details"), "thinking_tokens")
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
