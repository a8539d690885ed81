"""Shared state as the AG-UI client holds it: JSON normalization, RFC 6902 patches that are sure to apply.

The client applies every ``STATE_DELTA`` with ``fast-json-patch`` (``applyPatch(state, delta, true, false)``)
and silently drops a patch that fails, so a server must only ever send patches it has checked against the
exact state the client holds. This module holds the pure pieces:

* :func:`to_json` turns any value into the JSON the client will hold after parsing our bytes (floats as
  JavaScript prints them, tuples as lists, keys as strings);
* :func:`apply_patch` applies a patch the way the client does, but *conservatively*: whatever it accepts,
  ``fast-json-patch`` with validation accepts too and computes the same result (prototype keys, ``-`` outside
  an ``add``, array indices with leading zeros and a ``move`` into its own child are refused);
* :func:`json_equal` compares two JSON values strictly (``True`` is not ``1``, ``1`` is not ``1.0``);
* :func:`diff` computes a patch with ``jsonpatch.make_patch`` and keeps it only if applying it reproduces the
  target exactly (``None`` means: send a snapshot instead);
* :func:`check_patch` validates the shape of a patch (operations, pointers) as the client's schema does.
"""

from __future__ import annotations

import re
from typing import Any

import jsonpatch
import orjson

from ..sse import dumps, js_value

__all__ = [
    "JSONPatch",
    "PatchError",
    "apply_patch",
    "check_patch",
    "diff",
    "escape",
    "json_equal",
    "to_json",
]

JSONPatch = list[dict[str, Any]]
"""An RFC 6902 JSON Patch: a list of operation objects."""

_POINTER = re.compile(r"^(/([^/~]|~[01])*)*$")
_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")
_VALUE_OPS = frozenset({"add", "replace", "test"})
_FROM_OPS = frozenset({"move", "copy"})
_OPS = _VALUE_OPS | _FROM_OPS | {"remove"}


class PatchError(ValueError):
    """A patch that is malformed, or that would not apply to the state the client holds."""

    def __init__(self, reason: str, index: int | None = None) -> None:
        self.reason = reason
        self.index = index
        super().__init__(reason if index is None else f"operation {index}: {reason}")


def to_json(value: Any) -> Any:
    """``value`` as the client holds it after ``JSON.parse`` of our bytes (a fresh, unshared copy).

    Integers beyond 64 bits (which a request may carry: ``JSON.stringify(1e20)`` is written without an
    exponent) become the floats JavaScript reads them as.
    """
    try:
        return orjson.loads(dumps(js_value(value)))
    except TypeError:
        return orjson.loads(dumps(js_value(_wide_ints_as_floats(value))))


_INT64 = 2**63


def _wide_ints_as_floats(value: Any) -> Any:
    if type(value) is int:
        return float(value) if not -_INT64 <= value < _INT64 else value
    if isinstance(value, dict):
        return {k: _wide_ints_as_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wide_ints_as_floats(v) for v in value]
    return value


def escape(token: str) -> str:
    """One RFC 6901 reference token, escaped (``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def json_equal(a: Any, b: Any) -> bool:
    """Strict JSON equality: same types (``bool``, ``int`` and ``float`` are distinct), same members."""
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is dict:
        return len(a) == len(b) and all(key in b and json_equal(value, b[key]) for key, value in a.items())
    if ta is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_patch(patch: Any) -> JSONPatch:
    """Validate the shape of ``patch`` as the client's schema does; return it with only RFC 6902 members.

    Raises :class:`PatchError` for a non-list, an unknown ``op``, a missing or malformed ``path``/``from``
    (RFC 6901 pointers), or a missing ``value``.
    """
    if not isinstance(patch, list):
        raise PatchError("a JSON Patch must be a list of operations")
    out: JSONPatch = []
    for i, op in enumerate(patch):
        if not isinstance(op, dict):
            raise PatchError("an operation must be an object", i)
        kind = op.get("op")
        if kind not in _OPS:
            raise PatchError(f"unknown op {kind!r}", i)
        path = op.get("path")
        if not isinstance(path, str) or not _POINTER.match(path):
            raise PatchError(f"invalid path {path!r} (an RFC 6901 pointer is required)", i)
        clean: dict[str, Any] = {"op": kind, "path": path}
        if kind in _FROM_OPS:
            source = op.get("from")
            if not isinstance(source, str) or not _POINTER.match(source):
                raise PatchError(f"invalid from {source!r} (an RFC 6901 pointer is required)", i)
            clean["from"] = source
        elif kind in _VALUE_OPS:
            if "value" not in op:
                raise PatchError(f"a {kind} operation needs a value", i)
            clean["value"] = op["value"]
        out.append(clean)
    return out


def _banned(tokens: list[str]) -> bool:
    # fast-json-patch refuses these whatever the document holds (prototype pollution guard).
    previous = None
    for token in tokens:
        if token == "__proto__" or (token == "prototype" and previous == "constructor"):
            return True
        previous = token
    return False


def _container(doc: Any, tokens: list[str], i: int) -> Any:
    """The container that holds the last token of ``tokens``."""
    node = doc
    for token in tokens[:-1]:
        if type(node) is dict:
            if token not in node:
                raise PatchError("a parent of the path does not exist", i)
            node = node[token]
        elif type(node) is list:
            if not _INDEX.match(token) or int(token) >= len(node):
                raise PatchError("a parent of the path does not exist", i)
            node = node[int(token)]
        else:
            raise PatchError("a parent of the path is not an object or array", i)
    if type(node) is not dict and type(node) is not list:
        raise PatchError("the parent of the path is not an object or array", i)
    return node


def _get(doc: Any, tokens: list[str], i: int) -> Any:
    if not tokens:
        return doc
    node = _container(doc, tokens, i)
    key = tokens[-1]
    if type(node) is dict:
        if key not in node:
            raise PatchError("the path does not exist", i)
        return node[key]
    if not _INDEX.match(key) or int(key) >= len(node):
        raise PatchError("the path does not exist", i)
    return node[int(key)]


def _add(doc: Any, tokens: list[str], value: Any, i: int) -> Any:
    if not tokens:
        return value
    node = _container(doc, tokens, i)
    key = tokens[-1]
    if type(node) is dict:
        node[key] = value
    elif key == "-":
        node.append(value)
    elif _INDEX.match(key) and int(key) <= len(node):
        node.insert(int(key), value)
    else:
        raise PatchError("the array index is out of bounds or invalid", i)
    return doc


def _remove(doc: Any, tokens: list[str], i: int) -> tuple[Any, Any]:
    if not tokens:
        return None, doc
    node = _container(doc, tokens, i)
    key = tokens[-1]
    if type(node) is dict:
        if key not in node:
            raise PatchError("the path does not exist", i)
        return doc, node.pop(key)
    if not _INDEX.match(key) or int(key) >= len(node):
        raise PatchError("the path does not exist", i)
    return doc, node.pop(int(key))


def _replace(doc: Any, tokens: list[str], value: Any, i: int) -> Any:
    if not tokens:
        return value
    node = _container(doc, tokens, i)
    key = tokens[-1]
    if type(node) is dict:
        if key not in node:
            raise PatchError("the path does not exist", i)
        node[key] = value
    else:
        if not _INDEX.match(key) or int(key) >= len(node):
            raise PatchError("the path does not exist", i)
        node[int(key)] = value
    return doc


def _js_equal(a: Any, b: Any) -> bool:
    # ``test`` compares as the client does: numbers by value, booleans apart from numbers.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_js_equal(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(_js_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def apply_patch(doc: Any, patch: JSONPatch) -> Any:
    """Apply ``patch`` to a copy of ``doc`` (JSON values) as the client would; return the new document.

    Raises :class:`PatchError` where ``fast-json-patch`` would fail, and also in the few corner cases where
    it would succeed by accident of JavaScript (a key inherited from ``Object.prototype``, an array index
    with leading zeros): a patch this function accepts always applies on the client with the same result.
    ``doc`` itself is never modified.
    """
    checked = check_patch(patch)
    doc = to_json(doc) if isinstance(doc, (dict, list)) else doc
    for i, op in enumerate(checked):
        kind = op["op"]
        tokens = _tokens(op["path"])
        if _banned(tokens):
            raise PatchError("the path touches __proto__ or constructor/prototype (refused by the client)", i)
        if kind == "add":
            doc = _add(doc, tokens, to_json(op["value"]), i)
        elif kind == "remove":
            doc, _ = _remove(doc, tokens, i)
        elif kind == "replace":
            doc = _replace(doc, tokens, to_json(op["value"]), i)
        elif kind == "test":
            if not _js_equal(_get(doc, tokens, i), to_json(op["value"])):
                raise PatchError("test failed", i)
        else:
            source = _tokens(op["from"])
            if _banned(source):
                raise PatchError("from touches __proto__ or constructor/prototype (refused by the client)", i)
            if kind == "move":
                if len(source) < len(tokens) and tokens[: len(source)] == source:
                    raise PatchError("cannot move a value into one of its own children", i)
                value = _get(doc, source, i)
                if not tokens:
                    doc = value
                    continue
                doc, value = _remove(doc, source, i)
            else:
                value = to_json(_get(doc, source, i))
            doc = _add(doc, tokens, value, i)
    return doc


def _size(value: Any) -> int:
    return len(dumps(value))


def diff(before: Any, after: Any, *, snapshot_when_larger: bool = True) -> JSONPatch | None:
    """A patch that turns ``before`` into ``after`` on the client, or ``None`` to send a snapshot instead.

    Both values must be JSON as :func:`to_json` returns it. The patch comes from ``jsonpatch.make_patch``
    and is kept only when :func:`apply_patch` reproduces ``after`` exactly (:func:`json_equal`); with
    ``snapshot_when_larger`` a patch that weighs more than ``after`` itself is also replaced by a snapshot.
    An empty list means nothing changed.
    """
    if json_equal(before, after):
        return []
    try:
        patch: JSONPatch = jsonpatch.make_patch(before, after).patch
        result = apply_patch(before, patch)
    except Exception:  # jsonpatch edge cases: fall back to a snapshot
        return None
    if not json_equal(result, after):
        return None
    if snapshot_when_larger and _size(patch) > _size(after):
        return None
    return patch
