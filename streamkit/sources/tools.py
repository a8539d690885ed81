"""Server tools: plain Python callables a provider agent runs for the model.

A :class:`ServerTool` is a name, a description, a JSON Schema for its input (what the model is shown) and
``run(input) -> output``, sync or async, called with the parsed input (a dict). Make one directly, or from
a function with :func:`server_tool`, which reads the schema off the signature (pydantic) and validates
the model's input before the call::

    @server_tool
    async def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
        \"\"\"Current weather for a city.\"\"\"
        ...

    @server_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        \"\"\"Delete a file.\"\"\"

A tool fails by raising; the exception's text becomes the tool result's ``error`` (shown to the model and
the user), never an exception out of the run. ``needs_approval`` makes the agent ask the user first (the
run pauses with a ``ToolApprovalRequest``; the next request carries the answer).

:func:`function_specs` writes neutral tools as the function specs Chat Completions and Ollama take.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..events import Tool

__all__ = ["ServerTool", "ToolError", "as_server_tools", "function_specs", "run_server_tool", "server_tool"]


class ToolError(Exception):
    """A tool could not produce an output; the message is shown to the model and the user as it is."""


@dataclass(frozen=True, slots=True)
class ServerTool:
    """A tool run by the agent (server side): ``run`` maps the parsed input to a JSON-able output.

    ``run`` may be a plain or an ``async`` function. ``needs_approval`` asks the user before each call.
    A tool named like an OpenAI custom tool the model calls (one declared in the Responses agent's
    ``options["tools"]``: this class offers function tools only) gets that call's free-form text as
    ``run``'s input instead of a dict.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[[Any], Any]
    needs_approval: bool = False

    def as_tool(self) -> Tool:
        """The neutral :class:`~streamkit.events.Tool` description (what providers offer the model)."""
        return Tool(name=self.name, description=self.description, parameters=self.parameters)


@overload
def server_tool(fn: Callable[..., Any], /) -> ServerTool: ...


@overload
def server_tool(
    *, name: str | None = None, description: str | None = None, needs_approval: bool = False
) -> Callable[[Callable[..., Any]], ServerTool]: ...


def server_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool = False,
) -> ServerTool | Callable[[Callable[..., Any]], ServerTool]:
    """A :class:`ServerTool` from a function: schema from its annotated parameters, description from its
    docstring. The model's input is validated first (a validation error becomes the call's error)."""

    def make(func: Callable[..., Any]) -> ServerTool:
        model = _input_model(func)
        is_async = inspect.iscoroutinefunction(func)

        def validated(args: dict[str, Any]) -> dict[str, Any]:
            try:
                parsed = model.model_validate(args)
            except ValidationError as exc:
                raise ToolError(_validation_text(exc)) from None
            return {key: getattr(parsed, key) for key in type(parsed).model_fields}

        if is_async:

            async def run_async(args: dict[str, Any]) -> Any:
                return await func(**validated(args))

            run: Callable[[dict[str, Any]], Any] = run_async
        else:

            def run_sync(args: dict[str, Any]) -> Any:
                return func(**validated(args))

            run = run_sync
        schema = model.model_json_schema()
        schema.pop("title", None)
        return ServerTool(
            name=name or func.__name__,
            description=description if description is not None else inspect.cleandoc(func.__doc__ or ""),
            parameters=schema,
            run=run,
            needs_approval=needs_approval,
        )

    return make(fn) if fn is not None else make


def _input_model(func: Callable[..., Any]) -> type[BaseModel]:
    hints = get_type_hints(func)
    fields: dict[str, Any] = {}
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"server_tool: {func.__name__} takes *args/**kwargs; name each parameter")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid")
    model: type[BaseModel] = create_model(f"{func.__name__}_input", __config__=config, **fields)
    return model


def _validation_text(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "input"
        problems.append(f"{where}: {error['msg']}")
    return "invalid input: " + "; ".join(problems)


def as_server_tools(tools: Sequence[Any]) -> list[ServerTool]:
    """``tools`` as ServerTools: each item a :class:`ServerTool`, a plain function (see
    :func:`server_tool`), or any object with ``name``, ``description``, ``parameters`` and ``run``
    attributes (and optionally ``needs_approval``)."""
    out: list[ServerTool] = []
    for tool in tools:
        if isinstance(tool, ServerTool):
            out.append(tool)
        elif all(hasattr(tool, a) for a in ("name", "description", "parameters", "run")):
            out.append(
                ServerTool(
                    name=tool.name,
                    description=tool.description,
                    parameters=dict(tool.parameters),
                    run=tool.run,
                    needs_approval=bool(getattr(tool, "needs_approval", False)),
                )
            )
        elif callable(tool):
            out.append(server_tool(tool))
        else:
            raise TypeError(f"not a tool: {tool!r}")
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise ValueError(f"tool names must be unique: {names}")
    return out


async def run_server_tool(
    tools: Mapping[str, ServerTool], name: str, args: Any, *, text: bool = False
) -> tuple[Any, str | None]:
    """Run the tool ``name`` on ``args``: ``(output, None)``, or ``(None, error text)``.

    ``text`` says the call's input is free-form text (an OpenAI custom tool call): ``run`` gets that string
    as it is instead of a dict. Unknown tools, inputs that are not JSON objects (or text, with ``text``) and
    exceptions raised by the tool all become error text (never an exception), since a model can send anything.
    """
    tool = tools.get(name)
    if tool is None:
        return None, f"unknown tool {name!r}"
    if not isinstance(args, dict) and not (text and isinstance(args, str)):
        return None, f"{name} expects a JSON object as input, got {type(args).__name__}"
    try:
        result = tool.run(args)
        if inspect.isawaitable(result):
            result = await _await(result)
    except Exception as exc:  # a bug in a tool must not end the run
        if isinstance(exc, ToolError):
            return None, str(exc)
        return None, f"{name} failed: {type(exc).__name__}: {exc}"
    return result, None


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def function_specs(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """Neutral tools as function specs (``{"type": "function", "function": {name, description,
    parameters}}``), the shape Chat Completions and Ollama's ``/api/chat`` both take."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]
