"""ChatEvents to SSE bytes: the :class:`Mapper` protocol, the frame writer, the error and shutdown frames.

* :func:`frame` is one SSE event: ``data: <json>\\n\\n`` (LF only: the AG-UI client splits on ``\\n\\n``), or
  ``event: <name>\\ndata: <json>\\n\\n`` for a named event (dialects that name their events; see :class:`Mapper`).
* :class:`Mapper` is what a protocol mapping implements, :class:`MapperBase` the defaults of its optional parts.
* :func:`encode_frames` runs a protocol mapper over a ``ChatEvent`` stream, turning an agent exception or an
  unserializable value into the protocol's error frames, and always closing the agent's iterator. It has two
  drains: events that come one by one (an agent's async generator) leave a chunk each, as soon as mapped;
  events that are all there (a list) are collected into chunks of about ``coalesce`` bytes. Both write a
  delta of an open block straight from the mapper's ``delta_prefixes``, without a ``feed``, since that is
  most of a stream's events (and keep its text in the mapper's ``delta_pieces`` when it asks); the second
  holds consecutive deltas of one block as a run and writes them with one orjson call (:func:`_write_run`).
  :func:`_fitting` is the frame-size limit's rule for what still goes out of an event that is too large.
* Large frames come in pieces. An event mapped off the event loop (see :mod:`streamkit.offload`) is also
  written there, and a frame of it longer than about 256 KiB leaves as several consecutive chunks, none of
  them holding all of it, so that no single step on the loop's thread (a join, a copy into the socket's
  buffer) touches the whole of a 15 MB state. A mapper can give such a frame's large value already in pieces
  (:class:`~streamkit.stringify.Pieces`, as the AI SDK state part does), so that it is never one ``bytes``. A
  chunk that ends inside a frame never ends with a blank line (JSON holds no raw line break), so
  :func:`frame_end` tells a consumer that must keep whole frames (the stream store) where they end.
* Short offloaded work stays on the loop. Handing an event to a thread and back costs two thread wake-ups
  (on a busy machine, milliseconds each), and a worker holding the interpreter lets the loop run only every
  couple of milliseconds anyway. So once an offloaded event of a stream took less than ``_INLINE`` seconds of
  CPU, the next one is mapped the same way (in pieces) on the loop's own thread, and the other tasks get
  their turn right after it; a longer one sends the next back to a thread. (Only events that come one by
  one: a ready list's events all go to the thread.)
* :func:`start_agent` calls the agent so that a call that raises ends in error frames too;
  :func:`shutdown_frames` ends a run the server's shutdown cut short.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol, get_args

import anyio
import orjson

from .events import Agent, ChatEvent, RunInput
from .events.logs import run_logger
from .offload import breathe, heavy, run_offloaded
from .stringify import Pieces, json_default

__all__ = [
    "DEFAULT_ERROR_TEXT",
    "SHUTDOWN_TEXT",
    "ErrorHook",
    "FrameTooLarge",
    "Mapper",
    "MapperBase",
    "NotAnEvent",
    "encode_frames",
    "frame",
    "frame_end",
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


def frame_end(chunk: bytes) -> bool:
    """Whether ``chunk``, as :func:`encode_frames` yields it, ends where a frame ends. A large frame may come as
    several consecutive chunks; each but its last ends inside it (see the module's note)."""
    return not chunk or chunk.endswith(b"\n\n")


class Mapper(Protocol):
    """A protocol mapping: a pure, per-run state machine from ``ChatEvent`` to frame dicts.

    Besides ``feed``, ``close`` and ``fail``, a mapper has three optional parts, whose defaults
    :class:`MapperBase` gives (derive from it and set only what differs):

    * ``named_events``: a mapper whose class sets it to ``True`` returns frames of the form ``{"event": name,
      "data": payload}``, written as ``event: <name>\\ndata: <payload JSON>\\n\\n``; its ``delta_prefixes``
      then hold the frame's whole start, ``event:`` line and ``data: `` included.
    * ``delta_prefixes``: the hot path, a mapping from an event type to a mapping from block id to bytes: for a
      delta event (one with ``id`` and ``delta``) found there, the one frame ``feed`` would return is
      ``prefix + JSON(delta) + b"}"`` (none for an empty delta) and feeding it would change no state (the block
      is open in the sequence checker and in the mapper). :func:`encode_frames` then writes that frame without
      calling ``feed``. The mapper keeps the same mapping objects current, updating them in place.
    * ``delta_pieces``: for a mapper that must keep the text of deltas it does not feed (a final message, or a
      tool input parsed at its end, carries it), a mapping from block id to a list of strings, holding a list
      for each block of ``delta_prefixes`` whose deltas it keeps (block ids are unique across kinds, as the
      sequence checker makes them): :func:`encode_frames` appends the delta of each frame it writes from a
      prefix to its block's list, if it has one, and the mapper joins the pieces once, at the end. A mapper
      that keeps no deltas leaves it at :class:`MapperBase`'s default (an empty mapping of its own, which the
      writer recognizes and skips).
    * ``offload(event)``: whether feeding ``event`` is heavy enough to run in a worker thread, so that the event
      loop keeps serving other streams meanwhile (by default :func:`~streamkit.offload.heavy`: a large payload).
    """

    @property
    def named_events(self) -> bool:
        """Whether frames are ``{"event", "data"}`` named events (else plain ``data:`` frames)."""
        ...

    @property
    def delta_prefixes(self) -> Mapping[str, Mapping[str, bytes]]:
        """The frame prefixes of the delta hot path, by event type and block id."""
        ...

    @property
    def delta_pieces(self) -> Mapping[str, list[str]]:
        """Where the hot path keeps the deltas it writes, by block id."""
        ...

    def offload(self, event: ChatEvent) -> bool:
        """Whether ``event`` is mapped and encoded off the event loop."""
        ...

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        """Frames for one event (the sequence checker runs inside)."""
        ...

    def close(self) -> list[dict[str, Any]]:
        """Frames that end the run when the core's stream ended."""
        ...

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        """Frames that end the run with an error (open blocks closed as the protocol requires)."""
        ...


_NO_PREFIXES: Mapping[str, Mapping[str, bytes]] = MappingProxyType({})
_NO_PIECES: Mapping[str, list[str]] = MappingProxyType({})


class MapperBase:
    """The defaults of a :class:`Mapper`'s optional parts: plain ``data:`` frames, no delta hot path, and
    :func:`~streamkit.offload.heavy` events mapped off the event loop. A mapper class derives from it and
    implements ``feed``, ``close`` and ``fail``."""

    __slots__ = ()

    named_events: bool = False
    """Plain ``data:`` frames (see :class:`Mapper`)."""

    delta_prefixes: Mapping[str, Mapping[str, bytes]] = _NO_PREFIXES
    """No delta hot path (see :class:`Mapper`)."""

    delta_pieces: Mapping[str, list[str]] = _NO_PIECES
    """The hot path keeps no deltas (see :class:`Mapper`)."""

    offload = staticmethod(heavy)
    """Events that carry a large payload go to a worker thread (see :class:`Mapper`)."""


ErrorHook = Callable[[BaseException], object]

_Frame = dict[str, Any]


def _error_text(exc: BaseException, expose_errors: bool) -> str:
    """What the client is told of ``exc``: its text when ``expose_errors``, else a generic message."""
    if expose_errors:
        return str(exc) or type(exc).__name__
    return DEFAULT_ERROR_TEXT


_dumps = orjson.dumps
_NON_STR_KEYS = orjson.OPT_NON_STR_KEYS


def _payload(value: _Frame) -> bytes:
    """``value`` as JSON. Frames almost never hold a non-string key, and orjson is faster without the option
    that allows them, so it is only asked for when needed (the bytes are the same either way)."""
    try:
        return _dumps(value, default=json_default)
    except TypeError:
        return _dumps(value, default=json_default, option=_NON_STR_KEYS)


def _encode(frames: list[_Frame]) -> bytes:
    if len(frames) == 1:
        return b"".join((b"data: ", _payload(frames[0]), b"\n\n"))
    return b"".join((b"data: ", b"\n\ndata: ".join([_payload(f) for f in frames]), b"\n\n"))


def _named_payload(value: _Frame) -> bytes:
    """A named frame ``{"event", "data"}`` as ``event: <name>\\ndata: <json>`` (without the blank line)."""
    line = _EVENT_LINES.get(value["event"]) or _event_line(value["event"])
    try:
        return line + b"data: " + _dumps(value["data"], default=json_default)
    except TypeError:
        return line + b"data: " + _dumps(value["data"], default=json_default, option=_NON_STR_KEYS)


def _encode_named(frames: list[_Frame]) -> bytes:
    return b"\n\n".join([_named_payload(f) for f in frames]) + b"\n\n"


_Encode = Callable[[list[_Frame]], bytes]


def _format(mapper: Mapper) -> tuple[_Encode, Callable[[_Frame], bytes], bytes]:
    """How ``mapper``'s frames are written (plain ``data:`` frames, or named events): the bytes of a list of
    frames, the payload of one frame, and what comes before a payload in a frame (a named payload holds its
    lines)."""
    if mapper.named_events:
        return _encode_named, _named_payload, b""
    return _encode, _payload, b"data: "


def _kept(mapper: Mapper) -> Mapping[str, list[str]] | None:
    """Where ``mapper`` keeps the deltas of the hot path; ``None`` when it keeps none (see :class:`Mapper`)."""
    pieces = mapper.delta_pieces
    return None if pieces is _NO_PIECES else pieces


async def _aclose(iterator: object) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


def encode_frames(
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

    Every chunk ends at the end of a frame, except the pieces of a large frame of an event mapped off the
    event loop: those come one after the other, and only the last ends the frame (:func:`frame_end`).
    """
    ending = _Ending(mapper, trailer, expose_errors, on_error)
    if isinstance(events, AsyncIterable):
        return _drain_async(events, mapper, ending, max_frame_bytes)
    return _drain_ready(events, mapper, ending, min(coalesce, max_frame_bytes), max_frame_bytes)


class _Ending:
    """How a stream ends: the mapper's closing or error frames, then the trailer."""

    __slots__ = ("expose_errors", "mapper", "on_error", "trailer")

    def __init__(self, mapper: Mapper, trailer: bytes, expose_errors: bool, on_error: ErrorHook | None) -> None:
        self.mapper = mapper
        self.trailer = trailer
        self.expose_errors = expose_errors
        self.on_error = on_error

    def closed(self) -> bytes:
        """The end of a stream whose events all went out."""
        return self._tail(self.mapper.close())

    def failed(self, exc: Exception, event: object) -> bytes:
        """The end of a stream that failed on ``event`` (the agent's exception, an unserializable value, a frame
        too large, or something that is not an event)."""
        return self._tail(_failure(self.mapper, _not_an_event(event) or exc, self.expose_errors, self.on_error))

    def _tail(self, tail: list[_Frame]) -> bytes:
        return _encode_tail(self.mapper, tail, self.expose_errors, self.on_error) + self.trailer


async def _drain_async(
    events: AsyncIterable[ChatEvent], mapper: Mapper, ending: _Ending, limit: int
) -> AsyncIterator[bytes]:
    """The frames of events that come one by one: a chunk per event, as soon as it is mapped."""
    feed = mapper.feed
    live = mapper.delta_prefixes
    kept = _kept(mapper)
    offload = mapper.offload
    encode, payload_of, lead = _format(mapper)
    writer = _Writer(payload_of, lead, mapper.named_events, limit)
    extra = len(lead) + 2  # a frame's bytes besides its payload
    frames: Sequence[_Frame]
    event: Any = None
    iterator = aiter(events)
    try:
        try:
            async for event in iterator:
                # The fields of a pydantic model live in its __dict__; reading them there is faster.
                fields = event.__dict__
                try:
                    prefix = live[fields["type"]][fields["id"]]
                except KeyError:  # not a delta of a block on the hot path
                    prefix = None
                if prefix is not None:
                    delta = fields["delta"]
                    if not delta:
                        continue  # an empty delta sends no frame
                    chunk = lead + prefix + _dumps(delta) + b"}\n\n"
                    frames = ()
                    if kept and (pieces := kept.get(fields["id"])) is not None:  # (empty: none kept now)
                        pieces.append(delta)
                elif offload(event):  # a large payload: the loop keeps serving other streams meanwhile
                    if writer.work < _INLINE:  # the last one was short work: on the loop, then the others' turn
                        chunks, too_large = run_offloaded(_written, feed, writer, event, hand_over=False)
                        await anyio.sleep(0)
                    else:
                        chunks, too_large = await anyio.to_thread.run_sync(run_offloaded, _written, feed, writer, event)
                    for chunk in chunks:
                        yield chunk
                    if too_large is not None:
                        raise too_large
                    continue
                else:
                    frames = feed(event)
                    if not frames:
                        continue
                    chunk = encode(frames)
                if len(chunk) > limit:
                    if fitting := _fitting(frames, payload_of, extra, limit):
                        yield lead + (b"\n\n" + lead).join(fitting) + b"\n\n"
                    raise FrameTooLarge(len(chunk), limit)
                yield chunk
            end = ending.closed()
        except Exception as exc:
            end = ending.failed(exc, event)
        yield end
    finally:
        await _aclose(iterator)


async def _drain_ready(
    events: Iterable[ChatEvent], mapper: Mapper, ending: _Ending, coalesce: int, limit: int
) -> AsyncIterator[bytes]:
    """The frames of events that are all ready: chunks of about ``coalesce`` bytes.

    The frames' JSON payloads are collected and each batch written with one join, the ``data: `` prefixes and
    blank lines going in as the join's separator. Consecutive deltas of one block on the hot path are held as
    a run and written together (:func:`_write_run`) when the run ends or the batch is full; their size is
    counted in characters meanwhile (bytes, for ASCII text without escapes). A delta frame too large to send
    fills a batch by itself, so it is caught where the run is written."""
    feed = mapper.feed
    live = mapper.delta_prefixes
    kept = _kept(mapper)
    offload = mapper.offload
    _, payload_of, lead = _format(mapper)
    writer = _Writer(payload_of, lead, mapper.named_events, limit)
    sep = b"\n\n" + lead
    extra = len(lead) + 2  # a frame's bytes besides its payload
    payloads: list[bytes] = []
    add = payloads.append
    size = 0
    # The run: its block's event type (_NO_RUN when none is open) and id, its frame prefix, its deltas, and a
    # delta frame's bytes besides the delta's characters.
    run_type: Any = _NO_RUN
    run_id: Any = _NO_RUN
    run_prefix: bytes | None = None
    deltas: list[Any] = []
    pend = deltas.append
    over = 0
    event: Any = None
    try:
        for event in events:
            fields = event.__dict__
            try:
                if fields["id"] == run_id and fields["type"] == run_type:  # the run's next delta
                    prefix = run_prefix
                else:
                    run_type = _NO_RUN
                    prefix = live[fields["type"]][fields["id"]]
            except KeyError:  # not a delta of a block on the hot path
                run_type = _NO_RUN
                prefix = None
            if run_type is _NO_RUN:  # the run, if any, ends here
                if deltas:
                    at, event = event, None  # a failure here is the run's, not this event's
                    _write_run(run_prefix, deltas, sep, payloads, kept, run_id, extra, limit)
                    event = at
                if prefix is not None:  # a delta of a block on the hot path: a new run
                    run_type, run_id, run_prefix = fields["type"], fields["id"], prefix
                    over = len(prefix) + 3 + extra
            if prefix is not None:
                delta = fields["delta"]
                pend(delta)
                size += len(delta) + over
                if size >= coalesce:
                    _write_run(prefix, deltas, sep, payloads, kept, run_id, extra, limit)
                    if payloads:  # (none when the run's deltas were all empty)
                        yield _batch(lead, sep, payloads)
                        payloads.clear()
                    size = 0
                continue
            if offload(event):
                chunks, too_large = await anyio.to_thread.run_sync(run_offloaded, _written, feed, writer, event)
                if not chunks and too_large is None:
                    continue
                if too_large is None and len(chunks) == 1 and len(chunks[0]) < coalesce:
                    add(chunks[0][len(lead) : -2])  # the payloads, joined with the frames' separator
                    weight = len(chunks[0])
                else:  # large: what is waiting goes first, then the frames' own chunks
                    if payloads:
                        yield _batch(lead, sep, payloads)
                        payloads.clear()
                        size = 0
                    for chunk in chunks:
                        yield chunk
                    if too_large is not None:
                        raise too_large
                    continue
            else:
                frames = feed(event)
                if not frames:
                    continue
                if len(frames) == 1:
                    payload = payload_of(frames[0])
                    weight = len(payload) + extra
                    if weight <= limit:
                        add(payload)
                else:
                    batch = [payload_of(f) for f in frames]
                    weight = sum(map(len, batch)) + extra * len(batch)
                    if weight <= limit:
                        payloads += batch
            if weight > limit:
                payloads += _fitting(frames, payload_of, extra, limit)
                raise FrameTooLarge(weight, limit)
            size += weight
            if size >= coalesce:
                yield _batch(lead, sep, payloads)
                payloads.clear()
                size = 0
        if deltas:
            _write_run(run_prefix, deltas, sep, payloads, kept, run_id, extra, limit)
        end = ending.closed()
    except Exception as exc:
        failure, culprit = exc, event
        if deltas:  # the run's deltas came before what failed
            try:
                _write_run(run_prefix, deltas, sep, payloads, kept, run_id, extra, limit)
            except Exception as error:  # and one of them failed first
                failure, culprit = error, None
        end = ending.failed(failure, culprit)
    yield _batch(lead, sep, payloads, end) if payloads else end


def _batch(lead: bytes, sep: bytes, payloads: list[bytes], end: bytes = b"") -> bytes:
    """The chunk of a batch of payloads (and of ``end`` after them), with one copy of its bytes."""
    return b"".join((lead, sep.join(payloads), b"\n\n", end))


_NO_RUN = object()  # the ready drain's run type when no run is open: equal to no event's type
_SEAM = orjson.Fragment(b"\x00")  # between two deltas of a run as orjson writes them: JSON never holds a raw NUL


def _write_run(
    prefix: bytes | None,
    deltas: list[Any],
    sep: bytes,
    payloads: list[bytes],
    kept: Mapping[str, list[str]] | None,
    block: Any,
    extra: int,
    limit: int,
) -> None:
    """Add the frames of a run of deltas of one block to ``payloads``, as one payload joined with ``sep``: each
    ``prefix + JSON(delta) + b"}"`` (none for an empty delta), with the deltas kept in ``kept[block]`` when the
    mapper keeps them. ``deltas`` is emptied.

    One orjson call writes the deltas of the run, a list with a :data:`_SEAM` between each two; the seams,
    with the commas around them, then become the frames' ends and starts. A delta that cannot be serialized,
    or a run larger than ``limit``, is written delta by delta instead, as the other drain does: the frames
    before the delta that fails (or the frame heavier than ``limit``) go out, then the error is raised."""
    assert prefix is not None
    try:
        ready = deltas if all(deltas) else [d for d in deltas if d]
        if not ready:
            return
        pieces = kept.get(block) if kept is not None else None
        items = [_SEAM] * (2 * len(ready) - 1)
        items[::2] = ready
        try:
            body = _dumps(items)
        except TypeError:  # a delta orjson cannot write: where it fails is found below
            body = b""
        if body:
            seamed = body.replace(b",\x00,", b"}" + sep + prefix)
            run = b"".join((prefix, memoryview(seamed)[1:-1], b"}"))  # one copy, not three
            if len(run) + extra <= limit:
                payloads.append(run)
                if pieces is not None:
                    pieces += ready
                return
        for delta in ready:
            payload = prefix + _dumps(delta) + b"}"
            if pieces is not None:
                pieces.append(delta)
            if len(payload) + extra > limit:
                raise FrameTooLarge(len(payload) + extra, limit)
            payloads.append(payload)
    finally:
        deltas.clear()


_PIECE = 262144  # a frame made off the loop leaves in chunks of about this many bytes
_MARK = b"\x00"  # stands for a Pieces value while its frame is serialized: JSON never holds a raw NUL


class _Writer:
    """How the frames of an event mapped off the event loop are written, there: in chunks of about ``_PIECE``
    bytes, a large frame spanning several (:class:`Pieces` written as they are, a long payload sliced)."""

    __slots__ = ("lead", "limit", "named", "payload_of", "work")

    def __init__(self, payload_of: Callable[[_Frame], bytes], lead: bytes, named: bool, limit: int) -> None:
        self.payload_of = payload_of
        self.lead = lead
        self.named = named
        self.limit = limit
        self.work = float("inf")  # the CPU seconds the last offloaded event took (none yet: a thread's)

    def pieces(self, value: _Frame) -> list[bytes]:
        """One frame's bytes, in pieces of at most about ``_PIECE`` bytes."""
        body = value["data"] if self.named else value
        if type(body) is not dict or not any(type(v) is Pieces for v in body.values()):
            payload = self.payload_of(value)
            if len(payload) <= _PIECE:
                return [self.lead + payload + b"\n\n"]
            out = [self.lead]
            for at in range(0, len(payload), _PIECE):
                breathe()
                out.append(payload[at : at + _PIECE])
            out.append(b"\n\n")
            return out
        marked = {k: orjson.Fragment(_MARK) if type(v) is Pieces else v for k, v in body.items()}
        texts = self.payload_of({"event": value["event"], "data": marked} if self.named else marked).split(_MARK)
        out = [self.lead + texts[0]]
        for part, text in zip((v for v in body.values() if type(v) is Pieces), texts[1:], strict=True):
            out += part.parts
            out.append(text)
        out.append(b"\n\n")
        return out

    def chunks(self, frames: list[_Frame]) -> tuple[list[bytes], FrameTooLarge | None]:
        """The chunks of ``frames`` (whole frames, then the pieces of a large one), or the chunks of the frames
        that still go out and the error, for frames heavier than the limit (:func:`_fitting`'s rule)."""
        written = [self.pieces(f) for f in frames]
        weights = [sum(map(len, w)) for w in written]
        total = sum(weights)
        error = None
        if total > self.limit:
            error = FrameTooLarge(total, self.limit)
            fits = next((i for i, w in enumerate(weights) if w > self.limit), len(weights))
            written = written[:fits]
        out: list[bytes] = []
        group: list[bytes] = []
        size = 0
        for pieces in written:
            for piece in pieces:
                group.append(piece)
                size += len(piece)
                if size >= _PIECE:
                    out.append(b"".join(group))
                    group.clear()
                    size = 0
                    breathe()
        if group:
            out.append(b"".join(group))
        return out, error


_INLINE = 0.010
"""An event of a stream whose last offloaded event took less CPU than this (seconds) is mapped on the loop."""


def _written(
    feed: Callable[[ChatEvent], list[_Frame]], writer: _Writer, event: ChatEvent
) -> tuple[list[bytes], FrameTooLarge | None]:
    """``event``'s frames as chunks (the work done for an offloaded event); notes the CPU it took in
    ``writer.work``."""
    started = time.thread_time()
    frames = feed(event)
    breathe()
    written = writer.chunks(frames) if frames else ([], None)
    writer.work = time.thread_time() - started
    return written


def _fitting(frames: Iterable[_Frame], payload_of: Callable[[_Frame], bytes], extra: int, limit: int) -> list[bytes]:
    """The frame-size limit's one rule for an event heavier than ``limit``: the payloads of its frames that come
    before the first frame heavier than ``limit`` on its own still go out (a synthesized start, say)."""
    out = []
    for payload in map(payload_of, frames):
        if len(payload) + extra > limit:
            break
        out.append(payload)
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


def _described(exc: BaseException) -> str:
    """``exc`` in one line of the server log: its type and its text (on one line)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _failure(mapper: Mapper, exc: Exception, expose_errors: bool, on_error: ErrorHook | None) -> list[dict[str, Any]]:
    if on_error is not None:
        try:
            on_error(exc)
        except Exception:  # a failing hook must not tear the stream
            logger.exception("agent stream failed: %s; then the on_error hook failed", _described(exc))
    elif isinstance(exc, NotAnEvent):  # the message says it all; a traceback into the writer would not help
        logger.error("agent stream failed: %s", exc)
    else:
        logger.error("agent stream failed: %s", _described(exc), exc_info=exc)
    return mapper.fail(_error_text(exc, expose_errors))


def _encode_tail(mapper: Mapper, tail: list[_Frame], expose_errors: bool, on_error: ErrorHook | None) -> bytes:
    encode = _format(mapper)[0]
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
    return (_format(mapper)[0](tail) + trailer) if tail else b""


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
