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

Every path streams a shared *plan* as state (:mod:`streamkit.demo.plan`): a snapshot first, then one
update per step, so AG-UI clients get JSON-Patch deltas and ``useChat`` a live ``data-state`` part.

:func:`script` is the pure core: it turns a :class:`~streamkit.events.RunInput` into the list of
``(delay, event)`` beats of the run, the same list for the same prompt, run ids and :class:`Pacing`.
:class:`ScriptedAgent` plays a script, sleeping before each beat. The script is written with a
:class:`~streamkit.demo.writer.Writer`; the paths are in :mod:`streamkit.demo.paths` (the answers) and
:mod:`streamkit.demo.pauses` (human in the loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio

from ..events import ChatEvent, RunInput, RunStarted, hitl, last_user_text
from .paths import answer, choose_path, crash
from .pauses import delete_files, resume, switch_theme
from .writer import INSTANT, Beat, Pacing, Writer

__all__ = ["INSTANT", "Pacing", "ScriptedAgent", "script"]


def script(run: RunInput, pacing: Pacing = INSTANT) -> list[Beat]:
    """The beats of the scripted run for ``run``: deterministic for a given prompt, run ids and pacing."""
    prompt = last_user_text(run).strip()
    w = Writer(run, pacing, prompt)
    w.emit(RunStarted(thread_id=run.thread_id, run_id=run.run_id, message_id=run.message_id))
    turn = hitl.continuation(run)
    if turn and not turn.waiting:  # the answers to a paused turn: continue it
        resume(w, turn)
        return w.finish()
    path = choose_path(prompt)
    if path == "crash":
        crash(w, prompt)
        return w.beats
    if path in ("delete", "theme"):
        (delete_files if path == "delete" else switch_theme)(w, prompt)
        return w.finish(paused=True)
    answer(w, path, prompt)
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
