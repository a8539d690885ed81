"""The node oracle itself: answers, failures and captured console output."""

from tests.support.oracle import JsOracle


def test_oracle_round_trip(js: JsOracle) -> None:
    assert js.result("echo", {"value": [1, "é"]})["echo"] == [1, "é"]


def test_oracle_reports_failure_and_warnings(js: JsOracle) -> None:
    answer = js.call("echo", {"fail": True, "warn": True})
    assert answer["ok"] is False
    assert "asked to fail" in answer["error"]
    ok = js.call("echo", {"warn": True})
    assert ok["ok"] is True
    assert ok["warnings"] == ['a warning {"n":1}']
