"""The AI SDK edge: :func:`encode`, :class:`UIMessageStreamResponse` and the :func:`routes` to mount.

``routes(agent)`` answers ``useChat``'s ``POST {path}`` with the agent's run as a UI Message Stream, and
its resume ``GET {path}/{chatId}/stream`` with ``204`` (no stream to resume)::

    app = Starlette(routes=aisdk.routes(agent, path="/api/chat"))
    # FastAPI: app.router.routes.extend(aisdk.routes(agent))
    # the options every protocol shares: aisdk.routes(agent, options=StreamOptions(authorize=..., strict=True))

The endpoint runs the ``authorize`` hook, reads the body within ``limits``, validates it (a JSON 4xx naming
the field otherwise, never a 500), converts it to a :class:`~streamkit.events.RunInput` and hands the run and
its :class:`~streamkit.aisdk.AISDKMapper` to :func:`~streamkit.serve.serve_run`. An exception in the agent ends
the stream with one ``error`` chunk (a generic text unless ``expose_errors``; ``on_error`` sees the exception).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..events import Agent, ChatEvent, RunInput
from ..events.logs import run_logger
from ..frames import ErrorHook, encode_frames
from ..http import HTTPError, authorize_request, parse_request
from ..serve import StreamOptions, serve_run
from ..sse import EventStreamResponse
from .mapping import SUPPORTED_VERSIONS, AISDKMapper
from .request import ChatRequest, answered_interrupts, continued_message, known_ids, parse_chat_request, to_run_input
from .resume import resume_routes, resume_scope

__all__ = [
    "DONE",
    "UI_MESSAGE_STREAM_HEADERS",
    "UIMessageStreamResponse",
    "encode",
    "mapper_for",
    "routes",
]

logger = run_logger("streamkit.aisdk")

DONE = b"data: [DONE]\n\n"
"""The frame that ends every UI Message Stream."""

UI_MESSAGE_STREAM_HEADERS: Mapping[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The five headers the reference server sends with a UI Message Stream."""


def encode(
    events: AsyncIterable[ChatEvent] | Iterable[ChatEvent],
    *,
    sdk_version: int = 7,
    message_id: str | None = None,
    strict: bool = False,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    known_tool_calls: Iterable[str] = (),
    known_approvals: Iterable[str] = (),
    state: Any = None,
    continuation: bool = False,
) -> AsyncIterator[bytes]:
    """The UI Message Stream of ``events`` as SSE bytes, ending with ``data: [DONE]``.

    An exception from ``events`` ends the stream with its open parts closed and one ``error`` chunk whose
    text is generic unless ``expose_errors`` (``on_error`` sees the exception). The other options are
    those of :class:`~streamkit.aisdk.AISDKMapper`. No HTTP request is needed.
    """
    mapper = AISDKMapper(
        sdk_version=sdk_version,
        message_id=message_id,
        strict=strict,
        known_tool_calls=known_tool_calls,
        known_approvals=known_approvals,
        state=state,
        continuation=continuation,
    )
    return encode_frames(events, mapper, trailer=DONE, expose_errors=expose_errors, on_error=on_error)


class UIMessageStreamResponse(EventStreamResponse):
    """A response carrying a UI Message Stream (``content`` is :func:`encode`'s output), with the five
    headers of the reference server. ``heartbeat``, ``send_timeout`` and ``on_shutdown`` are those of
    :class:`~streamkit.sse.EventStreamResponse`."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        heartbeat: float = 15.0,
        send_timeout: float | None = 30.0,
        on_shutdown: Callable[[], bytes] | None = None,
    ) -> None:
        # The five headers carry the bare type: Starlette would add a charset, the reference server sends none.
        merged = UI_MESSAGE_STREAM_HEADERS
        if headers:
            merged = {**merged, **{k.lower(): v for k, v in headers.items()}}
        super().__init__(
            content,
            status_code=status_code,
            headers=merged,
            heartbeat=heartbeat,
            send_timeout=send_timeout,
            on_shutdown=on_shutdown,
        )


def mapper_for(body: ChatRequest, run: RunInput, *, sdk_version: int = 7, strict: bool = False) -> AISDKMapper:
    """The mapper for a request: the continued message's id, tool calls and approvals, the client's state.

    The interrupts the request answers (``resume``) count as known approvals, as on AG-UI: the agent may
    report the answer to one of them (a ``ToolApprovalResponse``) in this run. When the run continues the
    message that holds their ``data-interrupt`` parts, those parts are restated with the answer's ``status``.
    """
    continued = continued_message(body)
    tool_ids, approval_ids = known_ids(continued)
    return AISDKMapper(
        sdk_version=sdk_version,
        message_id=run.message_id,
        strict=strict,
        known_tool_calls=tool_ids,
        known_approvals=[*approval_ids, *(r.interrupt_id for r in run.resume)],
        state=run.state,
        continuation=run.message_id is not None,
        answered=answered_interrupts(continued, run.resume),
    )


def routes(
    agent: Agent,
    *,
    path: str = "/api/chat",
    sdk_version: int = 7,
    allow_system_messages: bool = False,
    options: StreamOptions = StreamOptions(),
) -> list[BaseRoute]:
    """Starlette routes serving ``agent`` to ``useChat``: ``POST {path}`` and ``GET {path}/{chatId}/stream``.

    ``sdk_version`` is the major of the ``ai`` package in the browser. System messages sent by the client are
    dropped unless ``allow_system_messages``. ``options`` are the :class:`~streamkit.serve.StreamOptions` of
    every protocol (limits, ``authorize``, error masking, heartbeats, ``strict``, resumable or detached runs).
    With ``options.resumable``, runs outlive their request, the GET resumes them and ``DELETE
    {path}/{chatId}/stream`` cancels them (see :mod:`streamkit.aisdk.resume`); without it the GET answers
    ``204`` (no stream to resume).
    """
    if sdk_version not in SUPPORTED_VERSIONS:
        raise ValueError(f"sdk_version must be one of {SUPPORTED_VERSIONS}, not {sdk_version!r}")
    resume = resume_scope(options, path=path)

    def convert(body: ChatRequest, principal: Any) -> tuple[str, RunInput, AISDKMapper]:
        run = to_run_input(body, principal=principal, allow_system_messages=allow_system_messages)
        return body.id, run, mapper_for(body, run, sdk_version=sdk_version, strict=options.strict)

    async def chat(request: Request) -> Response:
        try:
            _, (chat_id, run, mapper) = await parse_request(
                request, options.limits, options.authorize, parse_chat_request, convert
            )
        except HTTPError as exc:
            return exc.response()
        return await serve_run(
            agent,
            run,
            mapper,
            options=options,
            response=UIMessageStreamResponse,
            trailer=DONE,
            resume=resume,
            chat=chat_id,
            request=request,
        )

    async def no_stream(request: Request) -> Response:
        try:
            await authorize_request(options.authorize, request)
        except HTTPError as exc:
            return exc.response()
        return Response(status_code=204)

    post = Route(path, chat, methods=["POST"], name="aisdk_chat")
    if resume is not None:
        return [post, *resume_routes(resume, path=path, options=options, response=UIMessageStreamResponse)]
    return [post, Route(path.rstrip("/") + "/{chat_id}/stream", no_stream, methods=["GET"], name="aisdk_resume")]
