"""What the two OpenAI APIs' sources share: the SDK guard, reading SDK objects or dicts, and errors.

:func:`attr` and :func:`fields_of` read a field of an ``openai`` SDK object or of the same as a plain dict;
:func:`provider_error` words the SDK's (or the plain-httpx path's :class:`HTTPStatusError`) exceptions with
the provider's own message; :func:`system_text` is the system prompt with the client's context items.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...events import RunError, RunInput
from ..loop import describe_error

__all__ = [
    "PROVIDER",
    "HTTPStatusError",
    "attr",
    "count_of",
    "error_code",
    "error_text",
    "fields_of",
    "import_openai",
    "provider_error",
    "system_text",
]

PROVIDER = "openai"
"""The provider's name in ``Usage`` and the key of its provider metadata."""


_EXTRA = "the openai SDK is not installed: pip install 'streamkit[openai]'"


def import_openai() -> Any:
    """The ``openai`` module (an ImportError naming the extra when it is not installed)."""
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_EXTRA) from exc
    return openai


def attr(obj: Any, name: str) -> Any:
    """A field of an SDK object or of the same as a dict (None when absent)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


_EMPTY: Mapping[str, Any] = {}


def fields_of(obj: Any) -> Mapping[str, Any]:
    """The fields of an SDK object (a pydantic model: declared fields and extras) or a dict, read with
    ``.get``; anything else reads as empty."""
    if type(obj) is dict:
        return obj
    fields = getattr(obj, "__dict__", None)
    if fields is None:
        return obj if isinstance(obj, Mapping) else _EMPTY
    extra = getattr(obj, "__pydantic_extra__", None)
    return {**fields, **extra} if extra else fields


def count_of(value: Any) -> int | None:
    """``value`` when it is a token count (a non-negative int), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def error_text(error: Any) -> str:
    """The human text of an error object the API sent (its ``message``, or the object as JSON, shortened)."""
    message = attr(error, "message")
    if isinstance(message, str) and message:
        return message
    if isinstance(error, str) and error:
        return error
    try:
        return json.dumps(error if isinstance(error, dict) else str(error), ensure_ascii=False)[:500]
    except (TypeError, ValueError):
        return "the model server sent an error"


def error_code(error: Any, default: str = "model_error") -> str:
    """The code of an error object the API sent (its ``code``, else its ``type``, else ``default``)."""
    code = attr(error, "code") or attr(error, "type")
    return str(code) if isinstance(code, str | int) and code != "" else default


def provider_error(exc: BaseException) -> RunError:
    """A RunError for an exception of the openai SDK or of :class:`HTTPStatusError`: the provider's own
    message (from the error body when there is one) and ``http_<status>`` as the code."""
    body = getattr(exc, "body", None)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        error = body.get("error", body) if isinstance(body, dict) else body
        detail = attr(error, "message") if isinstance(error, dict) else None
        if not detail:
            detail = getattr(exc, "message", None) or str(exc)
        reason = _STATUS_HINT.get(status)
        text = f"The model server answered HTTP {status}" + (f" ({reason})" if reason else "") + f": {detail}"
        return RunError(message=text, code=f"http_{status}")
    return describe_error(exc)


_STATUS_HINT = {
    401: "unauthorized: check the API key",
    403: "forbidden",
    404: "not found: check the base URL and the model name",
    429: "rate limited: try again later",
}


class HTTPStatusError(Exception):
    """An error status from an OpenAI-compatible server (the plain-httpx path): ``status_code`` and the
    parsed error ``body``."""

    def __init__(self, status_code: int, body: Any) -> None:
        self.status_code = status_code
        self.body = body
        error = body.get("error", body) if isinstance(body, dict) else body
        self.message = error_text(error) if error else f"HTTP {status_code}"
        super().__init__(self.message)


def system_text(run: RunInput, system_prompt: str | None) -> str | None:
    """The system prompt with the client's context items (AG-UI ``context``) appended."""
    if not run.context:
        return system_prompt
    lines = "\n".join(f"- {item.description}: {item.value}" for item in run.context)
    return f"{system_prompt or ''}\n\nContext from the application:\n{lines}".lstrip()
