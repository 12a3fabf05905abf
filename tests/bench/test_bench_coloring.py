"""`foresight bench coloring`: a small run (tomcatv on the paper's base machine, 1 and 16
CPUs, page coloring against CDPC) builds the program both ways, checks their outputs
agree, writes the map, simulates, and reports the issue's expectations with the figures
behind them; bad options are one line."""

from __future__ import annotations

import json
import subprocess
import sys

BENCH = [sys.executable, "-m", "foresight.cli", "bench", "coloring"]


def test_small_coloring_run(tmp_path):
    out, md, plots = tmp_path / "c.json", tmp_path / "c.md", tmp_path / "plots"
    p = subprocess.run([*BENCH, "--programs", "tomcatv", "--machines", "sgi", "--cpus", "1,16",
                        "--policies", "pc,cdpc", "--steps", "1", "--timed", "none",
                        "--json", str(out),
                        "--markdown", str(md), "--plots", str(plots)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    assert res["verified"] == {"tomcatv": True}
    assert len(res["results"]) == 4
    sixteen = {r["policy"]: r["misses"] for r in res["results"] if r["cpus"] == 16}
    # each CPU's share (7 x 32 rows of 513 doubles) fits its 1 MiB cache: with the arrays
    # 2 MiB apart, page coloring collides them; CDPC spreads each CPU's share
    assert sixteen["pc"]["capacity"] == sixteen["cdpc"]["capacity"] == 0
    assert sixteen["cdpc"]["conflict"] * 20 < sixteen["pc"]["conflict"]
    check = next(c for c in res["checks"] if c["what"].startswith("tomcatv, 16 CPUs"))
    assert check["met"]
    assert "tomcatv (513 10) on sgi" in md.read_text()
    assert (plots / "coloring-tomcatv.png").stat().st_size > 0
    # Figures 3 and 5: at 16 CPUs each CPU's pages lie far apart in virtual order, and
    # page coloring stacks them on few colors where CDPC spreads them over all
    pat = res["page_patterns"]["tomcatv"]
    assert pat["cpus"] == 16 and pat["ncolors"] == 256
    from foresight.bench.coloring import pattern_summary
    pc, cdpc = (pattern_summary(pat[p], 16, 256) for p in ("pc", "cdpc"))
    assert pc["cpus_touching"] == cdpc["cpus_touching"] == 16
    assert pc["pages"] == cdpc["pages"] and pc["span"] > 4 * pc["pages"]
    assert cdpc["colors"] > 2 * pc["colors"] and cdpc["most"] < pc["most"]
    assert "page-level access patterns" in md.read_text()
    assert (plots / "coloring-pages-tomcatv.png").stat().st_size > 0


def test_timed_runs_put_the_model_beside_table_2(tmp_path):
    """The alpha8400 model (cachesim --time) of tomcatv at 1, 4 and 8 CPUs under bin
    hopping, page coloring and CDPC, and the sgi runs of Figures 2 and 8 at 4 CPUs:
    page coloring's conflicts cost it time at 8 CPUs that CDPC does not pay, prefetching
    gains more with CDPC than without, and the report sets the ratios beside the
    paper's."""
    out, md, plots = tmp_path / "c.json", tmp_path / "c.md", tmp_path / "plots"
    p = subprocess.run([*BENCH, "--programs", "tomcatv", "--machines", "sgi", "--cpus", "4",
                        "--policies", "pc", "--steps", "1", "--json", str(out),
                        "--markdown", str(md), "--plots", str(plots)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    alpha = {(t["policy"], t["cpus"]): t for t in res["timed"] if t["machine"] == "alpha8400"}
    assert set(alpha) == {(pol, n) for pol in ("bh", "pc", "cdpc") for n in (1, 4, 8)}
    assert all(t["time_ns"] > 0 and 0 < t["bus_utilization"] <= 1 for t in alpha.values())
    # more CPUs, less time; page coloring slower than CDPC at 8
    assert alpha[("cdpc", 8)]["time_ns"] < alpha[("cdpc", 4)]["time_ns"] < \
        alpha[("cdpc", 1)]["time_ns"]
    assert alpha[("pc", 8)]["time_ns"] > 1.2 * alpha[("cdpc", 8)]["time_ns"]
    assert alpha[("pc", 8)]["misses"]["conflict"] > 10 * alpha[("cdpc", 8)]["misses"]["conflict"]
    sgi = {(t["policy"], t["prefetch"]): t for t in res["timed"] if t["machine"] == "sgi"}
    assert set(sgi) == {("pc", 0), ("pc", 2), ("cdpc", 0), ("cdpc", 2)}
    assert sgi[("pc", 2)]["prefetch_fills"] > 0 and sgi[("pc", 0)]["prefetch_fills"] == 0
    assert sgi[("cdpc", 2)]["time_ns"] < sgi[("cdpc", 0)]["time_ns"]
    check = next(c for c in res["checks"] if c["what"].startswith("tomcatv, alpha8400"))
    assert "paper, measured: 1.25x, 2.15x" in check["value"]
    fig8 = next(c for c in res["checks"] if c["what"].startswith("tomcatv, sgi model, 4 CPUs"))
    assert fig8["met"], fig8
    text = md.read_text()
    assert "Table 2 in the model" in text and "Figure 2 in the model" in text
    assert "Figure 8 in the model" in text
    assert (plots / "coloring-table2.png").stat().st_size > 0


def test_bad_option_is_one_line():
    p = subprocess.run([*BENCH, "--programs", "spice"], capture_output=True, text=True)
    assert p.returncode == 2 and "--programs 'spice'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = subprocess.run([*BENCH, "--timed", "vax"], capture_output=True, text=True)
    assert p.returncode == 2 and "--timed 'vax'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
