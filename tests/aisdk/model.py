"""Test oracles written from the spec, independent of the mapper:

* :func:`check_invariants` checks a chunk stream against spec section 5.2 and the version tables of
  section 9 (schema fields per major, required fields, no ``null`` optional fields, no refused keys; the
  schemas are the real clients', :mod:`streamkit.testing.schemas`);
* :func:`meaning` says what a (checked) ChatEvent sequence means for the final message, and
  :func:`observed` reads the same things out of a folded ``UIMessage``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import orjson

from streamkit.events import ChatEvent, SequenceChecker
from streamkit.testing.schemas import AISDK_CHUNKS

# The chunk schemas of the real clients (ai 5.0.277, 6.0.326 and 7.0.173), as the validator holds them: the
# required fields per chunk type (spec section 4), the allowed types per major and the fields a major lacks
# (spec section 9.2: its "no" and "no*" cells), and the finish reasons each major knows.
_SCHEMAS = {v: {t: f for t, f in types.items() if t != "data-*"} for v, types in AISDK_CHUNKS.items()}
REQUIRED: dict[str, set[str]] = {
    t: {name for name, spec in fields.items() if spec.required}
    for types in _SCHEMAS.values()
    for t, fields in types.items()
}
ANY_JSON = {"input", "output", "data", "messageMetadata"}
INVALID_INPUT = "The tool call's input is not valid JSON."
DENIED = "The tool call was denied."
DISCARDED = "The tool call was discarded with its step."
ALLOWED_TYPES = {v: set(types) for v, types in _SCHEMAS.items()}
MISSING_FIELDS = {
    v: {t: set(_SCHEMAS[7][t]) - set(fields) for t, fields in types.items() if set(_SCHEMAS[7][t]) - set(fields)}
    for v, types in _SCHEMAS.items()
}
FINISH = {
    v: set(types["finish"]["finishReason"].kind.removeprefix("enum:").split(",")) for v, types in _SCHEMAS.items()
}


def _unsafe_keys(value: Any) -> bool:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "__proto__" or (k == "constructor" and isinstance(v, dict) and "prototype" in v):
                return True
            if _unsafe_keys(v):
                return True
    elif isinstance(value, list):
        return any(_unsafe_keys(v) for v in value)
    return False


def split_frames(body: bytes) -> list[dict[str, Any]]:
    """Check the SSE framing (rules 1 and 18) and return the chunks."""
    assert body.endswith(b"data: [DONE]\n\n"), body[-80:]
    frames = body.split(b"\n\n")
    assert frames[-1] == b"" and frames[-2] == b"data: [DONE]"
    chunks = []
    for raw in frames[:-2]:
        if raw.startswith(b":"):
            continue  # a heartbeat comment
        assert raw.startswith(b"data: ") and b"\n" not in raw and b"\r" not in raw, raw
        chunks.append(orjson.loads(raw[6:]))
    return chunks


def check_invariants(
    chunks: list[dict[str, Any]],
    *,
    sdk_version: int = 7,
    message_id: str | None = None,
    known_tool_calls: tuple[str, ...] = (),
    known_approvals: tuple[str, ...] = (),
) -> None:
    """Assert the rules of spec section 5.2 (and the schema of ``sdk_version``'s client) on ``chunks``."""
    text: set[str] = set()
    reasoning: set[str] = set()
    inputs: set[str] = set()
    tools: dict[str, tuple[str, bool]] = {t: ("", False) for t in known_tool_calls}
    approvals = set(known_approvals)
    step_tools: set[str] = set()  # tool parts after the last start-step (what a reset-step drops)
    starts: list[dict[str, Any]] = []
    for n, chunk in enumerate(chunks):
        where = f"chunk {n}: {chunk}"
        kind = chunk["type"]
        assert isinstance(kind, str)
        assert not _unsafe_keys(chunk), where
        # rule 2: the schema of the client
        if kind.startswith("data-"):
            assert set(chunk) - {"type"} <= {"id", "data", "transient"}, where
            assert "data" in chunk, where
            for key in ("id", "transient"):
                assert key not in chunk or chunk[key] is not None, where
            if kind == "data-state":
                assert chunk.get("id") == "state", where
        else:
            assert kind in ALLOWED_TYPES[sdk_version], where
            assert REQUIRED[kind] <= set(chunk), where
            missing = MISSING_FIELDS[sdk_version].get(kind, set())
            assert not (set(chunk) & missing), where
            for key, value in chunk.items():
                if value is None:
                    assert key in ANY_JSON and key in REQUIRED[kind], where
        if kind == "finish" and "finishReason" in chunk:
            assert chunk["finishReason"] in FINISH[sdk_version], where
        # rule 14: nothing after error
        assert n == len(chunks) - 1 or kind != "error", where
        if kind == "start":
            starts.append(chunk)
        elif kind in ("text-start", "reasoning-start"):
            opened = text if kind == "text-start" else reasoning
            assert chunk["id"] not in opened, where  # rule 5
            opened.add(chunk["id"])
        elif kind in ("text-delta", "reasoning-delta"):
            assert chunk["id"] in (text if kind == "text-delta" else reasoning), where  # rules 3, 4
        elif kind in ("text-end", "reasoning-end"):
            opened = text if kind == "text-end" else reasoning
            assert chunk["id"] in opened, where
            opened.discard(chunk["id"])
        elif kind == "finish-step":
            assert not text and not reasoning, where  # rule 6
        elif kind == "start-step":
            step_tools.clear()
        elif kind == "reset-step":  # the client forgets open ids and drops the step's parts
            text.clear()
            reasoning.clear()
            inputs.clear()
            for tid in step_tools:
                tools.pop(tid, None)
            step_tools.clear()
        elif kind == "tool-input-start":
            tid = chunk["toolCallId"]
            inputs.add(tid)
            step_tools.add(tid)
            tools[tid] = (chunk["toolName"], bool(chunk.get("dynamic")))
        elif kind == "tool-input-delta":
            assert chunk["toolCallId"] in inputs, where  # rules 7, 11
        elif kind in ("tool-input-available", "tool-input-error"):
            tid = chunk["toolCallId"]
            if tid in tools and tools[tid][0]:
                assert tools[tid] == (chunk["toolName"], bool(chunk.get("dynamic"))), where  # rule 10
            else:
                step_tools.add(tid)
            tools[tid] = (chunk["toolName"], bool(chunk.get("dynamic")))
            inputs.discard(tid)
        elif kind in ("tool-output-available", "tool-output-error", "tool-output-denied"):
            tid = chunk["toolCallId"]
            assert tid in tools, where  # rule 8
            if sdk_version == 5 and tools[tid][1]:
                assert chunk.get("dynamic") is True, where  # rule 10, v5
        elif kind == "tool-approval-request":
            assert chunk["toolCallId"] in tools, where
            approvals.add(chunk["approvalId"])
        elif kind == "tool-approval-response":
            assert chunk["approvalId"] in approvals, where  # rule 9
        elif kind == "finish":
            assert not text and not reasoning and not inputs, where  # rule 16
    # rule 12, 13: one start, the expected id
    assert len(starts) == 1, starts
    if message_id is not None:
        assert starts[0].get("messageId") == message_id
    assert chunks[0]["type"] == "start"
    # rule 15: the run ends with finish, error or abort
    assert chunks[-1]["type"] in ("finish", "error", "abort"), chunks[-1]


# -- what a run means -------------------------------------------------------------------------------


def norm(value: Any) -> Any:
    """A payload as the client holds it: keys it refuses removed, numbers as JSON numbers."""
    if isinstance(value, dict):
        return {
            k: norm(v)
            for k, v in value.items()
            if not (k == "__proto__" or (k == "constructor" and isinstance(v, dict) and "prototype" in v))
        }
    if isinstance(value, list):
        return [norm(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
        return float(value)  # JavaScript prints such doubles with other digits than Python
    return value


@dataclass
class Meaning:
    """What a run leaves in the assistant message, and how it ends."""

    texts: list[str] = field(default_factory=list)
    citations: list[list[str] | None] = field(default_factory=list)  # per text part: the cited source ids
    reasoning: list[str] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: list[tuple[str, Any, Any]] = field(default_factory=list)
    sources: list[tuple[str, str, Any]] = field(default_factory=list)
    files: list[tuple[str, str, str]] = field(default_factory=list)
    custom: list[str] = field(default_factory=list)
    steering: list[tuple[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = None
    message_id: str | None = None


def _set_data(meaning: Meaning, kind: str, pid: Any, data: Any) -> None:
    if pid is not None:
        for i, (k, p, _) in enumerate(meaning.data):
            if k == kind and p == pid:
                meaning.data[i] = (k, p, data)
                return
    meaning.data.append((kind, pid, data))


def meaning(events: list[ChatEvent], *, sdk_version: int = 7, state: Any = None) -> Meaning:
    """What ``events`` mean for the message, after the sequence checker's repairs.

    Documented mapping rules this relies on: a text or reasoning part still open when its (outermost) step
    ends is closed there and continues in a new part; a step that starts while a tool input streams joins
    the current step; tool input is ``ToolCallEnd.input``, else the parsed argument text (``{}`` when
    empty; the raw text and an error when it is not JSON; the text as it is with ``input_encoding="text"``).
    A ``StepReset`` drops, on 7, what the current step added (everything, in a run that has had no step),
    and keeps the state part; between steps, and before 7, it ends what is open and drops nothing.
    Citations are on the text part on 7, else source parts (once per source id).
    """
    checker = SequenceChecker()
    checked: list[ChatEvent] = []
    for ev in events:
        checked += checker.feed(ev)
    checked += checker.close()
    m = Meaning()
    text_open: dict[str, int] = {}
    reasoning_open: dict[str, int] = {}
    args: dict[str, str] = {}
    streaming: set[str] = set()
    approvals: dict[str, str] = {}
    current_state: Any = {} if state is None else state
    state_sent = False
    text_input: set[str] = set()
    discarded: set[str] = set()
    sent_sources: set[str] = set()
    depth = 0
    in_step = False
    stepped = False
    mark: dict[str, Any] = {}  # what the message held when the current step began

    def take_mark() -> None:
        mark.update(
            texts=len(m.texts), reasoning=len(m.reasoning), tools=set(m.tools), data=len(m.data),
            sources=len(m.sources), files=len(m.files), custom=len(m.custom), steering=len(m.steering),
        )  # fmt: skip

    def source(src: Any) -> None:
        sent_sources.add(src.id)
        m.sources.append((src.id, src.url or "", src.title if src.url else src.title or src.filename or src.id))

    def end_tool(tid: str, name: Any, error: Any, value: Any) -> None:
        tool = m.tools.setdefault(tid, {"name": name, "dynamic": False})
        streaming.discard(tid)
        if value is None:
            text = args.get(tid, "")
            if tid in text_input:
                value = text
            elif not text.strip():
                value = {}
            else:
                try:
                    value = orjson.loads(text)
                except orjson.JSONDecodeError:
                    value = text
                    error = error or INVALID_INPUT
        tool["input"] = norm(value)
        tool["state"] = "output-error" if error is not None else "input-available"
        if error is not None:
            tool["errorText"] = error
            # clients before 7 keep an invalid static call's input as rawInput, and lose it on output
            tool["raw"] = sdk_version < 7 and not tool.get("dynamic")

    take_mark()
    for ev in checked:
        t = ev.type
        if t == "run-started":
            m.message_id = ev.message_id  # type: ignore[union-attr]
        elif t == "step-started":
            depth += 1
            if depth == 1 and not in_step and not streaming:
                in_step = stepped = True
                take_mark()
        elif t == "step-finished":
            depth = max(depth - 1, 0)
            if depth == 0 and in_step:
                in_step = False
                text_open.clear()
                reasoning_open.clear()
        elif t in ("text-start", "text-delta"):
            if ev.id not in text_open:  # type: ignore[union-attr]
                text_open[ev.id] = len(m.texts)  # type: ignore[union-attr]
                m.texts.append("")
                m.citations.append(None)
            if t == "text-delta":
                m.texts[text_open[ev.id]] += ev.delta  # type: ignore[union-attr]
        elif t == "text-end":
            at = text_open.pop(ev.id, None)  # type: ignore[union-attr]
            cited = ev.citations or []  # type: ignore[union-attr]
            if at is not None and cited and sdk_version >= 7:
                m.citations[at] = [c.source.id for c in cited]
            elif cited:  # before 7, or the part already ended at its step's end: source parts
                for c in cited:
                    if c.source.id not in sent_sources:
                        source(c.source)
        elif t in ("reasoning-start", "reasoning-delta"):
            if ev.id not in reasoning_open:  # type: ignore[union-attr]
                reasoning_open[ev.id] = len(m.reasoning)  # type: ignore[union-attr]
                m.reasoning.append("")
            if t == "reasoning-delta":
                m.reasoning[reasoning_open[ev.id]] += ev.delta  # type: ignore[union-attr]
        elif t == "reasoning-end":
            reasoning_open.pop(ev.id, None)  # type: ignore[union-attr]
        elif t == "tool-call-start":
            m.tools[ev.id] = {"name": ev.name, "dynamic": ev.dynamic, "state": "input-streaming"}  # type: ignore[union-attr]
            args[ev.id] = ""  # type: ignore[union-attr]
            streaming.add(ev.id)  # type: ignore[union-attr]
            if ev.input_encoding == "text":  # type: ignore[union-attr]
                text_input.add(ev.id)  # type: ignore[union-attr]
        elif t == "tool-call-args-delta":
            args[ev.id] += ev.delta  # type: ignore[union-attr]
        elif t == "tool-call-end":
            end_tool(ev.id, ev.name, ev.error, ev.input)  # type: ignore[union-attr]
        elif t == "step-reset":
            text_open.clear()
            reasoning_open.clear()
            if sdk_version >= 7 and (in_step or not stepped):  # the client drops the step's parts
                del m.texts[mark["texts"] :], m.citations[mark["texts"] :], m.reasoning[mark["reasoning"] :]
                del m.data[mark["data"] :], m.sources[mark["sources"] :], m.files[mark["files"] :]
                del m.custom[mark["custom"] :], m.steering[mark["steering"] :]
                for tid in [tid for tid in m.tools if tid not in mark["tools"]]:
                    del m.tools[tid]
                    discarded.add(tid)
                streaming.clear()
                if state_sent:
                    _set_data(m, "data-state", "state", norm(current_state))
            else:
                for tid in list(streaming):
                    end_tool(tid, None, DISCARDED, None)
        elif t == "tool-approval-request":
            if ev.tool_call_id in discarded:  # type: ignore[union-attr]
                continue
            approvals[ev.id] = ev.tool_call_id  # type: ignore[union-attr]
            if sdk_version >= 6:
                m.tools[ev.tool_call_id]["state"] = "approval-requested"  # type: ignore[union-attr]
            else:
                _set_data(m, "data-tool-approval", ev.id, None)  # type: ignore[union-attr]
        elif t == "tool-approval-response":
            if approvals.get(ev.id) in discarded:  # type: ignore[union-attr]
                continue
            if sdk_version >= 7:
                tid = approvals.get(ev.id)  # type: ignore[union-attr]
                if tid in m.tools:
                    m.tools[tid]["state"] = "approval-responded"
            elif sdk_version == 5:
                _set_data(m, "data-tool-approval", ev.id, None)  # type: ignore[union-attr]
        elif t == "tool-result":
            if ev.id in discarded:  # type: ignore[union-attr]
                continue
            tool = m.tools.setdefault(ev.id, {})  # type: ignore[union-attr]
            if ev.denied and sdk_version >= 6:  # type: ignore[union-attr]
                tool["state"] = "output-denied"  # the client changes the state only
                continue
            tool.pop("output", None)
            tool.pop("errorText", None)
            if ev.denied:  # type: ignore[union-attr]
                tool["state"] = "output-error"
                tool["errorText"] = ev.error or DENIED  # type: ignore[union-attr]
            elif ev.error is not None:  # type: ignore[union-attr]
                tool["state"] = "output-error"
                tool["errorText"] = ev.error  # type: ignore[union-attr]
            else:
                tool["state"] = "output-available"
                tool["output"] = norm(ev.output)  # type: ignore[union-attr]
                if tool.get("raw"):
                    tool.pop("input", None)
        elif t in ("state-snapshot", "state-update"):
            current_state = ev.state  # type: ignore[union-attr]
            state_sent = True
            _set_data(m, "data-state", "state", norm(current_state))
        elif t == "state-delta":
            try:
                current_state = jsonpatch.apply_patch(current_state, ev.patch)  # type: ignore[union-attr]
            except Exception:
                continue
            state_sent = True
            _set_data(m, "data-state", "state", norm(current_state))
        elif t == "data":
            if not ev.transient:  # type: ignore[union-attr]
                _set_data(m, f"data-{ev.name}", ev.id, norm(ev.data))  # type: ignore[union-attr]
        elif t == "source":
            source(ev)
        elif t == "file":
            kind = "reasoning-file" if ev.reasoning and sdk_version >= 7 else "file"  # type: ignore[union-attr]
            m.files.append((kind, ev.media_type, ev.url))  # type: ignore[union-attr]
        elif t == "provider-part":
            if sdk_version >= 7:
                m.custom.append(ev.kind)  # type: ignore[union-attr]
        elif t == "user-message":
            if sdk_version >= 7:
                parts: list[Any] = [{"type": "text", "text": ev.text}] if ev.text or not ev.files else []  # type: ignore[union-attr]
                parts += [
                    {"type": "file", "mediaType": f.media_type, "url": f.url}
                    | ({"filename": f.filename} if f.filename is not None else {})
                    for f in ev.files or ()  # type: ignore[union-attr]
                ]
                m.steering.append((ev.id, parts))  # type: ignore[union-attr]
        elif t == "run-finished":
            for interrupt in ev.interrupts or ():  # type: ignore[union-attr]
                _set_data(m, "data-interrupt", interrupt.id, None)
            reason = "interrupted" if ev.interrupts else ev.finish_reason  # type: ignore[union-attr]
            m.finish_reason = reason if reason != "interrupted" or sdk_version >= 7 else "other"
        elif t == "run-error":
            m.error = ev.message  # type: ignore[union-attr]
    return m


def observed(message: dict[str, Any], *, finish_reason: str | None = None, error: str | None = None) -> Meaning:
    """The same things read out of a folded ``UIMessage``."""
    m = Meaning(message_id=message.get("id"), finish_reason=finish_reason, error=error)
    for part in message["parts"]:
        kind = part["type"]
        if kind == "text":
            m.texts.append(part["text"])
            cited = part.get("citations")
            m.citations.append(None if cited is None else [c["source"]["id"] for c in cited])
        elif kind == "reasoning":
            m.reasoning.append(part["text"])
        elif kind.startswith("tool-") or kind == "dynamic-tool":
            tool: dict[str, Any] = {
                "name": part["toolName"] if kind == "dynamic-tool" else kind[5:],
                "dynamic": kind == "dynamic-tool",
                "state": part["state"],
            }
            for key in ("input", "output", "errorText"):
                if key in part:
                    tool[key] = norm(part[key])
            if "input" not in part and part["state"] != "input-streaming" and "rawInput" in part:
                tool["input"] = norm(part["rawInput"])  # clients before 7 keep an invalid call's input there
            m.tools[part["toolCallId"]] = tool
        elif kind.startswith("data-"):
            data = norm(part.get("data")) if kind not in ("data-interrupt", "data-tool-approval") else None
            m.data.append((kind, part.get("id"), data))
        elif kind == "source-url":
            m.sources.append((part["sourceId"], part["url"], part.get("title")))
        elif kind == "source-document":
            m.sources.append((part["sourceId"], "", part["title"]))
        elif kind in ("file", "reasoning-file"):
            m.files.append((kind, part["mediaType"], part["url"]))
        elif kind == "custom":
            m.custom.append(part["kind"])
        elif kind == "steering-message":
            m.steering.append((part["id"], part["parts"]))
    return m


def comparable(m: Meaning) -> dict[str, Any]:
    """``m`` as a dict for equality (tool details that depend on the client's merge rules left out)."""
    tools = {}
    for tid, tool in m.tools.items():
        entry = {k: tool[k] for k in ("name", "dynamic", "state", "input", "output", "errorText") if k in tool}
        tools[tid] = entry
    return {
        "texts": m.texts,
        "citations": m.citations,
        "reasoning": m.reasoning,
        "tools": tools,
        "data": m.data,
        "sources": m.sources,
        "files": m.files,
        "custom": m.custom,
        "steering": m.steering,
        "finish_reason": m.finish_reason,
        "error": m.error,
    }
