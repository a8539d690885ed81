"""The project's own provider bodies, written here in each provider's wire format (none copied from anywhere).

The sources' tests that must run in every clone use these (the real recordings live beside the project, see
:mod:`tests.support.fixtures`, and tests over them skip without it). Each body is what the API streams for a
small conversation, in the shapes the providers' recordings show:

- Chat Completions (``data:`` lines, ``[DONE]``): :func:`chat_tool_call` (one ``get_weather`` call, its
  argument JSON in pieces, ``finish_reason: "tool_calls"``, a usage chunk) and :func:`chat_text`;
- Responses (``event:`` + ``data:``): :func:`responses_reasoning_call` (a reasoning item with its summary and
  ``encrypted_content``, then a ``calculator`` function call), :func:`responses_answer` (a message), and
  :func:`responses_web_search` (two hosted ``web_search_call`` items, then a message citing a ``url_citation``);
- Anthropic Messages (``event:`` + ``data:``): :func:`anthropic_search_with_tool` (text, a ``tool_use``, a
  ``server_tool_use`` web search and its ``web_search_tool_result``, stopped with ``tool_use``).
"""

from __future__ import annotations

import json
from typing import Any

from tests.sources.support import sse

# --- Chat Completions ------------------------------------------------------------------------------

CHAT_MODEL = "gpt-4o-2024-11-20"
CHAT_CALL = "call_sk0weather0lisbon01"
CHAT_ARGS = '{"city":"New York City"}'
CHAT_TEXT = "It is 18 degrees and clear in New York City right now: a good evening for a walk."
CHAT_CALL_USAGE = (52, 17)
CHAT_TEXT_USAGE = (88, 21)


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **more: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return {
        "id": "chatcmpl-sk0own0body",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": CHAT_MODEL,
        "choices": choices,
        **more,
    }


def _chat_usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def chat_tool_call() -> bytes:
    """One ``get_weather`` call (:data:`CHAT_CALL`, arguments :data:`CHAT_ARGS` in five pieces)."""
    start = {"index": 0, "id": CHAT_CALL, "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    pieces = ['{"', "city", '":"', "New York", ' City"}']
    chunks = [_chunk({"role": "assistant", "content": None, "tool_calls": [start], "refusal": None})]
    chunks += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    chunks += [_chunk({}, "tool_calls"), _chunk(None, usage=_chat_usage(*CHAT_CALL_USAGE))]
    return sse(chunks, done=True)


def chat_text(text: str = CHAT_TEXT) -> bytes:
    """The answer ``text`` in word-sized deltas, ``finish_reason: "stop"``, then usage."""
    words = text.split(" ")
    chunks = [_chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [_chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words)]
    chunks += [_chunk({}, "stop"), _chunk(None, usage=_chat_usage(*CHAT_TEXT_USAGE))]
    return sse(chunks, done=True)


# --- Responses -------------------------------------------------------------------------------------

RESPONSES_MODEL = "gpt-5-mini-2025-08-07"
REASONING_ID = "rs_sk0own0reasoning0001"
ENCRYPTED = "gAAAAABsk0own0opaque0reasoning0state0only0the0API0reads=="
SUMMARY = "**Adding first**\n\nI'll add 12 and 7 with the calculator, then report the sum."
CALC_ITEM = "fc_sk0own0calc0001"
CALC_CALL = "call_sk0own0calc0001"
CALC_ARGS = '{"a":12,"b":7,"op":"add"}'
ANSWER = "12 + 7 is **19**."
SEARCH_ANSWER = "The library opens at 9:00 on weekdays."
SEARCH_URL = "https://example.org/library/hours"


def _response(rid: str, status: str, output: list[Any], usage: tuple[int, int] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": rid,
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": RESPONSES_MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if usage is not None:
        i, o = usage
        body["usage"] = {
            "input_tokens": i,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": o,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": i + o,
        }
    return body


_STREAMED = {"message": "content", "function_call": "arguments"}


def responses_body(rid: str, items: list[tuple[dict[str, Any], list[dict[str, Any]]]], usage: tuple[int, int]) -> bytes:
    """A Responses stream: ``response.created``, each output item (added, its own events, done), then
    ``response.completed`` with every item and ``usage``; ``sequence_number`` and ``output_index`` filled in."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": _response(rid, "in_progress", [])}]
    done: list[dict[str, Any]] = []
    for index, (item, inner) in enumerate(items):
        added = {**item, "status": "in_progress"} if "status" in item else item
        if item["type"] in _STREAMED:  # what the item's own events stream is not on the item yet
            added = {**added, _STREAMED[item["type"]]: [] if item["type"] == "message" else ""}
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        events += [{**e, "output_index": index} for e in inner]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        done.append(item)
    events.append({"type": "response.completed", "response": _response(rid, "completed", done, usage)})
    return sse([{**e, "sequence_number": n} for n, e in enumerate(events)], named=True)


def message_item(mid: str, text: str, annotations: list[Any] | None = None) -> tuple[dict[str, Any], list[Any]]:
    """An assistant message item with its text deltas (and ``annotations`` on the done text)."""
    part = {"type": "output_text", "annotations": annotations or [], "logprobs": [], "text": text}
    item = {"id": mid, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
    words = text.split(" ")
    where = {"item_id": mid, "content_index": 0}
    inner: list[dict[str, Any]] = [{"type": "response.content_part.added", **where, "part": {**part, "text": ""}}]
    inner += [
        {"type": "response.output_text.delta", **where, "delta": w if i == 0 else " " + w, "logprobs": []}
        for i, w in enumerate(words)
    ]
    for n, annotation in enumerate(annotations or ()):
        inner.append(
            {"type": "response.output_text.annotation.added", **where, "annotation_index": n, "annotation": annotation}
        )
    inner.append({"type": "response.output_text.done", **where, "text": text, "logprobs": []})
    inner.append({"type": "response.content_part.done", **where, "part": part})
    return item, inner


def responses_reasoning_call() -> bytes:
    """Reasoning (:data:`SUMMARY`, :data:`ENCRYPTED`), then the ``calculator`` call :data:`CALC_CALL`."""
    summary = [{"type": "summary_text", "text": SUMMARY}]
    reasoning = {"id": REASONING_ID, "type": "reasoning", "encrypted_content": ENCRYPTED, "summary": summary}
    where = {"item_id": REASONING_ID, "summary_index": 0}
    thinking = [
        {"type": "response.reasoning_summary_part.added", **where, "part": {"type": "summary_text", "text": ""}},
        *[
            {"type": "response.reasoning_summary_text.delta", **where, "delta": w if i == 0 else " " + w}
            for i, w in enumerate(SUMMARY.split(" "))
        ],
        {"type": "response.reasoning_summary_text.done", **where, "text": SUMMARY},
        {"type": "response.reasoning_summary_part.done", **where, "part": summary[0]},
    ]
    call = {
        "id": CALC_ITEM,
        "type": "function_call",
        "status": "completed",
        "arguments": CALC_ARGS,
        "call_id": CALC_CALL,
        "name": "calculator",
    }
    args = [{"type": "response.function_call_arguments.delta", "item_id": CALC_ITEM, "delta": p}
            for p in ('{"a":12,', '"b":7,', '"op":"add"}')]  # fmt: skip
    args.append({"type": "response.function_call_arguments.done", "item_id": CALC_ITEM, "arguments": CALC_ARGS})
    return responses_body("resp_sk0own0loop1", [(reasoning, thinking), (call, args)], (120, 40))


def responses_answer(text: str = ANSWER) -> bytes:
    """One assistant message saying ``text``."""
    return responses_body("resp_sk0own0loop2", [message_item("msg_sk0own0answer", text)], (180, 12))


def web_search_item(n: int, query: str) -> tuple[dict[str, Any], list[Any]]:
    """A hosted ``web_search_call`` item (its progress events carry nothing the source reads)."""
    wid = f"ws_sk0own0search{n}"
    item = {"id": wid, "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": query}}
    inner = [
        {"type": f"response.web_search_call.{s}", "item_id": wid} for s in ("in_progress", "searching", "completed")
    ]
    return item, inner


def responses_web_search() -> bytes:
    """Two hosted searches, then :data:`SEARCH_ANSWER` citing :data:`SEARCH_URL`."""
    cite = {
        "type": "url_citation",
        "start_index": 0,
        "end_index": len(SEARCH_ANSWER),
        "title": "Opening hours",
        "url": SEARCH_URL,
    }
    items = [
        web_search_item(1, "library opening hours"),
        web_search_item(2, "library weekday hours"),
        message_item("msg_sk0own0search", SEARCH_ANSWER, [cite]),
    ]
    return responses_body("resp_sk0own0search", items, (2400, 90))


def body_events(body: bytes) -> list[dict[str, Any]]:
    """The JSON events of an SSE body (its ``data:`` lines, ``[DONE]`` left out)."""
    lines = body.decode().splitlines()
    return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip() != "[DONE]"]


# --- Anthropic Messages ----------------------------------------------------------------------------

SEARCH_INTRO = "I'll look up the tides and save them."
SEARCH_USE = "srvtoolu_sk0own0search01"
SAVE_USE = "toolu_sk0own0save01"
SEARCH_RESULTS = [
    {
        "type": "web_search_result",
        "title": "Tide tables for the week",
        "url": "https://example.org/tides",
        "encrypted_content": "EsK0own0opaque0result0the0API0reads",
        "page_age": "2 days ago",
    }
]


def anthropic_search_with_tool() -> bytes:
    """Text, a ``save_results`` ``tool_use``, a ``server_tool_use`` web search and its result, ``tool_use``."""
    usage = {"input_tokens": 95, "output_tokens": 2, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {
        "id": "msg_sk0own0search",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }

    def block(index: int, content: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
        events = [{"type": "content_block_start", "index": index, "content_block": content}]
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        return [*events, {"type": "content_block_stop", "index": index}]

    def json_delta(text: str) -> dict[str, Any]:
        return {"type": "input_json_delta", "partial_json": text}

    events = [
        {"type": "message_start", "message": message},
        *block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": SEARCH_INTRO}),
        *block(1, {"type": "tool_use", "id": SAVE_USE, "name": "save_results", "input": {}},
               json_delta(""), json_delta('{"filename": '), json_delta('"tides.txt"}')),
        *block(2, {"type": "server_tool_use", "id": SEARCH_USE, "name": "web_search", "input": {}},
               json_delta('{"query": "tide tables"}')),
        *block(3, {"type": "web_search_tool_result", "tool_use_id": SEARCH_USE, "content": SEARCH_RESULTS}),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 71}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return sse(events, named=True)
