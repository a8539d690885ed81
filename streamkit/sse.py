"""The response: :class:`EventStreamResponse` puts pre-encoded SSE frames on the wire.

One send per frame, ``: ping`` comment heartbeats after an idle interval, a send timeout for clients that stop
reading, the frames' iterator (and with it the agent's generator) closed when the client goes away, and the
protocol's terminal frames when the server shuts down mid-stream. Frames are made elsewhere
(:mod:`streamkit.frames`); this module only writes them.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from typing import Any, cast

import anyio
from sse_starlette._utils import collapse_excgroups
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import (
    AppStatus,
    EventSourceResponse,
    SendTimeoutError,
    _ensure_watcher_started_on_this_loop,
    _get_shutdown_state,
)
from starlette.types import Receive, Scope, Send

from .events.logs import run_logger

__all__ = ["PING", "SSE_HEADERS", "EventStreamResponse"]

logger = run_logger("streamkit")

PING = b": ping\n\n"
"""The heartbeat: an SSE comment, ignored by every client."""

SSE_HEADERS: Mapping[str, str] = {
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Headers every stream carries (proxies must neither cache nor buffer it)."""


async def _aclose(iterator: object) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


class EventStreamResponse(EventSourceResponse):
    """A ``text/event-stream`` response of pre-encoded SSE bytes.

    ``heartbeat`` is the idle time (seconds) after which a ``: ping`` comment is sent (0 disables it);
    ``send_timeout`` drops a client that does not take a frame within that time. When the client
    disconnects, the stream is cancelled and the frames' iterator (and with it the agent's generator) is
    closed.

    Each frame is sent as soon as it is produced, one write per frame. When frames come faster than that
    (a burst of frames that were ready at once, or a send that had to wait for the socket), a task of
    their own pulls them from then on, and whatever piled up while a send was in progress leaves in one
    write of at most about ``max_batch_bytes``.
    """

    max_batch_bytes = 65536
    """Frames that pile up are coalesced into writes of at most about this size (0: one write per frame)."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        heartbeat: float = 15.0,
        send_timeout: float | None = 30.0,
        on_disconnect: Callable[[], Awaitable[None]] | None = None,
        on_shutdown: Callable[[], bytes] | None = None,
        shutdown_event: anyio.Event | None = None,
        shutdown_grace_period: float = 0,
    ) -> None:
        merged = dict(SSE_HEADERS)
        if headers:
            merged.update(headers)

        async def _closed(message: Any) -> None:
            if on_disconnect is not None:
                await on_disconnect()

        super().__init__(
            content,
            status_code=status_code,
            headers=merged,
            ping=heartbeat,
            sep="\n",
            ping_message_factory=lambda: ServerSentEvent(comment="ping", sep="\n"),
            send_timeout=send_timeout,
            client_close_handler_callable=_closed,
            shutdown_event=shutdown_event,
            shutdown_grace_period=shutdown_grace_period,
        )
        # sse-starlette forces "no-store"; the protocols' reference servers send "no-cache".
        self.headers["cache-control"] = merged["cache-control"]
        self.last_send = time.monotonic()
        self._frames = content
        self._sending_since: float | None = None
        self._watchdog = send_timeout is not None and 0 < heartbeat <= send_timeout
        self._on_shutdown = on_shutdown
        self._shutting_down = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stalled = False
        try:
            if scope["type"] == "http" and scope.get("method", "GET").upper() != "HEAD":
                await self._run(receive, send)
            else:  # HEAD and WebSocket denial: sse-starlette's own handling
                await super().__call__(scope, receive, send)
        except SendTimeoutError:
            # A client that stopped reading is an expected event, not a crash: one line, no traceback. The
            # response cannot be completed (the connection is stuck), so the server closes it.
            stalled = True
            self.active = False
        finally:
            # However the response ended (done, disconnect, send timeout, shutdown), close the frames'
            # iterator: this closes the agent's generator, or tells a detached run its reader is gone.
            with anyio.CancelScope(shield=True):
                await _aclose(self.body_iterator)
        if stalled:
            logger.warning(
                "%s %s: the client took no data for %s s (send_timeout); stream dropped",
                scope.get("method", "GET"),
                scope.get("path", "?"),
                f"{self.send_timeout:g}",
            )
            return
        if self._shutting_down and self.active and self._on_shutdown is not None:
            # The server is shutting down and cancelled the stream mid-run: end it with the protocol's
            # terminal frames instead of a torn body.
            self.active = False
            with anyio.move_on_after(self.send_timeout or 5):
                await send({"type": "http.response.body", "body": self._on_shutdown(), "more_body": True})
            with anyio.move_on_after(self.send_timeout or 5):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _run(self, receive: Receive, send: Send) -> None:
        # Two tasks per stream where sse-starlette runs four: the frames, and one watcher that waits for the
        # client to leave or the server to stop, sends the heartbeats and watches the sends (see _watch).
        with collapse_excgroups():
            async with anyio.create_task_group() as tasks:

                async def part(run: Callable[[], Awaitable[None]]) -> None:
                    await run()
                    tasks.cancel_scope.cancel()

                tasks.start_soon(part, lambda: self._stream_response(send))
                tasks.start_soon(part, lambda: self._watch(receive, send))
        if self.background is not None:
            await self.background()

    async def _watch(self, receive: Receive, send: Send) -> None:
        """Until the client disconnects or the server shuts down: a heartbeat after each idle ``heartbeat``,
        and, when the heartbeat is no longer than the send timeout, the watch over frame sends (one still in
        progress ``send_timeout`` after it began ends the response)."""
        interval = self.ping_interval
        timeout = self.send_timeout if self._watchdog else None
        signal = _ShutdownSignal()
        if AppStatus.should_exit:
            signal.fired = True
        _ensure_watcher_started_on_this_loop()
        listeners = cast("set[Any]", _get_shutdown_state().events)
        listeners.add(signal)
        try:
            while self.active and not signal.fired:
                now = time.monotonic()
                since = self._sending_since
                if timeout is not None and since is not None:
                    if now - since >= timeout:
                        raise SendTimeoutError()
                    delay = since + timeout - now
                elif interval > 0:
                    delay = interval - (now - self.last_send)
                    if delay <= 0:
                        await self._send_ping(send)
                        continue
                else:
                    delay = math.inf
                message: Any = None
                with anyio.move_on_after(delay) as waiting:
                    signal.scope = waiting
                    message = await receive()
                signal.scope = None
                if message is not None and message["type"] == "http.disconnect":
                    self.active = False
                    if self.client_close_handler_callable:
                        await self.client_close_handler_callable(message)
                    return
        finally:
            listeners.discard(signal)
        if signal.fired:
            await self._after_exit_signal()

    async def _send_ping(self, send: Send) -> None:
        async with self._send_lock:
            if self.active:
                await self._send_with_timeout(send, {"type": "http.response.body", "body": PING, "more_body": True})
                self.last_send = time.monotonic()

    async def _stream_response(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if self._watchdog or self.send_timeout is None:
            # With a heartbeat no longer than the send timeout, the ping task watches the sends (see _ping).
            await self._pump(send, None)
        else:
            # Otherwise the deadline of one cancel scope is armed around each send.
            with anyio.CancelScope() as sending:
                await self._pump(send, sending)
            if sending.cancelled_caught:
                raise SendTimeoutError()
        async with self._send_lock:
            self.active = False
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, send: Send, sending: anyio.CancelScope | None) -> None:
        # Each frame is sent as it comes, in this task, until frames turn out to come faster than they can be
        # sent one by one (a burst of frames that were there at once, or a send that had to wait for the
        # socket): from then on a producer task pulls them, and what piles up during a send leaves in one write.
        coalesce = self.max_batch_bytes > 0 and _on_asyncio()
        frames = aiter(self._frames)
        ready = 0  # frames in a row that were there at once
        while True:
            pulled = time.monotonic()
            try:
                chunk = await anext(frames)
            except StopAsyncIteration:
                return
            got = time.monotonic()
            ready = ready + 1 if got - pulled < _AT_ONCE else 0
            await self._send_body(send, chunk, sending)
            if coalesce and (ready >= _BURST or self.last_send - got > _SLOW_SEND):
                break
        pipe = _Pipe(self.max_batch_bytes)
        producer = asyncio.get_running_loop().create_task(pipe.fill(frames))
        try:
            while (batch := await pipe.take()) is not None:
                await self._send_body(send, batch, sending)
            await producer  # its exception, if it failed
        finally:
            if not producer.done():
                producer.cancel()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([producer])

    async def _send_body(self, send: Send, chunk: bytes, sending: anyio.CancelScope | None) -> None:
        if sending is not None:
            sending.deadline = anyio.current_time() + (self.send_timeout or math.inf)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sending.deadline = math.inf
        else:
            self._sending_since = time.monotonic()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            self._sending_since = None
        self.last_send = time.monotonic()

    async def _listen_for_exit_signal_with_grace(self) -> None:
        await self._listen_for_exit_signal()
        await self._after_exit_signal()

    async def _after_exit_signal(self) -> None:
        self._shutting_down = True
        if self._shutdown_event:
            self._shutdown_event.set()
        if self._shutdown_grace_period > 0:
            with anyio.move_on_after(self._shutdown_grace_period):
                while self.active:
                    await anyio.sleep(0.1)

    async def _ping(self, send: Send) -> None:
        # Like sse-starlette's ping, but only after ``heartbeat`` seconds without any frame. It also watches
        # the frame sends: one still in progress ``send_timeout`` after it began ends the response.
        interval = self.ping_interval
        timeout = self.send_timeout if self._watchdog else None
        while self.active:
            now = time.monotonic()
            since = self._sending_since
            if timeout is not None and since is not None:
                if now - since >= timeout:
                    raise SendTimeoutError()
                await anyio.sleep(since + timeout - now)
                continue
            idle = now - self.last_send
            if idle < interval:
                await anyio.sleep(interval - idle)
                continue
            await self._send_ping(send)


_AT_ONCE = 100e-6
"""A frame pulled within this many seconds was there at once (the agent did not wait)."""
_BURST = 8
"""After this many frames in a row that were there at once, frames are coalesced."""
_SLOW_SEND = 1e-3
"""A send that took this long waited for the socket: frames are coalesced from then on."""


class _ShutdownSignal:
    """Stands in for an ``anyio.Event`` in sse-starlette's shutdown broadcast: when the server stops,
    ``set()`` marks it fired and wakes the watcher waiting under ``scope``."""

    __slots__ = ("fired", "scope")

    def __init__(self) -> None:
        self.fired = False
        self.scope: anyio.CancelScope | None = None

    def set(self) -> None:
        self.fired = True
        if self.scope is not None:
            self.scope.cancel()


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Pipe:
    """Carries frames from their iterator (pulled by :meth:`fill`, a task of its own) to the sender
    (:meth:`take`): one chunk when one is waiting, all of them joined when several piled up. ``fill`` waits
    while ``limit`` bytes are waiting. (asyncio futures: the cheapest hand-over per frame.)"""

    __slots__ = ("_chunks", "_data", "_done", "_limit", "_room", "_size")

    def __init__(self, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = limit
        self._done = False
        self._data: asyncio.Future[None] | None = None  # the sender waits for a chunk
        self._room: asyncio.Future[None] | None = None  # the producer waits for the sender

    async def fill(self, frames: AsyncIterable[bytes]) -> None:
        try:
            async for chunk in frames:
                self._chunks.append(chunk)
                self._size += len(chunk)
                data = self._data
                if data is not None:
                    self._data = None
                    if not data.done():
                        data.set_result(None)
                if self._size >= self._limit:
                    self._room = room = asyncio.get_running_loop().create_future()
                    await room
        finally:
            self._done = True
            data = self._data
            if data is not None:
                self._data = None
                if not data.done():
                    data.set_result(None)

    async def take(self) -> bytes | None:
        while not self._chunks:
            if self._done:
                return None
            self._data = data = asyncio.get_running_loop().create_future()
            await data
        chunks = self._chunks
        chunk = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._size = 0
        room = self._room
        if room is not None:
            self._room = None
            if not room.done():
                room.set_result(None)
        return chunk
