"""The offline demo agent: scripted, deterministic, and streamed with a realistic rhythm.

No model, no key, no network. :func:`choose_path` reads the last user message and picks one of a few
paths, so that every part of a chat UI can be seen:

========== ======================================================= ======================================
path       prompt (case-insensitive)                               what streams
========== ======================================================= ======================================
chat       a greeting or a couple of words ("hi", "thanks")        reasoning, then the answer
weather    "weather" or one known city ("weather in Lisbon?")      one tool call (``get_weather``), source
math       an arithmetic expression ("what is 12 * 7?")            one tool call (``calculate``)
several    "compare", "trip", or two or more cities                parallel tool calls, then a second step
failure    "fail", or arithmetic that fails ("1/0")                a tool call that ends in an error
long       "long", "story", "essay", "in detail"                   a long answer, source
crash      "crash"                                                 an error ends the run mid-answer
delete     "delete" ("Delete the file notes.txt")                  ``delete_file``, which needs approval
theme      "dark mode", "light mode" or "theme"                    the page's frontend tool ``set_theme``
search     anything else                                           a documentation search, sources
========== ======================================================= ======================================

The *delete* and *theme* paths pause (human in the loop, :mod:`streamkit.events.hitl`): the run ends with
``finish_reason="tool-calls"`` after asking approval for each ``delete_file`` call, or after calling the
frontend tool ``set_theme``. The client's next request carries the answer (an approval response, or the
page's tool result) and the agent continues the same turn: it runs or denies the deletion, or reads the
theme the page applied, and answers in a new step.

Every path streams a shared *plan* as state: a snapshot first, then one update per step
(``{"task", "status", "steps": [{"id", "title", "status"}]}``), so AG-UI clients get JSON-Patch deltas
and ``useChat`` a live ``data-state`` part.

:func:`script` is the pure core: it turns a :class:`~streamkit.events.RunInput` into the list of
``(delay, event)`` beats of the run, the same list for the same prompt, run ids and :class:`Pacing`.
:class:`ScriptedAgent` plays a script, sleeping before each beat.
"""

from __future__ import annotations

import json
import math
import random
import re
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias
from urllib.parse import quote

import anyio

from ..events import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RunError,
    RunFinished,
    RunInput,
    RunStarted,
    Source,
    StateSnapshot,
    StateUpdate,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    hitl,
    last_user_text,
)
from .tools import DEFAULT_TOOLS, KNOWN_CITIES, run_tool, sources_of, tools_by_name

__all__ = ["INSTANT", "Beat", "Pacing", "PathName", "ScriptedAgent", "choose_path", "run_tag", "script", "split_tokens"]

PathName: TypeAlias = Literal[
    "chat", "weather", "math", "several", "failure", "long", "crash", "delete", "theme", "search"
]

Beat: TypeAlias = tuple[float, ChatEvent]
"""One step of a script: seconds to wait, then the event to yield."""


@dataclass(frozen=True, slots=True)
class Pacing:
    """How fast the scripted agent streams (seconds), with seeded jitter so that it feels alive.

    ``token`` is the mean pause between answer tokens (reasoning and tool arguments stream a little
    faster), ``tool`` the time a tool takes, ``think`` the pause before a new block, ``jitter`` the
    relative spread of every pause, and ``seed`` seeds it.
    """

    token: float = 0.03
    tool: float = 0.7
    think: float = 0.35
    jitter: float = 0.6
    seed: int = 0

    def scaled(self, factor: float) -> Pacing:
        """The same rhythm ``factor`` times slower (0 for no pauses at all)."""
        if factor < 0 or not math.isfinite(factor):
            raise ValueError(f"pacing factor must be a finite number >= 0, got {factor!r}")
        return replace(self, token=self.token * factor, tool=self.tool * factor, think=self.think * factor)


INSTANT = Pacing(token=0.0, tool=0.0, think=0.0)
"""No pauses: the whole script at once (tests)."""

_TOKEN = re.compile(r"\s*\S{1,7}|\s+")
_GREETINGS = frozenset(
    {
        *("hi", "hello", "hey", "hiya", "yo", "hola", "bonjour", "hallo", "ciao", "salut", "howdy"),
        *("thanks", "thank", "thx", "cheers", "morning", "evening"),
    }
)
_LONG = ("long", "story", "essay", "in detail", "poem", "tell me everything")
_FAIL = ("fail", "broken", "divide by zero", "divided by zero")
_SEVERAL = ("compare", "comparison", "trip", "versus", " vs ", "several", "multiple")
_ARITHMETIC = re.compile(r"[-+(]*\d[\d.]*(?:\s*(?:\*\*|//|[-+*/%^x\u00d7\u00f7])\s*[-+(]*\d[\d.]*\)*)+")
_WEATHER_CITY = re.compile(r"\b(?:in|for|at)\s+([A-Za-z][A-Za-z .'-]{1,40}?)\s*(?:[?!.,;]|$| today| now)")


def run_tag(run_id: str) -> str:
    """A short tag for ids made in a run: the run id itself when short, else a hash of it."""
    if len(run_id) <= 12 and re.fullmatch(r"[\w.-]+", run_id):
        return run_id
    return f"{zlib.crc32(run_id.encode()):08x}"


def split_tokens(text: str) -> list[str]:
    """Split ``text`` into model-like tokens (a word with its leading space, long words in pieces).

    Joining the tokens gives ``text`` back.
    """
    return _TOKEN.findall(text)


def _cities(prompt: str) -> list[str]:
    lowered = prompt.lower()
    found: list[tuple[int, str]] = []
    for city in KNOWN_CITIES:
        match = re.search(rf"\b{re.escape(city)}\b", lowered)
        if match:
            found.append((match.start(), city.title()))
    return [city for _, city in sorted(found)]


def _expression(prompt: str) -> str | None:
    match = _ARITHMETIC.search(prompt)
    if match is None:
        return None
    expr = match.group(0).strip()
    return expr.replace("x", "*").replace("\u00d7", "*").replace("\u00f7", "/")


def choose_path(prompt: str) -> PathName:
    """The path the scripted agent takes for ``prompt`` (see the module's table)."""
    text = f" {prompt.lower().strip()} "
    words = re.findall(r"[a-z']+", text)
    if "crash" in words:
        return "crash"
    if "delete" in words or "remove" in words:
        return "delete"
    if "dark mode" in text or "light mode" in text or "theme" in words or "dark theme" in text:
        return "theme"
    expr = _expression(prompt)
    if any(k in text for k in _FAIL):
        return "failure"
    if expr is not None:
        outcome = run_tool(_TOOLS, "calculate", {"expression": expr})
        return "failure" if outcome[1] is not None else "math"
    cities = _cities(prompt)
    if len(cities) >= 2 or any(k in text for k in _SEVERAL):
        return "several"
    if "weather" in words or "temperature" in words or "forecast" in words or cities:
        return "weather"
    if any(k in text for k in _LONG):
        return "long"
    if not words or (words[0] in _GREETINGS) or (len(words) <= 2 and "?" not in text):
        return "chat"
    return "search"


_TOOLS = tools_by_name(DEFAULT_TOOLS)


# --- the script writer -----------------------------------------------------------------------------


class _Plan:
    """The shared state: a task with steps, rendered afresh for every state event."""

    def __init__(self, task: str, steps: list[tuple[str, str]]) -> None:
        self.task = task
        self.status = "working"
        self.steps = [{"id": sid, "title": title, "status": "pending"} for sid, title in steps]

    @classmethod
    def restore(cls, state: Any) -> _Plan | None:
        """The plan the client sent back (a paused run's), if ``state`` is one."""
        if not isinstance(state, dict) or not isinstance(state.get("steps"), list):
            return None
        steps = [s for s in state["steps"] if isinstance(s, dict) and isinstance(s.get("id"), str)]
        plan = cls(str(state.get("task", "")), [])
        plan.steps = [
            {"id": s["id"], "title": str(s.get("title", s["id"])), "status": str(s.get("status", "pending"))}
            for s in steps
        ]
        return plan

    def render(self) -> dict[str, Any]:
        return {"task": self.task, "status": self.status, "steps": [dict(s) for s in self.steps]}

    def set(self, step_id: str, status: str, title: str | None = None) -> None:
        for step in self.steps:
            if step["id"] == step_id:
                step["status"] = status
                if title is not None:
                    step["title"] = title
                return
        raise KeyError(step_id)


class _Writer:
    """Builds one run's beats: pauses accumulate and are attached to the next event."""

    def __init__(self, run: RunInput, pacing: Pacing, prompt: str) -> None:
        self.run = run
        self.tag = run_tag(run.run_id)
        self.pacing = pacing
        self.rng = random.Random(f"{pacing.seed}|{prompt}")
        self.beats: list[Beat] = []
        self.wait = 0.0
        self.counters: dict[str, int] = {}
        self.plan: _Plan | None = None
        self.output_tokens = 0
        self.open_step: str | None = None

    # -- primitives --------------------------------------------------------------------------------

    def new_id(self, kind: str) -> str:
        n = self.counters.get(kind, 0) + 1
        self.counters[kind] = n
        return f"{kind}_{self.tag}_{n}"

    def pause(self, seconds: float) -> None:
        if seconds > 0:
            spread = self.pacing.jitter
            self.wait += seconds * (1 + spread * (2 * self.rng.random() - 1))

    def emit(self, event: ChatEvent) -> None:
        self.beats.append((round(self.wait, 4), event))
        self.wait = 0.0

    # -- blocks ------------------------------------------------------------------------------------

    def step(self, name: str) -> None:
        if self.open_step is not None:
            self.emit(StepFinished(name=self.open_step))
        self.open_step = name
        self.emit(StepStarted(name=name))

    def reasoning(self, text: str) -> None:
        rid = self.new_id("reasoning")
        self.pause(self.pacing.think)
        self.emit(ReasoningStart(id=rid))
        for token in split_tokens(text):
            self.pause(self.pacing.token * 0.6)
            self.emit(ReasoningDelta(id=rid, delta=token))
            self.output_tokens += 1
        self.emit(ReasoningEnd(id=rid))

    def text(self, text: str) -> str:
        tid = self.new_id("text")
        self.pause(self.pacing.think)
        self.emit(TextStart(id=tid))
        for token in split_tokens(text):
            self.pause(self.pacing.token * (3 if token.endswith((".", "!", "?", ":")) else 1))
            self.emit(TextDelta(id=tid, delta=token))
            self.output_tokens += 1
        self.emit(TextEnd(id=tid))
        return tid

    def _arg_chunks(self, payload: str) -> list[str]:
        chunks, i = [], 0
        while i < len(payload):
            size = self.rng.randint(3, 9)
            chunks.append(payload[i : i + size])
            i += size
        return chunks

    def stream_calls(self, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Stream the calls' arguments (interleaved when there are several) and end them; return their ids."""
        ids = [self.new_id("call") for _ in calls]
        streams = []
        for cid, (name, args) in zip(ids, calls, strict=True):
            self.pause(self.pacing.think / 2)
            self.emit(ToolCallStart(id=cid, name=name))
            streams.append((cid, self._arg_chunks(json.dumps(args, ensure_ascii=False))))
        pending = [(cid, list(chunks)) for cid, chunks in streams]
        while pending:
            for cid, chunks in list(pending):
                if chunks:
                    self.pause(self.pacing.token * 0.8)
                    self.emit(ToolCallArgsDelta(id=cid, delta=chunks.pop(0)))
                    self.output_tokens += 1
                if not chunks:
                    pending.remove((cid, chunks))
        for cid, (_, args) in zip(ids, calls, strict=True):
            self.emit(ToolCallEnd(id=cid, input=args))
        return ids

    def tool_calls(self, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, Any, str | None]]:
        """Stream the calls' arguments (interleaved when there are several), then run them in order."""
        first = self.counters.get("call", 0) + 1
        steps = [f"call-{first + i}" for i in range(len(calls))]
        ids = self.stream_calls(calls)
        results = []
        for cid, step, (name, args) in zip(ids, steps, calls, strict=True):
            self.state(step, "running")
            output, error = run_tool(_TOOLS, name, args)
            self.pause(self.pacing.tool)
            if error is None:
                self.emit(ToolResult(id=cid, output=output))
            else:
                self.emit(ToolResult(id=cid, error=error))
            self.state(step, "done" if error is None else "failed")
            results.append((cid, output, error))
        return results

    def sources(self, sources: list[dict[str, str]]) -> None:
        for source in sources:
            self.pause(self.pacing.token)
            self.emit(Source(id=self.new_id("source"), url=source["url"], title=source.get("title")))

    # -- state -------------------------------------------------------------------------------------

    def start_plan(self, task: str, steps: list[tuple[str, str]]) -> None:
        self.plan = _Plan(task, steps)
        self.emit(StateSnapshot(state=self.plan.render()))

    def state(self, step_id: str, status: str) -> None:
        if self.plan is None:
            return
        try:
            self.plan.set(step_id, status)
        except KeyError:
            return
        self.emit(StateUpdate(state=self.plan.render()))

    def finish_plan(self, last_step: str, status: str = "done") -> None:
        """Mark ``last_step`` done and the whole task ``status`` in one update."""
        if self.plan is not None:
            self.plan.set(last_step, "done")
            self.plan.status = status
            self.emit(StateUpdate(state=self.plan.render()))

    def set_status(self, status: str) -> None:
        """Set the whole task's status (one update)."""
        if self.plan is not None:
            self.plan.status = status
            self.emit(StateUpdate(state=self.plan.render()))

    def finish(self, *, paused: bool = False) -> list[Beat]:
        """End the run: normally, or ``paused`` for the user or the page (``finish_reason="tool-calls"``)."""
        if self.open_step is not None:
            self.emit(StepFinished(name=self.open_step))
            self.open_step = None
        input_tokens = sum(len(split_tokens(m.text)) for m in self.run.messages) + 120
        usage = Usage(
            input_tokens=input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=input_tokens + self.output_tokens,
            model="streamkit-offline",
        )
        self.emit(hitl.pause(usage=usage) if paused else RunFinished(finish_reason="stop", usage=usage))
        return self.beats


# --- the paths -------------------------------------------------------------------------------------

_HELP = (
    "Try one of these:\n"
    "- **What's the weather in Lisbon?** for a tool call\n"
    "- **Compare the weather in Paris, Tokyo and New York** for parallel tool calls\n"
    "- **What is 1/0?** for a tool that fails\n"
    "- **Tell me a long story** for a long answer\n"
    "- **What is AG-UI?** for a documentation search with sources\n"
    "- **crash** for an error in the middle of an answer"
)


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _quote(prompt: str, limit: int = 80) -> str:
    flat = " ".join(prompt.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _wiki(city: str) -> dict[str, str]:
    return {"url": f"https://en.wikipedia.org/wiki/{quote(city.replace(' ', '_'))}", "title": f"{city} (Wikipedia)"}


def _advice(temperature: int) -> str:
    if temperature < 10:
        return "Bring a warm coat."
    if temperature < 18:
        return "A light jacket should do."
    if temperature < 27:
        return "Pleasant weather for a walk."
    return "Stay hydrated and look for some shade."


def _chat(w: _Writer, prompt: str) -> None:
    first = (re.findall(r"[a-z']+", prompt.lower()) or [""])[0]
    thanks = first in ("thanks", "thank", "thx", "cheers")
    w.start_plan("Reply to a greeting" if not thanks else "Reply to thanks", [("reply", "Write a reply")])
    w.step("answer")
    w.reasoning(
        f"The user said “{_quote(prompt)}”. That is small talk, so no tool is needed: I'll answer "
        "directly and suggest prompts that show more of the protocols."
    )
    w.state("reply", "running")
    opener = (
        "You're welcome! Glad the streams are flowing."
        if thanks
        else "Hello! I'm the streamkit demo agent, running offline with a scripted brain."
    )
    w.text(
        f"{opener} Everything you see arrives as protocol frames: this text comes token by token, and the "
        "panel on the right shows the raw frames and the shared state as they change.\n\n" + _HELP
    )
    w.finish_plan("reply")


def _weather(w: _Writer, prompt: str) -> None:
    cities = _cities(prompt)
    if cities:
        city = cities[0]
    else:
        match = _WEATHER_CITY.search(prompt)
        city = match.group(1).strip().title() if match else "Paris"
    w.start_plan(
        f"Weather in {city}",
        [
            ("understand", "Understand the question"),
            ("call-1", f"Look up the weather in {city}"),
            ("answer", "Write the answer"),
        ],
    )
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user wants the current weather in {city}. I have a get_weather tool, so I'll call it with "
        f"the city and then summarise the result in a sentence or two."
    )
    w.state("understand", "done")
    ((_, output, error),) = w.tool_calls([("get_weather", {"city": city})])
    w.step("answer")
    w.state("answer", "running")
    if error is not None:
        w.text(f"I could not get the weather for {city}: {error}")
    else:
        w.text(
            f"It's currently **{output['temperature']}°C** and {output['conditions']} in {output['city']}, "
            f"with {output['humidity']}% humidity. {_advice(output['temperature'])}"
        )
        w.sources([_wiki(output["city"])])
    w.finish_plan("answer")


def _math(w: _Writer, prompt: str, expression: str) -> None:
    w.start_plan(
        f"Calculate {expression}",
        [
            ("understand", "Read the expression"),
            ("call-1", f"calculate({expression})"),
            ("answer", "Report the result"),
        ],
    )
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user asks for {expression}. Arithmetic is best left to the calculator tool rather than done in my head."
    )
    w.state("understand", "done")
    ((_, output, _error),) = w.tool_calls([("calculate", {"expression": expression})])
    w.step("answer")
    w.state("answer", "running")
    w.text(
        f"{expression} = **{output['result']}**. The calculator tool did the work; its card shows the input "
        "it received and the output it returned."
    )
    w.finish_plan("answer")


def _several(w: _Writer, prompt: str) -> None:
    cities = _cities(prompt)[:4]
    for extra in ("Paris", "Tokyo"):
        if len(cities) < 2 and extra not in cities:
            cities.append(extra)
    steps = [("understand", "Plan the comparison")]
    steps += [(f"call-{i + 1}", f"Weather in {c}") for i, c in enumerate(cities)]
    steps += [(f"call-{len(cities) + 1}", "Compute the spread"), ("answer", "Write the comparison")]
    w.start_plan(f"Compare the weather in {_join(cities)}", steps)
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"To compare {_join(cities)} I need each city's weather. The lookups are independent, so I'll "
        "call get_weather for all of them at once, then compute the spread between the warmest and the "
        "coldest with the calculator."
    )
    w.state("understand", "done")
    results = w.tool_calls([("get_weather", {"city": c}) for c in cities])
    readings = [out for _, out, err in results if err is None]
    w.step("compute")
    warmest = max(readings, key=lambda r: r["temperature"])
    coldest = min(readings, key=lambda r: r["temperature"])
    w.reasoning(
        f"{warmest['city']} is the warmest at {warmest['temperature']}°C and {coldest['city']} the coldest at "
        f"{coldest['temperature']}°C. Let me compute the difference."
    )
    ((_, spread, _),) = w.tool_calls(
        [("calculate", {"expression": f"{warmest['temperature']} - {coldest['temperature']}"})]
    )
    w.step("answer")
    w.state("answer", "running")
    lines = "\n".join(
        f"- **{r['city']}**: {r['temperature']}°C, {r['conditions']}, {r['humidity']}% humidity" for r in readings
    )
    w.text(
        f"Here is the comparison:\n\n{lines}\n\n{warmest['city']} is the warmest, {coldest['city']} the "
        f"coldest: a spread of **{spread['result']}°C**. {_advice(warmest['temperature'])}"
    )
    w.sources([_wiki(r["city"]) for r in readings])
    w.finish_plan("answer")


def _failure(w: _Writer, prompt: str) -> None:
    expression = _expression(prompt) or "1 / 0"
    w.start_plan(
        f"Calculate {expression}",
        [
            ("understand", "Read the expression"),
            ("call-1", f"calculate({expression})"),
            ("recover", "Explain the failure"),
        ],
    )
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(f"The user asks me to compute {expression}. I'll hand it to the calculator tool.")
    w.state("understand", "done")
    ((_, _output, error),) = w.tool_calls([("calculate", {"expression": expression})])
    w.step("recover")
    w.state("recover", "running")
    w.reasoning(f"The calculator reported an error: {error}. I should explain that rather than guess a number.")
    w.text(
        f"The calculator tool failed: *{error}*. There is no numeric answer to give, so I won't invent one.\n\n"
        "This is the tool-failure path of the demo: the tool card ends in its error state "
        "(`output-error` in the AI SDK, a tool message carrying the error in AG-UI), and the run itself "
        "carries on and finishes normally."
    )
    w.finish_plan("recover", "failed")


_STORY = (
    "Once upon a time, in a data center humming like a beehive, a small token named Tee was born inside a "
    "language model. Tee was only four characters long, but it had somewhere to be: a browser tab on the "
    "other side of the world, where a person was waiting with a half-finished question.\n\n"
    "Tee did not travel alone. The agent core wrapped it in a **TextDelta**, handed it to the adapter, and "
    "the adapter dressed it for the road. For the AI SDK it became a `text-delta` chunk; for AG-UI a "
    "`TEXT_MESSAGE_CONTENT` event. Either way it ended up on one line that began with `data:` and ended "
    "with a blank line, because that is how Server-Sent Events keep their frames apart.\n\n"
    "On the way, Tee met other travellers:\n"
    "- a **reasoning** token that liked to think out loud before anyone else spoke,\n"
    "- a **tool call** whose arguments arrived in pieces, like a parcel sent in several envelopes,\n"
    "- and a **state delta**, a tiny JSON Patch that changed exactly one field of the shared plan.\n\n"
    "None of them waited for the others. The writer flushed every frame the moment it was ready, so the "
    "person on the other side saw the words appear one after another, the way a sentence forms while "
    "someone is speaking. When the connection grew quiet, a `: ping` comment kept it alive, and nobody "
    "mistook it for content.\n\n"
    "At last the final token arrived, followed by a finish frame that closed every open block. The browser "
    "put the pieces together, the spinner stopped, and the answer stood complete on the screen.\n\n"
    "Tee's journey took a few milliseconds. Watch the inspector on the right and you can follow every one "
    "of its cousins making the same trip right now."
)


def _long(w: _Writer, prompt: str) -> None:
    w.start_plan(
        "Write a long answer",
        [("outline", "Outline the story"), ("write", "Write it out"), ("cite", "Cite a source")],
    )
    w.step("answer")
    w.state("outline", "running")
    w.reasoning(
        "A long answer was asked for. I'll tell a short story about how one token travels from an agent to "
        "the browser, so the streaming is easy to watch and the content explains what is happening."
    )
    w.state("outline", "done")
    w.state("write", "running")
    w.text(_STORY)
    w.state("write", "done")
    w.state("cite", "running")
    w.sources(
        [
            {
                "url": "https://html.spec.whatwg.org/multipage/server-sent-events.html",
                "title": "Server-Sent Events (HTML Living Standard)",
            }
        ]
    )
    w.finish_plan("cite")


def _search(w: _Writer, prompt: str) -> None:
    query = _quote(prompt, 120)
    w.start_plan(
        f"Answer: {_quote(prompt, 48)}",
        [
            ("understand", "Understand the question"),
            ("call-1", "Search the documentation"),
            ("answer", "Answer with sources"),
        ],
    )
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user asks “{_quote(prompt)}”. I'd rather not answer from memory, so I'll search the "
        "documentation index first and cite what I find."
    )
    w.state("understand", "done")
    ((_, output, _error),) = w.tool_calls([("search_docs", {"query": query, "limit": 2})])
    w.step("answer")
    w.state("answer", "running")
    hits = output["results"]
    body = "\n\n".join(f"**{hit['title']}**: {hit['snippet']}" for hit in hits)
    intro = (
        "Here is what the documentation says:"
        if output["matched"]
        else f"The documentation index has nothing specific on “{_quote(prompt, 48)}”, but these pages "
        "explain what this demo is about:"
    )
    w.text(f"{intro}\n\n{body}\n\nThe sources are listed below this answer.")
    w.sources(sources_of(output))
    w.finish_plan("answer")


def _crash(w: _Writer, prompt: str) -> None:
    w.start_plan("Crash on purpose", [("answer", "Start an answer"), ("crash", "Fail mid-answer")])
    w.step("answer")
    w.state("answer", "running")
    w.reasoning("The user asked me to crash. I'll start answering and then fail on purpose.")
    tid = w.new_id("text")
    w.emit(TextStart(id=tid))
    for token in split_tokens("Sure, here comes an answer that will never be fin"):
        w.pause(w.pacing.token)
        w.emit(TextDelta(id=tid, delta=token))
    w.pause(w.pacing.think)
    if w.plan is not None:  # the plan ends failed, not "working" forever
        w.plan.set("answer", "failed")
        w.plan.status = "failed"
        w.emit(StateUpdate(state=w.plan.render()))
    w.emit(RunError(message="The scripted agent crashed on purpose (you asked for it).", code="demo_crash"))


_FILE_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,5}\b")


def _files(prompt: str) -> list[str]:
    names: list[str] = []
    for name in _FILE_NAME.findall(prompt):
        if name not in names:
            names.append(name)
    return names[:3] or ["notes.txt"]


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


def _delete(w: _Writer, prompt: str) -> None:
    files = _files(prompt)
    steps = [("understand", "Understand the request")]
    steps += [(f"call-{i + 1}", f"Delete {name} (needs your approval)") for i, name in enumerate(files)]
    steps += [("answer", "Confirm what happened")]
    w.start_plan(f"Delete {_join(files)}", steps)
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user wants {_join(files)} deleted. Deleting cannot be undone, so the delete_file tool asks the "
        "user to approve each call before it runs."
    )
    w.state("understand", "done")
    ids = w.stream_calls([("delete_file", {"path": name}) for name in files])
    for cid, name in zip(ids, files, strict=True):
        w.emit(hitl.request_approval(cid, reason=f"Delete {name}? This cannot be undone."))
    if w.plan is not None:
        for i in range(len(files)):
            w.plan.set(f"call-{i + 1}", "waiting")
    w.set_status("waiting for approval")


def _theme(w: _Writer, prompt: str) -> None:
    theme = "light" if "light" in prompt.lower() else "dark"
    w.start_plan(
        f"Switch the page to the {theme} theme",
        [
            ("understand", "Understand the request"),
            ("call-1", f"set_theme({theme}) in the page"),
            ("answer", "Confirm"),
        ],
    )
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user wants the {theme} theme. The page offers a set_theme tool that runs in the browser, so I'll "
        "call it and wait for the page to report what it applied."
    )
    w.state("understand", "done")
    w.stream_calls([("set_theme", {"theme": theme})])
    if w.plan is not None:
        w.plan.set("call-1", "waiting")
    w.set_status("waiting for the page")


def _output(result: Any) -> Any:
    """A tool output as the agent meant it (AG-UI tool messages carry it as JSON text)."""
    output = result.output
    if isinstance(output, str):
        try:
            return json.loads(output)
        except ValueError:
            return output
    return output


def _resume(w: _Writer, turn: hitl.Continuation) -> None:
    """Continue a paused turn: run or deny the answered deletions, or read the theme the page applied."""
    w.plan = _Plan.restore(w.run.state)
    if w.plan is not None:
        w.plan.status = "working"
    deleted: list[tuple[str, int]] = []
    refused: list[str] = []
    failed: list[tuple[str, str]] = []
    deletions = [c.id for c in turn.calls if c.name == "delete_file"]
    for decision in turn.decisions:
        args = decision.call.input if isinstance(decision.call.input, dict) else {}
        name = str(args.get("path", "the file"))
        step = f"call-{deletions.index(decision.call.id) + 1}" if decision.call.id in deletions else ""
        if not decision.approved:
            w.emit(decision.denial(f"The user denied deleting {name}."))
            refused.append(name)
            w.state(step, "denied")
            continue
        w.state(step, "running")
        output, error = run_tool(_TOOLS, decision.call.name, decision.call.input)
        w.pause(w.pacing.tool)
        if error is None:
            w.emit(ToolResult(id=decision.call.id, output=output))
            deleted.append((name, int(output.get("bytes", 0))))
            w.state(step, "done")
        else:
            w.emit(ToolResult(id=decision.call.id, error=error))
            failed.append((name, error))
            w.state(step, "failed")
    themes = [
        (call, turn.results[call.id]) for call in turn.calls if call.name == "set_theme" and call.id in turn.results
    ]
    w.step("answer")
    w.state("answer", "running")
    lines: list[str] = []
    if deleted:
        lines.append("Done: I deleted " + _join([f"**{n}** ({_size(b)})" for n, b in deleted]) + ".")
    if refused:
        lead = "I did not delete anything" if not deleted and not failed else "I left"
        tail = (
            f": you denied deleting {_join(refused)}."
            if lead.startswith("I did")
            else f" {_join(refused)} alone, as you asked."
        )
        lines.append(lead + tail)
    for name, error in failed:
        lines.append(f"I could not delete {name}: {error}")
    for call, result in themes[-1:]:
        if result.error is not None:
            lines.append(f"The page could not switch the theme: {result.error}")
        else:
            output = _output(result)
            theme = output.get("theme") if isinstance(output, dict) else None
            theme = theme if isinstance(theme, str) else (call.input or {}).get("theme", "new")
            w.state("call-1", "done")
            lines.append(f"Done, the page is now {theme}.")
    if not lines:
        lines.append("Thanks, I have the results of the tool calls.")
    w.text(" ".join(lines))
    if w.plan is not None:
        w.finish_plan("answer")


def script(run: RunInput, pacing: Pacing = INSTANT) -> list[Beat]:
    """The beats of the scripted run for ``run``: deterministic for a given prompt, run ids and pacing."""
    prompt = last_user_text(run).strip()
    w = _Writer(run, pacing, prompt)
    w.emit(RunStarted(thread_id=run.thread_id, run_id=run.run_id, message_id=run.message_id))
    turn = hitl.continuation(run)
    if turn and not turn.waiting:  # the answers to a paused turn: continue it
        _resume(w, turn)
        return w.finish()
    path = choose_path(prompt)
    if path == "crash":
        _crash(w, prompt)
        return w.beats
    if path in ("delete", "theme"):
        (_delete if path == "delete" else _theme)(w, prompt)
        return w.finish(paused=True)
    if path == "math":
        _math(w, prompt, _expression(prompt) or "")
    else:
        {
            "chat": _chat,
            "weather": _weather,
            "several": _several,
            "failure": _failure,
            "long": _long,
            "search": _search,
        }[path](w, prompt)
    return w.finish()


class ScriptedAgent:
    """The offline demo agent: plays :func:`script` for each run with the given :class:`Pacing`."""

    def __init__(self, pacing: Pacing | None = None) -> None:
        self.pacing = pacing if pacing is not None else Pacing()

    def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        """Stream the scripted run for ``run``."""
        return self._play(script(run, self.pacing))

    async def _play(self, beats: list[Beat]) -> AsyncIterator[ChatEvent]:
        for delay, event in beats:
            if delay > 0:
                await anyio.sleep(delay)
            yield event

    def __repr__(self) -> str:
        return f"ScriptedAgent(pacing={self.pacing!r})"
