"""Agreement of the validator with the real clients: bodies from the conformance suites' generated runs, their
mutations, and what the real client (tests/js through the node oracle) makes of a body.

The AI SDK client is the Chat behind ``useChat`` (``readUIMessageStream`` alone starts a new message at a
``start`` chunk with another id, the Chat does not). The client's verdict is "error" when it rejects the stream
(an error that is not the body's own ``error`` chunk or ``RUN_ERROR``, a failed run) or shows something else
than the body's frames say (a last frame it never read, frames after an ``error`` chunk the Chat stopped at;
an event it dropped; a state patch it dropped).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson
from hypothesis import strategies as st

from streamkit import aisdk
from streamkit.events import ChatEvent
from streamkit.testing import validate
from streamkit.testing.schemas import AGUI_EVENTS, AISDK_CHUNKS
from tests.agui.strategies import careful_runs, sloppy_runs
from tests.agui.support import HISTORY, body_of
from tests.aisdk.strategies import chat_events
from tests.support.oracle import JsOracle
from tests.support.streams import collect_bytes

AGUI_STATE = {"seed": [1, True]}
MUTATIONS = ("none", "drop", "duplicate", "swap", "id", "null", "remove", "rename", "type", "cut")
_ID_KEYS = ("id", "toolCallId", "messageId", "approvalId", "stepName")


def aisdk_body(events: list[ChatEvent], version: int) -> str:
    """The body ``streamkit.aisdk.encode`` writes for ``events`` for the ``ai`` major ``version``."""
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    return collect_bytes(aisdk.encode(events, sdk_version=version)).decode()


def agui_body(events: list[ChatEvent], version: str) -> str:
    """The body ``streamkit.agui.encode`` writes for ``events`` for the client generation ``version``."""
    logging.getLogger("streamkit").setLevel(logging.ERROR)
    return body_of(
        events,
        state=AGUI_STATE,
        reserved_ids=[m["id"] for m in HISTORY],
        protocol_version="1.0" if version == "1.0" else None,
    )


def _blocks(body: str) -> list[str]:
    return [b for b in body.split("\n\n") if b]


def _join(blocks: list[str]) -> str:
    return "".join(b + "\n\n" for b in blocks)


def _other_type(protocol: str, version: Any, draw: st.DrawFn) -> str:
    if protocol == "aisdk":
        known = set(AISDK_CHUNKS[version])
        others = sorted({t for v in AISDK_CHUNKS.values() for t in v} - known - {"data-*"})
    else:
        known = set(AGUI_EVENTS[version])
        others = sorted({t for v in AGUI_EVENTS.values() for t in v} - known)
    return draw(st.sampled_from([*others, "bogus-type" if protocol == "aisdk" else "BOGUS_TYPE"]))


@st.composite
def mutated(draw: st.DrawFn, body: str, protocol: str, version: Any) -> tuple[str, str]:
    """``body`` changed by one mutation (the mutation's name and the new body)."""
    kind = draw(st.sampled_from(MUTATIONS))
    blocks = _blocks(body)
    data = [i for i, b in enumerate(blocks) if b.startswith("data: {")]
    if kind == "none" or not data:
        return "none", body
    if kind == "cut":
        return kind, body[: draw(st.integers(0, max(len(body) - 1, 0)))]
    at = draw(st.sampled_from(data))
    if kind == "drop":
        return kind, _join(blocks[:at] + blocks[at + 1 :])
    if kind == "duplicate":
        return kind, _join(blocks[: at + 1] + blocks[at:])
    if kind == "swap":
        other = draw(st.sampled_from(data))
        blocks[at], blocks[other] = blocks[other], blocks[at]
        return kind, _join(blocks)
    frame: dict[str, Any] = orjson.loads(blocks[at][6:])
    fields = [k for k in frame if k != "type"]
    if kind == "id":
        ids = [k for k in _ID_KEYS if k in frame]
        if not ids:
            return "none", body
        frame[draw(st.sampled_from(ids))] = "changed-id"
    elif kind == "type":
        frame["type"] = _other_type(protocol, version, draw)
    elif not fields:
        return "none", body
    else:
        name = draw(st.sampled_from(fields))
        if kind == "null":
            frame[name] = None
        elif kind == "remove":
            del frame[name]
        else:
            frame[name + "X"] = frame.pop(name)
    blocks[at] = "data: " + orjson.dumps(frame).decode()
    return kind, _join(blocks)


def aisdk_bodies(version: int) -> st.SearchStrategy[str]:
    """AI SDK bodies of generated runs (well-formed and sloppy) for ``version``."""
    return chat_events.map(lambda events: aisdk_body(events, version))


def agui_bodies(version: str) -> st.SearchStrategy[str]:
    """AG-UI bodies of generated runs (careful and sloppy) for ``version``."""
    return st.one_of(careful_runs(), sloppy_runs).map(lambda events: agui_body(events, version))


def _complete_frames(body: str, separator: str) -> list[dict[str, Any] | None]:
    parts = body.replace("\r\n", "\n").split(separator) if separator == "\n\n" else body.split(separator)
    frames: list[dict[str, Any] | None] = []
    for n, block in enumerate(parts):
        lines = [line for line in block.split("\n") if line.startswith("data:")]
        data = [line[6:] if line.startswith("data: ") else line[5:] for line in lines]
        if not data or "\n".join(data) == "[DONE]":
            continue
        try:
            frames.append(orjson.loads("\n".join(data)))
        except orjson.JSONDecodeError:
            if n < len(parts) - 1:  # a cut-off last frame says nothing
                frames.append(None)
    return frames


def aisdk_client_error(js: JsOracle, body: str, version: int) -> tuple[bool, str]:
    """Whether the real ``ai`` client of ``version`` (the Chat behind ``useChat``) rejects ``body`` or shows
    less than its frames say (a last frame it never read: counted by the transport's own parser)."""
    answer = js.call("aisdk", {"body": body, "version": version})
    assert answer["ok"], answer.get("error")
    error = answer["result"]["error"]
    frames = _complete_frames(body, "\n\n")
    own = next((f.get("errorText") for f in frames if f and f.get("type") == "error"), None)
    if error is not None and error["message"] != own:
        return True, "rejected: " + error["message"][:200]
    at = next((i for i, f in enumerate(frames) if f and f.get("type") == "error"), len(frames))
    if error is not None and at < len(frames) - 1:
        return True, "stopped at the error chunk: later frames never shown"
    if not body.endswith("\n\n") and frames:
        read = js.call("aisdk", {"body": body, "version": version, "client": "read"})["result"]
        if read["error"] is None and len(read["chunks"] or []) < len(frames):
            return True, f"read {len(read['chunks'] or [])} of {len(frames)} frames"
    return False, "accepted"


def agui_client_error(js: JsOracle, body: str, version: str) -> tuple[bool, str]:
    """Whether the real ``@ag-ui/client`` of ``version`` fails the run or drops what the body says."""
    answer = js.call(
        "agui",
        {"runs": [{"body": body}], "messages": HISTORY, "state": AGUI_STATE, "client": version},
    )
    assert answer["ok"], answer.get("error")
    run = answer["result"]["runs"][0]
    own = next((e.get("message") for e in _complete_frames(body, "\n\n") if e and e.get("type") == "RUN_ERROR"), None)
    if run["failed"] is not None and run["failed"] != own:
        return True, "failed: " + run["failed"][:200]
    for warning in answer["warnings"]:
        if "Failed to apply state patch" in warning or "Dropping unrecognised event" in warning:
            return True, warning[:200]
    return False, "accepted"


@dataclass
class Verdict:
    """The engine's and the client's verdict on one body."""

    protocol: str
    version: Any
    mutation: str
    body: str
    engine: bool
    client: bool
    why: str
    rules: set[str]

    @property
    def agrees(self) -> bool:
        """True when both say error, or neither does."""
        return self.engine is self.client


def judge(js: JsOracle, protocol: str, version: Any, mutation: str, body: str) -> Verdict:
    """Both verdicts on ``body``."""
    if protocol == "aisdk":
        report = validate(body, "aisdk", version)
        client, why = aisdk_client_error(js, body, version)
    else:
        report = validate(body, "agui", version, messages=HISTORY, state=AGUI_STATE)
        client, why = agui_client_error(js, body, version)
    return Verdict(protocol, version, mutation, body, not report.ok, client, why, {f.rule for f in report.errors})
