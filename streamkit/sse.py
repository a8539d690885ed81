"""The response: :class:`EventStreamResponse` puts pre-encoded SSE frames on the wire.

One send per frame, ``: ping`` comment heartbeats after an idle interval, a send timeout for clients that stop
reading, the frames' iterator (and with it the agent's generator) closed when the client goes away, and the
protocol's terminal frames when the server shuts down mid-stream. Frames are made elsewhere
(:mod:`streamkit.frames`); this module only writes them.

What it does differently from sse-starlette's ``EventSourceResponse`` and Starlette's ``StreamingResponse``
--------------------------------------------------------------------------------------------------------

The response derives from Starlette's ``Response`` and owns its ``__call__``; of sse-starlette it uses only the
public ``AppStatus`` (the flag its uvicorn hook sets when the server stops, and its switch to turn the automatic
drain off). Each point below is deliberate:

1. **Frames come encoded.** The content is bytes made by :mod:`streamkit.frames` (JSON as ``JSON.stringify``
   writes it, LF line endings), so sse-starlette's per-item encoding (``ServerSentEvent``, separators) has no
   work here; a synchronous iterable is not accepted.
2. **One task per stream, and a timer.** sse-starlette runs the stream, a ping task, a shutdown listener and
   a disconnect listener in a task group; Starlette's ``StreamingResponse`` (on a server of ASGI spec 2.3,
   as uvicorn is) a task group of two. Here, on asyncio, the frames go out from the request's own task; one
   timer per stream (``loop.call_later``, re-armed when it fires, never per frame) sends the heartbeats, each
   from a task that lives for one send, and watches the sends; the client's leaving is heard by a task
   waiting in ``receive`` (the cheapest waiter there is: that coroutine alone); and the server's shutdown by
   one poller for all streams. Any of them stops the stream by cancelling the request's task, which takes
   that cancellation back (``Task.uncancel``) and ends the response. An idle stream holds no anyio task
   group, cancel scope, lock or closure: at 10,000 open streams the bytes each one keeps decide how many
   fit on a worker. On other anyio backends (trio) a task group runs the frames and one watcher task.
3. **A heartbeat only after an idle interval.** ``: ping`` (no timestamp) goes out ``heartbeat`` seconds after
   the last write of any kind, not every ``heartbeat`` seconds whatever the traffic: a busy stream carries no
   pings, a silent one (a long tool call) still shows the proxies it is alive.
4. **The send watchdog.** Each send only notes its start time, where sse-starlette arms a cancel scope
   around every send; the timer ends the response when a send is still in progress ``send_timeout`` after
   it began (on trio the watcher does, or, when the heartbeat is longer than the send timeout, one cancel
   scope whose deadline is moved at each send). A client that stops reading is one warning line and no
   traceback (an expected event, not a crash); the response cannot complete, so the server closes it.
5. **Coalescing.** A frame is sent as soon as it is produced; once frames come faster than they are sent (a
   burst that was ready at once, or a send that waited for the socket), a sender task writes them and what
   piles up during a send leaves in one write of at most about ``max_batch_bytes`` (asyncio only). The frames
   are still pulled in the request's task, which pulled the first ones: an agent that holds a cancel scope or
   a timeout across its yields (an anyio task group, ``asyncio.timeout``) must be resumed in the task that
   entered it. sse-starlette writes each item on its own.
6. **Shutdown frames.** When the server stops, the stream is cancelled after the optional grace period (as
   sse-starlette does, setting ``shutdown_event`` first) and then ended with the protocol's terminal frames
   (``on_shutdown``) instead of a torn body. The shutdown is heard by one poller per event loop, every 0.5 s:
   ``AppStatus.should_exit``, or (unless the automatic drain is off) the ``should_exit`` of the uvicorn server
   whose method handles SIGTERM: ``uvicorn module:app`` installs its handlers before it imports the app, so
   sse-starlette's hook is not in place then. This is sse-starlette 3.7's watcher, owned here.
7. **The frames' iterator is always closed.** However the response ends (done, disconnect, send timeout,
   shutdown), the iterator is closed: that closes the agent's generator, or tells a detached run that its
   reader is gone. It is closed in the request's task and in no cancel scope of its own, so that an agent
   waiting at a yield inside a scope of its own (``anyio.fail_after`` around its run) leaves it cleanly.
   sse-starlette closes it only after a failed send.
8. **``cache-control: no-cache``**, what the protocols' reference servers send, not sse-starlette's
   ``no-store``; ``x-accel-buffering: no`` and ``connection: keep-alive`` as sse-starlette sends them.
9. **HEAD and WebSocket.** HEAD gets the headers and an empty body and never starts the stream (as
   sse-starlette, whose issue #218 it is; Starlette's ``StreamingResponse`` would stream an endless body). On a
   WebSocket scope the messages are renamed ``websocket.http.response.*`` as Starlette does for a denial
   response, and the stream runs as over HTTP.
10. **No ASGI 2.4 fast path** (as sse-starlette): the ``receive`` waiter is what sees a client leave during
    a silent stretch, at once (on trio: within one heartbeat). On trio, a task group's single error is
    raised bare, not in an ``ExceptionGroup``, as Starlette and sse-starlette raise it, for the middleware's
    sake; on asyncio there is no task group, so an error is raised as it is.
11. **Shared headers.** The encoded headers are made once per set of headers a route sends; each response
    gets its own list of them (``response.headers`` changes it in place), not its own bytes.
"""

from __future__ import annotations

import asyncio
import math
import signal
import time
import weakref
from collections.abc import AsyncIterable, Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import anyio
from sse_starlette.sse import AppStatus
from starlette.background import BackgroundTask
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from .events.logs import run_logger

__all__ = ["EventStreamResponse", "server_stopping"]

logger = run_logger("streamkit")

_PING = b": ping\n\n"
"""The heartbeat: an SSE comment, ignored by every client."""

_SSE_HEADERS: Mapping[str, str] = {
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Headers every stream carries (proxies must neither cache nor buffer it); the caller's may replace the first."""

_GONE = frozenset({"http.disconnect", "websocket.disconnect"})
"""The ASGI messages that say the client went away."""


async def _aclose(iterator: object) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


class _SendTimeout(TimeoutError):
    """A send the client did not take within ``send_timeout``."""


class EventStreamResponse(Response):
    """A ``text/event-stream`` response of pre-encoded SSE bytes.

    ``heartbeat`` is the idle time (seconds) after which a ``: ping`` comment is sent (0 disables it);
    ``send_timeout`` drops a client that does not take a frame within that time. When the client
    disconnects, the stream is cancelled and the frames' iterator (and with it the agent's generator) is
    closed. ``on_disconnect`` is awaited when the client goes away; ``on_shutdown`` gives the bytes that end
    the stream when the server shuts down while it is open, after ``shutdown_event`` is set and at most
    ``shutdown_grace_period`` seconds are given to the stream to end by itself.

    Each frame is sent as soon as it is produced, one write per frame. When frames come faster than that
    (a burst of frames that were ready at once, or a send that had to wait for the socket), a task of
    its own writes them from then on, and whatever piled up while a send was in progress leaves in one
    write of at most about ``max_batch_bytes``. The frames are always pulled in the request's task.
    """

    media_type = "text/event-stream"

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
        if heartbeat < 0:
            raise ValueError("heartbeat must be >= 0 (0 disables it)")
        if shutdown_grace_period < 0:
            raise ValueError("shutdown_grace_period must be >= 0")
        self.body_iterator = content
        self.status_code = status_code
        self.background: BackgroundTask | None = None
        self.raw_headers = _raw_headers(headers, self.media_type, self.charset)
        self.heartbeat = heartbeat
        self.send_timeout = send_timeout
        self._on_disconnect = on_disconnect
        self._on_shutdown = on_shutdown
        self._shutdown_event = shutdown_event
        self._grace = shutdown_grace_period

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            send = _websocket_denial(send)
        live = _Live(self)
        try:
            if scope["type"] == "http" and scope.get("method", "GET").upper() == "HEAD":
                await self._head(send)
            else:
                # (Run here rather than in a method of its own: a coroutine frame fewer for every open stream.)
                if on_asyncio():
                    await live.run(receive, send)
                else:
                    await live.run_portable(receive, send)
                if live.gone and self._on_disconnect is not None:
                    await self._on_disconnect()
                if self.background is not None:
                    await self.background()
        except _SendTimeout:
            # A client that stopped reading is an expected event, not a crash: one line, no traceback. The
            # response cannot be completed (the connection is stuck), so the server closes it.
            live.stalled = True
            live.active = False
        finally:
            # However the response ended (done, disconnect, send timeout, shutdown), close the frames'
            # iterator: this closes the agent's generator, or tells a detached run its reader is gone. It is closed
            # in no cancel scope of its own: an agent waiting at a yield may hold cancel scopes (``anyio.fail_after``
            # around its run), which must be left in the order they were entered. The request's own cancellation
            # was taken back, so nothing interrupts the close but a cancelled scope around the whole response,
            # whose cancellation the agent's cleanup then rightly sees.
            live.active = False
            await _aclose(self.body_iterator)
        if live.stalled:
            logger.warning(
                "%s %s: the client took no data for %s s (send_timeout); stream dropped",
                scope.get("method", "GET"),
                scope.get("path", "?"),
                f"{self.send_timeout:g}",
            )
            return
        if live.shutting_down and not (live.ended or live.gone) and self._on_shutdown is not None:
            # The server is shutting down and cancelled the stream mid-run: end it with the protocol's
            # terminal frames instead of a torn body.
            live.ended = True
            with anyio.move_on_after(self.send_timeout or 5):
                await send({"type": "http.response.body", "body": self._on_shutdown(), "more_body": True})
            with anyio.move_on_after(self.send_timeout or 5):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _head(self, send: Send) -> None:
        # The headers a GET would get and an empty body: the stream never starts (it might never end).
        start = {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        await self._send_timed(send, start)
        await self._send_timed(send, {"type": "http.response.body", "body": b"", "more_body": False})
        if self.background is not None:
            await self.background()

    async def _send_timed(self, send: Send, message: Message) -> None:
        with anyio.move_on_after(self.send_timeout) as waiting:
            await send(message)
        if waiting.cancel_called:
            raise _SendTimeout()


_header_cache: dict[tuple[Any, ...], list[tuple[bytes, bytes]]] = {}
"""The encoded headers of each set of headers seen (a route sends the same ones with every stream)."""


def _raw_headers(headers: Mapping[str, str] | None, media_type: str, charset: str) -> list[tuple[bytes, bytes]]:
    """The response's raw headers: the SSE headers, the caller's (which may replace the first), and the
    connection headers. The header values are shared by the responses that send the same ones; each response
    gets a list of its own (``response.headers`` changes it in place)."""
    key = (media_type, charset, *headers.items()) if headers else (media_type, charset)
    raw = _header_cache.get(key)
    if raw is None:
        merged = MutableHeaders(headers=_SSE_HEADERS)
        if headers:
            merged.update(headers)
        merged["connection"] = "keep-alive"
        merged["x-accel-buffering"] = "no"
        if "content-type" not in merged:  # as Starlette's Response writes it
            merged["content-type"] = f"{media_type}; charset={charset}"
        raw = merged.raw
        if len(_header_cache) < 256:
            _header_cache[key] = raw
    return list(raw)


class _Live:
    """One response's run: its state while the frames go out, and the two ways of running it.

    On asyncio (:meth:`run`) the frames go out from the request's own task; a timer (``loop.call_later``, one
    per stream, re-armed when it fires) sends the heartbeats (each from a short task of its own, the time of
    one send) and watches the sends; a task waiting in ``receive`` hears the client leave. Either, or the
    server's shutdown, stops the stream by cancelling the request's task, which takes the cancellation back
    (``Task.uncancel``) and ends the response. Elsewhere (:meth:`run_portable`, trio) an anyio task group
    runs the frames and a watcher task that does all of that.
    """

    __slots__ = (
        "active",
        "ended",
        "gone",
        "last_send",
        "loop",
        "pinging",
        "receive",
        "response",
        "send",
        "sending_since",
        "shutting_down",
        "stalled",
        "stopping",
        "task",
        "timer",
        "waiter",
    )

    def __init__(self, response: EventStreamResponse) -> None:
        self.response = response
        self.active = True  # frames may still be sent
        self.ended = False  # the body's last message was sent
        self.gone = False  # the client went away
        self.stalled = False  # a send took longer than the send timeout
        self.shutting_down = False
        self.stopping = False  # the request's task was cancelled to stop the stream
        self.last_send = time.monotonic()
        self.sending_since: float | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.waiter: asyncio.Task[Any] | None = None
        self.pinging: asyncio.Task[None] | None = None
        self.receive: Receive | None = None
        self.send: Send | None = None

    # -- asyncio -------------------------------------------------------------------------------------

    async def run(self, receive: Receive, send: Send) -> None:
        response = self.response
        self.loop = asyncio.get_running_loop()
        self.task = task = asyncio.current_task()
        assert task is not None
        self.send = send
        try:
            start = {"type": "http.response.start", "status": response.status_code, "headers": response.raw_headers}
            await send(start)
            self._listen(receive)
            self._tick()
            _listen_for_shutdown(self)
            await self.pump(send, None)
            self.active = False
            pinging = self.pinging
            if pinging is not None and not pinging.done():
                await asyncio.wait([pinging])
            self.ended = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not self.stopping or task.uncancel() > 0:
                raise
        finally:
            self.active = False
            self.task = None
            _forget(self)
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            waiter = self.waiter
            if waiter is not None:
                self.waiter = None
                waiter.remove_done_callback(self._heard)
                waiter.cancel()
        if self.stalled:
            raise _SendTimeout()

    def stop(self) -> None:
        """Stop the stream: cancel the request's task while it sends frames (once)."""
        if self.active and not self.stopping and self.task is not None:
            self.stopping = True
            self.active = False
            self.task.cancel()

    def _listen(self, receive: Receive) -> None:
        assert self.loop is not None
        self.receive = receive
        waiter: asyncio.Task[Any] = self.loop.create_task(receive())  # type: ignore[arg-type]
        self.waiter = waiter
        waiter.add_done_callback(self._heard)

    def _heard(self, waiter: asyncio.Task[Any]) -> None:
        self.waiter = None
        if waiter.cancelled() or not self.active:
            return
        message = None if waiter.exception() is not None else waiter.result()
        if message is None or message["type"] in _GONE:
            self.gone = True
            self.stop()
        elif self.receive is not None:  # a message of no interest (a body already read): wait for the next one
            self._listen(self.receive)

    def _tick(self) -> None:
        """The timer: a heartbeat after ``heartbeat`` idle seconds, the end of a send that takes too long."""
        self.timer = None
        if not self.active:
            return
        response = self.response
        interval = response.heartbeat
        timeout = response.send_timeout
        now = time.monotonic()
        since = self.sending_since
        delay = math.inf
        if since is not None:
            if timeout is not None:
                if now - since >= timeout:
                    self.stalled = True
                    self.stop()
                    return
                delay = since + timeout - now
        else:
            if timeout is not None:
                delay = timeout  # look again for a send that starts meanwhile
            if interval > 0:
                idle = now - self.last_send
                if idle >= interval - _EARLY:
                    self._ping()
                    idle = 0.0
                delay = min(delay, interval - idle)
        if delay < math.inf:
            assert self.loop is not None
            self.timer = self.loop.call_later(delay, self._tick)

    def _ping(self) -> None:
        pinging = self.pinging
        if pinging is None or pinging.done():
            assert self.loop is not None
            self.pinging = self.loop.create_task(self._send_ping())

    async def _send_ping(self) -> None:
        send = self.send
        assert send is not None
        self.sending_since = time.monotonic()
        try:
            await send({"type": "http.response.body", "body": _PING, "more_body": True})
        except Exception:  # an ASGI 2.4 server's OSError for a client that went away
            self.gone = True
            self.stop()
        finally:
            self.sending_since = None
            self.last_send = time.monotonic()
            self.pinging = None  # a done task kept for the stream's life is a few hundred bytes a stream

    def shutdown(self) -> None:
        """The server is stopping: tell the agent (``shutdown_event``), give it the grace period to end by
        itself, then stop the stream, which the response ends with the terminal frames."""
        if not self.active:
            return
        self.shutting_down = True
        response = self.response
        if response._shutdown_event is not None:
            response._shutdown_event.set()
        if self.loop is not None and response._grace > 0:
            self.loop.call_later(response._grace, self.stop)
        else:
            self.stop()

    # -- any anyio backend ---------------------------------------------------------------------------

    async def run_portable(self, receive: Receive, send: Send) -> None:
        # Two tasks: the frames, and one watcher that waits for the client to leave or the server to stop,
        # sends the heartbeats and watches the sends (see _watch). The first to end ends the other.
        with _bare_errors():
            async with anyio.create_task_group() as tasks:

                async def part(run: Callable[[], Awaitable[None]]) -> None:
                    await run()
                    tasks.cancel_scope.cancel()

                tasks.start_soon(part, lambda: self._stream(send))
                tasks.start_soon(part, lambda: self._watch(receive, send))

    async def _watch(self, receive: Receive, send: Send) -> None:
        """Until the client disconnects or the server shuts down: a heartbeat after each idle ``heartbeat``,
        and, when the heartbeat is no longer than the send timeout, the watch over frame sends (one still in
        progress ``send_timeout`` after it began ends the response)."""
        response = self.response
        interval = response.heartbeat
        timeout = response.send_timeout if _watchdog(response) else None
        if AppStatus.should_exit:  # the server is already stopping (it is heard on asyncio only)
            self.shutting_down = True
            if response._shutdown_event is not None:
                response._shutdown_event.set()
            with anyio.move_on_after(response._grace):
                while self.active:
                    await anyio.sleep(0.1)
            return
        while self.active:
            now = time.monotonic()
            since = self.sending_since
            if timeout is not None and since is not None:
                if now - since >= timeout:
                    raise _SendTimeout()
                delay = since + timeout - now
            elif interval > 0:
                delay = interval - (now - self.last_send)
                if delay <= 0:
                    if self.active:
                        await response._send_timed(
                            send, {"type": "http.response.body", "body": _PING, "more_body": True}
                        )
                        self.last_send = time.monotonic()
                    continue
            else:
                delay = math.inf
            message: Any = None
            with anyio.move_on_after(delay):
                message = await receive()
            if message is not None and message["type"] in _GONE:
                self.active = False
                self.gone = True
                return

    async def _stream(self, send: Send) -> None:
        response = self.response
        await send({"type": "http.response.start", "status": response.status_code, "headers": response.raw_headers})
        if _watchdog(response) or response.send_timeout is None:
            # With a heartbeat no longer than the send timeout, the watcher watches the sends (see _watch).
            await self.pump(send, None)
        else:
            # Otherwise the deadline of one cancel scope is armed around each send.
            with anyio.CancelScope() as sending:
                await self.pump(send, sending)
            if sending.cancelled_caught:
                raise _SendTimeout()
        self.active = False
        self.ended = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- sending -------------------------------------------------------------------------------------

    async def pump(self, send: Send, sending: anyio.CancelScope | None) -> None:
        # Each frame is sent as it comes, in this task, until frames turn out to come faster than they can be
        # sent one by one (a burst of frames that were there at once, or a send that had to wait for the
        # socket): from then on a sender task writes them, and what piles up during a send leaves in one write.
        response = self.response
        coalesce = response.max_batch_bytes > 0 and on_asyncio()
        frames = aiter(response.body_iterator)
        ready = 0  # frames in a row that were there at once
        monotonic = time.monotonic
        pulled = monotonic()
        while True:
            try:
                chunk = await anext(frames)
            except StopAsyncIteration:
                return
            got = monotonic()
            ready = ready + 1 if got - pulled < _AT_ONCE else 0
            if sending is None:  # send_body, inlined (a call a frame): the send starts as the frame came
                self.sending_since = got
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self.sending_since = None
                self.last_send = pulled = monotonic()
            else:
                await self.send_body(send, chunk, sending)
                pulled = self.last_send
            if coalesce and (ready >= _BURST or pulled - got > _SLOW_SEND):
                break
        # The frames go on being pulled in this task, the one that pulled the first ones: an agent may hold a
        # cancel scope or a timeout across its yields (an anyio task group, ``asyncio.timeout``), and those
        # belong to the task that entered them. A sender task of its own writes what piles up.
        pipe = _Pipe(response.max_batch_bytes)
        sender = asyncio.get_running_loop().create_task(self._send_batches(pipe, send, sending))
        sender.add_done_callback(lambda done: self._sent(done, pipe))
        try:
            await pipe.fill(frames)
            await sender  # the last batch
        except asyncio.CancelledError:
            failed = None if not sender.done() or sender.cancelled() else sender.exception()
            if failed is None:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the cancel was the failed send's (see _sent): its error ends the response
            raise failed from None
        finally:
            if not sender.done():
                sender.cancel()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([sender])

    async def _send_batches(self, pipe: _Pipe, send: Send, sending: anyio.CancelScope | None) -> None:
        while (batch := await pipe.take()) is not None:
            await self.send_body(send, batch, sending)

    def _sent(self, sender: asyncio.Task[None], pipe: _Pipe) -> None:
        """The sender ended: if a send failed while frames were still coming, the frames' task is stopped (it
        may be waiting on the agent), and it raises the send's error (once they have all come, it awaits the
        sender and gets the error from there)."""
        if not sender.cancelled() and sender.exception() is not None and not pipe.done:
            self.stop()

    async def send_body(self, send: Send, chunk: bytes, sending: anyio.CancelScope | None) -> None:
        if sending is not None:
            sending.deadline = anyio.current_time() + (self.response.send_timeout or math.inf)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sending.deadline = math.inf
        else:
            self.sending_since = time.monotonic()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            self.sending_since = None
        self.last_send = time.monotonic()


def _watchdog(response: EventStreamResponse) -> bool:
    """Whether the watcher watches the sends (a heartbeat no longer than the send timeout), else a cancel scope
    armed around each send does (:meth:`_Live.run_portable` only)."""
    timeout = response.send_timeout
    return timeout is not None and 0 < response.heartbeat <= timeout


_EARLY = 1e-3
"""A timer may fire this early (the event loop's clock resolution): it is on time."""

_AT_ONCE = 100e-6
"""A frame pulled within this many seconds was there at once (the agent did not wait)."""
_BURST = 8
"""After this many frames in a row that were there at once, frames are coalesced."""
_SLOW_SEND = 1e-3
"""A send that took this long waited for the socket: frames are coalesced from then on."""


def _websocket_denial(send: Send) -> Send:
    """``send`` for a response given on a WebSocket scope: the messages of an ASGI denial response."""

    async def wrapped(message: Message) -> None:
        if message["type"] in ("http.response.start", "http.response.body"):
            message = {**message, "type": "websocket." + message["type"]}
        await send(message)

    return wrapped


@contextmanager
def _bare_errors() -> Iterator[None]:
    """Raise a task group's single error bare, not wrapped in an ``ExceptionGroup``."""
    try:
        yield
    except BaseException as exc:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        raise exc


# --- the server's shutdown ------------------------------------------------------------------------


_POLL = 0.5
"""How often (seconds) the poller of an event loop looks whether the server is stopping."""

_listeners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[_Live]] = weakref.WeakKeyDictionary()
_pollers: set[asyncio.Task[None]] = set()


def _listen_for_shutdown(shutdown: _Live) -> None:
    """Call ``shutdown.shutdown()`` when the server stops (at once when it already is); starts the event loop's
    poller (asyncio)."""
    if AppStatus.should_exit:
        shutdown.shutdown()
        return
    loop = asyncio.get_running_loop()
    listeners = _listeners.get(loop)
    if listeners is None:
        _listeners[loop] = listeners = set()
        poller = loop.create_task(_poll(listeners))
        _pollers.add(poller)
        poller.add_done_callback(_pollers.discard)
    listeners.add(shutdown)


def _forget(shutdown: _Live) -> None:
    loop = asyncio.get_running_loop()
    listeners = _listeners.get(loop)
    if listeners is not None:
        listeners.discard(shutdown)


async def _poll(listeners: set[_Live]) -> None:
    """Until the server is stopping, look every ``_POLL`` seconds; then tell every stream of this event loop."""
    loop = asyncio.get_running_loop()
    try:
        while not server_stopping():
            await asyncio.sleep(_POLL)
        for shutdown in list(listeners):
            shutdown.shutdown()
    finally:
        if _listeners.get(loop) is listeners:
            del _listeners[loop]


def server_stopping() -> bool:
    """Whether the server is shutting down: sse-starlette's flag, or the flag of the uvicorn server that
    handles SIGTERM (unless the automatic drain is off, when only the flag counts)."""
    if AppStatus.should_exit:
        return True
    if not AppStatus.enable_automatic_graceful_drain:
        return False
    try:
        server = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
        return bool(getattr(server, "should_exit", False))
    except Exception:
        return False


def on_asyncio() -> bool:
    """Whether this runs on an asyncio event loop (else another anyio backend: trio)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Pipe:
    """Carries frames from their iterator (pulled by :meth:`fill`, in the response's task) to the sender
    (:meth:`take`, a task of its own): one chunk when one is waiting, all of them joined when several piled up.
    ``fill`` waits while ``limit`` bytes are waiting. (asyncio futures: the cheapest hand-over per frame.)"""

    __slots__ = ("_chunks", "_data", "_done", "_limit", "_room", "_size")

    def __init__(self, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = limit
        self._done = False
        self._data: asyncio.Future[None] | None = None  # the sender waits for a chunk
        self._room: asyncio.Future[None] | None = None  # fill waits for the sender

    @property
    def done(self) -> bool:
        """Whether :meth:`fill` has ended (every frame is in, or it failed or was cancelled)."""
        return self._done

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
