"""State deltas: for any sequence of JSON states, the deltas we send, applied in order to the state the client
holds, reproduce every state exactly, in Python (with the engine and with ``jsonpatch``, an independent RFC 6902
implementation) and in the client's own patch library (fast-json-patch 3.1.1, ``applyPatch(state, delta, true,
false)``). The engine that checks and applies patches is tested in ``tests/test_patch.py``."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import jsonpatch
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from streamkit.agui import AGUIMapper
from streamkit.agui import state as state_module
from streamkit.agui.state import ClientState, diff
from streamkit.events import ProtocolError, RunStarted, StateDelta, StateSnapshot, StateUpdate
from streamkit.patch import apply_patch, json_equal
from streamkit.stringify import dumps, to_json
from tests.agui.model import same
from tests.agui.strategies import JSON, edit, state_sequences
from tests.support.oracle import JsOracle

# --- unit -------------------------------------------------------------------------------------------


def test_diff_catches_what_make_patch_gets_wrong() -> None:
    for before, after in [({"a": 1}, {"a": True}), ([0, 1], [False, True]), ({"a": [1, 2]}, {"a": {"0": 1, "1": 2}})]:
        patch = diff(before, after, snapshot_when_larger=False)
        assert patch is not None and json_equal(apply_patch(before, patch), after)
    assert diff({"a": 1}, {"a": 1}) == []
    assert diff({"a": 1}, {"b": 2}) is None  # the patch would outweigh the state: a snapshot is smaller


@pytest.mark.parametrize(
    ("before", "after", "patch"),
    [
        ({"a": True}, {"a": 1}, [{"op": "replace", "path": "/a", "value": 1}]),
        ({"a": 1}, {"a": 1.0}, []),  # the same number in JavaScript
        ([1, {"x": "y"}], (1, {"x": "y"}), []),  # a tuple is an array
        ({"a/b": {"~": 1}}, {"a/b": {"~": 2}}, [{"op": "replace", "path": "/a~1b/~0", "value": 2}]),
        ({"a": {"b": 1}}, {"c": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/c"}]),
        ([1, 2, 3], [0, 1, 2, 3], [{"op": "add", "path": "/0", "value": 0}]),
        ([1, 2, 3], [1, 3], [{"op": "remove", "path": "/1"}]),
        ("x", ["x"], [{"op": "replace", "path": "", "value": ["x"]}]),
        # the client refuses paths through __proto__ and constructor/prototype: the object holding it goes whole
        (
            {"o": {"__proto__": 1}},
            {"o": {"__proto__": 2}},
            [{"op": "replace", "path": "/o", "value": {"__proto__": 2}}],
        ),
        (
            {"constructor": {"prototype": 1, "k": 0}},
            {"constructor": {"prototype": 1, "k": 1}},
            [{"op": "replace", "path": "/constructor/k", "value": 1}],
        ),
        (
            {"constructor": {"prototype": 1}},
            {"constructor": {"prototype": 2}},
            [{"op": "replace", "path": "/constructor", "value": {"prototype": 2}}],
        ),
    ],
)
def test_diff(before: Any, after: Any, patch: Any) -> None:
    assert diff(before, after, snapshot_when_larger=False) == patch


def _docs(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "title": f"document {i}", "done": i % 3 == 0, "tags": ["a", "b"]} for i in range(n)]


def test_diff_costs_what_changed_on_large_states() -> None:
    base = {"docs": _docs(3000), "meta": {"v": 1}}
    changed = copy.deepcopy(base)
    changed["meta"]["v"] = 2
    changed["docs"][17]["done"] = 1  # a bool turned number
    changed["docs"][2500]["tags"].append("c")
    assert diff(base, changed) == [
        {"op": "replace", "path": "/docs/17/done", "value": 1},
        {"op": "add", "path": "/docs/2500/tags/2", "value": "c"},
        {"op": "replace", "path": "/meta/v", "value": 2},
    ]
    inserted = {"docs": [*base["docs"][:1000], {"id": -1}, *base["docs"][1000:]], "meta": {"v": 1}}
    inserted["docs"][2000] = {**inserted["docs"][2000], "title": "x"}
    assert diff(base, inserted) == [
        {"op": "add", "path": "/docs/1000", "value": {"id": -1}},
        {"op": "replace", "path": "/docs/2000/title", "value": "x"},
    ]
    renamed = {(f"k{i}" if i != 700 else "renamed"): d for i, d in enumerate(base["docs"])}
    assert diff({f"k{i}": d for i, d in enumerate(base["docs"])}, renamed) == [
        {"op": "move", "from": "/k700", "path": "/renamed"}
    ]


def test_a_rewritten_list_falls_back_to_a_snapshot() -> None:
    base = _docs(500)
    shifted = [*base[1:250], {"id": -1}, *base[250:]]  # one removal and one insertion far apart
    assert diff(base, shifted, snapshot_when_larger=False) is not None
    assert diff(base, [{**d, "done": not d["done"]} for d in base]) is None  # everything changed


def test_the_client_state_is_held_as_bytes() -> None:
    state = ClientState({"a": [1.0, (2, 3)], 1: "x"})
    assert state.value == {"a": [1, [2, 3]], "1": "x"} and state.size == len(b'{"a":[1,[2,3]],"1":"x"}')
    patch, value = state.update({"a": [1, [2, 3]], "1": "y"}, snapshot_when_larger=False)
    assert patch == [{"op": "replace", "path": "/1", "value": "y"}] and value == {"a": [1, [2, 3]], "1": "y"}
    assert state.update({"b": 10**30}) == (None, {"b": 1e30})  # the patch would outweigh the state


# --- the mapper's state handling ----------------------------------------------------------------------


def test_updates_are_diffed_against_what_the_client_holds() -> None:
    mapper = AGUIMapper(thread_id="t", run_id="r", state={"n": 1, "items": list(range(10))}, snapshot_when_larger=False)
    mapper.feed(RunStarted())
    assert mapper.feed(StateUpdate(state={"n": 2, "items": list(range(10))})) == [
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}
    ]
    assert mapper.feed(StateUpdate(state={"n": 2, "items": list(range(10))})) == []  # nothing changed
    assert mapper.feed(StateSnapshot(state=[1])) == [{"type": "STATE_SNAPSHOT", "snapshot": [1]}]
    assert mapper.feed(StateUpdate(state=[1, 2])) == [
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/1", "value": 2}]}
    ]
    assert mapper.state == [1, 2]


def test_a_core_that_mutates_its_state_in_place_still_gets_deltas() -> None:
    mapper = AGUIMapper(thread_id="t", run_id="r", state={}, snapshot_when_larger=False)
    mapper.feed(RunStarted())
    state: dict[str, Any] = {"todos": []}
    mapper.feed(StateUpdate(state=state))
    state["todos"].append("x")
    assert mapper.feed(StateUpdate(state=state)) == [
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/todos/0", "value": "x"}]}
    ]


def test_snapshot_when_the_patch_outweighs_the_state() -> None:
    mapper = AGUIMapper(thread_id="t", run_id="r", state={"a": 1})
    mapper.feed(RunStarted())
    assert mapper.feed(StateUpdate(state={"b": 2})) == [{"type": "STATE_SNAPSHOT", "snapshot": {"b": 2}}]


def test_core_deltas_are_checked_against_the_client_state() -> None:
    mapper = AGUIMapper(thread_id="t", run_id="r", state={"n": 1})
    mapper.feed(RunStarted())
    good = [{"op": "replace", "path": "/n", "value": 2.0, "extra": "dropped"}]
    assert mapper.feed(StateDelta(patch=good)) == [
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}
    ]
    assert mapper.feed(StateDelta(patch=[{"op": "replace", "path": "/missing", "value": 1}])) == []
    assert mapper.feed(StateDelta(patch=[{"op": "add", "path": "no-slash", "value": 1}])) == []
    assert mapper.state == {"n": 2}
    strict = AGUIMapper(thread_id="t", run_id="r", state={}, strict=True)
    strict.feed(RunStarted())
    with pytest.raises(ProtocolError, match="would fail on the client"):
        strict.feed(StateDelta(patch=[{"op": "remove", "path": "/n"}]))


def test_unknown_client_state_gets_a_whole_document_change() -> None:
    # Without a request state, a delta can only replace the root, which applies to whatever the client holds.
    mapper = AGUIMapper(thread_id="t", run_id="r", snapshot_when_larger=False)
    mapper.feed(RunStarted())
    assert mapper.feed(StateUpdate(state={"a": 1})) == [
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "", "value": {"a": 1}}]}
    ]


# --- properties ---------------------------------------------------------------------------------------


def _steps(states: list[Any], *, snapshot_when_larger: bool) -> list[dict[str, Any]]:
    """What the mapper sends for ``StateUpdate``s of ``states[1:]`` on top of ``states[0]`` (held by the client)."""
    mapper = AGUIMapper(thread_id="t", run_id="r", state=states[0], snapshot_when_larger=snapshot_when_larger)
    mapper.feed(RunStarted())
    steps = []
    for state in states[1:]:
        frames = [orjson.loads(dumps(f)) for f in mapper.feed(StateUpdate(state=state))]  # as the client reads them
        assert len(frames) <= 1
        if not frames:
            steps.append({"delta": []})
        elif frames[0]["type"] == "STATE_SNAPSHOT":
            steps.append({"snapshot": frames[0]["snapshot"]})
        else:
            steps.append({"delta": frames[0]["delta"]})
    return steps


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state_sequences(), st.booleans())
def test_deltas_reproduce_every_state_in_python(states: list[Any], snapshot_when_larger: bool) -> None:
    current = to_json(states[0])
    for state, step in zip(states[1:], _steps(states, snapshot_when_larger=snapshot_when_larger), strict=True):
        if "snapshot" in step:
            current = step["snapshot"]
        else:
            independent = jsonpatch.apply_patch(current, step["delta"])  # another RFC 6902 implementation
            current = apply_patch(current, step["delta"])
            assert json_equal(independent, current)
        assert json_equal(current, to_json(state))


# jsonpatch.make_patch turned the last step into two moves through the same list; fast-json-patch checks the
# second move's target before the first move's removal shifts the list, and rejected it.
_DOC = {"b": [None] * 3, "": {"": None, "b": None}, "a": [None] * 2}
_MOVES_THROUGH_ONE_LIST = [
    [None],
    {"0": None},
    [[[], [None, None, None], [None, None, None]]],
    {"0": None, "1": [[], [None, None, None], [None, None, _DOC]]},
    {"0": None, "1": [[], [[None], None, None], [None, None, _DOC]]},
    {"0": None, "1": [None, [[None], None, None], [None, None, {**_DOC, "a": [None, []]}]]},
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state_sequences(), st.booleans())
@example(_MOVES_THROUGH_ONE_LIST, False)
def test_deltas_reproduce_every_state_in_the_client_patch_library(
    js: JsOracle, states: list[Any], snapshot_when_larger: bool
) -> None:
    steps = _steps(states, snapshot_when_larger=snapshot_when_larger)
    answer = js.call("agui", {"mode": "patch", "initial": to_json(states[0]), "steps": steps})
    assert answer["ok"] and answer["warnings"] == [], answer
    result = answer["result"]
    assert result["errors"] == [None] * len(steps)
    for got, state in zip(result["states"], states[1:], strict=True):
        assert same(got, to_json(state)), (got, state)


# --- the diff's own paths: wide containers, small slices -----------------------------------------------


@contextlib.contextmanager
def _small_slices() -> Iterator[None]:
    """The diff with slices of two entries, every container indexed and put together a few bytes at a time:
    its splitting, offsets, carried nodes and stepwise joins are exercised by small states."""
    saved = state_module._FAN, state_module._INDEXED, state_module._CHUNK, state_module._STEP
    state_module._FAN, state_module._INDEXED, state_module._CHUNK, state_module._STEP = 2, 0, 3, 5
    try:
        yield
    finally:
        state_module._FAN, state_module._INDEXED, state_module._CHUNK, state_module._STEP = saved


@st.composite
def _wide_sequences(draw: st.DrawFn) -> list[Any]:
    """Runs of states with long arrays and objects of many members, edited a few places at a time."""
    items = draw(st.lists(JSON, max_size=30))
    first: Any = items if draw(st.booleans()) else {f"k{i}": v for i, v in enumerate(items)}
    states = [first]
    for _ in range(draw(st.integers(1, 4))):
        value = states[-1]
        for _ in range(draw(st.integers(1, 3))):
            value = draw(edit(value))
        states.append(value)
    return states


def _replay(states: list[Any], steps: list[dict[str, Any]]) -> None:
    current = to_json(states[0])
    for state, step in zip(states[1:], steps, strict=True):
        current = step["snapshot"] if "snapshot" in step else apply_patch(current, step["delta"])
        assert json_equal(current, to_json(state))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_wide_sequences(), state_sequences()), st.booleans())
def test_small_slices_reproduce_every_state_in_python(states: list[Any], snapshot_when_larger: bool) -> None:
    with _small_slices():
        steps = _steps(states, snapshot_when_larger=snapshot_when_larger)
    _replay(states, steps)
    _replay(states, _steps(states, snapshot_when_larger=snapshot_when_larger))  # and the default slices


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_wide_sequences(), state_sequences()))
def test_small_slices_reproduce_every_state_in_the_client_patch_library(js: JsOracle, states: list[Any]) -> None:
    with _small_slices():
        steps = _steps(states, snapshot_when_larger=False)
    answer = js.call("agui", {"mode": "patch", "initial": to_json(states[0]), "steps": steps})
    assert answer["ok"] and answer["warnings"] == [], answer
    assert answer["result"]["errors"] == [None] * len(steps)
    for got, state in zip(answer["result"]["states"], states[1:], strict=True):
        assert same(got, to_json(state)), (got, state)


def test_large_states_reproduce_in_the_client_patch_library(js: JsOracle) -> None:
    base = {"docs": _docs(2000), "by_id": {str(i): {"n": i} for i in range(300)}}
    states = [base]
    for step in range(6):
        new = copy.deepcopy(states[-1])
        new["docs"][step * 300]["done"] = step
        new["docs"].insert(step * 7, {"id": -step})
        del new["docs"][-1 - step]
        new["by_id"][f"n{step}"] = new["by_id"].pop(str(step * 11))
        states.append(new)
    steps = _steps(states, snapshot_when_larger=True)
    assert all("delta" in s and len(s["delta"]) <= 8 for s in steps), steps
    answer = js.call("agui", {"mode": "patch", "initial": to_json(base), "steps": steps})
    assert answer["ok"] and answer["result"]["errors"] == [None] * len(steps)
    assert same(answer["result"]["states"][-1], to_json(states[-1]))
