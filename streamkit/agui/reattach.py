"""Reattaching an AG-UI client to a run in progress (resumable mode; AG-UI has no standard request for it).

With ``routes(..., resumable=...)`` the run is produced detached from its request, so it survives a dropped
connection, and these endpoints join the ``POST {path}`` run endpoint:

* ``POST {path}/reattach`` with the same ``RunAgentInput`` body the client would send (only ``threadId``
  is used; a stock ``HttpAgent`` pointed at this URL works), or ``GET {path}/reattach?threadId=...``:
  ``204`` when no run is in progress for that thread *and principal*, else the reattach run described
  below, live to its end. With a ``Last-Event-ID`` header (an ``EventSource`` reconnecting) it sends the
  original stream's frames after that id instead.
* ``POST {path}/cancel`` with ``{"threadId": ...}``: cancels the thread's run from any worker (``204``;
  ``404`` when there is none); the run ends with ``RUN_FINISHED`` and a ``cancelled`` outcome.

The reattach response is a valid run of its own: ``RUN_STARTED`` (the original run's ids), a
``MESSAGES_SNAPSHOT`` of the conversation (the run's input messages plus everything the run has produced so
far), a ``STATE_SNAPSHOT`` of the state so far, the ``*_START`` events of the blocks still open (text and
reasoning messages, tool calls, reasoning spans, steps, subagents) so that the live tail's deltas and ends
apply, then the tail itself as it is produced, up to the run's terminal event.

This works with the client's reducer: a message or tool call in the snapshot is reused by a later
``TEXT_MESSAGE_START`` / ``TOOL_CALL_START`` of the same id, so the tail appends to it instead of duplicating
it, and the authoritative ``MESSAGES_SNAPSHOT`` replaces whatever partial copy the client kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..frames import Mapper, frame
from ..http import Authorize, HTTPError, Limits, authorize_request, error_response, read_json
from ..resumable import LOST_TEXT, Resumable, endings_from_mapper, last_event_id
from ..stringify import dumps, js_value
from .fold import fold
from .mapping import PROTOCOL_VERSION
from .request import RunAgentInput

__all__ = ["DEAD", "GONE_TEXT", "frames_of", "reattach", "reattach_routes", "snapshot", "start_resumable"]

DEAD = frame({"type": "RUN_ERROR", "message": LOST_TEXT, "code": "run_lost"})
"""How a run ends for its readers when the worker producing it died."""

GONE_TEXT = "The run is no longer available."
"""The ``RUN_ERROR`` message of a reattach to a run that expired while it was being looked up."""

# START event type -> (END event types, the field holding the id)
_OPENERS: dict[str, tuple[tuple[str, ...], str]] = {
    "TEXT_MESSAGE_START": (("TEXT_MESSAGE_END",), "messageId"),
    "TOOL_CALL_START": (("TOOL_CALL_END",), "toolCallId"),
    "REASONING_START": (("REASONING_END",), "messageId"),
    "REASONING_MESSAGE_START": (("REASONING_MESSAGE_END",), "messageId"),
    "STEP_STARTED": (("STEP_FINISHED",), "stepName"),
    "SUBAGENT_STARTED": (("SUBAGENT_FINISHED", "SUBAGENT_ERROR"), "subagentRunId"),
}
_CLOSERS: dict[str, tuple[str, str]] = {end: (start, key) for start, (ends, key) in _OPENERS.items() for end in ends}
_TERMINAL = frozenset({"RUN_FINISHED", "RUN_ERROR"})


def frames_of(data: bytes) -> list[dict[str, Any]]:
    """The AG-UI events in a run of SSE bytes (one ``data:`` line per event, as streamkit writes them)."""
    events = []
    for block in data.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data:"):
                events.append(orjson.loads(line[5:]))
    return events


def snapshot(
    events: Iterable[Mapping[str, Any]],
    *,
    thread_id: str,
    run_id: str,
    messages: Iterable[Mapping[str, Any]] = (),
    state: Any = None,
) -> list[dict[str, Any]]:
    """The opening of a reattach run after ``events`` of the original run (starting from its input
    ``messages`` and ``state``): RUN_STARTED, the two snapshots, the STARTs of what is still open, and the
    terminal event if the run already ended."""
    seen = list(events)
    folded = fold(seen, messages=messages, state=state)
    started: dict[str, Any] | None = None
    open_: dict[tuple[str, Any], Mapping[str, Any]] = {}
    terminal: list[Mapping[str, Any]] = []
    for event in seen:
        kind = event.get("type")
        if kind == "RUN_STARTED":
            started = dict(event)
        elif kind in _OPENERS:
            open_[(kind, event.get(_OPENERS[kind][1]))] = event
        elif kind in _CLOSERS:
            start, key = _CLOSERS[kind]
            open_.pop((start, event.get(key)), None)
        elif kind in _TERMINAL:
            terminal.append(event)
    if started is None:
        started = {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id, "protocolVersion": PROTOCOL_VERSION}
    out: list[dict[str, Any]] = [
        started,
        {"type": "MESSAGES_SNAPSHOT", "messages": folded.messages},
        {"type": "STATE_SNAPSHOT", "snapshot": folded.state},
    ]
    if terminal:
        return [*out, dict(terminal[0])]
    return out + [dict(e) for e in open_.values()]


def _without_run_started(data: bytes) -> bytes:
    if b'"RUN_STARTED"' not in data:
        return data
    return b"".join(frame(e) for e in frames_of(data) if e.get("type") != "RUN_STARTED")


async def reattach(
    entries: AsyncIterable[tuple[int, bytes]],
    *,
    upto: int,
    thread_id: str,
    run_id: str,
    messages: Iterable[Mapping[str, Any]] = (),
    state: Any = None,
    ids: bool = True,
) -> AsyncIterator[bytes]:
    """The reattach run over a stored run's ``entries`` (``(seq, bytes)`` from the first): the entries up to
    ``upto`` are folded into the opening (:func:`snapshot`), the later ones follow as they come.

    With ``ids``, frames carry SSE ``id:`` fields with the stored sequence numbers.
    """
    seen: list[dict[str, Any]] = []
    opened = False
    ended = False
    async for seq, data in entries:
        if not opened:
            seen.extend(frames_of(data))
            if seq < upto:
                continue
            opening = snapshot(seen, thread_id=thread_id, run_id=run_id, messages=messages, state=state)
            opened = True
            ended = opening[-1].get("type") in _TERMINAL
            yield _with_id(b"".join(frame(e) for e in opening), seq, ids)
            if ended:
                return
            continue
        body = _without_run_started(data)
        if body:
            yield _with_id(body, seq, ids)
    if not opened:  # the run expired meanwhile: still answer with a well-formed run
        opening = snapshot(seen, thread_id=thread_id, run_id=run_id, messages=messages, state=state)
        if opening[-1].get("type") not in _TERMINAL:
            opening = [*opening[:3], {"type": "RUN_ERROR", "message": GONE_TEXT}]
        yield b"".join(frame(e) for e in opening)


def _with_id(data: bytes, seq: int, ids: bool) -> bytes:
    if ids and data.endswith(b"\n\n"):
        return b"%bid: %d\n\n" % (data[:-1], seq)
    return data


# --- routes ------------------------------------------------------------------------------------------


def _scope(path: str) -> str:
    return f"agui:{path}"


async def start_resumable(
    resumable: Resumable,
    frames: AsyncIterable[bytes],
    mapper: Mapper,
    *,
    path: str,
    body: RunAgentInput,
    principal: Any,
) -> AsyncIterator[bytes]:
    """Start the run producing ``frames`` (encoded by ``mapper``) for ``body``'s thread; the POST's reader.

    The run's input messages and state are kept with it, as the base of a reattach's snapshots.
    """
    messages = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in body.messages]
    meta = {
        "threadId": body.thread_id,
        "runId": body.run_id,
        "messages": dumps(js_value(messages)).decode(),
        "state": dumps(js_value(body.state if body.state is not None else {})).decode(),
    }
    owner = resumable.owner(principal)
    endings = endings_from_mapper(mapper, dead=DEAD)
    run = await resumable.start(frames, endings, owner=owner, scope=_scope(path), chat=body.thread_id, meta=meta)
    return resumable.read(run, dead=DEAD)


async def _thread_id(request: Request, limits: Limits) -> str:
    if request.method == "GET":
        value: Any = request.query_params.get("threadId")
    else:
        data = await read_json(request, limits)
        value = data.get("threadId") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value:
        raise HTTPError("threadId: a non-empty string is required", field="threadId", status=422)
    return value


def reattach_routes(
    resumable: Resumable,
    *,
    path: str,
    authorize: Authorize | None,
    limits: Limits,
    response: Callable[[AsyncIterable[bytes]], Response],
) -> list[BaseRoute]:
    """``{path}/reattach`` (POST and GET) and ``POST {path}/cancel``; ``response`` wraps a stream."""
    scope = _scope(path)

    async def reattach_endpoint(request: Request) -> Response:
        try:
            owner = resumable.owner(await authorize_request(authorize, request))
            after = last_event_id(request)
            thread = await _thread_id(request, limits)
            info = await resumable.find(scope, thread, owner)
        except HTTPError as exc:
            return exc.response()
        if info is None:
            return Response(status_code=204)
        if after is not None:
            return response(resumable.read(info.run, dead=DEAD, after=after))
        meta = info.meta
        stream = reattach(
            resumable.store.read(info.run, dead=DEAD),
            upto=info.seq,
            thread_id=meta.get("threadId", thread),
            run_id=meta.get("runId", info.run),
            messages=orjson.loads(meta.get("messages", "[]")),
            state=orjson.loads(meta.get("state", "{}")),
        )
        return response(stream)

    async def cancel_endpoint(request: Request) -> Response:
        try:
            owner = resumable.owner(await authorize_request(authorize, request))
            thread = await _thread_id(request, limits)
            info = await resumable.find(scope, thread, owner)
            cancelled = info is not None and await resumable.cancel(info.run, owner)
        except HTTPError as exc:
            return exc.response()
        if not cancelled:
            return error_response(404, "no run in progress for this thread", "threadId")
        return Response(status_code=204)

    base = path.rstrip("/")
    return [
        Route(base + "/reattach", reattach_endpoint, methods=["GET", "POST"], name="agui_reattach"),
        Route(base + "/cancel", cancel_endpoint, methods=["POST"], name="agui_cancel"),
    ]
