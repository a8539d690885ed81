"""The stores' waiting helpers and the writer's flusher: a task stopped while it waits stops, whatever the wait
was doing; an idle writer holds no task."""

from __future__ import annotations

import asyncio

import pytest

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
