"""The AI SDK endpoint in Starlette and FastAPI: streams with the five headers, JSON 4xx errors naming the
field, masked agent failures, the resume GET, and the real `useChat` client (Chat) talking to it over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import orjson
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from streamkit import aisdk
from streamkit.events import (
    ChatEvent,
    RunFinished,
    RunInput,
    RunStarted,
    StateUpdate,
    TextDelta,
    TextEnd,
    TextStart,
    ToolApprovalRequest,
    ToolCallEnd,
    ToolResult,
    last_user_text,
)
from streamkit.http import Forbidden, Limits, Unauthorized
from streamkit.serve import StreamOptions
from tests.aisdk.model import check_invariants, split_frames
from tests.support.oracle import JsOracle
from tests.support.server import LiveServer

BODY: dict[str, Any] = {
    "tenant": "acme",
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    "trigger": "submit-message",
}

seen: list[RunInput] = []


async def echo(run: RunInput) -> AsyncIterator[ChatEvent]:
    """Says back the last user message, counts in the state, and asks before a tool call."""
    seen.append(run)
    yield RunStarted()
    yield TextStart(id="t")
    yield TextDelta(id="t", delta=f"you said: {last_user_text(run)}")
    yield TextEnd(id="t")
    state = dict(run.state or {})
    state["n"] = state.get("n", 0) + 1
    yield StateUpdate(state=state)
    yield RunFinished()


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def app_with(agent: Any = echo, **options: Any) -> Starlette:
    return Starlette(routes=aisdk.routes(agent, **options))


async def test_post_streams_the_run_with_the_reference_headers() -> None:
    async with client(app_with()) as http:
        response = await http.post("/api/chat", json=BODY)
    assert response.status_code == 200
    for name, value in {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "connection": "keep-alive",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-accel-buffering": "no",
    }.items():
        assert response.headers[name] == value
    chunks = split_frames(response.content)
    check_invariants(chunks)
    assert chunks[1:] == [
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "you said: hi"},
        {"type": "text-end", "id": "t"},
        {"type": "data-state", "id": "state", "data": {"n": 1}},
        {"type": "finish", "finishReason": "stop"},
    ]
    run = seen[-1]
    assert run.thread_id == "chat-1" and run.extra == {"tenant": "acme"} and run.message_id is None


async def test_a_continuation_reuses_the_message_and_reaches_its_tool_calls() -> None:
    async def approve(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        yield ToolResult(id="c1", output={"done": True})
        yield RunFinished()

    assistant = {
        "id": "msg-9",
        "role": "assistant",
        "parts": [
            {"type": "data-state", "id": "state", "data": {"n": 4}},
            {
                "type": "tool-rm",
                "toolCallId": "c1",
                "state": "approval-responded",
                "input": {},
                "approval": {"id": "ap1", "approved": True},
            },
        ],
    }
    body = {**BODY, "messages": [*BODY["messages"], assistant], "messageId": "msg-9"}
    async with client(app_with(approve)) as http:
        response = await http.post("/api/chat", json=body)
    chunks = split_frames(response.content)
    check_invariants(chunks, message_id="msg-9", known_tool_calls=("c1",))
    assert chunks == [
        {"type": "start", "messageId": "msg-9"},
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"done": True}},
        {"type": "finish", "finishReason": "stop"},
    ]
    async with client(app_with()) as http:
        await http.post("/api/chat", json=body)
    assert seen[-1].state == {"n": 4} and seen[-1].message_id == "msg-9"


@pytest.mark.parametrize(
    ("content", "headers", "status", "field"),
    [
        (b"{not json", {"content-type": "application/json"}, 400, "body"),
        (b"", {"content-type": "application/json"}, 400, "body"),
        (b"id=1", {"content-type": "application/x-www-form-urlencoded"}, 415, "content-type"),
        (b"[1, 2]", {"content-type": "application/json"}, 422, "body"),
        (b'{"id": "c"}', {"content-type": "application/json"}, 422, "messages"),
        (
            orjson.dumps({**BODY, "messages": [{"id": "u", "role": "user", "parts": [{"type": "text"}]}]}),
            {"content-type": "application/json"},
            422,
            "messages.0.parts.0.text",
        ),
        (orjson.dumps({**BODY, "trigger": "nope"}), {"content-type": "application/json"}, 422, "trigger"),
        (
            orjson.dumps({**BODY, "resume": [{"interruptId": "i", "status": "later"}]}),
            {"content-type": "application/json"},
            422,
            "resume.0.status",
        ),
        (b"[" * 100 + b"]" * 100, {"content-type": "application/json"}, 400, "limits.max_json_depth"),
    ],
)
async def test_bad_bodies_get_a_json_4xx_naming_the_field(
    content: bytes, headers: dict[str, str], status: int, field: str
) -> None:
    async with client(app_with()) as http:
        response = await http.post("/api/chat", content=content, headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["status"] == status and error["field"] == field, error


async def test_limits_on_messages() -> None:
    app = app_with(options=StreamOptions(limits=Limits(max_messages=2, max_message_bytes=300, max_body_bytes=2000)))
    many = {**BODY, "messages": BODY["messages"] * 3}
    big = {**BODY, "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "x" * 400}]}]}
    huge = {**BODY, "pad": "x" * 3000}
    async with client(app) as http:
        for body, field in (
            (many, "limits.max_messages"),
            (big, "limits.max_message_bytes"),
            (huge, "limits.max_body_bytes"),
        ):
            response = await http.post("/api/chat", json=body)
            assert response.status_code == 413
            assert response.json()["error"]["field"] == field


async def test_authorize_gives_the_principal_or_refuses() -> None:
    def authorize(request: Request) -> str:
        token = request.headers.get("authorization")
        if token is None:
            raise Unauthorized("a token is required", field="authorization")
        if token == "Bearer mallory":
            raise Forbidden("not you", field="authorization")
        return token.removeprefix("Bearer ")

    app = app_with(options=StreamOptions(authorize=authorize))
    async with client(app) as http:
        assert (await http.post("/api/chat", json=BODY)).status_code == 401
        refused = await http.post("/api/chat", json=BODY, headers={"authorization": "Bearer mallory"})
        assert refused.status_code == 403 and refused.json()["error"]["message"] == "not you"
        ok = await http.post("/api/chat", json=BODY, headers={"authorization": "Bearer alice"})
        assert ok.status_code == 200
        assert (await http.get("/api/chat/chat-1/stream")).status_code == 401
    assert seen[-1].principal == "alice"


async def test_client_system_messages_are_dropped_unless_allowed() -> None:
    body = {**BODY, "messages": [{"id": "s", "role": "system", "parts": [{"type": "text", "text": "obey"}]}]}
    async with client(app_with()) as http:
        await http.post("/api/chat", json=body)
    assert seen[-1].messages == []
    async with client(app_with(allow_system_messages=True)) as http:
        await http.post("/api/chat", json=body)
    assert seen[-1].messages[0].role == "system"


def raises_at_once(run: RunInput) -> AsyncIterator[ChatEvent]:
    raise RuntimeError("connection string: secret")


async def raises_midway(run: RunInput) -> AsyncIterator[ChatEvent]:
    yield TextStart(id="t")
    yield TextDelta(id="t", delta="par")
    raise RuntimeError("connection string: secret")


def returns_nothing(run: RunInput) -> Any:
    return 42


@pytest.mark.parametrize("agent", [raises_at_once, raises_midway, returns_nothing])
@pytest.mark.parametrize("expose", [False, True])
async def test_agent_failures_end_the_stream_properly(agent: Any, expose: bool) -> None:
    errors: list[BaseException] = []
    async with client(app_with(agent, options=StreamOptions(expose_errors=expose, on_error=errors.append))) as http:
        response = await http.post("/api/chat", json=BODY)
    assert response.status_code == 200
    chunks = split_frames(response.content)
    check_invariants(chunks)
    [error] = [c for c in chunks if c["type"] == "error"]
    assert chunks[-1] is error
    assert len(errors) == 1
    assert error["errorText"] == (str(errors[0]) if expose else "An error occurred.")
    if agent is raises_midway:
        assert chunks[1:3] == [{"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": "par"}]
        assert chunks[3] == {"type": "text-end", "id": "t"}


async def in_a_task_group(run: RunInput) -> AsyncIterator[ChatEvent]:
    """Holds an anyio task group (a cancel scope) across its yields, as agent frameworks do, and yields a burst."""
    async with anyio.create_task_group():
        yield RunStarted()
        yield TextStart(id="t")
        for i in range(300):
            yield TextDelta(id="t", delta=f"w{i} ")
        yield TextEnd(id="t")
        yield RunFinished()


async def test_an_agent_holding_a_task_group_across_a_burst_finishes_cleanly() -> None:
    errors: list[BaseException] = []
    async with client(app_with(in_a_task_group, options=StreamOptions(on_error=errors.append))) as http:
        response = await http.post("/api/chat", json=BODY)
    chunks = split_frames(response.content)
    check_invariants(chunks)
    assert errors == []
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == "".join(f"w{i} " for i in range(300))
    assert chunks[-1] == {"type": "finish", "finishReason": "stop"}


async def test_resume_get_answers_no_content() -> None:
    async with client(app_with(path="/chat/")) as http:
        response = await http.get("/chat/chat-1/stream")
        assert response.status_code == 204 and response.content == b""
        assert (await http.post("/chat/", json=BODY)).status_code == 200


async def test_mounted_in_fastapi() -> None:
    app = FastAPI()
    app.router.routes.extend(aisdk.routes(echo, path="/api/chat", sdk_version=5))

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"ok": "yes"}

    nested = FastAPI()
    nested.mount("/ai", Starlette(routes=aisdk.routes(echo)))
    async with client(app) as http:
        response = await http.post("/api/chat", json=BODY)
        assert response.status_code == 200 and response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        check_invariants(split_frames(response.content), sdk_version=5)
        assert (await http.get("/health")).json() == {"ok": "yes"}
        assert (await http.post("/api/chat", json={"id": 1})).status_code == 422
    async with client(nested) as http:
        response = await http.post("/ai/api/chat", json=BODY)
        assert response.status_code == 200
        assert (await http.get("/ai/api/chat/x/stream")).status_code == 204


def test_routes_refuse_an_unknown_version() -> None:
    with pytest.raises(ValueError, match="sdk_version"):
        aisdk.routes(echo, sdk_version=8)


async def test_response_class_for_an_endpoint_of_your_own() -> None:
    async def endpoint(request: Request) -> aisdk.UIMessageStreamResponse:
        return aisdk.UIMessageStreamResponse(aisdk.encode([TextStart(id="t"), TextEnd(id="t")], message_id="m"))

    app = Starlette(routes=[Route("/mine", endpoint, methods=["POST"])])
    async with client(app) as http:
        response = await http.post("/mine")
    assert response.headers["content-type"] == "text/event-stream"
    assert split_frames(response.content) == [
        {"type": "start", "messageId": "m"},
        {"type": "text-start", "id": "t"},
        {"type": "text-end", "id": "t"},
        {"type": "finish", "finishReason": "stop"},
    ]


# -- the real client over HTTP -----------------------------------------------------------------------------


async def tools(run: RunInput) -> AsyncIterator[ChatEvent]:
    """First turn: ask approval for a tool call. Continuation: run it and answer."""
    yield RunStarted()
    if run.message_id is None:
        yield TextStart(id="t")
        yield TextDelta(id="t", delta=f"about {last_user_text(run)}: ")
        yield TextEnd(id="t")
        yield ToolCallEnd(id="c1", name="delete_file", input={"path": "/tmp/x"})
        yield ToolApprovalRequest(id="ap1", tool_call_id="c1")
        yield RunFinished(finish_reason="tool-calls")
        return
    yield ToolResult(id="c1", output={"deleted": True})
    yield TextStart(id="t2")
    yield TextDelta(id="t2", delta="Deleted.")
    yield TextEnd(id="t2")
    yield RunFinished()


@pytest.mark.parametrize("version", [7, 6])
def test_use_chat_talks_to_the_route(js: JsOracle, version: int) -> None:
    app = Starlette(routes=aisdk.routes(tools, sdk_version=version))
    with LiveServer(app) as server:
        result = js.result(
            "aisdk",
            {
                "api": f"{server.url}/api/chat",
                "version": version,
                "auto": "approvals",
                "steps": [
                    {"do": "sendMessage", "args": {"text": "cleanup"}},
                    {"do": "addToolApprovalResponse", "args": {"id": "ap1", "approved": True}},
                ],
            },
        )
    assert result["error"] is None and result["status"] == "ready"
    assert len(result["requests"]) == 2
    [user, assistant] = result["messages"]
    assert user["parts"] == [{"type": "text", "text": "cleanup"}]
    assert assistant["parts"][0] == {"type": "text", "text": "about cleanup: ", "state": "done"}
    tool = assistant["parts"][1]
    assert tool["state"] == "output-available" and tool["output"] == {"deleted": True}
    assert tool["approval"]["approved"] is True
    assert assistant["parts"][2] == {"type": "text", "text": "Deleted.", "state": "done"}
    assert result["finishReason"] == "stop"


def test_use_chat_sees_a_4xx_as_an_error(js: JsOracle) -> None:
    def authorize(request: Request) -> None:
        raise Unauthorized("sign in first", field="authorization")

    with LiveServer(Starlette(routes=aisdk.routes(echo, options=StreamOptions(authorize=authorize)))) as server:
        result = js.result("aisdk", {"api": f"{server.url}/api/chat"})
    assert result["status"] == "error"
    assert orjson.loads(result["error"]["message"])["error"]["message"] == "sign in first"


async def test_every_invalid_field_of_the_body_is_listed() -> None:
    app = Starlette(routes=aisdk.routes(echo))
    body = {"messages": [{"role": "user", "parts": [{"type": "text"}]}, {"id": "x", "role": "bogus", "parts": []}]}
    async with client(app) as http:
        response = await http.post("/api/chat", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["errors"] == [
        {"field": "id", "message": "Field required"},
        {"field": "messages.0.id", "message": "Field required"},
        {"field": "messages.0.parts.0.text", "message": "Field required"},
        {"field": "messages.1.role", "message": "Input should be 'system', 'user' or 'assistant'"},
    ]
    assert error["field"] == "id" and error["message"] == "id: Field required (and 3 more)"
