"""``streamkit check``: the running demo passes on all three protocols, a route that buffers fails and says
so, a bad body fails with the rule it breaks; captured bodies offline; exit statuses 0, 1 and 2."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import create_app
from streamkit.demo.cli import main
from streamkit.testing.check import check_url, detect_protocol
from tests.testing.cases import TD, TE, TS, F, S, sse

GOOD = sse(S, TS, TD, TE, F)
HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no", "x-vercel-ai-ui-message-stream": "v1"}


async def buffered(request: Request) -> Response:
    await asyncio.sleep(0.4)  # the whole run, then one write: what a buffering proxy delivers
    return Response(GOOD, media_type="text/event-stream", headers=HEADERS)


async def bad(request: Request) -> Response:
    return Response(sse(S, TD, F), media_type="text/event-stream", headers=HEADERS)


async def paced(request: Request) -> StreamingResponse:
    async def frames() -> Any:
        for block in GOOD.split("\n\n")[:-1]:
            await asyncio.sleep(0.1)
            yield block + "\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream", headers=HEADERS)


async def slow_start(request: Request) -> StreamingResponse:
    async def frames() -> Any:
        await asyncio.sleep(0.5)  # a long wait for the model's first token, then a short answer at once
        for block in GOOD.split("\n\n")[:-1]:
            yield block + "\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream", headers=HEADERS)


async def empty(request: Request) -> Response:
    return Response(b"", media_type="text/event-stream", headers=HEADERS)


async def bare(request: Request) -> Response:
    return Response(GOOD, status_code=500, media_type="text/plain")


async def compressed(request: Request) -> Response:
    return Response(
        gzip.compress(GOOD.encode()), media_type="text/event-stream", headers={**HEADERS, "content-encoding": "gzip"}
    )


def other_server() -> Starlette:
    handlers = {"/buffered": buffered, "/bad": bad, "/paced": paced, "/bare": bare, "/gzip": compressed,
                "/slow-start": slow_start, "/empty": empty}  # fmt: skip
    return Starlette(routes=[Route(path, handler, methods=["POST"]) for path, handler in handlers.items()])


@pytest.fixture(scope="module")
def demo_url() -> Any:
    from tests.support.server import LiveServer

    with LiveServer(create_app(ScriptedAgent(Pacing().scaled(0.1)), static_dir=None)) as server:
        yield server.url


@pytest.mark.parametrize(
    ("path", "protocol"), [("/api/chat", "aisdk"), ("/api/agui", "agui"), ("/api/agent/stream", "dsh")]
)
def test_the_running_demo_passes_on_every_protocol(
    demo_url: str, path: str, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", demo_url + path, "--message", "What's the weather in Paris?"]) == 0
    out = capsys.readouterr().out
    assert f"({protocol})" in out and "OK: no errors" in out and "21°C" in out


def test_versions_are_checked_as_asked(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", demo_url + "/api/chat", "--sdk-version", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["report"]["version"] == "5" and data["ok"] and data["timing"]["frames"] > 3
    assert main(["check", demo_url + "/api/agui", "--agui-version", "0.0.59", "--protocol", "agui"]) in (0, 1)
    assert "agui 0.0" in capsys.readouterr().out


def test_a_route_that_buffers_fails_and_says_so(live_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url = live_server(other_server()).url
    assert main(["check", url + "/buffered"]) == 1
    out = capsys.readouterr().out
    assert "timing.buffered" in out and "proxy" in out and "compression" in out
    assert check_url(url + "/paced").ok
    slow = check_url(url + "/slow-start")  # the headers came at once: a short answer, not a buffered stream
    assert slow.ok and slow.timing is not None and slow.timing.first_frame > 0.4, slow.format()


def test_the_response_headers_are_checked(live_server: Any) -> None:
    url = live_server(other_server()).url
    bare = {f.rule for f in check_url(url + "/bare").http_findings}
    assert bare == {"http.status", "http.content-type", "http.ui-message-stream", "http.cache-control",
                    "http.proxy-buffering"}  # fmt: skip
    nothing = check_url(url + "/empty")
    assert not nothing.ok and [f.rule for f in nothing.http_findings] == ["http.no-frame"]
    result = check_url(url + "/gzip")
    assert [f.rule for f in result.http_findings] == ["http.compressed"] and result.report.text == "hi"


def test_a_bad_body_fails_with_its_rule(live_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", live_server(other_server()).url + "/bad", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in data["report"]["findings"]] == ["aisdk.part-not-open"]


def test_a_captured_body_is_checked_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, broken = tmp_path / "good.sse", tmp_path / "bad.sse"
    good.write_text(GOOD)
    broken.write_text(sse(S, TS, {**TD, "providerMetadata": None}, TE, F))
    assert main(["check", "--file", str(good), "--protocol", "aisdk"]) == 0
    assert main(["check", "--file", str(broken), "--protocol", "aisdk", "--sdk-version", "6"]) == 1
    out = capsys.readouterr().out
    assert "schema.field-null" in out and "frame 2" in out and '"providerMetadata":null' in out


def test_unreachable_and_unreadable_inputs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--file", str(tmp_path / "missing"), "--protocol", "agui"]) == 2
    assert main(["check", "--file", str(tmp_path / "missing")]) == 2
    assert main(["check", "http://127.0.0.1:9/api/chat", "--timeout", "2"]) == 2
    assert main(["check"]) == 2
    assert main(["check", "http://127.0.0.1:9/x", "--header", "nocolon"]) == 2
    assert "cannot reach" in capsys.readouterr().err


def test_the_protocol_is_read_from_the_response() -> None:
    assert detect_protocol({"x-vercel-ai-ui-message-stream": "v1"}, "") == "aisdk"
    assert detect_protocol({}, 'data: {"type":"RUN_STARTED"}\n\n') == "agui"
    assert detect_protocol({}, "event: meta\ndata: {}\n\n") == "dsh"
    assert detect_protocol({}, 'data: {"type":"start"}\n\n') == "aisdk"
    assert detect_protocol({}, "") is None


def test_another_projects_endpoints_are_checked(live_server: Any) -> None:
    """pydantic-ai's own AI SDK and AG-UI adapters: bodies every client version accepts, but neither response
    says Cache-Control: no-cache nor X-Accel-Buffering: no (a proxy with default buffering holds the stream)."""
    pytest.importorskip("pydantic_ai.ui.vercel_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from pydantic_ai.ui.vercel_ai import VercelAIAdapter

    agent: Agent[None, str] = Agent(TestModel())

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    async def chat(request: Request) -> Response:
        return await VercelAIAdapter.dispatch_request(request, agent=agent, sdk_version=7)

    async def ag_ui(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    routes = [Route("/chat", chat, methods=["POST"]), Route("/agui", ag_ui, methods=["POST"])]
    url = live_server(Starlette(routes=routes)).url
    for path, protocol, version in (("/chat", "aisdk", 7), ("/agui", "agui", "1.0")):
        result = check_url(url + path, protocol=protocol, sdk_version=7, agui_version=str(version))
        assert result.ok and result.report.findings == [], result.format()
        assert {f.rule for f in result.http_findings} == {"http.cache-control", "http.proxy-buffering"}
        assert "sunny" in result.report.text


def test_a_hand_written_route_with_null_fields_is_caught(live_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A route written the way many FastAPI tutorials write one: pydantic models for the chunks, dumped whole,
    so every unset optional field goes out as null: the AI SDK's chunk schema ignores the fields a chunk type
    does not have, and refuses null in one it has (``providerMetadata`` here): the stream fails at once."""
    from fastapi import FastAPI
    from pydantic import BaseModel

    class Chunk(BaseModel):
        type: str
        id: str | None = None
        delta: str | None = None
        messageId: str | None = None
        providerMetadata: dict[str, Any] | None = None

    app = FastAPI()

    @app.post("/api/chat")
    async def chat() -> StreamingResponse:
        async def stream() -> Any:
            for chunk in (Chunk(type="start", messageId="m1"), Chunk(type="text-start", id="t"),
                          Chunk(type="text-delta", id="t", delta="Hello"), Chunk(type="text-end", id="t"),
                          Chunk(type="finish")):  # fmt: skip
                yield f"data: {chunk.model_dump_json()}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    url = live_server(app).url + "/api/chat"
    assert main(["check", url]) == 1
    out = capsys.readouterr().out
    assert "schema.field-null at frame 1: text-start.providerMetadata is null" in out
    assert "http.ui-message-stream" in out and "http.proxy-buffering" in out
