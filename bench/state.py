"""Benchmark 5, shared state at scale: what one ``StateUpdate`` costs as the state grows.

The state holds N documents of about 150 bytes (``{"title", "documents": [...], "meta"}``); each update
changes two leaves in two documents, the new state built beforehand by ``copy.deepcopy`` (as agents do; the
copy is the agent's cost and is not timed). Per update, in the same run: the AG-UI mapper (diff, frame,
encode), the AI SDK mapper (the whole state as a ``data-state`` part, encoded), ``jsonpatch.make_patch`` of
the same two states alone (the peers' method), and one ``orjson.dumps`` of the state (the floor). Two more
cases at the 1.6 MB size: a document inserted in the middle of the list, and a key renamed in a state whose
documents are keyed by id.

The event-loop stall: the updates stream through :func:`streamkit.frames.encode_frames` from an async agent
while a ticker task sleeps 1 ms at a time; the longest time the ticker waited beyond its 1 ms is the stall
(best of five runs, the states frozen out of the garbage collector; the ticker alone is measured too). The
stall at 15 MB is a target on both protocols (a large state is diffed or written off the loop, in pieces).

As served: at 1.6 MB, what one ``StateUpdate`` costs through ``encode_frames`` (an async agent, the update
mapped and written as a server does it: off the event loop, or on it once the stream's updates prove short),
from the moment the writer asks for the update to its frame's last byte, against one ``orjson.dumps`` of the
state measured in the same run; without and with a competing ticker task sleeping 1 ms at a time on the loop
(what the other streams of a server are to it). Each figure is the fastest of several runs' median update (of
ten; the states frozen out of the garbage collector: they are the agent's, built beforehand), the floor the
fastest of as many medians of ``orjson.dumps`` of the same states, taken between the runs.

Pacing: 99 clients each stream AI SDK text deltas paced 50 ms apart from one uvicorn server process
(``bench.server``, the concurrency benchmark's harness and clients) while one more client streams 1.6 MB
AG-UI state updates from the same process; the p99 gap between the paced streams' frames is reported against
the pacing, beside the same run without the state stream (runs alternating, median of three each).
"""

from __future__ import annotations

import asyncio
import copy
import gc
import itertools
import statistics
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import orjson

from streamkit.agui import AGUIMapper
from streamkit.aisdk.mapping import AISDKMapper
from streamkit.events import ChatEvent, RunStarted, StateUpdate
from streamkit.frames import encode_frames, frame, frame_end

from .clients import Client, Stream, run_clients
from .measure import Target, table
from .server import AGUI_BODY, ServerProcess
from .workload import document, state_updates

__all__ = ["StateReport", "run"]

SIZES = (100, 1000, 10000, 100000)  # documents: about 15 KB, 156 KB, 1.6 MB and 16 MB of JSON


@dataclass
class StateReport:
    """The tables and the targets."""

    text: str
    targets: list[Target] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def _agui_run(states: list[Any]) -> tuple[list[float], list[bytes]]:
    mapper = AGUIMapper(thread_id="t", run_id="r", state=states[0])
    mapper.feed(RunStarted())
    times, out = [], []
    for state in states[1:]:
        event = StateUpdate(state=state)
        chunk: list[bytes] = []
        times.append(_timed(lambda e=event, c=chunk: c.extend(frame(f) for f in mapper.feed(e))))  # type: ignore[misc]
        out.append(b"".join(chunk))
    return times, out


def _aisdk_run(states: list[Any]) -> list[float]:
    mapper = AISDKMapper()
    mapper.feed(RunStarted())
    mapper.feed(StateUpdate(state=states[0]))
    events = [StateUpdate(state=state) for state in states[1:]]
    return [_timed(lambda e=e: [frame(f) for f in mapper.feed(e)]) for e in events]  # type: ignore[misc]


def _check(states: list[Any], frames: list[bytes]) -> str | None:
    """Apply the frames to the first state as the client does; a problem, or None if every state came out."""
    current = states[0]
    for state, chunk in zip(states[1:], frames, strict=True):
        for line in chunk.split(b"\n\n"):
            if not line:
                continue
            event = orjson.loads(line[6:])
            if event["type"] == "STATE_SNAPSHOT":
                current = event["snapshot"]
            else:
                current = jsonpatch.apply_patch(current, event["delta"])
        if orjson.dumps(current, option=orjson.OPT_SORT_KEYS) != orjson.dumps(state, option=orjson.OPT_SORT_KEYS):
            return "an AG-UI delta did not reproduce the state"
    return None


async def _stall(states: list[Any], protocol: str) -> float:
    """The longest extra wait of a 1 ms ticker while the updates stream (seconds)."""
    worst = 0.0
    done = False

    async def ticker() -> None:
        nonlocal worst
        while not done:
            t0 = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, time.perf_counter() - t0 - 0.001)

    async def agent() -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        for state in states[1:]:
            await asyncio.sleep(0)
            yield StateUpdate(state=state)

    mapper: Any = None
    if protocol == "agui":
        mapper = AGUIMapper(thread_id="t", run_id="r", state=states[0])
    elif protocol == "aisdk":
        mapper = AISDKMapper(state=states[0])
    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    if mapper is None:  # the ticker alone: what the machine itself costs it
        await asyncio.sleep(0.5)
    else:
        # A 16 MB state part exceeds the default frame limit: raised, so that every update is measured.
        async for _ in encode_frames(agent(), mapper, max_frame_bytes=2**30):
            pass
    done = True
    await tick
    return worst


async def _through(states: list[Any], protocol: str, ticker: bool) -> float:
    """The median seconds of an update of ``states[2:]`` through ``encode_frames``, from the moment the writer
    asks for it to its frame's last byte (the first two states prime the mapper: the state the client holds and
    the first update), with or without a 1 ms ticker task on the loop."""
    done = False

    async def tick() -> None:
        while not done:
            await asyncio.sleep(0.001)

    starts: list[float] = []

    async def agent() -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        yield StateUpdate(state=states[1])
        await asyncio.sleep(0.01)  # the first update is out: the ticker runs, the timing starts
        for state in states[2:]:
            starts.append(time.perf_counter())
            yield StateUpdate(state=state)

    mapper: Any
    if protocol == "agui":
        mapper = AGUIMapper(thread_id="t", run_id="r", state=states[0])
    else:
        mapper = AISDKMapper(state=states[0])
    task = asyncio.create_task(tick()) if ticker else None
    ends: list[float] = []
    async for chunk in encode_frames(agent(), mapper, max_frame_bytes=2**30):
        if starts and len(ends) < len(starts) and frame_end(chunk):
            ends.append(time.perf_counter())
    done = True
    if task is not None:
        await task
    return statistics.median(b - a for a, b in zip(starts, ends, strict=True))


def _as_served(states: list[Any], reps: int) -> tuple[dict[tuple[str, bool], float], float]:
    """Per protocol, without and with the ticker, the fastest of ``reps`` runs' median update; and the fastest
    of as many medians of ``orjson.dumps`` of the same states, taken between the runs (round-robin, so drift
    hits all alike)."""
    best: dict[tuple[str, bool], float] = {}
    floor = float("inf")
    gc.collect()
    gc.freeze()
    try:
        for _ in range(reps):
            for key in itertools.product(("agui", "aisdk"), (False, True)):
                per = asyncio.run(_through(states, *key))
                best[key] = min(best.get(key, per), per)
                dumps = statistics.median(_timed(lambda s=s: orjson.dumps(s)) for s in states[2:])  # type: ignore[misc]
                floor = min(floor, dumps)
    finally:
        gc.unfreeze()
    return best, floor


async def _served(
    server: ServerProcess, streams: int, frames: int, interval: float, state: bool
) -> tuple[list[float], float]:
    """Gaps (in multiples of ``interval``) between the frames of ``streams`` paced AI SDK streams served by
    ``server`` over loopback, beside one AG-UI stream of state updates of 1.6 MB when ``state``; and how
    many state frames per second that stream received meanwhile."""
    loop = asyncio.get_running_loop()
    heavy = Stream()
    transport = None
    if state:
        body = orjson.dumps(AGUI_BODY)
        request = (
            b"POST /state HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\naccept: text/event-stream\r\nconnection: close\r\n\r\n%s" % (len(body), body)
        )
        done: asyncio.Future[None] = loop.create_future()
        transport, _ = await loop.create_connection(lambda: Client(request, heavy, done), "127.0.0.1", server.port)
        while len(heavy.arrivals) < 3:  # the snapshot and the first deltas are out: updates are flowing
            await asyncio.sleep(0.05)
    first = len(heavy.arrivals)
    results, stats = await run_clients(server.port, streams, frames, interval, server.pid)
    updates = len(heavy.arrivals) - first
    if transport is not None:
        transport.close()
        if updates < 10:
            raise RuntimeError(f"the state stream sent only {updates} frames beside the paced streams")
    gaps = [(b - a) / interval for s in results for a, b in itertools.pairwise(s.arrivals[1:])]
    return gaps, updates / stats["wall"]


def _pacing(rounds: int = 3, streams: int = 99, frames: int = 60, interval: float = 0.05) -> tuple[float, float, float]:
    """The p99 gap of ``streams`` paced streams on one uvicorn server process (``bench.server``), without
    and beside one stream of 1.6 MB state updates (runs alternating, the median of each's p99), and the
    state stream's median rate of updates."""
    alone, beside, rates = [], [], []
    with ServerProcess(frames=frames, interval=interval, state_docs=10000) as server:
        asyncio.run(_served(server, 10, 10, interval, True))  # warm up
        for _ in range(rounds):
            alone.append(_p99(asyncio.run(_served(server, streams, frames, interval, False))[0]))
            gaps, rate = asyncio.run(_served(server, streams, frames, interval, True))
            beside.append(_p99(gaps))
            rates.append(rate)
    return statistics.median(alone), statistics.median(beside), statistics.median(rates)


def _p99(gaps: list[float]) -> float:
    return statistics.quantiles(gaps, n=100)[98] if len(gaps) > 100 else float("nan")


def _case(name: str, before: Any, after: Any) -> list[Any]:
    """One update from ``before`` to ``after``: AG-UI time, frame size, make_patch time, orjson time."""
    agui, frames = _agui_run([before, after])
    patch = min(_timed(lambda: jsonpatch.make_patch(before, after)) for _ in range(3))
    floor = min(_timed(lambda: orjson.dumps(after)) for _ in range(5))
    mapper = AGUIMapper(thread_id="t", run_id="r", state=before)
    mapper.feed(RunStarted())
    kind = orjson.loads(frames[0][6:])["type"] if frames[0] else "none"
    return [
        name,
        f"{agui[0] * 1e3:.2f} ms",
        f"{len(frames[0]):,} B {kind}",
        f"{patch * 1e3:.1f} ms",
        f"{floor * 1e3:.2f} ms",
        f"{patch / agui[0]:.0f}x",
    ]


def run(quick: bool = False) -> StateReport:
    """Measure every size, the two extra cases, the stalls and the pacing; check the targets."""
    sizes = SIZES[:3] if quick else SIZES
    rows = []
    problems: list[str] = []
    targets: list[Target] = []
    ratios: dict[str, float] = {}
    big: dict[str, float] = {}
    for n in sizes:
        count = 5 if n >= 100000 else 11
        states = state_updates(n, count)
        agui_times, frames = _agui_run(states)
        problem = _check(states, frames)
        if problem:
            problems.append(f"{n} documents: {problem}")
        aisdk_times = _aisdk_run(states)
        pairs = list(itertools.pairwise(states))[: 3 if n >= 100000 else count]
        patch_times = [_timed(lambda a=a, b=b: jsonpatch.make_patch(a, b)) for a, b in pairs]  # type: ignore[misc]
        floor_times = [_timed(lambda s=s: orjson.dumps(s)) for s in states[1:]]  # type: ignore[misc]
        # The longest stall of each, best of five runs: a shared machine stalls the ticker by itself too.
        # The states are frozen out of the garbage collector first (gc.freeze, as a server does with what
        # it holds for long): else a full collection over the agent's own objects is what the ticker sees.
        gc.collect()
        gc.freeze()
        stall_agui = min(asyncio.run(_stall(states, "agui")) for _ in range(5))
        stall_aisdk = min(asyncio.run(_stall(states, "aisdk")) for _ in range(5))
        stall_idle = min(asyncio.run(_stall(states, "idle")) for _ in range(5))
        gc.unfreeze()
        agui, aisdk = statistics.median(agui_times), statistics.median(aisdk_times)
        patch, floor = statistics.median(patch_times), statistics.median(floor_times)
        size = len(orjson.dumps(states[0]))
        rows.append(
            [
                f"{size / 1e6:.2f} MB" if size >= 1e6 else f"{size / 1e3:.0f} KB",
                f"{agui * 1e3:.3f} ms ({agui / floor:.1f}x)",
                f"{aisdk * 1e3:.3f} ms ({aisdk / floor:.1f}x)",
                f"{patch * 1e3:.1f} ms ({patch / agui:.0f}x ours)",
                f"{floor * 1e3:.3f} ms",
                f"{stall_agui * 1e3:.1f} / {stall_aisdk * 1e3:.1f} ms (idle {stall_idle * 1e3:.1f})",
                f"{statistics.median(len(f) for f in frames):.0f} B",
            ]
        )
        if n == 100000:
            big = {"agui": stall_agui, "aisdk": stall_aisdk, "idle": stall_idle}
        if n == 10000:
            ratios = {
                "agui": agui / floor,
                "aisdk": aisdk / floor,
                "patch": patch / agui,
                "stall": max(stall_agui, stall_aisdk),
            }
            base = states[0]
    text = (
        "### State: one StateUpdate changing two leaves (median)\n\n"
        + table(
            [
                "state",
                "AG-UI per update (x orjson)",
                "AI SDK per update (x orjson)",
                "jsonpatch.make_patch alone",
                "orjson.dumps of the state",
                "longest stall AG-UI / AI SDK (ticker alone)",
                "AG-UI frame",
            ],
            rows,
        )
        + "\n"
    )

    inserted = copy.deepcopy(base)
    inserted["documents"].insert(5000, document(-1))
    keyed = {d["id"]: d for d in base["documents"]}
    renamed = {("renamed" if k == "doc-004321" else k): v for k, v in copy.deepcopy(keyed).items()}
    extra = [_case("list insert (1.6 MB)", base, inserted), _case("key rename (1.6 MB, keyed)", keyed, renamed)]
    text += (
        "\n### State: other edits of the 1.6 MB state\n\n"
        + table(
            ["case", "AG-UI per update", "AG-UI frame", "jsonpatch.make_patch", "orjson.dumps", "make_patch / ours"],
            extra,
        )
        + "\n"
    )

    if quick:  # the 15 MB stall is a target: measured in a quick run too
        states = state_updates(100000, 3)
        gc.collect()
        gc.freeze()
        big = {p: min(asyncio.run(_stall(states, p)) for _ in range(3)) for p in ("agui", "aisdk", "idle")}
        gc.unfreeze()
        del states
    served, floor = _as_served(state_updates(10000, 12), 3 if quick else 7)
    text += (
        "\n### State: one 1.6 MB StateUpdate as served (through encode_frames; fastest run's median)\n\n"
        + table(
            ["protocol", "no other task on the loop", "beside a 1 ms ticker task"],
            [
                [
                    name,
                    f"{served[(key, False)] * 1e3:.2f} ms ({served[(key, False)] / floor:.2f}x orjson)",
                    f"{served[(key, True)] * 1e3:.2f} ms ({served[(key, True)] / floor:.2f}x orjson)",
                ]
                for key, name in (("agui", "AG-UI"), ("aisdk", "AI SDK"))
            ],
        )
        + f"\nOne `orjson.dumps` of the state (the same statistic): {floor * 1e3:.2f} ms.\n"
    )

    alone, p99, rate = _pacing(rounds=1 if quick else 3)
    text += (
        f"\n99 paced AI SDK streams (50 ms) on one uvicorn server process, over loopback: inter-frame gap p99 "
        f"{alone:.2f}x the pacing alone, {p99:.2f}x beside one AG-UI stream of 1.6 MB state updates "
        f"({rate:.0f} updates/s; median of {1 if quick else 3} alternating runs of each).\n"
    )
    if ratios:
        targets += [
            Target(
                "State 1.6 MB: AG-UI per StateUpdate vs one orjson.dumps",
                f"{ratios['agui']:.1f}x",
                "<= 5x",
                ratios["agui"] <= 5,
            ),
            Target(
                "State 1.6 MB: AG-UI per StateUpdate vs jsonpatch.make_patch alone",
                f"{ratios['patch']:.0f}x faster",
                ">= 20x faster",
                ratios["patch"] >= 20,
            ),
            Target(
                "State 1.6 MB: AI SDK per StateUpdate vs one orjson.dumps",
                f"{ratios['aisdk']:.1f}x",
                "<= 3x",
                ratios["aisdk"] <= 3,
            ),
            Target(
                "State 1.6 MB: longest event-loop stall",
                f"{ratios['stall'] * 1e3:.1f} ms",
                "<= 20 ms",
                ratios["stall"] <= 0.020,
            ),
        ]
    for key, name in (("agui", "AG-UI"), ("aisdk", "AI SDK")):
        for ticker in (False, True):
            ratio = served[(key, ticker)] / floor
            beside = "beside a 1 ms ticker" if ticker else "alone on the loop"
            targets.append(
                Target(
                    f"State 1.6 MB as served, {beside}: {name} per StateUpdate vs one orjson.dumps",
                    f"{ratio:.2f}x",
                    "<= 3x",
                    ratio <= 3,
                )
            )
    for key, name in (("agui", "AG-UI"), ("aisdk", "AI SDK")):
        targets.append(
            Target(
                f"State 15 MB: longest event-loop stall, {name}",
                f"{big[key] * 1e3:.1f} ms (ticker alone {big['idle'] * 1e3:.1f} ms)",
                "<= 20 ms",
                big[key] <= 0.020,
            )
        )
    targets.append(
        Target(
            "State: p99 gap of 99 paced streams beside 1.6 MB updates (served)",
            f"{p99:.2f}x the pacing (alone {alone:.2f}x)",
            "<= 2x",
            p99 <= 2,
        )
    )
    return StateReport(text, targets, problems)
