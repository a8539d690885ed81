"""The shared state as the AG-UI client holds it, and the diff that turns it into the next one.

The client applies every ``STATE_DELTA`` with ``fast-json-patch`` and silently drops a patch that fails, so a
server must only send patches that apply to the exact state the client holds. :class:`ClientState` holds that
state as JSON bytes; :meth:`ClientState.update` diffs a new state against it and returns a patch of operations
the client is sure to apply (types compared strictly: ``true`` is not ``1``; nothing through ``__proto__`` or
``constructor/prototype``), or ``None`` when a snapshot should go instead. :func:`diff` does the same for two
values. How the diff keeps its cost to what changed is said below, above :class:`_Node`.

Checking and applying a patch (a core's ``StateDelta``) is :mod:`streamkit.patch`'s, the same on every protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate, repeat
from operator import add
from typing import Any

import orjson

from ..offload import breathe
from ..patch import JSONPatch, escape
from ..stringify import dumps, to_json

__all__ = ["ClientState", "diff"]

# --- the diff --------------------------------------------------------------------------------------
#
# The state the client holds is kept as its JSON (orjson bytes, JSON-equal to it) plus, for large arrays and
# objects, the offsets where each entry ends. Equal bytes mean equal JSON values, strictly (``true`` is not
# ``1``), so subtrees are compared as bytes, at the speed of orjson and ``memcmp``: a container is compared a
# slice of entries at a time (one ``orjson.dumps`` of the slice against the old bytes of the same entries),
# and only the slices that differ are split further, down to the entries that changed, where the diff
# descends. The cost is one serialization of the containers on the way to a change plus a little per change;
# the Python work is proportional to what changed. The patch is right by construction (the tests prove it in
# Python and in fast-json-patch), so it is not re-applied to be checked.

_dumps = orjson.dumps
_FAN = 16  # a differing slice of entries is split into this many parts
_INDEXED = 2048  # containers whose JSON is at least this long get their entry offsets when first seen
_CHUNK = 4096  # entries serialized per C call when indexing (other threads get the interpreter in between)
_STEP = 1 << 18  # bytes copied per C call when a large container's JSON is put together


_Raw = bytes | bytearray  # a large container's JSON is put together in a bytearray (see _joined)


class _Node:
    """A JSON value as bytes; for an indexed container also where each entry ends (an entry being an
    array element or an object's ``"key":value``), the object's keys, and the nodes of indexed entries."""

    __slots__ = ("ends", "keys", "raw", "subs")

    def __init__(
        self,
        raw: _Raw,
        ends: list[int] | None = None,
        keys: list[str] | None = None,
        subs: dict[int, _Node] | None = None,
    ) -> None:
        self.raw = raw
        self.ends = ends
        self.keys = keys
        self.subs = subs if subs is not None else {}

    def start(self, i: int) -> int:
        assert self.ends is not None
        return self.ends[i - 1] + 1 if i else 1

    def entries(self, lo: int, hi: int) -> _Raw:
        """The bytes of entries ``lo..hi-1`` (with the commas between them)."""
        assert self.ends is not None
        return self.raw[self.start(lo) : self.ends[hi - 1]]

    def child(self, i: int) -> _Node:
        """The node of entry ``i``'s value."""
        sub = self.subs.get(i)
        if sub is not None:
            return sub
        assert self.ends is not None
        start = self.start(i)
        if self.keys is not None:
            start += len(_dumps(self.keys[i])) + 1
        return _Node(self.raw[start : self.ends[i]])


def _node(value: Any, raw: _Raw) -> _Node:
    """The node of a plain JSON ``value`` whose orjson bytes are ``raw`` (large containers indexed)."""
    kind = type(value)
    if len(raw) < _INDEXED or (kind is not dict and kind is not list and kind is not tuple):
        return _Node(raw)
    keys = list(value) if kind is dict else None
    values = list(value.values()) if kind is dict else value
    lengths: list[int] = []
    for i in range(0, len(values), _CHUNK):
        breathe()
        lengths += map(len, map(_dumps, values[i : i + _CHUNK]))
    if keys is not None:
        lengths = [n + len(_dumps(k)) + 1 for n, k in zip(lengths, keys, strict=True)]
    ends = list(accumulate(n + 1 for n in lengths))
    if (ends[-1] + 1 if ends else 2) != len(raw):  # bytes that do not re-serialize alike: keep it whole
        return _Node(raw)
    node = _Node(raw, ends, keys)
    for i, n in enumerate(lengths):
        if n >= _INDEXED:
            sub = values[i]
            if type(sub) in (dict, list, tuple):
                child = node.child(i)
                node.subs[i] = _node(sub, child.raw)
    return node


def _indexed(node: _Node) -> _Node | None:
    """``node`` with its entry offsets (parsing its bytes once), or ``None`` if it is not a container."""
    if node.ends is not None:
        return node
    if node.raw[:1] not in (b"[", b"{"):
        return None
    value = orjson.loads(node.raw)
    keys = list(value) if type(value) is dict else None
    values = list(value.values()) if keys is not None else value
    lengths = list(map(len, map(_dumps, values)))
    if keys is not None:
        lengths = [n + len(_dumps(k)) + 1 for n, k in zip(lengths, keys, strict=True)]
    ends = list(accumulate(n + 1 for n in lengths))
    if (ends[-1] + 1 if ends else 2) != len(node.raw):
        return None
    node.ends, node.keys = ends, keys
    return node


class _Banned(Exception):
    """An operation would touch ``__proto__`` or ``constructor/prototype``: the client refuses those paths."""


class _Dense(Exception):
    """Most entries of a container changed: replacing it whole is simpler and smaller."""


class _TooLarge(Exception):
    """The patch already outweighs the state: a snapshot goes instead."""


def _plain(value: Any) -> tuple[Any, bytes]:
    """``value`` in a form orjson serializes as it is (normalized by :func:`to_json` only when needed), and its
    JSON (a small one copied: orjson's bytes keep a buffer of at least 4 KiB, held as long as the state is)."""
    try:
        raw = _dumps(value)
    except TypeError:
        value = to_json(value)
        raw = _dumps(value)
    return value, bytes(memoryview(raw)) if len(raw) < 4096 else raw


def _same_number(old: _Raw, new: Any) -> bool:
    """Whether the old scalar ``old`` and ``new`` are one and the same JavaScript number (``1`` and ``1.0``)."""
    if (type(new) is not int and type(new) is not float) or len(old) > 40:
        return False
    try:
        before = orjson.loads(old)
    except orjson.JSONDecodeError:
        return False
    return type(before) in (int, float) and float(before) == float(new)


def _banned_key(key: str, parent: str | None) -> bool:
    return key == "__proto__" or (key == "prototype" and parent == "constructor")


class _Differ:
    """One diff: the operations so far and their approximate size, against a budget."""

    def __init__(self, budget: float) -> None:
        self.ops: JSONPatch = []
        self.size = 2
        self.budget = budget

    def op(self, kind: str, path: str, raw: bytes | None = None, source: str | None = None) -> None:
        entry: dict[str, Any] = {"op": kind}
        if source is not None:
            entry["from"] = source
            self.size += len(source) + 10
        entry["path"] = path
        self.size += len(path) + len(kind) + 20
        if raw is not None:
            entry["value"] = orjson.loads(raw)
            self.size += len(raw) + 10
        self.ops.append(entry)
        if self.size > self.budget:
            raise _TooLarge

    # -- any value ---------------------------------------------------------------------------------

    def value(self, old: _Node, new: Any, raw: bytes | None, path: str, token: str | None) -> _Node:
        """Diff ``old`` into ``new`` at ``path`` (``raw``: the bytes of ``new`` if known); the node of ``new``."""
        if raw is not None and raw == old.raw:
            return old
        kind = type(new)
        first = old.raw[:1]
        if (kind is dict and first == b"{") or ((kind is list or kind is tuple) and first == b"["):
            indexed = _indexed(old)
            if indexed is not None:
                mark, size = len(self.ops), self.size
                try:
                    if kind is dict:
                        return self.object(indexed, new, path, token)
                    return self.array(indexed, new, path)
                except (_Banned, _Dense):
                    del self.ops[mark:]
                    self.size = size
        if raw is None:
            raw = _dumps(new)
            if raw == old.raw:
                return old
        if len(raw) < 40 and _same_number(old.raw, new):
            return old
        self.op("replace", path, raw)
        return _node(new, raw)

    # -- objects -----------------------------------------------------------------------------------

    def object(self, old: _Node, new: dict[str, Any], path: str, token: str | None) -> _Node:
        assert old.ends is not None and old.keys is not None
        keys = list(new)
        m, n = len(old.keys), len(keys)
        if keys == old.keys:
            changes: list[tuple[int, _Node]] = []
            if n <= _FAN:  # few members: compare each; an indexed child is compared entry by entry instead
                for i, key in enumerate(keys):
                    sub = old.subs.get(i)
                    item = new[key]
                    if sub is not None and sub.ends is not None and _container_like(sub, item):
                        if _banned_key(key, token):
                            raise _Banned
                        child = self.value(sub, item, None, f"{path}/{escape(key)}", key)
                        if child is not sub:
                            changes.append((i, child))
                        continue
                    raw = _dumps(item)
                    if raw != old.child(i).raw:
                        changes.append((i, self.member(old, i, key, item, raw, path, token)))
            else:
                items = list(new.items())
                for i, entry in self.scan(old, 0, m, lambda a, b: _dumps(dict(items[a:b]))[1:-1], 0):
                    key, item = items[i]
                    raw = entry[len(_dumps(key)) + 1 :]
                    changes.append((i, self.member(old, i, key, item, raw, path, token)))
            if not changes:
                return old
            return _rebuild(old, changes, keys)
        # Members added, removed or reordered: the common run of entries at each end is kept, the middle
        # compared member by member (a member whose value moved to a new key is a ``move``).
        items = list(new.items())

        def dump(a: int, b: int) -> bytes:
            return _dumps(dict(items[a:b]))[1:-1]

        k1 = self.front(old, dump, min(m, n))
        k2 = self.back(old, dump, min(m, n) - k1, m, n)
        before = {old.keys[i]: i for i in range(k1, m - k2)}
        middle = items[k1 : n - k2]
        fresh = {key for key, _ in middle if key not in before}
        gone = [key for key in before if key not in new]
        for key in (*fresh, *gone):
            if _banned_key(key, token):
                raise _Banned
        raws = {key: _dumps(item) for key, item in middle}
        moved: dict[str, str] = {}
        if fresh and gone:
            by_value = {bytes(old.child(before[key]).raw): key for key in gone}
            for key in fresh:
                source = by_value.pop(raws[key], None)
                if source is not None:
                    moved[key] = source
        for key, source in moved.items():
            self.op("move", f"{path}/{escape(key)}", source=f"{path}/{escape(source)}")
        sources = set(moved.values())
        for key in gone:
            if key not in sources:
                self.op("remove", f"{path}/{escape(key)}")
        segments: list[Any] = [(0, k1)]
        for key, item in middle:
            raw = raws[key]
            kraw = _dumps(key) + b":"
            if key in moved:
                segments.append((kraw + raw, None))
            elif key in fresh:
                self.op("add", f"{path}/{escape(key)}", raw)
                segments.append((kraw + raw, _node(item, raw)))
            else:
                sub = old.child(before[key])
                if raw == sub.raw:
                    child = sub
                else:
                    if _banned_key(key, token):
                        raise _Banned
                    child = self.value(sub, item, raw, f"{path}/{escape(key)}", key)
                segments.append(((kraw, child.raw), child))
        segments.append((m - k2, m))
        return _assemble(old, segments, b"{", b"}", [key for key, _ in items])

    def member(self, old: _Node, i: int, key: str, item: Any, raw: bytes, path: str, token: str | None) -> _Node:
        if _banned_key(key, token):
            raise _Banned
        return self.value(old.child(i), item, raw, f"{path}/{escape(key)}", key)

    # -- arrays ------------------------------------------------------------------------------------

    def array(self, old: _Node, new: list[Any] | tuple[Any, ...], path: str) -> _Node:
        assert old.ends is not None
        m, n = len(old.ends), len(new)

        def dump(a: int, b: int) -> bytes:
            return _dumps(new[a:b])[1:-1]

        if m == n:
            changes = self.aligned(old, new, 0, m, 0, path)
            return old if not changes else _rebuild(old, changes, None)
        k1 = self.front(old, dump, min(m, n))
        k2 = self.back(old, dump, min(m, n) - k1, m, n)
        old_hi, new_hi = m - k2, n - k2
        count_old, count_new = old_hi - k1, new_hi - k1
        segments: list[Any] = [(0, k1)]
        if count_old == 0 or count_new == 0:
            for j in range(k1, new_hi):  # inserted
                raw = _dumps(new[j])
                self.op("add", f"{path}/{j}", raw)
                segments.append((raw, _node(new[j], raw)))
            for _ in range(count_old):  # removed
                self.op("remove", f"{path}/{k1}")
        else:
            d = count_new - count_old
            # Entries inserted (or removed) at the start of the middle, then changes: the entry after the
            # insertion is the old first one. Otherwise the changes come first, then the insertions at the end.
            if d > 0:
                shifted = _dumps(new[k1 + d]) == old.entries(k1, k1 + 1)
            else:
                shifted = dump(k1, k1 + 1) == old.entries(k1 - d, k1 - d + 1)
            if shifted and d > 0:
                for j in range(k1, k1 + d):
                    raw = _dumps(new[j])
                    self.op("add", f"{path}/{j}", raw)
                    segments.append((raw, _node(new[j], raw)))
                segments += self.aligned_segments(old, new, k1, old_hi, d, path)
            elif shifted:
                for _ in range(-d):
                    self.op("remove", f"{path}/{k1}")
                segments += self.aligned_segments(old, new, k1 - d, old_hi, d, path)
            else:
                common = min(count_old, count_new)
                segments += self.aligned_segments(old, new, k1, k1 + common, 0, path)
                for j in range(k1 + common, new_hi):
                    raw = _dumps(new[j])
                    self.op("add", f"{path}/{j}", raw)
                    segments.append((raw, _node(new[j], raw)))
                for _ in range(count_old - common):
                    self.op("remove", f"{path}/{k1 + common}")
        segments.append((old_hi, m))
        return _assemble(old, segments, b"[", b"]", None)

    def aligned(
        self, old: _Node, new: list[Any] | tuple[Any, ...], lo: int, hi: int, shift: int, path: str
    ) -> list[tuple[int, _Node]]:
        """Diff old entries ``lo..hi-1`` into new entries ``lo+shift..``; the changed (old index, node)."""
        found = self.scan(old, lo, hi, lambda a, b: _dumps(new[a:b])[1:-1], shift)
        if len(found) > max(_FAN, (hi - lo) // 4):
            raise _Dense
        out = []
        for i, raw in found:
            j = i + shift
            out.append((i, self.value(old.child(i), new[j], raw, f"{path}/{j}", None)))
        return out

    def aligned_segments(
        self, old: _Node, new: list[Any] | tuple[Any, ...], lo: int, hi: int, shift: int, path: str
    ) -> list[Any]:
        segments: list[Any] = []
        at = lo
        for i, child in self.aligned(old, new, lo, hi, shift, path):
            segments += [(at, i), (child.raw, child)]
            at = i + 1
        segments.append((at, hi))
        return segments

    # -- comparing runs of entries -----------------------------------------------------------------

    @staticmethod
    def scan(old: _Node, lo: int, hi: int, dump: Callable[[int, int], bytes], shift: int) -> list[tuple[int, bytes]]:
        """The old entries in ``lo..hi-1`` whose new counterpart (``shift`` further) has other bytes, with
        those bytes; slices that compare equal are not looked into."""
        found: list[tuple[int, bytes]] = []
        stack = [(lo, hi)]
        while stack:
            a, b = stack.pop()
            if b <= a:
                continue
            step = -(-(b - a) // _FAN)
            for start in range(a, b, step):
                stop = min(start + step, b)
                breathe()
                raw = dump(start + shift, stop + shift)
                if raw == old.entries(start, stop):
                    continue
                if stop - start == 1:
                    found.append((start, raw))
                else:
                    stack.append((start, stop))
        found.sort()
        return found

    @staticmethod
    def front(old: _Node, dump: Callable[[int, int], bytes], limit: int) -> int:
        """How many entries from the start are the same (at most ``limit``)."""
        k, step = 0, _FAN
        while k < limit:
            hi = min(k + step, limit)
            if dump(k, hi) == old.entries(k, hi):
                k, step = hi, step * 2
                continue
            while hi - k > 1:
                mid = (k + hi) // 2
                if dump(k, mid) == old.entries(k, mid):
                    k = mid
                else:
                    hi = mid
            return k
        return k

    @staticmethod
    def back(old: _Node, dump: Callable[[int, int], bytes], limit: int, m: int, n: int) -> int:
        """How many entries from the end are the same (at most ``limit``)."""
        k, step = 0, _FAN
        while k < limit:
            hi = min(k + step, limit)
            if dump(n - hi, n - k) == old.entries(m - hi, m - k):
                k, step = hi, step * 2
                continue
            while hi - k > 1:
                mid = (k + hi) // 2
                if dump(n - mid, n - k) == old.entries(m - mid, m - k):
                    k = mid
                else:
                    hi = mid
            return k
        return k


def _container_like(node: _Node, value: Any) -> bool:
    kind = type(value)
    first = node.raw[:1]
    return (kind is dict and first == b"{") or ((kind is list or kind is tuple) and first == b"[")


def _rebuild(old: _Node, changes: list[tuple[int, _Node]], keys: list[str] | None) -> _Node:
    """``old`` with the values of some entries replaced (same entries, same order)."""
    assert old.ends is not None
    segments: list[Any] = []
    at = 0
    for i, child in changes:
        entry = child.raw if keys is None else (_dumps(keys[i]) + b":", child.raw)
        segments += [(at, i), (entry, child)]
        at = i + 1
    segments.append((at, len(old.ends)))
    first, last = (b"[", b"]") if keys is None else (b"{", b"}")
    return _assemble(old, segments, first, last, keys if keys is not None else None)


def _assemble(old: _Node, segments: list[Any], first: bytes, last: bytes, keys: list[str] | None) -> _Node:
    """A container node from runs of old entries ``(lo, hi)`` and new entries ``(bytes, node | None)`` (the bytes
    may be a pair: a member's key and colon, and its value)."""
    assert old.ends is not None
    pieces: list[bytes | memoryview] = []
    ends: list[int] = []
    subs: dict[int, _Node] = {}
    pos = 1
    old_subs = sorted(old.subs.items())
    view = memoryview(old.raw)  # runs of old entries are copied once, by the join
    for segment in segments:
        if type(segment[0]) is int:
            lo, hi = segment
            if hi <= lo:
                continue
            start = old.start(lo)
            delta = pos - start
            base = len(ends)
            pieces += (view[start : old.ends[hi - 1]], b",")
            if not delta:  # the entries before did not change length: the offsets stand
                ends += old.ends[lo:hi]
            else:
                for at in range(lo, hi, _CHUNK):
                    breathe()
                    ends += map(add, old.ends[at : min(hi, at + _CHUNK)], repeat(delta))
            for i, sub in old_subs:
                if lo <= i < hi:
                    subs[base + i - lo] = sub
            pos = ends[-1] + 1
        else:  # an entry's bytes, or a member's key and value (not joined: the value may be large)
            entry, child = segment
            if type(entry) is tuple:
                ends.append(pos + len(entry[0]) + len(entry[1]))
                pieces += (*entry, b",")
            else:
                ends.append(pos + len(entry))
                pieces += (entry, b",")
            if child is not None and child.ends is not None:
                subs[len(ends) - 1] = child
            pos = ends[-1] + 1
    if pieces:
        pieces[-1] = last
    else:
        pieces.append(last)
    return _Node(_joined([first, *pieces]), ends, keys, subs)


def _joined(pieces: list[bytes | memoryview]) -> _Raw:
    """``b"".join(pieces)``; for a large result put together ``_STEP`` bytes at a time (a ``bytearray``), so
    that a worker thread can let the event loop have its turn in between (no one copy of all of a large state)."""
    total = sum(map(len, pieces))
    if total <= _STEP:
        return b"".join(pieces)
    out = bytearray()  # grown step by step: bytearray(total) would fill all of it at once, in one call
    for piece in pieces:
        view = memoryview(piece)
        for lo in range(0, len(view), _STEP):
            out += view[lo : lo + _STEP]
            breathe()
    return out


class ClientState:
    """The shared state as the AG-UI client holds it, kept as JSON bytes, and the diff against it.

    :meth:`update` returns the patch that turns the client's state into a new one (and then holds the new
    one); nothing of the core's objects is kept, so a core may mutate and yield the same dict again.
    """

    __slots__ = ("_root",)

    def __init__(self, value: Any = None) -> None:
        self._root = _Node(b"null")
        self.replace(value)

    @property
    def value(self) -> Any:
        """The state (a fresh copy, as :func:`~streamkit.stringify.to_json` returns it)."""
        return to_json(orjson.loads(self._root.raw))

    @property
    def size(self) -> int:
        """The length of the state's JSON, in bytes."""
        return len(self._root.raw)

    def replace(self, value: Any) -> Any:
        """Hold ``value`` (a snapshot was sent); return it as orjson serializes it."""
        value, raw = _plain(value)
        self._root = _node(value, raw)
        return value

    def update(self, value: Any, *, snapshot_when_larger: bool = True) -> tuple[JSONPatch | None, Any]:
        """The patch from the held state to ``value`` (``[]``: no change; ``None``: send a snapshot, the
        patch would weigh more than the state), and ``value`` as orjson serializes it. Holds ``value``."""
        value, raw = _root_form(value, self._root)
        differ = _Differ(2 * len(self._root.raw) + 4096 if snapshot_when_larger else float("inf"))
        try:
            try:
                root = differ.value(self._root, value, raw, "", None)
            except TypeError:  # a part orjson cannot serialize as it is (found while descending)
                value, raw = _plain(to_json(value))
                differ = _Differ(differ.budget)
                root = differ.value(self._root, value, raw, "", None)
        except _TooLarge:
            self.replace(value)
            return None, value
        self._root = root
        if snapshot_when_larger and differ.ops and len(dumps(differ.ops)) > len(root.raw):
            return None, value
        return differ.ops, value


def _root_form(value: Any, old: _Node) -> tuple[Any, bytes | None]:
    # An indexed container is compared entry by entry, so its bytes are not needed up front.
    if old.ends is not None and _container_like(old, value):
        return value, None
    return _plain(value)


def diff(before: Any, after: Any, *, snapshot_when_larger: bool = True) -> JSONPatch | None:
    """A patch that turns ``before`` into ``after`` on the client, or ``None`` to send a snapshot instead.

    ``None`` only with ``snapshot_when_larger``, when the patch would weigh more than ``after`` itself. An
    empty list means nothing changed. See :class:`ClientState` for how it is computed.
    """
    patch, _ = ClientState(before).update(after, snapshot_when_larger=snapshot_when_larger)
    return patch
