"""The AG-UI endpoint in Starlette and FastAPI: streams, exact content type, JSON 4xx errors naming the field,
masked agent failures, and the real ``HttpAgent`` talking to it over HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request

from streamkit import agui
from streamkit.events import (
    ChatEvent,
    RunFinished,
    RunInput,
    RunStarted,
    StateUpdate,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallEnd,
    ToolResult,
    last_user_text,
)
from streamkit.http import Forbidden, Limits
from streamkit.serve import StreamOptions
from tests.agui.support import client_runs, frames_of
from tests.support.oracle import JsOracle
from tests.support.server import LiveServer

BODY = {
    "threadId": "th",
    "runId": "r1",
    "state": {"n": 1, "pad": "x" * 40},
    "messages": [{"id": "u1", "role": "user", "content": "hi"}],
    "tools": [],
    "context": [],
    "forwardedProps": {},
}


async def echo(run: RunInput) -> AsyncIterator[ChatEvent]:
    """Says back the last user message and counts in the state."""
    yield RunStarted()
    yield TextStart(id=f"{run.run_id}-text")
    yield TextDelta(id=f"{run.run_id}-text", delta=f"you said: {last_user_text(run)}")
    yield TextEnd(id=f"{run.run_id}-text")
    state = dict(run.state or {})
    state["n"] = state.get("n", 0) + 1
    yield StateUpdate(state=state)
    yield RunFinished()


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.mark.parametrize("framework", ["starlette", "fastapi"])
async def test_a_run_streams_as_agui(framework: str) -> None:
    if framework == "starlette":
        app: Any = Starlette(routes=agui.routes(echo))
    else:
        app = FastAPI()
        app.router.routes.extend(agui.routes(echo))
    async with client(app) as http:
        response = await http.post("/api/agui", json=BODY, headers={"accept": "text/event-stream"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-cache"
    frames = frames_of(response.text)
    assert [f["type"] for f in frames] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_DELTA",
        "RUN_FINISHED",
    ]
    assert frames[0] == {"type": "RUN_STARTED", "threadId": "th", "runId": "r1", "protocolVersion": "1.0"}
    assert frames[2]["delta"] == "you said: hi"
    assert frames[4]["delta"] == [{"op": "replace", "path": "/n", "value": 2}]  # against the request's state


@pytest.mark.parametrize(
    ("content", "headers", "status", "field"),
    [
        (b"{not json", {"content-type": "application/json"}, 400, "body"),
        (b"", {"content-type": "application/json"}, 400, "body"),
        (b"threadId=1", {"content-type": "application/x-www-form-urlencoded"}, 415, "content-type"),
        (json.dumps({**BODY, "threadId": None}).encode(), {"content-type": "application/json"}, 422, "threadId"),
        (
            json.dumps({**BODY, "messages": [{"id": "m", "role": "user", "content": 5}]}).encode(),
            {"content-type": "application/json"},
            422,
            "messages.0.content",
        ),
        (
            json.dumps({**BODY, "messages": [BODY["messages"][0]] * 3}).encode(),
            {"content-type": "application/json"},
            413,
            "limits.max_messages",
        ),
        (
            json.dumps({**BODY, "pad": "x" * 5000}).encode(),
            {"content-type": "application/json"},
            413,
            "limits.max_body_bytes",
        ),
    ],
)
async def test_bad_requests_get_json_errors_naming_the_field(
    content: bytes, headers: dict[str, str], status: int, field: str
) -> None:
    app = Starlette(routes=agui.routes(echo, options=StreamOptions(limits=Limits(max_messages=2, max_body_bytes=4000))))
    async with client(app) as http:
        response = await http.post("/api/agui", content=content, headers=headers)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["status"] == status and error["field"] == field and error["message"]


async def test_authorize_runs_first_and_its_principal_reaches_the_agent() -> None:
    seen: list[Any] = []

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        seen.append(run.principal)
        yield RunFinished()

    def authorize(request: Request) -> str:
        if request.headers.get("authorization") != "Bearer ok":
            raise Forbidden("not you", field="authorization")
        return "alice"

    app = Starlette(routes=agui.routes(agent, path="/agent", options=StreamOptions(authorize=authorize)))
    async with client(app) as http:
        refused = await http.post("/agent", content=b"{broken")  # refused before the body is read
        accepted = await http.post("/agent", json=BODY, headers={"authorization": "Bearer ok"})
    assert refused.status_code == 403 and refused.json()["error"]["field"] == "authorization"
    assert accepted.status_code == 200 and seen == ["alice"]


async def test_agent_failures_end_in_a_masked_run_error() -> None:
    async def crashing(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="par")
        raise RuntimeError("connection string postgres://secret")

    def raises_at_call(run: RunInput) -> Any:
        raise RuntimeError("secret at call time")

    async def not_a_generator(run: RunInput) -> list[ChatEvent]:
        return []

    errors: list[BaseException] = []
    for agent in (crashing, raises_at_call, not_a_generator):
        app = Starlette(routes=agui.routes(agent, options=StreamOptions(on_error=errors.append)))  # type: ignore[arg-type]
        async with client(app) as http:
            response = await http.post("/api/agui", json=BODY)
        assert response.status_code == 200
        frames = frames_of(response.text)
        assert frames[0]["type"] == "RUN_STARTED"
        assert frames[-1] == {"type": "RUN_ERROR", "message": "An error occurred."}
        assert "secret" not in response.text
    assert [type(e) for e in errors] == [RuntimeError, RuntimeError, TypeError]
    app = Starlette(routes=agui.routes(crashing, options=StreamOptions(expose_errors=True)))
    async with client(app) as http:
        exposed = frames_of((await http.post("/api/agui", json=BODY)).text)
    assert exposed[-1] == {"type": "RUN_ERROR", "message": "connection string postgres://secret"}


async def test_strict_mode_turns_a_sloppy_core_into_a_run_error() -> None:
    async def sloppy(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextDelta(id="t", delta="no start")

    app = Starlette(routes=agui.routes(sloppy, options=StreamOptions(strict=True)))
    async with client(app) as http:
        frames = frames_of((await http.post("/api/agui", json=BODY)).text)
    assert [f["type"] for f in frames] == ["RUN_STARTED", "RUN_ERROR"]
    app = Starlette(routes=agui.routes(sloppy))
    async with client(app) as http:
        repaired = frames_of((await http.post("/api/agui", json=BODY)).text)
    assert [f["type"] for f in repaired] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


async def test_only_post_is_served() -> None:
    app = Starlette(routes=agui.routes(echo))
    async with client(app) as http:
        assert (await http.get("/api/agui")).status_code == 405


def test_the_real_http_agent_over_http(js: JsOracle, live_server: Any) -> None:
    """Two runs of the real client against a live server: a frontend tool call left pending, then answered."""

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        last = run.messages[-1]
        if last.role == "tool":
            result = last.parts[0]
            yield TextStart(id=f"{run.run_id}-t")
            yield TextDelta(id=f"{run.run_id}-t", delta=f"you picked {result.output}")  # type: ignore[union-attr]
            yield TextEnd(id=f"{run.run_id}-t")
            yield StateUpdate(state={**run.state, "picked": result.output})  # type: ignore[union-attr]
        else:
            assert [t.name for t in run.tools] == ["pick_color"]
            yield ToolCallEnd(id="call-1", name="pick_color", input={"choices": ["red", "blue"]})
        yield RunFinished()

    server: LiveServer = live_server(Starlette(routes=agui.routes(agent)))
    tools = [
        {
            "name": "pick_color",
            "description": "Ask the user for a color",
            "parameters": {"type": "object", "properties": {"choices": {"type": "array"}}},
        }
    ]
    answer = js.call(
        "agui",
        {
            "url": f"{server.url}/api/agui",
            "messages": [{"id": "u1", "role": "user", "content": "pick a color"}],
            "state": {"theme": "dark"},
            "runs": [
                {"parameters": {"tools": tools}},
                {
                    "parameters": {"tools": tools},
                    "addMessages": [{"id": "tool-1", "role": "tool", "toolCallId": "call-1", "content": "red"}],
                },
            ],
        },
    )
    assert answer["ok"], answer
    assert answer["warnings"] == []
    one, two = answer["result"]["runs"]
    assert one["failed"] is None and two["failed"] is None
    assert one["pendingToolCallIds"] == ["call-1"]
    assert two["request"]["headers"]["Accept"] == "text/event-stream"
    final = answer["result"]["messages"]
    assert [m["role"] for m in final] == ["user", "assistant", "tool", "assistant"]
    assert final[1]["toolCalls"][0]["function"] == {"name": "pick_color", "arguments": '{"choices":["red","blue"]}'}
    assert final[3]["content"] == "you picked red"
    assert answer["result"]["state"] == {"theme": "dark", "picked": "red"}


def test_backend_tool_results_for_calls_of_an_earlier_run(js: JsOracle, live_server: Any) -> None:
    """A call the client left unanswered may be answered by the agent in the next run."""

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        if run.run_id == "run-1":
            yield ToolCallEnd(id="call-9", name="slow_job", input={})
        else:
            yield ToolResult(id="call-9", output={"done": True})
        yield RunFinished()

    server: LiveServer = live_server(Starlette(routes=agui.routes(agent)))
    answer = js.call(
        "agui",
        {
            "url": f"{server.url}/api/agui",
            "messages": [],
            "state": {},
            "runs": [{"runId": "run-1"}, {"runId": "run-2"}],
        },
    )
    assert answer["ok"] and answer["warnings"] == [], answer
    final = answer["result"]["messages"]
    assert [m["id"] for m in final] == ["call-9", "call-9-result"]
    assert final[1]["content"] == '{"done":true}'


async def test_integers_beyond_64_bits_in_the_request_do_not_break_the_run() -> None:
    """``JSON.stringify(1e20)`` writes ``100000000000000000000``: Python reads an int orjson cannot write."""
    body = json.dumps(
        {
            **BODY,
            "state": {"n": 1, "big": 10**20},
            "messages": [{"id": "u1", "role": "user", "content": "hi", "metadata": {"x": -(2**70)}}],
        }
    )
    app = Starlette(routes=agui.routes(echo, options=StreamOptions(limits=Limits(max_message_bytes=1000))))
    async with client(app) as http:
        response = await http.post("/api/agui", content=body, headers={"content-type": "application/json"})
        malformed = await http.post("/api/agui", json={"messages": [{" ": -(2**63) - 1}]})
    assert response.status_code == 200
    frames = frames_of(response.text)
    assert frames[-1]["type"] == "RUN_FINISHED"
    assert frames[4] == {"type": "STATE_SNAPSHOT", "snapshot": {"n": 2, "big": 1e20}}
    assert '"big":100000000000000000000' in response.text  # as JSON.stringify writes it
    assert malformed.status_code == 422


async def test_an_event_heavier_than_the_frame_limit_ends_the_run() -> None:
    async def heavy(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta="x" * 5000)

    app = Starlette(routes=agui.routes(heavy, options=StreamOptions(limits=Limits(max_frame_bytes=1000))))
    async with client(app) as http:
        frames = frames_of((await http.post("/api/agui", json=BODY)).text)
    assert [f["type"] for f in frames] == ["RUN_STARTED", "TEXT_MESSAGE_START", "RUN_ERROR"]


def test_server_shutdown_ends_an_open_run_with_run_error(js: JsOracle) -> None:
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "agui_shutdown_app:app", "--port", str(port), "--log-level", "warning"],
        cwd=os.path.dirname(__file__),
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "uvicorn did not start"
                time.sleep(0.05)
        received = b""
        with httpx.stream("POST", f"http://127.0.0.1:{port}/api/agui", json=BODY, timeout=20) as response:
            assert response.headers["content-type"] == "text/event-stream"
            for chunk in response.iter_raw():
                received += chunk
                if received.count(b"TEXT_MESSAGE_CONTENT") >= 3 and proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
                    proc.returncode = -1  # sent once
    finally:
        proc.returncode = None
        proc.terminate()
        proc.wait(timeout=15)
    body = received.decode()
    frames = frames_of(body)
    assert frames[-1] == {
        "type": "RUN_ERROR",
        "message": "The server is shutting down; please retry.",
        "code": "shutdown",
    }
    run = client_runs(js, [{"body": body}], messages=BODY["messages"], state=BODY["state"])["runs"][0]
    assert run["failed"] is None and run["runError"]["code"] == "shutdown"


async def test_an_oversized_first_event_still_starts_the_run(js: JsOracle) -> None:
    """The start the mapper synthesizes before a too-heavy first event goes out; the real client accepts it."""

    async def heavy(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield ToolCallEnd(id="c", name="save", input={"doc": "x" * 5000})

    app = Starlette(routes=agui.routes(heavy, options=StreamOptions(limits=Limits(max_frame_bytes=1000))))
    async with client(app) as http:
        body = (await http.post("/api/agui", json=BODY)).text
    assert [f["type"] for f in frames_of(body)] == ["RUN_STARTED", "TOOL_CALL_START", "RUN_ERROR"]
    answer = js.call("agui", {"runs": [{"body": body}], "messages": [], "state": {}})
    assert answer["ok"], answer.get("error")
    assert answer["result"]["runs"][0]["runError"]["message"] == "An error occurred."


async def test_every_invalid_field_of_the_body_is_listed() -> None:
    app = Starlette(routes=agui.routes(echo))
    body = {
        "threadId": "t",
        "messages": [{"id": "m", "role": "user", "content": 5}, {"role": "assistant", "content": "x"}],
        "state": {},
        "tools": [{"description": "no name"}],
        "context": [],
    }
    async with client(app) as http:
        response = await http.post("/api/agui", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["errors"] == [
        {"field": "runId", "message": "Field required"},
        {"field": "messages.0.content", "message": "Input should be a valid string | Input should be a valid list"},
        {"field": "messages.1.id", "message": "Field required"},
        {"field": "tools.0.name", "message": "Field required"},
    ]
    assert error["field"] == "messages.0.content"  # the deepest, as before
    assert error["message"].endswith("(and 3 more)")
