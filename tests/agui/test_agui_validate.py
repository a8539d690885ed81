"""Our AG-UI streams through a third-party conformance validator, ``ag-ui-validate`` (PyPI): generated runs,
careful and sloppy, and the every-event run get no error and no warning from it.

Two findings are allowed, both about what the core itself did, and both accepted by the real ``@ag-ui/client``:
AGUI204 (a tool call's concatenated arguments are not JSON) where the core streamed argument text that is not
JSON, or ended the call as invalid (the text is passed on as the core wrote it, and the client keeps it as the
call's arguments); AGUI104 (a message id used again after its end) where the core opens a text or reasoning
block again under an id it has ended (the mapping continues the same message, which the client appends to),
and the AGUI101/AGUI102 that follow from it (the validator does not count that second start as open).
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from ag_ui_validate.pytest_plugin import validate_agui
from hypothesis import HealthCheck, given, settings

from streamkit.events import (
    ChatEvent,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    SequenceChecker,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallArgsDelta,
    ToolCallEnd,
)
from tests.agui.strategies import careful_runs, sloppy_runs
from tests.agui.support import body_of, frames_of
from tests.agui.test_agui_conformance import EMPTY_DELTAS, EVERY_EVENT

pytestmark = pytest.mark.usefixtures("quiet")

_TOOL_ID = re.compile(r"toolCallId '([^']*)'")
_MESSAGE_ID = re.compile(r"messageId '([^']*)'")
_REOPEN_RULES = {"AGUI104", "AGUI101", "AGUI102"}  # the id used again; the validator then counts it as not open


def _invalid_calls(events: list[ChatEvent]) -> set[str]:
    """Tool calls whose arguments the core made invalid: streamed text that is not JSON, or an error end (as
    the checker passes them on: with its renames, without what it drops)."""
    checker = SequenceChecker()
    checked = [out for event in events for out in checker.feed(event)] + checker.close()
    streamed: dict[str, str] = {}
    invalid: set[str] = set()
    for event in checked:
        if isinstance(event, ToolCallArgsDelta):
            streamed[event.id] = streamed.get(event.id, "") + event.delta
        elif isinstance(event, ToolCallEnd) and event.error is not None:
            invalid.add(event.id)
    for call, text in streamed.items():
        try:
            orjson.loads(text)
        except orjson.JSONDecodeError:
            invalid.add(call)
    return invalid


def _reopened(events: list[ChatEvent]) -> set[str]:
    """Text and reasoning ids the core opens again after their end."""
    ended: set[str] = set()
    again: set[str] = set()
    for event in events:
        if isinstance(event, TextEnd | ReasoningEnd):
            ended.add(event.id)
        elif isinstance(event, TextStart | TextDelta | ReasoningStart | ReasoningDelta) and event.id in ended:
            again.add(event.id)
    return again


def findings(events: list[ChatEvent], **options: Any) -> list[str]:
    """The validator's errors and warnings on our stream for ``events``, minus the core's own invalid calls."""
    frames = frames_of(body_of(events, **options))
    report = validate_agui(frames)
    assert report.internal_errors == []
    assert report.event_count == len(frames)
    invalid = _invalid_calls(events)
    reopened = _reopened(events)
    out = []
    for d in report.diagnostics:
        if d.severity not in ("error", "warning"):
            continue
        if d.rule == "AGUI204" and (m := _TOOL_ID.search(d.message)) and m.group(1) in invalid:
            continue
        if d.rule in _REOPEN_RULES and (m := _MESSAGE_ID.search(d.message)) and m.group(1) in reopened:
            continue
        out.append(f"{d.rule} {d.severity} at {d.event_index}: {d.message}")
    return out


def test_every_event_type_passes_the_validator() -> None:
    assert findings(EVERY_EVENT, state={}) == []


def test_empty_deltas_give_no_empty_delta_warning() -> None:
    assert findings(EMPTY_DELTAS, state={}) == []
    report = validate_agui(frames_of(body_of(EMPTY_DELTAS, state={})))
    assert "AGUI105" not in {d.rule for d in report.diagnostics}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(careful_runs())
def test_generated_runs_pass_the_validator(events: list[ChatEvent]) -> None:
    assert findings(events, state={}) == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sloppy_runs)
def test_sloppy_runs_pass_the_validator_once_repaired(events: list[ChatEvent]) -> None:
    assert findings(events, state={}) == []
