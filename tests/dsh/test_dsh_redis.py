"""The dialect's sessions in Redis (a real ``redis-server``): two workers serving one console, the second
continuing the first's conversation; a worker restarted and the history kept; status, a busy agent id and
cancel across workers (with resumable runs too); a dead worker's lease; the bounds per principal and the
expiry; Redis going away (a JSON 503 naming ``sessions``, a run whose history could not be kept ends with
``error``); and, as property tests, the same bounds behaviour as the memory store for any sequence of runs."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from streamkit import dsh
from streamkit.dsh import parse_sse
from streamkit.dsh.redis import RedisSessions, SessionLost
from streamkit.events import ChatEvent, Message, RunFinished, RunInput, RunStarted, TextDelta, TextPart
from streamkit.http import HTTPError, api_keys
from streamkit.serve import StreamOptions
from streamkit.store import StoreLimits
from streamkit.store.redis import RedisStore
from tests.store.processes import RedisServer
from tests.support.server import LiveServer

ALICE = {"x-api-key": "k-alice"}
BOB = {"x-api-key": "k-bob"}
KEYS = api_keys({"k-alice": "alice", "k-bob": "bob"})
LEASE = 1.0


class Console:
    """The agent both workers serve: it answers ``you said: <message>`` and records every run's input; with
    ``gate`` set, it writes ``first `` and waits until the test opens the gate (or the run is stopped)."""

    def __init__(self) -> None:
        self.runs: list[RunInput] = []
        self.go = threading.Event()
        self.closed: list[str] = []

    async def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        self.runs.append(run)
        try:
            yield RunStarted()
            text = run.messages[-1].text
            if text == "wait":
                yield TextDelta(id="t", delta="first ")
                while not self.go.is_set():
                    await asyncio.sleep(0.01)
            yield TextDelta(id="t", delta=f"you said: {text}")
            yield RunFinished()
        finally:
            self.closed.append(run.run_id)


def worker(
    agent: Any, url: str, prefix: str, *, resumable: bool = False, **options: Any
) -> tuple[Starlette, RedisSessions]:
    """One worker's app: its own Redis client (a store, shared by its sessions and resumable runs)."""
    store = RedisStore.from_url(url, prefix=prefix, limits=StoreLimits(lease=LEASE))
    sessions = RedisSessions(store, **options)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await sessions.aclose()
        await store.aclose()

    stream = StreamOptions(authorize=KEYS, resumable=store if resumable else None)
    return Starlette(routes=dsh.routes(agent, sessions=sessions, options=stream), lifespan=lifespan), sessions


def serve(live_server: Any, app: Starlette) -> str:
    return str(live_server(app, lifespan="on").url) + "/api/agent"


@pytest.fixture
def prefix() -> str:
    return f"d{uuid.uuid4().hex[:10]}"


def texts(run: RunInput) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in run.messages]


def test_two_workers_serve_one_console_and_a_restart_keeps_the_history(
    live_server: Any, redis_url: str, prefix: str
) -> None:
    console = Console()
    with (
        LiveServer(worker(console, redis_url, prefix)[0], lifespan="on") as server_a,
        LiveServer(worker(console, redis_url, prefix)[0], lifespan="on") as server_b,
        httpx.Client(timeout=10) as client,
    ):
        a, b = server_a.url + "/api/agent", server_b.url + "/api/agent"
        first = client.post(a + "/message", json={"agentId": "c1", "message": "one"}, headers=ALICE)
        assert first.status_code == 200 and first.json()["content"] == "you said: one"
        second = client.post(b + "/message", json={"agentId": "c1", "message": "two"}, headers=ALICE)
        assert second.status_code == 200
        # The second worker's run continued the first's conversation.
        assert texts(console.runs[-1]) == [("user", "one"), ("assistant", "you said: one"), ("user", "two")]
        assert second.json()["done"]["messages"][-1]["content"] == "you said: two"
        assert client.get(a + "/c1/status", headers=ALICE).json() == {
            "agentId": "c1",
            "status": "idle",
            "messages": 4,
            "runs": 2,
        }
        # Principals stay apart on Redis too.
        other = client.post(b + "/message", json={"agentId": "c1", "message": "mine"}, headers=BOB)
        assert texts(console.runs[-1]) == [("user", "mine")] and other.status_code == 200

    # Both workers stopped (their lifespans closed their sessions); a new one on the same Redis has the history.
    c = serve(live_server, worker(console, redis_url, prefix)[0])
    with httpx.Client(timeout=10) as client:
        assert client.get(c + "/c1/status", headers=ALICE).json()["messages"] == 4
        with client.stream("POST", c + "/stream", json={"agentId": "c1", "message": "three"}, headers=ALICE) as r:
            body = r.read()
    assert [f["event"] for f in parse_sse(body)] == ["meta", "chunk", "done"]
    assert [t for _, t in texts(console.runs[-1])] == ["one", "you said: one", "two", "you said: two", "three"]


def read_in_thread(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[threading.Thread, list[bytes]]:
    """Stream a POST in a thread until it ends; the thread and the body's chunks."""
    chunks: list[bytes] = []
    started = threading.Event()

    def run() -> None:
        with httpx.stream("POST", url, json=body, headers=headers, timeout=20) as response:
            for chunk in response.iter_raw():
                chunks.append(chunk)
                started.set()
        started.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10)
    return thread, chunks


def wait_for(check: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("resumable", [False, True])
def test_status_busy_and_cancel_reach_the_run_on_another_worker(
    live_server: Any, redis_url: str, prefix: str, resumable: bool
) -> None:
    console = Console()
    a = serve(live_server, worker(console, redis_url, prefix, resumable=resumable)[0])
    b = serve(live_server, worker(console, redis_url, prefix, resumable=resumable)[0])
    thread, chunks = read_in_thread(a + "/stream", {"agentId": "c2", "message": "wait"}, ALICE)
    with httpx.Client(timeout=10) as client:
        status = client.get(b + "/c2/status", headers=ALICE).json()
        assert status["status"] == "running" and status["runId"] == console.runs[-1].run_id
        assert isinstance(status["startedAt"], int) and abs(status["startedAt"] / 1000 - time.time()) < 60
        busy = client.post(b + "/message", json={"agentId": "c2", "message": "again"}, headers=ALICE)
        assert busy.status_code == 409 and busy.json()["error"]["field"] == "agentId"
        assert client.post(b + "/c2/cancel", headers=BOB).status_code == 404  # not bob's run
        if resumable:  # the run is read again on the other worker, and cancelled from there
            with client.stream("GET", b + "/c2/stream", headers=ALICE) as again:
                assert again.status_code == 200
                assert client.post(b + "/c2/cancel", headers=ALICE).status_code == 204
                resumed = again.read()
            assert parse_sse(resumed)[-1]["data"]["finishReason"] == "aborted"
        else:
            assert client.post(b + "/c2/cancel", headers=ALICE).status_code == 204
        thread.join(10)
        assert not thread.is_alive()
        ending = parse_sse(b"".join(chunks))[-1]
        assert ending["event"] == "done" and ending["data"]["finishReason"] == "aborted"
        assert console.closed[-1] == console.runs[-1].run_id  # the agent's finally ran, on worker A
        wait_for(lambda: client.get(b + "/c2/status", headers=ALICE).json()["status"] == "idle")
        assert client.post(b + "/c2/cancel", headers=ALICE).status_code == 404
        # The aborted run's conversation is kept, and the agent id serves the next message anywhere.
        nxt = client.post(b + "/message", json={"agentId": "c2", "message": "next"}, headers=ALICE)
        assert nxt.status_code == 200
        assert texts(console.runs[-1]) == [("user", "wait"), ("assistant", "first "), ("user", "next")]


async def test_a_dead_workers_run_frees_its_agent_id_when_its_lease_lapses(redis_url: str, prefix: str) -> None:
    store = RedisStore.from_url(redis_url, prefix=prefix)
    dead, alive = RedisSessions(store, lease=0.3), RedisSessions(store, lease=0.3)
    try:
        run = await dead.start("alice", "a")
        await dead.aclose()  # its heartbeats stop, as when the worker dies
        with pytest.raises(HTTPError) as info:
            await alive.start("alice", "a")
        assert info.value.status == 409
        await asyncio.sleep(0.5)
        assert (await alive.status("alice", "a"))["status"] == "idle"
        assert not await alive.cancel("alice", "a")
        taken = await alive.start("alice", "a")
        with pytest.raises(SessionLost):  # the old run comes back: its history is not kept over the new one's
            await dead.finish(run, [Message(id="old", role="user", parts=[TextPart(text="old")])])
        await alive.finish(taken, [Message(id="new", role="user", parts=[TextPart(text="new")])])
        assert [m.id for m in await alive.history("alice", "a")] == ["new"]
        # A run that keeps beating holds its agent id past the lease.
        held = await alive.start("alice", "b")
        await asyncio.sleep(0.6)
        assert (await alive.status("alice", "b"))["status"] == "running"
        await alive.finish(held, None)
        assert (await alive.status("alice", "b"))["status"] == "idle"
    finally:
        await alive.aclose()
        await store.aclose()


def message(mid: str, size: int = 10) -> Message:
    return Message(id=mid, role="user", parts=[TextPart(text="x" * size)])


async def test_bounds_per_principal_and_expiry(redis_url: str, prefix: str) -> None:
    store = RedisStore.from_url(redis_url, prefix=prefix)
    sessions = RedisSessions(
        store, max_agents_per_principal=3, max_messages=4, max_history_bytes=2_000, max_principal_bytes=5_000
    )
    try:
        run = await sessions.start("alice", "a")
        await sessions.finish(run, [message(str(i), 300) for i in range(10)])
        kept = await sessions.history("alice", "a")
        assert [m.id for m in kept] == ["6", "7", "8", "9"]  # the newest within max_messages and the bytes
        for agent in ("b", "c", "d"):
            run = await sessions.start("alice", agent)
            await sessions.finish(run, [message(agent)])
        assert (await sessions.status("alice", "a"))["runs"] == 0  # the least recently used went
        assert [(await sessions.status("alice", x))["runs"] for x in "bcd"] == [1, 1, 1]
        # A running conversation is never evicted: over the bound, the idle ones go.
        running = [await sessions.start("bob", x) for x in ("p", "q", "r", "s")]
        assert {(await sessions.status("bob", x))["status"] for x in "pqrs"} == {"running"}
        await sessions.finish(running[0], [])
        assert (await sessions.status("bob", "p"))["runs"] == 0
        for run in running[1:]:
            await sessions.finish(run, [message(run.agent_id, 1_700)])
        assert [(await sessions.status("bob", x))["messages"] for x in "qrs"] == [0, 1, 1]  # 5,000 bytes for bob
        assert (await sessions.status("alice", "d"))["runs"] == 1  # alice's untouched
    finally:
        await sessions.aclose()
        await store.aclose()
    brief = RedisSessions.from_url(redis_url, prefix=prefix, ttl=0.3, name="brief")
    try:
        run = await brief.start("alice", "a")
        await brief.finish(run, [message("m")])
        assert len(await brief.history("alice", "a")) == 1
        await asyncio.sleep(0.5)
        assert await brief.history("alice", "a") == [] and (await brief.status("alice", "a"))["runs"] == 0
    finally:
        await brief.aclose()


def test_redis_going_away_is_a_503_naming_sessions_and_an_unkept_history_ends_with_error(
    live_server: Any, prefix: str
) -> None:
    redis = RedisServer()
    redis.start()
    try:
        console = Console()
        url = serve(live_server, worker(console, redis.url, prefix)[0])
        with httpx.Client(timeout=30) as client:
            assert client.post(url + "/message", json={"agentId": "f", "message": "one"}, headers=ALICE).is_success
            thread, chunks = read_in_thread(url + "/stream", {"agentId": "f", "message": "wait"}, ALICE)
            redis.kill()
            console.go.set()  # the run ends while Redis is away: its history cannot be kept
            thread.join(20)
            frames = parse_sse(b"".join(chunks))
            assert [f["event"] for f in frames] == ["meta", "chunk", "chunk", "error"]
            assert frames[-1]["data"]["code"] == "session_unsaved"
            for method, path, body in (
                ("POST", "/stream", {"agentId": "f", "message": "two"}),
                ("POST", "/message", {"agentId": "f", "message": "two"}),
                ("GET", "/f/status", None),
                ("POST", "/f/cancel", None),
            ):
                refused = client.request(method, url + path, json=body, headers=ALICE)
                assert refused.status_code == 503, (path, refused.text)
                assert refused.json()["error"]["field"] == "sessions"
            redis.start()  # back, empty (no persistence): new conversations work
            again = client.post(url + "/message", json={"agentId": "f", "message": "three"}, headers=ALICE)
            assert again.status_code == 200 and texts(console.runs[-1]) == [("user", "three")]
    finally:
        redis.stop()


# -- the same bounds as the memory store -----------------------------------------------------------------------

PRINCIPALS = ("alice", "bob")
AGENTS = ("a", "b", "c", "d")

operations = st.lists(
    st.one_of(
        st.tuples(st.just("start"), st.sampled_from(PRINCIPALS), st.sampled_from(AGENTS)),
        st.tuples(st.just("finish"), st.integers(0, 3), st.integers(0, 5), st.sampled_from([5, 120, 400])),
        st.tuples(st.just("cancel"), st.sampled_from(PRINCIPALS), st.sampled_from(AGENTS)),
    ),
    max_size=25,
)

BOUNDS: dict[str, Any] = {
    "max_agents_per_principal": 3,
    "max_messages": 4,
    "max_history_bytes": 900,
    "max_principal_bytes": 1_500,
}


def comparable(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k not in ("runId", "startedAt")}


async def replay(url: str, ops: list[tuple[Any, ...]]) -> None:
    memory = dsh.Sessions(max_agents=10**6, max_bytes=10**12, **BOUNDS)
    store = RedisStore.from_url(url, prefix=f"p{uuid.uuid4().hex[:10]}")
    redis = RedisSessions(store, ttl=600, lease=3600, **BOUNDS)  # no lease lapses however slow the machine
    open_runs: list[tuple[dsh.Run, dsh.Run]] = []
    try:
        for step, op in enumerate(ops):
            if op[0] == "start":
                outcomes: list[Any] = []
                for sessions in (memory, redis):
                    try:
                        outcomes.append(await sessions.start(op[1], op[2]))
                    except HTTPError as exc:
                        outcomes.append(exc.status)
                m, r = outcomes
                assert type(m) is type(r), (step, op, outcomes)
                if isinstance(m, dsh.Run) and isinstance(r, dsh.Run):
                    assert m.history == r.history, (step, op)
                    open_runs.append((m, r))
            elif op[0] == "finish" and open_runs:
                m, r = open_runs.pop(op[1] % len(open_runs))
                history = None if op[2] == 0 else [message(f"{m.agent_id}{i}", op[3]) for i in range(op[2] - 1)]
                await memory.finish(m, history)
                await redis.finish(r, history)
            elif op[0] == "cancel":
                assert await memory.cancel(op[1], op[2]) == await redis.cancel(op[1], op[2]), (step, op)
            for principal in PRINCIPALS:
                for agent in AGENTS:
                    expected = comparable(await memory.status(principal, agent))
                    assert comparable(await redis.status(principal, agent)) == expected, (step, op, principal, agent)
                    assert await redis.history(principal, agent) == await memory.history(principal, agent)
    finally:
        for _, r in open_runs:
            await redis.finish(r, None)
        await redis.aclose()
        await store.aclose()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_the_redis_store_bounds_conversations_as_the_memory_store_does(redis_url: str, ops: list[Any]) -> None:
    asyncio.run(replay(redis_url, ops))
