"""Fixtures that quiet streamkit's logging for a test module whose runs are ill-formed on purpose.

Registered for the whole suite (``pytest_plugins`` in ``tests/conftest.py``); a module opts in with
``pytestmark = pytest.mark.usefixtures("quiet")`` (every streamkit logger) or ``"quiet_checker"`` (only the
sequence checker's repairs, ``streamkit.events``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def quieted(name: str, level: int = logging.ERROR) -> Iterator[None]:
    """Logger ``name`` at ``level`` inside the block, at its own level again after it."""
    logger = logging.getLogger(name)
    before = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(before)


@pytest.fixture
def quiet() -> Iterator[None]:
    """streamkit's loggers log errors only, for the test."""
    with quieted("streamkit"):
        yield


@pytest.fixture
def quiet_checker() -> Iterator[None]:
    """The sequence checker (``streamkit.events``) logs errors only, for the test."""
    with quieted("streamkit.events"):
        yield
