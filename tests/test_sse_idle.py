"""EventStreamResponse's idle streams on asyncio: the request's own task and one waiter in ``receive`` each, the
heartbeats from a timer, a client that leaves heard at once, and nothing left behind once the stream ends."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

from streamkit.sse import EventStreamResponse, _listeners


class _Client:
    """One ASGI client: what the response sent, and a ``receive`` that says ``http.disconnect`` once told to."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, bytes]] = []
        self.left = asyncio.Event()
        self.ended = False

    async def receive(self) -> dict[str, Any]:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.body":
            self.sent.append((time.monotonic(), message["body"]))
            self.ended = not message.get("more_body", False)


def _tasks(*, pings: bool = True) -> int:
    """The tasks of this loop, but the shutdown poller (one per event loop, for every stream), and without
    ``pings`` the heartbeats being sent (a task each, for one send)."""
    left_out = {"_poll"} if pings else {"_poll", "_Live._send_ping"}
    return len([t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__qualname__", "") not in left_out])


def _scope() -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}


async def test_an_idle_stream_is_its_request_task_and_one_receive_waiter() -> None:
    release = asyncio.Event()
    closed: list[int] = []

    async def frames(i: int) -> AsyncIterator[bytes]:
        try:
            yield b"data: first\n\n"
            await release.wait()
            yield b"data: last\n\n"
        finally:
            closed.append(i)

    before = _tasks()
    clients = [_Client() for _ in range(50)]
    requests = [
        asyncio.create_task(EventStreamResponse(frames(i), heartbeat=0.2)(_scope(), c.receive, c.send))
        for i, c in enumerate(clients)
    ]
    await asyncio.sleep(0.5)  # every stream sent its first frame and at least one heartbeat
    assert all(c.sent[0][1] == b"data: first\n\n" for c in clients)
    assert all(any(body == b": ping\n\n" for _, body in c.sent) for c in clients)
    assert _tasks(pings=False) - before == 2 * len(clients)  # the request's task, one receive waiter
    release.set()
    await asyncio.gather(*requests)
    assert all(c.ended and c.sent[-2][1] == b"data: last\n\n" for c in clients)
    assert sorted(closed) == list(range(50))
    await asyncio.sleep(0)
    assert _tasks() == before  # no waiter, ping or timer task left
    assert not any(_listeners.get(asyncio.get_running_loop(), ()))  # nor a shutdown listener


async def test_heartbeats_keep_their_interval_while_the_stream_is_silent() -> None:
    async def frames() -> AsyncIterator[bytes]:
        yield b"data: first\n\n"
        await asyncio.sleep(1.0)
        yield b"data: last\n\n"

    client = _Client()
    await EventStreamResponse(frames(), heartbeat=0.25)(_scope(), client.receive, client.send)
    times = [t for t, body in client.sent if body]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert 3 <= sum(body == b": ping\n\n" for _, body in client.sent) <= 4
    assert max(gaps) < 0.25 * 1.5


async def test_a_client_that_leaves_a_silent_stream_is_heard_at_once() -> None:
    closed = asyncio.Event()

    async def frames() -> AsyncIterator[bytes]:
        try:
            yield b"data: first\n\n"
            await asyncio.sleep(3600)
            yield b"data: never\n\n"
        finally:
            closed.set()

    client = _Client()
    request = asyncio.create_task(EventStreamResponse(frames(), heartbeat=15)(_scope(), client.receive, client.send))
    await asyncio.sleep(0.05)
    left = time.monotonic()
    client.left.set()
    await asyncio.wait_for(request, 1)
    assert closed.is_set() and time.monotonic() - left < 0.5
    assert not client.ended  # the body is not completed for a client that is gone


async def test_a_cancellation_from_outside_is_not_taken_for_the_streams_own() -> None:
    async def frames() -> AsyncIterator[bytes]:
        yield b"data: first\n\n"
        await asyncio.sleep(3600)
        yield b"data: never\n\n"

    client = _Client()
    request = asyncio.create_task(EventStreamResponse(frames(), heartbeat=15)(_scope(), client.receive, client.send))
    await asyncio.sleep(0.05)
    request.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await request
    assert request.cancelled()
