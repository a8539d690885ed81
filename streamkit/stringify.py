"""JSON written byte for byte as JavaScript's ``JSON.stringify`` writes it, and the search/slice machinery
that keeps large payloads cheap.

* :func:`dumps` serializes a JSON value as ``JSON.stringify`` would (compact, UTF-8, no ``NaN``), using
  orjson; :func:`js_value` first rewrites the numbers whose text orjson and JavaScript write differently
  (``100.0`` → ``100``, ``1e-6`` → ``0.000001``, ``1e16`` → ``10000000000000000``, an integer beyond 64 bits
  as the double JavaScript reads). It searches orjson's output and walks only the flagged parts;
  :func:`js_walk` is the exact walk of the whole value, :func:`js_json` the same rewrite on JSON bytes.
* :func:`to_json` is the value the client holds after ``JSON.parse`` of those bytes (a fresh copy).
* :class:`JsText` keeps the JSON of a growing value in slices, so a small change re-serializes a slice, not
  the whole; :func:`changed_span` finds what changed between two texts with memory comparisons.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

import orjson
from pydantic import BaseModel

from .offload import breathe, large

__all__ = [
    "JsText",
    "Pieces",
    "changed_span",
    "dumps",
    "js_json",
    "js_value",
    "js_walk",
    "json_default",
    "needs_rewrite",
    "to_json",
]

_OPTS = orjson.OPT_NON_STR_KEYS
_dumps = orjson.dumps


class Pieces:
    """A JSON value given as its bytes in pieces: their concatenation is the value's JSON (as ``JSON.stringify``
    writes it). A mapper working off the event loop (:func:`~streamkit.offload.offloaded`) may put one at the top
    of a frame (of its ``data``, for a named event) in place of a large value: the frame writer then writes the
    pieces as they are, in chunks of about 256 KiB, never joining them (:mod:`streamkit.frames`). Serialized
    anywhere else (:func:`json_default`), it is the joined bytes."""

    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[bytes]) -> None:
        self.parts = parts


def json_default(value: Any) -> Any:
    """orjson's ``default=`` hook here: a pydantic model becomes its JSON dict (aliases, no ``None`` fields), a
    set a list, :class:`Pieces` their bytes; anything else raises ``TypeError``, as orjson would."""
    if type(value) is Pieces:
        return orjson.Fragment(b"".join(value.parts))
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"value of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, as ``JSON.stringify`` writes it (run payloads through :func:`js_value` first)."""
    return orjson.dumps(value, default=json_default, option=_OPTS)


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


def to_json(value: Any) -> Any:
    """``value`` as the client holds it after ``JSON.parse`` of our bytes (a fresh, unshared copy).

    Integers beyond 64 bits (which a request may carry: ``JSON.stringify(1e20)`` is written without an
    exponent) become the floats JavaScript reads them as.
    """
    return orjson.loads(dumps(js_value(value)))


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
_NEST = 65536  # a member or element holding more than this many characters (or a 32nd as many values) is itself
# written in pieces


def _plain_dumps(value: Any) -> bytes:
    """orjson's JSON without ``OPT_NON_STR_KEYS`` (which takes a slower path through every object): a key
    that is not a string raises ``TypeError``, as JavaScript orders such keys differently anyway."""
    return orjson.dumps(value, default=json_default)


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
        pieces = self.pieces(value)
        return None if pieces is None else b"".join(pieces)

    def pieces(self, value: Any) -> list[bytes] | None:
        """:meth:`text` in pieces, not joined (their concatenation is the text), or ``None``."""
        out: list[bytes] = []
        try:
            root = self._piece(value, self._root, out, False)
        except TypeError:  # what orjson cannot serialize as it is
            root = None
        self._root = root
        return None if root is None else out

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
        # A bounded look says whether a container is long, not a serialization of all of it (one C call over
        # a large state, holding the interpreter all along).
        if type(value) in (dict, list, tuple) and large(value, _NEST // 32, _NEST):
            return self._piece(value, None, out, False)
        return self._leaf(_plain_dumps(value), old, out, False)

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
