"""Resumable UI Message Streams (``routes(..., options=StreamOptions(resumable=...))``): the chat's run outlives
its request.

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
lapses. The endpoints themselves are :mod:`streamkit.serve`'s, as for every protocol.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from ..frames import frame
from ..resumable import LOST_TEXT
from ..serve import ResumeScope, StreamOptions, StreamResponse, cancel_endpoint, resume_endpoint

__all__ = ["DEAD", "resume_routes", "resume_scope"]

_DONE = b"data: [DONE]\n\n"

DEAD = frame({"type": "error", "errorText": LOST_TEXT}) + _DONE
"""How a run ends for its readers when the worker producing it died."""


def resume_scope(options: StreamOptions, *, path: str) -> ResumeScope | None:
    """Where the routes at ``path`` keep their resumable runs (``None`` unless ``options`` are resumable)."""
    return ResumeScope.of(options, f"aisdk:{path}", dead=DEAD)


async def _chat_id(request: Request) -> str:
    chat: str = request.path_params["chat_id"]
    return chat


def resume_routes(
    resume: ResumeScope, *, path: str, options: StreamOptions, response: StreamResponse
) -> list[BaseRoute]:
    """``GET`` and ``DELETE {path}/{chatId}/stream``; ``response`` is the route's response class."""
    stream = path.rstrip("/") + "/{chat_id}/stream"
    again = resume_endpoint(resume, options=options, response=response, chat_of=_chat_id)
    cancel = cancel_endpoint(
        resume, options=options, chat_of=_chat_id, missing="no run in progress for this chat", field="chatId"
    )
    return [
        Route(stream, again, methods=["GET"], name="aisdk_resume"),
        Route(stream, cancel, methods=["DELETE"], name="aisdk_cancel"),
    ]
