"""The HTTP edge every protocol shares: reading a bounded JSON body, JSON errors, the ``authorize`` hook.

Every JSON text a request carries goes through :func:`parse_json`: the body (:func:`read_json`) and the JSON
strings inside it that the server parses (AG-UI's tool call ``arguments``), so the same bounds and the same
meaning of odd text hold everywhere. A large body is read here on the event loop (within
``Limits.body_timeout``) and parsed, validated and converted in a worker thread (:func:`parse_request`), so it
holds no other stream on the loop.

Every rejection is a JSON body ``{"error": {"status": 413, "message": "...", "field": "..."}}`` with a
4xx status; ``field`` names the offending field (a dotted path such as ``messages.0.parts.1.type``) or the
limit that was exceeded (such as ``limits.max_body_bytes``). A body that fails validation also gets
``errors``: every invalid field, ``[{"field": "...", "message": "..."}]`` (at most ``MAX_FIELD_ERRORS``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hmac
import inspect
import json
import re
import threading
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import anyio
import anyio.to_thread
import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from .offload import breathe, offloaded, run_offloaded
from .sse import on_asyncio

__all__ = [
    "MAX_FIELD_ERRORS",
    "OFFLOAD_BODY_BYTES",
    "Authorize",
    "Forbidden",
    "HTTPError",
    "Limits",
    "Unauthorized",
    "api_keys",
    "authorize_request",
    "check_json",
    "check_messages",
    "error_response",
    "field_error",
    "field_errors",
    "json_value",
    "parse_json",
    "parse_request",
    "read_body",
    "read_json",
    "validate_listed",
    "validation_error",
]

_T = TypeVar("_T")
_R = TypeVar("_R")
_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a request may carry and what a frame may weigh (bytes unless said otherwise).

    * ``max_body_bytes``: the request body (413);
    * ``max_messages``: the messages of a request's history (413);
    * ``max_message_bytes``: one message, as JSON (413);
    * ``max_message_parts``: the parts of one message (an AI SDK message's ``parts``, an AG-UI message's
      ``content`` list or ``toolCalls``; 413). It keeps the work on one message short, whatever the body;
    * ``max_json_depth``: the nesting of the body and of every JSON string in it the server parses, such as
      AG-UI's tool call ``arguments`` (400);
    * ``body_timeout``: seconds to receive the whole body, from the first read (408);
    * ``max_frame_bytes``: one outgoing event's frames.
    """

    max_body_bytes: int = 8 * 1024 * 1024
    max_messages: int = 1000
    max_message_bytes: int = 2 * 1024 * 1024
    max_message_parts: int = 2048
    max_json_depth: int = 64
    body_timeout: float = 30.0
    max_frame_bytes: int = 8 * 1024 * 1024


class HTTPError(Exception):
    """A request rejected with a 4xx status and a JSON body naming the field or limit.

    ``errors`` lists every invalid field of a body that failed validation (``[{"field", "message"}]``, at
    most :data:`MAX_FIELD_ERRORS`); ``field`` and ``message`` name the first of them.
    """

    status = 400

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        status: int | None = None,
        errors: list[dict[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.errors = errors
        if status is not None:
            self.status = status

    def response(self) -> JSONResponse:
        """The JSON error response for this rejection."""
        return error_response(self.status, self.message, self.field, self.errors)


class Unauthorized(HTTPError):
    """No or bad credentials (401)."""

    status = 401


class Forbidden(HTTPError):
    """Credentials fine, access denied (403)."""

    status = 403


def error_response(
    status: int, message: str, field: str | None = None, errors: list[dict[str, str]] | None = None
) -> JSONResponse:
    """``{"error": {"status", "message", "field"?, "errors"?}}`` with that status."""
    body: dict[str, Any] = {"status": status, "message": message}
    if field is not None:
        body["field"] = field
    if errors:
        body["errors"] = errors
    return JSONResponse({"error": body}, status_code=status)


def _depth_ok(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` levels: one level of containers at a time, scalars skipped."""
    level = [value] if type(value) in (dict, list) else []
    depth = 1
    while level:
        if depth > limit:
            return False
        children: list[Any] = []
        for item in level:
            children += item.values() if type(item) is dict else item
        level = [child for child in children if type(child) in (dict, list)]
        depth += 1
    return True


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


_SLICE = 1 << 18


def _has_surrogate_escape(text: str) -> bool:
    """Whether ``text`` may spell a surrogate escape (a slice at a time: a search holds the interpreter)."""
    if "\\u" not in text:
        return False
    for start in range(0, len(text), _SLICE):
        if _SURROGATE_ESCAPE.search(text, start, start + _SLICE + 5) is not None:
            return True
        breathe()
    return False


def _well_formed(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _replace_surrogates(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return _well_formed(value)
    if kind is dict:
        return {_well_formed(k): _replace_surrogates(v) for k, v in value.items()}
    if kind is list:
        return [_replace_surrogates(v) for v in value]
    return value


class _TooDeep(ValueError):
    pass


def json_value(text: str) -> Any:
    """The JSON value of ``text`` as every request's JSON is read: a lone surrogate becomes U+FFFD.

    JSON may spell a UTF-16 code unit alone (``"\\ud800"``), and browsers write one for a string cut in
    the middle of an emoji (``JSON.stringify`` escapes a lone surrogate rather than failing). Such a code
    unit is not a character, and no UTF-8 text can hold it. It is read as U+FFFD (the replacement
    character), which is what the browser itself makes of it on every way out to UTF-8 (``TextEncoder``,
    ``String.prototype.toWellFormed``, a ``fetch`` body given as a string), in every string of the value,
    keys included, so the text a client sent is kept and every part of the server can encode it. A
    surrogate pair (``"\\ud83d\\ude00"``) is the character it encodes, as always.

    Raises ``ValueError`` for text that is not JSON, and for nesting too deep to parse at all.
    """
    try:
        if offloaded():
            value = _DECODER.decode(text)
        elif _LONG_DIGITS not in text.encode("utf-8", "surrogatepass").translate(_DIGITS):
            value = _loads(text)
        else:  # an integer orjson would read as a float (past 64 bits) may be there
            value = json.loads(text)
        if _has_surrogate_escape(text):
            value = _replace_surrogates(value)
    except RecursionError:
        raise _TooDeep("the JSON nests too deep to parse") from None
    return value


_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_DIGITS = b"0" * 19
"""19 digits in a row (each digit read as ``0`` through ``_DIGITS``): the text may hold an integer past 64 bits,
which only the standard library reads exactly. (A regular expression would cost more than the parse.)"""


def _loads(text: str) -> Any:
    """``json.loads(text)``, by orjson when it can: orjson reads every text it accepts as the standard library
    does (an integer of fewer than 19 digits, a float, a string, a surrogate pair), at a third of the cost;
    what it refuses (``NaN``, ``1e400``, a lone surrogate, an error) is the standard library's to read or
    refuse, with its message."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return dict(pairs)


# In a worker thread, objects are made by a Python function: the decoder then runs bytecode now and then, where
# the interpreter can switch to the event loop's thread (one C call over a large text would hold it throughout).
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs)


def parse_json(text: str, limits: Limits, field: str | None = None) -> Any:
    """Parse JSON text a request carries within ``limits``: the one parser of the body and of the JSON
    strings inside it (see :func:`json_value` for the meaning of a lone surrogate).

    Nesting deeper than ``max_json_depth`` is a 400 :class:`HTTPError` naming ``field`` (the string's dotted
    path; the limit when None, as for the body). Text that is not JSON raises ``ValueError``, for the caller
    to refuse or keep as text.
    """
    if text.count("[") + text.count("{") <= limits.max_json_depth:  # cannot nest deeper
        return json_value(text)
    try:
        value = json_value(text)
    except _TooDeep:
        raise _too_deep(limits, field) from None
    if not _depth_ok(value, limits.max_json_depth):
        raise _too_deep(limits, field)
    return value


def check_json(text: str, limits: Limits, field: str) -> None:
    """Refuse JSON text (a string of the body the server parses later) that nests deeper than
    ``max_json_depth``: a 400 :class:`HTTPError` naming ``field``. Text that is not JSON passes; text with
    fewer brackets than the limit is not parsed at all."""
    if text.count("[") + text.count("{") <= limits.max_json_depth:
        return
    with contextlib.suppress(ValueError):  # not JSON: kept as text by the caller
        parse_json(text, limits, field)


OFFLOAD_BODY_BYTES = 64 * 1024
"""A body at least this large is parsed, validated and converted in a worker thread (:func:`parse_request`)."""


async def read_body(request: Request, limits: Limits) -> bytes:
    """The request body's bytes within ``limits``; raise :class:`HTTPError` otherwise.

    415 for a content type other than JSON, 413 above ``max_body_bytes`` (checked on the declared length
    and while reading), 408 when the whole body has not arrived within ``body_timeout`` seconds (a client
    trickling its body holds a connection no longer than that), 400 for an empty body.
    """
    ctype, declared = _body_headers(request)
    media = ctype.split(";", 1)[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        raise HTTPError(f"expected a JSON body, got content type {media!r}", field="content-type", status=415)
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise HTTPError("invalid content-length", field="content-length") from None
        if size > limits.max_body_bytes:
            raise _too_large(limits)
    try:
        if hasattr(request, "_body"):  # read already (by the ``authorize`` hook, say)
            chunks = [request._body]
            if len(request._body) > limits.max_body_bytes:
                raise _too_large(limits)
        elif on_asyncio():  # a tenth of anyio's cost
            async with asyncio.timeout(limits.body_timeout):
                chunks = await _receive_body(request, limits)
        else:
            with anyio.fail_after(limits.body_timeout):
                chunks = await _receive_body(request, limits)
    except ClientDisconnect:
        raise HTTPError("the client went away while sending the body", field="body") from None
    except TimeoutError:
        raise HTTPError(
            f"the body did not arrive within {limits.body_timeout:g} s", field="limits.body_timeout", status=408
        ) from None
    raw = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if not raw.strip():
        raise HTTPError("the request body is empty; expected a JSON object", field="body")
    return raw


def _body_headers(request: Request) -> tuple[str, str | None]:
    """The first ``content-type`` (``""`` when none) and ``content-length`` of the request, as
    ``request.headers.get`` reads them, from the scope's raw headers (``request.headers`` would build a
    ``Headers`` object for two look-ups)."""
    ctype: bytes | None = None
    length: bytes | None = None
    for name, value in request.scope["headers"]:
        if name == b"content-type":
            if ctype is None:
                ctype = value
        elif name == b"content-length" and length is None:
            length = value
    return (
        "" if ctype is None else ctype.decode("latin-1"),
        None if length is None else length.decode("latin-1"),
    )


async def _receive_body(request: Request, limits: Limits) -> list[bytes]:
    """The body's chunks, straight from ``receive`` (what ``Request.stream`` does, without its generator)."""
    if request._stream_consumed:
        raise RuntimeError("Stream consumed")
    receive = request.receive
    chunks: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.request":
            body = message.get("body", b"")
            if body:
                total += len(body)
                if total > limits.max_body_bytes:
                    raise _too_large(limits)
                chunks.append(body)
            if not message.get("more_body", False):
                request._stream_consumed = True
                return chunks
        elif kind == "http.disconnect":
            request._is_disconnected = True
            raise ClientDisconnect()


def _decode(raw: bytes, limits: Limits) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPError(f"the body is not valid UTF-8 (byte {exc.start})", field="body") from None
    try:
        return parse_json(text, limits)
    except ValueError as exc:
        raise HTTPError(f"the body is not valid JSON: {exc}", field="body") from None


async def read_json(request: Request, limits: Limits) -> Any:
    """Read the request body as JSON within ``limits``; raise :class:`HTTPError` otherwise.

    :func:`read_body`'s 415, 413, 408 and 400, then 400 for invalid UTF-8 or JSON and for nesting deeper than
    ``max_json_depth``; a lone surrogate escape becomes U+FFFD (see :func:`json_value`). A body of
    :data:`OFFLOAD_BODY_BYTES` or more is parsed in a worker thread.
    """
    raw = await read_body(request, limits)
    if len(raw) >= OFFLOAD_BODY_BYTES:
        return await anyio.to_thread.run_sync(run_offloaded, _decode, raw, limits)
    return _decode(raw, limits)


def _json_size(value: Any) -> int:
    try:
        return len(orjson.dumps(value))
    except TypeError:  # integers beyond 64 bits: measure what the standard library writes
        return len(json.dumps(value, ensure_ascii=False).encode())


def check_messages(data: Any, limits: Limits, key: str = "messages", parts: tuple[str, ...] = ("parts",)) -> None:
    """Require a JSON object and enforce ``max_messages``, ``max_message_bytes`` and ``max_message_parts`` (on
    the lists each message holds under the keys ``parts``) on its message list.

    Runs before model validation, so an oversized history is refused (413 naming the limit) before any work
    is done on it; a body that is not an object is a 422 naming ``body``.
    """
    if not isinstance(data, dict):
        raise HTTPError("body: expected a JSON object", field="body", status=422)
    messages = data.get(key)
    if not isinstance(messages, list):
        return  # the request model names the problem
    if len(messages) > limits.max_messages:
        raise HTTPError(
            f"{key}: {len(messages)} messages exceed the limit of {limits.max_messages}",
            field="limits.max_messages",
            status=413,
        )
    for i, message in enumerate(messages):
        if isinstance(message, dict):
            for name in parts:
                items = message.get(name)
                if isinstance(items, list) and len(items) > limits.max_message_parts:
                    raise HTTPError(
                        f"{key}.{i}.{name}: {len(items)} parts exceed the limit of {limits.max_message_parts}",
                        field="limits.max_message_parts",
                        status=413,
                    )
        size = _json_size(message)
        if size > limits.max_message_bytes:
            raise HTTPError(
                f"{key}.{i}: {size} bytes exceed the limit of {limits.max_message_bytes}",
                field="limits.max_message_bytes",
                status=413,
            )


def _too_large(limits: Limits) -> HTTPError:
    return HTTPError(f"the body exceeds {limits.max_body_bytes} bytes", field="limits.max_body_bytes", status=413)


def _too_deep(limits: Limits, field: str | None = None) -> HTTPError:
    if field is None:
        return HTTPError(
            f"the body nests deeper than {limits.max_json_depth} levels", field="limits.max_json_depth", status=400
        )
    return HTTPError(
        f"{field}: its JSON nests deeper than {limits.max_json_depth} levels (limits.max_json_depth)",
        field=field,
        status=400,
    )


@functools.cache
def _item_adapter(model: type[BaseModel], key: str) -> TypeAdapter[Any]:
    annotation = model.model_fields[key].annotation
    return TypeAdapter(typing.get_args(annotation)[0])


def _field_rank(model: type[BaseModel]) -> dict[Any, int]:
    rank: dict[Any, int] = {}
    for i, (name, info) in enumerate(model.model_fields.items()):
        rank[name] = i
        for alias in (info.alias, info.validation_alias):
            if isinstance(alias, str):
                rank[alias] = i
    return rank


def validate_listed(model: type[_M], data: Any, key: str = "messages") -> _M:
    """``model.model_validate(data)``, the list under ``key`` one item at a time when in a worker thread.

    Validating one large body is one call that holds the interpreter throughout; item by item (each bounded
    by the ``Limits`` on one message), the event loop gets its turns in between (:func:`~streamkit.offload.breathe`).
    The result, and the ``ValidationError`` naming every invalid field, are those of one call.
    """
    items = data.get(key) if isinstance(data, dict) else None
    if not offloaded() or not isinstance(items, list):
        return model.model_validate(data)
    adapter = _item_adapter(model, key)
    errors: list[Any] = []
    try:
        head = model.model_validate({**data, key: []})
    except ValidationError as exc:
        head = None
        errors += exc.errors()
    values: list[Any] = []
    for i, item in enumerate(items):
        try:
            values.append(adapter.validate_python(item))
        except ValidationError as exc:
            errors += [{**e, "loc": (key, i, *e["loc"])} for e in exc.errors()]
        breathe()
    if errors or head is None:
        rank = _field_rank(model)
        errors.sort(key=lambda e: rank.get(e["loc"][0], len(rank)) if e["loc"] else -1)
        try:
            error = ValidationError.from_exception_data(model.__name__, errors)
        except (KeyError, TypeError, ValueError):  # an error type that cannot be rebuilt: validate at once
            return model.model_validate(data)
        raise error
    return head.model_copy(update={key: values})


MAX_FIELD_ERRORS = 20
"""At most this many invalid fields are listed in an error body's ``errors``."""


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "body"


def field_errors(exc: ValidationError, path: Callable[[tuple[Any, ...]], str] = _dotted) -> list[dict[str, str]]:
    """Every invalid field of ``exc`` as ``{"field", "message"}``, in order.

    ``path`` turns a pydantic location into the field's dotted path. Where a union's alternatives failed at
    the same field, their messages are joined; where one alternative got further into the value (a longer
    path under the same field), only the further one is kept.
    """
    merged: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False, include_input=False):
        messages = merged.setdefault(path(tuple(error["loc"])), [])
        if error["msg"] not in messages:
            messages.append(error["msg"])
    fields = list(merged)
    deeper = {f for f in fields for g in fields if g != f and g.startswith(f + ".")}
    return [{"field": f, "message": " | ".join(merged[f])} for f in fields if f not in deeper]


def validation_error(exc: ValidationError, *, status: int = 422) -> HTTPError:
    """An :class:`HTTPError` for a pydantic ``ValidationError``: its invalid fields in ``errors``, the first
    named in ``field`` and ``message``."""
    errors = field_errors(exc)
    if not errors:
        return HTTPError("invalid request body", status=status)
    return field_error(errors[0]["field"], errors, status=status)


def field_error(field: str, errors: list[dict[str, str]], *, status: int = 422) -> HTTPError:
    """An :class:`HTTPError` naming ``field`` (one of ``errors``) first and listing ``errors`` (at most
    :data:`MAX_FIELD_ERRORS`; the message counts them all)."""
    message = next((e["message"] for e in errors if e["field"] == field), "invalid")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    listed = errors[:MAX_FIELD_ERRORS]
    return HTTPError(f"{field}: {message}{more}", field=field, status=status, errors=listed)


Authorize = Callable[[Request], Any]
"""Called with the request before the run starts; returns the principal (which reaches the agent as
``RunInput.principal``) or raises :class:`Unauthorized` / :class:`Forbidden` (or Starlette's
``HTTPException``). May be a coroutine function.

The agent may be given any object. The routes that tell owners apart by the principal (resumable runs, the
dialect's sessions) need it to have a JSON form (a user id, a dict of claims, a pydantic model, a dataclass):
any other object is refused at the first such request with a JSON 500 naming the hook and the type
(``streamkit.resumable.principal_key``)."""


async def authorize_request(hook: Authorize | None, request: Request) -> Any:
    """Run the ``authorize`` hook; map its refusals to JSON 401/403 errors."""
    if hook is None:
        return None
    try:
        result = hook(request)
        if inspect.isawaitable(result):
            result = await result
    except HTTPError as exc:
        if exc.field is None:
            exc.field = "authorization"
        raise
    except HTTPException as exc:
        raise HTTPError(str(exc.detail), field="authorization", status=exc.status_code) from None
    except PermissionError as exc:
        raise Forbidden(str(exc) or "forbidden", field="authorization") from None
    return result


AsyncHook = Callable[[BaseException], Awaitable[None] | None]


@overload
async def parse_request(
    request: Request, limits: Limits, authorize: Authorize | None, parse: Callable[[Any, Limits], _T]
) -> tuple[Any, _T]: ...


@overload
async def parse_request(
    request: Request,
    limits: Limits,
    authorize: Authorize | None,
    parse: Callable[[Any, Limits], _T],
    convert: Callable[[_T, Any], _R],
) -> tuple[Any, _R]: ...


async def parse_request(
    request: Request,
    limits: Limits,
    authorize: Authorize | None,
    parse: Callable[[Any, Limits], Any],
    convert: Callable[[Any, Any], Any] | None = None,
) -> tuple[Any, Any]:
    """What every protocol endpoint does first: run ``authorize``, read the JSON body within ``limits`` and
    ``parse`` it; the principal and the parsed body, or with ``convert``, what ``convert(body, principal)``
    makes of it (its ``RunInput`` and mapper, say). Raises :class:`HTTPError` (the 4xx to answer).

    With ``convert``, the parsed body's ``messages`` list is emptied once ``convert`` returns (a large one a
    message at a time, so that freeing it holds nothing): ``convert`` takes from the body all the route needs.

    The body is read on the event loop; a body of :data:`OFFLOAD_BODY_BYTES` or more is decoded, parsed and
    converted in a worker thread, so that the work on it holds no other request or stream on the loop.
    """
    principal = await authorize_request(authorize, request)
    raw = await read_body(request, limits)

    def work() -> Any:
        data = _decode(raw, limits)
        try:
            body = parse(data, limits)
        finally:
            _release(data)
        if convert is None:
            return body
        try:
            return convert(body, principal)
        finally:
            _release(body)

    if len(raw) >= OFFLOAD_BODY_BYTES:
        return principal, await anyio.to_thread.run_sync(run_offloaded, _building, work)
    return principal, work()


def _release(body: Any) -> None:
    """Drop a body's ``messages`` a message at a time once it is used (in a worker, freeing them at once would
    hold the interpreter): the decoded body's once parsed, the parsed body's once converted. Each holds a list
    of messages of its own; other values may be shared."""
    if not offloaded():
        return
    messages = body.get("messages") if isinstance(body, dict) else getattr(body, "messages", None)
    if isinstance(messages, list):
        while messages:
            messages.pop()
            breathe()


_paused = 0
_saved_threshold = (0, 0, 0)
_pause_lock = threading.Lock()


def _building(work: Callable[[], _T]) -> _T:
    """``work()`` with the collector's full collections put off until it ends.

    The objects a large body becomes are new and long-lived: each time they have grown the heap by a quarter,
    CPython's collector would scan the whole heap again (a dozen times, for the largest legal body), holding the
    interpreter each time. Put off, the heap is scanned once after the work (young collections go on as usual).
    """
    global _paused, _saved_threshold
    with _pause_lock:
        if _paused == 0:
            _saved_threshold = gc.get_threshold()
            gc.set_threshold(_saved_threshold[0], _saved_threshold[1], 1 << 30)
        _paused += 1
    try:
        return work()
    finally:
        with _pause_lock:
            _paused -= 1
            if _paused == 0:
                gc.set_threshold(*_saved_threshold)


def api_keys(keys: Mapping[str, Any] | Callable[[str], Any]) -> Authorize:
    """An ``authorize`` hook accepting ``X-API-Key: <key>`` or ``Authorization: Bearer <key>``.

    ``keys`` maps each valid key to its principal (compared in constant time), or is a function returning the
    principal of a key (None when the key is not valid; it may be a coroutine function). A request without a
    key, or with an unknown one, is refused with a JSON 401.
    """

    async def authorize(request: Request) -> Any:
        key = request.headers.get("x-api-key")
        if key is None:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            key = token.strip() if scheme.lower() == "bearer" and token.strip() else None
        if not key:
            raise Unauthorized("an API key is required (X-API-Key or Authorization: Bearer)", field="authorization")
        if callable(keys):
            principal = keys(key)
            if inspect.isawaitable(principal):
                principal = await principal
        else:
            principal = None
            for known, value in keys.items():
                if hmac.compare_digest(known.encode(), key.encode()):
                    principal = value
        if principal is None:
            raise Unauthorized("invalid API key", field="authorization")
        return principal

    return authorize
