"""The demo's tools: small, deterministic, offline functions both demo agents can call.

Each tool is a :class:`~streamkit.sources.tools.ServerTool`, the library's own server tool: a name, a
description and a JSON Schema for its input (what a model is shown), and a synchronous ``run(input) ->
output``. A tool signals failure by raising :class:`~streamkit.sources.tools.ToolError`; the agents turn
that into a tool result with ``error`` text. Outputs are plain JSON values. The model agents run these tools
through the provider sources' tool loop; the offline agent runs them with :func:`run_now`. :func:`sources_of`
picks the citable sources out of an output (the documentation search returns some).

Two tools show human in the loop (:mod:`streamkit.events.hitl`): ``delete_file`` has ``needs_approval``
(the agent asks the user before it runs), and ``set_theme`` is a *frontend tool* (:data:`FRONTEND_TOOLS`):
the page runs it and sends the result back, the agent never runs it.
"""

from __future__ import annotations

import ast
import operator
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..events import Tool
from ..sources.tools import ServerTool, ToolError, run_server_tool

__all__ = [
    "CALCULATE",
    "DEFAULT_TOOLS",
    "DELETE_FILE",
    "FRONTEND_TOOLS",
    "GET_WEATHER",
    "KNOWN_CITIES",
    "SANDBOX_FILES",
    "SEARCH_DOCS",
    "SET_THEME",
    "run_now",
    "sources_of",
    "tools_by_name",
]


# --- get_weather -----------------------------------------------------------------------------------

_CLIMATE: dict[str, tuple[int, str, int]] = {
    "amsterdam": (14, "light rain", 81),
    "berlin": (17, "partly cloudy", 58),
    "buenos aires": (22, "sunny", 49),
    "cairo": (31, "clear", 23),
    "cape town": (19, "windy", 62),
    "lisbon": (23, "sunny", 55),
    "london": (15, "overcast", 72),
    "madrid": (26, "clear", 31),
    "mumbai": (30, "humid, scattered showers", 84),
    "new york": (20, "clear", 50),
    "paris": (21, "partly cloudy", 60),
    "reykjavik": (8, "drizzle", 79),
    "san francisco": (17, "fog clearing by noon", 74),
    "singapore": (31, "thunderstorms", 86),
    "sydney": (18, "sunny", 57),
    "tokyo": (24, "humid, light rain", 78),
    "toronto": (16, "breezy", 55),
}
_CONDITIONS = ("clear", "sunny", "partly cloudy", "overcast", "light rain", "windy", "fog")

KNOWN_CITIES: tuple[str, ...] = tuple(sorted(_CLIMATE))
"""The cities the weather tool knows by heart (others get a stable made-up forecast)."""


def _weather(args: dict[str, Any]) -> dict[str, Any]:
    city = args.get("city")
    if not isinstance(city, str) or not city.strip():
        raise ToolError("get_weather needs a non-empty 'city' string")
    key = " ".join(city.lower().split())
    unit = args.get("unit", "celsius")
    if unit not in ("celsius", "fahrenheit"):
        raise ToolError(f"unknown unit {unit!r}: use 'celsius' or 'fahrenheit'")
    if key in _CLIMATE:
        temp, conditions, humidity = _CLIMATE[key]
    else:
        h = zlib.crc32(key.encode())
        temp, conditions, humidity = 5 + h % 28, _CONDITIONS[h % len(_CONDITIONS)], 30 + h % 60
    if unit == "fahrenheit":
        temp = round(temp * 9 / 5 + 32)
    return {
        "city": city.strip().title(),
        "temperature": temp,
        "unit": unit,
        "conditions": conditions,
        "humidity": humidity,
    }


GET_WEATHER = ServerTool(
    name="get_weather",
    description="Current weather for a city (offline demo data).",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. 'Paris'."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    run=_weather,
)


# --- calculate -------------------------------------------------------------------------------------

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


_LIMIT = 1e18


def _checked(value: object) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError("the result is not a real number")
    if abs(value) > _LIMIT or value != value:
        raise ToolError("the result is too large for this calculator")
    return value


def _evaluate(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return _checked(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ToolError("exponent too large")
        return _checked(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_evaluate(node.operand)))
    raise ToolError(f"unsupported expression element: {type(node).__name__}")


def _calculate(args: dict[str, Any]) -> dict[str, Any]:
    expression = args.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise ToolError("calculate needs a non-empty 'expression' string")
    if len(expression) > 200:
        raise ToolError("expression too long (200 characters at most)")
    try:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ToolError(f"cannot parse {expression!r} as arithmetic") from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ToolError(f"division by zero in {expression!r}") from None
    except OverflowError:
        raise ToolError(f"the result of {expression!r} is too large") from None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    elif isinstance(value, float):
        value = round(value, 10)
    return {"expression": expression, "result": value}


CALCULATE = ServerTool(
    name="calculate",
    description="Evaluate an arithmetic expression (+ - * / // % ** and parentheses).",
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "For example '(3 + 4) * 2'."}},
        "required": ["expression"],
        "additionalProperties": False,
    },
    run=_calculate,
)


# --- search_docs -----------------------------------------------------------------------------------

_DOCS: tuple[dict[str, str], ...] = (
    {
        "title": "AI SDK UI: Stream Protocols",
        "url": "https://ai-sdk.dev/docs/ai-sdk-ui/stream-protocol",
        "snippet": "The UI message stream is Server-Sent Events: one JSON chunk per event (text, reasoning, "
        "tool input and output, sources, data parts), ending with data: [DONE].",
        "keywords": "ai sdk usechat vercel ui message stream protocol sse chunk data part vercel next",
    },
    {
        "title": "AI SDK UI: useChat",
        "url": "https://ai-sdk.dev/docs/reference/ai-sdk-ui/use-chat",
        "snippet": "useChat keeps the conversation as UI messages made of parts and talks to the server "
        "through a transport; DefaultChatTransport POSTs to /api/chat.",
        "keywords": "usechat react hook transport defaultchattransport messages parts status",
    },
    {
        "title": "AG-UI: Events",
        "url": "https://docs.ag-ui.com/concepts/events",
        "snippet": "An AG-UI run is RUN_STARTED, then text, tool call, reasoning and state events, then "
        "RUN_FINISHED or RUN_ERROR.",
        "keywords": "ag-ui agui events run started finished text message tool call reasoning protocol",
    },
    {
        "title": "AG-UI: State Management",
        "url": "https://docs.ag-ui.com/concepts/state",
        "snippet": "STATE_SNAPSHOT replaces the shared state; STATE_DELTA applies an RFC 6902 JSON Patch to "
        "the state the client holds.",
        "keywords": "state shared snapshot delta json patch rfc 6902 agui plan todo",
    },
    {
        "title": "RFC 6902: JSON Patch",
        "url": "https://www.rfc-editor.org/rfc/rfc6902",
        "snippet": "A JSON Patch is an array of operations (add, remove, replace, move, copy, test) applied "
        "in order to a JSON document.",
        "keywords": "json patch rfc 6902 add remove replace move copy test delta",
    },
    {
        "title": "Server-Sent Events (HTML Living Standard)",
        "url": "https://html.spec.whatwg.org/multipage/server-sent-events.html",
        "snippet": "An event stream is UTF-8 text; events are separated by a blank line and data: lines "
        "carry the payload.",
        "keywords": "sse server-sent events event stream text/event-stream streaming http",
    },
    {
        "title": "Starlette: Responses",
        "url": "https://www.starlette.io/responses/",
        "snippet": "StreamingResponse sends an async iterator's chunks as they are produced; ASGI servers "
        "flush each one.",
        "keywords": "starlette asgi streaming response fastapi python server uvicorn",
    },
)


def _search_docs(args: dict[str, Any]) -> dict[str, Any]:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolError("search_docs needs a non-empty 'query' string")
    limit = args.get("limit", 2)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 5:
        raise ToolError("'limit' must be an integer from 1 to 5")
    words = {w.strip("?.,!:;'\"()").lower() for w in query.split()}
    words.discard("")
    scored = []
    for rank, doc in enumerate(_DOCS):
        haystack = set(doc["keywords"].split()) | {w.strip(":,()") for w in doc["title"].lower().split()}
        score = len(words & haystack)
        scored.append((-score, rank, doc))
    scored.sort(key=lambda item: (item[0], item[1]))
    hits = [doc for score, _, doc in scored if score < 0][:limit]
    matched = bool(hits)
    if not matched:  # nothing matched: the most general pages
        hits = list(_DOCS[:limit])
    results = [{"title": doc["title"], "url": doc["url"], "snippet": doc["snippet"]} for doc in hits]
    return {"query": query, "matched": matched, "results": results}


SEARCH_DOCS = ServerTool(
    name="search_docs",
    description="Search a small offline index of documentation about streaming chat protocols.",
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    run=_search_docs,
)

# --- delete_file (needs approval) ------------------------------------------------------------------

SANDBOX_FILES: dict[str, int] = {"notes.txt": 1284, "todo.txt": 312, "draft.md": 5120, "report.pdf": 48213}
"""The files of the demo's pretend sandbox folder, with their sizes in bytes (nothing on disk is touched)."""


def _delete_file(args: dict[str, Any]) -> dict[str, Any]:
    path = args.get("path")
    if not isinstance(path, str) or not path.strip():
        raise ToolError("delete_file needs a non-empty 'path' string")
    name = path.strip()
    if "/" in name or "\\" in name or name.startswith("."):
        raise ToolError(f"{name!r} is outside the sandbox folder: give a plain file name")
    if name not in SANDBOX_FILES:
        raise ToolError(f"no file named {name!r} in the sandbox folder (it has {', '.join(sorted(SANDBOX_FILES))})")
    return {"path": name, "deleted": True, "bytes": SANDBOX_FILES[name]}


DELETE_FILE = ServerTool(
    name="delete_file",
    description="Delete a file from the demo's sandbox folder (pretend: nothing is removed). Needs the user's "
    "approval.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string", "description": "A file name, e.g. 'notes.txt'."}},
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_delete_file,
    needs_approval=True,
)


# --- set_theme (a frontend tool) -------------------------------------------------------------------

SET_THEME = Tool(
    name="set_theme",
    description="Switch the page between the dark and the light theme. The page runs this tool itself and "
    "returns the theme it applied.",
    parameters={
        "type": "object",
        "properties": {"theme": {"type": "string", "enum": ["dark", "light"]}},
        "required": ["theme"],
        "additionalProperties": False,
    },
)
"""The demo page's frontend tool: the agent calls it and leaves it pending, the page applies the theme and
answers ``{"theme": "dark" | "light"}``."""

FRONTEND_TOOLS: tuple[Tool, ...] = (SET_THEME,)
"""The tools the demo page runs (offered to a model next to the server tools)."""

DEFAULT_TOOLS: tuple[ServerTool, ...] = (GET_WEATHER, CALCULATE, SEARCH_DOCS, DELETE_FILE)
"""Every tool the demo's agents run (``delete_file`` only once the user approves)."""


def tools_by_name(tools: Sequence[ServerTool]) -> dict[str, ServerTool]:
    """Index ``tools`` by name."""
    return {tool.name: tool for tool in tools}


def run_now(tools: Mapping[str, ServerTool], name: str, args: Any) -> tuple[Any, str | None]:
    """:func:`~streamkit.sources.tools.run_server_tool` for the offline agent's script, which is synchronous.

    The same outcome and the same error texts: ``(output, None)`` or ``(None, error text)``, never an
    exception. The demo's tools are plain functions, so the call completes without ever suspending; a tool
    that does suspend (it waits on I/O) cannot be run here and raises :class:`RuntimeError`.
    """
    call = run_server_tool(tools, name, args)
    try:
        call.send(None)
    except StopIteration as done:
        outcome: tuple[Any, str | None] = done.value
        return outcome
    call.close()
    raise RuntimeError(f"{name} waits on something: the offline agent runs plain functions only")


def sources_of(output: Any) -> list[dict[str, str]]:
    """The citable sources in a tool output: ``{"url", "title"}`` of each ``results`` item with a URL."""
    if not isinstance(output, dict):
        return []
    results = output.get("results")
    if not isinstance(results, list):
        return []
    found = []
    for item in results:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            source = {"url": item["url"]}
            if isinstance(item.get("title"), str):
                source["title"] = item["title"]
            found.append(source)
    return found
