"""Benchmark: the provider sources' translation cost, against map + encode and the orjson floor.

W's content (its reasoning deltas, tool calls with their argument pieces, its answer text; one model call,
so no tool results) is written as each provider streams it, as plain dicts: OpenAI Chat Completions chunks,
OpenAI Responses events, and, when those sources are present, Anthropic Messages events and Ollama
``/api/chat`` lines. For each source and each protocol, in the same run:

* **floor**: the frames ``encode`` writes for the source's events, as dicts re-serialized with orjson
  (the least any producer of those bytes can do);
* **map + encode**: the source's ChatEvents, built beforehand, through the protocol's ``encode``;
* **agent + map + encode**: the run a source replaces: a hand-written agent core that reads the same
  provider stream and, for each chunk, constructs and yields the ChatEvents the source makes of it (a
  translation that costs nothing, so the difference is the source's translation alone);
* **source + map + encode**: the provider's chunks through the source and ``encode``: what a route serving
  a provider stream does;
* **source alone**: the chunks through the source only (ChatEvents out, no bytes).

Reported: µs per provider chunk, the translation cost per chunk as a ratio of the floor's cost per frame,
and the ratios of source + map + encode to map + encode with pre-built events and to agent + map + encode.
The target: a run through the source costs at most 1.5x the same run's map + encode, where the run's events
are constructed as any agent core constructs them, from the provider stream any core reads (constructing the
validated events costs several times their encoding, for a source and a hand-written core alike, so pre-built
events are reported, not targeted; reading the provider stream is not translation).
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson

from .measure import Case, Target, run_cases, table
from .workload import Workload, workload

__all__ = ["run"]

Chunks = list[dict[str, Any]]


def openai_chat_chunks(w: Workload) -> Chunks:
    """W as Chat Completions chunks (with ``include_usage``)."""

    def chunk(delta: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        return {"id": "chatcmpl-w", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": choices}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": d}) for d in w.reasoning]
    out += [chunk({"content": d}) for d in w.text]
    for n, call in enumerate(w.tools):
        head = {"index": n, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(chunk({"tool_calls": [head]}))
        out += [chunk({"tool_calls": [{"index": n, "function": {"arguments": d}}]}) for d in call.arg_deltas]
    out.append(chunk({}, "tool_calls"))
    last = chunk(None)
    last["usage"] = {"prompt_tokens": 100, "completion_tokens": 900, "total_tokens": 1000}
    out.append(last)
    return out


def openai_responses_events(w: Workload) -> Chunks:
    """W as Responses API streaming events."""
    out: Chunks = [{"type": "response.created", "response": {"id": "resp_w", "model": "m"}}]
    out.append({"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_w", "type": "reasoning"}})
    out += [
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_w", "summary_index": 0, "delta": d}
        for d in w.reasoning
    ]
    reasoning_done = {"id": "rs_w", "type": "reasoning", "encrypted_content": "gAAAA"}
    out.append({"type": "response.output_item.done", "output_index": 0, "item": reasoning_done})
    out.append({"type": "response.output_item.added", "output_index": 1, "item": {"id": "msg_w", "type": "message"}})
    out += [{"type": "response.output_text.delta", "item_id": "msg_w", "delta": d} for d in w.text]
    out.append({"type": "response.output_item.done", "output_index": 1, "item": {"id": "msg_w", "type": "message"}})
    for n, call in enumerate(w.tools):
        item = {"id": f"fc_{n}", "type": "function_call", "call_id": call.id, "name": call.name, "arguments": ""}
        out.append({"type": "response.output_item.added", "output_index": 2 + n, "item": item})
        out += [
            {"type": "response.function_call_arguments.delta", "item_id": f"fc_{n}", "delta": d}
            for d in call.arg_deltas
        ]
        done = {**item, "arguments": "".join(call.arg_deltas)}
        out.append({"type": "response.output_item.done", "output_index": 2 + n, "item": done})
    usage = {"input_tokens": 100, "output_tokens": 900, "total_tokens": 1000}
    out.append({"type": "response.completed", "response": {"id": "resp_w", "model": "m", "usage": usage}})
    return out


def anthropic_events(w: Workload) -> Chunks:
    """W as Anthropic Messages streaming events."""
    message = {"id": "msg_w", "type": "message", "role": "assistant", "model": "m", "content": []}
    message["usage"] = {"input_tokens": 100, "output_tokens": 1}
    out: Chunks = [{"type": "message_start", "message": message}]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        (
            {"type": "thinking", "thinking": "", "signature": ""},
            [{"type": "thinking_delta", "thinking": d} for d in w.reasoning]
            + [{"type": "signature_delta", "signature": "sig"}],
        ),
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": d} for d in w.text]),
    ]
    for call in w.tools:
        start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        blocks.append((start, [{"type": "input_json_delta", "partial_json": d} for d in call.arg_deltas]))
    for index, (start, deltas) in enumerate(blocks):
        out.append({"type": "content_block_start", "index": index, "content_block": start})
        out += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        out.append({"type": "content_block_stop", "index": index})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 900},
        }
    )
    out.append({"type": "message_stop"})
    return out


def ollama_lines(w: Workload) -> Chunks:
    """W as Ollama ``/api/chat`` NDJSON lines (Ollama sends each tool call whole)."""

    def line(message: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"model": "m", "created_at": "2025-01-01T00:00:00Z", "message": {"role": "assistant", **message}, **more}

    out = [line({"content": "", "thinking": d}, done=False) for d in w.reasoning]
    out += [line({"content": d}, done=False) for d in w.text]
    calls = [{"function": {"name": c.name, "arguments": c.input}} for c in w.tools]
    out.append(line({"content": "", "tool_calls": calls}, done=False))
    out.append(line({"content": ""}, done=True, done_reason="stop", prompt_eval_count=100, eval_count=900))
    return out


SOURCES: dict[str, tuple[str, str, Callable[[Workload], Chunks]]] = {
    "OpenAI Chat Completions": ("streamkit.sources.openai", "chat_events", openai_chat_chunks),
    "OpenAI Responses": ("streamkit.sources.openai", "responses_events", openai_responses_events),
    "Anthropic Messages": ("streamkit.sources.anthropic", "message_events", anthropic_events),
    "Ollama /api/chat": ("streamkit.sources.ollama", "chat_events", ollama_lines),
}


async def _aiter(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


Recipe = list[tuple[type[Any], dict[str, Any]]]


def _recipe(events: list[Any]) -> Recipe:
    return [(type(e), {k: e.__dict__[k] for k in e.model_fields_set}) for e in events]


async def _grouped(translate: Any, chunks: Chunks) -> tuple[Recipe, list[Recipe], Recipe]:
    """The source's events grouped by the chunk that produced them: those before the first chunk is read,
    one group per chunk, and those after the stream ends. A translator reads the next chunk only once the
    events of the one before are all out, so the events between two reads belong to the first."""
    seen: list[Any] = []
    cuts: list[int] = []

    async def counted() -> AsyncIterator[Any]:
        for chunk in chunks:
            cuts.append(len(seen))
            yield chunk
        cuts.append(len(seen))

    async for event in translate(counted(), prefix="w"):
        seen.append(event)
    head = _recipe(seen[: cuts[0]])
    groups = [_recipe(seen[a:b]) for a, b in itertools.pairwise(cuts)]
    return head, groups, _recipe(seen[cuts[-1] :])


async def _drain(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in chunks])


def _frames(body: bytes) -> list[Any]:
    out = []
    for block in body.split(b"\n\n"):
        if block.startswith(b"data: "):
            payload = block[6:]
            out.append(payload if payload == b"[DONE]" else orjson.loads(payload))
    return out


def _floor(frames: list[Any]) -> Callable[[], bytes]:
    dumps = orjson.dumps

    def run() -> bytes:
        out = []
        for frame in frames:
            out.append(b"data: " + (frame if isinstance(frame, bytes) else dumps(frame)) + b"\n\n")
        return b"".join(out)

    return run


def run(repeat: int = 21, progress: bool = True) -> tuple[str, list[Target], list[str]]:
    """Run the benchmark: the report's text, its targets, and what could not be measured."""
    import asyncio

    from streamkit import agui, aisdk

    w = workload()
    lines: list[str] = []
    targets: list[Target] = []
    problems: list[str] = []
    rows: list[list[str]] = []
    for title, (module_name, function, render) in SOURCES.items():
        try:
            translate = getattr(importlib.import_module(module_name), function)
        except (ImportError, AttributeError):
            problems.append(f"{module_name}.{function} is not available: {title} skipped")
            continue
        chunks = render(w)

        async def collect(translate: Any = translate, chunks: Chunks = chunks) -> list[Any]:
            return [e async for e in translate(_aiter(chunks), prefix="w")]

        events = asyncio.run(collect())
        for protocol, module in (("AI SDK", aisdk), ("AG-UI", agui)):
            options: dict[str, Any] = {"thread_id": "t", "run_id": "r"} if module is agui else {"message_id": "m"}
            encode = module.encode

            def mapped(encode: Any = encode, events: list[Any] = events, options: dict[str, Any] = options) -> Any:
                return _drain(encode(events, **options))

            def sourced(
                encode: Any = encode,
                translate: Any = translate,
                chunks: Chunks = chunks,
                options: dict[str, Any] = options,
            ) -> Any:
                return _drain(encode(translate(_aiter(chunks), prefix="w"), **options))

            async def alone(translate: Any = translate, chunks: Chunks = chunks) -> bytes:
                async for _ in translate(_aiter(chunks), prefix="w"):
                    pass
                return b""

            head, groups, tail = asyncio.run(_grouped(translate, chunks))

            async def agent_events(
                head: Recipe = head, groups: list[Recipe] = groups, tail: Recipe = tail, chunks: Chunks = chunks
            ) -> AsyncIterator[Any]:
                # A hand-written core: read the provider stream, yield each chunk's events.
                for cls, fields in head:
                    yield cls(**fields)
                step = iter(groups)
                async for _ in _aiter(chunks):
                    for cls, fields in next(step):
                        yield cls(**fields)
                for cls, fields in tail:
                    yield cls(**fields)

            def agent(encode: Any = encode, options: dict[str, Any] = options) -> Any:
                return _drain(encode(agent_events(), **options))

            body = asyncio.run(mapped())
            cases = {
                "floor": Case("floor", _floor(_frames(body))),
                "map": Case("map + encode", mapped, is_async=True),
                "agent": Case("agent + map + encode", agent, is_async=True),
                "source": Case("source + map + encode", sourced, is_async=True),
                "alone": Case("source alone", alone, is_async=True),
            }
            run_cases(list(cases.values()), repeat=repeat, progress=progress)
            if cases["source"].output != body or cases["agent"].output != body:
                problems.append(f"{title} / {protocol}: source + map + encode wrote other bytes than map + encode")
            n = len(chunks)
            frames = cases["floor"].frames
            floor_frame = cases["floor"].median / frames
            ratio = cases["source"].median / cases["agent"].median
            prebuilt = cases["source"].median / cases["map"].median
            per_chunk = cases["alone"].median / n
            rows.append(
                [
                    title,
                    protocol,
                    str(n),
                    str(frames),
                    f"{cases['map'].median / n * 1e6:.2f}",
                    f"{cases['agent'].median / n * 1e6:.2f}",
                    f"{cases['source'].median / n * 1e6:.2f}",
                    f"{per_chunk * 1e6:.2f}",
                    f"{per_chunk / floor_frame:.2f}x",
                    f"{prebuilt:.2f}x",
                    f"{ratio:.2f}x",
                ]
            )
            targets.append(
                Target(
                    f"{title} -> {protocol}: source + map + encode vs agent + map + encode",
                    f"{ratio:.2f}x",
                    "<= 1.50x",
                    ratio <= 1.5,
                )
            )
    lines.append(f"### Sources: W as each provider streams it (median of {repeat} runs)\n")
    lines.append(
        table(
            [
                "source",
                "protocol",
                "chunks",
                "frames",
                "map + encode µs/chunk",
                "agent + map + encode µs/chunk",
                "source + map + encode µs/chunk",
                "source alone µs/chunk",
                "source alone vs floor frame",
                "vs map + encode",
                "vs agent + map + encode",
            ],
            rows,
        )
    )
    lines.append("")
    return "\n".join(lines), targets, problems


if __name__ == "__main__":  # pragma: no cover
    text, found, missing = run()
    print(text)
    print("\n".join(t.line() for t in found))
    print("\n".join(missing))
