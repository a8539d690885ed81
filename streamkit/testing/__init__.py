"""Checking streams and testing agents: the stream validator and helpers for users' own tests.

:func:`validate` reads an SSE body of the AI SDK's UI Message Stream, AG-UI or the dialect as the real client of
a given version does and returns a :class:`Report`: every finding with a stable rule id (:data:`RULES`), and the
fold (what the client ends up showing: ``report.messages``, ``.tool_calls``, ``.state``, ``.text``).
``streamkit check`` is the same engine on the command line (:mod:`streamkit.testing.check`).
"""

from .report import Finding, Report
from .rules import RULES, Rule
from .validate import AGUI_VERSIONS, AISDK_VERSIONS, PROTOCOLS, validate

__all__ = ["AGUI_VERSIONS", "AISDK_VERSIONS", "PROTOCOLS", "RULES", "Finding", "Report", "Rule", "validate"]
