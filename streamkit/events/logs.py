"""streamkit's loggers: named ``streamkit.<module>``; the library adds no handler of its own.

What is printed is the app's logging configuration's choice. An app that configured nothing (plain ``uvicorn
app:app``: uvicorn's default configuration sets up only the ``uvicorn.*`` loggers) gets Python's last-resort
handler, which prints the message of each WARNING or ERROR record to stderr. So an exception in an agent is one
line there, followed by its traceback::

    run run-42: agent stream failed: RuntimeError: database connection refused
    Traceback (most recent call last):
    ...

Failures are logged at WARNING or ERROR (an agent that raised, content that had to be dropped, a stream store
that failed); the routine repairs of an ill-formed run (an implied ``RunStarted``, a block opened by its first
delta) at INFO, and details at DEBUG. An app that configures logging decides the format and levels, for
example::

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

A line logged while a run is being served names the run: ``INFO streamkit.events: run run-1: synthesized
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
