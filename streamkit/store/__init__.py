"""Stream stores for resumable runs: the :class:`StreamStore` interface and its two backends.

:class:`MemoryStore` (the default, one process) lives here; ``streamkit.store.redis.RedisStore`` needs the
``redis`` extra (``pip install 'streamkit[redis]'``) and is imported from its module, or lazily from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Lease, RunClosed, RunInfo, RunTooLarge, StoreError, StoreLimits, StoreWriter, StreamStore
from .memory import MemoryStore

if TYPE_CHECKING:
    from .redis import RedisStore

__all__ = [
    "Lease",
    "MemoryStore",
    "RedisStore",
    "RunClosed",
    "RunInfo",
    "RunTooLarge",
    "StoreError",
    "StoreLimits",
    "StoreWriter",
    "StreamStore",
]


def __getattr__(name: str) -> Any:
    if name == "RedisStore":
        from .redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
