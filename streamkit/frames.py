"""ChatEvents to SSE bytes: the :class:`Mapper` protocol, the frame writer, the error and shutdown frames.

* :func:`frame` is one SSE event: ``data: <json>\\n\\n`` (LF only: the AG-UI client splits on ``\\n\\n``), or
  ``event: <name>\\ndata: <json>\\n\\n`` for a named event (dialects that name their events; see :class:`Mapper`).
* :func:`encode_frames` runs a protocol mapper over a ``ChatEvent`` stream, turning an agent exception or an
  unserializable value into the protocol's error frames, and always closing the agent's iterator.
* :func:`start_agent` calls the agent so that a call that raises ends in error frames too;
  :func:`shutdown_frames` ends a run the server's shutdown cut short.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from typing import Any, Protocol, get_args

import anyio
import orjson

from .events import Agent, ChatEvent, RunInput
from .events.logs import run_logger
from .offload import _local, breathe, heavy
from .stringify import _OPTS, _default

__all__ = [
    "DEFAULT_ERROR_TEXT",
    "SHUTDOWN_TEXT",
    "ErrorHook",
    "FrameTooLarge",
    "Mapper",
    "NotAnEvent",
    "encode_frames",
    "error_text",
    "frame",
    "shutdown_frames",
    "start_agent",
]

logger = run_logger("streamkit")

DEFAULT_ERROR_TEXT = "An error occurred."
"""What the client sees of an agent exception unless the app asks for details."""

def frame(value: Any, event: str | None = None) -> bytes:
    """One SSE frame carrying ``value`` as JSON: ``data: <json>\\n\\n``, after ``event: <event>\\n`` when named."""
    data = b"".join((b"data: ", _payload(value), b"\n\n"))  # one copy of a payload that may be large
    return data if event is None else _event_line(event) + data


_EVENT_LINES: dict[str, bytes] = {}


def _event_line(event: str) -> bytes:
    line = _EVENT_LINES.get(event)
    if line is None:
        if "\n" in event or "\r" in event:
            raise ValueError(f"an SSE event name cannot hold a line break: {event!r}")
        line = b"event: " + event.encode() + b"\n"
        if len(_EVENT_LINES) < 1024:  # a protocol has a handful of names
            _EVENT_LINES[event] = line
    return line


class Mapper(Protocol):
    """A protocol mapping: a pure, per-run state machine from ``ChatEvent`` to frame dicts.

    A mapper may also publish the hot path as ``delta_prefixes``, a mapping from an event type to a mapping
    from block id to bytes: for a delta event (one with ``id`` and ``delta``) found there, the one frame
    ``feed`` would return is ``prefix + JSON(delta) + b"}"`` (none for an empty delta) and feeding it would
    change no state (the block is open in the sequence checker and in the mapper). :func:`encode_frames`
    then writes that frame without calling ``feed``. The mapper keeps the same mapping objects current,
    updating them in place.


    A mapper whose class sets ``named_events = True`` returns frames of the form ``{"event": name, "data":
    payload}``, written as ``event: <name>\\ndata: <payload JSON>\\n\\n``; its ``delta_prefixes`` then hold the
    frame's whole start, ``event:`` line and ``data: `` included.
    """

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        """Frames for one event (the sequence checker runs inside)."""
        ...

    def close(self) -> list[dict[str, Any]]:
        """Frames that end the run when the core's stream ended."""
        ...

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        """Frames that end the run with an error (open blocks closed as the protocol requires)."""
        ...


ErrorHook = Callable[[BaseException], object]
_NO_PREFIXES: Mapping[str, Mapping[str, bytes]] = {}


def error_text(exc: BaseException, expose_errors: bool) -> str:
    """What the client is told of ``exc``: its text when ``expose_errors``, else a generic message."""
    if expose_errors:
        return str(exc) or type(exc).__name__
    return DEFAULT_ERROR_TEXT


_dumps = orjson.dumps


def _payload(value: dict[str, Any]) -> bytes:
    """``value`` as JSON. Frames almost never hold a non-string key, and orjson is faster without the option
    that allows them, so it is only asked for when needed (the bytes are the same either way)."""
    try:
        return _dumps(value, default=_default)
    except TypeError:
        return _dumps(value, default=_default, option=_OPTS)


def _encode(frames: list[dict[str, Any]]) -> bytes:
    if len(frames) == 1:
        return b"".join((b"data: ", _payload(frames[0]), b"\n\n"))
    return b"".join((b"data: ", b"\n\ndata: ".join([_payload(f) for f in frames]), b"\n\n"))


def _named_payload(value: dict[str, Any]) -> bytes:
    """A named frame ``{"event", "data"}`` as ``event: <name>\\ndata: <json>`` (without the blank line)."""
    line = _EVENT_LINES.get(value["event"]) or _event_line(value["event"])
    try:
        return line + b"data: " + _dumps(value["data"], default=_default)
    except TypeError:
        return line + b"data: " + _dumps(value["data"], default=_default, option=_OPTS)


def _encode_named(frames: list[dict[str, Any]]) -> bytes:
    return b"\n\n".join([_named_payload(f) for f in frames]) + b"\n\n"


def _encoder(mapper: object) -> Callable[[list[dict[str, Any]]], bytes]:
    """How ``mapper``'s frames are written: plain ``data:`` frames, or named events."""
    return _encode_named if getattr(mapper, "named_events", False) else _encode


async def _aclose(iterator: object) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


async def encode_frames(
    events: AsyncIterable[ChatEvent] | Iterable[ChatEvent],
    mapper: Mapper,
    *,
    trailer: bytes = b"",
    expose_errors: bool = False,
    on_error: ErrorHook | None = None,
    coalesce: int = 16384,
    max_frame_bytes: int = 8 * 1024 * 1024,
) -> AsyncIterator[bytes]:
    """Map ``events`` with ``mapper`` and yield SSE bytes, one chunk per event (or per batch).

    An exception raised by the agent, a value that cannot be serialized, or an event whose frames weigh more
    than ``max_frame_bytes`` ends the stream with the mapper's error frames (a generic text unless
    ``expose_errors``; ``on_error`` sees the real exception). A synchronous iterable is drained in batches of
    up to ``coalesce`` bytes, since all of it is ready. ``trailer`` is written after the last frame. The
    events' iterator is always closed.
    """
    feed = mapper.feed
    table: Mapping[str, Mapping[str, bytes]] | None = getattr(mapper, "delta_prefixes", None)
    live = _NO_PREFIXES if table is None else table
    named = getattr(mapper, "named_events", False)
    encode = _encode_named if named else _encode
    lead = b"" if named else b"data: "  # what comes before a payload (a named frame's payload holds its lines)
    sep = b"\n\n" + lead
    payload_of = _named_payload if named else _payload
    extra = len(lead) + 2
    event: Any = None
    offload: Callable[[ChatEvent], bool] = getattr(mapper, "offload", heavy)

    def work(event: ChatEvent) -> tuple[list[dict[str, Any]], bytes]:  # mapped and encoded in a worker thread
        _local.offloaded = True
        try:
            frames = feed(event)
            breathe()
            return frames, encode(frames) if frames else b""
        finally:
            _local.offloaded = False

    if isinstance(events, AsyncIterable):
        iterator: Any = aiter(events)
        try:
            try:
                async for event in iterator:
                    # The fields of a pydantic model live in its __dict__; reading them there is faster.
                    fields = event.__dict__
                    prefixes = live.get(fields["type"])
                    if prefixes is not None and (prefix := prefixes.get(fields["id"])) is not None:
                        if not fields["delta"]:
                            continue  # an empty delta sends no frame
                        chunk = lead + prefix + _dumps(fields["delta"]) + b"}\n\n"
                    elif offload(event):  # a large payload: the loop keeps serving other streams meanwhile
                        frames, chunk = await anyio.to_thread.run_sync(work, event)
                        if not chunk:
                            continue
                        if len(chunk) > max_frame_bytes:
                            if head := _fitting(frames, encode, max_frame_bytes):
                                yield head
                            raise FrameTooLarge(len(chunk), max_frame_bytes)
                    else:
                        frames = feed(event)
                        if not frames:
                            continue
                        chunk = encode(frames)
                        if len(chunk) > max_frame_bytes:
                            # What comes before the oversized frame (a synthesized start, say) still goes out.
                            if head := _fitting(frames, encode, max_frame_bytes):
                                yield head
                            raise FrameTooLarge(len(chunk), max_frame_bytes)
                    if len(chunk) > max_frame_bytes:
                        raise FrameTooLarge(len(chunk), max_frame_bytes)
                    yield chunk
                tail = mapper.close()
            except Exception as exc:
                tail = _failure(mapper, _not_an_event(event) or exc, expose_errors, on_error)
            yield _encode_tail(mapper, tail, expose_errors, on_error) + trailer
        finally:
            await _aclose(iterator)
        return

    # All events are ready: collect the frames' JSON payloads and write each batch with one join, the
    # ``data: `` prefixes and blank lines going in as the join's separator. A delta frame too large to
    # send fills a batch by itself, so it is caught where the batch is flushed.
    coalesce = min(coalesce, max_frame_bytes)
    payloads: list[bytes] = []
    add = payloads.append
    size = 0
    try:
        for event in events:
            fields = event.__dict__
            prefixes = live.get(fields["type"])
            if prefixes is not None and (prefix := prefixes.get(fields["id"])) is not None:
                if not fields["delta"]:
                    continue  # an empty delta sends no frame
                payload = prefix + _dumps(fields["delta"]) + b"}"
                add(payload)
                size += len(payload) + extra
                if size >= coalesce:
                    if len(payload) + extra > max_frame_bytes:
                        payloads.pop()
                        raise FrameTooLarge(len(payload) + extra, max_frame_bytes)
                    yield lead + sep.join(payloads) + b"\n\n"
                    payloads.clear()
                    size = 0
                continue
            if offload(event):
                frames, chunk = await anyio.to_thread.run_sync(work, event)
                if len(chunk) > max_frame_bytes:
                    for payload in map(payload_of, frames):  # what comes before the oversized frame still goes out
                        if len(payload) + extra > max_frame_bytes:
                            break
                        add(payload)
                    raise FrameTooLarge(len(chunk), max_frame_bytes)
                if chunk:
                    add(chunk[len(lead) : -2])  # the payloads, joined with the frames' separator
                    size += len(chunk)
                if size >= coalesce:
                    yield lead + sep.join(payloads) + b"\n\n"
                    payloads.clear()
                    size = 0
                continue
            frames = feed(event)
            if not frames:
                continue
            if len(frames) == 1:
                payload = payload_of(frames[0])
                weight = len(payload) + extra
                if weight > max_frame_bytes:
                    raise FrameTooLarge(weight, max_frame_bytes)
                add(payload)
            else:
                batch = [payload_of(f) for f in frames]
                weight = sum(map(len, batch)) + extra * len(batch)
                if weight > max_frame_bytes:
                    for payload in batch:  # what comes before the oversized frame still goes out
                        if len(payload) + extra > max_frame_bytes:
                            break
                        add(payload)
                    raise FrameTooLarge(weight, max_frame_bytes)
                payloads += batch
            size += weight
            if size >= coalesce:
                yield lead + sep.join(payloads) + b"\n\n"
                payloads.clear()
                size = 0
        tail = mapper.close()
    except Exception as exc:
        tail = _failure(mapper, _not_an_event(event) or exc, expose_errors, on_error)
    head = lead + sep.join(payloads) + b"\n\n" if payloads else b""
    yield head + _encode_tail(mapper, tail, expose_errors, on_error) + trailer


def _fitting(frames: list[dict[str, Any]], encode: Callable[[list[dict[str, Any]]], bytes], limit: int) -> bytes:
    """The bytes of the frames that come before the first one heavier than ``limit`` on its own."""
    out = b""
    for frame in frames:
        chunk = encode([frame])
        if len(chunk) > limit:
            break
        out += chunk
    return out


_EVENT_CLASSES: tuple[type, ...] = get_args(get_args(ChatEvent)[0])


class NotAnEvent(TypeError):
    """The agent yielded something that is not a ``ChatEvent`` (a dict, say)."""

    def __init__(self, value: object) -> None:
        kind = type(value).__name__
        hint = "build events with the classes of streamkit.events"
        if isinstance(value, dict):
            hint += ", or validate dicts with streamkit.events.chat_event_adapter.validate_python(...)"
        super().__init__(f"the agent yielded a {kind} ({value!r:.80}), expected a ChatEvent: {hint}")


def _not_an_event(value: object) -> NotAnEvent | None:
    """The error to report when the stream failed on ``value`` because it is not an event."""
    if value is None or isinstance(value, _EVENT_CLASSES):
        return None
    return NotAnEvent(value)


class FrameTooLarge(ValueError):
    """An event's frames exceed the outgoing frame size limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"an outgoing frame of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


def _failure(
    mapper: Mapper, exc: Exception, expose_errors: bool, on_error: ErrorHook | None
) -> list[dict[str, Any]]:
    if on_error is not None:
        try:
            on_error(exc)
        except Exception:  # a failing hook must not tear the stream
            logger.exception("on_error hook failed")
    elif isinstance(exc, NotAnEvent):  # the message says it all; a traceback into the writer would not help
        logger.error("agent stream failed: %s", exc)
    else:
        logger.error("agent stream failed", exc_info=exc)
    return mapper.fail(error_text(exc, expose_errors))


def _encode_tail(
    mapper: Mapper, tail: list[dict[str, Any]], expose_errors: bool, on_error: ErrorHook | None
) -> bytes:
    encode = _encoder(mapper)
    try:
        return encode(tail) if tail else b""
    except Exception as exc:
        return encode(_failure(mapper, exc, expose_errors, on_error))


SHUTDOWN_TEXT = "The server is shutting down; please retry."
"""What a client is told when the server stops while its stream is open."""


def shutdown_frames(mapper: Mapper, trailer: bytes = b"") -> bytes:
    """What ends a run cut short by a server shutdown: the mapper's error frames (``SHUTDOWN_TEXT``, code
    ``shutdown``) and ``trailer``; nothing if the run already ended."""
    tail = mapper.fail(SHUTDOWN_TEXT, "shutdown")
    return (_encoder(mapper)(tail) + trailer) if tail else b""


async def _raising(exc: BaseException) -> AsyncIterator[ChatEvent]:
    raise exc
    yield  # pragma: no cover  (makes this an async generator)


def start_agent(agent: Agent, run: RunInput) -> AsyncIterable[ChatEvent] | Iterable[ChatEvent]:
    """Call ``agent(run)``. A call that raises, or returns no iterable, becomes a stream that raises, so it
    ends in the protocol's error frames like any other agent failure (never a 500)."""
    try:
        events: Any = agent(run)
    except Exception as exc:
        return _raising(exc)
    if not isinstance(events, AsyncIterable | Iterable):
        close = getattr(events, "close", None)
        if close is not None:  # an un-awaited coroutine: close it quietly
            close()
        return _raising(TypeError(f"the agent returned {type(events).__name__}, not an iterator of ChatEvents"))
    return events
