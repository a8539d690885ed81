"""pydantic-ai as a source: run an ``Agent`` for a ``RunInput`` and stream its events as ``ChatEvent``\\ s.

:class:`PydanticAIAgent` wraps any ``pydantic_ai.Agent`` (its model, tools, output type and dependencies
as they are) as a streamkit agent core, served by both protocols::

    from pydantic_ai import Agent
    from streamkit.sources.pydantic_ai import PydanticAIAgent

    agent = PydanticAIAgent(Agent("openai:gpt-4o-mini", instructions="Be brief."))
    app = Starlette(routes=[*aisdk.routes(agent), *agui.routes(agent)])

**Input.** The history becomes pydantic-ai ``ModelMessage``\\ s (:func:`to_pydantic_ai_messages`): user text and
files, system messages, each assistant step as a ``ModelResponse`` (thinking with its signature, text,
tool calls) followed by a ``ModelRequest`` with the results of its calls (``ToolReturnPart``\\ s; errors as
``failed``, denials as ``denied``). The client's frontend tools are offered through an ``ExternalToolset``:
a call to one of them is left pending for the client, like any deferred call.

**Stream.** ``agent.run_stream_events(...)`` events map as:

============================================  ===========================================================
pydantic-ai event                             ChatEvents
============================================  ===========================================================
``PartStartEvent`` / ``PartDeltaEvent`` /      text (``TextPart``), reasoning (``ThinkingPart``: its
``PartEndEvent``                               ``signature`` and provider kept as provider metadata), tool
                                               calls (``ToolCallPart``: id and name at the start, argument
                                               text as it streams, the parsed input at the end), provider
                                               tools (``NativeToolCallPart`` / ``NativeToolReturnPart``,
                                               ``provider_executed``), files (``FilePart``)
first part of each model response              ``StepStarted("model-call-N")`` (the previous step finished)
``FunctionToolResultEvent``                    ``ToolResult``: ``output``, ``error`` (failed, retried) or
                                               ``denied``
``AgentRunResultEvent``                        ``RunFinished`` with the run's usage and, for structured
                                               output, the output as ``result``
a ``DeferredToolRequests`` output              ``ToolApprovalRequest`` per call needing approval (the
                                               human-in-the-loop helper's, :mod:`streamkit.events.hitl`),
                                               then ``RunFinished(finish_reason="tool-calls")``
an exception                                   ``RunError`` (after closing what was open)
============================================  ===========================================================

**Approvals and frontend tools.** A tool with ``requires_approval=True`` (or one raising
``ApprovalRequired``) pauses the run with an approval request; the next request's answer (AI SDK: the tool
part's approval response; AG-UI: the ``resume`` entry of the interrupt) is read with
:func:`streamkit.events.hitl.continuation` and given to the agent as ``DeferredToolResults``
(``ToolApproved`` / ``ToolDenied`` with the user's reason), so the agent runs or skips the call and goes
on. Frontend tool results come back in the history, after their calls.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from pydantic_core import to_jsonable_python

from ..events import (
    ChatEvent,
    File,
    FilePart,
    Message,
    ReasoningPart,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    StepFinished,
    StepStarted,
    TextPart,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
    hitl,
)
from .loop import StepTranslator, describe_error, run_tag

try:
    from pydantic_ai import messages as pai
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDefinition, ToolDenied
    from pydantic_ai.toolsets import ExternalToolset
    from pydantic_ai.usage import RunUsage
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError("streamkit.sources.pydantic_ai needs pydantic-ai: pip install 'streamkit[pydantic-ai]'") from exc

__all__ = [
    "EventTranslator",
    "PydanticAIAgent",
    "PydanticAITranslator",
    "deferred_results",
    "to_model_messages",
    "to_pydantic_ai_messages",
]

PROVIDER = "pydantic_ai"
"""The provider-metadata key streamkit keeps pydantic-ai's part data under."""

UNANSWERED = "The client did not run this tool call."


# --- input -----------------------------------------------------------------------------------------


def _user_content(message: Message) -> str | list[Any]:
    if all(isinstance(p, TextPart) for p in message.parts):
        return message.text
    content: list[Any] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append(part.text)
        elif isinstance(part, FilePart):
            if part.url.startswith("data:"):
                content.append(pai.BinaryContent.from_data_uri(part.url))
            elif part.media_type.startswith("image/"):
                content.append(pai.ImageUrl(url=part.url, media_type=part.media_type))
            else:
                content.append(pai.DocumentUrl(url=part.url, media_type=part.media_type))
    return content


def _return(part: ToolResultPart, name: str) -> pai.ToolReturnPart:
    if part.denied:
        return pai.ToolReturnPart(
            tool_name=name, content=part.error or "The tool call was denied.", tool_call_id=part.id, outcome="denied"
        )
    if part.error is not None:
        return pai.ToolReturnPart(tool_name=name, content=part.error, tool_call_id=part.id, outcome="failed")
    return pai.ToolReturnPart(tool_name=name, content=part.output, tool_call_id=part.id)


def _thinking(part: ReasoningPart) -> pai.ThinkingPart:
    meta = (part.provider_metadata or {}).get(PROVIDER) or {}
    return pai.ThinkingPart(
        content=part.text,
        signature=meta.get("signature") if isinstance(meta.get("signature"), str) else None,
        provider_name=meta.get("provider_name") if isinstance(meta.get("provider_name"), str) else None,
    )


def to_pydantic_ai_messages(messages: Iterable[Message]) -> list[pai.ModelMessage]:
    """The neutral history as pydantic-ai messages, in causal order (every tool return after its call).

    An assistant message becomes a ``ModelResponse`` per step (thinking, text, tool calls), each followed
    by a ``ModelRequest`` with the returns of its calls; calls left without a result before a later user
    message get a ``failed`` return saying so (a model API rejects an unanswered call).
    """
    out: list[pai.ModelMessage] = []
    names: dict[str, str] = {}
    unanswered: dict[str, str] = {}

    def request(parts: list[Any]) -> None:
        if (
            out
            and isinstance(out[-1], pai.ModelRequest)
            and all(isinstance(p, pai.ToolReturnPart) for p in out[-1].parts)
        ):
            out[-1] = pai.ModelRequest(parts=[*out[-1].parts, *parts])
        else:
            out.append(pai.ModelRequest(parts=parts))

    def answer(part: ToolResultPart) -> None:
        unanswered.pop(part.id, None)
        request([_return(part, part.name or names.get(part.id, ""))])

    def close_calls() -> None:
        if unanswered:
            request(
                [
                    pai.ToolReturnPart(tool_name=name, content=UNANSWERED, tool_call_id=cid, outcome="failed")
                    for cid, name in unanswered.items()
                ]
            )
            unanswered.clear()

    for message in messages:
        if message.role in ("system", "developer"):
            out.append(pai.ModelRequest(parts=[pai.SystemPromptPart(content=message.text)]))
        elif message.role == "user":
            close_calls()
            out.append(pai.ModelRequest(parts=[pai.UserPromptPart(content=_user_content(message))]))
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    answer(part)
        elif message.role == "assistant":
            step: list[Any] = []
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    if step:
                        out.append(pai.ModelResponse(parts=step))
                        step = []
                    answer(part)
                elif isinstance(part, TextPart):
                    step.append(pai.TextPart(content=part.text))
                elif isinstance(part, ReasoningPart):
                    step.append(_thinking(part))
                elif isinstance(part, ToolCallPart):
                    names[part.id] = part.name
                    unanswered[part.id] = part.name
                    args = part.input if isinstance(part.input, dict) else ({} if part.input is None else part.input)
                    step.append(pai.ToolCallPart(tool_name=part.name, args=args, tool_call_id=part.id))
            if step:
                out.append(pai.ModelResponse(parts=step))
    return out


def deferred_results(run: RunInput) -> DeferredToolResults | None:
    """The answers the request brings to the calls the previous run deferred (approvals, by
    :func:`streamkit.events.hitl.continuation`), or None when there are none."""
    turn = hitl.continuation(run)
    if not turn.decisions:
        return None
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    for decision in turn.decisions:
        if decision.approved:
            approvals[decision.call.id] = ToolApproved()
        else:
            approvals[decision.call.id] = ToolDenied(decision.reason or "The user denied this tool call.")
    return DeferredToolResults(approvals=approvals)


# --- the stream translator ---------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


def _args_text(args: Any) -> str:
    if args is None:
        return ""
    return args if isinstance(args, str) else json.dumps(_jsonable(args), ensure_ascii=False)


class PydanticAITranslator:
    """pydantic-ai agent stream events in, ``ChatEvent``\\ s out (pure, one per run; see the module docstring).

    ``feed(event) -> list[ChatEvent]``, ``close() -> list[ChatEvent]``; after the run, ``output``,
    ``usage`` and ``deferred`` (a ``DeferredToolRequests`` output) describe its end.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.taken: set[str] = set()
        self.step = 0
        self.output: Any = None
        self.usage: Usage | None = None
        self.deferred: DeferredToolRequests | None = None
        self.finished = False
        self._response: StepTranslator | None = None  # the model response streaming now
        self._step_open = False

    def feed(self, event: Any) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        if isinstance(event, pai.PartStartEvent):
            self._part_start(event.index, event.part, out)
        elif isinstance(event, pai.PartDeltaEvent):
            self._part_delta(event.index, event.delta, out)
        elif isinstance(event, pai.PartEndEvent):
            self._part_end(event.index, event.part, out)
        elif isinstance(event, pai.FunctionToolResultEvent | pai.OutputToolResultEvent):
            self._end_response(out)
            out.append(self._result(event.part))
        elif isinstance(event, pai.ToolCallEvent):
            self._end_response(out)
        elif type(event).__name__ == "AgentRunResultEvent":
            self._end_response(out)
            self._run_result(event.result)
        return out

    def close(self) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        self._end_response(out)
        if self._step_open:
            out.append(StepFinished(name=f"model-call-{self.step}"))
            self._step_open = False
        return out

    def finish(self) -> list[ChatEvent]:
        """The run's last events: approval requests for deferred calls, then ``RunFinished``."""
        out: list[ChatEvent] = self.close()
        if self.deferred is not None:
            for call in self.deferred.approvals:
                out.append(hitl.request_approval(call.tool_call_id))
            out.append(hitl.pause(usage=self.usage))
            return out
        result = None if self.output is None or isinstance(self.output, str) else _jsonable(self.output)
        out.append(RunFinished(finish_reason="stop", usage=self.usage, result=result))
        return out

    # -- parts ---------------------------------------------------------------------------------------

    def _translator(self, out: list[ChatEvent]) -> StepTranslator:
        if self._response is None:
            if self._step_open:
                out.append(StepFinished(name=f"model-call-{self.step}"))
            self.step += 1
            out.append(StepStarted(name=f"model-call-{self.step}"))
            self._step_open = True
            self._response = StepTranslator(f"{self.prefix}_{self.step}", self.taken)
        return self._response

    def _end_response(self, out: list[ChatEvent]) -> None:
        if self._response is not None:
            out += self._response.close()
            self._response = None

    def _part_start(self, index: int, part: Any, out: list[ChatEvent]) -> None:
        tr = self._translator(out)
        if isinstance(part, pai.TextPart):
            tr.end_reasoning(out)
            tr.end_text(out)  # a new text part is a new block (an empty one opens with its first delta)
            tr.text(part.content, out)
        elif isinstance(part, pai.ThinkingPart):
            tr.end_text(out)
            tr.end_reasoning(out)
            tr.reasoning(part.content or "", out)
        elif isinstance(part, pai.NativeToolCallPart):
            tr.end_reasoning(out)
            tr.end_text(out)
            out.append(
                ToolCallStart(
                    id=part.tool_call_id,
                    name=part.tool_name,
                    provider_executed=True,
                    provider_metadata=self._meta(part.provider_name),
                )
            )
        elif isinstance(part, pai.ToolCallPart):
            tr.call(index, out, id=part.tool_call_id, name=part.tool_name)
            tr.call_args(index, _args_text(part.args), out)
        elif isinstance(part, pai.NativeToolReturnPart):
            out.append(ToolResult(id=part.tool_call_id, output=_jsonable(part.content)))
        elif isinstance(part, pai.FilePart):
            content = part.content
            data = base64.b64encode(content.data).decode()
            out.append(File(url=f"data:{content.media_type};base64,{data}", media_type=content.media_type))

    def _part_delta(self, index: int, delta: Any, out: list[ChatEvent]) -> None:
        tr = self._translator(out)
        if isinstance(delta, pai.TextPartDelta):
            tr.text(delta.content_delta, out)
        elif isinstance(delta, pai.ThinkingPartDelta):
            if delta.content_delta:
                tr.reasoning(delta.content_delta, out)
        elif isinstance(delta, pai.ToolCallPartDelta):
            if delta.tool_name_delta or delta.tool_call_id:
                tr.call(index, out, id=delta.tool_call_id, name=delta.tool_name_delta)
            if delta.args_delta:
                tr.call_args(index, _args_text(delta.args_delta), out)

    def _part_end(self, index: int, part: Any, out: list[ChatEvent]) -> None:
        tr = self._translator(out)
        if isinstance(part, pai.TextPart):
            tr.end_text(out)
        elif isinstance(part, pai.ThinkingPart):
            if not tr.reasoning_open and (part.signature or part.id):
                tr.reasoning("", out)  # reasoning with nothing but opaque data
            meta: dict[str, Any] = {}
            if part.signature:
                meta["signature"] = part.signature
            if part.provider_name:
                meta["provider_name"] = part.provider_name
            tr.end_reasoning(out, provider_metadata={PROVIDER: meta} if meta else None)
        elif isinstance(part, pai.NativeToolCallPart):
            out.append(ToolCallEnd(id=part.tool_call_id, input=_jsonable(part.args_as_dict())))
        elif isinstance(part, pai.ToolCallPart) and not tr.has_call(index):
            # pydantic-ai ends a call's part when the next part starts, while parallel calls' argument
            # deltas still arrive for it: calls end with their response (``_end_response``)
            tr.call(index, out, id=part.tool_call_id, name=part.tool_name)
            tr.call_args(index, _args_text(part.args), out)

    @staticmethod
    def _meta(provider_name: str | None) -> dict[str, dict[str, Any]] | None:
        return {PROVIDER: {"provider_name": provider_name}} if provider_name else None

    # -- results -------------------------------------------------------------------------------------

    def _result(self, part: Any) -> ToolResult:
        outcome = getattr(part, "outcome", "success")
        content = getattr(part, "content", None)
        if outcome == "denied":
            return ToolResult(id=part.tool_call_id, denied=True, error=content if isinstance(content, str) else None)
        if outcome in ("failed", "retried", "interrupted") or isinstance(part, pai.RetryPromptPart):
            text = part.model_response_str() if hasattr(part, "model_response_str") else str(content)
            return ToolResult(id=part.tool_call_id, error=text)
        return ToolResult(id=part.tool_call_id, output=_jsonable(content))

    def _run_result(self, result: Any) -> None:
        self.finished = True
        output = result.output
        if isinstance(output, DeferredToolRequests):
            self.deferred = output
        else:
            self.output = output
        usage = getattr(result, "usage", None)  # a property since pydantic-ai 2, a method before
        if usage is not None and not isinstance(usage, RunUsage) and callable(usage):
            usage = usage()
        if usage is not None:
            details = getattr(usage, "details", None) or {}
            self.usage = Usage(
                input_tokens=getattr(usage, "input_tokens", None),
                output_tokens=getattr(usage, "output_tokens", None),
                total_tokens=getattr(usage, "total_tokens", None),
                reasoning_tokens=details.get("reasoning_tokens"),
                cached_input_tokens=getattr(usage, "cache_read_tokens", None) or None,
                cache_write_input_tokens=getattr(usage, "cache_write_tokens", None) or None,
            )


# --- the agent -------------------------------------------------------------------------------------


class PydanticAIAgent:
    """A ``pydantic_ai.Agent`` as a streamkit agent core (see the module docstring).

    ``deps`` are the agent's dependencies for every run (or ``deps_for(run)`` computes them per run);
    ``model`` / ``model_settings`` / ``usage_limits`` are passed on to each run; ``frontend_tools=False``
    does not offer the client's tools. Other keyword arguments reach ``agent.run_stream_events``.
    """

    def __init__(
        self,
        agent: Any,
        *,
        deps: Any = None,
        deps_for: Any = None,
        frontend_tools: bool = True,
        **run_options: Any,
    ) -> None:
        self.agent = agent
        self.deps = deps
        self.deps_for = deps_for
        self.frontend_tools = frontend_tools
        self.run_options = run_options

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        return self._run(run)

    def run_arguments(self, run: RunInput) -> dict[str, Any]:
        """The keyword arguments of ``agent.run_stream_events`` for ``run``."""
        options: dict[str, Any] = dict(self.run_options)
        options["message_history"] = to_pydantic_ai_messages(run.messages)
        results = deferred_results(run)
        if results is not None:
            options["deferred_tool_results"] = results
        deps = self.deps_for(run) if self.deps_for is not None else self.deps
        if deps is not None:
            options["deps"] = deps
        if self.frontend_tools and run.tools:
            defs = [
                ToolDefinition(
                    name=t.name,
                    description=t.description or None,
                    parameters_json_schema=t.parameters or {"type": "object", "properties": {}},
                )
                for t in run.tools
            ]
            options["toolsets"] = [*(options.get("toolsets") or ()), ExternalToolset(defs)]
        output_type = options.get("output_type") or getattr(self.agent, "output_type", str)
        if not _allows_deferred(output_type):
            options["output_type"] = [output_type, DeferredToolRequests]
        return options

    async def _run(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        yield RunStarted()
        translator = PydanticAITranslator(run_tag(run.run_id))
        error: RunError | None = None
        try:
            async with _events(self.agent.run_stream_events(**self.run_arguments(run))) as events:
                async for event in events:
                    for out in translator.feed(event):
                        yield out
        except Exception as exc:  # the agent failed: the run's error, never an exception out of the stream
            error = describe_error(exc)
        if error is not None:
            for out in translator.close():
                yield out
            yield error
            return
        for out in translator.finish():
            yield out


def _allows_deferred(output_type: Any) -> bool:
    if output_type is DeferredToolRequests:
        return True
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        return any(_allows_deferred(t) for t in output_type)
    return False


class _events(AbstractAsyncContextManager[AsyncIterator[Any]]):
    """``run_stream_events``'s result as a context manager (a context manager itself since pydantic-ai 2,
    a plain async iterator before)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._entered: Any = None

    async def __aenter__(self) -> AsyncIterator[Any]:
        if hasattr(self._stream, "__aenter__"):
            self._entered = self._stream
            events: AsyncIterator[Any] = await self._stream.__aenter__()
            return events
        iterator: AsyncIterator[Any] = self._stream
        return iterator

    async def __aexit__(self, *exc: Any) -> None:
        if self._entered is not None:
            await self._entered.__aexit__(*exc)
        elif hasattr(self._stream, "aclose"):
            await self._stream.aclose()


to_model_messages = to_pydantic_ai_messages
"""The earlier name of :func:`to_pydantic_ai_messages`."""
EventTranslator = PydanticAITranslator
"""The earlier name of :class:`PydanticAITranslator`."""
