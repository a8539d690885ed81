"""The benchmarks' raw asyncio SSE client: many paced streams from one process, each frame's arrival timed.

The clients are asyncio protocols (one loopback connection each, HTTP/1.1 parsed only as far as needed),
because a full HTTP client per stream would cost more CPU than the server and measure itself. The
concurrency benchmark (``bench.concurrency``) and the pacing run of the state benchmark (``bench.state``)
share them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import orjson
import psutil  # type: ignore[import-untyped]

from .server import AISDK_BODY

__all__ = ["Client", "IdleRun", "Stream", "percentile", "run_clients", "run_idle_clients"]


@dataclass
class Stream:
    """One client stream: what arrived and when."""

    arrivals: list[float] = field(default_factory=list)
    """When each frame (and each ``: ping`` heartbeat) arrived."""
    pings: int = 0
    status: int = 0
    ended: bool = False
    error: str | None = None


class Client(asyncio.Protocol):
    """An HTTP/1.1 client for one chunked SSE response, noting each frame's arrival time."""

    def __init__(
        self,
        request: bytes,
        stream: Stream,
        done: asyncio.Future[None],
        first: asyncio.Future[None] | None = None,
    ) -> None:
        self.request = request
        self.stream = stream
        self.done = done
        self.first = first  # set at the first frame
        self.head = b""
        self.in_body = False
        self.tail = b""  # the last bytes seen, to find a frame end split across reads
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        if not self.in_body:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            self.stream.status = int(self.head[9:12])
            data = self.head[end + 4 :]
            self.in_body = True
        seen = self.tail + data
        # Every SSE frame ends with a blank line; the chunked framing never holds "\n\n" (JSON escapes
        # newlines, and chunk sizes are wrapped in "\r\n").
        frames = seen.count(b"\n\n") - self.tail.count(b"\n\n")
        if b": ping" in data:
            self.stream.pings += data.count(b": ping\n\n")
        self.stream.arrivals.extend([now] * frames)
        if frames and self.first is not None and not self.first.done():
            self.first.set_result(None)
        self.tail = seen[-8:]
        if seen.endswith(b"\r\n0\r\n\r\n"):
            self.stream.ended = True
            if self.transport is not None:
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and self.stream.error is None:
            self.stream.error = repr(exc)
        if not self.done.done():
            self.done.set_result(None)
        if self.first is not None and not self.first.done():
            self.first.set_result(None)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank, no interpolation)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_clients(
    port: int, streams: int, frames: int, interval: float, server_pid: int, path: bytes = b"/paced"
) -> tuple[list[Stream], dict[str, float]]:
    """Open ``streams`` streams of ``path`` on ``port`` at once and read them to their end.

    Returns each stream and the run's statistics: ``wall``, the server's ``server_cpu`` and the clients'
    ``client_cpu`` (seconds), and ``rss_peak`` (the server's largest RSS while the most streams were open) with
    ``open_at_peak`` (how many).
    """
    server = psutil.Process(server_pid)
    loop = asyncio.get_running_loop()
    body = orjson.dumps(AISDK_BODY)
    request = (
        b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (path, len(body), body)
    )
    results = [Stream() for _ in range(streams)]
    done = [loop.create_future() for _ in range(streams)]
    stats: dict[str, float] = {"rss_peak": 0.0, "open_at_peak": 0.0}

    async def sample() -> None:
        # The largest RSS while the most streams were open (all of them, unless the first ended before the
        # last opened).
        while True:
            open_now = sum(1 for s in results if s.arrivals and not s.ended)
            rss = server.memory_info().rss
            if open_now > stats["open_at_peak"] or (open_now == stats["open_at_peak"] and rss > stats["rss_peak"]):
                stats["rss_peak"] = rss
                stats["open_at_peak"] = open_now
            await asyncio.sleep(0.25)

    connecting = asyncio.Semaphore(256)  # so that the server's accept backlog never overflows

    async def connect(i: int) -> None:
        try:
            async with connecting:
                await loop.create_connection(lambda: Client(request, results[i], done[i]), "127.0.0.1", port)
        except OSError as exc:
            results[i].error = repr(exc)
            done[i].set_result(None)

    cpu_server = server.cpu_times()
    cpu_client = time.process_time()
    started = time.monotonic()
    sampler = asyncio.ensure_future(sample())
    try:
        await asyncio.gather(*(connect(i) for i in range(streams)))
        budget = frames * interval * 3 + 30
        finished, _ = await asyncio.wait(done, timeout=budget)
        for i, fut in enumerate(done):
            if fut not in finished and results[i].error is None:
                results[i].error = "timed out"
    finally:
        sampler.cancel()
    wall = time.monotonic() - started
    cpu_after = server.cpu_times()
    stats["wall"] = wall
    stats["server_cpu"] = (cpu_after.user + cpu_after.system) - (cpu_server.user + cpu_server.system)
    stats["client_cpu"] = time.process_time() - cpu_client
    return results, stats


@dataclass
class IdleRun:
    """What :func:`run_idle_clients` saw: each stream, and the server's figures over the run's phases."""

    streams: list[Stream]
    open_wall: float
    """Seconds from the first connection to every stream's first frame."""
    open_cpu: float
    """The server's CPU seconds over that time."""
    rss_before: float
    rss_open: float
    """The server's largest RSS while the most streams were open (every one, unless the first had ended
    before the last opened)."""
    open_at_peak: int
    """How many streams were open then."""
    rss_after: float
    """The server's RSS once every stream had ended (and a pause)."""


async def run_idle_clients(
    port: int,
    path: bytes,
    bodies: list[bytes],
    server_pid: int,
    *,
    timeout: float,
    in_flight: int = 256,
    settle: float = 2.0,
) -> IdleRun:
    """Open one stream of ``path`` per request body in ``bodies`` (at most ``in_flight`` waiting for their
    first frame at once, so the server's accept backlog never overflows), keep them all open until the server
    ends them, and read them to their end, timing each frame's (and heartbeat's) arrival."""
    server = psutil.Process(server_pid)
    loop = asyncio.get_running_loop()
    head = b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
    results = [Stream() for _ in bodies]
    done = [loop.create_future() for _ in bodies]
    slots = asyncio.Semaphore(in_flight)

    async def connect(i: int) -> None:
        request = head % (path, len(bodies[i])) + b"connection: close\r\n\r\n" + bodies[i]
        first: asyncio.Future[None] = loop.create_future()
        async with slots:
            try:
                await loop.create_connection(lambda: Client(request, results[i], done[i], first), "127.0.0.1", port)
            except OSError as exc:
                results[i].error = repr(exc)
                done[i].set_result(None)
                return
            await first

    rss_before = server.memory_info().rss
    cpu = server.cpu_times()
    started = time.monotonic()
    await asyncio.gather(*(connect(i) for i in range(len(bodies))))
    open_wall = time.monotonic() - started
    cpu_open = server.cpu_times()
    rss_open = 0.0
    open_at_peak = 0
    pending = set(done)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        open_now = sum(1 for s in results if s.arrivals and not s.ended and s.error is None)
        if open_now >= open_at_peak:
            rss_open = max(rss_open if open_now == open_at_peak else 0.0, server.memory_info().rss)
            open_at_peak = open_now
        _, pending = await asyncio.wait(pending, timeout=0.5)
    for i, fut in enumerate(done):
        if fut in pending and results[i].error is None:
            results[i].error = "timed out"
    await asyncio.sleep(settle)
    return IdleRun(
        streams=results,
        open_wall=open_wall,
        open_cpu=(cpu_open.user + cpu_open.system) - (cpu.user + cpu.system),
        rss_before=rss_before,
        rss_open=rss_open,
        open_at_peak=open_at_peak,
        rss_after=server.memory_info().rss,
    )
