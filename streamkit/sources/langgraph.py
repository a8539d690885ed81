"""LangGraph as a source: run a compiled graph for a ``RunInput`` and stream what it does as ``ChatEvent``\\ s.

:class:`LangGraphAgent` wraps any compiled graph (``StateGraph(...).compile()``, a prebuilt agent, a
subgraph-holding graph) as a streamkit agent core, served by both protocols::

    from streamkit import agui, aisdk
    from streamkit.sources.langgraph import LangGraphAgent

    agent = LangGraphAgent(graph)             # graph = builder.compile(checkpointer=InMemorySaver())
    app = Starlette(routes=[*aisdk.routes(agent, path="/api/chat"), *agui.routes(agent, path="/api/agui")])

**Input.** The history becomes LangChain messages (:func:`to_langgraph_messages`: text and files, assistant text with
its tool calls, tool results as ``ToolMessage``\\ s in causal order). The client's state (when it is an
object) fills the graph's input keys of the same names (read as LangGraph reads them: the input schema's
channels, whatever kind of class the schema is); a key the graph's input does not have is dropped with a
warning naming it, unless its value is what the thread's checkpoint already holds. The client's frontend
tools go to a ``tools`` key and its context to a ``context`` key when the graph's input has such keys. The
thread id is the checkpointer's ``configurable.thread_id``. With a checkpointer that already holds the thread, the
checkpoint is the history: only what is new (the messages after the last assistant message, and results
of tool calls the checkpoint has left open) is sent, so nothing is added twice.

**Stream.** The graph runs with ``astream(stream_mode=["messages", "tasks", "values", "custom"],
subgraphs=True, version="v2")``, which gives, in order and with one reader:

- ``messages``: model tokens as they stream (text, reasoning from the standard ``reasoning`` content blocks
  or ``reasoning_content``, tool-call chunks by index, several interleaved), whole messages a node
  returns (an ``AIMessage`` built by hand, a ``ToolMessage`` from ``ToolNode``);
- ``tasks``: each node's start and end (``StepStarted`` / ``StepFinished``, subgraph nodes named
  ``outer/inner``);
- ``values``: the graph state after each step (``StateUpdate`` of the state without its messages, so AG-UI
  clients get JSON-Patch deltas) and the step's interrupts;
- ``custom``: what nodes write with ``get_stream_writer()``: a ``ChatEvent`` passes as it is, a dict with
  ``name`` and ``data`` becomes ``Data`` (``id`` and ``transient`` kept), one with ``name`` and ``value``
  ``Custom``, anything else ``Custom(name="custom")``.

``astream_events`` would give the same tokens, but as one callback event per runnable (every chain, prompt
and parser inside a node) and without the state or the interrupts; ``updates`` is not needed because
``tasks`` carries each node's end and ``values`` the state after it.

**Interrupts.** ``interrupt(value)`` ends the run with ``RunFinished(interrupts=[...])``: one
:class:`~streamkit.events.Interrupt` per pending LangGraph interrupt (its id, reason ``"interrupt"``, the
value as ``message`` when it is text, else in ``metadata["value"]``, and the interrupt's
``response_schema`` when it has one). The next request's ``resume`` entries (AG-UI ``resume``; from
``useChat``, ``sendMessage(undefined, { body: { resume } })`` answering the ``data-interrupt`` parts) resume
the graph with ``Command(resume={interrupt_id: payload})``; a ``cancelled`` entry resumes with
``cancel_value`` (``None`` by default). Entries for interrupts the thread does not hold are ignored (the
request runs as a new turn). Interrupts need a checkpointer (LangGraph's rule).

**Errors.** An exception raised inside the graph ends the run with a ``RunError`` (its message, the HTTP
status as the code for a model SDK's error), after closing what was open; it never escapes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ..events import (
    ChatEvent,
    Custom,
    Data,
    FilePart,
    FinishReason,
    Interrupt,
    Message,
    ReasoningPart,
    ResumeEntry,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextPart,
    ToolCallPart,
    ToolResult,
    ToolResultPart,
    Usage,
    chat_event_adapter,
)
from ..events.logs import run_logger
from .loop import StepTranslator, add_usage, describe_error, run_tag

try:
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError("streamkit.sources.langgraph needs LangGraph: pip install 'streamkit[langgraph]'") from exc

__all__ = [
    "GraphTranslator",
    "LangGraphAgent",
    "LangGraphTranslator",
    "MessageTranslator",
    "to_langgraph_messages",
    "to_messages",
]

logger = run_logger("streamkit.sources.langgraph")

STREAM_MODES = ["messages", "tasks", "values", "custom"]
"""The ``stream_mode`` the agent runs the graph with (see the module docstring for why)."""

DENIED_TEXT = "The user denied this tool call."

_FINISH: dict[str, FinishReason] = {
    "length": "length",
    "max_tokens": "length",
    "MAX_TOKENS": "length",
    "content_filter": "content-filter",
    "SAFETY": "content-filter",
    "refusal": "content-filter",
}


# --- input -----------------------------------------------------------------------------------------


def _content(parts: Sequence[Any]) -> str | list[str | dict[str, Any]]:
    """Message content: a plain string for text only, else LangChain's standard content blocks."""
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts)
    blocks: list[str | dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            kind = "image" if part.media_type.startswith("image/") else "file"
            block: dict[str, Any] = {"type": kind, "mime_type": part.media_type}
            if part.url.startswith("data:") and ";base64," in part.url:
                block["base64"] = part.url.split(";base64,", 1)[1]
            else:
                block["url"] = part.url
            if part.filename and kind == "file":
                block["filename"] = part.filename
            blocks.append(block)
    return blocks


def _tool_message(part: ToolResultPart) -> ToolMessage:
    if part.denied:
        text = DENIED_TEXT + (f" Reason: {part.error}" if part.error else "")
        return ToolMessage(content=text, tool_call_id=part.id, name=part.name, status="error")
    if part.error is not None:
        return ToolMessage(content=part.error, tool_call_id=part.id, name=part.name, status="error")
    output = part.output
    content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return ToolMessage(content=content, tool_call_id=part.id, name=part.name)


def _ai_message(message_id: str, parts: list[Any]) -> AIMessage:
    text = "".join(p.text for p in parts if isinstance(p, TextPart))
    calls = [
        {
            "name": p.name,
            "args": p.input if isinstance(p.input, dict) else ({} if p.input is None else {"input": p.input}),
            "id": p.id,
            "type": "tool_call",
        }
        for p in parts
        if isinstance(p, ToolCallPart)
    ]
    return AIMessage(content=text, tool_calls=calls, id=message_id)


def _assistant(message: Message) -> list[BaseMessage]:
    """An assistant message: one ``AIMessage`` per step (text and calls), each followed by its results."""
    out: list[BaseMessage] = []
    step: list[Any] = []
    results: list[ToolResultPart] = []

    def flush() -> None:
        if step:
            n = sum(isinstance(m, AIMessage) for m in out)
            out.append(_ai_message(message.id if n == 0 else f"{message.id}-{n}", step))
        out.extend(_tool_message(r) for r in results)
        step.clear()
        results.clear()

    for part in message.parts:
        if isinstance(part, ToolResultPart):
            results.append(part)
        elif isinstance(part, (TextPart, ToolCallPart)):
            if results:
                flush()
            step.append(part)
        # reasoning is not sent back: providers re-derive it (and drop what they cannot verify)
    flush()
    return out


def to_langgraph_messages(messages: Iterable[Message]) -> list[BaseMessage]:
    """The neutral history as LangChain messages, in causal order (every tool result after its call).

    User and system messages keep their ids, text and files (standard ``image`` / ``file`` content
    blocks); an assistant message becomes an ``AIMessage`` per step (text and tool calls) with the results
    of its calls as ``ToolMessage``\\ s after it (an error or a denial with ``status="error"``). Reasoning
    is left out.
    """
    out: list[BaseMessage] = []
    for message in messages:
        if message.role == "user":
            out.append(HumanMessage(content=_content(message.parts), id=message.id))
        elif message.role in ("system", "developer"):
            out.append(SystemMessage(content=message.text, id=message.id))
        elif message.role == "assistant":
            if all(isinstance(p, ReasoningPart) for p in message.parts):
                continue
            out.extend(_assistant(message))
        elif message.role == "tool":
            out.extend(_tool_message(p) for p in message.parts if isinstance(p, ToolResultPart))
    return out


# --- the per-message translator ----------------------------------------------------------------------


class MessageTranslator(StepTranslator):
    """One LangChain message in, ``ChatEvent``\\ s out: ``feed`` an ``AIMessageChunk`` (or a whole
    ``AIMessage``) of the message at a time; ``close`` ends it. Text and reasoning come from the standard
    content blocks (``message.content_blocks``), tool calls from ``tool_call_chunks`` (keyed by index) or
    ``tool_calls``; ``usage_metadata`` is summed, the finish reason read from ``response_metadata``."""

    provider = "langchain"

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        super().__init__(prefix, taken)
        self._reasoning_meta: dict[str, dict[str, Any]] | None = None
        self.closed = False
        self.counted = False  # the run has counted its calls, usage and finish

    def feed(self, event: Any) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        if not isinstance(event, AIMessage | AIMessageChunk) or self.closed:
            return out
        provider = event.response_metadata.get("model_provider") or self.provider
        for standard in event.content_blocks:
            block: dict[str, Any] = dict(standard)
            kind = block.get("type")
            if kind == "non_standard":
                value = block.get("value")
                if isinstance(value, dict) and value.get("type") == "thinking":
                    kind, block = "reasoning", {"reasoning": value.get("thinking") or "", "extras": value}
            if kind == "text":
                self.text(str(block.get("text") or ""), out)
            elif kind == "reasoning":
                self.reasoning(str(block.get("reasoning") or ""), out)
                extras = block.get("extras")
                if isinstance(extras, dict) and extras.get("signature"):
                    self._reasoning_meta = {provider: {"signature": extras["signature"]}}
        if isinstance(event, AIMessageChunk):
            for chunk in event.tool_call_chunks:
                key: Any = chunk.get("index")
                key = chunk.get("id") if key is None else key
                self.call(key, out, id=chunk.get("id"), name=chunk.get("name"))
                self.call_args(key, chunk.get("args") or "", out)
        else:
            for call in event.tool_calls:
                key = call.get("id") or f"call-{len(self._calls)}"
                self.call(key, out, id=call.get("id"), name=call["name"])
                self.end_call(key, out, arguments=json.dumps(call.get("args") or {}, ensure_ascii=False))
        if event.usage_metadata:
            usage = event.usage_metadata
            self.usage = add_usage(
                self.usage,
                Usage(
                    input_tokens=usage.get("input_tokens"),
                    output_tokens=usage.get("output_tokens"),
                    total_tokens=usage.get("total_tokens"),
                    reasoning_tokens=(usage.get("output_token_details") or {}).get("reasoning"),
                    cached_input_tokens=(usage.get("input_token_details") or {}).get("cache_read"),
                    cache_write_input_tokens=(usage.get("input_token_details") or {}).get("cache_creation"),
                ),
            )
        reason = event.response_metadata.get("finish_reason") or event.response_metadata.get("stop_reason")
        if isinstance(reason, str):
            self.finish_reason = _FINISH.get(reason, "stop")
        if not isinstance(event, AIMessageChunk) or event.chunk_position == "last":
            out += self.close()  # a whole message, or the stream's last chunk
        return out

    def end_reasoning(
        self,
        out: list[ChatEvent],
        *,
        provider_metadata: dict[str, dict[str, Any]] | None = None,
        encrypted_value: str | None = None,
    ) -> None:
        """Close the open reasoning block, keeping the signature the model gave it."""
        meta, self._reasoning_meta = provider_metadata or self._reasoning_meta, None
        super().end_reasoning(out, provider_metadata=meta, encrypted_value=encrypted_value)

    def close(self) -> list[ChatEvent]:
        if self.closed:
            return []
        self.closed = True
        return super().close()


# --- the stream translator ---------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


def _tool_output(content: Any) -> Any:
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return _jsonable(content)


def _custom(value: Any) -> ChatEvent:
    if isinstance(value, BaseModel) and type(value).__module__ == RunStarted.__module__:
        return chat_event_adapter.validate_python(value)
    if isinstance(value, Mapping):
        if isinstance(value.get("type"), str) and value["type"] in _EVENT_TYPES:
            try:
                return chat_event_adapter.validate_python(value)
            except ValueError:
                pass
        name = value.get("name")
        if isinstance(name, str) and "data" in value:
            return Data(
                name=name,
                data=_jsonable(value["data"]),
                id=value.get("id") if isinstance(value.get("id"), str) else None,
                transient=bool(value.get("transient", False)),
            )
        if isinstance(name, str) and "value" in value:
            return Custom(name=name, value=_jsonable(value["value"]))
    return Custom(name="custom", value=_jsonable(value))


_EVENT_TYPES = {"data", "custom", "source", "file", "message-metadata", "state-update", "state-snapshot"}


class LangGraphTranslator:
    """The graph's ``astream(..., version="v2")`` parts in, ``ChatEvent``\\ s out (pure, one per run).

    ``feed(part)`` takes one stream part (``{"type", "ns", "data", ...}``), ``close()`` ends what is open
    (messages, steps). Afterwards ``interrupts``, ``usage`` and :attr:`finish` describe the run's end.
    ``messages_key`` is the state key holding the conversation (left out of ``StateUpdate``); ``state_keys``
    limits the state sent to those keys.
    """

    def __init__(
        self,
        prefix: str,
        *,
        messages_key: str = "messages",
        state_keys: Sequence[str] | None = None,
        hidden_keys: Sequence[str] = (),
    ) -> None:
        self.prefix = prefix
        self.messages_key = messages_key
        self.state_keys = None if state_keys is None else set(state_keys)
        self.hidden_keys = {messages_key, *hidden_keys}
        self.taken: set[str] = set()
        self.usage: Usage | None = None
        self.interrupts: list[Any] = []
        self.finish_reason: FinishReason = "stop"
        self._messages: dict[str, MessageTranslator] = {}
        self._by_task: dict[str, list[MessageTranslator]] = {}
        self._steps: dict[str, str] = {}  # task id -> open step name
        self._pending: set[str] = set()  # tool calls without a result
        self._state: Any = _NOTHING

    @property
    def finish(self) -> FinishReason:
        """``tool-calls`` when calls were left without a result (frontend tools), else the last finish."""
        return "tool-calls" if self._pending else self.finish_reason

    def feed(self, part: Mapping[str, Any]) -> list[ChatEvent]:
        """The events for one stream part (parts of other stream modes are ignored)."""
        kind = part.get("type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return []
        out: list[ChatEvent] = []
        handler(self, part, out)
        return out

    def close(self) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for translator in self._messages.values():
            out += self._closed(translator, translator.close())
        for name in self._steps.values():
            out.append(StepFinished(name=name))
        self._steps.clear()
        return out

    # -- stream parts (each handler: the part, the output list) -------------------------------------

    def _messages_part(self, part: Mapping[str, Any], out: list[ChatEvent]) -> None:
        message, metadata = part.get("data")  # type: ignore[misc]
        out += self._message(message, metadata or {})

    def _tasks_part(self, part: Mapping[str, Any], out: list[ChatEvent]) -> None:
        out += self._task(tuple(part.get("ns") or ()), part.get("data"))

    def _values_part(self, part: Mapping[str, Any], out: list[ChatEvent]) -> None:
        if tuple(part.get("ns") or ()):
            return  # a subgraph's values: only the graph's own state is the run's
        self.interrupts = list(part.get("interrupts") or ())
        out += self._values(part.get("data"))

    def _custom_part(self, part: Mapping[str, Any], out: list[ChatEvent]) -> None:
        out.append(_custom(part.get("data")))

    # -- helpers -------------------------------------------------------------------------------------

    def _closed(self, translator: MessageTranslator, events: list[ChatEvent]) -> list[ChatEvent]:
        if translator.closed and not translator.counted:
            translator.counted = True
            self._pending.update(call.id for call in translator.tool_calls)
            self.usage = add_usage(self.usage, translator.usage)
            translator.usage = None
            if translator.finish_reason is not None:
                self.finish_reason = translator.finish_reason
        return events

    def _message(self, message: Any, metadata: Mapping[str, Any]) -> list[ChatEvent]:
        if isinstance(message, ToolMessage):
            self._pending.discard(message.tool_call_id)
            if message.status == "error":
                text = message.content if isinstance(message.content, str) else json.dumps(_jsonable(message.content))
                return [ToolResult(id=message.tool_call_id, error=text)]
            return [ToolResult(id=message.tool_call_id, output=_tool_output(message.content))]
        if not isinstance(message, AIMessage | AIMessageChunk):
            return []
        key = message.id or f"anonymous-{id(message)}"
        translator = self._messages.get(key)
        if translator is None:
            translator = MessageTranslator(f"{self.prefix}_{len(self._messages) + 1}", self.taken)
            self._messages[key] = translator
            task = str(metadata.get("checkpoint_ns") or "").rsplit(":", 1)[-1]
            self._by_task.setdefault(task, []).append(translator)
        return self._closed(translator, translator.feed(message))

    def _task(self, ns: tuple[str, ...], data: Any) -> list[ChatEvent]:
        task_id, name = data.get("id"), data.get("name")
        if not isinstance(task_id, str) or not isinstance(name, str) or name.startswith("__"):
            return []
        if "triggers" in data or "input" in data:  # a task starts
            full = "/".join([*(n.split(":", 1)[0] for n in ns), name])
            taken = set(self._steps.values())
            step, n = full, 1
            while step in taken:
                n += 1
                step = f"{full}#{n}"
            self._steps[task_id] = step
            return [StepStarted(name=step)]
        out: list[ChatEvent] = []
        for translator in self._by_task.pop(task_id, []):
            out += self._closed(translator, translator.close())
        step_name = self._steps.pop(task_id, None)
        if step_name is not None:
            out.append(StepFinished(name=step_name))
        return out

    def _values(self, values: Any) -> list[ChatEvent]:
        if isinstance(values, Mapping):
            state = {
                k: _jsonable(v)
                for k, v in values.items()
                if k not in self.hidden_keys and (self.state_keys is None or k in self.state_keys)
            }
        else:
            state = _jsonable(values)
        if state == self._state:
            return []
        self._state = state
        return [StateUpdate(state=state)]


_HANDLERS: dict[str, Any] = {
    "messages": LangGraphTranslator._messages_part,
    "tasks": LangGraphTranslator._tasks_part,
    "values": LangGraphTranslator._values_part,
    "custom": LangGraphTranslator._custom_part,
}
"""The translator's handler for each stream mode's parts (:data:`STREAM_MODES`)."""

_NOTHING: Any = object()


def _input_keys(graph: Any) -> set[str] | None:
    """The keys LangGraph takes from a run's input, or None when the graph does not say.

    A ``StateGraph`` takes the fields of its input schema that are channels (not managed values): the keys its
    ``START`` node writes. They are read from the builder's schemas, not from ``get_input_jsonschema()``, which
    pydantic refuses for a ``typing.TypedDict`` state before Python 3.12. A ``Pregel`` built by hand takes
    its input channels, when they are a list; any other graph (a functional-API ``entrypoint``, a remote
    graph) is asked for its input's JSON schema.
    """
    builder = getattr(graph, "builder", None)
    schemas = getattr(builder, "schemas", None)
    schema = getattr(builder, "input_schema", None)
    if isinstance(schemas, Mapping) and isinstance(schemas.get(schema), Mapping):
        managed = getattr(builder, "managed", None) or {}
        return {k for k in schemas[schema] if isinstance(k, str) and k not in managed}
    channels = getattr(graph, "input_channels", None)
    if isinstance(channels, list | tuple) and all(isinstance(c, str) for c in channels):
        return set(channels)
    try:
        properties = graph.get_input_jsonschema().get("properties")
    except Exception:  # a graph without a JSON-able schema
        return None
    return set(properties) if isinstance(properties, dict) and properties else None


def _interrupt(value: Any) -> Interrupt:
    raw = getattr(value, "value", value)
    schema = getattr(value, "response_schema", None)
    return Interrupt(
        id=str(getattr(value, "id", "")) or "interrupt",
        reason="interrupt",
        message=raw if isinstance(raw, str) else None,
        metadata=None if isinstance(raw, str) else {"value": _jsonable(raw)},
        response_schema=schema if isinstance(schema, dict) else None,
    )


# --- the agent -------------------------------------------------------------------------------------


class LangGraphAgent:
    """A compiled LangGraph graph as a streamkit agent core (see the module docstring).

    ``config`` is merged into every run's config (its ``configurable`` keys too; the thread id is the
    run's). ``messages_key`` names the state key of the conversation; ``state_keys`` limits the state the
    client sees (default: every key but the messages and ``hidden_keys``); ``cancel_value`` is what a
    cancelled interrupt resumes with. ``context`` is passed to the graph's runtime context, when given.
    """

    def __init__(
        self,
        graph: Any,
        *,
        config: Mapping[str, Any] | None = None,
        messages_key: str = "messages",
        state_keys: Sequence[str] | None = None,
        hidden_keys: Sequence[str] = (),
        cancel_value: Any = None,
        context: Any = None,
    ) -> None:
        self.graph = graph
        self.config = dict(config or {})
        self.messages_key = messages_key
        self.state_keys = state_keys
        self.hidden_keys = hidden_keys
        self.cancel_value = cancel_value
        self.context = context

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        return self._run(run)

    def run_config(self, run: RunInput) -> dict[str, Any]:
        """The ``RunnableConfig`` of ``run``: the agent's config with the run's thread id."""
        config = dict(self.config)
        configurable = dict(config.get("configurable") or {})
        configurable["thread_id"] = run.thread_id
        config["configurable"] = configurable
        return config

    def input_keys(self) -> set[str]:
        """The keys of the graph's input (its input schema's fields), or only the messages key when the graph
        does not say (a functional-API ``entrypoint``, say)."""
        return _input_keys(self.graph) or {self.messages_key}

    async def graph_input(self, run: RunInput, config: dict[str, Any]) -> Any:
        """What the graph is run with: a ``Command(resume=...)`` answering pending interrupts, else the
        input state (new messages, the client's state keys, tools and context)."""
        checkpoint = await self._checkpoint(config)
        pending = {str(i.id): i for i in getattr(checkpoint, "interrupts", ()) or ()} if checkpoint else {}
        answers: dict[str, Any] = {}
        for entry in run.resume:
            if entry.interrupt_id in pending:
                answers[entry.interrupt_id] = self._answer(entry)
        if answers:
            return Command(resume=answers)
        read = _input_keys(self.graph)
        keys = read or {self.messages_key}
        values = getattr(checkpoint, "values", None) if checkpoint else None
        known = values.get(self.messages_key) if isinstance(values, Mapping) else None
        messages = _new_messages(run.messages, known) if known else to_langgraph_messages(run.messages)
        state: dict[str, Any] = {self.messages_key: messages}
        if isinstance(run.state, Mapping):
            state.update({k: v for k, v in run.state.items() if k in keys and k not in state})
            self._warn_dropped(run.state, keys, values if isinstance(values, Mapping) else {}, read is not None)
        if "tools" in keys and run.tools:
            state["tools"] = [t.model_dump(exclude_none=True) for t in run.tools]
        if "context" in keys and run.context:
            state["context"] = [c.model_dump() for c in run.context]
        return state

    def _warn_dropped(self, client: Mapping[str, Any], keys: set[str], held: Mapping[str, Any], read: bool) -> None:
        """Warn, naming them, of the client's state keys that do not go in: not input keys of the graph, and
        not just the value the thread's checkpoint already holds (the state the client was sent, sent back)."""
        lost = sorted(
            k
            for k, v in client.items()
            if k not in keys and k != self.messages_key and not (k in held and _jsonable(held[k]) == v)
        )
        if not lost:
            return
        names = ", ".join(repr(k) for k in lost)
        if read:
            logger.warning(
                "dropped the client's state keys %s: the graph's input has no such keys (it takes %s)",
                names,
                ", ".join(repr(k) for k in sorted(keys)),
            )
        else:
            logger.warning(
                "dropped the client's state keys %s: the graph does not say its input keys, so only %r goes in",
                names,
                self.messages_key,
            )

    def _answer(self, entry: ResumeEntry) -> Any:
        return entry.payload if entry.status == "resolved" else self.cancel_value

    async def _checkpoint(self, config: dict[str, Any]) -> Any:
        if not getattr(self.graph, "checkpointer", None):
            return None
        try:
            return await self.graph.aget_state(config)
        except Exception:  # no checkpoint for the thread yet, or a checkpointer that cannot be read
            return None

    async def _run(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        yield RunStarted()
        translator = LangGraphTranslator(
            run_tag(run.run_id),
            messages_key=self.messages_key,
            state_keys=self.state_keys,
            hidden_keys=self.hidden_keys,
        )
        error: RunError | None = None
        try:
            config = self.run_config(run)
            graph_input = await self.graph_input(run, config)
            options: dict[str, Any] = {"stream_mode": STREAM_MODES, "subgraphs": True, "version": "v2"}
            if self.context is not None:
                options["context"] = self.context
            async with aclosing(self.graph.astream(graph_input, config, **options)) as parts:
                async for part in parts:
                    for event in translator.feed(part):
                        yield event
        except Exception as exc:  # the graph failed: the run's error, never an exception out of the stream
            error = describe_error(exc)
        for event in translator.close():
            yield event
        if error is not None:
            yield error
            return
        yield RunFinished(
            finish_reason=translator.finish,
            usage=translator.usage,
            interrupts=[_interrupt(i) for i in translator.interrupts] or None,
        )


def _new_messages(messages: Sequence[Message], known: Sequence[Any]) -> list[BaseMessage]:
    """What the request adds to a checkpointed conversation: results of the checkpoint's open tool calls
    and the messages after the request's last assistant message (those the checkpoint does not hold)."""
    known_ids = {getattr(m, "id", None) for m in known}
    answered = {m.tool_call_id for m in known if isinstance(m, ToolMessage)}
    open_calls = {
        c["id"] for m in known if isinstance(m, AIMessage) for c in m.tool_calls if c.get("id") not in answered
    }
    out: list[BaseMessage] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart) and part.id in open_calls:
                open_calls.discard(part.id)
                out.append(_tool_message(part))
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    tail = [m for m in messages[last + 1 :] if m.role != "tool" and m.id not in known_ids]
    out += to_langgraph_messages(tail)
    return out


to_messages = to_langgraph_messages
"""The earlier name of :func:`to_langgraph_messages`."""
GraphTranslator = LangGraphTranslator
"""The earlier name of :class:`LangGraphTranslator`."""
