"""A local OpenAI-compatible Chat Completions server that replays recorded streaming responses.

Recordings live in ``recordings/<scenario>/``: ``01.sse``, ``02.sse``... are the ``text/event-stream`` bodies of
the first, second... model call of a run (as real servers sent them), and ``NN.<status>.json`` is an error
answer with that HTTP status. The scenario is the request's ``model``; the call number is one more than the
number of assistant messages after the last user message, so the server keeps no per-run state (a call
number past the last recording replays the last one). Bodies are sent in small, uneven pieces, so the
client must reassemble lines and events across network reads. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

RECORDINGS = Path(__file__).parent / "recordings"
_NAME = re.compile(r"^(\d\d)(?:\.(\d{3}))?\.(sse|json)$")


def scenarios() -> list[str]:
    """The recorded scenarios."""
    return sorted(p.name for p in RECORDINGS.iterdir() if p.is_dir())


def recording(scenario: str, call: int, recordings: Sequence[Path] = (RECORDINGS,)) -> tuple[int, str, Path]:
    """``(status, kind, path)`` of the recording for ``call`` (1-based) of ``scenario``, from the first of
    ``recordings`` that has the scenario."""
    folder = next((d / scenario for d in recordings if (d / scenario).is_dir()), None)
    if folder is None:
        raise LookupError(scenario)
    found: dict[int, tuple[int, str, Path]] = {}
    for path in folder.iterdir():
        match = _NAME.match(path.name)
        if match:
            found[int(match.group(1))] = (int(match.group(2) or 200), match.group(3), path)
    if not found:
        raise LookupError(scenario)
    return found.get(call) or found[max(found)]


def call_number(messages: list[dict[str, Any]]) -> int:
    """Which model call of the run a request is: 1 + the assistant messages after the last user message."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return 1 + sum(1 for m in messages[last_user + 1 :] if m.get("role") == "assistant")


def _pieces(body: bytes) -> Iterator[bytes]:
    sizes = (7, 61, 3, 130, 19, 1, 250, 40)
    i = n = 0
    while i < len(body):
        size = sizes[n % len(sizes)]
        yield body[i : i + size]
        i += size
        n += 1


def replay_app(recordings: Sequence[Path] = (RECORDINGS,)) -> Starlette:
    """The replay server (``app.state.requests`` holds every request body received); scenarios are looked up
    in ``recordings`` in order."""
    requests: list[dict[str, Any]] = []

    async def completions(request: Request) -> Response:
        body = await request.json()
        requests.append({"body": body, "authorization": request.headers.get("authorization")})
        try:
            status, kind, path = recording(body["model"], call_number(body["messages"]), recordings)
        except (KeyError, LookupError, FileNotFoundError):
            return JSONResponse({"error": {"message": f"model {body.get('model')!r} not found"}}, status_code=404)
        if kind == "json":
            return JSONResponse(json.loads(path.read_text()), status_code=status)
        data = path.read_bytes()

        async def stream() -> AsyncIterator[bytes]:
            for piece in _pieces(data):
                yield piece
                await anyio.sleep(0)

        return StreamingResponse(stream(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.requests = requests
    return app


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a thread; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        else:
            raise RuntimeError("the test server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
