"""The offline agent's paths that pause for the user or the page, and how a paused turn continues.

Human in the loop (:mod:`streamkit.events.hitl`): the *delete* path (:func:`delete_files`) calls ``delete_file``,
which needs approval, and asks the user to approve each call; the *theme* path (:func:`switch_theme`) calls the
page's frontend tool ``set_theme``. Both end the run with ``finish_reason="tool-calls"``. The client's next
request carries the answer (an approval response, or the page's tool result) and :func:`resume` continues
the same turn: it runs or denies the deletions, or reads the theme the page applied, and answers in a new
step, with the plan the client sent back.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..events import ToolResult, hitl
from .plan import Plan
from .writer import Writer, join_names

__all__ = ["delete_files", "resume", "switch_theme"]

_FILE_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,5}\b")


def _files(prompt: str) -> list[str]:
    names: list[str] = []
    for name in _FILE_NAME.findall(prompt):
        if name not in names:
            names.append(name)
    return names[:3] or ["notes.txt"]


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


def delete_files(w: Writer, prompt: str) -> None:
    """The *delete* path: call ``delete_file`` for each file named and ask the user to approve each call."""
    files = _files(prompt)
    steps = [("understand", "Understand the request")]
    steps += [(f"call-{i + 1}", f"Delete {name} (needs your approval)") for i, name in enumerate(files)]
    steps += [("answer", "Confirm what happened")]
    w.start_plan(f"Delete {join_names(files)}", steps)
    w.step("call-tools")
    w.state("understand", "running")
    w.reasoning(
        f"The user wants {join_names(files)} deleted. Deleting cannot be undone, so the delete_file tool asks the "
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


def switch_theme(w: Writer, prompt: str) -> None:
    """The *theme* path: call the page's frontend tool ``set_theme`` and leave it for the page to run."""
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


def resume(w: Writer, turn: hitl.Continuation) -> None:
    """Continue a paused turn: run or deny the answered deletions, or read the theme the page applied."""
    w.plan = Plan.restore(w.run.state)
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
        output, error = w.run_tool(decision.call.name, decision.call.input)
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
        lines.append("Done: I deleted " + join_names([f"**{n}** ({_size(b)})" for n, b in deleted]) + ".")
    if refused:
        lead = "I did not delete anything" if not deleted and not failed else "I left"
        tail = (
            f": you denied deleting {join_names(refused)}."
            if lead.startswith("I did")
            else f" {join_names(refused)} alone, as you asked."
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
