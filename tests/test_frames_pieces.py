"""Large frames in pieces: an event mapped off the event loop is written there, a frame of it longer than a
chunk leaving as several consecutive chunks (a :class:`~streamkit.stringify.Pieces` value written as it is),
whose bytes are the frames' bytes exactly, and where :func:`~streamkit.frames.frame_end` tells where a frame
ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit import frames as frames_module
from streamkit.aisdk.mapping import AISDKMapper
from streamkit.events import ChatEvent, Data, RunStarted, StateUpdate
from streamkit.frames import FrameTooLarge, MapperBase, encode_frames, frame, frame_end
from streamkit.stringify import Pieces, dumps


class Scripted(MapperBase):
    """Each ``Data`` event's ``data`` is the list of frames to return for it; every event is mapped off the loop
    (or none, with ``offloaded=False``)."""

    def __init__(self, named: bool = False, offloaded: bool = True) -> None:
        self.named_events = named
        self.offloaded = offloaded

    def offload(self, event: ChatEvent) -> bool:
        return self.offloaded

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        if event.type != "data":
            return []
        out = []
        for spec in event.data:  # type: ignore[union-attr]
            body = {k: Pieces([p.encode() for p in v]) if isinstance(v, list) else v for k, v in spec.items()}
            out.append({"event": "part", "data": body} if self.named_events else body)
        return out

    def close(self) -> list[dict[str, Any]]:
        return [{"event": "part", "data": {"type": "end"}} if self.named_events else {"type": "end"}]

    def fail(self, message: str, code: str | None = None) -> list[dict[str, Any]]:
        return [{"type": "error", "errorText": message}]


def _joined(spec: dict[str, Any]) -> dict[str, Any]:
    """A frame spec as the value it stands for (its pieces joined)."""
    return {k: orjson.Fragment("".join(v).encode()) if isinstance(v, list) else v for k, v in spec.items()}


def _expected(specs: list[list[dict[str, Any]]], named: bool) -> bytes:
    frames = [_joined(s) for batch in specs for s in batch] + [{"type": "end"}]
    return b"".join(frame(f, "part" if named else None) for f in frames)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(frames_module, "_PIECE", 40)
    yield


async def _chunks(events: list[ChatEvent], mapper: MapperBase, ready: bool, **kw: Any) -> list[bytes]:
    async def agent() -> AsyncIterator[ChatEvent]:
        for e in events:
            yield e

    return [c async for c in encode_frames(events if ready else agent(), mapper, **kw)]


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_JSON_TEXT = st.lists(_TEXT, max_size=5).map(lambda xs: dumps(xs).decode())  # the JSON of a list of strings


@st.composite
def _pieces(draw: st.DrawFn) -> list[str]:
    """A JSON text cut into pieces anywhere between characters."""
    text = draw(_JSON_TEXT)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


_SPEC = st.fixed_dictionaries(
    {"type": st.sampled_from(["a", "b"])},
    optional={
        "text": _TEXT.map(lambda t: t * 7),
        "n": st.integers(-(2**53), 2**53),
        "state": _pieces(),
        "more": _pieces(),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_SPEC, max_size=3), max_size=4), st.booleans(), st.booleans())
async def test_pieces_make_the_same_bytes_as_whole_frames(
    small_chunks: None, specs: list[list[dict[str, Any]]], named: bool, ready: bool
) -> None:
    events: list[ChatEvent] = [Data(name="x", data=batch) for batch in specs]
    chunks = await _chunks(events, Scripted(named), ready)
    assert b"".join(chunks) == _expected(specs, named)
    for chunk in chunks:  # a chunk that does not end a frame ends inside one: never on a blank line
        assert frame_end(chunk) == chunk.endswith(b"\n\n")
    assert frame_end(chunks[-1])
    on_loop = await _chunks(events, Scripted(named, offloaded=False), ready)
    assert b"".join(on_loop) == b"".join(chunks) and all(map(frame_end, on_loop))


async def test_a_large_frame_leaves_in_chunks_none_of_which_holds_it_all() -> None:
    text = "x" * 1_000_000
    chunks = await _chunks([Data(name="x", data=[{"type": "a", "text": text}])], Scripted(), False)
    assert b"".join(chunks) == frame({"type": "a", "text": text}) + frame({"type": "end"})
    assert len(chunks) >= 4 and max(map(len, chunks)) <= 2 * frames_module._PIECE
    assert [frame_end(c) for c in chunks] == [False] * (len(chunks) - 2) + [True, True]


@pytest.mark.parametrize("ready", [False, True])
async def test_a_frame_over_the_limit_in_pieces_ends_in_error_frames(small_chunks: None, ready: bool) -> None:
    specs = [[{"type": "a", "n": 1}, {"type": "b", "state": ["[", '"' + "y" * 300 + '"', "]"]}]]
    seen: list[BaseException] = []
    chunks = await _chunks(
        [Data(name="x", data=specs[0])], Scripted(), ready, max_frame_bytes=200, on_error=seen.append
    )
    body = b"".join(chunks)
    assert body == frame({"type": "a", "n": 1}) + frame({"type": "error", "errorText": "An error occurred."})
    assert isinstance(seen[0], FrameTooLarge) and seen[0].limit == 200


def test_pieces_serialize_joined_anywhere_else() -> None:
    value = {"type": "s", "data": Pieces([b'{"a":', b"[1,2]", b"}"])}
    assert frame(value) == b'data: {"type":"s","data":{"a":[1,2]}}\n\n'


def _large_state(n: int) -> dict[str, Any]:
    return {"title": "t", "docs": [{"id": i, "body": "some words " * 4, "score": i / 3} for i in range(n)]}


@pytest.mark.parametrize("ready", [False, True])
async def test_the_ai_sdk_state_part_off_the_loop_is_the_same_bytes_in_pieces(ready: bool) -> None:
    state = _large_state(6000)  # about 500 KB of JSON: mapped off the loop, its part in pieces
    second = {**state, "title": "u"}
    events: list[ChatEvent] = [RunStarted(message_id="m1"), StateUpdate(state=state), StateUpdate(state=second)]
    chunks = await _chunks(events, AISDKMapper(), ready)
    assert any(not frame_end(c) for c in chunks)

    class OnLoop(AISDKMapper):
        def offload(self, event: ChatEvent) -> bool:
            return False

    whole = await _chunks(events, OnLoop(), ready)
    assert all(map(frame_end, whole))
    assert b"".join(chunks) == b"".join(whole)


class NamedText(Scripted):
    """A named-event protocol whose frames' data is a string."""

    def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
        return [{"event": "text", "data": event.data}] if event.type == "data" else []  # type: ignore[union-attr]


async def test_a_named_frame_of_any_data_is_written_in_pieces(small_chunks: None) -> None:
    chunks = await _chunks([Data(name="x", data="y" * 500)], NamedText(named=True), False)
    assert len(chunks) > 2
    assert b"".join(chunks) == frame("y" * 500, "text") + frame({"type": "end"}, "part")


@pytest.mark.parametrize("short", [True, False])
async def test_short_offloaded_work_runs_on_the_loop_after_the_first(
    monkeypatch: pytest.MonkeyPatch, short: bool
) -> None:
    import threading

    monkeypatch.setattr(frames_module, "_INLINE", float("inf") if short else 0.0)
    threads: list[bool] = []

    class Spy(Scripted):
        def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
            threads.append(threading.current_thread() is threading.main_thread())
            return super().feed(event)

    events: list[ChatEvent] = [Data(name="x", data=[{"type": "a", "n": i}]) for i in range(4)]
    chunks = await _chunks(events, Spy(), False)
    assert b"".join(chunks) == _expected([[{"type": "a", "n": i}] for i in range(4)], False)
    assert threads == ([False, True, True, True] if short else [False] * 4)
