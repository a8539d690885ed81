"""Stream stores for resumable runs: the :class:`StreamStore` interface and its two backends.

:class:`MemoryStore` (the default, one process) lives here; ``streamkit.store.redis.RedisStore`` needs the
``redis`` extra (``pip install 'streamkit[redis]'``) and is imported from its module, or lazily from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import (
    Holder,
    Lease,
    Release,
    RunClosed,
    RunInfo,
    RunTooLarge,
    Stop,
    StoreError,
    StoreLimits,
    StoreWriter,
    StreamStore,
    hold_with_task,
)
from .memory import MemoryStore

if TYPE_CHECKING:
    from .redis import RedisStore

__all__ = [
    "Holder",
    "Lease",
    "MemoryStore",
    "RedisStore",
    "Release",
    "RunClosed",
    "RunInfo",
    "RunTooLarge",
    "Stop",
    "StoreError",
    "StoreLimits",
    "StoreWriter",
    "StreamStore",
    "hold_with_task",
]


def __getattr__(name: str) -> Any:
    if name == "RedisStore":
        from .redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
