"""Resumable runs over both stores: detached production, replay and resume, cancel, bounds, ownership.

A small stand-in protocol keeps these tests about the run machinery; the real protocols (and the real
clients) are exercised by the two-worker tests.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from starlette.requests import Request

from streamkit.events import ChatEvent, RunFinished, RunStarted, TextDelta, TextEnd, TextStart
from streamkit.frames import SHUTDOWN_TEXT, MapperBase, encode_frames, frame_end
from streamkit.http import HTTPError
from streamkit.resumable import (
    TOO_LARGE_TEXT,
    Resumable,
    ResumePoint,
    endings_from_mapper,
    last_event_id,
    principal_key,
)
from streamkit.store import MemoryStore, StoreLimits, StreamStore
from streamkit.store.redis import RedisStore

DEAD = b'data: {"e":"dead"}\n\n'
TRAILER = b"data: [END]\n\n"
SCOPE = "test:/chat"


class Toy(MapperBase):
    """A stand-in protocol mapping: one frame per event, explicit close/fail/abort frames."""

    def __init__(self) -> None:
        self.open: list[str] = []

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        if event.type == "text-start":
            self.open.append(event.id)
        if event.type == "text-end":
            self.open.remove(event.id)
        if event.type == "run-aborted":
            return [{"e": "end", "id": i} for i in self.open] + [{"e": "aborted"}]
        out: dict[str, Any] = {"e": event.type}
        if event.type == "text-delta":
            out["d"] = event.delta
        return [out]

    def close(self) -> list[dict[str, Any]]:
        return [{"e": "close"}]

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        return [{"e": "fail", "m": message}]


class Agent:
    """Yields ``n`` deltas, ``pause`` seconds apart; records whether its ``finally`` ran."""

    def __init__(self, n: int = 5, pause: float = 0.0, size: int = 1, stall_after: int | None = None) -> None:
        self.n, self.pause, self.size, self.stall_after = n, pause, size, stall_after
        self.closed = asyncio.Event()
        self.emitted = 0

    async def __call__(self) -> AsyncIterator[ChatEvent]:
        try:
            yield RunStarted()
            yield TextStart(id="t")
            for i in range(self.n):
                if i == self.stall_after:
                    await asyncio.sleep(3600)
                if self.pause:
                    await asyncio.sleep(self.pause)
                yield TextDelta(id="t", delta=str(i) * self.size)
                self.emitted += 1
            yield TextEnd(id="t")
            yield RunFinished()
        finally:
            self.closed.set()


Workers = Callable[..., tuple[Resumable, Resumable]]


@pytest.fixture(params=["memory", "redis"])
async def workers(request: pytest.FixtureRequest) -> AsyncIterator[Workers]:
    """``workers(**limits)`` -> two Resumables sharing one store (two clients of one Redis for redis)."""
    opened: list[Resumable] = []

    def factory(**limits: Any) -> tuple[Resumable, Resumable]:
        lim = StoreLimits(**limits)
        if request.param == "memory":
            store = MemoryStore(lim)
            pair = (Resumable(store, heartbeat=0.05), Resumable(store, heartbeat=0.05))
        else:
            url = request.getfixturevalue("redis_url")
            prefix = f"t{uuid.uuid4().hex[:12]}"
            a: StreamStore = RedisStore.from_url(url, limits=lim, prefix=prefix, block=0.2)
            b: StreamStore = RedisStore.from_url(url, limits=lim, prefix=prefix, block=0.2)
            pair = (Resumable(a, heartbeat=0.05), Resumable(b, heartbeat=0.05))
        opened.extend(pair)
        return pair

    yield factory
    for r in opened:
        await r.aclose()


def frames_of(data: bytes) -> list[dict[str, Any]]:
    out = []
    for block in data.split(b"\n\n"):
        lines = [line for line in block.split(b"\n") if line.startswith(b"data: ")]
        for line in lines:
            payload = line[6:]
            out.append({"e": "[END]"} if payload == b"[END]" else json.loads(payload))
    return out


def ids_of(data: bytes) -> list[str]:
    """The SSE ids in ``data``, in order."""
    return [line[4:].decode() for line in data.split(b"\n") if line.startswith(b"id: ")]


def entry_ids(data: bytes) -> list[int]:
    """The ids of the last frames of stored entries (the others are ``<seq>.<k>``)."""
    return [int(i) for i in ids_of(data) if "." not in i]


def point(ident: str) -> ResumePoint:
    """Where a ``Last-Event-ID: <ident>`` resumes."""
    request = Request({"type": "http", "headers": [(b"last-event-id", ident.encode())], "method": "GET", "path": "/"})
    found = last_event_id(request)
    assert found is not None
    return found


async def start(r: Resumable, agent: Agent, owner: str = "alice", chat: str | None = "c1") -> tuple[str, Toy]:
    mapper = Toy()
    frames = encode_frames(agent(), mapper, trailer=TRAILER)
    run = await r.start(
        frames, endings_from_mapper(mapper, dead=DEAD, trailer=TRAILER), owner=owner, scope=SCOPE, chat=chat
    )
    return run, mapper


async def read_all(r: Resumable, run: str, after: int | ResumePoint = 0) -> bytes:
    return b"".join([chunk async for chunk in r.read(run, dead=DEAD, after=after)])


EXPECTED = (
    [{"e": "run-started"}, {"e": "text-start"}]
    + [{"e": "text-delta", "d": str(i)} for i in range(5)]
    + [{"e": "text-end"}, {"e": "run-finished"}, {"e": "close"}, {"e": "[END]"}]
)


async def test_a_run_is_produced_detached_and_read_back_with_ids(workers: Workers) -> None:
    a, _ = workers()
    agent = Agent(pause=0.01)
    run, _ = await start(a, agent)
    assert a.running == 1
    data = await asyncio.wait_for(read_all(a, run), 5)
    assert frames_of(data) == EXPECTED
    assert len(ids_of(data)) == len(EXPECTED)  # every frame has an id
    ids = entry_ids(data)
    assert ids == list(range(1, len(ids) + 1))
    assert data.endswith(b"\n\n") and agent.closed.is_set()
    await asyncio.sleep(0.05)
    assert a.running == 0
    info = await a.store.info(run)
    assert info is not None and info.status == "finished"


async def test_a_dropped_reader_does_not_stop_the_run_and_another_worker_replays_it(workers: Workers) -> None:
    a, b = workers()
    agent = Agent(n=20, pause=0.01)
    run, _ = await start(a, agent)
    first = b""
    async for chunk in a.read(run, dead=DEAD):
        first += chunk
        if b"text-delta" in chunk:
            break  # the client went away mid-text
    info = await b.find(SCOPE, "c1", "alice")
    assert info is not None and info.run == run and info.running
    full = await asyncio.wait_for(read_all(b, run), 5)
    assert frames_of(full)[-4:] == [{"e": "text-end"}, {"e": "run-finished"}, {"e": "close"}, {"e": "[END]"}]
    assert [f["d"] for f in frames_of(full) if "d" in f] == [str(i) for i in range(20)]
    assert full.startswith(first.rsplit(b"id: ", 1)[0])
    assert agent.emitted == 20
    assert await b.find(SCOPE, "c1", "alice") is None  # ended: no active run


async def test_resume_after_a_last_event_id_sends_each_frame_once(workers: Workers) -> None:
    a, b = workers()
    agent = Agent(n=30, pause=0.005)
    run, _ = await start(a, agent)
    head = b""
    async for chunk in a.read(run, dead=DEAD):
        head += chunk
        if entry_ids(head) and entry_ids(head)[-1] >= 3:
            break
    last = ids_of(head)[-1]
    tail = await asyncio.wait_for(read_all(b, run, after=point(last)), 5)
    whole = await read_all(b, run)
    assert frames_of(head + tail) == frames_of(whole)
    # From any frame's id, each later frame comes exactly once, whether or not it ended a stored batch.
    blocks = [block + b"\n\n" for block in whole.split(b"\n\n")[:-1]]
    assert len(blocks) == len(ids_of(whole)) == len(frames_of(whole))
    assert any("." in i for i in ids_of(whole))  # some batches held several frames
    for n, block in enumerate(blocks):
        rest = await read_all(b, run, after=point(ids_of(block)[0]))
        assert rest == b"".join(blocks[n + 1 :]), n


async def test_cancel_from_another_worker_ends_the_run_in_order(workers: Workers) -> None:
    a, b = workers()
    agent = Agent(n=1000, pause=0.01)
    run, _ = await start(a, agent)
    reader = asyncio.create_task(read_all(b, run))
    await asyncio.sleep(0.1)
    assert not await b.cancel(run, "mallory")  # only the owner may cancel
    assert await b.cancel(run, "alice")
    data = await asyncio.wait_for(reader, 5)
    await asyncio.wait_for(agent.closed.wait(), 5)
    frames = frames_of(data)
    assert frames[-3:] == [{"e": "end", "id": "t"}, {"e": "aborted"}, {"e": "[END]"}]
    assert 0 < agent.emitted < 1000
    assert not await b.cancel(run, "alice")  # already over


async def test_runs_belong_to_their_owner(workers: Workers) -> None:
    a, b = workers()
    run, _ = await start(a, Agent(n=100, pause=0.01), owner="alice")
    assert await b.find(SCOPE, "c1", "bob") is None
    assert await b.owned(run, "bob") is None
    assert await b.owned(run, "alice") is not None
    assert await b.find("other:/scope", "c1", "alice") is None
    assert await b.cancel(run, "alice")


async def test_a_new_run_on_the_same_chat_supersedes_the_old_one(workers: Workers) -> None:
    a, b = workers()
    old_agent = Agent(n=1000, pause=0.01)
    old, _ = await start(a, old_agent)
    new, _ = await start(b, Agent(n=3))
    await asyncio.wait_for(old_agent.closed.wait(), 5)
    assert frames_of(await read_all(a, old))[-2:] == [{"e": "aborted"}, {"e": "[END]"}]
    await read_all(b, new)
    other, _ = await start(a, Agent(n=2), owner="bob")  # another owner's chat of the same name is separate
    await read_all(a, other)


async def test_a_run_that_outgrows_the_store_ends_with_an_error(workers: Workers) -> None:
    a, _ = workers(max_bytes=2000)
    agent = Agent(n=100, pause=0.001, size=50)
    run, _ = await start(a, agent)
    data = await asyncio.wait_for(read_all(a, run), 5)
    assert frames_of(data)[-2:] == [{"e": "fail", "m": TOO_LARGE_TEXT}, {"e": "[END]"}]
    assert agent.closed.is_set() and agent.emitted < 100


async def test_shutdown_ends_this_workers_runs_with_the_shutdown_error(workers: Workers) -> None:
    a, b = workers()
    agent = Agent(n=1000, pause=0.01)
    run, _ = await start(a, agent)
    reader = asyncio.create_task(read_all(b, run))
    await asyncio.sleep(0.05)
    await a.aclose()
    data = await asyncio.wait_for(reader, 5)
    assert frames_of(data)[-2:] == [{"e": "fail", "m": SHUTDOWN_TEXT}, {"e": "[END]"}]
    assert agent.closed.is_set()


class Frozen(Resumable):
    """A worker that does not keep its leases (as a frozen or killed process would)."""

    def _hold(self, run: str, stop: Any) -> Any:
        async def release() -> None:
            pass

        return release


async def test_a_silent_writer_is_declared_dead_by_its_reader(workers: Workers) -> None:
    _, b = workers(lease=0.3)
    a = Frozen(b.store)
    agent = Agent(n=1000, pause=0.01, stall_after=4)
    run, _ = await start(a, agent)
    data = await asyncio.wait_for(read_all(b, run), 5)
    frames = frames_of(data)
    assert [f["d"] for f in frames if "d" in f] == ["0", "1", "2", "3"]
    assert frames[-1] == {"e": "dead"}
    ids = entry_ids(data)
    assert ids == list(range(1, len(ids) + 1))
    info = await b.store.info(run)
    assert info is not None and info.status == "abandoned"
    (task,) = a._tasks
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert frames_of(await read_all(b, run)) == frames  # the frozen worker could not add to it


def test_last_event_id_header() -> None:
    def req(value: str | None) -> Request:
        headers = [] if value is None else [(b"last-event-id", value.encode())]
        return Request({"type": "http", "headers": headers, "method": "GET", "path": "/"})

    assert last_event_id(req(None)) is None
    assert last_event_id(req("")) is None
    assert last_event_id(req(" 17 ")) == ResumePoint(17)
    assert last_event_id(req("0")) == ResumePoint(0)
    assert last_event_id(req("4.2")) == ResumePoint(3, 2)  # after the second frame of entry 4
    for bad in ("x", "-1", "1.5.2", "0.1", "3.0", "+2", "1_0", "2.", ".2", "٣"):
        with pytest.raises(HTTPError) as info:
            last_event_id(req(bad))
        assert info.value.status == 400 and info.value.field == "last-event-id"


def test_principal_key_is_stable_and_distinguishes_principals() -> None:
    assert principal_key({"sub": "a", "n": 1}) == principal_key({"sub": "a", "n": 1.0})
    assert principal_key("alice") != principal_key("bob")
    assert principal_key(None) != principal_key("")
    assert len(principal_key(None)) == 64


class Failing(MemoryStore):
    """A memory store that, once :attr:`down`, fails every call as an unreachable Redis would."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("Error 111 connecting to the store. Connection refused.")

    async def append(self, run: str, frames: Any) -> int:
        self._check()
        return await super().append(run, frames)

    async def finish(self, run: str, closing: bytes = b"") -> bool:
        self._check()
        return await super().finish(run, closing)

    async def heartbeat(self, run: str) -> Any:
        self._check()
        return await super().heartbeat(run)

    async def wait_cancel(self, run: str, timeout: float) -> bool:
        self._check()
        return await super().wait_cancel(run, min(timeout, 0.05))

    async def read(self, run: str, after: int = 0, *, dead: bytes = b"") -> AsyncIterator[tuple[int, bytes]]:
        entries = super().read(run, after, dead=dead)
        while True:
            self._check()
            step = asyncio.ensure_future(anext(entries))
            while not step.done():  # a follower's connection is reset as soon as the store goes away
                await asyncio.wait([step], timeout=0.01)
                if self.down and not step.done():
                    step.cancel()
                    await asyncio.wait([step])
                    self._check()
            try:
                yield step.result()
            except StopAsyncIteration:
                return


async def test_a_store_that_fails_stops_the_run_and_ends_every_reader(caplog: pytest.LogCaptureFixture) -> None:
    store = Failing()
    a = Resumable(store, heartbeat=0.05)
    agent = Agent(n=1000, pause=0.01)
    run, _ = await start(a, agent)
    got: list[bytes] = []

    async def follow() -> bytes:
        data = b""
        async for chunk in a.read(run, dead=DEAD):
            data += chunk
            got.append(chunk)
        return data

    readers = [asyncio.create_task(follow()) for _ in range(2)]
    while agent.emitted < 5:
        await asyncio.sleep(0.01)
    caplog.set_level("DEBUG", logger="streamkit")
    store.down = True
    bodies = await asyncio.wait_for(asyncio.gather(*readers), 5)
    for body in bodies:
        assert body.endswith(DEAD) and frames_of(body)[-1] == {"e": "dead"}
        assert not body.endswith(b"id: " + ids_of(body)[-1].encode() + b"\n\n")  # the ending is not kept: no id
    await asyncio.wait_for(agent.closed.wait(), 5)  # the run stopped: its agent was closed
    assert 5 <= agent.emitted < 1000
    await asyncio.sleep(0.1)
    assert a.running == 0
    warnings = [r for r in caplog.records if r.levelname == "WARNING" and r.name.startswith("streamkit")]
    assert len(warnings) == 1 and "the run is stopped" in warnings[0].getMessage()
    assert all(r.exc_info is None for r in caplog.records)
    # Once the store is back, new runs work.
    store.down = False
    again, _ = await start(a, Agent(n=3), chat="c2")
    assert frames_of(await asyncio.wait_for(read_all(a, again), 5))[-1] == {"e": "[END]"}


class Heavy(Toy):
    """The stand-in protocol with its text deltas mapped off the event loop: a long delta's frame is written in
    pieces (several chunks)."""

    @staticmethod
    def offload(event: ChatEvent) -> bool:
        return event.type == "text-delta"


async def test_a_frame_written_in_pieces_is_stored_whole(workers: Workers) -> None:
    a, b = workers()
    agent = Agent(n=3, size=300_000)  # each delta's frame is longer than a chunk of a large frame
    mapper = Heavy()
    chunks = [c async for c in encode_frames(Agent(n=3, size=300_000)(), Heavy(), trailer=TRAILER)]
    assert any(not frame_end(c) for c in chunks)  # the frames do come in pieces
    frames = encode_frames(agent(), mapper, trailer=TRAILER)
    run = await a.start(
        frames, endings_from_mapper(mapper, dead=DEAD, trailer=TRAILER), owner="alice", scope=SCOPE, chat="c1"
    )
    data = await asyncio.wait_for(read_all(a, run), 10)
    assert data == _with_every_id(b"".join(chunks), data)
    expected = [{"e": "run-started"}, {"e": "text-start"}] + [
        {"e": "text-delta", "d": str(i) * 300_000} for i in range(3)
    ]
    assert frames_of(data)[:5] == expected
    ids = ids_of(data)
    assert len(ids) == len(frames_of(data))  # every frame has an id: none was cut
    for k, ident in enumerate(ids):
        rest = await asyncio.wait_for(read_all(b, run, point(ident)), 10)
        assert frames_of(rest) == frames_of(data)[k + 1 :]


def _with_every_id(plain: bytes, data: bytes) -> bytes:
    """``plain`` (the frames without ids) with the ids ``data`` carries put back, frame by frame."""
    out = []
    for block, ident in zip(plain.split(b"\n\n")[:-1], ids_of(data), strict=True):
        out.append(block + b"\nid: " + ident.encode() + b"\n\n")
    return b"".join(out)
