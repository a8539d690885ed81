"""The streamkit demo: one agent behind both protocols, and a React page to watch them.

``streamkit demo`` (or ``python -m streamkit.demo``) serves it. :class:`ScriptedAgent` is the offline agent
(no key, no network), :class:`OpenAIAgent` drives any OpenAI-compatible Chat Completions server,
:func:`provider_agent` any provider source (:mod:`streamkit.sources`), and
:func:`~streamkit.demo.app.create_app` builds the Starlette app around them.
"""

from typing import Any

from .agent import Pacing, ScriptedAgent, choose_path, script
from .openai import ModelAgent, ModelConfig, OpenAIAgent, provider_agent

__all__ = [
    "ModelAgent",
    "ModelConfig",
    "OpenAIAgent",
    "Pacing",
    "ScriptedAgent",
    "choose_path",
    "create_app",
    "provider_agent",
    "script",
]


def __getattr__(name: str) -> Any:
    # The app (and with it both protocol packages) loads only when asked for.
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
