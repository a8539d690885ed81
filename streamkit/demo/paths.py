"""The offline agent's answering paths: which path a prompt takes, and what each one writes.

:func:`choose_path` reads the prompt (see the table in :mod:`streamkit.demo.agent`); :func:`answer` writes
a path that runs to its end (chat, weather, math, several, failure, long, search) and :func:`crash` the one
that fails mid-answer. The paths that pause for the user or the page are in :mod:`streamkit.demo.pauses`.
Each path starts the run's plan with its steps, then writes its blocks with a
:class:`~streamkit.demo.writer.Writer`, running the demo's tools as it goes.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias
from urllib.parse import quote

from ..events import RunError, TextDelta, TextStart
from .plan import clip
from .tools import CALCULATE, KNOWN_CITIES, run_now, sources_of, tools_by_name
from .writer import Writer, join_names, split_tokens

__all__ = ["PathName", "answer", "choose_path", "crash"]

PathName: TypeAlias = Literal[
    "chat", "weather", "math", "several", "failure", "long", "crash", "delete", "theme", "search"
]
"""The paths of the offline agent (see the table in :mod:`streamkit.demo.agent`)."""

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
_CALCULATOR = tools_by_name([CALCULATE])


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
    """The path the offline agent takes for ``prompt`` (see the table in :mod:`streamkit.demo.agent`)."""
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
        outcome = run_now(_CALCULATOR, "calculate", {"expression": expr})
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


_HELP = (
    "Try one of these:\n"
    "- **What's the weather in Lisbon?** for a tool call\n"
    "- **Compare the weather in Paris, Tokyo and New York** for parallel tool calls\n"
    "- **What is 1/0?** for a tool that fails\n"
    "- **Tell me a long story** for a long answer\n"
    "- **What is AG-UI?** for a documentation search with sources\n"
    "- **crash** for an error in the middle of an answer"
)


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


def _chat(w: Writer, prompt: str) -> None:
    first = (re.findall(r"[a-z']+", prompt.lower()) or [""])[0]
    thanks = first in ("thanks", "thank", "thx", "cheers")
    w.start_plan("Reply to a greeting" if not thanks else "Reply to thanks", [("reply", "Write a reply")])
    w.step("answer")
    w.reasoning(
        f"The user said “{clip(prompt)}”. That is small talk, so no tool is needed: I'll answer "
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


def _weather(w: Writer, prompt: str) -> None:
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


def _math(w: Writer, prompt: str, expression: str) -> None:
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


def _several(w: Writer, prompt: str) -> None:
    cities = _cities(prompt)[:4]
    for extra in ("Paris", "Tokyo"):
        if len(cities) < 2 and extra not in cities:
            cities.append(extra)
    steps = [("understand", "Plan the comparison")]
    steps += [(f"call-{i + 1}", f"Weather in {c}") for i, c in enumerate(cities)]
    steps += [(f"call-{len(cities) + 1}", "Compute the spread"), ("answer", "Write the comparison")]
    w.start_plan(f"Compare the weather in {join_names(cities)}", steps)
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"To compare {join_names(cities)} I need each city's weather. The lookups are independent, so I'll "
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


def _failure(w: Writer, prompt: str) -> None:
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


def _long(w: Writer, prompt: str) -> None:
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


def _search(w: Writer, prompt: str) -> None:
    query = clip(prompt, 120)
    w.start_plan(
        f"Answer: {clip(prompt, 48)}",
        [
            ("understand", "Understand the question"),
            ("call-1", "Search the documentation"),
            ("answer", "Answer with sources"),
        ],
    )
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user asks “{clip(prompt)}”. I'd rather not answer from memory, so I'll search the "
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
        else f"The documentation index has nothing specific on “{clip(prompt, 48)}”, but these pages "
        "explain what this demo is about:"
    )
    w.text(f"{intro}\n\n{body}\n\nThe sources are listed below this answer.")
    w.sources(sources_of(output))
    w.finish_plan("answer")


def crash(w: Writer, prompt: str) -> None:
    """The *crash* path: start an answer, then end the run with an error (the plan ends failed)."""
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
        w.emit(w.plan.update())
    w.emit(RunError(message="The scripted agent crashed on purpose (you asked for it).", code="demo_crash"))


def answer(w: Writer, path: PathName, prompt: str) -> None:
    """Write the answering path ``path`` for ``prompt``: chat, weather, math, several, failure, long or search."""
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
