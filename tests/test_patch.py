"""The RFC 6902 engine (:mod:`streamkit.patch`): patches checked and applied as the AG-UI client applies them
(fast-json-patch 3.1.1, ``applyPatch(state, delta, true, false)``). Whatever the engine accepts applies in the
client with the same result; what the client accepts only by accident of JavaScript is refused; and every
protocol gives a ``StateDelta`` the engine's meaning."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit.agui import AGUIMapper, fold
from streamkit.aisdk import AISDKMapper
from streamkit.dsh import DSHMapper
from streamkit.events import Data, ProtocolError, RunStarted, StateDelta, StateUpdate
from streamkit.patch import PatchError, apply_patch, check_patch, escape, json_equal
from streamkit.sources.agui import AGUITranslator
from streamkit.stringify import to_json
from tests.agui.model import same
from tests.agui.strategies import JSON, KEYS
from tests.support.oracle import JsOracle

# --- unit -------------------------------------------------------------------------------------------


def test_json_equal_is_strict_about_types() -> None:
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not json_equal(True, 1) and not json_equal(1, 1.0) and not json_equal([0], [False])
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal({"a": 1}, {"b": 1})


def test_escape_follows_rfc_6901() -> None:
    assert escape("a/b~c") == "a~1b~0c"
    assert apply_patch({"a/b~c": 1}, [{"op": "replace", "path": "/a~1b~0c", "value": 2}]) == {"a/b~c": 2}


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ({"op": "add"}, "a JSON Patch must be a list"),
        ([1], "an operation must be an object"),
        ([{"op": "merge", "path": "/a"}], "unknown op"),
        ([{"op": "add", "path": "a", "value": 1}], "invalid path"),
        ([{"op": "add", "path": "/~2", "value": 1}], "invalid path"),
        ([{"op": "add", "path": "/a"}], "needs a value"),
        ([{"op": "move", "path": "/a"}], "invalid from"),
    ],
)
def test_malformed_patches_are_refused(patch: Any, reason: str) -> None:
    with pytest.raises(PatchError, match=reason):
        check_patch(patch)


def test_check_patch_keeps_only_rfc_members() -> None:
    assert check_patch([{"op": "remove", "path": "/a", "value": 1, "x": 2}]) == [{"op": "remove", "path": "/a"}]
    assert check_patch([{"op": "add", "path": "", "value": None}]) == [{"op": "add", "path": "", "value": None}]


@pytest.mark.parametrize(
    ("doc", "patch", "result"),
    [
        ({"a": 1}, [{"op": "add", "path": "", "value": [1]}], [1]),
        ([1, 2], [{"op": "replace", "path": "", "value": "x"}], "x"),
        ({"a": 1}, [{"op": "remove", "path": ""}], None),
        ({"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}], {"a": [1, 2]}),
        ({"a": [1]}, [{"op": "add", "path": "/a/1", "value": 2}], {"a": [1, 2]}),
        ({"a": [1]}, [{"op": "add", "path": "/a/0", "value": 0}], {"a": [0, 1]}),
        ({"-": 1}, [{"op": "replace", "path": "/-", "value": 2}], {"-": 2}),
        ({"": {"": 1}}, [{"op": "replace", "path": "//", "value": 2}], {"": {"": 2}}),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/c"}], {"a": {}, "c": 1}),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": ""}], {"b": 1}),
        ([[1, 2], [3]], [{"op": "move", "from": "/0/0", "path": "/1/1"}], [[2], [3, 1]]),
        ({"a": {"b": 1}}, [{"op": "copy", "from": "/a", "path": "/c"}], {"a": {"b": 1}, "c": {"b": 1}}),
        ({"a": 1}, [{"op": "test", "path": "/a", "value": 1.0}], {"a": 1}),
        ({"constructor": {"x": 1}}, [{"op": "remove", "path": "/constructor/x"}], {"constructor": {}}),
    ],
)
def test_apply_patch(doc: Any, patch: Any, result: Any) -> None:
    before = to_json(doc)
    assert json_equal(apply_patch(doc, patch), result)
    assert json_equal(doc, before)  # the input is never modified


@pytest.mark.parametrize(
    ("doc", "patch"),
    [
        ({}, [{"op": "replace", "path": "/a", "value": 1}]),  # the producer bug the client drops silently
        ({}, [{"op": "remove", "path": "/a"}]),
        ({}, [{"op": "add", "path": "/a/b", "value": 1}]),
        ({"a": "str"}, [{"op": "add", "path": "/a/0", "value": 1}]),
        (5, [{"op": "add", "path": "/a", "value": 1}]),
        (None, [{"op": "add", "path": "/a", "value": 1}]),
        ([1], [{"op": "add", "path": "/3", "value": 1}]),
        ([1], [{"op": "replace", "path": "/-", "value": 1}]),
        ([1, 2], [{"op": "add", "path": "/01", "value": 1}]),  # leading zero: fast-json-patch reads it loosely
        ([1], [{"op": "add", "path": "/x", "value": 1}]),
        ({"a": 1}, [{"op": "add", "path": "/__proto__", "value": {}}]),
        ({"constructor": {}}, [{"op": "add", "path": "/constructor/prototype", "value": 1}]),
        ({"a": {}}, [{"op": "move", "from": "/a", "path": "/a/b"}]),
        ({"a": 1}, [{"op": "copy", "from": "/b", "path": "/c"}]),
        ({"a": 1}, [{"op": "test", "path": "/a", "value": True}]),
        ({}, [{"op": "replace", "path": "/toString", "value": 1}]),  # inherited in JS, absent in JSON
    ],
)
def test_patches_that_would_fail_or_differ_on_the_client_are_refused(doc: Any, patch: Any) -> None:
    with pytest.raises(PatchError):
        apply_patch(doc, patch)


@pytest.mark.parametrize(
    ("doc", "patch", "javascript_result"),
    [
        ({}, [{"op": "replace", "path": "/toString", "value": 1}], {"toString": 1}),  # inherited key "exists"
        ({}, [{"op": "remove", "path": "/toString"}], {}),
        ([1, 2], [{"op": "add", "path": "/01", "value": 9}], [1, 9, 2]),  # "01" read as 1
        ([1], [{"op": "add", "path": "/", "value": 0}], [0, 1]),  # "" read as 0
        ("abc", [{"op": "test", "path": "/0", "value": "a"}], "abc"),  # strings are indexable
        ([1], [{"op": "move", "from": "/0", "path": "/5"}], [1]),  # unchecked index after the remove
    ],
)
def test_patches_javascript_accepts_only_by_accident_are_refused_here(
    js: JsOracle, doc: Any, patch: Any, javascript_result: Any
) -> None:
    answer = js.result("agui", {"mode": "patch", "initial": doc, "steps": [{"delta": patch}]})
    assert answer == {"states": [javascript_result], "errors": [None]}
    with pytest.raises(PatchError):
        apply_patch(doc, patch)


# --- properties ---------------------------------------------------------------------------------------


def _pointer(doc: Any, draw: st.DrawFn) -> str:
    tokens: list[str] = []
    node = doc
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        if isinstance(node, dict):
            key = draw(st.sampled_from(sorted(node)))
            node = node[key]
        else:
            index = draw(st.integers(0, len(node) - 1))
            key, node = str(index), node[index]
        tokens.append(key)
    if draw(st.booleans()):
        tokens.append(draw(st.one_of(KEYS, st.sampled_from(["-", "0", "1", "5", "00"]))))
    return "".join("/" + escape(t) for t in tokens)


@st.composite
def _patched(draw: st.DrawFn) -> tuple[Any, list[dict[str, Any]]]:
    doc = to_json(draw(JSON))
    patch = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]))
        entry: dict[str, Any] = {"op": op, "path": _pointer(doc, draw)}
        if op in ("move", "copy"):
            entry["from"] = _pointer(doc, draw)
        if op in ("add", "replace", "test"):
            entry["value"] = to_json(draw(JSON))
        patch.append(entry)
    return doc, patch


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_patched())
def test_a_patch_we_accept_applies_identically_in_the_client(js: JsOracle, case: tuple[Any, list[Any]]) -> None:
    doc, patch = case
    try:
        ours = apply_patch(doc, patch)
    except PatchError:
        return  # refused: never sent, so the client never sees it
    answer = js.call("agui", {"mode": "patch", "initial": doc, "steps": [{"delta": patch}]})
    assert answer["ok"], answer
    assert answer["result"]["errors"] == [None], (doc, patch, answer["result"])
    assert same(answer["result"]["states"][0], ours), (doc, patch, answer["result"], ours)


# --- one meaning on every protocol ---------------------------------------------------------------------
#
# The AI SDK mapping and the AG-UI source applied patches with the third-party ``jsonpatch`` before they used
# the engine. These are the patches where the two disagree; the client decides, and every protocol follows it.

_REFUSED = object()
_DISAGREEMENTS = [
    # jsonpatch applies a path through __proto__ or constructor/prototype; the client refuses it
    ({"a": 1}, [{"op": "add", "path": "/__proto__", "value": {}}], _REFUSED),
    ({"__proto__": 1}, [{"op": "replace", "path": "/__proto__", "value": 2}], _REFUSED),
    ({"constructor": {}}, [{"op": "add", "path": "/constructor/prototype", "value": 1}], _REFUSED),
    ({"a": {"__proto__": 1}}, [{"op": "move", "from": "/a/__proto__", "path": "/b"}], _REFUSED),
    # jsonpatch refuses a remove of the root; the client applies it and holds null
    ({"a": 1}, [{"op": "remove", "path": ""}], None),
]


@pytest.fixture
def _quiet() -> Iterator[None]:
    logger = logging.getLogger("streamkit")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the dropped deltas' warnings
    yield
    logger.setLevel(level)


@pytest.mark.usefixtures("_quiet")
@pytest.mark.parametrize(
    ("doc", "patch", "result"),
    _DISAGREEMENTS,
    ids=["add-proto", "replace-proto", "add-constructor-prototype", "move-from-proto", "remove-root"],
)
def test_a_state_delta_means_the_same_on_every_protocol(js: JsOracle, doc: Any, patch: Any, result: Any) -> None:
    refused = result is _REFUSED
    answer = js.result("agui", {"mode": "patch", "initial": doc, "steps": [{"delta": patch}]})
    if refused:
        assert answer["errors"][0] is not None and answer["states"] == [doc]
        with pytest.raises(PatchError):
            apply_patch(doc, patch)
    else:
        assert answer == {"states": [result], "errors": [None]}
        assert apply_patch(doc, patch) == result

    agui = AGUIMapper(thread_id="t", run_id="r", state=doc)
    agui.feed(RunStarted())
    assert agui.feed(StateDelta(patch=patch)) == ([] if refused else [{"type": "STATE_DELTA", "delta": patch}])
    assert agui.state == (doc if refused else result)

    aisdk = AISDKMapper(message_id="m", state=doc)
    aisdk.feed(RunStarted())
    assert aisdk.feed(StateDelta(patch=patch)) == (
        [] if refused else [{"type": "data-state", "id": "state", "data": result}]
    )

    dsh = DSHMapper(agent_id="a", run_id="r", state=doc, clock=lambda: 1.0)
    dsh.feed(RunStarted())
    dsh.feed(StateDelta(patch=patch))
    done = [f["data"] for f in dsh.close() if f.get("event") == "done"]
    assert done and ("state" not in done[0] if refused else done[0]["state"] == result)

    folded = fold([{"type": "STATE_DELTA", "delta": patch}], state=doc)
    assert folded.state == (doc if refused else result) and bool(folded.warnings) is refused

    source = AGUITranslator(state=doc)
    assert source.feed({"type": "STATE_DELTA", "delta": patch}) == ([] if refused else [StateUpdate(state=result)])
    assert source.state == (doc if refused else result)
    activity = {"messageId": "a1", "activityType": "plan"}
    source.feed({"type": "ACTIVITY_SNAPSHOT", **activity, "content": doc})
    delta = source.feed({"type": "ACTIVITY_DELTA", **activity, "patch": patch})
    assert delta == ([] if refused else [Data(name="activity-plan", data=result, id="a1")])

    if refused:
        for strict in (
            AGUIMapper(thread_id="t", run_id="r", state=doc, strict=True),
            AISDKMapper(message_id="m", state=doc, strict=True),
            DSHMapper(agent_id="a", run_id="r", state=doc, strict=True),
        ):
            strict.feed(RunStarted())
            with pytest.raises(ProtocolError):
                strict.feed(StateDelta(patch=patch))
