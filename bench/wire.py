"""Benchmark 2, wire: one stream of W over loopback, uvicorn to an httpx client.

streamkit's own route (request parsing, the agent constructing W's events, map, encode, the SSE
response) against a plain Starlette ``StreamingResponse`` of the same bytes, pre-encoded, one frame per
chunk. The server runs in its own process (``bench.server``); the client reads each body to its end.
A sample is the time from sending the request to the last byte; the two are sampled alternately and the
median is reported. Both bodies are compared byte for byte first.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from .measure import Target, table
from .server import AGUI_BODY, AISDK_BODY, ServerProcess, uvicorn_stack

__all__ = ["WireReport", "run"]


@dataclass
class WireReport:
    """The wire benchmark's table, targets and problems."""

    text: str
    targets: list[Target]
    problems: list[str]


async def _read(client: httpx.AsyncClient, method: str, url: str, body: object | None) -> tuple[float, bytes]:
    chunks: list[bytes] = []
    t0 = time.perf_counter()
    async with client.stream(method, url, json=body) as response:
        response.raise_for_status()
        async for chunk in response.aiter_raw():
            chunks.append(chunk)
    return time.perf_counter() - t0, b"".join(chunks)


async def _measure(base: str, protocols: Iterable[str], repeat: int) -> tuple[list[list[str]], list[Target], list[str]]:
    rows: list[list[str]] = []
    targets: list[Target] = []
    problems: list[str] = []
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        for protocol in protocols:
            title = "AI SDK" if protocol == "aisdk" else "AG-UI"
            body = AISDK_BODY if protocol == "aisdk" else AGUI_BODY
            cases = {
                "plain": ("GET", f"/plain/{protocol}", None),
                "streamkit": ("POST", f"/{protocol}", body),
            }
            if protocol == "aisdk":
                cases["per-frame"] = ("POST", "/aisdk/per-frame", body)
            bodies = {name: (await _read(client, *case))[1] for name, case in cases.items()}
            for name, data in bodies.items():
                if data != bodies["plain"]:
                    problems.append(f"[wire {protocol}] the {name} body differs from the pre-encoded one")
            frames = bodies["plain"].count(b"\n\n")
            times: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(repeat):
                for name, case in cases.items():
                    times[name].append((await _read(client, *case))[0])
            medians = {name: statistics.median(t) for name, t in times.items()}
            plain = medians["plain"]
            labels = {
                "plain": f"plain StreamingResponse of the pre-encoded frames ({title})",
                "streamkit": f"streamkit route, agent streaming W ({title})",
                "per-frame": f"streamkit, coalescing off: one write per frame ({title})",
            }
            for name, median in medians.items():
                rows.append(
                    [
                        labels[name],
                        f"{frames}",
                        f"{median * 1e3:.1f}",
                        f"{frames / median:,.0f}",
                        f"{plain / median:.2f}x",
                    ]
                )
            ratio = plain / medians["streamkit"]
            targets.append(
                Target(
                    f"wire ({title}): frame rate vs plain StreamingResponse", f"{ratio:.2f}x", ">= 0.70x", ratio >= 0.7
                )
            )
    return rows, targets, problems


def run(
    repeat: int = 11, protocols: Iterable[str] = ("aisdk", "agui"), loop: str = "auto", http: str = "auto"
) -> WireReport:
    """Run the wire benchmark: ``repeat`` alternating samples per protocol, median reported."""
    with ServerProcess(loop=loop, http=http) as server:
        rows, targets, problems = asyncio.run(_measure(server.url, list(protocols), repeat))
    text = "\n".join(
        [
            f"### Wire: one stream of W over loopback, {uvicorn_stack(loop, http)} to httpx (median of {repeat})\n",
            table(["server", "frames", "ms per stream", "frames/s", "frame rate vs plain"], rows),
            "",
        ]
    )
    return WireReport(text, targets, problems)
