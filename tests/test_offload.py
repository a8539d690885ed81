"""Offloaded work gives the event loop its turns, rationed: :func:`~streamkit.offload.breathe` sleeps (hands the
interpreter to the loop's thread) at most once per ``_BREATH`` seconds of work, and only in offloaded work. What
is offloaded is told by :func:`~streamkit.offload.large`: the totals of a value's JSON values and characters."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import offload
from streamkit.events import ToolResult


class Clock:
    """A stand-in for ``time`` in :mod:`streamkit.offload`: its clock moves when told; sleeps are recorded."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(offload, "time", fake)
    return fake


def test_breathe_does_nothing_outside_offloaded_work(clock: Clock) -> None:
    for _ in range(10):
        clock.now += offload._BREATH
        offload.breathe()
    assert clock.sleeps == []
    assert not offload.offloaded()


def test_breathe_hands_over_once_per_breath_of_work(clock: Clock) -> None:
    def work() -> list[float]:
        assert offload.offloaded()
        for _ in range(40):  # pieces of a tenth of a breath each: four breaths of work
            clock.now += offload._BREATH / 10
            offload.breathe()
        return clock.sleeps

    assert offload.run_offloaded(work) == [0, 0, 0, 0]
    assert not offload.offloaded()
    offload.breathe()
    assert clock.sleeps == [0, 0, 0, 0]


def test_a_breath_counts_from_the_start_of_the_work(clock: Clock) -> None:
    clock.now += 10  # time that went by before the work started is not work
    assert offload.run_offloaded(lambda: (offload.breathe(), list(clock.sleeps))[1]) == []


def totals(value: Any) -> tuple[int, int]:
    """The JSON values in ``value``'s containers and the characters of its strings (keys included)."""
    if isinstance(value, str):
        return 0, len(value)
    if isinstance(value, dict):
        pairs = [totals(v) for v in value.values()]
        keys = sum(len(k) if isinstance(k, str) else 1 for k in value)
        return len(value) + sum(n for n, _ in pairs), keys + sum(c for _, c in pairs)
    if isinstance(value, (list, tuple)):
        pairs = [totals(v) for v in value]
        return len(value) + sum(n for n, _ in pairs), sum(c for _, c in pairs)
    return 0, 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=6),
    max_leaves=60,
)


@given(value=json_values, nodes=st.integers(0, 40), chars=st.integers(0, 120))
def test_large_is_a_bound_on_the_totals(value: Any, nodes: int, chars: int) -> None:
    count, size = totals(value)
    assert offload.large(value, nodes, chars) is (count > nodes or size > chars)


def test_large_looks_inside_models() -> None:
    event = ToolResult(id="c1", output={"rows": ["x" * 100] * 30})
    assert offload.large([event], nodes=10_000, chars=2_000)
    assert not offload.large([event], nodes=10_000, chars=10_000)
    assert offload.heavy(event) is offload.large(event.__dict__)
