"""``streamkit demo --agui-url`` / ``--aisdk-url``: a remote agent server behind both tabs of the demo."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit.demo.agent import Pacing, ScriptedAgent
from streamkit.demo.app import agent_info, create_app
from streamkit.demo.cli import build_parser, make_agent
from streamkit.sources.agui import RemoteAGUIAgent
from streamkit.sources.aisdk import RemoteAISDKAgent
from tests.support.oracle import JsOracle


def _args(*argv: str) -> Any:
    return build_parser().parse_args(["demo", *argv])


def test_the_flags_make_remote_agents() -> None:
    agent = make_agent(_args("--agui-url", "http://h/agent", "--remote-header", "Authorization: Bearer x"))
    assert isinstance(agent, RemoteAGUIAgent) and agent.url == "http://h/agent"
    assert agent.headers == {"Authorization": "Bearer x"}
    assert agent_info(agent) == {"agent": "remote-agui", "model": "remote", "baseUrl": "http://h/agent"}
    assert isinstance(make_agent(_args("--aisdk-url", "http://h/api/chat")), RemoteAISDKAgent)
    with pytest.raises(SystemExit, match="name one"):
        make_agent(_args("--agui-url", "http://a", "--aisdk-url", "http://b"))
    with pytest.raises(SystemExit, match="NAME: VALUE"):
        make_agent(_args("--agui-url", "http://a", "--remote-header", "no colon"))


@pytest.mark.parametrize("flag", ["--agui-url", "--aisdk-url"])
def test_both_tabs_talk_to_the_remote_server(js: JsOracle, live_server: Any, flag: str) -> None:
    backend = live_server(create_app(ScriptedAgent(Pacing().scaled(0)), static_dir=None))
    path = "/api/agui" if flag == "--agui-url" else "/api/chat"
    front = live_server(create_app(make_agent(_args(flag, backend.url + path)), static_dir=None))
    chat = js.call("aisdk", {"api": f"{front.url}/api/chat", "version": 7})["result"]
    assert chat["status"] == "ready" and chat["error"] is None
    assert any(p["type"] == "text" and p["text"] for p in chat["message"]["parts"])
    ask = [{"id": "u1", "role": "user", "content": "hi"}]
    answer = js.call("agui", {"runs": [{}], "url": f"{front.url}/api/agui", "messages": ask, "state": {}})
    run = answer["result"]["runs"][0]
    assert run["failed"] is None and run["runError"] is None
    assert any(m["role"] == "assistant" and m.get("content") for m in run["messages"])
