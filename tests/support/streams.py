"""Reading streams in tests: an async stream run to its end, and the SSE readers of the protocols.

The AI SDK and the named-event dialect have the library's own readers (:func:`streamkit.aisdk.fold.parse_sse`,
:func:`streamkit.dsh.fold.parse_sse`, :func:`streamkit.agui.fold.parse_sse`, each reading as its client does);
:func:`parse_agui_sse` also checks that streamkit's AG-UI framing is exactly one ``data:`` line per event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable
from typing import Any, TypeVar

T = TypeVar("T")


async def acollect(stream: AsyncIterable[T]) -> list[T]:
    """Every item of ``stream``, in order (awaited in the running event loop)."""
    return [item async for item in stream]


def collect(stream: AsyncIterable[T]) -> list[T]:
    """Every item of ``stream``, in order, read to its end on an event loop of its own (for sync tests)."""
    return asyncio.run(acollect(stream))


def collect_bytes(stream: AsyncIterable[bytes]) -> bytes:
    """The bytes of ``stream`` joined (an encoded SSE body, read to its end like :func:`collect`)."""
    return b"".join(collect(stream))


def parse_agui_sse(body: bytes | str) -> list[dict[str, Any]]:
    """The events of an AG-UI SSE body: one ``data:`` line per event, events separated by a blank line
    (the framing is checked: every event is exactly one ``data:`` line)."""
    text = body.decode() if isinstance(body, bytes) else body
    out = []
    for block in text.split("\n\n"):
        if block:
            assert block.startswith("data: ") and "\n" not in block, block
            out.append(json.loads(block[6:]))
    return out
