"""The script writer: the blocks the offline agent's paths are written with, turned into paced beats.

A script is a list of :data:`Beat`\\ s, ``(seconds to wait, event)``. A :class:`Writer` builds one run's
script: each block (reasoning, text, tool calls, sources, a step, a plan update) becomes its events, and
the pauses the :class:`Pacing` asks for (with seeded jitter) accumulate and are
attached to the next event. The paths (:mod:`streamkit.demo.paths`, :mod:`streamkit.demo.pauses`) say what
is written; the writer says how it streams.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from ..events import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunFinished,
    RunInput,
    Source,
    StateSnapshot,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    hitl,
)
from ..sources.loop import run_tag
from .plan import Plan
from .tools import DEFAULT_TOOLS, run_now, tools_by_name

__all__ = ["INSTANT", "Beat", "Pacing", "Writer", "join_names", "split_tokens"]

Beat: TypeAlias = tuple[float, ChatEvent]
"""One step of a script: seconds to wait, then the event to yield."""

_TOOLS = tools_by_name(DEFAULT_TOOLS)

_TOKEN = re.compile(r"\s*\S{1,7}|\s+")


def split_tokens(text: str) -> list[str]:
    """Split ``text`` into model-like tokens (a word with its leading space, long words in pieces).

    Joining the tokens gives ``text`` back.
    """
    return _TOKEN.findall(text)


def join_names(names: list[str]) -> str:
    """Names in prose: ``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True, slots=True)
class Pacing:
    """How fast the scripted agent streams (seconds), with seeded jitter so that it feels alive.

    ``token`` is the mean pause between answer tokens (reasoning and tool arguments stream a little
    faster), ``tool`` the time a tool takes, ``think`` the pause before a new block, ``jitter`` the
    relative spread of every pause, and ``seed`` seeds it.
    """

    token: float = 0.03
    tool: float = 0.7
    think: float = 0.35
    jitter: float = 0.6
    seed: int = 0

    def scaled(self, factor: float) -> Pacing:
        """The same rhythm ``factor`` times slower (0 for no pauses at all)."""
        if factor < 0 or not math.isfinite(factor):
            raise ValueError(f"pacing factor must be a finite number >= 0, got {factor!r}")
        return replace(self, token=self.token * factor, tool=self.tool * factor, think=self.think * factor)


INSTANT = Pacing(token=0.0, tool=0.0, think=0.0)
"""No pauses: the whole script at once (tests)."""


class Writer:
    """Builds one run's beats: pauses accumulate and are attached to the next event.

    ``plan`` is the run's shared state once a path starts one (:meth:`start_plan`); the state methods do
    nothing without one.
    """

    def __init__(self, run: RunInput, pacing: Pacing, prompt: str) -> None:
        self.run = run
        self.tag = run_tag(run.run_id)
        self.pacing = pacing
        self.rng = random.Random(f"{pacing.seed}|{prompt}")
        self.beats: list[Beat] = []
        self.wait = 0.0
        self.counters: dict[str, int] = {}
        self.plan: Plan | None = None
        self.output_tokens = 0
        self.open_step: str | None = None

    # -- primitives --------------------------------------------------------------------------------

    def new_id(self, kind: str) -> str:
        """A new id of ``kind`` in this run (``text_<tag>_1``, ``call_<tag>_2``, ...)."""
        n = self.counters.get(kind, 0) + 1
        self.counters[kind] = n
        return f"{kind}_{self.tag}_{n}"

    def pause(self, seconds: float) -> None:
        """Wait about ``seconds`` (with the pacing's jitter) before the next event."""
        if seconds > 0:
            spread = self.pacing.jitter
            self.wait += seconds * (1 + spread * (2 * self.rng.random() - 1))

    def emit(self, event: ChatEvent) -> None:
        """Append ``event``, after the pauses accumulated since the last one."""
        self.beats.append((round(self.wait, 4), event))
        self.wait = 0.0

    # -- blocks ------------------------------------------------------------------------------------

    def step(self, name: str) -> None:
        """Start the step ``name`` (finishing the open one)."""
        if self.open_step is not None:
            self.emit(StepFinished(name=self.open_step))
        self.open_step = name
        self.emit(StepStarted(name=name))

    def reasoning(self, text: str) -> None:
        """A reasoning block streaming ``text``."""
        rid = self.new_id("reasoning")
        self.pause(self.pacing.think)
        self.emit(ReasoningStart(id=rid))
        for token in split_tokens(text):
            self.pause(self.pacing.token * 0.6)
            self.emit(ReasoningDelta(id=rid, delta=token))
            self.output_tokens += 1
        self.emit(ReasoningEnd(id=rid))

    def text(self, text: str) -> str:
        """A text block streaming ``text``; return its id."""
        tid = self.new_id("text")
        self.pause(self.pacing.think)
        self.emit(TextStart(id=tid))
        for token in split_tokens(text):
            self.pause(self.pacing.token * (3 if token.endswith((".", "!", "?", ":")) else 1))
            self.emit(TextDelta(id=tid, delta=token))
            self.output_tokens += 1
        self.emit(TextEnd(id=tid))
        return tid

    def _arg_chunks(self, payload: str) -> list[str]:
        chunks, i = [], 0
        while i < len(payload):
            size = self.rng.randint(3, 9)
            chunks.append(payload[i : i + size])
            i += size
        return chunks

    def stream_calls(self, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Stream the calls' arguments (interleaved when there are several) and end them; return their ids."""
        ids = [self.new_id("call") for _ in calls]
        streams = []
        for cid, (name, args) in zip(ids, calls, strict=True):
            self.pause(self.pacing.think / 2)
            self.emit(ToolCallStart(id=cid, name=name))
            streams.append((cid, self._arg_chunks(json.dumps(args, ensure_ascii=False))))
        pending = [(cid, list(chunks)) for cid, chunks in streams]
        while pending:
            for cid, chunks in list(pending):
                if chunks:
                    self.pause(self.pacing.token * 0.8)
                    self.emit(ToolCallArgsDelta(id=cid, delta=chunks.pop(0)))
                    self.output_tokens += 1
                if not chunks:
                    pending.remove((cid, chunks))
        for cid, (_, args) in zip(ids, calls, strict=True):
            self.emit(ToolCallEnd(id=cid, input=args))
        return ids

    def tool_calls(self, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, Any, str | None]]:
        """Stream the calls' arguments (interleaved when there are several), then run them in order.

        Returns ``(call id, output, error)`` per call; each call's plan step (``call-<n>``) goes running,
        then done or failed.
        """
        first = self.counters.get("call", 0) + 1
        steps = [f"call-{first + i}" for i in range(len(calls))]
        ids = self.stream_calls(calls)
        results = []
        for cid, step, (name, args) in zip(ids, steps, calls, strict=True):
            self.state(step, "running")
            output, error = self.run_tool(name, args)
            self.pause(self.pacing.tool)
            if error is None:
                self.emit(ToolResult(id=cid, output=output))
            else:
                self.emit(ToolResult(id=cid, error=error))
            self.state(step, "done" if error is None else "failed")
            results.append((cid, output, error))
        return results

    def run_tool(self, name: str, args: Any) -> tuple[Any, str | None]:
        """Run the demo's tool ``name`` on ``args`` (no events): ``(output, None)`` or ``(None, error text)``."""
        return run_now(_TOOLS, name, args)

    def sources(self, sources: list[dict[str, str]]) -> None:
        """One source event per ``{"url", "title"}``."""
        for source in sources:
            self.pause(self.pacing.token)
            self.emit(Source(id=self.new_id("source"), url=source["url"], title=source.get("title")))

    # -- state -------------------------------------------------------------------------------------

    def start_plan(self, task: str, steps: list[tuple[str, str]]) -> None:
        """Start the run's plan (a state snapshot)."""
        self.plan = Plan(task, steps)
        self.emit(StateSnapshot(state=self.plan.render()))

    def state(self, step_id: str, status: str) -> None:
        """Set a plan step's status (one update); nothing when the plan has no such step."""
        if self.plan is None:
            return
        try:
            update = self.plan.set(step_id, status)
        except KeyError:
            return
        self.emit(update)

    def finish_plan(self, last_step: str, status: str = "done") -> None:
        """Mark ``last_step`` done and the whole task ``status`` in one update."""
        if self.plan is not None:
            self.plan.set(last_step, "done")
            self.plan.status = status
            self.emit(self.plan.update())

    def set_status(self, status: str) -> None:
        """Set the whole task's status (one update)."""
        if self.plan is not None:
            self.plan.status = status
            self.emit(self.plan.update())

    def finish(self, *, paused: bool = False) -> list[Beat]:
        """End the run: normally, or ``paused`` for the user or the page (``finish_reason="tool-calls"``)."""
        if self.open_step is not None:
            self.emit(StepFinished(name=self.open_step))
            self.open_step = None
        input_tokens = sum(len(split_tokens(m.text)) for m in self.run.messages) + 120
        usage = Usage(
            input_tokens=input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=input_tokens + self.output_tokens,
            model="streamkit-offline",
        )
        self.emit(hitl.pause(usage=usage) if paused else RunFinished(finish_reason="stop", usage=usage))
        return self.beats
