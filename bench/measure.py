"""Timing, statistics and reporting shared by the benchmarks.

Every sample is one whole run of W, timed with ``time.perf_counter`` with the garbage collector paused
(as ``timeit`` does) and collected between samples. Implementations are sampled round-robin, so drift
on a shared machine hits all of them alike; the reported figure is the median of the samples.
"""

from __future__ import annotations

import asyncio
import gc
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Case", "Target", "machine", "run_cases", "table", "verdicts"]


@dataclass
class Case:
    """One implementation to time: ``run`` returns the bytes it produced (sync, or a coroutine)."""

    name: str
    run: Callable[[], bytes] | Callable[[], Awaitable[bytes]]
    is_async: bool = False
    times: list[float] = field(default_factory=list)
    output: bytes = b""

    @property
    def frames(self) -> int:
        """How many SSE frames the implementation wrote for W."""
        return self.output.count(b"\n\n")

    @property
    def median(self) -> float:
        """Median seconds per run of W."""
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        """Best (lowest) seconds per run of W."""
        return min(self.times)

    @property
    def us_per_frame(self) -> float:
        """Median microseconds per frame."""
        return self.median / self.frames * 1e6

    @property
    def frames_per_s(self) -> float:
        """Frames per second at the median."""
        return self.frames / self.median


def _sample(case: Case, loop: asyncio.AbstractEventLoop) -> None:
    gc.collect()
    gc.disable()
    try:
        if case.is_async:

            async def timed() -> tuple[float, bytes]:
                t0 = time.perf_counter()
                out = await case.run()  # type: ignore[misc]
                return time.perf_counter() - t0, out

            elapsed, out = loop.run_until_complete(timed())
        else:
            t0 = time.perf_counter()
            out = case.run()  # type: ignore[assignment]
            elapsed = time.perf_counter() - t0
    finally:
        gc.enable()
    case.times.append(elapsed)
    case.output = out


def run_cases(cases: Sequence[Case], repeat: int, warmup: int = 2, progress: bool = True) -> None:
    """Sample every case ``repeat`` times, round-robin, after ``warmup`` untimed rounds."""
    loop = asyncio.new_event_loop()
    try:
        for _ in range(warmup):
            for case in cases:
                _sample(case, loop)
                case.times.clear()
        for i in range(repeat):
            for case in cases:
                _sample(case, loop)
            if progress:
                print(f"\r  sampled {i + 1}/{repeat}", end="", file=sys.stderr, flush=True)
        if progress:
            print("\r" + " " * 30 + "\r", end="", file=sys.stderr, flush=True)
    finally:
        loop.close()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table, columns padded for reading in a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


@dataclass
class Target:
    """A target of the performance issue and whether this run met it."""

    name: str
    measured: str
    required: str
    passed: bool

    def line(self) -> str:
        """``PASS``/``FAIL`` with the name and numbers."""
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.measured} (target {self.required})"


def verdicts(targets: Sequence[Target]) -> str:
    """One ``PASS``/``FAIL`` line per target."""
    return "\n".join(t.line() for t in targets)


def machine() -> str:
    """A one-line description of the machine and interpreter."""
    import os

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for row in f:
                if row.startswith("model name"):
                    cpu = row.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )
