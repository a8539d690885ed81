"""AG-UI for any agent core: ChatEvents to AG-UI events (with JSON-Patch state deltas), requests to RunInput.

* :func:`encode` turns a ``ChatEvent`` stream into AG-UI SSE bytes (no ``[DONE]``: the client has none);
* :func:`routes` serves an agent at a ``POST`` endpoint for ``@ag-ui/client``'s ``HttpAgent`` / CopilotKit;
* :class:`AGUIMapper` is the pure per-run state machine underneath, :mod:`~streamkit.agui.state` the state
  diff, :mod:`~streamkit.agui.request` the ``RunAgentInput`` models, :func:`fold` a reducer that applies
  AG-UI events to messages and state the way the client does.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

from ..events import ChatEvent
from ..frames import ErrorHook, encode_frames
from .fold import Folded, fold
from .mapping import (
    DATA,
    FILE,
    MESSAGE_METADATA,
    PRELIMINARY_TOOL_RESULT,
    PROTOCOL_VERSION,
    SOURCE,
    STEP_RESET,
    TOOL_APPROVAL_RESPONSE,
    AGUIMapper,
)
from .messages import to_agui_messages
from .request import RunAgentInput, parse_run_agent_input, to_run_input
from .routes import AGUIResponse, routes

__all__ = [
    "DATA",
    "FILE",
    "MESSAGE_METADATA",
    "PRELIMINARY_TOOL_RESULT",
    "PROTOCOL_VERSION",
    "SOURCE",
    "STEP_RESET",
    "TOOL_APPROVAL_RESPONSE",
    "AGUIMapper",
    "AGUIResponse",
    "Folded",
    "RunAgentInput",
    "encode",
    "fold",
    "parse_run_agent_input",
    "routes",
    "to_agui_messages",
    "to_run_input",
]


def encode(
    events: AsyncIterable[ChatEvent] | Iterable[ChatEvent],
    *,
    thread_id: str,
    run_id: str,
    state: Any = None,
    strict: bool = False,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    snapshot_when_larger: bool = True,
    known_tool_calls: Iterable[str] = (),
    known_approvals: Iterable[str] = (),
    reserved_ids: Iterable[str] = (),
    parent_run_id: str | None = None,
    protocol_version: str | None = PROTOCOL_VERSION,
) -> AsyncIterator[bytes]:
    """AG-UI SSE bytes for ``events``: ``data: <event JSON>\\n\\n`` frames, ``RUN_STARTED`` first, one terminal.

    ``state`` is the state the client holds (the request's); the other options are :class:`AGUIMapper`'s.
    An exception raised by ``events`` ends the stream with ``RUN_ERROR`` (a generic message unless
    ``expose_errors``; ``on_error`` sees the exception).
    """
    mapper = AGUIMapper(
        thread_id=thread_id,
        run_id=run_id,
        state=state,
        strict=strict,
        snapshot_when_larger=snapshot_when_larger,
        known_tool_calls=known_tool_calls,
        known_approvals=known_approvals,
        reserved_ids=reserved_ids,
        parent_run_id=parent_run_id,
        protocol_version=protocol_version,
    )
    return encode_frames(events, mapper, expose_errors=expose_errors, on_error=on_error)
