"""The demo's OpenAI-compatible agent against a local server replaying recorded streaming responses.

The source underneath (translator, input conversion, tool loop) has its own tests in ``tests/sources``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from streamkit.demo.models import ModelConfig, OpenAIAgent
from streamkit.demo.tools import DEFAULT_TOOLS
from streamkit.events import (
    ChatEvent,
    ContextItem,
    Message,
    RunInput,
    SequenceChecker,
    TextPart,
    Tool,
    ToolCallArgsDelta,
)
from tests.demo.openai_replay import replay_app, scenarios, serve


@pytest.fixture(scope="module")
def replay() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    app = replay_app()
    with serve(app) as url:
        yield url + "/v1", app.state.requests


def user_run(text: str = "hi", run_id: str = "run-1") -> RunInput:
    return RunInput(
        thread_id="thread-1", run_id=run_id, messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])]
    )


async def collect(agent: OpenAIAgent, run: RunInput | None = None) -> list[ChatEvent]:
    checker = SequenceChecker(strict=True)  # the agent's own stream must need no repair
    events = []
    async for event in agent(run or user_run()):
        out = checker.feed(event)
        if event.type != "run-error":
            assert out == [event]
        events.append(event)
    assert checker.finished
    return events


def summarize(events: list[ChatEvent]) -> list[tuple[Any, ...]]:
    """Collapse each block to one entry: what the run said, in order."""
    out: list[tuple[Any, ...]] = []
    buffers: dict[str, list[str]] = {}
    for e in events:
        match e.type:
            case "run-started":
                out.append(("run-started",))
            case "step-started":
                out.append(("step", e.name))  # type: ignore[union-attr]
            case "step-finished":
                out.append(("/step", e.name))  # type: ignore[union-attr]
            case "text-start" | "reasoning-start" | "tool-call-start":
                buffers[e.id] = []  # type: ignore[union-attr]
            case "text-delta" | "reasoning-delta" | "tool-call-args-delta":
                buffers[e.id].append(e.delta)  # type: ignore[union-attr]
            case "text-end":
                out.append(("text", "".join(buffers.pop(e.id))))  # type: ignore[union-attr]
            case "reasoning-end":
                out.append(("reasoning", "".join(buffers.pop(e.id))))  # type: ignore[union-attr]
            case "tool-call-end":
                entry: tuple[Any, ...] = ("tool-call", e.id, "".join(buffers.pop(e.id)), e.input)  # type: ignore[union-attr]
                if e.error is not None:  # type: ignore[union-attr]
                    entry += (e.error,)  # type: ignore[union-attr]
                out.append(entry)
            case "tool-result":
                if e.error is not None:  # type: ignore[union-attr]
                    out.append(("tool-error", e.id, e.error))  # type: ignore[union-attr]
                else:
                    out.append(("tool-result", e.id, e.output))  # type: ignore[union-attr]
            case "source":
                out.append(("source", e.url))  # type: ignore[union-attr]
            case "run-finished":
                usage = e.usage.model_dump(exclude_none=True) if e.usage else None  # type: ignore[union-attr]
                out.append(("run-finished", e.finish_reason, usage))  # type: ignore[union-attr]
            case "run-error":
                out.append(("run-error", e.code, e.message))  # type: ignore[union-attr]
            case "tool-call-start" | "state-snapshot" | "state-update":
                pass
            case other:
                raise AssertionError(f"unexpected event {other}")
    return out


LISBON = {"city": "Lisbon", "temperature": 23, "unit": "celsius", "conditions": "sunny", "humidity": 55}
PARIS = {"city": "Paris", "temperature": 21, "unit": "celsius", "conditions": "partly cloudy", "humidity": 60}
TOKYO = {"city": "Tokyo", "temperature": 24, "unit": "celsius", "conditions": "humid, light rain", "humidity": 78}
BAD_JSON = "the model sent arguments that are not valid JSON: Expecting ',' delimiter: line 1 column 23 (char 22)"

# usage names the model the server reported (the scenario is the model asked for)
EXPECTED: dict[str, list[tuple[Any, ...]]] = {
    "plain_text": [
        ("run-started",),
        ("step", "model-call-1"),
        ("text", "Hello! I'm doing well, thanks for asking. How can I help you today?"),
        ("/step", "model-call-1"),
        (
            "run-finished",
            "stop",
            {"input_tokens": 91, "output_tokens": 17, "total_tokens": 108, "model": "gpt-4o-mini-2024-07-18"},
        ),
    ],
    "reasoning_content": [
        ("run-started",),
        ("step", "model-call-1"),
        ("reasoning", "The user asks for 17 times 23. 17 * 20 = 340, 17 * 3 = 51, so 340 + 51 = 391."),
        ("text", "17 \u00d7 23 = **391**."),
        ("/step", "model-call-1"),
        (
            "run-finished",
            "stop",
            {
                "input_tokens": 20,
                "output_tokens": 48,
                "total_tokens": 68,
                "reasoning_tokens": 36,
                "model": "deepseek-reasoner",
            },
        ),
    ],
    "reasoning_field": [
        ("run-started",),
        ("step", "model-call-1"),
        ("reasoning", "Okay, the user just said hi. I should greet them back briefly."),
        ("text", "Hi there! What would you like to talk about?"),
        ("/step", "model-call-1"),
        (
            "run-finished",
            "stop",
            {"input_tokens": 12, "output_tokens": 31, "total_tokens": 43, "model": "qwen3:4b"},
        ),
    ],
    "tool_call": [
        ("run-started",),
        ("step", "model-call-1"),
        ("tool-call", "call_Qx7fLp2N9vRk", '{"city":"Lisbon"}', {"city": "Lisbon"}),
        ("tool-result", "call_Qx7fLp2N9vRk", LISBON),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", "It's 23°C and sunny in Lisbon right now, with 55% humidity."),
        ("/step", "model-call-2"),
        (
            "run-finished",
            "stop",
            {
                "input_tokens": 152 + 214,
                "output_tokens": 15 + 18,
                "total_tokens": 167 + 232,
                "cached_input_tokens": 128,
                "model": "gpt-4o-mini-2024-07-18",
            },
        ),
    ],
    "frontend_tool": [
        ("run-started",),
        ("step", "model-call-1"),
        (
            "tool-call",
            "call_Fr0nt7oolK2x",
            '{"hotel":"Lisbon Central","nights":2}',
            {"hotel": "Lisbon Central", "nights": 2},
        ),
        ("/step", "model-call-1"),
        (
            "run-finished",
            "tool-calls",
            {"input_tokens": 188, "output_tokens": 21, "total_tokens": 209, "model": "gpt-4o-mini-2024-07-18"},
        ),
    ],
    "parallel_tools": [
        ("run-started",),
        ("step", "model-call-1"),
        ("tool-call", "chatcmpl-tool-a1", '{"city": "Paris"}', {"city": "Paris"}),
        ("tool-call", "chatcmpl-tool-b2", '{"city": "Tokyo"}', {"city": "Tokyo"}),
        ("tool-result", "chatcmpl-tool-a1", PARIS),
        ("tool-result", "chatcmpl-tool-b2", TOKYO),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", "Paris is 21°C and partly cloudy; Tokyo is 24°C with light rain. Tokyo is 3°C warmer."),
        ("/step", "model-call-2"),
        (
            "run-finished",
            "stop",
            {"input_tokens": 721, "output_tokens": 65, "total_tokens": 786, "model": "Qwen/Qwen2.5-7B-Instruct"},
        ),
    ],
    "text_then_tool": [
        ("run-started",),
        ("step", "model-call-1"),
        ("text", "Let me calculate that."),
        ("tool-call", "call_k3j9d2ab", '{"expression":"(3 + 4) * 2"}', {"expression": "(3 + 4) * 2"}),
        ("tool-result", "call_k3j9d2ab", {"expression": "(3 + 4) * 2", "result": 14}),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", "(3 + 4) * 2 = 14."),
        ("/step", "model-call-2"),
        ("run-finished", "stop", None),
    ],
    "invalid_arguments": [
        ("run-started",),
        ("step", "model-call-1"),
        ("tool-call", "call_BadJson01", '{"expression": "2 + 2"', '{"expression": "2 + 2"', BAD_JSON),
        ("tool-error", "call_BadJson01", BAD_JSON),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", "Sorry, my tool call was malformed. 2 + 2 = 4."),
        ("/step", "model-call-2"),
        ("run-finished", "stop", None),
    ],
    "unknown_tool": [
        ("run-started",),
        ("step", "model-call-1"),
        ("tool-call", "call_Unknown001", '{"to":"Oslo"}', {"to": "Oslo"}),
        ("tool-error", "call_Unknown001", "unknown tool 'book_flight'"),
        ("/step", "model-call-1"),
        ("step", "model-call-2"),
        ("text", "I can't book flights, sorry."),
        ("/step", "model-call-2"),
        ("run-finished", "stop", None),
    ],
    "tool_loop": [  # with max_steps=3: the server repeats its call id, the agent keeps the run's ids unique
        ("run-started",),
        *[
            entry
            for n, cid in ((1, "call_Loop"), (2, "call_Loop_2"), (3, "call_Loop_3"))
            for entry in (
                ("step", f"model-call-{n}"),
                ("tool-call", cid, '{"expression": "1 + 1"}', {"expression": "1 + 1"}),
                ("tool-result", cid, {"expression": "1 + 1", "result": 2}),
                ("/step", f"model-call-{n}"),
            )
        ],
        ("run-finished", "tool-calls", None),
    ],
    "stream_error": [
        ("run-started",),
        ("step", "model-call-1"),
        # the error chunk ends the run with the server's own words; the open text is closed by the checker
        ("run-error", "backend_error", "The upstream model backend crashed."),
    ],
    "server_error": [
        ("run-started",),
        ("step", "model-call-1"),
        (
            "run-error",
            "http_500",
            "The model server answered HTTP 500: The server had an error while processing your request. "
            "Sorry about that!",
        ),
    ],
    "rate_limited": [
        ("run-started",),
        ("step", "model-call-1"),
        (
            "run-error",
            "http_429",
            "The model server answered HTTP 429 (rate limited: try again later): Rate limit reached for "
            "gpt-4o-mini in organization org-demo on requests per min (RPM): Limit 3, Used 3, Requested 1. "
            "Please try again in 20s.",
        ),
    ],
}


def test_every_recording_has_an_expectation() -> None:
    assert sorted(EXPECTED) == scenarios()


BOOKING = Tool(
    name="confirm_booking",
    description="Ask the user to confirm a hotel booking (runs in the browser).",
    parameters={"type": "object", "properties": {"hotel": {"type": "string"}, "nights": {"type": "integer"}}},
)
RUNS = {"frontend_tool": user_run("Book me two nights in Lisbon").model_copy(update={"tools": [BOOKING]})}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
async def test_recording_maps_to_the_expected_events(scenario: str, replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = replay
    agent = OpenAIAgent(url, scenario, api_key="sk-test", max_steps=3, show_plan=False)
    assert summarize(await collect(agent, RUNS.get(scenario))) == EXPECTED[scenario]


async def test_client_tools_are_offered_and_left_pending(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = replay
    before = len(requests)
    events = await collect(OpenAIAgent(url, "frontend_tool"), RUNS["frontend_tool"])
    bodies = [r["body"] for r in requests[before:]]
    assert len(bodies) == 1  # the run ends with the call pending: no second model call
    offered = {t["function"]["name"]: t["function"] for t in bodies[0]["tools"]}
    assert offered["confirm_booking"]["parameters"] == BOOKING.parameters
    assert {t.name for t in DEFAULT_TOOLS} < set(offered)
    assert not [e for e in events if e.type == "tool-result"]
    assert events[-2].type == "state-update" and events[-2].state["status"] == "waiting for the client"  # type: ignore[union-attr]


async def test_split_arguments_stream_as_they_arrive(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = replay
    events = await collect(OpenAIAgent(url, "tool_call", show_plan=False))
    deltas = [e.delta for e in events if isinstance(e, ToolCallArgsDelta)]
    assert deltas == ['{"', "city", '":"', "Lis", "bon", '"}']


async def test_parallel_calls_keep_their_interleaving(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = replay
    events = await collect(OpenAIAgent(url, "parallel_tools", show_plan=False))
    deltas = [(e.id, e.delta) for e in events if isinstance(e, ToolCallArgsDelta)]
    assert deltas == [
        ("chatcmpl-tool-a1", '{"city": '),
        ("chatcmpl-tool-b2", '{"city": '),
        ("chatcmpl-tool-a1", '"Par'),
        ("chatcmpl-tool-b2", '"Tok'),
        ("chatcmpl-tool-a1", 'is"}'),
        ("chatcmpl-tool-b2", 'yo"}'),
    ]
    kinds = [e.type for e in events[:6]]
    assert kinds == ["run-started", "step-started", "tool-call-start", "tool-call-start", *kinds[4:6]]


async def test_requests_carry_tools_history_and_tool_results(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = replay
    before = len(requests)
    await collect(OpenAIAgent(url, "parallel_tools", api_key="sk-secret", show_plan=False))
    first, second = (r["body"] for r in requests[before:])
    assert [r["authorization"] for r in requests[before:]] == ["Bearer sk-secret"] * 2
    assert first["model"] == "parallel_tools" and first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in first["tools"]] == [t.name for t in DEFAULT_TOOLS]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert second["messages"][:2] == first["messages"]
    assistant, paris, tokyo = second["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "chatcmpl-tool-a1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},  # re-serialized, compact
            },
            {
                "id": "chatcmpl-tool-b2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Tokyo"}'},
            },
        ],
    }
    assert paris == {
        "role": "tool",
        "tool_call_id": "chatcmpl-tool-a1",
        "content": json.dumps(PARIS, separators=(",", ":")),
    }
    assert tokyo == {
        "role": "tool",
        "tool_call_id": "chatcmpl-tool-b2",
        "content": json.dumps(TOKYO, separators=(",", ":")),
    }


async def test_tool_errors_go_back_to_the_model(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = replay
    before = len(requests)
    await collect(OpenAIAgent(url, "unknown_tool", show_plan=False))
    assert requests[before]["authorization"] is None  # no key, no header
    last = requests[-1]["body"]["messages"][-1]
    assert last == {"role": "tool", "tool_call_id": "call_Unknown001", "content": "Error: unknown tool 'book_flight'"}


async def test_steps_are_bounded(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = replay
    before = len(requests)
    events = await collect(OpenAIAgent(url, "tool_loop", max_steps=2, show_plan=False))
    assert len(requests) - before == 2
    assert [e.name for e in events if e.type == "step-started"] == ["model-call-1", "model-call-2"]  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        OpenAIAgent(url, "tool_loop", max_steps=0)


async def test_the_plan_is_streamed_as_state(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = replay
    events = await collect(OpenAIAgent(url, "parallel_tools"))
    states = [e for e in events if e.type in ("state-snapshot", "state-update")]
    assert states[0].type == "state-snapshot"
    assert states[0].state == {"task": "hi", "status": "working", "steps": []}  # type: ignore[union-attr]
    assert states[-1].state == {  # type: ignore[union-attr]
        "task": "hi",
        "status": "done",
        "steps": [
            {"id": "model-call-1", "title": "Model call 1", "status": "done"},
            {"id": "chatcmpl-tool-a1", "title": 'get_weather(city="Paris")', "status": "done"},
            {"id": "chatcmpl-tool-b2", "title": 'get_weather(city="Tokyo")', "status": "done"},
            {"id": "model-call-2", "title": "Model call 2", "status": "done"},
        ],
    }


async def test_a_failed_call_marks_the_plan_failed(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = replay
    events = await collect(OpenAIAgent(url, "server_error"))
    last_state = [e for e in events if e.type == "state-update"][-1]
    assert last_state.state["status"] == "failed"  # type: ignore[union-attr]
    assert events[-1].type == "run-error"


async def test_unreachable_server() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = OpenAIAgent(f"http://127.0.0.1:{port}/v1", "m", api_key="sk-never-shown", show_plan=False)
    events = await collect(agent)
    assert summarize(events)[-1] == (
        "run-error",
        "model_unreachable",
        f"Could not reach the model server at http://127.0.0.1:{port}/v1: ConnectError.",
    )
    assert "sk-never-shown" not in events[-1].message  # type: ignore[union-attr]


async def test_closing_early_closes_the_connection(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = replay
    stream = OpenAIAgent(url, "plain_text", show_plan=False)(user_run())
    first = [await anext(stream), await anext(stream), await anext(stream)]
    await stream.aclose()  # type: ignore[attr-defined]
    assert [e.type for e in first] == ["run-started", "step-started", "text-start"]


def test_model_config_from_flags_and_environment() -> None:
    assert ModelConfig.from_env({}) is None
    assert ModelConfig.from_env({"STREAMKIT_BASE_URL": "http://x/v1"}) is None  # no model: offline
    assert ModelConfig.from_env({"OPENAI_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "k"}) == ModelConfig(
        "https://api.openai.com/v1", "gpt-4o-mini", "k"
    )
    env = {
        "STREAMKIT_MODEL": "llama3.2",
        "OPENAI_MODEL": "gpt-4o",
        "STREAMKIT_BASE_URL": "http://localhost:11434/v1",
        "OPENAI_API_KEY": "sk-openai",
    }
    assert ModelConfig.from_env(env) == ModelConfig("http://localhost:11434/v1", "llama3.2", "sk-openai")
    assert ModelConfig.from_env(env, model="qwen3", base_url="http://vllm:8000/v1", api_key="x") == ModelConfig(
        "http://vllm:8000/v1", "qwen3", "x"
    )
    agent = OpenAIAgent.from_config(ModelConfig("http://h/v1/", "m", None), max_steps=2)
    assert (agent.url, agent.model, agent.max_steps) == ("http://h/v1/chat/completions", "m", 2)
    assert "k-secret" not in repr(OpenAIAgent("http://h/v1", "m", api_key="k-secret"))


async def test_context_items_join_the_system_prompt(replay: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = replay
    run = user_run().model_copy(update={"context": [ContextItem(description="user's city", value="Lisbon")]})
    await collect(OpenAIAgent(url, "plain_text", system_prompt="Be brief.", show_plan=False), run)
    assert requests[-1]["body"]["messages"][0] == {
        "role": "system",
        "content": "Be brief.\n\nContext from the application:\n- user's city: Lisbon",
    }


def test_request_body_options() -> None:
    agent = OpenAIAgent("http://h/v1", "m", tools=(), include_usage=False, extra_body={"temperature": 0.2})
    assert agent.request_body([{"role": "user", "content": "x"}]) == {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
        "temperature": 0.2,
    }


def test_provider_agents_for_the_demo() -> None:
    from streamkit.demo.app import agent_info
    from streamkit.demo.cli import build_parser, make_agent
    from streamkit.demo.models import ModelAgent, provider_agent

    env = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-ant-x"}
    ollama = provider_agent("ollama", env={"OLLAMA_HOST": "gpu-box:11434"})
    assert (ollama.provider, ollama.model, ollama.base_url) == ("ollama", "llama3.2", "http://gpu-box:11434")
    assert agent_info(ollama) == {"agent": "ollama", "model": "llama3.2", "baseUrl": "http://gpu-box:11434"}
    responses = provider_agent("openai-responses", model="gpt-5-mini", env=env)
    assert isinstance(responses, ModelAgent) and responses.base_url.startswith("https://api.openai.com")
    anthropic = provider_agent("anthropic", env=env)
    assert (anthropic.provider, anthropic.model) == ("anthropic", "claude-sonnet-4-5")
    chat = provider_agent("openai", env={"OPENAI_MODEL": "gpt-4.1"})
    assert isinstance(chat, OpenAIAgent) and chat.model == "gpt-4.1"
    with pytest.raises(ValueError):
        provider_agent("nope")
    args = build_parser().parse_args(["demo", "--provider", "ollama", "--model", "qwen3"])
    agent = make_agent(args)
    assert isinstance(agent, ModelAgent) and (agent.provider, agent.model) == ("ollama", "qwen3")
    assert "sk-" not in repr(responses) + repr(anthropic)
