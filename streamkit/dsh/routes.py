"""The dialect's edge: :func:`encode`, and the :func:`routes` of an agent console's API.

``routes(agent)`` returns Starlette routes to mount in a Starlette or FastAPI app::

    app = Starlette(routes=dsh.routes(agent, path="/api/agent", authorize=api_keys({"k1": "alice"})))
    # FastAPI: app.router.routes.extend(dsh.routes(agent))

* ``POST {path}/stream``: the run as named SSE events (``meta``, ``chunk``, ``step_break``, then ``done`` or
  ``error``), with heartbeats;
* ``POST {path}/message``: the same run answered at once, as JSON (:meth:`~streamkit.dsh.fold.Folded.answer`:
  ``meta``, ``content``, ``bubbles``, ``toolCalls`` and the ``done`` or ``error`` frame's data);
* ``POST {path}/{agentId}/cancel``: stops the agent's run in progress (``204``; ``404`` when none), which
  ends with ``done`` (``finishReason: "aborted"``);
* ``GET {path}/{agentId}/status``: ``{"agentId", "status": "running" | "idle", "runId"?, "startedAt"?,
  "messages", "runs"}``.

Like the other protocols' endpoints, they run the ``authorize`` hook (``streamkit.http.api_keys`` accepts
``X-API-Key`` or ``Authorization: Bearer``), read the body within ``limits``, validate it (a JSON 4xx naming the
field otherwise, never a 500) and stream through the shared SSE writer: an exception in the agent, an event
heavier than ``limits.max_frame_bytes`` or a server shutdown ends the stream with ``error`` (a generic message
unless ``expose_errors``; ``on_error`` sees the exception). A second run of a busy agent id is a ``409``.
The conversation of each agent id is kept on the server (see :mod:`streamkit.dsh.sessions`).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..events import Agent, ChatEvent, Message, RunInput, ToolCallPart, ToolResultPart
from ..events.logs import bind_run
from ..frames import ErrorHook, encode_frames, shutdown_frames, start_agent
from ..http import Authorize, HTTPError, Limits, authorize_request, error_response, parse_request
from ..sse import EventStreamResponse
from .fold import fold, parse_sse
from .mapping import DSHMapper
from .messages import from_dsh_messages, to_dsh_messages
from .request import parse_agent_request, to_run_input
from .sessions import Run, Session, Sessions

__all__ = ["encode", "mapper_for", "routes"]


def encode(
    events: AsyncIterable[ChatEvent] | Iterable[ChatEvent],
    *,
    agent_id: str,
    run_id: str,
    history: Iterable[dict[str, Any]] = (),
    model: str | None = None,
    strict: bool = False,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
) -> AsyncIterator[bytes]:
    """The dialect's SSE bytes for ``events``: ``event: <name>`` / ``data: <json>`` frames, ``meta`` first,
    ``done`` or ``error`` last. The options are :class:`~streamkit.dsh.DSHMapper`'s; an exception from
    ``events`` ends the stream with ``error`` (a generic message unless ``expose_errors``)."""
    mapper = DSHMapper(agent_id=agent_id, run_id=run_id, history=history, model=model, strict=strict)
    return encode_frames(events, mapper, expose_errors=expose_errors, on_error=on_error)


def _pending_calls(history: list[Message]) -> list[str]:
    calls = [p.id for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    answered = {p.id for m in history for p in m.parts if isinstance(p, ToolResultPart)}
    return [c for c in calls if c not in answered]


def mapper_for(run: RunInput, *, model: str | None = None, strict: bool = False) -> DSHMapper:
    """The mapper for a run: its agent (the thread) and run ids, its conversation (the user's message last)."""
    return DSHMapper(
        agent_id=run.thread_id,
        run_id=run.run_id,
        history=to_dsh_messages(run.messages),
        model=model,
        known_tool_calls=_pending_calls(run.messages),
        strict=strict,
    )


class _Tracked:
    """The frames of a run; however they end (done, disconnect, never started), the session is told."""

    def __init__(
        self, frames: AsyncIterator[bytes], sessions: Sessions, session: Session, run: Run, mapper: DSHMapper
    ) -> None:
        self._frames = frames
        self._sessions = sessions
        self._session = session
        self._run = run
        self._mapper = mapper
        self._closed = False

    def __aiter__(self) -> _Tracked:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await anext(self._frames)
        except StopAsyncIteration:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._frames.aclose()  # type: ignore[attr-defined]
        finally:
            self._sessions.finish(self._session, self._run, from_dsh_messages(self._mapper.messages))


def routes(
    agent: Agent,
    *,
    path: str = "/api/agent",
    limits: Limits = Limits(),
    authorize: Authorize | None = None,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    heartbeat: float = 15.0,
    send_timeout: float | None = 30.0,
    strict: bool = False,
    model: str | None = None,
    sessions: Sessions | None = None,
) -> list[BaseRoute]:
    """The dialect's four endpoints for ``agent`` under ``path`` (see the module).

    ``model`` is what ``meta`` announces; ``sessions`` keeps the conversations and runs in progress (by default
    a new :class:`~streamkit.dsh.sessions.Sessions` keeping ``limits.max_messages`` messages per agent id).
    See :func:`encode` for ``expose_errors``, ``on_error`` and ``strict``, and
    :class:`~streamkit.sse.EventStreamResponse` for ``heartbeat`` and ``send_timeout``.
    """
    keeper = sessions if sessions is not None else Sessions(max_messages=limits.max_messages)
    base = path.rstrip("/")

    async def begin(request: Request) -> tuple[_Tracked, DSHMapper] | Response:
        try:
            principal, body = await parse_request(request, limits, authorize, parse_agent_request)
            session, run = keeper.start(principal, body.agent_id)
        except HTTPError as exc:
            return exc.response()
        run_input = to_run_input(body, history=session.history, principal=principal, run_id=run.run_id)
        bind_run(run_input.run_id)  # log lines from here on name the run
        mapper = mapper_for(run_input, model=model, strict=strict)
        frames = encode_frames(
            run.guard(start_agent(agent, run_input)),
            mapper,
            expose_errors=expose_errors,
            on_error=on_error,
            max_frame_bytes=limits.max_frame_bytes,
        )
        return _Tracked(frames, keeper, session, run, mapper), mapper

    async def stream(request: Request) -> Response:
        started = await begin(request)
        if isinstance(started, Response):
            return started
        frames, mapper = started
        return EventStreamResponse(
            frames, heartbeat=heartbeat, send_timeout=send_timeout, on_shutdown=lambda: shutdown_frames(mapper)
        )

    async def message(request: Request) -> Response:
        started = await begin(request)
        if isinstance(started, Response):
            return started
        frames, _ = started
        try:
            body = b"".join([chunk async for chunk in frames])
        finally:
            await frames.aclose()
        return JSONResponse(fold(parse_sse(body)).answer())

    async def lookup(request: Request) -> tuple[str, Session | None]:
        principal = await authorize_request(authorize, request)
        agent_id = request.path_params["agent_id"]
        return agent_id, keeper.get(principal, agent_id)

    async def cancel(request: Request) -> Response:
        try:
            agent_id, session = await lookup(request)
        except HTTPError as exc:
            return exc.response()
        if session is None or session.run is None:
            return error_response(404, f"agent {agent_id!r} has no run in progress", "agentId")
        session.run.cancel()
        return Response(status_code=204)

    async def status(request: Request) -> Response:
        try:
            agent_id, session = await lookup(request)
        except HTTPError as exc:
            return exc.response()
        if session is None:
            return JSONResponse({"agentId": agent_id, "status": "idle", "messages": 0, "runs": 0})
        return JSONResponse(session.status())

    return [
        Route(base + "/stream", stream, methods=["POST"], name="dsh_stream"),
        Route(base + "/message", message, methods=["POST"], name="dsh_message"),
        Route(base + "/{agent_id}/cancel", cancel, methods=["POST"], name="dsh_cancel"),
        Route(base + "/{agent_id}/status", status, methods=["GET"], name="dsh_status"),
    ]
