"""streamkit's logging adds no handler of its own: an app that configured nothing sees its failures through
Python's last-resort handler (an agent that raised is one line with the run id and the exception, then the
traceback) and not its routine repairs; an app that configured logging sees ``LEVEL streamkit.<module>: run
<id>: ...`` for every line logged while a run is served, once."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from streamkit.events import SequenceChecker, TextDelta
from streamkit.events.logs import bind_run, current_run, run_logger
from tests.support.server import free_port

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

FAILING_APP = """
from starlette.applications import Starlette
from streamkit import agui, aisdk, dsh
from streamkit.events import TextDelta

async def agent(run):
    yield TextDelta(id="t", delta="looking it up")  # no RunStarted: a routine repair, not worth a line
    raise RuntimeError("database connection refused")

app = Starlette(routes=[*agui.routes(agent), *aisdk.routes(agent), *dsh.routes(agent)])
"""

AGUI_BODY = {"threadId": "th", "runId": "run-42", "messages": [], "state": {}, "tools": [], "context": []}
AISDK_BODY = {"id": "c", "messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
DSH_BODY = {"agentId": "a1", "message": "hi"}
FAILED = "agent stream failed: RuntimeError: database connection refused"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)


def _serve_with_uvicorn(app_dir: Path, port: int) -> subprocess.Popen[str]:
    """``uvicorn app:app`` as an app starts it: no logging configuration of the app's own."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--app-dir", str(app_dir), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 15
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
            return proc
        except httpx.TransportError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise AssertionError(f"uvicorn did not start: {proc.communicate()[1]}") from None
            time.sleep(0.05)


def test_an_agent_that_raises_is_one_line_of_plain_uvicorns_log(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(FAILING_APP)
    port = free_port()
    proc = _serve_with_uvicorn(tmp_path, port)
    try:
        url = f"http://127.0.0.1:{port}"
        agui = httpx.post(f"{url}/api/agui", json=AGUI_BODY, timeout=10)
        aisdk = httpx.post(f"{url}/api/chat", json=AISDK_BODY, timeout=10)
        dsh = httpx.post(f"{url}/api/agent/stream", json=DSH_BODY, timeout=10)
        assert b"RUN_ERROR" in agui.content
        assert b'"errorText":"An error occurred."' in aisdk.content
        assert b"event: error" in dsh.content
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=15)
    lines = stderr.splitlines()
    failed = [line for line in lines if FAILED in line]
    assert len(failed) == 3, stderr
    assert failed[0] == f"run run-42: {FAILED}"
    assert all(re.fullmatch(rf"run \S+: {FAILED}", line) for line in failed), failed
    # the traceback follows each line (Python's default format); the routine repairs print nothing
    assert stderr.count("Traceback (most recent call last)") == 3
    assert lines[lines.index(failed[0]) + 1] == "Traceback (most recent call last):"
    assert not [line for line in lines if "synthesized" in line or "implied by a delta" in line], stderr


def test_routine_repairs_print_nothing_until_the_app_configures_logging() -> None:
    done = _run(SLOPPY_APP)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the checker's repairs are INFO: logging's last resort prints WARNING and up


def test_a_configured_app_sees_level_logger_and_run_id() -> None:
    config = 'import logging\nlogging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")\n'
    done = _run(config + SLOPPY_APP)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "INFO streamkit.events: run run-42: opened text block 't' implied by a delta" in lines
    assert "INFO streamkit.events: run run-42: synthesized RunStarted before TextDelta" in lines
    assert "INFO streamkit.events: run run-42: synthesized RunFinished at the end of the stream" in lines


def test_a_configured_app_sees_an_agent_failure_once() -> None:
    app = FAILING_APP + textwrap.dedent(
        f"""
        import asyncio, logging
        import httpx
        logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")

        async def main():
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://x") as client:
                response = await client.post("/api/agui", json={AGUI_BODY!r})
                assert b"RUN_ERROR" in response.content

        asyncio.run(main())
        """
    )
    done = _run(app)
    assert done.returncode == 0, done.stderr
    failed = [line for line in done.stderr.splitlines() if FAILED in line]
    assert failed == [f"ERROR streamkit: run run-42: {FAILED}"], done.stderr
    assert done.stderr.count("Traceback (most recent call last)") == 1


def test_the_library_adds_no_handler_and_keeps_the_last_resort() -> None:
    done = _run(
        """
        import logging
        last_resort = logging.lastResort
        import streamkit, streamkit.agui, streamkit.aisdk, streamkit.dsh, streamkit.resumable, streamkit.store
        import streamkit.sources.agui, streamkit.sources.aisdk
        loggers = [logging.getLogger(name) for name in logging.root.manager.loggerDict if name.startswith("streamkit")]
        assert loggers, "no streamkit logger"
        assert [lg.name for lg in loggers if lg.handlers] == [], "a streamkit logger has a handler"
        assert logging.root.handlers == [] and logging.lastResort is last_resort
        """
    )
    assert done.returncode == 0, done.stderr


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
