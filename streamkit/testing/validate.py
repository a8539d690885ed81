"""The stream validator: :func:`validate` reads an SSE body as the protocol's real client does and reports, rule
by rule (:mod:`streamkit.testing.rules`), what that client rejects, loses or merely tolerates.

One pass over the body checks, in order: the SSE framing (and AG-UI's ``\\n\\n``-only rule, the AI SDK's
``[DONE]``), the JSON of each frame, each frame against the schema of the declared client version
(:mod:`streamkit.testing.schemas`), then the sequence the client enforces. The sequence is checked by the
protocol's own reader where the library has one: the AI SDK's failures are the ones
:class:`~streamkit.aisdk.UIMessageFolder` (the client's stream processor) reports; AG-UI's follow the client's
verifier (run lifecycle, active messages, tool calls and steps, nothing open at ``RUN_FINISHED``) and its state
reducer (each ``STATE_DELTA`` applied with :func:`streamkit.patch.apply_patch` to the state the client holds).
Once the client would have failed the stream, later frames are still checked for framing, JSON and schema, but
no longer for sequence (the client never reads them).

The report carries the fold: what the client ends up showing (:func:`streamkit.aisdk.fold`'s folder,
:func:`streamkit.agui.fold`, :func:`streamkit.dsh.fold`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from .. import agui, dsh
from ..aisdk import UIMessageFolder
from ..aisdk.partial_json import has_unsafe_key
from ..patch import PatchError, apply_patch
from ..stringify import to_json
from .report import Finding, Report
from .schemas import (
    AGUI_BASE,
    AGUI_EVENTS,
    AGUI_NULL_TOLERATED,
    AISDK_CHUNKS,
    AISDK_CITATION,
    AISDK_CITED_SOURCES,
    Field,
)

__all__ = ["AGUI_VERSIONS", "AISDK_VERSIONS", "PROTOCOLS", "Protocol", "agui_version", "validate"]

Protocol = Literal["aisdk", "agui", "dsh"]
PROTOCOLS: tuple[str, ...] = ("aisdk", "agui", "dsh")
"""The protocols :func:`validate` reads."""
AISDK_VERSIONS: tuple[int, ...] = tuple(AISDK_CHUNKS)
"""The ``ai`` majors whose chunk schema the validator knows."""
AGUI_VERSIONS: tuple[str, ...] = tuple(AGUI_EVENTS)
"""The ``@ag-ui/client`` generations whose event schema the validator knows."""

_NO_SUBAGENT = frozenset({"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"})
_OUTCOMES = {"0.0": ("success", "interrupt"), "1.0": ("success", "interrupt", "cancelled")}
_DSH_EVENTS = frozenset({dsh.META, dsh.CHUNK, dsh.STEP_BREAK, dsh.DONE, dsh.ERROR})


def agui_version(version: str | None) -> str:
    """The client generation (``"0.0"`` or ``"1.0"``) a version string names (``"0.0.59"``, ``"1"``, None: 1.0)."""
    if version is None:
        return "1.0"
    text = str(version).strip().lstrip("v")
    return "0.0" if text.startswith("0.") else "1.0"


@dataclass
class _Frame:
    index: int
    text: str
    data: str
    event: str


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, rule: str, frame: _Frame | int | None, message: str) -> None:
        if isinstance(frame, _Frame):
            self.items.append(Finding(rule, frame.index, message, frame.text))
        else:
            self.items.append(Finding(rule, frame, message))


# -- framing -----------------------------------------------------------------------------------------------


def _split(text: str, protocol: str, out: _Findings) -> list[_Frame]:
    if protocol == "agui":
        if "\r\n\r\n" in text:
            out.add("sse.crlf-frames", None, "frames are separated by \\r\\n\\r\\n")
        blocks = text.split("\n\n")
    else:
        blocks = text.replace("\r\n", "\n").replace("\r", "\n").split("\n\n")
    tail = blocks.pop()
    frames: list[_Frame] = []
    for n, block in enumerate([*blocks, tail]):
        last = n == len(blocks)
        data: list[str] = []
        event = "message"
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, colon, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data" and colon:
                data.append(value)
            elif name == "event" and colon:
                event = value.strip()
            elif name in ("id", "retry") and colon:
                pass
            else:
                out.add("sse.stray-line", len(frames), f"line {line[:60]!r} is no SSE field")
        if not data:
            continue
        frame = _Frame(len(frames), block.strip("\n"), "\n".join(data), event)
        if last and frame.data != "[DONE]":
            if protocol == "agui":
                out.add("sse.unterminated-kept", frame, "the body ends inside this frame")
            else:
                try:
                    orjson.loads(frame.data)
                except orjson.JSONDecodeError:
                    out.add("sse.truncated", frame.index, "the body is cut inside a frame: " + block[:80])
                else:
                    out.add("sse.unterminated", frame.index, "the last frame is not ended: " + block[:80])
                continue
        frames.append(frame)
    return frames


def _parse(frame: _Frame, out: _Findings) -> Any:
    try:
        value = orjson.loads(frame.data)
    except orjson.JSONDecodeError as exc:
        out.add("sse.json-invalid", frame, f"not JSON ({exc})")
        return None
    if not isinstance(value, dict):
        out.add("sse.not-object", frame, f"a JSON {type(value).__name__}, not an object")
        return None
    return value


# -- schema ------------------------------------------------------------------------------------------------


def _kind_ok(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if kind.startswith("enum:"):
        return isinstance(value, str) and value in kind[5:].split(",")
    if kind.startswith("literal:"):
        return bool(value == kind[8:])
    return True


def _check_fields(
    obj: Mapping[str, Any],
    fields: Mapping[str, Field],
    elsewhere: set[str],
    frame: _Frame,
    out: _Findings,
    *,
    elsewhere_rule: str,
    version: str,
    tolerated: frozenset[tuple[str, str]] = frozenset(),
) -> bool:
    """Check ``obj`` against ``fields``; True when the client's schema refuses it."""
    refused = False
    kind = obj.get("type")
    for name, spec in fields.items():
        if name not in obj:
            if spec.required:
                out.add("schema.field-missing", frame, f"{kind} has no {name}")
                refused = True
            continue
        value = obj[name]
        if value is None and (kind, name) in tolerated:
            out.add("schema.null-tolerated", frame, f"{kind}.{name} is null")
        elif value is None and spec.kind != "any":
            rule = "schema.field-type" if spec.required else "schema.field-null"
            out.add(rule, frame, f"{kind}.{name} is null")
            refused = True
        elif not _kind_ok(value, spec.kind):
            out.add("schema.field-type", frame, f"{kind}.{name} should be {spec.kind}, is {orjson.dumps(value)[:60]!r}")
            refused = True
        elif name == "providerMetadata" and not all(isinstance(v, dict) for v in value.values()):
            out.add("schema.field-type", frame, f"{kind}.providerMetadata should map each provider to an object")
            refused = True
    for name in obj:
        if name == "type" or name in fields:
            continue
        if name in elsewhere:
            out.add(elsewhere_rule, frame, f"{kind}.{name} is not in the {version} client's schema")
        else:
            out.add("schema.field-unknown", frame, f"{kind}.{name} is in no version's schema")
    return refused


def _aisdk_schema(chunk: dict[str, Any], version: int, frame: _Frame, out: _Findings) -> bool:
    kind = chunk.get("type")
    if not isinstance(kind, str):
        out.add("schema.type-missing", frame, "the chunk has no string type")
        return True
    if has_unsafe_key(chunk):
        out.add("schema.unsafe-key", frame, "the chunk holds a __proto__ key")
        return True
    key = "data-*" if kind.startswith("data-") else kind
    types = AISDK_CHUNKS[version]
    if key not in types:
        if any(key in other for other in AISDK_CHUNKS.values()):
            out.add("schema.type-not-in-version", frame, f"ai {version} has no {kind!r} chunk")
        else:
            out.add("schema.type-unknown", frame, f"no ai version has a {kind!r} chunk")
        return True
    elsewhere = {name for other in AISDK_CHUNKS.values() for name in other.get(key, {})}
    refused = _check_fields(
        chunk, types[key], elsewhere, frame, out, elsewhere_rule="aisdk.field-not-in-version", version=f"ai {version}"
    )
    if kind == "text-end" and "citations" in types[key] and isinstance(chunk.get("citations"), list):
        refused = _citations(chunk["citations"], frame, out) or refused
    return refused


def _nested(value: Any, fields: Mapping[str, Field], where: str, frame: _Frame, out: _Findings) -> bool:
    """Check a nested object the client's schema also validates (unknown keys are stripped there)."""
    if not isinstance(value, dict):
        out.add("schema.field-type", frame, f"{where} should be an object")
        return True
    for name, spec in fields.items():
        if name not in value:
            if spec.required:
                out.add("schema.field-missing", frame, f"{where} has no {name}")
                return True
        elif value[name] is None or not _kind_ok(value[name], spec.kind):
            out.add("schema.field-type", frame, f"{where}.{name} should be {spec.kind}")
            return True
    return False


def _citations(citations: list[Any], frame: _Frame, out: _Findings) -> bool:
    for n, citation in enumerate(citations):
        where = f"text-end.citations[{n}]"
        if _nested(citation, AISDK_CITATION, where, frame, out):
            return True
        source = citation["source"]
        fields = AISDK_CITED_SOURCES.get(source.get("sourceType"))
        if fields is None:
            out.add("schema.field-type", frame, f"{where}.source.sourceType should be url or document")
            return True
        if _nested(source, fields, where + ".source", frame, out):
            return True
        for bound in ("startIndex", "endIndex"):
            value = citation.get(bound)
            if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                out.add("schema.field-type", frame, f"{where}.{bound} should be a non-negative integer")
                return True
    return False


def _agui_fields(version: str, kind: str) -> dict[str, Field]:
    base = {k: v for k, v in AGUI_BASE.items() if not (k == "subagentRunId" and kind in _NO_SUBAGENT)}
    return base | AGUI_EVENTS[version][kind]


def _agui_schema(event: dict[str, Any], version: str, frame: _Frame, out: _Findings) -> bool:
    kind = event.get("type")
    if not isinstance(kind, str):
        out.add("schema.type-missing", frame, "the event has no string type")
        return True
    if kind not in AGUI_EVENTS[version]:
        if version == "1.0" and kind.startswith("THINKING_") and kind in AGUI_EVENTS["0.0"]:
            out.add("agui.deprecated-event", frame, f"{kind} is converted to its REASONING_ event")
            return False
        if any(kind in other for other in AGUI_EVENTS.values()):
            out.add("schema.type-not-in-version", frame, f"AG-UI {version} has no {kind} event")
        else:
            out.add("schema.type-unknown", frame, f"no AG-UI version has a {kind} event")
        return True
    elsewhere = {name for v, types in AGUI_EVENTS.items() if kind in types for name in _agui_fields(v, kind)}
    refused = _check_fields(
        event, _agui_fields(version, kind), elsewhere, frame, out,
        elsewhere_rule="agui.field-not-in-version", version=f"AG-UI {version}", tolerated=AGUI_NULL_TOLERATED,
    )  # fmt: skip
    outcome = event.get("outcome")
    if kind == "RUN_FINISHED" and isinstance(outcome, dict) and outcome.get("type") not in _OUTCOMES[version]:
        out.add("schema.field-type", frame, f"AG-UI {version} knows no {outcome.get('type')!r} outcome")
        refused = True
    return refused


# -- the AI SDK ------------------------------------------------------------------------------------------------


def _aisdk_failure(text: str) -> str:
    if "for missing text part" in text or "for missing reasoning part" in text:
        return "aisdk.part-not-open"
    if "tool-input-delta for missing tool call" in text:
        return "aisdk.tool-input-not-started"
    if "for approval ID" in text:
        return "aisdk.approval-unknown"
    if "No tool invocation found" in text:
        return "aisdk.tool-call-unknown"
    return "aisdk.client-failure"


def _validate_aisdk(frames: list[_Frame], version: int, message: dict[str, Any] | None, out: _Findings) -> Report:
    folder = UIMessageFolder(message, sdk_version=version)
    chunks: list[dict[str, Any]] = []
    stopped = False
    done = False
    started = False
    terminal: str | None = None
    text_open: set[str] = set()
    reasoning_open: set[str] = set()
    inputs: set[str] = set()
    warned: set[str] = set()

    def once(rule: str, frame: _Frame, text: str) -> None:
        if rule not in warned:
            warned.add(rule)
            out.add(rule, frame, text)

    for frame in frames:
        if frame.data == "[DONE]":
            done = True
            continue
        chunk = _parse(frame, out)
        if chunk is None:
            stopped = True
            continue
        chunks.append(chunk)
        if _aisdk_schema(chunk, version, frame, out):
            stopped = True
            continue
        if stopped:
            continue
        kind: str = chunk["type"]
        if terminal == "error":
            once("aisdk.after-error", frame, f"{kind} after the error chunk")
            continue
        if terminal is not None:
            once("aisdk.after-finish", frame, f"{kind} after {terminal}")
        if kind == "start":
            if started:
                out.add("aisdk.start-repeated", frame, "a second start chunk")
            started = True
        elif not started:
            once("aisdk.start-missing", frame, f"{kind} before the start chunk")
        if kind in ("text-delta", "reasoning-delta") and chunk.get("delta") == "":
            out.add("seq.empty-delta", frame, f"{kind} with an empty delta")
        if kind == "tool-input-delta" and chunk.get("inputTextDelta") == "":
            out.add("seq.empty-delta", frame, "tool-input-delta with an empty delta")
        opened = text_open if kind.startswith("text-") else reasoning_open
        if kind in ("text-start", "reasoning-start"):
            if chunk["id"] in opened:
                out.add("aisdk.part-reopened", frame, f"{kind} for {chunk['id']!r}, which is open")
            opened.add(chunk["id"])
        elif kind in ("text-end", "reasoning-end"):
            opened.discard(chunk["id"])
        elif kind == "tool-input-start":
            inputs.add(chunk["toolCallId"])
        elif kind in ("tool-input-available", "tool-input-error"):
            inputs.discard(chunk["toolCallId"])
        elif kind == "finish-step" and (text_open or reasoning_open):
            out.add("aisdk.finish-step-open", frame, f"open: {sorted(text_open | reasoning_open)}")
        elif kind == "reset-step":
            text_open.clear()
            reasoning_open.clear()
            inputs.clear()
        elif kind in ("finish", "abort", "error"):
            if kind == "finish" and (text_open or reasoning_open or inputs):
                out.add("seq.open-at-end", frame, f"open at finish: {sorted(text_open | reasoning_open | inputs)}")
            terminal = terminal or kind
        folder.feed(chunk)
        if folder.error is not None and kind != "error":
            out.add(_aisdk_failure(folder.error), frame, folder.error)
            stopped = True
    if not done and frames:
        out.add("aisdk.done-missing", None, "the body does not end with data: [DONE]")
    if terminal is None and not stopped and chunks:
        out.add("seq.terminal-missing", None, "no finish, abort or error chunk")
        if text_open or reasoning_open or inputs:
            out.add("seq.open-at-end", None, f"open at the end: {sorted(text_open | reasoning_open | inputs)}")
    message_out = folder.message
    parts: list[dict[str, Any]] = message_out["parts"]
    tools = [p for p in parts if p["type"].startswith("tool-") or p["type"] == "dynamic-tool"]
    state = next((p.get("data") for p in reversed(parts) if p["type"] == "data-state"), None)
    outcome = "error" if folder.error is not None else "aborted" if folder.aborted else folder.finish_reason
    return Report(
        protocol="aisdk",
        version=str(version),
        frames=chunks,
        fold=folder,
        messages=[message_out],
        tool_calls=tools,
        state=state,
        text="".join(p["text"] for p in parts if p["type"] == "text"),
        outcome=outcome,
        pending_tool_calls=[p["toolCallId"] for p in tools if p["state"] in ("input-available", "approval-requested")],
    )


# -- AG-UI -------------------------------------------------------------------------------------------------------


class _Verifier:
    """The sequence rules ``@ag-ui/client``'s verifier enforces, and its state reducer's patches."""

    def __init__(self, out: _Findings, history: list[dict[str, Any]], state: Any, version: str) -> None:
        self.out = out
        self.spans_checked = version != "0.0"  # 0.0 does not verify reasoning at all
        self.thinking: str | None = None
        self.thinking_message: str | None = None
        self.run: str | None = None
        self.text: set[str] = set()
        self.reasoning: set[str] = set()
        self.phases: set[str] = set()
        self.tools: set[str] = set()
        self.steps: set[str] = set()
        self.chunk_text: str | None = None
        self.chunk_tool: str | None = None
        self.state = to_json(state)
        self.calls = {c.get("id") for m in history for c in m.get("toolCalls") or ()}
        self.seen = 0

    def fail(self, rule: str, frame: _Frame, text: str) -> bool:
        self.out.add(rule, frame, text)
        return True

    def _close_chunks(self) -> None:
        if self.chunk_text is not None:
            self.text.discard(self.chunk_text)
            self.chunk_text = None
        if self.chunk_tool is not None:
            self.tools.discard(self.chunk_tool)
            self.chunk_tool = None

    def feed(self, event: dict[str, Any], frame: _Frame) -> bool:
        """Check one event; True when the client fails the run here."""
        kind: str = event["type"]
        first = self.seen == 0
        self.seen += 1
        if kind not in ("TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK"):
            self._close_chunks()
        if first and kind not in ("RUN_STARTED", "RUN_ERROR"):  # an error may come before the run starts
            return self.fail("agui.run-not-started", frame, f"the first event is {kind}")
        if self.run in ("errored", "finished") and kind != "RUN_STARTED":  # both clients let a new run start
            return self.fail("agui.after-terminal", frame, f"{kind} after the run ended")
        if kind == "RUN_STARTED":
            if self.run == "active":
                return self.fail("agui.run-restarted", frame, "RUN_STARTED while the run is active")
            self.run = "active"
            self.text, self.reasoning, self.phases, self.tools, self.steps = set(), set(), set(), set(), set()
        elif kind.startswith("THINKING_"):
            return self._thinking(kind, frame)
        elif kind.startswith("REASONING_") and not self.spans_checked:
            pass
        elif kind in ("REASONING_START", "REASONING_END"):
            return self._span(kind, event["messageId"], frame)
        elif kind in ("TEXT_MESSAGE_START", "REASONING_MESSAGE_START"):
            active = self.text if kind == "TEXT_MESSAGE_START" else self.reasoning
            if event["messageId"] in active:
                return self.fail("agui.message-active", frame, f"{event['messageId']!r} is already active")
            active.add(event["messageId"])
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END"):
            active = self.text if kind.startswith("TEXT") else self.reasoning
            if event["messageId"] not in active:
                return self.fail("agui.message-not-active", frame, f"{kind} for {event['messageId']!r}")
            if kind.endswith("_END"):
                active.discard(event["messageId"])
            elif event["delta"] == "":
                self.out.add("seq.empty-delta", frame, f"{kind} with an empty delta")
        elif kind == "TEXT_MESSAGE_CHUNK":
            mid = event.get("messageId")
            if mid is None and self.chunk_text is None:
                return self.fail("agui.chunk-without-id", frame, "the first TEXT_MESSAGE_CHUNK has no messageId")
            if mid is not None and mid != self.chunk_text:
                self._close_chunks()
                self.text.add(mid)
                self.chunk_text = mid
        elif kind == "TOOL_CALL_CHUNK":
            cid = event.get("toolCallId")
            if cid is None and self.chunk_tool is None:
                return self.fail("agui.chunk-without-id", frame, "the first TOOL_CALL_CHUNK has no toolCallId")
            if cid is not None and cid != self.chunk_tool:
                self._close_chunks()
                self.tools.add(cid)
                self.calls.add(cid)
                self.chunk_tool = cid
        elif kind == "TOOL_CALL_START":
            if event["toolCallId"] in self.tools:
                return self.fail("agui.tool-call-active", frame, f"{event['toolCallId']!r} is already active")
            self.tools.add(event["toolCallId"])
            self.calls.add(event["toolCallId"])
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            if event["toolCallId"] not in self.tools:
                return self.fail("agui.tool-call-not-active", frame, f"{kind} for {event['toolCallId']!r}")
            if kind == "TOOL_CALL_END":
                self.tools.discard(event["toolCallId"])
            elif event["delta"] == "":
                self.out.add("seq.empty-delta", frame, "TOOL_CALL_ARGS with an empty delta")
        elif kind == "TOOL_CALL_RESULT":
            if event["toolCallId"] not in self.calls:
                self.out.add("agui.result-unknown-call", frame, f"no tool call {event['toolCallId']!r}")
        elif kind == "STEP_STARTED":
            if event["stepName"] in self.steps:
                return self.fail("agui.step-active", frame, f"step {event['stepName']!r} is already active")
            self.steps.add(event["stepName"])
        elif kind == "STEP_FINISHED":
            if event["stepName"] not in self.steps:
                return self.fail("agui.step-not-started", frame, f"step {event['stepName']!r} was not started")
            self.steps.discard(event["stepName"])
        elif kind == "STATE_SNAPSHOT":
            self.state = to_json(event.get("snapshot"))
        elif kind == "STATE_DELTA":
            try:
                self.state = apply_patch(self.state, event["delta"])
            except PatchError as exc:
                self.out.add("agui.patch-failed", frame, f"the patch does not apply: {exc}")
        elif kind == "RUN_FINISHED":
            still = sorted(self.text | self.reasoning | self.phases | self.tools | self.steps)
            if still:
                return self.fail("agui.open-at-finish", frame, f"still open: {still}")
            self.run = "finished"
        elif kind == "RUN_ERROR":
            self.run = "errored"
        return False

    def _span(self, kind: str, span: str, frame: _Frame) -> bool:
        if kind == "REASONING_START":
            if span in self.phases:
                return self.fail("agui.message-active", frame, f"reasoning span {span!r} is already active")
            self.phases.add(span)
        elif span not in self.phases:
            return self.fail("agui.message-not-active", frame, f"REASONING_END for {span!r}")
        else:
            self.phases.discard(span)
        return False

    def _thinking(self, kind: str, frame: _Frame) -> bool:
        """1.0 turns the deprecated THINKING_* events into REASONING_* ones under ids of its own."""
        if not self.spans_checked:  # 0.0 verifies thinking messages inside a thinking step
            if kind == "THINKING_START":
                self.thinking = "thinking"
            elif kind == "THINKING_END":
                self.thinking = None
            elif kind == "THINKING_TEXT_MESSAGE_START":
                if self.thinking is None:
                    return self.fail("agui.message-not-active", frame, f"{kind} outside THINKING_START/END")
                self.thinking_message = "thinking-message"
            elif self.thinking_message is None:
                return self.fail("agui.message-not-active", frame, f"{kind} without a thinking message")
            elif kind == "THINKING_TEXT_MESSAGE_END":
                self.thinking_message = None
            return False
        if kind == "THINKING_START":
            self.thinking = f"thinking-{self.seen}"
            return self._span("REASONING_START", self.thinking, frame)
        if kind == "THINKING_END":
            return self._span("REASONING_END", self.thinking or "thinking", frame)
        if kind == "THINKING_TEXT_MESSAGE_START":
            self.thinking_message = f"thinking-message-{self.seen}"
            self.reasoning.add(self.thinking_message)
        elif self.thinking_message not in self.reasoning:
            return self.fail("agui.message-not-active", frame, f"{kind} without a thinking message")
        elif kind == "THINKING_TEXT_MESSAGE_END":
            self.reasoning.discard(self.thinking_message)
        return False


def _validate_agui(
    frames: list[_Frame], version: str, history: list[dict[str, Any]], state: Any, out: _Findings
) -> Report:
    verifier = _Verifier(out, history, state, version)
    events: list[dict[str, Any]] = []
    applied: list[dict[str, Any]] = []
    stopped = False
    for frame in frames:
        event = _parse(frame, out)
        if event is None:
            stopped = True
            continue
        events.append(event)
        if _agui_schema(event, version, frame, out):
            stopped = True
            continue
        if stopped:
            continue
        if verifier.feed(event, frame):
            stopped = True
            continue
        applied.append(event)
    if not stopped and verifier.run == "active":
        out.add("seq.terminal-missing", None, "no RUN_FINISHED or RUN_ERROR")
        still = sorted(verifier.text | verifier.reasoning | verifier.phases | verifier.tools | verifier.steps)
        if still:
            out.add("seq.open-at-end", None, f"open at the end: {still}")
    folded = agui.fold(applied, messages=history, state=state)
    known = {m.get("id") for m in history}
    new = [m for m in folded.messages if m.get("id") not in known]
    content = [m.get("content") for m in new if m.get("role") == "assistant"]
    return Report(
        protocol="agui",
        version=version,
        frames=events,
        fold=folded,
        messages=folded.messages,
        tool_calls=[call for m in folded.messages for call in m.get("toolCalls") or ()],
        state=folded.state,
        text="".join(c for c in content if isinstance(c, str)),
        outcome="failed" if stopped else folded.outcome,
        pending_tool_calls=list(folded.pending_tool_call_ids),
    )


# -- the dialect -------------------------------------------------------------------------------------------------

_DSH_FIELDS = {
    dsh.CHUNK: {"content": Field(True, "string")},
    dsh.STEP_BREAK: {
        "callId": Field(True, "string"),
        "toolName": Field(True, "string"),
        "status": Field(True, "string"),
    },
}


def _validate_dsh(frames: list[_Frame], out: _Findings) -> Report:
    parsed: list[dict[str, Any]] = []
    good: list[dict[str, Any]] = []
    terminal = False
    for frame in frames:
        try:
            data = orjson.loads(frame.data)
        except orjson.JSONDecodeError as exc:
            out.add("sse.json-invalid", frame, f"not JSON ({exc})")
            continue
        item = {"event": frame.event, "data": data}
        parsed.append(item)
        if frame.event not in _DSH_EVENTS:
            out.add("dsh.event-unknown", frame, f"event {frame.event!r}")
            continue
        if not isinstance(data, dict):
            out.add("sse.not-object", frame, f"{frame.event} data is a JSON {type(data).__name__}")
            continue
        refused = False
        for name, spec in _DSH_FIELDS.get(frame.event, {}).items():
            if name not in data:
                out.add("schema.field-missing", frame, f"{frame.event} has no {name}")
                refused = True
            elif not _kind_ok(data[name], spec.kind):
                out.add("schema.field-type", frame, f"{frame.event}.{name} should be {spec.kind}")
                refused = True
        if refused:
            continue
        if terminal:
            out.add("dsh.after-terminal", frame, f"{frame.event} after the terminal frame")
            continue
        if frame.event == dsh.CHUNK and data["content"] == "":
            out.add("seq.empty-delta", frame, "a chunk with empty content")
        terminal = frame.event in (dsh.DONE, dsh.ERROR)
        good.append(item)
    if parsed and not terminal:
        out.add("seq.terminal-missing", None, "no done or error frame")
    folded = dsh.fold(good)
    return Report(
        protocol="dsh",
        version="1",
        frames=parsed,
        fold=folded,
        messages=list(folded.messages or []),
        tool_calls=list(folded.tools.values()),
        state=None,
        text=folded.text,
        outcome="done" if folded.done is not None else "error" if folded.error is not None else None,
        pending_tool_calls=[k for k, v in folded.tools.items() if v.get("status") == "started"],
    )


def validate(
    body: bytes | str,
    protocol: str = "aisdk",
    version: int | str | None = None,
    *,
    messages: Iterable[Mapping[str, Any]] | None = None,
    state: Any = None,
) -> Report:
    """Check an SSE ``body`` as the ``protocol`` client of ``version`` reads it; the :class:`Report`.

    ``protocol`` is ``aisdk`` (``version`` the ``ai`` major: 5, 6 or 7, default 7), ``agui`` (``version`` the
    client generation: ``"0.0"`` for ``@ag-ui/client`` 0.0.x, ``"1.0"`` by default) or ``dsh``. ``messages``
    is what the client held before the stream (AG-UI's history; for the AI SDK the last assistant message, if
    it is one, is the message a continuation builds on) and ``state`` the AG-UI state the client held.
    """
    out = _Findings()
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = body.decode("utf-8", errors="replace")
            out.add("sse.json-invalid", None, "the body is not UTF-8")
    else:
        text = body
    history = [dict(m) for m in messages or ()]
    frames = _split(text, protocol, out)
    if not frames:
        out.add("sse.empty", None, "no frame with data")
    if protocol == "aisdk":
        major = 7 if version is None else int(version)
        if major not in AISDK_VERSIONS:
            raise ValueError(f"the AI SDK version must be one of {AISDK_VERSIONS}, not {version!r}")
        last = history[-1] if history and history[-1].get("role") == "assistant" else None
        report = _validate_aisdk(frames, major, last, out)
    elif protocol == "agui":
        report = _validate_agui(frames, agui_version(None if version is None else str(version)), history, state, out)
    else:
        report = _validate_dsh(frames, out)
    report.findings = sorted(out.items, key=lambda f: -1 if f.frame is None else f.frame)
    return report
