"""The dialect's edge: :func:`encode`, and the :func:`routes` of an agent console's API.

``routes(agent)`` returns Starlette routes to mount in a Starlette or FastAPI app::

    options = StreamOptions(authorize=api_keys({"k1": "alice"}))  # the options every protocol shares
    app = Starlette(routes=dsh.routes(agent, path="/api/agent", options=options))
    # FastAPI: app.router.routes.extend(dsh.routes(agent))

* ``POST {path}/stream``: the run as named SSE events (``meta``, ``chunk``, ``reasoning``, ``step_break``, then
  ``done`` or ``error``), with heartbeats;
* ``POST {path}/message``: the same run answered at once, as JSON (:meth:`~streamkit.dsh.fold.Folded.answer`:
  ``meta``, ``content``, ``bubbles``, ``toolCalls`` and the ``done`` or ``error`` frame's data);
* ``POST {path}/{agentId}/cancel``: stops the agent's run in progress (``204``; ``404`` when none), which
  ends with ``done`` (``finishReason: "aborted"``);
* ``GET {path}/{agentId}/status``: ``{"agentId", "status": "running" | "idle", "runId"?, "startedAt"?,
  "messages", "runs"}``;
* with ``StreamOptions(resumable=...)``, ``GET {path}/{agentId}/stream``: the agent's run in progress again
  (``204`` when none), from ``meta`` or after the SSE ``Last-Event-ID``, live to its end. A run of ``/stream``
  then outlives its request: a dropped connection or a reload resumes it here, and ``cancel`` still stops it.
  Its readers end with ``error`` (code ``run_lost``) if the worker producing it died.

Like the other protocols' endpoints (through :mod:`streamkit.serve`), they run the ``authorize`` hook
(``streamkit.http.api_keys`` accepts ``X-API-Key`` or ``Authorization: Bearer``), read the body within
``limits``, validate it (a JSON 4xx naming the field otherwise, never a 500) and stream through the shared SSE
writer: an exception in the agent, an event
heavier than ``limits.max_frame_bytes`` or a server shutdown ends the stream with ``error`` (a generic message
unless ``expose_errors``; ``on_error`` sees the exception). A second run of a busy agent id is a ``409``.
The conversation of each agent id is kept on the server, in a session store (see :mod:`streamkit.dsh.sessions`):
a run's history is kept before its ``done`` goes out, so a console's next message, on any worker, continues it;
a history the store could not keep ends the stream with ``error`` (code ``session_unsaved``) in place of
``done``, and a store that cannot be reached is a JSON 503 naming ``sessions``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..events import Agent, ChatEvent, Message, RunInput, ToolCallPart, ToolResultPart
from ..events.logs import run_logger
from ..frames import ErrorHook, encode_frames, frame, start_agent
from ..http import HTTPError, authorize_request, error_response, parse_request
from ..resumable import LOST_TEXT, StoreUnavailable
from ..serve import ResumeScope, StreamOptions, resume_endpoint, run_frames, serve_frames
from ..sse import EventStreamResponse
from .fold import fold, parse_sse
from .mapping import ERROR, DSHMapper
from .messages import from_dsh_messages, to_dsh_messages
from .request import AgentRequest, parse_agent_request, to_run_input
from .sessions import Run, Sessions, SessionStore

__all__ = ["DEAD", "UNSAVED", "encode", "mapper_for", "routes"]

logger = run_logger("streamkit.dsh")

DEAD = frame({"message": LOST_TEXT, "code": "run_lost"}, ERROR)
"""How a resumable run ends for its readers when the worker producing it died."""

UNSAVED = frame(
    {"message": "The conversation could not be kept; the next message starts afresh.", "code": "session_unsaved"},
    ERROR,
)
"""What ends a run in place of its ``done`` when the session store could not keep its history."""


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


def mapper_for(body: AgentRequest, run: RunInput, *, model: str | None = None, strict: bool = False) -> DSHMapper:
    """The mapper for a request's run: its agent (the thread) and run ids, its conversation (the user's message
    last). Everything it needs is in ``run`` (the body's message and the kept history); ``body`` is the request,
    as for every protocol."""
    return DSHMapper(
        agent_id=run.thread_id,
        run_id=run.run_id,
        history=to_dsh_messages(run.messages),
        model=model,
        known_tool_calls=_pending_calls(run.messages),
        strict=strict,
    )


def _guarded(agent: Agent, run: Run) -> Agent:
    """``agent`` with its events passed through ``run``'s cancel guard."""
    return lambda run_input: run.guard(start_agent(agent, run_input))


def _resume_scope(options: StreamOptions, path: str) -> ResumeScope | None:
    return ResumeScope.of(options, f"dsh:{path}", dead=DEAD)


def _summary(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


@contextlib.asynccontextmanager
async def _sessions_call() -> AsyncIterator[None]:
    """A session store call from an endpoint: a store that cannot be reached is a 503 naming ``sessions``."""
    try:
        yield
    except HTTPError:
        raise
    except Exception as exc:
        logger.warning("the session store is unavailable (%s); answering 503", _summary(exc))
        raise StoreUnavailable("the session store is unavailable; please retry", field="sessions") from exc


def _last_frame(chunk: bytes) -> int:
    """Where the last frame of ``chunk`` (whole frames, each ending with a blank line) begins."""
    at = chunk.rfind(b"\n\n", 0, len(chunk) - 2)
    return 0 if at < 0 else at + 2


class _Tracked:
    """The frames of a run; the session store keeps the run's history before its terminal frame goes out, and
    however the frames end (done, disconnect, never started) the run is finished in the store."""

    def __init__(self, frames: AsyncIterator[bytes], sessions: SessionStore, run: Run, mapper: DSHMapper) -> None:
        self._frames = frames
        self._sessions = sessions
        self._run = run
        self._mapper = mapper
        self._closed = False
        self._finished = False

    def __aiter__(self) -> _Tracked:
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await anext(self._frames)
        except StopAsyncIteration:
            await self.aclose()
            raise
        if self._mapper.finished and not self._finished and not await self._finish():
            at = _last_frame(chunk)
            if chunk.startswith(b"event: done\n", at):  # the console is told: the next message starts afresh
                chunk = chunk[:at] + UNSAVED
        return chunk

    async def _finish(self) -> bool:
        """Finish the run in the store, keeping its history; False (and one line in the log) if it failed."""
        self._finished = True
        try:
            await self._sessions.finish(self._run, from_dsh_messages(self._mapper.messages))
        except Exception as exc:
            logger.warning(
                "the session store could not keep the history of agent %r (%s)", self._run.agent_id, _summary(exc)
            )
            return False
        return True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._frames.aclose()  # type: ignore[attr-defined]
        finally:
            if not self._finished:
                await self._finish()


def routes(
    agent: Agent,
    *,
    path: str = "/api/agent",
    model: str | None = None,
    sessions: SessionStore | None = None,
    options: StreamOptions = StreamOptions(),
) -> list[BaseRoute]:
    """The dialect's endpoints for ``agent`` under ``path`` (see the module).

    ``model`` is what ``meta`` announces; ``sessions`` is the :class:`~streamkit.dsh.sessions.SessionStore`
    keeping the conversations and runs in progress: by default a new :class:`~streamkit.dsh.sessions.Sessions`
    in this process's memory, keeping at most ``options.limits.max_messages`` messages and
    ``options.limits.max_body_bytes`` bytes per agent id (what a client of another protocol could send); for
    several workers, or a history that outlives a restart, a :class:`~streamkit.dsh.redis.RedisSessions`.
    ``options`` are the :class:`~streamkit.serve.StreamOptions` of every protocol (limits, ``authorize``, error
    masking, heartbeats, ``strict``, resumable or detached runs); ``resumable`` and ``detach_runs`` apply
    to ``POST {path}/stream`` (the blocking ``/message`` answers once its run ended). With ``options.resumable``,
    ``GET {path}/{agentId}/stream`` joins them: ``204`` when the caller has no run in progress for that agent id,
    else the run's stream from its ``meta`` (after the SSE ``Last-Event-ID``, when sent), live to its end.
    """
    limits = options.limits
    if sessions is None:
        sessions = Sessions(max_messages=limits.max_messages, max_history_bytes=limits.max_body_bytes)
    keeper: SessionStore = sessions
    resume = _resume_scope(options, path)
    base = path.rstrip("/")

    async def begin(request: Request) -> tuple[_Tracked, DSHMapper, RunInput] | Response:
        try:
            principal, body = await parse_request(request, options.limits, options.authorize, parse_agent_request)
            async with _sessions_call():
                run = await keeper.start(principal, body.agent_id)
        except HTTPError as exc:
            return exc.response()
        run_input = to_run_input(body, history=run.history, principal=principal, run_id=run.run_id)
        mapper = mapper_for(body, run_input, model=model, strict=options.strict)
        frames = run_frames(_guarded(agent, run), run_input, mapper, options=options, request=request)
        return _Tracked(frames, keeper, run, mapper), mapper, run_input

    async def stream(request: Request) -> Response:
        started = await begin(request)
        if isinstance(started, Response):
            return started
        frames, mapper, run = started
        return await serve_frames(
            frames,
            mapper,
            options=options,
            response=EventStreamResponse,
            resume=resume,
            chat=run.thread_id,  # the agent id
            principal=run.principal,
        )

    async def message(request: Request) -> Response:
        started = await begin(request)
        if isinstance(started, Response):
            return started
        frames, _, _ = started
        try:
            body = b"".join([chunk async for chunk in frames])
        finally:
            await frames.aclose()
        return JSONResponse(fold(parse_sse(body)).answer())

    async def cancel(request: Request) -> Response:
        agent_id: str = request.path_params["agent_id"]
        try:
            principal = await authorize_request(options.authorize, request)
            async with _sessions_call():
                cancelled = await keeper.cancel(principal, agent_id)
        except HTTPError as exc:
            return exc.response()
        if not cancelled:
            return error_response(404, f"agent {agent_id!r} has no run in progress", "agentId")
        return Response(status_code=204)

    async def status(request: Request) -> Response:
        agent_id: str = request.path_params["agent_id"]
        try:
            principal = await authorize_request(options.authorize, request)
            async with _sessions_call():
                answer = await keeper.status(principal, agent_id)
        except HTTPError as exc:
            return exc.response()
        return JSONResponse(answer)

    async def agent_id_of(request: Request) -> str:
        agent_id: str = request.path_params["agent_id"]
        return agent_id

    endpoints: list[BaseRoute] = [
        Route(base + "/stream", stream, methods=["POST"], name="dsh_stream"),
        Route(base + "/message", message, methods=["POST"], name="dsh_message"),
        Route(base + "/{agent_id}/cancel", cancel, methods=["POST"], name="dsh_cancel"),
        Route(base + "/{agent_id}/status", status, methods=["GET"], name="dsh_status"),
    ]
    if resume is not None:
        again = resume_endpoint(resume, options=options, response=EventStreamResponse, chat_of=agent_id_of)
        endpoints.append(Route(base + "/{agent_id}/stream", again, methods=["GET"], name="dsh_resume"))
    return endpoints
