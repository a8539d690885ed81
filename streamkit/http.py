"""The HTTP edge both protocols share: reading a bounded JSON body, JSON errors, the ``authorize`` hook.

Every rejection is a JSON body ``{"error": {"status": 413, "message": "...", "field": "..."}}`` with a
4xx status; ``field`` names the offending field (a dotted path such as ``messages.0.parts.1.type``) or the
limit that was exceeded (such as ``limits.max_body_bytes``). A body that fails validation also gets
``errors``: every invalid field, ``[{"field": "...", "message": "..."}]`` (at most ``MAX_FIELD_ERRORS``).
"""

from __future__ import annotations

import hmac
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

__all__ = [
    "MAX_FIELD_ERRORS",
    "Authorize",
    "Forbidden",
    "HTTPError",
    "Limits",
    "Unauthorized",
    "api_keys",
    "authorize_request",
    "check_messages",
    "error_response",
    "field_error",
    "field_errors",
    "parse_request",
    "read_json",
    "validation_error",
]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a request may carry and what a frame may weigh (bytes unless said otherwise)."""

    max_body_bytes: int = 8 * 1024 * 1024
    max_messages: int = 1000
    max_message_bytes: int = 2 * 1024 * 1024
    max_json_depth: int = 64
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
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


async def read_json(request: Request, limits: Limits) -> Any:
    """Read the request body as JSON within ``limits``; raise :class:`HTTPError` otherwise.

    415 for a content type other than JSON, 413 above ``max_body_bytes`` (checked on the declared length
    and while reading), 400 for invalid UTF-8 or JSON, and for nesting deeper than ``max_json_depth``.
    """
    ctype = request.headers.get("content-type", "")
    media = ctype.split(";", 1)[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        raise HTTPError(f"expected a JSON body, got content type {media!r}", field="content-type", status=415)
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise HTTPError("invalid content-length", field="content-length") from None
        if size > limits.max_body_bytes:
            raise _too_large(limits)
    chunks: list[bytes] = []
    total = 0
    try:
        async for chunk in request.stream():
            total += len(chunk)
            if total > limits.max_body_bytes:
                raise _too_large(limits)
            chunks.append(chunk)
    except ClientDisconnect:
        raise HTTPError("the client went away while sending the body", field="body") from None
    raw = b"".join(chunks)
    if not raw.strip():
        raise HTTPError("the request body is empty; expected a JSON object", field="body")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPError(f"the body is not valid UTF-8 (byte {exc.start})", field="body") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(limits) from None
    except ValueError as exc:
        raise HTTPError(f"the body is not valid JSON: {exc}", field="body") from None
    if not _depth_ok(value, limits.max_json_depth):
        raise _too_deep(limits)
    return value


def _json_size(value: Any) -> int:
    try:
        return len(orjson.dumps(value))
    except TypeError:  # integers beyond 64 bits: measure what the standard library writes
        return len(json.dumps(value, ensure_ascii=False).encode())


def check_messages(data: Any, limits: Limits, key: str = "messages") -> None:
    """Require a JSON object and enforce ``max_messages`` / ``max_message_bytes`` on its message list.

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
        size = _json_size(message)
        if size > limits.max_message_bytes:
            raise HTTPError(
                f"{key}.{i}: {size} bytes exceed the limit of {limits.max_message_bytes}",
                field="limits.max_message_bytes",
                status=413,
            )


def _too_large(limits: Limits) -> HTTPError:
    return HTTPError(
        f"the body exceeds {limits.max_body_bytes} bytes", field="limits.max_body_bytes", status=413
    )


def _too_deep(limits: Limits) -> HTTPError:
    return HTTPError(
        f"the body nests deeper than {limits.max_json_depth} levels", field="limits.max_json_depth", status=400
    )


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


async def parse_request(
    request: Request, limits: Limits, authorize: Authorize | None, parse: Callable[[Any, Limits], Any]
) -> tuple[Any, Any]:
    """What every protocol endpoint does first: run ``authorize``, read the JSON body within ``limits`` and
    ``parse`` it; the principal and the parsed body. Raises :class:`HTTPError` (the 4xx to answer)."""
    principal = await authorize_request(authorize, request)
    return principal, parse(await read_json(request, limits), limits)


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
