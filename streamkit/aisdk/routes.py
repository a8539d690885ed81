"""The AI SDK edge: :func:`encode`, :class:`UIMessageStreamResponse` and the :func:`routes` to mount.

``routes(agent)`` answers ``useChat``'s ``POST {path}`` with the agent's run as a UI Message Stream, and
its resume ``GET {path}/{chatId}/stream`` with ``204`` (no stream to resume). A bad body gets a JSON 4xx
naming the field; nothing the client sends can cause a 500.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from typing import Any

import orjson
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..events import Agent, ChatEvent
from ..http import Authorize, HTTPError, Limits, authorize_request, read_json
from ..sse import ErrorHook, EventStreamResponse, encode_frames
from .mapping import AISDKMapper
from .request import ChatRequest, continued_message, known_ids, request_error, to_run_input

__all__ = ["DONE", "UI_MESSAGE_STREAM_HEADERS", "UIMessageStreamResponse", "encode", "routes"]

logger = logging.getLogger("streamkit.aisdk")

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
    )
    return encode_frames(events, mapper, trailer=DONE, expose_errors=expose_errors, on_error=on_error)


class UIMessageStreamResponse(EventStreamResponse):
    """A response carrying a UI Message Stream (``content`` is :func:`encode`'s output), with the five
    headers of the reference server. ``heartbeat`` and ``send_timeout`` are those of
    :class:`~streamkit.sse.EventStreamResponse`."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        heartbeat: float = 15.0,
        send_timeout: float | None = 30.0,
    ) -> None:
        merged = dict(UI_MESSAGE_STREAM_HEADERS)
        if headers:
            merged.update({k.lower(): v for k, v in headers.items()})
        super().__init__(
            content, status_code=status_code, headers=merged, heartbeat=heartbeat, send_timeout=send_timeout
        )
        # Starlette adds a charset to text/* types; the reference server sends the bare type.
        self.headers["content-type"] = merged["content-type"]


async def _failing(exc: Exception) -> AsyncIterator[ChatEvent]:
    raise exc
    yield  # pragma: no cover  (makes this an async generator)


def _check_limits(raw: Any, limits: Limits) -> None:
    if not isinstance(raw, dict):
        raise HTTPError("the body must be a JSON object", field="body", status=422)
    messages = raw.get("messages")
    if not isinstance(messages, list):
        return  # the model names the problem
    if len(messages) > limits.max_messages:
        raise HTTPError(
            f"the body carries {len(messages)} messages, more than {limits.max_messages}",
            field="limits.max_messages",
            status=413,
        )
    for i, message in enumerate(messages):
        try:
            size = len(orjson.dumps(message))
        except TypeError:
            continue
        if size > limits.max_message_bytes:
            raise HTTPError(
                f"messages.{i} is {size} bytes, more than {limits.max_message_bytes}",
                field="limits.max_message_bytes",
                status=413,
            )


def routes(
    agent: Agent,
    *,
    path: str = "/api/chat",
    sdk_version: int = 7,
    limits: Limits = Limits(),  # noqa: B008  (frozen dataclass)
    authorize: Authorize | None = None,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    heartbeat: float = 15.0,
    send_timeout: float = 30.0,
    allow_system_messages: bool = False,
    strict: bool = False,
) -> list[BaseRoute]:
    """Starlette routes serving ``agent`` to ``useChat``: ``POST {path}`` and ``GET {path}/{chatId}/stream``.

    ``sdk_version`` is the major of the ``ai`` package in the browser. ``authorize(request)`` returns the
    principal handed to the agent as ``RunInput.principal`` (or raises to refuse with 401/403). System
    messages sent by the client are dropped unless ``allow_system_messages``. See :func:`encode` for
    ``expose_errors``, ``on_error`` and ``strict``; :class:`~streamkit.sse.EventStreamResponse` for
    ``heartbeat`` and ``send_timeout``.
    """
    if sdk_version not in (5, 6, 7):
        raise ValueError(f"sdk_version must be 5, 6 or 7, not {sdk_version!r}")

    async def chat(request: Request) -> Response:
        try:
            principal = await authorize_request(authorize, request)
            raw = await read_json(request, limits)
            _check_limits(raw, limits)
            try:
                body = ChatRequest.model_validate(raw)
            except ValidationError as exc:
                raise request_error(exc) from None
        except HTTPError as exc:
            return exc.response()
        run = to_run_input(body, principal=principal, allow_system_messages=allow_system_messages)
        tool_ids, approval_ids = known_ids(continued_message(body))
        events: AsyncIterable[ChatEvent] | Iterable[ChatEvent]
        try:
            events = agent(run)
        except Exception as exc:  # the agent failed before yielding: still a proper stream
            events = _failing(exc)
        stream = encode(
            events,
            sdk_version=sdk_version,
            message_id=run.message_id,
            strict=strict,
            expose_errors=expose_errors,
            on_error=on_error,
            known_tool_calls=tool_ids,
            known_approvals=approval_ids,
            state=run.state,
        )
        return UIMessageStreamResponse(stream, heartbeat=heartbeat, send_timeout=send_timeout)

    async def resume(request: Request) -> Response:
        try:
            await authorize_request(authorize, request)
        except HTTPError as exc:
            return exc.response()
        return Response(status_code=204)

    base = path.rstrip("/")
    return [
        Route(path, chat, methods=["POST"], name="aisdk_chat"),
        Route(base + "/{chat_id}/stream", resume, methods=["GET"], name="aisdk_resume"),
    ]
