"""--readahead-kb sets the disk's knob for the run and always restores it, also when
the harness is killed with SIGKILL (a guardian process restores it)."""

import json
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


def test_restored_after_the_harness_is_killed(fake_sys, tmp_path):
    # (its TMPDIR its own: a SIGKILLed run cannot remove its working directory)
    p = subprocess.Popen([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "64",
                          "--", "sleep", "30"], stderr=subprocess.DEVNULL,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
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


def test_conflicting_concurrent_values_are_refused(fake_sys, tmp_path):
    # (its TMPDIR its own: a SIGTERM before the run's handlers are set ends it at once)
    p = subprocess.Popen([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "64",
                          "--", "sleep", "5"], stderr=subprocess.DEVNULL,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        for _ in range(100):
            if fake_sys.read_text().strip() == "64":
                break
            time.sleep(0.05)
        r = subprocess.run([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb",
                            "256", "--", "true"], capture_output=True, text=True)
        assert r.returncode == 2 and "held at 64" in r.stderr
    finally:
        p.terminate()
        p.wait()


def stale_journal(fake_sys, tmp_path, value: int = 64) -> None:
    """The state a harness and guardian killed together leave: the knob changed, the
    journal naming a holder that is gone."""
    dev = fake_sys.parent.parent.name
    gone = subprocess.Popen(["true"])
    gone.wait()
    state = tmp_path / "state" / "readahead"
    state.mkdir(parents=True)
    (state / f"{dev}.json").write_text(json.dumps(
        {"device": dev, "original": 4096, "value": value, "holders": [gone.pid]}))
    fake_sys.write_text(f"{value}\n")


@pytest.mark.parametrize("command", [
    ["run", "--", "true"],                                 # no --readahead-kb
    ["bench", "micro", "--patterns", "nonsense"],          # stops at its argument check
])
def test_a_stale_setting_is_restored_by_any_run_or_bench(fake_sys, tmp_path, command):
    stale_journal(fake_sys, tmp_path)
    r = subprocess.run([sys.executable, "-m", "foresight.cli", *command],
                       capture_output=True, text=True)
    assert "Traceback" not in r.stderr
    assert fake_sys.read_text().strip() == "4096"
    assert "restored to 4096" in r.stderr
    assert list((tmp_path / "state" / "readahead").glob("*.json")) == []


def test_a_journal_whose_device_could_not_be_restored_is_kept(fake_sys, tmp_path):
    stale_journal(fake_sys, tmp_path)
    fake_sys.unlink()
    fake_sys.mkdir()   # writing the knob now fails, and the device still exists
    r = subprocess.run([sys.executable, "-m", "foresight.cli", "run", "--", "true"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "state" / "readahead").glob("*.json"))) == 1
    r = subprocess.run([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "128",
                        "--", "true"], capture_output=True, text=True)
    assert r.returncode == 2 and "journal" in r.stderr and "is kept" in r.stderr, r.stderr
    assert len(list((tmp_path / "state" / "readahead").glob("*.json"))) == 1


@pytest.mark.parametrize("text", ["{}", "[]", '{"device": "x", "original": 1, "value": 2, '
                                  '"holders": ["a"]}'])
def test_a_file_that_is_not_a_journal_is_left_alone(fake_sys, tmp_path, text):
    state = tmp_path / "state" / "readahead"
    state.mkdir(parents=True)
    other = state / f"{fake_sys.parent.parent.name}.json"
    other.write_text(text)
    r = subprocess.run([sys.executable, "-m", "foresight.cli", "run", "--readahead-kb", "128",
                        "--", "true"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "is not a readahead journal; left alone" in r.stderr
    assert other.read_text() == text and fake_sys.read_text().strip() == "4096"
