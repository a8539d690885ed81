"""Transport hardening over both protocols' routes: hostile request bodies, vanished clients, limits, auth.

The fuzzing tests report how many cases ran (``-s`` shows the counts; they are also asserted)."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from streamkit import agui, aisdk, dsh
from streamkit.events import (
    ChatEvent,
    RunFinished,
    RunInput,
    RunStarted,
    TextDelta,
    TextEnd,
    TextStart,
    last_user_text,
)
from streamkit.http import Limits, Unauthorized
from streamkit.serve import StreamOptions
from tests.support.server import LiveServer

AISDK_BODY: dict[str, Any] = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}],
    "trigger": "submit-message",
}
AGUI_BODY: dict[str, Any] = {
    "threadId": "th-1",
    "runId": "run-1",
    "state": {},
    "messages": [{"id": "u1", "role": "user", "content": "hello"}],
    "tools": [],
    "context": [],
    "forwardedProps": {},
}
PATHS = {"aisdk": "/api/chat", "agui": "/api/agui"}
BODIES = {"aisdk": AISDK_BODY, "agui": AGUI_BODY}


async def echo_agent(run: RunInput) -> AsyncIterator[ChatEvent]:
    yield RunStarted()
    yield TextStart(id="t1")
    yield TextDelta(id="t1", delta=last_user_text(run)[:50])
    yield TextEnd(id="t1")
    yield RunFinished()


def make_app(agent: Any = echo_agent, **options: Any) -> Starlette:
    return Starlette(
        routes=[
            *aisdk.routes(agent, path="/api/chat", options=StreamOptions(**options)),
            *agui.routes(agent, path="/api/agui", options=StreamOptions(**options)),
        ]
    )


# --- fuzzing ---------------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> Any:
    """A valid body with one field replaced, removed or added, at any depth."""
    body = json.loads(json.dumps(base))
    node: Any = body
    for _ in range(draw(st.integers(0, 4))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            if not isinstance(node[key], (dict, list)) or draw(st.booleans()):
                break
            node = node[key]
        elif isinstance(node, list) and node:
            node = node[draw(st.integers(0, len(node) - 1))]
        else:
            break
    action = draw(st.sampled_from(["replace", "remove", "add"]))
    if isinstance(node, dict) and node:
        key = draw(st.sampled_from(sorted(node)))
        if action == "replace":
            node[key] = draw(JSON)
        elif action == "remove":
            del node[key]
        else:
            node[draw(st.text(max_size=8))] = draw(JSON)
    elif isinstance(node, list):
        if action == "remove" and node:
            node.pop()
        else:
            node.append(draw(JSON))
    return body


HOSTILE = st.one_of(
    JSON.map(lambda v: json.dumps(v).encode()),
    mutated(AISDK_BODY).map(lambda v: json.dumps(v).encode()),
    mutated(AGUI_BODY).map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.integers(1, 200).map(lambda n: b"[" * n * 10 + b"]" * n * 10),  # deep nesting
    st.integers(1, 3).map(lambda n: json.dumps({"id": "x" * (n * 3_000_000), "messages": []}).encode()),
    st.just(b'{"id": "\xff\xfe", "messages": []}'),  # invalid UTF-8
    st.just(
        json.dumps({**AISDK_BODY, "messages": [{"id": "u", "role": "user", "parts": [{"type": "hologram"}]}]}).encode()
    ),
)
CONTENT_TYPES = st.sampled_from(
    ["application/json", "application/json; charset=utf-8", "text/plain", "", "multipart/form-data"]
)


@pytest.fixture(scope="module")
def fuzz_client() -> Any:
    transport = httpx.ASGITransport(app=make_app(limits=Limits(max_body_bytes=4 * 1024 * 1024)))
    return transport


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=HOSTILE, ctype=CONTENT_TYPES)
def test_fuzzed_bodies_get_4xx_json_never_5xx_never_a_hang(
    fuzz_client: httpx.ASGITransport, fuzz_counts: dict[str, int], protocol: str, body: bytes, ctype: str
) -> None:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=fuzz_client, base_url="http://test") as client:
            with anyio.fail_after(10):
                headers = {"content-type": ctype} if ctype else {}
                return await client.post(PATHS[protocol], content=body, headers=headers)

    response = anyio.run(go)
    fuzz_counts[protocol] += 1
    assert response.status_code < 500, response.text
    if response.status_code != 200:
        assert 400 <= response.status_code < 500
        error = response.json()["error"]
        assert error["status"] == response.status_code
        assert error["message"]
        assert error.get("field")
    else:
        assert response.headers["content-type"].startswith("text/event-stream")


def test_fuzz_case_counts_reported(fuzz_counts: dict[str, int]) -> None:
    print(f"\nfuzzed request bodies: AI SDK {fuzz_counts['aisdk']}, AG-UI {fuzz_counts['agui']}")
    if any(fuzz_counts.values()):  # the fuzz tests ran in this session
        assert fuzz_counts["aisdk"] >= 100 and fuzz_counts["agui"] >= 100


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_limits_are_configurable_and_named(protocol: str) -> None:
    transport = httpx.ASGITransport(app=make_app(limits=Limits(max_messages=2, max_message_bytes=1000)))

    async def go(body: Any) -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post(PATHS[protocol], json=body)

    many = json.loads(json.dumps(BODIES[protocol]))
    many["messages"] = many["messages"] * 3
    for i, m in enumerate(many["messages"]):
        m["id"] = f"u{i}"
    response = anyio.run(go, many)
    assert response.status_code == 413
    assert response.json()["error"]["field"] == "limits.max_messages"
    big = json.loads(json.dumps(BODIES[protocol]))
    if protocol == "aisdk":
        big["messages"][0]["parts"][0]["text"] = "x" * 5000
    else:
        big["messages"][0]["content"] = "x" * 5000
    response = anyio.run(go, big)
    assert response.status_code == 413
    assert response.json()["error"]["field"] == "limits.max_message_bytes"


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_authorize_principal_reaches_the_agent_and_refusals_are_json(protocol: str) -> None:
    seen: list[Any] = []

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        seen.append(run.principal)
        async for e in echo_agent(run):
            yield e

    def authorize(request: Request) -> str:
        token = request.headers.get("authorization")
        if token != "Bearer good":
            raise Unauthorized("missing or bad token")
        return "user-7"

    transport = httpx.ASGITransport(app=make_app(agent, authorize=authorize))

    async def go(headers: dict[str, str]) -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post(PATHS[protocol], json=BODIES[protocol], headers=headers)

    refused = anyio.run(go, {})
    assert refused.status_code == 401
    assert refused.json()["error"]["field"] == "authorization"
    assert seen == []
    ok = anyio.run(go, {"authorization": "Bearer good"})
    assert ok.status_code == 200
    assert seen == ["user-7"]


# --- vanished clients ------------------------------------------------------------------------------


class Tracker:
    def __init__(self) -> None:
        self.started = 0
        self.closed = 0
        self.lock = threading.Lock()

    def agent(self, silent: bool) -> Any:
        async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
            with self.lock:
                self.started += 1
            try:
                yield RunStarted()
                yield TextStart(id="t1")
                for i in range(100_000):
                    if silent and i == 3:
                        await anyio.sleep(3600)  # a long silent tool call
                    yield TextDelta(id="t1", delta=f"{i} ")
                    await anyio.sleep(0.005)
                yield TextEnd(id="t1")
                yield RunFinished()
            finally:
                with self.lock:
                    self.closed += 1

        return agent


def tasks_app(tracker: Tracker, silent: bool) -> Starlette:
    app = make_app(tracker.agent(silent), heartbeat=0.5)

    async def tasks(request: Request) -> JSONResponse:
        names = sorted(t.get_coro().__qualname__ for t in asyncio.all_tasks())  # type: ignore[union-attr]
        return JSONResponse({"tasks": len(names), "names": names})

    app.router.routes.append(Route("/tasks", tasks))
    return app


@pytest.mark.parametrize("silent", [False, True], ids=["busy", "silent"])
def test_200_clients_dropping_at_random_points_leave_nothing_behind(live_server: Any, silent: bool) -> None:
    tracker = Tracker()
    server: LiveServer = live_server(tasks_app(tracker, silent), limit_concurrency=1000, backlog=2048)
    # One complete stream first: it starts the process-wide helpers (the shutdown poller).
    with httpx.stream("POST", server.url + "/api/agui", json=AGUI_BODY) as response:
        next(response.iter_raw())
    while tracker.closed < 1:
        time.sleep(0.01)
    time.sleep(0.2)
    baseline = httpx.get(server.url + "/tasks").json()["tasks"]
    tracker.started = tracker.closed = 0
    rng = random.Random(1234 + silent)

    async def one(client: httpx.AsyncClient, i: int) -> None:
        protocol = "aisdk" if i % 2 else "agui"
        frames_before_drop = rng.randint(0, 6)
        async with client.stream("POST", server.url + PATHS[protocol], json=BODIES[protocol]) as response:
            assert response.status_code == 200
            seen = 0
            async for _ in response.aiter_raw():
                seen += 1
                if seen >= frames_before_drop:
                    break

    async def main() -> None:
        limits = httpx.Limits(max_connections=250, max_keepalive_connections=0)
        async with httpx.AsyncClient(limits=limits, timeout=30) as client:
            await asyncio.gather(*(one(client, i) for i in range(200)))

    asyncio.run(main())
    deadline = time.monotonic() + 10
    while tracker.closed < tracker.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert tracker.started == 200
    assert tracker.closed == 200  # every agent generator was closed (its finally ran)
    deadline = time.monotonic() + 10
    while httpx.get(server.url + "/tasks").json()["tasks"] > baseline and time.monotonic() < deadline:
        time.sleep(0.05)
    left = httpx.get(server.url + "/tasks").json()
    assert left["tasks"] <= baseline, left["names"]  # no task left behind
    with httpx.stream("POST", server.url + "/api/chat", json=AISDK_BODY, timeout=10) as ok:  # still healthy
        assert ok.status_code == 200
        assert b'"type":"start"' in next(ok.iter_raw())


def test_client_stop_stops_the_backend_within_one_heartbeat(live_server: Any) -> None:
    tracker = Tracker()
    server: LiveServer = live_server(tasks_app(tracker, silent=True))
    with httpx.stream("POST", server.url + "/api/chat", json=AISDK_BODY) as response:
        next(response.iter_raw())
        stopped = time.monotonic()
    while tracker.closed < 1 and time.monotonic() - stopped < 2:
        time.sleep(0.01)
    assert tracker.closed == 1
    assert time.monotonic() - stopped < 0.5  # the heartbeat interval of this app


# --- detach and shutdown on the protocol routes ----------------------------------------------------


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_detached_runs_finish_without_a_reader(live_server: Any, protocol: str) -> None:
    done = threading.Event()
    cancelled = threading.Event()

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextStart(id="t1")
            for i in range(200):
                yield TextDelta(id="t1", delta=f"{i} " * 20)
                await anyio.sleep(0.002)
            yield TextEnd(id="t1")
            yield RunFinished()
            done.set()
        except BaseException:
            cancelled.set()
            raise

    server: LiveServer = live_server(make_app(agent, detach_runs=True, max_buffer_bytes=8192))
    with httpx.stream("POST", server.url + PATHS[protocol], json=BODIES[protocol]) as response:
        next(response.iter_raw())
    assert done.wait(10)
    assert not cancelled.is_set()


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_server_shutdown_ends_protocol_streams_in_a_form_the_clients_accept(js: Any, protocol: str) -> None:
    from tests.support.server import serve_in_subprocess, shutdown_mid_stream

    proc, port = serve_in_subprocess("sse_app:app")
    try:
        received = shutdown_mid_stream(
            "POST", f"http://127.0.0.1:{port}{PATHS[protocol]}", proc, json=BODIES[protocol]
        ).decode()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    if protocol == "aisdk":
        assert received.endswith(
            'data: {"type":"error","errorText":"The server is shutting down; please retry."}\n\ndata: [DONE]\n\n'
        )
        answer = js.call("aisdk", {"body": received, "version": 7})
        assert answer["ok"], answer.get("error")
        assert answer["result"]["status"] == "error"
    else:
        assert '"type":"RUN_ERROR"' in received.rsplit("data: ", 1)[-1]
        answer = js.call("agui", {"runs": [{"body": received}], "threadId": "th-1"})
        assert answer["ok"], answer.get("error")
        run = answer["result"]["runs"][0]
        assert not run.get("failed")
        assert run["runError"]["code"] == "shutdown"
    assert answer["warnings"] == []


# --- unusual input on every protocol ---------------------------------------------------------------


def every_protocol_app(agent: Any = echo_agent, **options: Any) -> Starlette:
    return Starlette(
        routes=[
            *aisdk.routes(agent, path="/api/chat", options=StreamOptions(**options)),
            *agui.routes(agent, path="/api/agui", options=StreamOptions(**options)),
            *dsh.routes(agent, path="/api/agent", options=StreamOptions(**options)),
        ]
    )


def post_raw(app: Any, path: str, content: bytes) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post(path, content=content, headers={"content-type": "application/json"})

    return anyio.run(go)


# The escapes as JSON.stringify writes a lone surrogate (a string cut inside an emoji): "@H" a high one, "@L" a
# low one, "@E" a high one inside a JSON string inside the JSON (the backslash escaped).
ESCAPES = {"@H": "\\ud800", "@L": "\\udc00", "@E": "\\\\ud800"}
SURROGATE_BODIES: dict[str, tuple[str, str]] = {
    "aisdk text": (
        "/api/chat",
        '{"id":"c","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"a@Hb"}]}]}',
    ),
    "aisdk state": (
        "/api/chat",
        '{"id":"c","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"},'
        '{"type":"data-state","id":"state","data":{"k":"@L"}}]}]}',
    ),
    "aisdk tool input key": (
        "/api/chat",
        '{"id":"c","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]},'
        '{"id":"a","role":"assistant","parts":[{"type":"tool-t","toolCallId":"c1","state":"input-available",'
        '"input":{"@H":1}}]}]}',
    ),
    "aisdk app key": (
        "/api/chat",
        '{"id":"c","extra":"@H","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]}]}',
    ),
    "agui content": (
        "/api/agui",
        '{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"a@Hb"}]}',
    ),
    "agui state": (
        "/api/agui",
        '{"threadId":"t","runId":"r","state":{"k":"@L"},"messages":[{"id":"m","role":"user","content":"hi"}]}',
    ),
    "agui forwardedProps": (
        "/api/agui",
        '{"threadId":"t","runId":"r","forwardedProps":{"p":"@H"},"messages":[{"id":"m","role":"user","content":"hi"}]}',
    ),
    "agui tool arguments": (
        "/api/agui",
        '{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"},'
        '{"id":"a","role":"assistant","toolCalls":[{"id":"c1","type":"function",'
        '"function":{"name":"f","arguments":"{\\"q\\":\\"@E\\"}"}}]}]}',
    ),
    "dsh message": ("/api/agent/stream", '{"agentId":"a1","message":"a@Hb"}'),
}


@pytest.mark.parametrize("case", sorted(SURROGATE_BODIES))
def test_a_lone_surrogate_is_kept_as_a_replacement_character_on_every_protocol(case: str) -> None:
    seen: list[RunInput] = []

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        seen.append(run)
        async for event in echo_agent(run):
            yield event

    path, body = SURROGATE_BODIES[case]
    for marker, escape in ESCAPES.items():
        body = body.replace(marker, escape)
    response = post_raw(every_protocol_app(agent), path, body.encode())
    assert response.status_code == 200, response.text
    assert len(seen) == 1
    dumped = seen[0].model_dump_json()  # the run is serializable: no surrogate reached it
    assert "\\ufffd" in dumped or "\ufffd" in dumped
    assert "\\ud800" not in dumped and "\\udc00" not in dumped


def test_a_surrogate_pair_stays_the_character_it_encodes() -> None:
    seen: list[RunInput] = []

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        seen.append(run)
        async for event in echo_agent(run):
            yield event

    body = '{"id":"c","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"\\ud83d\\ude00\\\\ud800"}]}]}'
    response = post_raw(every_protocol_app(agent), "/api/chat", body.encode())
    assert response.status_code == 200
    assert last_user_text(seen[0]) == "\U0001f600\\ud800"  # an escaped backslash is no escape


@pytest.mark.parametrize("depth", [65, 100_000])
def test_deeply_nested_tool_arguments_are_a_4xx_naming_the_field(depth: int) -> None:
    arguments = "[" * depth + "]" * depth
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {"id": "m", "role": "user", "content": "hi"},
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}],
            },
        ],
    }
    response = post_raw(every_protocol_app(), "/api/agui", json.dumps(body).encode())
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "messages.1.toolCalls.0.function.arguments"
    assert "limits.max_json_depth" in error["message"]


def test_tool_arguments_within_the_depth_limit_are_parsed() -> None:
    seen: list[RunInput] = []

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        seen.append(run)
        async for event in echo_agent(run):
            yield event

    arguments = json.dumps({"a": [[[{"b": "c"}]]]})
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {"id": "m", "role": "user", "content": "hi"},
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}],
            },
            {"id": "x", "role": "tool", "toolCallId": "c1", "content": "ok"},
            {
                "id": "n",
                "role": "assistant",
                "toolCalls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "not json"}}],
            },
        ],
    }
    response = post_raw(every_protocol_app(agent), "/api/agui", json.dumps(body).encode())
    assert response.status_code == 200
    calls = [p for m in seen[0].messages for p in m.parts if p.type == "tool-call"]
    assert [c.input for c in calls] == [{"a": [[[{"b": "c"}]]]}, "not json"]


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_parts_per_message_are_bounded_with_a_413_naming_the_limit(protocol: str) -> None:
    app = every_protocol_app(limits=Limits(max_message_parts=10))
    if protocol == "aisdk":
        parts = [{"type": "text", "text": ""}] * 11
        body: dict[str, Any] = {"id": "c", "messages": [{"id": "m", "role": "user", "parts": parts}]}
    else:
        content = [{"type": "text", "text": ""}] * 11
        body = {"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": content}]}
    response = post_raw(app, PATHS[protocol], json.dumps(body).encode())
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["field"] == "limits.max_message_parts"
    assert error["message"].startswith("messages.0.")
    ok = json.loads(json.dumps(body))
    if protocol == "aisdk":
        ok["messages"][0]["parts"] = ok["messages"][0]["parts"][:10]
    else:
        ok["messages"][0]["content"] = ok["messages"][0]["content"][:10]
    assert post_raw(app, PATHS[protocol], json.dumps(ok).encode()).status_code == 200


def test_a_concurrent_request_completes_while_a_large_body_parses() -> None:
    """The parse of a large body runs off the event loop: a small request sent meanwhile is answered first."""
    app = every_protocol_app()
    parts = [{"type": "text", "text": ""}] * 2000
    big = json.dumps({"id": "c", "messages": [{"id": f"m{i}", "role": "user", "parts": parts} for i in range(80)]})
    small = json.dumps(AISDK_BODY)
    order: list[str] = []

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=60) as client:

            async def post(name: str, body: str, delay: float) -> None:
                await anyio.sleep(delay)
                response = await client.post("/api/chat", content=body, headers={"content-type": "application/json"})
                assert response.status_code == 200
                order.append(name)

            with anyio.fail_after(60):  # only against a hang
                async with anyio.create_task_group() as tg:
                    tg.start_soon(post, "big", big, 0)
                    tg.start_soon(post, "small", small, 0.05)

    anyio.run(go)
    assert order == ["small", "big"]


BODY_ROUTES = [
    ("/api/chat", json.dumps(AISDK_BODY)),
    ("/api/agui", json.dumps(AGUI_BODY)),
    ("/api/agui/reattach", '{"threadId":"th-1"}'),
    ("/api/agui/cancel", '{"threadId":"th-1"}'),
    ("/api/agent/stream", '{"agentId":"a1","message":"hi"}'),
    ("/api/agent/message", '{"agentId":"a1","message":"hi"}'),
]


@pytest.mark.parametrize(("path", "body"), BODY_ROUTES)
def test_a_trickling_body_is_a_408_naming_the_limit(path: str, body: str) -> None:
    from streamkit.store import MemoryStore

    app = every_protocol_app(limits=Limits(body_timeout=0.3), resumable=MemoryStore())
    sent: list[dict[str, Any]] = []
    content = body.encode()

    async def go() -> None:
        position = 0

        async def receive() -> dict[str, Any]:
            nonlocal position
            if position:
                await anyio.sleep(0.2)  # one byte at a time, slowly
            if position >= len(content):
                return {"type": "http.request", "body": b"", "more_body": False}
            position += 1
            return {"type": "http.request", "body": content[position - 1 : position], "more_body": True}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())],
            "client": ("127.0.0.1", 1),
            "server": ("test", 80),
        }
        with anyio.fail_after(10):
            await app(scope, receive, send)

    started = time.monotonic()
    anyio.run(go)
    assert time.monotonic() - started < 5
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert start["status"] == 408
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    error = json.loads(payload)["error"]
    assert error == {"status": 408, "message": error["message"], "field": "limits.body_timeout"}


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_a_large_body_parsed_off_the_loop_reaches_the_agent_whole(protocol: str) -> None:
    from streamkit.http import OFFLOAD_BODY_BYTES
    from streamkit.store import MemoryStore

    seen: list[RunInput] = []

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        seen.append(run)
        async for event in echo_agent(run):
            yield event

    text = "x" * 1000
    count = OFFLOAD_BODY_BYTES // 1000 + 10
    if protocol == "aisdk":
        messages: list[Any] = [
            {"id": f"m{i}", "role": "user", "parts": [{"type": "text", "text": text}]} for i in range(count)
        ]
        body: dict[str, Any] = {"id": "c", "messages": messages, "app": [1, 2]}
    else:
        messages = [{"id": f"m{i}", "role": "user", "content": text} for i in range(count)]
        body = {"threadId": "t", "runId": "r", "messages": messages, "forwardedProps": [1, 2]}
    response = post_raw(every_protocol_app(agent, resumable=MemoryStore()), PATHS[protocol], json.dumps(body).encode())
    assert response.status_code == 200
    assert [m.text for m in seen[0].messages] == [text] * count
    assert (seen[0].extra.get("app") if protocol == "aisdk" else seen[0].forwarded_props) == [1, 2]
