"""AG-UI for any agent core: ChatEvents to AG-UI events (with JSON-Patch state deltas), requests to RunInput.

* :func:`encode` turns a ``ChatEvent`` stream into AG-UI SSE bytes (no ``[DONE]``: the client has none);
* :func:`routes` serves an agent at a ``POST`` endpoint for ``@ag-ui/client``'s ``HttpAgent`` / CopilotKit;
* :class:`AGUIMapper` is the pure per-run state machine underneath, :mod:`~streamkit.agui.state` the state
  diff, :mod:`~streamkit.agui.request` the ``RunAgentInput`` body, :mod:`~streamkit.agui.messages` the
  history's message models and their conversion both ways (:func:`from_agui_messages`,
  :func:`to_agui_messages`), :func:`fold` a reducer that applies AG-UI events to messages and state the way
  the client does;
* :mod:`~streamkit.agui.resume` reattaches a client to a resumable run in progress (:func:`reattach`,
  :func:`snapshot`, :func:`reattach_routes`).
"""

from __future__ import annotations

from .fold import Folded, fold, parse_sse
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
from .messages import from_agui_messages, to_agui_messages
from .request import RunAgentInput, parse_run_agent_input, to_run_input
from .resume import reattach, reattach_routes, snapshot
from .routes import AGUIResponse, encode, routes

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
    "from_agui_messages",
    "parse_run_agent_input",
    "parse_sse",
    "reattach",
    "reattach_routes",
    "routes",
    "snapshot",
    "to_agui_messages",
    "to_run_input",
]
