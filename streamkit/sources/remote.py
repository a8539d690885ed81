"""What the protocol-server sources share: POST a JSON body, read an SSE response, word what went wrong.

:func:`post_events` is the transport under :class:`~streamkit.sources.agui.RemoteAGUIAgent` and
:class:`~streamkit.sources.aisdk.RemoteAISDKAgent`: it POSTs the request body with httpx and yields the
``data`` of each SSE event of the response, or raises :class:`RemoteError` with the server's own message
(an HTTP error status, a body that is not an event stream, a refused or dropped connection).
:class:`RemoteAgent` is the run both agents make of it: the request, the translation of what comes back,
and every failure as the run's ``RunError``; nothing escapes as an exception. :func:`translated` is the same
for a stream of a protocol's frames already in hand (the sources' ``<x>_events``).

Reading a frame: :func:`dict_of`, :func:`str_of`, :func:`provider_metadata_of`, :func:`source_of` and
:func:`citations_of` read the JSON shapes both protocols share (a source, a citation, provider metadata),
leaving out what is not of the expected type, as the JS clients do.

Framing: AG-UI frames split on a blank line written as ``\\n\\n`` only, and a last frame without its blank line
still counts (that is what ``@ag-ui/client`` reads), so that dialect is split here; the AI SDK stream is plain
SSE and is read with ``httpx-sse`` (as ``eventsource-parser`` does for ``useChat``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, aclosing
from typing import Any, ClassVar, Literal, Protocol

import httpx

from ..events import ChatEvent, Citation, RunError, RunInput, RunStarted, Source
from .loop import aiter_of

__all__ = [
    "RemoteAgent",
    "RemoteError",
    "Translator",
    "citations_of",
    "dict_of",
    "post_events",
    "provider_metadata_of",
    "server_message",
    "source_of",
    "str_of",
    "translated",
]

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
) -> AsyncGenerator[str, None]:
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


class Translator(Protocol):
    """A protocol translator, as :class:`RemoteAgent` drives it (``AGUITranslator``, ``AISDKTranslator``)."""

    finished: bool

    def feed(self, item: Any) -> list[ChatEvent]:
        """The events for one event or chunk of the stream."""
        ...

    def close(self) -> list[ChatEvent]:
        """The events still due when the stream ends."""
        ...


class RemoteAgent:
    """An :class:`~streamkit.events.Agent` that runs on a remote protocol server at ``url``: the base of
    :class:`~streamkit.sources.agui.RemoteAGUIAgent` and :class:`~streamkit.sources.aisdk.RemoteAISDKAgent`,
    which say what the request is, how a frame parses and how it is translated.

    Each run is POSTed with ``headers`` added (an ``Authorization``, say). Pass an ``http_client`` (an
    ``httpx.AsyncClient``, kept open) to share connections or set timeouts and transports; without one each
    run makes its own (``timeout``: connect within 5 s, no read limit). Failures end the run with a
    ``RunError`` (codes ``http_<status>``, ``not_event_stream``, ``invalid_<item>``, ``unreachable``,
    ``timeout``, and the protocol's own), never an exception.
    """

    server: ClassVar[str] = "server"
    """How messages name the server (``"AG-UI server"``)."""
    item: ClassVar[str] = "event"
    """What one frame of its stream is called (``"event"``, ``"chunk"``); a bad one's code: ``invalid_<item>``."""
    framing: ClassVar[Literal["agui", "sse"]] = "sse"
    """How the response is split into frames (see :func:`post_events`)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float | None = None,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.http_client = http_client
        self.timeout = timeout

    def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        """Run ``run`` on the server; what it streams as ChatEvents."""
        return self._run(run)

    # -- what a protocol says ------------------------------------------------------------------------

    def request(self, run: RunInput) -> Any:
        """The body POSTed for ``run``."""
        raise NotImplementedError

    def translator(self, run: RunInput) -> Translator:
        """A fresh translator for ``run``'s stream."""
        raise NotImplementedError

    def parse(self, data: str) -> dict[str, Any] | None:
        """One frame's ``data`` as its JSON object, or None to skip it; raises ``ValueError`` when invalid."""
        raise NotImplementedError

    def started(self, event: RunStarted, run: RunInput) -> RunStarted:
        """The run's ``RunStarted`` as it is yielded (``event`` as it came, by default)."""
        return event

    def unfinished(self, translator: Translator) -> RunError | None:
        """The run's error when the stream ended before the run did (None: such a stream is complete)."""
        return None

    # -- the run -------------------------------------------------------------------------------------

    async def _run(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        data = post_events(
            self.url,
            self.request(run),
            framing=self.framing,
            headers=self.headers,
            http_client=self.http_client,
            timeout=self.timeout,
            server=self.server,
        )
        translator = self.translator(run)
        started = False
        error: RunError | None = None
        async with aclosing(data) as frames:
            try:
                async for text in frames:
                    item = self.parse(text)
                    if item is None:
                        continue
                    for event in translator.feed(item):
                        if type(event) is RunStarted:
                            started = True
                            event = self.started(event, run)
                        yield event
                    if translator.finished:
                        return
            except RemoteError as exc:
                error = RunError(message=exc.message, code=exc.code)
            except ValueError as exc:
                error = RunError(
                    message=f"the {self.server} sent an invalid {self.item}: {exc}", code=f"invalid_{self.item}"
                )
            else:
                error = self.unfinished(translator)
        for event in translator.close():
            yield event
        if error is not None:
            if not started:
                yield self.started(RunStarted(), run)
            yield error


async def translated(
    items: AsyncIterable[Any] | Iterable[Any], translator: Translator, *, stream: str, item: str
) -> AsyncIterator[ChatEvent]:
    """The ChatEvents ``translator`` makes of ``items`` (a protocol's frames as dicts), up to the run's end.

    A frame the translator refuses (``ValueError``) ends the run with a ``RunError`` (``invalid_<item>``, the
    message naming ``stream``), and so does an exception raised while iterating ``items`` (``source_error``);
    the events still due are given first. Nothing escapes as an exception; ``items`` is closed.
    """
    iterator = aiter(aiter_of(items))
    error: RunError | None = None
    try:
        while not translator.finished:
            try:
                frame = await anext(iterator)
            except StopAsyncIteration:
                break
            except Exception as exc:
                error = RunError(message=str(exc) or type(exc).__name__, code="source_error")
                break
            try:
                out = translator.feed(frame)
            except ValueError as exc:
                error = RunError(message=f"{stream} sent an invalid {item}: {exc}", code=f"invalid_{item}")
                break
            for event in out:
                yield event
        for event in translator.close():
            yield event
        if error is not None:
            yield error
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


# --- reading a frame --------------------------------------------------------------------------------


def dict_of(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def str_of(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def provider_metadata_of(data: Mapping[str, Any], key: str = "providerMetadata") -> dict[str, dict[str, Any]] | None:
    """``data[key]`` when it is provider metadata (an object of objects), else None."""
    value = data.get(key)
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        return value
    return None


def source_of(
    data: Mapping[str, Any],
    id_key: str = "id",
    *,
    media_type_with_url: bool = True,
    metadata_key: str | None = None,
) -> Source | None:
    """A ``Source`` of its wire object (``id``, ``url``, ``title``, ``mediaType``, ``filename``), or None
    without a string id. ``id_key`` names the id (``sourceId`` on an AI SDK source part); with
    ``media_type_with_url`` False a URL source takes no media type (an AI SDK ``source-url``); with
    ``metadata_key`` the source keeps the provider metadata found there."""
    sid = str_of(data.get(id_key))
    if sid is None:
        return None
    return Source(
        id=sid,
        url=str_of(data.get("url")),
        title=str_of(data.get("title")),
        media_type=str_of(data.get("mediaType")) if media_type_with_url or data.get("url") is None else None,
        filename=str_of(data.get("filename")),
        provider_metadata=provider_metadata_of(data, metadata_key) if metadata_key is not None else None,
    )


def citations_of(value: Any, read: Callable[[dict[str, Any]], Source | None] = source_of) -> list[Citation] | None:
    """The ``citations`` list of a text end (``source``, ``startIndex``, ``endIndex``, ``citedText``), each
    source read by ``read``; None when there is none. A citation without a readable source is left out."""
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        data = dict_of(item)
        source = read(dict_of(data.get("source")))
        if source is None:
            continue
        start, end = data.get("startIndex"), data.get("endIndex")
        out.append(
            Citation(
                source=source,
                start_index=start if isinstance(start, int) and start >= 0 else None,
                end_index=end if isinstance(end, int) and end >= 0 else None,
                cited_text=str_of(data.get("citedText")),
            )
        )
    return out or None
