"""The rule table of the stream validator: every finding's stable id, its severity and a one-line explanation.

An **error** is what the real client rejects (it fails the stream or the run) or silently loses (a frame or a
field it drops); a **warning** is what the client tolerates although the protocol's spec forbids it, or what
usually shows a server bug without changing what the user sees. Ids are stable: tools and tests may match on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["RULES", "Rule", "Severity", "rule"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Rule:
    """One check: its id, severity, and what the client does when it fails (one line)."""

    id: str
    severity: Severity
    explanation: str


_TABLE: list[tuple[str, Severity, str]] = [
    # framing and JSON
    ("sse.empty", "warning", "The body holds no SSE frame: the client shows an empty answer without a word."),
    ("sse.unterminated", "error", "The last frame has no blank line after it: the client's parser drops it."),
    ("sse.truncated", "warning", "The body is cut inside a frame: the client drops the partial frame."),
    (
        "sse.unterminated-kept",
        "warning",
        "The last frame has no blank line after it: AG-UI reads it anyway.",
    ),
    ("sse.crlf-frames", "error", "AG-UI frames end at \\n\\n only: \\r\\n\\r\\n joins frames, and the client fails."),
    ("sse.stray-line", "warning", "A line that is no SSE field (data:, event:, id:, retry: or a : comment)."),
    ("sse.json-invalid", "error", "The data of a frame is not JSON: the client fails the stream."),
    ("sse.not-object", "error", "The data of a frame is not a JSON object: the client's schema refuses it."),
    (
        "aisdk.done-missing",
        "warning",
        "The UI Message Stream ends with data: [DONE]; the client does without.",
    ),
    # schema
    ("schema.type-missing", "error", "A frame without a string type: the client's schema refuses it."),
    ("schema.type-unknown", "error", "A type no version of the protocol knows: the client refuses or drops it."),
    ("schema.type-not-in-version", "error", "A type this client version does not know: it refuses or drops it."),
    ("schema.field-missing", "error", "A required field is absent: the client's schema refuses the frame."),
    ("schema.field-type", "error", "A field has the wrong JSON type or value: the client's schema refuses the frame."),
    ("schema.field-null", "error", "null in an optional field: the client's schema wants the field absent, not null."),
    (
        "schema.null-tolerated",
        "warning",
        "null in an optional field the client reads as absent (the spec: omit it).",
    ),
    ("schema.unsafe-key", "error", "A __proto__ key: the AI SDK's JSON parser refuses the frame."),
    ("aisdk.field-not-in-version", "error", "A field this ai version does not know: the client ignores it (lost)."),
    ("agui.field-not-in-version", "warning", "A field this AG-UI client does not know: the client removes it."),
    ("schema.field-unknown", "warning", "A field no version of the protocol knows: the client ignores or removes it."),
    ("agui.deprecated-event", "warning", "A deprecated event the client converts (THINKING_* to REASONING_*)."),
    # sequence, both protocols
    (
        "seq.terminal-missing",
        "warning",
        "No terminal frame: the client keeps what came but never hears the end.",
    ),
    ("seq.empty-delta", "warning", "An empty delta: it changes nothing, and the spec wants non-empty deltas."),
    ("seq.open-at-end", "warning", "A block still open when the stream ends: the client shows it as streaming."),
    # AI SDK sequence
    ("aisdk.start-missing", "warning", "No start chunk first: the client makes up the message id itself."),
    ("aisdk.start-repeated", "warning", "A second start chunk: the client merges it into the same message."),
    ("aisdk.part-not-open", "error", "A delta or end for a text or reasoning part that is not open: the client fails."),
    ("aisdk.part-reopened", "warning", "A start for a part id already open: the client starts a second part."),
    ("aisdk.tool-input-not-started", "error", "A tool-input-delta without its tool-input-start: the client fails."),
    ("aisdk.tool-call-unknown", "error", "An output or approval for a tool call the message does not hold: it fails."),
    ("aisdk.approval-unknown", "error", "An approval response for an approval id never requested: the client fails."),
    ("aisdk.client-failure", "error", "The client's stream processor fails on this chunk."),
    ("aisdk.after-finish", "warning", "Content after finish or abort: the client still shows it."),
    ("aisdk.after-error", "error", "Content after an error chunk: the client has stopped reading (lost)."),
    ("aisdk.finish-step-open", "warning", "finish-step with a part open: it stays streaming (ai 5, 6 forget it here)."),
    # AG-UI sequence (the client's verifier)
    ("agui.run-not-started", "error", "The first event is not RUN_STARTED: the client fails the run."),
    ("agui.run-restarted", "error", "RUN_STARTED while the run is active: the client fails the run."),
    ("agui.after-terminal", "error", "An event after RUN_FINISHED or RUN_ERROR: the client fails the run."),
    ("agui.message-not-active", "error", "Content or end for a message that is not active: the client fails the run."),
    ("agui.message-active", "error", "A start for a message or reasoning span already active: the client fails."),
    ("agui.tool-call-not-active", "error", "Args or end for a tool call that is not active: the client fails the run."),
    ("agui.tool-call-active", "error", "TOOL_CALL_START for a call already active: the client fails the run."),
    ("agui.step-active", "error", "STEP_STARTED for a step already active: the client fails the run."),
    ("agui.chunk-without-id", "error", "The first TEXT_MESSAGE_CHUNK or TOOL_CALL_CHUNK has no id: the client fails."),
    ("agui.step-not-started", "error", "STEP_FINISHED for a step never started: the client fails the run."),
    ("agui.open-at-finish", "error", "RUN_FINISHED with a message, tool call or step open: the client fails the run."),
    ("agui.patch-failed", "error", "A STATE_DELTA that does not apply to the client's state: the client drops it."),
    ("agui.result-unknown-call", "warning", "A TOOL_CALL_RESULT for a call this stream never made."),
    # the HTTP response (streamkit check)
    ("http.status", "error", "The endpoint did not answer 2xx: the client shows an error."),
    ("http.no-frame", "error", "The endpoint answered without a single frame: the user sees nothing happen."),
    ("http.content-type", "error", "The response is not text/event-stream: clients and proxies do not stream it."),
    ("http.ui-message-stream", "warning", "An AI SDK stream should say x-vercel-ai-ui-message-stream: v1."),
    ("http.cache-control", "warning", "No Cache-Control: no-cache: a proxy or CDN may cache or hold the stream."),
    ("http.proxy-buffering", "warning", "No X-Accel-Buffering: no: nginx-style proxies buffer the stream by default."),
    ("http.compressed", "warning", "A compressed event stream: compression middleware usually buffers it."),
    ("timing.buffered", "error", "Every frame arrived in one burst at the end: something buffers the stream."),
    ("clients.rejected", "error", "The real client package rejected a body the validator let pass (--clients)."),
    # the dialect
    ("dsh.event-unknown", "warning", "An event name the dialect does not define: a console ignores it."),
    ("dsh.after-terminal", "error", "A frame after done or error: a console has stopped reading (lost)."),
]

RULES: dict[str, Rule] = {rid: Rule(rid, severity, text) for rid, severity, text in _TABLE}
"""Every rule, by id."""


def rule(rule_id: str) -> Rule:
    """The rule with id ``rule_id`` (``KeyError`` for an unknown one)."""
    return RULES[rule_id]
