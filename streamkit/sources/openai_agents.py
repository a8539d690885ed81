"""The OpenAI Agents SDK as a source: run an ``agents.Agent`` for a ``RunInput`` and stream it as ``ChatEvent``\\ s.

:class:`AgentsSDKAgent` wraps any Agents SDK agent (its model, tools, handoffs, guardrails and output type
as they are) as a streamkit agent core, served by both protocols::

    from agents import Agent
    from streamkit.sources.openai_agents import AgentsSDKAgent

    agent = AgentsSDKAgent(Agent(name="Assistant", instructions="Be brief.", tools=[get_weather]))
    app = Starlette(routes=[*aisdk.routes(agent), *agui.routes(agent)])

**Input.** The history becomes the SDK's input items, the Responses API's item format the SDK speaks
(:func:`to_agents_sdk_messages`: user messages with their files, assistant text, reasoning items with their id and
encrypted content, each ``function_call`` directly followed by its ``function_call_output``). The
client's frontend tools are offered as function tools the SDK does not run (:func:`with_frontend_tools`): a
call to one ends the run with the call pending (``tool-calls``), and the client's result comes back in the
next request's history.

**Stream.** ``Runner.run_streamed(agent, input).stream_events()``:

- ``raw_response_event``\\ s are the model's Responses API stream, translated by the OpenAI source's
  :class:`~streamkit.sources.openai.OpenAIResponsesTranslator`, one per model response: output text deltas,
  reasoning summary deltas (the reasoning item's id and encrypted content kept), function-call argument
  deltas (streamed under the ``call_id``, several interleaved), hosted tools (web or file search...) as
  provider-executed calls with their result, annotations as sources. Each model response is a step named
  for the agent that runs it (``StepStarted(agent.name)``), so a handoff shows as the next step's name;
  usage is summed over the responses;
- ``run_item_stream_event``\\ s: a ``tool_output`` item is the call's ``ToolResult`` (the tool's own
  output), ``handoff_occured`` the handoff call's result (``{"agent": <target>}``); the other items restate
  what the raw events streamed and add nothing;
- ``agent_updated_stream_event``: the agent that runs the next model response (a handoff).

**Approvals.** A tool with ``needs_approval`` pauses the run: an approval request per call (the
human-in-the-loop helper's, :mod:`streamkit.events.hitl`), ``RunFinished(finish_reason="tool-calls")``, and
the run's ``RunState`` kept (serialized) for the thread. The next request's answers (AI SDK approval
responses, AG-UI ``resume``) approve or reject the calls on that state (a denial's reason is what the model
reads) and the run resumes where it paused.

The run ends with ``RunFinished`` (the last response's finish reason, the summed usage, and, for a
structured ``output_type``, the final output as ``result``); an exception (a model error, ``MaxTurnsExceeded``,
a guardrail tripwire, a tool raising) ends it with a ``RunError`` after closing what was open.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncGenerator, Mapping, MutableMapping
from typing import Any

from pydantic_core import to_jsonable_python

from ..events import (
    ChatEvent,
    FinishReason,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    StepFinished,
    StepStarted,
    Tool,
    hitl,
)
from ..events import ToolResult as ToolResultEvent
from .loop import add_usage, run_tag
from .openai import OpenAIResponsesTranslator, provider_error, to_openai_responses_messages

try:
    from agents import FunctionTool, Runner, StopAtTools
    from agents.items import HandoffOutputItem, ToolCallItem, ToolCallOutputItem
    from agents.run_state import RunState
    from agents.stream_events import AgentUpdatedStreamEvent, RawResponsesStreamEvent, RunItemStreamEvent
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "streamkit.sources.openai_agents needs the OpenAI Agents SDK: pip install 'streamkit[openai-agents]'"
    ) from exc

__all__ = [
    "AgentsSDKAgent",
    "AgentsSDKTranslator",
    "RunTranslator",
    "to_agents_sdk_messages",
    "to_input_items",
    "with_frontend_tools",
]

PENDING = "The client runs this tool; its result comes with the next request."


def to_agents_sdk_messages(run: RunInput) -> list[dict[str, Any]]:
    """The run's history as the SDK's input items (the Responses API item format), in causal order."""
    return to_openai_responses_messages(run)


async def _left_to_the_client(context: Any, arguments: str) -> str:
    return PENDING


def with_frontend_tools(agent: Any, tools: list[Tool]) -> tuple[Any, frozenset[str]]:
    """``agent`` offering the client's frontend ``tools`` too (those its own tools do not name), and their
    names. A call to one ends the run (``StopAtTools``, added to the agent's own ``tool_use_behavior`` when
    that is the default or ``StopAtTools``) with the call pending for the client."""
    own = {getattr(t, "name", None) for t in agent.tools}
    names = frozenset(t.name for t in tools if t.name not in own)
    if not names:
        return agent, names
    offered = [
        FunctionTool(
            name=t.name,
            description=t.description,
            params_json_schema=t.parameters or {"type": "object", "properties": {}},
            on_invoke_tool=_left_to_the_client,
            strict_json_schema=False,
        )
        for t in tools
        if t.name in names
    ]
    behavior = agent.tool_use_behavior
    if behavior == "run_llm_again":
        behavior = StopAtTools(stop_at_tool_names=sorted(names))
    elif isinstance(behavior, dict):
        behavior = StopAtTools(stop_at_tool_names=[*behavior["stop_at_tool_names"], *sorted(names)])
    return agent.clone(tools=[*agent.tools, *offered], tool_use_behavior=behavior), names


class _Recent(OrderedDict[str, str]):
    """A mapping that keeps its last ``size`` entries."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


class AgentsSDKTranslator:
    """``stream_events()`` of one run in, ``ChatEvent``\\ s out (pure; see the module docstring).

    ``feed(event) -> list[ChatEvent]``, ``close() -> list[ChatEvent]``; ``usage`` and ``finish_reason``
    describe the run's end, ``error`` a failure the model reported inside its stream.
    """

    def __init__(self, prefix: str, agent_name: str = "agent", frontend_tools: frozenset[str] = frozenset()) -> None:
        self.prefix = prefix
        self.frontend_tools = frontend_tools
        self.pending: set[str] = set()  # calls of frontend tools, left for the client
        self.denied: dict[str, str | None] = {}  # calls the user denied (resumed runs): their reason
        self.agent_name = agent_name
        self.taken: set[str] = set()
        self.usage: Any = None
        self._finish: FinishReason = "stop"
        self.error: RunError | None = None
        self._response: OpenAIResponsesTranslator | None = None
        self._responses = 0
        self._step: str | None = None

    def feed(self, event: Any) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        if isinstance(event, RawResponsesStreamEvent):
            self._raw(event.data, out)
        elif isinstance(event, RunItemStreamEvent):
            self._item(event.item, out)
        elif isinstance(event, AgentUpdatedStreamEvent):
            self.agent_name = event.new_agent.name
        return out

    def close(self) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        self._end_response(out)
        if self._step is not None:
            out.append(StepFinished(name=self._step))
            self._step = None
        return out

    def _raw(self, data: Any, out: list[ChatEvent]) -> None:
        kind = _get(data, "type")
        if kind == "response.created" or self._response is None:
            self._end_response(out)
            if self._step is not None:
                out.append(StepFinished(name=self._step))
            self._responses += 1
            self._step = self.agent_name
            out.append(StepStarted(name=self._step))
            self._response = OpenAIResponsesTranslator(f"{self.prefix}_{self._responses}", self.taken)
        response = self._response
        out += response.feed(data)
        if response.error is not None:
            self.error = response.error
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._end_response(out)

    def _end_response(self, out: list[ChatEvent]) -> None:
        response, self._response = self._response, None
        if response is None:
            return
        out += response.close()
        self.usage = add_usage(self.usage, response.usage)
        self._finish = response.finish

    @property
    def finish_reason(self) -> FinishReason:
        """``tool-calls`` when frontend tool calls wait for the client, else the last response's."""
        return "tool-calls" if self.pending else self._finish

    def _item(self, item: Any, out: list[ChatEvent]) -> None:
        if isinstance(item, ToolCallItem):
            name, call_id = _get(item.raw_item, "name"), _get(item.raw_item, "call_id")
            if name in self.frontend_tools and isinstance(call_id, str):
                self.pending.add(call_id)
        elif isinstance(item, ToolCallOutputItem):
            call_id = _get(item.raw_item, "call_id") or _get(item.raw_item, "id")
            if isinstance(call_id, str) and call_id in self.denied:
                out.append(ToolResultEvent(id=call_id, denied=True, error=self.denied[call_id]))
            elif isinstance(call_id, str) and call_id not in self.pending:
                out.append(ToolResultEvent(id=call_id, output=_jsonable(item.output)))
        elif isinstance(item, HandoffOutputItem):
            call_id = _get(item.raw_item, "call_id")
            if isinstance(call_id, str):
                out.append(ToolResultEvent(id=call_id, output={"agent": item.target_agent.name}))


class AgentsSDKAgent:
    """An OpenAI Agents SDK ``Agent`` as a streamkit agent core (see the module docstring).

    ``context`` is the run context given to tools (or ``context_for(run)`` computes it per run);
    ``max_turns`` bounds the model calls; ``frontend_tools=False`` does not offer the client's tools
    (:func:`with_frontend_tools`); ``paused`` keeps the serialized ``RunState`` of runs paused for approval, by
    thread id (default: the last 1,000 in this process; give a shared mapping when several workers serve
    the threads); ``run_config`` and any other keyword arguments reach
    ``Runner.run_streamed``.
    """

    def __init__(
        self,
        agent: Any,
        *,
        context: Any = None,
        context_for: Any = None,
        max_turns: int = 10,
        frontend_tools: bool = True,
        paused: MutableMapping[str, str] | None = None,
        **run_options: Any,
    ) -> None:
        self.agent = agent
        self.frontend_tools = frontend_tools
        self.paused: MutableMapping[str, str] = paused if paused is not None else _Recent(1000)
        self.context = context
        self.context_for = context_for
        self.max_turns = max_turns
        self.run_options = run_options

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        return self._run(run)

    async def _resumed(self, agent: Any, run: RunInput) -> Any:
        """The paused run of the thread with the request's answers applied (approve or reject each call),
        or None when the request answers no approval or the paused run is not held here."""
        decisions = {d.call.id: d for d in hitl.continuation(run).decisions}
        if not decisions or run.thread_id not in self.paused:
            return None
        state = await RunState.from_string(agent, self.paused.pop(run.thread_id))
        for item in state.get_interruptions():
            decision = decisions.get(_get(item.raw_item, "call_id"))
            if decision is None:
                continue
            if decision.approved:
                state.approve(item)
            else:
                state.reject(item, rejection_message=decision.reason or "The user denied this tool call.")
        return state

    async def _run(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        yield RunStarted()
        agent, frontend = self.agent, frozenset[str]()
        if self.frontend_tools and run.tools:
            agent, frontend = with_frontend_tools(self.agent, run.tools)
        translator = AgentsSDKTranslator(run_tag(run.run_id), getattr(agent, "name", "agent"), frontend)
        error: RunError | None = None
        result: Any = None
        try:
            context = self.context_for(run) if self.context_for is not None else self.context
            start: Any = to_agents_sdk_messages(run)
            state = await self._resumed(agent, run)
            if state is not None:
                start = state
                denied = (d for d in hitl.continuation(run).decisions if not d.approved)
                translator.denied = {d.call.id: d.reason for d in denied}
            result = Runner.run_streamed(
                agent,
                input=start,
                context=context,
                max_turns=self.max_turns,
                **self.run_options,
            )
            async for event in result.stream_events():
                for out in translator.feed(event):
                    yield out
                if translator.error is not None:
                    break
        except Exception as exc:  # the run failed: the run's error, never an exception out of the stream
            error = provider_error(exc)
        finally:
            if result is not None and translator.error is not None:
                result.cancel()
        for out in translator.close():
            yield out
        error = error or translator.error
        if error is not None:
            yield error
            return
        interruptions = list(getattr(result, "interruptions", None) or ())
        if interruptions:
            self.paused[run.thread_id] = result.to_state().to_string()
            for item in interruptions:
                call_id = _get(item.raw_item, "call_id")
                if isinstance(call_id, str):
                    yield hitl.request_approval(call_id)
            yield hitl.pause(usage=translator.usage)
            return
        output = getattr(result, "final_output", None)
        yield RunFinished(
            finish_reason=translator.finish_reason,
            usage=translator.usage,
            result=None if output is None or isinstance(output, str) else _jsonable(output),
        )


to_input_items = to_agents_sdk_messages
"""The earlier name of :func:`to_agents_sdk_messages`."""
RunTranslator = AgentsSDKTranslator
"""The earlier name of :class:`AgentsSDKTranslator`."""
