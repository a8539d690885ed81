"""A griffe extension for the API reference: the docstrings' reST markup as Markdown.

streamkit's docstrings use reST roles (``:func:`x```, ``:class:`~a.B```), ``::`` before literal blocks and
``\\ s`` after a literal; mkdocstrings renders docstrings as Markdown, so each role becomes a code span (a
``~`` keeps the last name only), ``::`` a colon and the escaped space nothing.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`!?(~?)([^`]+)`")
LITERAL = re.compile(r"::$", re.MULTILINE)


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    if match.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def to_markdown(text: str) -> str:
    """The docstring ``text`` with its reST markup rewritten as Markdown."""
    text = ROLE.sub(_role, text)
    text = text.replace("\\ ", "")
    return LITERAL.sub(":", text)


class ReSTRoles(griffe.Extension):
    """Rewrites every loaded object's docstring with :func:`to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite the docstring of ``obj`` as it is loaded."""
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
