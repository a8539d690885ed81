"""The stream store interface: what a resumable run needs from the place its frames are kept.

A **run** is one agent response, identified by an opaque key. Its encoded SSE bytes are appended in
batches; each batch becomes one **entry** with a sequence number (1, 2, 3, ...), and the run ends with one
last entry marked as the end (which may carry the closing frames). A **reader** replays the entries after a
sequence number and then follows new ones live until the end entry.

The writer holds a **lease** that it renews while it runs. A reader that finds the lease lapsed on a run
that has not ended declares the writer dead: it ends the run itself with a closing frame the caller gives
(protocol-valid after any prefix), so no reader waits forever. A run may be **cancelled** by anyone who can
reach the store. The writer hands both to the store with :meth:`StreamStore.hold`: the store keeps the lease
and tells the writer when to stop (a cancel, a lost run, a failed store). One store serves every run its
worker writes that way, with no task or timer per run; :func:`hold_with_task` does it with a task per run,
through :meth:`StreamStore.heartbeat` and :meth:`StreamStore.wait_cancel`, for a store that has nothing
better.

A run may be registered under a **chat** key: :meth:`StreamStore.active` then finds the run in progress for
that chat. Ended runs are kept for ``ttl`` seconds, then forgotten; a run is bounded in bytes and frames.

:class:`StoreWriter` batches a producer's frames into appends, so the store costs one round trip per batch,
not per token.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from ..frames import frame_end

__all__ = [
    "Changes",
    "Holder",
    "Lease",
    "Release",
    "RunClosed",
    "RunInfo",
    "RunTooLarge",
    "Stop",
    "StoreError",
    "StoreLimits",
    "StoreWriter",
    "StreamStore",
    "hold_with_task",
]

Lease: TypeAlias = Literal["held", "cancelled", "lost"]
"""What a heartbeat learns: the lease is renewed (``held``), renewed but the run was asked to stop
(``cancelled``), or the run has ended or is gone (``lost``: the writer must stop)."""

Stop: TypeAlias = Callable[[Lease | Exception], None]
"""What :meth:`StreamStore.hold` calls when its writer must stop: with ``"cancelled"``, ``"lost"``, or the
exception of a store call that failed."""

Release: TypeAlias = Callable[[], Awaitable[None]]
"""What :meth:`StreamStore.hold` returns: awaited once the writer is done, before it ends the run."""


async def wait_set(event: asyncio.Event, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``event``; whether it is set.

    Not ``asyncio.wait_for``: on Python 3.11 that returns normally when it is cancelled in the same step as the
    event is set, so a task stopped at that moment runs on (a heartbeat that never ends)."""
    if event.is_set():
        return True
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await event.wait()
    return event.is_set()


def raise_if_cancelled() -> None:
    """Raise ``CancelledError`` if this task has been asked to stop.

    For the loops of the store's own tasks (heartbeats, flushers, listeners), called once a turn: a library that
    swallows a cancel (``asyncio.wait_for`` on Python 3.11, inside the Redis client's calls too) leaves the
    request counted on the task, and this turns it back into the stop it was."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class Changes:
    """Wakes whoever waits for a run's next change (a new entry, its end, its writer gone).

    Not an ``asyncio.Event`` made anew for every change: that is a deque of several hundred bytes per run, where
    this holds one small future per waiter while someone waits, and nothing otherwise."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] | None = None

    def notify(self) -> None:
        """Wake every waiter."""
        waiters, self._waiters = self._waiters, None
        if waiters:
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait for the next :meth:`notify`, at most ``timeout`` seconds (``None``: no bound); whether it came."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        if waiters is None:
            self._waiters = waiters = []
        waiters.append(waiter)
        try:
            if timeout is None:
                await waiter
            else:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await waiter
        finally:
            if self._waiters is waiters:  # not notified (a timeout, a cancel): the waiter goes
                waiters.remove(waiter)
                if not waiters:
                    self._waiters = None
        return waiter.done() and not waiter.cancelled()


RunStatus: TypeAlias = Literal["running", "finished", "abandoned"]


class Holder:
    """One writer's hold on a run, as a store keeps it: :meth:`end` calls the writer's ``stop`` once, and never
    after :meth:`drop` (the writer released the run)."""

    __slots__ = ("_stop",)

    def __init__(self, stop: Stop) -> None:
        self._stop: Stop | None = stop

    def end(self, why: Lease | Exception) -> None:
        """Tell the writer to stop, once."""
        stop, self._stop = self._stop, None
        if stop is not None:
            stop(why)

    def drop(self) -> None:
        """The writer released the run: tell it nothing more."""
        self._stop = None


def hold_with_task(store: StreamStore, run: str, every: float, stop: Stop) -> Release:
    """:meth:`StreamStore.hold` with a task per run: it waits up to ``every`` seconds for a cancel
    (:meth:`StreamStore.wait_cancel`), renews the lease (:meth:`StreamStore.heartbeat`), and calls ``stop``
    when either says to stop or a store call fails. For a store with no cheaper way to keep many leases."""
    holder = Holder(stop)

    async def watch() -> None:
        try:
            while True:
                raise_if_cancelled()
                if await store.wait_cancel(run, every):
                    holder.end("cancelled")
                    return
                lease = await store.heartbeat(run)
                if lease != "held":
                    holder.end(lease)
                    return
        except Exception as exc:
            holder.end(exc)

    task = asyncio.create_task(watch(), name=f"streamkit-lease:{run}")

    async def release() -> None:
        holder.drop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # no heartbeat may still be under way when the store is closed

    return release


class StoreError(Exception):
    """A store operation that cannot be done for this run."""

    def __init__(self, run: str, message: str) -> None:
        super().__init__(f"run {run!r}: {message}")
        self.run = run


class RunClosed(StoreError):
    """The run has ended (or expired, or never existed): nothing more may be appended."""


class RunTooLarge(StoreError):
    """Appending would take the run past its size bounds (:class:`StoreLimits`)."""


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """How long runs live and how large they may grow (seconds, bytes, frames).

    ``lease``: a writer that has not renewed its lease for this long is presumed dead. ``ttl``: an ended run
    (and, as a safeguard, a running one whose writer stopped renewing) is forgotten after this long.
    ``max_bytes`` / ``max_frames``: bounds on one run's stored bytes and on the number of frames (writes
    by the producer) it holds; the closing entry is always accepted.
    """

    lease: float = 10.0
    ttl: float = 600.0
    max_bytes: int = 32 * 1024 * 1024
    max_frames: int = 1_000_000

    def __post_init__(self) -> None:
        if self.lease <= 0 or self.ttl <= 0:
            raise ValueError("lease and ttl must be positive")
        if self.max_bytes <= 0 or self.max_frames <= 0:
            raise ValueError("max_bytes and max_frames must be positive")


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the store knows about a run."""

    run: str
    owner: str
    chat: str | None
    status: RunStatus
    cancelled: bool
    seq: int
    """The sequence number of the last entry written (0 before the first)."""
    meta: Mapping[str, str] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        """True until the run's end entry is written."""
        return self.status == "running"


class StreamStore(Protocol):
    """Where resumable runs keep their frames; shared by every worker that may serve a reader."""

    limits: StoreLimits

    async def create(
        self, run: str, *, owner: str, chat: str | None = None, meta: Mapping[str, str] | None = None
    ) -> bool:
        """Register a new running run and take its lease; ``False`` if ``run`` already exists.

        With ``chat``, the run becomes that chat's active run (replacing any earlier one).
        """
        ...

    async def append(self, run: str, frames: Sequence[bytes]) -> int:
        """Append ``frames`` as one entry; return its sequence number. Renews the lease.

        Raises :class:`RunClosed` if the run has ended or is unknown, :class:`RunTooLarge` past the limits.
        """
        ...

    async def finish(self, run: str, closing: bytes = b"") -> bool:
        """End the run with a last entry holding ``closing``; ``False`` if it had already ended.

        The run is then kept for ``limits.ttl`` seconds.
        """
        ...

    def read(self, run: str, after: int = 0, *, dead: bytes = b"") -> AsyncIterator[tuple[int, bytes]]:
        """Yield ``(seq, bytes)`` for every entry after ``after``, then follow live until the end entry.

        If the writer's lease lapses while the run is running, the run is ended with ``dead`` as its
        closing bytes (by whichever reader notices first), and that entry is yielded last. An unknown or
        expired run yields nothing.
        """
        ...

    def hold(self, run: str, every: float, stop: Stop) -> Release:
        """Keep the writer's lease on ``run`` (renewed at least every ``every`` seconds) until the returned release
        is awaited, and call ``stop`` once, from the event loop, when the writer must stop: ``"cancelled"`` (a
        cancel was asked, on any worker), ``"lost"`` (the run ended or is gone) or the exception of a failed store
        call. ``stop`` must not block; it is not called after the release. A store may keep every hold of its
        worker in one task (or, in this process's memory, with none); :func:`hold_with_task` is the fallback.
        """
        ...

    async def heartbeat(self, run: str) -> Lease:
        """Renew the writer's lease for ``limits.lease`` seconds; report whether to go on."""
        ...

    async def cancel(self, run: str) -> bool:
        """Ask a running run to stop; ``False`` if it is not running. Reaches the writer on any worker."""
        ...

    async def wait_cancel(self, run: str, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a cancel request; ``True`` once the run is asked to stop."""
        ...

    async def info(self, run: str) -> RunInfo | None:
        """The run's owner, chat, status and metadata; ``None`` if unknown or expired."""
        ...

    async def active(self, chat: str) -> str | None:
        """The run in progress for ``chat`` (not yet ended), if any."""
        ...

    async def aclose(self) -> None:
        """Release connections and background tasks."""
        ...


_LINGER = 1.0
"""How long, in seconds, a writer's flusher waits for a frame before it ends (the next frame starts another)."""


class _Signals:
    """The flusher's events: a frame is buffered (``wake``), the buffer is full (``full``), a batch was taken
    (``drained``)."""

    __slots__ = ("drained", "full", "wake")

    def __init__(self) -> None:
        self.wake = asyncio.Event()
        self.full = asyncio.Event()
        self.drained = asyncio.Event()


class StoreWriter:
    """Batches one run's frames into :meth:`StreamStore.append` calls.

    :meth:`write` and :meth:`write_all` only buffer; a background task appends what is buffered ``interval``
    seconds after the first unflushed frame, or as soon as ``max_bytes`` are waiting. A writer that gets more than twice
    ``max_bytes`` ahead of the store waits for it (back-pressure). :meth:`finish` appends what is left
    together with the closing bytes as the run's end entry.

    An entry holds whole frames, since a reader's ids count the frames of an entry: a large frame that comes to
    :meth:`write_all` in several chunks waits in the buffer until its last chunk.

    Store I/O happens only in the background task and in :meth:`finish`, so cancelling a task blocked in
    :meth:`write` never interrupts an append half-way. An append that fails is raised by the next
    :meth:`write` (and by :meth:`finish`).
    """

    __slots__ = (
        "_buffer",
        "_error",
        "_mark",
        "_signals",
        "_size",
        "_stopping",
        "_sure",
        "_task",
        "interval",
        "max_bytes",
        "run",
        "store",
    )

    def __init__(self, store: StreamStore, run: str, *, interval: float = 0.02, max_bytes: int = 65536) -> None:
        self.store = store
        self.run = run
        self.interval = interval
        self.max_bytes = max_bytes
        self._buffer: list[bytes] = []
        self._size = 0  # bytes buffered since the last batch was taken
        self._mark = max_bytes  # the size at which a write calls _over (0 after a failed append: at the next write)
        self._sure = 0  # the buffer's first chunks known to be whole frames (those of write)
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._signals: _Signals | None = None  # the flusher's, while it runs
        self._stopping = False

    async def write(self, frame: bytes) -> None:
        """Buffer one frame (or a group of frames) for the next append."""
        if self._error is not None:
            raise self._error
        buffer = self._buffer
        if not buffer:
            self._start()
        buffer.append(frame)
        self._sure = len(buffer)
        self._size += len(frame)
        if self._size >= self._mark:
            await self._over()

    async def write_all(self, frames: AsyncIterable[bytes]) -> None:
        """Write every chunk of ``frames``, in order, as :meth:`write` would (the producer's loop; ``frames`` is
        not closed here). A chunk that does not end a frame (:func:`streamkit.frames.frame_end`) is a piece of a large
        frame, appended together with the rest of it."""
        # write() inlined: this loop runs once per token, and a call per token would be a few percent of the
        # stream's whole cost. What is not per token (a failed append, a full buffer, a frame in pieces) is left to
        # _over and to the flusher. The flusher empties the buffer in place, so the list held here stays current.
        buffer = self._buffer
        async for chunk in frames:
            if not buffer:
                self._start()
            buffer.append(chunk)
            self._size += len(chunk)
            if self._size >= self._mark:
                await self._over()

    def _start(self) -> None:
        # The first frame since the last append: the interval starts now.
        signals = self._signals
        if signals is None or self._task is None:
            self._signals = signals = _Signals()
            self._task = asyncio.create_task(self._flusher(signals), name=f"streamkit-store-writer:{self.run}")
        signals.wake.set()

    async def _over(self) -> None:
        # The buffer reached max_bytes (or an append failed): tell the flusher once, and calls stop until the buffer
        # is twice as large, where the writer waits for the store (back-pressure).
        if self._error is not None:
            raise self._error
        signals = self._signals
        if signals is None:  # pragma: no cover - a full buffer has a flusher
            return
        signals.full.set()
        limit = 2 * self.max_bytes
        self._mark = limit
        task = self._task
        while self._size >= limit and self._error is None and task is not None and not task.done():
            signals.drained.clear()
            await signals.drained.wait()
        if self._error is not None:
            raise self._error

    def _take(self) -> list[bytes]:
        """What the buffer holds, as far as its last whole frame (the pieces of a frame after it stay)."""
        buffer = self._buffer
        sure = self._sure
        self._sure = 0
        self._size = 0
        self._mark = self.max_bytes
        end = len(buffer)
        if end > sure and not frame_end(buffer[-1]):
            end -= 1
            while end > sure and not frame_end(buffer[end - 1]):
                end -= 1
            if self._signals is not None:
                self._signals.wake.set()  # the rest of the frame is on its way: the interval starts again
        batch = buffer[:end]
        del buffer[:end]
        return batch

    async def _flusher(self, signals: _Signals) -> None:
        wake, full, drained = signals.wake, signals.full, signals.drained
        try:
            while True:
                raise_if_cancelled()
                if not await wait_set(wake, _LINGER):
                    if not self._buffer and not self._stopping:  # a run waiting on its agent holds no task
                        self._task = self._signals = None
                        return
                    continue
                if not full.is_set() and not self._stopping:
                    await wait_set(full, self.interval)
                wake.clear()
                full.clear()
                if self._stopping:
                    return
                batch = self._take()
                drained.set()
                if batch:
                    await self.store.append(self.run, batch)
        except Exception as exc:
            self._error = exc
            self._mark = 0
            drained.set()

    async def _stop(self) -> None:
        task = self._task
        signals = self._signals
        if task is not None and signals is not None and not task.done():
            self._stopping = True
            signals.wake.set()
            signals.full.set()  # cut short an interval wait in progress
            await asyncio.shield(task)

    async def flush(self) -> None:
        """Append everything buffered now (and wait for any append in flight); a frame still coming in pieces
        waits for its last piece."""
        await self._stop()
        self._stopping = False
        self._task = self._signals = None
        if self._error is not None:
            raise self._error
        batch = self._take()
        if batch:
            await self.store.append(self.run, batch)
        if self._buffer:
            self._start()

    async def finish(self, closing: bytes = b"") -> bool:
        """End the run: what is still buffered plus ``closing`` become its end entry.

        Returns ``False`` if the run had already ended (then nothing is written). After a failed background
        append (see :attr:`error`) the buffered frames are dropped and ``closing`` alone is written; so are the
        pieces of a frame whose last piece never came.
        """
        await self._stop()
        batch = b"".join(self._take()) if self._error is None else b""
        self._buffer.clear()
        self._size = 0
        return await self.store.finish(self.run, batch + closing)

    @property
    def error(self) -> BaseException | None:
        """The exception of a failed background append, if any."""
        return self._error

    async def abort(self) -> None:
        """Stop the background task without writing anything more (the run was lost)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._buffer.clear()
        self._size = 0
        self._sure = 0
