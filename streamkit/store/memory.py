"""The in-memory stream store: the default, for one process (all readers and writers on one event loop)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field

from .base import (
    Changes,
    Holder,
    Lease,
    Release,
    RunClosed,
    RunInfo,
    RunStatus,
    RunTooLarge,
    Stop,
    StoreLimits,
    wait_set,
)

__all__ = ["MemoryStore"]


@dataclass(slots=True, eq=False)
class _Run:
    owner: str
    chat: str | None
    meta: dict[str, str]
    lease_until: float
    entries: list[bytes] = field(default_factory=list)
    status: RunStatus = "running"
    cancelled: bool = False
    frames: int = 0
    size: int = 0
    expires: float = float("inf")
    changes: Changes = field(default_factory=Changes)
    # Made by the first one to wait on it and dropped once set: a run nobody waits on, and an ended run (kept for
    # its ttl), holds no event.
    cancel_event: asyncio.Event | None = None
    holder: Holder | None = None  # the writer's hold (its lease does not lapse while held)

    def notify(self) -> None:
        self.changes.notify()


class _Held(Holder):
    """A writer's hold on a run of this store; its :meth:`release` is what :meth:`MemoryStore.hold` returns."""

    __slots__ = ("entry", "lease")

    def __init__(self, stop: Stop, entry: _Run | None, lease: float) -> None:
        super().__init__(stop)
        self.entry = entry
        self.lease = lease

    async def release(self) -> None:
        self.drop()
        entry = self.entry
        if entry is not None and entry.holder is self:
            entry.holder = None
            entry.lease_until = time.monotonic() + self.lease
            entry.notify()  # the readers' wait has a bound again


class MemoryStore:
    """Runs kept in a dict of this process; readers are woken by events, leases use the monotonic clock.

    Suitable for a single worker process. Expired runs are swept on :meth:`create` (at most twice per
    ``ttl``) and on lookup. A run held by its writer (:meth:`hold`) keeps its lease until released, with no timer:
    the writer is in this process, and so is every reader that could find it gone.
    """

    def __init__(self, limits: StoreLimits | None = None) -> None:
        self.limits = limits or StoreLimits()
        self._runs: dict[str, _Run] = {}
        self._chats: dict[str, str] = {}
        self._next_sweep = 0.0

    # -- helpers -------------------------------------------------------------------------------------

    def _get(self, run: str) -> _Run | None:
        entry = self._runs.get(run)
        if entry is not None and entry.expires <= time.monotonic():
            self._drop(run, entry)
            return None
        return entry

    def _drop(self, run: str, entry: _Run) -> None:
        del self._runs[run]
        if entry.chat is not None and self._chats.get(entry.chat) == run:
            del self._chats[entry.chat]

    def _sweep(self, now: float) -> None:
        if now < self._next_sweep:
            return
        self._next_sweep = now + self.limits.ttl / 2
        for run, entry in list(self._runs.items()):
            if entry.status == "running" and entry.lease_until + self.limits.ttl <= now:
                entry.expires = now  # writer gone long ago and nobody read: forget it
            if entry.expires <= now:
                self._drop(run, entry)

    def _end(self, run: str, entry: _Run, closing: bytes, status: RunStatus) -> None:
        entry.entries.append(closing)
        entry.status = status
        entry.expires = time.monotonic() + self.limits.ttl
        if entry.cancel_event is not None:
            entry.cancel_event.set()
            entry.cancel_event = None
        holder, entry.holder = entry.holder, None
        if holder is not None:  # ended by someone else than its writer, which releases it first
            holder.end("lost")
        entry.notify()

    # -- StreamStore ---------------------------------------------------------------------------------

    async def create(
        self, run: str, *, owner: str, chat: str | None = None, meta: Mapping[str, str] | None = None
    ) -> bool:
        """Register a new running run; ``False`` if ``run`` exists."""
        now = time.monotonic()
        self._sweep(now)
        if self._get(run) is not None:
            return False
        self._runs[run] = _Run(owner=owner, chat=chat, meta=dict(meta or {}), lease_until=now + self.limits.lease)
        if chat is not None:
            self._chats[chat] = run
        return True

    async def append(self, run: str, frames: Sequence[bytes]) -> int:
        """Append ``frames`` as one entry; return its sequence number."""
        entry = self._get(run)
        if entry is None or entry.status != "running":
            raise RunClosed(run, "the run has ended")
        data = b"".join(frames)
        limits = self.limits
        if entry.size + len(data) > limits.max_bytes or entry.frames + len(frames) > limits.max_frames:
            raise RunTooLarge(run, f"the run exceeds {limits.max_bytes} bytes or {limits.max_frames} frames")
        entry.size += len(data)
        entry.frames += len(frames)
        entry.entries.append(data)
        if entry.holder is None:
            entry.lease_until = time.monotonic() + limits.lease
        entry.notify()
        return len(entry.entries)

    async def finish(self, run: str, closing: bytes = b"") -> bool:
        """End the run with ``closing`` as its last entry."""
        entry = self._get(run)
        if entry is None or entry.status != "running":
            return False
        self._end(run, entry, closing, "finished")
        return True

    async def read(self, run: str, after: int = 0, *, dead: bytes = b"") -> AsyncIterator[tuple[int, bytes]]:
        """Replay the entries after ``after``, then follow live until the end entry."""
        index = max(after, 0)
        while True:
            entry = self._get(run)
            if entry is None:
                return
            entries = entry.entries
            while index < len(entries):
                index += 1
                yield index, entries[index - 1]
                if index == len(entries) and entry.status != "running":
                    return
            if entry.status != "running":
                return
            wait = entry.lease_until - time.monotonic()
            if wait <= 0:
                self._end(run, entry, dead, "abandoned")
                continue
            await entry.changes.wait(None if wait == math.inf else wait)  # held: no bound but the release

    def hold(self, run: str, every: float, stop: Stop) -> Release:
        """Hold the run's lease until released (no renewals: see the class); ``stop`` is called on a cancel, or
        when someone else ends the run."""
        entry = self._get(run)
        held = _Held(stop, entry, self.limits.lease)
        if entry is None or entry.status != "running":
            asyncio.get_running_loop().call_soon(held.end, "lost")
        elif entry.cancelled:
            asyncio.get_running_loop().call_soon(held.end, "cancelled")
        else:
            entry.holder = held
            entry.lease_until = math.inf
        return held.release

    async def heartbeat(self, run: str) -> Lease:
        """Renew the lease."""
        entry = self._get(run)
        if entry is None or entry.status != "running":
            return "lost"
        if entry.holder is None:
            entry.lease_until = time.monotonic() + self.limits.lease
        return "cancelled" if entry.cancelled else "held"

    async def cancel(self, run: str) -> bool:
        """Flag the run as cancelled and wake its writer."""
        entry = self._get(run)
        if entry is None or entry.status != "running":
            return False
        entry.cancelled = True
        if entry.cancel_event is not None:
            entry.cancel_event.set()
        if entry.holder is not None:
            entry.holder.end("cancelled")
        return True

    async def wait_cancel(self, run: str, timeout: float) -> bool:
        """Wait for a cancel request (or the run's end)."""
        entry = self._get(run)
        if entry is None:
            return False
        if not entry.cancelled and entry.status == "running":
            if entry.cancel_event is None:
                entry.cancel_event = asyncio.Event()
            await wait_set(entry.cancel_event, timeout)
        return entry.cancelled

    async def info(self, run: str) -> RunInfo | None:
        """The run's record, if known."""
        entry = self._get(run)
        if entry is None:
            return None
        return RunInfo(
            run=run,
            owner=entry.owner,
            chat=entry.chat,
            status=entry.status,
            cancelled=entry.cancelled,
            seq=len(entry.entries),
            meta=dict(entry.meta),
        )

    async def active(self, chat: str) -> str | None:
        """The chat's run in progress, if any."""
        run = self._chats.get(chat)
        if run is None:
            return None
        entry = self._get(run)
        if entry is None or entry.status != "running":
            return None
        return run

    async def aclose(self) -> None:
        """Nothing to release."""
