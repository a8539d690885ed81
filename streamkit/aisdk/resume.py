"""Resumable UI Message Streams (``routes(..., resumable=...)``): the chat's run outlives its request.

* ``POST {path}`` starts the run detached from the request (:meth:`~streamkit.resumable.Resumable.start`)
  and answers with a reader of the stored stream;
* ``GET {path}/{chatId}/stream`` (``useChat({resume: true})``, spec section 7) answers ``204`` when no run
  is in progress for that chat *and principal*, else the whole response from its ``start`` chunk (the same
  ``messageId``), then live to its end. With a ``Last-Event-ID`` header (an ``EventSource`` reconnecting)
  it sends only the frames after that id;
* ``DELETE {path}/{chatId}/stream`` cancels the chat's run from any worker (``204``; ``404`` when there is
  none): the agent is closed and the stream ends with ``abort``. ``useChat``'s ``stop()`` only drops the
  connection, which a resumable run survives; call this to stop the run itself.

If the worker producing a run dies, its readers end with an ``error`` chunk (:data:`DEAD`) once its lease
lapses.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..frames import Mapper, frame
from ..http import Authorize, HTTPError, authorize_request, error_response
from ..resumable import LOST_TEXT, Resumable, endings_from_mapper, last_event_id

__all__ = ["DEAD", "resume_routes", "start_resumable"]

_DONE = b"data: [DONE]\n\n"

DEAD = frame({"type": "error", "errorText": LOST_TEXT}) + _DONE
"""How a run ends for its readers when the worker producing it died."""


def _scope(path: str) -> str:
    return f"aisdk:{path}"


async def start_resumable(
    resumable: Resumable, frames: AsyncIterable[bytes], mapper: Mapper, *, path: str, chat: str, principal: Any
) -> AsyncIterator[bytes]:
    """Start the run producing ``frames`` (encoded by ``mapper``) for ``chat``; the POST's reader of it."""
    owner = resumable.owner(principal)
    endings = endings_from_mapper(mapper, dead=DEAD, trailer=_DONE)
    run = await resumable.start(frames, endings, owner=owner, scope=_scope(path), chat=chat)
    return resumable.read(run, dead=DEAD)


def resume_routes(
    resumable: Resumable,
    *,
    path: str,
    authorize: Authorize | None,
    response: Callable[[AsyncIterable[bytes]], Response],
) -> list[BaseRoute]:
    """``GET`` and ``DELETE {path}/{chatId}/stream``; ``response`` wraps a stream in the route's response."""
    scope = _scope(path)

    async def owner_of(request: Request) -> str:
        return resumable.owner(await authorize_request(authorize, request))

    async def resume(request: Request) -> Response:
        try:
            owner = await owner_of(request)
            after = last_event_id(request) or 0
            info = await resumable.find(scope, request.path_params["chat_id"], owner)
        except HTTPError as exc:
            return exc.response()
        if info is None:
            return Response(status_code=204)
        return response(resumable.read(info.run, dead=DEAD, after=after))

    async def cancel(request: Request) -> Response:
        try:
            owner = await owner_of(request)
            info = await resumable.find(scope, request.path_params["chat_id"], owner)
            cancelled = info is not None and await resumable.cancel(info.run, owner)
        except HTTPError as exc:
            return exc.response()
        if not cancelled:
            return error_response(404, "no run in progress for this chat", "chatId")
        return Response(status_code=204)

    stream = path.rstrip("/") + "/{chat_id}/stream"
    return [
        Route(stream, resume, methods=["GET"], name="aisdk_resume"),
        Route(stream, cancel, methods=["DELETE"], name="aisdk_cancel"),
    ]
