"""`bench sharedcache --live` in small: the replay client plays its part of a trace on
a real node under every policy (each client's reads counted against the trace), the
simulator runs the same trace, and the two are reported side by side, with the time the
node spent in its policy core; the replay client refuses a bad trace on one line."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from foresight.sharedcache import live


@pytest.fixture
def small(monkeypatch):
    for tool in ("nbdkit", "nbdfuse", "fusermount3"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} missing: run `make setup`")
    if not os.path.exists("/dev/fuse") or os.geteuid() != 0:
        pytest.skip("needs /dev/fuse and root")
    monkeypatch.setattr(live, "DATA", 4 << 20)
    monkeypatch.setattr(live, "NODE_CACHE", "1M")
    monkeypatch.setattr(live, "DISK_DELAY", "100us")
    monkeypatch.setattr(live, "THINK_US", 50.0)


def test_live_runs_every_policy_beside_the_simulator(small, tmp_path):
    res = live.measure(["neighbor"], (2,), tmp_path, repeat=2)
    [row] = res["rows"]
    assert all(len(row["live_runs_s"][p]) == 2 for p in live.POLICIES)
    assert row["workload"] == "neighbor" and row["clients"] == 2
    for side in ("live_s", "sim_s"):
        assert set(row[side]) == set(live.POLICIES)
        assert all(t > 0 for t in row[side].values())
    assert sorted(row["live_order"]) == sorted(live.POLICIES)
    assert row["same_order"] == (row["live_order"] == row["sim_order"])
    assert row["live_gain_over_none"]["none"] == 0
    # Table I live: the node timed its policy core on every request of every run
    for p in live.POLICIES:
        core = row["policy_core"][p]
        assert core is not None and core["calls"] > 0, p
        assert 0 < core["seconds"] < min(row["live_runs_s"][p])
        assert 0 < core["share"] < 1 and core["ns_per_call"] > 0


def test_separated_pairs_count_only_what_the_simulator_tells_apart():
    sim = {"none": 10.0, "plain": 8.0, "coarse": 8.1, "fine": 12.0}
    live_same = {"none": 9.0, "plain": 7.0, "coarse": 6.9, "fine": 11.0}   # coarse<plain: a tie
    assert live.separated_pairs(sim, live_same) == (5, 5)
    live_swapped = {"none": 7.0, "plain": 9.0, "coarse": 8.0, "fine": 11.0}
    assert live.separated_pairs(sim, live_swapped) == (3, 5)


def test_order_is_fastest_first_ties_in_policy_order():
    assert live.order({"none": 2.0, "plain": 1.0, "coarse": 1.0, "fine": 3.0}) == [
        "plain", "coarse", "none", "fine"]


def test_replay_refuses_a_bad_trace_on_one_line(tmp_path):
    trace, disk, barrier = tmp_path / "t.trace", tmp_path / "d.img", tmp_path / "b"
    disk.write_bytes(b"\0" * 65536 * 4)
    barrier.write_bytes(b"\0" * 8)
    for text, message in (("0 R 9\n", "t.trace:1: block 9 is past the disk's 4"),
                          ("# c\n0 Q 1\n", "t.trace:2: OP is R, W, P or B, not Q"),
                          ("0 R\n", "t.trace:1: not CLIENT OP BLOCK")):
        trace.write_text(text)
        p = subprocess.run([str(live.replay_binary()), str(trace), "0", "1", str(disk),
                            str(barrier)], capture_output=True, text=True)
        assert p.returncode == 2 and message in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
