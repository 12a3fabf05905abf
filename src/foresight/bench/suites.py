"""`foresight bench micro|overhead`: benchmark suites comparing variants in one run.

micro: each access pattern over each backing, as the original program (O) and
hand-instrumented with hints (P), under one memory cap and one readahead
setting; reports the access phase's time, the O/P speedup, bytes read,
main-thread I/O stall, and checks both variants print the same checksum.

overhead: the cost of a prefetch the residency filter drops, against the
madvise system call it replaces (targets: <= 5 ns and <= 1%).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
from pathlib import Path

from foresight import paths
from foresight.errors import BenchError, UsageError
from foresight.harness import environment, readahead
from foresight.harness.run import devices_for, prepare, run_once
from foresight.reports import console, save_figure, write_json
from foresight.units import format_size, parse_size

PATTERNS = ("backward", "strided", "indirect", "forward")
BACKINGS = ("file", "anon")
FILTER_NS_TARGET = 5.0
FILTER_RATIO_TARGET = 0.01


def bench_dir() -> Path:
    """Where data files live: on a real disk, not tmpfs (FORESIGHT_BENCH_DIR overrides)."""
    d = Path(os.environ.get("FORESIGHT_BENCH_DIR", "/var/tmp/foresight-bench"))
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BenchError(f"cannot use {d} for the benchmark data (FORESIGHT_BENCH_DIR): "
                         f"{e.strerror}") from None
    return d


def binary(name: str) -> str:
    path = paths.libexec_dir() / name
    if not path.exists():
        raise BenchError(f"{path} is missing; run `make setup` first")
    return str(path)


def _data_file(size: int) -> Path:
    path = bench_dir() / f"micro-{size}.dat"
    if not path.exists() or path.stat().st_size != size:
        r = subprocess.run([binary("micro-orig"), "create", str(path), str(size)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f"cannot create {path}: {r.stderr.strip()}")
    return path


def micro_access_seconds(stderr: str) -> float:
    m = re.search(r"micro: access ([0-9.]+) s", stderr)
    if not m:
        raise BenchError(f"micro printed no access time; its stderr was:\n{stderr}")
    return float(m.group(1))


def _variant(pattern: str, backing: str, variant: str, data: str, mem: int,
             repeat: int) -> dict:
    cmd = [binary(f"micro-{variant}"), pattern, backing, data]
    runs = []
    for _ in range(repeat):
        r = run_once(cmd, mem=mem, cold=True, files=[data] if backing == "file" else [],
                     capture=True, timeout=1800)
        if r["exit_code"] != 0:
            why = "killed by the OOM killer" if r["oom_killed"] else f"exit {r['exit_code']}"
            raise BenchError(f"{' '.join(cmd)}: {why}\n{r['stderr'].strip()}")
        r["access_seconds"] = micro_access_seconds(r["stderr"])
        runs.append(r)
    return median_summary(runs, runs[0]["stdout"].strip())


SUMMARY_KEYS = ("access_seconds", "wall_seconds", "io_stall_seconds", "read_bytes",
                "major_faults")


def median_summary(runs: list[dict], checksum: str) -> dict:
    """One variant's runs: the median of each measurement, the checksum, the runs."""
    out = {k: statistics.median(vals) if (vals := [x[k] for x in runs if x[k] is not None])
           else None for k in SUMMARY_KEYS}
    out["checksum"] = checksum
    out["cgroup_version"] = runs[0]["cgroup_version"]
    out["runtime"] = runs[-1].get("runtime")
    out["runs"] = [{k: x[k] for k in SUMMARY_KEYS} for x in runs]
    return out


def micro(mem: int, ratio: float, readahead_kb: int, patterns: list[str],
          backings: list[str], repeat: int) -> dict:
    size = int(mem * ratio) // 4096 * 4096
    data_file = str(_data_file(size)) if "file" in backings else None
    swap = environment.swap_summary()["total_bytes"]
    rows = []
    devices = devices_for([data_file] if data_file else [])
    with readahead.Setting(devices, readahead_kb):
        env = environment.environment(None)
        for backing in backings:
            data = data_file if backing == "file" else str(size)
            for pattern in patterns:
                row = {"pattern": pattern, "backing": backing, "data_bytes": size}
                if backing == "anon" and swap < size:
                    row["skipped"] = (f"needs {format_size(size)} of swap, {format_size(swap)} "
                                      "active; run `foresight swap enable --size 8G` as root")
                    rows.append(row)
                    continue
                o = _variant(pattern, backing, "orig", data, mem, repeat)
                p = _variant(pattern, backing, "hints", data, mem, repeat)
                if o["checksum"] != p["checksum"]:
                    raise BenchError(f"{pattern}/{backing}: outputs differ with hints:\n"
                                     f"  orig:  {o['checksum']}\n  hints: {p['checksum']}")
                row.update(orig=o, hints=p,
                           speedup=o["access_seconds"] / max(p["access_seconds"], 1e-9))
                rows.append(row)
    measured = [r["orig"] for r in rows if "orig" in r]
    env["cgroup_version"] = measured[0]["cgroup_version"] if measured else None
    return {"suite": "micro", "mem_limit_bytes": mem, "ratio": ratio,
            "readahead_kb": readahead_kb, "repeat": repeat, "rows": rows, "environment": env}


def overhead(repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        r = subprocess.run([binary("overhead")], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "FORESIGHT_DISABLE"})
        if r.returncode != 0:
            raise BenchError(f"overhead benchmark failed: {r.stderr.strip()}")
        runs.append(json.loads(r.stdout))
    med = {k: statistics.median(x[k] for x in runs) for k in runs[0]}
    return {"suite": "overhead", "repeat": repeat, "median": med, "runs": runs,
            "targets": {"filtered_prefetch_ns": FILTER_NS_TARGET,
                        "filtered_over_madvise": FILTER_RATIO_TARGET},
            "meets_targets": med["filtered_prefetch_ns"] <= FILTER_NS_TARGET
            and med["filtered_over_madvise"] <= FILTER_RATIO_TARGET,
            "environment": environment.environment(None)}


def _print_micro(res: dict) -> None:
    from rich.table import Table

    t = Table(title=f"foresight bench micro: {format_size(res['rows'][0]['data_bytes'])} data, "
              f"{format_size(res['mem_limit_bytes'])} cap, read_ahead_kb "
              f"{res['readahead_kb']}, median of {res['repeat']}", title_justify="left")
    for col in ("pattern", "backing", "O access", "P access", "speedup O/P", "O read",
                "P read", "O stall", "P stall"):
        t.add_column(col, justify="left" if col in ("pattern", "backing") else "right")
    for row in res["rows"]:
        if "skipped" in row:
            t.add_row(row["pattern"], row["backing"], f"skipped: {row['skipped']}")
            continue
        o, p = row["orig"], row["hints"]
        t.add_row(row["pattern"], row["backing"], f"{o['access_seconds']:.2f} s",
                  f"{p['access_seconds']:.2f} s", f"{row['speedup']:.2f}×",
                  format_size(o["read_bytes"]), format_size(p["read_bytes"]),
                  f"{o['io_stall_seconds']:.2f} s", f"{p['io_stall_seconds']:.2f} s")
    console().print(t)
    env = res["environment"]
    print(f"kernel {env['kernel']}, {env['cpus']} CPUs, read_ahead_kb {env['read_ahead_kb']}, "
          f"page-cluster {env['page_cluster']}, swap {format_size(env['swap']['total_bytes'])}, "
          f"THP {env['transparent_hugepage']}; outputs identical with and without hints"
          + environment.settings_text(env))


def _print_overhead(res: dict) -> None:
    m = res["median"]
    ok = "meets" if res["meets_targets"] else "MISSES"
    print(f"filtered prefetch: {m['filtered_prefetch_ns']:.2f} ns per call "
          f"(target <= {FILTER_NS_TARGET} ns)\n"
          f"madvise(MADV_WILLNEED) on a resident page: {m['madvise_ns']:.0f} ns\n"
          f"ratio: {100 * m['filtered_over_madvise']:.2f}% of a system call "
          f"(target <= {100 * FILTER_RATIO_TARGET:.0f}%) — {ok} the targets "
          f"(median of {res['repeat']})")


def _plot_micro(res: dict, directory: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in res["rows"] if "speedup" in r]
    labels = [f"{r['pattern']}\n{r['backing']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(rows)), 3.5))
    ax.bar(labels, [r["speedup"] for r in rows], color="tab:blue")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("speedup O/P (access phase)")
    ax.set_title(f"micro, {format_size(res['mem_limit_bytes'])} cap, ratio {res['ratio']:g}, "
                 f"read_ahead_kb {res['readahead_kb']}", fontsize=9)
    return save_figure(fig, directory, "micro-speedup.png")


def main(ns) -> int:
    if ns.repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {ns.repeat}")
    prepare(ns.json, ns.plots)
    if ns.suite == "nas":
        from foresight.bench import nas

        return nas.main(ns)
    if ns.suite == "demo":
        from foresight.bench import demo

        return demo.main(ns)
    if ns.suite == "compile":
        from foresight.bench import compile as compile_suite

        return compile_suite.main(ns)
    ns.mem = ns.mem or "256M"
    ns.ratio = 4.0 if ns.ratio is None else ns.ratio
    if ns.suite == "micro":
        patterns = [p for p in ns.patterns.split(",") if p]
        backings = [b for b in ns.backings.split(",") if b]
        for p in patterns:
            if p not in PATTERNS:
                raise UsageError(f"unknown pattern {p!r} (choose from {', '.join(PATTERNS)})")
        for b in backings:
            if b not in BACKINGS:
                raise UsageError(f"unknown backing {b!r} (choose from {', '.join(BACKINGS)})")
        if ns.ratio <= 0:
            raise UsageError(f"--ratio must be positive, not {ns.ratio}")
        res = micro(parse_size(ns.mem), ns.ratio, ns.readahead_kb, patterns, backings,
                    ns.repeat)
        _print_micro(res)
        if ns.plots:
            print(f"plot: {_plot_micro(res, ns.plots)}")
    elif ns.suite == "compiler":
        from foresight.bench import compiler

        names = [k for k in (ns.kernels or ",".join(compiler.KERNELS)).split(",") if k]
        for k in names:
            if k not in compiler.KERNELS:
                raise UsageError(f"unknown kernel {k!r} (choose from "
                                 f"{', '.join(compiler.KERNELS)})")
        if ns.ratio <= 0:
            raise UsageError(f"--ratio must be positive, not {ns.ratio}")
        res = compiler.compiler(parse_size(ns.mem), ns.ratio, ns.readahead_kb, names,
                                ns.repeat)
        compiler.print_table(res)
        if ns.plots:
            print(f"plot: {compiler.plot(res, ns.plots)}")
    else:
        res = overhead(ns.repeat)
        _print_overhead(res)
    if ns.json:
        write_json(ns.json, res)
    return 0
