"""Calling a route in-process, as a test would: a protocol's request through ``httpx.ASGITransport``, the
response's body validated (:func:`~streamkit.testing.validate`) and folded.

:func:`acall_route` (async) and :func:`call_route` (from sync code) take any ASGI app (a Starlette or FastAPI
app, streamkit's routes or not) and return the :class:`~streamkit.testing.Report`, with ``status`` and
``headers`` of the response: ``report.text``, ``report.tool_calls``, ``report.messages`` and ``report.state``
say what the client would show, ``report.raise_for_errors()`` fails a test on what the client would reject.
No server and no network: the transport calls the app directly (the whole body is read before it is checked,
so timing is not: use ``streamkit check`` against a served app for that).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from .check import request_body
from .report import Report
from .validate import validate

__all__ = ["DEFAULT_PATHS", "acall_route", "call_route"]

DEFAULT_PATHS = {"aisdk": "/api/chat", "agui": "/api/agui", "dsh": "/api/agent/stream"}
"""The path each protocol's route is called at unless told (the ones the demo and the examples use)."""


async def acall_route(
    app: Any,
    protocol: str = "aisdk",
    *,
    message: str = "Hello",
    path: str | None = None,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    version: int | str | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    state: Any = None,
) -> Report:
    """POST ``protocol``'s request for one user ``message`` (or ``body``) to ``app`` at ``path``; the report.

    ``messages`` and ``state`` are what the client held before (AG-UI's history and state; the AI SDK's last
    assistant message when a continuation is checked); ``version`` the client version to check against.
    """
    payload = request_body(protocol, message) if body is None else body
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://streamkit.test") as client:
        response = await client.post(path or DEFAULT_PATHS[protocol], json=payload, headers=dict(headers or {}))
    history = messages if messages is not None else (payload.get("messages") if isinstance(payload, dict) else None)
    if protocol == "agui" and state is None and isinstance(payload, dict):
        state = payload.get("state")
    report = validate(response.content, protocol, version, messages=history, state=state)
    report.status = response.status_code
    report.headers = dict(response.headers)
    return report


def call_route(app: Any, protocol: str = "aisdk", **options: Any) -> Report:
    """:func:`acall_route` from synchronous code (a plain pytest test); in async code await that one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(acall_route(app, protocol, **options))
    raise RuntimeError("call_route was called inside a running event loop: await acall_route(...) instead")
