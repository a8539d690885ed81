"""What recording a run with OpenTelemetry costs: ``python -m bench.telemetry``.

Runs go through the endpoint pipeline without HTTP (:func:`streamkit.serve.run_frames`, then the response's
content as :func:`streamkit.serve.serve_frames` wraps it) and are drained; the time per run is the best of
``--repeat`` batches, the batches off and on alternating. Off: no provider configured (what every app
without OpenTelemetry runs). On: the SDK's tracer provider with a span exporter that drops everything, and the
SDK's meter provider (what recording costs, without an exporter's own work). Two runs: W (the encode
benchmark's workload, 5280 frames with 8 tool calls and 2 steps) and a short one (a text block of 20 deltas).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from streamkit.aisdk import AISDKMapper
from streamkit.events import ChatEvent, RunFinished, RunInput, TextDelta, TextEnd, TextStart
from streamkit.serve import StreamOptions, run_frames
from streamkit.telemetry import Telemetry, run_of, watched

from .workload import agent_events, workload


async def _short(run: RunInput) -> AsyncIterator[ChatEvent]:
    yield TextStart(id="t")
    for i in range(20):
        yield TextDelta(id="t", delta=f"word{i} ")
    yield TextEnd(id="t")
    yield RunFinished()


def _options(on: bool) -> StreamOptions:
    if not on:
        return StreamOptions()
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(Drop()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return StreamOptions(telemetry=Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider))


async def _one(agent: Callable[[RunInput], AsyncIterator[ChatEvent]], options: StreamOptions, i: int) -> int:
    run = RunInput(thread_id="t", run_id=f"r{i}")
    mapper = AISDKMapper(message_id="m")
    content = watched(run_frames(agent, run, mapper, options=options), run_of(mapper))
    size = 0
    iterator = aiter(content)
    try:
        async for chunk in iterator:
            size += len(chunk)
    finally:
        await iterator.aclose()  # type: ignore[attr-defined]
    return size


async def _best(agent: Callable[[RunInput], AsyncIterator[ChatEvent]], runs: int, repeat: int) -> tuple[float, float]:
    """The best time per run off and on, their batches alternating (so both see the same machine)."""
    options = (_options(False), _options(True))
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for which, option in enumerate(options):
            started = time.perf_counter()
            for i in range(runs):
                await _one(agent, option, i)
            best[which] = min(best[which], (time.perf_counter() - started) / runs)
    return best[0], best[1]


def main(argv: list[str] | None = None) -> None:
    """Print the time per run, off and on, for W and for a short run."""
    parser = argparse.ArgumentParser(prog="python -m bench.telemetry", description=__doc__)
    parser.add_argument("--repeat", type=int, default=15, help="batches per case (default 15)")
    args = parser.parse_args(argv)
    w = workload()

    def w_agent(run: RunInput) -> AsyncIterator[ChatEvent]:
        return agent_events(w)

    cases = (("W (5280 frames, 8 tools, 2 steps)", w_agent, 5), ("short (23 events)", _short, 200))
    print("| run | off, µs/run | on (SDK, dropping exporter), µs/run | cost of recording, µs/run |")
    print("|---|---|---|---|")
    for name, agent, runs in cases:
        off, on = asyncio.run(_best(agent, runs, args.repeat))
        print(f"| {name} | {off * 1e6:.0f} | {on * 1e6:.0f} | {(on - off) * 1e6:.0f} |")


if __name__ == "__main__":
    main()
