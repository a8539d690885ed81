"""streamkit's logging follows the library convention: silent until the app configures logging, then
``LEVEL streamkit.<module>: run <id>: ...`` for every line logged while a run is served."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

from streamkit.events import SequenceChecker, TextDelta
from streamkit.events.logs import bind_run, current_run, run_logger

SLOPPY_APP = """
import asyncio
import httpx
from starlette.applications import Starlette
from streamkit import agui
from streamkit.events import TextDelta

async def agent(run):
    yield TextDelta(id="t", delta="no start, no end")  # the checker repairs this, logging what it did

app = Starlette(routes=agui.routes(agent))
body = {"threadId": "th", "runId": "run-42", "messages": [], "state": {}, "tools": [], "context": []}

async def main():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://x") as client:
        response = await client.post("/api/agui", json=body)
        assert response.status_code == 200 and b"RUN_FINISHED" in response.content

asyncio.run(main())
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)


def test_nothing_is_printed_until_the_app_configures_logging() -> None:
    done = _run(SLOPPY_APP)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no bare "synthesized RunFinished ..." from logging's last resort


def test_a_configured_app_sees_level_logger_and_run_id() -> None:
    config = 'import logging\nlogging.basicConfig(format="%(levelname)s %(name)s: %(message)s")\n'
    done = _run(config + SLOPPY_APP)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "WARNING streamkit.events: run run-42: opened text block 't' implied by a delta" in lines
    assert "WARNING streamkit.events: run run-42: synthesized RunStarted before TextDelta" in lines
    assert "WARNING streamkit.events: run run-42: synthesized RunFinished at the end of the stream" in lines


def test_the_streamkit_logger_has_a_null_handler() -> None:
    handlers = logging.getLogger("streamkit").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)


def test_run_id_is_in_the_message_and_on_the_record(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streamkit")
    caplog.set_level(logging.INFO, logger="streamkit.events")  # other tests may have quieted it
    logger = run_logger("streamkit.test")
    logger.info("before")
    bind_run("run-1")
    try:
        assert current_run() == "run-1"
        logger.info("during %s", "x", extra={"k": 1})
        SequenceChecker().feed(TextDelta(id="t", delta="a"))
    finally:
        bind_run(None)
    logger.info("after")
    assert [r.getMessage() for r in caplog.records] == [
        "before",
        "run run-1: during x",
        "run run-1: synthesized RunStarted before TextDelta",
        "run run-1: opened text block 't' implied by a delta",
        "after",
    ]
    assert [getattr(r, "run_id", None) for r in caplog.records] == [None, "run-1", "run-1", "run-1", None]
    assert caplog.records[1].k == 1  # type: ignore[attr-defined]
