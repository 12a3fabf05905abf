"""`foresight bench sharedcache`: every policy at every client count, gains computed from
the simulator's own makespans, plots written, bad options refused before any run."""

from __future__ import annotations

import json
import subprocess
import sys

FORESIGHT = [sys.executable, "-m", "foresight.cli"]


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*FORESIGHT, "bench", "sharedcache", *args],
                          capture_output=True, text=True)


def test_the_suite_reports_each_policy_against_none_and_plain(tmp_path):
    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    p = bench("--quick", "--workloads", "neighbor,mgrid", "--clients", "1,4",
              "--json", str(out), "--plots", str(tmp_path / "plots"), "--markdown", str(md))
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    res = json.loads(out.read_text())
    assert [(r["workload"], r["clients"]) for r in res["rows"]] == [
        ("neighbor", 1), ("neighbor", 4), ("mgrid", 1), ("mgrid", 4)]
    for r in res["rows"]:
        runs = r["runs"]
        assert set(runs) == {"none", "plain", "coarse", "fine", "optimal", "none+min",
                             "plain+min"}
        if r["clients"] == 1:   # one client's order is its own: MIN misses least
            assert runs["none+min"]["demand_misses"] <= runs["none"]["demand_misses"]
        assert runs["none"]["prefetches_issued"] == 0
        base = runs["none"]["makespan_s"]
        for policy, g in r["gain_over_none"].items():
            assert abs(g - (base - runs[policy]["makespan_s"]) / base * 100) < 1e-9
        assert r["gain_over_plain"]["plain"] == 0
        assert runs["optimal"]["harmful_prefetches"] <= runs["plain"]["harmful_prefetches"]
    assert (tmp_path / "plots" / "sharedcache-gain.png").stat().st_size > 0
    assert (tmp_path / "plots" / "sharedcache-harmful.png").stat().st_size > 0
    # one client alone: prefetching helps a streaming workload
    assert res["rows"][0]["gain_over_none"]["plain"] > 5
    text = md.read_text()
    assert text.startswith("# ") or "foresight bench sharedcache" in text
    first = res["rows"][0]
    row = (f"| 1 | {first['runs']['none']['makespan_s']:.2f} s | "
           f"{first['gain_over_none']['plain']:+.1f}% |")
    assert row in text, text


def test_bad_options_are_one_line_before_any_run(tmp_path):
    for args, message in ((["--workloads", "lu"], "unknown workload 'lu'"),
                          (["--clients", "0"], "give 1 to 256 clients"),
                          (["--clients", "300"], "give 1 to 256 clients"),
                          (["--data", "1K"], "at least 4M"),
                          (["--cache", "lots"], "lots")):
        p = bench(*args, "--json", str(tmp_path / "r.json"))
        assert p.returncode == 2, (args, p.stderr)
        assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "r.json").exists()


def test_figures_sweep_one_parameter_against_no_prefetching(tmp_path):
    out = tmp_path / "r.json"
    p = bench("--quick", "--workloads", "neighbor", "--clients", "1", "--figs", "5,15,20,19",
              "--json", str(out), "--plots", str(tmp_path / "plots"))
    assert p.returncode == 0, p.stderr
    figs = json.loads(out.read_text())["figures"]
    assert set(figs) == {"5", "15", "19", "20"}
    five = figs.pop("5")["rows"][0]
    assert len(five["matrix"]) == 8 and five["epochs"] >= five["epochs_with_harm"]
    assert (tmp_path / "plots" / "sharedcache-fig5.png").exists()
    assert figs["15"]["values"] == ["0.1", "0.2", "0.35", "0.5", "0.7", "0.9"]
    assert figs["19"]["rows"][0]["clients"] is None   # the client count is the parameter
    for f in figs.values():
        for row in f["rows"]:
            for pt in row["points"].values():
                want = (pt["none_s"] - pt["policy_s"]) / pt["none_s"] * 100
                assert abs(pt["gain_over_none"] - want) < 1e-9
        assert (tmp_path / "plots" / f"sharedcache-fig{f['fig']}.png").exists()
    # mgrid alone, then beside 1-3 other applications
    assert figs["20"]["values"] == ["0", "1", "2", "3"]
    assert bench("--figs", "13").returncode == 2
