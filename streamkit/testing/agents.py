"""Scripted agents for tests: an agent core that plays a fixed run, from ChatEvents or from a few steps.

:class:`ScriptedRun` is an :data:`~streamkit.events.Agent` (a callable from a ``RunInput`` to ChatEvents) that
yields the same events on every run, or the next list of a sequence of runs; it records each ``RunInput``
it was given. :func:`scripted` builds one from steps: :func:`text` (a text block), :func:`tool_call` (a call
with its input and, when given, its result or error), :func:`approval` (a call that asks the user first, which
ends the run waiting for the answer), or any ChatEvent as it is. Serve it with any protocol's routes and call
them in-process (:func:`~streamkit.testing.call_route`) to test what a client would show.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from ..events import (
    ChatEvent,
    RunFinished,
    RunInput,
    RunStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolApprovalRequest,
    ToolCallEnd,
    ToolResult,
)

__all__ = ["ScriptedRun", "Step", "approval", "scripted", "text", "tool_call"]

Step = ChatEvent | list[ChatEvent]
"""One step of a script: a ChatEvent, or the events a helper below returns."""

_ids = itertools.count(1)


def text(content: str, *, id: str | None = None, chunks: int = 1) -> list[ChatEvent]:
    """A text block saying ``content``, in ``chunks`` deltas of about the same size."""
    bid = id or f"text-{next(_ids)}"
    size = max(1, -(-len(content) // max(chunks, 1)))
    deltas = [content[i : i + size] for i in range(0, len(content), size)] or [""]
    return [TextStart(id=bid), *[TextDelta(id=bid, delta=d) for d in deltas], TextEnd(id=bid)]


def tool_call(
    name: str,
    input: Any = None,
    *,
    output: Any = None,
    error: str | None = None,
    id: str | None = None,
    pending: bool = False,
) -> list[ChatEvent]:
    """A call of tool ``name`` with ``input``, then its result (``output``) or ``error``; with ``pending`` no
    result follows (a frontend tool the client runs)."""
    cid = id or f"call-{next(_ids)}"
    events: list[ChatEvent] = [ToolCallEnd(id=cid, name=name, input={} if input is None else input)]
    if not pending:
        events.append(ToolResult(id=cid, error=error) if error is not None else ToolResult(id=cid, output=output))
    return events


def approval(name: str, input: Any = None, *, id: str | None = None, reason: str | None = None) -> list[ChatEvent]:
    """A call of tool ``name`` that asks the user's approval first; the run ends waiting for the answer."""
    cid = id or f"call-{next(_ids)}"
    return [
        ToolCallEnd(id=cid, name=name, input={} if input is None else input),
        ToolApprovalRequest(id=f"approval-{cid}", tool_call_id=cid, reason=reason),
        RunFinished(finish_reason="tool-calls"),
    ]


def _flatten(steps: Iterable[Step]) -> list[ChatEvent]:
    events: list[ChatEvent] = []
    for step in steps:
        events.extend(step if isinstance(step, list) else [step])
    return events


class ScriptedRun:
    """An agent core yielding a fixed run: ``runs`` is one list of events (every run plays it) or a sequence of
    them (run *n* plays the *n*-th, the last one again after that). ``inputs`` holds every ``RunInput``."""

    def __init__(self, *runs: Sequence[ChatEvent]) -> None:
        if not runs:
            raise ValueError("ScriptedRun needs at least one run")
        self.runs = [list(run) for run in runs]
        self.inputs: list[RunInput] = []

    def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        """Play the next scripted run for ``run``."""
        self.inputs.append(run)
        events = self.runs[min(len(self.inputs), len(self.runs)) - 1]
        return self._play(events)

    @staticmethod
    async def _play(events: list[ChatEvent]) -> AsyncIterator[ChatEvent]:
        for event in events:
            yield event


def scripted(*steps: Step, finish: str = "stop") -> ScriptedRun:
    """An agent playing ``steps`` on every run, inside ``RunStarted`` / ``RunFinished(finish)`` (either left
    out when the steps bring their own, as :func:`approval` brings its finish)."""
    events = _flatten(steps)
    if not any(isinstance(e, RunStarted) for e in events):
        events.insert(0, RunStarted())
    if not any(e.type in ("run-finished", "run-error", "run-aborted") for e in events):
        events.append(RunFinished.model_validate({"finish_reason": finish}))
    return ScriptedRun(events)
