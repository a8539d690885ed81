"""What every provider source shares: the translator base, the stream wrapper and the one tool loop.

**Translators.** A provider's stream translator subclasses :class:`StepTranslator`: a pure, synchronous
state machine for one model call, ``feed(provider_event) -> list[ChatEvent]`` and
``close() -> list[ChatEvent]``. The base keeps the bookkeeping every provider needs (one open text and one
open reasoning block, tool calls keyed by whatever the provider keys them by, argument text joined and
parsed at the end, unique ids) and records what the call produced: :attr:`StepTranslator.parts` (the
assistant turn as neutral parts, in order), ``finish_reason``, ``usage``, and ``error`` (a ``RunError``
the provider reported inside its stream). A subclass implements ``feed`` with the helpers
(:meth:`~StepTranslator.text`, :meth:`~StepTranslator.reasoning`, :meth:`~StepTranslator.call`,
:meth:`~StepTranslator.call_args`, :meth:`~StepTranslator.end_call`...) and may override
:meth:`~StepTranslator.fail` to word the SDK's exceptions.

**Wrappers.** :func:`translate` drives a translator over an async iterable (or a sync one: :func:`aiter_of`
makes any iterable async) and yields a well-formed run on its own: ``RunStarted`` (no thread or run id: those
are the route's), the events, then ``RunFinished`` (finish reason, usage) or a ``RunError`` carrying the
provider's message, also when iterating raises (an SDK error, a dropped connection); nothing escapes as an
exception. To splice one model call into a longer run of your own, use :func:`stream_step` instead: the
content events only, then read ``translator.error``, ``translator.finish`` and ``translator.usage``.

**The tool loop.** :func:`run_tool_loop` is the one agent loop every provider agent uses. A provider plugs
in by implementing :class:`Provider` (four small methods):

- ``messages(run)``: the input conversion, ``RunInput`` -> the provider's message list (system prompt,
  context and history);
- ``translator(prefix, taken)``: a new translator for one model call (block ids start with ``prefix``;
  ``taken`` is the run's set of tool-call ids, shared by its calls);
- ``step(messages, tools)``: the request: an async iterable of the provider's stream events for one model
  call offered ``tools`` (neutral :class:`~streamkit.events.Tool`: the server tools, then the client's
  frontend tools). Usually an ``async def`` generator around the SDK's streaming call; whatever it raises
  becomes the run's ``RunError`` (through ``translator.fail``);
- ``append(messages, turn)``: add one finished step to the provider's message list: ``turn`` is the
  assistant :class:`~streamkit.events.Message` the call produced (reasoning with its provider metadata,
  text, tool calls) and, when tools ran, a ``tool`` message with their results. Converting ``turn`` with
  the same function ``messages`` uses keeps a continued run and a new request identical.

The loop: ``RunStarted``; per model call ``StepStarted("model-call-N")``, the translator's events, then the
server tools' results (sync or async tools, as ``ToolResult``), ``StepFinished``; it calls the model again
while the model calls server tools, at most ``max_steps`` times. Calls to the client's frontend tools are
left pending (the run finishes with ``tool-calls``; the client runs them and sends the results in its next
request). Usage is summed over the calls. A server tool marked ``needs_approval`` is not run: the loop asks
for approval (``ToolApprovalRequest``) and the run pauses; the next request carries the user's answer, and
the loop then runs the tool (or reports it denied) before calling the model. A provider can ask too (a
translator streams a provider-executed call and its ``ToolApprovalRequest``, and finishes ``tool-calls``):
the run pauses the same way, and the answer is left on the call's part (``approval``) for the input
conversion to give back to the provider, which runs the call.
"""

from __future__ import annotations

import json
import re
import uuid
import zlib
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Hashable, Iterable, Sequence
from contextlib import aclosing, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..events import (
    ApprovalState,
    ChatEvent,
    Citation,
    FinishReason,
    Message,
    Part,
    ProviderMetadata,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningPart,
    ReasoningStart,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextPart,
    TextStart,
    Tool,
    ToolApprovalRequest,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
    hitl,
)
from .tools import ServerTool, ToolError, run_server_tool

__all__ = [
    "Provider",
    "StepTranslator",
    "ToolCallRequest",
    "add_usage",
    "aiter_of",
    "describe_error",
    "run_tag",
    "run_tool_loop",
    "stream_step",
    "translate",
]

M = TypeVar("M")
T = TypeVar("T")
_UNSET: Any = object()


def run_tag(run_id: str) -> str:
    """A short tag for ids made in a run: the run id itself when short, else a hash of it."""
    if len(run_id) <= 12 and re.fullmatch(r"[\w.-]+", run_id):
        return run_id
    return f"{zlib.crc32(run_id.encode()):08x}"


def describe_error(exc: BaseException) -> RunError:
    """A ``RunError`` for an exception raised while a provider's stream was read.

    Uses the provider's own message where the SDK gives one (``exc.message``, as the openai and
    anthropic SDKs do, or ``exc.error``), and the HTTP status as the code (``http_429``); httpx timeouts and
    transport errors (a refused or dropped connection) get a plain sentence.
    """
    import httpx  # a core dependency; imported here to keep this module's import light

    status = getattr(exc, "status_code", None)
    code = f"http_{status}" if isinstance(status, int) else None
    if isinstance(exc, httpx.TimeoutException) or type(exc).__name__ == "APITimeoutError":
        return RunError(message="The model server timed out.", code="model_timeout")
    if isinstance(exc, httpx.TransportError) or type(exc).__name__ == "APIConnectionError":
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        detail = str(cause) or type(cause).__name__
        return RunError(message=f"The connection to the model server failed: {detail}", code="model_unreachable")
    message = getattr(exc, "message", None)
    if not isinstance(message, str) or not message:
        error = getattr(exc, "error", None)
        message = error if isinstance(error, str) and error else (str(exc) or type(exc).__name__)
    own = getattr(exc, "code", None)
    return RunError(message=message, code=code or (own if isinstance(own, str) and own else "model_error"))


def add_usage(total: Usage | None, usage: Usage | None) -> Usage | None:
    """The sum of two usages (counts added; a count unknown in both stays unknown)."""
    if usage is None:
        return total
    if total is None:
        return usage

    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(
        input_tokens=plus(total.input_tokens, usage.input_tokens),
        output_tokens=plus(total.output_tokens, usage.output_tokens),
        total_tokens=plus(total.total_tokens, usage.total_tokens),
        reasoning_tokens=plus(total.reasoning_tokens, usage.reasoning_tokens),
        cached_input_tokens=plus(total.cached_input_tokens, usage.cached_input_tokens),
        cache_write_input_tokens=plus(total.cache_write_input_tokens, usage.cache_write_input_tokens),
        provider=usage.provider or total.provider,
        model=usage.model or total.model,
    )


def _with_answers(run: RunInput, decisions: Sequence[hitl.Decision]) -> RunInput:
    """``run`` with each decided call's part carrying the user's answer (``approval``)."""
    by_id = {d.call.id: d for d in decisions}
    messages: list[Message] = []
    for message in run.messages:
        parts: list[Part] = []
        for part in message.parts:
            decision = by_id.get(part.id) if isinstance(part, ToolCallPart) else None
            if decision is not None:
                state = ApprovalState(id=decision.approval_id, approved=decision.approved, reason=decision.reason)
                part = part.model_copy(update={"approval": state})
            parts.append(part)
        messages.append(message.model_copy(update={"parts": parts}))
    return run.model_copy(update={"messages": messages})


# --- the translator base ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call the model finished: ``input`` parsed, or ``error`` (with ``input`` the raw text)."""

    id: str
    name: str
    arguments: str
    input: Any = None
    error: str | None = None
    provider_metadata: ProviderMetadata | None = None
    text_input: bool = False
    """The input is free-form text, not JSON (an OpenAI custom tool): ``input`` is that text."""
    provider_tool: bool = False
    """A tool configured with the provider itself (a custom tool, a computer or shell tool), not one of the
    neutral tools: the loop runs it when a server tool has its name, else leaves it pending for the client."""


@dataclass(slots=True)
class _Call:
    key: Hashable
    id: str | None = None
    name: str | None = None
    args: list[str] = field(default_factory=list)
    started: bool = False
    ended: bool = False
    provider_metadata: ProviderMetadata | None = None
    part: int = -1  # where the call sits in ``parts``


class StepTranslator:
    """The base of a provider's stream translator for one model call (see the module docstring).

    ``prefix`` starts every block id this translator makes (default: a random tag); ``taken`` is the set
    of tool-call ids already used in the run: a provider that repeats an id gets a suffixed one, since a
    run's tool-call ids must be unique. ``provider`` names the provider in ``Usage`` and metadata.
    """

    provider = ""

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        self.prefix = prefix or uuid.uuid4().hex[:10]
        self.taken: set[str] = taken if taken is not None else set()
        self.parts: list[Part] = []
        """The assistant turn so far as neutral parts, in order (text, reasoning, tool calls)."""
        self.finish_reason: FinishReason | None = None
        """The finish reason the provider gave (None until it gives one)."""
        self.usage: Usage | None = None
        self.error: RunError | None = None
        """An error the provider reported inside its stream; the step's events stop there."""
        self.tool_calls: list[ToolCallRequest] = []
        """The tool calls ended so far (all of them after ``close``)."""
        self._blocks = 0
        self._text: str | None = None
        self._text_buf: list[str] = []
        self._reasoning: str | None = None
        self._reasoning_buf: list[str] = []
        self._calls: dict[Hashable, _Call] = {}
        self._citations: list[Citation] = []

    # -- to implement --------------------------------------------------------------------------------

    def feed(self, event: Any) -> list[ChatEvent]:
        """The events for one provider stream event (a subclass implements this)."""
        raise NotImplementedError

    def close(self) -> list[ChatEvent]:
        """End what is still open: text and reasoning blocks, then every tool call's input."""
        out: list[ChatEvent] = []
        self.end_reasoning(out)
        self.end_text(out)
        self.end_calls(out)
        return out

    def fail(self, exc: BaseException) -> RunError:
        """The ``RunError`` for an exception raised while reading the stream (override to word SDK errors)."""
        return describe_error(exc)

    # -- results -------------------------------------------------------------------------------------

    @property
    def finish(self) -> FinishReason:
        """The step's finish reason: the provider's, else ``tool-calls`` when it called tools, else ``stop``."""
        if self.tool_calls and self.finish_reason in (None, "stop", "other"):
            return "tool-calls"
        return self.finish_reason or "stop"

    @property
    def text_content(self) -> str:
        """The assistant text of the call (every text block joined)."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def message(self, message_id: str = "") -> Message:
        """The call's assistant turn as a neutral message (what ``Provider.append`` receives)."""
        return Message(id=message_id or f"msg_{self.prefix}", role="assistant", parts=list(self.parts))

    # -- helpers for ``feed`` ------------------------------------------------------------------------

    def new_id(self, kind: str) -> str:
        """A block id unique within the run: ``<kind>_<prefix>_<n>``."""
        self._blocks += 1
        return f"{kind}_{self.prefix}_{self._blocks}"

    def text(self, delta: str, out: list[ChatEvent], *, provider_metadata: ProviderMetadata | None = None) -> None:
        """Append ``delta`` to the open text block (opening one, and closing open reasoning, first)."""
        if not delta:
            return
        if self._text is None:
            self.end_reasoning(out)
            self._text = self.new_id("text")
            out.append(TextStart(id=self._text, provider_metadata=provider_metadata))
        self._text_buf.append(delta)
        out.append(TextDelta(id=self._text, delta=delta))

    def end_text(
        self,
        out: list[ChatEvent],
        *,
        provider_metadata: ProviderMetadata | None = None,
        citations: list[Citation] | None = None,
    ) -> None:
        """Close the open text block, if any, with ``citations`` and those given to :meth:`cite`."""
        if self._text is None:
            return
        cited = [*self._citations, *(citations or ())]
        self._citations = []
        out.append(TextEnd(id=self._text, provider_metadata=provider_metadata, citations=cited or None))
        self.parts.append(TextPart(text="".join(self._text_buf)))
        self._text, self._text_buf = None, []

    def reasoning(
        self,
        delta: str,
        out: list[ChatEvent],
        *,
        provider_metadata: ProviderMetadata | None = None,
        id: str | None = None,
    ) -> None:
        """Append ``delta`` to the open reasoning block (opening one, and closing open text, first).

        An empty ``delta`` only opens the block (for reasoning that carries nothing but opaque data). ``id``
        names the block this call opens (a provider's unique item id) instead of a made-up one."""
        if self._reasoning is None:
            self.end_text(out)
            self._reasoning = id if id and id not in self.taken else self.new_id("reasoning")
            self.taken.add(self._reasoning)
            out.append(ReasoningStart(id=self._reasoning, provider_metadata=provider_metadata))
        if delta:
            self._reasoning_buf.append(delta)
            out.append(ReasoningDelta(id=self._reasoning, delta=delta))

    def end_reasoning(
        self,
        out: list[ChatEvent],
        *,
        provider_metadata: ProviderMetadata | None = None,
        encrypted_value: str | None = None,
    ) -> None:
        """Close the open reasoning block, if any, keeping opaque provider data on it (and on its part)."""
        if self._reasoning is None:
            return
        out.append(
            ReasoningEnd(id=self._reasoning, provider_metadata=provider_metadata, encrypted_value=encrypted_value)
        )
        self.parts.append(
            ReasoningPart(
                text="".join(self._reasoning_buf), provider_metadata=provider_metadata, encrypted_value=encrypted_value
            )
        )
        self._reasoning, self._reasoning_buf = None, []

    def cite(self, citation: Citation) -> None:
        """Attach ``citation`` to the open text block (it goes on the block's ``TextEnd``); without an open
        block the citation is dropped (its ``Source`` event, emitted by the caller, still stands)."""
        if self._text is not None:
            self._citations.append(citation)

    @property
    def text_open(self) -> bool:
        """Whether a text block is open."""
        return self._text is not None

    @property
    def reasoning_open(self) -> bool:
        """Whether a reasoning block is open."""
        return self._reasoning is not None

    def call(
        self,
        key: Hashable,
        out: list[ChatEvent],
        *,
        id: str | None = None,
        name: str | None = None,
        provider_metadata: ProviderMetadata | None = None,
    ) -> None:
        """Register or update the tool call ``key`` (the provider's index or id); it starts (``ToolCallStart``)
        as soon as its name is known, with any argument text that arrived before it. Open text and
        reasoning blocks are closed first."""
        self.end_reasoning(out)
        self.end_text(out)
        state = self._calls.get(key)
        if state is None:
            state = self._calls[key] = _Call(key=key)
        if id and state.id is None and not state.started:
            state.id = id
        if name and state.name is None:
            state.name = name
        if provider_metadata is not None and not state.started:
            state.provider_metadata = provider_metadata
        if not state.started and state.name is not None:
            self._start(state, out)
            if state.args:
                assert state.id is not None
                out.append(ToolCallArgsDelta(id=state.id, delta="".join(state.args)))

    def call_args(self, key: Hashable, delta: str, out: list[ChatEvent]) -> None:
        """Append argument text to the tool call ``key`` (registering it if unknown)."""
        state = self._calls.get(key)
        if state is None or state.ended:
            self.call(key, out)
            state = self._calls[key]
        if not delta:
            return
        state.args.append(delta)
        if state.started:
            assert state.id is not None
            out.append(ToolCallArgsDelta(id=state.id, delta=delta))

    def call_id(self, key: Hashable) -> str | None:
        """The id a started call ``key`` streams under (None when it has not started)."""
        state = self._calls.get(key)
        return state.id if state is not None and state.started else None

    def has_call(self, key: Hashable) -> bool:
        """Whether the tool call ``key`` is known."""
        return key in self._calls

    def end_call(
        self,
        key: Hashable,
        out: list[ChatEvent],
        *,
        arguments: str | None = None,
        provider_metadata: ProviderMetadata | None = None,
        text_input: bool = False,
        provider_tool: bool = False,
    ) -> None:
        """End the tool call ``key``: parse its argument text (``arguments``, when the provider restates it
        whole, replaces what streamed) and emit ``ToolCallEnd``. A call that never got a name is dropped.

        ``provider_metadata`` given here also goes on the ``ToolCallEnd`` and the call's part (so the input
        conversion sees it); ``text_input`` keeps the argument text as the input, unparsed; ``provider_tool``
        marks a tool configured with the provider (see :class:`ToolCallRequest`)."""
        state = self._calls.get(key)
        if state is None or state.ended or state.name is None:
            return
        if not state.started:
            self._start(state, out)
        state.ended = True
        assert state.id is not None
        streamed = "".join(state.args)
        if arguments is not None and arguments != streamed:
            if arguments.startswith(streamed):
                rest = arguments[len(streamed) :]
                out.append(ToolCallArgsDelta(id=state.id, delta=rest))
            streamed = arguments
        metadata = provider_metadata or state.provider_metadata
        parsed: Any = streamed
        error = None
        if not text_input:
            try:
                parsed = json.loads(streamed) if streamed.strip() else {}
            except ValueError as exc:
                error = f"the model sent arguments that are not valid JSON: {exc}"
        out.append(ToolCallEnd(id=state.id, input=parsed, error=error, provider_metadata=provider_metadata))
        self.tool_calls.append(
            ToolCallRequest(state.id, state.name, streamed, parsed, error, metadata, text_input, provider_tool)
        )
        self.parts[state.part] = ToolCallPart(
            id=state.id, name=state.name, input=parsed, provider_metadata=provider_metadata
        )

    def end_calls(self, out: list[ChatEvent]) -> None:
        """End every tool call still open, in the order they started."""
        for key in list(self._calls):
            self.end_call(key, out)

    def _start(self, state: _Call, out: list[ChatEvent]) -> None:
        cid = state.id or f"call_{self.prefix}_{len(self.taken) + 1}"
        if cid in self.taken:
            n = 2
            while f"{cid}_{n}" in self.taken:
                n += 1
            cid = f"{cid}_{n}"
        self.taken.add(cid)
        state.id = cid
        state.started = True
        assert state.name is not None
        out.append(ToolCallStart(id=cid, name=state.name, provider_metadata=state.provider_metadata))
        state.part = len(self.parts)
        self.parts.append(ToolCallPart(id=cid, name=state.name))


# --- wrappers --------------------------------------------------------------------------------------


def aiter_of(items: AsyncIterable[T] | Iterable[T]) -> AsyncIterable[T]:
    """``items`` as an async iterable: an async iterable as it is (so closing the run closes it), a sync one
    (a list of recorded events, a generator) read item by item."""
    if isinstance(items, AsyncIterable):
        return items
    return _from_sync(items)


async def _from_sync(items: Iterable[T]) -> AsyncIterator[T]:
    for item in items:
        yield item


def stream_step(
    source: AsyncIterable[Any] | Iterable[Any], translator: StepTranslator
) -> AsyncGenerator[ChatEvent, None]:
    """The content events of one model call: ``translator`` fed every item of ``source`` (an async or a
    sync iterable), then closed.

    An error the provider reports (``translator.error`` set by ``feed``) or an exception raised while
    iterating (recorded as ``translator.fail(exc)``) stops the step: no ``close`` events follow, and the
    caller ends the run with ``translator.error``. ``source`` is closed when the step ends.
    """
    return _drive(aiter_of(source), translator, False)


def translate(
    source: AsyncIterable[Any] | Iterable[Any], translator: StepTranslator
) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from one provider stream (an async or a sync iterable): ``RunStarted``, the events,
    ``RunFinished`` or ``RunError``."""
    return _drive(aiter_of(source), translator, True)


async def _drive(
    source: AsyncIterable[Any], translator: StepTranslator, whole: bool
) -> AsyncGenerator[ChatEvent, None]:
    # One generator for both (each generator layer costs about as much per event as the translation).
    if whole:
        yield RunStarted()
    iterator = aiter(source)
    feed = translator.feed
    feeding = False
    failed = False
    try:
        async for item in iterator:
            feeding = True
            events = feed(item)
            feeding = False
            for event in events:
                yield event
            if translator.error is not None:
                failed = True
                break
    except Exception as exc:  # an SDK error, a dropped connection: the run's error, not an exception
        if feeding:  # a bug in the translator is not the provider's error
            raise
        translator.error = translator.fail(exc)
        failed = True
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            with suppress(Exception):  # closing a broken stream must not mask the run's own ending
                await close()
    if not failed:
        for event in translator.close():
            yield event
    if whole:
        if translator.error is not None:
            yield translator.error
        else:
            yield RunFinished(finish_reason=translator.finish, usage=translator.usage)


# --- the tool loop ---------------------------------------------------------------------------------


class Provider(Protocol[M]):
    """What a provider module supplies to :func:`run_tool_loop` (see the module docstring)."""

    def messages(self, run: RunInput) -> list[M]:
        """The provider's message list for ``run`` (system prompt, context and history)."""
        ...

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        """A fresh translator for one model call."""
        ...

    def step(self, messages: list[M], tools: Sequence[Tool]) -> AsyncIterable[Any]:
        """The provider's stream events for one model call offered ``tools``."""
        ...

    def append(self, messages: list[M], turn: Sequence[Message]) -> None:
        """Add a finished step (assistant message, then a tool message with results) to ``messages``."""
        ...


async def run_tool_loop(
    run: RunInput,
    provider: Provider[M],
    tools: Sequence[ServerTool] = (),
    *,
    max_steps: int = 8,
    message_id: str | None = None,
) -> AsyncGenerator[ChatEvent, None]:
    """Run the model with ``tools`` (server tools) and the client's frontend tools, streaming every event.

    See the module docstring for the loop. ``message_id`` (default: the run's ``message_id``) is put on
    ``RunStarted`` when given; thread and run ids are left to the route.
    """
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    by_name = {tool.name: tool for tool in tools}
    offered = [tool.as_tool() for tool in tools]
    offered += [tool for tool in run.tools if tool.name not in by_name]
    client_names = {tool.name for tool in run.tools if tool.name not in by_name}
    yield RunStarted(message_id=message_id or run.message_id)

    # Approvals answered in this request: run (or deny) those calls before the model is called again. A call
    # the provider runs itself (an MCP call OpenAI asked about) is the provider's to run: the answer goes back
    # to it on the call's part (the input conversion sends it), whichever protocol carried it.
    decisions = hitl.continuation(run).decisions
    answered = [d for d in decisions if d.call.provider_executed]
    decisions = tuple(d for d in decisions if not d.call.provider_executed)
    if answered:
        run = _with_answers(run, answered)
    if decisions:

        async def execute(call: ToolCallPart) -> Any:
            output, error = await run_server_tool(by_name, call.name, call.input)
            if error is not None:
                raise ToolError(error)
            return output

        settled: list[ToolResult] = []
        async for result in hitl.settle(decisions, execute):
            settled.append(result)
            yield result
        run = hitl.with_results(run, settled)

    messages = provider.messages(run)
    tag = run_tag(run.run_id)
    taken: set[str] = set()
    usage: Usage | None = None
    finish: FinishReason = "stop"
    for step in range(1, max_steps + 1):
        name = f"model-call-{step}"
        yield StepStarted(name=name)
        translator = provider.translator(f"{tag}_{step}", taken)
        async with aclosing(stream_step(provider.step(messages, offered), translator)) as events:
            async for event in events:
                yield event
        usage = add_usage(usage, translator.usage)
        if translator.error is not None:
            yield translator.error
            return
        finish = translator.finish
        calls = translator.tool_calls
        if not calls:
            yield StepFinished(name=name)
            break
        finish = "tool-calls"
        pending = False
        results_part: list[Part] = []
        asks: list[ToolApprovalRequest] = []
        for call in calls:
            if call.error is None and (call.name in client_names or (call.provider_tool and call.name not in by_name)):
                pending = True  # the client runs it and answers in its next request
                continue
            tool = by_name.get(call.name)
            if call.error is None and tool is not None and tool.needs_approval:
                pending = True
                asks.append(hitl.request_approval(call.id))
                continue
            output: Any = None
            error: str | None = call.error  # arguments that did not parse go back to the model as an error
            if error is None:
                output, error = await run_server_tool(by_name, call.name, call.input, text=call.text_input)
            yield ToolResult(id=call.id, output=output, error=error)
            results_part.append(ToolResultPart(id=call.id, name=call.name, output=output, error=error))
        for ask in asks:
            yield ask
        yield StepFinished(name=name)
        if pending:
            break
        turn = [translator.message(), Message(id=f"tool_{translator.prefix}", role="tool", parts=results_part)]
        provider.append(messages, turn)
    yield hitl.pause(usage=usage) if finish == "tool-calls" else RunFinished(finish_reason=finish, usage=usage)
