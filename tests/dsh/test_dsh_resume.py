"""The dialect's stream outliving its request, through the options every protocol shares: a resumable run
(in-memory store, a live uvicorn server) is read again at ``GET {path}/{agentId}/stream`` after a disconnect,
from its ``meta`` or after a ``Last-Event-ID``, and still stops on ``cancel``; a detached run goes on to its
end after the client left, and its conversation is kept."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.applications import Starlette

from streamkit import dsh
from streamkit.dsh import fold, parse_sse
from streamkit.events import ChatEvent, RunFinished, RunInput, RunStarted, TextDelta
from streamkit.http import api_keys
from streamkit.serve import StreamOptions
from streamkit.store import MemoryStore

ALICE = {"x-api-key": "k-alice"}
BOB = {"x-api-key": "k-bob"}
KEYS = api_keys({"k-alice": "alice", "k-bob": "bob"})


class Gate:
    """An agent that writes ``first ``, waits until the test opens the gate, then writes ``second`` and ends."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.closed: list[str] = []

    async def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextDelta(id="t", delta="first ")
            while not self.go.is_set():
                await asyncio.sleep(0.01)
            yield TextDelta(id="t", delta="second")
            yield RunFinished()
        finally:
            self.closed.append(run.thread_id)


def leave_after_first(client: httpx.Client, url: str, agent_id: str) -> int:
    """POST a run, read it up to the stored entry holding ``first `` and drop the connection; that entry's id."""
    with client.stream("POST", url + "/stream", json={"agentId": agent_id, "message": "go"}, headers=ALICE) as r:
        assert r.status_code == 200
        buffer = b""
        for chunk in r.iter_raw():
            buffer += chunk
            found = re.search(rb'"first ".*?\nid: (\d+)\n\n', buffer, re.S)
            if found:
                return int(found.group(1))
    raise AssertionError(f"the stream ended early: {buffer!r}")


def test_a_resumable_stream_resumes_after_a_disconnect(live_server: Any) -> None:
    gate = Gate()
    options = StreamOptions(authorize=KEYS, resumable=MemoryStore())
    url = live_server(Starlette(routes=dsh.routes(gate, options=options))).url + "/api/agent"
    with httpx.Client(timeout=10) as client:
        assert client.get(url + "/a1/stream", headers=ALICE).status_code == 204
        assert client.get(url + "/a1/stream").status_code == 401
        seen = leave_after_first(client, url, "a1")
        # The client has gone; the run goes on (waiting at the gate) for whoever comes back.
        assert client.get(url + "/a1/status", headers=ALICE).json()["status"] == "running"
        assert client.get(url + "/a1/stream", headers=BOB).status_code == 204
        wrong = client.get(url + "/a1/stream", headers={**ALICE, "last-event-id": "x"})
        assert wrong.status_code == 400 and wrong.json()["error"]["field"] == "last-event-id"
        after = {**ALICE, "last-event-id": str(seen)}
        with (
            client.stream("GET", url + "/a1/stream", headers=ALICE) as whole,
            client.stream("GET", url + "/a1/stream", headers=after) as tail,
        ):
            assert whole.status_code == 200 and tail.status_code == 200
            assert whole.headers["content-type"].startswith("text/event-stream")
            gate.go.set()
            whole_body, tail_body = whole.read(), tail.read()
        assert client.get(url + "/a1/stream", headers=ALICE).status_code == 204
        status = client.get(url + "/a1/status", headers=ALICE).json()
    frames = parse_sse(whole_body)
    assert [f["event"] for f in frames] == ["meta", "chunk", "chunk", "done"]
    assert frames[0]["data"]["agentId"] == "a1" and fold(frames).text == "first second"
    assert parse_sse(tail_body) == frames[-2:]
    assert gate.closed == ["a1"]
    assert status["status"] == "idle" and status["messages"] == 2 and status["runs"] == 1


def test_cancel_stops_a_resumable_run(live_server: Any) -> None:
    gate = Gate()
    options = StreamOptions(authorize=KEYS, resumable=MemoryStore())
    url = live_server(Starlette(routes=dsh.routes(gate, options=options))).url + "/api/agent"
    with httpx.Client(timeout=10) as client:
        leave_after_first(client, url, "a2")
        with client.stream("GET", url + "/a2/stream", headers=ALICE) as again:
            assert again.status_code == 200
            assert client.post(url + "/a2/cancel", headers=ALICE).status_code == 204
            body = again.read()
    ending = parse_sse(body)[-1]
    assert ending["event"] == "done" and ending["data"]["finishReason"] == "aborted"
    assert gate.closed == ["a2"]


def test_a_detached_run_goes_on_after_the_client_leaves(live_server: Any) -> None:
    done = threading.Event()
    cancelled = threading.Event()

    async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            for i in range(200):
                yield TextDelta(id="t", delta=f"{i} " * 20)
                await asyncio.sleep(0.002)
            yield RunFinished()
            done.set()
        except BaseException:
            cancelled.set()
            raise

    options = StreamOptions(detach_runs=True, max_buffer_bytes=8192)
    url = live_server(Starlette(routes=dsh.routes(agent, options=options))).url + "/api/agent"
    with httpx.stream("POST", url + "/stream", json={"agentId": "d1", "message": "go"}) as response:
        next(response.iter_raw())
    assert done.wait(10)
    assert not cancelled.is_set()
    deadline = time.monotonic() + 5
    while (status := httpx.get(url + "/d1/status").json())["status"] != "idle" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert status["status"] == "idle" and status["messages"] == 2  # the run's conversation is kept
