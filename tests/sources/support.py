"""Helpers every provider source's tests share (OpenAI here; Anthropic and Ollama reuse them).

- **Serving a provider offline**: the library's own :class:`streamkit.testing.Replay` answers each request
  with the next :class:`streamkit.testing.Recording` (a streaming body, an error status with a JSON body, or a
  body cut off mid-stream); give the real SDK ``http_client=replay.client()`` (``replay.httpx2_client()`` for
  an SDK built on ``httpx2``). :func:`sse` / :func:`ndjson` build bodies in the SSE / NDJSON wire formats (the
  project's own bodies are in :mod:`tests.sources.bodies`; real recordings are read with
  :mod:`tests.support.fixtures`).
- **Checking a run**: :func:`collect` runs a source's stream through the strict checker (a source's own
  stream must need no repair) and returns the events; :func:`summarize` collapses it to one entry per block.
- **What a stream meant**: a provider-neutral :class:`Meant` (the assistant's blocks in order: reasoning
  and text, tool calls with parsed input; the finish reason; the error) built by a provider's generator
  from the plan it rendered; :func:`meant_of_events` reads the same from ChatEvents.
- **The real clients**: :func:`through_aisdk` and :func:`through_agui` encode ChatEvents with each
  protocol's encoder, run the bytes through the real JS client (the ``js`` fixture) and read the client's
  final assistant message back as a :class:`Meant`: equal to what the provider stream meant.
- **Generated provider streams**: :func:`plans` draws a :class:`Plan` (reasoning, text, up to three tool
  calls with JSON inputs, a finish) and :func:`split_anywhere` cuts a string into pieces at arbitrary
  points (argument JSON is split anywhere); a provider's test renders plans into its own chunks, with
  parallel calls' argument pieces interleaved by :func:`interleave`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from starlette.applications import Starlette

from streamkit import agui, aisdk
from streamkit.events import ChatEvent, SequenceChecker
from streamkit.serve import StreamOptions
from tests.support.oracle import JsOracle

# --- serving a provider offline --------------------------------------------------------------------


def sse(events: Iterable[Any], *, named: bool = False, done: bool = False) -> bytes:
    """An SSE body with one ``data:`` line per JSON event (``named``: an ``event:`` line with its type first,
    as the Responses and Messages APIs send; ``done``: a final ``data: [DONE]``, as Chat Completions)."""
    out = []
    for event in events:
        data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {data}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def ndjson(lines: Iterable[Any]) -> bytes:
    """An NDJSON body (Ollama's native stream): one JSON object per line."""
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines).encode()


# --- checking a run --------------------------------------------------------------------------------


async def collect(stream: Any, known_tool_calls: Iterable[str] = ()) -> list[ChatEvent]:
    """Every event of ``stream``, each checked by a strict checker (no repair needed); the run is finished.
    ``known_tool_calls``: ids of calls made in earlier requests (whose results this run may report)."""
    checker = SequenceChecker(strict=True, known_tool_calls=known_tool_calls)
    events: list[ChatEvent] = []
    async for event in stream:
        checker.feed(event)
        events.append(event)
    checker.close()
    assert checker.finished
    return events


def summarize(events: Sequence[ChatEvent]) -> list[tuple[Any, ...]]:
    """One entry per block, in order: what the run said (steps, text, reasoning, calls, results, the end)."""
    out: list[tuple[Any, ...]] = []
    buffers: dict[str, list[str]] = {}
    for e in events:
        d = e.model_dump()
        kind = d["type"]
        if kind in ("text-start", "reasoning-start", "tool-call-start"):
            buffers[d["id"]] = []
        elif kind in ("text-delta", "reasoning-delta", "tool-call-args-delta"):
            buffers[d["id"]].append(d["delta"])
        elif kind == "text-end":
            out.append(("text", "".join(buffers.pop(d["id"]))))
        elif kind == "reasoning-end":
            out.append(("reasoning", "".join(buffers.pop(d["id"]))))
        elif kind == "tool-call-end":
            entry: tuple[Any, ...] = ("tool-call", d["id"], "".join(buffers.pop(d["id"], [])), d["input"])
            out.append(entry + ((d["error"],) if d["error"] is not None else ()))
        elif kind == "tool-result":
            if d["denied"]:
                out.append(("tool-denied", d["id"]))
            elif d["error"] is not None:
                out.append(("tool-error", d["id"], d["error"]))
            else:
                out.append(("tool-result", d["id"], d["output"]))
        elif kind == "step-started":
            out.append(("step", d["name"]))
        elif kind == "step-finished":
            out.append(("/step", d["name"]))
        elif kind == "run-started":
            out.append(("run-started",))
        elif kind == "run-finished":
            usage = {k: v for k, v in (d["usage"] or {}).items() if v is not None} or None
            out.append(("run-finished", d["finish_reason"], usage))
        elif kind == "run-error":
            out.append(("run-error", d["code"], d["message"]))
        elif kind == "source":
            out.append(("source", d["url"] or d["title"]))
        elif kind == "tool-approval-request":
            out.append(("approval", d["tool_call_id"]))
    return out


# --- what a stream meant ---------------------------------------------------------------------------


@dataclass
class Meant:
    """The assistant turn a stream means: ``blocks`` in order, ``("reasoning", text)``, ``("text", text)``
    and ``("tool", id, name, input)``; adjacent text (or reasoning) blocks count as one."""

    blocks: list[tuple[Any, ...]] = field(default_factory=list)
    finish: str | None = None
    error: str | None = None

    def add(self, *block: Any) -> None:
        if not block[1] and block[0] in ("text", "reasoning"):
            return
        if self.blocks and block[0] in ("text", "reasoning") and self.blocks[-1][0] == block[0]:
            self.blocks[-1] = (block[0], self.blocks[-1][1] + block[1])
        else:
            self.blocks.append(block)

    def kinds(self, *kinds: str) -> list[tuple[Any, ...]]:
        """The blocks of these kinds, in order (adjacent text re-joined)."""
        out = Meant()
        for block in self.blocks:
            if block[0] in kinds:
                out.add(*block)
        return out.blocks


def meant_of_events(events: Sequence[ChatEvent]) -> Meant:
    """What ChatEvents say, as a :class:`Meant` (text and reasoning joined per block, calls' inputs)."""
    meant = Meant()
    buffers: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for entry in summarize(events):
        if entry[0] in ("text", "reasoning"):
            meant.add(entry[0], entry[1])
        elif entry[0] == "tool-call":
            meant.add("tool", entry[1], None, entry[3])
        elif entry[0] == "run-finished":
            meant.finish = entry[1]
        elif entry[0] == "run-error":
            meant.error = entry[2]
    for e in events:
        if e.type == "tool-call-start":
            names[e.id] = e.name
    meant.blocks = [(b[0], b[1], names.get(b[1]), b[3]) if b[0] == "tool" else b for b in meant.blocks]
    del buffers
    return meant


# --- the real clients ------------------------------------------------------------------------------


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def aisdk_body(events: Sequence[ChatEvent], version: int = 7) -> bytes:
    """The UI Message Stream body ``aisdk.encode`` writes for ``events``."""

    async def go() -> bytes:
        return b"".join([chunk async for chunk in aisdk.encode(list(events), sdk_version=version)])

    result: bytes = _run(go())
    return result


def agui_body(events: Sequence[ChatEvent]) -> str:
    """The AG-UI body ``agui.encode`` writes for ``events`` (thread ``thread-1``, run ``run-1``)."""

    async def go() -> bytes:
        return b"".join([chunk async for chunk in agui.encode(list(events), thread_id="thread-1", run_id="run-1")])

    result: bytes = _run(go())
    return result.decode()


def meant_of_ui_message(message: dict[str, Any]) -> Meant:
    """An AI SDK ``UIMessage`` (the client's) as a :class:`Meant`."""
    meant = Meant()
    for part in message.get("parts", []):
        kind = part.get("type", "")
        if kind == "text":
            meant.add("text", part["text"])
        elif kind == "reasoning":
            meant.add("reasoning", part["text"])
        elif kind.startswith("tool-") or kind == "dynamic-tool":
            name = part.get("toolName") or kind[len("tool-") :]
            meant.add("tool", part["toolCallId"], name, part.get("input"))
    return meant


def through_aisdk(js: JsOracle, events: Sequence[ChatEvent], version: int = 7) -> tuple[Meant, dict[str, Any]]:
    """``events`` through ``aisdk.encode`` and the real ``ai`` Chat: what its final message means, and the
    client's whole answer (``message``, ``finishReason``, ``error``, ``requests``...)."""
    answer = js.call("aisdk", {"body": aisdk_body(events, version).decode(), "version": version})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == [], answer["warnings"]
    result: dict[str, Any] = answer["result"]
    meant = meant_of_ui_message(result["message"] or {})
    meant.finish = result.get("finishReason")
    meant.error = (result.get("error") or {}).get("message")
    return meant, result


def meant_of_agui_messages(messages: Sequence[dict[str, Any]]) -> Meant:
    """AG-UI messages after the user's (the client's) as a :class:`Meant`: reasoning messages, assistant
    text, and tool calls (their ``arguments`` parsed)."""
    meant = Meant()
    for message in messages:
        role = message.get("role")
        if role == "reasoning":
            meant.add("reasoning", message.get("content") or "")
        elif role == "assistant":
            meant.add("text", message.get("content") or "")
            for call in message.get("toolCalls") or []:
                try:
                    args = json.loads(call["function"]["arguments"])
                except ValueError:
                    args = call["function"]["arguments"]
                meant.add("tool", call["id"], call["function"]["name"], args)
    return meant


def through_agui(js: JsOracle, events: Sequence[ChatEvent]) -> tuple[Meant, dict[str, Any]]:
    """``events`` through ``agui.encode`` and the real ``HttpAgent``: what the new messages mean, and the run
    the client saw (``messages``, ``outcome``, ``runError``, ``request``...)."""
    answer = js.call("agui", {"runs": [{"body": agui_body(events)}], "messages": [], "state": {}})
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == [], answer["warnings"]
    run: dict[str, Any] = answer["result"]["runs"][0]
    assert run["failed"] is None, run["failed"]
    meant = meant_of_agui_messages(run["messages"])
    meant.error = (run.get("runError") or {}).get("message")
    return meant, run


def assert_clients_agree(js: JsOracle, events: Sequence[ChatEvent], meant: Meant) -> None:
    """Both real clients end with the assistant turn ``meant`` (AI SDK: blocks in order and the finish
    reason; AG-UI: reasoning, text and tool calls, each kind in order, and the error)."""
    ai, _ = through_aisdk(js, events)
    assert ai.blocks == meant.blocks, (ai.blocks, meant.blocks)
    assert ai.error == meant.error
    if meant.error is None:
        assert ai.finish == meant.finish
    ag, _ = through_agui(js, events)
    for kinds in (("reasoning",), ("text",), ("tool",)):
        assert ag.kinds(*kinds) == meant.kinds(*kinds), (kinds, ag.blocks, meant.blocks)
    assert ag.error == meant.error


# --- generated provider streams --------------------------------------------------------------------

_words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=24)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
tool_inputs = st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4)


@dataclass
class PlannedCall:
    """A tool call of a plan: its provider id, name, input, and the argument text split into pieces."""

    id: str
    name: str
    input: dict[str, Any]
    pieces: list[str]


@dataclass
class Plan:
    """What a generated provider stream says: reasoning and text (each as pieces), calls, the finish."""

    reasoning: list[str]
    text: list[str]
    calls: list[PlannedCall]
    finish: str
    usage: tuple[int, int] | None

    def meant(self, finish: str | None = None) -> Meant:
        """The assistant turn this plan means (reasoning, then text, then the calls)."""
        meant = Meant(finish=finish or self.finish)
        meant.add("reasoning", "".join(self.reasoning))
        meant.add("text", "".join(self.text))
        for call in self.calls:
            meant.add("tool", call.id, call.name, call.input)
        return meant


@st.composite
def split_anywhere(draw: st.DrawFn, text: str, max_pieces: int = 6) -> list[str]:
    """``text`` cut at arbitrary points into non-empty pieces (one piece when short)."""
    if len(text) <= 1:
        return [text] if text else []
    cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=max_pieces - 1))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@st.composite
def plans(draw: st.DrawFn, *, id_prefix: str = "call_", finishes: Sequence[str] = ("stop", "length")) -> Plan:
    """A generated assistant turn: optional reasoning and text, up to three tool calls, a finish reason."""
    reasoning = draw(st.lists(_words, max_size=3))
    text = draw(st.lists(_words, max_size=4))
    calls = []
    for n in range(draw(st.integers(0, 3))):
        value = draw(tool_inputs)
        arguments = json.dumps(value, ensure_ascii=draw(st.booleans()))
        name = draw(st.sampled_from(["get_weather", "search", "calc"]))
        calls.append(
            PlannedCall(
                f"{id_prefix}{n}{draw(st.text('abcXYZ09', min_size=2, max_size=6))}",
                name,
                value,
                draw(split_anywhere(arguments)),
            )
        )
    finish = "tool-calls" if calls else draw(st.sampled_from(list(finishes)))
    usage = draw(st.none() | st.tuples(st.integers(0, 10_000), st.integers(0, 10_000)))
    return Plan(reasoning, text, calls, finish, usage)


@st.composite
def interleave(draw: st.DrawFn, calls: Sequence[PlannedCall]) -> list[tuple[int, str]]:
    """The argument pieces of ``calls`` as ``(call index, piece)`` in an arbitrary interleaving that keeps
    each call's own order."""
    queues = [list(c.pieces) for c in calls]
    out: list[tuple[int, str]] = []
    while any(queues):
        live = [i for i, q in enumerate(queues) if q]
        i = draw(st.sampled_from(live))
        out.append((i, queues[i].pop(0)))
    return out


# --- a framework source behind both routes, driven by the real clients --------------------------------------


def serve(live_server: Any, agent: Any) -> str:
    """``agent`` behind both protocols' routes (strict checking) on a live server; its base URL."""
    options = StreamOptions(strict=True)
    app = Starlette(routes=[*aisdk.routes(agent, options=options), *agui.routes(agent, options=options)])
    url: str = live_server(app).url
    return url


def js_result(js: JsOracle, kind: str, req: dict[str, Any]) -> dict[str, Any]:
    """What the real client ``kind`` made of ``req``: the call succeeded and printed no warning."""
    answer = js.call(kind, req)
    assert answer["ok"], answer.get("error")
    assert answer["warnings"] == [], answer["warnings"]
    result: dict[str, Any] = answer["result"]
    return result


THEME_TOOL = {
    "name": "set_theme",
    "description": "Set the page theme",
    "parameters": {"type": "object", "properties": {"theme": {"type": "string"}}},
}
"""The page's frontend tool in the pending-then-answered exchange."""


def frontend_tool_runs(js: JsOracle, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two ``HttpAgent`` runs with the page's ``set_theme`` tool: "dark mode", then the page's answer to the
    call ``t1`` (``{"ok": true}``). The two runs' results."""
    user = {"id": "u1", "role": "user", "content": "dark mode"}
    answer = {"id": "tr1", "role": "tool", "toolCallId": "t1", "content": '{"ok": true}'}
    result = js_result(
        js,
        "agui",
        {
            "url": f"{url}/api/agui",
            "runs": [
                {"addMessages": [user], "parameters": {"tools": [THEME_TOOL]}},
                {"addMessages": [answer], "parameters": {"tools": [THEME_TOOL]}},
            ],
        },
    )
    first, second = result["runs"]
    return first, second
