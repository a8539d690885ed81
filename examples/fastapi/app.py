"""A production-shaped streamkit app: one model agent served to both protocols by FastAPI.

- ``POST /api/chat``: the AI SDK UI Message Stream (``useChat``); ``POST /api/agui``: AG-UI (``HttpAgent``,
  CopilotKit). Both run the same agent: an OpenAI-compatible model (``OPENAI_BASE_URL``, ``OPENAI_MODEL``,
  ``OPENAI_API_KEY``) with two server tools, one of which asks the user's approval before it runs.
- Auth: ``Authorization: Bearer <APP_TOKEN>`` on every request (401 otherwise); the principal reaches the
  agent as ``RunInput.principal``.
- CORS for the page's origin (``APP_CORS_ORIGINS``, comma separated), limits tighter than the defaults,
  errors masked for clients and logged here.

Run: ``APP_TOKEN=secret OPENAI_MODEL=gpt-4o-mini OPENAI_API_KEY=... uvicorn app:app --port 8000``
"""

from __future__ import annotations

import logging
import os
import secrets
from typing import Literal

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.requests import Request

from streamkit import StreamOptions, agui, aisdk
from streamkit.http import Limits, Unauthorized
from streamkit.sources.openai import OpenAIChatAgent
from streamkit.sources.tools import server_tool

log = logging.getLogger("app")

TOKEN = os.environ.get("APP_TOKEN", "")
ORIGINS = [o for o in os.environ.get("APP_CORS_ORIGINS", "http://localhost:3000").split(",") if o]
WEATHER = {"paris": (21, "partly cloudy"), "tokyo": (24, "light rain"), "new york": (20, "clear")}


@server_tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, object]:
    """The current weather in a city."""
    temp, conditions = WEATHER.get(city.lower(), (18, "mild"))
    if unit == "fahrenheit":
        temp = round(temp * 9 / 5 + 32)
    return {"city": city, "temperature": temp, "unit": unit, "conditions": conditions}


@server_tool(needs_approval=True)
def send_report(to: str, text: str) -> dict[str, object]:
    """Email a short report; the user approves each call first."""
    log.info("report to %s: %d characters", to, len(text))
    return {"sent": True, "to": to}


def authorize(request: Request) -> str:
    """The caller's identity from ``Authorization: Bearer ...``, compared in constant time."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if not TOKEN or scheme.lower() != "bearer" or not secrets.compare_digest(token, TOKEN):
        raise Unauthorized("missing or invalid bearer token")
    return "app-user"


def on_error(exc: BaseException) -> None:
    log.error("agent failed", exc_info=exc)


agent = OpenAIChatAgent(
    model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
    base_url=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    api_key=os.environ.get("OPENAI_API_KEY"),
    tools=[get_weather, send_report],
    system_prompt="You are a concise assistant. Use the tools when they help.",
    max_steps=6,
)
limits = Limits(max_body_bytes=1024 * 1024, max_messages=200)
options = StreamOptions(limits=limits, authorize=authorize, on_error=on_error)

app = FastAPI(title="streamkit example")
app.router.routes.extend(aisdk.routes(agent, path="/api/chat", options=options))
app.router.routes.extend(agui.routes(agent, path="/api/agui", options=options))
app.add_middleware(
    CORSMiddleware,
    allow_origins=ORIGINS,
    allow_methods=["POST", "GET", "DELETE"],
    allow_headers=["content-type", "authorization"],
)
