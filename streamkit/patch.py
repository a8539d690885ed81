"""RFC 6902 JSON Patch as the AG-UI client applies it: the one engine that checks and applies a ``StateDelta``.

A ``StateDelta`` means the same on every protocol. The AG-UI mapping checks it against the state the client
holds before sending it, the AI SDK and dsh mappings apply it to the state they send whole, the AG-UI fold and
the AG-UI source apply what a server sent: all of them call :func:`apply_patch`, so a patch one of them accepts
every other accepts too, with the same result.

The semantics are the real AG-UI client's: it applies every ``STATE_DELTA`` and ``ACTIVITY_DELTA`` with
``fast-json-patch`` 3.1.1, ``applyPatch(state, delta, true, false)`` (validated, on a copy). Where that library
accepts a patch only by accident of JavaScript, the strict reading is kept instead, so that whatever
:func:`apply_patch` accepts, ``fast-json-patch`` accepts as well and computes the same document:

* ``-`` names the end of an array only as the last token of an ``add`` target (the ``path`` of an ``add``,
  ``move`` or ``copy``), where it appends. Anywhere else (the path of a ``replace``, ``remove`` or ``test``, a
  ``from``, a token before the last) it names no element and the operation fails, as in the client. In an
  object ``-`` is an ordinary key.
* An array index is RFC 6901's: ``0``, or digits without a leading zero. The client reads ``01`` as ``1`` and
  the empty token as ``0``: both are refused here.
* An index names an element (below the length); an ``add`` may also name the end (the length itself). The
  client does not check a ``move`` target once the value is removed (``[1]``, a move from ``/0`` to ``/5``,
  gives ``[1]``): refused here.
* A ``path`` or ``from`` through ``__proto__`` or ``constructor/prototype`` is refused, as the client refuses
  it (its ``banPrototypeModifications`` guard); such keys inside a value are ordinary members. Keys inherited
  from ``Object.prototype`` (``toString``) do not exist here, and a string cannot be indexed into.
* ``test`` compares as the client's deep equality does: numbers by value (``1`` equals ``1.0``, one JavaScript
  number), booleans apart from numbers (``true`` is not ``1``), objects by their keys and members, arrays by
  length and order. (:func:`json_equal` is stricter: it compares states, where ``1`` and ``1.0`` differ.)
* Pointers are RFC 6901's (``~`` only as ``~0`` or ``~1``; the client reads ``~2`` literally: refused here).
  The shape of each operation (``op``, ``path``, ``from``, ``value``) is checked as the client's validator
  checks it (:func:`check_patch`); members RFC 6902 does not define are ignored.
* A ``move`` into one of its own children is refused (the client fails on it).
* The root works: an ``add`` or ``replace`` of ``""`` replaces the document, a ``remove`` of ``""`` leaves
  ``null``, a ``move`` to ``""`` makes the moved value the document.
* A patch applies whole or not at all: a failing operation raises :class:`PatchError` (with its index) and the
  document passed in is never modified, as the client applies a patch to a copy and keeps its state when the
  patch throws.
* Values are taken as the client holds them after ``JSON.parse`` of our bytes
  (:func:`~streamkit.stringify.to_json`): ``1.0`` is ``1``, tuples are lists, non-finite floats are ``null``,
  integers beyond 64 bits the floats JavaScript reads.

``tests/test_patch.py`` checks these rules against ``fast-json-patch`` itself, in node, and shows every protocol
giving a ``StateDelta`` the same meaning. The third-party ``jsonpatch`` is not used at run time: it applies paths
through ``__proto__`` and refuses a ``remove`` of the root, where the client does the opposite. It stays an
independent oracle in the tests only: it applies the AG-UI differ's patches beside this engine
(``tests/agui/test_agui_state.py``) and models the AI SDK state part (``tests/aisdk/model.py``,
``tests/sources/test_aisdk_source.py``, on patches where the two agree); ``bench/state.py`` times its
``make_patch`` as a baseline.
"""

from __future__ import annotations

import re
from typing import Any

from .stringify import to_json

__all__ = ["JSONPatch", "PatchError", "apply_patch", "check_patch", "escape", "json_equal"]

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
