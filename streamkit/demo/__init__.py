"""The streamkit demo: one agent behind both protocols, and a React page to watch them.

``streamkit demo`` (or ``python -m streamkit.demo``) serves it. :class:`ScriptedAgent` is the offline agent
(no key, no network), :class:`OpenAIAgent` drives any OpenAI-compatible Chat Completions server, and
:func:`~streamkit.demo.app.create_app` builds the Starlette app around either.
"""

from typing import Any

from .agent import Pacing, ScriptedAgent, choose_path, script
from .openai import ModelConfig, OpenAIAgent

__all__ = ["ModelConfig", "OpenAIAgent", "Pacing", "ScriptedAgent", "choose_path", "create_app", "script"]


def __getattr__(name: str) -> Any:
    # The app (and with it both protocol packages) loads only when asked for.
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
