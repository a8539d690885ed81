"""Benchmark 3, concurrency: many paced streams at once on one server process.

``--streams`` clients (1,000 by default) each open a stream of ``--frames`` frames (200) that the agent
paces ``--interval`` seconds apart (50 ms): it sleeps that long before every event it yields. The server
(``bench.server``, one uvicorn process) serves them through streamkit's AI SDK route.

The clients are raw asyncio protocols in this process (one loopback connection each, HTTP/1.1 parsed
only as far as needed), because a full HTTP client per stream would cost more CPU than the server and
measure itself. Reported: how many streams completed (status 200, every frame, the chunked body ended);
the inter-frame gaps seen by the clients as a ratio of the pacing (all gaps after each stream's first
frame; frames that arrive in one read count as a gap of 0); the server's RSS with no stream open and at
its peak while every stream is open, per open stream; and the CPU time of the server and of the
clients over the run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson
import psutil  # type: ignore[import-untyped]

from .measure import Target, table
from .server import AISDK_BODY, ServerProcess, uvicorn_stack

__all__ = ["ConcurrencyReport", "run"]


@dataclass
class _Stream:
    """One client stream: what arrived and when."""

    arrivals: list[float] = field(default_factory=list)
    status: int = 0
    ended: bool = False
    error: str | None = None


class _Client(asyncio.Protocol):
    """An HTTP/1.1 client for one chunked SSE response, noting each frame's arrival time."""

    def __init__(self, request: bytes, stream: _Stream, done: asyncio.Future[None]) -> None:
        self.request = request
        self.stream = stream
        self.done = done
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
        self.stream.arrivals.extend([now] * frames)
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


@dataclass
class ConcurrencyReport:
    """The concurrency benchmark's table, targets and problems."""

    text: str
    targets: list[Target]
    problems: list[str]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _run_clients(
    port: int, streams: int, frames: int, interval: float, server_pid: int, path: bytes = b"/paced"
) -> tuple[list[_Stream], dict[str, float]]:
    server = psutil.Process(server_pid)
    loop = asyncio.get_running_loop()
    body = orjson.dumps(AISDK_BODY)
    request = (
        b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (path, len(body), body)
    )
    results = [_Stream() for _ in range(streams)]
    done = [loop.create_future() for _ in range(streams)]
    stats: dict[str, float] = {"rss_peak": 0.0, "open_at_peak": 0.0}

    async def sample() -> None:
        while True:
            open_now = sum(1 for s in results if s.arrivals and not s.ended)
            rss = server.memory_info().rss
            if open_now == streams and rss > stats["rss_peak"]:
                stats["rss_peak"] = rss
                stats["open_at_peak"] = open_now
            await asyncio.sleep(0.25)

    async def connect(i: int) -> None:
        try:
            await loop.create_connection(lambda: _Client(request, results[i], done[i]), "127.0.0.1", port)
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
class _Outcome:
    complete: int
    p50: float
    p99: float
    worst: float
    rss_idle: float
    rss_peak: float
    per_stream: float
    wall: float
    server_cpu: float
    client_cpu: float


def _one(path: str, streams: int, frames: int, interval: float, problems: list[str], loop: str, http: str) -> _Outcome:
    """One run against a fresh server process (so that its RSS says what these streams cost)."""
    with ServerProcess(frames=frames, interval=interval, loop=loop, http=http) as server:
        # Warm the server up (imports, first requests), then take its idle RSS.
        async def warm() -> None:
            import httpx

            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                for _ in range(3):
                    await client.post("/aisdk", json=AISDK_BODY)
                    await client.get("/plain/aisdk")

        asyncio.run(warm())
        time.sleep(1.0)
        rss_idle = psutil.Process(server.pid).memory_info().rss
        results, stats = asyncio.run(_run_clients(server.port, streams, frames, interval, server.pid, path.encode()))
    complete = [s for s in results if s.status == 200 and s.ended and len(s.arrivals) == frames and s.error is None]
    for s in results:
        if s not in complete and len(problems) < 5:
            problems.append(
                f"[concurrency {path}] a stream did not complete: status {s.status}, {len(s.arrivals)} frames, "
                f"ended={s.ended}, error={s.error}"
            )
    gaps = [b - a for s in results for a, b in zip(s.arrivals[1:], s.arrivals[2:], strict=False)]
    nan = float("nan")
    return _Outcome(
        complete=len(complete),
        p50=statistics.median(gaps) / interval if gaps else nan,
        p99=_percentile(gaps, 0.99) / interval if gaps else nan,
        worst=max(gaps) / interval if gaps else nan,
        rss_idle=rss_idle,
        rss_peak=stats["rss_peak"],
        per_stream=(stats["rss_peak"] - rss_idle) / streams if stats["rss_peak"] else nan,
        wall=stats["wall"],
        server_cpu=stats["server_cpu"],
        client_cpu=stats["client_cpu"],
    )


def run(
    streams: int = 1000,
    frames: int = 200,
    interval: float = 0.05,
    baseline: bool = True,
    loop: str = "auto",
    http: str = "auto",
) -> ConcurrencyReport:
    """Run the concurrency benchmark: streamkit's route, then (``baseline``) a plain ``StreamingResponse``
    of the same frames, paced the same way, each against a fresh server process."""
    problems: list[str] = []
    runs = {
        "streamkit route (agent paced, map + encode)": _one("/paced", streams, frames, interval, problems, loop, http)
    }
    if baseline:
        runs["plain StreamingResponse (pre-encoded, paced)"] = _one(
            "/paced-plain", streams, frames, interval, problems, loop, http
        )

    def row(name: str, value: Callable[[_Outcome], str]) -> list[str]:
        return [name, *(value(o) for o in runs.values())]

    rows = [
        row("streams completed", lambda o: f"{o.complete}/{streams}"),
        row("inter-frame gap p50 / p99 / max (x pacing)", lambda o: f"{o.p50:.2f} / {o.p99:.2f} / {o.worst:.2f}"),
        row("server RSS idle / all streams open", lambda o: f"{o.rss_idle / 2**20:.1f} / {o.rss_peak / 2**20:.1f} MiB"),
        row("server RSS per open stream", lambda o: f"{o.per_stream / 1024:.1f} KiB"),
        row("wall time", lambda o: f"{o.wall:.1f} s"),
        row("server CPU (one process)", lambda o: f"{o.server_cpu:.1f} s ({o.server_cpu / o.wall:.0%} of a core)"),
        row(
            "client CPU (asyncio protocols)", lambda o: f"{o.client_cpu:.1f} s ({o.client_cpu / o.wall:.0%} of a core)"
        ),
    ]
    sk = next(iter(runs.values()))
    targets = [
        Target(
            "concurrency: streams completed", f"{sk.complete}/{streams}", f"{streams}/{streams}", sk.complete == streams
        ),
        Target("concurrency: p99 inter-frame gap", f"{sk.p99:.2f}x the pacing", "<= 2x", sk.p99 <= 2),
        Target(
            "concurrency: server RSS per open stream",
            f"{sk.per_stream / 1024:.1f} KiB",
            "<= 50 KB",
            sk.per_stream <= 50_000,
        ),
    ]
    text = "\n".join(
        [
            f"### Concurrency: {streams} concurrent streams, {frames} frames each, {interval * 1000:.0f} ms apart, "
            f"one {uvicorn_stack(loop, http)} process\n",
            table(["measure", *runs], rows),
            "",
        ]
    )
    return ConcurrencyReport(text, targets, problems)
