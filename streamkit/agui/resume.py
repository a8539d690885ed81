"""Resumable AG-UI runs: reattaching a client to a run in progress (AG-UI has no standard request for it).

With ``routes(..., options=StreamOptions(resumable=...))`` the run is produced detached from its request, so it
survives a dropped connection, and these endpoints join the ``POST {path}`` run endpoint:

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
it, and the authoritative ``MESSAGES_SNAPSHOT`` replaces whatever partial copy the client kept. The endpoints
are :mod:`streamkit.serve`'s, as for every protocol; this module adds the reattach run.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any

import orjson
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from ..frames import frame
from ..http import HTTPError, Limits, read_json
from ..resumable import LOST_TEXT, with_ids
from ..serve import ResumeScope, StreamOptions, StreamResponse, cancel_endpoint, resume_endpoint
from ..store import RunInfo
from ..stringify import dumps, js_value
from .fold import fold
from .mapping import PROTOCOL_VERSION
from .request import RunAgentInput

__all__ = [
    "DEAD",
    "GONE_TEXT",
    "frames_of",
    "reattach",
    "reattach_routes",
    "resume_scope",
    "run_meta",
    "snapshot",
]

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
    blocks = data.split(b"\n\n")
    rest = blocks.pop()
    kept = [b + b"\n\n" for b in blocks if not any(e.get("type") == "RUN_STARTED" for e in frames_of(b))]
    return b"".join(kept) + rest


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

    With ``ids``, the opening's last frame carries the id of the last entry it folds, and every later frame its
    own (:func:`~streamkit.resumable.with_ids`), so a ``Last-Event-ID`` resume goes on exactly after it.
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
        body = _without_run_started(with_ids(data, seq) if ids else data)
        if body:
            yield body
    if not opened:  # the run expired meanwhile: still answer with a well-formed run
        opening = snapshot(seen, thread_id=thread_id, run_id=run_id, messages=messages, state=state)
        if opening[-1].get("type") not in _TERMINAL:
            opening = [*opening[:3], {"type": "RUN_ERROR", "message": GONE_TEXT}]
        yield b"".join(frame(e) for e in opening)


def _with_id(data: bytes, seq: int, ids: bool) -> bytes:
    if ids and seq > 0 and data.endswith(b"\n\n"):
        return b"%bid: %d\n\n" % (data[:-1], seq)
    return data


# --- routes ------------------------------------------------------------------------------------------


def resume_scope(options: StreamOptions, *, path: str) -> ResumeScope | None:
    """Where the routes at ``path`` keep their resumable runs (``None`` unless ``options`` are resumable)."""
    return ResumeScope.of(options, f"agui:{path}", dead=DEAD)


def run_meta(body: RunAgentInput) -> dict[str, str]:
    """What a resumable run keeps beside its frames: its ids, input messages and state, the base of a
    reattach's snapshots."""
    messages = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in body.messages]
    return {
        "threadId": body.thread_id,
        "runId": body.run_id,
        "messages": dumps(js_value(messages)).decode(),
        "state": dumps(js_value(body.state if body.state is not None else {})).decode(),
    }


def _thread_of(limits: Limits) -> Callable[[Request], Awaitable[str]]:
    async def thread_id(request: Request) -> str:
        if request.method == "GET":
            value: Any = request.query_params.get("threadId")
        else:
            data = await read_json(request, limits)
            value = data.get("threadId") if isinstance(data, dict) else None
        if not isinstance(value, str) or not value:
            raise HTTPError("threadId: a non-empty string is required", field="threadId", status=422)
        return value

    return thread_id


def reattach_routes(
    resume: ResumeScope, *, path: str, options: StreamOptions, response: StreamResponse
) -> list[BaseRoute]:
    """``{path}/reattach`` (POST and GET) and ``POST {path}/cancel``; ``response`` is the route's response class."""
    resumable = resume.resumable
    thread_of = _thread_of(options.limits)

    def replay(info: RunInfo, thread: str) -> AsyncIterator[bytes]:
        meta = info.meta
        return reattach(
            resumable.entries(info.run, dead=resume.dead),
            upto=info.seq,
            thread_id=meta.get("threadId", thread),
            run_id=meta.get("runId", info.run),
            messages=orjson.loads(meta.get("messages", "[]")),
            state=orjson.loads(meta.get("state", "{}")),
        )

    again = resume_endpoint(resume, options=options, response=response, chat_of=thread_of, replay=replay)
    cancel = cancel_endpoint(
        resume, options=options, chat_of=thread_of, missing="no run in progress for this thread", field="threadId"
    )
    base = path.rstrip("/")
    return [
        Route(base + "/reattach", again, methods=["GET", "POST"], name="agui_reattach"),
        Route(base + "/cancel", cancel, methods=["POST"], name="agui_cancel"),
    ]
