"""The shared SSE writer: JSON bytes as JSON.stringify writes them, frames, headers, heartbeats, errors,
and the agent's generator closed when the client goes away."""

from __future__ import annotations

import functools
import json
import logging
import math
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from streamkit.detach import detach, detached_runs
from streamkit.events import ChatEvent, RunFinished, RunStarted, SequenceChecker, TextDelta, TextEnd, TextStart
from streamkit.frames import DEFAULT_ERROR_TEXT, SHUTDOWN_TEXT, FrameTooLarge, MapperBase, encode_frames, frame
from streamkit.serve import StreamOptions
from streamkit.sse import EventStreamResponse
from streamkit.stringify import dumps, js_value
from tests.support.oracle import JsOracle
from tests.support.server import LiveServer, serve_in_subprocess, shutdown_mid_stream


class EchoMapper(MapperBase):
    """A minimal mapper: one frame per checked event, an error frame on failure."""

    def __init__(self) -> None:
        self.checker = SequenceChecker()

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        return [self._frame(e) for e in self.checker.feed(event)]

    def close(self) -> list[dict[str, Any]]:
        return [self._frame(e) for e in self.checker.close()]

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        return [{"type": "error", "errorText": message}]

    @staticmethod
    def _frame(event: ChatEvent) -> dict[str, Any]:
        out: dict[str, Any] = {"type": event.type}
        if isinstance(event, TextDelta):
            out["delta"] = event.delta
        return out


# --- JSON ------------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)

SPECIAL_FLOATS = [
    100.0, -0.0, 0.1, 1e-6, 1.5e-6, 1e-7, 1.2345e-5, 9.999e-6, 1e16, 1e20, 1e21, 1.5e21, 2.0**53, 2.0**60,
    123456789012.5, 5e-324, 1.7976931348623157e308, -1e-6, 3.0e15, 0.000001234,
]


@settings(max_examples=60, deadline=None)
@given(st.lists(JSON_VALUES, min_size=1, max_size=20))
def test_dumps_matches_json_stringify_byte_for_byte(js: JsOracle, values: list[Any]) -> None:
    texts = [dumps(js_value(v)).decode() for v in values]
    assert js.result("json", {"texts": texts}) == texts


def test_floats_are_written_as_javascript_writes_them(js: JsOracle) -> None:
    texts = [dumps(js_value(f)).decode() for f in SPECIAL_FLOATS]
    assert js.result("json", {"texts": texts}) == texts
    assert dumps(js_value({"t": 21.0, "l": [0.5, -0.0]})) == b'{"t":21,"l":[0.5,0]}'


def test_non_finite_floats_become_null_and_text_stays_utf8() -> None:
    assert dumps(js_value([math.nan, math.inf, -math.inf])) == b"[null,null,null]"
    assert dumps("é\u2028/\x1b") == '"é\u2028/\\u001b"'.encode()
    assert js_value(v := {"a": [1, "x", {"b": None}]}) is v  # untouched values are not copied


def test_frame_format() -> None:
    assert frame({"type": "x", "v": "ü"}) == 'data: {"type":"x","v":"ü"}\n\n'.encode()


# --- the frame loop --------------------------------------------------------------------------------


async def collect(events: Any, **options: Any) -> bytes:
    return b"".join([chunk async for chunk in encode_frames(events, EchoMapper(), **options)])


def frames_of(body: bytes) -> list[Any]:
    return [json.loads(part[6:]) for part in body.decode().split("\n\n") if part.startswith("data: {")]


async def test_sync_and_async_inputs_encode_the_same() -> None:
    events: list[ChatEvent] = [RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="hi"), TextEnd(id="t")]

    async def agen() -> AsyncIterator[ChatEvent]:
        for e in events:
            yield e

    sync_body = await collect(events, trailer=b"data: [DONE]\n\n")
    async_body = await collect(agen(), trailer=b"data: [DONE]\n\n")
    assert sync_body == async_body
    assert sync_body.endswith(b'data: {"type":"run-finished"}\n\ndata: [DONE]\n\n')
    assert "\r" not in sync_body.decode()


async def test_agent_exception_is_masked_unless_exposed() -> None:
    seen: list[BaseException] = []

    async def failing() -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        raise RuntimeError("secret database password")

    masked = frames_of(await collect(failing(), on_error=seen.append))
    assert masked[-1] == {"type": "error", "errorText": DEFAULT_ERROR_TEXT}
    assert isinstance(seen[0], RuntimeError)
    exposed = frames_of(await collect(failing(), expose_errors=True))
    assert exposed[-1] == {"type": "error", "errorText": "secret database password"}


@pytest.mark.parametrize("where", ["first", "after a delta"])
@pytest.mark.parametrize("ready", [True, False], ids=["list", "async"])
async def test_a_plain_dict_from_the_agent_is_named_as_such(
    caplog: pytest.LogCaptureFixture, ready: bool, where: str
) -> None:
    from streamkit import agui, aisdk

    wrong = {"type": "text-delta", "id": "t", "delta": "hi"}
    events: list[Any] = [RunStarted(), TextStart(id="t")] + ([TextDelta(id="t", delta="x")] if where != "first" else [])
    events.append(wrong)

    async def agent() -> AsyncIterator[Any]:
        for event in events:
            yield event

    for encode in (aisdk.encode, functools.partial(agui.encode, thread_id="th", run_id="run")):
        seen: list[BaseException] = []
        caplog.clear()
        body = b"".join([c async for c in encode(events if ready else agent(), on_error=seen.append)])
        assert b"An error occurred." in body  # masked for the client, as any agent failure
        text = str(seen[0])
        assert isinstance(seen[0], TypeError)
        assert text.startswith("the agent yielded a dict ({'type': 'text-delta'")
        assert "expected a ChatEvent" in text and "streamkit.events.chat_event_adapter" in text
        exposed = b"".join([c async for c in encode(list(events), expose_errors=True)])
        assert b"the agent yielded a dict" in exposed
        failed = [r for r in caplog.records if r.getMessage().startswith("agent stream failed")]
        assert [(r.getMessage(), r.exc_info) for r in failed] == [(f"agent stream failed: {text}", None)]


async def test_unserializable_value_ends_the_stream_with_an_error_frame() -> None:
    class Weird:
        pass

    class BadMapper(EchoMapper):
        def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
            return [{"type": "x", "v": Weird()}] if isinstance(event, TextStart) else super().feed(event)

    events = [RunStarted(), TextStart(id="t"), RunFinished()]
    body = b"".join([c async for c in encode_frames(events, BadMapper())])
    assert frames_of(body)[-1] == {"type": "error", "errorText": DEFAULT_ERROR_TEXT}


async def test_agent_iterator_is_closed_when_the_consumer_stops() -> None:
    closed = anyio.Event()

    async def agent() -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            while True:
                yield TextDelta(id="t", delta="x")
        finally:
            closed.set()

    stream = encode_frames(agent(), EchoMapper())
    await stream.__anext__()
    await stream.aclose()
    assert closed.is_set()


# --- over a real server ----------------------------------------------------------------------------


def make_app(agent: Any, **options: Any) -> Starlette:
    async def endpoint(request: Request) -> EventStreamResponse:
        return EventStreamResponse(encode_frames(agent(), EchoMapper()), **options)

    return Starlette(routes=[Route("/stream", endpoint)])


def test_headers_and_lf_frames_over_http(live_server: Any) -> None:
    async def agent() -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="héllo")

    server: LiveServer = live_server(make_app(agent, headers={"x-extra": "1"}))
    response = httpx.get(server.url + "/stream")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["x-extra"] == "1"
    assert response.content == (
        b'data: {"type":"run-started"}\n\ndata: {"type":"text-start"}\n\n'
        + 'data: {"type":"text-delta","delta":"héllo"}\n\n'.encode()
        + b'data: {"type":"text-end"}\n\ndata: {"type":"run-finished"}\n\n'
    )


def test_heartbeat_after_idle_only(live_server: Any) -> None:
    async def agent() -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        for _ in range(6):  # busy: frames every 0.1 s, no heartbeat needed
            await anyio.sleep(0.1)
            yield TextDelta(id="t", delta="x")
        await anyio.sleep(1.0)  # silent: heartbeats at ~0.4 s idle
        yield RunFinished()

    server: LiveServer = live_server(make_app(agent, heartbeat=0.4))
    chunks: list[tuple[float, bytes]] = []
    start = time.monotonic()
    with httpx.stream("GET", server.url + "/stream") as response:
        for chunk in response.iter_raw():
            chunks.append((time.monotonic() - start, chunk))
    body = b"".join(c for _, c in chunks)
    pings = body.count(b": ping\n\n")
    assert 1 <= pings <= 3
    first_ping = min(t for t, c in chunks if b": ping" in c)
    assert first_ping > 0.9  # not during the busy part (which ends at ~0.6 s)
    assert body.endswith(b'data: {"type":"run-finished"}\n\n')


def test_disconnect_closes_a_silent_agent_within_one_heartbeat(live_server: Any) -> None:
    heartbeat = 1.0
    closed = threading.Event()
    closed_at: list[float] = []

    async def agent() -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextStart(id="t")
            await anyio.sleep(3600)  # a long silent tool call
            yield TextDelta(id="t", delta="never")
        finally:
            closed_at.append(time.monotonic())
            closed.set()

    server: LiveServer = live_server(make_app(agent, heartbeat=heartbeat))
    with httpx.stream("GET", server.url + "/stream") as response:
        next(response.iter_raw())
        dropped = time.monotonic()
    assert closed.wait(heartbeat * 3)
    assert closed_at[0] - dropped < heartbeat


def test_head_gets_the_headers_and_never_starts_the_agent(live_server: Any) -> None:
    started: list[bool] = []

    async def agent() -> AsyncIterator[ChatEvent]:
        started.append(True)
        yield RunStarted()
        await anyio.sleep(3600)  # an endless stream: HEAD must not wait for it

    server: LiveServer = live_server(make_app(agent))
    response = httpx.head(server.url + "/stream", timeout=5)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.content == b""
    assert started == []


async def test_a_server_that_stops_ends_the_stream_with_the_shutdown_frames() -> None:
    from sse_starlette.sse import AppStatus

    from streamkit.frames import shutdown_frames

    mapper = EchoMapper()

    async def agent() -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        yield TextStart(id="t")
        while True:
            await anyio.sleep(0.05)
            yield TextDelta(id="t", delta="x")

    stopping = anyio.Event()
    response = EventStreamResponse(
        encode_frames(agent(), mapper), shutdown_event=stopping, on_shutdown=lambda: shutdown_frames(mapper)
    )
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])
            if len(sent) == 3:
                AppStatus.should_exit = True

    try:
        with anyio.fail_after(5):
            await response({"type": "http", "method": "GET", "path": "/stream", "headers": []}, receive, send)
    finally:
        AppStatus.should_exit = False
    assert stopping.is_set()
    assert frames_of(b"".join(sent))[-1] == {"type": "error", "errorText": SHUTDOWN_TEXT}
    assert sent[-1] == b""


@pytest.mark.parametrize("heartbeat", [0])
def test_heartbeat_can_be_disabled(live_server: Any, heartbeat: float) -> None:
    async def agent() -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        await anyio.sleep(0.3)
        yield RunFinished()

    server: LiveServer = live_server(make_app(agent, heartbeat=heartbeat))
    assert b"ping" not in httpx.get(server.url + "/stream").content


# --- limits, detach, shutdown ----------------------------------------------------------------------


async def test_an_oversized_frame_ends_the_stream_with_an_error() -> None:
    events = [RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="x" * 5000), TextEnd(id="t")]
    seen: list[BaseException] = []
    body = b"".join(
        [c async for c in encode_frames(events, EchoMapper(), max_frame_bytes=1000, on_error=seen.append)]
    )
    assert frames_of(body)[-1] == {"type": "error", "errorText": DEFAULT_ERROR_TEXT}
    assert b"xxxx" not in body
    assert isinstance(seen[0], FrameTooLarge)


@pytest.mark.parametrize("source", ["sync", "async"])
async def test_the_frames_before_an_oversized_one_still_go_out(source: str) -> None:
    """A first event too heavy to send: the run start the mapper synthesized before it is not lost."""
    from streamkit.agui.mapping import AGUIMapper
    from streamkit.events import ToolCallEnd

    events = [ToolCallEnd(id="c", name="save", input={"doc": "x" * 5000})]

    async def agen() -> AsyncIterator[ChatEvent]:
        for event in events:
            yield event

    mapper = AGUIMapper(thread_id="th", run_id="run")
    body = b"".join(
        [c async for c in encode_frames(events if source == "sync" else agen(), mapper, max_frame_bytes=1000)]
    )
    assert [f["type"] for f in frames_of(body)] == ["RUN_STARTED", "TOOL_CALL_START", "RUN_ERROR"]


def test_detached_run_continues_after_disconnect_with_bounded_memory(live_server: Any) -> None:
    finished = threading.Event()
    produced: list[int] = []

    async def agent() -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextStart(id="t")
            for i in range(300):
                produced.append(i)
                yield TextDelta(id="t", delta="y" * 1000)
                await anyio.sleep(0.002)
            yield TextEnd(id="t")
        finally:
            finished.set()

    buffers: list[Any] = []

    async def endpoint(request: Request) -> EventStreamResponse:
        frames = detach(encode_frames(agent(), EchoMapper()), max_buffer_bytes=20_000)
        response = EventStreamResponse(frames)
        buffers.append(response.body_iterator)
        return response

    server: LiveServer = live_server(Starlette(routes=[Route("/stream", endpoint)]))
    with httpx.stream("GET", server.url + "/stream") as response:
        next(response.iter_raw())
    assert finished.wait(10)
    assert len(produced) == 300  # the run went on to completion without a reader
    detached = buffers[0]  # the _Detached behind the response
    assert detached._size <= 20_000 + 2000  # only the newest frames were kept
    deadline = time.monotonic() + 5
    while detached_runs() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert detached_runs() == 0


def test_server_shutdown_ends_open_streams_with_a_terminal_frame() -> None:
    proc, port = serve_in_subprocess("sse_app:app")
    try:
        received = shutdown_mid_stream("GET", f"http://127.0.0.1:{port}/stream", proc)
        frames = frames_of(received)
        assert frames[-1] == {"type": "error", "errorText": SHUTDOWN_TEXT, "code": "shutdown"}
        assert received.endswith(b"data: [DONE]\n\n")
    finally:
        proc.terminate()
        proc.wait(timeout=15)


# --- a client that stops reading -------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_a_stalled_reader_is_one_warning_line_and_the_agent_is_closed(
    live_server: Any, caplog: pytest.LogCaptureFixture, protocol: str
) -> None:
    import socket

    from streamkit import agui, aisdk

    closed = threading.Event()

    async def agent(run: Any) -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextStart(id="t")
            while True:  # far more than the socket buffers hold
                yield TextDelta(id="t", delta="x" * 65536)
                await anyio.sleep(0)
        finally:
            closed.set()

    if protocol == "aisdk":
        path, routes = "/api/chat", aisdk.routes(agent, options=StreamOptions(send_timeout=0.5))
        body = {"id": "chat-1", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
    else:
        path, routes = "/api/agui", agui.routes(agent, options=StreamOptions(send_timeout=0.5))
        body = {"threadId": "th", "runId": "run-7", "messages": [], "state": {}, "tools": [], "context": []}
    # log_config=None: uvicorn's own lines reach the root logger, where caplog sees them
    server: LiveServer = live_server(Starlette(routes=routes), log_config=None)
    payload = json.dumps(body).encode()
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.INFO, logger="streamkit")  # other tests may have quieted it
    with socket.create_connection(("127.0.0.1", server.port)) as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.sendall(
            f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"content-length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        assert closed.wait(10), "the agent was not closed"  # the client reads nothing meanwhile
    server.__exit__()
    mine = [r for r in caplog.records if r.name.startswith("streamkit")]
    assert [r.levelname for r in mine] == ["WARNING"], [r.getMessage() for r in mine]
    line = mine[0].getMessage()
    assert f"POST {path}: the client took no data for 0.5 s (send_timeout); stream dropped" in line
    assert line.startswith("run run-7: " if protocol == "agui" else "run run-")
    assert all(r.exc_info is None for r in caplog.records), [r.getMessage() for r in caplog.records]
    # uvicorn's own account: the response could not be completed, so it closes the connection (one line)
    theirs = [r.getMessage() for r in caplog.records if r.name.startswith("uvicorn") and r.levelno >= logging.WARNING]
    assert theirs in ([], ["ASGI callable returned without completing response."]), theirs
