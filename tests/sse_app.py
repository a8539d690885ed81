"""A tiny app for tests that need the SSE writer in a separate uvicorn process (shutdown, kill)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from streamkit.events import ChatEvent, RunStarted, SequenceChecker, TextDelta, TextStart
from streamkit.frames import MapperBase, encode_frames, shutdown_frames
from streamkit.sse import EventStreamResponse


class EchoMapper(MapperBase):
    """One frame per checked event; an ``error`` frame on failure (once, and only before the end)."""

    def __init__(self) -> None:
        self.checker = SequenceChecker()

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        return [self._frame(e) for e in self.checker.feed(event)]

    def close(self) -> list[dict[str, Any]]:
        return [self._frame(e) for e in self.checker.close()]

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        if self.checker.finished:
            return []
        return [{"type": "error", "errorText": message, **({"code": code} if code else {})}]

    @staticmethod
    def _frame(event: ChatEvent) -> dict[str, Any]:
        out: dict[str, Any] = {"type": event.type}
        if isinstance(event, TextDelta):
            out["delta"] = event.delta
        return out


async def slow_agent() -> AsyncIterator[ChatEvent]:
    yield RunStarted()
    yield TextStart(id="t")
    for i in range(10_000):
        yield TextDelta(id="t", delta=str(i))
        await anyio.sleep(0.05)


DONE = b"data: [DONE]\n\n"


async def endpoint(request: Request) -> Response:
    mapper = EchoMapper()
    frames = encode_frames(slow_agent(), mapper, trailer=DONE)
    return EventStreamResponse(frames, heartbeat=1.0, on_shutdown=lambda: shutdown_frames(mapper, DONE))


app = Starlette(routes=[Route("/stream", endpoint)])


async def slow_chat_agent(run: Any) -> AsyncIterator[ChatEvent]:
    async for event in slow_agent():
        yield event


def _protocol_routes() -> list[Any]:
    from streamkit import agui, aisdk

    return [*aisdk.routes(slow_chat_agent, path="/api/chat"), *agui.routes(slow_chat_agent, path="/api/agui")]


app.router.routes.extend(_protocol_routes())
