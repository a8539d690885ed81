"""The endpoint every protocol serves: :class:`StreamOptions`, :func:`serve_run` and the resume and cancel endpoints.

A protocol's ``routes()`` parses its request, builds a :class:`~streamkit.events.RunInput` and the protocol's
mapper, and hands both to :func:`serve_run`, which does the rest the same way for every protocol: the agent's
events through the mapper (:func:`~streamkit.frames.encode_frames`: error masking, the frame-size limit), then
either a resumable run (:class:`~streamkit.resumable.Resumable`), a run detached from its request
(:func:`~streamkit.detach.detach`) or a run bound to it, and the protocol's response (heartbeats, send
timeout, the shutdown frames). The options common to every protocol travel as one :class:`StreamOptions`.
:func:`serve_run` is its two stages, :func:`run_frames` then :func:`serve_frames`; a protocol that must see the
frames between them (the dialect tells its sessions how each run ended) calls the two itself.

With a resumable run, :func:`resume_endpoint` answers a reconnect with the stored stream (from an SSE
``Last-Event-ID``) and :func:`cancel_endpoint` stops the run from any worker; each protocol decides at which URLs.

Every run, reconnect and cancel is recorded with OpenTelemetry when the app configured it (``options.telemetry``,
else the global providers): the hooks are :mod:`streamkit.telemetry`'s, called here so every protocol has them.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response

from . import telemetry
from .detach import detach
from .events import Agent, RunInput
from .events.logs import bind_run
from .frames import ErrorHook, Mapper, encode_frames, shutdown_frames, start_agent
from .http import Authorize, HTTPError, Limits, authorize_request, error_response
from .resumable import Resumable, as_resumable, endings_from_mapper, last_event_id
from .store import RunInfo, StreamStore
from .telemetry import Telemetry

__all__ = [
    "ResumeScope",
    "StreamOptions",
    "StreamResponse",
    "cancel_endpoint",
    "resume_endpoint",
    "run_frames",
    "serve_frames",
    "serve_run",
]

Endpoint = Callable[[Request], Awaitable[Response]]
"""A Starlette endpoint: the request in, the response out."""


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """How a protocol's routes serve their runs; the same options for every protocol.

    * ``limits`` bound the request and each outgoing event's frames (:class:`~streamkit.http.Limits`);
    * ``authorize(request)`` returns the principal handed to the agent as ``RunInput.principal`` (or raises to
      refuse with 401/403). Any object will do for the agent; where the principal also tells owners apart
      (resumable runs, the dialect's sessions) it must have a JSON form (a user id, a dict of claims, a pydantic
      model, a dataclass), else the first such request is a JSON 500 naming the hook and the type
      (:func:`~streamkit.resumable.principal_key`; an ``owner=`` function on the ``Resumable`` or ``Sessions``
      maps other objects);
    * an exception in the agent ends the stream with the protocol's error frames, whose text is generic unless
      ``expose_errors``; ``on_error`` sees the exception;
    * ``heartbeat`` and ``send_timeout`` are :class:`~streamkit.sse.EventStreamResponse`'s;
    * ``strict`` makes the mapper raise on an ill-formed run instead of repairing it;
    * with ``resumable`` (a :class:`~streamkit.resumable.Resumable` or a stream store) runs outlive their
      request and can be resumed and cancelled (each protocol says at which URLs). Without it, a client that
      goes away cancels the run, unless ``detach_runs``: then the run goes on to completion with at most
      ``max_buffer_bytes`` of unread frames kept (see :func:`~streamkit.detach.detach`);
    * ``telemetry`` says how runs are recorded with OpenTelemetry (:class:`~streamkit.telemetry.Telemetry`;
      by default with the global tracer and meter providers, when the app configured them).
    """

    limits: Limits = Limits()
    authorize: Authorize | None = None
    expose_errors: bool = False
    on_error: ErrorHook | None = None
    heartbeat: float = 15.0
    send_timeout: float | None = 30.0
    strict: bool = False
    resumable: Resumable | StreamStore | None = None
    detach_runs: bool = False
    max_buffer_bytes: int = 1024 * 1024
    telemetry: Telemetry | None = None


class StreamResponse(Protocol):
    """A protocol's response class (or a function building it): the frames on the wire, with the options'
    ``heartbeat`` and ``send_timeout``, and ``on_shutdown`` the bytes that end a run the server's shutdown cuts
    short."""

    def __call__(
        self,
        content: AsyncIterable[bytes],
        *,
        heartbeat: float,
        send_timeout: float | None,
        on_shutdown: Callable[[], bytes] | None = None,
    ) -> Response:
        """The response streaming ``content``."""
        ...


@dataclass(frozen=True, slots=True)
class ResumeScope:
    """Where one set of routes keeps its resumable runs.

    ``scope`` names the protocol and path (a chat id is looked up within it); ``dead`` is how a run ends for
    its readers when the worker producing it died (valid after any prefix of the stream).
    """

    resumable: Resumable
    scope: str
    dead: bytes

    @classmethod
    def of(cls, options: StreamOptions, scope: str, *, dead: bytes) -> ResumeScope | None:
        """The scope of routes served with ``options``; ``None`` unless they are resumable."""
        keeper = as_resumable(options.resumable)
        return None if keeper is None else cls(keeper, scope, dead)


def run_frames(
    agent: Agent,
    run: RunInput,
    mapper: Mapper,
    *,
    options: StreamOptions,
    trailer: bytes = b"",
    request: Request | None = None,
) -> AsyncIterator[bytes]:
    """The run's SSE bytes: ``agent`` called on ``run``, its events through ``mapper``, ``trailer`` last.

    Log lines name the run from here on. With telemetry on (``options.telemetry``), the run is a span, a
    child of ``request``'s trace, and the agent runs under it.
    """
    bind_run(run.run_id)
    observed = telemetry.observe_run(options.telemetry, agent, run, mapper, request)
    frames = encode_frames(
        start_agent(agent, run) if observed is None else observed.start(agent, run),
        mapper,
        trailer=trailer,
        expose_errors=options.expose_errors,
        on_error=options.on_error,
        max_frame_bytes=options.limits.max_frame_bytes,
    )
    return frames if observed is None else observed.frames(frames)


async def serve_frames(
    frames: AsyncIterator[bytes],
    mapper: Mapper,
    *,
    options: StreamOptions,
    response: StreamResponse,
    trailer: bytes = b"",
    resume: ResumeScope | None = None,
    chat: str = "",
    principal: Any = None,
    meta: Mapping[str, str] | None = None,
) -> Response:
    """The response delivering a run's ``frames`` (encoded by ``mapper``, ending with ``trailer``).

    With ``resume``, the run is started detached in the stream store for ``principal``'s ``chat`` (with
    ``meta`` kept beside it) and the response is its first reader; a store that cannot be reached is a 503.
    Otherwise the run is bound to the request, or detached from it with ``options.detach_runs``, and a server
    shutdown ends it with the mapper's error frames.
    """
    observed = telemetry.run_of(mapper)
    if resume is not None:
        keeper = resume.resumable
        endings = endings_from_mapper(mapper, dead=resume.dead, trailer=trailer)
        telemetry.serving(observed, "starting")
        try:
            owner = keeper.owner(principal)
        except HTTPError as exc:  # a principal with no JSON form: a 500 naming the hook
            aclose = getattr(frames, "aclose", None)
            if aclose is not None:
                await aclose()
            return exc.response()
        try:
            run = await keeper.start(frames, endings, owner=owner, scope=resume.scope, chat=chat, meta=meta)
        except HTTPError as exc:  # the stream store is unreachable: 503
            return exc.response()
        telemetry.serving(observed, "resumable", stream_id=run)
        return response(
            telemetry.watched(keeper.read(run, dead=resume.dead), observed),
            heartbeat=options.heartbeat,
            send_timeout=options.send_timeout,
        )
    if options.detach_runs:
        telemetry.serving(observed, "detached")
        frames = detach(frames, max_buffer_bytes=options.max_buffer_bytes)
    return response(
        telemetry.watched(frames, observed),
        heartbeat=options.heartbeat,
        send_timeout=options.send_timeout,
        on_shutdown=lambda: shutdown_frames(mapper, trailer),
    )


async def serve_run(
    agent: Agent,
    run: RunInput,
    mapper: Mapper,
    *,
    options: StreamOptions,
    response: StreamResponse,
    trailer: bytes = b"",
    resume: ResumeScope | None = None,
    chat: str = "",
    meta: Mapping[str, str] | None = None,
    request: Request | None = None,
) -> Response:
    """The response of a protocol's run endpoint: ``agent``'s run through ``mapper`` (:func:`run_frames`, a
    span in ``request``'s trace with telemetry on), delivered as :func:`serve_frames` says (resumable for
    ``run.principal``'s ``chat``, detached or bound)."""
    if resume is not None:
        try:
            resume.resumable.owner(run.principal)  # before the agent is called: a principal with no JSON form
        except HTTPError as exc:
            return exc.response()
    frames = run_frames(agent, run, mapper, options=options, trailer=trailer, request=request)
    return await serve_frames(
        frames,
        mapper,
        options=options,
        response=response,
        trailer=trailer,
        resume=resume,
        chat=chat,
        principal=run.principal,
        meta=meta,
    )


def resume_endpoint(
    resume: ResumeScope,
    *,
    options: StreamOptions,
    response: StreamResponse,
    chat_of: Callable[[Request], Awaitable[str]],
    replay: Callable[[RunInfo, str], AsyncIterator[bytes]] | None = None,
) -> Endpoint:
    """An endpoint answering a reconnect to the run in progress of the chat ``chat_of(request)`` names.

    ``204`` when the caller's principal has no run in progress for that chat; else the run's stored frames
    after the SSE ``Last-Event-ID``, live to its end. Without that header the stream is ``replay(info, chat)``
    when given, else the whole run from its first frame.
    """
    keeper = resume.resumable

    async def endpoint(request: Request) -> Response:
        try:
            owner = keeper.owner(await authorize_request(options.authorize, request))
            after = last_event_id(request)
            chat = await chat_of(request)
            info = await keeper.find(resume.scope, chat, owner)
        except HTTPError as exc:
            return exc.response()
        if info is None:
            return Response(status_code=204)
        if after is None and replay is not None:
            stream = replay(info, chat)
        else:
            stream = keeper.read(info.run, dead=resume.dead, after=after or 0)
        last_id = request.headers.get("last-event-id") if after is not None else None
        stream = telemetry.resumed(options.telemetry, request, resume.scope, info.run, chat, last_id, stream)
        return response(stream, heartbeat=options.heartbeat, send_timeout=options.send_timeout)

    return endpoint


def cancel_endpoint(
    resume: ResumeScope,
    *,
    options: StreamOptions,
    chat_of: Callable[[Request], Awaitable[str]],
    missing: str,
    field: str,
) -> Endpoint:
    """An endpoint cancelling the run in progress of the chat ``chat_of(request)`` names, from any worker.

    ``204`` once asked; ``404`` with ``missing`` naming ``field`` when the caller's principal has no run in
    progress for that chat. The run then ends with the protocol's orderly stop.
    """
    keeper = resume.resumable

    async def endpoint(request: Request) -> Response:
        try:
            owner = keeper.owner(await authorize_request(options.authorize, request))
            chat = await chat_of(request)
            info = await keeper.find(resume.scope, chat, owner)
            cancelled = info is not None and await keeper.cancel(info.run, owner)
        except HTTPError as exc:
            return exc.response()
        telemetry.cancel_asked(options.telemetry, resume.scope, cancelled)
        if not cancelled:
            return error_response(404, missing, field)
        return Response(status_code=204)

    return endpoint
