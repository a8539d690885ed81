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
import math
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
        per_stream=(stats["rss_peak"] - rss_idle) / stats["open_at_peak"] if stats["open_at_peak"] else nan,
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
    if baseline:
        plain = runs["plain StreamingResponse (pre-encoded, paced)"]
        ratio = sk.server_cpu / plain.server_cpu if plain.server_cpu else math.nan
        targets.append(
            Target("concurrency: server CPU of the paced run", f"{ratio:.2f}x plain", "<= 1.15x", ratio <= 1.15)
        )
    text = "\n".join(
        [
            f"### Concurrency: {streams} concurrent streams, {frames} frames each, {interval * 1000:.0f} ms apart, "
            f"one {uvicorn_stack(loop, http)} process\n",
            table(["measure", *runs], rows),
            "",
        ]
    )
    return ConcurrencyReport(text, targets, problems)


# --- idle streams ---------------------------------------------------------------------------------

IDLE_ROUTES = {
    "plain": "plain StreamingResponse",
    "aisdk": "AI SDK route",
    "agui": "AG-UI route",
    "detached": "AI SDK, detached run",
    "resumable": "AI SDK, resumable run (memory store)",
}
"""The idle routes of ``bench.server`` (``/idle/<name>``), the baseline first."""


@dataclass
class _Idle:
    served: int
    open_wall: float
    setup_cpu: float  # server CPU seconds per stream while the streams were opened
    per_stream: float  # bytes of server RSS per open stream
    rss_after: float
    worst_gap: float  # the longest wait between two writes of one stream after its first frame, s
    pings: int


def _bodies(route: str, streams: int) -> list[bytes]:
    """One request body per stream, each its own chat (a resumable run replaces the chat's previous one)."""
    import orjson

    from .server import AGUI_BODY

    if route == "agui":
        return [orjson.dumps({**AGUI_BODY, "threadId": f"thread_{i}", "runId": f"run_{i}"}) for i in range(streams)]
    return [orjson.dumps({**AISDK_BODY, "id": f"chat_{i}"}) for i in range(streams)]


def _idle_once(route: str, streams: int, hold: float, heartbeat: float, loop: str, http: str) -> _Idle:
    """``streams`` idle streams of one route against a fresh server process."""
    from .clients import run_idle_clients

    path = f"/idle/{route}"
    with ServerProcess(loop=loop, http=http, hold=hold, heartbeat=heartbeat) as server:
        # Warm the route up (imports, first requests): a few streams opened and left after their first frame.
        async def warm() -> None:
            import httpx

            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                for body in _bodies(route, 5):
                    async with client.stream("POST", path, content=body) as response:
                        async for _ in response.aiter_raw():
                            break

        asyncio.run(warm())
        time.sleep(1.0)
        run = asyncio.run(
            run_idle_clients(
                server.port, path.encode(), _bodies(route, streams), server.pid, timeout=hold * 2 + streams / 100 + 60
            )
        )
    served = [s for s in run.streams if s.status == 200 and s.ended and s.error is None]
    gaps = [b - a for s in served for a, b in zip(s.arrivals, s.arrivals[1:], strict=False)]
    return _Idle(
        served=len(served),
        open_wall=run.open_wall,
        setup_cpu=run.open_cpu / streams,
        per_stream=(run.rss_open - run.rss_before) / max(run.open_at_peak, 1),
        rss_after=run.rss_after,
        worst_gap=max(gaps, default=math.nan),
        pings=sum(s.pings for s in served),
    )


def run_idle(
    streams: int = 10_000,
    hold: float = 60.0,
    heartbeat: float = 15.0,
    repeat: int = 1,
    routes: tuple[str, ...] = tuple(IDLE_ROUTES),
    loop: str = "auto",
    http: str = "auto",
) -> ConcurrencyReport:
    """Idle streams: each route's ``streams`` streams send their first frame, wait ``hold`` seconds (heartbeats
    every ``heartbeat`` seconds of silence on streamkit's routes) and end; a fresh server process per route
    and repetition, the routes taken in turn ``repeat`` times (the fastest setup and the smallest memory
    kept). Against the plain ``StreamingResponse`` of the same bytes. The memory per open stream is taken
    while the most streams are open: all of them, unless opening them took longer than ``hold``."""
    problems: list[str] = []
    seen: dict[str, list[_Idle]] = {r: [] for r in routes}
    for _ in range(repeat):
        for route in routes:
            seen[route].append(_idle_once(route, streams, hold, heartbeat, loop, http))
    best = {
        r: _Idle(
            served=min(o.served for o in runs),
            open_wall=min(o.open_wall for o in runs),
            setup_cpu=min(o.setup_cpu for o in runs),
            per_stream=min(o.per_stream for o in runs),
            rss_after=min(o.rss_after for o in runs),
            worst_gap=max(o.worst_gap for o in runs),
            pings=min(o.pings for o in runs),
        )
        for r, runs in seen.items()
    }
    plain = best.get("plain")

    def vs(value: float, base: float | None) -> str:
        return f" ({value / base:.2f}x)" if base else ""

    rows = []
    for r, o in best.items():
        rows.append(
            [
                IDLE_ROUTES[r],
                f"{o.served:,}/{streams:,}",
                f"{o.per_stream / 1024:.1f} KiB" + vs(o.per_stream, plain.per_stream if plain else None),
                f"{o.setup_cpu * 1e6:.0f} us" + vs(o.setup_cpu, plain.setup_cpu if plain else None),
                f"{o.open_wall:.1f} s",
                f"{o.rss_after / 2**20:.0f} MiB" + vs(o.rss_after, plain.rss_after if plain else None),
                "-" if r == "plain" else f"{o.worst_gap / heartbeat:.2f}x ({o.pings:,} pings)",
            ]
        )
        if o.served < streams:
            problems.append(f"[idle {r}] {streams - o.served} of {streams} streams were not served to their end")
    targets = [
        Target(f"idle: {IDLE_ROUTES[r]}: streams served", f"{o.served:,}/{streams:,}", "all", o.served == streams)
        for r, o in best.items()
    ]
    for r, o in best.items():
        if r == "plain":
            continue
        targets.append(
            Target(
                f"idle: {IDLE_ROUTES[r]}: latest heartbeat",
                f"{o.worst_gap / heartbeat:.2f}x the interval",
                "<= 1.5x",
                o.worst_gap <= 1.5 * heartbeat,
            )
        )
        if plain is None:
            continue
        targets.append(
            Target(
                f"idle: {IDLE_ROUTES[r]}: RSS per open stream",
                f"{o.per_stream / plain.per_stream:.2f}x plain",
                "<= 1.2x",
                o.per_stream <= 1.2 * plain.per_stream,
            )
        )
        if r in ("aisdk", "agui"):
            targets.append(
                Target(
                    f"idle: {IDLE_ROUTES[r]}: server CPU to set up a stream",
                    f"{o.setup_cpu / plain.setup_cpu:.2f}x plain",
                    "<= 1.2x",
                    o.setup_cpu <= 1.2 * plain.setup_cpu,
                )
            )
            targets.append(
                Target(
                    f"idle: {IDLE_ROUTES[r]}: RSS after the streams ended",
                    f"{o.rss_after / plain.rss_after:.2f}x plain",
                    "<= 1.2x",
                    o.rss_after <= 1.2 * plain.rss_after,
                )
            )
    text = "\n".join(
        [
            f"### Idle streams: {streams:,} open at once, each one frame then {hold:g} s of silence (heartbeat "
            f"{heartbeat:g} s), one {uvicorn_stack(loop, http)} process, best of {repeat}\n",
            table(
                [
                    "route",
                    "served",
                    "RSS per open stream",
                    "server CPU to set up a stream",
                    "time to open all",
                    "RSS after all ended",
                    "latest heartbeat (x interval)",
                ],
                rows,
            ),
            "",
        ]
    )
    return ConcurrencyReport(text, targets, problems)


# --- how it scales ----------------------------------------------------------------------------------

SWEEP = (100, 1_000, 10_000)
"""The open streams of the sweep."""


@dataclass
class SweepPoint:
    """One size of the sweep: the AI SDK route and the plain response, paced the same way."""

    streams: int
    kib_per_stream: dict[str, float]
    p99_gap: dict[str, float]
    complete: dict[str, int]


def run_sweep(
    sizes: tuple[int, ...] = SWEEP,
    frames: int = 30,
    interval: float = 1.0,
    loop: str = "auto",
    http: str = "auto",
    svg: str | None = None,
) -> tuple[ConcurrencyReport, list[SweepPoint]]:
    """Paced streams at each size of ``sizes`` (``frames`` frames ``interval`` seconds apart, so that 10,000
    streams are 10,000 frames a second): server RSS per open stream and the p99 inter-frame gap, streamkit's
    AI SDK route against the plain ``StreamingResponse``, a fresh server process each. With ``svg``, the plot
    is written there (:mod:`bench.plot`)."""
    problems: list[str] = []
    points = []
    names = {"/paced": "streamkit", "/paced-plain": "plain"}
    for n in sizes:
        outcomes = {names[p]: _one(p, n, frames, interval, problems, loop, http) for p in names}
        points.append(
            SweepPoint(
                streams=n,
                kib_per_stream={k: o.per_stream / 1024 for k, o in outcomes.items()},
                p99_gap={k: o.p99 for k, o in outcomes.items()},
                complete={k: o.complete for k, o in outcomes.items()},
            )
        )
    rows = [
        [
            f"{p.streams:,}",
            *(f"{p.complete[k]:,}" for k in names.values()),
            *(f"{p.kib_per_stream[k]:.1f} KiB" for k in names.values()),
            f"{p.kib_per_stream['streamkit'] / p.kib_per_stream['plain']:.2f}x",
            *(f"{p.p99_gap[k]:.2f}x" for k in names.values()),
        ]
        for p in points
    ]
    header = [
        "open streams",
        "served (streamkit)",
        "served (plain)",
        "RSS / stream (streamkit)",
        "RSS / stream (plain)",
        "ratio",
        "p99 gap (streamkit)",
        "p99 gap (plain)",
    ]
    text = "\n".join(
        [
            f"### Scaling: paced streams ({frames} frames {interval:g} s apart), one {uvicorn_stack(loop, http)} "
            "process\n",
            table(header, rows),
            "",
        ]
    )
    if svg is not None:
        from .plot import scaling_svg

        with open(svg, "w", encoding="utf-8") as out:
            out.write(scaling_svg(points))
        text += f"(plot written to {svg})\n"
    return ConcurrencyReport(text, [], problems), points
