"""Resumable streams: what a run costs through the stream stores against direct streaming, in the same run.

``python -m bench store`` (or ``python -m bench.store [--repeat N] [--streams N] [--redis URL]``) streams
workload W (AI SDK protocol) four ways, in one process, round-robin:

* **direct** - map and encode W into SSE bytes (what a response without resumable mode sends);
* **memory store** - a resumable run on the in-memory store: W produced by a detached task through the
  batching writer, read back by the POST's reader;
* **redis store** - the same on Redis (``--redis URL``, or a throwaway ``redis-server`` on a free port);
* **redis, 2 readers** - the same plus a second live reader through a store of its own (a reconnect on another
  worker: it reads Redis, where the POST's reader, on the worker producing the run, is fed from that worker's
  memory).

**Cost** is CPU time: the worker process's, plus, for the Redis cases, the redis-server's (its ``INFO cpu``
counters, read outside the timed region), per frame of W; a store's cost counts whatever the stream does
that direct streaming does not, on both sides of the socket. The figure of each case is the fastest of its
samples (the samples interleave, so a busy machine slows all cases alike); the wall time is shown too, since
a Redis round trip is time the stream waits, if not work.

After the timing, ``--streams`` runs of W are written to Redis under a prefix of their own, each with a
chat pointer as a route's run has, and left to their retention: what they hold in Redis is summed with
``MEMORY USAGE`` of every key (and checked against ``INFO memory``), per stream and per frame, and the time
to live of a finished run's keys is read back (``StoreLimits.ttl``).

Target (issue 26): a resumable stream on Redis costs at most 1.2x a direct stream per frame.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import redis

from streamkit.aisdk.mapping import AISDKMapper
from streamkit.aisdk.routes import DONE
from streamkit.frames import encode_frames, frame
from streamkit.resumable import Resumable, endings_from_mapper
from streamkit.store import MemoryStore, StoreLimits, StreamStore
from streamkit.store.redis import RedisStore

from .measure import Target, machine, table
from .workload import Workload, agent_events, workload

DEAD = frame({"type": "error", "errorText": "lost"}) + DONE
COST_TARGET = 1.2  # a resumable stream on Redis against a direct stream, per frame


@dataclass
class StoreReport:
    """The tables and the targets."""

    text: str
    targets: list[Target] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _mapper(w: Workload) -> AISDKMapper:
    return AISDKMapper(message_id=w.message_id)


async def direct(w: Workload) -> bytes:
    """W mapped and encoded, straight to the caller."""
    return b"".join([c async for c in encode_frames(agent_events(w), _mapper(w), trailer=DONE)])


class Stored:
    """A resumable run of W through ``store``, read by the POST's reader and by ``others`` readers on other workers
    (each through a store of its own); remembers the runs it made (their appends are counted after)."""

    def __init__(self, make_store: Callable[[], StreamStore], others: int = 0, chats: bool = False) -> None:
        self.make_store = make_store
        self.others = others
        self.chats = chats
        self.resumable: Resumable | None = None
        self.elsewhere: list[Resumable] = []
        self.runs: list[str] = []

    async def close(self) -> None:
        """Close the stores (their connections and listeners)."""
        for r in [self.resumable, *self.elsewhere]:
            if r is not None:
                await r.aclose()
        self.resumable = None
        self.elsewhere = []

    async def appends(self) -> int:
        """How many store entries (round trips of the writer) the last run needed."""
        assert self.resumable is not None and self.runs
        info = await self.resumable.store.info(self.runs[-1])
        return info.seq if info is not None else 0

    async def __call__(self, w: Workload) -> bytes:
        if self.resumable is None:
            self.resumable = Resumable(self.make_store())
            self.elsewhere = [Resumable(self.make_store()) for _ in range(self.others)]
        r = self.resumable
        mapper = _mapper(w)
        frames = encode_frames(agent_events(w), mapper, trailer=DONE)
        chat = f"chat-{len(self.runs)}" if self.chats else None
        endings = endings_from_mapper(mapper, dead=DEAD, trailer=DONE)
        run = await r.start(frames, endings, owner="bench", scope="bench", chat=chat)
        self.runs.append(run)

        async def read(reader: Resumable) -> bytes:
            return b"".join([c async for c in reader.read(run, dead=DEAD, ids=False)])

        outputs = await asyncio.gather(*(read(reader) for reader in [r, *self.elsewhere]))
        while r.running:  # the run's own task ends too: what it does after its readers are done counts
            await asyncio.sleep(0)
        assert all(o == outputs[0] for o in outputs)
        return outputs[0]


@dataclass
class Sampled:
    """One case: its samples of wall time and of CPU time (the worker's plus the redis-server's)."""

    name: str
    run: Callable[[], Awaitable[bytes]]
    uses_redis: bool = False
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    parts: list[tuple[float, float]] = field(default_factory=list)  # (worker, redis-server) of each sample
    output: bytes = b""

    @property
    def best(self) -> tuple[float, float, float]:
        """The fastest sample's cost, and its worker and redis-server parts."""
        worker, server = min(self.parts, key=sum)
        return worker + server, worker, server

    @property
    def frames(self) -> int:
        """SSE frames in the output."""
        return self.output.count(b"\n\n")


def _redis_server() -> tuple[str, subprocess.Popen[bytes]]:
    server = shutil.which("redis-server")
    if server is None:
        sys.exit("redis-server not found: pass --redis URL or install it (apt-get install redis-server)")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"redis://127.0.0.1:{port}/0", proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


class RedisClock:
    """The redis-server's CPU time (``INFO cpu``: user + system seconds), less what reading it costs."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.overhead = 0.0
        gaps = []
        for _ in range(7):
            t0 = self.now()
            gaps.append(self.now() - t0)
        self.overhead = min(gaps)

    def now(self) -> float:
        """Seconds of CPU the server has used."""
        info = self.client.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _sample(cases: list[Sampled], repeat: int, clock: RedisClock, loop: asyncio.AbstractEventLoop) -> None:
    """Round-robin samples on one event loop (garbage collector paused while timing), two warm-up rounds."""

    async def timed(case: Sampled) -> tuple[float, float, bytes]:
        t0 = time.perf_counter()
        c0 = time.process_time()
        out = await case.run()
        return time.perf_counter() - t0, time.process_time() - c0, out

    for i in range(repeat + 2):
        for case in cases:
            gc.collect()
            r0 = clock.now() if case.uses_redis else 0.0
            gc.disable()
            try:
                wall, cpu, out = loop.run_until_complete(timed(case))
            finally:
                gc.enable()
            server = max(clock.now() - r0 - clock.overhead, 0.0) if case.uses_redis else 0.0
            if i >= 2:
                case.wall.append(wall)
                case.cpu.append(cpu + server)
                case.parts.append((cpu, server))
            case.output = out


@dataclass
class Footprint:
    """What ``streams`` finished runs of W hold in Redis, and how long they are kept."""

    streams: int
    frames: int
    payload: int  # bytes of SSE a stream stores
    usage: int  # MEMORY USAGE summed over the runs' keys
    used_memory: int  # INFO used_memory after, less before
    ttl: float  # seconds left on a finished run's keys, read right after it ended
    limit: float  # StoreLimits.ttl


async def _footprint(url: str, w: Workload, streams: int, client: redis.Redis) -> Footprint:
    prefix = f"benchmem{time.monotonic_ns()}"
    limits = StoreLimits()
    stored = Stored(lambda: RedisStore.from_url(url, prefix=prefix, limits=limits), chats=True)
    gc.collect()
    before = int(client.info("memory")["used_memory"])
    out = b""
    try:
        for _ in range(streams):
            out = await stored(w)
    finally:
        await stored.close()
    after = int(client.info("memory")["used_memory"])
    usage = 0
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        usage += int(client.memory_usage(key, samples=0) or 0)
    run_key = f"{prefix}:run:{{{stored.runs[-1]}}}"
    ttl = float(client.pttl(run_key)) / 1000
    return Footprint(streams, out.count(b"\n\n"), len(out), usage, after - before, ttl, limits.ttl)


def run(repeat: int = 21, redis_url: str | None = None, streams: int = 50) -> StoreReport:
    """Measure the four cases and the Redis footprint; the report."""
    proc = None
    if redis_url is None:
        redis_url, proc = _redis_server()
    url = redis_url
    client = redis.Redis.from_url(url)
    loop = asyncio.new_event_loop()
    try:
        w = workload()
        memory = Stored(MemoryStore)
        on_redis = Stored(lambda: RedisStore.from_url(url, prefix="bench"))
        two = Stored(lambda: RedisStore.from_url(url, prefix="bench"), others=1)
        cases = [
            Sampled("direct", lambda: direct(w)),
            Sampled("memory store", lambda: memory(w)),
            Sampled("redis store", lambda: on_redis(w), uses_redis=True),
            Sampled("redis store, 2 readers", lambda: two(w), uses_redis=True),
        ]
        stores = {"memory store": memory, "redis store": on_redis, "redis store, 2 readers": two}
        _sample(cases, repeat, RedisClock(client), loop)
        appends = {name: loop.run_until_complete(s.appends()) for name, s in stores.items()}
        for s in stores.values():
            loop.run_until_complete(s.close())
        fp = loop.run_until_complete(_footprint(url, w, streams, client))
        return _report(cases, appends, fp, repeat)
    finally:
        loop.close()
        client.close()
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)


def _report(cases: list[Sampled], appends: dict[str, int], fp: Footprint, repeat: int) -> StoreReport:
    base = cases[0]
    problems = [f"{c.name}: the bytes differ from direct streaming" for c in cases[1:] if c.output != base.output]
    frames = base.frames
    rows = []
    for case in cases:
        (cost, worker, server), wall = case.best, min(case.wall)
        rows.append(
            [
                case.name,
                f"{cost / frames * 1e6:.2f}",
                f"{worker / frames * 1e6:.2f} + {server / frames * 1e6:.2f}",
                f"{cost / min(base.cpu):.2f}x",
                f"{wall * 1e3:.1f}",
                f"{wall / min(base.wall):.2f}x",
                str(appends.get(case.name, "-")),
            ]
        )
    head = (
        f"Resumable streams, workload W ({frames} frames, AI SDK), fastest of {repeat} samples; {machine()}\n\n"
        "Cost: CPU of the worker plus (Redis cases) of the redis-server, per frame."
    )
    headers = ["case", "cost us/frame", "worker + redis-server", "cost vs direct", "wall ms/run", "wall vs direct"]
    text = table([*headers, "store entries"], rows)
    per_stream = fp.usage / fp.streams
    memory = table(
        ["streams", "kept per stream", "per frame", "SSE bytes per stream", "kept / SSE bytes", "INFO used_memory"],
        [
            [
                str(fp.streams),
                f"{per_stream / 1024:,.1f} KiB",
                f"{per_stream / fp.frames:.1f} B",
                f"{fp.payload / 1024:,.1f} KiB",
                f"{per_stream / fp.payload:.2f}x",
                f"{fp.used_memory / fp.streams / 1024:,.1f} KiB per stream",
            ]
        ],
    )
    kept = (
        f"Retention: a finished run's keys expire {fp.ttl:.0f} s after its end (StoreLimits.ttl = {fp.limit:.0f} s; "
        "a run whose writer stopped renewing its lease: lease + ttl after the last renewal)."
    )
    redis_cost = min(cases[2].cpu) / min(base.cpu)
    targets = [
        Target(
            "store: a resumable stream on Redis, cost per frame",
            f"{redis_cost:.2f}x a direct stream's",
            f"<= {COST_TARGET}x",
            redis_cost <= COST_TARGET,
        )
    ]
    body = f"{head}\n\n{text}\n\nIn Redis, after {fp.streams} finished streams of W:\n\n{memory}\n\n{kept}"
    return StoreReport(body, targets, problems)


def main() -> None:
    """Command line entry: ``python -m bench.store``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--streams", type=int, default=50, help="streams of W kept in Redis for the memory figures")
    parser.add_argument("--redis", default=None, help="a Redis URL (default: start a throwaway redis-server)")
    args = parser.parse_args()
    report = run(args.repeat, args.redis, args.streams)
    print(report.text)
    for problem in report.problems:
        print(f"PROBLEM  {problem}")
    for target in report.targets:
        print(target.line())


if __name__ == "__main__":
    main()
