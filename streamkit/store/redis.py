"""The Redis stream store: any worker on any host can serve any reader of any run.

Layout, for a run ``R`` under the key prefix ``P`` (the ``{R}`` hash tag keeps a run's keys in one cluster
slot, so every script touches one slot):

* ``P:run:{R}`` - a hash: ``owner``, ``chat``, ``meta`` (JSON), ``status``, ``cancel``, ``seq``,
  ``frames``, ``bytes``;
* ``P:frames:{R}`` - a Redis Stream; entry ``0-<seq>`` holds field ``d`` (the bytes of one batch) and, on
  the end entry, ``end``. Explicit ids make the stream id the sequence number, so ``XREAD`` from ``0-<n>``
  is exactly "everything after ``n``", and the sequence numbers are what the SSE ``id:`` values name;
* ``P:lease:{R}`` - a string that lives ``lease`` milliseconds and is renewed by the writer; its absence
  on a running run means the writer is dead;
* ``P:chat:<chat>`` - the run key of the chat's latest run;
* channel ``P:cancel`` - run keys whose cancellation was asked, so the worker holding the run learns at once
  (and the keys other parts on the same Redis publish with :meth:`RedisStore.publish`, such as the dialect's
  session store, so each worker holds one subscription for all of them).

Every state change is one Lua script (atomic, one round trip): appends check the status and the size
bounds and add the entry; the end entry and the status change are written together, so a reader sees
either a running run or its end entry, never a half-ended run. Followers block in ``XREAD BLOCK`` (no
polling while frames flow); between entries they re-check the lease, sleeping at most until it would lapse.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from ..events.logs import run_logger
from .base import Lease, RunClosed, RunInfo, RunTooLarge, StoreLimits

__all__ = ["RedisStore"]

logger = run_logger("streamkit.store")

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'chat', ARGV[2], 'meta', ARGV[3], 'status', 'running',
  'cancel', '0', 'seq', '0', 'frames', '0', 'bytes', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
return 1
"""

_APPEND = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'running' then return -1 end
local size = redis.call('HINCRBY', KEYS[1], 'bytes', string.len(ARGV[1]))
local frames = redis.call('HINCRBY', KEYS[1], 'frames', tonumber(ARGV[2]))
if size > tonumber(ARGV[3]) or frames > tonumber(ARGV[4]) then
  redis.call('HINCRBY', KEYS[1], 'bytes', -string.len(ARGV[1]))
  redis.call('HINCRBY', KEYS[1], 'frames', -tonumber(ARGV[2]))
  return -2
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('XADD', KEYS[2], '0-' .. seq, 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[5])
return seq
"""

# ARGV[3] == '1': only if the lease has lapsed (a reader ending a dead writer's run).
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('XADD', KEYS[2], '0-' .. seq, 'd', ARGV[1], 'end', '1')
redis.call('HSET', KEYS[1], 'status', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return seq
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


def _entries(response: Any) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The entries of a one-stream ``XREAD`` reply (RESP2: ``[[key, entries]]``; RESP3: ``{key: [entries]}``)."""
    if not response:
        return []
    if isinstance(response, dict):
        streams = list(response.values())
        entries = streams[0][0] if streams and streams[0] and isinstance(streams[0][0], list) else streams[0]
        return cast(list[tuple[bytes, dict[bytes, bytes]]], entries)
    return cast(list[tuple[bytes, dict[bytes, bytes]]], response[0][1])


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisStore:
    """A :class:`~streamkit.store.StreamStore` on Redis (5.0+; 7.0+ recommended), with the async ``redis`` client.

    ``RedisStore.from_url("redis://host:6379/0")`` or ``RedisStore(client)`` with a ``redis.asyncio.Redis``
    whose responses are not decoded. ``prefix`` namespaces the keys (several apps may share one Redis).
    ``block`` bounds, in seconds, how long a follower waits in one ``XREAD BLOCK`` before it re-checks the
    writer's lease; keep it below the client's socket timeout.
    """

    def __init__(
        self,
        client: Redis,
        *,
        limits: StoreLimits | None = None,
        prefix: str = "streamkit",
        block: float = 1.0,
    ) -> None:
        r: Any = client  # the client's annotations do not narrow responses; results are checked here
        if r.get_connection_kwargs().get("decode_responses"):
            raise ValueError("the Redis client must not decode responses (decode_responses=False)")
        self.client = client
        self._r = r
        self.limits = limits or StoreLimits()
        self.prefix = prefix
        self.block = block
        self._create = client.register_script(_CREATE)
        self._append = client.register_script(_APPEND)
        self._finish = client.register_script(_FINISH)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._cancel = client.register_script(_CANCEL)
        self._channel = f"{prefix}:cancel"
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed: asyncio.Event | None = None
        self._owns_client = False
        self._chat_of: dict[str, str] = {}

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        limits: StoreLimits | None = None,
        prefix: str = "streamkit",
        block: float = 1.0,
        **client_options: Any,
    ) -> RedisStore:
        """A store with its own client for ``url`` (closed by :meth:`aclose`); ``client_options`` (such as
        ``socket_connect_timeout``) go to ``redis.asyncio.Redis.from_url``."""
        store = cls(Redis.from_url(url, **client_options), limits=limits, prefix=prefix, block=block)
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
        created = await self._call(self._create, self._keys(run), args)
        if not created:
            return False
        if chat is not None:
            await self.client.set(self._chat_key(chat), run, px=self._keep_ms)
            self._chat_of[run] = chat
        return True

    async def append(self, run: str, frames: Sequence[bytes]) -> int:
        """Append ``frames`` as one entry (one script call); return its sequence number."""
        limits = self.limits
        args = [
            b"".join(frames),
            len(frames),
            limits.max_bytes,
            limits.max_frames,
            _ms(limits.lease),
            self._keep_ms,
        ]
        seq = int(await self._call(self._append, self._keys(run), args))
        if seq == -1:
            raise RunClosed(run, "the run has ended")
        if seq == -2:
            raise RunTooLarge(run, f"the run exceeds {limits.max_bytes} bytes or {limits.max_frames} frames")
        return seq

    async def _end(self, run: str, closing: bytes, *, dead: bool) -> bool:
        status = "abandoned" if dead else "finished"
        args = [closing, _ms(self.limits.ttl), "1" if dead else "0", status]
        ended = bool(await self._call(self._finish, self._keys(run), args))
        if ended:
            self._chat_of.pop(run, None)
            chat = await self._r.hget(self._keys(run)[0], "chat")
            if chat:
                chat_key = self._chat_key(chat.decode())
                # Let the chat pointer expire with the run (if it still points at this run).
                if await self._r.get(chat_key) == run.encode():
                    await self.client.pexpire(chat_key, _ms(self.limits.ttl))
            self._wake(run)
        return ended

    async def finish(self, run: str, closing: bytes = b"") -> bool:
        """End the run with ``closing`` as its last entry."""
        return await self._end(run, closing, dead=False)

    async def read(self, run: str, after: int = 0, *, dead: bytes = b"") -> AsyncIterator[tuple[int, bytes]]:
        """Replay with ``XREAD`` from ``0-<after>``, then follow with ``XREAD BLOCK``."""
        run_key, frames_key, lease_key = self._keys(run)
        last = max(after, 0)
        client = self._r
        block_ms = _ms(self.block)
        wait_ms = 0  # replay first without blocking
        while True:
            if wait_ms:
                response = await client.xread({frames_key: f"0-{last}"}, count=1024, block=wait_ms)
            else:
                response = await client.xread({frames_key: f"0-{last}"}, count=1024)
            entries = _entries(response)
            for entry_id, fields in entries:
                last = int(entry_id.rsplit(b"-", 1)[1])
                yield last, fields.get(b"d", b"")
                if b"end" in fields:
                    return
            if entries:
                wait_ms = 0
                continue
            pipe = client.pipeline(transaction=False)
            pipe.hget(run_key, "status")
            pipe.pttl(lease_key)
            status, lease_ms = await pipe.execute()
            if status != b"running":
                # Unknown, expired, or ended since the read above: take what the end added, then stop.
                for entry_id, fields in _entries(await client.xread({frames_key: f"0-{last}"})):
                    yield int(entry_id.rsplit(b"-", 1)[1]), fields.get(b"d", b"")
                return
            if lease_ms < 0:  # -2: no lease key: the writer stopped renewing it
                await self._end(run, dead, dead=True)
                continue
            wait_ms = min(block_ms, int(lease_ms) + 1)

    async def heartbeat(self, run: str) -> Lease:
        """Renew the lease (and the keys' safety expiry) in one script call."""
        args = [_ms(self.limits.lease), self._keep_ms]
        chat = self._chat_of.get(run)
        if chat is None:
            result = await self._call(self._heartbeat, self._keys(run), args)
        else:
            pipe = self.client.pipeline(transaction=False)
            await self._heartbeat(keys=self._keys(run), args=args, client=pipe)
            pipe.pexpire(self._chat_key(chat), self._keep_ms)
            result, _ = await pipe.execute()
        if result == b"lost":
            self._chat_of.pop(run, None)
        return cast(Lease, result.decode() if isinstance(result, bytes) else result)

    async def cancel(self, run: str) -> bool:
        """Flag the run and publish its key on the cancel channel."""
        flagged = bool(await self._call(self._cancel, self._keys(run), []))
        if flagged:
            await self.client.publish(self._channel, run)
        return flagged

    async def wait_cancel(self, run: str, timeout: float) -> bool:
        """Wait for the cancel channel to name ``run`` (or ``timeout``); the flag is checked too."""
        await self._listen()
        with self._waiter(run) as event:
            if await self.client.hget(self._keys(run)[0], "cancel") == b"1":
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout)
            return event.is_set() and await self.client.hget(self._keys(run)[0], "cancel") == b"1"

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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout)
            return event.is_set()

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

    async def _listen(self) -> None:
        if self._listener is None or self._listener.done():
            self._subscribed = asyncio.Event()
            self._listener = asyncio.create_task(  # in a context of its own: it serves every run, not one
                self._listen_loop(), name="streamkit-store-cancel-listener", context=contextvars.Context()
            )
        assert self._subscribed is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), 5)

    async def _listen_loop(self) -> None:
        # One subscription per store (per worker) serves every run it writes. While Redis is away it is retried
        # quietly, with a growing pause: one line when it is lost, one when it is back.
        pause = 0.0
        while True:
            pubsub = self._r.pubsub()
            try:
                await pubsub.subscribe(self._channel)
                assert self._subscribed is not None
                self._subscribed.set()
                if pause:
                    logger.info("the cancel subscription is back")
                    pause = 0.0
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        data = message["data"]
                        self._wake(data.decode() if isinstance(data, bytes) else str(data))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not pause:
                    logger.warning("the cancel subscription was lost (%s: %s); reconnecting", type(exc).__name__, exc)
                pause = min(max(pause * 2, 0.25), 2.0)
                await asyncio.sleep(pause)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def info(self, run: str) -> RunInfo | None:
        """The run's hash, decoded."""
        raw = await self._r.hgetall(self._keys(run)[0])
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
            seq=int(fields.get("seq", "0")),
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
        """Stop the cancel listener; close the client if the store made it."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._owns_client:
            await self._r.aclose()
