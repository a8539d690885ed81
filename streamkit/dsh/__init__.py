"""A named-event SSE dialect for plain-JS agent consoles: meta, chunk, reasoning, step_break, done, error.

Many home-grown agent consoles read neither the AI SDK nor AG-UI but a small dialect of named SSE events that a
page renders with ``fetch`` and a few lines of JavaScript. A run is ``event: meta`` (session, model and time),
``event: chunk`` frames (text deltas of the assistant's answer) and ``event: reasoning`` frames (deltas of the
model's thinking, which a console that does not listen for them never shows), an ``event: step_break`` at every
tool-call boundary (``toolName``, ``callId``, ``args`` and the call's ``status`` as it changes: ``started``,
``done``, ``error``), where the page closes the current bubble, inserts or updates the tool card and opens a new
bubble, and one terminal frame: ``event: done`` with the whole conversation in ``messages`` (``tool`` messages
included, from which the page rebuilds every card's final state), or ``event: error``. The API around it: ``POST
/api/agent/stream`` and its blocking twin ``POST /api/agent/message`` (body ``{"agentId", "message"}`` plus
optional ``channelCode``, ``maxTokens``, ``cwd``), ``POST /api/agent/{agentId}/cancel``, ``GET
/api/agent/{agentId}/status``, with ``X-API-Key`` or ``Authorization: Bearer`` credentials.

* :class:`DSHMapper` (:mod:`~streamkit.dsh.mapping`) maps ChatEvents to the dialect's frames;
* :class:`AgentRequest` (:mod:`~streamkit.dsh.request`) models the body, :func:`to_run_input` makes it a
  ``RunInput`` (the agent id as the thread);
* :func:`from_dsh_messages` and :func:`to_dsh_messages` (:mod:`~streamkit.dsh.messages`) convert the
  conversation between the dialect's message form and neutral messages, both ways;
* :func:`routes` (:mod:`~streamkit.dsh.routes`) mounts the four endpoints (and the stream's resume when runs
  are resumable), and :func:`encode`, beside it, writes
  the frames through the shared SSE writer; a :class:`SessionStore` (:mod:`~streamkit.dsh.sessions`) keeps
  each agent id's conversation and its run in progress: :class:`Sessions` in this process's memory (the
  default), ``streamkit.dsh.redis.RedisSessions`` in Redis, for several workers (it needs the ``redis``
  extra, and is imported from its module or lazily from here);
* :func:`fold` (:mod:`~streamkit.dsh.fold`) is the console's view: bubbles, tool cards, the final messages;
  :func:`parse_sse` reads a body's named frames.
"""

from typing import TYPE_CHECKING, Any

from .fold import Bubble, Folded, cards_from_messages, fold, parse_sse
from .mapping import CHUNK, DONE, ERROR, EVENTS, META, REASONING, STEP_BREAK, DSHMapper
from .messages import from_dsh_messages, to_dsh_messages
from .request import AgentRequest, parse_agent_request, to_run_input
from .routes import encode, mapper_for, routes
from .sessions import Run, Session, Sessions, SessionStore

if TYPE_CHECKING:
    from .redis import RedisSessions

__all__ = [
    "CHUNK",
    "DONE",
    "ERROR",
    "EVENTS",
    "META",
    "REASONING",
    "STEP_BREAK",
    "AgentRequest",
    "Bubble",
    "DSHMapper",
    "Folded",
    "RedisSessions",
    "Run",
    "Session",
    "SessionStore",
    "Sessions",
    "cards_from_messages",
    "encode",
    "fold",
    "from_dsh_messages",
    "mapper_for",
    "parse_agent_request",
    "parse_sse",
    "routes",
    "to_dsh_messages",
    "to_run_input",
]


def __getattr__(name: str) -> Any:
    if name == "RedisSessions":
        from .redis import RedisSessions

        return RedisSessions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
