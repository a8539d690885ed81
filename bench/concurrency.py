"""Benchmark 3, concurrency: many paced streams at once on one server process.

``--streams`` clients (1,000 by default) each open a stream of ``--frames`` frames (200) that the agent
paces ``--interval`` seconds apart (50 ms): it sleeps that long before every event it yields. The server
(``bench.server``, one uvicorn process) serves them through streamkit's AI SDK route.

The clients are raw asyncio protocols in this process (``bench.clients``: one loopback connection each,
HTTP/1.1 parsed only as far as needed), because a full HTTP client per stream would cost more CPU than the
server and measure itself. Reported: how many streams completed (status 200, every frame, the chunked
body ended); the inter-frame gaps seen by the clients as a ratio of the pacing (all gaps after each
stream's first frame; frames that arrive in one read count as a gap of 0); the server's RSS with no stream
open and at its peak while every stream is open, per open stream; and the CPU time of the server and of
the clients over the run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil  # type: ignore[import-untyped]

from .clients import percentile, run_clients
from .measure import Target, table
from .server import AISDK_BODY, ServerProcess, uvicorn_stack

__all__ = ["ConcurrencyReport", "run"]


@dataclass
class ConcurrencyReport:
    """The concurrency benchmark's table, targets and problems."""

    text: str
    targets: list[Target]
    problems: list[str]


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
        results, stats = asyncio.run(run_clients(server.port, streams, frames, interval, server.pid, path.encode()))
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
        p99=percentile(gaps, 0.99) / interval if gaps else nan,
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
