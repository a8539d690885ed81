"""Helpers shared by the AG-UI tests: encode a run to bytes, read frames back, run bytes through the real client."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from streamkit import agui
from streamkit.events import ChatEvent
from tests.support.oracle import JsOracle
from tests.support.streams import collect_bytes, parse_agui_sse

HISTORY = [{"id": "h-user", "role": "user", "content": "earlier"}]
"""The client's history before the run, in every conformance test unless said otherwise."""


def body_of(events: Iterable[ChatEvent], **options: Any) -> str:
    """The SSE body ``agui.encode`` writes for ``events`` (thread/run ids default to ``th``/``run``)."""
    options.setdefault("thread_id", "th")
    options.setdefault("run_id", "run")

    return collect_bytes(agui.encode(events, **options)).decode()


frames_of = parse_agui_sse
"""The events of an SSE body (every frame is one ``data:`` line): the suite's AG-UI reader."""


def client_runs(
    js: JsOracle,
    runs: Sequence[dict[str, Any]],
    *,
    messages: Sequence[dict[str, Any]] = HISTORY,
    state: Any = None,
    allow_warnings: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """Run ``runs`` (each ``{"body": ...}`` and more, see ``tests/js/agui.mjs``) through one real ``HttpAgent``."""
    answer = js.call(
        "agui", {"runs": list(runs), "messages": list(messages), "state": {} if state is None else state, **extra}
    )
    assert answer["ok"], answer.get("error")
    if not allow_warnings:
        assert answer["warnings"] == [], answer["warnings"]
    result: dict[str, Any] = answer["result"]
    result["warnings"] = answer["warnings"]
    return result


def client_run(js: JsOracle, body: str, **options: Any) -> dict[str, Any]:
    """One run of ``body`` through the real client; the run's result (messages, state, outcome, events…)."""
    run: dict[str, Any] = client_runs(js, [{"body": body}], **options)["runs"][0]
    assert run["failed"] is None, run["failed"]
    return run


def custom_events(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The CUSTOM events the client delivered, as ``{"name", "value"}``."""
    return [{"name": e["name"], "value": e["value"]} for e in run["events"] if e["type"] == "CUSTOM"]
