"""An AG-UI app whose agent streams slowly forever (for the server-shutdown test, run by uvicorn)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from starlette.applications import Starlette

from streamkit import agui
from streamkit.events import ChatEvent, RunInput, RunStarted, TextDelta, TextStart


async def slow(run: RunInput) -> AsyncIterator[ChatEvent]:
    yield RunStarted()
    yield TextStart(id="t")
    while True:
        yield TextDelta(id="t", delta="tick ")
        await anyio.sleep(0.05)


app = Starlette(routes=agui.routes(slow))
