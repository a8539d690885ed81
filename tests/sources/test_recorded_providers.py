"""Every real recorded provider response, through its source and through the provider SDK's own accumulator.

The recordings are the provider fixtures beside the project (:mod:`tests.support.fixtures`: the AI SDK's
provider fixtures, openai-python's and anthropic-sdk-python's test suites, Ollama's API docs); without that
folder the test skips. Each recorded HTTP response (a ``*.chunks.txt`` file holding several responses is
split at each ``response.created`` / ``message_start``) is served through an ``httpx.MockTransport`` into the
real SDK client twice: once read by the source (``openai_chat_events``, ``openai_responses_events``,
``message_events``, ``ollama_events``), once by the SDK's own accumulation (openai's
``ChatCompletionStreamState``, the Responses stream's final response, anthropic's ``MessageStream`` final
message, the ``ollama`` chunks joined). Both are reduced to the same summary and must be equal: the text and
reasoning of each block, every tool call (id, name, input), every item or block the provider ran itself (by
its id, call and result), the usage counts, the error; and the finish reason, which the SDKs do not map, is
the AI SDK providers' mapping of the provider's reason.

A Responses item the source does not show is listed in :data:`NOT_SHOWN` with the reason.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import jiter
import ollama
import pytest
from openai import AsyncOpenAI
from openai._models import construct_type
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.responses import Response

from streamkit.events import ChatEvent, RunError, RunFinished, RunInput, ToolCallEnd, ToolCallStart, ToolResult
from streamkit.sources.anthropic import AnthropicAgent, message_events
from streamkit.sources.ollama import ollama_events
from streamkit.sources.openai import openai_chat_events, openai_responses_events
from streamkit.testing import Recording, Replay
from tests.sources.support import collect, sse
from tests.support.fixtures import provider_fixture, provider_fixtures

ENTRIES = provider_fixtures()

NOT_SHOWN = {
    "mcp_list_tools": "the tools an MCP server offers: no call, nothing the conversation says",
    "compaction": "OpenAI's compacted context: opaque state, not a call (the AI SDK does not show it either)",
}
"""Responses output items that are not calls, left out of both summaries."""

# --- the recorded responses ------------------------------------------------------------------------


def responses_of(entry: dict[str, Any]) -> list[Recording]:
    """The recorded HTTP responses of one fixture, each as a :class:`Recording`."""
    raw = provider_fixture(entry["file"])
    if entry["format"] == "http":
        recorded = json.loads(raw)
        body = recorded["body"] if isinstance(recorded["body"], str) else json.dumps(recorded["body"])
        content_type = recorded.get("content_type") or "application/json"
        return [Recording(body.encode(), recorded["status"], content_type)]
    if entry["format"] == "ndjson":
        return [Recording(raw, content_type="application/x-ndjson")]
    if entry["format"] == "sse":
        return [Recording(raw)]
    events = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
    if entry["api"] == "openai_chat":
        return [Recording(sse(events, done=True))]
    start = "response.created" if entry["api"] == "openai_responses" else "message_start"
    groups: list[list[Any]] = []
    for event in events:
        if event.get("type") == start or not groups:
            groups.append([])
        groups[-1].append(event)
    return [Recording(sse(group, named=True)) for group in groups]


def earlier_calls(reply: Recording) -> set[str]:
    """The call ids a recorded body answers without starting them: a result may answer a call of an earlier
    response (a program's output, a deferred tool search), which the run's checker must know of."""
    answered: set[str] = set()
    started: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            output = str(value.get("type", "")).endswith("_output")
            for key, item in value.items():
                if isinstance(item, str) and (key == "tool_use_id" or (key == "call_id" and output)):
                    answered.add(item)
                elif key in ("id", "call_id") and isinstance(item, str):
                    started.add(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for line in reply.body.decode(errors="replace").splitlines():
        if line.startswith("data:"):
            try:
                walk(json.loads(line[5:]))
            except ValueError:
                continue
    return answered - started


# --- one summary for both sides --------------------------------------------------------------------


def summary_of_events(events: list[ChatEvent]) -> dict[str, Any]:
    """What the source's events say, as the comparison reads it."""
    texts: list[str] = []
    reasoning: list[str] = []
    open_text: dict[str, list[str]] = {}
    open_reasoning: dict[str, list[str]] = {}
    calls: list[tuple[Any, ...]] = []
    provider: set[str] = set()
    names: dict[str, str] = {}
    out: dict[str, Any] = {"finish": None, "error": None, "usage": None}
    for e in events:
        kind = e.type
        if kind == "text-start":
            open_text[e.id] = []
        elif kind == "text-delta":
            open_text[e.id].append(e.delta)
        elif kind == "text-end":
            texts.append("".join(open_text.pop(e.id)))
        elif kind == "reasoning-start":
            open_reasoning[e.id] = []
        elif kind == "reasoning-delta":
            open_reasoning[e.id].append(e.delta)
        elif kind == "reasoning-end":
            reasoning.append("".join(open_reasoning.pop(e.id)))
        elif isinstance(e, ToolCallStart):
            names[e.id] = e.name
            if e.provider_executed:
                provider.add(f"call {_item_id(e) or e.id}")
        elif isinstance(e, ToolCallEnd) and not any(f"call {x}" in provider for x in (e.id, _item_id(e))):
            calls.append((e.id, names[e.id], e.input))
        elif isinstance(e, ToolResult):
            provider.add(f"result {_item_id(e) or e.id}")
        elif isinstance(e, RunFinished):
            out["finish"] = e.finish_reason
            if e.usage is not None:
                out["usage"] = (e.usage.input_tokens, e.usage.output_tokens)
        elif isinstance(e, RunError):
            out["error"] = e.code
    out.update(texts=[t for t in texts if t], reasoning=[r for r in reasoning if r], calls=calls, provider=provider)
    return out


def _item_id(event: Any) -> str | None:
    meta = event.provider_metadata or {}
    for provider in ("openai", "anthropic"):
        item = (meta.get(provider) or {}).get("itemId")
        if isinstance(item, str):
            return item
    return None


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


# --- OpenAI Chat Completions -----------------------------------------------------------------------

CHAT_FINISH = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content-filter",
    "function_call": "tool-calls",
    "tool_calls": "tool-calls",
}
"""The AI SDK's ``mapOpenAIFinishReason`` (any other reason is ``other``)."""


def openai_client(replay: Replay) -> AsyncOpenAI:
    return AsyncOpenAI(api_key="sk-test", base_url="http://model.test/v1", http_client=replay.client(), max_retries=0)


async def compare_chat(reply: Recording) -> tuple[dict[str, Any], dict[str, Any]]:
    state = ChatCompletionStreamState()

    async def tee(stream: Any) -> AsyncIterator[Any]:
        async for chunk in stream:
            state.handle_chunk(chunk)
            yield chunk

    stream = await openai_client(Replay(reply)).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    ours = summary_of_events(await collect(openai_chat_events(tee(stream))))
    completion = state.current_completion_snapshot
    choice = next(c for c in completion.choices if c.index == 0)
    message = choice.message
    extra = message.model_extra or {}
    text = (message.content or "") + (message.refusal or "")
    thought = extra.get("reasoning_content") or extra.get("reasoning") or ""
    calls = [(c.id, c.function.name, _json(c.function.arguments)) for c in message.tool_calls or []]
    usage = completion.usage
    expected = {
        "texts": [text] if text else [],
        "reasoning": [thought] if thought else [],
        "calls": calls,
        "provider": set(),
        "finish": CHAT_FINISH.get(choice.finish_reason or "", "other"),
        "usage": (usage.prompt_tokens, usage.completion_tokens) if usage is not None else None,
        "error": None,
    }
    return expected, ours


# --- OpenAI Responses ------------------------------------------------------------------------------

CLIENT_ITEMS = {
    "function_call",
    "custom_tool_call",
    "computer_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
}
"""Output items of tools the caller runs (a ``shell_call`` in OpenAI's container is OpenAI's)."""


def _client_item(item: Any) -> bool:
    if item.type == "tool_search_call":
        return getattr(item, "execution", None) == "client"
    if item.type == "shell_call":
        environment = getattr(item, "environment", None)
        return not str(getattr(environment, "type", "") or "").startswith("container")
    return item.type in CLIENT_ITEMS


async def compare_responses(reply: Recording) -> tuple[dict[str, Any], dict[str, Any]]:
    client = openai_client(Replay(reply))
    stream = await client.responses.create(model="m", input="hi", stream=True)
    ours = summary_of_events(await collect(openai_responses_events(stream), earlier_calls(reply)))
    expected: dict[str, Any] = {"texts": [], "reasoning": [], "calls": [], "provider": set(), "error": None}
    try:
        async with openai_client(Replay(reply)).responses.stream(model="m", input="hi") as sdk_stream:
            final: Any = await sdk_stream.get_final_response()
    except Exception as exc:  # the SDK raises the stream's error, or refuses a snapshot it cannot reconcile
        final = _final_response(reply)
        if final is None:
            expected.update(finish=None, usage=None, error=ours["error"] or f"no error, the SDK raised {exc!r}")
            return expected, ours
    pending = False
    for item in final.output:
        kind = item.type
        if kind == "message":
            text = "".join(getattr(c, "text", None) or getattr(c, "refusal", None) or "" for c in item.content)
            if text:
                expected["texts"].append(text)
        elif kind == "reasoning":
            thought = "\n\n".join(s.text for s in item.summary or [])
            thought += "".join(c.text for c in getattr(item, "content", None) or [])
            if thought:
                expected["reasoning"].append(thought)
        elif kind in NOT_SHOWN:
            continue
        elif kind in ("function_call", "custom_tool_call"):
            pending = True
            expected["calls"].append((item.call_id, item.name, _json(item.arguments) if kind == "function_call"
                                      else item.input))  # fmt: skip
        elif _client_item(item):
            pending = True
            expected["calls"].append(("client", item.id))
        elif kind == "mcp_approval_request":
            pending = True  # the user answers: the run pauses
            expected["provider"].add(f"call {item.id}")
        elif kind.endswith("_output"):
            expected["provider"].add(f"result {item.id}")
        else:
            expected["provider"].add(f"call {item.id}")
            if kind.endswith("_call") and kind not in ("shell_call", "tool_search_call"):
                expected["provider"].add(f"result {item.id}")  # a hosted call carries its own result
    reason = getattr(final.incomplete_details, "reason", None)
    finish = {"max_output_tokens": "length", "content_filter": "content-filter"}.get(reason or "")
    expected["finish"] = finish or ("tool-calls" if pending else "stop" if reason is None else "other")
    usage = final.usage
    expected["usage"] = (usage.input_tokens, usage.output_tokens) if usage is not None else None
    return expected, _client_ids(ours, final.output)


def _final_response(reply: Recording) -> Any:
    """The response a recording's ``response.completed`` carries, read by the SDK's ``Response`` type (where
    the SDK's stream refuses the recording: a call whose ``call_id`` changed between added and done)."""
    for line in reversed(reply.body.decode().splitlines()):
        if line.startswith("data:") and '"response.completed"' in line:
            return construct_type(type_=Response, value=json.loads(line[5:])["response"])
    return None


def _client_ids(ours: dict[str, Any], output: list[Any]) -> dict[str, Any]:
    """``ours`` with each call of a client-run item (streamed under its call id) named by its item id."""
    by_call = {getattr(i, "call_id", None): i for i in output if _client_item(i) and i.type not in
               ("function_call", "custom_tool_call")}  # fmt: skip
    calls = [("client", by_call[c[0]].id) if c[0] in by_call else c for c in ours["calls"]]
    return {**ours, "calls": calls}


# --- Anthropic -------------------------------------------------------------------------------------

ANTHROPIC_FINISH = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
}
"""The AI SDK's ``mapAnthropicStopReason`` (any other reason is ``other``)."""


async def compare_anthropic(reply: Recording) -> tuple[dict[str, Any], dict[str, Any]]:
    def client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="k", max_retries=0, http_client=Replay(reply).httpx2_client())

    request: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if reply.status != 200:  # an error status: the SDK raises it, the agent words it
        agent = AnthropicAgent(client(), model="claude-sonnet-4-5")
        ours = summary_of_events(await collect(agent(RunInput(thread_id="t", run_id="r", messages=[]))))
        with pytest.raises(anthropic.APIStatusError) as raised:
            await client().messages.create(**request)
        return {"error": raised.value.body["error"]["type"]}, {"error": ours["error"]}  # the API's error type
    stream = await client().messages.create(stream=True, **request)
    events = await collect(message_events(stream, prefix="p"), earlier_calls(reply))
    ours = summary_of_events(events)
    async with client().messages.stream(**request) as sdk_stream:
        final = await sdk_stream.get_final_message()
    # a tool input cut off (max_tokens) is kept as its text, marked as an error: read it as the SDK does
    failed = {e.id for e in events if isinstance(e, ToolCallEnd) and e.error is not None}
    ours["calls"] = [(i, n, jiter.from_json(x.encode(), partial_mode=True) if i in failed else x)
                     for i, n, x in ours["calls"]]  # fmt: skip
    expected: dict[str, Any] = {"texts": [], "reasoning": [], "calls": [], "provider": set(), "error": None}
    for block in final.content:
        kind = block.type
        if kind == "text":
            if block.text:
                expected["texts"].append(block.text)
        elif kind == "thinking":
            if block.thinking:
                expected["reasoning"].append(block.thinking)
        elif kind == "tool_use":
            expected["calls"].append((block.id, block.name, block.input))
        elif kind in ("server_tool_use", "mcp_tool_use"):
            expected["provider"].add(f"call {block.id}")
        elif kind.endswith("_tool_result"):
            expected["provider"].add(f"result {block.tool_use_id}")
    expected["finish"] = ANTHROPIC_FINISH.get(final.stop_reason or "", "other")
    usage = final.usage  # the input counted as the AI SDK counts it: the cache reads and writes included
    inputs = usage.input_tokens + (usage.cache_read_input_tokens or 0) + (usage.cache_creation_input_tokens or 0)
    expected["usage"] = (inputs, usage.output_tokens)
    ours["reasoning"] = [r for r in ours["reasoning"] if not r.startswith("[")]  # redacted thinking shows a mark
    return expected, ours


# --- Ollama ----------------------------------------------------------------------------------------


async def compare_ollama(reply: Recording) -> tuple[dict[str, Any], dict[str, Any]]:
    chunks: list[Any] = []

    async def tee(stream: Any) -> AsyncIterator[Any]:
        async for chunk in stream:
            chunks.append(chunk)
            yield chunk

    sdk = ollama.AsyncClient(host="http://ollama.test", transport=httpx.MockTransport(Replay(reply)))
    stream = await sdk.chat(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    ours = summary_of_events(await collect(ollama_events(tee(stream), prefix="p")))
    text = "".join(c.message.content or "" for c in chunks)
    thought = "".join(c.message.thinking or "" for c in chunks)
    calls = [(t.function.name, t.function.arguments) for c in chunks for t in c.message.tool_calls or []]
    last = chunks[-1]
    # a missing done_reason (the docs' examples leave it out) is a plain stop, as the server's "stop" is
    reason = {"stop": "stop", "length": "length", None: "stop"}.get(last.done_reason, "other")
    expected = {
        "texts": [text] if text else [],
        "reasoning": [thought] if thought else [],
        "calls": calls,
        "provider": set(),
        "finish": "tool-calls" if calls else reason,
        "usage": (last.prompt_eval_count, last.eval_count),
        "error": None,
    }
    ours["calls"] = [c[1:] for c in ours["calls"]]  # Ollama's calls have no id: the source makes one
    return expected, ours


COMPARE = {
    "openai_chat": compare_chat,
    "openai_responses": compare_responses,
    "anthropic": compare_anthropic,
    "ollama": compare_ollama,
}


@pytest.mark.parametrize("entry", ENTRIES or [None], ids=lambda e: e["name"] if e else "no-fixtures")
def test_a_recorded_response_reads_as_the_provider_sdk_reads_it(entry: dict[str, Any] | None) -> None:
    if entry is None:
        provider_fixture("fixtures.json")  # skips: there are no recordings beside the project
        return
    for n, reply in enumerate(responses_of(entry)):
        expected, ours = asyncio.run(COMPARE[entry["api"]](reply))
        assert ours == expected, f"response {n} of {entry['name']}"
