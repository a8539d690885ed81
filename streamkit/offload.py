"""When a payload's work leaves the event loop, and how the worker gives the loop its turns.

A mapper's work on a large payload (a big state diffed, a long tool output encoded) would hold the event loop
and every other stream on it. :func:`heavy` tells the frame writer which events go to a worker thread;
:func:`run_offloaded` runs that work there, and inside it :func:`offloaded` is true and :func:`breathe` hands
the interpreter back to the loop's thread between pieces of the work (it would wait for the switch interval
otherwise).

Why the handing over is rationed: the worker holds the GIL while it works, and the loop's thread, when it has
something to run, waits for it. The only way to give it away from Python is to sleep, and ``time.sleep(0)``
costs far more than the work between two pieces (tens of microseconds of the kernel's timer slack, and on a
busy machine the core itself goes to another process). Sleeping at every piece would make offloaded work
several times slower than the same work on the loop. So :func:`breathe` sleeps only once 2 ms of work went by since
the thread last did: the loop waits at most about that long (plus one piece), and the worker
pays for a handover a few times per update, not a hundred. The pieces themselves stay small (no single C call
over a large payload), since the interpreter can only switch threads between them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .events import ChatEvent

__all__ = ["LARGE_STATE", "PAYLOAD_EVENTS", "breathe", "heavy", "large", "offloaded", "run_offloaded"]


class _Local(threading.local):
    # Class defaults: a thread that never ran offloaded work reads them without the cost of a failed lookup (an
    # AttributeError made and dropped at each call, on the loop, several times per request).
    offloaded = False
    breathed = 0.0


_local = _Local()

_T = TypeVar("_T")


def run_offloaded(work: Callable[..., _T], *args: Any, hand_over: bool = True) -> _T:
    """``work(*args)`` as offloaded work: meant to run in a worker thread, where :func:`offloaded` is true and
    :func:`breathe` yields to the event loop while it runs. With ``hand_over=False`` (short work run on the
    loop's own thread, in the pieces offloaded work makes) :func:`breathe` does nothing."""
    _local.offloaded = True
    _local.breathed = time.perf_counter() if hand_over else math.inf
    try:
        return work(*args)
    finally:
        _local.offloaded = False


def offloaded() -> bool:
    """Whether this is a worker thread mapping an offloaded event (one :func:`heavy`, or that its mapper's
    ``offload`` picked): the work at hand is large, and should be split with :func:`breathe` between pieces."""
    return _local.offloaded


_BREATH = 0.002
"""Seconds of offloaded work after which :func:`breathe` hands the interpreter to the loop's thread."""


def breathe() -> None:
    """Between two pieces of offloaded work (in a worker thread running :func:`run_offloaded`), let the event
    loop's thread have the interpreter if 2 ms of work went by since this thread last did (it would
    wait for the switch interval otherwise); does nothing elsewhere."""
    local = _local
    if local.offloaded:
        now = time.perf_counter()
        if now - local.breathed >= _BREATH:
            time.sleep(0)
            local.breathed = time.perf_counter()


def large(value: Any, nodes: int = 2048, chars: int = 262144) -> bool:
    """Whether ``value`` holds more than ``nodes`` JSON values or ``chars`` characters of strings (a bounded
    look, stopping as soon as it knows): work on it belongs off the event loop."""
    # It runs on the loop for every event that can carry a payload, so it is written for speed: the strings
    # and numbers of a container are counted where the container is met, only containers go on the stack.
    stack = [value]
    count = size = 0
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            count += len(item)
            try:
                size += sum(map(len, item))
            except TypeError:  # a key that is not a string
                size += len(item)
            children: Any = item.values()
        elif kind is list or kind is tuple:
            count += len(item)
            children = item
        elif kind is str:
            size += len(item)
            children = ()
        elif isinstance(item, BaseModel):
            stack.append(item.__dict__)
            continue
        else:
            continue
        if count > nodes:
            return True
        for child in children:
            kind = type(child)
            if kind is str:
                size += len(child)
            elif not (kind is int or kind is float or kind is bool or child is None):
                stack.append(child)
        if size > chars:
            return True
    return False


PAYLOAD_EVENTS = frozenset(
    {
        "run-finished",
        "tool-call-end",
        "tool-result",
        "state-snapshot",
        "state-delta",
        "state-update",
        "messages-snapshot",
        "data",
        "file",
        "user-message",
        "provider-part",
        "message-metadata",
        "custom",
        "raw",
    }
)
"""The ``ChatEvent`` types that carry an arbitrary JSON payload (the ones that may be heavy to map)."""


LARGE_STATE = 262144
"""A state whose JSON is longer than this (bytes) is diffed or patched off the event loop."""


def heavy(event: ChatEvent) -> bool:
    """Whether ``event`` carries a :func:`large` payload."""
    return event.type in PAYLOAD_EVENTS and large(event.__dict__)
