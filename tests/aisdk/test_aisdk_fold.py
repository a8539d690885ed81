"""fold / UIMessageFolder: the Python fold builds the message the real client builds, chunk for chunk,
including chunk types and client failures the mapper never produces."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamkit.aisdk import UIMessageFolder, afold, encode, fold, parse_sse
from streamkit.aisdk.partial_json import parse_partial_json
from streamkit.events import ChatEvent, RunStarted, TextDelta, TextEnd, TextStart
from streamkit.stringify import dumps
from tests.aisdk.strategies import FULL_RUN, json_values
from tests.support.oracle import JsOracle
from tests.support.streams import collect_bytes


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def client(js: JsOracle, chunks: list[dict[str, Any]], **req: Any) -> dict[str, Any]:
    answer = js.call("aisdk", {"body": sse(chunks).decode(), **req})
    assert answer["ok"], answer.get("error")
    result: dict[str, Any] = answer["result"]
    return result


def folded(chunks: list[dict[str, Any]], message: dict[str, Any] | None = None) -> UIMessageFolder:
    folder = UIMessageFolder(message)
    for chunk in chunks:
        folder.feed(chunk)
    return folder


START = {"type": "start", "messageId": "m1"}

STREAMS: dict[str, list[dict[str, Any]]] = {
    "v7-only chunks": [
        START,
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "cited"},
        {
            "type": "text-end",
            "id": "t",
            "citations": [
                {
                    "source": {"type": "source", "sourceType": "url", "id": "s", "url": "https://x.example"},
                    "startIndex": 0,
                    "endIndex": 5,
                    "citedText": "cited",
                }
            ],
        },
        {"type": "reasoning-file", "mediaType": "image/png", "url": "data:image/png;base64,AA"},
        {"type": "custom", "kind": "openai.compaction", "providerMetadata": {"openai": {"a": 1}}},
        {"type": "steering-message", "id": "st", "parts": [{"type": "text", "text": "also this"}]},
        {"type": "finish-step"},
        {"type": "start-step"},
        {"type": "text-start", "id": "gone"},
        {"type": "text-delta", "id": "gone", "delta": "discarded"},
        {"type": "reset-step"},
        {"type": "text-start", "id": "kept"},
        {"type": "text-delta", "id": "kept", "delta": "retried"},
        {"type": "text-end", "id": "kept"},
        {"type": "finish", "finishReason": "stop"},
    ],
    "tool options": [
        START,
        {
            "type": "tool-input-start",
            "toolCallId": "c",
            "toolName": "code",
            "inputEncoding": "text",
            "toolMetadata": {"k": 1},
            "title": "Code",
        },
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "print(1"},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": ")"},
        {"type": "tool-input-start", "toolCallId": "j", "toolName": "json", "dynamic": True},
        {"type": "tool-input-delta", "toolCallId": "j", "inputTextDelta": '{"a": [1, {"b": "x'},
        {
            "type": "tool-input-available",
            "toolCallId": "c",
            "toolName": "code",
            "input": "print(1)",
            "providerMetadata": {"p": {"call": 1}},
        },
        {
            "type": "tool-approval-request",
            "approvalId": "ap",
            "toolCallId": "c",
            "approvalDescriptor": {"d": 1},
            "inputSchemaInput": None,
            "reason": "runs code",
            "isAutomatic": True,
            "signature": "sig",
        },
        {"type": "tool-approval-response", "approvalId": "ap", "approved": True, "providerExecuted": True},
        {"type": "tool-output-available", "toolCallId": "c", "output": "1", "providerMetadata": {"p": {"r": 2}}},
    ],
    "metadata merges": [
        {"type": "start", "messageId": "m1", "messageMetadata": {"a": {"x": 1}, "b": [1, 2]}},
        {"type": "message-metadata", "messageMetadata": {"a": {"y": 2}, "b": [3], "prototype": {"z": 1}}},
        {"type": "message-metadata", "messageMetadata": None},
        {"type": "message-metadata", "messageMetadata": "str"},
        {"type": "finish", "messageMetadata": {"c": None}},
    ],
    "data parts": [
        START,
        {"type": "data-a", "id": "1", "data": 1},
        {"type": "data-a", "data": 2},
        {"type": "data-b", "id": "1", "data": 3},
        {"type": "data-a", "id": "1", "data": 4},
        {"type": "data-a", "id": "2", "data": 5, "transient": True},
        {"type": "data-a", "id": "3", "data": 6, "transient": False, "extra": "kept"},
    ],
    "delta for a missing text part": [
        START,
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "ok"},
        {"type": "text-delta", "id": "nope", "delta": "x"},
        {"type": "text-delta", "id": "t", "delta": " ignored after the failure"},
    ],
    "output for an unknown tool call": [START, {"type": "tool-output-available", "toolCallId": "x", "output": 1}],
    "unknown approval": [START, {"type": "tool-approval-response", "approvalId": "x", "approved": True}],
    "missing tool input": [START, {"type": "tool-input-delta", "toolCallId": "x", "inputTextDelta": "{"}],
    "error chunk": [START, {"type": "text-start", "id": "t"}, {"type": "error", "errorText": "bad"}],
    "refused key": [START, {"type": "data-x", "data": {"__proto__": {"polluted": True}}}],
    "refused constructor": [START, {"type": "data-x", "data": [{"constructor": {"prototype": {}}}]}],
    "trailing empty step": [START, {"type": "text-start", "id": "t"}, {"type": "start-step"}, {"type": "finish"}],
}


@pytest.mark.parametrize("name", list(STREAMS))
@pytest.mark.parametrize("mode", ["chat", "read"])
def test_fold_matches_the_client(js: JsOracle, name: str, mode: str) -> None:
    chunks = STREAMS[name]
    result = client(js, chunks, client=mode)
    folder = folded(chunks)
    assert result["message"] == orjson.loads(dumps(folder.message))
    assert (result["error"] or {}).get("message") == folder.error
    if mode == "chat":
        assert result["finishReason"] == folder.finish_reason
        non_transient_and_transient = [c for c in chunks if c["type"].startswith("data-")]
        if folder.error is None:
            assert result["data"] == non_transient_and_transient == folder.data


def test_fold_continues_an_assistant_message(js: JsOracle) -> None:
    earlier = {
        "id": "m1",
        "role": "assistant",
        "parts": [{"type": "tool-w", "toolCallId": "c", "state": "input-available", "input": {"q": 1}}],
    }
    chunks = [
        {"type": "start", "messageId": "m1"},
        {"type": "tool-output-available", "toolCallId": "c", "output": {"r": 2}},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "done"},
        {"type": "text-end", "id": "t"},
    ]
    result = client(js, chunks, client="read", messages=[earlier])
    folder = folded(chunks, earlier)
    assert result["message"] == folder.message
    assert folder.message["parts"][0]["state"] == "output-available"
    assert earlier["parts"][0]["state"] == "input-available"  # the given message is not changed


def test_fold_takes_events_chunks_or_a_body() -> None:
    body = collect_bytes(encode(FULL_RUN))
    by_body = fold(body)
    assert fold(FULL_RUN) == by_body
    assert fold(parse_sse(body)) == by_body
    assert fold(body.decode()) == by_body

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 7):
            yield body[i : i + 7]

    async def events() -> AsyncIterator[ChatEvent]:
        for event in FULL_RUN:
            yield event

    assert asyncio.run(afold(chunks())) == by_body
    assert asyncio.run(afold(events())) == by_body
    simple = fold([RunStarted(), TextStart(id="t"), TextDelta(id="t", delta="hi"), TextEnd(id="t")], message_id="x")
    assert simple == {"id": "x", "role": "assistant", "parts": [{"type": "text", "text": "hi", "state": "done"}]}
    with pytest.raises(TypeError):
        fold([{"type": "start"}, RunStarted()])  # type: ignore[list-item]


def test_parse_sse_tolerates_what_the_client_tolerates() -> None:
    body = (
        b': comment\n\ndata:{"type":"start"}\r\n\r\nevent: x\ndata: {"type":\ndata: "finish"}\n\n'
        b'data: [DONE]\n\ndata: {"type":"abort"}'
    )
    assert parse_sse(body) == [{"type": "start"}, {"type": "finish"}]


def _numbers(value: Any) -> Any:
    """``value`` with every number a float (JavaScript and Python print large doubles differently)."""
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def _prefixes(text: str) -> list[str]:
    return [text[:i] for i in range(len(text) + 1)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values, garbage=st.sampled_from(["", " ", "x", "]", "}", ",", '"', "\\", "tru", "-"]))
def test_partial_json_is_parsed_as_the_client_parses_it(js: JsOracle, value: Any, garbage: str) -> None:
    text = orjson.dumps(value).decode()
    texts = [*_prefixes(text), text + garbage, garbage + text]
    answer = js.call("aisdk", {"partial_json": texts})
    assert answer["ok"], answer.get("error")
    for text_, expected in zip(texts, answer["result"], strict=True):
        got, how = parse_partial_json(text_)
        assert how == expected["state"], text_
        if expected["defined"]:
            assert _numbers(got) == _numbers(expected["value"]), text_
