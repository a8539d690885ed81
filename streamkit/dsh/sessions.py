"""The server side of the dialect's agents: each agent id's conversation and its run in progress.

The dialect's client sends only its new message, so the server keeps the conversation: :class:`Sessions` holds,
per principal (the ``authorize`` hook's result, as a digest) and agent id, the messages of the finished runs
(the newest ``max_messages``, never starting with a tool result) and the run in progress, which
``POST {path}/{agentId}/cancel`` stops and ``GET {path}/{agentId}/status`` reports. At most ``max_agents``
conversations are kept; the least recently used idle one goes first. Sessions live in the memory of one
process: behind several workers, route an agent id to one worker (sticky sessions), or pass each worker's
routes a ``Sessions`` of your own.

A run's events pass through :meth:`Run.guard`: a cancel closes the agent's generator (its ``finally`` runs),
interrupting what it awaits, and the run ends in order, with ``RunAborted`` (the dialect's ``done`` with
``finishReason: "aborted"``).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any

from ..events import ChatEvent, Message, RunAborted
from ..http import HTTPError
from ..resumable import principal_key

__all__ = ["CANCELLED", "Run", "Session", "Sessions"]

CANCELLED = "cancelled"
"""The ``reason`` of the ``RunAborted`` a cancelled run ends with."""


class Run:
    """One run in progress: its ids and start time, and the means to cancel it."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
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


class Session:
    """One agent id's conversation (neutral messages) and its run in progress, if any."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.history: list[Message] = []
        self.run: Run | None = None
        self.runs = 0

    def status(self) -> dict[str, Any]:
        """What ``GET {path}/{agentId}/status`` answers."""
        out: dict[str, Any] = {"agentId": self.agent_id, "status": "running" if self.run else "idle"}
        if self.run is not None:
            out["runId"] = self.run.run_id
            out["startedAt"] = int(self.run.started_at * 1000)
        out["messages"] = len(self.history)
        out["runs"] = self.runs
        return out


class Sessions:
    """The conversations and runs in progress of the agents served by one set of routes (see the module)."""

    def __init__(
        self,
        *,
        max_agents: int = 10_000,
        max_messages: int = 1000,
        owner: Callable[[Any], str] = principal_key,
    ) -> None:
        self.max_agents = max_agents
        self.max_messages = max_messages
        self.owner = owner
        self._sessions: OrderedDict[tuple[str, str], Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, principal: Any, agent_id: str) -> Session | None:
        """The principal's session of ``agent_id``, if there is one."""
        return self._sessions.get((self.owner(principal), agent_id))

    def start(self, principal: Any, agent_id: str) -> tuple[Session, Run]:
        """Begin a run of ``agent_id`` for ``principal``; a 409 naming ``agentId`` if one is in progress."""
        key = (self.owner(principal), agent_id)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = Session(agent_id)
            self._evict()
        self._sessions.move_to_end(key)
        if session.run is not None:
            raise HTTPError(f"agent {agent_id!r} is already running; cancel it first", field="agentId", status=409)
        session.run = Run(agent_id)
        session.runs += 1
        return session, session.run

    def finish(self, session: Session, run: Run, history: list[Message] | None) -> None:
        """The run ended: keep ``history`` (bounded) as the conversation, unless None."""
        if session.run is run:
            session.run = None
        if history is not None:
            session.history = _bounded(history, self.max_messages)

    def _evict(self) -> None:
        if len(self._sessions) <= self.max_agents:
            return
        for key, session in list(self._sessions.items()):
            if session.run is None:
                del self._sessions[key]
                if len(self._sessions) <= self.max_agents:
                    return


def _bounded(messages: list[Message], limit: int) -> list[Message]:
    """The newest ``limit`` messages, starting at a message that is not a tool result."""
    if len(messages) <= limit:
        return messages
    kept = messages[-limit:] if limit > 0 else []
    while kept and kept[0].role == "tool":
        kept.pop(0)
    return kept
