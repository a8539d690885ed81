"""Checking streams and testing agents: the stream validator and helpers for users' own tests.

- :func:`validate` reads an SSE body of the AI SDK's UI Message Stream, AG-UI or the dialect as the real client
  of a given version does and returns a :class:`Report`: every finding with a stable rule id (:data:`RULES`),
  and the fold (what the client ends up showing: ``report.messages``, ``.tool_calls``, ``.state``, ``.text``).
- :func:`call_route` / :func:`acall_route` call a route in-process with a protocol's request and return the
  report of its response; :func:`scripted` (with :func:`text`, :func:`tool_call`, :func:`approval`) and
  :class:`ScriptedRun` are agents that play a fixed run; :class:`Replay` with :func:`openai_client` /
  :func:`anthropic_client` replays a recorded provider stream through the provider's SDK, offline.
- ``streamkit check`` is the same engine on the command line (:mod:`streamkit.testing.check`).
"""

from .agents import ScriptedRun, approval, scripted, text, tool_call
from .replay import Recording, Replay, anthropic_client, openai_client
from .report import Finding, Report
from .routes import acall_route, call_route
from .rules import RULES, Rule
from .validate import AGUI_VERSIONS, AISDK_VERSIONS, PROTOCOLS, validate

__all__ = [
    "AGUI_VERSIONS",
    "AISDK_VERSIONS",
    "PROTOCOLS",
    "RULES",
    "Finding",
    "Recording",
    "Replay",
    "Report",
    "Rule",
    "ScriptedRun",
    "acall_route",
    "anthropic_client",
    "approval",
    "call_route",
    "openai_client",
    "scripted",
    "text",
    "tool_call",
    "validate",
]
