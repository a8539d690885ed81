"""Ollama's native chat API: the history in, the ``/api/chat`` NDJSON stream out, and an agent.

The three parts every source has:

1. **Input**: :func:`to_ollama_messages` turns a :class:`~streamkit.events.RunInput` into ``/api/chat``
   messages (``content``, base64 ``images``, ``thinking``, ``tool_calls``, ``role: tool`` results with their
   ``tool_name``) and :func:`to_ollama_tools` the tools into function specs.
2. **Stream translation**: :class:`OllamaTranslator` is the pure state machine (one stream chunk in,
   ``ChatEvent``\\ s out); :func:`ollama_events` wraps it into a well-formed run. It reads the ``ollama`` SDK's
   ``ChatResponse`` objects (``await client.chat(..., stream=True)``) or the same chunks as plain dicts (the
   NDJSON lines). Ollama sends each tool call whole and usually without an id: the translator gives it one,
   unique in the run (``call_<prefix>_<n>``), or keeps the server's when it sends one.
3. **An agent**: :class:`OllamaAgent` runs the model over an ``ollama.AsyncClient`` or over plain httpx
   against a base URL, with the client's frontend tools and your server tools, through the shared tool loop
   (:func:`streamkit.sources.loop.run_tool_loop`).

To splice one chat stream into a longer run of your own, use :func:`streamkit.sources.loop.stream_step`
with an :class:`OllamaTranslator` instead of :func:`ollama_events`, then read the translator's ``error``,
``finish`` and ``usage``.

**The finish reason** comes from the ``done`` chunk's ``done_reason``: ``stop`` (and ``load`` / ``unload``)
is ``stop``, ``length`` is ``length``, any other reason ``other``; a ``done`` chunk without ``done_reason``
(older servers, and the examples of Ollama's API docs) means the model stopped on its own: ``stop``. Either
way a turn that called tools finishes ``tool-calls``.

The ``ollama`` package is optional (``pip install 'streamkit[ollama]'``): a base URL needs only httpx.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Mapping, Sequence
from typing import Any

import httpx

from ..events import (
    ChatEvent,
    FilePart,
    FinishReason,
    Message,
    ReasoningPart,
    RunError,
    RunInput,
    TextPart,
    Tool,
    ToolCallPart,
    Usage,
)
from .history import input_object, is_part, result_text, steps, tool_results
from .loop import StepTranslator, describe_error, run_tool_loop, translate
from .tools import ServerTool, as_server_tools, function_specs

__all__ = [
    "DEFAULT_HOST",
    "OllamaAgent",
    "OllamaError",
    "OllamaTranslator",
    "chat_events",
    "ollama_events",
    "to_ollama_messages",
    "to_ollama_tools",
]

PROVIDER = "ollama"

DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where a local Ollama server listens."""

_FINISH: dict[str, FinishReason] = {"stop": "stop", "length": "length", "load": "stop", "unload": "stop"}


class OllamaError(Exception):
    """An error status (or an ``error`` line) from an Ollama server reached over plain httpx: ``error`` is
    the server's message, ``status_code`` the HTTP status (-1 inside a stream)."""

    def __init__(self, error: str, status_code: int = -1) -> None:
        super().__init__(error)
        self.error = error
        self.status_code = status_code


def _g(obj: Any, key: str) -> Any:
    """``obj[key]`` for a dict, ``obj.key`` for an SDK object (None when absent)."""
    if type(obj) is dict:  # the common case first: an ABC isinstance check costs more than the lookup
        return obj.get(key)
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


# --- RunInput -> /api/chat messages ----------------------------------------------------------------


def to_ollama_tools(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """Function specs (``{"type": "function", "function": {name, description, parameters}}``)."""
    return function_specs(tools)


def _image(part: FilePart) -> str | None:
    """The base64 payload of an image given as a ``data:`` URL (Ollama takes images as base64 only)."""
    if not part.url.startswith("data:") or "," not in part.url:
        return None
    head, payload = part.url[5:].split(",", 1)
    media = head.removesuffix(";base64").split(";", 1)[0] or part.media_type
    if not head.endswith(";base64") or not media.startswith("image/"):
        return None
    return payload


def to_ollama_messages(
    messages: Sequence[Message], *, system: str | None = None, context: Iterable[Any] = ()
) -> list[dict[str, Any]]:
    """The ``/api/chat`` messages for a neutral history.

    ``system`` and the client's ``context`` items (``description: value`` lines) open the list as one
    system message; the history's system and developer messages stay where they are (as ``system``). An
    assistant message that goes on after tool results is split there, each step's reasoning joined into
    ``thinking``, its text into ``content``; every ``tool_calls`` message is followed by one ``role: tool``
    message per call, in call order, wherever the history holds the result (an unanswered call gets a
    placeholder). Images travel as base64 (``data:`` URLs); other files as a note in the text.
    """
    out: list[dict[str, Any]] = []
    items = list(context)
    head = [system] if system else []
    if items:
        head.append("Context:\n" + "\n".join(f"- {c.description}: {c.value}" for c in items))
    if head:
        out.append({"role": "system", "content": "\n\n".join(head)})
    answers = tool_results(messages)

    def flush(thinking: list[str], text: list[str], calls: list[ToolCallPart]) -> None:
        if not thinking and not text and not calls:
            return
        if out and out[-1]["role"] == "assistant" and "tool_calls" not in out[-1]:
            entry = out.pop()  # one assistant turn sent as several messages (AG-UI reasoning messages)
            thinking = [entry.get("thinking", ""), *thinking]
            text = [entry.get("content", ""), *text]
        entry = {"role": "assistant", "content": "".join(text)}
        if any(thinking):
            entry["thinking"] = "".join(thinking)
        if calls:
            entry["tool_calls"] = [{"function": {"name": c.name, "arguments": input_object(c.input)}} for c in calls]
        out.append(entry)
        for call in calls:
            result = answers.get(call.id)
            name = (result.name if result is not None else None) or call.name
            out.append({"role": "tool", "content": result_text(result, call), "tool_name": name})

    for message in messages:
        if message.role in ("system", "developer"):
            out.append({"role": "system", "content": message.text})
        elif message.role in ("user", "tool"):
            text: list[str] = []
            images: list[str] = []
            for part in message.parts:
                if isinstance(part, TextPart):
                    text.append(part.text)
                elif isinstance(part, FilePart):
                    image = _image(part)
                    if image is not None:
                        images.append(image)
                    else:
                        text.append(f"[attached file {part.filename or part.url[:60]} ({part.media_type})]")
            if not text and not images:
                continue  # a tool message: its results were placed after their calls
            entry: dict[str, Any] = {"role": "user", "content": "".join(text)}
            if images:
                entry["images"] = images
            out.append(entry)
        else:
            for step in steps(message, is_part):  # a turn that went on after tool calls: one step at a time
                thinking: list[str] = []
                content: list[str] = []
                calls: list[ToolCallPart] = []
                for part in step:
                    if isinstance(part, ToolCallPart):
                        calls.append(part)
                    elif isinstance(part, TextPart):
                        content.append(part.text)
                    elif isinstance(part, ReasoningPart):
                        thinking.append(part.text)
                flush(thinking, content, calls)  # a step without calls joins the assistant message before it
    return out


# --- /api/chat stream -> ChatEvents ----------------------------------------------------------------


class OllamaTranslator(StepTranslator):
    """``/api/chat`` stream chunks (SDK ``ChatResponse`` objects or dicts) -> ``ChatEvent``\\ s, for one call.

    ``message.thinking`` streams as reasoning, ``message.content`` as text; each entry of
    ``message.tool_calls`` is a whole call (start, its arguments as one JSON delta, end), several per chunk
    or across chunks. The ``done`` chunk gives the finish reason (``done_reason``; ``tool-calls`` when the
    model called tools) and usage (``prompt_eval_count`` in, ``eval_count`` out); an ``error`` line ends the
    step with a ``RunError``; a stream that ends without ``done`` is an error too.
    """

    provider = PROVIDER

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        super().__init__(prefix, taken)
        self._done = False
        self._n = 0

    def feed(self, chunk: Any) -> list[ChatEvent]:
        if type(chunk) is dict and not chunk.get("done") and "error" not in chunk:
            message = chunk.get("message")  # the common chunk: a piece of content or of thinking, no more
            if type(message) is dict and not message.get("tool_calls"):
                content, thinking = message.get("content"), message.get("thinking")
                fast: list[ChatEvent] = []
                if content and type(content) is str and not thinking:
                    self.text(content, fast)
                    return fast
                if thinking and type(thinking) is str and not content:
                    self.reasoning(thinking, fast)
                    return fast
        error = _g(chunk, "error")
        if error:
            self.error = RunError(message=str(error), code="model_error")
            return []
        out: list[ChatEvent] = []
        message = _g(chunk, "message")
        if message is not None:
            thinking = _g(message, "thinking")
            if thinking:
                self.reasoning(thinking, out)
            content = _g(message, "content")
            if content:
                self.text(content, out)
            for call in _g(message, "tool_calls") or ():
                self._tool_call(call, out)
        if _g(chunk, "done"):
            self._finished(chunk)
        return out

    def _tool_call(self, call: Any, out: list[ChatEvent]) -> None:
        """One whole tool call of ``message.tool_calls``: started, its arguments, ended."""
        function = _g(call, "function")
        name = _g(function, "name")
        if not isinstance(name, str) or not name:
            return
        arguments = _g(function, "arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(dict(arguments) if arguments else {}, ensure_ascii=False)
        key = self._n
        self._n += 1
        cid = _g(call, "id")
        if not isinstance(cid, str) or not cid:
            cid = f"call_{self.prefix}_{self._n}"  # Ollama usually sends none: unique in the run
        self.call(key, out, id=cid, name=name)
        self.end_call(key, out, arguments=arguments)

    def _finished(self, chunk: Any) -> None:
        """The ``done`` chunk: the finish reason and the usage."""
        self._done = True
        reason = _g(chunk, "done_reason")
        self.finish_reason = _FINISH.get(reason, "other") if isinstance(reason, str) else "stop"
        inputs, outputs = _g(chunk, "prompt_eval_count"), _g(chunk, "eval_count")
        if isinstance(inputs, int) or isinstance(outputs, int):
            total = (inputs or 0) + (outputs or 0)
            model = _g(chunk, "model")
            self.usage = Usage(
                input_tokens=inputs if isinstance(inputs, int) else None,
                output_tokens=outputs if isinstance(outputs, int) else None,
                total_tokens=total,
                provider=PROVIDER,
                model=model if isinstance(model, str) else None,
            )

    def close(self) -> list[ChatEvent]:
        out = super().close()
        if self.error is None and not self._done:
            self.error = RunError(message="The Ollama stream ended before it was done.", code="incomplete_stream")
        return out

    def fail(self, exc: BaseException) -> RunError:
        """The server's message for an ``ollama.ResponseError`` / :class:`OllamaError` (HTTP status as the
        code, when there is one); otherwise :func:`~streamkit.sources.loop.describe_error`."""
        error = getattr(exc, "error", None)
        status = getattr(exc, "status_code", None)
        if isinstance(error, str) and error:
            code = f"http_{status}" if isinstance(status, int) and status > 0 else "model_error"
            return RunError(message=error, code=code)
        return describe_error(exc)


def ollama_events(
    chunks: AsyncIterable[Any] | Iterable[Any], *, prefix: str | None = None
) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from an ``/api/chat`` stream: ``RunStarted``, the content, then ``RunFinished``
    (finish reason, usage) or a ``RunError`` with the server's message (an ``error`` line, an
    ``ollama.ResponseError`` or a dropped connection while iterating: nothing escapes as an exception).

    ``chunks``: what ``await ollama.AsyncClient().chat(..., stream=True)`` returns, or the NDJSON lines as
    dicts (sync or async iterable). Block and invented tool-call ids start with ``prefix`` (default:
    random)."""
    return translate(chunks, OllamaTranslator(prefix))


async def _http_chat(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> AsyncGenerator[Any, None]:
    """The NDJSON lines of ``POST url`` as dicts; an error status raises :class:`OllamaError`."""
    async with client.stream("POST", url, json=body) as response:
        if response.status_code >= 400:
            text = (await response.aread()).decode("utf-8", "replace")
            try:
                message = json.loads(text).get("error") or text
            except (ValueError, AttributeError):
                message = text
            raise OllamaError(message or f"HTTP {response.status_code}", response.status_code)
        async for line in response.aiter_lines():
            if line.strip():
                yield json.loads(line)


# --- the agent -------------------------------------------------------------------------------------


def _import_ollama() -> Any:
    try:
        import ollama
    except ImportError as exc:
        raise ImportError(
            "OllamaAgent needs the ollama package for an ollama.AsyncClient: pip install 'streamkit[ollama]' "
            "(or give a base URL to use plain httpx)"
        ) from exc
    return ollama


class _Run:
    """The tool loop's provider for one run."""

    def __init__(self, agent: OllamaAgent) -> None:
        self.agent = agent

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return to_ollama_messages(run.messages, system=self.agent.system, context=run.context)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return OllamaTranslator(prefix, taken)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        messages.extend(to_ollama_messages(turn))

    def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncIterable[Any]:
        agent = self.agent
        body: dict[str, Any] = {"model": agent.model, "messages": messages, **agent.options}
        if tools:
            body["tools"] = to_ollama_tools(tools)
        if agent.think is not None:
            body["think"] = agent.think
        if agent.http is not None:
            return _http_chat(agent.http, agent.url, {**body, "stream": True})
        return _sdk_chat(agent.client, body)


async def _sdk_chat(client: Any, body: dict[str, Any]) -> AsyncGenerator[Any, None]:
    async for chunk in await client.chat(**body, stream=True):
        yield chunk


class OllamaAgent:
    """An agent core over Ollama's ``/api/chat``.

    ``client`` is an ``ollama.AsyncClient``; or a base URL (``"http://127.0.0.1:11434"``), or an
    ``httpx.AsyncClient`` (its ``base_url``, or ``base_url=``), to stream the NDJSON over plain httpx
    without the SDK. Each run converts the history (:func:`to_ollama_messages`), streams the model with the
    client's frontend tools and ``tools`` (server tools), runs the server tools and calls the model again
    until it stops calling them or ``max_steps`` calls were made; frontend tool calls are left pending.
    ``think`` (``True`` or ``"low"``/``"medium"``/``"high"``) asks a thinking model to think; ``options`` go
    into the request as they are (``options={"temperature": 0}``, ``keep_alive="5m"``, ``format=...``).
    """

    def __init__(
        self,
        client: Any = None,
        *,
        model: str = "llama3.2",
        base_url: str | None = None,
        system: str | None = None,
        tools: Sequence[Any] = (),
        think: bool | str | None = None,
        max_steps: int = 8,
        **options: Any,
    ) -> None:
        self.http: httpx.AsyncClient | None = None
        self.url = "/api/chat"
        if isinstance(client, str):
            base_url, client = client, None
            self.http = httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None))
        elif isinstance(client, httpx.AsyncClient):
            self.http = client
        elif client is None and base_url is not None:
            self.http = httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None))
        elif client is None:
            client = _import_ollama().AsyncClient()
        if self.http is not None:
            base = base_url if base_url is not None else str(self.http.base_url)
            self.url = (base.rstrip("/") if base else DEFAULT_HOST) + "/api/chat"
        self.client = client
        self.model = model
        self.system = system
        self.tools: list[ServerTool] = as_server_tools(tools)
        self.think = think
        self.max_steps = max_steps
        self.options = options

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        return run_tool_loop(run, _Run(self), self.tools, max_steps=self.max_steps)


chat_events = ollama_events
"""The earlier name of :func:`ollama_events`."""
