"""Resumable runs: an agent's frames produced detached from the HTTP request, read back from a stream store.

With resumable mode on, a route hands the run's encoded frames to :meth:`Resumable.start`: a task of this
worker drives them into the :class:`~streamkit.store.StreamStore` (batched by a
:class:`~streamkit.store.StoreWriter`) while renewing the run's lease, and the POST response is just the first
reader (:meth:`Resumable.read`). A dropped connection, a page reload or a reconnect that lands on another
worker is one more reader of the same run, from the beginning or from an SSE ``Last-Event-ID``: every frame a
reader sends carries an id naming its place in the store (:func:`with_ids`), so a resume from any id the client
has seen sends each later frame exactly once.

How a run ends, besides the agent ending it:

* **cancel** (:meth:`Resumable.cancel`, from any worker): the agent's generator is closed and the run ends
  with the protocol's orderly stop (``Endings.cancelled``, computed from the mapper's state);
* **the store refuses more** (the run outgrew the store's bounds): the run ends with the protocol's error
  frames (``Endings.failed``);
* **the worker dies**: its lease lapses and the first reader to notice ends the run with ``Endings.dead``,
  closing bytes that are valid after any prefix of the stream (a writer that was only slow, and finds its run
  ended so, or gone from the store, stops with one warning line);
* **this worker shuts down** (:meth:`Resumable.aclose`): its runs end with the protocol's error frames;
* **the stream store fails** (it cannot be reached once the client's own retries are spent, as when the
  redis-server dies): the run **stops**. Nothing it writes could reach a reader (every reader, the POST
  response included, reads through the store) or be kept for a resume, so its agent is closed (its
  ``finally`` runs) rather than left to spend on output nobody gets. It stops when its writer's store call
  fails, or, when the store is back before the client's retries are spent, at its next write, which finds the
  run gone from the store. One warning line names the run and the error (no traceback); a last attempt writes
  the protocol's error frames, in case the store is back at once.
  Every reader of the run, on any worker, ends with the protocol's ``dead`` closing (its terminal error frame,
  without an id: it is not kept), as soon as its own store call fails. While the store is down, requests that
  need it are a 503; once it is back, new runs work as before (a run the store lost is a ``204`` to resume).

Only the principal that started a run may read or cancel it: runs are recorded with an owner digest of the
``authorize`` hook's principal, chats are looked up per owner, and every access compares the owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from starlette.requests import Request

from .events import RunAborted
from .events.logs import run_logger
from .frames import SHUTDOWN_TEXT, Mapper, frame
from .http import HTTPError
from .store import Lease, MemoryStore, RunClosed, RunInfo, RunTooLarge, StoreWriter, StreamStore
from .store.base import Release, Stop, hold_with_task
from .stringify import dumps, js_value

__all__ = [
    "LOST_TEXT",
    "TOO_LARGE_TEXT",
    "Endings",
    "PrincipalError",
    "Resumable",
    "ResumePoint",
    "StoreUnavailable",
    "as_resumable",
    "endings_from_mapper",
    "last_event_id",
    "principal_key",
    "with_ids",
]

logger = run_logger("streamkit.resumable")

TOO_LARGE_TEXT = "The response is too long to be kept for resuming."
"""What a client is told when a run outgrows the stream store's bounds."""

LOST_TEXT = "The server producing this response stopped before it ended. Please retry."
"""What a reader is told when the worker producing the run died (its lease lapsed)."""

_STORE_FAILED_TEXT = "An error occurred."


@dataclass(frozen=True, slots=True)
class Endings:
    """How a protocol ends a run that its agent did not end.

    ``cancelled()`` and ``failed(text)`` are called once, by the run's writer, when the run is cancelled or
    must stop with an error; they may use the mapper's state (open blocks). ``dead`` is written by a reader
    when the writer died: it must be a valid ending after *any* prefix of the stream.
    """

    cancelled: Callable[[], bytes]
    failed: Callable[[str], bytes]
    dead: bytes


def _frames(values: list[dict[str, Any]]) -> bytes:
    return b"".join(frame(v) for v in values)


def endings_from_mapper(mapper: Mapper, *, dead: bytes, trailer: bytes = b"", reason: str = "cancelled") -> Endings:
    """The usual :class:`Endings`: a ``RunAborted`` fed to ``mapper`` on cancel, ``mapper.fail`` on error."""
    ends = _MapperEndings(mapper, trailer, reason)
    return Endings(cancelled=ends.cancelled, failed=ends.failed, dead=dead)


class _MapperEndings:
    # One object with two methods, not two closures: a resumable run holds its endings while it is open.
    __slots__ = ("mapper", "reason", "trailer")

    def __init__(self, mapper: Mapper, trailer: bytes, reason: str) -> None:
        self.mapper = mapper
        self.trailer = trailer
        self.reason = reason

    def cancelled(self) -> bytes:
        return _frames(self.mapper.feed(RunAborted(reason=self.reason))) + self.trailer

    def failed(self, text: str) -> bytes:
        return _frames(self.mapper.fail(text)) + self.trailer


class PrincipalError(HTTPError):
    """The ``authorize`` hook returned a principal with no JSON form, where an owner must be told apart by it
    (a resumable run, the dialect's sessions): the server is misconfigured, a 500 naming the hook and the type."""

    status = 500


def principal_key(principal: Any) -> str:
    """A stable digest of the principal the ``authorize`` hook returned (``None`` for anonymous). Two requests
    belong to the same owner when their principals serialize alike.

    The principal must have a JSON form: a JSON value (a user id, a dict of claims), a pydantic model or a
    dataclass (through its fields). Any other object (an auth library's user instance) has no identity that
    holds across requests and workers, so it is refused at the first request that needs an owner, with a
    :class:`PrincipalError` (a JSON 500 naming the ``authorize`` hook and the type) and one error line in the
    log. Return the user's id from the hook, or give :class:`Resumable` / ``Sessions`` an ``owner=`` function
    that maps such objects to a string.
    """
    try:
        raw = dumps(js_value(principal))
    except (TypeError, ValueError, RecursionError):
        kind = type(principal)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        logger.error(
            "the authorize hook returned a principal of type %s, which has no JSON form to tell its owner by: "
            "return a JSON value such as the user's id, or pass owner= to Resumable / Sessions",
            name,
        )
        raise PrincipalError(
            f"the authorize hook returned a principal of type {kind.__qualname__}, which is not JSON "
            "(see the server log)",
            field="authorize",
        ) from None
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where a reader resumes: after the stored entry ``after`` and the first ``skip`` frames of the next one."""

    after: int = 0
    skip: int = 0


def with_ids(data: bytes, seq: int, *, skip: int = 0) -> bytes:
    """The frames of stored entry ``seq``, each with its SSE ``id:``, without the first ``skip`` of them.

    Every frame has an id, so a client that resumes from the last id it saw gets each later frame exactly once:
    the last frame of the entry is ``<seq>`` (the whole entry seen), the ``k``-th before it ``<seq>.<k>``.
    Sequence number 0 (an ending not kept in the store, see :meth:`Resumable.entries`) gets no ids.
    """
    if seq <= 0:
        return _without_frames(data, skip)
    blocks = data.split(b"\n\n")
    rest = blocks.pop()  # after the last frame: nothing, as streamkit writes frames
    last = len(blocks)
    out = []
    for k in range(skip + 1, last + 1):
        ident = b"%d" % seq if k == last else b"%d.%d" % (seq, k)
        out.append(b"%b\nid: %b\n\n" % (blocks[k - 1], ident))
    out.append(rest)
    return b"".join(out)


def _without_frames(data: bytes, skip: int) -> bytes:
    """``data`` without its first ``skip`` frames."""
    at = 0
    for _ in range(skip):
        end = data.find(b"\n\n", at)
        if end < 0:
            return b""
        at = end + 2
    return data[at:]


def last_event_id(request: Request) -> ResumePoint | None:
    """The SSE ``Last-Event-ID`` header (an id :func:`with_ids` wrote) as the point to resume after (``None``
    when absent); 400 when malformed. ``<seq>`` resumes after entry ``seq``, ``<seq>.<k>`` after its ``k``-th
    frame."""
    raw = request.headers.get("last-event-id")
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if text.startswith("-") and text[1:].isdigit():
        raise HTTPError("Last-Event-ID must not be negative", field="last-event-id")
    seq, dot, frame_no = text.partition(".")
    if not (seq.isascii() and seq.isdigit()) or (dot and not (frame_no.isascii() and frame_no.isdigit())):
        raise HTTPError("Last-Event-ID must be an event id this server sent", field="last-event-id")
    if not dot:
        return ResumePoint(int(seq))
    entry, k = int(seq), int(frame_no)
    if entry < 1 or k < 1:
        raise HTTPError("Last-Event-ID must be an event id this server sent", field="last-event-id")
    return ResumePoint(entry - 1, k)


def as_resumable(value: Resumable | StreamStore | None) -> Resumable | None:
    """A route's ``resumable`` option as a :class:`Resumable` (a bare store gets the default settings)."""
    if value is None or isinstance(value, Resumable):
        return value
    return Resumable(value)


class StoreUnavailable(HTTPError):
    """The stream store could not be reached (503): resumable runs cannot start, resume or be cancelled."""

    status = 503


def _summary(exc: BaseException) -> str:
    """One line for a store failure: the exception's type and message, no traceback."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _reader_failed(run: str, exc: Exception) -> None:
    logger.debug("run %s: the stream store failed under a reader (%s)", run, _summary(exc))


@contextlib.asynccontextmanager
async def _store_call() -> AsyncIterator[None]:
    try:
        yield
    except HTTPError:
        raise
    except Exception as exc:
        logger.warning("the stream store is unavailable (%s); answering 503", _summary(exc))
        raise StoreUnavailable("the stream store is unavailable; please retry", field="resumable") from exc


class Resumable:
    """Runs agents detached from their requests through a :class:`~streamkit.store.StreamStore`.

    One instance per app (per worker process); share the store between workers (a
    :class:`~streamkit.store.redis.RedisStore`) to let any worker serve any reader. ``flush_interval`` and
    ``flush_bytes`` set how the writer batches frames into store appends; ``heartbeat`` is how often the
    writer renews its lease and checks for a cancel (default: a quarter of the store's lease).
    ``owner`` turns a principal into the owner digest (default :func:`principal_key`).
    """

    def __init__(
        self,
        store: StreamStore | None = None,
        *,
        flush_interval: float = 0.02,
        flush_bytes: int = 64 * 1024,
        heartbeat: float | None = None,
        owner: Callable[[Any], str] = principal_key,
    ) -> None:
        self.store: StreamStore = store if store is not None else MemoryStore()
        self.flush_interval = flush_interval
        self.flush_bytes = flush_bytes
        self.heartbeat = heartbeat if heartbeat is not None else self.store.limits.lease / 4
        self.owner = owner
        self._tasks: set[asyncio.Task[None]] = set()

    # -- keys and access -----------------------------------------------------------------------------

    def chat_key(self, scope: str, chat: str, owner: str) -> str:
        """The store's chat key for ``chat`` of ``owner`` under ``scope`` (a protocol route)."""
        return hashlib.sha256(f"{scope}\0{owner}\0{chat}".encode()).hexdigest()

    async def find(self, scope: str, chat: str, owner: str) -> RunInfo | None:
        """The run in progress for this owner's ``chat``, if any. Raises :class:`StoreUnavailable`."""
        async with _store_call():
            run = await self.store.active(self.chat_key(scope, chat, owner))
            if run is None:
                return None
            return await self.owned(run, owner)

    async def owned(self, run: str, owner: str) -> RunInfo | None:
        """The run's record if it exists and ``owner`` started it, else ``None`` (no hint either way)."""
        async with _store_call():
            info = await self.store.info(run)
        if info is None or not hmac.compare_digest(info.owner, owner):
            return None
        return info

    # -- writing -------------------------------------------------------------------------------------

    @property
    def running(self) -> int:
        """How many runs this worker is producing now."""
        return len(self._tasks)

    async def start(
        self,
        frames: AsyncIterable[bytes],
        endings: Endings,
        *,
        owner: str,
        scope: str,
        chat: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> str:
        """Register a run and start producing ``frames`` into the store in a task of its own; its key.

        A run already in progress for the same owner's ``chat`` is cancelled: the chat has moved on.
        Raises :class:`StoreUnavailable` (a 503) when the store cannot be reached; ``frames`` is then closed.
        """
        chat_key = self.chat_key(scope, chat, owner) if chat is not None else None
        run = uuid.uuid4().hex
        try:
            async with _store_call():
                if chat_key is not None:
                    previous = await self.store.active(chat_key)
                    if previous is not None and await self.owned(previous, owner) is not None:
                        await self.store.cancel(previous)
                if not await self.store.create(run, owner=owner, chat=chat_key, meta=meta):  # pragma: no cover
                    raise RuntimeError("run key collision")
        except BaseException:
            aclose = getattr(frames, "aclose", None)
            if aclose is not None:
                await aclose()
            raise
        task = asyncio.get_running_loop().create_task(self._drive(run, frames, endings))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run

    async def _drive(self, run: str, frames: AsyncIterable[bytes], endings: Endings) -> None:
        # The frames are pumped in this task, and the store holds the run's lease (StreamStore.hold): should the
        # store say to stop first (a cancel, a lost lease, a failed store), it stops the pump by cancelling this
        # task. A run that waits on its agent holds this task and, while frames come, its writer's flusher.
        writer = StoreWriter(self.store, run, interval=self.flush_interval, max_bytes=self.flush_bytes)
        task = asyncio.current_task()
        assert task is not None
        pumping = True
        outcome: Lease | Exception | None = None  # why the store stopped the pump

        def stop(why: Lease | Exception) -> None:
            nonlocal outcome
            if pumping:
                outcome = why
                task.cancel()

        release = self._hold(run, stop)
        error: Exception | None = None
        iterator = aiter(frames)
        try:
            try:
                try:
                    await writer.write_all(iterator)
                finally:
                    aclose = getattr(iterator, "aclose", None)
                    if aclose is not None:
                        await aclose()
            except asyncio.CancelledError:
                if outcome is None or task.uncancel() > 0:
                    raise
            except Exception as exc:
                error = exc
            finally:
                pumping = False
        except asyncio.CancelledError:
            # This worker is shutting down: end the run properly rather than leave it to the lease.
            with contextlib.suppress(Exception):
                await asyncio.shield(self._shut(release, writer, endings))
            raise
        try:
            await release()
            if outcome is None:
                if error is None:
                    await writer.finish()
                elif isinstance(error, RunTooLarge):
                    logger.warning("run %s outgrew the stream store; ending it", run)
                    await writer.finish(endings.failed(TOO_LARGE_TEXT))
                elif isinstance(error, RunClosed):
                    self._lost(run)
                    await writer.abort()
                else:
                    await self._store_failed(run, writer, endings, error)
            elif isinstance(outcome, Exception):
                await self._store_failed(run, writer, endings, outcome)
            elif outcome == "cancelled":
                await writer.finish(endings.cancelled())
            else:
                self._lost(run)
                await writer.abort()
        except Exception as exc:  # the store failed as the run ended
            logger.warning("could not end the run in the stream store (%s; store key %s)", _summary(exc), run)

    def _hold(self, run: str, stop: Stop) -> Release:
        """The store's hold on ``run``'s lease (a store without :meth:`~streamkit.store.StreamStore.hold` gets a
        task per run, :func:`~streamkit.store.base.hold_with_task`)."""
        hold = getattr(self.store, "hold", None)
        if hold is None:
            return hold_with_task(self.store, run, self.heartbeat, stop)
        return cast(Release, hold(run, self.heartbeat, stop))

    @staticmethod
    async def _shut(release: Release, writer: StoreWriter, endings: Endings) -> None:
        await release()
        await writer.finish(endings.failed(SHUTDOWN_TEXT))

    @staticmethod
    def _lost(run: str) -> None:
        logger.warning(
            "the stream store no longer holds the run (a reader ended it when its lease lapsed, or the store lost "
            "it); the run is stopped (store key %s)",
            run,
        )

    async def _store_failed(self, run: str, writer: StoreWriter, endings: Endings, error: BaseException) -> None:
        """The store failed under a run: stop it (the agent is already closed), say so once, and try to end it."""
        logger.warning("the stream store failed (%s); the run is stopped (store key %s)", _summary(error), run)
        await writer.abort()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.heartbeat):
                await self.store.finish(run, endings.failed(_STORE_FAILED_TEXT))

    # -- reading and cancelling ----------------------------------------------------------------------

    async def read(
        self, run: str, *, dead: bytes, after: int | ResumePoint = 0, ids: bool = True
    ) -> AsyncIterator[bytes]:
        """The run's bytes after ``after`` (a sequence number, or where :func:`last_event_id` says), live until
        its end.

        With ``ids``, every frame carries its SSE ``id:`` (:func:`with_ids`), so that an EventSource client's
        ``Last-Event-ID`` names the frame to resume after. Access must have been checked (:meth:`owned`).
        """
        point = after if isinstance(after, ResumePoint) else ResumePoint(after)
        entries = self.store.read(run, point.after, dead=dead)  # not entries(): one generator less a stream
        try:
            while True:
                try:
                    seq, data = await anext(entries)
                except StopAsyncIteration:
                    return
                except Exception as exc:  # the store failed (and only the store: nothing else is caught here)
                    _reader_failed(run, exc)
                    yield dead  # not kept in the store, so without an id to resume from
                    return
                skip = point.skip if seq == point.after + 1 else 0
                if ids:
                    data = with_ids(data, seq, skip=skip)
                elif skip:
                    data = _without_frames(data, skip)
                if data:
                    yield data
        finally:
            aclose = getattr(entries, "aclose", None)
            if aclose is not None:
                await aclose()

    async def entries(self, run: str, *, dead: bytes, after: int = 0) -> AsyncIterator[tuple[int, bytes]]:
        """The store's ``(seq, bytes)`` entries of ``run`` after ``after``, live until its end.

        If the store fails on the way, the last entry is ``(0, dead)``: the protocol's closing for a stream cut
        at any point, not kept in the store (so a reader gives it no id). Access must have been checked.
        """
        try:
            async for entry in self.store.read(run, after, dead=dead):
                yield entry
        except Exception as exc:
            _reader_failed(run, exc)
            yield 0, dead

    async def cancel(self, run: str, owner: str) -> bool:
        """Ask ``run`` to stop, if ``owner`` started it and it is running; reaches any worker."""
        if await self.owned(run, owner) is None:
            return False
        async with _store_call():
            return await self.store.cancel(run)

    async def aclose(self) -> None:
        """End this worker's runs (with the protocol's shutdown error) and close the store."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.store.aclose()
