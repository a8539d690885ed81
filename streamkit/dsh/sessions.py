"""The server side of the dialect's agents: each agent id's conversation and its run in progress.

The dialect's client sends only its new message, so the server keeps the conversation in a
:class:`SessionStore`: per principal (the ``authorize`` hook's result, as a digest) and agent id, the messages
of the finished runs (the newest ones within ``max_messages`` and ``max_history_bytes``, never starting with a
tool result, see :func:`bounded`) and the run in progress, which ``POST {path}/{agentId}/cancel`` stops and
``GET {path}/{agentId}/status`` reports. Two stores:

* :class:`Sessions` (the default) keeps them in this process's memory, bounded in number and bytes per
  principal and over all of them; the least recently used idle conversation goes first, and one principal's
  conversations never make room for another's while that one holds more;
* :class:`~streamkit.dsh.redis.RedisSessions` keeps them in Redis (the server the resumable streams use), so
  that any worker serves any console and a restart keeps the history; a cancel reaches the run on whichever
  worker produces it.

A run's events pass through :meth:`Run.guard`: a cancel closes the agent's generator (its ``finally`` runs),
interrupting what it awaits, and the run ends in order, with ``RunAborted`` (the dialect's ``done`` with
``finishReason: "aborted"``).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Sequence
from typing import Any, Protocol

from pydantic_core import to_json

from ..events import ChatEvent, Message, RunAborted
from ..http import HTTPError
from ..resumable import principal_key

__all__ = ["CANCELLED", "Run", "Session", "SessionStore", "Sessions", "bounded", "idle_status"]

CANCELLED = "cancelled"
"""The ``reason`` of the ``RunAborted`` a cancelled run ends with."""


class Run:
    """One run in progress: its agent id, owner and ids, its start time, the conversation it continues
    (``history``, neutral messages), and the means to cancel it."""

    def __init__(self, agent_id: str, owner: str = "", history: Sequence[Message] = ()) -> None:
        self.agent_id = agent_id
        self.owner = owner
        self.history = list(history)
        self.run_id = uuid.uuid4().hex
        self.started_at = time.time()
        self.cancelled = False
        self._waiting: asyncio.Task[Any] | None = None
        self._interrupted: asyncio.Task[Any] | None = None

    def cancel(self) -> None:
        """Stop the run: an agent waiting for something is interrupted at once, else at its next event."""
        self.cancelled = True
        task = self._waiting
        if task is not None and self._interrupted is None:
            self._interrupted = task
            task.cancel()

    async def guard(self, events: AsyncIterable[ChatEvent] | Iterable[ChatEvent]) -> AsyncIterator[ChatEvent]:
        """``events`` until the run is cancelled; then the agent's iterator is closed and ``RunAborted`` ends it."""
        if not isinstance(events, AsyncIterable):
            for event in events:
                if self.cancelled:
                    break
                yield event
            else:
                return
            close = getattr(events, "close", None)
            if close is not None:
                close()
            yield RunAborted(reason=CANCELLED)
            return
        iterator = aiter(events)
        try:
            while not self.cancelled:
                task = _current_task()
                self._waiting = task
                try:
                    event = await anext(iterator)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if self._interrupted is None or task is None:
                        raise
                    # Our own cancel went through the agent: take it back, unless somebody else cancels too.
                    if task.uncancel() > 0:
                        raise
                    break
                finally:
                    self._waiting = None
                if self._interrupted is not None and task is not None:
                    task.uncancel()  # the agent swallowed the cancel; the run stops all the same
                    break
                yield event
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        yield RunAborted(reason=CANCELLED)


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # not on asyncio: a cancel takes effect at the next event
        return None


class SessionStore(Protocol):
    """Where the dialect's routes keep each agent id's conversation and its run in progress (see the module).

    Every method takes the principal the ``authorize`` hook returned; ``owner`` turns it into the key that
    keeps principals apart (:func:`~streamkit.resumable.principal_key` by default). A store that cannot be
    reached raises (the routes answer a JSON 503 naming ``sessions``).
    """

    owner: Callable[[Any], str]

    async def start(self, principal: Any, agent_id: str) -> Run:
        """Begin a run of ``agent_id``, continuing its conversation (``Run.history``); a 409
        (:class:`~streamkit.http.HTTPError` naming ``agentId``) if a run of it is in progress."""
        ...

    async def finish(self, run: Run, history: list[Message] | None) -> None:
        """The run ended: keep ``history`` (bounded) as the conversation, unless None; the agent id is idle
        again. Raises if the history could not be kept."""
        ...

    async def history(self, principal: Any, agent_id: str) -> list[Message]:
        """The principal's conversation of ``agent_id`` (empty if none)."""
        ...

    async def status(self, principal: Any, agent_id: str) -> dict[str, Any]:
        """What ``GET {path}/{agentId}/status`` answers: ``agentId``, ``status`` (``running`` or ``idle``),
        ``runId`` and ``startedAt`` (ms) while running, ``messages``, ``runs``."""
        ...

    async def cancel(self, principal: Any, agent_id: str) -> bool:
        """Stop the principal's run of ``agent_id`` in progress, wherever it runs; False if none."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds (connections, background tasks)."""
        ...


def idle_status(agent_id: str, messages: int = 0, runs: int = 0) -> dict[str, Any]:
    """The status of an agent id with no run in progress."""
    return {"agentId": agent_id, "status": "idle", "messages": messages, "runs": runs}


class Session:
    """One agent id's conversation (neutral messages) and its run in progress, if any (:class:`Sessions`)."""

    def __init__(self, agent_id: str, owner: str = "") -> None:
        self.agent_id = agent_id
        self.owner = owner
        self.history: list[Message] = []
        self.size = 0
        """The bytes of ``history`` (as JSON)."""
        self.run: Run | None = None
        self.runs = 0

    def status(self) -> dict[str, Any]:
        """What ``GET {path}/{agentId}/status`` answers."""
        if self.run is None:
            return idle_status(self.agent_id, len(self.history), self.runs)
        return {
            "agentId": self.agent_id,
            "status": "running",
            "runId": self.run.run_id,
            "startedAt": int(self.run.started_at * 1000),
            "messages": len(self.history),
            "runs": self.runs,
        }


class _Principal:
    """One principal's conversations, least recently used first, and the bytes their histories hold."""

    __slots__ = ("bytes", "sessions")

    def __init__(self) -> None:
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.bytes = 0


_MIB = 1024 * 1024


class Sessions:
    """The :class:`SessionStore` in this process's memory (the default; see the module).

    Bounds, each evicting idle conversations only (a running one is never dropped), least recently used first:

    * per conversation: the newest ``max_messages`` messages, within ``max_history_bytes`` (as JSON);
    * per principal: ``max_agents_per_principal`` conversations holding ``max_principal_bytes`` in all; over
      either, the principal's own least recently used conversation goes;
    * over all principals: ``max_agents`` conversations holding ``max_bytes``; over either, the conversation
      goes from the principal holding the most (conversations, or bytes), so a principal never loses its
      conversations to another's while it holds less than that one.

    Defaults: 10,000 conversations and 256 MiB over all principals, 1,000 conversations and 32 MiB per
    principal, 1,000 messages and 8 MiB per conversation (the dialect's routes pass their ``Limits``'
    ``max_messages`` and ``max_body_bytes``). Without an ``authorize`` hook every client is the same principal,
    so the per-principal bounds are the app's. ``owner`` turns a principal into its key (default
    :func:`~streamkit.resumable.principal_key`). The conversations live as long as the process: several
    workers, or a history that outlives a restart, need :class:`~streamkit.dsh.redis.RedisSessions`.
    """

    def __init__(
        self,
        *,
        max_agents: int = 10_000,
        max_agents_per_principal: int = 1000,
        max_messages: int = 1000,
        max_history_bytes: int = 8 * _MIB,
        max_principal_bytes: int = 32 * _MIB,
        max_bytes: int = 256 * _MIB,
        owner: Callable[[Any], str] = principal_key,
    ) -> None:
        self.max_agents = max_agents
        self.max_agents_per_principal = max_agents_per_principal
        self.max_messages = max_messages
        self.max_history_bytes = max_history_bytes
        self.max_principal_bytes = max_principal_bytes
        self.max_bytes = max_bytes
        self.owner = owner
        self._principals: dict[str, _Principal] = {}
        self._count = 0
        self._bytes = 0

    def __len__(self) -> int:
        return self._count

    @property
    def bytes(self) -> int:
        """The bytes all kept histories hold (as JSON)."""
        return self._bytes

    def get(self, principal: Any, agent_id: str) -> Session | None:
        """The principal's session of ``agent_id``, if there is one."""
        held = self._principals.get(self.owner(principal))
        return None if held is None else held.sessions.get(agent_id)

    async def start(self, principal: Any, agent_id: str) -> Run:
        """Begin a run of ``agent_id`` for ``principal``; a 409 naming ``agentId`` if one is in progress."""
        owner = self.owner(principal)
        held = self._principals.get(owner)
        session = None if held is None else held.sessions.get(agent_id)
        if session is not None and session.run is not None:
            raise HTTPError(f"agent {agent_id!r} is already running; cancel it first", field="agentId", status=409)
        if held is None:
            held = self._principals[owner] = _Principal()
        if session is None:
            session = held.sessions[agent_id] = Session(agent_id, owner)
            self._count += 1
        held.sessions.move_to_end(agent_id)
        session.run = Run(agent_id, owner, session.history)
        session.runs += 1
        self._evict(owner)
        return session.run

    async def finish(self, run: Run, history: list[Message] | None) -> None:
        """The run ended: keep ``history`` (bounded) as the conversation, unless None."""
        held = self._principals.get(run.owner)
        session = None if held is None else held.sessions.get(run.agent_id)
        if held is None or session is None or session.run is not run:
            return  # the conversation went meanwhile (its run is not this one)
        session.run = None
        if history is not None:
            session.history, size = bounded(history, self.max_messages, self.max_history_bytes)
            held.bytes += size - session.size
            self._bytes += size - session.size
            session.size = size
        self._evict(run.owner)

    async def history(self, principal: Any, agent_id: str) -> list[Message]:
        """The principal's conversation of ``agent_id``."""
        session = self.get(principal, agent_id)
        return [] if session is None else list(session.history)

    async def status(self, principal: Any, agent_id: str) -> dict[str, Any]:
        """The agent id's status (see :class:`SessionStore`)."""
        session = self.get(principal, agent_id)
        return idle_status(agent_id) if session is None else session.status()

    async def cancel(self, principal: Any, agent_id: str) -> bool:
        """Stop the principal's run of ``agent_id``; False if none is in progress."""
        session = self.get(principal, agent_id)
        if session is None or session.run is None:
            return False
        session.run.cancel()
        return True

    async def aclose(self) -> None:
        """Nothing to release."""

    def _evict(self, owner: str) -> None:
        held = self._principals.get(owner)
        while held is not None and (
            len(held.sessions) > self.max_agents_per_principal or held.bytes > self.max_principal_bytes
        ):
            if not self._drop_oldest(owner, held):
                break
        while self._count > self.max_agents and self._drop_from_largest(lambda p: len(p.sessions)):
            pass
        while self._bytes > self.max_bytes and self._drop_from_largest(lambda p: p.bytes):
            pass

    def _drop_from_largest(self, measure: Callable[[_Principal], int]) -> bool:
        """Drop the least recently used idle conversation of the principal holding the most; False if none."""
        if not self._principals:
            return False
        owner, held = max(self._principals.items(), key=lambda item: measure(item[1]))
        if self._drop_oldest(owner, held):
            return True
        for owner, held in sorted(self._principals.items(), key=lambda item: measure(item[1]), reverse=True):
            if self._drop_oldest(owner, held):  # the largest holder's conversations are all running
                return True
        return False

    def _drop_oldest(self, owner: str, held: _Principal) -> bool:
        """Drop the principal's least recently used idle conversation; False if all of them are running."""
        for agent_id, session in held.sessions.items():
            if session.run is None:
                del held.sessions[agent_id]
                held.bytes -= session.size
                self._bytes -= session.size
                self._count -= 1
                if not held.sessions:
                    del self._principals[owner]
                return True
        return False


def bounded(messages: list[Message], limit: int, max_bytes: int) -> tuple[list[Message], int]:
    """The newest messages, at most ``limit`` of them and ``max_bytes`` as JSON (each message's JSON counted),
    starting at a message that is not a tool result; and their bytes. Every session store keeps this."""
    first = max(len(messages) - limit, 0) if limit > 0 else len(messages)
    sizes: list[int] = []
    total = 0
    for message in reversed(messages[first:]):
        size = len(to_json(message))
        if total + size > max_bytes:
            break
        sizes.append(size)
        total += size
    sizes.reverse()
    kept = messages[len(messages) - len(sizes) :] if sizes else []
    while kept and kept[0].role == "tool":
        total -= sizes.pop(0)
        kept = kept[1:]
    return kept, total
