"""The SSE writer's delta hot path: frames written from a mapper's ``delta_prefixes`` equal ``feed``'s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit.events import (
    ChatEvent,
    RunError,
    RunFinished,
    RunStarted,
    SequenceChecker,
    TextDelta,
    TextEnd,
    TextStart,
)
from streamkit.frames import MapperBase, encode_frames


class _Mapper(MapperBase):
    """A tiny text-only mapper; with ``hot=True`` it publishes its open text blocks as delta prefixes."""

    def __init__(self, hot: bool) -> None:
        self.checker = SequenceChecker()
        self._prefixes: dict[str, bytes] = {}
        if hot:
            self.delta_prefixes = {"text-delta": self._prefixes}
        self.fed: list[str] = []

    def _map(self, event: ChatEvent) -> list[dict[str, Any]]:
        if isinstance(event, TextDelta):
            return [{"type": "delta", "id": event.id, "delta": event.delta}]
        if isinstance(event, RunError):
            return [{"type": "error", "message": event.message}]
        return [{"type": event.type}]

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        self.fed.append(event.type)
        out = [f for e in self.checker.feed(event) for f in self._map(e)]
        self._prefixes.clear()
        for block_id in self.checker.streaming("text"):
            self._prefixes[block_id] = b'{"type":"delta","id":' + orjson.dumps(block_id) + b',"delta":'
        return out

    def close(self) -> list[dict[str, Any]]:
        return [f for e in self.checker.close() for f in self._map(e)]

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        return self.feed(RunError(message=message, code=code))


def _run(n: int = 50) -> list[ChatEvent]:
    out: list[ChatEvent] = [RunStarted(), TextStart(id="a")]
    out += [TextDelta(id="a", delta=f'w{i} \u00e9\n"') for i in range(n)]
    out += [TextDelta(id="b", delta="implied start"), TextEnd(id="a"), TextDelta(id="a", delta="reopened")]
    return [*out, RunFinished()]


async def _encode(events: Any, mapper: _Mapper, **kw: Any) -> bytes:
    return b"".join([chunk async for chunk in encode_frames(events, mapper, **kw)])


async def _agen(events: list[ChatEvent]) -> AsyncIterator[ChatEvent]:
    for event in events:
        yield event


@pytest.mark.parametrize("source", ["sync", "async"])
@pytest.mark.parametrize("coalesce", [1, 64, 16384])
async def test_hot_path_writes_the_same_bytes(source: str, coalesce: int) -> None:
    events = _run()
    cold, hot = _Mapper(hot=False), _Mapper(hot=True)
    want = await _encode(events if source == "sync" else _agen(events), cold, coalesce=coalesce)
    got = await _encode(events if source == "sync" else _agen(events), hot, coalesce=coalesce)
    assert got == want
    # the hot path really ran: only the deltas for blocks that were not open reached feed
    assert hot.fed.count("text-delta") == 2
    assert cold.fed.count("text-delta") == len([e for e in events if e.type == "text-delta"])


@pytest.mark.parametrize("source", ["sync", "async"])
async def test_hot_path_keeps_the_frame_size_guard(source: str) -> None:
    events: list[ChatEvent] = [RunStarted(), TextStart(id="a"), TextDelta(id="a", delta="ok")]
    events += [TextDelta(id="a", delta="x" * 5000), TextDelta(id="a", delta="after")]
    body = await _encode(events if source == "sync" else _agen(events), _Mapper(hot=True), max_frame_bytes=1000)
    frames = [orjson.loads(f[6:]) for f in body.split(b"\n\n") if f]
    assert [f["type"] for f in frames] == ["run-started", "text-start", "delta", "text-end", "error"]
    assert frames[2]["delta"] == "ok"


@pytest.mark.parametrize("source", ["sync", "async"])
async def test_unencodable_delta_on_the_hot_path_ends_the_stream_with_an_error(source: str) -> None:
    events: list[ChatEvent] = [RunStarted(), TextStart(id="a"), TextDelta(id="a", delta="ok")]
    events += [TextDelta(id="a", delta="lone \ud800 surrogate"), TextDelta(id="a", delta="after")]
    body = await _encode(events if source == "sync" else _agen(events), _Mapper(hot=True))
    frames = [orjson.loads(f[6:]) for f in body.split(b"\n\n") if f]
    assert [f["type"] for f in frames] == ["run-started", "text-start", "delta", "text-end", "error"]


class _Failing(Exception):
    pass


def _ready(events: list[ChatEvent], fails: bool) -> Any:
    yield from events
    if fails:
        raise _Failing("the agent failed")


async def _coming(events: list[ChatEvent], fails: bool) -> AsyncIterator[ChatEvent]:
    for event in _ready(events, fails):
        yield event


_RUNS: dict[str, list[ChatEvent]] = {
    "empty deltas": [TextDelta(id="a", delta=d) for d in ["", "x", "", "", "y", ""]],
    "all empty": [TextDelta(id="a", delta="") for _ in range(5)],
    "escapes and seams": [TextDelta(id="a", delta=d) for d in ['","', ",", '\\",', "\x00", "\u2028é", "\n\n"]],
    "unencodable in the middle": [TextDelta(id="a", delta=d) for d in ["one", "two", "bad \udc80", "three"]],
    "too large in the middle": [TextDelta(id="a", delta=d) for d in ["one", "two", "x" * 3000, "three"]],
    "two blocks interleaved": [TextDelta(id=i, delta=f"{i}{n}") for n in range(30) for i in ("a", "b", "b")],
}


async def _three_ways(deltas: list[ChatEvent], fails: bool, coalesce: int, max_frame_bytes: int) -> list[bytes]:
    """The run's body from the ready drain, from the drain that writes each event as it comes, and from the
    mapper's own frames (no hot path); the agent fails after the deltas when ``fails``."""
    events: list[ChatEvent] = [RunStarted(), TextStart(id="a"), TextStart(id="b"), *deltas]
    if not fails:
        events.append(RunFinished())
    return [
        await _encode(source(events, fails), _Mapper(hot=hot), coalesce=coalesce, max_frame_bytes=max_frame_bytes)
        for hot, source in [(True, _ready), (True, _coming), (False, _ready)]
    ]


@pytest.mark.parametrize("run", list(_RUNS))
@pytest.mark.parametrize("coalesce", [1, 50, 16384])
@pytest.mark.parametrize("fails", [False, True])
async def test_runs_of_deltas_write_what_one_by_one_writes(run: str, coalesce: int, fails: bool) -> None:
    """The ready drain writes a run of deltas of one block together: the bytes are those of the drain that writes
    each event as it comes, and of the mapper's own frames, failures included (and what went out before them)."""
    bodies = await _three_ways(_RUNS[run], fails, coalesce, 2000)
    assert bodies[0] == bodies[1] == bodies[2]
    assert bodies[0].endswith(b"\n\n") and b"data: \n\n" not in bodies[0]


_DELTA = st.text(st.characters(blacklist_categories=()), max_size=12) | st.sampled_from(
    ["", '","', ",\x00,", "x" * 900]
)


@settings(max_examples=200, deadline=None)
@given(
    deltas=st.lists(st.tuples(st.sampled_from(["a", "b"]), _DELTA), max_size=40),
    coalesce=st.sampled_from([1, 64, 16384]),
    fails=st.booleans(),
)
async def test_any_run_of_deltas_writes_what_one_by_one_writes(
    deltas: list[tuple[str, str]], coalesce: int, fails: bool
) -> None:
    """Any deltas (any code point, lone surrogates, seams' look-alikes, frames over the limit), of two blocks in
    any order: the ready drain's runs write the bytes the drain that writes each delta as it comes writes."""
    bodies = await _three_ways([TextDelta(id=block, delta=delta) for block, delta in deltas], fails, coalesce, 800)
    assert bodies[0] == bodies[1] == bodies[2]
