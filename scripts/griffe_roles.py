"""A griffe extension for the API reference: the docstrings' reST markup as Markdown.

streamkit's docstrings use reST roles (``:func:`x```, ``:class:`~a.B```), ``::`` before literal blocks and
``\\ s`` after a literal; mkdocstrings renders docstrings as Markdown. Once the package is loaded, each role
becomes a code span wrapped in an *optional* cross-reference to the name it resolves to in the docstring's
scope (a link where that object is on a page of the reference, plain code where it is not, never a warning);
a ``~`` shows the last name only. ``::`` becomes a colon and the escaped space nothing.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`!?(~?)([^`]+)`")
LITERAL = re.compile(r"::$", re.MULTILINE)


def _target(obj: griffe.Object, name: str) -> str | None:
    """The full path ``name`` means in the scope of ``obj`` (None when it resolves nowhere)."""
    if name.startswith("streamkit."):
        return name
    head, _, rest = name.partition(".")
    try:
        path = obj.resolve(head)
    except Exception:
        return None
    return f"{path}.{rest}" if rest else path


def to_markdown(text: str, obj: griffe.Object | None = None) -> str:
    """The docstring ``text`` of ``obj`` with its reST markup rewritten as Markdown."""

    def role(match: re.Match[str]) -> str:
        name = match.group(2)
        shown = name.rsplit(".", 1)[-1] if match.group(1) else name
        code = f"<code>{html.escape(shown)}</code>"
        target = _target(obj, name) if obj is not None else None
        if target is None:
            return code
        return f'<autoref identifier="{html.escape(target)}" optional>{code}</autoref>'

    text = ROLE.sub(role, text)
    text = text.replace("\\ ", "")
    return LITERAL.sub(":", text)


def _walk(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = to_markdown(obj.docstring.value, obj)
    for member in obj.members.values():
        if not member.is_alias:
            _walk(member)  # type: ignore[arg-type]


class ReSTRoles(griffe.Extension):
    """Rewrites every docstring of a loaded package with :func:`to_markdown`."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite the docstrings of ``pkg`` once all its modules are loaded (so names resolve)."""
        _walk(pkg)
