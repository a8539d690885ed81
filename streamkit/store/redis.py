"""The Redis stream store: any worker on any host can serve any reader of any run.

Layout, for a run ``R`` under the key prefix ``P`` (the ``{R}`` hash tag keeps a run's keys in one cluster
slot, so every script and transaction touches one slot):

* ``P:run:{R}`` - a hash: ``owner``, ``chat``, ``meta`` (JSON), ``status``, ``cancel``;
* ``P:frames:{R}`` - a Redis Stream: a header entry ``0-1`` (written at create, so the stream exists from the
  start), then entry ``<seq>-0`` for batch ``seq`` with field ``d`` (the bytes of the batch) and, on the end
  entry, ``end``. Explicit ids make the stream id the sequence number, so ``XREAD`` from ``<n>-1`` is exactly
  "everything after ``n``", and the sequence numbers are what the SSE ``id:`` values name;
* ``P:lease:{R}`` - a string that lives ``lease`` milliseconds and is renewed by the writer; its absence
  on a running run means the writer is dead;
* ``P:chat:<chat>`` - the run key of the chat's latest run;
* channel ``P:cancel`` - run keys whose cancellation was asked, so the worker holding the run learns at once
  (and the keys other parts on the same Redis publish with :meth:`RedisStore.publish`, such as the dialect's
  session store, so each worker holds one subscription for all of them).

Why an append is not a Lua script, as the other state changes are: a script copies its arguments into Lua
strings, and a batch is up to tens of KiB; Redis spends 3-4x the CPU of a plain ``XADD`` on it. An append is
one ``XADD NOMKSTREAM <seq>-0`` (pipelined with the lease's ``SET`` when half of the lease has passed since it
was renewed: the run's heartbeat renews it sooner), and the stream id does the checking: only
the worker that writes a run appends to it, so it counts the run's sequence number, frames and bytes itself
(and checks the bounds before it sends), and any end entry written meanwhile (by a reader that found the lease
lapsed, or another worker) holds the next id, so the ``XADD`` is refused (``RunClosed``); a run that expired
has no stream, and ``NOMKSTREAM`` refuses to make one. The writer's end entry goes in one ``MULTI`` of its
``XADD`` and a script that changes the status only if that entry took. So a reader sees either a running run or
its end entry, never a half-ended run.

The leases of every run a worker writes are kept by one task of its store (:meth:`RedisStore.hold`): every
``every`` seconds it renews them all in one pipeline of the heartbeat script, which also reads each run's cancel
flag; a run named on the cancel channel is checked at once, and so is every held run when the subscription is
(re)confirmed, since a cancel published while it was away went unheard.

Followers on other workers block in ``XREAD BLOCK`` (no polling while frames flow): one round trip per batch.
When one wakes empty-handed, it reads, checks the status and the lease in one ``MULTI``, sleeping at most until
the lease would lapse. A follower on the worker writing the run (the POST response) takes each entry from that
worker's memory once its append has returned, so it sends what Redis holds, under the same ids, without reading
it back; it checks Redis as the others do when the run is quiet for ``block`` seconds, when an append fails, and
when the writer stops without its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, ResponseError

from ..events.logs import run_logger
from .base import (
    Changes,
    Holder,
    Lease,
    Release,
    RunClosed,
    RunInfo,
    RunTooLarge,
    Stop,
    StoreLimits,
    raise_if_cancelled,
    wait_set,
)

__all__ = ["RedisStore"]

logger = run_logger("streamkit.store")

# What the cancel subscription's connection retries while it is held: nothing (the listener reconnects itself).
_NO_RETRY = Retry(NoBackoff(), 0)

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'chat', ARGV[2], 'meta', ARGV[3], 'status', 'running', 'cancel', '0')
redis.call('DEL', KEYS[2])
redis.call('XADD', KEYS[2], '0-1', 'h', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
return 1
"""

# After the writer's own end entry (``XADD <seq>-0 ... end 1`` in the same MULTI): take the status change only if
# that entry is the stream's last (so the XADD took, rather than failing on an end a reader wrote first).
_SEAL = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return false end
if redis.call('XLEN', KEYS[2]) ~= tonumber(ARGV[1]) + 1 then return false end
redis.call('HSET', KEYS[1], 'status', 'finished')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return redis.call('HGET', KEYS[1], 'chat')
"""

# An end written without the writer's count (by a reader, when the lease lapsed: ARGV[3] == '1'; or by another
# worker): the next sequence number is the stream's length (its header entry counts for the 0).
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return false end
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return false end
local seq = redis.call('XLEN', KEYS[2])
redis.call('XADD', KEYS[2], seq .. '-0', 'd', ARGV[1], 'end', '1')
redis.call('HSET', KEYS[1], 'status', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return redis.call('HGET', KEYS[1], 'chat')
"""

# The chat pointer expires with the run, if it still names the run.
_RELEASE_CHAT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""

_HEARTBEAT = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 'lost' end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if redis.call('HGET', KEYS[1], 'cancel') == '1' then return 'cancelled' end
return 'held'
"""

_CANCEL = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'cancel', '1')
return 1
"""


@dataclass(slots=True, eq=False)
class _Written:
    """A run this store appends to: what it counts itself (its last sequence number, frames and bytes, and when it
    last renewed the lease), and its latest entries, which this worker's own readers take from here.

    ``entries`` holds ``(seq, data, end)`` for consecutive sequence numbers up to ``seq``, each put here once Redis
    has it: those that some reader of this worker has yet to read (all of them until a first reader comes), within
    the store's ``window`` bytes. ``readers`` maps each of those readers to the last sequence number it read."""

    keys: list[str]
    seq: int = 0
    frames: int = 0
    size: int = 0
    renewed: float = 0.0
    entries: list[tuple[int, bytes, bool]] = field(default_factory=list)
    kept: int = 0
    readers: dict[object, int] = field(default_factory=dict)
    followed: bool = False
    open: bool = True  # False once this store no longer appends to the run (it ended, or was lost)
    changes: Changes = field(default_factory=Changes)

    def notify(self) -> None:
        """Wake the readers that wait for the next entry."""
        self.changes.notify()

    def keep(self, seq: int, data: bytes, end: bool, window: int) -> None:
        """Entry ``seq`` is in Redis: keep it for the readers, and drop what they all have read (the oldest first
        past ``window`` bytes, the newest always kept)."""
        self.seq = seq
        entries = self.entries
        entries.append((seq, data, end))
        kept = self.kept + len(data)
        readers = self.readers
        floor = min(readers.values()) if readers else seq if self.followed else 0
        drop, count = 0, len(entries)
        while drop < count and (entries[drop][0] <= floor or (kept > window and drop < count - 1)):
            kept -= len(entries[drop][1])
            drop += 1
        if drop:
            del entries[:drop]
        self.kept = kept
        self.notify()

    def after(self, last: int) -> list[tuple[int, bytes, bool]] | None:
        """The kept entries after ``last`` (none when ``last`` is the latest); ``None`` when they do not reach back
        to ``last``, so that Redis must be read."""
        entries = self.entries
        if last > self.seq:
            return None
        if not entries:
            return [] if last == self.seq else None
        first = entries[0][0]
        if first > last + 1:
            return None
        return entries[last + 1 - first :]


class _Held(Holder):
    """A writer's hold on a run of this store; its :meth:`release` is what :meth:`RedisStore.hold` returns."""

    __slots__ = ("run", "store")

    def __init__(self, stop: Stop, store: RedisStore, run: str) -> None:
        super().__init__(stop)
        self.store = store
        self.run = run

    async def release(self) -> None:
        self.drop()
        store, run = self.store, self.run
        if store._held.get(run) is self:
            del store._held[run]
        store._due.discard(run)


def _entries(response: Any) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The entries of a one-stream ``XREAD`` reply (RESP2: ``[[key, entries]]``; RESP3: ``{key: [entries]}``)."""
    if not response:
        return []
    if isinstance(response, dict):
        streams = list(response.values())
        entries = streams[0][0] if streams and streams[0] and isinstance(streams[0][0], list) else streams[0]
        return cast(list[tuple[bytes, dict[bytes, bytes]]], entries)
    return cast(list[tuple[bytes, dict[bytes, bytes]]], response[0][1])


def _evalsha(pipe: Any, script: AsyncScript, keys: list[str], args: list[Any]) -> None:
    """Queue ``script`` on ``pipe`` by its digest alone (``Script(client=pipe)`` would ask the server whether it
    has the script before every ``execute``, one more round trip)."""
    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)


async def _load(script: AsyncScript) -> None:
    script.sha = await script.registered_client.script_load(script.script)


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisStore:
    """A :class:`~streamkit.store.StreamStore` on Redis (6.2+; 7.0+ recommended), with the async ``redis`` client.

    ``RedisStore.from_url("redis://host:6379/0")`` or ``RedisStore(client)`` with a ``redis.asyncio.Redis``
    whose responses are not decoded. ``prefix`` namespaces the keys (several apps may share one Redis).
    ``block`` bounds, in seconds, how long a follower waits in one ``XREAD BLOCK`` before it re-checks the
    writer's lease; keep it below the client's socket timeout.

    A reader of a run that this store writes (the POST response, on the worker producing the run) is fed the
    entries from this store's memory as each append returns, rather than reading them back from Redis; ``window``
    bounds, in bytes, what one run keeps for such readers that lag behind (one that falls further behind reads
    Redis until it catches up). Readers on other workers read Redis.

    The bounds (``limits.max_bytes``, ``max_frames``) are counted by the store that appends to a run, which is
    the one that created it; a store that appends to a run made elsewhere counts from its own first append.
    """

    def __init__(
        self,
        client: Redis,
        *,
        limits: StoreLimits | None = None,
        prefix: str = "streamkit",
        block: float = 1.0,
        window: int = 256 * 1024,
    ) -> None:
        r: Any = client  # the client's annotations do not narrow responses; results are checked here
        if r.get_connection_kwargs().get("decode_responses"):
            raise ValueError("the Redis client must not decode responses (decode_responses=False)")
        self.client = client
        self._r = r
        self.limits = limits or StoreLimits()
        self.prefix = prefix
        self.block = block
        self.window = window
        self._create = client.register_script(_CREATE)
        self._seal = client.register_script(_SEAL)
        self._finish = client.register_script(_FINISH)
        self._release_chat = client.register_script(_RELEASE_CHAT)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._cancel = client.register_script(_CANCEL)
        self._channel = f"{prefix}:cancel"
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed: asyncio.Event | None = None
        self._held: dict[str, Holder] = {}  # the runs whose leases this store keeps (hold)
        self._due: set[str] = set()  # held runs to check at once (named on the cancel channel)
        self._due_wake = asyncio.Event()
        self._every = 0.0  # how often the keeper renews the held leases
        self._keeper: asyncio.Task[None] | None = None
        self._owns_client = False
        self._writing: dict[str, _Written] = {}  # the runs this store appends to
        self._chat_of: dict[str, str] = {}

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        limits: StoreLimits | None = None,
        prefix: str = "streamkit",
        block: float = 1.0,
        window: int = 256 * 1024,
        **client_options: Any,
    ) -> RedisStore:
        """A store with its own client for ``url`` (closed by :meth:`aclose`); ``client_options`` (such as
        ``socket_connect_timeout``) go to ``redis.asyncio.Redis.from_url``.

        Unless ``client_options`` name a ``retry``, a command that meets a broken connection is sent once more on
        a new one (redis-py's ``from_url`` retries nothing): after Redis restarts, every connection the pool
        kept is broken, and each would otherwise fail one request with a 503."""
        client_options.setdefault("retry", Retry(NoBackoff(), 1))
        store = cls(Redis.from_url(url, **client_options), limits=limits, prefix=prefix, block=block, window=window)
        store._owns_client = True
        return store

    # -- keys ----------------------------------------------------------------------------------------

    def _keys(self, run: str) -> list[str]:
        p = self.prefix
        return [f"{p}:run:{{{run}}}", f"{p}:frames:{{{run}}}", f"{p}:lease:{{{run}}}"]

    def _chat_key(self, chat: str) -> str:
        return f"{self.prefix}:chat:{chat}"

    @property
    def _keep_ms(self) -> int:
        # How long a running run's keys live without a heartbeat: the lease, then the ttl.
        return _ms(self.limits.lease + self.limits.ttl)

    async def _call(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        return await script(keys=keys, args=args)

    # -- StreamStore ---------------------------------------------------------------------------------

    async def create(
        self, run: str, *, owner: str, chat: str | None = None, meta: Mapping[str, str] | None = None
    ) -> bool:
        """Register a new running run; ``False`` if ``run`` exists."""
        meta_json = json.dumps(dict(meta or {}), separators=(",", ":"))
        args = [owner, chat if chat is not None else "", meta_json, _ms(self.limits.lease), self._keep_ms]
        keys = self._keys(run)
        sent = time.monotonic()
        created = await self._call(self._create, keys, args)
        if not created:
            return False
        self._writing[run] = _Written(keys, renewed=sent)
        if chat is not None:
            await self.client.set(self._chat_key(chat), run, px=self._keep_ms)
            self._chat_of[run] = chat
        return True

    async def _tally(self, run: str) -> _Written:
        """This store's count for ``run``; for a run made by another store, its sequence number from Redis."""
        written = self._writing.get(run)
        if written is None:
            keys = self._keys(run)
            pipe = self._r.pipeline(transaction=True)
            pipe.hget(keys[0], "status")
            pipe.xlen(keys[1])
            status, length = await pipe.execute()
            if status != b"running" or not length:
                raise RunClosed(run, "the run has ended")
            written = self._writing[run] = _Written(keys, seq=int(length) - 1)
        return written

    async def _add(self, run: str, seq: int, fields: dict[str, bytes], seal: list[Any] | None = None) -> list[Any]:
        """One ``MULTI``: the entry ``<seq>-0`` (refused unless it comes next in a stream that exists), then the lease's
        renewal, or the ``_SEAL`` script with ``seal`` as its arguments; the replies, errors included."""
        keys = self._keys(run)
        for _ in range(2):
            pipe = self._r.pipeline(transaction=True)
            pipe.xadd(keys[1], cast(Any, fields), id=f"{seq}-0", nomkstream=True)
            if seal is None:
                pipe.set(keys[2], b"1", px=_ms(self.limits.lease))
            else:
                _evalsha(pipe, self._seal, keys, seal)
            replies = cast(list[Any], await pipe.execute(raise_on_error=False))
            if not isinstance(replies[-1], NoScriptError):
                break
            await _load(self._seal)  # the server lost its scripts (a restart): again, where the XADD finds its entry
        return replies

    async def append(self, run: str, frames: Sequence[bytes]) -> int:
        """Append ``frames`` as one entry (one ``XADD``); return its sequence number. Renews the lease too (in the
        same round trip) when half of it has passed since it was last renewed: a run's heartbeat renews it sooner."""
        limits = self.limits
        written = await self._tally(run)
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        if written.size + len(data) > limits.max_bytes or written.frames + len(frames) > limits.max_frames:
            raise RunTooLarge(run, f"the run exceeds {limits.max_bytes} bytes or {limits.max_frames} frames")
        seq = written.seq + 1
        keys = written.keys
        now = time.monotonic()
        try:
            if now - written.renewed < limits.lease / 2:
                added = await self._r.execute_command("XADD", keys[1], "NOMKSTREAM", b"%d-0" % seq, "d", data)
            else:
                pipe = self._r.pipeline(transaction=False)
                pipe.execute_command("XADD", keys[1], "NOMKSTREAM", b"%d-0" % seq, "d", data)
                pipe.set(keys[2], b"1", px=_ms(limits.lease))
                added, _ = await pipe.execute(raise_on_error=False)
                written.renewed = now
        except ResponseError as exc:
            added = exc
        except BaseException:
            written.notify()  # this worker's readers look at the run in Redis themselves
            raise
        if added is None or isinstance(added, Exception):  # no stream (expired), or an end entry took the id
            self._forget(run)
            raise RunClosed(run, "the run has ended")
        written.frames += len(frames)
        written.size += len(data)
        written.keep(seq, data, False, self.window)
        return seq

    def _forget(self, run: str) -> None:
        written = self._writing.pop(run, None)
        self._chat_of.pop(run, None)
        if written is not None:
            written.open = False
            written.notify()

    async def _end(self, run: str, closing: bytes, *, dead: bool) -> bool:
        written = None if dead else self._writing.pop(run, None)
        self._forget(run)
        keys = self._keys(run)
        if written is not None:  # the writer's end: the data goes in an XADD, not through a script
            seq = written.seq + 1
            try:
                _, chat = await self._add(run, seq, {"d": closing, "end": b"1"}, [seq, _ms(self.limits.ttl)])
                if isinstance(chat, Exception):
                    raise chat
                if chat is not None:  # the end entry took: this worker's readers end with it
                    written.keep(seq, closing, True, self.window)
            finally:
                written.open = False
                written.notify()
        else:
            status = "abandoned" if dead else "finished"
            args = [closing, _ms(self.limits.ttl), "1" if dead else "0", status]
            chat = await self._call(self._finish, keys, args)
        if chat is None:
            return False
        if chat:
            await self._call(self._release_chat, [self._chat_key(chat.decode())], [run, _ms(self.limits.ttl)])
        self._wake(run)
        return True

    async def finish(self, run: str, closing: bytes = b"") -> bool:
        """End the run with ``closing`` as its last entry."""
        return await self._end(run, closing, dead=False)

    async def read(self, run: str, after: int = 0, *, dead: bytes = b"") -> AsyncIterator[tuple[int, bytes]]:
        """Replay with ``XREAD`` after ``<after>-1``, then follow with ``XREAD BLOCK``; a run that this store writes
        is followed in its memory (see the class)."""
        local = self._writing.get(run)
        if local is None:
            async for entry in self._read(run, after, dead, None, None):
                yield entry
            return
        reader = object()
        local.readers[reader] = max(after, 0)
        local.followed = True
        try:
            async for entry in self._read(run, after, dead, local, reader):
                yield entry
        finally:
            local.readers.pop(reader, None)

    async def _read(
        self, run: str, after: int, dead: bytes, local: _Written | None, reader: object
    ) -> AsyncIterator[tuple[int, bytes]]:
        run_key, frames_key, lease_key = self._keys(run)
        last = max(after, 0)
        client = self._r
        block_ms = _ms(self.block)
        follow = 0 if local is None else block_ms  # > 0: the lease was seen alive (or its writer is this store)
        while True:
            if local is not None:
                kept = local.after(last)
                if kept:
                    for seq, data, end in kept:
                        last = local.readers[reader] = seq
                        yield seq, data
                        if end:
                            return
                    follow = block_ms
                    continue
                if kept is not None and local.open and follow:
                    # Caught up with this worker's writer: wait for its next append. Woken by anything else (an
                    # append that failed), or by nothing for ``block`` seconds: check the run in Redis, below.
                    if not await local.changes.wait(self.block) or not local.after(last):
                        follow = 0
                    continue
                if not local.open:  # this store no longer writes the run: what is left of it is in Redis
                    local.readers.pop(reader, None)
                    local = None
            if follow:
                entries = _entries(await client.xread({frames_key: f"{last}-1"}, count=1024, block=follow))
                if not entries:
                    follow = 0
                    continue
                follow = block_ms  # entries came after the reader caught up: appends, each renewing the lease
            else:
                pipe = client.pipeline(transaction=True)
                pipe.xread({frames_key: f"{last}-1"}, count=1024)
                pipe.hget(run_key, "status")
                pipe.pttl(lease_key)
                response, status, lease_ms = await pipe.execute()
                entries = _entries(response)
                if status != b"running":
                    follow = 0
                    if not entries:  # unknown, expired, or ended with nothing more to read
                        return
                elif lease_ms < 0:  # -2: no lease key: the writer stopped renewing it
                    if not entries:
                        await self._end(run, dead, dead=True)
                        continue
                    follow = 0
                else:
                    follow = min(block_ms, int(lease_ms) + 1)
            for entry_id, fields in entries:
                last = int(entry_id.split(b"-", 1)[0])
                if local is not None:
                    local.readers[reader] = last
                yield last, fields.get(b"d", b"")
                if b"end" in fields:
                    return

    async def heartbeat(self, run: str) -> Lease:
        """Renew the lease (and the keys' safety expiry, and the chat pointer's) in one round trip."""
        (result,) = await self._renew([run])
        if isinstance(result, Exception):
            raise result
        return result

    async def _renew(self, runs: Sequence[str]) -> list[Lease | Exception]:
        """The heartbeat script for each of ``runs``, pipelined (with the chat pointers' expiry): each one's lease,
        or the error its script met. Raises what fails the whole pipeline (the connection)."""
        args = [_ms(self.limits.lease), self._keep_ms]
        out: list[Lease | Exception] = []
        for first in range(0, len(runs), 512):
            chunk = runs[first : first + 512]
            sent = time.monotonic()
            for _ in range(2):
                pipe = self._r.pipeline(transaction=False)
                for run in chunk:
                    _evalsha(pipe, self._heartbeat, self._keys(run), args)
                    chat = self._chat_of.get(run)
                    if chat is not None:
                        pipe.pexpire(self._chat_key(chat), self._keep_ms)
                replies = await pipe.execute(raise_on_error=False)
                results, at = [], 0
                for run in chunk:
                    results.append(replies[at])
                    at += 2 if run in self._chat_of else 1
                if not any(isinstance(r, NoScriptError) for r in results):
                    break
                await _load(self._heartbeat)  # the server lost its scripts (a restart)
            for run, result in zip(chunk, results, strict=True):
                if isinstance(result, Exception):
                    out.append(result)
                    continue
                lease = cast(Lease, result.decode() if isinstance(result, bytes) else result)
                if lease == "lost":
                    self._forget(run)
                elif (written := self._writing.get(run)) is not None:
                    written.renewed = sent
                out.append(lease)
        return out

    def hold(self, run: str, every: float, stop: Stop) -> Release:
        """Keep the run's lease with this store's keeper task, which renews every held lease in one pipeline at
        least every ``every`` seconds and checks a run at once when its cancel is published (see the module)."""
        holder = _Held(stop, self, run)
        held = self._held
        self._every = every if not held else min(self._every, every)
        held[run] = holder
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(  # in a context of its own: it serves every run, not one
                self._keep(), name="streamkit-store-leases", context=contextvars.Context()
            )
        return holder.release

    async def _keep(self) -> None:
        # Ends (and is started again by the next hold) once no run is held; it clears ``_keeper`` in the step it
        # finds none, so that a hold never counts on a keeper that is ending.
        held, due, wake = self._held, self._due, self._due_wake
        await self._listen()
        tick = time.monotonic() + self._every
        while True:
            raise_if_cancelled()
            if not held:
                self._keeper = None
                return
            now = time.monotonic()
            if now >= tick:
                runs = list(held)
                tick = now + self._every
                due.clear()
            elif due:
                runs = [run for run in due if run in held]
                due.clear()
            else:
                wake.clear()
                await wait_set(wake, min(tick - now, self._every))
                continue
            try:
                results = await self._renew(runs)
            except Exception as exc:
                results = [exc] * len(runs)
            for run, result in zip(runs, results, strict=True):
                if result != "held" and (holder := held.pop(run, None)) is not None:
                    holder.end(result)

    async def cancel(self, run: str) -> bool:
        """Flag the run and publish its key on the cancel channel."""
        flagged = bool(await self._call(self._cancel, self._keys(run), []))
        if flagged:
            await self.client.publish(self._channel, run)
        return flagged

    async def wait_cancel(self, run: str, timeout: float) -> bool:
        """Wait for the cancel channel to name ``run`` (or ``timeout``); the flag is read before the wait and once
        woken."""
        await self._listen()
        run_key = self._keys(run)[0]
        with self._waiter(run) as event:
            if await self.client.hget(run_key, "cancel") == b"1":
                return True
            return await wait_set(event, timeout) and await self.client.hget(run_key, "cancel") == b"1"

    async def publish(self, key: str) -> None:
        """Name ``key`` on the store's cancel channel: every :meth:`wait_published` for it, on any worker, wakes.

        For other parts kept on the same Redis (the dialect's sessions) to reach a worker at once; keys must not
        be run keys of this store."""
        await self.client.publish(self._channel, key)

    async def wait_published(
        self, key: str, timeout: float, *, check: Callable[[], Awaitable[bool]] | None = None
    ) -> bool:
        """Wait up to ``timeout`` seconds for :meth:`publish` of ``key``; whether it came.

        ``check``, when given, is awaited once the wait has begun (so a publish meanwhile is not missed); when it
        is true, the wait is over at once, and True returned."""
        await self._listen()
        with self._waiter(key) as event:
            if check is not None and await check():
                return True
            return await wait_set(event, timeout)

    @contextlib.contextmanager
    def _waiter(self, key: str) -> Iterator[asyncio.Event]:
        event = asyncio.Event()
        waiters = self._waiters.setdefault(key, set())
        waiters.add(event)
        try:
            yield event
        finally:
            waiters.discard(event)
            if not waiters:
                self._waiters.pop(key, None)

    def _wake(self, run: str) -> None:
        for event in self._waiters.get(run, ()):
            event.set()
        if run in self._held:
            self._due.add(run)
            self._due_wake.set()

    def _check_held(self) -> None:
        """Check every held run at once (the subscription is up again: a cancel may have gone unheard)."""
        if self._held:
            self._due.update(self._held)
            self._due_wake.set()

    async def _listen(self) -> None:
        if self._listener is None or self._listener.done():
            self._subscribed = asyncio.Event()
            self._listener = asyncio.create_task(  # in a context of its own: it serves every run, not one
                self._listen_loop(), name="streamkit-store-cancel-listener", context=contextvars.Context()
            )
        assert self._subscribed is not None
        await wait_set(self._subscribed, 5)

    async def _listen_loop(self) -> None:
        # One subscription per store (per worker) serves every run it writes. While Redis is away it is retried
        # quietly, with a growing pause: one line when it is lost, one when it is back.
        #
        # Its connection retries nothing while it listens, whatever the client's ``retry``: redis-py retries a
        # broken read by reconnecting and subscribing again inside the read, and a cancel that lands there can go
        # unheard (the listener then reads on, and ``aclose`` never returns). This loop reconnects instead. The
        # connection gets the client's retry back before it returns to the pool.
        pause = 0.0
        while True:
            raise_if_cancelled()
            pubsub = self._r.pubsub()
            kept: tuple[Any, Any] | None = None
            try:
                await pubsub.subscribe(self._channel)
                if (conn := pubsub.connection) is not None:
                    kept = (conn, conn.retry)
                    conn.retry = _NO_RETRY
                assert self._subscribed is not None
                self._subscribed.set()
                if pause:
                    logger.info("the cancel subscription is back")
                    pause = 0.0
                async for message in pubsub.listen():
                    kind = message.get("type")
                    if kind == "message":
                        data = message["data"]
                        self._wake(data.decode() if isinstance(data, bytes) else str(data))
                    elif kind == "subscribe":
                        self._check_held()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not pause:
                    logger.warning("the cancel subscription was lost (%s: %s); reconnecting", type(exc).__name__, exc)
                pause = min(max(pause * 2, 0.25), 2.0)
                await asyncio.sleep(pause)
            finally:
                if kept is not None:
                    kept[0].retry = kept[1]
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def info(self, run: str) -> RunInfo | None:
        """The run's hash, decoded, and its sequence number (the stream's length, less the header entry)."""
        run_key, frames_key, _ = self._keys(run)
        pipe = self._r.pipeline(transaction=True)
        pipe.hgetall(run_key)
        pipe.xlen(frames_key)
        raw, length = await pipe.execute()
        if not raw:
            return None
        fields = {k.decode(): v.decode() for k, v in raw.items()}
        status = fields.get("status", "running")
        return RunInfo(
            run=run,
            owner=fields.get("owner", ""),
            chat=fields.get("chat") or None,
            status=cast(Any, status),
            cancelled=fields.get("cancel") == "1",
            seq=max(int(length) - 1, 0),
            meta=json.loads(fields.get("meta") or "{}"),
        )

    async def active(self, chat: str) -> str | None:
        """The chat's latest run, if it is still running."""
        raw = await self._r.get(self._chat_key(chat))
        if raw is None:
            return None
        run = raw.decode()
        status = await self.client.hget(self._keys(run)[0], "status")
        return run if status == b"running" else None

    async def aclose(self) -> None:
        """Stop the lease keeper and the cancel listener; close the client if the store made it."""
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
            self._keeper = None
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._owns_client:
            await self._r.aclose()
