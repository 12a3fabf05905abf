"""--readahead-kb sets the disk's knob for the run and always restores it, also when
the harness is killed with SIGKILL (a guardian process restores it)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from foresight.harness import environment


@pytest.fixture
def fake_sys(tmp_path, monkeypatch):
    dev = environment.block_device_of(os.getcwd())
    if dev is None:
        pytest.skip("working directory is not on a block device")
    knob = tmp_path / "block" / dev / "queue" / "read_ahead_kb"
    knob.parent.mkdir(parents=True)
    knob.write_text("4096\n")
    monkeypatch.setenv("FORESIGHT_SYS_BLOCK", str(tmp_path / "block"))
    monkeypatch.setenv("FORESIGHT_STATE_DIR", str(tmp_path / "state"))
    return knob


def test_set_during_run_and_restored(fake_sys, tmp_path):
    seen = tmp_path / "seen"
    r = subprocess.run([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "128",
                        "--", "sh", "-c", f"cat {fake_sys} > {seen}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert seen.read_text().strip() == "128"
    assert fake_sys.read_text().strip() == "4096"


def test_restored_after_the_harness_is_killed(fake_sys):
    p = subprocess.Popen([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "64",
                          "--", "sleep", "30"], stderr=subprocess.DEVNULL)
    for _ in range(100):
        if fake_sys.read_text().strip() == "64":
            break
        time.sleep(0.05)
    assert fake_sys.read_text().strip() == "64"
    p.send_signal(signal.SIGKILL)
    p.wait()
    for _ in range(400):   # the guardian may still be starting on a loaded machine
        if fake_sys.read_text().strip() == "4096":
            break
        time.sleep(0.05)
    assert fake_sys.read_text().strip() == "4096"


def test_conflicting_concurrent_values_are_refused(fake_sys):
    p = subprocess.Popen([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "64",
                          "--", "sleep", "5"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if fake_sys.read_text().strip() == "64":
                break
            time.sleep(0.05)
        r = subprocess.run([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb",
                            "256", "--", "true"], capture_output=True, text=True)
        assert r.returncode == 2 and "held at 64" in r.stderr
    finally:
        p.kill()
        p.wait()
