"""streamkit's loggers: named ``streamkit.<module>``, silent until the app configures logging.

The ``streamkit`` logger has a ``NullHandler`` (the library convention), so nothing is printed unless the
app configures logging, for example::

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

A line logged while a run is being served names the run: ``WARNING streamkit.events: run run-1: synthesized
RunFinished at the end of the stream``. The routes bind the run id (:func:`bind_run`) before the agent
starts; the record also carries it as ``record.run_id`` for structured handlers.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Any

__all__ = ["RunLogger", "bind_run", "current_run", "run_logger"]

_run: ContextVar[str | None] = ContextVar("streamkit_run_id", default=None)


def bind_run(run_id: str | None) -> None:
    """Name ``run_id`` in streamkit's log lines from here on in this context (the request's task and the
    tasks it starts)."""
    _run.set(run_id)


def current_run() -> str | None:
    """The run id bound in this context, if any."""
    return _run.get()


class RunLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger whose lines start with ``run <id>:`` while a run id is bound."""

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        """Prefix the bound run id, and put it in the record's ``run_id``."""
        run = _run.get()
        if run is None:
            return msg, kwargs
        extra = kwargs.get("extra")
        kwargs["extra"] = {**extra, "run_id": run} if extra else {"run_id": run}
        return f"run {run}: {msg}", kwargs


def run_logger(name: str) -> RunLogger:
    """The logger ``name`` (under ``streamkit``), naming the bound run in its lines."""
    return RunLogger(logging.getLogger(name))

