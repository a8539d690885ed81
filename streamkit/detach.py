"""A frame stream that outlives its request: :func:`detach` runs it in a task of its own."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from .events.logs import run_logger

__all__ = ["detach", "detached_runs"]

logger = run_logger("streamkit")

_detached: set[Any] = set()


def detached_runs() -> int:
    """How many detached runs are still producing frames in this process."""
    return len(_detached)


class _Detached:
    """Runs a frame stream in its own task so that it outlives the request that started it.

    The request reads frames through this object; while it reads, the producer waits whenever more than
    ``max_buffer_bytes`` are unread (backpressure). Once the reader is gone, the run goes on to completion and
    only the newest ``max_buffer_bytes`` of unread frames are kept, so memory stays bounded. (Each side waits on
    a future of its own, made only while it waits: the cheapest hand-over for a stream that is mostly idle.)
    """

    __slots__ = ("_buffer", "_data", "_done", "_frames", "_max", "_reader", "_room", "_size", "task")

    def __init__(self, frames: AsyncIterable[bytes], max_buffer_bytes: int) -> None:
        self._frames = frames
        self._max = max_buffer_bytes
        self._buffer: deque[bytes] = deque()
        self._size = 0
        self._done = False
        self._reader = True
        self._data: asyncio.Future[None] | None = None  # the reader waits for a frame
        self._room: asyncio.Future[None] | None = None  # the producer waits for the reader
        self.task = asyncio.get_running_loop().create_task(self._produce())
        _detached.add(self.task)
        self.task.add_done_callback(_detached.discard)

    async def _produce(self) -> None:
        try:
            async for chunk in self._frames:
                while self._reader and self._size > self._max:
                    self._room = room = asyncio.get_running_loop().create_future()
                    await room
                self._buffer.append(chunk)
                self._size += len(chunk)
                if not self._reader:
                    while self._size > self._max and len(self._buffer) > 1:
                        self._size -= len(self._buffer.popleft())
                self._wake_reader()
        except Exception:  # encode_frames already turns failures into frames; this is a last resort
            logger.exception("detached run failed")
        finally:
            self._done = True
            self._wake_reader()

    def _wake_reader(self) -> None:
        data = self._data
        if data is not None:
            self._data = None
            if not data.done():
                data.set_result(None)

    def _wake_producer(self) -> None:
        room = self._room
        if room is not None:
            self._room = None
            if not room.done():
                room.set_result(None)

    def __aiter__(self) -> _Detached:
        return self

    async def __anext__(self) -> bytes:
        while not self._buffer:
            if self._done:
                raise StopAsyncIteration
            self._data = data = asyncio.get_running_loop().create_future()
            await data
        if len(self._buffer) == 1:
            chunk = self._buffer.popleft()
        else:
            chunk = b"".join(self._buffer)  # the reader fell behind: coalesce what is waiting
            self._buffer.clear()
        self._size = 0
        self._wake_producer()
        return chunk

    async def aclose(self) -> None:
        """The reader went away: let the run go on without it."""
        self._reader = False
        self._wake_producer()


def detach(frames: AsyncIterable[bytes], *, max_buffer_bytes: int = 1024 * 1024) -> AsyncIterator[bytes]:
    """Run ``frames`` in a task of its own that continues when the client disconnects (see ``_Detached``)."""
    return _Detached(frames, max_buffer_bytes)
