"""`foresight bench nas`: the out-of-core NAS-style suite, O vs P (paper Section 5).

Every kernel in benchmarks/nas (installed into share/foresight/nas) is plain C
with no hints, sized by `--mb` and verifying its own result.  It is built by
`foresight cc -O2` with hints (P), with `--no-prefetch` (O) and, for IS, with
`--no-indirect` (D: direct references only, Figure 18).  O and P run `--repeat`
times each, alternating, under the memory cap with a cold cache, and the median run of
each stands for it (the range of the runs beside it); P also runs once with the run-time
filter off (FORESIGHT_FILTER=0, Figure 12(c)) and D once.  O and P run once more each, traced
(FORESIGHT_TRACE), to measure coverage from real faults (coverage.py); the timed
runs are not traced.  Every variant must verify and
print the same result lines as O.

Data is generated in memory, as the NPB codes do: out of core it pages to swap
(`--backing file` maps the main arrays from files instead).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from foresight import paths
from foresight.bench import bound, suite
from foresight.bench import coverage as cov
from foresight.bench.common import build as build_variants
from foresight.bench.common import (
    by_ratio,
    pyplot,
    ratio_list,
    run_failure,
    sources,
    swap_shortfall,
)
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError, UsageError
from foresight.harness import environment, readahead
from foresight.harness.run import devices_for, run_once
from foresight.reports import save_figure
from foresight.units import format_size, parse_size

KERNELS = ("is", "cg", "ep", "ft", "mg", "lu", "sp", "bt")
# Data as a share of memory in the paper's IRIX runs (Table V, "% of Available").
PAPER_RATIO = {"is": 2.75, "cg": 2.75, "ep": 1.79, "ft": 3.13, "mg": 6.00, "lu": 2.92,
               "sp": 2.84, "bt": 2.52}
# --size: memory cap, data/memory ratio (None: the paper's per kernel), iterations.
SIZES = {
    "test": ("32M", 1.5, 1),
    "default": ("64M", 3.0, None),
    "paper": ("64M", None, None),
}
SWEEP_FRACTIONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
DATA_PARENT = "/var/tmp"   # the runs' data directory is made here (on a disk, not tmpfs)


def nas_dir() -> Path:
    """The kernels' sources (the source tree's, else those `make setup` installed)."""
    return sources("nas", "nas_common.h", paths.nas_dir(), "the NAS kernel sources")


def build(name: str, out: Path) -> dict[str, str]:
    """Compile kernel NAME as O, P (and D for IS); returns the executables."""
    src = nas_dir() / f"{name}.c"
    if not src.exists():
        raise BenchError(f"kernel {name}: {src} is missing")
    exes, _ = build_variants(name, out, src, ["-lm"], [f"-I{nas_dir()}"],
                             {"D": ["--no-indirect"]} if name == "is" else None)
    return exes


def phases(stderr: str) -> dict[str, float]:
    """Sum of the kernel's `phase NAME SECONDS` lines per phase."""
    out: dict[str, float] = {}
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "phase":
            try:
                out[parts[1]] = out.get(parts[1], 0.0) + float(parts[2])
            except ValueError:
                continue
    return out


def run_variant(exe: str, args: list[str], mem: int | None, cold: bool, timeout: float,
                env: dict | None = None, trace: Path | None = None) -> dict:
    """One run; a kill is reported (the kernel verifies nothing), never retried."""
    e = dict(os.environ)
    e.update(env or {})
    if trace is not None:
        e["FORESIGHT_TRACE"] = str(trace)
    r = run_once([exe, *args], mem=mem, cold=cold, env=e, timeout=timeout, capture=True)
    out = r["stdout"].strip().splitlines()
    r["verified"] = r["exit_code"] == 0 and bool(out) and out[-1] == "verification SUCCESSFUL"
    r["result_lines"] = out
    r["phases"] = phases(r["stderr"])
    return r


def median_run(runs: list[dict]) -> dict:
    """The run that stands for a variant run several times: the first that failed (a
    kill or a wrong result is reported, never outvoted), else the one with the median
    wall time (the lower of the two middle ones for an even count), with every run's
    wall time in run order as `walls`."""
    failed = [r for r in runs if not r["verified"]]
    if failed:
        return failed[0]
    chosen = sorted(runs, key=lambda r: r["wall_seconds"])[(len(runs) - 1) // 2]
    return {**chosen, "walls": [r["wall_seconds"] for r in runs]}


def _slim(r: dict) -> dict:
    """A run for the JSON: the `foresight run` keys and runtime statistics, no output."""
    return {k: v for k, v in r.items() if k not in ("stdout", "stderr", "result_lines")}


def _wall(r: dict) -> str:
    """A run's wall time for a table; a run that did not finish is named for why."""
    if r.get("timed_out") or r.get("oom_killed"):
        return _why(r)
    walls = r.get("walls") or []
    spread = f" ({min(walls):.2f}–{max(walls):.2f})" if len(walls) > 1 else ""
    return f"{r['wall_seconds']:.2f} s{spread}"


def _why(r: dict) -> str:
    why = run_failure(r)
    if why is not None:
        return why
    return "verification failed: " + (r["result_lines"][-1] if r["result_lines"] else "")


def kernel_args(mb: int, iters: int | None, backing: str, tmp: Path) -> list[str]:
    return ["--mb", str(mb), "--backing", backing, "--data-dir", str(tmp),
            *(["--iters", str(iters)] if iters else [])]


def minimum_traffic(data_bytes: int, mem: int, backing: str) -> dict:
    """The least a NAS kernel must move: its arrays are generated in memory (malloc'd,
    or mapped from files unlinked at once, whose pages need never reach the disk), so
    what exceeds the cap is written out once and read back once."""
    return bound.spilled(data_bytes, mem, "malloc'd" if backing == "anon"
                         else "file-mapped (unlinked files)")


def kernel(name: str, exes: dict[str, str], mb: int, iters: int | None, mem: int,
           backing: str, timeout: float, repeat: int, tmp: Path, step) -> dict:
    args = kernel_args(mb, iters, backing, tmp)
    timed: dict[str, list[dict]] = {"O": [], "P": []}
    for k in range(repeat):   # alternating: the host's noise hits both alike
        for v in ("O", "P"):
            step(f"{name} {v}" + (f" ({k + 1}/{repeat})" if repeat > 1 else ""))
            timed[v].append(run_variant(exes[v], args, mem, True, timeout))
    runs = {v: median_run(rs) for v, rs in timed.items()}
    # Timed runs are not traced (tracing slows a run that takes many minor faults, up to
    # 2x for CG here); two more runs of O and P, traced, measure coverage.
    plan = [("P_nofilter", exes["P"], {"FORESIGHT_FILTER": "0"}, False)]
    if "D" in exes:
        plan.append(("D", exes["D"], {}, False))
    plan += [("O_traced", exes["O"], {}, True), ("P_traced", exes["P"], {}, True)]
    for v, exe, env, traced in plan:
        step(f"{name} {v}")
        runs[v] = run_variant(exe, args, mem, True, timeout, env,
                              tmp / f"{name}-{v}.trace" if traced else None)
    row: dict = {"name": name, "mb": mb, "iters": iters, "backing": backing,
                 "verified": all(r["verified"] for r in runs.values())}
    problems = [f"{v}: {_why(r)}" for v, r in runs.items() if not r["verified"]]
    ref = runs["O"]["result_lines"]
    every = [*((v, r) for v, rs in timed.items() for r in rs),
             *((v, r) for v, r in runs.items() if v not in timed)]
    for v in dict.fromkeys(v for v, r in every
                           if r["verified"] and runs["O"]["verified"] and r["result_lines"] != ref):
        row["verified"] = False
        problems.append(f"{v}: results differ from the original's")
    row["problems"] = problems
    row["data_bytes"] = sum(a.size for a in cov.parse_arrays(runs["O"]["stderr"])) or mb << 20
    row["variants"] = {v: _slim(r) for v, r in runs.items()}
    o, p = runs["O"], runs["P"]
    if o["verified"] and p["verified"]:
        row["speedup"] = o["wall_seconds"] / max(p["wall_seconds"], 1e-9)
        so, sp = o.get("io_stall_seconds"), p.get("io_stall_seconds")
        row["stall_reduction"] = 1 - sp / so if so and sp is not None else None
        try:
            row["coverage"] = cov.coverage(
                cov.parse_trace(tmp / f"{name}-O_traced.trace"),
                cov.parse_arrays(runs["O_traced"]["stderr"]),
                cov.parse_trace(tmp / f"{name}-P_traced.trace"),
                cov.parse_arrays(runs["P_traced"]["stderr"]))
        except BenchError as e:
            row["coverage"] = None
            problems.append(f"coverage: {e}")
        g = (p.get("runtime") or {}).get("global", {})
        if g:
            row["filter"] = {
                "considered": g.get("considered", 0), "filtered": g.get("filtered", 0),
                "filtered_share": g["filtered"] / g["considered"] if g.get("considered") else 0,
                "issued": g.get("issued", 0), "pages_issued": g.get("pages_issued", 0),
                "pages_unnecessary": g.get("pages_unnecessary", 0),
                "pages_freed_by_release": g.get("pages_freed", 0),
                "pages_deactivated_by_release": g.get("pages_deactivated", 0),
                "pages_paged_out_by_release": g.get("pages_paged_out", 0),
                "pages_back_after_pageout": g.get("pages_back", 0)}
    return row


def check_swap(mb: int, mem: int, backing: str) -> None:
    lacking = swap_shortfall(mb << 20, mem) if backing == "anon" else None
    if lacking:
        raise BenchError(f"{lacking}, or use --backing file")


def plan_sizes(size: str, mem: int, names: list[str], ratio: float | None
               ) -> list[tuple[str, int]]:
    """(kernel, MiB of data) for each of NAMES: RATIO × MEM, or the --size's ratio."""
    default = SIZES[size][1]
    return [(n, max(1, int(mem * (ratio or default or PAPER_RATIO[n])) >> 20)) for n in names]


def nas(size: str, mem: int, readahead_kb: int, names: list[str], backing: str,
        timeout: float, repeat: int, sweep: bool, ratio: float | None, device_probe: dict
        ) -> dict:
    from rich.progress import Progress

    iters = SIZES[size][2]
    plan = plan_sizes(size, mem, names, ratio)
    for _, mb in plan:
        check_swap(mb, mem, backing)
    sweep_plan = []
    if sweep:
        sweep_plan = [(f, max(1, int(mem * f) >> 20)) for f in SWEEP_FRACTIONS]
    # per kernel: build, its runs, and bench incore's 6 in-core runs (T_cpu)
    total = (sum((13 if n == "is" else 12) + 2 * (repeat - 1) for n in names)
             + 2 * len(sweep_plan)
             + (4 if sweep else 0))
    rows, sweep_rows = [], []
    with tempfile.TemporaryDirectory(prefix="foresight-nas-", dir=DATA_PARENT) as tmpname:
        tmp = Path(tmpname)
        devices = devices_for([str(tmp)])
        with readahead.Setting(devices, readahead_kb), Progress(transient=True) as bar:
            task = bar.add_task("foresight bench nas", total=total)

            def step(what: str) -> None:
                bar.update(task, advance=1, description=f"nas: {what}")

            env = environment.environment(None)
            built: dict[str, dict[str, str]] = {}
            for n, mb in plan:
                step(f"{n} build")
                built[n] = build(n, tmp)
                row = kernel(n, built[n], mb, iters, mem, backing, timeout, repeat, tmp, step)
                if "speedup" in row:   # O and P verified: their bound
                    ic = bound.in_core(n, built[n], kernel_args(mb, iters, backing, tmp), [],
                                       1, step)
                    row["in_core"] = ic["runs"]
                    v = row["variants"]
                    row["bound"] = bound.assess(
                        {x: v[x]["wall_seconds"] for x in ("O", "P")}, v, ic["t_cpu"],
                        minimum_traffic(row["data_bytes"], mem, backing), device_probe)
                rows.append(row)
                for f in tmp.glob(f"{n}-*.trace"):
                    f.unlink()
            if sweep:
                exes = built.get("is") or build("is", tmp)
                for frac, mb in sweep_plan:
                    row = {"fraction_of_memory": frac, "mb": mb}
                    for v in ("O", "P"):
                        step(f"sweep IS {frac:g}x {v}")
                        r = run_variant(exes[v], ["--mb", str(mb), "--backing", backing],
                                        mem, True, timeout)
                        row[v] = _slim(r)
                        row[v]["verified"] = r["verified"]
                    sweep_rows.append(row)
                incore_mb = max(1, int(mem * 0.5) >> 20)
                for cold in (True, False):
                    for v in ("O", "P"):
                        step(f"in-core IS {'cold' if cold else 'warm'} {v}")
                        r = run_variant(exes[v], ["--mb", str(incore_mb), "--backing", backing],
                                        None, cold, timeout)
                        sweep_rows.append({"in_core": "cold" if cold else "warm", "variant": v,
                                           "mb": incore_mb, "run": _slim(r)})
    env["cgroup_version"] = next((r["variants"]["O"]["cgroup_version"] for r in rows), None)
    return {"suite": "nas", "size": size, "mem_limit_bytes": mem, "readahead_kb": readahead_kb,
            **({"ratio": ratio} if ratio else {}), "backing": backing,
            "timeout_seconds": timeout, "repeat": repeat, "kernels": rows,
            "sweep": sweep_rows, "device_probe": device_probe, "environment": env}


def _seconds(x: float | None) -> str:
    return f"{x:.2f} s" if x is not None else "–"


class Nas(suite.Suite):
    name = "nas"
    help = "the out-of-core NAS-style suite, O vs P (the paper's Section 5)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--size", default="default", choices=list(SIZES),
                            help="test (32M cap, 1.5x data, one iteration), default (64M "
                            "cap, 3x data) or paper (Table V ratios)")
        suite.add_cap(parser, None, mem_default="per --size")
        parser.add_argument("--ratio", type=ratio_list, metavar="R[,R...]",
                            help="data/memory ratios, comma-separated, each run in turn "
                            "(default per --size); --sweep runs with the first")
        suite.add_kernels(parser, ", ".join(KERNELS))
        parser.add_argument("--backing", default="anon", choices=("anon", "file"),
                            help="the main arrays in ordinary memory (anon, paged to swap) "
                            "or mapped from files (default anon)")
        parser.add_argument("--sweep", metavar="IS", help="also the IS size sweep (Figure "
                            "19) and in-core cold/warm runs (Figure 15)")
        suite.add_timeout(parser)

    def measure(self, ns: argparse.Namespace) -> dict:
        names = suite.choose(ns.kernels, KERNELS, "kernel", "--kernels")
        sweep = bool(ns.sweep)
        if sweep and ns.sweep.lower() != "is":
            raise UsageError(f"--sweep {ns.sweep!r}: only IS has a size sweep")
        mem = parse_size(ns.mem or SIZES[ns.size][0])
        ratios = ns.ratio or [None]
        for r in ratios:   # every ratio's swap checked before anything runs
            for _, mb in plan_sizes(ns.size, mem, names, r):
                check_swap(mb, mem, ns.backing)
        device_probe = bound.probe(Path(DATA_PARENT))
        return by_ratio([nas(ns.size, mem, ns.readahead_kb, names, ns.backing, ns.timeout,
                             ns.repeat, sweep and i == 0, r, device_probe)
                         for i, r in enumerate(ratios)])

    def tables(self, res: dict) -> list[Table]:
        if "by_ratio" in res:
            subs = list(res["by_ratio"].values())
            return ([t for sub in subs for t in self.tables(sub)]
                    + [bound.ratio_table(subs, _rows, "wall")])
        rows = []
        for r in res["kernels"]:
            o, p = r["variants"]["O"], r["variants"]["P"]
            nf = r["variants"]["P_nofilter"]
            c = r.get("coverage")
            cov_s = (f"{c['prefetched_hit']:.0%}/{c['prefetched_fault']:.0%}/"
                     f"{c['nonprefetched_fault']:.0%}") if c else "–"
            rows.append((r["name"], f"{r['mb']} MiB", _wall(o), _wall(p),
                         f"{r['speedup']:.2f}×" if "speedup" in r else "–",
                         _seconds(o.get("io_stall_seconds")), _seconds(p.get("io_stall_seconds")),
                         f"{r['stall_reduction']:.0%}" if r.get("stall_reduction") is not None
                         else "–",
                         f"{o['major_faults']:,}", f"{p['major_faults']:,}", cov_s,
                         f"{r['filter']['filtered_share']:.1%}" if r.get("filter") else "–",
                         _wall(nf),
                         "yes" if r["verified"] else "NO: " + "; ".join(r["problems"])))
        ratio = f", data {res['ratio']:g}× the cap" if res.get("ratio") else ""
        out = [Table(f"foresight bench nas ({res['size']}{ratio}): "
                     f"{format_size(res['mem_limit_bytes'])} cap, read_ahead_kb "
                     f"{res['readahead_kb']}, {res['backing']} backing",
                     ("kernel", "data", "O wall", "P wall", "speedup", "O stall", "P stall",
                      "stall cut", "O faults", "P faults", "coverage hit/late/none", "filtered",
                      "P no-filter", "verified"), rows, left=("kernel", "verified")),
               *self.bound_tables(res)]
        sweep = [s for s in res["sweep"] if "fraction_of_memory" in s]
        if sweep:
            out.append(Table("IS against its data size (Figure 19): cold, under the cap",
                             ("data / memory", "data", "O wall", "P wall", "O/P"),
                             [(f"{s['fraction_of_memory']:g}×", f"{s['mb']} MiB",
                               _seconds(s["O"]["wall_seconds"]), _seconds(s["P"]["wall_seconds"]),
                               f"{s['O']['wall_seconds'] / max(s['P']['wall_seconds'], 1e-9):.2f}×")
                              for s in sweep]))
        in_core = {(s["in_core"], s["variant"]): s for s in res["sweep"] if "in_core" in s}
        if in_core:
            mb = next(iter(in_core.values()))["mb"]
            out.append(Table(f"IS in core (Figure 15): {mb} MiB, no cap",
                             ("page cache", "O wall", "P wall"),
                             [(cache, *(_seconds(in_core[cache, v]["run"]["wall_seconds"])
                                        if (cache, v) in in_core else "–" for v in ("O", "P")))
                              for cache in ("cold", "warm")], left=("page cache",)))
        return out

    def bound_tables(self, res: dict) -> list[Table]:
        rows = [(r["name"], r["bound"]) for r in res["kernels"] if r.get("bound")]
        if not rows:
            return []
        return [bound.table(f"the physical bound: {format_size(res['mem_limit_bytes'])} cap, "
                            "whole-program wall times", rows)]

    def notes(self, res: dict) -> list[str]:
        if "by_ratio" in res:   # each ratio's IS phases, the machine and probe lines once
            return list(dict.fromkeys(f"at {r}×, {n}" if " phases (" in n else n
                                      for r, sub in res["by_ratio"].items()
                                      for n in self.notes(sub)))
        out = []
        for r in res["kernels"]:
            if "D" in r["variants"]:
                ph = {v: r["variants"][v].get("phases", {}) for v in ("O", "D", "P")}
                names = sorted({k for d in ph.values() for k in d})
                out.append(f"{r['name']} phases (O / D direct only / P direct+indirect): "
                           + ", ".join(f"{k} {ph['O'].get(k, 0):.2f}/{ph['D'].get(k, 0):.2f}/"
                                       f"{ph['P'].get(k, 0):.2f} s" for k in names))
        k = res.get("repeat", 1)
        out.append(f"{machine(res['environment'])}; coverage from FORESIGHT_TRACE of one "
                   "more O and P run each")
        out.append("O/P/D/no-filter runs are single cold runs" if k == 1 else
                   f"O and P: the median of {k} alternating cold runs each (their range in "
                   "brackets; the bound's columns are the median run's); D and no-filter: "
                   "single cold runs")
        if res.get("device_probe") and self.bound_tables(res):
            out += [bound.probe_note(res["device_probe"]), bound.BOUND_NOTE]
        return out

    def plot(self, res: dict, directory: str) -> list[str]:
        if "by_ratio" in res:   # each ratio's plots in DIRECTORY/ratio-R, then speedup by ratio
            subs = res["by_ratio"]
            return [f for r, sub in subs.items()
                    for f in self.plot(sub, str(Path(directory) / f"ratio-{r}"))] + [
                bound.ratio_plot(list(subs.values()), _rows, "wall", directory, "nas-ratios.png",
                                 str.upper)]
        plt = pyplot()
        out_dir = Path(directory)
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        rows = res["kernels"]
        # Figure 10 style: normalized execution time, I/O stall on top of the rest.
        fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(rows)), 3.6))
        for i, r in enumerate(rows):
            base = r["variants"]["O"]["wall_seconds"] or 1
            for j, v in enumerate(("O", "P")):
                run = r["variants"][v]
                stall = min(run.get("io_stall_seconds") or 0, run["wall_seconds"])
                x = i + (j - 0.5) * 0.38
                ax.bar(x, (run["wall_seconds"] - stall) / base, 0.36, color="tab:blue",
                       label="busy (wall − I/O stall)" if i == 0 and j == 0 else None)
                ax.bar(x, stall / base, 0.36, bottom=(run["wall_seconds"] - stall) / base,
                       color="tab:red",
                       label="I/O stall (main thread)" if i == 0 and j == 0 else None)
                ax.annotate(v, (x, 0), ha="center", va="bottom", fontsize=7, color="white")
        ax.set_xticks(range(len(rows)), [r["name"].upper() for r in rows])
        ax.set_ylabel("time, normalized to O")
        ax.legend(fontsize=7)
        ax.set_title(f"O vs P, {format_size(res['mem_limit_bytes'])} cap, read_ahead_kb "
                     f"{res['readahead_kb']}", fontsize=9)
        written.append(save_figure(fig, out_dir, "nas-time.png"))
        # Figure 12(a) style: coverage of the original run's faulting pages.
        cov_rows = [r for r in rows if r.get("coverage")]
        if cov_rows:
            fig, ax = plt.subplots(figsize=(max(5, 1.0 * len(cov_rows)), 3.4))
            bottom = [0.0] * len(cov_rows)
            for key, color, label in (("prefetched_hit", "tab:green", "prefetched hit"),
                                      ("prefetched_fault", "tab:orange", "prefetched fault"),
                                      ("nonprefetched_fault", "tab:gray", "nonprefetched fault")):
                vals = [r["coverage"][key] for r in cov_rows]
                ax.bar(range(len(cov_rows)), vals, 0.6, bottom=bottom, color=color, label=label)
                bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
            ax.set_xticks(range(len(cov_rows)), [r["name"].upper() for r in cov_rows])
            ax.set_ylabel("share of the original's faulting pages")
            ax.legend(fontsize=7)
            written.append(save_figure(fig, out_dir, "nas-coverage.png"))
        sweep = [s for s in res["sweep"] if "fraction_of_memory" in s]
        if sweep:
            fig, ax = plt.subplots(figsize=(5, 3.4))
            xs = [s["fraction_of_memory"] for s in sweep]
            for v, color in (("O", "tab:gray"), ("P", "tab:green")):
                ax.plot(xs, [s[v]["wall_seconds"] for s in sweep], "o-", color=color,
                        label={"O": "original", "P": "prefetching"}[v])
            ax.set_xlabel("IS data / memory")
            ax.set_ylabel("wall time (s)")
            ax.legend(fontsize=8)
            written.append(save_figure(fig, out_dir, "nas-is-sweep.png"))
        bounds = [(r["name"].upper(), r["bound"]) for r in rows if r.get("bound")]
        if bounds:
            written.append(bound.plot(bounds, directory, "nas-bound.png",
                                      f"O, P and the physical bound, "
                                      f"{format_size(res['mem_limit_bytes'])} cap"))
        return written

    def exit_code(self, res: dict) -> int:
        subs = res["by_ratio"].values() if "by_ratio" in res else [res]
        return 0 if all(r["verified"] for sub in subs for r in sub["kernels"]) else 1


def _rows(sub: dict) -> dict[str, dict]:
    return {r["name"]: r for r in sub["kernels"]}


SUITE = Nas()
