"""Benchmark 1, encode: W from events to SSE bytes, streamkit against the peers and the orjson floor.

Measured for both protocols, two ways:

* **map + encode**: W's ``ChatEvent``\\ s are built beforehand; the time is ``encode`` alone (the sequence
  checker, the mapping, the JSON, the frames).
* **construct + map + encode**: the events are constructed in the loop, as an agent core does.

Baselines, in the same process and the same run: the orjson floor (``bench.floor``), the
``ag-ui-protocol`` SDK's ``EventEncoder`` over its own pre-built events and with their construction, and
pydantic-ai's two UI adapters fed pydantic-ai's own events (``bench.peers``). Before timing, every
implementation's output is parsed and compared: streamkit's frames must equal the floor's frame for frame,
and the ``ag-ui-protocol`` frames must equal them too, so every ratio compares the same work.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from . import peers
from .floor import floor_agui, floor_aisdk
from .measure import Case, Target, run_cases, table
from .workload import Workload, agent_events, build_events, chat_events, workload

__all__ = ["EncodeReport", "run"]

Encoder = Callable[..., AsyncIterator[bytes]]


def _encoder(protocol: str, w: Workload) -> Encoder | None:
    """``streamkit.<protocol>.encode`` with W's ids bound, or None when the adapter is missing."""
    try:
        module = importlib.import_module(f"streamkit.{protocol}")
    except ImportError:
        return None
    encode: Encoder | None = getattr(module, "encode", None)
    if encode is None:
        return None
    if protocol == "agui":
        return functools.partial(encode, thread_id=w.thread_id, run_id=w.run_id)
    return functools.partial(encode, message_id=w.message_id)


async def _drain(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in chunks])


def _frames(data: bytes) -> list[Any]:
    """The JSON payloads of an SSE body (``[DONE]`` kept as the string ``"[DONE]"``)."""
    out: list[Any] = []
    for block in data.split(b"\n\n"):
        if not block:
            continue
        assert block.startswith(b"data: "), block[:80]
        payload = block[6:]
        out.append("[DONE]" if payload == b"[DONE]" else orjson.loads(payload))
    return out


def _same_frames(name: str, got: bytes, want: bytes) -> str | None:
    """None when ``got`` carries the same frames as ``want``; else what differs first."""
    a, b = _frames(got), _frames(want)
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"{name}: frame {i} differs from the floor's:\n  got  {str(x)[:300]}\n  want {str(y)[:300]}"
    if len(a) != len(b):
        return f"{name}: {len(a)} frames, the floor has {len(b)}"
    return None


@dataclass
class EncodeReport:
    """The encode benchmark's tables, targets and equivalence problems."""

    text: str
    targets: list[Target]
    problems: list[str]


def _cases(w: Workload, protocol: str, encode: Encoder | None) -> dict[str, Case]:
    events = chat_events(w)
    floor = floor_aisdk if protocol == "aisdk" else floor_agui
    cases: dict[str, Case] = {"floor": Case("orjson floor: dicts built in the loop", lambda: floor(w))}
    if encode is not None:
        enc = encode

        def prebuilt() -> Any:
            return _drain(enc(events))

        def constructed() -> Any:
            return _drain(enc(build_events(w)))

        def agent() -> Any:
            return _drain(enc(agent_events(w)))

        cases["sk"] = Case("streamkit: map + encode", prebuilt, is_async=True)
        cases["sk_construct"] = Case("streamkit: construct + map + encode", constructed, is_async=True)
        cases["sk_agent"] = Case("streamkit: async agent generator + map + encode", agent, is_async=True)
    have = peers.available()
    if have["ag-ui-protocol"]:
        agui_events = peers.agui_protocol_events(w)
        cases["agui_enc"] = Case(
            "ag-ui-protocol EventEncoder (pre-built events)", lambda: peers.agui_protocol_encode(agui_events)
        )
        cases["agui_construct"] = Case(
            "ag-ui-protocol construct + EventEncoder", lambda: peers.agui_protocol_construct(w)
        )
    if have["pydantic-ai-slim"]:
        native = peers.pydantic_ai_events(w)
        adapter = peers.pydantic_ai_aisdk if protocol == "aisdk" else peers.pydantic_ai_agui
        label = "VercelAIEventStream" if protocol == "aisdk" else "AGUIEventStream"
        cases["pai"] = Case(f"pydantic-ai {label} (pre-built events)", lambda: adapter(w, native), is_async=True)
    return cases


def _ratio_rows(cases: dict[str, Case]) -> list[list[str]]:
    sk = cases.get("sk")
    rows = []
    for case in cases.values():
        ratio = f"{case.best / sk.best * (sk.frames / case.frames):.2f}x" if sk is not None else "-"
        rows.append(
            [
                case.name,
                f"{case.frames}",
                f"{case.us_per_frame:.3f}",
                f"{case.best / case.frames * 1e6:.3f}",
                f"{case.frames_per_s / 1e6:.2f} M",
                ratio,
            ]
        )
    return rows


def run(repeat: int = 21, protocols: Iterable[str] = ("aisdk", "agui"), progress: bool = True) -> EncodeReport:
    """Run the encode benchmark: ``repeat`` timed runs of W per implementation, round-robin; the tables give
    the median and the fastest sample, the targets compare the fastest samples."""
    w = workload()
    out: list[str] = []
    targets: list[Target] = []
    problems: list[str] = []
    for protocol in protocols:
        encode = _encoder(protocol, w)
        cases = _cases(w, protocol, encode)
        title = "AI SDK UI Message Stream" if protocol == "aisdk" else "AG-UI"
        if encode is None:
            problems.append(f"streamkit.{protocol}.encode is not available: streamkit rows skipped")
        run_cases(list(cases.values()), repeat=repeat, progress=progress)
        floor = cases["floor"]
        for key in ("sk", "sk_construct", "sk_agent", "agui_enc", "agui_construct"):
            if key not in cases or (key.startswith("agui") and protocol != "agui"):
                continue
            problem = _same_frames(cases[key].name, cases[key].output, floor.output)
            if problem:
                problems.append(f"[{protocol}] {problem}")
        out.append(
            f"### Encode: W as {title} ({floor.frames} frames, {repeat} runs each: the median and the fastest)\n"
        )
        out.append(
            table(
                ["implementation", "frames", "µs/frame", "best µs/frame", "frames/s", "best time vs streamkit"],
                _ratio_rows(cases),
            )
        )
        out.append("")
        targets += _targets(protocol, title, cases)
    dialect = run_dialect(w, repeat=repeat, progress=progress)
    out.append(dialect.text)
    return EncodeReport("\n".join(out), targets + dialect.targets, problems + dialect.problems)


FLOOR_TARGET = 1.2
"""streamkit's map + encode of W at most this many times the orjson floor's time."""

AGUI_PROTOCOL_TARGET = 10.0
"""streamkit's map + encode at least this many times faster than ``ag-ui-protocol``'s encoder alone."""

AGUI_CONSTRUCT_TARGET = 4.0
"""streamkit's construct + map + encode at least this many times faster than ``ag-ui-protocol``'s."""

PYDANTIC_AI_TARGET = 15.0
"""streamkit's map + encode at least this many times faster than pydantic-ai's adapter."""


def _per_frame(case: Case) -> float:
    """The fastest sample's seconds per frame (the targets compare the fastest samples: on a shared machine
    the slower ones measure the other processes)."""
    return case.best / case.frames


def _targets(protocol: str, title: str, cases: dict[str, Case]) -> list[Target]:
    sk = cases.get("sk")
    targets: list[Target] = []
    if sk is None:
        return [Target(f"{title}: streamkit encode", "not available", "present", False)]
    f = cases["floor"]
    r = _per_frame(sk) / _per_frame(f)
    targets.append(
        Target(
            f"{title}: map + encode vs the orjson floor (fastest samples)",
            f"{r:.2f}x the floor's time",
            f"<= {FLOOR_TARGET:.2f}x",
            r <= FLOOR_TARGET,
        )
    )
    if "agui_enc" in cases:
        r = _per_frame(cases["agui_enc"]) / _per_frame(sk)
        targets.append(
            Target(
                f"{title}: map + encode vs ag-ui-protocol EventEncoder alone (fastest samples)",
                f"{r:.1f}x faster",
                f">= {AGUI_PROTOCOL_TARGET:g}x",
                r >= AGUI_PROTOCOL_TARGET,
            )
        )
        r = _per_frame(cases["agui_construct"]) / _per_frame(cases["sk_construct"])
        targets.append(
            Target(
                f"{title}: construct + map + encode vs ag-ui-protocol construct + encode (fastest samples)",
                f"{r:.1f}x faster",
                f">= {AGUI_CONSTRUCT_TARGET:g}x",
                r >= AGUI_CONSTRUCT_TARGET,
            )
        )
    if "pai" in cases:
        r = _per_frame(cases["pai"]) / _per_frame(sk)
        targets.append(
            Target(
                f"{title}: map + encode vs pydantic-ai's adapter (fastest samples)",
                f"{r:.1f}x faster",
                f">= {PYDANTIC_AI_TARGET:g}x",
                r >= PYDANTIC_AI_TARGET,
            )
        )
    return targets


# -- the dialect ------------------------------------------------------------------------------------------

DIALECT_TARGET = 1.3
"""The dialect's map + encode of W at most this many times AG-UI's (the same run, fastest of the samples)."""


def _dialect_problem(body: bytes, w: Workload) -> str | None:
    """None when the dialect's body of W is what the console must see: every chunk, the answer's text in
    ``done.messages``, one terminal ``done``."""
    from streamkit.dsh import fold, parse_sse

    folded = fold(parse_sse(body))
    if folded.done is None:
        return "dialect: the stream of W does not end with done"
    if folded.text != "".join(w.text):
        return "dialect: the chunks do not carry W's text"
    answers = [m for m in folded.messages or [] if m.get("role") == "assistant" and m.get("content")]
    if not answers or answers[-1]["content"] != "".join(w.text):
        return "dialect: done.messages does not carry W's text"
    return None


def run_dialect(w: Workload, *, repeat: int = 21, progress: bool = True) -> EncodeReport:
    """The dialect's map + encode of W against AG-UI's, sampled together in one run (``python -m bench encode``).

    The target compares the fastest sample of each (both map the same ``ChatEvent``\\ s); the body is checked
    first (the text in every ``chunk`` and in ``done.messages``)."""
    from streamkit import agui, dsh

    events = chat_events(w)
    cases = {
        "agui": Case(
            "AG-UI: map + encode",
            lambda: _drain(agui.encode(events, thread_id=w.thread_id, run_id=w.run_id)),
            is_async=True,
        ),
        "dsh": Case(
            "dialect: map + encode",
            lambda: _drain(dsh.encode(events, agent_id=w.thread_id, run_id=w.run_id)),
            is_async=True,
        ),
    }
    run_cases(list(cases.values()), repeat=repeat, progress=progress)
    problem = _dialect_problem(cases["dsh"].output, w)
    base, dialect = cases["agui"], cases["dsh"]
    rows = [
        [
            case.name,
            f"{case.frames}",
            f"{case.median * 1e3:.2f}",
            f"{case.best * 1e3:.2f}",
            f"{case.best / base.best:.2f}x",
        ]
        for case in cases.values()
    ]
    text = (
        f"### Encode: W as the dialect against AG-UI (the same run, {repeat} samples each)\n\n"
        + table(["implementation", "frames", "median ms per run", "best ms per run", "best vs AG-UI"], rows)
        + "\n"
    )
    ratio = dialect.best / base.best
    target = Target(
        "dialect: map + encode vs AG-UI's (same run of W)",
        f"{ratio:.2f}x AG-UI's time",
        f"<= {DIALECT_TARGET:.2f}x",
        ratio <= DIALECT_TARGET,
    )
    return EncodeReport(text, [target], [problem] if problem else [])
