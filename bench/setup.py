"""The server's cost to set up one stream, in process: ``python -m bench.setup [ROUTE ...]``.

The idle routes of :mod:`bench.server` are driven through the ASGI app directly, as uvicorn calls it (its
scope, a ``receive`` that hands over the body and then waits for the client to leave, a ``send`` that only
notes what it was given), with no socket and no HTTP parser: what is measured is the app's own work, from
the request to its first frame sent, with every stream kept open (the collector then scans them, as it does
on a server holding them).

``--stages`` measures, instead, what a route does with a request's body before it streams, stage by stage, on
the AI SDK's and AG-UI's bodies of the idle routes: ``decode`` (the JSON), ``parse`` (the protocol's request
model), ``convert`` (the neutral ``RunInput``) and ``mapper`` (the run's mapper), each stage's own cost per
request (work that the plain route, which only decodes, does not do).

``--count`` counts instructions under ``valgrind --tool=callgrind``: only the measured streams are counted
(collection is switched on inside one C call, ``functools.reduce``, that runs them), so the figure is the
same run after run. Without it, the CPU time per stream is printed (the least of ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import orjson

ROUTES = ("plain", "aisdk", "agui", "detached", "resumable")
"""The idle routes of :mod:`bench.server`, the baseline first."""

_HEAD = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), (b"connection", b"close")]


def _body(route: str, i: int) -> bytes:
    from .server import AGUI_BODY, AISDK_BODY

    if route == "agui":
        return orjson.dumps({**AGUI_BODY, "threadId": f"thread_{i}", "runId": f"run_{i}"})
    return orjson.dumps({**AISDK_BODY, "id": f"chat_{i}"})


class _Stream:
    """One request: uvicorn's scope, its ``receive`` and a ``send`` that notes the first frame."""

    __slots__ = ("body", "first", "gone", "scope", "sent")

    def __init__(self, route: str, i: int, loop: asyncio.AbstractEventLoop) -> None:
        self.body: bytes | None = _body(route, i)
        self.scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 40000 + i % 20000),
            "scheme": "http",
            "root_path": "",
            "headers": [*_HEAD, (b"content-length", str(len(self.body)).encode())],
            "state": {},
            "method": "POST",
            "path": f"/idle/{route}",
            "raw_path": f"/idle/{route}".encode(),
            "query_string": b"",
        }
        self.first: asyncio.Future[None] = loop.create_future()
        self.gone: asyncio.Event = asyncio.Event()
        self.sent: list[Any] = []

    async def receive(self) -> dict[str, Any]:
        body = self.body
        if body is not None:
            self.body = None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            self.sent.append(message)
        if message["type"] == "http.response.body":
            if self.sent:
                raise RuntimeError(f"status {self.sent[0]['status']}: {message.get('body', b'')[:200]!r}")
            if message.get("body") and not self.first.done():
                self.first.set_result(None)


class Harness:
    """The app of :mod:`bench.server` started (its lifespan run), and the streams opened on it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        from .server import app

        self.loop = loop
        self.app = app(hold=3600.0, heartbeat=15.0)
        self.open: list[tuple[_Stream, asyncio.Task[None]]] = []
        self.opened = 0

    async def start(self) -> None:
        """Run the app's lifespan startup."""
        started: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        await started.put({"type": "lifespan.startup"})
        up = self.loop.create_future()

        async def send(message: dict[str, Any]) -> None:
            if not up.done():
                up.set_result(message)

        never = asyncio.Event()

        async def receive() -> dict[str, Any]:
            if not started.empty():
                return await started.get()
            await never.wait()
            return {"type": "lifespan.shutdown"}

        call: Any = self.app
        self.lifespan = self.loop.create_task(call({"type": "lifespan", "state": {}}, receive, send))
        message = await up
        if message["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"the app did not start: {message}")

    async def streams(self, route: str, n: int) -> None:
        """Open ``n`` streams of ``route``, one after the other, each to its first frame; keep them open."""
        call: Any = self.app
        for _ in range(n):
            stream = _Stream(route, self.opened, self.loop)
            self.opened += 1
            task: asyncio.Task[None] = self.loop.create_task(call(stream.scope, stream.receive, stream.send))
            await stream.first
            self.open.append((stream, task))


def _loop(name: str) -> asyncio.AbstractEventLoop:
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def measure(route: str, streams: int, warm: int, loop_name: str, freeze: bool, collect: bool) -> tuple[float, float]:
    """CPU seconds per stream of ``route`` (the measured ``streams`` after ``warm`` ones, all kept open), and
    the objects the collector tracks that each open stream holds. Without ``collect`` the collector is off
    while the streams are opened: the work alone, the same run after run (a full collection, which
    scans the whole heap, falls in the measured window or not as the heap's size decides)."""
    loop = _loop(loop_name)
    asyncio.set_event_loop(loop)
    harness = Harness(loop)
    loop.run_until_complete(harness.start())
    loop.run_until_complete(harness.streams(route, warm))
    gc.collect()
    if freeze:
        gc.freeze()
    tracked = len(gc.get_objects())
    if not collect:
        gc.disable()

    def measured(_: object, __: object) -> float:
        start = time.process_time()
        loop.run_until_complete(harness.streams(route, streams))
        return time.process_time() - start

    # The measured streams run inside one C call (functools.reduce): callgrind counts only within it.
    cpu: Any = functools.reduce(measured, [None, None])
    gc.enable()
    gc.collect()
    held = (len(gc.get_objects()) - tracked) / streams
    return float(cpu) / streams, held


STAGES = ("decode", "parse", "convert", "mapper")
"""The stages of a request's body before its stream starts, in order (``--stages``)."""


def _stage_work(protocol: str, stage: str, n: int) -> Callable[[], None]:
    """A function doing the stages up to ``stage`` for ``n`` distinct bodies of ``protocol`` (warmed up once)."""
    from streamkit.agui import request as agui_request
    from streamkit.agui.routes import mapper_for as agui_mapper
    from streamkit.aisdk import request as aisdk_request
    from streamkit.aisdk.routes import mapper_for as aisdk_mapper
    from streamkit.http import Limits, parse_json

    limits = Limits()
    bodies = [_body(protocol, i) for i in range(n)]
    upto = STAGES.index(stage)

    stages: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {
        "aisdk": (aisdk_request.parse_chat_request, aisdk_request.to_run_input, aisdk_mapper),
        "agui": (agui_request.parse_run_agent_input, agui_request.to_run_input, agui_mapper),
    }
    parse, convert, mapper = stages[protocol]

    def work() -> None:
        for raw in bodies:
            data = parse_json(raw.decode(), limits)  # what the routes do with a body (streamkit.http.read_json)
            if upto >= 1:
                body: Any = parse(data, limits)
                if upto >= 2:
                    run = convert(body)
                    if upto >= 3:
                        mapper(body, run)

    work()
    return work


def measure_stage(protocol: str, stage: str, n: int, repeat: int) -> float:
    """CPU seconds per request of the stages up to ``stage`` (the least of ``repeat`` runs; the collector off)."""
    work = _stage_work(protocol, stage, n)
    best = float("inf")
    gc.collect()
    gc.disable()

    def timed(_: object, __: object) -> float:
        start = time.process_time()
        work()
        return time.process_time() - start

    try:
        for _ in range(repeat):
            cpu: Any = functools.reduce(timed, [None, None])  # one C call: callgrind counts only within it
            best = min(best, float(cpu))
    finally:
        gc.enable()
    return best / n


def _callgrind(child: list[str], keep: str | None = None) -> tuple[int, str]:
    """Instructions counted by callgrind in ``python -m bench.setup CHILD...`` (within ``functools.reduce``), and
    what the child printed; with ``keep``, its callgrind file is copied there."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=functools_reduce", f"--callgrind-out-file={out}"]
        env = {**os.environ, "PYTHONHASHSEED": "0", "_BENCH_SETUP_CHILD": "1"}
        cmd += [sys.executable, "-m", "bench.setup", *child]
        done = subprocess.run(cmd, check=True, env=env, capture_output=True, text=True)
        if keep is not None:
            shutil.copyfile(out, keep)
        with open(out) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(re.split(r"\s+", line.strip())[1]), done.stdout
    raise RuntimeError("callgrind wrote no totals")


def stages(args: argparse.Namespace) -> int:
    """Print each stage's own cost per request, for the AI SDK's body and AG-UI's."""
    unit = "instructions" if args.count else "us CPU (least)"
    for protocol in ("aisdk", "agui"):
        totals = []
        for stage in STAGES:
            child = ["--stage", f"{protocol}:{stage}", "--streams", str(args.streams), "--repeat"]
            if args.count:
                totals.append(_callgrind([*child, "1"])[0] / args.streams)
            else:
                totals.append(measure_stage(protocol, stage, args.streams, args.repeat) * 1e6)
        own = [t - (totals[i - 1] if i else 0.0) for i, t in enumerate(totals)]
        digits = 0 if args.count else 2
        cells = ", ".join(f"{name} {value:,.{digits}f}" for name, value in zip(STAGES, own, strict=True))
        print(f"{protocol:6} {cells}; in all {totals[-1]:,.{digits}f} {unit} per request")
    return 0


def _counted(route: str, args: argparse.Namespace) -> tuple[int, float]:
    child = [route, "--streams", str(args.streams), "--warm", str(args.warm), "--loop", args.loop]
    child += [*(["--freeze"] if args.freeze else []), *(["--no-gc"] if args.no_gc else [])]
    count, printed = _callgrind(child, f"callgrind.setup.{route}.out" if args.keep else None)
    return count, float(printed.split()[-1])


def main(argv: list[str] | None = None) -> int:
    """Measure the chosen routes and print each one's cost per stream and its ratio to the plain route."""
    parser = argparse.ArgumentParser(prog="python -m bench.setup", description=__doc__)
    parser.add_argument("routes", nargs="*", metavar="ROUTE", help=f"any of {', '.join(ROUTES)} (default: all)")
    parser.add_argument("--streams", type=int, default=1000, help="measured streams (default 1000)")
    parser.add_argument("--warm", type=int, default=200, help="streams opened first, unmeasured (default 200)")
    parser.add_argument("--loop", default="uvloop", choices=("uvloop", "asyncio"))
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() the warmed-up heap")
    parser.add_argument("--no-gc", action="store_true", help="the collector off while the streams are opened")
    parser.add_argument("--count", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--keep", action="store_true", help="--count: keep callgrind.setup.<route>.out here")
    parser.add_argument("--repeat", type=int, default=5, help="without --count: runs per route, alternating")
    parser.add_argument("--stages", action="store_true", help="the request's stages before its stream, instead")
    parser.add_argument("--stage", help=argparse.SUPPRESS)  # one stage, in a child process: PROTOCOL:STAGE
    args = parser.parse_args(argv)
    if args.stage:
        protocol, stage = args.stage.split(":")
        print(measure_stage(protocol, stage, args.streams, args.repeat))
        return 0
    if args.stages:
        return stages(args)
    routes = args.routes or list(ROUTES)
    if not args.count and len(routes) == 1 and os.environ.get("_BENCH_SETUP_CHILD"):
        cpu, held = measure(routes[0], args.streams, args.warm, args.loop, args.freeze, not args.no_gc)
        print(cpu, held)
        return 0
    results: dict[str, float] = {}
    objects: dict[str, float] = {}
    if args.count:
        for route in routes:
            count, objects[route] = _counted(route, args)
            results[route] = count / args.streams
        unit = "instructions"
    else:
        seen: dict[str, list[float]] = {r: [] for r in routes}
        env = {**os.environ, "_BENCH_SETUP_CHILD": "1"}
        for _ in range(args.repeat):
            for route in routes:
                cmd = [sys.executable, "-m", "bench.setup", route, "--streams", str(args.streams)]
                cmd += ["--warm", str(args.warm), "--loop", args.loop, *(["--freeze"] if args.freeze else [])]
                cmd += ["--no-gc"] if args.no_gc else []
                done = subprocess.run(cmd, check=True, env=env, capture_output=True, text=True)
                cpu, objects[route] = map(float, done.stdout.split()[-2:])
                seen[route].append(cpu * 1e6)
        results = {r: min(v) for r, v in seen.items()}
        unit = "us CPU (least)"
    plain = results.get("plain")
    for route, value in results.items():
        ratio = f"  {value / plain:.2f}x plain" if plain else ""
        print(f"{route:10} {value:12,.0f} {unit} per stream{ratio}; {objects[route]:,.0f} tracked objects held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
