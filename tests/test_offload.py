"""Offloaded work gives the event loop its turns, rationed: :func:`~streamkit.offload.breathe` sleeps (hands the
interpreter to the loop's thread) at most once per ``_BREATH`` seconds of work, and only in offloaded work."""

from __future__ import annotations

import pytest

from streamkit import offload


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
