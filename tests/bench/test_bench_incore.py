"""`foresight bench incore`: its near-the-cap runs (--near), end to end and their failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foresight.bench import incore

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")


def test_near_cap_is_the_data_over_the_ratio_rounded_up_to_a_mib():
    assert incore.near_cap(128 << 20, 0.5) == 256 << 20
    assert incore.near_cap(128 << 20, 1.0) == 128 << 20
    assert incore.near_cap(100 << 20, 0.75) == 134 << 20      # 133.33 MiB, rounded up
    assert incore.near_cap(1 << 20, 1.0) == incore.MIN_MEM     # never under run's least


@pytest.mark.parametrize("text,word", [("1.5", "must fit the cap"), ("0", "positive"),
                                       ("0.5,x", "not a number")])
def test_near_ratios_above_one_or_not_numbers_are_refused(text, word):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match=word):
        incore.near_ratios(text)
    assert incore.near_ratios("1,0.5,1") == [1.0, 0.5]


def test_a_killed_run_near_the_cap_is_reported_not_timed(monkeypatch):
    # A cap the program does not survive must show in its cell; the other variants'
    # runs still count, and the killed variant has no median.
    calls = []

    def fake_run(cmd, mem=None, cold=False, files=None, env=None, capture=False, timeout=None):
        calls.append((cmd[0], mem, cold, (env or {}).get("FORESIGHT_DISABLE")))
        killed = cmd[0] == "p" and env.get("FORESIGHT_DISABLE") is None
        return {"exit_code": -9 if killed else 0, "oom_killed": killed, "timed_out": False,
                "wall_seconds": 2.0 if cmd[0] == "p" else 1.0, "stdout": "same\n",
                "stderr": ""}

    monkeypatch.setattr(incore, "run_once", fake_run)
    out = incore.measure_near("is", {"O": "o", "P": "p"}, [], [], 64 << 20, [0.5], 2,
                              "same\n", lambda what: None)
    (n,) = out
    assert n["mem_limit_bytes"] == 128 << 20 and n["failed"] == {"P": "killed by the OOM killer"}
    assert n["median_wall_seconds"] == {"O": 1.0, "P": None, "P_off": 2.0}
    assert n["p_over_o"] is None and n["p_off_over_o"] == 2.0
    # every run cold under the cap; P not run again after it was killed
    assert all(c[1] == 128 << 20 and c[2] for c in calls)
    assert [c[0] for c in calls] == ["o", "p", "p", "o", "p"]


def test_a_changed_output_near_the_cap_stops_the_bench(monkeypatch):
    monkeypatch.setattr(incore, "run_once", lambda cmd, **kw: {
        "exit_code": 0, "wall_seconds": 1.0, "stdout": "other\n" if cmd[0] == "p" else "same\n",
        "stderr": ""})
    with pytest.raises(incore.BenchError, match="differs from the original's"):
        incore.measure_near("is", {"O": "o", "P": "p"}, [], [], 64 << 20, [1.0], 1, "same\n",
                            lambda what: None)


def test_end_to_end_near_the_cap(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("memory cgroups and cold caches need root here")
    out = tmp_path / "incore.json"
    r = subprocess.run([FORESIGHT, "bench", "incore", "--programs", "colsum", "--kernel-mb",
                        "8", "--near", "0.5,1", "--json", str(out), "--plots",
                        str(tmp_path / "plots")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    assert res["near"] == [0.5, 1.0] and res["near_target"] == 1.05
    (row,) = res["rows"]
    assert [n["mem_limit_bytes"] for n in row["near"]] == [16 << 20, 8 << 20]
    for n in row["near"]:
        assert n["failed"] == {}
        assert all(w > 0 for w in n["median_wall_seconds"].values())
    assert "near the cap" in r.stdout
    assert {p.name for p in (tmp_path / "plots").iterdir()} == {"incore.png",
                                                                "incore_near.png"}
