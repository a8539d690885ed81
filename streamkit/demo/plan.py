"""The demo's plan: the shared state both demo agents stream next to their answer.

A plan is ``{"task", "status", "steps": [{"id", "title", "status"}]}``: what the run is about, how far it
is, and one entry per step. The offline agent (:mod:`streamkit.demo.writer`) writes its steps up front and
updates them as its script goes; the model agents (:func:`streamkit.demo.models.with_plan`) add a step per
model call and tool call as they happen. Each change is streamed as a :class:`~streamkit.events.StateUpdate`
of the whole plan, rendered afresh, so AG-UI clients get JSON-Patch deltas and ``useChat`` a live
``data-state`` part.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..events import StateUpdate

__all__ = ["Plan", "clip"]


def clip(text: str, limit: int = 80) -> str:
    """``text`` on one line (runs of whitespace as one space), cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Plan:
    """A task with steps, rendered afresh for every state event.

    ``steps`` are ``(id, title)`` pairs, each starting ``"pending"``; the task's ``status`` starts
    ``"working"``.
    """

    def __init__(self, task: str, steps: Sequence[tuple[str, str]] = ()) -> None:
        self.task = task
        self.status = "working"
        self.steps: list[dict[str, str]] = [{"id": sid, "title": title, "status": "pending"} for sid, title in steps]

    @classmethod
    def restore(cls, state: Any) -> Plan | None:
        """The plan the client sent back (a paused run's), if ``state`` is one."""
        if not isinstance(state, dict) or not isinstance(state.get("steps"), list):
            return None
        steps = [s for s in state["steps"] if isinstance(s, dict) and isinstance(s.get("id"), str)]
        plan = cls(str(state.get("task", "")))
        plan.steps = [
            {"id": s["id"], "title": str(s.get("title", s["id"])), "status": str(s.get("status", "pending"))}
            for s in steps
        ]
        return plan

    def render(self) -> dict[str, Any]:
        """The plan as the state value (a new dict each time)."""
        return {"task": self.task, "status": self.status, "steps": [dict(s) for s in self.steps]}

    def update(self) -> StateUpdate:
        """The whole plan as a state update."""
        return StateUpdate(state=self.render())

    def add(self, step_id: str, title: str, status: str = "running") -> StateUpdate:
        """Append a step; return the update that shows it."""
        self.steps.append({"id": step_id, "title": title, "status": status})
        return self.update()

    def status_of(self, step_id: str) -> str | None:
        """The status of the step ``step_id``, or None when the plan has no such step."""
        return next((s["status"] for s in self.steps if s["id"] == step_id), None)

    def set(self, step_id: str, status: str) -> StateUpdate:
        """Set the status of the step ``step_id``; return the update that shows it.

        Raises :class:`KeyError` when the plan has no such step.
        """
        found = False
        for step in self.steps:
            if step["id"] == step_id:
                found = True
                step["status"] = status
        if not found:
            raise KeyError(step_id)
        return self.update()
