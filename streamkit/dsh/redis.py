"""The dialect's sessions in Redis: any worker serves any console, and a restart keeps the history.

:class:`RedisSessions` is a :class:`~streamkit.dsh.sessions.SessionStore` on the Redis server (and the client
configuration) of a :class:`~streamkit.store.redis.RedisStore`, the store of the resumable streams: it uses
that store's client, key prefix and cancel channel (one subscription per worker serves both).

Layout, for a principal whose owner digest is ``O``, under the store's prefix ``P`` and the sessions' ``name``
``N`` (the ``{O}`` hash tag keeps a principal's keys in one cluster slot, so every script touches one slot):

* ``P:N:{O}`` - a hash holding all of the principal's conversations: for agent id ``A``, ``h:A`` (the
  history: a JSON array of neutral messages), ``s:A`` (its bytes, each message's JSON counted, as
  :func:`~streamkit.dsh.sessions.bounded` counts them), ``n:A`` (its messages), ``k:A`` (runs so far), and of
  the run in progress ``r:A`` (its id, empty when idle), ``t:A`` (its start, ms), ``e:A`` (when its lease
  lapses, ms) and ``c:A`` (``1`` once a cancel was asked); ``bytes`` (the principal's total) and ``tick`` (a
  clock for the order of use);
* ``P:N:{O}:lru`` - a sorted set of the principal's agent ids by last use.

A run holds its conversation with a lease the worker renews every quarter of ``lease`` seconds (in a task of
its own, which also learns of a cancel): a worker that dies leaves a run whose lease lapses, and its agent id
is idle again for every worker. A cancel, from any worker, sets ``c:A`` and publishes ``N:<run id>`` on the
store's channel, so the worker producing the run stops it at once (its heartbeat reads the flag too, should
the message be lost). Every change is one Lua script (atomic, one round trip), with Redis's clock for the
leases: the bounds are enforced there, per principal (conversations and bytes, least recently used idle
conversation first), and both keys expire ``ttl`` seconds after the principal's last use.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from ..events import Message
from ..events.logs import run_logger
from ..http import HTTPError
from ..resumable import principal_key
from ..store.base import raise_if_cancelled
from ..store.redis import RedisStore
from .sessions import Run, bounded, idle_status

__all__ = ["RedisSessions", "SessionLost"]

logger = run_logger("streamkit.dsh")

_MIB = 1024 * 1024
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])

_COMMON = """
local h, z = KEYS[1], KEYS[2]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function running(a, now)
  local r = redis.call('HGET', h, 'r:' .. a)
  if not r or r == '' then return false end
  return tonumber(redis.call('HGET', h, 'e:' .. a) or '0') > now
end
local function drop(a)
  local size = tonumber(redis.call('HGET', h, 's:' .. a) or '0')
  redis.call('HDEL', h, 'h:' .. a, 's:' .. a, 'n:' .. a, 'k:' .. a, 'r:' .. a, 't:' .. a, 'e:' .. a, 'c:' .. a)
  redis.call('HINCRBY', h, 'bytes', 0 - size)  -- never -0, which HINCRBY refuses
  redis.call('ZREM', z, a)
end
local function evict(max_agents, max_bytes, now)
  while redis.call('ZCARD', z) > max_agents or tonumber(redis.call('HGET', h, 'bytes') or '0') > max_bytes do
    local dropped = false
    for _, a in ipairs(redis.call('ZRANGE', z, 0, -1)) do
      if not running(a, now) then
        drop(a)
        dropped = true
        break
      end
    end
    if not dropped then return end
  end
end
local function keep(ttl)
  redis.call('PEXPIRE', h, ttl)
  redis.call('PEXPIRE', z, ttl)
end
"""

# ARGV: agent id, run id, lease ms, ttl ms, max conversations, max bytes.
_START = (
    _COMMON
    + """
local a = ARGV[1]
local now = now_ms()
if running(a, now) then return {0, '', ''} end
if redis.call('HEXISTS', h, 's:' .. a) == 0 then
  redis.call('HSET', h, 'h:' .. a, '[]', 's:' .. a, '0', 'n:' .. a, '0', 'k:' .. a, '0')
end
redis.call('ZADD', z, redis.call('HINCRBY', h, 'tick', 1), a)
redis.call('HINCRBY', h, 'k:' .. a, 1)
redis.call('HSET', h, 'r:' .. a, ARGV[2], 't:' .. a, string.format('%.0f', now),
  'e:' .. a, string.format('%.0f', now + tonumber(ARGV[3])), 'c:' .. a, '0')
evict(tonumber(ARGV[5]), tonumber(ARGV[6]), now)
keep(ARGV[4])
return {1, redis.call('HGET', h, 'h:' .. a), string.format('%.0f', now)}
"""
)

# ARGV: agent id, run id, '1' to keep the history, its JSON, bytes, messages, ttl ms, max conversations, max bytes.
_FINISH = (
    _COMMON
    + """
local a = ARGV[1]
if redis.call('HGET', h, 'r:' .. a) ~= ARGV[2] then return 0 end
redis.call('HSET', h, 'r:' .. a, '', 'e:' .. a, '0', 'c:' .. a, '0')
if ARGV[3] == '1' then
  local before = tonumber(redis.call('HGET', h, 's:' .. a) or '0')
  redis.call('HSET', h, 'h:' .. a, ARGV[4], 's:' .. a, ARGV[5], 'n:' .. a, ARGV[6])
  redis.call('HINCRBY', h, 'bytes', tonumber(ARGV[5]) - before)
end
evict(tonumber(ARGV[8]), tonumber(ARGV[9]), now_ms())
keep(ARGV[7])
return 1
"""
)

# ARGV: agent id, run id, lease ms, ttl ms.
_HEARTBEAT = (
    _COMMON
    + """
local a = ARGV[1]
if redis.call('HGET', h, 'r:' .. a) ~= ARGV[2] then return 'lost' end
redis.call('HSET', h, 'e:' .. a, string.format('%.0f', now_ms() + tonumber(ARGV[3])))
keep(ARGV[4])
if redis.call('HGET', h, 'c:' .. a) == '1' then return 'cancelled' end
return 'held'
"""
)

# ARGV: agent id. The run id of the run asked to stop, or nil.
_CANCEL = (
    _COMMON
    + """
local a = ARGV[1]
if not running(a, now_ms()) then return false end
redis.call('HSET', h, 'c:' .. a, '1')
return redis.call('HGET', h, 'r:' .. a)
"""
)

# ARGV: agent id. {} when unknown, else {running, run id, started ms, messages, runs}.
_STATUS = (
    _COMMON
    + """
local a = ARGV[1]
if redis.call('HEXISTS', h, 's:' .. a) == 0 then return {} end
local v = redis.call('HMGET', h, 'r:' .. a, 't:' .. a, 'n:' .. a, 'k:' .. a)
return {running(a, now_ms()) and 1 or 0, v[1] or '', v[2] or '0', v[3] or '0', v[4] or '0'}
"""
)


class SessionLost(Exception):
    """The run no longer held its conversation when it ended (its lease lapsed and another run took the agent
    id, or the conversation expired): its history was not kept."""


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisSessions:
    """The :class:`~streamkit.dsh.sessions.SessionStore` in Redis (see the module), for several workers.

    ``RedisSessions(store)`` shares a :class:`~streamkit.store.redis.RedisStore`'s client, prefix and cancel
    channel (the store of ``StreamOptions(resumable=...)``, say); ``RedisSessions.from_url(url)`` makes a store
    of its own, closed by :meth:`aclose`. Bounds, per principal, each evicting idle conversations only, least
    recently used first: the newest ``max_messages`` messages within ``max_history_bytes`` per conversation,
    ``max_agents_per_principal`` conversations holding ``max_principal_bytes`` in all; a principal's keys expire
    ``ttl`` seconds (default 7 days) after its last use. ``lease`` (default the store's) is how long a run holds
    its agent id without a heartbeat from its worker. ``name`` tells apart sets of routes on one Redis;
    ``owner`` turns a principal into its key (default :func:`~streamkit.resumable.principal_key`).
    """

    def __init__(
        self,
        store: RedisStore,
        *,
        name: str = "dsh",
        max_agents_per_principal: int = 1000,
        max_messages: int = 1000,
        max_history_bytes: int = 8 * _MIB,
        max_principal_bytes: int = 32 * _MIB,
        ttl: float = 7 * 24 * 3600,
        lease: float | None = None,
        owner: Callable[[Any], str] = principal_key,
    ) -> None:
        if ttl <= 0 or (lease is not None and lease <= 0):
            raise ValueError("ttl and lease must be positive")
        self.store = store
        self.name = name
        self.max_agents_per_principal = max_agents_per_principal
        self.max_messages = max_messages
        self.max_history_bytes = max_history_bytes
        self.max_principal_bytes = max_principal_bytes
        self.ttl = ttl
        self.lease = lease if lease is not None else store.limits.lease
        self.owner = owner
        client = store.client
        self._start = client.register_script(_START)
        self._finish = client.register_script(_FINISH)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._cancel = client.register_script(_CANCEL)
        self._status = client.register_script(_STATUS)
        self._watches: dict[str, tuple[Run, asyncio.Task[None]]] = {}
        self._owns_store = False

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = "streamkit",
        client_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> RedisSessions:
        """Sessions on a store of their own for ``url`` (closed by :meth:`aclose`): ``options`` are the
        constructor's (``max_messages``, ``ttl``...); ``prefix`` and ``client_options`` (such as
        ``socket_connect_timeout``) are :meth:`RedisStore.from_url <streamkit.store.redis.RedisStore.from_url>`'s."""
        sessions = cls(RedisStore.from_url(url, prefix=prefix, **dict(client_options or {})), **options)
        sessions._owns_store = True
        return sessions

    def _keys(self, owner: str) -> list[str]:
        base = f"{self.store.prefix}:{self.name}:{{{owner}}}"
        return [base, base + ":lru"]

    def _signal(self, run_id: str) -> str:
        return f"{self.name}:{run_id}"

    # -- SessionStore --------------------------------------------------------------------------------

    async def start(self, principal: Any, agent_id: str) -> Run:
        """Begin a run of ``agent_id``; a 409 naming ``agentId`` if one is in progress on any worker."""
        owner = self.owner(principal)
        run = Run(agent_id, owner)
        args: list[str | int] = [agent_id, run.run_id, _ms(self.lease), _ms(self.ttl)]
        args += [self.max_agents_per_principal, self.max_principal_bytes]
        started, history, now = await self._start(keys=self._keys(owner), args=args)
        if not started:
            raise HTTPError(f"agent {agent_id!r} is already running; cancel it first", field="agentId", status=409)
        run.history = _MESSAGES.validate_json(history)
        run.started_at = int(now) / 1000
        task = asyncio.get_running_loop().create_task(  # in a context of its own: it outlives the request's
            self._watch(run), name=f"streamkit-dsh-session:{run.run_id}", context=contextvars.Context()
        )
        self._watches[run.run_id] = (run, task)
        return run

    async def finish(self, run: Run, history: list[Message] | None) -> None:
        """Keep ``history`` (bounded) and free the agent id; :class:`SessionLost` if the run no longer held it."""
        watched = self._watches.pop(run.run_id, None)
        if watched is not None:
            watched[1].cancel()
            await asyncio.wait([watched[1]])  # its end, whatever it was; a cancel of this call still stops it
        args: list[Any] = [run.agent_id, run.run_id]
        if history is None:
            args += ["0", "", 0, 0]
        else:
            kept, size = bounded(history, self.max_messages, self.max_history_bytes)
            args += ["1", to_json(kept), size, len(kept)]
        args += [_ms(self.ttl), self.max_agents_per_principal, self.max_principal_bytes]
        if not await self._finish(keys=self._keys(run.owner), args=args):
            raise SessionLost(f"the run of agent {run.agent_id!r} no longer held its conversation")

    async def history(self, principal: Any, agent_id: str) -> list[Message]:
        """The principal's conversation of ``agent_id``."""
        raw = await self.store.client.hget(self._keys(self.owner(principal))[0], f"h:{agent_id}")
        return [] if raw is None else _MESSAGES.validate_json(raw)

    async def status(self, principal: Any, agent_id: str) -> dict[str, Any]:
        """The agent id's status, as every worker sees it."""
        found = await self._status(keys=self._keys(self.owner(principal)), args=[agent_id])
        if not found:
            return idle_status(agent_id)
        running, run_id, started, messages, runs = found
        if not int(running):
            return idle_status(agent_id, int(messages), int(runs))
        return {
            "agentId": agent_id,
            "status": "running",
            "runId": _text(run_id),
            "startedAt": int(started),
            "messages": int(messages),
            "runs": int(runs),
        }

    async def cancel(self, principal: Any, agent_id: str) -> bool:
        """Stop the principal's run of ``agent_id`` on whichever worker produces it; False if none runs."""
        run_id = await self._cancel(keys=self._keys(self.owner(principal)), args=[agent_id])
        if run_id is None:
            return False
        watched = self._watches.get(_text(run_id))
        if watched is not None:  # this worker's run: no need to wait for the channel
            watched[0].cancel()
        else:
            await self.store.publish(self._signal(_text(run_id)))
        return True

    async def aclose(self) -> None:
        """Stop the heartbeats of this worker's runs; close the store if these sessions made it."""
        watches = [task for _, task in self._watches.values()]
        self._watches.clear()
        for task in watches:
            task.cancel()
        if watches:
            await asyncio.wait(watches)  # their ends, whatever they were; a cancel of this call still stops it
        if self._owns_store:
            await self.store.aclose()

    # -- the run's heartbeat -------------------------------------------------------------------------

    async def _watch(self, run: Run) -> None:
        """Renew the run's lease every quarter of it and stop the run when a cancel is asked, from any worker.

        While Redis is away it is retried quietly: one line when it fails, one when it is back."""
        keys = self._keys(run.owner)
        args: list[str | int] = [run.agent_id, run.run_id, _ms(self.lease), _ms(self.ttl)]
        lease = "held"

        async def beat() -> bool:
            nonlocal lease
            result = await self._heartbeat(keys=keys, args=args)
            lease = _text(result)
            return lease != "held"

        failing = False
        interval = self.lease / 4
        while True:
            raise_if_cancelled()
            try:
                published = await self.store.wait_published(self._signal(run.run_id), interval, check=beat)
            except Exception as exc:
                if not failing:
                    logger.warning(
                        "the session store failed (%s: %s); retrying the heartbeat of agent %r",
                        type(exc).__name__,
                        exc,
                        run.agent_id,
                    )
                    failing = True
                await asyncio.sleep(interval)
                continue
            if failing:
                logger.info("the session store is back; agent %r's run holds its conversation again", run.agent_id)
                failing = False
            if lease == "lost":
                return  # another run holds the agent id now: this one's history will not be kept
            if published or lease == "cancelled":
                run.cancel()
                return
