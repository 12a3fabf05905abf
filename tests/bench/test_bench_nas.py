"""`foresight bench nas` end to end at the test size, and its option errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")


def bench(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([FORESIGHT, "bench", "nas", *args], capture_output=True, text=True,
                          timeout=600, **kw)


def test_end_to_end_json_plots_and_verification(tmp_path, swap):
    if os.geteuid() != 0:
        pytest.skip("memory cgroups and cold caches need root here")
    out = tmp_path / "nas.json"
    r = bench("--size", "test", "--kernels", "is,cg", "--json", str(out),
              "--plots", str(tmp_path / "plots"))
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    assert res["suite"] == "nas" and res["readahead_kb"] == 128
    assert [k["name"] for k in res["kernels"]] == ["is", "cg"]
    for k in res["kernels"]:
        assert k["verified"], k["problems"]
        assert {"O", "P", "P_nofilter"} <= set(k["variants"])
        for v in ("O", "P"):
            run = k["variants"][v]
            for key in ("wall_seconds", "user_seconds", "sys_seconds", "major_faults",
                        "peak_memory_bytes", "read_bytes", "exit_code"):
                assert key in run
            assert run["exit_code"] == 0 and run["mem_limit_bytes"] == 32 << 20
        c = k["coverage"]
        assert abs(c["prefetched_hit"] + c["prefetched_fault"] + c["nonprefetched_fault"]
                   - 1) < 1e-9
        assert c["original_fault_pages"] > 0      # it really ran out of core
        assert k["variants"]["P"]["runtime"]["global"]["considered"] > 0
        assert k["variants"]["P_nofilter"]["runtime"]["config"]["filter"] is False
    is_row = res["kernels"][0]
    assert "D" in is_row["variants"] and "copy" in is_row["variants"]["D"]["phases"]
    assert {p.name for p in (tmp_path / "plots").iterdir()} >= {"nas-time.png",
                                                                  "nas-coverage.png"}


@pytest.mark.parametrize("args,word", [
    (["--kernels", "xx"], "unknown kernel"),
    (["--size", "huge"], "--size"),
    (["--sweep", "CG"], "only IS"),
    (["--backing", "tape"], "--backing"),
])
def test_bad_options_exit_2(args, word):
    r = bench(*args)
    assert r.returncode == 2
    assert word in r.stderr


def _run(wall: float, verified: bool = True, **kw) -> dict:
    return {"wall_seconds": wall, "verified": verified, **kw}


def test_the_median_run_stands_for_repeated_runs():
    from foresight.bench.nas import median_run

    chosen = median_run([_run(3.0, n=1), _run(1.0, n=2), _run(2.0, n=3)])
    assert chosen["n"] == 3 and chosen["walls"] == [3.0, 1.0, 2.0]
    assert median_run([_run(4.0, n=1), _run(1.0, n=2)])["n"] == 2   # the lower middle
    assert median_run([_run(1.0)]) == {**_run(1.0), "walls": [1.0]}
    # a run that failed is reported, never outvoted by the runs that finished
    killed = _run(9.0, False, oom_killed=True)
    assert median_run([_run(1.0), killed, _run(2.0)]) is killed
