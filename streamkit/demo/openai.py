"""An agent core for any OpenAI-compatible Chat Completions server, over httpx (no SDK).

Works with OpenAI, DeepSeek, vLLM, Ollama's ``/v1`` and other servers that stream
``chat.completion.chunk`` objects as Server-Sent Events. For each run it:

1. converts the neutral conversation (:class:`~streamkit.events.Message`) to Chat Completions messages;
2. streams one completion, mapping ``delta.content`` to text, ``delta.reasoning_content`` /
   ``delta.reasoning`` to reasoning, and ``delta.tool_calls`` (by index: id and name in the first chunk,
   the arguments split over many, several indices interleaved) to tool-call events;
3. runs the demo's tools for the calls, streams their results, appends them as ``role: tool`` messages
   and calls the model again, until it stops calling tools or ``max_steps`` model calls were made.

Error statuses, unreachable servers and errors sent inside the stream end the run with a
:class:`~streamkit.events.RunError` whose message says what happened (never the key).

:class:`CompletionMapper` is the pure part (parsed chunk in, events out) and holds no I/O.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..events import (
    ChatEvent,
    FilePart,
    FinishReason,
    Message,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    Source,
    StateSnapshot,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextPart,
    TextStart,
    Tool,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
    last_user_text,
)
from .agent import run_tag
from .tools import DEFAULT_TOOLS, DemoTool, run_tool, sources_of, tools_by_name

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "CompletionMapper",
    "ModelConfig",
    "OpenAIAgent",
    "ToolCallRequest",
    "to_openai_messages",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are the streamkit demo assistant. Be concise. Use the tools when they help: get_weather for "
    "weather, calculate for arithmetic, search_docs for questions about streaming chat protocols "
    "(AI SDK, AG-UI, Server-Sent Events, JSON Patch). Several independent tool calls may be made at once."
)
"""The system message the demo sends first (set ``system_prompt=None`` to send none)."""

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content-filter",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
}


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# --- conversation -> Chat Completions messages -----------------------------------------------------


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    files = [p for p in message.parts if isinstance(p, FilePart)]
    if not files:
        return message.text
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            if part.media_type.startswith("image/") or part.media_type == "image":
                content.append({"type": "image_url", "image_url": {"url": part.url}})
            else:
                name = part.filename or part.url[:60]
                content.append({"type": "text", "text": f"[attached file {name} ({part.media_type})]"})
    return content


def _result_text(part: ToolResultPart) -> str:
    if part.denied:
        return "The user denied this tool call."
    if part.error is not None:
        return f"Error: {part.error}"
    return _json_text(part.output)


def to_openai_messages(messages: Sequence[Message], system_prompt: str | None = None) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` for a neutral conversation.

    System and developer messages become ``system`` messages. An assistant message is split where it
    continues after tool results (the AI SDK keeps a whole multi-step turn in one message), so each
    ``tool_calls`` entry is directly followed by its ``role: tool`` answer. A call without a recorded
    result gets a placeholder answer, since the API rejects a call left unanswered. Reasoning is not
    sent back.
    """
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    answered: set[str] = set()
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                answered.add(part.id)

    def flush(text: list[str], calls: list[ToolCallPart], results: list[ToolResultPart]) -> None:
        if not text and not calls:
            return
        entry: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
        if calls:
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _json_text(c.input)}}
                for c in calls
            ]
        out.append(entry)
        by_id = {r.id: r for r in results}
        for call in calls:
            result = by_id.get(call.id)
            if result is not None:
                out.append({"role": "tool", "tool_call_id": call.id, "content": _result_text(result)})
            elif call.id not in answered:
                out.append({"role": "tool", "tool_call_id": call.id, "content": "No result was recorded."})

    for message in messages:
        if message.role in ("system", "developer"):
            out.append({"role": "system", "content": message.text})
        elif message.role == "user":
            out.append({"role": "user", "content": _user_content(message)})
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    out.append({"role": "tool", "tool_call_id": part.id, "content": _result_text(part)})
            if not any(isinstance(p, ToolResultPart) for p in message.parts) and message.text:
                out.append({"role": "user", "content": message.text})
        else:  # assistant
            text: list[str] = []
            calls: list[ToolCallPart] = []
            results: list[ToolResultPart] = []
            for part in message.parts:
                if isinstance(part, TextPart):
                    if calls:  # text after tool calls: a new step of the same turn
                        flush(text, calls, results)
                        text, calls, results = [], [], []
                    text.append(part.text)
                elif isinstance(part, ToolCallPart):
                    calls.append(part)
                elif isinstance(part, ToolResultPart):
                    results.append(part)
            flush(text, calls, results)
    return out


# --- the pure chunk mapper -------------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    index: int
    id: str | None = None
    name: str | None = None
    args: list[str] = field(default_factory=list)
    started: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call the model finished asking for: ``input`` parsed, or ``error`` when it did not parse."""

    id: str
    name: str
    arguments: str
    input: Any = None
    error: str | None = None


class CompletionMapper:
    """Maps one streamed completion's parsed chunks to ``ChatEvent``s (pure, per model call).

    ``feed(chunk)`` returns the events for one ``chat.completion.chunk``; ``close()`` ends the open blocks
    and the tool calls' input. Afterwards ``text``, ``tool_calls``, ``finish_reason`` and ``usage`` hold
    what the model produced. ``prefix`` makes block ids unique within the run; ``taken`` holds the tool call
    ids already used in the run (shared across its model calls): a server that repeats an id (some number
    calls per response) gets a suffixed one, since a run's tool call ids must be unique.
    """

    def __init__(self, prefix: str, taken: set[str] | None = None) -> None:
        self.prefix = prefix
        self.taken = taken if taken is not None else set()
        self.text_parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.tool_calls: list[ToolCallRequest] = []
        self.error: str | None = None
        self._text_id: str | None = None
        self._reasoning_id: str | None = None
        self._blocks = 0
        self._calls: dict[int, _Call] = {}

    @property
    def text(self) -> str:
        """The assistant text of this completion."""
        return "".join(self.text_parts)

    def _new_id(self, kind: str) -> str:
        self._blocks += 1
        return f"{kind}_{self.prefix}_{self._blocks}"

    def _start_call(self, state: _Call, out: list[ChatEvent]) -> str:
        cid = state.id or f"call_{self.prefix}_{state.index}"
        if cid in self.taken:
            n = 2
            while f"{cid}_{n}" in self.taken:
                n += 1
            cid = f"{cid}_{n}"
        self.taken.add(cid)
        state.id = cid
        state.started = True
        assert state.name is not None
        out.append(ToolCallStart(id=cid, name=state.name))
        return cid

    def _close_text(self, out: list[ChatEvent]) -> None:
        if self._text_id is not None:
            out.append(TextEnd(id=self._text_id))
            self._text_id = None

    def _close_reasoning(self, out: list[ChatEvent]) -> None:
        if self._reasoning_id is not None:
            out.append(ReasoningEnd(id=self._reasoning_id))
            self._reasoning_id = None

    def feed(self, chunk: Any) -> list[ChatEvent]:
        """The events for one parsed chunk (unknown or malformed pieces are ignored)."""
        out: list[ChatEvent] = []
        if not isinstance(chunk, dict):
            return out
        error = chunk.get("error")
        if error is not None:
            self.error = _error_message(error) or "the model server sent an error"
            return out
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return out
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta, out)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        return out

    def _delta(self, delta: dict[str, Any], out: list[ChatEvent]) -> None:
        reasoning = delta.get("reasoning_content")
        if not isinstance(reasoning, str) or not reasoning:
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._close_text(out)
            if self._reasoning_id is None:
                self._reasoning_id = self._new_id("reasoning")
                out.append(ReasoningStart(id=self._reasoning_id))
            out.append(ReasoningDelta(id=self._reasoning_id, delta=reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._close_reasoning(out)
            if self._text_id is None:
                self._text_id = self._new_id("text")
                out.append(TextStart(id=self._text_id))
            out.append(TextDelta(id=self._text_id, delta=content))
            self.text_parts.append(content)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            self._close_reasoning(out)
            self._close_text(out)
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    self._tool_delta(call, position, out)

    def _tool_delta(self, call: dict[str, Any], position: int, out: list[ChatEvent]) -> None:
        index = call.get("index")
        if not isinstance(index, int):
            index = position
        state = self._calls.get(index)
        if state is None:
            state = self._calls[index] = _Call(index=index)
        cid = call.get("id")
        if isinstance(cid, str) and cid and state.id is None and not state.started:
            state.id = cid
        function = call.get("function")
        if isinstance(function, dict):
            name = function.get("name")
            if isinstance(name, str) and name and state.name is None:
                state.name = name
            args = function.get("arguments")
            if isinstance(args, str) and args:
                state.args.append(args)
                if state.started:
                    assert state.id is not None
                    out.append(ToolCallArgsDelta(id=state.id, delta=args))
        if not state.started and state.name is not None:
            started = self._start_call(state, out)
            if state.args:
                out.append(ToolCallArgsDelta(id=started, delta="".join(state.args)))

    def close(self) -> list[ChatEvent]:
        """End the open text/reasoning blocks and every tool call's input (parsed as JSON)."""
        out: list[ChatEvent] = []
        self._close_reasoning(out)
        self._close_text(out)
        for index in sorted(self._calls):
            state = self._calls[index]
            if state.name is None:  # a call that never got a name cannot be run or shown
                continue
            if not state.started:
                self._start_call(state, out)
            assert state.id is not None
            arguments = "".join(state.args)
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except ValueError as exc:
                error = f"the model sent arguments that are not valid JSON: {exc}"
                out.append(ToolCallEnd(id=state.id, input=arguments, error=error))
                self.tool_calls.append(ToolCallRequest(state.id, state.name, arguments, arguments, error))
                continue
            out.append(ToolCallEnd(id=state.id, input=parsed))
            self.tool_calls.append(ToolCallRequest(state.id, state.name, arguments, parsed))
        return out


def _error_message(error: Any) -> str | None:
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        return json.dumps(error, ensure_ascii=False)[:500]
    if isinstance(error, str):
        return error[:500]
    return None


def _usage(total: dict[str, int], usage: Mapping[str, Any]) -> None:
    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    total["input"] += count(usage.get("prompt_tokens"))
    total["output"] += count(usage.get("completion_tokens"))
    details = usage.get("completion_tokens_details")
    if isinstance(details, dict):
        total["reasoning"] += count(details.get("reasoning_tokens"))
    cached = usage.get("prompt_tokens_details")
    if isinstance(cached, dict):
        total["cached"] += count(cached.get("cached_tokens"))
    elif "prompt_cache_hit_tokens" in usage:  # DeepSeek
        total["cached"] += count(usage.get("prompt_cache_hit_tokens"))


# --- configuration ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Where the model is: base URL, model name, API key (read from flags or the environment)."""

    base_url: str
    model: str
    api_key: str | None = None

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
    ) -> ModelConfig | None:
        """The configuration from explicit values, else ``STREAMKIT_*``, else ``OPENAI_*`` variables.

        ``STREAMKIT_BASE_URL``/``OPENAI_BASE_URL``, ``STREAMKIT_MODEL``/``OPENAI_MODEL`` and
        ``STREAMKIT_API_KEY``/``OPENAI_API_KEY``. None when no model is named (the demo then stays
        offline). The base URL defaults to OpenAI's.
        """
        env = os.environ if env is None else env

        def pick(value: str | None, *names: str) -> str | None:
            if value:
                return value
            for name in names:
                if env.get(name):
                    return env[name]
            return None

        chosen_model = pick(model, "STREAMKIT_MODEL", "OPENAI_MODEL")
        if chosen_model is None:
            return None
        url = pick(base_url, "STREAMKIT_BASE_URL", "OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return cls(base_url=url, model=chosen_model, api_key=pick(api_key, "STREAMKIT_API_KEY", "OPENAI_API_KEY"))


# --- the agent -------------------------------------------------------------------------------------


class OpenAIAgent:
    """An agent core driving an OpenAI-compatible ``/chat/completions`` endpoint with streaming.

    ``base_url`` is the API root (``http://localhost:11434/v1`` for Ollama). ``tools`` are offered to the
    model and run here; the client's own tools (``RunInput.tools``, AG-UI frontend tools) are offered too,
    and a call to one of them ends the run with that call pending, for the client to run and answer in its
    next request. ``max_steps`` bounds the model calls of one run. ``client`` may be given to share
    a connection pool (it is then not closed by the agent); ``extra_body`` is merged into every request.
    ``show_plan`` streams a small plan of the run's model and tool calls as shared state.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        tools: Sequence[DemoTool] = DEFAULT_TOOLS,
        max_steps: int = 8,
        client: httpx.AsyncClient | None = None,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        timeout: float = 120.0,
        extra_body: Mapping[str, Any] | None = None,
        include_usage: bool = True,
        show_plan: bool = True,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.tools = list(tools)
        self.max_steps = max_steps
        self.client = client
        self.system_prompt = system_prompt
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        self.include_usage = include_usage
        self.show_plan = show_plan
        self._by_name = tools_by_name(self.tools)

    @classmethod
    def from_config(cls, config: ModelConfig, **options: Any) -> OpenAIAgent:
        """An agent for ``config`` (see :meth:`ModelConfig.from_env`)."""
        return cls(config.base_url, config.model, config.api_key, **options)

    def __repr__(self) -> str:
        return f"OpenAIAgent(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        """The completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def request_body(self, messages: list[dict[str, Any]], client_tools: Sequence[Tool] = ()) -> dict[str, Any]:
        """The JSON body of one streaming completion request (``client_tools``: the client's own tools)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if self.include_usage:
            body["stream_options"] = {"include_usage": True}
        specs = [tool.spec() for tool in self.tools]
        specs += [_client_tool_spec(tool) for tool in client_tools if tool.name not in self._by_name]
        if specs:
            body["tools"] = specs
        body.update(self.extra_body)
        return body

    def _system(self, run: RunInput) -> str | None:
        """The system prompt, with the client's context items (AG-UI ``context``) appended."""
        if not run.context:
            return self.system_prompt
        lines = "\n".join(f"- {item.description}: {item.value}" for item in run.context)
        return f"{self.system_prompt or ''}\n\nContext from the application:\n{lines}".lstrip()

    def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        """Stream one run: model calls and tool calls until the model stops (at most ``max_steps``)."""
        return self._run(run)

    async def _run(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        client = self.client or httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=10.0))
        try:
            async with aclosing(self._loop(run, client)) as events:
                async for event in events:
                    yield event
        finally:
            if self.client is None:
                await client.aclose()

    async def _loop(self, run: RunInput, client: httpx.AsyncClient) -> AsyncGenerator[ChatEvent, None]:
        yield RunStarted(thread_id=run.thread_id, run_id=run.run_id, message_id=run.message_id)
        plan = _RunPlan(last_user_text(run)) if self.show_plan else None
        if plan is not None:
            yield StateSnapshot(state=plan.render())
        messages = to_openai_messages(run.messages, self._system(run))
        totals = {"input": 0, "output": 0, "reasoning": 0, "cached": 0}
        seen_usage = False
        finish: FinishReason = "stop"
        sources = 0
        taken: set[str] = set()
        pending: list[Any] = []  # calls to the client's own tools, left for the client to run
        for step in range(1, self.max_steps + 1):
            step_name = f"model-call-{step}"
            yield StepStarted(name=step_name)
            if plan is not None:
                yield plan.add(step_name, f"Model call {step}")
            mapper = CompletionMapper(prefix=f"{run_tag(run.run_id)}_{step}", taken=taken)
            error: RunError | None = None
            async with aclosing(self._stream(client, messages, mapper, run.tools)) as stream:
                async for item in stream:
                    if isinstance(item, RunError):
                        error = item
                        break
                    yield item
            if error is not None:
                if plan is not None:
                    yield plan.finish(step_name, "failed", "failed")
                yield error
                return
            for event in mapper.close():
                yield event
            if mapper.error is not None:
                if plan is not None:
                    yield plan.finish(step_name, "failed", "failed")
                yield RunError(message=f"The model server reported an error: {mapper.error}", code="model_error")
                return
            if mapper.usage is not None:
                seen_usage = True
                _usage(totals, mapper.usage)
            finish = _FINISH.get(mapper.finish_reason or "stop", "other")
            if plan is not None:
                yield plan.set(step_name, "done")
            calls = mapper.tool_calls
            if not calls:
                yield StepFinished(name=step_name)
                break
            finish = "tool-calls"
            messages.append(
                {
                    "role": "assistant",
                    "content": mapper.text or None,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                        for c in calls
                    ],
                }
            )
            client_names = {t.name for t in run.tools if t.name not in self._by_name}
            pending = [c for c in calls if c.name in client_names and c.error is None]
            for call in calls:
                if call in pending:  # the client runs it: no result here, the run ends with it pending
                    if plan is not None:
                        yield plan.add(call.id, f"{call.name}({_short_args(call.input)})", "pending")
                    continue
                if plan is not None:
                    yield plan.add(call.id, f"{call.name}({_short_args(call.input)})", "running")
                output: Any = None
                error_text: str | None = call.error
                if error_text is None:
                    output, error_text = run_tool(self._by_name, call.name, call.input)
                if error_text is None:
                    yield ToolResult(id=call.id, output=output)
                    for source in sources_of(output):
                        sources += 1
                        yield Source(
                            id=f"source_{run_tag(run.run_id)}_{sources}", url=source["url"], title=source.get("title")
                        )
                    content = _json_text(output)
                else:
                    yield ToolResult(id=call.id, error=error_text)
                    content = f"Error: {error_text}"
                if plan is not None:
                    yield plan.set(call.id, "done" if error_text is None else "failed")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            yield StepFinished(name=step_name)
            if pending:
                break
        if plan is not None:
            yield plan.finish(None, "done", "waiting for the client" if pending else "done")
        usage = None
        if seen_usage:
            usage = Usage(
                input_tokens=totals["input"],
                output_tokens=totals["output"],
                total_tokens=totals["input"] + totals["output"],
                reasoning_tokens=totals["reasoning"] or None,
                cached_input_tokens=totals["cached"] or None,
                model=self.model,
            )
        yield RunFinished(finish_reason=finish, usage=usage)

    async def _stream(
        self,
        client: httpx.AsyncClient,
        messages: list[dict[str, Any]],
        mapper: CompletionMapper,
        client_tools: Sequence[Tool] = (),
    ) -> AsyncGenerator[ChatEvent, None]:
        """One streamed completion: the mapper's events, or a single RunError when the call fails."""
        body = self.request_body(messages, client_tools)
        try:
            async with client.stream("POST", self.url, json=body, headers=self._headers()) as response:
                if response.status_code >= 400:
                    raw = await response.aread()
                    yield _status_error(response.status_code, raw)
                    return
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        chunk = json.loads(data)
                    except ValueError:
                        continue
                    for event in mapper.feed(chunk):
                        yield event
                    if mapper.error is not None:
                        break
        except httpx.TimeoutException:
            yield RunError(message=f"The model server at {self.base_url} timed out.", code="model_timeout")
        except httpx.TransportError as exc:
            yield RunError(
                message=f"Could not reach the model server at {self.base_url}: {type(exc).__name__}.",
                code="model_unreachable",
            )


def _client_tool_spec(tool: Tool) -> dict[str, Any]:
    """The Chat Completions function spec of a client-side tool."""
    parameters = tool.parameters or {"type": "object", "properties": {}}
    function = {"name": tool.name, "description": tool.description, "parameters": parameters}
    return {"type": "function", "function": function}


def _status_error(status: int, raw: bytes) -> RunError:
    detail: str | None = None
    try:
        detail = _error_message(json.loads(raw).get("error"))
    except (ValueError, AttributeError):
        text = raw.decode("utf-8", "replace").strip()
        detail = text[:300] or None
    reason = {
        401: "unauthorized: check the API key",
        403: "forbidden",
        404: "not found: check the base URL and the model name",
        429: "rate limited: try again later",
    }.get(status)
    parts = [f"The model server answered HTTP {status}"]
    if reason:
        parts.append(f" ({reason})")
    if detail:
        parts.append(f": {detail}")
    text = "".join(parts)
    return RunError(message=text if text.endswith((".", "!", "?")) else text + ".", code=f"http_{status}")


def _short_args(value: Any) -> str:
    if isinstance(value, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    else:
        text = _json_text(value)
    return text if len(text) <= 48 else text[:47] + "…"


class _RunPlan:
    """The shared state the agent streams: its model and tool calls as a list of steps."""

    def __init__(self, prompt: str) -> None:
        flat = " ".join(prompt.split())
        self.task = flat if len(flat) <= 60 else flat[:59] + "…"
        self.status = "working"
        self.steps: list[dict[str, str]] = []

    def render(self) -> dict[str, Any]:
        return {"task": self.task, "status": self.status, "steps": [dict(s) for s in self.steps]}

    def add(self, step_id: str, title: str, status: str = "running") -> StateUpdate:
        self.steps.append({"id": step_id, "title": title, "status": status})
        return StateUpdate(state=self.render())

    def set(self, step_id: str, status: str) -> StateUpdate:
        for step in self.steps:
            if step["id"] == step_id:
                step["status"] = status
        return StateUpdate(state=self.render())

    def finish(self, step_id: str | None, step_status: str, status: str) -> StateUpdate:
        if step_id is not None:
            self.set(step_id, step_status)
        self.status = status
        return StateUpdate(state=self.render())
