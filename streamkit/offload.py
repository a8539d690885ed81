"""When a payload's work leaves the event loop, and how the worker gives the loop its turns.

A mapper's work on a large payload (a big state diffed, a long tool output encoded) would hold the event loop
and every other stream on it. :func:`heavy` tells the frame writer which events go to a worker thread;
:func:`run_offloaded` runs that work there, and inside it :func:`offloaded` is true and :func:`breathe` hands
the interpreter back to the loop's thread between pieces of the work (it would wait for the switch interval
otherwise).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .events import ChatEvent

__all__ = ["LARGE_STATE", "PAYLOAD_EVENTS", "breathe", "heavy", "large", "offloaded", "run_offloaded"]

_local = threading.local()

_T = TypeVar("_T")


def run_offloaded(work: Callable[..., _T], *args: Any) -> _T:
    """``work(*args)`` as offloaded work: meant to run in a worker thread, where :func:`offloaded` is true and
    :func:`breathe` yields to the event loop while it runs."""
    _local.offloaded = True
    try:
        return work(*args)
    finally:
        _local.offloaded = False


def offloaded() -> bool:
    """Whether this is a worker thread mapping an offloaded event (one :func:`heavy`, or that its mapper's
    ``offload`` picked): the work at hand is large, and should be split with :func:`breathe` between pieces."""
    return getattr(_local, "offloaded", False)


def breathe() -> None:
    """In a worker thread mapping an offloaded event, let the event loop's thread have the interpreter now
    (it would wait for the switch interval otherwise); does nothing elsewhere."""
    if getattr(_local, "offloaded", False):
        time.sleep(0)


def large(value: Any, nodes: int = 2048, chars: int = 262144) -> bool:
    """Whether ``value`` holds more than ``nodes`` JSON values or ``chars`` characters of strings (a bounded
    look, stopping as soon as it knows): work on it belongs off the event loop."""
    stack = [value]
    count = size = 0
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            size += len(item)
        elif kind is dict:
            count += len(item)
            if count > nodes:
                return True
            size += sum(map(len, item)) if all(type(k) is str for k in item) else len(item)
            stack += item.values()
        elif kind is list or kind is tuple:
            count += len(item)
            if count > nodes:
                return True
            stack += item
        elif isinstance(item, BaseModel):
            stack.append(item.__dict__)
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

