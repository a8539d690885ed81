"""The demo's model agents: a provider source (:mod:`streamkit.sources`) with the demo's tools and plan.

:class:`ModelAgent` wraps any provider agent (OpenAI Chat Completions or Responses, Anthropic, Ollama) and
streams, next to the model's own events, a small plan of the run's model and tool calls as shared state
(:func:`with_plan`, a :class:`~streamkit.demo.plan.Plan`), which the demo page shows.
:class:`OpenAIAgent` is the demo's OpenAI-compatible agent (any ``/chat/completions`` server over plain
httpx, no SDK): :class:`~streamkit.sources.openai.OpenAIChatAgent` with the demo's tools, system prompt and
plan. :func:`provider_agent` builds the agent ``streamkit demo --provider ...`` asks for.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, AsyncIterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx

from ..events import (
    Agent,
    ChatEvent,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    StateSnapshot,
    StepFinished,
    StepStarted,
    ToolApprovalRequest,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    last_user_text,
)
from ..sources.openai import OpenAIChatAgent
from ..sources.tools import ServerTool
from .plan import Plan, clip
from .tools import DEFAULT_TOOLS

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "PROVIDERS",
    "ModelAgent",
    "ModelConfig",
    "OpenAIAgent",
    "provider_agent",
    "with_plan",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are the streamkit demo assistant. Be concise. Use the tools when they help: get_weather for "
    "weather, calculate for arithmetic, search_docs for questions about streaming chat protocols "
    "(AI SDK, AG-UI, Server-Sent Events, JSON Patch), delete_file to delete a sandbox file (the user is asked "
    "first), set_theme to switch the page between dark and light. Several independent tool calls may be made "
    "at once."
)
"""The system message the demo sends first (set ``system_prompt=None`` to send none)."""

PROVIDERS = ("openai", "openai-responses", "anthropic", "ollama")
"""The providers ``streamkit demo --provider`` knows."""


# --- configuration ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Where the model is: base URL, model name, API key (read from flags or the environment)."""

    base_url: str
    model: str
    api_key: str | None = None

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
    ) -> ModelConfig | None:
        """The configuration from explicit values, else ``STREAMKIT_*``, else ``OPENAI_*`` variables.

        ``STREAMKIT_BASE_URL``/``OPENAI_BASE_URL``, ``STREAMKIT_MODEL``/``OPENAI_MODEL`` and
        ``STREAMKIT_API_KEY``/``OPENAI_API_KEY``. None when no model is named (the demo then stays
        offline). The base URL defaults to OpenAI's.
        """
        env = os.environ if env is None else env

        def pick(value: str | None, *names: str) -> str | None:
            if value:
                return value
            for name in names:
                if env.get(name):
                    return env[name]
            return None

        chosen_model = pick(model, "STREAMKIT_MODEL", "OPENAI_MODEL")
        if chosen_model is None:
            return None
        url = pick(base_url, "STREAMKIT_BASE_URL", "OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return cls(base_url=url, model=chosen_model, api_key=pick(api_key, "STREAMKIT_API_KEY", "OPENAI_API_KEY"))


# --- the plan --------------------------------------------------------------------------------------


def _short_args(value: Any) -> str:
    if isinstance(value, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 48 else text[:47] + "…"


async def with_plan(events: AsyncIterable[ChatEvent], prompt: str) -> AsyncGenerator[ChatEvent, None]:
    """``events`` with the plan of the run's model and tool calls streamed as shared state."""
    plan = Plan(clip(prompt, 60))
    names: dict[str, str] = {}
    step: str | None = None
    calls: list[str] = []
    waiting = False
    async with aclosing(_closable(events)) as stream:
        async for event in stream:
            if isinstance(event, RunFinished):
                if step is not None:
                    yield plan.set(step, "done")
                plan.status = "waiting for the client" if waiting or event.finish_reason == "tool-calls" else "done"
                yield plan.update()
                yield event
                continue
            if isinstance(event, RunError):
                if step is not None and plan.status_of(step) == "running":
                    plan.set(step, "failed")
                plan.status = "failed"
                yield plan.update()
                yield event
                continue
            yield event
            if isinstance(event, RunStarted):
                yield StateSnapshot(state=plan.render())
            elif isinstance(event, StepStarted):
                step, calls = event.name, []
                number = event.name.rsplit("-", 1)[-1]
                yield plan.add(event.name, f"Model call {number}" if number.isdigit() else event.name)
            elif isinstance(event, ToolCallStart) and not event.provider_executed:
                names[event.id] = event.name
            elif isinstance(event, ToolCallEnd) and event.id in names and event.error is None:
                calls.append(event.id)
                yield plan.add(event.id, f"{names[event.id]}({_short_args(event.input)})")
            elif isinstance(event, ToolApprovalRequest) and plan.status_of(event.tool_call_id):
                yield plan.set(event.tool_call_id, "waiting for approval")
            elif isinstance(event, ToolResult) and plan.status_of(event.id):
                status = "denied" if event.denied else "failed" if event.error is not None else "done"
                yield plan.set(event.id, status)
            elif isinstance(event, StepFinished) and event.name == step:
                for cid in calls:
                    if plan.status_of(cid) == "running":  # nobody ran it here: the client will
                        waiting = True
                        plan.set(cid, "pending")
                yield plan.set(event.name, "done")
                step = None


async def _closable(events: AsyncIterable[ChatEvent]) -> AsyncGenerator[ChatEvent, None]:
    """``events`` as an async generator (closing it closes ``events`` when it can be closed)."""
    iterator = aiter(events)
    try:
        async for event in iterator:
            yield event
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


# --- the agents ------------------------------------------------------------------------------------


class ModelAgent:
    """A provider agent with the demo's plan (``show_plan``): what the demo serves for a real model.

    ``provider``, ``model`` and ``base_url`` describe it for the page's header.
    """

    def __init__(self, inner: Agent, *, provider: str, model: str, base_url: str = "", show_plan: bool = True) -> None:
        self.inner = inner
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.show_plan = show_plan

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.provider!r}, model={self.model!r}, base_url={self.base_url!r})"

    def __call__(self, run: RunInput) -> AsyncIterable[ChatEvent]:
        """The provider agent's run, with the plan streamed as state."""
        events = self.inner(run)
        return with_plan(events, last_user_text(run)) if self.show_plan else events


class OpenAIAgent(ModelAgent):
    """The demo's agent for any OpenAI-compatible ``/chat/completions`` server, over plain httpx.

    ``base_url`` is the API root (``http://localhost:11434/v1`` for Ollama). ``tools`` are run here (the
    demo's tools by default); the client's frontend tools are offered too and their calls left pending.
    ``client`` shares an httpx connection pool (not closed by the agent); ``extra_body`` is merged into
    every request. See :class:`~streamkit.sources.openai.OpenAIChatAgent`.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        tools: Sequence[ServerTool] = DEFAULT_TOOLS,
        max_steps: int = 8,
        client: httpx.AsyncClient | None = None,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        timeout: float = 120.0,
        extra_body: Mapping[str, Any] | None = None,
        include_usage: bool = True,
        show_plan: bool = True,
    ) -> None:
        self.chat = OpenAIChatAgent(
            model=model,
            base_url=base_url,
            api_key=api_key,
            tools=tools,
            system_prompt=system_prompt,
            max_steps=max_steps,
            include_usage=include_usage,
            http_client=client,
            timeout=timeout,
            options=extra_body,
        )
        super().__init__(self.chat, provider="openai", model=model, base_url=self.chat.base_url, show_plan=show_plan)
        self.max_steps = max_steps

    @classmethod
    def from_config(cls, config: ModelConfig, **options: Any) -> OpenAIAgent:
        """An agent for ``config`` (see :meth:`ModelConfig.from_env`)."""
        return cls(config.base_url, config.model, config.api_key, **options)

    @property
    def url(self) -> str:
        """The completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def request_body(self, messages: list[dict[str, Any]], client_tools: Sequence[Any] = ()) -> dict[str, Any]:
        """The JSON body of one streaming completion request (the demo's tools, then ``client_tools``)."""
        return self.chat.request_body(messages, [t.as_tool() for t in self.chat.tools] + list(client_tools))


def provider_agent(
    provider: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    max_steps: int = 8,
    env: Mapping[str, str] | None = None,
) -> ModelAgent:
    """The demo agent for ``provider`` (one of :data:`PROVIDERS`), with the demo's tools and plan.

    ``openai``: Chat Completions over plain httpx (any OpenAI-compatible server: ``base_url``, default
    ``OPENAI_BASE_URL`` or OpenAI's; key ``OPENAI_API_KEY``). ``openai-responses``: the Responses API with the
    ``openai`` SDK (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``). ``anthropic``: the ``anthropic`` SDK
    (``ANTHROPIC_API_KEY``; ``base_url`` or ``ANTHROPIC_BASE_URL``). ``ollama``: Ollama's native ``/api/chat``
    (``base_url`` or ``OLLAMA_HOST``, default ``http://127.0.0.1:11434``). ``model`` defaults per provider.
    """
    env = os.environ if env is None else env
    if provider == "openai":
        config = ModelConfig.from_env(env, base_url=base_url, model=model, api_key=api_key)
        if config is None:  # a provider named without a model: OpenAI's small default
            config = ModelConfig.from_env(env, base_url=base_url, model="gpt-4o-mini", api_key=api_key)
        assert config is not None
        return OpenAIAgent.from_config(config, max_steps=max_steps)
    if provider == "openai-responses":
        from openai import AsyncOpenAI

        from ..sources.openai import OpenAIResponsesAgent

        chosen = model or env.get("OPENAI_MODEL") or "gpt-5-mini"
        client = AsyncOpenAI(
            api_key=api_key or env.get("OPENAI_API_KEY"), base_url=base_url or env.get("OPENAI_BASE_URL")
        )
        inner = OpenAIResponsesAgent(
            client, model=chosen, tools=DEFAULT_TOOLS, system_prompt=DEFAULT_SYSTEM_PROMPT, max_steps=max_steps
        )
        return ModelAgent(inner, provider=provider, model=chosen, base_url=str(client.base_url))
    if provider == "anthropic":
        from anthropic import AsyncAnthropic

        from ..sources.anthropic import AnthropicAgent

        chosen = model or env.get("ANTHROPIC_MODEL") or "claude-sonnet-4-5"
        url = base_url or env.get("ANTHROPIC_BASE_URL")
        anthropic_client = AsyncAnthropic(api_key=api_key or env.get("ANTHROPIC_API_KEY"), base_url=url)
        inner_a = AnthropicAgent(
            anthropic_client, model=chosen, system=DEFAULT_SYSTEM_PROMPT, tools=DEFAULT_TOOLS, max_steps=max_steps
        )
        return ModelAgent(inner_a, provider=provider, model=chosen, base_url=str(anthropic_client.base_url))
    if provider == "ollama":
        from ..sources.ollama import OllamaAgent

        chosen = model or env.get("OLLAMA_MODEL") or "llama3.2"
        host = base_url or env.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        if "://" not in host:
            host = f"http://{host}"
        inner_o = OllamaAgent(
            host, model=chosen, system=DEFAULT_SYSTEM_PROMPT, tools=DEFAULT_TOOLS, max_steps=max_steps
        )
        return ModelAgent(inner_o, provider=provider, model=chosen, base_url=host)
    raise ValueError(f"unknown provider {provider!r}: choose one of {', '.join(PROVIDERS)}")
