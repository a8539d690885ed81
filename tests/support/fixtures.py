"""Real recorded provider responses, read from beside the project (never kept in it).

The providers' own recordings (their SDKs' test suites, the AI SDK's provider fixtures, Ollama's API docs)
live in ``../shared/provider-fixtures/`` relative to the repository root, with their origin and checksum in
its ``fixtures.json`` and ``SOURCES.md``; a clone without that folder has none, and every test that reads one
skips with one line saying so. ``STREAMKIT_PROVIDER_FIXTURES`` names another folder holding the same.
:func:`provider_fixture` reads one file, :func:`provider_fixtures` lists them (``fixtures.json``), each
checked against its recorded sha256. The tests that must always run use the project's own bodies, written
in the providers' wire formats (``tests/sources/bodies.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

__all__ = ["FIXTURES_ENV", "fixtures_dir", "provider_fixture", "provider_fixtures"]

FIXTURES_ENV = "STREAMKIT_PROVIDER_FIXTURES"
"""The environment variable naming the provider-fixtures folder (default: ``../shared/provider-fixtures``)."""

_ROOT = Path(__file__).resolve().parents[2]


def fixtures_dir() -> Path | None:
    """The provider-fixtures folder, or None when there is none beside the project."""
    named = os.environ.get(FIXTURES_ENV)
    folder = Path(named) if named else _ROOT.parent / "shared" / "provider-fixtures"
    return folder if folder.is_dir() else None


def _skip() -> Any:
    pytest.skip("no ../shared/provider-fixtures beside the project: the real recordings are not here")


def provider_fixture(name: str) -> bytes:
    """The bytes of ``<provider-fixtures>/<name>``; the test skips when the folder is absent."""
    folder = fixtures_dir()
    if folder is None:
        _skip()
    assert folder is not None
    return (folder / name).read_bytes()


@cache
def _index(folder: Path) -> tuple[dict[str, Any], ...]:
    entries: list[dict[str, Any]] = json.loads((folder / "fixtures.json").read_text())
    for entry in entries:
        digest = hashlib.sha256((folder / entry["file"]).read_bytes()).hexdigest()
        assert digest == entry["sha256"], f"{entry['file']} differs from its recorded sha256"
    return tuple(entries)


def provider_fixtures() -> list[dict[str, Any]]:
    """The entries of ``fixtures.json`` (``name``, ``api``, ``format``, ``file``, ``sha256``, ``origin``...),
    each file checked against its sha256; empty when the folder is absent (a test over them then skips)."""
    folder = fixtures_dir()
    return [] if folder is None else list(_index(folder))
