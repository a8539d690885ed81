"""An agent over Anthropic's Messages API (the package face is :mod:`streamkit.sources.anthropic`).

:class:`AnthropicAgent` runs the model over your ``AsyncAnthropic`` client with the client's frontend tools
and your server tools, through the shared tool loop (:func:`streamkit.sources.loop.run_tool_loop`),
continuing a turn Anthropic paused (``pause_turn``). The ``anthropic`` package is needed here only
(``pip install 'streamkit[anthropic]'``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from ...events import ChatEvent, Message, RunInput, Tool
from ..loop import StepTranslator, run_tool_loop
from ..tools import ServerTool, as_server_tools
from ._common import attr, plain
from .messages import to_anthropic_messages, to_anthropic_system, to_anthropic_tools
from .translator import AnthropicTranslator

__all__ = [
    "AnthropicAgent",
]


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise ImportError("AnthropicAgent needs the anthropic package: pip install 'streamkit[anthropic]'") from exc
    return anthropic


class _Content:
    """The content blocks of one streamed message, as the API takes them back (to continue a paused turn)."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, list[str]] = {}
        self.stop_reason: str | None = None

    def feed(self, event: Any) -> None:
        kind = attr(event, "type")
        index = attr(event, "index")
        if kind == "content_block_start" and isinstance(index, int):
            block = plain(attr(event, "content_block"))
            self.blocks[index] = dict(block) if isinstance(block, dict) else {}
        elif kind == "content_block_delta" and index in self.blocks:
            block, d = self.blocks[index], attr(event, "delta")
            dtype = attr(d, "type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + (attr(d, "text") or "")
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + (attr(d, "thinking") or "")
            elif dtype == "signature_delta":
                block["signature"] = block.get("signature", "") + (attr(d, "signature") or "")
            elif dtype == "input_json_delta":
                self.json.setdefault(index, []).append(attr(d, "partial_json") or "")
            elif dtype == "citations_delta":
                block.setdefault("citations", []).append(plain(attr(d, "citation")))
        elif kind == "content_block_stop" and index in self.json:
            text = "".join(self.json.pop(index))
            try:
                self.blocks[index]["input"] = json.loads(text) if text.strip() else {}
            except ValueError:
                self.blocks[index]["input"] = {}
        elif kind == "message_delta":
            reason = attr(attr(event, "delta"), "stop_reason")
            self.stop_reason = reason if isinstance(reason, str) else self.stop_reason

    def message(self) -> dict[str, Any]:
        return {"role": "assistant", "content": [self.blocks[i] for i in sorted(self.blocks)]}


class _Run:
    """The tool loop's provider for one run (it holds the run's system prompt)."""

    def __init__(self, agent: AnthropicAgent, run: RunInput) -> None:
        self.agent = agent
        self.system = to_anthropic_system(run, agent.system)

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return to_anthropic_messages(run.messages)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return AnthropicTranslator(prefix, taken)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        for message in to_anthropic_messages(turn):
            if messages and messages[-1]["role"] == message["role"]:
                messages[-1] = {"role": message["role"], "content": messages[-1]["content"] + message["content"]}
            else:
                messages.append(message)

    async def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncGenerator[Any, None]:
        agent = self.agent
        request: dict[str, Any] = {
            "model": agent.model,
            "max_tokens": agent.max_tokens,
            "messages": messages,
            "stream": True,
            **agent.options,
        }
        if self.system:
            request["system"] = self.system
        specs = to_anthropic_tools(tools) + [dict(t) for t in agent.provider_tools]
        if specs:
            request["tools"] = specs
        if agent.thinking is not None:
            request["thinking"] = agent.thinking
        for _ in range(agent.max_continuations + 1):
            content = _Content()
            stream = await agent.client.messages.create(**request)
            try:
                async for event in stream:
                    content.feed(event)
                    yield event
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    await close()
            if content.stop_reason != "pause_turn":
                return
            # Anthropic paused a long turn (its own server tools): send the content back to continue it
            request["messages"] = [*request["messages"], content.message()]


class AnthropicAgent:
    """An agent core over the Anthropic Messages API (an ``anthropic.AsyncAnthropic`` client).

    Each run converts the history (:func:`to_anthropic_request`), streams the model with the client's
    frontend tools and ``tools`` (server tools: :class:`~streamkit.sources.tools.ServerTool`\\ s or plain
    functions), runs the server tools and calls the model again until it stops calling them or
    ``max_steps`` calls were made; frontend tool calls are left pending for the client. ``thinking``
    (``{"type": "enabled", "budget_tokens": 2048}``) turns on extended thinking; its signatures travel
    with the reasoning parts so the next request restores them. ``provider_tools`` are tool definitions
    Anthropic runs itself, offered as they are (``{"type": "web_search_20250305", "name": "web_search"}``):
    their calls and results stream as provider-executed tool calls, and a turn Anthropic pauses
    (``pause_turn``) is continued within the same step, at most ``max_continuations`` times. ``options``
    are passed to ``messages.create`` as they are (``temperature``, ``metadata``, ...).
    """

    def __init__(
        self,
        client: Any = None,
        *,
        model: str = "claude-sonnet-4-5",
        max_tokens: int = 4096,
        system: str | None = None,
        tools: Sequence[Any] = (),
        thinking: dict[str, Any] | None = None,
        provider_tools: Sequence[Mapping[str, Any]] = (),
        max_steps: int = 8,
        max_continuations: int = 4,
        **options: Any,
    ) -> None:
        if client is None:
            client = _import_anthropic().AsyncAnthropic()
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.system = system
        self.tools: list[ServerTool] = as_server_tools(tools)
        self.thinking = thinking
        self.provider_tools = list(provider_tools)
        self.max_steps = max_steps
        self.max_continuations = max_continuations
        self.options = options

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        return run_tool_loop(run, _Run(self, run), self.tools, max_steps=self.max_steps)
