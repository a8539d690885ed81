"""OpenTelemetry for every run: a span per run, per tool call and per step, and the stream metrics.

:class:`Telemetry` is the app's choice (the providers, whether content is recorded), passed as
``StreamOptions(telemetry=...)``; without it the global tracer and meter providers are used. The endpoint
pipeline (:mod:`streamkit.serve`) calls the hooks here, so every protocol is recorded the same way:

* :func:`observe_run` opens the run's span (``invoke_agent``, a child of the request's span, or of the W3C
  ``traceparent`` the request carries) and returns a :class:`RunTelemetry` that wraps the agent's events (tool,
  step and first-token spans and events, usage, the outcome) and the run's frames (frames, bytes, time to the
  first frame; the span ends with the frames);
* :func:`run_of` finds that run again where the response is built, :func:`serving` tells it how it is served
  (bound, detached, resumable), :func:`watched` wraps what the response sends (open streams, disconnects);
* :func:`resumed` wraps a reconnect's stream (a span of its own); :func:`cancel_asked` counts the cancels.

What is recorded, the names and the outcomes are listed in ``docs/observability.md``.

Why it is subtle, once: when OpenTelemetry is absent, or no provider is configured, the hooks return what they
were given, so nothing is added per frame (a run pays one check). When it is on, the agent's code must run
with the run's span current, so that the spans the provider SDKs' instrumentations open nest under it: the
agent's generator runs inside the frame writer's iteration, in whatever task pulls the frames (the response's,
a detached run's producer, a resumable run's writer), so the run's context is attached around each pull of an
event, not once where the run starts. Whether the server is stopping (a run cut short by a shutdown is an
error, not a disconnect) is asked of :mod:`streamkit.sse`, which owns that check.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ._version import __version__
from .events import Agent, ChatEvent, ReasoningPart, RunInput, TextPart, ToolCallPart, ToolResultPart
from .frames import Mapper, start_agent
from .sse import server_stopping
from .stringify import json_default

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, propagate, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # the otel extra is not installed: every hook is a no-op
    _AVAILABLE = False
else:
    _AVAILABLE = True
    _attach = otel_context.attach
    _detach = otel_context.detach

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import Meter, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue
    from starlette.requests import Request

__all__ = [
    "RunTelemetry",
    "Telemetry",
    "cancel_asked",
    "observe_run",
    "protocol_of",
    "resumed",
    "run_of",
    "serving",
    "watched",
]


@dataclass(frozen=True, slots=True)
class Telemetry:
    """How runs are recorded with OpenTelemetry (``StreamOptions(telemetry=Telemetry(...))``).

    * ``tracer_provider`` and ``meter_provider``: where spans and metrics go (default: the global providers
      the app configured; with neither configured nothing is recorded);
    * ``record_content``: also record prompts, outputs, tool arguments and results and approval reasons (off
      by default, as the GenAI semantic conventions require);
    * ``agent_name``: ``gen_ai.agent.name`` (default: the agent's ``name`` attribute, when it has one);
    * ``enabled``: ``False`` records nothing, whatever the providers.
    """

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    record_content: bool = False
    agent_name: str | None = None
    enabled: bool = True


_DEFAULT = Telemetry()

# --- names: the GenAI conventions' attributes, then streamkit's own (docs/observability.md lists them) ------

_OPERATION = "gen_ai.operation.name"
_AGENT_NAME = "gen_ai.agent.name"
_CONVERSATION = "gen_ai.conversation.id"
_REQUEST_MODEL = "gen_ai.request.model"
_RESPONSE_MODEL = "gen_ai.response.model"
_PROVIDER = "gen_ai.provider.name"
_FINISH_REASONS = "gen_ai.response.finish_reasons"
_INPUT_TOKENS = "gen_ai.usage.input_tokens"
_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
_CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
_CACHE_CREATION = "gen_ai.usage.cache_creation.input_tokens"
_REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
_INPUT_MESSAGES = "gen_ai.input.messages"
_OUTPUT_MESSAGES = "gen_ai.output.messages"
_TOOL_NAME = "gen_ai.tool.name"
_TOOL_CALL_ID = "gen_ai.tool.call.id"
_TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
_TOOL_RESULT = "gen_ai.tool.call.result"
_TOKEN_TYPE = "gen_ai.token.type"
_ERROR_TYPE = "error.type"

_PROTOCOL = "streamkit.protocol"
_RUN_ID = "streamkit.run.id"
_OUTCOME = "streamkit.run.outcome"
_FRAMES = "streamkit.run.frames"
_BYTES = "streamkit.run.bytes"
_FIRST_FRAME = "streamkit.run.time_to_first_frame"
_FIRST_TOKEN = "streamkit.run.time_to_first_token"
_MODE = "streamkit.run.mode"
_CLIENT_GONE = "streamkit.run.client_gone"
_STREAM_ID = "streamkit.stream.id"
_INTERRUPTS = "streamkit.run.interrupts"
_STEP_NAME = "streamkit.step.name"
_TOOL_STATUS = "streamkit.tool.status"
_APPROVAL_ID = "streamkit.approval.id"
_APPROVED = "streamkit.approval.approved"
_APPROVAL_REASON = "streamkit.approval.reason"
_RESUME_AFTER = "streamkit.resume.after"
_FOUND = "streamkit.found"

_INVOKE_AGENT = "invoke_agent"
_EXECUTE_TOOL = "execute_tool"

# The outcomes of a run (``streamkit.run.outcome``).
_FINISHED = "finished"
_ERROR = "error"
_ABORTED = "aborted"
_CANCELLED = "cancelled"
_DETACHED_OUTCOME = "detached"
_DISCONNECTED = "disconnected"

_REASON_SPELLINGS = {"content-filter": "content_filter", "tool-calls": "tool_call"}
"""streamkit's finish reasons that the GenAI conventions spell otherwise."""

_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
_FIRST_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
_TOKEN_BUCKETS = tuple(float(4**i) for i in range(14))
"""The GenAI conventions' advisory buckets: operation duration, time to first chunk, token usage."""


# --- providers --------------------------------------------------------------------------------------


class _Instruments:
    """streamkit's metric instruments on one meter."""

    def __init__(self, meter: Meter) -> None:
        self.open_streams = meter.create_up_down_counter(
            "streamkit.streams.open", unit="{stream}", description="Responses streaming now"
        )
        self.runs = meter.create_counter("streamkit.runs", unit="{run}", description="Runs ended, by outcome")
        self.duration = meter.create_histogram(
            "streamkit.run.duration",
            unit="s",
            description="Run duration, from the request to the last frame",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.first_frame = meter.create_histogram(
            "streamkit.run.time_to_first_frame",
            unit="s",
            description="Time from the request to the run's first frame",
            explicit_bucket_boundaries_advisory=_FIRST_BUCKETS,
        )
        self.first_token = meter.create_histogram(
            "streamkit.run.time_to_first_token",
            unit="s",
            description="Time from the request to the run's first text token",
            explicit_bucket_boundaries_advisory=_FIRST_BUCKETS,
        )
        self.frames = meter.create_counter("streamkit.frames.sent", unit="{frame}", description="SSE frames sent")
        self.bytes = meter.create_counter("streamkit.bytes.sent", unit="By", description="SSE bytes sent")
        self.disconnects = meter.create_counter(
            "streamkit.disconnects", unit="{disconnect}", description="Clients that left before their stream ended"
        )
        self.resumes = meter.create_counter("streamkit.resumes", unit="{resume}", description="Reconnects to a run")
        self.cancels = meter.create_counter("streamkit.cancels", unit="{cancel}", description="Cancel requests")
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used by a run, by token type",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )


_tracers: weakref.WeakKeyDictionary[Any, Tracer] = weakref.WeakKeyDictionary()
_meters: weakref.WeakKeyDictionary[Any, _Instruments] = weakref.WeakKeyDictionary()
_no_tracer: list[Tracer] = []
_no_meter: list[_Instruments] = []


def _configured(provider: object, unset: tuple[type, ...]) -> bool:
    return provider is not None and not isinstance(provider, unset)


def _unset_meter_providers() -> tuple[type, ...]:
    proxy = getattr(metrics, "_internal", None)
    proxy_class = getattr(proxy, "_ProxyMeterProvider", None)
    return (metrics.NoOpMeterProvider, proxy_class) if isinstance(proxy_class, type) else (metrics.NoOpMeterProvider,)


_UNKNOWN = object()

if _AVAILABLE:
    _UNSET_TRACING: tuple[type, ...] = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
    _UNSET_METRICS: tuple[type, ...] = _unset_meter_providers()


def _cached(cache: weakref.WeakKeyDictionary[Any, Any], provider: Any, build: Callable[[Any], Any]) -> Any:
    """``build(provider)``, kept per provider (a provider that cannot be weakly referenced is not cached)."""
    try:
        found = cache.get(provider)
    except TypeError:
        return build(provider)
    if found is None:
        found = cache[provider] = build(provider)
    return found


def _new_tracer(provider: TracerProvider) -> Tracer:
    return provider.get_tracer("streamkit", __version__)


def _new_instruments(provider: MeterProvider) -> _Instruments:
    return _Instruments(provider.get_meter("streamkit", __version__))


def _global_tracer_provider() -> object:
    """The global tracer provider (the API's proxy or no-op one while none is set)."""
    return trace.get_tracer_provider()


def _global_meter_provider() -> object:
    """The global meter provider (the API's proxy or no-op one while none is set)."""
    return metrics.get_meter_provider()


def _resolve(config: Telemetry | None) -> tuple[Tracer, _Instruments] | None:
    """The tracer and the instruments to record with; ``None`` when nothing is to be recorded (a no-op
    tracer or meter stands in for the one of the two that is not configured)."""
    if not _AVAILABLE:
        return None
    config = config or _DEFAULT
    if not config.enabled:
        return None
    tracing = config.tracer_provider or _global_tracer_provider()
    metering = config.meter_provider or _global_meter_provider()
    traced = _configured(tracing, _UNSET_TRACING)
    metered = _configured(metering, _UNSET_METRICS)
    if not traced and not metered:
        return None
    if traced:
        tracer = _cached(_tracers, tracing, _new_tracer)
    else:
        if not _no_tracer:
            _no_tracer.append(trace.NoOpTracer())
        tracer = _no_tracer[0]
    if metered:
        instruments = _cached(_meters, metering, _new_instruments)
    else:
        if not _no_meter:
            _no_meter.append(_Instruments(metrics.NoOpMeter("streamkit")))
        instruments = _no_meter[0]
    return tracer, instruments


def _parent(request: Request | None) -> Context:
    """The run span's parent: the current span (the ASGI instrumentation's server span) if there is one,
    else the W3C trace context the request's headers carry."""
    current = otel_context.get_current()
    if request is None or trace.get_current_span(current).get_span_context().is_valid:
        return current
    return propagate.extract(request.headers, context=current)


def protocol_of(mapper: Mapper) -> str:
    """The protocol a mapper writes: its streamkit package (``aisdk``, ``agui``, ``dsh``), else its class."""
    cls = type(mapper)
    parts = cls.__module__.split(".")
    return parts[1] if parts[0] == "streamkit" and len(parts) > 1 else cls.__name__


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, default=json_default).decode()
    except TypeError:
        return repr(value)


def _input_messages(run: RunInput) -> str:
    """``run.messages`` in the GenAI conventions' shape (role and parts)."""
    out = []
    for message in run.messages:
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, TextPart | ReasoningPart):
                parts.append({"type": part.type, "content": part.text})
            elif isinstance(part, ToolCallPart):
                parts.append({"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.input})
            elif isinstance(part, ToolResultPart):
                parts.append({"type": "tool_call_response", "id": part.id, "response": part.output})
            else:
                parts.append(part.model_dump(exclude_none=True))
        out.append({"role": message.role, "parts": parts})
    return _json(out)


# --- one run ----------------------------------------------------------------------------------------


class _Tool:
    __slots__ = ("span", "status")

    def __init__(self, span: Span) -> None:
        self.span = span
        self.status = "pending"


class RunTelemetry:
    """One run as it is recorded: its span, the spans of its tool calls and steps, and what its metrics need.

    Built by :func:`observe_run`; :meth:`start` calls the agent under the run's span and wraps its events,
    :meth:`frames` wraps the run's frames (the span ends with them).
    """

    def __init__(
        self,
        tracer: Tracer,
        instruments: _Instruments,
        config: Telemetry,
        agent: Agent,
        run: RunInput,
        mapper: Mapper,
        request: Request | None,
    ) -> None:
        self.tracer = tracer
        self.instruments = instruments
        self.mapper = mapper
        self.protocol = protocol_of(mapper)
        self.content = config.record_content
        self.started = time.monotonic()
        self.labels: dict[str, AttributeValue] = {_PROTOCOL: self.protocol}
        name = config.agent_name or _str_attr(agent, "name")
        attributes: dict[str, AttributeValue] = {
            _OPERATION: _INVOKE_AGENT,
            _CONVERSATION: run.thread_id,
            _RUN_ID: run.run_id,
            _PROTOCOL: self.protocol,
        }
        if name:
            attributes[_AGENT_NAME] = name
        model = _str_attr(agent, "model")
        if model:
            attributes[_REQUEST_MODEL] = model
        self.token_labels: dict[str, AttributeValue] = {_OPERATION: _INVOKE_AGENT, _PROTOCOL: self.protocol}
        if model:
            self.token_labels[_REQUEST_MODEL] = model
        if self.content:
            attributes[_INPUT_MESSAGES] = _input_messages(run)
        parent = _parent(request)
        self.span = tracer.start_span(
            f"{_INVOKE_AGENT} {name}" if name else _INVOKE_AGENT,
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self.context = trace.set_span_in_context(self.span, parent)
        self.current = self.context  # what the agent's code runs under: the innermost open step, else the run
        self.steps: list[tuple[str, Span, Context]] = []
        self.tools: dict[str, _Tool] = {}
        self.texts: dict[str, list[str]] = {}
        self.frames_out = 0
        self.bytes_out = 0
        self.first_frame: float | None = None
        self.first_token: float | None = None
        self.failure: tuple[str, str] | None = None  # (error.type, message)
        self.aborted: str | None = None
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.completed = False  # the frames ended with the agent's stream
        self.events_done = False
        self.reader_gone = False
        self.mode = "bound"  # bound, detached, starting (into the stream store), resumable
        self.ended = False

    # -- the agent's side --------------------------------------------------------------------------

    def start(self, agent: Agent, run: RunInput) -> AsyncIterable[ChatEvent] | Iterable[ChatEvent]:
        """``agent`` called on ``run`` under the run's span, its events wrapped to be recorded."""
        token = otel_context.attach(self.context)
        try:
            events = start_agent(agent, run)
        finally:
            otel_context.detach(token)
        if isinstance(events, AsyncIterable):
            return _Events(events, self)
        return _ReadyEvents(events, self)

    def see(self, event: Any) -> None:
        """Record what ``event`` says (a tool call, a step, the first token, usage, the outcome)."""
        kind = getattr(event, "type", None)
        if kind == "text-delta":
            if self.first_token is None and event.delta:
                self.first_token = time.monotonic() - self.started
                self.span.add_event("streamkit.first_token")
            if self.content:
                self.texts.setdefault(event.id, []).append(event.delta)
            return
        if kind is None:
            self.fail("NotAnEvent", f"the agent yielded a {type(event).__name__}")
            return
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    def fail(self, error_type: str, message: str) -> None:
        """The run failed (the first failure is the one recorded)."""
        if self.failure is None:
            self.failure = (error_type, message)

    def agent_failed(self, exc: BaseException) -> None:
        """The agent raised ``exc``."""
        self.span.record_exception(exc)
        self.fail(type(exc).__qualname__, str(exc) or type(exc).__name__)

    def _parent_of_child(self) -> Context:
        return self.steps[-1][2] if self.steps else self.context

    def _tool(self, call_id: str, name: str | None) -> _Tool:
        tool = self.tools.get(call_id)
        if tool is None:
            label = name or "tool"
            attributes: dict[str, AttributeValue] = {_OPERATION: _EXECUTE_TOOL, _TOOL_CALL_ID: call_id}
            if name:
                attributes[_TOOL_NAME] = name
            span = self.tracer.start_span(
                f"{_EXECUTE_TOOL} {label}",
                context=self._parent_of_child(),
                kind=SpanKind.INTERNAL,
                attributes=attributes,
            )
            tool = self.tools[call_id] = _Tool(span)
        return tool

    # -- the frames' side --------------------------------------------------------------------------

    def frames(self, frames: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """``frames`` counted; the run's span ends with them."""
        return _RunFrames(frames, self)

    def end(self) -> None:
        """End the run's span and record its metrics (once)."""
        if self.ended:
            return
        self.ended = True
        outcome, error_type = self._outcome()
        span = self.span
        elapsed = time.monotonic() - self.started
        for tool in self.tools.values():
            if tool.status != "done":  # a call without a result in this run (a frontend tool, an approval)
                tool.span.set_attribute(_TOOL_STATUS, tool.status)
                tool.span.end()
        for _, step, _ in reversed(self.steps):
            step.end()
        attributes: dict[str, AttributeValue] = {
            _OUTCOME: outcome,
            _MODE: "detached" if self.mode == "detached" else "bound" if self.mode == "bound" else "resumable",
            _FRAMES: self.frames_out,
            _BYTES: self.bytes_out,
        }
        if self.first_frame is not None:
            attributes[_FIRST_FRAME] = self.first_frame
        if self.first_token is not None:
            attributes[_FIRST_TOKEN] = self.first_token
        if self.reader_gone:
            attributes[_CLIENT_GONE] = True
        if self.finish_reason is not None:
            attributes[_FINISH_REASONS] = [_REASON_SPELLINGS.get(self.finish_reason, self.finish_reason)]
        labels = dict(self.labels)
        labels[_OUTCOME] = outcome
        if error_type is not None:
            attributes[_ERROR_TYPE] = error_type
            labels[_ERROR_TYPE] = error_type
        usage = self.usage
        token_labels = self.token_labels
        if usage is not None:
            token_labels = dict(token_labels)
            for key, value in (
                (_INPUT_TOKENS, usage.input_tokens),
                (_OUTPUT_TOKENS, usage.output_tokens),
                (_CACHE_READ, usage.cached_input_tokens),
                (_CACHE_CREATION, usage.cache_write_input_tokens),
                (_REASONING_TOKENS, usage.reasoning_tokens),
            ):
                if value is not None:
                    attributes[key] = value
            if usage.model:
                attributes[_RESPONSE_MODEL] = token_labels[_RESPONSE_MODEL] = usage.model
            if usage.provider:
                attributes[_PROVIDER] = token_labels[_PROVIDER] = usage.provider
        if self.content and self.texts:
            message: dict[str, Any] = {
                "role": "assistant",
                "parts": [{"type": "text", "content": "".join(text)} for text in self.texts.values()],
            }
            if self.finish_reason is not None:
                message["finish_reason"] = attributes[_FINISH_REASONS][0]  # type: ignore[index]
            attributes[_OUTPUT_MESSAGES] = _json([message])
        span.set_attributes(attributes)
        if self.failure is not None or outcome == _ERROR:
            span.set_status(Status(StatusCode.ERROR, self.failure[1] if self.failure else None))
        span.end()
        m = self.instruments
        m.runs.add(1, labels)
        m.duration.record(elapsed, labels)
        if self.first_frame is not None:
            m.first_frame.record(self.first_frame, self.labels)
        if self.first_token is not None:
            m.first_token.record(self.first_token, self.labels)
        if usage is not None:
            if usage.input_tokens is not None:
                m.tokens.record(usage.input_tokens, {**token_labels, _TOKEN_TYPE: "input"})
            if usage.output_tokens is not None:
                m.tokens.record(usage.output_tokens, {**token_labels, _TOKEN_TYPE: "output"})

    def _outcome(self) -> tuple[str, str | None]:
        """How the run ended (``streamkit.run.outcome``) and its ``error.type``."""
        if self.failure is not None:
            return _ERROR, self.failure[0]
        if self.aborted is not None:
            return (_CANCELLED if self.aborted == _CANCELLED else _ABORTED), None
        if self.completed:
            return (_DETACHED_OUTCOME if self.reader_gone else _FINISHED), None
        # The frames stopped before the agent's end.
        if server_stopping():
            self.failure = ("shutdown", "the server shut down")
            return _ERROR, "shutdown"
        if self.mode == "starting":
            self.failure = ("store_unavailable", "the stream store could not be reached")
            return _ERROR, "store_unavailable"
        if self.mode == "resumable":
            return _CANCELLED, None
        return _DISCONNECTED, None


def _str_attr(obj: object, name: str) -> str | None:
    value = getattr(obj, name, None)
    return value if isinstance(value, str) and value else None


# --- what each event says ---------------------------------------------------------------------------


def _tool_start(run: RunTelemetry, event: Any) -> None:
    run._tool(event.id, event.name)


def _tool_end(run: RunTelemetry, event: Any) -> None:
    tool = run._tool(event.id, event.name)
    if run.content and event.input is not None:
        tool.span.set_attribute(_TOOL_ARGUMENTS, _json(event.input))
    if event.error is not None:
        tool.status = "error"
        tool.span.set_attribute(_ERROR_TYPE, "invalid_input")
        tool.span.set_status(Status(StatusCode.ERROR, event.error))


def _tool_result(run: RunTelemetry, event: Any) -> None:
    if event.preliminary:
        return
    tool = run.tools.get(event.id)
    if tool is None or tool.status == "done":
        return
    span = tool.span
    if run.content and event.output is not None:
        span.set_attribute(_TOOL_RESULT, _json(event.output))
    if event.denied:
        tool.status = "denied"
    elif event.error is not None:
        tool.status = "error"
        span.set_attribute(_ERROR_TYPE, "tool_error")
        span.set_status(Status(StatusCode.ERROR, event.error))
    elif tool.status == "pending":
        tool.status = "ok"
    span.set_attribute(_TOOL_STATUS, tool.status)
    span.end()
    tool.status = "done"


def _step_start(run: RunTelemetry, event: Any) -> None:
    span = run.tracer.start_span(
        f"step {event.name}",
        context=run._parent_of_child(),
        kind=SpanKind.INTERNAL,
        attributes={_STEP_NAME: event.name},
    )
    context = trace.set_span_in_context(span, run.context)
    run.steps.append((event.name, span, context))
    run.current = context


def _step_finish(run: RunTelemetry, event: Any) -> None:
    for i in range(len(run.steps) - 1, -1, -1):
        if run.steps[i][0] == event.name:
            for _, span, _ in reversed(run.steps[i:]):
                span.end()
            del run.steps[i:]
            break
    run.current = run._parent_of_child()


def _approval_request(run: RunTelemetry, event: Any) -> None:
    attributes: dict[str, AttributeValue] = {_APPROVAL_ID: event.id, _TOOL_CALL_ID: event.tool_call_id}
    if run.content and event.reason:
        attributes[_APPROVAL_REASON] = event.reason
    run.span.add_event("streamkit.approval.requested", attributes)


def _approval_response(run: RunTelemetry, event: Any) -> None:
    attributes: dict[str, AttributeValue] = {_APPROVAL_ID: event.id, _APPROVED: event.approved}
    if run.content and event.reason:
        attributes[_APPROVAL_REASON] = event.reason
    run.span.add_event("streamkit.approval.answered", attributes)


def _finished(run: RunTelemetry, event: Any) -> None:
    run.finish_reason = event.finish_reason
    if event.usage is not None:
        run.usage = event.usage
    if event.interrupts:
        run.span.set_attribute(_INTERRUPTS, len(event.interrupts))


def _run_error(run: RunTelemetry, event: Any) -> None:
    run.fail(event.code or "run_error", event.message)


def _run_aborted(run: RunTelemetry, event: Any) -> None:
    run.aborted = event.reason or _ABORTED


_HANDLERS: dict[str, Callable[[RunTelemetry, Any], None]] = {
    "tool-call-start": _tool_start,
    "tool-call-end": _tool_end,
    "tool-result": _tool_result,
    "step-started": _step_start,
    "step-finished": _step_finish,
    "tool-approval-request": _approval_request,
    "tool-approval-response": _approval_response,
    "run-finished": _finished,
    "run-error": _run_error,
    "run-aborted": _run_aborted,
}


# --- the wrappers -----------------------------------------------------------------------------------


class _Events:
    """The agent's events, pulled under the run's (or the open step's) context and recorded."""

    __slots__ = ("_iterator", "_run")

    def __init__(self, events: AsyncIterable[ChatEvent], run: RunTelemetry) -> None:
        self._iterator: AsyncIterator[ChatEvent] = aiter(events)
        self._run = run

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> ChatEvent:
        run = self._run
        token = _attach(run.current)
        try:
            event = await anext(self._iterator)
        except StopAsyncIteration:
            run.events_done = True
            raise
        except Exception as exc:
            run.agent_failed(exc)
            raise
        finally:
            _detach(token)
        run.see(event)
        return event

    async def aclose(self) -> None:
        """Close the agent's iterator (its ``finally`` runs under the run's context)."""
        aclose = getattr(self._iterator, "aclose", None)
        if aclose is not None:
            token = _attach(self._run.current)
            try:
                await aclose()
            finally:
                _detach(token)


class _ReadyEvents:
    """The events of an agent that returned a plain iterable, pulled under the run's context and recorded
    (still a plain iterator, so the frame writer drains it in batches as it would without telemetry)."""

    __slots__ = ("_iterator", "_run")

    def __init__(self, events: Iterable[ChatEvent], run: RunTelemetry) -> None:
        self._iterator: Iterator[ChatEvent] = iter(events)
        self._run = run

    def __iter__(self) -> _ReadyEvents:
        return self

    def __next__(self) -> ChatEvent:
        run = self._run
        token = _attach(run.current)
        try:
            event = next(self._iterator)
        except StopIteration:
            run.events_done = True
            raise
        except Exception as exc:
            run.agent_failed(exc)
            raise
        finally:
            _detach(token)
        run.see(event)
        return event


class _Stream:
    """A response's stream as the metrics count it: open from its first pull to its end; a disconnect when the
    client left before the end of its content (``on_gone`` is told)."""

    __slots__ = ("done", "instruments", "labels", "on_gone", "opened")

    def __init__(
        self, instruments: _Instruments, labels: dict[str, AttributeValue], on_gone: Callable[[], None] | None
    ) -> None:
        self.instruments = instruments
        self.labels = labels
        self.on_gone = on_gone
        self.opened = False
        self.done = False

    def open(self) -> None:
        """The response pulls its first bytes."""
        self.opened = True
        self.instruments.open_streams.add(1, self.labels)

    def close(self, frames: int, size: int) -> bool:
        """The response ended, having sent ``frames`` frames of ``size`` bytes; whether the client left."""
        if not self.opened:
            self.done = True
            return False
        gone = not self.done and not server_stopping()
        self.opened = False
        self.done = True
        m = self.instruments
        m.open_streams.add(-1, self.labels)
        m.frames.add(frames, self.labels)
        m.bytes.add(size, self.labels)
        if gone:
            m.disconnects.add(1, self.labels)
            if self.on_gone is not None:
                self.on_gone()
        return gone


class _RunFrames:
    """A run's frames, counted; the run's span ends when they end or are closed. When the response sends them
    as they come (a bound run), they are its stream too (see :func:`watched`)."""

    __slots__ = ("_frames", "_run", "stream")

    def __init__(self, frames: AsyncIterator[bytes], run: RunTelemetry) -> None:
        self._frames = frames
        self._run = run
        self.stream: _Stream | None = None

    def __aiter__(self) -> _RunFrames:
        return self

    async def __anext__(self) -> bytes:
        run = self._run
        stream = self.stream
        if stream is not None and not stream.opened and not stream.done:
            stream.open()
        try:
            chunk = await anext(self._frames)
        except StopAsyncIteration:
            run.completed = True
            if stream is not None:
                stream.done = True
            if not run.events_done and run.failure is None and run.aborted is None:
                # The frame writer cut the run short (a frame over the size limit, a value it could not write).
                run.fail("streamkit.frame_error", "the frames of an event could not be written")
            run.end()
            raise
        if run.first_frame is None:
            run.first_frame = time.monotonic() - run.started
        run.frames_out += chunk.count(b"\n\n")
        run.bytes_out += len(chunk)
        return chunk

    async def aclose(self) -> None:
        """Close the frames (and with them the agent's iterator); the run ends."""
        run = self._run
        if self.stream is not None:
            self.stream.close(run.frames_out, run.bytes_out)
        try:
            aclose = getattr(self._frames, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            run.end()


class _Watched:
    """What a response sends of a run it does not produce (a detached or stored run, a reconnect), counted as
    a :class:`_Stream`; ``on_end`` is told what was sent and whether the client left."""

    __slots__ = ("_bytes", "_content", "_frames", "_on_end", "_stream")

    def __init__(
        self, content: AsyncIterable[bytes], stream: _Stream, on_end: Callable[[int, int, bool], None] | None = None
    ) -> None:
        self._content = aiter(content)
        self._stream = stream
        self._on_end = on_end
        self._frames = 0
        self._bytes = 0

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> bytes:
        stream = self._stream
        if not stream.opened and not stream.done:
            stream.open()
        try:
            chunk = await anext(self._content)
        except StopAsyncIteration:
            stream.done = True
            raise
        self._frames += chunk.count(b"\n\n")
        self._bytes += len(chunk)
        return chunk

    async def aclose(self) -> None:
        """The response ended: close the content; count what was sent and whether the client left."""
        gone = self._stream.close(self._frames, self._bytes)
        try:
            aclose = getattr(self._content, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            if self._on_end is not None:
                on_end, self._on_end = self._on_end, None
                on_end(self._frames, self._bytes, gone)


# --- the pipeline's hooks ---------------------------------------------------------------------------

_current: ContextVar[RunTelemetry | None] = ContextVar("streamkit_run_telemetry", default=None)


def observe_run(
    config: Telemetry | None, agent: Agent, run: RunInput, mapper: Mapper, request: Request | None
) -> RunTelemetry | None:
    """Open the run's span (see :class:`RunTelemetry`); ``None`` when nothing is recorded."""
    resolved = _resolve(config)
    if resolved is None:
        return None
    observed = RunTelemetry(*resolved, config or _DEFAULT, agent, run, mapper, request)
    _current.set(observed)
    return observed


def run_of(mapper: Mapper) -> RunTelemetry | None:
    """The run being recorded whose frames ``mapper`` writes (opened by :func:`observe_run` in this
    request), if any."""
    observed = _current.get()
    return observed if observed is not None and observed.mapper is mapper else None


def serving(run: RunTelemetry | None, mode: str, stream_id: str | None = None) -> None:
    """How the response serves ``run``: ``detached`` (it goes on when the client leaves), ``starting`` (being
    registered in the stream store) or ``resumable`` (written to the store as ``stream_id``)."""
    if run is not None:
        run.mode = mode
        if stream_id is not None:
            run.span.set_attribute(_STREAM_ID, stream_id)


def watched(content: AsyncIterable[bytes], run: RunTelemetry | None) -> AsyncIterable[bytes]:
    """``content``, the bytes a response sends for ``run``, watched: an open stream, and a disconnect when
    the client leaves before its end (``content`` itself when ``run`` is ``None``)."""
    if run is None:
        return content

    def gone() -> None:
        run.reader_gone = True

    stream = _Stream(run.instruments, run.labels, gone)
    if isinstance(content, _RunFrames) and content.stream is None:  # a bound run: its frames are the stream
        content.stream = stream
        return content
    return _Watched(content, stream)


def resumed(
    config: Telemetry | None,
    request: Request,
    scope: str,
    stream_id: str,
    chat: str,
    after: str | None,
    stream: AsyncIterator[bytes],
) -> AsyncIterator[bytes]:
    """``stream``, a reconnect's bytes from the run ``stream_id`` of ``chat``, recorded: a
    ``streamkit.resume`` span (a child of the request's) and the resume counted."""
    resolved = _resolve(config)
    if resolved is None:
        return stream
    tracer, instruments = resolved
    protocol = scope.partition(":")[0]
    labels: dict[str, AttributeValue] = {_PROTOCOL: protocol}
    attributes: dict[str, AttributeValue] = {_PROTOCOL: protocol, _STREAM_ID: stream_id, _CONVERSATION: chat}
    if after is not None:
        attributes[_RESUME_AFTER] = after
    span = tracer.start_span(
        "streamkit.resume", context=_parent(request), kind=SpanKind.INTERNAL, attributes=attributes
    )
    instruments.resumes.add(1, labels)

    def end(frames: int, size: int, gone: bool) -> None:
        span.set_attributes({_FRAMES: frames, _BYTES: size, _OUTCOME: _DISCONNECTED if gone else _FINISHED})
        span.end()

    return _Watched(stream, _Stream(instruments, labels, None), on_end=end)


def cancel_asked(config: Telemetry | None, scope: str, found: bool) -> None:
    """Count a cancel request for a run of ``scope`` (``found``: there was a run to cancel)."""
    resolved = _resolve(config)
    if resolved is not None:
        resolved[1].cancels.add(1, {_PROTOCOL: scope.partition(":")[0], _FOUND: found})
