"""Replaying a recorded provider stream through the provider's own SDK, offline: an ``httpx.MockTransport``.

:class:`Replay` answers each request with the next recorded body (an SSE or NDJSON stream as the provider
sent it, or an error status), in small uneven pieces so that the SDK reassembles lines across reads, and keeps
every request's JSON body. :func:`openai_client` and :func:`anthropic_client` build the SDK clients over it, so
a test runs a user's ``OpenAIChatAgent`` / ``OpenAIResponsesAgent`` / ``AnthropicAgent`` setup on a recording::

    replay = Replay(Path("tests/recordings/weather.sse").read_bytes())
    agent = OpenAIChatAgent(openai_client(replay), model="gpt-4o-mini", tools=[get_weather])
    report = call_route(Starlette(routes=aisdk.routes(agent)), message="Weather in Paris?")
    assert report.ok and "21" in report.text
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Recording", "Replay", "anthropic_client", "openai_client"]

_SIZES = (7, 61, 3, 130, 19, 1, 250, 40)


@dataclass(frozen=True)
class Recording:
    """One answer of :class:`Replay`: ``body`` with ``status`` and ``content_type``. With ``cut``, the
    connection drops after that many bytes of the body (``httpx.RemoteProtocolError``, as a provider's
    stream cut off mid-way reaches the SDK)."""

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    cut: int | None = None

    @classmethod
    def error(cls, status: int, payload: Any) -> Recording:
        """An error status with a JSON body (``{"error": {...}}`` as the provider answers it)."""
        return cls(json.dumps(payload).encode(), status, "application/json")


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, body: bytes, cut: int | None) -> None:
        self.body = body
        self.cut = cut

    async def __aiter__(self) -> AsyncIterator[bytes]:
        body = self.body if self.cut is None else self.body[: self.cut]
        i = n = 0
        while i < len(body):
            size = _SIZES[n % len(_SIZES)]
            yield body[i : i + size]
            i += size
            n += 1
        if self.cut is not None:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")


class Replay:
    """An ``httpx.MockTransport`` handler answering request *n* with recording *n* (the last one again after
    that). Recordings are :class:`Recording`\\ s or plain bodies (``bytes``, ``str``). ``requests`` holds each
    request's decoded JSON body, ``headers`` its headers and ``paths`` its path."""

    def __init__(self, *recordings: Recording | bytes | str) -> None:
        if not recordings:
            raise ValueError("Replay needs at least one recording")
        self.recordings = [
            r if isinstance(r, Recording) else Recording(r.encode() if isinstance(r, str) else r) for r in recordings
        ]
        self.requests: list[Any] = []
        self.headers: list[httpx.Headers] = []
        self.paths: list[str] = []

    def __call__(self, request: Any) -> httpx.Response:
        """Answer ``request`` with the next recording."""
        self.requests.append(json.loads(request.content) if request.content else None)
        self.headers.append(httpx.Headers(request.headers))
        self.paths.append(request.url.path)
        reply = self.recordings[min(len(self.requests), len(self.recordings)) - 1]
        return httpx.Response(
            reply.status, headers={"content-type": reply.content_type}, stream=_Pieces(reply.body, reply.cut)
        )

    def transport(self) -> httpx.MockTransport:
        """The transport over this handler."""
        return httpx.MockTransport(self)

    def client(self) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` over this handler (an SDK's ``http_client=``)."""
        return httpx.AsyncClient(transport=self.transport())

    def httpx2_client(self) -> Any:
        """An ``httpx2.AsyncClient`` over this handler, for an SDK built on ``httpx2`` (which refuses httpx
        objects); a cut body drops the connection with ``httpx2.RemoteProtocolError``. ``ImportError`` when
        ``httpx2`` is not installed."""
        import httpx2

        class Relay(httpx2.AsyncByteStream):
            def __init__(self, stream: Any) -> None:
                self.stream = stream

            async def __aiter__(self) -> AsyncIterator[bytes]:
                try:
                    async for piece in self.stream:
                        yield piece
                except httpx.RemoteProtocolError as exc:
                    raise httpx2.RemoteProtocolError(str(exc)) from None

        def handler(request: Any) -> Any:
            answer = self(request)  # reads only the request's content, headers and path
            return httpx2.Response(answer.status_code, headers=dict(answer.headers), stream=Relay(answer.stream))

        return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def _sdk_client(replay: Replay) -> Any:
    """An async HTTP client over ``replay`` for an SDK: ``httpx2`` where installed (the SDKs built on it refuse
    httpx objects), else ``httpx``."""
    try:
        return replay.httpx2_client()
    except ImportError:
        return replay.client()


def openai_client(replay: Replay, **options: Any) -> Any:
    """An ``openai.AsyncOpenAI`` whose requests ``replay`` answers (no retries; a dummy key)."""
    import openai

    options.setdefault("api_key", "test-key")
    options.setdefault("max_retries", 0)
    return openai.AsyncOpenAI(http_client=_sdk_client(replay), **options)


def anthropic_client(replay: Replay, **options: Any) -> Any:
    """An ``anthropic.AsyncAnthropic`` whose requests ``replay`` answers (no retries; a dummy key)."""
    import anthropic

    options.setdefault("api_key", "test-key")
    options.setdefault("max_retries", 0)
    return anthropic.AsyncAnthropic(http_client=_sdk_client(replay), **options)
