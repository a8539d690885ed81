"""The benchmark server: a Starlette app on uvicorn, run in its own process by the wire and concurrency
benchmarks (``python -m bench.server --port N``).

Routes:

* ``POST /aisdk`` and ``POST /agui``: streamkit's own routes (``streamkit.aisdk.routes``,
  ``streamkit.agui.routes``) serving an agent that streams W, constructing each event as it goes.
* ``POST /aisdk/per-frame``: the same W stream through ``streamkit.aisdk.encode`` and a
  ``UIMessageStreamResponse`` with coalescing turned off (``max_batch_bytes = 0``): one write per frame.
* ``GET /plain/aisdk`` and ``GET /plain/agui``: the baseline, a plain Starlette ``StreamingResponse``
  of the same bytes, encoded once at startup, one frame per chunk.
* ``POST /paced``: streamkit's AI SDK route serving an agent that yields an event every
  ``--interval`` seconds, ``--frames`` frames in all (the concurrency benchmark).
* ``POST /state``: streamkit's AG-UI route serving an agent that streams ``StateUpdate``s of a state of
  ``--state-docs`` documents (``bench.workload.state_updates``) back to back until the client leaves (the
  state benchmark).
* ``POST /idle/aisdk``, ``POST /idle/agui``, ``POST /idle/detached``, ``POST /idle/resumable`` and
  ``POST /idle/plain``: idle streams (the concurrency benchmark's ``--idle`` mode). The agent yields its run's
  start, waits ``--hold`` seconds and finishes: streamkit's AI SDK and AG-UI routes (heartbeat ``--heartbeat``),
  the AI SDK route with detached runs and with resumable runs (memory store), and the baseline, a plain
  Starlette ``StreamingResponse`` of the AI SDK route's bytes, paced the same way. Like ``/paced-plain``, the
  baseline reads the request's JSON (``request.json()``, no validation): the least any chat endpoint does.
* ``GET /health``: ``ok``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from streamkit import agui, aisdk
from streamkit.events import (
    ChatEvent,
    RunFinished,
    RunInput,
    RunStarted,
    StateUpdate,
    TextDelta,
    TextEnd,
    TextStart,
)
from streamkit.serve import StreamOptions
from streamkit.store import MemoryStore

from .workload import Workload, agent_events, chat_events, state_updates, workload

__all__ = ["AGUI_BODY", "AISDK_BODY", "ServerProcess", "app", "paced_frames", "uvicorn_stack"]

AISDK_BODY = {
    "id": "thread_1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Search, then answer."}]}],
    "trigger": "submit-message",
}
"""A ``useChat`` request body."""

AGUI_BODY = {
    "threadId": "thread_1",
    "runId": "run_1",
    "state": {},
    "messages": [{"id": "u1", "role": "user", "content": "Search, then answer."}],
    "tools": [],
    "context": [],
    "forwardedProps": {},
}
"""An AG-UI ``RunAgentInput``."""


class _PerFrameResponse(aisdk.UIMessageStreamResponse):
    max_batch_bytes = 0


def paced_frames(frames: int) -> int:
    """How many text deltas the paced agent yields so that the AI SDK stream has ``frames`` chunks:
    ``start``, ``text-start``, the deltas, ``text-end``, ``finish`` and ``[DONE]``."""
    return frames - 5


async def _encoded(protocol: str, w: Workload) -> list[bytes]:
    """W as the frames streamkit sends for it, one bytes object per frame."""
    if protocol == "aisdk":
        stream = aisdk.encode(chat_events(w))
    else:
        stream = agui.encode(chat_events(w), thread_id=w.thread_id, run_id=w.run_id)
    body = b"".join([chunk async for chunk in stream])
    return [frame + b"\n\n" for frame in body.split(b"\n\n") if frame]


def app(
    frames: int = 200, interval: float = 0.05, state_docs: int = 0, hold: float = 60.0, heartbeat: float = 15.0
) -> Starlette:
    """The benchmark app (see the module docstring)."""
    w = workload()
    states: list[Any] = []
    plain: dict[str, list[bytes]] = {}
    paced_bytes: list[bytes] = []
    idle_bytes: list[bytes] = []

    async def w_agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        async for event in agent_events(w):
            yield event

    async def paced_agent(run: RunInput, pause: float | None = None) -> AsyncIterator[ChatEvent]:
        sleep = asyncio.sleep
        interval_ = interval if pause is None else pause
        await sleep(interval_)
        yield RunStarted(thread_id=run.thread_id, run_id=run.run_id)
        await sleep(interval_)
        yield TextStart(id="t")
        for i in range(paced_frames(frames)):
            await sleep(interval_)
            yield TextDelta(id="t", delta=f"w{i} ")
        await sleep(interval_)
        yield TextEnd(id="t")
        await sleep(interval_)
        yield RunFinished()

    async def idle_agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunStarted(thread_id=run.thread_id, run_id=run.run_id)
        await asyncio.sleep(hold)
        yield RunFinished()

    async def idle_plain(request: Request) -> Response:
        await request.json()  # a chat endpoint reads its request; the baseline does the least of that

        async def frames_out() -> AsyncIterator[bytes]:
            first, rest = idle_bytes
            yield first
            await asyncio.sleep(hold)
            yield rest

        return StreamingResponse(frames_out(), media_type="text/event-stream")

    async def state_agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunStarted(thread_id=run.thread_id, run_id=run.run_id)
        deadline = time.monotonic() + 120  # a bound, should the client's leaving go unnoticed
        while time.monotonic() < deadline:
            for state in states:
                await asyncio.sleep(0)
                yield StateUpdate(state=state)
        yield RunFinished()

    async def frames_of(protocol: str) -> AsyncIterator[bytes]:
        # An async iterator: Starlette would move each step of a sync one to a worker thread.
        for frame in plain[protocol]:
            yield frame

    async def plain_stream(request: Request) -> Response:
        protocol = request.path_params["protocol"]
        return StreamingResponse(frames_of(protocol), media_type="text/event-stream")

    async def paced_plain(request: Request) -> Response:
        await request.json()  # a chat endpoint reads its request; the baseline does the least of that

        async def frames_out() -> AsyncIterator[bytes]:
            sleep = asyncio.sleep
            for frame in paced_bytes:
                await sleep(interval)
                yield frame

        return StreamingResponse(frames_out(), media_type="text/event-stream")

    async def per_frame(request: Request) -> Response:
        await request.body()
        return _PerFrameResponse(aisdk.encode(agent_events(w)))

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for protocol in ("aisdk", "agui"):
            plain[protocol] = await _encoded(protocol, w)
        run = RunInput(thread_id="thread_1", run_id="run_1")
        body = b"".join([chunk async for chunk in aisdk.encode(paced_agent(run, pause=0.0))])
        paced_bytes[:] = [frame + b"\n\n" for frame in body.split(b"\n\n") if frame]
        paced_bytes[-2:] = [paced_bytes[-2] + paced_bytes[-1]]  # finish and [DONE] leave together
        idle = b"".join([chunk async for chunk in aisdk.encode([RunStarted(thread_id="t", run_id="r"), RunFinished()])])
        start, _, rest = idle.partition(b"\n\n")
        idle_bytes[:] = [start + b"\n\n", rest]  # the first frame, then the rest once the hold is over
        if state_docs:
            states[:] = state_updates(state_docs, 6)
        yield

    routes: list[BaseRoute] = [
        *aisdk.routes(w_agent, path="/aisdk", options=StreamOptions(heartbeat=15.0)),
        *agui.routes(w_agent, path="/agui", options=StreamOptions(heartbeat=15.0)),
        *aisdk.routes(paced_agent, path="/paced", options=StreamOptions(heartbeat=15.0)),
        *agui.routes(state_agent, path="/state", options=StreamOptions(heartbeat=15.0)),
        *aisdk.routes(idle_agent, path="/idle/aisdk", options=StreamOptions(heartbeat=heartbeat)),
        *agui.routes(idle_agent, path="/idle/agui", options=StreamOptions(heartbeat=heartbeat)),
        *aisdk.routes(idle_agent, path="/idle/detached", options=StreamOptions(heartbeat=heartbeat, detach_runs=True)),
        *aisdk.routes(
            idle_agent, path="/idle/resumable", options=StreamOptions(heartbeat=heartbeat, resumable=MemoryStore())
        ),
        Route("/idle/plain", idle_plain, methods=["POST"]),
        Route("/aisdk/per-frame", per_frame, methods=["POST"]),
        Route("/plain/{protocol}", plain_stream, methods=["GET"]),
        Route("/paced-plain", paced_plain, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def main() -> None:
    """Serve the benchmark app on loopback."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m bench.server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--state-docs", type=int, default=0, help="documents in the /state route's state")
    parser.add_argument("--hold", type=float, default=60.0, help="how long the idle routes' streams wait, s")
    parser.add_argument("--heartbeat", type=float, default=15.0, help="the idle routes' heartbeat, s")
    parser.add_argument("--loop", default="auto", help="uvicorn's event loop: auto, asyncio or uvloop")
    parser.add_argument("--http", default="auto", help="uvicorn's HTTP implementation: auto, h11 or httptools")
    args = parser.parse_args()
    uvicorn.run(
        app(args.frames, args.interval, args.state_docs, args.hold, args.heartbeat),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        access_log=False,
        loop=args.loop,
        http=args.http,
        backlog=4096,
        timeout_keep_alive=30,
    )


def uvicorn_stack(loop: str = "auto", http: str = "auto") -> str:
    """What uvicorn runs on with these settings ("auto" takes uvloop and httptools when installed)."""
    if loop == "auto":
        loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    if http == "auto":
        http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"uvicorn {uvicorn_version()} ({loop}, {http})"


def uvicorn_version() -> str:
    """The installed uvicorn's version."""
    from importlib.metadata import version

    return version("uvicorn")


class ServerProcess:
    """The benchmark server in a subprocess on a free loopback port; a context manager."""

    def __init__(
        self,
        frames: int = 200,
        interval: float = 0.05,
        loop: str = "auto",
        http: str = "auto",
        state_docs: int = 0,
        hold: float = 60.0,
        heartbeat: float = 15.0,
    ) -> None:
        self.args = ["--frames", str(frames), "--interval", str(interval), "--loop", loop, "--http", http]
        self.args += ["--state-docs", str(state_docs), "--hold", str(hold), "--heartbeat", str(heartbeat)]
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """The server process id."""
        assert self.process is not None
        return self.process.pid

    def __enter__(self) -> ServerProcess:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = [sys.executable, "-m", "bench.server", "--port", str(self.port), *self.args]
        self.process = subprocess.Popen(cmd, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the benchmark server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                    if s.recv(100).startswith(b"HTTP/1.1 200"):
                        return self
            except OSError:
                time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError("the benchmark server did not start within 30 s")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


if __name__ == "__main__":
    main()
