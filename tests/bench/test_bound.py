"""The physical bound of `bench nas` and `bench compiler` (bench/bound.py): the traffic
counters `foresight run` records, the arithmetic (T_io, distance, the minimum-traffic
bound) on made-up results, the tables and plots drawn from them, and one short real
device probe.  Nothing here asserts a time."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import pytest

from foresight.bench import bound, nas
from foresight.bench import compiler as ck
from foresight.bench.common import by_ratio, median_summary, ratio_list
from foresight.bench.tables import run_conditions
from foresight.harness.run import parse_vmstat, run_once, swap_traffic

MB = 1 << 20
# A made-up device: 1000 MB/s read, 500 MB/s write.
PROBE = {"method": "fio, O_DIRECT, libaio, 100 ms per job", "seconds": 1.0,
         "data_device": "vda", "swap_device": "vda",
         "devices": {"vda": {"seq_read_bytes_per_s": 1e9, "seq_write_bytes_per_s": 5e8,
                             "rand_read_qd1_iops": 10_000.0, "rand_read_qd1_latency_us": 90.0,
                             "rand_read_qd32_iops": 60_000.0,
                             "rand_read_qd32_latency_us": 500.0,
                             "holds": ["data", "swap"], "scratch": "/x"}}}


def run(read: int, write: int = 0, swap_in: int = 0, swap_out: int = 0,
        user: float = 1.0, system: float = 3.0) -> dict:
    return {"read_bytes": read, "write_bytes": write, "swap_in_bytes": swap_in,
            "swap_out_bytes": swap_out, "user_seconds": user, "sys_seconds": system}


def test_vmstat_parsing_and_swap_deltas():
    before = parse_vmstat("nr_free_pages 12\npswpin 100\npswpout 7\npgpgin 5\n",
                          ("pswpin", "pswpout"))
    after = parse_vmstat("pswpin 150\npswpout 7\nbogus x\n", ("pswpin", "pswpout"))
    assert before == {"pswpin": 100, "pswpout": 7}
    assert swap_traffic(before, after, 4096) == (50 * 4096, 0)
    # a counter missing from a reading is unknown, not zero
    assert swap_traffic({"pswpin": 1}, {"pswpin": 3}, 4096) == (2 * 4096, None)


def test_traffic_splits_reads_and_flags_other_programs_swapping():
    t = bound.traffic(run(read=100, write=10, swap_in=30, swap_out=40))
    assert t == {"file_read": 70, "file_write": 10, "swap_in": 30, "swap_out": 40,
                 "others_swapped": False}
    # the system swapped in more than the program read at all: someone else swapped
    t = bound.traffic(run(read=100, swap_in=250))
    assert t["swap_in"] == 100 and t["file_read"] == 0 and t["others_swapped"]
    assert bound.moved_bytes(t) == 100
    assert bound.traffic({"read_bytes": 1}) is None   # an older result: no counters


def test_io_seconds_adds_on_one_device_and_overlaps_on_two():
    moved = {"file_read": 1e9, "file_write": 0, "swap_in": 1e9, "swap_out": 5e8}
    assert bound.io_seconds(moved, PROBE) == pytest.approx(1 + 1 + 1)
    two = {**PROBE, "swap_device": "vdb",
           "devices": {**PROBE["devices"], "vdb": {**PROBE["devices"]["vda"],
                                                   "seq_read_bytes_per_s": 2e9}}}
    assert bound.io_seconds(moved, two) == pytest.approx(max(1.0, 0.5 + 1.0))


def test_assess_distance_is_wall_over_the_larger_of_cpu_and_io():
    runs = {"O": run(read=4_000 * MB), "P": run(read=1_000 * MB, swap_out=500 * MB)}
    t_cpu = {"O": 2.0, "P": 2.5}
    minimum = {"file_read": 500 * MB, "file_write": 0, "swap_in": 0, "swap_out": 0}
    b = bound.assess({"O": 10.0, "P": 5.0}, runs, t_cpu, minimum, PROBE)
    t_io_o = 4_000 * MB / 1e9
    t_io_p = 1_000 * MB / 1e9 + 500 * MB / 5e8
    assert b["t_io"] == pytest.approx({"O": t_io_o, "P": t_io_p})
    assert b["bound"]["O"] == pytest.approx(t_io_o)          # I/O-bound
    assert b["bound"]["P"] == pytest.approx(2.5)             # compute-bound
    assert b["distance"]["O"] == pytest.approx(10.0 / t_io_o)
    assert b["distance"]["P"] == pytest.approx(5.0 / 2.5)
    # the minimum-traffic bound takes the smaller T_cpu: max(2.0, 0.52 s)
    assert b["t_io_min"] == pytest.approx(500 * MB / 1e9)
    assert b["min_bound"] == pytest.approx(2.0)
    assert b["distance_min"] == pytest.approx({"O": 5.0, "P": 2.5})


def test_the_runs_own_cpu_time_is_a_third_floor():
    # P used 9 s of CPU on 2 CPUs: 4.5 s, more than its T_cpu (2.5 s) and T_io (2.0 s);
    # O's 4 s over 2 CPUs is below its T_io: its distance stays.
    runs = {"O": run(read=4_000 * MB, user=1.0, system=3.0),
            "P": run(read=1_000 * MB, swap_out=500 * MB, user=3.0, system=6.0)}
    b = bound.assess({"O": 10.0, "P": 5.0}, runs, {"O": 2.0, "P": 2.5},
                     bound.spilled(0, MB), PROBE, cpus=2)
    assert b["cpu"] == pytest.approx({"O": 4.0, "P": 9.0})
    assert b["distance_cpu"]["O"] == pytest.approx(b["distance"]["O"])
    assert b["distance_cpu"]["P"] == pytest.approx(5.0 / 4.5)
    assert b["distance"]["P"] == pytest.approx(2.0)
    no_rusage = bound.assess({"O": 1.0, "P": 1.0}, {"O": {**run(read=MB), "user_seconds": None},
                                                    "P": run(read=MB)},
                             {"O": 0.5, "P": 0.5}, bound.spilled(0, MB), PROBE, cpus=2)
    assert no_rusage["distance_cpu"]["O"] is None and no_rusage["cpu"]["O"] is None


def test_median_summaries_keep_the_cpu_time_the_bound_needs():
    # bench compiler assesses median summaries of its runs: they carry user and system
    runs = [{**run(read=MB, user=u, system=2 * u), "cgroup_version": 1} for u in (1.0, 3.0, 2.0)]
    assert bound.run_cpu(median_summary(runs, "sum")) == pytest.approx(2.0 + 4.0)


def test_assess_without_counters_has_no_distance():
    b = bound.assess({"O": 1.0, "P": 1.0}, {"O": {}, "P": run(read=MB)}, {"O": 0.5, "P": 0.5},
                     bound.spilled(0, MB), PROBE)
    assert b["distance"]["O"] is None and b["distance"]["P"] == pytest.approx(2.0)


def test_minimum_traffic_per_kernel():
    size, mem = 1 << 30, 256 * MB
    assert bound.spilled(size, mem)["swap_out"] == size - mem
    assert bound.spilled(mem // 2, mem)["swap_in"] == 0       # fits: nothing must move
    for name, k in ck.KERNELS.items():
        m = ck.minimum_traffic(name, size, mem)
        assert m["rule"] and all(m[x] >= 0 for x in bound.TRAFFIC), name
        if k.data == "anon":
            assert m["swap_in"] == m["swap_out"] == size - mem, name
        else:
            assert m["swap_in"] == m["swap_out"] == 0
            assert 0 < m["file_read"] + m["file_write"] <= size, name
    # size/16 KiB uniform random indices touch 1 - e^(-1/4) of the pages
    assert ck.minimum_traffic("gather", size, mem)["file_read"] / size == pytest.approx(
        0.2212, abs=1e-3)
    assert ck.minimum_traffic("colsum", size, mem)["file_read"] == size // 2
    bs = ck.minimum_traffic("bucket_sort", size, mem)
    assert bs["file_read"] == bs["file_write"] == size // 2
    n = nas.minimum_traffic(192 * MB, 64 * MB, "file")
    assert n["swap_in"] == n["swap_out"] == 128 * MB and "unlinked" in n["rule"]


def made_up_bound() -> dict:
    return bound.assess({"O": 10.0, "P": 5.0},
                        {"O": run(read=4_000 * MB), "P": run(read=1_000 * MB, swap_in=2_000 * MB)},
                        {"O": 2.0, "P": 2.5},
                        {"file_read": 500 * MB, "file_write": 0, "swap_in": 0, "swap_out": 0},
                        PROBE)


def test_bound_table_cells():
    t = bound.table("t", [("gather", made_up_bound())])
    assert t.columns == bound.BOUND_COLUMNS
    cells = dict(zip(t.columns, t.rows[0], strict=True))
    assert cells["T_cpu O / P"] == "2.00 s / 2.50 s"
    assert cells["moved O / P"] == "3.9 GiB / 1000.0 MiB*"   # P: others swapped meanwhile
    assert cells["wall O / P"] == "10.00 s / 5.00 s"
    assert cells["distance O / P"] == f"{10 / 4.194304:.2f}× / 2.00×"
    assert cells["min traffic"] == "500.0 MiB" and cells["min bound"] == "2.00 s"
    assert cells["CPU used O / P"] == "4.00 s / 4.00 s"
    assert cells["min distance O / P"] == "5.00× / 2.50×"
    note = bound.probe_note(PROBE)
    assert "sequential read 1,000 MB/s, write 500 MB/s" in note and "60,000/s at QD32" in note


def compiler_result(with_bound: bool) -> dict:
    side = {"access_seconds": 1.0, "wall_seconds": 1.2, "major_faults": 10, "read_bytes": MB,
            "io_stall_seconds": 0.5}
    row = {"kernel": "gather", "data_bytes": 64 * MB, "O": side, "P": side, "speedup": 1.0}
    if with_bound:
        row["bound"] = made_up_bound()
    return {"suite": "compiler", "mem_limit_bytes": 32 * MB, "ratio": 2.0,
            "readahead_kb": 128, "repeat": 1, "rows": [row],
            "environment": {"kernel": "k", "cpus": 2},
            **({"device_probe": PROBE} if with_bound else {})}


def test_compiler_suite_shows_the_bound_table_its_notes_and_plot(tmp_path):
    res = compiler_result(True)
    tables = ck.SUITE.tables(res)
    assert len(tables) == 2 and tables[1].columns == bound.BOUND_COLUMNS
    notes = ck.SUITE.notes(res)
    assert any(n.startswith("Device probe") for n in notes)
    assert any(n.startswith("Bound:") for n in notes)
    files = ck.SUITE.plot(res, str(tmp_path))
    assert {Path(f).name for f in files} == {"compiler-speedup.png", "compiler-bound.png"}
    assert all(Path(f).stat().st_size > 0 for f in files)
    # a result from before the bound: the old table alone, no probe line
    old = compiler_result(False)
    assert len(ck.SUITE.tables(old)) == 1
    assert not any(n.startswith("Device probe") for n in ck.SUITE.notes(old))


def test_nas_suite_shows_the_bound_table_and_plot(tmp_path):
    v = {"wall_seconds": 10.0, "io_stall_seconds": 1.0, "major_faults": 5}
    res = {"suite": "nas", "size": "test", "mem_limit_bytes": 32 * MB, "readahead_kb": 128,
           "backing": "anon", "sweep": [], "device_probe": PROBE,
           "environment": {"kernel": "k", "cpus": 2},
           "kernels": [{"name": "cg", "mb": 48, "verified": True, "problems": [],
                        "speedup": 2.0, "stall_reduction": 0.5,
                        "variants": {"O": v, "P": {**v, "wall_seconds": 5.0},
                                     "P_nofilter": v},
                        "bound": made_up_bound()}]}
    tables = nas.SUITE.tables(res)
    assert tables[-1].columns == bound.BOUND_COLUMNS and tables[-1].rows[0][0] == "cg"
    assert any(n.startswith("Bound:") for n in nas.SUITE.notes(res))
    assert "nas-bound.png" in {Path(f).name for f in nas.SUITE.plot(res, str(tmp_path))}


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is missing (make setup)")
def test_the_device_probe_measures_positive_rates():
    p = bound.probe(budget=0.4)   # the scratch file is laid out once, then kept
    assert p["data_device"] in p["devices"]
    for d in p["devices"].values():
        for key in ("seq_read_bytes_per_s", "seq_write_bytes_per_s", "rand_read_qd1_iops",
                    "rand_read_qd32_iops"):
            assert d[key] > 0, key
        assert Path(d["scratch"]).stat().st_size == bound.SCRATCH_BYTES
    per_job = max(50, 400 // (len(p["devices"]) * len(bound.JOBS)))
    assert f"{per_job} ms per job" in p["method"]   # the budget, split among the jobs


def test_the_probe_without_fio_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(bound.shutil, "which", lambda _: None)
    with pytest.raises(bound.BenchError, match="needs fio.*make setup"):
        bound.probe(budget=0.1)


TOUCH = ("b = bytearray({n})\n"
         "for i in range(0, {n}, 4096): b[i] = 1\n"
         "print(sum(b[i] for i in range(0, {n}, 4096)))\n")


def test_a_run_under_a_cap_records_its_swap_traffic(swap):
    if os.geteuid() != 0:
        pytest.skip("memory cgroups need root here")
    r = run_once([sys.executable, "-c", TOUCH.format(n=96 * MB)], mem=32 * MB, capture=True)
    assert r["exit_code"] == 0, r["stderr"]
    # 96 MiB touched twice under 32 MiB: at least the excess went out and came back
    # (the counters are system-wide, so others' swapping can only add to them)
    assert r["swap_out_bytes"] >= 48 * MB
    assert r["read_bytes"] >= 48 * MB          # its own swap-ins are in its read_bytes
    assert r["swap_in_bytes"] >= 48 * MB
    assert r["write_bytes"] is not None


# --ratio 2,4,10: one block of rows per ratio, the JSON keyed by ratio

def test_ratio_lists_parse_each_once_in_order():
    assert ratio_list("2,4,10") == [2.0, 4.0, 10.0]
    assert ratio_list("4,2,4") == [4.0, 2.0]
    with pytest.raises(argparse.ArgumentTypeError, match="not a number"):
        ratio_list("2,,4")


def test_by_ratio_keys_the_results_and_a_single_one_stays_as_it_is():
    one = compiler_result(True)
    assert by_ratio([one]) is one
    two = {**compiler_result(True), "ratio": 4.0}
    res = by_ratio([one, two])
    assert res["ratios"] == [2.0, 4.0] and list(res["by_ratio"]) == ["2", "4"]
    assert res["by_ratio"]["4"] is two and res["device_probe"] == PROBE
    assert "rows" not in res and "ratio" not in res
    assert "data 2, 4× the cap" in run_conditions(res)


def test_compiler_at_several_ratios_has_a_block_each_and_a_summary(tmp_path):
    a, b = compiler_result(True), {**compiler_result(True), "ratio": 10.0}
    b["rows"] = [{**b["rows"][0], "speedup": 3.0}]
    res = by_ratio([a, b])
    tables = ck.SUITE.tables(res)
    assert len(tables) == 2 + 2 + 1
    assert "(2×)" in tables[0].title and "(10×)" in tables[2].title
    summary = tables[-1]
    assert summary.columns == ("kernel", "O/P at 2×", "O/P at 10×", "P distance at 2×",
                               "P distance at 10×")
    assert summary.rows == [("gather", "1.00×", "3.00×", "2.00×", "2.00×")]
    assert len(ck.SUITE.notes(res)) == len(ck.SUITE.notes(a))   # said once
    files = {str(Path(f).relative_to(tmp_path)) for f in ck.SUITE.plot(res, str(tmp_path))}
    assert {"ratio-2/compiler-bound.png", "ratio-10/compiler-speedup.png",
            "compiler-ratios.png"} <= files


def test_nas_at_several_ratios_exits_1_when_one_block_is_unverified():
    def sub(ratio: float, verified: bool) -> dict:
        v = {"wall_seconds": 2.0, "major_faults": 1}
        return {"suite": "nas", "size": "test", "ratio": ratio, "mem_limit_bytes": 32 * MB,
                "readahead_kb": 128, "backing": "anon", "sweep": [],
                "environment": {"kernel": "k", "cpus": 2},
                "kernels": [{"name": "is", "mb": 64, "verified": verified,
                             "problems": [] if verified else ["P: exit 1"], "speedup": 1.5,
                             "variants": {"O": v, "P": v, "P_nofilter": v}}]}
    res = by_ratio([sub(2, True), sub(4, True)])
    assert nas.SUITE.exit_code(res) == 0
    assert nas.SUITE.tables(res)[-1].rows == [("is", "1.50×", "1.50×", "–", "–")]
    assert nas.SUITE.exit_code(by_ratio([sub(2, True), sub(4, False)])) == 1
