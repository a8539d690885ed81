"""``make test`` sets up the system packages it drives (scripts/system-deps.sh), and under CI a missing browser
fails the browser tests instead of skipping them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "system-deps.sh"
BASH = "/bin/bash"


def fake_bin(tmp_path: Path, *, uid: int, have: tuple[str, ...] = (), apt: bool = True) -> Path:
    """A PATH of fakes: ``id -u`` answers ``uid``, ``apt-get`` records its arguments, ``have`` exist."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    scripts = {"id": f"#!{BASH}\necho {uid}\n"}
    if apt:
        scripts["apt-get"] = f'#!{BASH}\necho "apt-get $*" >> {tmp_path}/apt.log\n'
    for name in have:
        scripts[name] = f"#!{BASH}\nexit 0\n"
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    return bin_dir


def run_script(bin_dir: Path, chromium: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(bin_dir), "STREAMKIT_CHROMIUM": str(chromium)}
    return subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)


def test_not_root_stops_at_once_with_the_exact_command(tmp_path: Path) -> None:
    done = run_script(fake_bin(tmp_path, uid=1000), tmp_path / "no-chromium")
    assert done.returncode == 1
    assert "sudo apt-get install -y --no-install-recommends redis-server chromium" in done.stderr
    assert not (tmp_path / "apt.log").exists()


def test_as_root_it_installs_only_what_is_missing(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    done = run_script(fake_bin(tmp_path, uid=0), chromium)  # neither redis-server nor chromium
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "apt.log").read_text().splitlines() == [
        "apt-get update -qq",
        "apt-get install -y -qq --no-install-recommends redis-server chromium",
    ]
    (tmp_path / "apt.log").unlink()
    chromium.write_text("")
    chromium.chmod(0o755)
    done = run_script(fake_bin(tmp_path / "again", uid=0), chromium)
    assert done.returncode == 0, done.stderr
    installed = (tmp_path / "again" / "apt.log").read_text().splitlines()[-1]
    assert installed.endswith("--no-install-recommends redis-server")


def test_nothing_missing_is_a_silent_no_op(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    chromium.write_text("")
    chromium.chmod(0o755)
    done = run_script(fake_bin(tmp_path, uid=1000, have=("redis-server",)), chromium)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_without_apt_get_it_says_what_to_install(tmp_path: Path) -> None:
    done = run_script(fake_bin(tmp_path, uid=0, apt=False, have=("redis-server",)), tmp_path / "none")
    assert done.returncode == 1
    assert "apt-get install -y --no-install-recommends chromium" in done.stderr


def test_make_test_runs_the_script_first() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "test: system-deps install js" in makefile
    assert "bash scripts/system-deps.sh" in makefile


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_missing_browser_fails_under_ci_and_skips_otherwise(tmp_path: Path, ci: str) -> None:
    env = {**os.environ, "CI": ci, "STREAMKIT_CHROMIUM": str(tmp_path / "no-chromium")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "tests/demo/test_demo_browser.py", "-k", "error"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "no Chromium at" in done.stdout
    if ci:
        assert done.returncode == 1 and "1 error" in done.stdout, done.stdout[-2000:]
    else:
        assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout[-2000:]
