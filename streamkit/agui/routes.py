"""The AG-UI edge: :func:`encode`, :class:`AGUIResponse` and the :func:`routes` to mount (POST a
``RunAgentInput``, get the run back as ``text/event-stream``).

``routes(agent)`` returns Starlette routes to mount in a Starlette or FastAPI app::

    app = Starlette(routes=agui.routes(agent, path="/api/agui"))
    # FastAPI: app.router.routes.extend(agui.routes(agent))
    # the options every protocol shares: agui.routes(agent, options=StreamOptions(authorize=..., strict=True))

The endpoint runs the ``authorize`` hook, reads the body within ``limits``, validates it (a JSON 4xx naming the
field otherwise, never a 500), converts it to a :class:`~streamkit.events.RunInput` and hands the run and its
:class:`~streamkit.agui.mapping.AGUIMapper` (whose initial state is the request's ``state``) to
:func:`~streamkit.serve.serve_run`. An exception in the agent, or an event heavier than
``limits.max_frame_bytes``, ends the stream with ``RUN_ERROR`` (a generic message unless ``expose_errors``;
``on_error`` sees the exception); so does a server shutdown in the middle of a run (code ``shutdown``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..events import Agent, ChatEvent, RunInput
from ..frames import ErrorHook, encode_frames
from ..http import HTTPError, parse_request
from ..serve import StreamOptions, serve_run
from ..sse import EventStreamResponse
from .mapping import PROTOCOL_VERSION, AGUIMapper
from .request import RunAgentInput, parse_run_agent_input, pending_tool_calls, to_run_input
from .resume import reattach_routes, resume_scope, run_meta

__all__ = ["MEDIA_TYPE", "AGUIResponse", "encode", "mapper_for", "routes"]

MEDIA_TYPE = "text/event-stream"
"""The response content type, exactly (the AG-UI client picks its parser by string equality)."""


def encode(
    events: AsyncIterable[ChatEvent] | Iterable[ChatEvent],
    *,
    thread_id: str,
    run_id: str,
    state: Any = None,
    strict: bool = False,
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    snapshot_when_larger: bool = True,
    known_tool_calls: Iterable[str] = (),
    known_approvals: Iterable[str] = (),
    reserved_ids: Iterable[str] = (),
    parent_run_id: str | None = None,
    protocol_version: str | None = PROTOCOL_VERSION,
) -> AsyncIterator[bytes]:
    """AG-UI SSE bytes for ``events``: ``data: <event JSON>\\n\\n`` frames, ``RUN_STARTED`` first, one terminal.

    ``state`` is the state the client holds (the request's); the other options are :class:`AGUIMapper`'s.
    An exception raised by ``events`` ends the stream with ``RUN_ERROR`` (a generic message unless
    ``expose_errors``; ``on_error`` sees the exception).
    """
    mapper = AGUIMapper(
        thread_id=thread_id,
        run_id=run_id,
        state=state,
        strict=strict,
        snapshot_when_larger=snapshot_when_larger,
        known_tool_calls=known_tool_calls,
        known_approvals=known_approvals,
        reserved_ids=reserved_ids,
        parent_run_id=parent_run_id,
        protocol_version=protocol_version,
    )
    return encode_frames(events, mapper, expose_errors=expose_errors, on_error=on_error)


_HEADERS: Mapping[str, str] = {"content-type": MEDIA_TYPE}


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
        # The bare type, whatever the caller's headers say (set before the headers are encoded: no charset added).
        merged = {**headers, "content-type": MEDIA_TYPE} if headers else _HEADERS
        super().__init__(
            content, headers=merged, heartbeat=heartbeat, send_timeout=send_timeout, on_shutdown=on_shutdown
        )


def mapper_for(body: RunAgentInput, run: RunInput, *, strict: bool = False) -> AGUIMapper:
    """The mapper for a request: its ids and state, its history's ids and pending tool calls, its resumes.

    Everything it needs is in ``body``; ``run`` is its :class:`~streamkit.events.RunInput`, as for every protocol.
    """
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


def routes(agent: Agent, *, path: str = "/api/agui", options: StreamOptions = StreamOptions()) -> list[BaseRoute]:
    """The AG-UI endpoint for ``agent``: one ``POST`` route at ``path``.

    ``options`` are the :class:`~streamkit.serve.StreamOptions` of every protocol (limits, ``authorize``, error
    masking, heartbeats, ``strict``, resumable or detached runs). With ``options.resumable``, runs outlive their
    request and ``{path}/reattach`` and ``{path}/cancel`` join it (see :mod:`streamkit.agui.resume`).
    """
    resume = resume_scope(options, path=path)

    def convert(body: RunAgentInput, principal: Any) -> tuple[str, RunInput, AGUIMapper, dict[str, str] | None]:
        run = to_run_input(body, principal=principal)
        meta = run_meta(body) if resume is not None else None
        return body.thread_id, run, mapper_for(body, run, strict=options.strict), meta

    async def endpoint(request: Request) -> Response:
        try:
            _, (thread_id, run, mapper, meta) = await parse_request(
                request, options.limits, options.authorize, parse_run_agent_input, convert
            )
        except HTTPError as exc:
            return exc.response()
        return await serve_run(
            agent,
            run,
            mapper,
            options=options,
            response=AGUIResponse,
            resume=resume,
            chat=thread_id,
            meta=meta,
            request=request,
        )

    endpoints: list[BaseRoute] = [Route(path, endpoint, methods=["POST"], name="agui")]
    if resume is not None:
        endpoints += reattach_routes(resume, path=path, options=options, response=AGUIResponse)
    return endpoints
