"""ASGI routes for AG-UI: POST a ``RunAgentInput``, get the run back as ``text/event-stream``.

``routes(agent)`` returns Starlette routes to mount in a Starlette or FastAPI app::

    app = Starlette(routes=agui.routes(agent, path="/api/agui"))
    # FastAPI: app.router.routes.extend(agui.routes(agent))

The endpoint runs the ``authorize`` hook, reads the body within ``limits``, validates it (a JSON 4xx naming the
field otherwise, never a 500), converts it to a :class:`~streamkit.events.RunInput`, calls the agent and streams
its events through an :class:`~streamkit.agui.mapping.AGUIMapper` whose initial state is the request's
``state``. An exception in the agent, or an event heavier than ``limits.max_frame_bytes``, ends the stream with
``RUN_ERROR`` (a generic message unless ``expose_errors``; ``on_error`` sees the exception); so does a server
shutdown in the middle of a run (code ``shutdown``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..detach import detach
from ..events import Agent
from ..events.logs import bind_run
from ..frames import ErrorHook, encode_frames, shutdown_frames, start_agent
from ..http import Authorize, HTTPError, Limits, parse_request
from ..resumable import Resumable, as_resumable
from ..sse import EventStreamResponse
from ..store import StreamStore
from .mapping import AGUIMapper
from .reattach import reattach_routes, start_resumable
from .request import RunAgentInput, parse_run_agent_input, pending_tool_calls, to_run_input

__all__ = ["MEDIA_TYPE", "AGUIResponse", "mapper_for", "routes"]

MEDIA_TYPE = "text/event-stream"
"""The response content type, exactly (the AG-UI client picks its parser by string equality)."""


class AGUIResponse(EventStreamResponse):
    """An AG-UI event stream: ``text/event-stream`` (no charset), heartbeats, disconnect handling.

    ``on_shutdown`` returns the bytes that end the run when the server stops while the stream is open.
    """

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        headers: Mapping[str, str] | None = None,
        heartbeat: float = 15.0,
        send_timeout: float | None = 30.0,
        on_shutdown: Callable[[], bytes] | None = None,
    ) -> None:
        super().__init__(
            content, headers=headers, heartbeat=heartbeat, send_timeout=send_timeout, on_shutdown=on_shutdown
        )
        self.headers["content-type"] = MEDIA_TYPE


def mapper_for(body: RunAgentInput, *, strict: bool = False) -> AGUIMapper:
    """The mapper for a request: its ids and state, its history's ids and pending tool calls, its resumes."""
    return AGUIMapper(
        thread_id=body.thread_id,
        run_id=body.run_id,
        state=body.state,
        strict=strict,
        known_tool_calls=pending_tool_calls(body),
        known_approvals=[r.interrupt_id for r in body.resume or ()],
        reserved_ids=[m.id for m in body.messages],
        parent_run_id=body.parent_run_id,
        protocol_version=body.protocol_version,
    )


def routes(
    agent: Agent,
    *,
    path: str = "/api/agui",
    limits: Limits = Limits(),
    authorize: Authorize | None = None,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    heartbeat: float = 15.0,
    send_timeout: float | None = 30.0,
    strict: bool = False,
    resumable: Resumable | StreamStore | None = None,
    detach_runs: bool = False,
    max_buffer_bytes: int = 1024 * 1024,
) -> list[BaseRoute]:
    """The AG-UI endpoint for ``agent``: one ``POST`` route at ``path``.

    With ``resumable`` (a :class:`~streamkit.resumable.Resumable` or a stream store), runs outlive their
    request and ``{path}/reattach`` and ``{path}/cancel`` join it (see :mod:`streamkit.agui.reattach`).
    Without it, a client that goes away cancels the run, unless ``detach_runs``: then the run goes on to
    completion with at most ``max_buffer_bytes`` of unread frames kept (see :func:`~streamkit.detach.detach`).
    """
    keeper = as_resumable(resumable)

    def respond(frames: AsyncIterable[bytes]) -> Response:
        return AGUIResponse(frames, heartbeat=heartbeat, send_timeout=send_timeout)

    async def endpoint(request: Request) -> Response:
        try:
            principal, body = await parse_request(request, limits, authorize, parse_run_agent_input)
        except HTTPError as exc:
            return exc.response()
        run = to_run_input(body, principal=principal)
        bind_run(run.run_id)  # log lines from here on name the run
        mapper = mapper_for(body, strict=strict)
        frames = encode_frames(
            start_agent(agent, run),
            mapper,
            expose_errors=expose_errors,
            on_error=on_error,
            max_frame_bytes=limits.max_frame_bytes,
        )
        if keeper is not None:
            try:
                frames = await start_resumable(keeper, frames, mapper, path=path, body=body, principal=principal)
            except HTTPError as exc:  # the stream store is unreachable: 503
                return exc.response()
            return respond(frames)
        if detach_runs:
            frames = detach(frames, max_buffer_bytes=max_buffer_bytes)
        return AGUIResponse(
            frames, heartbeat=heartbeat, send_timeout=send_timeout, on_shutdown=lambda: shutdown_frames(mapper)
        )

    endpoints: list[BaseRoute] = [Route(path, endpoint, methods=["POST"], name="agui")]
    if keeper is not None:
        endpoints += reattach_routes(keeper, path=path, authorize=authorize, limits=limits, response=respond)
    return endpoints
