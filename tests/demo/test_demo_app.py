"""The demo app and the ``streamkit`` command: routes, the built page, errors, CORS, start-up."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from streamkit.demo.agent import INSTANT, ScriptedAgent
from streamkit.demo.app import STATIC_DIR, create_app
from streamkit.demo.cli import build_parser, main, make_agent
from streamkit.demo.models import OpenAIAgent
from tests.support.server import free_port

CHAT_BODY = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What's the weather in Lisbon?"}]}],
    "trigger": "submit-message",
}
AGUI_BODY = {
    "threadId": "thread-1",
    "runId": "run-1",
    "state": {},
    "messages": [{"id": "u1", "role": "user", "content": "What's the weather in Lisbon?"}],
    "tools": [],
    "context": [],
    "forwardedProps": {},
}


def client(app: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://demo.test")  # type: ignore[arg-type]


def frames(body: str) -> list[str]:
    return [block[len("data: ") :] for block in body.split("\n\n") if block.startswith("data: ")]


async def test_info_names_the_agent() -> None:
    async with client(create_app(ScriptedAgent(INSTANT))) as c:
        info = (await c.get("/api/info")).json()
    routes = {"aisdk": "/api/chat", "agui": "/api/agui", "dsh": "/api/agent"}
    assert info == {"agent": "offline", "model": "scripted", "routes": routes}
    agent = OpenAIAgent("http://localhost:11434/v1", "llama3.2", api_key="sk-hidden")
    async with client(create_app(agent)) as c:
        response = await c.get("/api/info")
    assert response.json()["model"] == "llama3.2"
    assert response.json()["baseUrl"] == "http://localhost:11434/v1"
    assert "sk-hidden" not in response.text


async def test_the_built_page_is_served_with_its_assets() -> None:
    index = (STATIC_DIR / "index.html").read_text()
    assets = re.findall(r'(?:src|href)="(\./assets/[^"]+)"', index)
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    async with client(create_app(ScriptedAgent(INSTANT))) as c:
        page = await c.get("/")
        assert page.status_code == 200 and 'id="root"' in page.text
        for asset in assets:
            response = await c.get(asset[1:])
            assert response.status_code == 200, asset
            assert response.headers["content-type"].split(";")[0] in ("text/javascript", "text/css")
        assert (await c.get("/no-such-file.js")).status_code == 404


def test_the_page_uses_relative_urls_only() -> None:
    index = (STATIC_DIR / "index.html").read_text()
    assert not re.search(r'(?:src|href)="/', index)  # the page works wherever the app is mounted
    bundle = next((STATIC_DIR / "assets").glob("*.js")).read_text()
    assert re.search(r"[\"'`]api/chat[\"'`]", bundle) and re.search(r"[\"'`]api/agui[\"'`]", bundle)


async def test_without_a_build_the_root_explains_how_to_build(tmp_path: Path) -> None:
    async with client(create_app(ScriptedAgent(INSTANT), static_dir=tmp_path)) as c:
        response = await c.get("/")
    assert response.status_code == 200 and "make frontend" in response.text
    async with client(create_app(ScriptedAgent(INSTANT), static_dir=None)) as c:
        assert (await c.get("/")).status_code == 404


async def test_both_routes_stream_the_same_agent() -> None:
    async with client(create_app(ScriptedAgent(INSTANT))) as c:
        chat = await c.post("/api/chat", json=CHAT_BODY)
        agui = await c.post("/api/agui", json=AGUI_BODY)
    assert chat.status_code == agui.status_code == 200
    assert chat.headers["content-type"].startswith("text/event-stream")
    assert chat.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert agui.headers["content-type"].startswith("text/event-stream")
    chunks = frames(chat.text)
    assert chunks[-1] == "[DONE]"
    types = [json.loads(c)["type"] for c in chunks[:-1]]
    assert types[0] == "start" and types[-1] == "finish"
    assert {"reasoning-delta", "tool-input-delta", "tool-output-available", "source-url", "data-state"} <= set(types)
    events = [json.loads(f) for f in frames(agui.text)]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert {"REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "STATE_DELTA"} <= set(
        kinds
    )
    assert any(e["type"] == "CUSTOM" and e["name"] == "streamkit.source" for e in events)
    # the same answer went both ways
    text_a = "".join(json.loads(c).get("delta", "") for c in chunks[:-1] if json.loads(c)["type"] == "text-delta")
    text_b = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text_a == text_b and "Lisbon" in text_a


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/api/chat", b"{}", 422, "id"),
        ("/api/chat", b'{"id": "c", "messages": "x", "trigger": "submit-message"}', 422, "messages"),
        ("/api/chat", b"not json", 400, "body"),
        ("/api/agui", b"[1]", 422, "body"),
        ("/api/agui", b'{"threadId": "t"}', 422, "runId"),
    ],
)
async def test_bad_requests_get_json_errors(path: str, body: bytes, status: int, field: str) -> None:
    async with client(create_app(ScriptedAgent(INSTANT))) as c:
        response = await c.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    error = response.json()["error"]
    assert error["status"] == status and error["field"].startswith(field)


async def test_cors_for_a_page_on_another_origin() -> None:
    app = create_app(ScriptedAgent(INSTANT), cors_origins=["http://localhost:3000"])
    headers = {
        "origin": "http://localhost:3000",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }
    async with client(app) as c:
        preflight = await c.options("/api/chat", headers=headers)
        other = await c.options("/api/chat", headers={**headers, "origin": "http://evil.test"})
        post = await c.post("/api/chat", json=CHAT_BODY, headers={"origin": "http://localhost:3000"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert "access-control-allow-origin" not in other.headers
    assert post.headers["access-control-allow-origin"] == "http://localhost:3000"
    async with client(create_app(ScriptedAgent(INSTANT))) as c:  # no CORS unless asked for
        response = await c.post("/api/chat", json=CHAT_BODY, headers={"origin": "http://localhost:3000"})
    assert "access-control-allow-origin" not in response.headers


# --- the command -----------------------------------------------------------------------------------


def test_agent_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("STREAMKIT_MODEL", "OPENAI_MODEL", "STREAMKIT_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    parser = build_parser()
    offline = make_agent(parser.parse_args(["demo", "--pacing", "0.5"]))
    assert isinstance(offline, ScriptedAgent) and offline.pacing.token == pytest.approx(0.015)
    model = make_agent(parser.parse_args(["demo", "--model", "llama3.2", "--base-url", "http://h:11434/v1"]))
    assert isinstance(model, OpenAIAgent) and (model.model, model.base_url) == ("llama3.2", "http://h:11434/v1")
    monkeypatch.setenv("STREAMKIT_MODEL", "qwen3")
    from_env = make_agent(parser.parse_args(["demo", "--max-steps", "3"]))
    assert isinstance(from_env, OpenAIAgent) and (from_env.model, from_env.max_steps) == ("qwen3", 3)
    assert from_env.base_url == "https://api.openai.com/v1"
    assert isinstance(make_agent(parser.parse_args(["demo", "--offline"])), ScriptedAgent)


def test_command_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--help"])
    assert exit_info.value.code == 0
    assert "--base-url" in capsys.readouterr().out
    assert main(["demo", "--pacing", "-1"]) == 2
    assert main(["demo", "--max-steps", "0"]) == 2


def test_python_dash_m_serves_the_demo() -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMKIT_", "OPENAI_"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamkit.demo", "--port", str(port), "--pacing", "0", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                info = httpx.get(f"http://127.0.0.1:{port}/api/info", timeout=1).json()
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stdout.read() if proc.stdout else "no output") from None
                time.sleep(0.1)
        assert info["agent"] == "offline"
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200 and "<title>streamkit demo</title>" in page.text
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=10)
    assert f"streamkit demo: http://127.0.0.1:{port}" in output


def test_a_busy_port_is_refused_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert main(["demo", "--port", str(port), "--offline"]) == 1
    out, err = capsys.readouterr()
    assert "http://" not in out  # no URL printed for a server that will not start
    assert f"cannot listen on 127.0.0.1:{port} (address already in use)" in err
    assert f"--port, e.g. `streamkit demo --port {port + 10}` or `make demo PORT={port + 10}`" in err


def test_make_demo_takes_the_port_from_port() -> None:
    done = subprocess.run(
        ["make", "-n", "demo", "PORT=8010"], cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "streamkit demo --port 8010" in done.stdout
