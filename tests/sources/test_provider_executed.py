"""Tools the provider ran itself survive the round trip back to the provider.

Anthropic's server tools (``server_tool_use`` with its ``*_tool_result``) and the Responses API's hosted
tools (``web_search_call``...) stream as provider-executed tool calls; the next request must give them back
as the provider sent them, whether the history comes from the agent's own tool loop or from a browser
client that folded the stream and posted it back (the real ``ai`` client, v7 and v5, and ``HttpAgent``).

The bodies are the project's own (:mod:`tests.sources.bodies`): an Anthropic turn with a text, a ``tool_use``, a
``server_tool_use`` web search and its ``web_search_tool_result`` with ``encrypted_content``, stopped with
``tool_use``; a Responses stream with two ``web_search_call`` items, then the answer. anthropic-sdk-python's
recorded search (``streamkit-tests/anthropic_server_tool_refusal.sse`` of the provider fixtures beside the
project) is read when it is there.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from streamkit import agui, aisdk
from streamkit.events import (
    ChatEvent,
    Message,
    RunInput,
    TextPart,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
)
from streamkit.sources.anthropic import AnthropicAgent, AnthropicTranslator, to_anthropic_messages
from streamkit.sources.openai import OpenAIResponsesAgent, responses_input
from streamkit.sources.tools import server_tool
from streamkit.testing import Recording, Replay
from tests.sources import bodies
from tests.sources.support import agui_body, aisdk_body, collect
from tests.sources.test_anthropic import (
    anthropic_client,
    block_start,
    block_stop,
    delta,
    message_end,
    message_start,
    wire,
)
from tests.sources.test_openai_responses import sdk
from tests.support.fixtures import provider_fixture
from tests.support.oracle import JsOracle

WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}


@server_tool
def save_results(filename: str) -> str:
    """Save the search results to a file."""
    return f"saved {filename}"


def first_turn(text: str) -> RunInput:
    return RunInput(thread_id="t1", run_id="r1", messages=[Message(id="u1", role="user", parts=[TextPart(text=text)])])


def started_blocks(body: bytes) -> list[dict[str, Any]]:
    """The content blocks a Messages stream started, in order (as Anthropic sent them)."""
    return [e["content_block"] for e in bodies.body_events(body) if e["type"] == "content_block_start"]


# --- Anthropic ---------------------------------------------------------------------------------------

_, _, USE, RESULT = started_blocks(bodies.anthropic_search_with_tool())
SEARCHED = [
    {"type": "text", "text": bodies.SEARCH_INTRO},
    {"type": "tool_use", "id": bodies.SAVE_USE, "name": "save_results", "input": {"filename": "tides.txt"}},
    # the server tool and its result as Anthropic sent them, in the same assistant turn, no user tool_result
    {"type": "server_tool_use", "id": USE["id"], "name": "web_search", "input": {"query": "tide tables"}},
    {"type": "web_search_tool_result", "tool_use_id": USE["id"], "content": RESULT["content"]},
]
ANSWERED = [{"type": "tool_result", "tool_use_id": bodies.SAVE_USE, "content": "saved tides.txt"}]
ANSWER = "Saved. High tide is at 14:10."


def answer_body() -> bytes:
    return wire(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": ANSWER}),
            block_stop(0),
            *message_end("end_turn"),
        ]
    )


def anthropic_agent(replay: Replay) -> AnthropicAgent:
    return AnthropicAgent(anthropic_client(replay), tools=[save_results], provider_tools=[WEB_SEARCH])


async def anthropic_search_run() -> tuple[list[ChatEvent], Replay]:
    replay = Replay(Recording(bodies.anthropic_search_with_tool()), Recording(answer_body()))
    events = await collect(anthropic_agent(replay)(first_turn("Find the tide tables and save them.")))
    return events, replay


async def anthropic_next_request(run: RunInput) -> list[dict[str, Any]]:
    replay = Replay(Recording(answer_body()))
    await collect(anthropic_agent(replay)(run), known_tool_calls=())
    messages: list[dict[str, Any]] = replay.requests[0]["messages"]
    return messages


async def test_anthropic_server_tool_goes_back_in_the_assistant_turn_within_the_tool_loop() -> None:
    events, replay = await anthropic_search_run()
    start = next(e for e in events if isinstance(e, ToolCallStart) and e.provider_executed)
    assert start.provider_metadata == {"anthropic": {"blockType": "server_tool_use"}}
    end = next(e for e in events if isinstance(e, ToolCallEnd) and e.id == USE["id"])
    assert end.provider_metadata == start.provider_metadata
    result = next(e for e in events if isinstance(e, ToolResult) and e.id == USE["id"])
    assert result.output == RESULT["content"]
    assert result.provider_metadata == {"anthropic": {"blockType": "web_search_tool_result"}}
    # the loop's second call: the turn as Anthropic sent it, then the one client tool's result
    user, assistant, answered = replay.requests[1]["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "Find the tide tables and save them."}]}
    assert assistant == {"role": "assistant", "content": SEARCHED}
    assert answered == {"role": "user", "content": ANSWERED}


def test_anthropic_server_tool_survives_the_browser_clients(js: JsOracle) -> None:
    events, _ = asyncio.run(anthropic_search_run())
    expected = [
        {"role": "user", "content": [{"type": "text", "text": "Find the tide tables and save them."}]},
        {"role": "assistant", "content": SEARCHED},
        {"role": "user", "content": ANSWERED},
        {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
        {"role": "user", "content": [{"type": "text", "text": "thanks"}]},
    ]
    steps = [
        {"do": "sendMessage", "args": {"text": "Find the tide tables and save them."}},
        {"do": "sendMessage", "args": {"text": "thanks"}},
    ]
    done = aisdk_body([]).decode()
    for version in (7, 5):  # v5 keeps no result metadata: the result block's kind comes from the tool's name
        body = [aisdk_body(events, version).decode(), done]
        answer = js.call("aisdk", {"body": body, "version": version, "steps": steps})
        assert answer["ok"], answer.get("error")
        sent = answer["result"]["requests"][1]["body"]
        (search,) = [p for p in sent["messages"][1]["parts"] if p.get("toolCallId") == USE["id"]]
        assert search["providerExecuted"] is True
        assert search["callProviderMetadata"] == {"anthropic": {"blockType": "server_tool_use"}}
        assert search["output"] == RESULT["content"]  # encrypted_content included
        run = aisdk.to_run_input(aisdk.parse_chat_request(sent))
        assert asyncio.run(anthropic_next_request(run)) == expected, version
    # AG-UI: HttpAgent keeps the events' metadata on the tool call and the tool message
    first = {"id": "u1", "role": "user", "content": "Find the tide tables and save them."}
    second = {"id": "u2", "role": "user", "content": "thanks"}
    answer = js.call(
        "agui",
        {
            "runs": [
                {"body": agui_body(events), "addMessages": [first]},
                {"body": agui_body([]), "addMessages": [second]},
            ],
            "messages": [],
            "state": {},
        },
    )
    assert answer["ok"], answer.get("error")
    sent = answer["result"]["runs"][1]["request"]["body"]
    (call,) = [c for m in sent["messages"] for c in m.get("toolCalls") or [] if c["id"] == USE["id"]]
    assert call["metadata"]["providerExecuted"] is True
    run = agui.to_run_input(agui.parse_run_agent_input(sent))
    assert asyncio.run(anthropic_next_request(run)) == expected


def test_anthropic_result_blocks_keep_their_caller() -> None:
    # anthropic-sdk-python's recorded search (stream-a-toolrefusal.sse): its result block names its caller
    body = provider_fixture("streamkit-tests/anthropic_server_tool_refusal.sse")
    lines = body.decode().splitlines()
    translator = AnthropicTranslator("p")
    for line in lines:
        if line.startswith("data:"):
            translator.feed(json.loads(line[5:]))
    translator.close()
    use, result = started_blocks(body)[:2]
    assert result["caller"] == {"type": "direct"}
    sent = to_anthropic_messages([Message(id="a1", role="assistant", parts=translator.parts)])
    query = {"query": "solar eclipse viewing safety news 2026"}
    assert sent[0]["content"][:2] == [{**use, "input": query}, result]


def test_anthropic_mcp_calls_and_failed_searches_go_back_as_they_came() -> None:
    mcp = {"anthropic": {"blockType": "mcp_tool_use", "serverName": "docs"}}
    failed = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    history = [
        Message(id="u1", role="user", parts=[TextPart(text="Look it up.")]),
        Message(
            id="a1",
            role="assistant",
            parts=[
                ToolCallPart(
                    id="mcptoolu_1", name="search_docs", input={"q": "x"}, provider_executed=True, provider_metadata=mcp
                ),
                ToolResultPart(id="mcptoolu_1", output=[{"type": "text", "text": "found x"}]),
                # the result's metadata lost (an older client): the error content is rebuilt from its code
                ToolCallPart(id="srvtoolu_2", name="web_search", input={"query": "x"}, provider_executed=True),
                ToolResultPart(id="srvtoolu_2", error="max_uses_exceeded"),
                # one another provider ran, and one never answered: left out
                ToolCallPart(
                    id="ws_3",
                    name="web_search",
                    provider_executed=True,
                    provider_metadata={"openai": {"itemId": "ws_3"}},
                ),
                ToolResultPart(id="ws_3", output={"status": "completed"}),
                ToolCallPart(id="srvtoolu_4", name="web_search", provider_executed=True),
                TextPart(text="Here is what I found."),
            ],
        ),
    ]
    assert to_anthropic_messages(history)[1] == {
        "role": "assistant",
        "content": [
            {
                "type": "mcp_tool_use",
                "id": "mcptoolu_1",
                "name": "search_docs",
                "input": {"q": "x"},
                "server_name": "docs",
            },
            {
                "type": "mcp_tool_result",
                "tool_use_id": "mcptoolu_1",
                "content": [{"type": "text", "text": "found x"}],
                "is_error": False,
            },
            {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": failed},
            {"type": "text", "text": "Here is what I found."},
        ],
    }


# --- OpenAI Responses --------------------------------------------------------------------------------


def test_responses_hosted_search_items_survive_the_browser_client(js: JsOracle) -> None:
    async def first() -> list[ChatEvent]:
        replay = Replay(Recording(bodies.responses_web_search()))
        return await collect(
            OpenAIResponsesAgent(sdk(replay), model="gpt-5-mini")(first_turn("When does the library open?"))
        )

    events = asyncio.run(first())
    steps = [
        {"do": "sendMessage", "args": {"text": "When does the library open?"}},
        {"do": "sendMessage", "args": {"text": "ok"}},
    ]
    answer = js.call("aisdk", {"body": [aisdk_body(events).decode(), aisdk_body([]).decode()], "steps": steps})
    assert answer["ok"], answer.get("error")
    run = aisdk.to_run_input(aisdk.parse_chat_request(answer["result"]["requests"][1]["body"]))

    async def second() -> list[dict[str, Any]]:
        replay = Replay(Recording(bodies.responses_answer()))
        await collect(OpenAIResponsesAgent(sdk(replay), model="gpt-5-mini")(run))
        items: list[dict[str, Any]] = replay.requests[0]["input"]
        return items

    items = asyncio.run(second())
    done = [
        e["item"] for e in bodies.body_events(bodies.responses_web_search()) if e["type"] == "response.output_item.done"
    ]
    searches = [item for item in done if item["type"] == "web_search_call"]
    assert len(searches) == 2
    # every search goes back as the item the API sent ({id, type, status, action}), in the order it came
    assert [i for i in items if i.get("type") == "web_search_call"] == searches
    kinds = [i.get("type") or i["role"] for i in items]
    assert kinds == ["user", *[i["type"] for i in done if i["type"] != "message"], "assistant", "user"]
    assert items[-2]["content"] == done[-1]["content"][0]["text"]


def test_responses_hosted_items_are_replayed_with_their_required_fields() -> None:
    def hosted(cid: str, name: str, input: Any, output: Any) -> list[Any]:
        meta = {"openai": {"itemId": cid, "itemType": f"{name}_call"}}
        return [
            ToolCallPart(id=cid, name=name, input=input, provider_executed=True, provider_metadata=meta),
            ToolResultPart(id=cid, name=name, output=output, provider_metadata=meta),
        ]

    parts = [
        *hosted("ci_1", "code_interpreter", {}, {"container_id": "cntr_1", "status": "completed"}),
        *hosted("mcp_1", "mcp", {}, {"name": "roll", "arguments": "{}", "server_label": "dice", "output": "4"}),
        *hosted("fs_1", "file_search", {}, {"queries": ["q"], "status": "completed", "results": []}),
        *hosted("cu_1", "computer", {"type": "click"}, {"status": "completed"}),  # answered by an output item
        ToolCallPart(id="ws_9", name="web_search", provider_executed=True),  # never answered
    ]
    run = RunInput(thread_id="t", run_id="r", messages=[Message(id="a1", role="assistant", parts=parts)])
    assert responses_input(run) == [
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "container_id": "cntr_1",
            "status": "completed",
            "code": None,
            "outputs": None,
        },
        {"type": "mcp_call", "id": "mcp_1", "name": "roll", "arguments": "{}", "server_label": "dice", "output": "4"},
        {"type": "file_search_call", "id": "fs_1", "queries": ["q"], "status": "completed", "results": []},
    ]


def test_snapshots_of_either_protocol_keep_the_provider_data() -> None:
    meta = {"anthropic": {"blockType": "server_tool_use"}}
    result_meta = {"anthropic": {"blockType": "web_search_tool_result"}}
    parts: list[Any] = [
        ToolCallPart(id=USE["id"], name="web_search", input={"query": "q"}, provider_executed=True,
                     provider_metadata=meta),
        ToolResultPart(id=USE["id"], name="web_search", output=RESULT["content"], provider_metadata=result_meta),
    ]  # fmt: skip
    history = [Message(id="a1", role="assistant", parts=parts)]
    ui = aisdk.to_ui_messages(history)
    body = {"id": "c", "trigger": "submit-message", "messages": ui}
    assert aisdk.to_run_input(aisdk.parse_chat_request(body)).messages == history
    body = {"threadId": "t", "runId": "r", "messages": agui.to_agui_messages(history), "tools": [], "context": []}
    back = agui.to_run_input(agui.parse_run_agent_input({**body, "state": {}, "forwardedProps": {}})).messages
    call, result = [p for m in back for p in m.parts]
    assert call == parts[0] and result.provider_metadata == result_meta
    assert json.loads(result.output) == RESULT["content"]  # AG-UI keeps a result as JSON text
