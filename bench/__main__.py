"""Run the benchmarks and check the performance targets: ``python -m bench`` (``--help`` for the flags).

Prints one Markdown table per benchmark, then one ``PASS``/``FAIL`` line per target; exits with 1 when a
target fails (or a benchmark could not check what it compares), 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time

from .measure import Target, machine

BENCHMARKS = ("encode", "sources", "wire", "concurrency", "state", "request", "store")
DEFAULT = ("encode", "sources", "wire", "concurrency", "state", "request")  # "store" needs redis-server: run it by name


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, run the chosen benchmarks, print the report; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "benchmarks",
        nargs="*",
        metavar="BENCHMARK",
        help=f"any of {', '.join(BENCHMARKS)} (default: {', '.join(DEFAULT)})",
    )
    parser.add_argument("--quick", action="store_true", help="fewer samples and shorter streams (a smoke run)")
    parser.add_argument("--repeat", type=int, help="timed runs per case (encode 21, sources 11, wire 11)")
    parser.add_argument("--streams", type=int, help="concurrent streams (default 1000; 10,000 with --idle)")
    parser.add_argument("--frames", type=int, help="frames per concurrent stream (default 200; 60 with --quick)")
    parser.add_argument("--interval", type=float, default=0.05, help="pacing of the concurrent streams, s")
    parser.add_argument("--no-baseline", action="store_true", help="concurrency: skip the plain server run")
    parser.add_argument(
        "--idle", action="store_true", help="concurrency: idle streams (10,000 unless --streams), every route"
    )
    parser.add_argument("--hold", type=float, default=60.0, help="concurrency --idle: how long each stream waits, s")
    parser.add_argument("--heartbeat", type=float, default=15.0, help="concurrency --idle: the heartbeat, s")
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="concurrency: paced streams at 100, 1,000 and 10,000 open streams, plotted to --svg",
    )
    parser.add_argument("--svg", default="docs/scaling.svg", help="concurrency --sweep: where the plot goes")
    parser.add_argument("--loop", default="auto", help="the server's event loop: auto (uvloop if installed), asyncio")
    parser.add_argument("--http", default="auto", help="the server's HTTP parser: auto (httptools if installed), h11")
    args = parser.parse_args(argv)
    unknown = [b for b in args.benchmarks if b not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}: choose from {', '.join(BENCHMARKS)}")
    chosen = args.benchmarks or list(DEFAULT)

    print(f"# streamkit benchmarks\n\nMachine: {machine()}\n")
    started = time.monotonic()
    targets: list[Target] = []
    problems: list[str] = []
    if "encode" in chosen:
        from . import encode

        report = encode.run(repeat=args.repeat or (5 if args.quick else 21))
        print(report.text)
        targets += report.targets
        problems += report.problems
    if "sources" in chosen:
        from . import sources

        text_s, targets_s, problems_s = sources.run(repeat=args.repeat or (3 if args.quick else 11))
        print(text_s)
        targets += targets_s
        problems += problems_s
    if "wire" in chosen:
        from . import wire

        report_w = wire.run(repeat=args.repeat or (3 if args.quick else 11), loop=args.loop, http=args.http)
        print(report_w.text)
        targets += report_w.targets
        problems += report_w.problems
    if "concurrency" in chosen:
        from . import concurrency

        if args.idle:
            report_c = concurrency.run_idle(
                args.streams or 10_000,
                hold=args.hold,
                heartbeat=args.heartbeat,
                repeat=args.repeat or 1,
                loop=args.loop,
                http=args.http,
            )
        elif args.sweep:
            report_c, _ = concurrency.run_sweep(loop=args.loop, http=args.http, svg=args.svg)
        else:
            frames = args.frames or (60 if args.quick else 200)
            report_c = concurrency.run(
                args.streams or 1000,
                frames,
                args.interval,
                baseline=not args.no_baseline,
                loop=args.loop,
                http=args.http,
            )
        print(report_c.text)
        targets += report_c.targets
        problems += report_c.problems

    if "state" in chosen:
        from . import state

        report_s = state.run(quick=args.quick)
        print(report_s.text)
        targets += report_s.targets
        problems += report_s.problems

    if "request" in chosen:
        from . import request

        report_r = request.run(repeat=args.repeat or (3 if args.quick else 5))
        print(report_r.text)
        targets += report_r.targets
        problems += report_r.problems

    if "store" in chosen:
        from . import store

        report_st = store.run(repeat=args.repeat or (3 if args.quick else 21), streams=5 if args.quick else 50)
        print(report_st.text + "\n")
        targets += report_st.targets
        problems += report_st.problems

    if problems:
        print("Problems:\n" + "\n".join(f"- {p}" for p in problems) + "\n")
    if targets:
        print("Targets:\n" + "\n".join(t.line() for t in targets))
    print(f"\n({time.monotonic() - started:.0f} s)")
    checked = bool(targets) or args.sweep  # the sweep: tables only
    return 0 if checked and all(t.passed for t in targets) and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
