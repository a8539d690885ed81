"""The causal-history rules the provider sources share: a neutral history as a model must read it back.

A client keeps a multi-step assistant turn in one message (the AI SDK does: text, tool calls, their
results, more text); a model API wants each step's calls directly followed by their results. The
input conversions of the OpenAI, Anthropic and Ollama sources apply the same rules:

- :func:`steps` splits an assistant message into model steps: a new step starts at content that
  follows a tool call or its result;
- :func:`tool_results` finds every call's result wherever the history holds it (the first one recorded wins);
- an unanswered call still gets an answer, since the APIs reject a call without one: :data:`NO_RESULT`,
  or :func:`denied_text` when the user refused its approval (:func:`unanswered_text`);
  :func:`result_text` is a recorded result as the text a tool message carries;
- :func:`provider_text` is a value (a tool's output, a call's input) as the JSON text a provider is sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ..events import Message, Part, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

__all__ = [
    "NO_RESULT",
    "denied_text",
    "input_object",
    "is_content",
    "is_part",
    "provider_text",
    "result_text",
    "steps",
    "tool_results",
    "unanswered_text",
]

NO_RESULT = "No result was recorded."
"""The answer a call without a recorded result is given."""


def denied_text(reason: str | None = None) -> str:
    """The answer to a call the user denied (with the reason, when one was given)."""
    return "The user denied this tool call." + (f" Reason: {reason}" if reason else "")


def unanswered_text(call: ToolCallPart | None) -> str:
    """The answer to ``call`` when the history holds no result for it: a denial when its approval was
    refused, else :data:`NO_RESULT`."""
    approval = call.approval if call is not None else None
    if approval is not None and approval.approved is False:
        return denied_text(approval.reason)
    return NO_RESULT


def result_text(result: ToolResultPart | None, call: ToolCallPart | None = None) -> str:
    """A tool's answer as the text of a tool message: the denial, ``Error: <error>``, or the output as
    :func:`provider_text`; :func:`unanswered_text` for ``call`` when there is no ``result``."""
    if result is None:
        return unanswered_text(call)
    if result.denied:
        return denied_text(result.error)
    if result.error is not None:
        return f"Error: {result.error}"
    return provider_text(result.output)


def provider_text(value: Any) -> str:
    """``value`` as the JSON text a provider is sent (a tool's output, a call's input): a string as it is,
    else compact JSON with integral floats as integers, as ``JSON.stringify`` writes them, so a history that
    went through a browser client and back reads the same as the run that made it."""
    if isinstance(value, str):
        return value
    return json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"))


def _js_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_numbers(v) for v in value]
    return value


def tool_results(messages: Iterable[Message]) -> dict[str, ToolResultPart]:
    """Every tool result of the history by its call id (the first one recorded for a call)."""
    found: dict[str, ToolResultPart] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart) and part.id not in found:
                found[part.id] = part
    return found


def is_content(part: Part) -> bool:
    """Text or reasoning: what starts a new step in the OpenAI APIs' reading of a turn."""
    return isinstance(part, TextPart | ReasoningPart)


def is_part(part: Part) -> bool:
    """Any part but a tool call or result: what starts a new step where every part is sent (Anthropic,
    Ollama: a file after a call is the next step's)."""
    return not isinstance(part, ToolCallPart | ToolResultPart)


def steps(message: Message, starts: Callable[[Part], bool] = is_content) -> list[list[Part]]:
    """An assistant message's parts split into model steps: a new step starts at a part ``starts`` accepts
    (:func:`is_content` by default) that follows a tool call or a tool result. Empty steps are left out."""
    found: list[list[Part]] = [[]]
    called = False
    for part in message.parts:
        if called and starts(part):
            found.append([])
            called = False
        if isinstance(part, ToolCallPart | ToolResultPart):
            called = True
        found[-1].append(part)
    return [s for s in found if s]


def input_object(value: Any) -> dict[str, Any]:
    """A tool call's input as the JSON object a provider takes back (Anthropic's ``input``, Ollama's
    ``arguments``): a dict as it is, a JSON text parsed, anything else (or text that is no object) ``{}``."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}
