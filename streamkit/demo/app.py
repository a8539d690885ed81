"""The demo Starlette app: one agent behind both protocols, and the built React page.

* ``POST /api/chat`` (and ``GET /api/chat/{chatId}/stream``): the AI SDK UI Message Stream, for ``useChat``
  (an AI SDK request names no tools: the agent is told of the page's frontend tools, ``set_theme``);
* ``POST /api/agui``: AG-UI, for ``HttpAgent``;
* ``POST /api/agent/stream`` (and ``/message``, ``/{agentId}/cancel``, ``/{agentId}/status``): the named-event
  dialect of agent consoles, for the page's plain-JS console;
* ``GET /api/info``: which agent answers (offline script or a model), for the page's header;
* ``/``: the page, from the built files in ``streamkit/demo/static`` (no node needed to serve it).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .. import agui, aisdk, dsh
from ..events import Agent, ChatEvent, RunInput, Tool
from ..sources.agui import RemoteAGUIAgent
from ..sources.aisdk import RemoteAISDKAgent
from .agent import ScriptedAgent
from .models import ModelAgent, OpenAIAgent
from .tools import FRONTEND_TOOLS

__all__ = ["AGUI_PATH", "AISDK_PATH", "DSH_PATH", "STATIC_DIR", "agent_info", "create_app", "offering"]

STATIC_DIR = Path(__file__).parent / "static"
"""Where the built page lives (``make frontend`` rebuilds it from ``demo_frontend/``)."""

AISDK_PATH = "/api/chat"
AGUI_PATH = "/api/agui"
DSH_PATH = "/api/agent"

_NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>streamkit demo</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>streamkit demo</h1>
<p>The page has not been built. Run <code>make frontend</code> (needs node), or talk to the routes directly:
<code>POST /api/chat</code> (AI SDK) and <code>POST /api/agui</code> (AG-UI).</p>
</body></html>
"""


def agent_info(agent: Agent) -> dict[str, Any]:
    """What the page shows about the agent: its kind and, for a model, the model and server."""
    if isinstance(agent, OpenAIAgent):
        return {"agent": "openai-compatible", "model": agent.model, "baseUrl": agent.base_url}
    if isinstance(agent, ModelAgent):
        return {"agent": agent.provider, "model": agent.model, "baseUrl": agent.base_url}
    if isinstance(agent, ScriptedAgent):
        return {"agent": "offline", "model": "scripted"}
    if isinstance(agent, RemoteAGUIAgent | RemoteAISDKAgent):
        kind = "remote-agui" if isinstance(agent, RemoteAGUIAgent) else "remote-aisdk"
        return {"agent": kind, "model": "remote", "baseUrl": agent.url}
    return {"agent": type(agent).__name__}


def offering(agent: Agent, tools: Sequence[Tool]) -> Agent:
    """``agent``, told that the client also runs ``tools`` (frontend tools) when a request names none of them.

    An AG-UI client lists its tools in every request; an AI SDK client never does (the app declares them),
    so the demo's AI SDK route offers the page's tools this way.
    """

    def run_offering(run: RunInput) -> AsyncIterable[ChatEvent]:
        named = {t.name for t in run.tools}
        missing = [t for t in tools if t.name not in named]
        return agent(run.model_copy(update={"tools": [*run.tools, *missing]}) if missing else run)

    return run_offering


def create_app(
    agent: Agent | None = None,
    *,
    static_dir: Path | None = STATIC_DIR,
    cors_origins: Sequence[str] = (),
    debug: bool = False,
) -> Starlette:
    """The demo app for ``agent`` (the offline :class:`ScriptedAgent` when None).

    ``cors_origins`` lets pages on other origins (a Next.js dev server, say) call the routes directly;
    ``static_dir=None`` serves the API only.
    """
    core: Agent = agent if agent is not None else ScriptedAgent()
    info = {**agent_info(core), "routes": {"aisdk": AISDK_PATH, "agui": AGUI_PATH, "dsh": DSH_PATH}}

    async def info_endpoint(request: Request) -> Response:
        return JSONResponse(info)

    async def not_built(request: Request) -> Response:
        return HTMLResponse(_NOT_BUILT)

    routes: list[BaseRoute] = [
        *aisdk.routes(offering(core, FRONTEND_TOOLS), path=AISDK_PATH),
        *agui.routes(core, path=AGUI_PATH),
        *dsh.routes(core, path=DSH_PATH, model=info.get("model")),
        Route("/api/info", info_endpoint, methods=["GET"]),
    ]
    if static_dir is not None:
        if (static_dir / "index.html").is_file():
            routes.append(Mount("/", app=StaticFiles(directory=static_dir, html=True), name="page"))
        else:
            routes.append(Route("/", not_built, methods=["GET"]))
    middleware = []
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["*"],
            )
        )
    app = Starlette(debug=debug, routes=routes, middleware=middleware)
    app.state.agent = core
    return app
