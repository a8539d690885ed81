"""The one SSE writer both protocols share: JSON and frame encoding, the frame loop, the response.

* :func:`dumps` serializes a JSON value exactly as JavaScript's ``JSON.stringify`` would (compact, UTF-8,
  no ``NaN``), using orjson; :func:`js_value` first rewrites the floats whose text orjson and JavaScript
  write differently (``100.0`` → ``100``, ``1e-6`` → ``0.000001``, ``1e16`` → ``10000000000000000``).
* :func:`frame` is one SSE event: ``data: <json>\\n\\n`` (LF only: the AG-UI client splits on ``\\n\\n``), or
  ``event: <name>\\ndata: <json>\\n\\n`` for a named event (dialects that name their events; see :class:`Mapper`).
* :func:`encode_frames` runs a protocol mapper over a ``ChatEvent`` stream, turning an agent exception or an
  unserializable value into the protocol's error frames, and always closing the agent's iterator.
* :class:`EventStreamResponse` puts frames on the wire with sse-starlette: one send per frame, ``: ping``
  comment heartbeats after an idle interval, a send timeout for clients that stop reading, and the agent's
  generator closed (its ``finally`` run) when the client goes away.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import re
import threading
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any, Protocol, cast, get_args

import anyio
import orjson
from pydantic import BaseModel
from sse_starlette._utils import collapse_excgroups
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import (
    AppStatus,
    EventSourceResponse,
    SendTimeoutError,
    _ensure_watcher_started_on_this_loop,
    _get_shutdown_state,
)
from starlette.types import Receive, Scope, Send

from .events import Agent, ChatEvent, RunInput
from .events.logs import run_logger

__all__ = [
    "DEFAULT_ERROR_TEXT",
    "LARGE_STATE",
    "PAYLOAD_EVENTS",
    "PING",
    "SHUTDOWN_TEXT",
    "SSE_HEADERS",
    "EventStreamResponse",
    "FrameTooLarge",
    "JsText",
    "Mapper",
    "NotAnEvent",
    "breathe",
    "changed_span",
    "detach",
    "detached_runs",
    "dumps",
    "encode_frames",
    "error_text",
    "frame",
    "heavy",
    "js_json",
    "js_value",
    "js_walk",
    "large",
    "needs_rewrite",
    "offloaded",
    "shutdown_frames",
    "start_agent",
]

logger = run_logger("streamkit")

PING = b": ping\n\n"
"""The heartbeat: an SSE comment, ignored by every client."""

SSE_HEADERS: Mapping[str, str] = {
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Headers every stream carries (proxies must neither cache nor buffer it)."""

DEFAULT_ERROR_TEXT = "An error occurred."
"""What the client sees of an agent exception unless the app asks for details."""

_OPTS = orjson.OPT_NON_STR_KEYS


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"value of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, as ``JSON.stringify`` writes it (run payloads through :func:`js_value` first)."""
    return orjson.dumps(value, default=_default, option=_OPTS)


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


def _js_float_text(value: float) -> str:
    """The text JavaScript's ``Number.prototype.toString`` gives for a finite float."""
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    ds = list(digits)
    while len(ds) > 1 and ds[-1] == 0:
        ds.pop()
        exponent += 1
    k = len(ds)
    n = exponent + k
    s = "".join(map(str, ds))
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + s
    else:
        e = n - 1
        mantissa = s[0] + ("." + s[1:] if k > 1 else "")
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return ("-" if sign else "") + text


def _js_float(value: float) -> Any:
    if not math.isfinite(value):
        return None
    if value == 0:
        return 0
    mag = abs(value)
    if value.is_integer() and mag < 9007199254740992.0:
        return int(value)
    if mag >= 9007199254740992.0 or mag < 1e-5:
        text = _js_float_text(value)
        if orjson.dumps(value).decode() != text:
            return orjson.Fragment(text)
    return value


_INT64 = 2**63


def _js_int(value: int) -> Any:
    """An integer beyond 64 bits (which orjson cannot write, and a parsed JSON number may be: a JavaScript
    server writes ``1e20`` as ``100000000000000000000``) as the number JavaScript reads it as; one beyond the
    largest double reads as ``Infinity``, which ``JSON.stringify`` writes as ``null``."""
    if -_INT64 <= value < _INT64:
        return value
    try:
        return _js_float(float(value))
    except OverflowError:
        return None


def _is_array_index(key: str) -> bool:
    return (key == "0" or key[0] != "0") and int(key) < 4294967295


def _js_key_order(obj: dict[Any, Any]) -> dict[str, Any]:
    """Keys in JavaScript's property order: array-index keys ascending, then the rest as inserted."""
    items = [(k if type(k) is str else dumps(k).decode().strip('"'), v) for k, v in obj.items()]
    index = sorted(((int(k), k, v) for k, v in items if k.isascii() and k.isdigit() and _is_array_index(k)))
    rest = [(k, v) for k, v in items if not (k.isascii() and k.isdigit() and _is_array_index(k))]
    return {k: v for _, k, v in index} | dict(rest)


def js_value(value: Any) -> Any:
    """``value`` with its floats rewritten so that :func:`dumps` matches ``JSON.stringify`` byte for byte.

    Strings, 64-bit ints, bools and ``None`` pass through untouched (wider ints become the numbers JavaScript
    reads them as); containers are copied only when they hold a
    float that needs rewriting or, for objects, integer-like keys (which JavaScript lists first, in
    ascending order). Non-finite floats become ``null``, as in JavaScript.

    The value is serialized once by orjson and its JSON searched for what could need rewriting (integral
    floats, exponents JavaScript writes out, integer-like keys); only the parts where something is found
    are walked in Python, so a clean value costs about two serializations whatever its size.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return _js_int(value)
    try:
        raw = _dumps(value)
    except TypeError:  # non-string keys, models, sets, integers beyond 64 bits: the exact walk
        return js_walk(value)
    if len(raw) < _JS_SMALL:  # walking a small value costs less than searching its JSON
        return js_walk(value)
    return value if not needs_rewrite(raw) else _js_rewrite(value, raw)


_JS_SMALL = 512  # below this many bytes of JSON a value is walked right away
_JS_SPLIT = 4096  # below this many bytes of JSON a value is walked whole; above, only its flagged parts


def _js_rewrite(value: Any, raw: bytes) -> Any:
    """``js_value`` of a value whose JSON ``raw`` has candidates: descend only into the flagged parts."""
    kind = type(value)
    if len(raw) < _JS_SPLIT or (kind is not dict and kind is not list):
        return js_walk(value)
    items = value if kind is list else list(value.values())
    out: list[Any] | None = None
    for lo, hi in _flagged(items, 0, len(items)):
        for i in range(lo, hi):
            new = js_value(items[i])
            if new is not items[i]:
                if out is None:
                    out = list(items)
                out[i] = new
    if kind is list:
        return value if out is None else out
    rewritten = value if out is None else dict(zip(value, out, strict=True))
    if any(k.isascii() and k.isdigit() and _is_array_index(k) for k in value):
        return _js_key_order(rewritten)
    return rewritten


def _flagged(items: list[Any], lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The ranges of ``items[lo:hi]`` whose JSON has candidates, found by serializing slices."""
    step = -(-(hi - lo) // 16)
    for start in range(lo, hi, step):
        stop = min(start + step, hi)
        breathe()
        if needs_rewrite(_dumps(items[start:stop])):
            if step <= 16:
                yield start, stop
            else:
                yield from _flagged(items, start, stop)


# What orjson writes differently from JSON.stringify, searched in its output. Each pattern has a literal
# start (fast to search); a match inside a string is a false alarm, which only costs a walk of that part.
_JS_CANDIDATES = (
    re.compile(rb"\.0(?=[,\]}]|\Z)"),  # an integral float: 100.0 (JavaScript: 100), -0.0, 9007199254740993.0
    re.compile(rb"e-6(?![0-9])"),  # 1e-6 .. 9.9e-6: JavaScript writes 0.000001
    re.compile(rb"e\+(?:1[6-9]|20)(?![0-9])"),  # 1e+16 .. 1e+20: JavaScript writes the digits
    # an integer-like key (JavaScript lists those first): "7": right after { or ,
    re.compile(
        rb'":(?<=[0-9]":)(?:(?<=[{,]"[0-9]":)'
        + b"".join(b'|(?<=[{,]"[1-9]' + b"[0-9]" * n + b'":)' for n in range(1, 10))
        + b")"
    ),
)


def needs_rewrite(raw: bytes, start: int = 0, end: int | None = None, *, floats: bool = True) -> bool:
    """Whether orjson's JSON ``raw`` (or its part ``raw[start:end]``) may differ from ``JSON.stringify``'s
    (``floats=False``: leaving integral floats aside, which :func:`js_json` rewrites in the bytes).

    ``False`` is a guarantee: the bytes are exactly what JavaScript would write for the same value.
    """
    stop = len(raw) if end is None else end
    patterns = _JS_CANDIDATES if floats else _JS_CANDIDATES[1:]
    return any(p.search(raw, start, stop) is not None for p in patterns)


_INTEGRAL = _JS_CANDIDATES[0]


def js_json(raw: bytes, *, checked: bool = False) -> bytes | None:
    """``JSON.stringify``'s bytes for the value orjson wrote as ``raw``, when integral floats are all that
    differ (``100.0`` → ``100``, ``-0.0`` → ``0``), rewritten in the bytes; ``None`` when anything else may
    need rewriting (then :func:`js_value` is the way). ``checked``: the other candidates are known absent.
    """
    if not checked and any(p.search(raw) is not None for p in _JS_CANDIDATES[1:]):
        return None
    pieces: list[bytes] = []
    last = counted = quotes = 0
    escapes = b"\\" in raw
    for match in _INTEGRAL.finditer(raw):
        i = match.start()
        quotes += raw.count(34, counted, i)  # 34: the quote (an int needle counts faster with bounds)
        if escapes:
            quotes -= _escaped_quotes(raw, counted, i)
        counted = i
        if quotes % 2:  # inside a string
            continue
        j = i
        while j and 48 <= raw[j - 1] <= 57:
            j -= 1
        if raw[j:i] == b"0" and j and raw[j - 1] == 45:  # -0.0
            pieces += [raw[last : j - 1], b"0"]
        else:
            pieces.append(raw[last:i])
        last = i + 2
    if not pieces:
        return raw
    pieces.append(raw[last:])
    return b"".join(pieces)


def _escaped_quotes(raw: bytes, start: int, end: int) -> int:
    """How many quotes in ``raw[start:end]`` are escaped (preceded by an odd run of backslashes)."""
    total, k, sign = 0, 1, 1
    while True:
        n = raw.count(b"\\" * k + b'"', start, end)
        if not n:
            return total
        total += sign * n
        k, sign = k + 1, -sign


class _Leaf:
    """A piece of a value: its orjson bytes and their ``JSON.stringify`` text (without the brackets of a slice)."""

    __slots__ = ("raw", "text")

    def __init__(self, raw: bytes, text: bytes) -> None:
        self.raw = raw
        self.text = text


class _Split:
    """A container written as pieces: slices of ``step`` entries (or single members) in order; for an object
    written member by member, ``keys`` maps each key to its piece."""

    __slots__ = ("keys", "parts", "step")

    def __init__(self, step: int, parts: list[_Leaf | _Split], keys: dict[str, _Leaf | _Split] | None = None):
        self.step = step
        self.parts = parts
        self.keys = keys


_PIECE = 16384  # bytes of JSON per slice of a large container
_NEST = 65536  # a member or element whose JSON is longer than this is itself written in pieces


def _plain_dumps(value: Any) -> bytes:
    """orjson's JSON without ``OPT_NON_STR_KEYS`` (which takes a slower path through every object): a key
    that is not a string raises ``TypeError``, as JavaScript orders such keys differently anyway."""
    return orjson.dumps(value, default=_default)


class JsText:
    """``JSON.stringify``'s bytes of successive versions of one large value, at about the cost of one
    ``orjson.dumps`` of each version plus work on what changed.

    A large list (or object) is serialized in slices of about ``_PIECE`` bytes; a slice whose bytes equal the
    same slice of the version before reuses that version's text, and only a changed slice is searched and
    rewritten (:func:`js_json`). The text of a slice is a function of its bytes alone, so the result is
    exactly :func:`js_walk`'s. :meth:`text` gives ``None`` when something other than integral floats may
    need rewriting (then the exact walk is the way), or when ``refuse`` flags the bytes of a changed piece.
    """

    __slots__ = ("_refuse", "_root")

    def __init__(self, refuse: Callable[[bytes], bool] | None = None) -> None:
        self._refuse = refuse
        self._root: _Leaf | _Split | None = None

    def text(self, value: Any) -> bytes | None:
        """The bytes ``JSON.stringify`` writes for ``value`` (as :func:`dumps` of :func:`js_value`), or ``None``."""
        out: list[bytes] = []
        try:
            root = self._piece(value, self._root, out, False)
        except TypeError:  # what orjson cannot serialize as it is
            root = None
        self._root = root
        return None if root is None else b"".join(out)

    def _leaf(self, raw: bytes, old: _Leaf | _Split | None, out: list[bytes], strip: bool) -> _Leaf | None:
        if type(old) is _Leaf and old.raw == raw:
            out.append(old.text)
            return old
        if needs_rewrite(raw, floats=False) or (self._refuse is not None and self._refuse(raw)):
            return None
        text = js_json(raw, checked=True)
        assert text is not None
        if strip:
            text = text[1:-1]
        out.append(text)
        return _Leaf(raw, text)

    def _piece(self, value: Any, old: _Leaf | _Split | None, out: list[bytes], strip: bool) -> _Leaf | _Split | None:
        kind = type(value)
        split = old if type(old) is _Split else None
        if kind is list or kind is tuple:
            return self._list(value, split, out)
        if kind is dict:
            return self._dict(value, split, out)
        return self._leaf(_plain_dumps(value), old, out, strip)

    def _member(self, value: Any, old: _Leaf | _Split | None, out: list[bytes]) -> _Leaf | _Split | None:
        """One element or member's piece: split again when it was before, or when its JSON is long."""
        if type(old) is _Split:
            return self._piece(value, old, out, False)
        raw = _plain_dumps(value)
        if len(raw) > _NEST and type(value) in (dict, list, tuple):
            return self._piece(value, None, out, False)
        return self._leaf(raw, old, out, False)

    def _list(self, value: list[Any] | tuple[Any, ...], old: _Split | None, out: list[bytes]) -> _Split | None:
        n = len(value)
        if old is not None and old.keys is None:
            step = old.step
            before = old.parts
        else:
            head = _plain_dumps(value[:64])
            step = max(1, _PIECE * min(n, 64) // max(len(head), 1))
            before = []
        parts: list[_Leaf | _Split] = []
        out.append(b"[")
        for k, i in enumerate(range(0, n, step)):
            if k:
                out.append(b",")
            breathe()
            prev = before[k] if k < len(before) else None
            if step == 1:
                part = self._member(value[i], prev, out)
            else:
                part = self._leaf(_plain_dumps(value[i : i + step]), prev, out, True)
            if part is None:
                return None
            parts.append(part)
        out.append(b"]")
        return _Split(step, parts)

    def _dict(self, value: dict[Any, Any], old: _Split | None, out: list[bytes]) -> _Split | None:
        n = len(value)
        if not all(type(k) is str for k in value):
            return None  # JavaScript orders such keys differently: the exact walk
        if n > 64:  # slices of members: their bytes hold the keys, searched as the values are
            if old is not None and old.keys is None and old.step > 1:
                step, before = old.step, old.parts
            else:
                head = _plain_dumps(dict(itertools.islice(value.items(), 64)))
                step = max(2, _PIECE * 64 // max(len(head), 1))
                before = []
            keys, values = list(value), list(value.values())
            parts: list[_Leaf | _Split] = []
            out.append(b"{")
            for k, i in enumerate(range(0, n, step)):
                if k:
                    out.append(b",")
                breathe()
                prev = before[k] if k < len(before) else None
                chunk = dict(zip(keys[i : i + step], values[i : i + step], strict=True))
                part = self._leaf(_plain_dumps(chunk), prev, out, True)
                if part is None:
                    return None
                parts.append(part)
            out.append(b"}")
            return _Split(step, parts)
        members: dict[str, _Leaf | _Split] = {}
        known = old.keys if old is not None and old.keys is not None else {}
        out.append(b"{")
        for key, item in value.items():
            if key in ("__proto__", "constructor") or (key.isascii() and key.isdigit() and _is_array_index(key)):
                return None  # a key the client refuses or orders first: the exact walk
            out.append(_dumps(key) + b":" if not members else b"," + _dumps(key) + b":")
            member = self._member(item, known.get(key), out)
            if member is None:
                return None
            members[key] = member
        out.append(b"}")
        return _Split(0, [], members)


_local = threading.local()


def offloaded() -> bool:
    """Whether this is a worker thread mapping an offloaded event (one :func:`heavy`, or that its mapper's
    ``offload`` picked): the work at hand is large, and should be split with :func:`breathe` between pieces."""
    return getattr(_local, "offloaded", False)


def breathe() -> None:
    """In a worker thread mapping an offloaded event, let the event loop's thread have the interpreter now
    (it would wait for the switch interval otherwise); does nothing elsewhere."""
    if getattr(_local, "offloaded", False):
        time.sleep(0)


def changed_span(old: bytes, new: bytes) -> tuple[int, int]:
    """``(p, s)``: the lengths of the longest common prefix and suffix of ``old`` and ``new``, not
    overlapping (``p + s <= min(len(old), len(new))``); memory comparisons of growing blocks."""
    limit = min(len(old), len(new))
    p = _common(old, new, limit, 0)
    s = _common(old, new, limit - p, 1)
    return p, s


def _common(a: bytes, b: bytes, limit: int, back: int) -> int:
    la, lb = len(a), len(b)

    def same(x: int, y: int) -> bool:  # the bytes [x, y) from the start (or the end) are equal
        if back:
            return a[la - y : la - x] == b[lb - y : lb - x]
        return a[x:y] == b[x:y]

    n, step = 0, 4096
    while n < limit:
        hi = min(n + step, limit)
        if same(n, hi):
            n, step = hi, min(step * 2, 65536)  # small blocks: their copies stay in the heap and the cache
            continue
        while hi - n > 1:
            mid = (n + hi) // 2
            if same(n, mid):
                n = mid
            else:
                hi = mid
        return n
    return n


def large(value: Any, nodes: int = 2048, chars: int = 262144) -> bool:
    """Whether ``value`` holds more than ``nodes`` JSON values or ``chars`` characters of strings (a bounded
    look, stopping as soon as it knows): work on it belongs off the event loop."""
    stack = [value]
    count = size = 0
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            size += len(item)
        elif kind is dict:
            count += len(item)
            if count > nodes:
                return True
            size += sum(map(len, item)) if all(type(k) is str for k in item) else len(item)
            stack += item.values()
        elif kind is list or kind is tuple:
            count += len(item)
            if count > nodes:
                return True
            stack += item
        elif isinstance(item, BaseModel):
            stack.append(item.__dict__)
        if size > chars:
            return True
    return False


PAYLOAD_EVENTS = frozenset(
    {
        "run-finished",
        "tool-call-end",
        "tool-result",
        "state-snapshot",
        "state-delta",
        "state-update",
        "messages-snapshot",
        "data",
        "file",
        "user-message",
        "provider-part",
        "message-metadata",
        "custom",
        "raw",
    }
)
"""The ``ChatEvent`` types that carry an arbitrary JSON payload (the ones that may be heavy to map)."""


LARGE_STATE = 262144
"""A state whose JSON is longer than this (bytes) is diffed or patched off the event loop."""


def heavy(event: ChatEvent) -> bool:
    """Whether ``event`` carries a :func:`large` payload."""
    return event.type in PAYLOAD_EVENTS and large(event.__dict__)


def js_walk(value: Any) -> Any:
    """:func:`js_value` by a walk of the whole value in Python (tuples become lists): for what orjson cannot
    serialize as it is."""
    if type(value) is float:
        return _js_float(value)
    if type(value) is dict:
        out = None
        indexed = False
        for k, v in value.items():
            if type(k) is not str or (k.isascii() and k.isdigit() and _is_array_index(k)):
                indexed = True
            nv = js_walk(v)
            if nv is not v:
                if out is None:
                    out = dict(value)
                out[k] = nv
        if indexed:
            return _js_key_order(value if out is None else out)
        return value if out is None else out
    if type(value) in (list, tuple):
        items = [js_walk(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)) and type(value) is list:
            return value
        return items
    if type(value) is int:
        return _js_int(value)
    if isinstance(value, BaseModel):
        return js_walk(value.model_dump(mode="json", by_alias=True, exclude_none=True))
    return value


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


class EventStreamResponse(EventSourceResponse):
    """A ``text/event-stream`` response of pre-encoded SSE bytes.

    ``heartbeat`` is the idle time (seconds) after which a ``: ping`` comment is sent (0 disables it);
    ``send_timeout`` drops a client that does not take a frame within that time. When the client
    disconnects, the stream is cancelled and the frames' iterator (and with it the agent's generator) is
    closed.

    Each frame is sent as soon as it is produced, one write per frame. When frames come faster than that
    (a burst of frames that were ready at once, or a send that had to wait for the socket), a task of
    their own pulls them from then on, and whatever piled up while a send was in progress leaves in one
    write of at most about ``max_batch_bytes``.
    """

    max_batch_bytes = 65536
    """Frames that pile up are coalesced into writes of at most about this size (0: one write per frame)."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        heartbeat: float = 15.0,
        send_timeout: float | None = 30.0,
        on_disconnect: Callable[[], Awaitable[None]] | None = None,
        on_shutdown: Callable[[], bytes] | None = None,
        shutdown_event: anyio.Event | None = None,
        shutdown_grace_period: float = 0,
    ) -> None:
        merged = dict(SSE_HEADERS)
        if headers:
            merged.update(headers)

        async def _closed(message: Any) -> None:
            if on_disconnect is not None:
                await on_disconnect()

        super().__init__(
            content,
            status_code=status_code,
            headers=merged,
            ping=heartbeat,
            sep="\n",
            ping_message_factory=lambda: ServerSentEvent(comment="ping", sep="\n"),
            send_timeout=send_timeout,
            client_close_handler_callable=_closed,
            shutdown_event=shutdown_event,
            shutdown_grace_period=shutdown_grace_period,
        )
        # sse-starlette forces "no-store"; the protocols' reference servers send "no-cache".
        self.headers["cache-control"] = merged["cache-control"]
        self.last_send = time.monotonic()
        self._frames = content
        self._sending_since: float | None = None
        self._watchdog = send_timeout is not None and 0 < heartbeat <= send_timeout
        self._on_shutdown = on_shutdown
        self._shutting_down = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stalled = False
        try:
            if scope["type"] == "http" and scope.get("method", "GET").upper() != "HEAD":
                await self._run(receive, send)
            else:  # HEAD and WebSocket denial: sse-starlette's own handling
                await super().__call__(scope, receive, send)
        except SendTimeoutError:
            # A client that stopped reading is an expected event, not a crash: one line, no traceback. The
            # response cannot be completed (the connection is stuck), so the server closes it.
            stalled = True
            self.active = False
        finally:
            # However the response ended (done, disconnect, send timeout, shutdown), close the frames'
            # iterator: this closes the agent's generator, or tells a detached run its reader is gone.
            with anyio.CancelScope(shield=True):
                await _aclose(self.body_iterator)
        if stalled:
            logger.warning(
                "%s %s: the client took no data for %s s (send_timeout); stream dropped",
                scope.get("method", "GET"),
                scope.get("path", "?"),
                f"{self.send_timeout:g}",
            )
            return
        if self._shutting_down and self.active and self._on_shutdown is not None:
            # The server is shutting down and cancelled the stream mid-run: end it with the protocol's
            # terminal frames instead of a torn body.
            self.active = False
            with anyio.move_on_after(self.send_timeout or 5):
                await send({"type": "http.response.body", "body": self._on_shutdown(), "more_body": True})
            with anyio.move_on_after(self.send_timeout or 5):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _run(self, receive: Receive, send: Send) -> None:
        # Two tasks per stream where sse-starlette runs four: the frames, and one watcher that waits for the
        # client to leave or the server to stop, sends the heartbeats and watches the sends (see _watch).
        with collapse_excgroups():
            async with anyio.create_task_group() as tasks:

                async def part(run: Callable[[], Awaitable[None]]) -> None:
                    await run()
                    tasks.cancel_scope.cancel()

                tasks.start_soon(part, lambda: self._stream_response(send))
                tasks.start_soon(part, lambda: self._watch(receive, send))
        if self.background is not None:
            await self.background()

    async def _watch(self, receive: Receive, send: Send) -> None:
        """Until the client disconnects or the server shuts down: a heartbeat after each idle ``heartbeat``,
        and, when the heartbeat is no longer than the send timeout, the watch over frame sends (one still in
        progress ``send_timeout`` after it began ends the response)."""
        interval = self.ping_interval
        timeout = self.send_timeout if self._watchdog else None
        signal = _ShutdownSignal()
        if AppStatus.should_exit:
            signal.fired = True
        _ensure_watcher_started_on_this_loop()
        listeners = cast("set[Any]", _get_shutdown_state().events)
        listeners.add(signal)
        try:
            while self.active and not signal.fired:
                now = time.monotonic()
                since = self._sending_since
                if timeout is not None and since is not None:
                    if now - since >= timeout:
                        raise SendTimeoutError()
                    delay = since + timeout - now
                elif interval > 0:
                    delay = interval - (now - self.last_send)
                    if delay <= 0:
                        await self._send_ping(send)
                        continue
                else:
                    delay = math.inf
                message: Any = None
                with anyio.move_on_after(delay) as waiting:
                    signal.scope = waiting
                    message = await receive()
                signal.scope = None
                if message is not None and message["type"] == "http.disconnect":
                    self.active = False
                    if self.client_close_handler_callable:
                        await self.client_close_handler_callable(message)
                    return
        finally:
            listeners.discard(signal)
        if signal.fired:
            await self._after_exit_signal()

    async def _send_ping(self, send: Send) -> None:
        async with self._send_lock:
            if self.active:
                await self._send_with_timeout(send, {"type": "http.response.body", "body": PING, "more_body": True})
                self.last_send = time.monotonic()

    async def _stream_response(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if self._watchdog or self.send_timeout is None:
            # With a heartbeat no longer than the send timeout, the ping task watches the sends (see _ping).
            await self._pump(send, None)
        else:
            # Otherwise the deadline of one cancel scope is armed around each send.
            with anyio.CancelScope() as sending:
                await self._pump(send, sending)
            if sending.cancelled_caught:
                raise SendTimeoutError()
        async with self._send_lock:
            self.active = False
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, send: Send, sending: anyio.CancelScope | None) -> None:
        # Each frame is sent as it comes, in this task, until frames turn out to come faster than they can be
        # sent one by one (a burst of frames that were there at once, or a send that had to wait for the
        # socket): from then on a producer task pulls them, and what piles up during a send leaves in one write.
        coalesce = self.max_batch_bytes > 0 and _on_asyncio()
        frames = aiter(self._frames)
        ready = 0  # frames in a row that were there at once
        while True:
            pulled = time.monotonic()
            try:
                chunk = await anext(frames)
            except StopAsyncIteration:
                return
            got = time.monotonic()
            ready = ready + 1 if got - pulled < _AT_ONCE else 0
            await self._send_body(send, chunk, sending)
            if coalesce and (ready >= _BURST or self.last_send - got > _SLOW_SEND):
                break
        pipe = _Pipe(self.max_batch_bytes)
        producer = asyncio.get_running_loop().create_task(pipe.fill(frames))
        try:
            while (batch := await pipe.take()) is not None:
                await self._send_body(send, batch, sending)
            await producer  # its exception, if it failed
        finally:
            if not producer.done():
                producer.cancel()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([producer])

    async def _send_body(self, send: Send, chunk: bytes, sending: anyio.CancelScope | None) -> None:
        if sending is not None:
            sending.deadline = anyio.current_time() + (self.send_timeout or math.inf)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sending.deadline = math.inf
        else:
            self._sending_since = time.monotonic()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            self._sending_since = None
        self.last_send = time.monotonic()

    async def _listen_for_exit_signal_with_grace(self) -> None:
        await self._listen_for_exit_signal()
        await self._after_exit_signal()

    async def _after_exit_signal(self) -> None:
        self._shutting_down = True
        if self._shutdown_event:
            self._shutdown_event.set()
        if self._shutdown_grace_period > 0:
            with anyio.move_on_after(self._shutdown_grace_period):
                while self.active:
                    await anyio.sleep(0.1)

    async def _ping(self, send: Send) -> None:
        # Like sse-starlette's ping, but only after ``heartbeat`` seconds without any frame. It also watches
        # the frame sends: one still in progress ``send_timeout`` after it began ends the response.
        interval = self.ping_interval
        timeout = self.send_timeout if self._watchdog else None
        while self.active:
            now = time.monotonic()
            since = self._sending_since
            if timeout is not None and since is not None:
                if now - since >= timeout:
                    raise SendTimeoutError()
                await anyio.sleep(since + timeout - now)
                continue
            idle = now - self.last_send
            if idle < interval:
                await anyio.sleep(interval - idle)
                continue
            await self._send_ping(send)


_AT_ONCE = 100e-6
"""A frame pulled within this many seconds was there at once (the agent did not wait)."""
_BURST = 8
"""After this many frames in a row that were there at once, frames are coalesced."""
_SLOW_SEND = 1e-3
"""A send that took this long waited for the socket: frames are coalesced from then on."""


class _ShutdownSignal:
    """Stands in for an ``anyio.Event`` in sse-starlette's shutdown broadcast: when the server stops,
    ``set()`` marks it fired and wakes the watcher waiting under ``scope``."""

    __slots__ = ("fired", "scope")

    def __init__(self) -> None:
        self.fired = False
        self.scope: anyio.CancelScope | None = None

    def set(self) -> None:
        self.fired = True
        if self.scope is not None:
            self.scope.cancel()


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Pipe:
    """Carries frames from their iterator (pulled by :meth:`fill`, a task of its own) to the sender
    (:meth:`take`): one chunk when one is waiting, all of them joined when several piled up. ``fill`` waits
    while ``limit`` bytes are waiting. (asyncio futures: the cheapest hand-over per frame.)"""

    __slots__ = ("_chunks", "_data", "_done", "_limit", "_room", "_size")

    def __init__(self, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = limit
        self._done = False
        self._data: asyncio.Future[None] | None = None  # the sender waits for a chunk
        self._room: asyncio.Future[None] | None = None  # the producer waits for the sender

    async def fill(self, frames: AsyncIterable[bytes]) -> None:
        try:
            async for chunk in frames:
                self._chunks.append(chunk)
                self._size += len(chunk)
                data = self._data
                if data is not None:
                    self._data = None
                    if not data.done():
                        data.set_result(None)
                if self._size >= self._limit:
                    self._room = room = asyncio.get_running_loop().create_future()
                    await room
        finally:
            self._done = True
            data = self._data
            if data is not None:
                self._data = None
                if not data.done():
                    data.set_result(None)

    async def take(self) -> bytes | None:
        while not self._chunks:
            if self._done:
                return None
            self._data = data = asyncio.get_running_loop().create_future()
            await data
        chunks = self._chunks
        chunk = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._size = 0
        room = self._room
        if room is not None:
            self._room = None
            if not room.done():
                room.set_result(None)
        return chunk


# --- detached runs ---------------------------------------------------------------------------------

_detached: set[Any] = set()


def detached_runs() -> int:
    """How many detached runs are still producing frames in this process."""
    return len(_detached)


class _Detached:
    """Runs a frame stream in its own task so that it outlives the request that started it.

    The request reads frames through this object; while it reads, the producer waits whenever more than
    ``max_buffer_bytes`` are unread (backpressure). Once the reader is gone, the run goes on to completion and
    only the newest ``max_buffer_bytes`` of unread frames are kept, so memory stays bounded.
    """

    def __init__(self, frames: AsyncIterable[bytes], max_buffer_bytes: int) -> None:
        import asyncio
        from collections import deque

        self._frames = frames
        self._max = max_buffer_bytes
        self._buffer: deque[bytes] = deque()
        self._size = 0
        self._done = False
        self._reader = True
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self.task = asyncio.get_running_loop().create_task(self._produce())
        _detached.add(self.task)
        self.task.add_done_callback(_detached.discard)

    async def _produce(self) -> None:
        try:
            async for chunk in self._frames:
                if self._reader:
                    while self._size > self._max and self._reader:
                        self._writable.clear()
                        await self._writable.wait()
                self._buffer.append(chunk)
                self._size += len(chunk)
                if not self._reader:
                    while self._size > self._max and len(self._buffer) > 1:
                        self._size -= len(self._buffer.popleft())
                self._readable.set()
        except Exception:  # encode_frames already turns failures into frames; this is a last resort
            logger.exception("detached run failed")
        finally:
            self._done = True
            self._readable.set()

    def __aiter__(self) -> _Detached:
        return self

    async def __anext__(self) -> bytes:
        while not self._buffer:
            if self._done:
                raise StopAsyncIteration
            self._readable.clear()
            await self._readable.wait()
        if len(self._buffer) == 1:
            chunk = self._buffer.popleft()
        else:
            chunk = b"".join(self._buffer)  # the reader fell behind: coalesce what is waiting
            self._buffer.clear()
        self._size = 0
        self._writable.set()
        return chunk

    async def aclose(self) -> None:
        """The reader went away: let the run go on without it."""
        self._reader = False
        self._writable.set()


def detach(frames: AsyncIterable[bytes], *, max_buffer_bytes: int = 1024 * 1024) -> AsyncIterator[bytes]:
    """Run ``frames`` in a task of its own that continues when the client disconnects (see ``_Detached``)."""
    return _Detached(frames, max_buffer_bytes)


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
