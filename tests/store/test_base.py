"""The stores' waiting helpers and the writer's flusher: a task stopped while it waits stops, whatever the wait
was doing; an idle writer holds no task; a producer that outruns the store is held where its buffer fills."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit.store import MemoryStore, StoreWriter, base
from streamkit.store.base import Changes, raise_if_cancelled, wait_set

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_wait_set_says_whether_the_event_came() -> None:
    event = asyncio.Event()
    assert await wait_set(event, 0.01) is False
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await wait_set(event, 5) is True
    assert await wait_set(event, 0) is True  # already set: at once


async def test_a_cancel_in_the_step_the_event_is_set_still_stops_the_waiter() -> None:
    for _ in range(20):
        event = asyncio.Event()
        went_on = False

        async def waiter(event: asyncio.Event) -> None:
            nonlocal went_on
            await wait_set(event, 5)
            went_on = True

        task = asyncio.create_task(waiter(event))
        await settle()
        event.set()
        task.cancel()  # in the same step: the waiter's wait is over, the waiter not yet resumed
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not went_on


async def test_a_loop_stops_at_its_next_turn_after_a_library_swallowed_its_cancel() -> None:
    event = asyncio.Event()
    event.set()
    turns = 0
    swallowed = False

    async def heartbeat() -> None:
        nonlocal turns, swallowed
        while True:
            raise_if_cancelled()
            turns += 1
            await asyncio.wait_for(event.wait(), 5)  # a library call that swallows a cancel that meets its end
            swallowed = swallowed or asyncio.current_task().cancelling() > 0  # type: ignore[union-attr]

    task = asyncio.create_task(heartbeat())
    await asyncio.sleep(0)  # the task is inside wait_for; the inner wait is done at its first step
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert swallowed and turns == 1  # wait_for returned normally; the next turn stopped


async def test_an_idle_writer_holds_no_task_and_the_next_frame_starts_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_LINGER", 0.05)
    store = MemoryStore()
    assert await store.create("r", owner="o")
    writer = StoreWriter(store, "r", interval=0.001)
    await writer.write(b"data: 1\n\n")
    flusher = writer._task
    assert flusher is not None
    await asyncio.sleep(0.2)  # the frame appended, then nothing for longer than the linger
    assert flusher.done() and writer._task is None and writer._signals is None
    await writer.write(b"data: 2\n\n")
    assert writer._task is not None and not writer._task.done()
    assert await writer.finish(b"data: end\n\n")
    entries = [data async for _, data in store.read("r")]
    assert b"".join(entries) == b"data: 1\n\ndata: 2\n\ndata: end\n\n"
    assert entries[0] == b"data: 1\n\n"  # appended by the first flusher, before it ended


async def test_changes_wake_every_waiter_and_keep_nothing_once_woken() -> None:
    changes = Changes()
    waiters = [asyncio.create_task(changes.wait()) for _ in range(3)]
    timed = asyncio.create_task(changes.wait(5))
    await asyncio.sleep(0)
    changes.notify()
    assert await asyncio.gather(*waiters, timed) == [True, True, True, True]
    assert changes._waiters is None
    assert not await changes.wait(0.01)  # nothing came
    assert changes._waiters is None  # the waiter that timed out is gone
    gone = asyncio.create_task(changes.wait())
    await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert changes._waiters is None  # and so is one that was cancelled
    changes.notify()  # with nobody waiting


class _Appends(MemoryStore):
    """A memory store that records the batches it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[bytes]] = []

    async def append(self, run: str, frames: Sequence[bytes]) -> int:
        self.batches.append(list(frames))
        return await super().append(run, frames)


def _chunk(size: int, i: int) -> bytes:
    return bytes([97 + i % 26]) * (size - 2) + b"\n\n"  # a whole frame of ``size`` bytes


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.one_of(
        st.lists(st.one_of(st.integers(3, 300), st.integers(3, 3000)), min_size=1, max_size=400),
        st.lists(st.sampled_from([32, 64]), min_size=1, max_size=100),  # a buffer that meets its mark exactly
    ),
    max_bytes=st.one_of(st.integers(8, 2048), st.sampled_from([64, 128, 256])),
    one_by_one=st.booleans(),
)
def test_the_writer_cuts_its_batches_at_the_chunk_that_fills_the_buffer(
    sizes: list[int], max_bytes: int, one_by_one: bool
) -> None:
    """A producer that never lets the flusher run is held at the first chunk that takes the buffer to twice
    ``max_bytes`` (back-pressure), and that chunk ends the batch the flusher takes; the frames reach the store
    whole, in order, each once, through ``write`` as through ``write_all``."""
    chunks = [_chunk(size, i) for i, size in enumerate(sizes)]

    async def go() -> list[list[bytes]]:
        store = _Appends()
        await store.create("r", owner="o")
        writer = StoreWriter(store, "r", interval=60, max_bytes=max_bytes)

        async def produce() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk  # never waits: only the writer's back-pressure lets the flusher run

        if one_by_one:
            for chunk in chunks:
                await writer.write(chunk)
        else:
            await writer.write_all(produce())
        await writer.flush()
        assert await writer.finish()
        return store.batches

    batches = asyncio.run(go())
    expected: list[list[bytes]] = [[]]
    size = 0
    for chunk in chunks:
        expected[-1].append(chunk)
        size += len(chunk)
        if size >= 2 * max_bytes:
            expected.append([])
            size = 0
    assert batches == [batch for batch in expected if batch]
