"""The client's view of a dialect stream: bubbles split at ``step_break``, tool cards, the final messages.

:func:`fold` applies named frames (``{"event", "data"}``, what :class:`~streamkit.dsh.DSHMapper` returns or
:func:`parse_sse` reads from a body) the way a plain-JS console renders them: ``chunk`` text grows the current
bubble's answer and ``reasoning`` text its thinking, shown apart; every ``step_break`` closes the bubble (the
next ``chunk`` or ``reasoning`` opens a new one), the first ``step_break`` of a ``callId`` inserts its tool card
and later ones update it; ``done`` brings the final ``messages``, from which every card's final state is
rebuilt (:func:`cards_from_messages`); ``error`` ends the run with its message. Frames after the terminal one
are ignored, as a console stops reading there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["Bubble", "Folded", "cards_from_messages", "fold", "parse_sse"]

Card = dict[str, Any]
_CARD_KEYS = ("result", "error", "denied", "approval")


def parse_sse(body: bytes | str) -> list[dict[str, Any]]:
    """The named frames of an SSE body: ``{"event": name, "data": value}`` (``message`` when unnamed);
    comments (heartbeats) are skipped."""
    text = body.decode() if isinstance(body, bytes) else body
    frames: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event = "message"
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
        if data:
            frames.append({"event": event, "data": orjson.loads("\n".join(data))})
    return frames


@dataclass
class Bubble:
    """One bubble of the assistant's answer: the text between two ``step_break``\\ s (and its reasoning)."""

    text: str = ""
    reasoning: str = ""


@dataclass
class Folded:
    """What the console shows once the stream ended.

    ``timeline`` is the page top to bottom: ``("bubble", index)`` and ``("tool", callId)`` entries. ``tools``
    holds each card (``callId``, ``toolName``, ``args``, ``status``, ``result``/``error``/``denied``,
    ``approval``), rebuilt from ``done.messages`` at the end; ``streamed_tools`` the cards as the
    ``step_break``\\ s left them. ``done`` / ``error`` are the terminal frame's data (None if there was none).
    """

    meta: dict[str, Any] | None = None
    bubbles: list[Bubble] = field(default_factory=list)
    tools: dict[str, Card] = field(default_factory=dict)
    streamed_tools: dict[str, Card] = field(default_factory=dict)
    timeline: list[tuple[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] | None = None
    done: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    step_breaks: int = 0

    @property
    def finished(self) -> bool:
        """True once a terminal frame (``done`` or ``error``) arrived."""
        return self.done is not None or self.error is not None

    @property
    def text(self) -> str:
        """The answer's text, every bubble in order."""
        return "".join(b.text for b in self.bubbles)

    def answer(self) -> dict[str, Any]:
        """The whole run as one JSON object: what the blocking ``POST {path}/message`` answers (``toolCalls``:
        this run's cards, in their final state)."""
        out: dict[str, Any] = {
            "meta": self.meta,
            "content": self.text,
            "bubbles": [{"text": b.text, **({"reasoning": b.reasoning} if b.reasoning else {})} for b in self.bubbles],
            "toolCalls": [self.tools.get(k, v) for k, v in self.streamed_tools.items()],
        }
        if self.done is not None:
            out["done"] = self.done
        if self.error is not None:
            out["error"] = self.error
        return out


def cards_from_messages(messages: Iterable[Mapping[str, Any]]) -> dict[str, Card]:
    """Every tool card's final state from ``done.messages``: a call with no ``tool`` message is ``started``."""
    cards: dict[str, Card] = {}
    for m in messages:
        if m.get("role") == "assistant":
            for call in m.get("toolCalls") or ():
                cards[call["callId"]] = {
                    "callId": call["callId"],
                    "toolName": call.get("toolName", ""),
                    "args": call.get("args"),
                    "status": "started",
                }
        elif m.get("role") == "tool":
            card = cards.setdefault(
                m["callId"], {"callId": m["callId"], "toolName": m.get("toolName", ""), "args": None}
            )
            card["status"] = m.get("status", "done")
            for key in _CARD_KEYS:
                card.pop(key, None)
            if card["status"] == "error":
                card["error"] = m.get("error", m.get("content"))
                if m.get("denied"):
                    card["denied"] = True
            else:
                card["result"] = m.get("content")
    return cards


def fold(frames: Iterable[Mapping[str, Any]]) -> Folded:
    """Apply the dialect's named frames the way the console does (see the module)."""
    out = Folded()
    current: Bubble | None = None
    for frame in frames:
        if out.finished:
            break
        name, data = frame["event"], frame["data"]
        if name == "meta":
            out.meta = dict(data)
        elif name == "chunk" or name == "reasoning":
            if current is None:
                current = Bubble()
                out.timeline.append(("bubble", len(out.bubbles)))
                out.bubbles.append(current)
            if name == "reasoning":
                current.reasoning += data["content"]
            else:
                current.text += data["content"]
        elif name == "step_break":
            out.step_breaks += 1
            current = None
            call_id = data["callId"]
            card = out.streamed_tools.get(call_id)
            if card is None:
                card = out.streamed_tools[call_id] = {"callId": call_id}
                out.timeline.append(("tool", call_id))
            card.update(toolName=data["toolName"], args=data.get("args"), status=data["status"])
            if data["status"] != "started":
                for key in ("result", "error", "denied"):
                    card.pop(key, None)
            for key in _CARD_KEYS:
                if key in data:
                    card[key] = data[key]
        elif name == "done":
            out.done = dict(data)
            out.messages = list(data.get("messages") or [])
        elif name == "error":
            out.error = dict(data)
    out.tools = {k: dict(v) for k, v in out.streamed_tools.items()}
    if out.messages is not None:
        for call_id, card in cards_from_messages(out.messages).items():
            approval = out.tools.get(call_id, {}).get("approval")
            out.tools[call_id] = {**card, **({"approval": approval} if approval is not None else {})}
    return out
