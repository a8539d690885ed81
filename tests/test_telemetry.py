"""OpenTelemetry for every run (streamkit.telemetry), read back with the SDK's in-memory exporter and reader:
the run's span and its parent on every protocol, tool and step spans, content only when asked, the agent's
own spans nested under the run, an error, a disconnect, a detached run, a cancel (resumable and the
dialect's), a resume, the metrics, and nothing at all when telemetry is off or OpenTelemetry is absent."""

from __future__ import annotations

import asyncio
import contextvars
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from streamkit import agui, aisdk, dsh, telemetry
from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.events import (
    ChatEvent,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
)
from streamkit.resumable import Resumable
from streamkit.serve import StreamOptions, run_frames
from streamkit.store import MemoryStore
from streamkit.telemetry import Telemetry

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
TIMINGS = ("streamkit.run.time_to_first_frame", "streamkit.run.time_to_first_token")

AISDK_BODY = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather in Paris?"}]}],
    "trigger": "submit-message",
}


def agui_body(thread: str = "thread-1") -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": "weather in Paris?"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


class Recorder:
    """An SDK tracer and meter provider recording in memory, and the options that use them."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def options(self, *, record_content: bool = False, agent_name: str | None = None, **options: Any) -> StreamOptions:
        config = Telemetry(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            record_content=record_content,
            agent_name=agent_name,
        )
        return StreamOptions(telemetry=config, **options)

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def span(self, name: str) -> ReadableSpan:
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Each metric's data points: (attributes, value), the value a sum or (count, sum) of a histogram."""
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points = out.setdefault(metric.name, [])
                    for p in metric.data.data_points:
                        value = (p.count, p.sum) if hasattr(p, "count") else p.value  # type: ignore[union-attr]
                        points.append((dict(p.attributes or {}), value))
        return out


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


def client(app: ASGIApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def attrs(span: ReadableSpan, *drop: str) -> dict[str, Any]:
    out = dict(span.attributes or {})
    for key in drop:
        out.pop(key)
    return out


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def run_span(rec: Recorder) -> ReadableSpan:
    found = [s for s in rec.spans() if s.name.startswith("invoke_agent")]
    assert len(found) == 1, [s.name for s in rec.spans()]
    return found[0]


def check_timings(span: ReadableSpan, token: bool = True) -> None:
    a = span.attributes or {}
    assert isinstance(a["streamkit.run.time_to_first_frame"], float)
    assert a["streamkit.run.time_to_first_frame"] >= 0
    assert ("streamkit.run.time_to_first_token" in a) is token


async def asgi(
    app: ASGIApp, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, leave_after: int = 0
) -> tuple[int, bytes]:
    """One request straight through ASGI; with ``leave_after``, the client disconnects once that many body
    chunks arrived."""
    chunks: list[bytes] = []
    status = 0
    gone = asyncio.Event()
    sent = False
    raw = json.dumps(body).encode() if body is not None else b""

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body" and message.get("body"):
            chunks.append(message["body"])
            if leave_after and len(chunks) >= leave_after:
                gone.set()

    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (k.lower().encode(), v.encode()) for k, v in {"content-type": "application/json", **(headers or {})}.items()
        ],
        "client": ("127.0.0.1", 1),
        "server": ("test", 80),
    }
    await app(scope, receive, send)  # type: ignore[arg-type]
    return status, b"".join(chunks)


scripted = ScriptedAgent(Pacing().scaled(0))


def usage_of(prompt: str) -> tuple[int, int]:
    """The input and output tokens the scripted agent reports for ``prompt``."""
    from streamkit.demo.agent import script
    from streamkit.events import Message, TextPart

    run = RunInput(thread_id="t", run_id="r", messages=[Message(id="u", role="user", parts=[TextPart(text=prompt)])])
    (usage,) = [e.usage for _, e in script(run) if isinstance(e, RunFinished)]
    assert usage is not None and usage.input_tokens is not None and usage.output_tokens is not None
    return usage.input_tokens, usage.output_tokens


IN, OUT = usage_of("weather in Paris?")


# --- the run's span on every protocol -------------------------------------------------------------------------


async def test_an_ai_sdk_run_with_tools_is_a_span_with_tool_and_step_children(rec: Recorder) -> None:
    app = Starlette(routes=aisdk.routes(scripted, options=rec.options()))
    async with client(app) as http:
        response = await http.post("/api/chat", json=AISDK_BODY, headers=TRACEPARENT)
    assert response.status_code == 200
    run = run_span(rec)
    assert run.name == "invoke_agent" and run.kind is SpanKind.INTERNAL
    assert run.context.trace_id == int(TRACE_ID, 16) and parent_of(run) == int(PARENT_ID, 16)
    assert run.status.status_code is StatusCode.UNSET
    a = attrs(run, *TIMINGS, "streamkit.run.id")
    assert a == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": "chat-1",
        "streamkit.protocol": "aisdk",
        "streamkit.run.outcome": "finished",
        "streamkit.run.mode": "bound",
        "streamkit.run.frames": response.text.count("\n\n"),
        "streamkit.run.bytes": len(response.content),
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": IN,
        "gen_ai.usage.output_tokens": OUT,
        "gen_ai.response.model": "streamkit-offline",
    }
    check_timings(run)
    assert [e.name for e in run.events] == ["streamkit.first_token"]
    steps = {s.name: s for s in rec.spans() if s.name.startswith("step ")}
    assert set(steps) == {"step call-tools", "step answer"}
    for step in steps.values():
        assert parent_of(step) == run.context.span_id and attrs(step) == {"streamkit.step.name": step.name[5:]}
    tool = rec.span("execute_tool get_weather")
    assert parent_of(tool) == steps["step call-tools"].context.span_id
    call_id = tool.attributes["gen_ai.tool.call.id"]  # type: ignore[index]
    assert isinstance(call_id, str) and call_id in response.text
    assert attrs(tool) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": call_id,
        "streamkit.tool.status": "ok",
    }
    assert tool.status.status_code is StatusCode.UNSET
    assert len(rec.spans()) == 4  # no content anywhere unless asked


async def test_content_is_recorded_only_when_the_app_opts_in(rec: Recorder) -> None:
    app = Starlette(routes=aisdk.routes(scripted, options=rec.options(record_content=True)))
    async with client(app) as http:
        await http.post("/api/chat", json=AISDK_BODY)
    run = run_span(rec)
    assert json.loads(run.attributes["gen_ai.input.messages"]) == [  # type: ignore[arg-type,index]
        {"role": "user", "parts": [{"type": "text", "content": "weather in Paris?"}]}
    ]
    (output,) = json.loads(run.attributes["gen_ai.output.messages"])  # type: ignore[arg-type,index]
    assert output["role"] == "assistant" and output["finish_reason"] == "stop"
    assert "Paris" in output["parts"][-1]["content"]
    tool = rec.span("execute_tool get_weather")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"city": "Paris"}  # type: ignore[arg-type,index]
    assert json.loads(tool.attributes["gen_ai.tool.call.result"])["city"] == "Paris"  # type: ignore[arg-type,index]


async def test_an_ag_ui_run_is_the_same_span(rec: Recorder) -> None:
    app = Starlette(routes=agui.routes(scripted, options=rec.options(agent_name="weather")))
    async with client(app) as http:
        response = await http.post("/api/agui", json=agui_body(), headers=TRACEPARENT)
    run = run_span(rec)
    assert run.name == "invoke_agent weather" and parent_of(run) == int(PARENT_ID, 16)
    assert attrs(run, *TIMINGS) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "gen_ai.conversation.id": "thread-1",
        "streamkit.run.id": "run-1",
        "streamkit.protocol": "agui",
        "streamkit.run.outcome": "finished",
        "streamkit.run.mode": "bound",
        "streamkit.run.frames": response.text.count("\n\n"),
        "streamkit.run.bytes": len(response.content),
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": IN,
        "gen_ai.usage.output_tokens": OUT,
        "gen_ai.response.model": "streamkit-offline",
    }
    assert parent_of(rec.span("execute_tool get_weather")) == rec.span("step call-tools").context.span_id


async def test_a_dialect_run_is_the_same_span(rec: Recorder) -> None:
    app = Starlette(routes=dsh.routes(scripted, options=rec.options()))
    async with client(app) as http:
        response = await http.post("/api/agent/stream", json={"agentId": "a1", "message": "weather in Paris?"})
        blocking = await http.post("/api/agent/message", json={"agentId": "a2", "message": "weather in Paris?"})
    assert response.status_code == blocking.status_code == 200
    streamed, answered = sorted((s for s in rec.spans() if s.name == "invoke_agent"), key=lambda s: s.start_time or 0)
    for span, agent_id in ((streamed, "a1"), (answered, "a2")):
        a = span.attributes or {}
        assert a["streamkit.protocol"] == "dsh" and a["gen_ai.conversation.id"] == agent_id
        assert a["streamkit.run.outcome"] == "finished" and a["gen_ai.usage.output_tokens"] == OUT
        assert span.parent is None  # no trace context in the request: a trace of its own
    assert streamed.attributes["streamkit.run.bytes"] == len(response.content)  # type: ignore[index]
    assert len([s for s in rec.spans() if s.name == "execute_tool get_weather"]) == 2


async def test_an_instrumented_app_s_current_span_is_the_parent(rec: Recorder) -> None:
    tracer = rec.tracer_provider.get_tracer("asgi")
    inner = Starlette(routes=aisdk.routes(scripted, options=rec.options()))

    async def instrumented(scope: Scope, receive: Receive, send: Send) -> None:
        with tracer.start_as_current_span("POST /api/chat", kind=SpanKind.SERVER):
            await inner(scope, receive, send)

    async with client(instrumented) as http:
        await http.post("/api/chat", json=AISDK_BODY, headers=TRACEPARENT)
    server = rec.span("POST /api/chat")
    assert parent_of(run_span(rec)) == server.context.span_id


# --- the agent runs under the run's span ----------------------------------------------------------------------


async def test_the_agent_s_own_spans_nest_under_the_run(rec: Recorder) -> None:
    tracer = rec.tracer_provider.get_tracer("provider-sdk")

    async def model_call(name: str) -> None:
        with tracer.start_as_current_span(name):
            await asyncio.sleep(0)

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        with tracer.start_as_current_span("chat before"):
            pass
        yield RunStarted()
        await asyncio.create_task(model_call("chat in a task"))
        yield StepStarted(name="think")
        await model_call("chat in a step")
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="hi")
        yield TextEnd(id="t")
        yield StepFinished(name="think")
        await model_call("chat after the step")
        yield RunFinished()

    app = Starlette(routes=aisdk.routes(agent, options=rec.options()))
    async with client(app) as http:
        await http.post("/api/chat", json=AISDK_BODY)
    run = run_span(rec).context.span_id
    step = rec.span("step think").context.span_id
    assert parent_of(rec.span("chat before")) == run
    assert parent_of(rec.span("chat in a task")) == run
    assert parent_of(rec.span("chat in a step")) == step
    assert parent_of(rec.span("chat after the step")) == run


async def test_an_agent_that_returns_a_list_is_called_under_the_run(rec: Recorder) -> None:
    tracer = rec.tracer_provider.get_tracer("provider-sdk")

    def agent(run: RunInput) -> list[ChatEvent]:
        with tracer.start_as_current_span("chat"):
            return [TextStart(id="t"), TextDelta(id="t", delta="hi"), TextEnd(id="t"), RunFinished()]

    app = Starlette(routes=agui.routes(agent, options=rec.options()))
    async with client(app) as http:
        await http.post("/api/agui", json=agui_body())
    assert parent_of(rec.span("chat")) == run_span(rec).context.span_id
    assert run_span(rec).attributes["streamkit.run.outcome"] == "finished"  # type: ignore[index]


# --- how runs end ---------------------------------------------------------------------------------------------


async def test_an_agent_exception_is_an_error_span(rec: Recorder) -> None:
    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="hal")
        raise RuntimeError("the model went away")

    app = Starlette(routes=aisdk.routes(agent, options=rec.options()))
    async with client(app) as http:
        await http.post("/api/chat", json=AISDK_BODY)
    run = run_span(rec)
    assert run.status.status_code is StatusCode.ERROR and run.status.description == "the model went away"
    a = run.attributes or {}
    assert a["streamkit.run.outcome"] == "error" and a["error.type"] == "RuntimeError"
    assert [e.name for e in run.events] == ["streamkit.first_token", "exception"]
    runs = rec.metrics()["streamkit.runs"]
    assert runs == [
        ({"streamkit.protocol": "aisdk", "streamkit.run.outcome": "error", "error.type": "RuntimeError"}, 1)
    ]


async def test_a_run_error_event_gives_its_code(rec: Recorder) -> None:
    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunError(message="quota exceeded", code="rate_limited")

    app = Starlette(routes=agui.routes(agent, options=rec.options()))
    async with client(app) as http:
        await http.post("/api/agui", json=agui_body())
    run = run_span(rec)
    assert run.status.status_code is StatusCode.ERROR and run.attributes["error.type"] == "rate_limited"  # type: ignore[index]
    check_timings(run, token=False)


async def test_tool_failures_denials_and_approvals(rec: Recorder) -> None:
    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield ToolCallStart(id="c1", name="search")
        yield ToolCallEnd(id="c1", input={"q": "x"})
        yield ToolResult(id="c1", error="search is down")
        yield ToolCallEnd(id="c2", name="parse", error="not JSON")
        yield ToolCallEnd(id="c3", name="delete", input={})
        yield ToolApprovalRequest(id="a3", tool_call_id="c3", reason="it deletes")
        yield ToolApprovalResponse(id="a3", approved=False)
        yield ToolResult(id="c3", denied=True)
        yield ToolCallEnd(id="c4", name="browser_alert", input={})  # a frontend tool: no result in this run
        yield RunFinished(finish_reason="tool-calls", usage=Usage(input_tokens=3, cached_input_tokens=2))

    app = Starlette(routes=aisdk.routes(agent, options=rec.options()))
    async with client(app) as http:
        await http.post("/api/chat", json=AISDK_BODY)
    run = run_span(rec)
    search, parse, delete, alert = (
        rec.span(f"execute_tool {n}") for n in ("search", "parse", "delete", "browser_alert")
    )
    assert all(parent_of(s) == run.context.span_id for s in (search, parse, delete, alert))
    assert search.status.status_code is StatusCode.ERROR and search.status.description == "search is down"
    assert search.attributes["error.type"] == "tool_error" and search.attributes["streamkit.tool.status"] == "error"  # type: ignore[index]
    assert parse.status.status_code is StatusCode.ERROR and parse.attributes["error.type"] == "invalid_input"  # type: ignore[index]
    assert delete.attributes["streamkit.tool.status"] == "denied"  # type: ignore[index]
    assert delete.status.status_code is StatusCode.UNSET
    assert alert.attributes["streamkit.tool.status"] == "pending"  # type: ignore[index]
    events = [(e.name, dict(e.attributes or {})) for e in run.events]
    assert events == [
        ("streamkit.approval.requested", {"streamkit.approval.id": "a3", "gen_ai.tool.call.id": "c3"}),
        ("streamkit.approval.answered", {"streamkit.approval.id": "a3", "streamkit.approval.approved": False}),
    ]
    a = run.attributes or {}
    assert a["gen_ai.response.finish_reasons"] == ("tool_call",) and a["gen_ai.usage.cache_read.input_tokens"] == 2
    assert "gen_ai.usage.output_tokens" not in a and a["streamkit.run.outcome"] == "finished"


async def test_a_client_that_leaves_stops_a_bound_run(rec: Recorder) -> None:
    closed = asyncio.Event()

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        try:
            yield TextStart(id="t")
            yield TextDelta(id="t", delta="thinking")
            await asyncio.sleep(3600)
            yield TextEnd(id="t")
        finally:
            closed.set()

    app = Starlette(routes=aisdk.routes(agent, options=rec.options()))
    await asyncio.wait_for(asgi(app, "POST", "/api/chat", AISDK_BODY, leave_after=2), 5)
    assert closed.is_set()
    run = run_span(rec)
    a = run.attributes or {}
    assert a["streamkit.run.outcome"] == "disconnected" and a["streamkit.run.client_gone"] is True
    assert run.status.status_code is StatusCode.UNSET
    metrics = rec.metrics()
    assert metrics["streamkit.disconnects"] == [({"streamkit.protocol": "aisdk"}, 1)]
    assert metrics["streamkit.streams.open"] == [({"streamkit.protocol": "aisdk"}, 0)]
    assert metrics["streamkit.runs"] == [({"streamkit.protocol": "aisdk", "streamkit.run.outcome": "disconnected"}, 1)]


async def test_a_run_cut_by_the_server_s_shutdown_is_an_error_not_a_disconnect(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="thinking")
        await asyncio.sleep(3600)

    monkeypatch.setattr(telemetry, "server_stopping", lambda: True)  # the server is stopping when the stream ends
    app = Starlette(routes=dsh.routes(agent, options=rec.options()))
    await asyncio.wait_for(asgi(app, "POST", "/api/agent/stream", {"agentId": "s", "message": "go"}, leave_after=2), 5)
    a = run_span(rec).attributes or {}
    assert a["streamkit.run.outcome"] == "error" and a["error.type"] == "shutdown"
    assert "streamkit.disconnects" not in rec.metrics()


async def test_a_detached_run_goes_on_without_its_client(rec: Recorder) -> None:
    release = asyncio.Event()
    done = asyncio.Event()

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="a")
        await release.wait()
        yield TextDelta(id="t", delta="b")
        yield TextEnd(id="t")
        yield RunFinished()
        done.set()

    app = Starlette(routes=agui.routes(agent, options=rec.options(detach_runs=True)))
    await asyncio.wait_for(asgi(app, "POST", "/api/agui", agui_body(), leave_after=1), 5)
    assert not [s for s in rec.spans() if s.name == "invoke_agent"]  # still running
    release.set()
    await asyncio.wait_for(done.wait(), 5)
    for _ in range(100):
        if rec.spans():
            break
        await asyncio.sleep(0.01)
    a = run_span(rec).attributes or {}
    assert a["streamkit.run.outcome"] == "detached" and a["streamkit.run.mode"] == "detached"
    assert a["streamkit.run.client_gone"] is True
    assert rec.metrics()["streamkit.disconnects"] == [({"streamkit.protocol": "agui"}, 1)]


class Gate:
    """An agent that streams a first delta, then waits until the test opens the gate."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="first")
        self.started.set()
        await self.open.wait()
        yield TextDelta(id="t", delta=" second")
        yield TextEnd(id="t")
        yield RunFinished()


async def test_a_cancelled_resumable_run(rec: Recorder) -> None:
    gate = Gate()
    options = rec.options(resumable=Resumable(MemoryStore(), heartbeat=0.02))
    app = Starlette(routes=aisdk.routes(gate, options=options))
    async with client(app) as http:
        post = asyncio.create_task(http.post("/api/chat", json=AISDK_BODY, headers=TRACEPARENT))
        await asyncio.wait_for(gate.started.wait(), 5)
        assert (await http.delete("/api/chat/chat-1/stream")).status_code == 204
        response = await asyncio.wait_for(post, 5)
        assert (await http.delete("/api/chat/chat-1/stream")).status_code == 404
    assert '"type":"abort"' in response.text
    run = run_span(rec)
    a = attrs(run, *TIMINGS, "streamkit.run.id", "streamkit.stream.id", "streamkit.run.frames", "streamkit.run.bytes")
    assert a == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": "chat-1",
        "streamkit.protocol": "aisdk",
        "streamkit.run.outcome": "cancelled",
        "streamkit.run.mode": "resumable",
    }
    assert parent_of(run) == int(PARENT_ID, 16)
    metrics = rec.metrics()
    assert sorted(metrics["streamkit.cancels"], key=str) == [
        ({"streamkit.protocol": "aisdk", "streamkit.found": False}, 1),
        ({"streamkit.protocol": "aisdk", "streamkit.found": True}, 1),
    ]
    assert metrics["streamkit.runs"] == [({"streamkit.protocol": "aisdk", "streamkit.run.outcome": "cancelled"}, 1)]


class DownStore(MemoryStore):
    """A stream store that cannot be reached."""

    async def active(self, chat: str) -> str | None:
        raise ConnectionError("the store is down")


async def test_a_run_the_store_cannot_take_is_an_error(rec: Recorder) -> None:
    options = rec.options(resumable=Resumable(DownStore()))
    app = Starlette(routes=agui.routes(scripted, options=options))
    async with client(app) as http:
        response = await http.post("/api/agui", json=agui_body())
    assert response.status_code == 503
    run = run_span(rec)
    a = run.attributes or {}
    assert a["streamkit.run.outcome"] == "error" and a["error.type"] == "store_unavailable"
    assert a["streamkit.run.frames"] == 0 and run.status.status_code is StatusCode.ERROR


async def test_a_cancelled_dialect_run(rec: Recorder) -> None:
    gate = Gate()
    app = Starlette(routes=dsh.routes(gate, options=rec.options()))
    async with client(app) as http:
        post = asyncio.create_task(http.post("/api/agent/stream", json={"agentId": "x", "message": "go"}))
        await asyncio.wait_for(gate.started.wait(), 5)
        assert (await http.post("/api/agent/x/cancel")).status_code == 204
        await asyncio.wait_for(post, 5)
    a = run_span(rec).attributes or {}
    assert a["streamkit.run.outcome"] == "cancelled" and "error.type" not in a


async def test_a_resume_is_a_span_of_its_own(rec: Recorder) -> None:
    gate = Gate()
    options = rec.options(resumable=Resumable(MemoryStore(), heartbeat=0.02))
    app = Starlette(routes=aisdk.routes(gate, options=options))
    await asyncio.wait_for(asgi(app, "POST", "/api/chat", AISDK_BODY, leave_after=1), 5)
    resume_trace = {"traceparent": "00-11111111111111111111111111111111-2222222222222222-01", "last-event-id": "1"}
    get = asyncio.create_task(asgi(app, "GET", "/api/chat/chat-1/stream", headers=resume_trace))
    await asyncio.sleep(0.05)
    gate.open.set()
    status, body = await asyncio.wait_for(get, 5)
    assert status == 200 and b"second" in body
    for _ in range(100):
        if len(rec.spans()) == 2:
            break
        await asyncio.sleep(0.01)
    run, resume = run_span(rec), rec.span("streamkit.resume")
    assert parent_of(resume) == 0x2222222222222222 and resume.context.trace_id == int("1" * 32, 16)
    assert attrs(resume) == {
        "streamkit.protocol": "aisdk",
        "streamkit.stream.id": run.attributes["streamkit.stream.id"],  # type: ignore[index]
        "gen_ai.conversation.id": "chat-1",
        "streamkit.resume.after": "1",
        "streamkit.run.frames": body.count(b"\n\n"),
        "streamkit.run.bytes": len(body),
        "streamkit.run.outcome": "finished",
    }
    a = run.attributes or {}
    assert a["streamkit.run.outcome"] == "detached" and a["streamkit.run.client_gone"] is True
    metrics = rec.metrics()
    assert metrics["streamkit.resumes"] == [({"streamkit.protocol": "aisdk"}, 1)]
    assert metrics["streamkit.disconnects"] == [({"streamkit.protocol": "aisdk"}, 1)]
    assert metrics["streamkit.streams.open"] == [({"streamkit.protocol": "aisdk"}, 0)]


# --- metrics --------------------------------------------------------------------------------------------------


async def test_the_metrics_of_runs_on_every_protocol(rec: Recorder) -> None:
    options = rec.options()
    app = Starlette(
        routes=[
            *aisdk.routes(scripted, options=options),
            *agui.routes(scripted, options=options),
            *dsh.routes(scripted, options=options),
        ]
    )
    sizes: dict[str, int] = {}
    async with client(app) as http:
        sizes["aisdk"] = len((await http.post("/api/chat", json=AISDK_BODY)).content)
        sizes["agui"] = len((await http.post("/api/agui", json=agui_body())).content)
        body = {"agentId": "a", "message": "weather in Paris?"}
        sizes["dsh"] = len((await http.post("/api/agent/stream", json=body)).content)
    metrics = rec.metrics()
    for protocol in ("aisdk", "agui", "dsh"):
        label = {"streamkit.protocol": protocol}
        assert (label, sizes[protocol]) in metrics["streamkit.bytes.sent"]
        assert (label, 0) in metrics["streamkit.streams.open"]
        assert ({**label, "streamkit.run.outcome": "finished"}, 1) in metrics["streamkit.runs"]
        durations = [v for a, v in metrics["streamkit.run.duration"] if a["streamkit.protocol"] == protocol]
        first_frames = [v for a, v in metrics["streamkit.run.time_to_first_frame"] if a == label]
        first_tokens = [v for a, v in metrics["streamkit.run.time_to_first_token"] if a == label]
        assert [d[0] for d in durations + first_frames + first_tokens] == [1, 1, 1]
        tokens = {
            a["gen_ai.token.type"]: v
            for a, v in metrics["gen_ai.client.token.usage"]
            if a["streamkit.protocol"] == protocol
        }
        assert tokens == {"input": (1, IN), "output": (1, OUT)}
    usage_labels = {tuple(sorted(a)) for a, _ in metrics["gen_ai.client.token.usage"]}
    assert usage_labels == {
        ("gen_ai.operation.name", "gen_ai.response.model", "gen_ai.token.type", "streamkit.protocol")
    }


# --- off ------------------------------------------------------------------------------------------------------


def test_nothing_is_wrapped_without_a_provider() -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # no global provider in the tests
    run = RunInput(thread_id="t", run_id="r")
    mapper = aisdk.AISDKMapper()
    context = contextvars.copy_context()  # run_frames binds the run id for the log lines: not in this thread's
    frames = context.run(run_frames, scripted, run, mapper, options=StreamOptions())
    assert type(frames).__name__ == "async_generator"  # encode_frames' own generator, nothing around it
    assert context.run(telemetry.run_of, mapper) is None
    assert telemetry.observe_run(Telemetry(enabled=False), scripted, run, mapper, None) is None


def test_without_opentelemetry_installed_runs_are_served_as_before() -> None:
    script = """
import sys
sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
import asyncio, httpx
from starlette.applications import Starlette
from streamkit import aisdk
from streamkit.demo.agent import Pacing, ScriptedAgent

async def main():
    app = Starlette(routes=aisdk.routes(ScriptedAgent(Pacing().scaled(0))))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        body = {"id": "c", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
        response = await http.post("/api/chat", json=body)
    print(response.status_code, response.text.endswith("data: [DONE]\\n\\n"))

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["200", "True"]


def test_the_demo_s_otel_flag_prints_the_spans() -> None:
    script = """
import asyncio, httpx
from streamkit.demo.app import create_app
from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.cli import build_parser, setup_otel

assert build_parser().parse_args(["demo", "--otel"]).otel
print(setup_otel({}))

async def main():
    app = create_app(ScriptedAgent(Pacing().scaled(0)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        body = {"id": "c", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "weather?"}]}]}
        assert (await http.post("/api/chat", json=body)).status_code == 200

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.startswith("spans to the console\n")
    assert '"name": "invoke_agent"' in out.stdout and '"name": "execute_tool get_weather"' in out.stdout
    assert '"service.name": "streamkit-demo"' in out.stdout


def test_the_demo_s_otel_flag_says_what_to_install_for_otlp() -> None:
    script = """
import sys
sys.modules["opentelemetry.exporter"] = None  # no OTLP exporter installed
from streamkit.demo.cli import setup_otel
setup_otel({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"})
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "pip install opentelemetry-exporter-otlp-proto-http" in out.stderr
