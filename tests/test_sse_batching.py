"""EventStreamResponse's sending: frames that pile up leave in one write, a lone frame leaves at once,
a send the client does not take times out, and the agent is closed however the stream ends."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from streamkit.sse import EventStreamResponse


async def _call(response: EventStreamResponse, send_delay: float = 0.0) -> list[tuple[float, bytes]]:
    """Run ``response`` as an ASGI app; return the body messages with the time each was sent."""
    sent: list[tuple[float, bytes]] = []
    done = anyio.Event()

    async def receive() -> dict[str, Any]:
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            if send_delay:
                await anyio.sleep(send_delay)
            sent.append((time.monotonic(), message["body"]))
            if not message.get("more_body"):
                done.set()

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}
    await response(scope, receive, send)
    return [(t, b) for t, b in sent if b]


async def test_frames_produced_faster_than_sent_are_coalesced() -> None:
    frames = [b"data: %d\n\n" % i for i in range(3000)]

    async def fast() -> AsyncIterator[bytes]:
        for f in frames:
            yield f

    sent = await _call(EventStreamResponse(fast(), heartbeat=0))
    assert b"".join(b for _, b in sent) == b"".join(frames)
    assert len(sent) <= 12  # 3000 frames that were all ready: a burst sent one by one, then a few writes


async def test_frames_pile_up_while_the_socket_is_behind() -> None:
    async def steady() -> AsyncIterator[bytes]:
        for i in range(40):
            yield b"data: %d\n\n" % i
            await anyio.sleep(0.005)

    sent = await _call(EventStreamResponse(steady(), heartbeat=0), send_delay=0.05)
    assert b"".join(b for _, b in sent) == b"".join(b"data: %d\n\n" % i for i in range(40))
    assert 2 <= len(sent) < 20  # each slow send carried what was produced meanwhile


async def test_a_lone_frame_leaves_as_soon_as_it_is_produced() -> None:
    produced: list[float] = []

    async def paced() -> AsyncIterator[bytes]:
        for i in range(10):
            await anyio.sleep(0.02)
            produced.append(time.monotonic())
            yield b"data: %d\n\n" % i

    sent = await _call(EventStreamResponse(paced(), heartbeat=0))
    assert len(sent) == 10  # one write per frame
    assert max(t - p for (t, _), p in zip(sent, produced, strict=True)) < 0.015


@pytest.mark.parametrize("heartbeat", [0, 0.1, 1.0], ids=["scope deadline", "watchdog", "heartbeat > timeout"])
async def test_a_send_the_client_does_not_take_times_out_and_closes_the_agent(
    heartbeat: float, caplog: pytest.LogCaptureFixture
) -> None:
    closed = anyio.Event()

    async def agent() -> AsyncIterator[bytes]:
        try:
            while True:
                yield b"data: x\n\n"
                await anyio.sleep(0.01)
        finally:
            closed.set()

    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])
            if len(sent) >= 3:
                await anyio.sleep_forever()  # the client stopped reading

    response = EventStreamResponse(agent(), heartbeat=heartbeat, send_timeout=0.2)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="streamkit"):
        # an expected event, not a crash: no exception for the server to print, one warning line
        await response({"type": "http", "method": "GET", "path": "/stream", "headers": []}, receive, send)
    # The timeout, not the end of anything else, ended it (the bound only rules out a hang on a busy machine).
    assert 0.2 <= time.monotonic() - started < 2.0
    assert closed.is_set()
    warnings = [r for r in caplog.records if r.name.startswith("streamkit")]
    assert [r.getMessage() for r in warnings] == [
        "GET /stream: the client took no data for 0.2 s (send_timeout); stream dropped"
    ]
    assert warnings[0].exc_info is None


@pytest.mark.parametrize("heartbeat", [0, 0.05])
async def test_a_slow_agent_does_not_trip_the_send_timeout(heartbeat: float) -> None:
    async def slow() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        await anyio.sleep(0.3)  # longer than the send timeout, but no send is waiting
        yield b"data: 2\n\n"

    sent = await _call(EventStreamResponse(slow(), heartbeat=heartbeat, send_timeout=0.1))
    assert b"".join(b for _, b in sent if not b.startswith(b": ping")) == b"data: 1\n\ndata: 2\n\n"


async def test_the_frames_are_pulled_in_one_task_whatever_the_sending() -> None:
    # A burst (coalesced, sent by a task of its own) between two paced stretches (sent one by one): an agent that
    # holds a task group and a timeout across its yields must be resumed in the task that entered them.
    tasks: set[object] = set()
    ended = anyio.Event()

    async def agent() -> AsyncIterator[bytes]:
        async with anyio.create_task_group(), asyncio.timeout(30):
            for i in range(200):
                tasks.add(asyncio.current_task())
                if i < 5 or i >= 190:
                    await anyio.sleep(0.005)
                yield b"data: %d\n\n" % i
        ended.set()

    sent = await _call(EventStreamResponse(agent(), heartbeat=0))
    assert b"".join(b for _, b in sent) == b"".join(b"data: %d\n\n" % i for i in range(200))
    assert len(sent) < 100  # the burst was coalesced
    assert len(tasks) == 1 and ended.is_set()


async def test_a_send_that_fails_while_frames_are_coalesced_ends_the_response_with_its_error() -> None:
    closed = anyio.Event()

    async def agent() -> AsyncIterator[bytes]:
        try:
            async with anyio.create_task_group():
                for i in range(100):
                    yield b"data: %d\n\n" % i  # a burst: coalesced after a few frames
                await anyio.sleep_forever()  # the agent waits: only the failed send can end the response
                yield b"data: never\n\n"
        finally:
            closed.set()

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message["body"].count(b"\n\n") > 1:  # a coalesced write
            raise OSError("the client went away")  # what an ASGI 2.4 server raises

    response = EventStreamResponse(agent(), heartbeat=0)
    with anyio.fail_after(10), pytest.raises(OSError, match="the client went away"):
        await response({"type": "http", "method": "GET", "path": "/", "headers": []}, receive, send)
    assert closed.is_set()
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # no cancellation left behind


async def test_an_agent_in_a_cancel_scope_is_closed_cleanly_when_the_client_leaves_during_a_send() -> None:
    # The agent waits at a yield while the send is stuck; the client's leaving stops the stream, and the close
    # leaves the agent's scope (a deadline on its run) in the task and order it was entered.
    closed = anyio.Event()

    async def agent() -> AsyncIterator[bytes]:
        try:
            with anyio.fail_after(30):
                for i in range(1000):
                    yield b"data: %d\n\n" % i
                    await anyio.sleep(0.001)
        finally:
            closed.set()

    gone = anyio.Event()
    sent = 0

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal sent
        if message["type"] == "http.response.body":
            sent += 1
            if sent == 5:
                gone.set()
                await anyio.sleep_forever()  # the client left with this send in progress

    response = EventStreamResponse(agent(), heartbeat=0)
    with anyio.fail_after(10):
        await response({"type": "http", "method": "GET", "path": "/", "headers": []}, receive, send)
    assert closed.is_set() and sent == 5
