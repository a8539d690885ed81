"""A griffe extension for the API reference: the docstrings' reST markup as Markdown.

streamkit's docstrings use reST roles (``:func:`x```, ``:class:`~a.B```), ``::`` before literal blocks and
``\\ s`` after a literal; mkdocstrings renders docstrings as Markdown. Once the package is loaded, each role
becomes a code span wrapped in an *optional* cross-reference to the name it resolves to in the docstring's
scope (a link where that object is on a page of the reference, plain code where it is not, never a warning);
a ``~`` shows the last name only. A reST simple table (``====  ====`` rules) becomes a Markdown table (a line
with an empty cell continues the row above), ``::`` a colon and the escaped space nothing.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`!?(~?)([^`]+)`")
LITERAL = re.compile(r"::$", re.MULTILINE)
RULE = r"=+(?: +=+)+"
TABLE = re.compile(rf"^( *)({RULE}) *\n(.*?)^\1{RULE} *\n(.*?)^\1{RULE} *$", re.MULTILINE | re.DOTALL)


def _cells(line: str, spans: list[int]) -> list[str]:
    bounds = [*spans[1:], len(line) + 1]
    return [line[a:b].strip() for a, b in zip(spans, bounds, strict=True)]


def _table(match: re.Match[str]) -> str:
    """A reST simple table as a Markdown table."""
    indent, rule = match.group(1), match.group(2)
    spans = [m.start() for m in re.finditer(r"=+", rule)]
    header = [_cells(line[len(indent) :], spans) for line in match.group(3).splitlines() if line.strip()]
    body: list[list[str]] = []
    for raw in match.group(4).splitlines():
        if not raw.strip():
            continue
        cells = _cells(raw[len(indent) :], spans)
        if body and "" in cells:  # a line with an empty cell continues the row above
            last = body[-1]
            for i, cell in enumerate(cells):
                if cell:
                    last[i] = f"{last[i]}{cell}" if last[i].endswith("-") else f"{last[i]} {cell}".strip()
            continue
        body.append(cells)
    rows = [*header[:1], ["---"] * len(spans), *body]
    lines = ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(indent + line for line in lines)


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

    text = TABLE.sub(_table, text)
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
