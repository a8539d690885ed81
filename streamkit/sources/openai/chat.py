"""OpenAI Chat Completions as a source (the three parts; the package face is :mod:`streamkit.sources.openai`).

- **input**: :func:`to_openai_chat_messages` (each assistant step one ``assistant`` message with its
  ``tool_calls``, each call directly followed by its ``tool`` message, by the rules of
  :mod:`streamkit.sources.history`) and :func:`to_openai_chat_tools`;
- **translator**: :class:`OpenAIChatTranslator`; every chunk is of one kind, so it reads a chunk's fields in
  turn (no table); :func:`openai_chat_events` makes a run of a stream in hand;
- **agent**: :class:`OpenAIChatAgent`, over an ``AsyncOpenAI`` client or any OpenAI-compatible server over
  plain httpx.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...events import (
    ChatEvent,
    Citation,
    FilePart,
    FinishReason,
    Message,
    RunError,
    RunInput,
    Source,
    TextDelta,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from ..history import NO_RESULT, provider_text, result_text, steps, tool_results
from ..loop import StepTranslator, run_tool_loop, translate
from ..tools import ServerTool, as_server_tools, function_specs
from ._common import (
    PROVIDER,
    HTTPStatusError,
    attr,
    count_of,
    error_code,
    error_text,
    fields_of,
    import_openai,
    provider_error,
    system_text,
)

if TYPE_CHECKING:
    import httpx
    from openai import AsyncOpenAI

__all__ = [
    "OpenAIChatAgent",
    "OpenAIChatTranslator",
    "chat_usage",
    "openai_chat_events",
    "to_openai_chat_messages",
    "to_openai_chat_tools",
]

_CHAT_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content-filter",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
}


def chat_usage(usage: Any, model: str | None = None) -> Usage:
    """A Chat Completions ``usage`` object as :class:`~streamkit.events.Usage`."""
    prompt = count_of(attr(usage, "prompt_tokens"))
    completion = count_of(attr(usage, "completion_tokens"))
    total = count_of(attr(usage, "total_tokens"))
    details = attr(usage, "completion_tokens_details")
    cached_details = attr(usage, "prompt_tokens_details")
    cached = count_of(attr(cached_details, "cached_tokens")) if cached_details is not None else None
    if cached is None:  # DeepSeek
        cached = count_of(attr(usage, "prompt_cache_hit_tokens"))
    reasoning = count_of(attr(details, "reasoning_tokens")) if details is not None else None
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


class OpenAIChatTranslator(StepTranslator):
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
        fields = fields_of(chunk)
        error = fields.get("error")
        if error is not None:
            self.error = RunError(message=error_text(error), code=error_code(error))
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
            choice = fields_of(choice)
            if choice.get("index") or 0:
                continue
            delta = choice.get("delta")
            if delta is not None:
                self._delta(fields_of(delta), out)
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
                call = fields_of(call)
                index = call.get("index")
                key = index if isinstance(index, int) else position
                function = fields_of(call.get("function"))
                cid = call.get("id")
                name = function.get("name")
                if cid or name or not self.has_call(key):
                    self.call(key, out, id=cid if isinstance(cid, str) else None, name=name or None)
                args = function.get("arguments")
                if args and isinstance(args, str):
                    self.call_args(key, args, out)
        legacy = delta.get("function_call")
        if legacy is not None:
            legacy = fields_of(legacy)
            self.call("function_call", out, name=legacy.get("name") or None)
            args = legacy.get("arguments")
            if isinstance(args, str) and args:
                self.call_args("function_call", args, out)

    def _annotation(self, annotation: Any, out: list[ChatEvent]) -> None:
        cited = attr(annotation, "url_citation")
        url = attr(cited, "url") if cited is not None else None
        if not isinstance(url, str) or not url:
            return
        self._sources += 1
        title = attr(cited, "title")
        source = Source(id=f"source_{self.prefix}_{self._sources}", url=url, title=title or None)
        out.append(source)
        start, end = count_of(attr(cited, "start_index")), count_of(attr(cited, "end_index"))
        self.cite(Citation(source=source, start_index=start, end_index=end))

    def fail(self, exc: BaseException) -> RunError:
        """The SDK's or the HTTP layer's exception as a RunError with the provider's message."""
        return provider_error(exc)


def openai_chat_events(
    chunks: AsyncIterable[Any] | Iterable[Any], *, prefix: str | None = None
) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from a Chat Completions stream (SDK ``ChatCompletionChunk``\\ s or dicts, an async
    or a sync iterable).

    ``RunStarted`` (no ids: the route's), the content, then ``RunFinished`` with the finish reason and usage,
    or a ``RunError`` with the provider's message when the stream reports an error or raises one.
    """
    return translate(chunks, OpenAIChatTranslator(prefix))


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


def to_openai_chat_messages(run: RunInput, system_prompt: str | None = None) -> list[dict[str, Any]]:
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
    results = tool_results(run.messages)
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
                    out.append({"role": "tool", "tool_call_id": part.id, "content": result_text(part)})
            if not any(isinstance(p, ToolResultPart) for p in message.parts) and message.text:
                out.append({"role": "user", "content": message.text})
        else:
            for step in steps(message):
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
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": provider_text(c.input)}}
            for c in calls
        ]
    out.append(entry)
    for call in calls:
        result = results.get(call.id)
        if call.id in sent:
            continue
        sent.add(call.id)
        content = result_text(result) if result is not None else NO_RESULT
        out.append({"role": "tool", "tool_call_id": call.id, "content": content})


def to_openai_chat_tools(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` (function specs) for neutral tools."""
    return function_specs(tools)


class _ChatSteps:
    """The Chat Completions provider for the tool loop."""

    def __init__(self, agent: OpenAIChatAgent) -> None:
        self.agent = agent

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return to_openai_chat_messages(run, self.agent.system_prompt)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return OpenAIChatTranslator(prefix, taken)

    def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncIterable[Any]:
        return self.agent._stream(messages, tools)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        messages.extend(to_openai_chat_messages(RunInput(thread_id="", run_id="", messages=list(turn))))


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
            client = import_openai().AsyncOpenAI(api_key=api_key, http_client=http_client)
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
            body["tools"] = to_openai_chat_tools(tools)
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
