"""The validator says "error" exactly when the real client rejects a body or shows something else than its
frames say: generated runs of the conformance suites (well-formed, careful and sloppy, every client version the
suite runs) and one mutation of each (a frame dropped, duplicated or swapped, an id changed, a field set to null,
removed or renamed, a type the version does not know, the body cut short), through the real clients.

A body with no frame at all (cut before its first one) is a warning (``sse.empty``): the client shows an empty
answer and reports nothing; ``streamkit check`` calls an endpoint that answers no frame an error of its own
(``http.no-frame``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.oracle import JsOracle
from tests.testing.agreement import agui_bodies, aisdk_bodies, judge, mutated

KNOWN: set[str] = set()
"""Rules whose verdict differs from the client's on purpose: none."""

_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _agree(js: JsOracle, protocol: str, version: Any, data: st.DataObject) -> None:
    body = data.draw(aisdk_bodies(version) if protocol == "aisdk" else agui_bodies(version), label="body")
    mutation, changed = data.draw(mutated(body, protocol, version), label="mutation")
    verdict = judge(js, protocol, version, mutation, changed)
    if not verdict.agrees and verdict.engine and verdict.rules <= KNOWN:
        return
    assert verdict.agrees, (mutation, verdict.engine, sorted(verdict.rules), verdict.why, changed)


@pytest.mark.parametrize("version", [5, 6, 7])
@_SETTINGS
@given(data=st.data())
def test_the_validator_agrees_with_the_ai_client(js: JsOracle, version: int, data: st.DataObject) -> None:
    _agree(js, "aisdk", version, data)


@pytest.mark.parametrize("version", ["0.0", "1.0"])
@_SETTINGS
@given(data=st.data())
def test_the_validator_agrees_with_the_ag_ui_client(js: JsOracle, version: str, data: st.DataObject) -> None:
    _agree(js, "agui", version, data)


def test_a_field_the_version_does_not_know_is_lost(js: JsOracle) -> None:
    """Why ``aisdk.field-not-in-version`` is an error though the client says nothing: ai 6 drops the citations
    of a text part that ai 7 keeps."""
    from streamkit.testing import validate
    from tests.testing.cases import TD, TS, F, S, sse

    source = {"type": "source", "sourceType": "url", "id": "s1", "url": "https://a.example", "title": "A"}
    body = sse(S, TS, TD, {"type": "text-end", "id": "t", "citations": [{"source": source}]}, F)
    parts = {v: js.result("aisdk", {"body": body, "version": v})["message"]["parts"] for v in (6, 7)}
    assert "citations" in parts[7][-1] and "citations" not in parts[6][-1]
    assert validate(body, "aisdk", 7).ok
    assert "aisdk.field-not-in-version" in validate(body, "aisdk", 6).rules()
