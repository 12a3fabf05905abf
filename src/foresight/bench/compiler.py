"""`foresight bench compiler`: unmodified kernels built by foresight cc, O vs P.

Each kernel in benchmarks/kernels (installed into share/foresight/kernels) is a
plain C program with no hints.  It is compiled twice by `foresight cc -O2`:
with hints (P) and with `--no-prefetch` (O, the same pipeline without hints).
Both run under one memory cap with a cold cache and `ratio` × cap of data,
alternately (O, P, O, P, ...), and must print the same checksum; the table
gives the access phase's time (timed by the kernel itself), the O/P speedup,
major faults, bytes read and main-thread I/O stall.

Where a kernel has the access pattern of a hand-instrumented microbenchmark
(gather ~ `micro indirect`, colsum ~ `micro strided` with a 64 KiB stride), the
micro's P variant runs in the same session on the same data file, so the
compiler's hints can be compared with hand-placed ones.

Kernel command line: `KERNEL create|run FILE BYTES` (FILE is `-` for the
stencils, whose data is malloc'd); `run` prints `checksum ...` and
`access_seconds X` on stdout.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from foresight import paths
from foresight.bench import bound, suite
from foresight.bench.common import (
    bench_dir,
    binary,
    build,
    by_ratio,
    median_summary,
    pyplot,
    ratio_list,
    sources,
    swap_shortfall,
)
from foresight.bench.micro import micro_access_seconds
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError
from foresight.harness import environment, readahead
from foresight.harness.run import devices_for, run_once
from foresight.reports import save_figure
from foresight.units import format_size, parse_size


@dataclass(frozen=True)
class Kernel:
    data: str          # "anon" (malloc'd, pages to swap); else the kind of mapped file
                       # its `create` writes ("doubles", "keys1024", "seismo")
    what: str
    micro: str | None = None   # the hand-instrumented micro pattern with the same accesses


KERNELS = {
    "stencil": Kernel("anon", "2-D Jacobi over malloc'd variably modified arrays (swap)"),
    "stencil_rows": Kernel("anon", "2-D Jacobi over row pointers (double **), each row "
                           "malloc'd (swap)"),
    "tensor3": Kernel("anon", "two 3-D fields over double *** (f3tensor layout, 16 KiB "
                      "rows), one explicit time step (swap)"),
    "gather": Kernel("doubles", "indirect gather data[idx[i]] over a mapped file", "indirect"),
    "matvec_t": Kernel("doubles", "transposed matrix-vector A[j*n + i] on a linearized matrix"),
    "colsum": Kernel("doubles", "column sums M[i][j] of a row-major matrix (64 KiB rows)",
                     "strided"),
    "bucket_sort": Kernel("keys1024", "bucket sort of Figure 17: key density, ranking, copy"),
    "rowptr": Kernel("doubles", "matrix-vector through row pointers (double **), rows "
                     "shuffled, 64 KiB rows"),
    "walk": Kernel("doubles", "pointer walks over a mapped file: backward sum, then one "
                   "double per page"),
    # Programs written the way scientists write them (issue 26): rows malloc'd in loops,
    # structs of arrays, static arrays with global bounds, helpers called in loops.
    "heat3d": Kernel("anon", "3-D explicit heat steps over double ***, every 8 KiB row "
                     "malloc'd in loops, a helper called per row (swap)"),
    "md": Kernel("anon", "particles as a struct of arrays: kick, drift, cell sort, pair "
                 "forces gathered through the cell order (swap)"),
    "zsolve": Kernel("anon", "NPB-style static u[k][j][i][m] with global bounds: rhs, a z "
                     "sweep with k innermost (160 KiB per step), add (swap)"),
    "cholqr": Kernel("anon", "blocked Cholesky QR of 16 malloc'd columns, ddot/daxpy "
                     "helpers on 16 KiB segments (swap)"),
    "seismo": Kernel("seismo", "16-channel recording in a mapped file: common average "
                     "(channel loop innermost), STA/LTA, histogram"),
}
COLSUM_PASSES = 8192 // 1024   # colsum.c: 8192 columns, every 1024th summed


def minimum_traffic(name: str, size: int, mem: int) -> dict:
    """The least traffic kernel NAME needs on SIZE bytes under a MEM cap, with its rule:
    malloc'd data, the excess over the cap written to swap and read back once; a mapped
    file, the pages its access phase touches read once and the pages it writes written
    once (the other pages of the file need never be read)."""
    if KERNELS[name].data == "anon":
        return bound.spilled(size, mem)
    page = 4096
    if name == "gather":     # size/16 KiB uniform random doubles: expected distinct pages
        pages = size // page
        read = pages * -math.expm1((size // 4096 // 4) * math.log1p(-1 / pages)) * page
        rule = "distinct pages of its size/16 KiB random indices (expected), read once"
    elif name == "matvec_t":  # every 512th column of an n x n matrix: one double per page
        n = math.isqrt(size // 8)
        read, rule = n * n * 8, "the n × n matrix (every page holds a used column), read once"
    elif name == "colsum":   # columns 0, 1024, ... of 64 KiB rows: 8 of each row's 16 pages
        read, rule = size // 2, "half of each 64 KiB row's pages (8 columns), read once"
    elif name == "bucket_sort":
        return {"file_read": size // 2, "file_write": size // 2, "swap_in": 0, "swap_out": 0,
                "rule": "the keys (half the file) read once, the output (the other half) "
                        "written once"}
    else:                    # rowptr, walk: every page
        read, rule = size, "the whole file read once"
    return {"file_read": int(read), "file_write": 0, "swap_in": 0, "swap_out": 0,
            "rule": rule}


def kernels_dir() -> Path:
    """The kernels' sources (the source tree's, else those `make setup` installed)."""
    return sources("kernels", "gather.c", paths.kernels_dir(), "the kernel sources")


def data_file(kind: str, size: int, creator: str) -> str:
    """The mapped data file of KIND and SIZE bytes, created once by a kernel's `create`."""
    path = bench_dir() / f"kernel-{kind}-{size}.dat"
    if not path.exists() or path.stat().st_size != size:
        r = subprocess.run([creator, "create", str(path), str(size)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            path.unlink(missing_ok=True)
            raise BenchError(f"cannot create {path}: {r.stderr.strip()}")
    return str(path)


class KernelFailed(BenchError):
    """A run of a kernel failed (killed, timed out, a non-zero exit) or its variants'
    outputs differ: the kernel's row says so and the suite goes on to the next."""


def parse_output(stdout: str) -> tuple[str, float]:
    """A kernel's checksum line(s) and its access phase's seconds."""
    checksum, seconds = [], None
    for line in stdout.splitlines():
        if line.startswith("access_seconds"):
            seconds = float(line.split()[1])
        elif line.strip():
            checksum.append(line.strip())
    if not checksum or seconds is None:
        raise KernelFailed("no checksum or access_seconds printed",
                           f"kernel printed no checksum/access_seconds; its stdout was:\n"
                           f"{stdout}")
    return "\n".join(checksum), seconds


def run_kernel(exe: str, data: str, size: int, mem: int) -> dict:
    """One cold run of a kernel under the cap, with its checksum and access time."""
    files = [] if data == "-" else [data]
    r = run_once([exe, "run", data, str(size)], mem=mem, cold=True, files=files,
                 capture=True, timeout=1800)
    if r["exit_code"] != 0:
        why = ("killed by the OOM killer" if r["oom_killed"] else "timed out"
               if r["timed_out"] else f"exit {r['exit_code']}")
        raise KernelFailed(f"{Path(exe).name} {why}",
                           f"{Path(exe).name} run {data} {size}: {why}\n"
                           f"{r['stderr'].strip()[-2000:]}")
    r["checksum"], r["access_seconds"] = parse_output(r["stdout"])
    return r


def _micro_cmd(pattern: str, data: str, size: int) -> tuple[list[str], int]:
    """The hand-instrumented micro doing the kernel's accesses, and how many of its
    runs make one kernel run."""
    if pattern == "indirect":   # gather.c: bytes/4096/4 random accesses
        return ([binary("micro-hints"), "indirect", "file", data,
                 "--accesses", str(size // 4096 // 4)], 1)
    return ([binary("micro-hints"), "strided", "file", data, "--stride", "65536"],
            COLSUM_PASSES)


def check_swap(names: list[str], size: int, mem: int) -> None:
    """Malloc'd data beyond the cap pages to swap; without enough swap the cap kills it."""
    anon = [n for n in names if KERNELS[n].data == "anon"]
    lacking = swap_shortfall(size, mem) if anon else None
    if lacking:
        others = ",".join(n for n in names if n not in anon)
        raise BenchError(f"{', '.join(anon)}: {lacking}"
                         + (f", or leave it out with --kernels {others}" if others else ""))


def data_size(mem: int, ratio: float) -> int:
    """RATIO × MEM bytes of data, in whole MiB."""
    size = int(mem * ratio) // (1 << 20) * (1 << 20)
    if size < (1 << 20):
        raise BenchError(f"{ratio:g} × {format_size(mem)} is less than 1 MiB of data")
    return size


def measure_kernel(name: str, exes: dict[str, str], data: str, size: int, mem: int,
                   repeat: int, device_probe: dict, row: dict) -> None:
    """Fill ROW with kernel NAME's runs; BenchError (KernelFailed) when one fails."""
    k = KERNELS[name]
    runs: dict[str, list[dict]] = {"O": [], "P": [], "micro": []}
    for _ in range(repeat):   # alternate the variants: noise hits both alike
        for v in ("O", "P"):
            runs[v].append(run_kernel(exes[v], data, size, mem))
        if k.micro:
            runs["micro"].append(_run_micro(k.micro, data, size, mem))
    sums = {r["checksum"] for v in ("O", "P") for r in runs[v]}
    if len(sums) != 1:
        raise KernelFailed("outputs differ with and without hints",
                           f"outputs differ with and without hints:\n  O: "
                           f"{runs['O'][0]['checksum']}\n  P: {runs['P'][0]['checksum']}")
    ic = bound.in_core(name, exes, ["run", data, str(size)], [] if data == "-" else [data],
                       repeat, lambda _: None)
    for v in ("O", "P"):
        row[v] = median_summary(runs[v], runs[v][0]["checksum"])
    row["speedup"] = row["O"]["access_seconds"] / max(row["P"]["access_seconds"], 1e-9)
    if runs["micro"]:
        cmd, scale = _micro_cmd(k.micro, data, size)
        m = median_summary(runs["micro"], "")
        row["micro_hints"] = {"pattern": k.micro, "command": cmd[1:],
                              "runs_per_kernel_run": scale,
                              "access_seconds": m["access_seconds"] * scale, "measured": m}
    row["in_core"] = ic["runs"]
    row["bound"] = bound.assess({v: row[v]["wall_seconds"] for v in ("O", "P")},
                                {v: row[v] for v in ("O", "P")}, ic["t_cpu"],
                                minimum_traffic(name, size, mem), device_probe)


def compiler(mem: int, ratio: float, readahead_kb: int, names: list[str], repeat: int,
             device_probe: dict) -> dict:
    size = data_size(mem, ratio)
    check_swap(names, size, mem)
    rows = []
    with tempfile.TemporaryDirectory(prefix="foresight-bench-") as tmp:
        devices = devices_for([str(bench_dir())])  # the data files live there
        with readahead.Setting(devices, readahead_kb):
            env = environment.environment(None)
            for name in names:
                k = KERNELS[name]
                exes, cc_report = build(name, Path(tmp), kernels_dir() / f"{name}.c")
                row: dict = {"kernel": name, "what": k.what, "data_bytes": size,
                             "backing": "anon" if k.data == "anon" else "file",
                             "cc_report": cc_report}
                try:
                    data = "-" if k.data == "anon" else data_file(k.data, size, exes["O"])
                    measure_kernel(name, exes, data, size, mem, repeat, device_probe, row)
                except BenchError as e:
                    # Reported as failed, never as a time; the other kernels still run.
                    print(f"foresight: {name}: {e.args[-1]}", file=sys.stderr, flush=True)
                    row = {key: row[key] for key in ("kernel", "what", "data_bytes",
                                                     "backing", "cc_report")}
                    row["failed"] = e.args[0]
                rows.append(row)
    measured = [r["O"] for r in rows if "O" in r]
    env["cgroup_version"] = measured[0]["cgroup_version"] if measured else None
    return {"suite": "compiler", "mem_limit_bytes": mem, "ratio": ratio,
            "readahead_kb": readahead_kb, "repeat": repeat, "rows": rows,
            "micro_comparison": "micro_hints: the hand-instrumented micro-hints on the same "
            "data file, same session (access_seconds scaled by runs_per_kernel_run)",
            "device_probe": device_probe, "environment": env}


def _run_micro(pattern: str, data: str, size: int, mem: int) -> dict:
    cmd, _ = _micro_cmd(pattern, data, size)
    r = run_once(cmd, mem=mem, cold=True, files=[data], capture=True, timeout=1800)
    if r["exit_code"] != 0:
        raise KernelFailed(f"micro-hints exit {r['exit_code']}",
                           f"{' '.join(cmd)}: exit {r['exit_code']}\n{r['stderr'].strip()}")
    r["access_seconds"] = micro_access_seconds(r["stderr"])
    return r


class Compiler(suite.Suite):
    name = "compiler"
    help = "unmodified kernels built by foresight cc, O vs P"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        suite.add_cap(parser, "256M")
        parser.add_argument("--ratio", type=ratio_list, default=[4.0], metavar="R[,R...]",
                            help="data/memory ratios, comma-separated, each run in turn "
                            "(default 4)")
        suite.add_kernels(parser, ", ".join(KERNELS))

    def measure(self, ns: argparse.Namespace) -> dict:
        names = suite.choose(ns.kernels, list(KERNELS), "kernel", "--kernels")
        mem = parse_size(ns.mem)
        for r in ns.ratio:   # every ratio's data and swap checked before anything runs
            check_swap(names, data_size(mem, r), mem)
        device_probe = bound.probe()
        return by_ratio([compiler(mem, r, ns.readahead_kb, names, ns.repeat, device_probe)
                         for r in ns.ratio])

    def tables(self, res: dict) -> list[Table]:
        if "by_ratio" in res:
            subs = list(res["by_ratio"].values())
            return ([t for sub in subs for t in self.tables(sub)]
                    + [bound.ratio_table(subs, _rows, "access phase")])

        def n(x, fmt) -> str:
            return "–" if x is None else fmt(x)

        rows = []
        for row in res["rows"]:
            if "failed" in row:
                rows.append((row["kernel"], f"failed: {row['failed']}", *["–"] * 9))
                continue
            o, p = row["O"], row["P"]
            micro = row.get("micro_hints")
            rows.append((row["kernel"], f"{o['access_seconds']:.2f} s",
                         f"{p['access_seconds']:.2f} s", f"{row['speedup']:.2f}×",
                         f"{micro['access_seconds']:.2f} s" if micro else "",
                         n(o["major_faults"], "{:,}".format), n(p["major_faults"], "{:,}".format),
                         n(o["read_bytes"], format_size), n(p["read_bytes"], format_size),
                         n(o["io_stall_seconds"], "{:.2f} s".format),
                         n(p["io_stall_seconds"], "{:.2f} s".format)))
        return [Table(f"foresight bench compiler: {format_size(res['rows'][0]['data_bytes'])} "
                      f"data ({res['ratio']:g}×), {format_size(res['mem_limit_bytes'])} cap, "
                      "read_ahead_kb "
                      f"{res['readahead_kb']}, median of {res['repeat']}",
                      ("kernel", "O access", "P access", "speedup O/P", "micro P", "O faults",
                       "P faults", "O read", "P read", "O stall", "P stall"), rows,
                      left=("kernel",)), *self.bound_tables(res)]

    def bound_tables(self, res: dict) -> list[Table]:
        rows = [(r["kernel"], r["bound"]) for r in res["rows"] if r.get("bound")]
        if not rows:
            return []
        return [bound.table(f"the physical bound: {format_size(res['rows'][0]['data_bytes'])} "
                            f"data, {format_size(res['mem_limit_bytes'])} cap, whole-program "
                            "wall times", rows)]

    def notes(self, res: dict) -> list[str]:
        if "by_ratio" in res:
            return self.notes(next(iter(res["by_ratio"].values())))
        return [f"{machine(res['environment'])}; outputs identical with and without hints "
                "in every kernel not marked failed; "
                "micro P = hand-instrumented micro-hints on the same data (colsum: 8 strided "
                "passes)",
                *([bound.probe_note(res["device_probe"]), bound.BOUND_NOTE]
                  if res.get("device_probe") and self.bound_tables(res) else [])]

    def plot(self, res: dict, directory: str) -> list[str]:
        if "by_ratio" in res:   # each ratio's plots in DIRECTORY/ratio-R, then speedup by ratio
            subs = res["by_ratio"]
            return [f for r, sub in subs.items()
                    for f in self.plot(sub, str(Path(directory) / f"ratio-{r}"))] + [
                bound.ratio_plot(list(subs.values()), _rows, "access phase", directory,
                                 "compiler-ratios.png")]
        plt = pyplot()
        rows = [r for r in res["rows"] if "failed" not in r]
        fig, ax = plt.subplots(figsize=(max(4, 1.3 * len(rows)), 3.5))
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r["O"]["access_seconds"] for r in rows], 0.4,
               label="O (--no-prefetch)", color="tab:gray")
        ax.bar([i + 0.2 for i in x], [r["P"]["access_seconds"] for r in rows], 0.4,
               label="P (hints)", color="tab:green")
        for i, r in enumerate(rows):
            ax.annotate(f"{r['speedup']:.2f}×", (i, max(r["O"]["access_seconds"],
                                                        r["P"]["access_seconds"])),
                        ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(x), [r["kernel"] for r in rows])
        ax.set_ylabel("access phase (s)")
        ax.legend(fontsize=8)
        ax.set_title(f"foresight cc kernels, {format_size(res['mem_limit_bytes'])} cap, ratio "
                     f"{res['ratio']:g}, read_ahead_kb {res['readahead_kb']}", fontsize=9)
        written = [save_figure(fig, directory, "compiler-speedup.png")]
        rows = [(r["kernel"], r["bound"]) for r in res["rows"] if r.get("bound")]
        if rows:
            written.append(bound.plot(rows, directory, "compiler-bound.png",
                                      f"O, P and the physical bound, "
                                      f"{format_size(res['mem_limit_bytes'])} cap, ratio "
                                      f"{res['ratio']:g}"))
        return written

    def exit_code(self, res: dict) -> int:
        subs = res["by_ratio"].values() if "by_ratio" in res else [res]
        return 1 if any("failed" in r for sub in subs for r in sub["rows"]) else 0


def _rows(sub: dict) -> dict[str, dict]:
    return {r["kernel"]: r for r in sub["rows"]}


SUITE = Compiler()
