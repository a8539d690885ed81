"""Resumable streams: frames per second through the stream stores vs. direct streaming, in the same run.

``python -m bench.store [--repeat N] [--redis URL]`` streams workload W (AI SDK protocol) four ways, in one
process, round-robin:

* **direct** - map and encode W into SSE bytes (what a response without resumable mode sends);
* **memory store** - a resumable run on the in-memory store: W produced by a detached task through the
  batching writer, read back by the POST's reader;
* **redis store** - the same on Redis (``--redis URL``, or a throwaway ``redis-server`` on a free port);
* **redis, 2 readers** - the same plus a second live reader (a reconnect on another worker).

It prints each case's frames/s, its time relative to direct, and how many store appends (round trips)
the writer needed for W's ~5,400 frames.
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
from collections.abc import Callable
from typing import Any

from streamkit.aisdk.mapping import AISDKMapper
from streamkit.aisdk.routes import DONE
from streamkit.frames import encode_frames, frame
from streamkit.resumable import Resumable, endings_from_mapper
from streamkit.store import MemoryStore, StreamStore
from streamkit.store.redis import RedisStore

from .measure import Case, machine, table
from .workload import Workload, agent_events, workload

DEAD = frame({"type": "error", "errorText": "lost"}) + DONE


def _mapper(w: Workload) -> AISDKMapper:
    return AISDKMapper(message_id=w.message_id)


async def direct(w: Workload) -> bytes:
    """W mapped and encoded, straight to the caller."""
    return b"".join([c async for c in encode_frames(agent_events(w), _mapper(w), trailer=DONE)])


class Stored:
    """A resumable run of W through ``store``; counts the appends of the last run."""

    def __init__(self, make_store: Callable[[], StreamStore], readers: int = 1) -> None:
        self.make_store = make_store
        self.readers = readers
        self.resumable: Resumable | None = None
        self.appends = 0

    async def close(self) -> None:
        """Close the store (its connections and listener)."""
        if self.resumable is not None:
            await self.resumable.aclose()
            self.resumable = None

    async def __call__(self, w: Workload) -> bytes:
        if self.resumable is None:
            self.resumable = Resumable(self.make_store())
        r = self.resumable
        mapper = _mapper(w)
        frames = encode_frames(agent_events(w), mapper, trailer=DONE)
        run = await r.start(frames, endings_from_mapper(mapper, dead=DEAD, trailer=DONE), owner="bench", scope="bench")

        async def read() -> bytes:
            return b"".join([c async for c in r.read(run, dead=DEAD, ids=False)])

        outputs = await asyncio.gather(*(read() for _ in range(self.readers)))
        info = await r.store.info(run)
        self.appends = info.seq if info is not None else 0
        assert all(o == outputs[0] for o in outputs)
        return outputs[0]


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


def _sample(cases: list[Case], repeat: int, stores: list[Stored]) -> None:
    """Round-robin samples on one event loop (garbage collector paused while timing), two warm-up rounds."""
    loop = asyncio.new_event_loop()

    async def timed(case: Case) -> None:
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            out = await case.run()  # type: ignore[misc]
            elapsed = time.perf_counter() - t0
        finally:
            gc.enable()
        case.times.append(elapsed)
        case.output = out

    try:
        for i in range(repeat + 2):
            for case in cases:
                loop.run_until_complete(timed(case))
                if i < 2:
                    case.times.clear()
        for stored in stores:
            loop.run_until_complete(stored.close())
    finally:
        loop.close()


def run(repeat: int = 11, redis_url: str | None = None) -> str:
    """Measure the four cases; the report as text."""
    proc = None
    if redis_url is None:
        redis_url, proc = _redis_server()
    url = redis_url
    try:
        w = workload()
        memory = Stored(MemoryStore)
        redis = Stored(lambda: RedisStore.from_url(url, prefix="bench"))
        redis2 = Stored(lambda: RedisStore.from_url(url, prefix="bench"), readers=2)
        cases = [
            Case("direct", lambda: direct(w), is_async=True),
            Case("memory store", lambda: memory(w), is_async=True),
            Case("redis store", lambda: redis(w), is_async=True),
            Case("redis store, 2 readers", lambda: redis2(w), is_async=True),
        ]
        appends: dict[str, Any] = {"direct": "-", "memory store": memory, "redis store": redis}
        appends["redis store, 2 readers"] = redis2
        _sample(cases, repeat, [memory, redis, redis2])
        base = cases[0]
        for case in cases[1:]:
            if case.output != base.output:
                raise SystemExit(f"{case.name}: the bytes differ from direct streaming")
        rows = []
        for case in cases:
            stored = appends[case.name]
            rows.append(
                [
                    case.name,
                    f"{case.frames_per_s:,.0f}",
                    f"{case.median * 1e3:.1f}",
                    f"{case.median / base.median:.2f}x",
                    stored if isinstance(stored, str) else str(stored.appends),
                ]
            )
        head = f"Resumable streams, workload W ({base.frames} frames, AI SDK), {repeat} samples; {machine()}"
        return head + "\n\n" + table(["case", "frames/s", "ms per run", "vs direct", "store appends"], rows)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    """Command line entry: ``python -m bench.store``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--redis", default=None, help="a Redis URL (default: start a throwaway redis-server)")
    args = parser.parse_args()
    print(run(args.repeat, args.redis))


if __name__ == "__main__":
    main()
