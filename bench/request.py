"""Benchmark 7, a large request body: what parsing it costs, and what it costs the other requests meanwhile.

The body is the largest a ``useChat`` client may send within the default ``Limits``: 7.9 MiB of 318,720 empty
text parts (the shape that costs the most per byte), in 160 user messages of 1,992 parts each (within
``max_message_parts``, ``max_message_bytes`` and ``max_messages``). In process, each stage alone, median of
the runs: ``json.loads`` of the text (the floor), :func:`streamkit.http.parse_json` (the same plus the depth
check and the surrogate check), the model validation in one call (``ChatRequest.model_validate``), and the
route's whole work on the body as it runs in the worker thread (decode, depth, validation message by message,
``to_run_input``); the ratios are against ``json.loads`` measured in the same run.

On the wire: the benchmark server (``bench.server``, one uvicorn process) gets the body on ``POST /aisdk``
while a client sends ``GET /health`` every 5 ms; the worst and the median latency of those requests until the
large body's response starts (its parse done) is the figure, beside the same client with no large body, and
the same in the 2 s after (shown, not a target): there the run streams its answer and the collector scans
the heap once with the body's objects in it, a pause that grows with the number of objects alive.
The same 318,720 parts in 4 messages of 79,680 (the body of the report that asked for this) are refused
with a 413 naming ``limits.max_message_parts``; its answer time is reported too.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamkit.aisdk.request import ChatRequest, parse_chat_request, to_run_input
from streamkit.http import Limits, parse_json
from streamkit.offload import run_offloaded

from .measure import Target, table
from .server import ServerProcess

__all__ = ["RequestReport", "legal_body", "run"]

PARTS = 318_720
LATENCY_TARGET = 0.050  # seconds: a concurrent request while the large body parses
COST_TARGET = 3.0  # the route's work on the body against json.loads + one-call validation


@dataclass
class RequestReport:
    """The tables and the targets."""

    text: str
    targets: list[Target] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def legal_body(messages: int = 160) -> bytes:
    """The ``useChat`` body of :data:`PARTS` empty text parts in ``messages`` user messages, as JSON bytes."""
    per = PARTS // messages
    parts = [{"type": "text", "text": ""}] * per
    body = {"id": "c", "messages": [{"id": f"m{i}", "role": "user", "parts": parts} for i in range(messages)]}
    return json.dumps(body, separators=(",", ":")).encode()


def _timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    return statistics.median(times)


def _route_work(raw: bytes, limits: Limits) -> Any:
    body = parse_chat_request(parse_json(raw.decode(), limits), limits)
    return to_run_input(body)


def _stages(raw: bytes, repeat: int) -> dict[str, float]:
    limits = Limits()
    text = raw.decode()
    data = json.loads(text)
    request = ChatRequest.model_validate(data)
    return {
        "json.loads": _timed(lambda: json.loads(text), repeat),
        "parse_json (loads, depth, surrogates)": _timed(lambda: parse_json(text, limits), repeat),
        "validation, one call": _timed(lambda: ChatRequest.model_validate(data), repeat),
        "to_run_input": _timed(lambda: to_run_input(request), repeat),
        "the route's work, in its worker": _timed(lambda: run_offloaded(_route_work, raw, limits), repeat),
    }


async def _status(port: int, body: bytes) -> tuple[int, float]:
    """POST ``body`` to ``/aisdk``; its status and the seconds until the status line arrived."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        b"POST /aisdk HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
    )
    t0 = time.perf_counter()
    writer.write(head + body)
    await writer.drain()
    line = await reader.readline()
    elapsed = time.perf_counter() - t0
    writer.close()
    return int(line.split()[1]), elapsed


async def _health(port: int) -> float:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    t0 = time.perf_counter()
    writer.write(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
    await writer.drain()
    await reader.read()
    elapsed = time.perf_counter() - t0
    writer.close()
    return elapsed


async def _beside(port: int, body: bytes | None, seconds: float = 1.0) -> tuple[list[float], list[float], int, float]:
    """``GET /health`` latencies every 5 ms while ``body`` is posted (until its status arrives), or for
    ``seconds`` with no body; then those of the next ``seconds`` (the run streams, the heap settles); the large
    body's status and answer time."""
    latencies: list[float] = []
    done = False

    async def probe() -> None:
        while not done:
            latencies.append(await _health(port))
            await asyncio.sleep(0.005)

    task = asyncio.create_task(probe())
    await asyncio.sleep(0.05)
    first = len(latencies) + 1  # the ones before ran before the body was sent
    status, elapsed = 0, 0.0
    if body is None:
        await asyncio.sleep(seconds)
    else:
        status, elapsed = await _status(port, body)
    split = len(latencies)
    await asyncio.sleep(seconds)
    done = True
    await task
    return latencies[first:split], latencies[split:], status, elapsed


def run(repeat: int = 5) -> RequestReport:
    """Measure both parts of the benchmark; the report."""
    raw = legal_body()
    refused = legal_body(4)
    stages = _stages(raw, repeat)
    floor = stages["json.loads"]
    rows = [[name, f"{t * 1000:.0f}", f"{t / floor:.1f}x"] for name, t in stages.items()]
    text = f"## A large request body ({len(raw) / 2**20:.1f} MiB, {PARTS:,} parts)\n\n"
    text += table(["stage", "ms", "vs json.loads"], rows) + "\n"
    problems: list[str] = []
    with ServerProcess() as server:
        asyncio.run(_beside(server.port, None, 0.3))  # warm up
        alone, _, _, _ = asyncio.run(_beside(server.port, None))
        beside, after, status, elapsed = asyncio.run(_beside(server.port, raw, 2.0))
        _, _, status_refused, elapsed_refused = asyncio.run(_beside(server.port, refused))
    if status != 200:
        problems.append(f"the legal body was answered {status}")
    if status_refused != 413:
        problems.append(f"the body of 4 messages of {PARTS // 4:,} parts was answered {status_refused}, not 413")
    if not beside:
        problems.append("no concurrent request completed while the large body parsed")
    worst = max(beside) if beside else float("nan")
    rows_w = [
        ["no large body", len(alone), f"{statistics.median(alone) * 1000:.1f}", f"{max(alone) * 1000:.1f}", ""],
        [
            f"while the body parses ({elapsed:.2f} s to its {status})",
            len(beside),
            f"{statistics.median(beside) * 1000:.1f}" if beside else "-",
            f"{worst * 1000:.1f}",
            "",
        ],
        [
            "the 2 s after (the run streams, the heap is collected)",
            len(after),
            f"{statistics.median(after) * 1000:.1f}" if after else "-",
            f"{max(after) * 1000:.1f}" if after else "-",
            "",
        ],
        ["4 messages of 79,680 parts", "", "", "", f"{status_refused} in {elapsed_refused * 1000:.0f} ms"],
    ]
    text += "\n" + table(["GET /health every 5 ms", "requests", "median ms", "worst ms", "large body"], rows_w) + "\n"
    cost = stages["the route's work, in its worker"] / (floor + stages["validation, one call"])
    targets = [
        Target(
            "a concurrent request's latency while a 7.9 MiB body parses",
            f"{worst * 1000:.1f} ms",
            f"< {LATENCY_TARGET * 1000:.0f} ms",
            worst < LATENCY_TARGET,
        ),
        Target(
            "the route's work on the body against json.loads + one-call validation",
            f"{cost:.2f}x",
            f"<= {COST_TARGET:g}x",
            cost <= COST_TARGET,
        ),
    ]
    return RequestReport(text, targets, problems)
