"""The app each worker process of the two-worker tests serves
(``uvicorn tests.store.resume_app:create_app --factory``).

The three protocols in resumable mode on one Redis (``STREAMKIT_REDIS_URL``, key prefix ``STREAMKIT_PREFIX``,
lease ``STREAMKIT_LEASE`` seconds), the paced scripted agent (``STREAMKIT_PACE`` seconds per delta), and an
``authorize`` hook that takes the user from ``Authorization: Bearer <user>``. With ``STREAMKIT_LOG_LEVEL``, log
lines go to stderr from that level on (``logging.basicConfig``, as an app configures its logging).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request

from streamkit import agui, aisdk, dsh
from streamkit.http import Unauthorized
from streamkit.resumable import Resumable
from streamkit.serve import StreamOptions
from streamkit.store import StoreLimits
from streamkit.store.redis import RedisStore
from tests.store.resume_agent import agent


def authorize(request: Request) -> dict[str, str]:
    """The principal: ``{"user": <name>}`` from a bearer token."""
    header = request.headers.get("authorization", "")
    if not header.startswith("Bearer ") or not header[7:]:
        raise Unauthorized("a bearer token is required", field="authorization")
    return {"user": header[7:]}


def create_app() -> Starlette:
    """One worker: its own Resumable on the shared Redis."""
    level = os.environ.get("STREAMKIT_LOG_LEVEL")
    if level:
        logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    store = RedisStore.from_url(
        os.environ["STREAMKIT_REDIS_URL"],
        prefix=os.environ.get("STREAMKIT_PREFIX", "streamkit"),
        limits=StoreLimits(lease=float(os.environ.get("STREAMKIT_LEASE", "2"))),
    )
    resumable = Resumable(store)
    core = agent(float(os.environ.get("STREAMKIT_PACE", "0.03")))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await resumable.aclose()

    options = StreamOptions(authorize=authorize, resumable=resumable)
    routes = [
        *aisdk.routes(core, path="/api/chat", options=options),
        *agui.routes(core, path="/api/agui", options=options),
        *dsh.routes(core, path="/api/agent", options=options),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
