"""One contract, two backends: every StreamStore test runs on the in-memory store and on a real Redis.

Each test gets a ``store`` (the writer's handle) and a ``peer`` (a reader's handle: the same object for the
in-memory store, a second client on the same Redis for the Redis store, as another worker would have).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit.store import (
    MemoryStore,
    Release,
    RunClosed,
    RunTooLarge,
    StoreLimits,
    StoreWriter,
    StreamStore,
    hold_with_task,
)
from streamkit.store.redis import RedisStore

BACKENDS = ["memory", "redis"]
DEAD = b'data: {"type":"error","errorText":"lost"}\n\n'

Factory = Callable[..., tuple[StreamStore, StreamStore]]


@pytest.fixture(params=BACKENDS)
async def make(request: pytest.FixtureRequest) -> AsyncIterator[Factory]:
    """``make(**limits)`` -> ``(store, peer)`` on the parametrized backend, closed after the test."""
    opened: list[StreamStore] = []

    def factory(**limits: Any) -> tuple[StreamStore, StreamStore]:
        lim = StoreLimits(**limits)
        if request.param == "memory":
            store: StreamStore = MemoryStore(lim)
            opened.append(store)
            return store, store
        url = request.getfixturevalue("redis_url")
        prefix = f"t{uuid.uuid4().hex[:12]}"
        a = RedisStore.from_url(url, limits=lim, prefix=prefix, block=0.2)
        b = RedisStore.from_url(url, limits=lim, prefix=prefix, block=0.2)
        opened.extend([a, b])
        return a, b

    yield factory
    for store in opened:
        await store.aclose()


async def collect(store: StreamStore, run: str, after: int = 0, *, dead: bytes = DEAD) -> list[tuple[int, bytes]]:
    return [item async for item in store.read(run, after, dead=dead)]


async def test_create_refuses_a_duplicate_and_records_the_run(make: Factory) -> None:
    store, peer = make()
    assert await store.create("r1", owner="alice", chat="c1", meta={"messageId": "m1"})
    assert not await store.create("r1", owner="bob")
    info = await peer.info("r1")
    assert info is not None
    assert (info.run, info.owner, info.chat, info.status, info.cancelled, info.seq) == (
        "r1",
        "alice",
        "c1",
        "running",
        False,
        0,
    )
    assert dict(info.meta) == {"messageId": "m1"}
    assert info.running
    assert await peer.info("nope") is None


async def test_append_numbers_entries_and_read_replays_then_ends(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    assert await store.append("r", [b"data: 1\n\n"]) == 1
    assert await store.append("r", [b"data: 2\n\n", b"data: 3\n\n"]) == 2
    assert await store.finish("r", b"data: end\n\n")
    assert await collect(peer, "r") == [(1, b"data: 1\n\n"), (2, b"data: 2\n\ndata: 3\n\n"), (3, b"data: end\n\n")]
    assert await collect(peer, "r", 1) == [(2, b"data: 2\n\ndata: 3\n\n"), (3, b"data: end\n\n")]
    assert await collect(peer, "r", 3) == []
    info = await peer.info("r")
    assert info is not None and info.status == "finished" and info.seq == 3 and not info.running


async def test_finish_is_once_and_closes_the_run(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    assert await store.finish("r")
    assert not await store.finish("r", b"again")
    with pytest.raises(RunClosed):
        await store.append("r", [b"late"])
    assert await store.heartbeat("r") == "lost"
    assert not await store.cancel("r")
    assert await collect(peer, "r") == [(1, b"")]  # an empty end entry still ends the read


async def test_unknown_run(make: Factory) -> None:
    store, peer = make()
    assert await collect(peer, "ghost") == []
    with pytest.raises(RunClosed):
        await store.append("ghost", [b"x"])
    assert not await store.finish("ghost")
    assert await store.heartbeat("ghost") == "lost"
    assert not await peer.cancel("ghost")
    assert not await store.wait_cancel("ghost", 0.01)


async def test_readers_follow_live_frames_until_the_end(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    await store.append("r", [b"a"])
    readers = [asyncio.create_task(collect(peer, "r")) for _ in range(3)]
    late = asyncio.create_task(collect(peer, "r", 1))
    for i in range(5):
        await asyncio.sleep(0.02)
        await store.append("r", [f"f{i}".encode()])
        await store.heartbeat("r")
    await store.finish("r", b"z")
    expected = [(1, b"a")] + [(i + 2, f"f{i}".encode()) for i in range(5)] + [(7, b"z")]
    for reader in readers:
        assert await asyncio.wait_for(reader, 5) == expected
    assert await asyncio.wait_for(late, 5) == expected[1:]


async def test_a_dead_writer_is_detected_and_its_readers_get_the_terminal(make: Factory) -> None:
    store, peer = make(lease=0.4)
    await store.create("r", owner="o")
    await store.append("r", [b"x1"])
    start = time.monotonic()
    got = await asyncio.wait_for(collect(peer, "r"), 5)
    elapsed = time.monotonic() - start
    assert got == [(1, b"x1"), (2, DEAD)]
    assert elapsed < 0.4 + 0.5
    info = await peer.info("r")
    assert info is not None and info.status == "abandoned"
    # A second reader replays the same end, not a second terminal; the writer has lost the run.
    assert await collect(peer, "r", dead=b"other") == [(1, b"x1"), (2, DEAD)]
    with pytest.raises(RunClosed):
        await store.append("r", [b"late"])
    assert await store.heartbeat("r") == "lost"
    assert not await store.finish("r", b"late end")


async def test_heartbeats_keep_a_quiet_run_alive(make: Factory) -> None:
    store, peer = make(lease=0.3)
    await store.create("r", owner="o")
    reader = asyncio.create_task(collect(peer, "r"))
    for _ in range(10):
        await asyncio.sleep(0.1)
        assert await store.heartbeat("r") == "held"
    assert not reader.done()
    await store.finish("r", b"done")
    assert await asyncio.wait_for(reader, 5) == [(1, b"done")]


async def test_cancel_reaches_the_writer_from_another_handle(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    assert not await store.wait_cancel("r", 0.05)
    waiter = asyncio.create_task(store.wait_cancel("r", 10))
    await asyncio.sleep(0.1)
    asked = time.monotonic()
    assert await peer.cancel("r")
    assert await asyncio.wait_for(waiter, 5)
    assert time.monotonic() - asked < 0.5  # signalled, not polled
    assert await store.heartbeat("r") == "cancelled"
    assert await store.wait_cancel("r", 0.01)
    info = await peer.info("r")
    assert info is not None and info.cancelled and info.running  # the writer still ends it properly
    await store.append("r", [b"closing frames"])
    assert await store.finish("r")
    assert not await peer.cancel("r")


async def test_active_finds_the_chats_running_run(make: Factory) -> None:
    store, peer = make()
    assert await peer.active("chat") is None
    await store.create("r1", owner="o", chat="chat")
    assert await peer.active("chat") == "r1"
    await store.create("r2", owner="o", chat="chat")
    assert await peer.active("chat") == "r2"
    await store.finish("r2")
    assert await peer.active("chat") is None
    await store.create("r3", owner="o")
    assert await peer.active("chat") is None


async def test_ended_runs_expire_after_the_ttl(make: Factory) -> None:
    store, peer = make(ttl=0.3)
    await store.create("r", owner="o", chat="c")
    await store.append("r", [b"x"])
    await store.finish("r", b"y")
    assert await peer.info("r") is not None
    await asyncio.sleep(0.6)
    assert await peer.info("r") is None
    assert await collect(peer, "r") == []
    assert await peer.active("c") is None
    assert await store.create("r", owner="o2")  # the key is free again


async def test_a_run_is_bounded_in_bytes(make: Factory) -> None:
    store, peer = make(max_bytes=100)
    await store.create("r", owner="o")
    await store.append("r", [b"a" * 60])
    with pytest.raises(RunTooLarge):
        await store.append("r", [b"b" * 41])
    assert await store.append("r", [b"c" * 40]) == 2  # a refused append changes nothing
    assert await store.finish("r", b"e" * 500)  # the closing entry is always accepted
    assert [len(d) for _, d in await collect(peer, "r")] == [60, 40, 500]


async def test_a_run_is_bounded_in_frames(make: Factory) -> None:
    store, _ = make(max_frames=3)
    await store.create("r", owner="o")
    await store.append("r", [b"1", b"2"])
    with pytest.raises(RunTooLarge):
        await store.append("r", [b"3", b"4"])
    await store.append("r", [b"3"])
    with pytest.raises(RunTooLarge):
        await store.append("r", [b"4"])


async def test_the_writer_batches_frames_into_few_appends(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.05, max_bytes=1 << 20)
    frames = [f"data: {i}\n\n".encode() for i in range(500)]
    for f in frames:
        await writer.write(f)
    await asyncio.sleep(0.2)
    info = await peer.info("r")
    assert info is not None and info.seq == 1  # 500 writes, one append
    await writer.write(b"data: tail\n\n")
    assert await writer.finish(b"data: end\n\n")
    got = await collect(peer, "r")
    assert [seq for seq, _ in got] == [1, 2]
    assert b"".join(d for _, d in got) == b"".join(frames) + b"data: tail\n\ndata: end\n\n"


async def test_the_writer_flushes_at_max_bytes_and_keeps_order(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=10, max_bytes=100)
    frames = [bytes([65 + i % 26]) * 30 for i in range(40)]
    for f in frames:
        await writer.write(f)
    await writer.flush()
    info = await peer.info("r")
    assert info is not None and info.seq >= 5  # size-triggered, despite the 10 s interval
    assert await writer.finish()
    got = await collect(peer, "r")
    assert b"".join(d for _, d in got) == b"".join(frames)
    assert [s for s, _ in got] == list(range(1, len(got) + 1))


async def test_the_writer_reports_a_failed_append(make: Factory) -> None:
    store, peer = make(max_bytes=50)
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.01, max_bytes=1000)
    await writer.write(b"x" * 80)
    await asyncio.sleep(0.2)
    with pytest.raises(RunTooLarge):
        await writer.write(b"more")
    assert isinstance(writer.error, RunTooLarge)
    assert await writer.finish(b"the end")
    assert await collect(peer, "r") == [(1, b"the end")]


async def test_the_writer_sees_a_lost_run(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    assert await peer.finish("r", b"someone else ended it")
    writer = StoreWriter(store, "r", interval=0.01)
    await writer.write(b"x")
    await asyncio.sleep(0.1)
    with pytest.raises(RunClosed):
        await writer.write(b"y")
    assert not await writer.finish(b"z")


async def follow_slowly(store: StreamStore, seen: list[tuple[int, bytes]], pause: float) -> None:
    """Read run ``r`` to its end into ``seen``, pausing ``pause`` seconds after each entry (a slow reader)."""
    async for item in store.read("r", dead=DEAD):
        seen.append(item)
        await asyncio.sleep(pause)


async def test_a_slow_reader_misses_nothing(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    seen: list[tuple[int, bytes]] = []
    task = asyncio.create_task(follow_slowly(peer, seen, 0.001))
    for i in range(200):
        await store.append("r", [str(i).encode()])
    await store.finish("r", b"end")
    await asyncio.wait_for(task, 10)
    assert seen == [(i + 1, str(i).encode()) for i in range(200)] + [(201, b"end")]


async def test_redis_store_refuses_a_decoding_client(redis_url: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url, decode_responses=True)
    with pytest.raises(ValueError, match="decode"):
        RedisStore(client)
    await client.aclose()


async def test_redis_store_reads_with_a_resp3_client(redis_url: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url, protocol=3)
    store = RedisStore(client, prefix=f"t{uuid.uuid4().hex[:12]}")
    await store.create("r", owner="o", chat="c")
    await store.append("r", [b"a"])
    await store.finish("r", b"b")
    assert await collect(store, "r") == [(1, b"a"), (2, b"b")]
    assert (await store.info("r")) is not None
    await store.aclose()
    await client.aclose()


batches = st.lists(st.lists(st.binary(min_size=0, max_size=64), min_size=1, max_size=4), max_size=12)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=batches, closing=st.binary(max_size=32), cut=st.integers(min_value=0, max_value=14))
def test_any_bytes_round_trip_in_order(
    backend: str, redis_url: str, batches: list[list[bytes]], closing: bytes, cut: int
) -> None:
    async def body() -> None:
        store: StreamStore
        if backend == "memory":
            store = MemoryStore()
        else:
            store = RedisStore.from_url(redis_url, prefix=f"t{uuid.uuid4().hex[:12]}")
        try:
            await store.create("r", owner="o")
            for frames in batches:
                await store.append("r", frames)
            await store.finish("r", closing)
            expected = [(i + 1, b"".join(f)) for i, f in enumerate(batches)] + [(len(batches) + 1, closing)]
            assert await collect(store, "r") == expected
            assert await collect(store, "r", cut) == expected[cut:]
        finally:
            await store.aclose()

    asyncio.run(body())


async def test_the_writer_writes_a_producer_in_order_with_back_pressure(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.01, max_bytes=64)
    frames = [f"data: {i}\n\n".encode() for i in range(300)]

    async def produce() -> AsyncIterator[bytes]:
        for i, f in enumerate(frames):
            if i % 50 == 0:
                await asyncio.sleep(0.02)  # an interval flush between bursts
            yield f

    await writer.write_all(produce())
    assert await writer.finish(b"data: end\n\n")
    got = await collect(peer, "r")
    assert b"".join(d for _, d in got) == b"".join(frames) + b"data: end\n\n"
    assert [s for s, _ in got] == list(range(1, len(got) + 1))
    assert len(got) > 5  # size- and time-triggered appends, not one


async def test_the_writer_stops_a_producer_when_an_append_fails(make: Factory) -> None:
    store, _ = make(max_bytes=100)
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.01, max_bytes=40)
    produced = 0

    async def produce() -> AsyncIterator[bytes]:
        nonlocal produced
        while True:
            produced += 1
            await asyncio.sleep(0.001)
            yield b"x" * 28 + b"\n\n"

    with pytest.raises(RunTooLarge):
        await asyncio.wait_for(writer.write_all(produce()), 5)
    assert produced < 50
    assert isinstance(writer.error, RunTooLarge)


async def _redis_pair(redis_url: str, **limits: Any) -> tuple[RedisStore, RedisStore]:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    lim = StoreLimits(**limits)
    return (
        RedisStore.from_url(redis_url, prefix=prefix, limits=lim),
        RedisStore.from_url(redis_url, prefix=prefix, limits=lim),
    )


async def test_redis_appends_refuse_a_run_whose_keys_are_gone(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o")
        await store.append("r", [b"a"])
        await store.client.delete(*store._keys("r"))  # expired while the writer was stalled
        with pytest.raises(RunClosed):
            await store.append("r", [b"b"])
        assert await store.client.exists(*store._keys("r")[:2]) == 0  # no stream made again (a lease key lapses)
        assert await peer.info("r") is None
        assert not await store.finish("r", b"end")
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_writer_loses_to_an_end_written_meanwhile(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o", chat="c")
        await store.append("r", [b"a"])
        assert await peer.finish("r", b"ended elsewhere")
        assert not await store.finish("r", b"the writer's end")  # its end entry takes no id, changes no status
        assert await collect(peer, "r") == [(1, b"a"), (2, b"ended elsewhere")]
        info = await peer.info("r")
        assert info is not None and (info.status, info.seq) == ("finished", 2)
        assert await peer.active("c") is None
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_store_survives_a_server_that_lost_its_scripts(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o", chat="c")
        await store.append("r", [b"a"])
        await store.client.script_flush()  # as after a restart
        assert await store.heartbeat("r") == "held"
        await store.client.script_flush()
        await store.append("r", [b"b"])
        assert await store.finish("r", b"z")
        assert await collect(peer, "r") == [(1, b"a"), (2, b"b"), (3, b"z")]
        info = await peer.info("r")
        assert info is not None and info.status == "finished"
        ttl = await store.client.pttl(store._keys("r")[0])
        assert 0 < ttl <= store.limits.ttl * 1000  # kept for the retention, then forgotten
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_finished_run_resumes_at_its_end_at_once(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o")
        await store.append("r", [b"a"])
        assert await store.finish("r", b"z")
        start = time.monotonic()
        assert await collect(peer, "r", 2) == []
        assert await collect(peer, "r", 1) == [(2, b"z")]
        assert time.monotonic() - start < 0.5  # no blocking read on a run that has ended
    finally:
        await store.aclose()
        await peer.aclose()


async def test_the_writer_keeps_a_frame_in_pieces_whole(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.01, max_bytes=16)
    chunks = [b"data: 1\n\n", b"data: a", b"b" * 40, b"c\n\n", b"data: 2\n\n"]

    async def produce() -> AsyncIterator[bytes]:
        for chunk in chunks:
            await asyncio.sleep(0.02)  # an interval flush could fall between the pieces
            yield chunk

    await writer.write_all(produce())
    assert await writer.finish()
    got = await collect(peer, "r")
    assert b"".join(d for _, d in got) == b"".join(chunks)
    assert all(d.endswith(b"\n\n") for _, d in got if d)  # no entry ends inside a frame


async def test_appends_alone_keep_the_lease(make: Factory) -> None:
    store, peer = make(lease=0.4)
    await store.create("r", owner="o")
    reader = asyncio.create_task(collect(peer, "r"))
    for i in range(12):  # 1.2 s of appends, no heartbeat
        await store.append("r", [f"{i}".encode()])
        await asyncio.sleep(0.1)
    assert not reader.done()
    await store.finish("r", b"end")
    got = await asyncio.wait_for(reader, 5)
    assert got[-1] == (13, b"end") and DEAD not in [d for _, d in got]


async def test_the_writer_drops_a_frame_whose_last_piece_never_came(make: Factory) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.01)

    async def produce() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        await asyncio.sleep(0.05)
        yield b"data: a"  # a large frame's first piece, then the producer stops (a cancel)

    await writer.write_all(produce())
    assert await writer.finish(b"data: end\n\n")
    got = await collect(peer, "r")
    assert b"".join(d for _, d in got) == b"data: 1\n\ndata: end\n\n"


class _Counted:
    """Counts the Redis reads of a store (its ``XREAD`` calls and its pipelines)."""

    def __init__(self, store: RedisStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        client = store._r
        xread, pipeline = client.xread, client.pipeline

        def counted_xread(*args: Any, **kwargs: Any) -> Any:
            self.reads += 1
            return xread(*args, **kwargs)

        def counted_pipeline(*args: Any, **kwargs: Any) -> Any:
            self.reads += 1
            return pipeline(*args, **kwargs)

        monkeypatch.setattr(client, "xread", counted_xread)
        monkeypatch.setattr(client, "pipeline", counted_pipeline)


async def test_redis_readers_of_a_run_the_store_writes_are_fed_from_its_memory(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o")
        first = asyncio.create_task(collect(store, "r"))
        await asyncio.sleep(0.05)
        counted = _Counted(store, monkeypatch)
        second = asyncio.create_task(collect(store, "r"))
        elsewhere = asyncio.create_task(collect(peer, "r"))
        for i in range(20):
            await store.append("r", [f"data: {i}\n\n".encode()])
            await asyncio.sleep(0)
        assert await store.finish("r", b"data: end\n\n")
        expected = [(i + 1, f"data: {i}\n\n".encode()) for i in range(20)] + [(21, b"data: end\n\n")]
        for task in (first, second, elsewhere):
            assert await asyncio.wait_for(task, 5) == expected
        assert counted.reads == 1  # the writer's end (one MULTI); no read of Redis for this worker's readers
        assert "r" not in store._writing
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_store_keeps_only_what_its_readers_have_yet_to_read(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = RedisStore.from_url(redis_url, prefix=prefix, window=100)
    try:
        await store.create("r", owner="o")
        for _ in range(5):  # no reader yet: kept, within the window
            await store.append("r", [b"x" * 30])
        written = store._writing["r"]
        assert [seq for seq, _, _ in written.entries] == [3, 4, 5]
        reader = cast(AsyncGenerator[tuple[int, bytes], None], store.read("r"))  # it is one; aclose is used
        assert [await anext(reader) for _ in range(5)] == [(i + 1, b"x" * 30) for i in range(5)]  # 1-2 from Redis
        await store.append("r", [b"y"])
        assert [seq for seq, _, _ in written.entries] == [6]  # the reader has 5
        assert await anext(reader) == (6, b"y")
        await reader.aclose()
        await store.append("r", [b"z"])
        assert written.entries == []  # nobody of this worker follows the run any more
    finally:
        await store.aclose()


async def test_redis_reader_far_behind_the_writer_catches_up_from_redis(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = RedisStore.from_url(redis_url, prefix=prefix, window=64)
    try:
        await store.create("r", owner="o")
        seen: list[tuple[int, bytes]] = []
        task = asyncio.create_task(follow_slowly(store, seen, 0.002))
        for i in range(100):
            await store.append("r", [b"%d" % i * 10])
        await store.finish("r", b"end")
        await asyncio.wait_for(task, 10)
        assert seen == [(i + 1, b"%d" % i * 10) for i in range(100)] + [(101, b"end")]
    finally:
        await store.aclose()


async def test_redis_reader_on_the_writing_worker_sees_an_end_written_elsewhere(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = RedisStore.from_url(redis_url, prefix=prefix, block=0.2)
    peer = RedisStore.from_url(redis_url, prefix=prefix, block=0.2)
    try:
        await store.create("r", owner="o")
        reader = asyncio.create_task(collect(store, "r"))
        await store.append("r", [b"a"])
        assert await peer.finish("r", b"ended elsewhere")
        assert await asyncio.wait_for(reader, 5) == [(1, b"a"), (2, b"ended elsewhere")]
        with pytest.raises(RunClosed):
            await store.append("r", [b"b"])
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_cancel_before_the_writer_waits_is_not_missed(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r0", owner="o")
        assert not await store.wait_cancel("r0", 0.01)  # the store's cancel subscription is up
        await asyncio.sleep(0.05)
        await store.create("r", owner="o")
        assert await peer.cancel("r")  # heard by the subscription, before any wait for it
        await asyncio.sleep(0.1)
        assert await store.wait_cancel("r", 1)
        await store.create("r2", owner="o")
        started = time.monotonic()
        assert not await store.wait_cancel("r2", 0.05)
        assert time.monotonic() - started < 0.5
    finally:
        await store.aclose()
        await peer.aclose()


# -- hold: the store keeps the writer's lease and tells it when to stop -----------------------------------------

HOLDS = ["store", "task"]


class Stops:
    """A writer's ``stop``: what it was told, and when."""

    def __init__(self) -> None:
        self.said: list[Any] = []
        self.event = asyncio.Event()

    def __call__(self, why: Any) -> None:
        self.said.append(why)
        self.event.set()


def hold(store: StreamStore, run: str, every: float, stop: Stops, how: str) -> Release:
    """The store's own hold, or the task-per-run one any store can use."""
    return store.hold(run, every, stop) if how == "store" else hold_with_task(store, run, every, stop)


@pytest.mark.parametrize("how", HOLDS)
async def test_a_held_run_stays_alive_past_its_lease_and_hears_a_cancel(make: Factory, how: str) -> None:
    store, peer = make(lease=0.3)
    await store.create("r", owner="o")
    stop = Stops()
    release = hold(store, "r", 0.05, stop, how)
    reader = asyncio.create_task(collect(peer, "r"))
    await asyncio.sleep(1.0)  # more than three leases, and no append
    assert not reader.done() and stop.said == []
    asked = time.monotonic()
    assert await peer.cancel("r")
    await asyncio.wait_for(stop.event.wait(), 5)
    assert stop.said == ["cancelled"]
    assert time.monotonic() - asked < 0.5
    await release()
    assert await store.finish("r", b"closing")
    assert await asyncio.wait_for(reader, 5) == [(1, b"closing")]
    assert stop.said == ["cancelled"]  # told once


@pytest.mark.parametrize("how", HOLDS)
async def test_a_hold_says_lost_when_the_run_ends_elsewhere(make: Factory, how: str) -> None:
    store, peer = make()
    await store.create("r", owner="o")
    stop = Stops()
    release = hold(store, "r", 0.05, stop, how)
    assert await peer.finish("r", b"ended elsewhere")
    await asyncio.wait_for(stop.event.wait(), 5)
    assert stop.said == ["lost"]
    await release()
    gone = Stops()
    release = hold(store, "r", 0.05, gone, how)  # an ended run: lost at once
    await asyncio.wait_for(gone.event.wait(), 5)
    assert gone.said == ["lost"]
    await release()


@pytest.mark.parametrize("how", HOLDS)
async def test_a_released_run_is_told_nothing_and_its_lease_lapses(make: Factory, how: str) -> None:
    store, peer = make(lease=0.3)
    await store.create("r", owner="o")
    stop = Stops()
    release = hold(store, "r", 0.05, stop, how)
    await store.append("r", [b"a"])
    await asyncio.sleep(0.2)
    await release()
    assert await peer.cancel("r")
    started = time.monotonic()
    assert await asyncio.wait_for(collect(peer, "r"), 5) == [(1, b"a"), (2, DEAD)]  # the writer is gone
    assert time.monotonic() - started < 2
    await asyncio.sleep(0.1)
    assert stop.said == []


async def test_redis_keeps_every_lease_of_a_worker_in_one_task(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url, lease=0.4)
    try:
        runs = [f"r{i}" for i in range(600)]  # more than one pipeline's worth
        for run in runs:
            await store.create(run, owner="o")
        stops = {run: Stops() for run in runs}
        releases = [store.hold(run, 0.1, stops[run]) for run in runs]
        keepers = [t for t in asyncio.all_tasks() if t.get_name() == "streamkit-store-leases"]
        assert len(keepers) == 1
        await asyncio.sleep(1.2)  # three leases
        for run in runs[::50]:
            info = await peer.info(run)
            assert info is not None and info.running
            assert await peer._r.pttl(peer._keys(run)[2]) > 0  # the lease is renewed
        await peer._r.hset(peer._keys("r7")[0], "cancel", "1")  # a cancel whose message was lost
        await asyncio.wait_for(stops["r7"].event.wait(), 2)  # heard at the next renewal
        assert stops["r7"].said == ["cancelled"]
        assert all(not s.said for run, s in stops.items() if run != "r7")
        for release in releases:
            await release()
        await asyncio.sleep(0.3)
        assert keepers[0].done()  # nothing held: no task
        await store.create("again", owner="o")
        again = Stops()
        release = store.hold("again", 0.1, again)
        assert await peer.cancel("again")
        await asyncio.wait_for(again.event.wait(), 2)  # a new keeper
        await release()
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_hold_stops_its_runs_when_the_store_fails(redis_url: str) -> None:
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o")
        stop = Stops()
        release = store.hold("r", 0.05, stop)
        await asyncio.sleep(0.1)
        pool = store._r.connection_pool
        pool.connection_kwargs["port"] = 1  # nothing listens there: the next connection is refused
        await pool.disconnect()
        pool.reset()
        await asyncio.wait_for(stop.event.wait(), 10)
        assert len(stop.said) == 1 and isinstance(stop.said[0], Exception)
        await release()
    finally:
        await store.aclose()
        await peer.aclose()


async def test_redis_store_closes_after_its_cancel_subscription_was_broken(redis_url: str) -> None:
    """The client retries a command on a new connection; the cancel subscription does not (it reconnects itself),
    so closing the store ends its listener however often the subscription was broken, and the connection it
    listened on goes back to the pool with the client's retry."""
    store, peer = await _redis_pair(redis_url)
    try:
        await store.create("r", owner="o")
        release = store.hold("r", 0.05, Stops())
        pool = store._r.connection_pool
        for _ in range(3):
            await asyncio.sleep(0.3)  # the listener has subscribed (again)
            await pool.disconnect()  # every connection, the subscription's too
        await asyncio.sleep(0.5)
        await release()
        await asyncio.wait_for(store.aclose(), 5)
        assert store._listener is None and store._keeper is None
        kept = [*pool._available_connections, *pool._in_use_connections]
        assert kept and all(conn.retry.get_retries() == 1 for conn in kept)
    finally:
        await store.aclose()
        await peer.aclose()


async def test_a_memory_store_holds_runs_with_no_task_or_timer() -> None:
    store = MemoryStore(StoreLimits(lease=0.2))
    tasks = len(asyncio.all_tasks())
    handles = len(asyncio.get_running_loop()._scheduled)  # type: ignore[attr-defined]
    releases = []
    for i in range(100):
        await store.create(f"r{i}", owner="o")
        releases.append(store.hold(f"r{i}", 0.05, Stops()))
    readers = [asyncio.create_task(collect(store, f"r{i}")) for i in range(100)]
    await asyncio.sleep(0.5)
    assert not any(r.done() for r in readers)
    assert len(asyncio.all_tasks()) == tasks + 100  # the readers alone
    assert len(asyncio.get_running_loop()._scheduled) == handles  # type: ignore[attr-defined]
    for i, release in enumerate(releases):
        await release()
        await store.finish(f"r{i}")
    await asyncio.wait_for(asyncio.gather(*readers), 5)
