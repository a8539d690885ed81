"""``streamkit check --clients``: the body through the real client packages too (node; the suite's pinned
packages, here the ones tests/js installed), their verdict beside the validator's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from streamkit.demo.cli import main
from streamkit.testing import clients
from tests.support.oracle import JS_DIR, JsOracle
from tests.testing.cases import MC, ME, MS, RF, RS, TD, TE, TS, F, S, agui_sse, sse


@pytest.fixture
def cache(js: JsOracle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clients folder whose packages are the suite's (no install; the ``js`` fixture made sure of them)."""
    folder = tmp_path / "clients"
    folder.mkdir()
    os.symlink(JS_DIR / "node_modules", folder / "node_modules")
    monkeypatch.setenv("STREAMKIT_CLIENTS_DIR", str(folder))
    return folder


def write(tmp_path: Path, body: str) -> str:
    path = tmp_path / "body.sse"
    path.write_text(body)
    return str(path)


@pytest.mark.parametrize(
    ("protocol", "version", "body", "code", "verdict"),
    [
        ("aisdk", "7", sse(S, TS, TD, TE, F), 0, "ai 7 Chat accepted the body"),
        ("aisdk", "5", sse(S, TD, F), 1, "ai 5 Chat rejected the body"),
        ("aisdk", "6", sse(S, TS, TD, {**TE, "citations": []}, F), 1, "accepted the body (the validator's errors"),
        ("agui", "1.0", agui_sse(RS, MS, MC, ME, RF), 0, "@ag-ui/client 1.0 accepted the body"),
        (
            "agui",
            "0.0.59",
            agui_sse(RS, MS, MC, RF),
            1,
            "@ag-ui/client 0.0 rejected the body: Cannot send 'RUN_FINISHED'",
        ),
    ],
)
def test_the_real_clients_verdict_comes_with_the_report(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], protocol: str, version: str, body: str,
    code: int, verdict: str,
) -> None:  # fmt: skip
    flag = "--sdk-version" if protocol == "aisdk" else "--agui-version"
    assert main(["check", "--file", write(tmp_path, body), "--protocol", protocol, flag, version, "--clients"]) == code
    assert verdict in capsys.readouterr().out


def test_a_rejection_the_validator_missed_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def rejecting(body: str, protocol: str, version: Any, **options: Any) -> clients.ClientAnswer:
        return clients.ClientAnswer(error="something the validator does not know")

    monkeypatch.setattr(clients, "run_client", rejecting)
    assert main(["check", "--file", write(tmp_path, sse(S, F)), "--protocol", "aisdk", "--clients", "--json"]) == 1
    assert '"rule": "clients.rejected"' in capsys.readouterr().out


def test_without_node_the_check_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(clients.shutil, "which", lambda name: None)
    assert main(["check", "--file", write(tmp_path, sse(S, F)), "--protocol", "aisdk", "--clients"]) == 0
    assert "needs node" in capsys.readouterr().err
