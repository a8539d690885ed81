"""OpenAI as a source: Chat Completions and the Responses API, streamed as ``ChatEvent``\\ s.

Three parts, as every provider source:

- **input**: :func:`chat_messages` / :func:`chat_tools` turn a ``RunInput`` into Chat Completions
  ``messages`` and ``tools``; :func:`responses_input` / :func:`responses_tools` into Responses ``input``
  items and ``tools``. History stays causal: an assistant message that continued after tool results (the
  AI SDK keeps a multi-step turn in one message) is split so each call is directly followed by its result;
  a call without a recorded result gets a placeholder answer, since both APIs reject an unanswered call.
  Responses reasoning items come back with their ``encrypted_content`` (kept as provider metadata).
- **translators**: :class:`ChatTranslator` (``chat.completion.chunk`` in) and :class:`ResponsesTranslator`
  (Responses streaming events in), wrapped by :func:`chat_events` and :func:`responses_events`, which yield
  a well-formed run on their own (``RunStarted`` ... ``RunFinished``/``RunError``). They take the
  ``openai`` SDK's objects (``ChatCompletionChunk``, ``ResponseStreamEvent``) or the same as plain dicts::

      stream = await client.chat.completions.create(model=..., messages=..., stream=True,
                                                    stream_options={"include_usage": True})
      return chat_events(stream)          # an Agent can return this as its stream

  To splice one call into a longer run, use :func:`streamkit.sources.loop.stream_step` with a translator.
- **agents**: :class:`OpenAIChatAgent` (an ``AsyncOpenAI`` client, or any OpenAI-compatible base URL over
  plain httpx, no SDK needed) and :class:`OpenAIResponsesAgent` (an ``AsyncOpenAI`` client), both on the
  shared tool loop (:func:`streamkit.sources.loop.run_tool_loop`).

What the provider's fields become: see the README's table (Sources / OpenAI). The ``openai`` SDK is the
optional extra ``streamkit[openai]``: this module imports without it (dict chunks and the httpx agent need
no SDK); making an SDK client without it raises an ImportError naming the extra.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, AsyncIterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..events import (
    ChatEvent,
    Citation,
    FilePart,
    FinishReason,
    Message,
    ReasoningPart,
    RunError,
    RunInput,
    Source,
    TextDelta,
    TextPart,
    Tool,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
)
from .loop import StepTranslator, describe_error, run_tool_loop, translate
from .tools import ServerTool, as_server_tools

if TYPE_CHECKING:
    import httpx
    from openai import AsyncOpenAI

__all__ = [
    "ChatTranslator",
    "OpenAIChatAgent",
    "OpenAIResponsesAgent",
    "ResponsesTranslator",
    "chat_events",
    "chat_messages",
    "chat_tools",
    "responses_events",
    "responses_input",
    "responses_tools",
]

PROVIDER = "openai"
_EXTRA = "the openai SDK is not installed: pip install 'streamkit[openai]'"


def _openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_EXTRA) from exc
    return openai


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK object or of the same as a dict (None when absent)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


_EMPTY: Mapping[str, Any] = {}


def _fields(obj: Any) -> Mapping[str, Any]:
    """The fields of an SDK object (a pydantic model: declared fields and extras) or a dict, read with
    ``.get``; anything else reads as empty."""
    if type(obj) is dict:
        return obj
    fields = getattr(obj, "__dict__", None)
    if fields is None:
        return obj if isinstance(obj, Mapping) else _EMPTY
    extra = getattr(obj, "__pydantic_extra__", None)
    return {**fields, **extra} if extra else fields


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _json_text(value: Any) -> str:
    """``value`` as JSON text, compact as the API writes it (and as ``JSON.stringify`` does); text as is."""
    if isinstance(value, str):
        return value
    return json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"))


def _js_numbers(value: Any) -> Any:
    """Integral floats as integers (``19.0`` is ``19`` in JSON): a history that went through a browser
    client and back reads the same as the run that made it."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_numbers(v) for v in value]
    return value


def _error_text(error: Any) -> str:
    message = _get(error, "message")
    if isinstance(message, str) and message:
        return message
    if isinstance(error, str) and error:
        return error
    try:
        return json.dumps(error if isinstance(error, dict) else str(error), ensure_ascii=False)[:500]
    except (TypeError, ValueError):
        return "the model server sent an error"


def _error_code(error: Any, default: str = "model_error") -> str:
    code = _get(error, "code") or _get(error, "type")
    return str(code) if isinstance(code, str | int) and code != "" else default


# --- Chat Completions: the translator --------------------------------------------------------------

_CHAT_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content-filter",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
}


def chat_usage(usage: Any, model: str | None = None) -> Usage:
    """A Chat Completions ``usage`` object as :class:`~streamkit.events.Usage`."""
    prompt = _count(_get(usage, "prompt_tokens"))
    completion = _count(_get(usage, "completion_tokens"))
    total = _count(_get(usage, "total_tokens"))
    details = _get(usage, "completion_tokens_details")
    cached_details = _get(usage, "prompt_tokens_details")
    cached = _count(_get(cached_details, "cached_tokens")) if cached_details is not None else None
    if cached is None:  # DeepSeek
        cached = _count(_get(usage, "prompt_cache_hit_tokens"))
    reasoning = _count(_get(details, "reasoning_tokens")) if details is not None else None
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        total_tokens=total,
        reasoning_tokens=reasoning or None,
        cached_input_tokens=cached or None,
        model=model or None,
    )


class ChatTranslator(StepTranslator):
    """Chat Completions stream chunks -> ChatEvents, for one completion (pure; see ``StepTranslator``).

    ``delta.content`` is text; ``delta.refusal`` is text too (a refusal is shown); ``delta.reasoning_content``
    (DeepSeek, vLLM) or ``delta.reasoning`` (OpenRouter, Ollama, LM Studio) is reasoning; ``delta.tool_calls``
    are keyed by ``index`` (id and name in the first fragment, arguments split anywhere, several indices
    interleaved), the legacy ``delta.function_call`` too; ``delta.annotations`` URL citations are sources
    cited by the text. Only choice 0 is read (``n > 1`` is not streamed to a chat). ``usage`` (sent with
    ``stream_options.include_usage``) and every ``finish_reason`` are kept; an ``error`` object in the stream
    ends the step with a ``RunError`` carrying its message.
    """

    provider = PROVIDER

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        super().__init__(prefix, taken)
        self.model: str | None = None
        self._sources = 0

    def feed(self, chunk: Any) -> list[ChatEvent]:
        """The events for one chunk (unknown or malformed pieces are ignored)."""
        text_id = self._text
        if text_id is not None and type(chunk) is dict:  # the common chunk: one more piece of the open text
            choices = chunk.get("choices")
            if type(choices) is list and len(choices) == 1 and chunk.get("usage") is None and "error" not in chunk:
                choice = choices[0]
                delta = choice.get("delta") if type(choice) is dict else None
                if type(delta) is dict and len(delta) == 1 and not choice.get("finish_reason"):
                    content = delta.get("content")
                    if content and type(content) is str and not choice.get("index"):
                        self._text_buf.append(content)
                        return [TextDelta(id=text_id, delta=content)]
        out: list[ChatEvent] = []
        fields = _fields(chunk)
        error = fields.get("error")
        if error is not None:
            self.error = RunError(message=_error_text(error), code=_error_code(error))
            return out
        model = fields.get("model")
        if model and model != self.model and isinstance(model, str):
            self.model = model
        usage = fields.get("usage")
        if usage is not None:
            self.usage = chat_usage(usage, self.model)
        choices = fields.get("choices")
        if not choices or not isinstance(choices, list):
            return out
        for choice in choices:
            choice = _fields(choice)
            if choice.get("index") or 0:
                continue
            delta = choice.get("delta")
            if delta is not None:
                self._delta(_fields(delta), out)
            reason = choice.get("finish_reason")
            if reason and isinstance(reason, str):
                self.finish_reason = _CHAT_FINISH.get(reason, "other")
        return out

    def _delta(self, delta: Mapping[str, Any], out: list[ChatEvent]) -> None:
        content = delta.get("content")
        reasoning = delta.get("reasoning_content")
        if not isinstance(reasoning, str) or not reasoning:
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning(reasoning, out)
        if isinstance(content, str) and content:
            self.text(content, out)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.text(refusal, out)
        annotations = delta.get("annotations")
        if annotations:
            for annotation in annotations:
                self._annotation(annotation, out)
        calls = delta.get("tool_calls")
        if calls:
            for position, call in enumerate(calls):
                call = _fields(call)
                index = call.get("index")
                key = index if isinstance(index, int) else position
                function = _fields(call.get("function"))
                cid = call.get("id")
                name = function.get("name")
                if cid or name or not self.has_call(key):
                    self.call(key, out, id=cid if isinstance(cid, str) else None, name=name or None)
                args = function.get("arguments")
                if args and isinstance(args, str):
                    self.call_args(key, args, out)
        legacy = delta.get("function_call")
        if legacy is not None:
            legacy = _fields(legacy)
            self.call("function_call", out, name=legacy.get("name") or None)
            args = legacy.get("arguments")
            if isinstance(args, str) and args:
                self.call_args("function_call", args, out)

    def _annotation(self, annotation: Any, out: list[ChatEvent]) -> None:
        cited = _get(annotation, "url_citation")
        url = _get(cited, "url") if cited is not None else None
        if not isinstance(url, str) or not url:
            return
        self._sources += 1
        title = _get(cited, "title")
        source = Source(id=f"source_{self.prefix}_{self._sources}", url=url, title=title or None)
        out.append(source)
        start, end = _count(_get(cited, "start_index")), _count(_get(cited, "end_index"))
        self.cite(Citation(source=source, start_index=start, end_index=end))

    def fail(self, exc: BaseException) -> RunError:
        """The SDK's or the HTTP layer's exception as a RunError with the provider's message."""
        return provider_error(exc)


def provider_error(exc: BaseException) -> RunError:
    """A RunError for an exception of the openai SDK or of :class:`HTTPStatusError`: the provider's own
    message (from the error body when there is one) and ``http_<status>`` as the code."""
    body = getattr(exc, "body", None)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        error = body.get("error", body) if isinstance(body, dict) else body
        detail = _get(error, "message") if isinstance(error, dict) else None
        if not detail:
            detail = getattr(exc, "message", None) or str(exc)
        reason = _STATUS_HINT.get(status)
        text = f"The model server answered HTTP {status}" + (f" ({reason})" if reason else "") + f": {detail}"
        return RunError(message=text, code=f"http_{status}")
    return describe_error(exc)


_STATUS_HINT = {
    401: "unauthorized: check the API key",
    403: "forbidden",
    404: "not found: check the base URL and the model name",
    429: "rate limited: try again later",
}


def chat_events(chunks: AsyncIterable[Any], *, prefix: str | None = None) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from a Chat Completions stream (SDK ``ChatCompletionChunk``\\ s or dicts).

    ``RunStarted`` (no ids: the route's), the content, then ``RunFinished`` with the finish reason and usage,
    or a ``RunError`` with the provider's message when the stream reports an error or raises one.
    """
    return translate(chunks, ChatTranslator(prefix))


# --- Responses API: the translator -----------------------------------------------------------------


def responses_usage(usage: Any, model: str | None = None) -> Usage:
    """A Responses ``usage`` object as :class:`~streamkit.events.Usage`."""
    details = _get(usage, "output_tokens_details")
    cached_details = _get(usage, "input_tokens_details")
    reasoning = _count(_get(details, "reasoning_tokens")) if details is not None else None
    cached = _count(_get(cached_details, "cached_tokens")) if cached_details is not None else None
    return Usage(
        input_tokens=_count(_get(usage, "input_tokens")),
        output_tokens=_count(_get(usage, "output_tokens")),
        total_tokens=_count(_get(usage, "total_tokens")),
        reasoning_tokens=reasoning or None,
        cached_input_tokens=cached or None,
        model=model or None,
    )


_INCOMPLETE: dict[str, FinishReason] = {"max_output_tokens": "length", "content_filter": "content-filter"}


class ResponsesTranslator(StepTranslator):
    """Responses API streaming events -> ChatEvents, for one response (pure; see ``StepTranslator``).

    Output text deltas are text (``itemId`` kept as provider metadata); refusal deltas are text too;
    reasoning summary deltas are reasoning (summary parts joined by a blank line), and the reasoning item's
    ``encrypted_content`` and id are kept on ``ReasoningEnd`` (provider metadata ``openai.itemId`` /
    ``openai.reasoningEncryptedContent``, and ``encrypted_value``) for :func:`responses_input` to send
    back. Function calls are keyed by their item but streamed under their ``call_id``. Tools the provider
    runs (web search, file search, code interpreter, image generation, MCP, and an unknown ``*_call`` item
    without a ``call_id``) become provider-executed tool calls under their item id, the item's ``action`` as
    input and its other fields as the result, with provider metadata ``openai.itemId`` / ``openai.itemType``
    on the call and the result, so :func:`responses_input` replays the item. Tools the caller runs are
    ordinary tool calls under their ``call_id``, left to the client (or a server tool of their name): a
    ``custom_tool_call`` named by its tool, its free-form text input streamed by
    ``response.custom_tool_call_input.delta`` and kept as text (not parsed as JSON); a ``computer_call``,
    ``local_shell_call``, ``shell_call``, ``apply_patch_call`` (or an unknown ``*_call`` item with a
    ``call_id``) named by its kind without ``_call``, its ``action`` (``operation``) as input; provider
    metadata ``openai.itemId`` / ``openai.itemType`` (and ``inputField`` / ``itemFields``, what the input
    item needs back) on ``ToolCallStart`` and ``ToolCallEnd``. ``url_citation``/``file_citation``
    annotations become ``Source``\\ s cited by the text.
    ``response.completed`` brings usage; ``response.incomplete`` a ``length`` or ``content-filter``
    finish; ``response.failed`` and ``error`` end the step with a ``RunError`` carrying the message.
    """

    provider = PROVIDER

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        super().__init__(prefix, taken)
        self.model: str | None = None
        self.response_id: str | None = None
        self._sources = 0
        self._summary_index: dict[str, int] = {}
        self._hosted: set[str] = set()
        self._said: dict[Any, list[str]] = {}

    def feed(self, event: Any) -> list[ChatEvent]:
        """The events for one streaming event (unknown event types are ignored)."""
        out: list[ChatEvent] = []
        fields = _fields(event)
        kind = fields.get("type")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            delta = fields.get("delta")
            if delta and type(delta) is str:
                item = fields.get("item_id")
                said = self._said.get(item)
                if said is None:
                    said = self._said[item] = []
                said.append(delta)
                self.text(delta, out, provider_metadata=None if self.text_open else _item_meta(item))
        elif kind == "response.output_text.done" or kind == "response.refusal.done":
            # the whole text restated: stream what the deltas missed (a proxy may drop or coalesce them)
            item = fields.get("item_id")
            whole = fields.get("text") if kind == "response.output_text.done" else fields.get("refusal")
            so_far = "".join(self._said.get(item, ()))
            if isinstance(whole, str) and len(whole) > len(so_far) and whole.startswith(so_far):
                self._said[item] = [whole]
                self.text(whole[len(so_far) :], out, provider_metadata=_item_meta(item))
        elif kind == "response.function_call_arguments.delta" or kind == "response.custom_tool_call_input.delta":
            delta = fields.get("delta")
            item = fields.get("item_id")
            if isinstance(delta, str) and self.has_call(item):
                self.call_args(item, delta, out)
        elif kind == "response.reasoning_summary_text.delta" or kind == "response.reasoning_text.delta":
            delta = _get(event, "delta")
            if isinstance(delta, str):
                self._reason(_get(event, "item_id"), delta, _get(event, "summary_index"), out)
        elif kind == "response.output_text.annotation.added":
            self._annotation(_get(event, "annotation"), out)
        elif kind == "response.output_item.added":
            self._item_added(_get(event, "item"), out)
        elif kind == "response.output_item.done":
            self._item_done(_get(event, "item"), out)
        elif kind in ("response.created", "response.in_progress"):
            response = _get(event, "response")
            self.response_id = _get(response, "id") or self.response_id
            self.model = _get(response, "model") or self.model
        elif kind == "response.completed" or kind == "response.incomplete":
            response = _get(event, "response")
            self.model = _get(response, "model") or self.model
            usage = _get(response, "usage")
            if usage is not None:
                self.usage = responses_usage(usage, self.model)
            if kind == "response.incomplete":
                details = _get(response, "incomplete_details")
                self.finish_reason = _INCOMPLETE.get(_get(details, "reason") or "", "other")
            else:
                self.finish_reason = "stop"
        elif kind == "response.failed":
            error = _get(_get(event, "response"), "error")
            self.error = RunError(
                message=_error_text(error) if error else "The response failed.", code=_error_code(error)
            )
        elif kind == "error":
            error = _get(event, "error") or event
            self.error = RunError(message=_error_text(error), code=_error_code(error))
        return out

    def _reason(self, item: Any, delta: str, index: Any, out: list[ChatEvent]) -> None:
        key = item if isinstance(item, str) else ""
        if isinstance(index, int):
            last = self._summary_index.get(key)
            if last is not None and index != last and self.reasoning_open and delta:
                self.reasoning("\n\n", out)
            self._summary_index[key] = index
        self.reasoning(delta, out, provider_metadata=_item_meta(item))

    def _item_added(self, item: Any, out: list[ChatEvent]) -> None:
        kind = _get(item, "type")
        item_id = _get(item, "id")
        if kind == "function_call":
            call_id = _get(item, "call_id") or item_id
            self.call(item_id, out, id=call_id, name=_get(item, "name"), provider_metadata=_item_meta(item_id))
            args = _get(item, "arguments")
            if isinstance(args, str) and args:
                self.call_args(item_id, args, out)
        elif kind == "custom_tool_call":
            key = item_id or _get(item, "call_id")
            self.call(key, out, id=_get(item, "call_id"), name=_get(item, "name"), provider_metadata=_custom_meta(item))
            text = _get(item, "input")
            if isinstance(text, str) and text:
                self.call_args(key, text, out)
        elif kind == "reasoning":
            self.end_reasoning(out)
            self.reasoning("", out, provider_metadata=_item_meta(item_id), id=_rs_id(item_id))
        elif kind == "message":
            self.end_text(out)

    def _item_done(self, item: Any, out: list[ChatEvent]) -> None:
        kind = _get(item, "type")
        item_id = _get(item, "id")
        if kind == "function_call":
            if not self.has_call(item_id):
                self._item_added(item, out)
            args = _get(item, "arguments")
            self.end_call(item_id, out, arguments=args if isinstance(args, str) else None)
        elif kind == "reasoning":
            if not self.reasoning_open:
                self.reasoning("", out, provider_metadata=_item_meta(item_id), id=_rs_id(item_id))
            encrypted = _get(item, "encrypted_content")
            meta: dict[str, Any] = {"itemId": item_id}
            if isinstance(encrypted, str) and encrypted:
                meta["reasoningEncryptedContent"] = encrypted
            else:
                encrypted = None
            self.end_reasoning(out, provider_metadata={PROVIDER: meta}, encrypted_value=encrypted)
        elif kind == "message":
            self.end_text(out, provider_metadata=_item_meta(item_id))
        elif kind == "custom_tool_call":
            key = item_id or _get(item, "call_id")
            if not self.has_call(key):
                self._item_added(item, out)
            text = _get(item, "input")
            self.end_call(
                key,
                out,
                arguments=text if isinstance(text, str) else None,
                provider_metadata=_custom_meta(item),
                text_input=True,
                provider_tool=True,
            )
        elif isinstance(kind, str) and kind.endswith("_call"):
            call_id = _get(item, "call_id")
            hosted = kind in _HOSTED_ITEMS or not isinstance(call_id, str) or _get(item, "execution") == "server"
            if not hosted:
                self._client_call(kind, call_id, item, out)
            elif isinstance(item_id, str):
                self._hosted_call(kind, item_id, item, out)

    def _client_call(self, kind: str, call_id: str, item: Any, out: list[ChatEvent]) -> None:
        """A tool the caller runs (computer, local shell, shell, apply patch...): a pending tool call."""
        item_id = _get(item, "id")
        key = ("client", item_id or call_id)
        if self.has_call(key):
            return
        data = item.model_dump(exclude_none=True, by_alias=True) if hasattr(item, "model_dump") else dict(item)
        for name in ("id", "type", "call_id", "status"):
            data.pop(name, None)
        meta: dict[str, Any] = {"itemId": item_id, "itemType": kind} if item_id else {"itemType": kind}
        field = next((f for f in ("action", "actions", "operation", "arguments") if f in data), None)
        if field is not None:
            value = data[field]
            meta["inputField"] = field
            keep = _CLIENT_ITEMS.get(kind, ())
            extra = {k: v for k, v in data.items() if k in keep}
            if extra:
                meta["itemFields"] = extra
        else:
            value = data
        metadata = {PROVIDER: meta}
        self.call(key, out, id=call_id, name=kind[: -len("_call")], provider_metadata=metadata)
        self.end_call(key, out, arguments=_json_text(value), provider_metadata=metadata, provider_tool=True)

    def _hosted_call(self, kind: str, item_id: str, item: Any, out: list[ChatEvent]) -> None:
        """A tool the provider ran (web search, file search, code interpreter, ...), with its result."""
        if item_id in self._hosted or item_id in self.taken:
            return
        self.end_reasoning(out)
        self.end_text(out)
        self._hosted.add(item_id)
        self.taken.add(item_id)
        data = item.model_dump(exclude_none=True) if hasattr(item, "model_dump") else dict(item)
        data.pop("id", None)
        data.pop("type", None)
        action = data.pop("action", None)
        name = kind[: -len("_call")]
        meta = {PROVIDER: {"itemId": item_id, "itemType": kind}}
        value = action if action is not None else {}
        out.append(ToolCallStart(id=item_id, name=name, provider_executed=True, provider_metadata=meta))
        out.append(ToolCallEnd(id=item_id, input=value, provider_metadata=meta))
        out.append(ToolResult(id=item_id, output=data, provider_metadata=meta))
        self.parts.append(
            ToolCallPart(id=item_id, name=name, input=value, provider_executed=True, provider_metadata=meta)
        )
        self.parts.append(ToolResultPart(id=item_id, name=name, output=data, provider_metadata=meta))

    def _annotation(self, annotation: Any, out: list[ChatEvent]) -> None:
        kind = _get(annotation, "type")
        self._sources += 1
        sid = f"source_{self.prefix}_{self._sources}"
        if kind == "url_citation":
            url = _get(annotation, "url")
            if not isinstance(url, str):
                return
            source = Source(id=sid, url=url, title=_get(annotation, "title") or None)
        elif kind in ("file_citation", "container_file_citation", "file_path"):
            filename = _get(annotation, "filename") or _get(annotation, "file_id") or "file"
            meta = {PROVIDER: {"fileId": _get(annotation, "file_id")}}
            source = Source(
                id=sid, media_type="application/octet-stream", title=filename, filename=filename, provider_metadata=meta
            )
        else:
            return
        out.append(source)
        start, end = _count(_get(annotation, "start_index")), _count(_get(annotation, "end_index"))
        self.cite(Citation(source=source, start_index=start, end_index=end))

    def fail(self, exc: BaseException) -> RunError:
        """The SDK's exception as a RunError with the provider's message."""
        return provider_error(exc)


def _rs_id(item_id: Any) -> str | None:
    """A reasoning item's id, used as its block's id: a client that keeps only message ids and the
    encrypted value (AG-UI) still brings back what the API needs to take the reasoning again."""
    return item_id if isinstance(item_id, str) and item_id.startswith("rs_") else None


def _custom_meta(item: Any) -> dict[str, dict[str, Any]]:
    meta: dict[str, Any] = {"itemType": "custom_tool_call"}
    item_id = _get(item, "id")
    if isinstance(item_id, str) and item_id:
        meta["itemId"] = item_id
    return {PROVIDER: meta}


def _item_meta(item_id: Any) -> dict[str, dict[str, Any]] | None:
    return {PROVIDER: {"itemId": item_id}} if isinstance(item_id, str) and item_id else None


def responses_events(events: AsyncIterable[Any], *, prefix: str | None = None) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from a Responses API stream (SDK ``ResponseStreamEvent``\\ s or dicts)."""
    return translate(events, ResponsesTranslator(prefix))


# --- input: RunInput -> the provider's messages ----------------------------------------------------


def _result_text(part: ToolResultPart) -> str:
    if part.denied:
        return "The user denied this tool call." + (f" Reason: {part.error}" if part.error else "")
    if part.error is not None:
        return f"Error: {part.error}"
    return _json_text(part.output)


_NO_RESULT = "No result was recorded."


def system_text(run: RunInput, system_prompt: str | None) -> str | None:
    """The system prompt with the client's context items (AG-UI ``context``) appended."""
    if not run.context:
        return system_prompt
    lines = "\n".join(f"- {item.description}: {item.value}" for item in run.context)
    return f"{system_prompt or ''}\n\nContext from the application:\n{lines}".lstrip()


def _steps(message: Message) -> list[list[Any]]:
    """An assistant message's parts split into model steps: a new step starts at text or reasoning that
    follows a tool call (or its result)."""
    steps: list[list[Any]] = [[]]
    called = False
    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart) and called:
            steps.append([])
            called = False
        if isinstance(part, ToolCallPart | ToolResultPart):
            called = True
        steps[-1].append(part)
    return [s for s in steps if s]


def _results(messages: Sequence[Message]) -> dict[str, ToolResultPart]:
    found: dict[str, ToolResultPart] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                found.setdefault(part.id, part)
    return found


def _data_url(url: str) -> tuple[str, str] | None:
    """``(media type, base64 data)`` of a ``data:`` URL."""
    if not url.startswith("data:") or "," not in url:
        return None
    head, data = url[5:].split(",", 1)
    if not head.endswith(";base64"):
        data = base64.b64encode(data.encode()).decode()
        return head, data
    return head[: -len(";base64")], data


def _chat_user_content(message: Message) -> str | list[dict[str, Any]]:
    if not any(isinstance(p, FilePart) for p in message.parts):
        return message.text
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            content.append(_chat_file(part))
    return content


def _chat_file(part: FilePart) -> dict[str, Any]:
    media = part.media_type
    if media.startswith("image/") or media == "image":
        return {"type": "image_url", "image_url": {"url": part.url}}
    parsed = _data_url(part.url)
    if media in ("audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3") and parsed is not None:
        return {"type": "input_audio", "input_audio": {"data": parsed[1], "format": "wav" if "wav" in media else "mp3"}}
    if parsed is not None and media.startswith("text/"):  # a text file: its text, said to be a file
        try:
            text = base64.b64decode(parsed[1]).decode("utf-8")
        except ValueError:
            text = None
        if text is not None:
            return {"type": "text", "text": f"[attached file {part.filename or 'file'} ({media})]\n{text}"}
    if parsed is not None and media == "application/pdf":
        return {"type": "file", "file": {"filename": part.filename or "file.pdf", "file_data": part.url}}
    return {"type": "text", "text": f"[attached file {part.filename or part.url[:60]} ({media})]"}


def chat_messages(run: RunInput, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` for ``run`` (its history, in causal order).

    ``system_prompt`` (with the run's context items) comes first; system and developer messages become
    ``system`` messages; files become ``image_url`` / ``input_audio`` / ``file`` parts. Each assistant step
    is one ``assistant`` message (text, ``tool_calls``), followed by one ``tool`` message per call. Reasoning
    is not sent back (Chat Completions takes none).
    """
    out: list[dict[str, Any]] = []
    system = system_text(run, system_prompt)
    if system:
        out.append({"role": "system", "content": system})
    results = _results(run.messages)
    sent: set[str] = set()
    for message in run.messages:
        if message.role in ("system", "developer"):
            out.append({"role": "system", "content": message.text})
        elif message.role == "user":
            out.append({"role": "user", "content": _chat_user_content(message)})
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart) and part.id not in sent:
                    sent.add(part.id)
                    out.append({"role": "tool", "tool_call_id": part.id, "content": _result_text(part)})
            if not any(isinstance(p, ToolResultPart) for p in message.parts) and message.text:
                out.append({"role": "user", "content": message.text})
        else:
            for step in _steps(message):
                _chat_step(step, results, sent, out)
    return out


def _chat_step(
    step: list[Any], results: Mapping[str, ToolResultPart], sent: set[str], out: list[dict[str, Any]]
) -> None:
    text = "".join(p.text for p in step if isinstance(p, TextPart))
    calls = [p for p in step if isinstance(p, ToolCallPart)]
    if not text and not calls:
        return
    entry: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        entry["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _json_text(c.input)}}
            for c in calls
        ]
    out.append(entry)
    for call in calls:
        result = results.get(call.id)
        if call.id in sent:
            continue
        sent.add(call.id)
        content = _result_text(result) if result is not None else _NO_RESULT
        out.append({"role": "tool", "tool_call_id": call.id, "content": content})


def chat_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` (function specs) for neutral tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def _responses_user_content(message: Message) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, FilePart):
            if part.media_type.startswith("image/") or part.media_type == "image":
                content.append({"type": "input_image", "image_url": part.url, "detail": "auto"})
            elif part.url.startswith("data:"):
                content.append({"type": "input_file", "filename": part.filename or "file", "file_data": part.url})
            else:
                content.append({"type": "input_file", "file_url": part.url})
    return content


def responses_input(run: RunInput) -> list[dict[str, Any]]:
    """The Responses ``input`` items for ``run``'s history, in causal order.

    User messages become ``input_text``/``input_image``/``input_file`` content; assistant text becomes an
    assistant message; reasoning that carries its OpenAI item id comes back as a ``reasoning`` item with its
    summary and ``encrypted_content`` (needed with ``store=False``); each tool call is a ``function_call``
    item directly followed by its ``function_call_output``. The system prompt goes in ``instructions``.

    A tool OpenAI ran itself (a provider-executed call) is replayed as the output item it came as, with
    the fields the API requires: ``web_search_call`` (``id``, ``status``, ``action``), ``file_search_call``
    (``queries``, ``results``), ``code_interpreter_call`` (``code``, ``container_id``, ``outputs``),
    ``image_generation_call`` (``result``), ``mcp_call`` (``name``, ``arguments``, ``server_label``,
    ``output``/``error``), each a member of the API's input items, sent in full so that ``store=False``
    needs no stored item (the API takes a ``web_search_call`` back so). Other hosted items, a search
    without its ``action``, a call whose result was never recorded and one without its OpenAI item id
    (another provider's) are left out.

    A call the client ran (a custom tool, computer, shell or patch call, known by its provider metadata
    ``openai.itemType``) goes back as its own item type followed by its ``*_output`` item, or as a
    ``function_call`` pair when the result cannot take the required shape (see :func:`_client_pair`).
    """
    out: list[dict[str, Any]] = []
    results = _results(run.messages)
    sent: set[str] = set()
    for message in run.messages:
        if message.role in ("system", "developer"):
            out.append({"role": message.role, "content": message.text})
        elif message.role == "user":
            out.append({"role": "user", "content": _responses_user_content(message)})
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart) and part.id not in sent:
                    sent.add(part.id)
                    out.append({"type": "function_call_output", "call_id": part.id, "output": _result_text(part)})
        else:
            for step in _steps(message):
                _responses_step(step, results, sent, out, message.id)
    return out


def _responses_step(
    step: list[Any],
    results: Mapping[str, ToolResultPart],
    sent: set[str],
    out: list[dict[str, Any]],
    message_id: str = "",
) -> None:
    calls: list[ToolCallPart] = []
    for part in step:
        if isinstance(part, ReasoningPart):
            item = _reasoning_item(part, message_id)
            if item is not None:
                out.append(item)
        elif isinstance(part, TextPart):
            if part.text:
                out.append({"role": "assistant", "content": part.text})
        elif isinstance(part, ToolCallPart) and part.provider_executed:
            item = _hosted_item(part, results.get(part.id))
            if item is not None:
                out.append(item)
        elif isinstance(part, ToolCallPart):
            calls.append(part)
            pair = _client_pair(part, results.get(part.id))
            arguments = _json_text(part.input)
            function = {"type": "function_call", "call_id": part.id, "name": part.name, "arguments": arguments}
            out.append(pair[0] if pair is not None else function)
    for call in calls:
        if call.id in sent:
            continue
        sent.add(call.id)
        result = results.get(call.id)
        pair = _client_pair(call, result)
        if pair is not None:
            out.append(pair[1])
            continue
        output = _result_text(result) if result is not None else _NO_RESULT
        out.append({"type": "function_call_output", "call_id": call.id, "output": output})


_CLIENT_ITEMS: dict[str, tuple[str, ...]] = {
    "computer_call": ("pending_safety_checks",),
    "local_shell_call": (),
    "shell_call": ("environment", "caller"),
    "apply_patch_call": ("caller",),
}
"""The output items of tools the caller runs (answered by an ``*_output`` input item), with the fields
besides the input that their input item takes back (kept as provider metadata ``openai.itemFields``)."""


def _client_pair(call: ToolCallPart, result: ToolResultPart | None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A call of a tool the caller runs, with its answer, as the API's own item types: ``custom_tool_call``
    + ``custom_tool_call_output``, ``computer_call`` + ``computer_call_output``, ``local_shell_call`` +
    ``local_shell_call_output``, ``shell_call`` + ``shell_call_output``, ``apply_patch_call`` +
    ``apply_patch_call_output``. None when the call is an ordinary function call, or when the answer cannot
    take the shape its output item requires (then the pair goes as ``function_call`` +
    ``function_call_output``): a computer call answered by anything but a screenshot (a ``data:``/``http``
    image URL, or an object with ``image_url`` or ``file_id``), a shell call answered by anything but its
    output entries (``stdout``, ``stderr``, ``outcome``; one object or a list), a computer, shell or local
    shell call without a result or without its OpenAI item id where the item requires it."""
    meta = (call.provider_metadata or {}).get(PROVIDER) or {}
    kind = meta.get("itemType")
    if kind == "custom_tool_call":
        text = call.input if isinstance(call.input, str) else _json_text(call.input)
        output = _result_text(result) if result is not None else _NO_RESULT
        return (
            {"type": kind, "call_id": call.id, "name": call.name, "input": text},
            {"type": "custom_tool_call_output", "call_id": call.id, "output": output},
        )
    if kind not in _CLIENT_ITEMS:
        return None
    item_id = meta.get("itemId")
    field = meta.get("inputField")
    fields = meta.get("itemFields") or {}
    item: dict[str, Any] = {"type": kind, "call_id": call.id}
    if isinstance(item_id, str) and item_id:
        item["id"] = item_id
    elif kind in ("computer_call", "local_shell_call"):
        return None  # their input items require the item id
    if isinstance(field, str):
        item[field] = call.input
    elif isinstance(call.input, dict):
        item.update(call.input)
    item.update({k: v for k, v in fields.items() if k in _CLIENT_ITEMS[kind]})
    item["status"] = "completed"
    answer: dict[str, Any]
    if kind == "apply_patch_call":
        failed = result is None or result.error is not None or result.denied
        answer = {"type": "apply_patch_call_output", "call_id": call.id, "status": "failed" if failed else "completed"}
        answer["output"] = _result_text(result) if result is not None else _NO_RESULT
        return item, answer
    if result is None:
        return None
    if kind == "local_shell_call":
        # the SDK's input type names the call by ``id`` (the model's call id), not ``call_id``
        return item, {"type": "local_shell_call_output", "id": call.id, "output": _result_text(result)}
    if result.error is not None or result.denied:
        return None
    value = _json_value(result.output)
    if kind == "computer_call":
        item.setdefault("pending_safety_checks", [])
        screenshot = _screenshot(value)
        if screenshot is None:
            return None
        answer = {"type": "computer_call_output", "call_id": call.id, "output": screenshot}
        if isinstance(value, dict) and isinstance(value.get("acknowledged_safety_checks"), list):
            answer["acknowledged_safety_checks"] = value["acknowledged_safety_checks"]
        return item, answer
    entries = _shell_entries(value)
    if entries is None:
        return None
    return item, {"type": "shell_call_output", "call_id": call.id, "output": entries}


def _json_value(output: Any) -> Any:
    """A tool result's output, with JSON text (how AG-UI keeps results) parsed."""
    if isinstance(output, str) and output[:1] in ("{", "["):
        try:
            return json.loads(output)
        except ValueError:
            return output
    return output


def _screenshot(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str) and value.startswith(("data:image/", "https://", "http://")):
        return {"type": "computer_screenshot", "image_url": value}
    if isinstance(value, dict):
        shot = {k: value[k] for k in ("image_url", "file_id") if isinstance(value.get(k), str) and value[k]}
        if shot:
            return {"type": "computer_screenshot", **shot}
    return None


def _shell_entries(value: Any) -> list[dict[str, Any]] | None:
    entries = value if isinstance(value, list) else [value]
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("stdout"), str)
            and isinstance(entry.get("stderr"), str)
            and isinstance(entry.get("outcome"), dict)
        ):
            return None
    return [{"stdout": e["stdout"], "stderr": e["stderr"], "outcome": e["outcome"]} for e in entries]


_HOSTED_ITEMS = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call"}
)
"""The output items of tools OpenAI runs itself that the API takes back as input items as they are."""

_NULLABLE: dict[str, tuple[str, ...]] = {
    "code_interpreter_call": ("code", "outputs"),
    "image_generation_call": ("result",),
}
"""Fields an item type requires even when null (the SDK's objects leave nulls out)."""


def _hosted_item(call: ToolCallPart, result: ToolResultPart | None) -> dict[str, Any] | None:
    """A tool OpenAI ran itself, as the output item it came as (``{"type": "web_search_call", "id",
    "status", "action"}``...), rebuilt from the call (its ``action``) and its result (the item's other
    fields); None for an item the API cannot take back (see :func:`responses_input`)."""
    meta = (call.provider_metadata or {}).get(PROVIDER) or {}
    kind = meta.get("itemType") or f"{call.name}_call"
    item_id = meta.get("itemId")  # none: a tool another provider ran
    if kind not in _HOSTED_ITEMS or not isinstance(item_id, str) or result is None or result.error is not None:
        return None
    output = result.output
    if isinstance(output, str):  # AG-UI keeps a tool result as JSON text
        try:
            output = json.loads(output)
        except ValueError:
            return None
    if not isinstance(output, dict):
        return None
    item: dict[str, Any] = {"type": kind, "id": item_id, **output}
    if call.input not in (None, {}):
        item["action"] = call.input
    elif kind == "web_search_call":
        return None  # the API's web_search_call input item requires its action
    for key in _NULLABLE.get(kind, ()):
        item.setdefault(key, None)
    if kind != "mcp_call":
        item.setdefault("status", "completed")
    return item


def _reasoning_item(part: ReasoningPart, message_id: str = "") -> dict[str, Any] | None:
    meta = (part.provider_metadata or {}).get(PROVIDER) or {}
    item_id = meta.get("itemId") or _rs_id(message_id)  # AG-UI keeps the block's id as the message's
    if not isinstance(item_id, str) or not item_id:
        return None  # reasoning from elsewhere: the API takes reasoning items only by their id
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
    }
    encrypted = meta.get("reasoningEncryptedContent") or part.encrypted_value
    if isinstance(encrypted, str) and encrypted:
        item["encrypted_content"] = encrypted
    return item


def responses_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Responses ``tools`` (function tools) for neutral tools."""
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters or {"type": "object", "properties": {}},
            "strict": False,
        }
        for t in tools
    ]


# --- the agents ------------------------------------------------------------------------------------


class HTTPStatusError(Exception):
    """An error status from an OpenAI-compatible server (the plain-httpx path): ``status_code`` and the
    parsed error ``body``."""

    def __init__(self, status_code: int, body: Any) -> None:
        self.status_code = status_code
        self.body = body
        error = body.get("error", body) if isinstance(body, dict) else body
        self.message = _error_text(error) if error else f"HTTP {status_code}"
        super().__init__(self.message)


class _ChatSteps:
    """The Chat Completions provider for the tool loop."""

    def __init__(self, agent: OpenAIChatAgent) -> None:
        self.agent = agent

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return chat_messages(run, self.agent.system_prompt)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return ChatTranslator(prefix, taken)

    def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncIterable[Any]:
        return self.agent._stream(messages, tools)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        messages.extend(chat_messages(RunInput(thread_id="", run_id="", messages=list(turn))))


class OpenAIChatAgent:
    """An agent core over Chat Completions: an ``AsyncOpenAI`` client, or any OpenAI-compatible server.

    Give ``client`` (an ``openai.AsyncOpenAI``), or ``base_url`` (``http://localhost:11434/v1`` for Ollama,
    vLLM, DeepSeek, ...) to talk plain httpx with no SDK (``http_client`` shares a pool; it is then not
    closed by the agent). ``tools`` are server tools (:class:`~streamkit.sources.tools.ServerTool`, plain
    functions, or objects with ``name``/``description``/``parameters``/``run``) run by the shared tool
    loop; the client's frontend tools are offered too and their calls left pending. ``options`` are merged
    into every request body (``temperature``, ``reasoning_effort``...).
    """

    def __init__(
        self,
        client: AsyncOpenAI | None = None,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        tools: Sequence[Any] = (),
        system_prompt: str | None = None,
        max_steps: int = 8,
        include_usage: bool = True,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 120.0,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if client is None and base_url is None:
            client = _openai().AsyncOpenAI(api_key=api_key, http_client=http_client)
        self.client = client
        self.model = model
        self.base_url = (base_url or str(getattr(client, "base_url", ""))).rstrip("/")
        self.api_key = api_key
        self.tools: list[ServerTool] = as_server_tools(tools)
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.include_usage = include_usage
        self.http_client = http_client
        self.timeout = timeout
        self.options = dict(options or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"

    def request_body(self, messages: list[dict[str, Any]], tools: Sequence[Tool] = ()) -> dict[str, Any]:
        """The JSON body of one streaming completion request."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if self.include_usage:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = chat_tools(tools)
        body.update(self.options)
        return body

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        """Stream one run: model calls and tool calls until the model stops (at most ``max_steps``)."""
        return run_tool_loop(run, _ChatSteps(self), self.tools, max_steps=self.max_steps)

    async def _stream(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncGenerator[Any, None]:
        body = self.request_body(messages, tools)
        if self.client is not None:
            stream = await self.client.chat.completions.create(**body)
            async with stream:
                async for chunk in stream:
                    yield chunk
            return
        async for chunk in self._http_stream(body):
            yield chunk

    async def _http_stream(self, body: dict[str, Any]) -> AsyncGenerator[Any, None]:
        import httpx

        client = self.http_client or httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=10.0))
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        try:
            url = f"{self.base_url}/chat/completions"
            async with client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code >= 400:
                    raw = await response.aread()
                    raise HTTPStatusError(response.status_code, _parse_body(raw))
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        yield json.loads(data)
                    except ValueError:
                        continue
        except httpx.TimeoutException:
            raise _Unreachable(f"The model server at {self.base_url} timed out.", "model_timeout") from None
        except httpx.TransportError as exc:
            text = f"Could not reach the model server at {self.base_url}: {type(exc).__name__}."
            raise _Unreachable(text, "model_unreachable") from None
        finally:
            if self.http_client is None:
                await client.aclose()


class _Unreachable(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {"message": raw.decode("utf-8", "replace").strip()[:300] or None}


class _ResponsesSteps:
    """The Responses API provider for the tool loop."""

    def __init__(self, agent: OpenAIResponsesAgent, run: RunInput) -> None:
        self.agent = agent
        self.instructions = system_text(run, agent.system_prompt)

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return responses_input(run)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return ResponsesTranslator(prefix, taken)

    def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncIterable[Any]:
        return self.agent._stream(messages, tools, self.instructions)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        messages.extend(responses_input(RunInput(thread_id="", run_id="", messages=list(turn))))


class OpenAIResponsesAgent:
    """An agent core over the Responses API with an ``AsyncOpenAI`` client (stateless: each request sends
    the whole history; ``store`` defaults to False and reasoning's ``encrypted_content`` is asked for and
    sent back, so reasoning models keep their reasoning across tool calls).

    ``tools`` are server tools, run by the shared tool loop; the client's frontend tools are offered too and
    their calls left pending. ``options`` are merged into every request (``reasoning``, ``temperature``...).
    """

    def __init__(
        self,
        client: AsyncOpenAI | None = None,
        *,
        model: str,
        tools: Sequence[Any] = (),
        system_prompt: str | None = None,
        max_steps: int = 8,
        store: bool = False,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.client = client if client is not None else _openai().AsyncOpenAI()
        self.model = model
        self.tools: list[ServerTool] = as_server_tools(tools)
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.store = store
        self.options = dict(options or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    def request_body(
        self, items: list[dict[str, Any]], tools: Sequence[Tool] = (), instructions: str | None = None
    ) -> dict[str, Any]:
        """The keyword arguments of one streaming ``responses.create`` call."""
        body: dict[str, Any] = {"model": self.model, "input": items, "stream": True, "store": self.store}
        if not self.store:
            body["include"] = ["reasoning.encrypted_content"]
        if instructions:
            body["instructions"] = instructions
        if tools:
            body["tools"] = responses_tools(tools)
        body.update(self.options)
        return body

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        """Stream one run: model calls and tool calls until the model stops (at most ``max_steps``)."""
        return run_tool_loop(run, _ResponsesSteps(self, run), self.tools, max_steps=self.max_steps)

    async def _stream(
        self, items: list[dict[str, Any]], tools: Sequence[Tool], instructions: str | None
    ) -> AsyncGenerator[Any, None]:
        stream = await self.client.responses.create(**self.request_body(items, tools, instructions))
        async with stream:
            async for event in stream:
                yield event
