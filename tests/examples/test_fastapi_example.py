"""``examples/fastapi/app.py`` imported as it is and served by uvicorn, its model an OpenAI-compatible server on
loopback replaying Chat Completions streams (``tests/demo/recordings``, and ``recordings/report_approval`` here,
written in the same wire format): auth, CORS, limits, both
protocols checked in-process and over HTTP by ``streamkit.testing`` (the validator, ``streamkit check``), and
through the real clients over HTTP (``ai``'s Chat with an approval, ``@ag-ui/client``'s HttpAgent)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from streamkit.testing import call_route
from streamkit.testing.check import check_url
from tests.demo.openai_replay import RECORDINGS, replay_app, serve  # the demo's recorded-model server, shared
from tests.support.oracle import JsOracle
from tests.support.server import LiveServer

APP = Path(__file__).resolve().parents[2] / "examples" / "fastapi" / "app.py"
TOKEN = "s3cret"
AUTH = {"authorization": f"Bearer {TOKEN}"}


def load(monkeypatch: pytest.MonkeyPatch, model_url: str, scenario: str) -> ModuleType:
    """The example module, freshly imported with its environment pointing at the replaying model server."""
    monkeypatch.setenv("APP_TOKEN", TOKEN)
    monkeypatch.setenv("APP_CORS_ORIGINS", "http://localhost:3000")
    monkeypatch.setenv("OPENAI_BASE_URL", model_url)
    monkeypatch.setenv("OPENAI_MODEL", scenario)  # the replay server picks its recording by model name
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spec = importlib.util.spec_from_file_location("fastapi_example_app", APP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with serve(replay_app([RECORDINGS, Path(__file__).parent / "recordings"])) as url:
        yield url + "/v1"


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch, model_url: str) -> Iterator[Any]:
    def start(scenario: str) -> str:
        server = LiveServer(load(monkeypatch, model_url, scenario).app).__enter__()
        servers.append(server)
        return server.url

    servers: list[LiveServer] = []
    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_both_routes_stream_what_the_clients_accept_in_process(
    monkeypatch: pytest.MonkeyPatch, model_url: str, protocol: str
) -> None:
    app = load(monkeypatch, model_url, "tool_call").app
    report = call_route(app, protocol, message="Weather in Lisbon?", headers=AUTH)
    report.raise_for_errors()
    assert report.warnings == [], report.format()
    assert "23°C" in report.text and report.pending_tool_calls == []
    assert len(report.tool_calls) == 1
    assert call_route(app, protocol, message="hi").status == 401


def test_streamkit_check_passes_the_served_example(example: Any) -> None:
    url = example("tool_call")
    for path in ("/api/chat", "/api/agui"):
        result = check_url(url + path, message="Weather in Lisbon?", headers=AUTH)
        assert result.ok and result.http_findings == [], result.format()


def test_requests_without_the_token_get_a_json_401(example: Any) -> None:
    url = example("plain_text")
    for path, body in (("/api/chat", {"id": "c", "messages": []}), ("/api/agui", {})):
        answer = httpx.post(url + path, json=body)
        assert answer.status_code == 401
        assert answer.json()["error"]["status"] == 401
        wrong = httpx.post(url + path, json=body, headers={"authorization": "Bearer nope"})
        assert wrong.status_code == 401


def test_cors_allows_the_page_origin_only(example: Any) -> None:
    url = example("plain_text")
    preflight = {"access-control-request-method": "POST", "access-control-request-headers": "authorization"}
    allowed = httpx.options(url + "/api/chat", headers={"origin": "http://localhost:3000", **preflight})
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    other = httpx.options(url + "/api/chat", headers={"origin": "http://evil.example", **preflight})
    assert "access-control-allow-origin" not in other.headers


def test_limits_are_the_apps(example: Any) -> None:
    url = example("plain_text")
    many = [{"id": f"m{i}", "role": "user", "parts": [{"type": "text", "text": "x"}]} for i in range(201)]
    answer = httpx.post(url + "/api/chat", json={"id": "c", "messages": many}, headers=AUTH)
    assert answer.status_code == 413 and answer.json()["error"]["field"] == "limits.max_messages"


def test_use_chat_runs_the_server_tool_and_answers(js: JsOracle, example: Any) -> None:
    url = example("tool_call")
    answer = js.call(
        "aisdk",
        {
            "api": url + "/api/chat",
            "headers": AUTH,
            "steps": [{"do": "sendMessage", "args": {"text": "Weather in Lisbon?"}}],
        },
    )
    assert answer["ok"], answer.get("error")
    result = answer["result"]
    assert result["error"] is None and result["status"] == "ready"
    parts = result["message"]["parts"]
    tool = next(p for p in parts if p["type"] == "tool-get_weather")
    assert tool["state"] == "output-available"
    assert tool["input"] == {"city": "Lisbon"}  # what the recorded model asked
    assert tool["output"] == {"city": "Lisbon", "temperature": 18, "unit": "celsius", "conditions": "mild"}
    assert "23°C" in "".join(p.get("text", "") for p in parts if p["type"] == "text")


def test_an_approved_report_is_sent_after_the_users_answer(js: JsOracle, example: Any) -> None:
    url = example("report_approval")
    answer = js.call(
        "aisdk",
        {
            "api": url + "/api/chat",
            "headers": AUTH,
            "auto": "approvals",
            "steps": [
                {"do": "sendMessage", "args": {"text": "Send the Paris weather to ops"}},
                {"do": "answerApprovals", "args": {"approved": True}},
            ],
        },
    )
    assert answer["ok"], answer.get("error")
    result = answer["result"]
    assert result["error"] is None
    tool = next(p for p in result["message"]["parts"] if p["type"] == "tool-send_report")
    assert tool["state"] == "output-available"
    assert tool["output"] == {"sent": True, "to": "ops@example.com"}
    assert tool["approval"]["approved"] is True
    text = "".join(p.get("text", "") for p in result["message"]["parts"] if p["type"] == "text")
    assert text.endswith("I sent the report to ops@example.com.")
    assert len(result["requests"]) == 2  # the question, then the automatic resend with the answer


def test_http_agent_runs_the_server_tool_and_answers(js: JsOracle, example: Any) -> None:
    url = example("tool_call")
    user = {"id": "u1", "role": "user", "content": "Weather in Lisbon?"}
    answer = js.call("agui", {"url": url + "/api/agui", "headers": AUTH, "runs": [{}], "messages": [user], "state": {}})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == []
    run = answer["result"]["runs"][0]
    assert run["failed"] is None and run["outcome"] == "success"
    messages = answer["result"]["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["content"] == '{"city":"Lisbon","temperature":18,"unit":"celsius","conditions":"mild"}'
    assert "23°C" in messages[-1]["content"]
