"""The streamkit demo: one agent behind both protocols, and a React page to watch them.

``streamkit demo`` (or ``python -m streamkit.demo``) serves it. :class:`ScriptedAgent` is the offline agent
(no key, no network), :class:`OpenAIAgent` drives any OpenAI-compatible Chat Completions server,
:func:`provider_agent` any provider source (:mod:`streamkit.sources`), and
:func:`~streamkit.demo.app.create_app` builds the Starlette app around them.

The modules, each named for what it holds:

* :mod:`~streamkit.demo.tools`: the demo's tools, :class:`~streamkit.sources.tools.ServerTool`\\ s;
* :mod:`~streamkit.demo.plan`: the plan both agents stream as shared state;
* :mod:`~streamkit.demo.agent`: the offline agent (:func:`script`, :class:`ScriptedAgent`, :class:`Pacing`),
  written with :mod:`~streamkit.demo.writer` along the paths of :mod:`~streamkit.demo.paths` (answers) and
  :mod:`~streamkit.demo.pauses` (human in the loop);
* :mod:`~streamkit.demo.models`: the model agents (:class:`ModelAgent`, :class:`OpenAIAgent`,
  :func:`provider_agent`);
* :mod:`~streamkit.demo.app`: the Starlette app; :mod:`~streamkit.demo.cli`: the ``streamkit`` command.
"""

from typing import Any

from .agent import Pacing, ScriptedAgent, script
from .models import ModelAgent, ModelConfig, OpenAIAgent, provider_agent
from .paths import choose_path

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
