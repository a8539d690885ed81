"""Payload JSON at serialization cost: :func:`streamkit.stringify.js_value` searches orjson's output and walks only
the flagged parts, :func:`streamkit.stringify.js_json` rewrites integral floats in the bytes. Both must give exactly
the bytes of the exact walk (:func:`streamkit.stringify.js_walk`), which the client tests pin to ``JSON.stringify``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit import frames, offload, stringify
from streamkit.aisdk import mapping
from streamkit.aisdk.mapping import AISDKMapper, _unsafe, safe_json
from streamkit.events import ChatEvent, RunStarted, StateUpdate, TextDelta, TextStart
from streamkit.frames import encode_frames
from streamkit.offload import large
from streamkit.stringify import changed_span, dumps, js_json, js_value, js_walk, to_json
from tests.support.oracle import JsOracle

FLOATS = st.sampled_from([100.0, -0.0, 0.0, 2.5, 1e-6, 1.5e-6, 1e-7, 1e16, 1e20, 1e21, 2.0**53, 3e15, -7.0])
TEXT = st.sampled_from(["", "a", '"', "\\", '\\"', "1.0,", "-0.0]", "e-6", "e+17}", '{"1":', "é", "\n"])
KEYS = st.one_of(TEXT, st.sampled_from(["0", "1", "7", "10", "01", "4294967295", "__proto__", "constructor"]))
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | FLOATS | st.floats(allow_nan=False) | TEXT,
    lambda c: st.lists(c, max_size=5) | st.dictionaries(KEYS, c, max_size=5) | st.lists(c, max_size=3).map(tuple),
    max_leaves=12,
)
# beyond the size where js_value splits its work (repeated values: cheap to generate, as flagged as any)
BIG = st.lists(VALUES, min_size=2, max_size=6).map(lambda v: v * 40)


@settings(max_examples=150, deadline=None)
@given(st.one_of(VALUES, BIG, BIG.map(lambda v: {f"k{i}": x for i, x in enumerate(v)})))
def test_js_value_and_js_json_give_the_exact_walks_bytes(value: Any) -> None:
    exact = dumps(js_walk(value))
    assert dumps(js_value(value)) == exact
    raw = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    text = js_json(raw)
    if text is not None:
        assert text == exact
    if isinstance(value, dict) and all(type(k) is str for k in value):
        assert dumps(safe_json(value)) == dumps(safe_json(js_walk(value)))


@settings(max_examples=15, deadline=None)
@given(st.lists(BIG, min_size=1, max_size=3))
def test_flagged_parts_match_json_stringify(js: JsOracle, values: list[Any]) -> None:
    texts = [dumps(js_value(v)).decode() for v in values]
    assert js.result("json", {"texts": texts}) == texts


def test_integers_beyond_64_bits_are_the_numbers_javascript_reads(js: JsOracle) -> None:
    """orjson writes 64-bit integers only; a wider one (a JavaScript server writes ``1e20`` as its digits, so a
    parsed payload may hold one) is written as JavaScript reads its digits, ``null`` beyond the largest double."""
    wide = [2**63, -(2**63) - 1, 2**64, -89078757417895990000, 10**20, 3**100, 10**400, -(10**400)]
    values: list[Any] = [*wide, wide, {"n": wide}, {"big": [list(range(200)), 2**70]}]
    texts = [dumps(js_value(v)).decode() for v in values]
    assert texts[:4] == ["9223372036854776000", "-9223372036854776000", "18446744073709552000", "-89078757417895990000"]
    assert texts[6:8] == ["null", "null"]
    assert js.result("json", {"texts": [str(v) for v in wide]}) == texts[: len(wide)]
    assert js.result("json", {"texts": texts}) == texts
    assert all(dumps(safe_json(v)) == dumps(js_walk(v)) for v in values[:-1])
    assert js_value(2**63 - 1) == 2**63 - 1 and js_value(-(2**63)) == -(2**63)  # orjson's own range is kept


def test_js_json_leaves_strings_alone() -> None:
    raw = orjson.dumps({"a": 'x":1.0,', "b": [1.0, -0.0, "\\\\", 2.0], "c": '\\"1.0]'})
    assert js_json(raw) == b'{"a":"x\\":1.0,","b":[1,0,"\\\\\\\\",2],"c":"\\\\\\"1.0]"}'
    assert js_json(orjson.dumps([1e-6])) is None and js_json(orjson.dumps({"1": 0})) is None


def test_changed_span() -> None:
    assert changed_span(b"abcdef", b"abXdef") == (2, 3)
    assert changed_span(b"aaaa", b"aaaaa") == (4, 0)
    long = bytes(range(256)) * 100
    assert changed_span(long, long[:9000] + b"!" + long[9000:]) == (9000, len(long) - 9000)


def test_large_is_a_bounded_look() -> None:
    assert not large({"a": [1, 2, {"b": "x" * 100}]})
    assert large(list(range(3000))) and large({"s": "x" * 300000}) and large([[0] * 1000] * 3)
    # A container past the bound answers before its members are looked at (the look runs on the loop).
    many = list(range(10**6))
    assert large(many) and large({"docs": many}) and large(dict.fromkeys(map(str, range(3000))))


# --- the AI SDK state part -----------------------------------------------------------------------------


@st.composite
def _state_runs(draw: st.DrawFn) -> list[Any]:
    """States of many members, each the one before with a few values replaced (floats, keys that need
    reordering, keys the client refuses, strings with escapes)."""
    state = {f"k{i}": v for i, v in enumerate(draw(st.lists(VALUES, max_size=6)) * draw(st.integers(1, 10)))}
    runs = [state]
    for _ in range(draw(st.integers(1, 5))):
        state = dict(state)
        for _ in range(draw(st.integers(1, 3))):
            state[draw(st.one_of(KEYS, st.sampled_from(sorted(state) or ["k0"])))] = draw(VALUES)
        runs.append(state)
    return runs


@settings(max_examples=80, deadline=None)
@given(_state_runs(), st.booleans())
def test_every_state_part_is_the_exact_walk(states: list[Any], small: bool) -> None:
    saved = stringify._JS_SPLIT
    mapper = AISDKMapper()
    mapper.feed(RunStarted())
    try:
        stringify._JS_SPLIT = 0 if small else saved
        for state in states:
            (chunk,) = [c for c in mapper.feed(StateUpdate(state=state)) if c["type"] == "data-state"]
            assert dumps(chunk["data"]) == dumps(safe_json(js_walk(state)))
    finally:
        stringify._JS_SPLIT = saved


def test_a_large_state_part_goes_out_as_its_json() -> None:
    state = {"docs": [{"i": i, "score": i / 2} for i in range(5000)]}
    mapper = AISDKMapper()
    mapper.feed(RunStarted())
    (chunk,) = mapper.feed(StateUpdate(state=state))
    assert isinstance(chunk["data"], orjson.Fragment)
    assert dumps(chunk) == dumps({"type": "data-state", "id": chunk["id"], "data": js_walk(state)})


# --- large payloads off the event loop ----------------------------------------------------------------


@pytest.mark.parametrize("ready", [False, True])
def test_large_payloads_are_mapped_off_the_loop_in_order(ready: bool) -> None:
    big = {"docs": [{"i": i, "t": "x" * 20} for i in range(20000)]}
    events: list[ChatEvent] = [
        RunStarted(),
        TextStart(id="t"),
        TextDelta(id="t", delta="a"),
        StateUpdate(state=big),
        TextDelta(id="t", delta="b"),
        StateUpdate(state={**big, "n": 1}),
    ]
    threads: list[bool] = []

    class Spy(AISDKMapper):
        def feed(self, event: ChatEvent) -> list[dict[str, Any]]:
            threads.append(offload._local.__dict__.get("offloaded", False))
            return super().feed(event)

    mapper = Spy(message_id="m")

    async def agent() -> AsyncIterator[ChatEvent]:
        for event in events:
            yield event

    async def run() -> bytes:
        return b"".join([c async for c in encode_frames(events if ready else agent(), mapper)])

    body = asyncio.run(run())
    plain = AISDKMapper(message_id="m")
    expected = b"".join(frames.frame(f) for e in events for f in plain.feed(e)) + b"".join(
        frames.frame(f) for f in plain.close()
    )
    assert body == expected
    assert threads == [False, False, True, True]  # the deltas skip feed; the two state updates ran in a worker


# --- the pieces of a large state, kept from one version to the next ------------------------------------


# Values that need no rewriting beyond integral floats (so that the pieces are kept), strings that look like
# what is rewritten among them; the edits draw from VALUES now and then.
CLEAN_TEXT = st.sampled_from(["", "a", '"', "\\", '\\"', "1.0,", "-0.0]", "x.0}", "é", "\n"])
CLEAN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.sampled_from([100.0, -0.0, 2.5, -7.0, 3e15])
    | CLEAN_TEXT,
    lambda c: st.lists(c, max_size=5) | st.dictionaries(CLEAN_TEXT, c, max_size=5),
    max_leaves=12,
)
EDITS = st.one_of(CLEAN, CLEAN, CLEAN, VALUES)


@st.composite
def _versions(draw: st.DrawFn) -> list[Any]:
    """Versions of a value of many entries (nested lists and objects among them), each the one before with
    a few entries replaced, inserted or removed, at the top or one level down."""
    inner = st.lists(CLEAN, min_size=1, max_size=8)
    items = draw(
        st.lists(st.one_of(CLEAN, inner, inner.map(lambda v: {f"m{i}": x for i, x in enumerate(v)})), max_size=30)
    )
    keyed = draw(st.booleans())
    value: Any = {f"k{i}": v for i, v in enumerate(items)} if keyed else items
    runs = [value]
    for _ in range(draw(st.integers(1, 5))):
        value = dict(value) if keyed else list(value)
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(["set", "insert", "remove", "inner"]))
            if keyed:
                key = draw(st.one_of(CLEAN_TEXT, KEYS, st.sampled_from(sorted(value) or ["k0"])))
                if op == "remove":
                    value.pop(key, None)
                elif op == "inner" and type(value.get(key)) is list:
                    value[key] = [*value[key], draw(EDITS)]
                else:
                    value[key] = draw(EDITS)
            else:
                i = draw(st.integers(0, len(value)))
                if op == "insert" or i == len(value):
                    value.insert(i, draw(EDITS))
                elif op == "remove":
                    del value[i]
                elif op == "inner" and type(value[i]) is dict:
                    value[i] = {**value[i], draw(st.one_of(CLEAN_TEXT, TEXT, KEYS)): draw(EDITS)}
                else:
                    value[i] = draw(EDITS)
        runs.append(value)
    return runs


@settings(max_examples=120, deadline=None)
@given(_versions())
def test_js_text_gives_the_exact_walks_bytes_version_after_version(versions: list[Any]) -> None:
    saved = stringify._PIECE, stringify._NEST
    stringify._PIECE, stringify._NEST = 40, 60
    try:
        plain, checked = stringify.JsText(), stringify.JsText(_unsafe)
        for value in versions:
            text = plain.text(value)
            assert text is None or text == dumps(js_walk(value))
            text = checked.text(value)
            assert text is None or text == dumps(safe_json(js_walk(value)))
    finally:
        stringify._PIECE, stringify._NEST = saved


@settings(max_examples=15, deadline=None)
@given(_versions())
def test_js_text_matches_json_stringify(js: JsOracle, versions: list[Any]) -> None:
    saved = stringify._PIECE, stringify._NEST
    stringify._PIECE, stringify._NEST = 40, 60
    try:
        pieces = stringify.JsText()
        texts = [t.decode() for t in map(pieces.text, versions) if t is not None]
    finally:
        stringify._PIECE, stringify._NEST = saved
    assert js.result("json", {"texts": texts}) == texts


@settings(max_examples=60, deadline=None)
@given(_versions())
def test_every_large_state_part_is_the_exact_walk(versions: list[Any]) -> None:
    saved = stringify._PIECE, stringify._NEST, mapping._FRAGMENT
    stringify._PIECE, stringify._NEST, mapping._FRAGMENT = 40, 60, 1  # every state after the first goes out in pieces
    try:
        mapper = AISDKMapper()
        mapper.feed(RunStarted())
        for state in versions:
            (chunk,) = [c for c in mapper.feed(StateUpdate(state=state)) if c["type"] == "data-state"]
            assert dumps(chunk["data"]) == dumps(safe_json(js_walk(state)))
    finally:
        stringify._PIECE, stringify._NEST, mapping._FRAGMENT = saved


def test_js_text_rewrites_only_the_pieces_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    state = {"title": "t", "docs": [{"i": i, "score": i + 0.0, "tags": ["a"]} for i in range(20000)]}
    pieces = stringify.JsText(_unsafe)
    assert pieces.text(state) == dumps(js_walk(state))
    searched: list[int] = []
    monkeypatch.setattr(
        stringify, "js_json", lambda raw, checked=False: searched.append(len(raw)) or js_json(raw, checked=checked)
    )
    new = {**state, "docs": list(state["docs"])}
    new["docs"][7] = {"i": 7, "score": 8.0, "tags": ["b"]}
    new["docs"][19000] = {"i": -1, "score": 1e300, "tags": []}
    assert pieces.text(new) == dumps(js_walk(new))
    assert len(searched) == 2 and sum(searched) < 3 * stringify._PIECE  # two pieces, not the state
    new["docs"][19000] = {"i": 0, "1": "an integer-like key: JavaScript lists it first"}
    assert pieces.text(new) is None  # the exact walk's turn


def test_to_json_is_what_javascript_reads() -> None:
    assert to_json({"a": 1.0, "b": (1, 2), 3: -0.0, "c": 1e21}) == {"a": 1, "b": [1, 2], "3": 0, "c": 1e21}
    assert type(to_json(2.0)) is int and type(to_json(2.5)) is float
