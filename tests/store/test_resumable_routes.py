"""The resumable endpoints of both protocols in one process (in-memory store, a live uvicorn server):
status codes, validation errors naming the field, owner checks, Last-Event-ID, cancel."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request

from streamkit import agui
from streamkit.events import RunInput
from streamkit.http import Unauthorized
from streamkit.resumable import Resumable
from streamkit.serve import StreamOptions
from streamkit.store import MemoryStore
from tests.store.resume_agent import scripted

ALICE = {"authorization": "Bearer alice"}
BOB = {"authorization": "Bearer bob"}


def authorize(request: Request) -> str:
    header = request.headers.get("authorization", "")
    if not header.startswith("Bearer "):
        raise Unauthorized("a bearer token is required", field="authorization")
    return header[7:]


class Gate:
    """An agent paced by the test: it streams its script up to the first text delta, then waits to be released."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def __call__(self, run: RunInput) -> Any:
        gate = self.go

        async def events() -> Any:
            import asyncio

            async for event in scripted():
                while event.type == "text-delta" and not gate.is_set():
                    await asyncio.sleep(0.01)
                yield event

        return events()


def events_of(data: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    out = []
    for block in data.split(b"\n\n"):
        ident = None
        payload = None
        for line in block.split(b"\n"):
            if line.startswith(b"id: "):
                ident = line[4:].decode()
            elif line.startswith(b"data: "):
                payload = {"done": True} if line == b"data: [DONE]" else orjson.loads(line[6:])
        if payload is not None:
            out.append((ident, payload))
    return out


def agui_body(thread: str) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": "hi"}],
        "state": {"progress": -1},
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "protocolVersion": "1.0",  # as @ag-ui/client 1.0 declares (a stop is then the cancelled outcome)
    }


@pytest.fixture
def agui_server(live_server: Callable[..., Any]) -> tuple[str, Gate]:
    gate = Gate()
    options = StreamOptions(authorize=authorize, resumable=Resumable(MemoryStore()))
    app = Starlette(routes=agui.routes(gate, options=options))
    return live_server(app).url + "/api/agui", gate


def in_background(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def run() -> None:
        box["value"] = fn()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, box


def post_stream(url: str, body: Any, headers: dict[str, str]) -> tuple[int, bytes]:
    with httpx.Client(timeout=20) as client, client.stream("POST", url, json=body, headers=headers) as response:
        return response.status_code, response.read()


def active(client: httpx.Client, url: str, thread: str) -> bool:
    """Whether a reattach to ``thread`` finds a run (the response is only opened, not read)."""
    with client.stream("POST", url + "/reattach", json={"threadId": thread}, headers=ALICE) as response:
        return response.status_code == 200


def wait_for(check: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_agui_reattach_validation_and_access(agui_server: tuple[str, Gate]) -> None:
    url, _ = agui_server
    with httpx.Client(timeout=10) as client:
        assert client.post(url + "/reattach", json={"threadId": "t"}).status_code == 401
        missing = client.post(url + "/reattach", json={"runId": "x"}, headers=ALICE)
        assert missing.status_code == 422 and missing.json()["error"]["field"] == "threadId"
        bad = client.post(url + "/reattach", content=b"{", headers={**ALICE, "content-type": "application/json"})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "body"
        assert client.post(url + "/reattach", json={"threadId": "nobody"}, headers=ALICE).status_code == 204
        assert client.get(url + "/reattach", params={"threadId": "nobody"}, headers=ALICE).status_code == 204
        empty = client.get(url + "/reattach", headers=ALICE)
        assert empty.status_code == 422 and empty.json()["error"]["field"] == "threadId"
        lost = client.post(url + "/cancel", json={"threadId": "nobody"}, headers=ALICE)
        assert lost.status_code == 404 and lost.json()["error"]["field"] == "threadId"
        wrong = client.get(url + "/reattach", params={"threadId": "x"}, headers={**ALICE, "last-event-id": "-3"})
        assert wrong.status_code == 400 and wrong.json()["error"]["field"] == "last-event-id"


def test_agui_reattach_snapshot_then_tail_and_last_event_id(agui_server: tuple[str, Gate]) -> None:
    url, gate = agui_server
    first, box = in_background(lambda: post_stream(url, agui_body("t1"), ALICE))
    with httpx.Client(timeout=10) as client:
        wait_for(lambda: active(client, url, "t1"))
        assert client.post(url + "/reattach", json={"threadId": "t1"}, headers=BOB).status_code == 204
        again, reattached = in_background(lambda: post_stream(url + "/reattach", {"threadId": "t1"}, ALICE))

        def tail() -> tuple[int, bytes]:
            with client.stream("GET", url + "/reattach?threadId=t1", headers={**ALICE, "last-event-id": "1"}) as r:
                return r.status_code, r.read()

        raw, raw_box = in_background(tail)
        time.sleep(0.2)
        gate.go.set()
        for t in (first, again, raw):
            t.join(10)
    status, original = box["value"]
    assert status == 200
    status, body = reattached["value"]
    assert status == 200
    events = [e for _, e in events_of(body)]
    assert [e["type"] for e in events[:3]] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    assert events[1]["messages"][0] == {"id": "u1", "role": "user", "content": "hi"}
    assert events[-1]["type"] == "RUN_FINISHED"
    finished = agui.fold([e for _, e in events_of(original)], messages=agui_body("t1")["messages"], state={})
    assert agui.fold(events, state={}).messages == finished.messages
    status, tail_body = raw_box["value"]
    assert status == 200
    tail_events = events_of(tail_body)
    tail_ids = [i for i, _ in tail_events]
    assert None not in tail_ids and tail_ids[0] in ("2", "2.1")  # every frame has an id, the first after entry 1
    assert "RUN_STARTED" not in [e["type"] for _, e in tail_events]
    numbered = events_of(original)
    first_entry_end = next(n for n, (i, _) in enumerate(numbered) if i == "1")
    assert [e for _, e in tail_events] == [e for _, e in numbered[first_entry_end + 1 :]]


def test_agui_cancel_from_another_request_ends_the_run(agui_server: tuple[str, Gate]) -> None:
    url, _ = agui_server
    first, box = in_background(lambda: post_stream(url, agui_body("t2"), ALICE))
    with httpx.Client(timeout=10) as client:
        wait_for(lambda: active(client, url, "t2"))
        assert client.post(url + "/cancel", json={"threadId": "t2"}, headers=BOB).status_code == 404
        assert client.post(url + "/cancel", json={"threadId": "t2"}, headers=ALICE).status_code == 204
    first.join(10)
    status, body = box["value"]
    events = [e for _, e in events_of(body)]
    assert status == 200
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
    assert (events[-1]["threadId"], events[-1]["runId"]) == ("t2", "run-1")


def test_a_bare_store_is_accepted(live_server: Callable[..., Any]) -> None:
    def core(run: RunInput) -> Any:
        return scripted()

    app = Starlette(routes=agui.routes(core, options=StreamOptions(resumable=MemoryStore())))
    url = live_server(app).url
    status, body = post_stream(url + "/api/agui", agui_body("t3"), {})
    assert status == 200 and [e for _, e in events_of(body)][-1]["type"] == "RUN_FINISHED"
    with httpx.Client() as client:
        assert client.post(url + "/api/agui/reattach", json={"threadId": "t3"}).status_code == 204


def test_aisdk_resumable_endpoints(live_server: Callable[..., Any]) -> None:
    from streamkit import aisdk

    gate = Gate()
    options = StreamOptions(authorize=authorize, resumable=Resumable(MemoryStore()))
    app = Starlette(routes=aisdk.routes(gate, options=options))
    url = live_server(app).url + "/api/chat"
    body = {
        "id": "c1",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        "trigger": "submit-message",
    }
    with httpx.Client(timeout=10) as client:
        assert client.get(url + "/c1/stream").status_code == 401
        assert client.get(url + "/c1/stream", headers=ALICE).status_code == 204
        bad = client.post(url, json={"id": "c1", "messages": "no"}, headers=ALICE)
        assert bad.status_code == 422 and bad.json()["error"]["field"].startswith("messages")
        first, box = in_background(lambda: post_stream(url, body, ALICE))

        def resuming() -> bool:
            with client.stream("GET", url + "/c1/stream", headers=ALICE) as response:
                return response.status_code == 200

        wait_for(resuming)
        wrong = client.get(url + "/c1/stream", headers={**ALICE, "last-event-id": "abc"})
        assert wrong.status_code == 400 and wrong.json()["error"]["field"] == "last-event-id"
        assert client.get(url + "/c1/stream", headers=BOB).status_code == 204
        again, resumed = in_background(lambda: client.get(url + "/c1/stream", headers=ALICE))
        time.sleep(0.1)
        gate.go.set()
        first.join(10)
        again.join(10)
        assert client.get(url + "/c1/stream", headers=ALICE).status_code == 204
    status, original = box["value"]
    assert status == 200
    replay = resumed["value"]
    assert replay.status_code == 200 and replay.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert [e for _, e in events_of(replay.content)] == [e for _, e in events_of(original)]
    assert events_of(original)[0][1]["type"] == "start" and events_of(original)[-1][1] == {"done": True}


def test_an_unreachable_store_is_a_503_naming_it(live_server: Callable[..., Any]) -> None:
    from streamkit import aisdk
    from streamkit.store.redis import RedisStore

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    resumable = Resumable(RedisStore.from_url(f"redis://127.0.0.1:{port}/0", socket_connect_timeout=0.5))
    app = Starlette(
        routes=[
            *aisdk.routes(lambda run: scripted(), options=StreamOptions(resumable=resumable)),
            *agui.routes(lambda run: scripted(), options=StreamOptions(resumable=resumable)),
        ]
    )
    url = live_server(app).url
    chat = {"id": "c", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
    with httpx.Client(timeout=20) as client:
        for response in (
            client.post(url + "/api/chat", json={**chat, "trigger": "submit-message"}),
            client.get(url + "/api/chat/c/stream"),
            client.delete(url + "/api/chat/c/stream"),
            client.post(url + "/api/agui", json=agui_body("t")),
            client.post(url + "/api/agui/reattach", json={"threadId": "t"}),
            client.post(url + "/api/agui/cancel", json={"threadId": "t"}),
        ):
            assert response.status_code == 503, response.request.url
            assert response.json()["error"]["field"] == "resumable"


class User:
    """A principal the way auth libraries hand them out: a plain object, with no JSON form."""

    def __init__(self, name: str) -> None:
        self.name = name


async def test_a_principal_with_no_json_form_is_a_clear_500_at_the_first_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from streamkit import aisdk

    got: list[Any] = []

    def agent(run: RunInput) -> Any:
        got.append(run.principal)
        return scripted()

    def by_object(request: Request) -> User:
        return User("alice")

    resumable = StreamOptions(authorize=by_object, resumable=Resumable(MemoryStore()))
    app = Starlette(
        routes=[
            *aisdk.routes(agent, path="/chat", options=resumable),
            *agui.routes(agent, path="/agui", options=resumable),
            *aisdk.routes(agent, path="/plain", options=StreamOptions(authorize=by_object)),
        ]
    )
    chat = {"id": "c1", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
    caplog.set_level("ERROR", logger="streamkit")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answers = [
            await client.post("/chat", json=chat),
            await client.get("/chat/c1/stream"),
            await client.delete("/chat/c1/stream"),
            await client.post("/agui", json=agui_body("t1")),
            await client.post("/agui/reattach", json={"threadId": "t1"}),
            await client.post("/agui/cancel", json={"threadId": "t1"}),
        ]
        plain = await client.post("/plain", json=chat)
    for answer in answers:
        assert answer.status_code == 500, answer.text
        error = answer.json()["error"]
        assert error["field"] == "authorize"
        assert "authorize hook" in error["message"] and "User" in error["message"]
    lines = [r for r in caplog.records if r.name.startswith("streamkit")]
    assert len(lines) == len(answers)
    assert all(r.exc_info is None and "User" in r.getMessage() and "owner=" in r.getMessage() for r in lines)
    # Where only the agent sees the principal, any object will do.
    assert plain.status_code == 200 and '"type":"finish"' in plain.text
    assert len(got) == 1 and isinstance(got[0], User)  # no agent was called for an owner that cannot be told


async def test_an_owner_function_maps_principals_with_no_json_form() -> None:
    from streamkit import aisdk

    keeper = Resumable(MemoryStore(), owner=lambda user: user.name)
    options = StreamOptions(authorize=lambda request: User("alice"), resumable=keeper)
    app = Starlette(routes=aisdk.routes(lambda run: scripted(), path="/chat", options=options))
    chat = {"id": "c1", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        answer = await client.post("/chat", json=chat)
    assert answer.status_code == 200 and '"type":"finish"' in answer.text
