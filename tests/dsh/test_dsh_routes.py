"""The dialect's four endpoints: streaming and blocking answers agree, the conversation is kept per agent id,
cancel stops a running agent (its ``finally`` runs), status reports running/idle, bad bodies get a JSON 4xx
naming the field, credentials by X-API-Key or Bearer, masked agent failures, limits and heartbeats."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from streamkit import dsh
from streamkit.demo.agent import INSTANT, ScriptedAgent
from streamkit.dsh import fold, parse_sse
from streamkit.events import (
    ChatEvent,
    Data,
    RunFinished,
    RunInput,
    RunStarted,
    TextDelta,
    ToolCallEnd,
    ToolResult,
    last_user_text,
)
from streamkit.frames import shutdown_frames
from streamkit.http import Limits, api_keys
from streamkit.serve import StreamOptions
from streamkit.sources.loop import run_tag

seen: list[RunInput] = []


async def echo(run: RunInput) -> AsyncIterator[ChatEvent]:
    seen.append(run)
    yield RunStarted()
    yield TextDelta(id="t", delta=f"you said: {last_user_text(run)}")
    yield ToolCallEnd(id=f"c-{run.run_id}", name="count", input={"n": len(run.messages)})
    yield ToolResult(id=f"c-{run.run_id}", output=len(run.messages))
    yield TextDelta(id="t2", delta="done")
    yield RunFinished()


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def app_for(agent: Any, **options: Any) -> Starlette:
    return Starlette(routes=dsh.routes(agent, **options))


def normalized(answer: dict[str, Any], run_id: str, agent_id: str) -> Any:
    """An answer with what differs between two runs of the same script made equal: ids and the time."""
    text = json.dumps(answer)
    for value, name in ((run_id, "RUN"), (run_tag(run_id), "TAG"), (agent_id, "AGENT")):
        text = text.replace(value, name)
    out = json.loads(text)
    out["meta"].pop("timestamp")
    return out


async def test_stream_is_named_sse_events_ending_in_done() -> None:
    async with client(app_for(echo)) as c:
        r = await c.post("/api/agent/stream", json={"agentId": "a1", "message": "hi", "cwd": "/tmp"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache" and r.headers["x-accel-buffering"] == "no"
    assert r.text.startswith("event: meta\ndata: {")
    frames = parse_sse(r.text)
    assert [f["event"] for f in frames] == ["meta", "chunk", "step_break", "step_break", "chunk", "done"]
    meta = frames[0]["data"]
    assert meta["agentId"] == "a1" and meta["sessionId"] == "a1" and isinstance(meta["timestamp"], int)
    assert seen[-1].thread_id == "a1" and seen[-1].extra == {"cwd": "/tmp"}
    folded = fold(frames)
    assert [b.text for b in folded.bubbles] == ["you said: hi", "done"]
    (card,) = folded.tools.values()
    assert card["status"] == "done" and card["result"] == 1 and card["args"] == {"n": 1}
    assert [m["role"] for m in folded.messages or []] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize(
    "prompt",
    ["What's the weather in Lisbon?", "Compare the weather in Paris, Tokyo and New York", "What is 1/0?", "crash"],
)
async def test_blocking_and_streaming_answers_agree(prompt: str) -> None:
    """The offline agent's paths (one tool, parallel tools, a failing tool, a crash), both ways."""
    async with client(app_for(ScriptedAgent(INSTANT))) as c:
        streamed = await c.post("/api/agent/stream", json={"agentId": "agent-streaming", "message": prompt})
        blocking = await c.post("/api/agent/message", json={"agentId": "agent-blocking", "message": prompt})
    assert blocking.status_code == 200 and blocking.headers["content-type"] == "application/json"
    answer = blocking.json()
    from_stream = fold(parse_sse(streamed.text)).answer()
    assert normalized(from_stream, from_stream["meta"]["runId"], "agent-streaming") == normalized(
        answer, answer["meta"]["runId"], "agent-blocking"
    )
    if prompt == "crash":
        assert answer["error"] == {
            "message": "The scripted agent crashed on purpose (you asked for it).",
            "code": "demo_crash",
        }
        assert "done" not in answer and answer["content"]
    else:
        assert answer["done"]["finishReason"] == "stop" and answer["content"]
        assert answer["toolCalls"] and all(c["status"] in ("done", "error") for c in answer["toolCalls"])
    if "Paris" in prompt:
        assert len(answer["toolCalls"]) >= 3
        assert len(answer["bubbles"]) >= 2
    if "1/0" in prompt:
        assert any(c["status"] == "error" and "division by zero" in c["error"] for c in answer["toolCalls"])


async def test_the_conversation_is_kept_per_agent_id() -> None:
    app = app_for(echo)
    async with client(app) as c:
        await c.post("/api/agent/message", json={"agentId": "h", "message": "one"})
        second = (await c.post("/api/agent/message", json={"agentId": "h", "message": "two"})).json()
        other = (await c.post("/api/agent/message", json={"agentId": "other", "message": "three"})).json()
        status = (await c.get("/api/agent/h/status")).json()
    run = seen[-2]
    assert [(m.role, m.text) for m in run.messages if m.role == "user"] == [("user", "one"), ("user", "two")]
    assert [m.role for m in run.messages] == ["user", "assistant", "tool", "assistant", "user"]
    roles = [m["role"] for m in second["done"]["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"] * 2
    assert [m["role"] for m in other["done"]["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert status == {"agentId": "h", "status": "idle", "messages": 8, "runs": 2}


async def test_history_is_bounded() -> None:
    async with client(app_for(echo, sessions=dsh.Sessions(max_messages=5))) as c:
        for word in ("one", "two", "three"):
            await c.post("/api/agent/message", json={"agentId": "b", "message": word})
        status = (await c.get("/api/agent/b/status")).json()
    assert status["messages"] <= 5
    assert seen[-1].messages[0].role != "tool"


async def test_cancel_stops_a_running_agent_and_its_finally_runs() -> None:
    started = asyncio.Event()
    closed: list[str] = []

    async def slow(run: RunInput) -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextDelta(id="t", delta="working")
            yield ToolCallEnd(id="c1", name="wait", input={})
            started.set()
            await asyncio.Event().wait()  # a tool that never returns
            yield TextDelta(id="t", delta="never")
        finally:
            closed.append(run.thread_id)

    async with client(app_for(slow)) as c:
        assert (await c.get("/api/agent/x/status")).json()["status"] == "idle"
        assert (await c.post("/api/agent/x/cancel")).status_code == 404
        task = asyncio.create_task(c.post("/api/agent/stream", json={"agentId": "x", "message": "go"}))
        await asyncio.wait_for(started.wait(), 5)
        status = (await c.get("/api/agent/x/status")).json()
        assert status["status"] == "running" and isinstance(status["runId"], str)
        busy = await c.post("/api/agent/stream", json={"agentId": "x", "message": "again"})
        assert busy.status_code == 409 and busy.json()["error"]["field"] == "agentId"
        cancelled = await c.post("/api/agent/x/cancel")
        assert cancelled.status_code == 204
        response = await asyncio.wait_for(task, 5)
        assert closed == ["x"]
        assert (await c.get("/api/agent/x/status")).json()["status"] == "idle"
        again = await c.post("/api/agent/x/cancel")
    frames = parse_sse(response.text)
    assert frames[-1]["event"] == "done"
    assert frames[-1]["data"]["finishReason"] == "aborted" and frames[-1]["data"]["reason"] == "cancelled"
    folded = fold(frames)
    assert folded.tools["c1"]["status"] == "started" and folded.text == "working"
    assert again.status_code == 404 and again.json()["error"]["field"] == "agentId"


async def test_cancel_reaches_a_blocking_run_too() -> None:
    started = asyncio.Event()

    async def slow(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextDelta(id="t", delta="a")
        started.set()
        await asyncio.sleep(3600)
        yield TextDelta(id="t", delta="b")

    async with client(app_for(slow)) as c:
        task = asyncio.create_task(c.post("/api/agent/message", json={"agentId": "m", "message": "go"}))
        await asyncio.wait_for(started.wait(), 5)
        assert (await c.post("/api/agent/m/cancel")).status_code == 204
        answer = (await asyncio.wait_for(task, 5)).json()
    assert answer["content"] == "a" and answer["done"]["finishReason"] == "aborted"


BAD_BODIES: list[tuple[Any, int, str]] = [
    ({"message": "hi"}, 422, "agentId"),
    ({"agentId": "a"}, 422, "message"),
    ({"agentId": "a", "message": 3}, 422, "message"),
    ({"agentId": "", "message": "hi"}, 422, "agentId"),
    ({"agentId": "a/b", "message": "hi"}, 422, "agentId"),
    ({"agentId": "a", "message": ""}, 422, "message"),
    ({"agentId": "a", "message": "hi", "maxTokens": 0}, 422, "maxTokens"),
    ({"agentId": "a", "message": "hi", "maxTokens": "5"}, 422, "maxTokens"),
    ({"agentId": "a", "message": "hi", "channelCode": 5}, 422, "channelCode"),
    ({"agentId": "a", "message": "hi", "cwd": ["/"]}, 422, "cwd"),
    ([1, 2], 422, "body"),
]


@pytest.mark.parametrize("route", ["stream", "message"])
@pytest.mark.parametrize(("body", "status", "field"), BAD_BODIES)
async def test_bad_bodies_get_a_json_4xx_naming_the_field(route: str, body: Any, status: int, field: str) -> None:
    async with client(app_for(echo)) as c:
        r = await c.post(f"/api/agent/{route}", json=body)
    assert r.status_code == status
    assert r.json()["error"]["field"] == field and r.json()["error"]["status"] == status


async def test_malformed_requests_and_limits() -> None:
    limits = Limits(max_body_bytes=1000, max_message_bytes=100)
    async with client(app_for(echo, options=StreamOptions(limits=limits))) as c:
        assert (await c.post("/api/agent/stream", content=b"{nope")).json()["error"]["field"] == "body"
        r = await c.post("/api/agent/stream", content=b"x", headers={"content-type": "text/plain"})
        assert r.status_code == 415
        r = await c.post("/api/agent/stream", json={"agentId": "a", "message": "x" * 200})
        assert r.status_code == 413 and r.json()["error"]["field"] == "limits.max_message_bytes"
        r = await c.post("/api/agent/stream", json={"agentId": "a", "message": "x" * 2000})
        assert r.status_code == 413 and r.json()["error"]["field"] == "limits.max_body_bytes"
        assert (await c.get("/api/agent/stream")).status_code == 405


async def test_api_keys_by_header_or_bearer_and_principals_apart() -> None:
    app = app_for(echo, options=StreamOptions(authorize=api_keys({"k-alice": "alice", "k-bob": "bob"})))
    body = {"agentId": "shared", "message": "hi"}
    async with client(app) as c:
        for headers in ({}, {"x-api-key": "wrong"}, {"authorization": "Bearer wrong"}, {"authorization": "Basic x"}):
            for method, url in (("POST", "/api/agent/stream"), ("GET", "/api/agent/shared/status")):
                r = await c.request(method, url, json=body, headers=headers)
                assert r.status_code == 401 and r.json()["error"]["field"] == "authorization"
        assert (await c.post("/api/agent/message", json=body, headers={"x-api-key": "k-alice"})).status_code == 200
        assert seen[-1].principal == "alice"
        r = await c.post("/api/agent/stream", json=body, headers={"authorization": "Bearer k-bob"})
        assert r.status_code == 200 and seen[-1].principal == "bob"
        assert len(seen[-1].messages) == 1  # bob's "shared" agent is not alice's
        alice = (await c.get("/api/agent/shared/status", headers={"x-api-key": "k-alice"})).json()
    assert alice["runs"] == 1 and alice["messages"] == 4


@pytest.mark.parametrize("expose", [False, True])
async def test_an_agent_failure_ends_the_stream_with_a_masked_error(expose: bool) -> None:
    errors: list[BaseException] = []

    async def broken(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextDelta(id="t", delta="partial")
        raise RuntimeError("db password is hunter2")

    async with client(app_for(broken, options=StreamOptions(expose_errors=expose, on_error=errors.append))) as c:
        r = await c.post("/api/agent/stream", json={"agentId": "e", "message": "hi"})
        answer = (await c.post("/api/agent/message", json={"agentId": "e2", "message": "hi"})).json()
        status = (await c.get("/api/agent/e/status")).json()
    frames = parse_sse(r.text)
    assert [f["event"] for f in frames] == ["meta", "chunk", "error"]
    text = "db password is hunter2" if expose else "An error occurred."
    assert frames[-1]["data"] == {"message": text}
    assert answer["error"] == {"message": text} and answer["content"] == "partial"
    assert len(errors) == 2 and status["status"] == "idle" and status["messages"] == 2


async def test_a_frame_over_the_limit_ends_the_stream_with_error() -> None:
    async def big(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        yield TextDelta(id="t", delta="x" * 5000)
        yield RunFinished()

    async with client(app_for(big, options=StreamOptions(limits=Limits(max_frame_bytes=1000)))) as c:
        r = await c.post("/api/agent/stream", json={"agentId": "f", "message": "hi"})
    assert [f["event"] for f in parse_sse(r.text)] == ["meta", "error"]


async def test_heartbeats_during_a_silent_tool_call(live_server: Any) -> None:
    async def quiet(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield ToolCallEnd(id="c", name="slow", input={})
        await asyncio.sleep(0.35)
        yield ToolResult(id="c", output="ok")

    server = live_server(app_for(quiet, options=StreamOptions(heartbeat=0.1)))
    async with httpx.AsyncClient() as c:
        r = await c.post(server.url + "/api/agent/stream", json={"agentId": "p", "message": "hi"})
    assert ": ping\n\n" in r.text
    assert parse_sse(r.text)[-1]["event"] == "done"


def test_a_server_shutdown_ends_the_run_with_an_error_frame() -> None:
    mapper = dsh.DSHMapper(agent_id="a", run_id="r")
    mapper.feed(RunStarted())
    ending = parse_sse(shutdown_frames(mapper))
    assert ending == [{"event": "error", "data": {"message": ending[0]["data"]["message"], "code": "shutdown"}}]
    assert shutdown_frames(mapper) == b""


async def test_mounted_in_fastapi_with_a_path_of_its_own() -> None:
    app = FastAPI()
    app.router.routes.extend(dsh.routes(echo, path="/console/agent/"))
    async with client(app) as c:
        r = await c.post("/console/agent/message", json={"agentId": "f", "message": "hi"})
        assert (await c.get("/console/agent/f/status")).json()["runs"] == 1
    assert r.json()["content"] == "you said: hidone"


async def test_sources_data_and_state_reach_done() -> None:
    async def extras(run: RunInput) -> AsyncIterator[ChatEvent]:
        from streamkit.events import Source, StateUpdate

        yield StateUpdate(state={"step": 1})
        yield Source(id="s1", url="https://example.com", title="Example")
        yield Data(name="card", id="d", data={"v": 1})
        yield Data(name="card", id="d", data={"v": 2})
        yield Data(name="toast", data="hi", transient=True)
        yield RunFinished()

    async with client(app_for(extras)) as c:
        done = (await c.post("/api/agent/message", json={"agentId": "x", "message": "hi"})).json()["done"]
    assert done["state"] == {"step": 1}
    assert done["sources"] == [{"id": "s1", "url": "https://example.com", "title": "Example"}]
    assert done["data"] == [{"name": "card", "data": {"v": 2}, "id": "d"}]


async def test_api_keys_from_a_function() -> None:
    async def lookup(key: str) -> str | None:
        return {"tok": "carol"}.get(key)

    async with client(app_for(echo, options=StreamOptions(authorize=api_keys(lookup)))) as c:
        ok = await c.post("/api/agent/message", json={"agentId": "k", "message": "hi"}, headers={"x-api-key": "tok"})
        bad = await c.post("/api/agent/message", json={"agentId": "k", "message": "hi"}, headers={"x-api-key": "no"})
    assert ok.status_code == 200 and seen[-1].principal == "carol"
    assert bad.status_code == 401


async def test_cancel_over_a_real_server_while_the_client_reads(live_server: Any) -> None:
    """Through uvicorn, with the response pulling frames as they come: cancel interrupts the awaiting agent."""
    closed: list[bool] = []

    async def slow(run: RunInput) -> AsyncIterator[ChatEvent]:
        try:
            for i in range(20):  # a burst, so that the writer moves the frames to a task of their own
                yield TextDelta(id="t", delta=f"{i} ")
            yield ToolCallEnd(id="c1", name="wait", input={})
            await asyncio.sleep(3600)
        finally:
            closed.append(True)

    server = live_server(app_for(slow))
    frames: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as c:
        async with c.stream("POST", "/api/agent/stream", json={"agentId": "live", "message": "go"}) as r:
            buffer = ""
            async for text in r.aiter_text():
                buffer += text
                if "event: step_break" in buffer and not frames:
                    frames.append({})
                    assert (await c.get("/api/agent/live/status")).json()["status"] == "running"
                    assert (await c.post("/api/agent/live/cancel")).status_code == 204
        status = (await c.get("/api/agent/live/status")).json()
    ending = parse_sse(buffer)[-1]
    assert ending["event"] == "done" and ending["data"]["finishReason"] == "aborted"
    assert closed == [True] and status["status"] == "idle"


HOSTILE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
BODIES = st.one_of(
    HOSTILE,
    st.fixed_dictionaries(
        {"agentId": HOSTILE | st.text(min_size=1, max_size=5), "message": HOSTILE | st.text(min_size=1, max_size=5)},
        optional={"maxTokens": HOSTILE, "channelCode": HOSTILE, "cwd": HOSTILE},
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES, blocking=st.booleans())
def test_no_body_gets_a_5xx(body: Any, blocking: bool) -> None:
    async def post() -> httpx.Response:
        async with client(app_for(echo)) as c:
            return await c.post(f"/api/agent/{'message' if blocking else 'stream'}", json=body)

    r = asyncio.run(post())
    assert r.status_code < 500
    if r.status_code >= 400:
        assert isinstance(r.json()["error"]["field"], str)
    elif blocking:
        assert "done" in r.json() or "error" in r.json()
    else:
        assert fold(parse_sse(r.text)).finished


class User:
    """A principal the way auth libraries hand them out: a plain object, with no JSON form."""


async def test_a_principal_with_no_json_form_is_a_clear_500_on_every_route(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("ERROR", logger="streamkit")
    started = len(seen)
    app = app_for(echo, options=StreamOptions(authorize=lambda request: User()))
    body = {"agentId": "a1", "message": "hi"}
    async with client(app) as c:
        answers = [
            await c.post("/api/agent/stream", json=body),
            await c.post("/api/agent/message", json=body),
            await c.get("/api/agent/a1/status"),
            await c.post("/api/agent/a1/cancel"),
        ]
    for answer in answers:
        assert answer.status_code == 500
        error = answer.json()["error"]
        assert error["field"] == "authorize" and "authorize hook" in error["message"] and "User" in error["message"]
    assert len(seen) == started
    lines = [r for r in caplog.records if r.name.startswith("streamkit")]
    assert len(lines) == len(answers) and all(r.exc_info is None and "User" in r.getMessage() for r in lines)


async def test_sessions_take_an_owner_function_for_other_principals() -> None:
    sessions = dsh.Sessions(owner=lambda user: "u" if isinstance(user, User) else "?")
    app = app_for(echo, sessions=sessions, options=StreamOptions(authorize=lambda request: User()))
    async with client(app) as c:
        r = await c.post("/api/agent/message", json={"agentId": "a1", "message": "hi"})
        status = (await c.get("/api/agent/a1/status")).json()
    assert r.status_code == 200 and status["runs"] == 1


async def _conversation(sessions: dsh.Sessions, principal: str, agent_id: str, text: str = "hi") -> None:
    from streamkit.events import Message, TextPart

    run = await sessions.start(principal, agent_id)
    await sessions.finish(run, [Message(id=agent_id, role="user", parts=[TextPart(text=text)])])


async def test_one_principal_cannot_evict_another_principals_sessions() -> None:
    sessions = dsh.Sessions(max_agents=25)
    await _conversation(sessions, "bob", "mine")
    for i in range(40):
        await _conversation(sessions, "alice", f"a{i}")
    assert sessions.get("bob", "mine") is not None  # alice's own oldest made room for her newest
    assert len(sessions) == 25
    assert sessions.get("alice", "a39") is not None and sessions.get("alice", "a0") is None
    # Per principal: a principal's own bound, whatever the room left over all.
    capped = dsh.Sessions(max_agents_per_principal=3)
    await _conversation(capped, "bob", "mine")
    for i in range(5):
        await _conversation(capped, "alice", f"a{i}")
    assert [capped.get("alice", f"a{i}") is not None for i in range(5)] == [False, False, True, True, True]
    assert capped.get("bob", "mine") is not None and len(capped) == 4


async def test_running_sessions_are_never_evicted() -> None:
    sessions = dsh.Sessions(max_agents=2, max_agents_per_principal=2)
    runs = [await sessions.start("alice", f"a{i}") for i in range(3)]
    assert len(sessions) == 3 and all(sessions.get("alice", f"a{i}") is not None for i in range(3))
    await sessions.finish(runs[0], [])
    assert len(sessions) == 2 and sessions.get("alice", "a0") is None  # idle again: it may go now


async def test_history_is_bounded_in_bytes_per_conversation_principal_and_all() -> None:
    big = "x" * 100_000
    from streamkit.events import Message, TextPart

    sessions = dsh.Sessions(max_history_bytes=250_000, max_principal_bytes=600_000, max_bytes=1_000_000)

    run = await sessions.start("alice", "a")
    history = [Message(id=str(i), role="user", parts=[TextPart(text=f"{i}{big}")]) for i in range(20)]
    await sessions.finish(run, history)
    session = sessions.get("alice", "a")
    assert session is not None and [m.id for m in session.history] == ["18", "19"]  # the newest that fit
    assert 200_000 < session.size <= 250_000 and sessions.bytes == session.size
    # Per principal: alice's conversations together stay within her bound; bob's are not touched.
    await _conversation(sessions, "bob", "b0", big)
    for i in range(8):
        await _conversation(sessions, "alice", f"a{i}", big)
    alice = sum(s.size for i in range(8) if (s := sessions.get("alice", f"a{i}")) is not None)
    alice += s.size if (s := sessions.get("alice", "a")) is not None else 0
    assert alice <= 600_000 and sessions.get("alice", "a7") is not None and sessions.get("alice", "a") is None
    assert sessions.get("bob", "b0") is not None
    # Over all principals: room is made from the principal holding the most bytes.
    for name in ("carol", "dave", "erin"):
        await _conversation(sessions, name, "c", big)
    assert sessions.bytes <= 1_000_000
    assert all(sessions.get(name, "c") is not None for name in ("carol", "dave", "erin"))
    assert sessions.get("bob", "b0") is not None


async def test_the_routes_keep_at_most_a_body_of_history_by_default() -> None:
    app = app_for(echo, options=StreamOptions(limits=Limits(max_body_bytes=300_000)))
    big = "y" * 60_000
    async with client(app) as c:
        for i in range(10):
            r = await c.post("/api/agent/message", json={"agentId": "big", "message": f"{i}{big}"})
            assert r.status_code == 200
    kept = seen[-1].messages[:-1]  # the history the last run was given, before its new message
    assert sum(len(m.model_dump_json()) for m in kept) <= 300_000
    assert kept and kept[0].role != "tool" and kept[-1].role == "assistant"
