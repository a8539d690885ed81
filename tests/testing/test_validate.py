"""The validator's rules: each fires on the smallest body that breaks it, and clean bodies break none."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit.testing import RULES, validate
from tests.testing.cases import CASES, CLEAN, MC, ME, MS, RF, RS, TD, TE, TS, F, S, agui_sse, sse


@pytest.mark.parametrize(("protocol", "version", "body"), CLEAN)
def test_clean_bodies_break_no_rule(protocol: str, version: Any, body: str) -> None:
    report = validate(body, protocol, version)
    assert report.findings == [], report.format()
    assert report.ok


@pytest.mark.parametrize(("rule", "protocol", "version", "body"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_fires_on_its_smallest_body(rule: str, protocol: str, version: Any, body: str) -> None:
    report = validate(body, protocol, version)
    assert rule in report.rules(), report.format()
    assert report.ok is (RULES[rule].severity == "warning" and not report.errors)
    finding = next(f for f in report.findings if f.rule == rule)
    assert finding.explanation == RULES[rule].explanation and finding.message


def test_every_rule_has_a_case() -> None:
    # aisdk.client-failure is the fallback for a failure of the client's processor that no other rule names;
    # the response's rules (http.*, timing.*) and clients.rejected are streamkit check's (test_check, test_clients)
    checked = {r for r in RULES if not r.startswith(("http.", "timing.", "clients."))} - {"aisdk.client-failure"}
    assert {c[0] for c in CASES} == checked


def test_the_fold_comes_with_the_report() -> None:
    tool = [
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "weather", "input": {"city": "Paris"}},
        {"type": "data-state", "id": "state", "data": {"n": 1}},
    ]
    report = validate(sse(S, TS, TD, TE, *tool, F))
    assert report.text == "hi"
    assert [t["toolCallId"] for t in report.tool_calls] == ["c"]
    assert report.pending_tool_calls == ["c"]
    assert report.state == {"n": 1}
    assert report.messages[0]["role"] == "assistant"
    history = [{"id": "u", "role": "user", "content": "hey"}]
    agui = validate(agui_sse(RS, MS, MC, ME, RF), "agui", messages=history, state={"a": 1})
    assert agui.text == "hi" and agui.state == {"a": 1} and agui.outcome == "success"
    assert [m["id"] for m in agui.messages] == ["u", "m"]


def test_versions_change_the_verdict() -> None:
    body = sse(S, {"type": "custom", "kind": "x"}, F)
    assert validate(body, "aisdk", 7).ok
    assert "schema.type-not-in-version" in validate(body, "aisdk", 6).rules()
    cancelled = agui_sse(RS, {**RF, "outcome": {"type": "cancelled"}})
    assert validate(cancelled, "agui", "1.0").ok
    assert not validate(cancelled, "agui", "0.0.59").ok


def test_the_report_reads_and_serializes() -> None:
    report = validate(sse(S, TD, F))
    text = report.format()
    assert "aisdk.part-not-open" in text and "frame 1" in text
    data = report.to_dict()
    assert data["ok"] is False and data["findings"][0]["rule"] == "aisdk.part-not-open"
    with pytest.raises(AssertionError):
        report.raise_for_errors()


def test_an_unended_done_is_still_the_end() -> None:
    assert validate(sse(S, F)[: -len("\n\n")]).findings == []


def test_citations_and_provider_metadata_are_checked_inside() -> None:
    url = {"type": "source", "sourceType": "url", "id": "s1", "url": "https://a.example"}
    good = sse(S, TS, TD, {**TE, "citations": [{"source": url, "startIndex": 0}]}, F)
    assert validate(good).findings == []
    for citation in ({"source": {**url, "url": None}}, {"source": {"type": "document", "id": "s1"}},
                     {"source": url, "endIndex": -1}, {"source": {**url, "sourceType": "web"}}, "s1"):  # fmt: skip
        body = sse(S, TS, TD, {**TE, "citations": [citation]}, F)
        assert "schema.field-type" in validate(body).rules() or "schema.field-missing" in validate(body).rules()
    metadata = sse(S, {**TS, "providerMetadata": {"openai": 1}}, TD, TE, F)
    assert "schema.field-type" in validate(metadata).rules()


@pytest.mark.node
def test_a_dynamic_calls_output_without_the_flag_is_lost_on_ai_5_only(js: Any) -> None:
    from tests.testing.agreement import aisdk_client_error

    call = {"toolCallId": "c1", "toolName": "weather", "dynamic": True}
    body = sse(
        S,
        {"type": "tool-input-start", **call},
        {"type": "tool-input-available", **call, "input": {}},
        {"type": "tool-output-available", "toolCallId": "c1", "output": 1},  # no "dynamic"
        F,
    )
    for version, rejected in ((5, True), (6, False), (7, False)):
        assert aisdk_client_error(js, body, version)[0] is rejected
        assert validate(body, "aisdk", version).ok is not rejected
