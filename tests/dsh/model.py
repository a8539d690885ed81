"""What a run of ChatEvents means to a console of the dialect, computed from the (checked) events alone.

The console shows bubbles of text (and, apart, reasoning) split at every tool-call boundary, one card per tool
call with its args and the status it reached, and, at the end, the conversation. A console that listens for
``chunk`` alone shows the answer's text and none of the thinking. This model reads those off the
events the sequence checker lets through, with none of the mapper's code.
"""

from __future__ import annotations

import json
from typing import Any

from streamkit.events import ChatEvent, Message, SequenceChecker, TextPart


def checked(events: list[ChatEvent]) -> list[ChatEvent]:
    checker = SequenceChecker()
    out = [o for e in events for o in checker.feed(e)]
    return out + checker.close()


def _args(text: str, encoding: str | None) -> Any:
    if encoding == "text":
        return text
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _snapshot_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """The text-only messages the generated snapshots hold, as the dialect states them (ids left out)."""
    out = []
    for m in messages:
        m = m if isinstance(m, Message) else Message.model_validate(m)
        assert all(isinstance(p, TextPart) for p in m.parts), "the model knows text-only snapshots"
        out.append({"role": m.role, "content": m.text})
    return out


def meaning(events: list[ChatEvent], history: list[dict[str, Any]]) -> dict[str, Any]:
    """``bubbles`` ([text, reasoning] pairs, empty ones never shown), ``answer`` and ``thinking`` (all the text
    and all the reasoning, in order), ``tools`` (callId -> card), ``messages`` (the conversation, ids left out),
    ``terminal`` ("done" / "error") with its ``finishReason`` / ``message``."""
    bubbles: list[list[str]] = []
    bubble: list[str] | None = None
    tools: dict[str, dict[str, Any]] = {}
    names: dict[str, str] = {}
    streaming: dict[str, tuple[str | None, str]] = {}
    approvals: dict[str, str] = {}
    messages: list[dict[str, Any]] = [{k: v for k, v in m.items() if k != "id"} for m in history]
    turn: dict[str, Any] | None = None
    tool_messages: dict[str, dict[str, Any]] = {}
    out: dict[str, Any] = {"terminal": None}

    def assistant() -> dict[str, Any]:
        nonlocal turn
        if turn is None:
            turn = {"role": "assistant", "content": ""}
            messages.append(turn)
        return turn

    def tool_message(cid: str, status: str, content: Any, **extra: Any) -> None:
        nonlocal turn
        message = tool_messages.get(cid)
        if message is None:
            message = tool_messages[cid] = {"role": "tool", "callId": cid}
            messages.append(message)
        for key in ("error", "denied"):
            message.pop(key, None)
        message.update(toolName=names.get(cid, ""), status=status, content=content, **extra)
        turn = None

    for ev in checked(events):
        t = ev.type
        if t in ("text-delta", "reasoning-delta") and ev.delta:
            if bubble is None:
                bubble = ["", ""]
                bubbles.append(bubble)
            key = "content" if t == "text-delta" else "reasoning"
            bubble[0 if t == "text-delta" else 1] += ev.delta
            a = assistant()
            a[key] = a.get(key, "") + ev.delta
        elif t == "tool-call-start":
            names[ev.id] = ev.name
            streaming[ev.id] = (ev.input_encoding, "")
        elif t == "tool-call-args-delta":
            enc, text = streaming[ev.id]
            streaming[ev.id] = (enc, text + ev.delta)
        elif t == "tool-call-end":
            bubble = None
            enc, text = streaming.pop(ev.id, (None, ""))
            if ev.id not in names:
                names[ev.id] = ev.name or ""
            if ev.input is not None:
                args = ev.input
            elif ev.error is not None and text:
                args = text
            else:
                args = _args(text, enc)
            card = {"callId": ev.id, "toolName": names[ev.id], "args": args, "status": "started"}
            assistant().setdefault("toolCalls", []).append({"callId": ev.id, "toolName": names[ev.id], "args": args})
            if ev.error is not None:
                card.update(status="error", error=ev.error)
                tool_message(ev.id, "error", ev.error, error=ev.error)
            tools[ev.id] = card
        elif t == "tool-result" and not ev.preliminary:
            bubble = None
            card = tools[ev.id]
            for key in ("result", "error", "denied"):
                card.pop(key, None)
            if ev.denied or ev.error is not None:
                text = (ev.error or "The tool call was denied.") if ev.denied else ev.error
                extra = {"denied": True} if ev.denied else {}
                card.update(status="error", error=text, **extra)
                tool_message(ev.id, "error", text, error=text, **extra)
            else:
                card.update(status="done", result=ev.output)
                tool_message(ev.id, "done", ev.output)
        elif t == "tool-approval-request":
            bubble = None
            approvals[ev.id] = ev.tool_call_id
            tools[ev.tool_call_id]["approval"] = {"id": ev.id}
            if ev.reason is not None:
                tools[ev.tool_call_id]["approval"]["reason"] = ev.reason
        elif t == "tool-approval-response" and ev.id in approvals:  # else already answered: nothing shows
            bubble = None
            approval = {"id": ev.id, "approved": ev.approved}
            if ev.reason is not None:
                approval["reason"] = ev.reason
            tools[approvals.pop(ev.id)]["approval"] = approval
        elif t == "file":
            a = assistant()
            file = {"url": ev.url, "mediaType": ev.media_type, **({"reasoning": True} if ev.reasoning else {})}
            a.setdefault("files", []).append(file)
        elif t == "user-message":
            message = {"role": "user", "content": ev.text}
            if ev.files:
                message["files"] = [
                    {"url": f.url, "mediaType": f.media_type, **({"filename": f.filename} if f.filename else {})}
                    for f in ev.files
                ]
            messages.append(message)
            turn = None
        elif t == "messages-snapshot":
            messages[:] = _snapshot_messages(ev.messages)
            tool_messages.clear()
            turn = None
        elif t == "run-finished":
            out["terminal"] = ("done", ev.finish_reason)
        elif t == "run-aborted":
            out["terminal"] = ("done", "aborted")
        elif t == "run-error":
            out["terminal"] = ("error", ev.message)
    answer = "".join(b[0] for b in bubbles)
    thinking = "".join(b[1] for b in bubbles)
    out.update(bubbles=bubbles, answer=answer, thinking=thinking, tools=tools, messages=messages)
    out["pending_approvals"] = sorted(approvals)
    return out
