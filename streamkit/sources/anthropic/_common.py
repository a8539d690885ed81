"""What the Anthropic source's modules share: the provider's name, the redacted-thinking marker, and
reading the SDK's objects or the same as plain dicts (:func:`attr`, :func:`plain`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "PROVIDER",
    "REDACTED_PREFIX",
    "attr",
    "plain",
]


PROVIDER = "anthropic"

REDACTED_PREFIX = "redacted_thinking:"
"""Starts the ``encrypted_value`` of a redacted thinking block (the rest is its ``data``), so that the one
opaque string AG-UI keeps tells a redacted block from a signed one."""


def attr(obj: Any, key: str) -> Any:
    """``obj[key]`` for a dict, ``obj.key`` for an SDK object (None when absent)."""
    if type(obj) is dict:  # the common case first: an ABC isinstance check costs more than the lookup
        return obj.get(key)
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def plain(obj: Any) -> Any:
    """An SDK object as plain JSON data (dicts pass through)."""
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(mode="json", exclude_none=True)
    return obj
