"""What the protocol-server sources share: POST a JSON body, read an SSE response, word what went wrong.

:func:`post_events` is the transport under :class:`~streamkit.sources.agui.RemoteAGUIAgent` and
:class:`~streamkit.sources.aisdk.RemoteAISDKAgent`: it POSTs the request body with httpx and yields the
``data`` of each SSE event of the response, or raises :class:`RemoteError` with the server's own message
(an HTTP error status, a body that is not an event stream, a refused or dropped connection). The sources
turn that into the run's ``RunError``; nothing escapes as an exception.

Framing: AG-UI frames split on a blank line written as ``\\n\\n`` only, and a last frame without its blank line
still counts (that is what ``@ag-ui/client`` reads), so that dialect is split here; the AI SDK stream is plain
SSE and is read with ``httpx-sse`` (as ``eventsource-parser`` does for ``useChat``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import Any, Literal

import httpx

__all__ = ["RemoteError", "post_events", "server_message"]

_MAX_MESSAGE = 500


class RemoteError(Exception):
    """The remote server failed the request: ``message`` says how (its own words where it gave any)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def server_message(body: bytes, content_type: str = "") -> str:
    """The human part of an error body: ``error.message``, ``error``, ``message`` or ``detail`` of a JSON
    body (streamkit's, FastAPI's and most servers' shapes), else the text itself (shortened)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text) if text[:1] in '{["' and text else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        for key in ("error", "message", "detail", "errorText"):
            value = data.get(key)
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return str(value["message"])
            if isinstance(value, str) and value:
                return value
    elif isinstance(data, str) and data:
        return data
    if len(text) > _MAX_MESSAGE:
        text = text[:_MAX_MESSAGE] + "…"
    return text or "(empty body)"


async def _agui_frames(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data`` of every frame, split on ``\\n\\n`` as ``@ag-ui/client`` splits them."""
    buffer = ""
    async for text in response.aiter_text():
        buffer += text
        while True:
            end = buffer.find("\n\n")
            if end < 0:
                break
            frame, buffer = buffer[:end], buffer[end + 2 :]
            data = _frame_data(frame)
            if data is not None:
                yield data
    data = _frame_data(buffer)  # a last frame without its blank line still counts
    if data is not None:
        yield data


def _frame_data(frame: str) -> str | None:
    lines = [line[5:].removeprefix(" ") for line in frame.split("\n") if line.startswith("data:")]
    return "\n".join(lines) if lines else None


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    try:
        from httpx_sse import EventSource
    except ImportError:  # pragma: no cover - the extra is not installed
        raise RemoteError(
            "reading an AI SDK stream needs httpx-sse: pip install 'streamkit[remote]'", "setup"
        ) from None

    async for event in EventSource(response).aiter_sse():
        yield event.data


async def post_events(
    url: str,
    body: Any,
    *,
    framing: Literal["agui", "sse"],
    headers: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    timeout: httpx.Timeout | float | None = None,
    server: str = "server",
) -> AsyncIterator[str]:
    """POST ``body`` as JSON to ``url``; yield the ``data`` of each SSE event of the response.

    Raises :class:`RemoteError` (``message`` with the server's words, ``code`` ``http_<status>``,
    ``not_event_stream`` or ``unreachable``) when the request fails. ``http_client`` is used as given and
    left open; without one a client is made for the request (``timeout``: httpx's, default 5 s to connect
    and no read limit, since a run may be silent for a long time).
    """
    sent = {"content-type": "application/json", "accept": "text/event-stream"}
    sent.update({k.lower(): v for k, v in (headers or {}).items()})
    async with AsyncExitStack() as stack:
        client = http_client
        if client is None:
            limit = timeout if timeout is not None else httpx.Timeout(None, connect=5.0)
            client = await stack.enter_async_context(httpx.AsyncClient(timeout=limit))
        try:
            response = await stack.enter_async_context(
                client.stream("POST", url, content=json.dumps(body, ensure_ascii=False).encode(), headers=sent)
            )
            if response.status_code >= 300:
                raw = await response.aread()
                message = server_message(raw, response.headers.get("content-type", ""))
                raise RemoteError(f"HTTP {response.status_code}: {message}", f"http_{response.status_code}")
            content_type = response.headers.get("content-type", "")
            if content_type.split(";")[0].strip().lower() != "text/event-stream":
                raw = await response.aread()
                shown = content_type or "no content type"
                raise RemoteError(
                    f"the {server} answered {shown}, not an event stream: {server_message(raw)}", "not_event_stream"
                )
            reader = _agui_frames(response) if framing == "agui" else _sse_data(response)
            async for data in reader:
                yield data
        except httpx.TimeoutException as exc:
            raise RemoteError(f"the {server} timed out ({type(exc).__name__})", "timeout") from exc
        except httpx.HTTPError as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            detail = str(cause) or str(exc) or type(exc).__name__
            raise RemoteError(f"the connection to the {server} failed: {detail}", "unreachable") from exc
