"""`foresight bench incore`: what the hints cost when the data fit in memory.

Every NAS kernel (benchmarks/nas, sized by `--mb`) and every `bench compiler` kernel
(`--kernel-mb` of data) is built by `foresight cc -O2` with hints (P) and without them
(O, `--no-prefetch`) and run with no memory cap, alternately O, P and "P off" (the
hinted executable with FORESIGHT_DISABLE=1: the cost of the code's shape alone),
`--repeat` times each, first with a warm page cache (one untimed run before), then
cold (caches dropped before every run).  The table gives the median wall times and
P/O, whose target is at most 1.03; every run must print the same results as O's.

With `--near 0.5,0.75,1` each program also runs, cold and alternately O, P and P off,
under a memory cap near its data: the data at 0.5, 0.75 and 1 times the cap
(`foresight run --mem`, the cap rounded up to a MiB), where the runtime's gate may
turn the hints on while little or nothing needs to move.  The target there is at most 1.05.  A
run that is killed or fails is reported as such in its cell, never as a time.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
from pathlib import Path

from foresight.bench import compiler as ck
from foresight.bench import nas, suite
from foresight.bench.common import build, pyplot, run_failure
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError
from foresight.harness import environment
from foresight.harness.run import MIN_MEM, run_once
from foresight.reports import save_figure
from foresight.units import format_size

TARGET = 1.03
NEAR_TARGET = 1.05
VARIANTS = ("O", "P", "P_off")
PROGRAMS = tuple(nas.KERNELS) + tuple(ck.KERNELS)


def _output(name: str, r: dict) -> str:
    """What a run printed that must not change with hints."""
    if r["exit_code"] != 0:
        why = "killed" if r.get("oom_killed") else f"exit {r['exit_code']}"
        raise BenchError(f"{name}: {why}\n{r['stderr'].strip()}")
    if name in nas.KERNELS:
        return r["stdout"]
    return ck.parse_output(r["stdout"])[0]


def near_ratios(text: str) -> list[float]:
    """`--near 0.5,0.75,1`: data/cap ratios, each above 0 and at most 1, each once."""
    from foresight.bench.suite import positive

    out = list(dict.fromkeys(positive(x) for x in text.split(",")))
    for r in out:
        if r > 1:
            raise argparse.ArgumentTypeError(f"{r:g}: the data must fit the cap (a ratio "
                                             "of at most 1; bench nas and bench compiler "
                                             "run larger ones)")
    return out


def near_cap(data_bytes: int, ratio: float) -> int:
    """The cap under which DATA_BYTES are RATIO times it: rounded up to a MiB, at least
    the smallest cap `foresight run` takes."""
    mib = 1 << 20
    return max(MIN_MEM, math.ceil(data_bytes / ratio / mib) * mib)


def _program(name: str, tmp: Path, mb: int, kernel_mb: int) -> tuple[dict, list[str], list]:
    """The executables of NAME, its arguments and the data files it reads."""
    if name in nas.KERNELS:
        return (nas.build(name, tmp),
                ["--mb", str(mb), "--backing", "anon", "--data-dir", str(tmp)], [])
    exes, _ = build(name, tmp, ck.kernels_dir() / f"{name}.c")
    size = kernel_mb << 20
    kind = ck.KERNELS[name].data
    data = "-" if kind == "anon" else ck.data_file(kind, size, exes["O"])
    return exes, ["run", data, str(size)], [] if data == "-" else [data]


ENV_OF = {"O": {}, "P": {}, "P_off": {"FORESIGHT_DISABLE": "1"}}


def _env(variant: str) -> dict:
    e = dict(os.environ)
    e.pop("FORESIGHT_DISABLE", None)
    e.update(ENV_OF[variant])
    return e


def measure_program(name: str, exes: dict, args: list[str], files: list, repeat: int,
                    step) -> dict:
    exe_of = {"O": exes["O"], "P": exes["P"], "P_off": exes["P"]}
    row: dict = {"program": name, "args": args}
    expected = None
    for cache in ("warm", "cold"):
        if cache == "warm":   # one untimed run fills the page cache
            run_once([exes["O"], *args], files=files, capture=True, timeout=1800)
        walls: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for i in range(repeat):
            for v in VARIANTS:
                step(f"{name} {cache} {v} {i + 1}/{repeat}")
                r = run_once([exe_of[v], *args], cold=cache == "cold", files=files,
                             env=_env(v), capture=True, timeout=1800)
                out = _output(name, r)
                if expected is None:
                    expected = out
                elif out != expected:
                    raise BenchError(f"{name}: the output of {v} ({cache}) differs from "
                                     f"the original's:\n{out}\n--- against ---\n{expected}")
                walls[v].append(r["wall_seconds"])
        med = {v: statistics.median(w) for v, w in walls.items()}
        row[cache] = {"median_wall_seconds": med, "wall_seconds": walls,
                      "p_over_o": med["P"] / max(med["O"], 1e-9),
                      "p_off_over_o": med["P_off"] / max(med["O"], 1e-9)}
    row["expected_output"] = expected
    return row


def _over(x: float | None, o: float | None) -> float | None:
    return None if x is None or o is None else x / max(o, 1e-9)


def measure_near(name: str, exes: dict, args: list[str], files: list, data_bytes: int,
                 ratios: list[float], repeat: int, expected: str, step) -> list[dict]:
    """Cold runs of O, P and P off, alternated, under the cap of each data/cap ratio."""
    exe_of = {"O": exes["O"], "P": exes["P"], "P_off": exes["P"]}
    out = []
    for ratio in ratios:
        mem = near_cap(data_bytes, ratio)
        walls: dict[str, list[float]] = {v: [] for v in VARIANTS}
        failed: dict[str, str] = {}
        for i in range(repeat):
            for v in VARIANTS:
                if v in failed:
                    continue
                step(f"{name} data {ratio:g}x the cap {v} {i + 1}/{repeat}")
                r = run_once([exe_of[v], *args], mem=mem, cold=True, files=files,
                             env=_env(v), capture=True, timeout=1800)
                why = run_failure(r)
                if why is not None:
                    failed[v] = why     # reported, never a time; its other runs skipped
                    continue
                got = _output(name, r)
                if got != expected:
                    raise BenchError(f"{name}: the output of {v} under a "
                                     f"{format_size(mem)} cap differs from the original's:"
                                     f"\n{got}\n--- against ---\n{expected}")
                walls[v].append(r["wall_seconds"])
        med = {v: statistics.median(w) if w and v not in failed else None
               for v, w in walls.items()}
        out.append({"ratio": ratio, "mem_limit_bytes": mem, "median_wall_seconds": med,
                    "wall_seconds": walls, "failed": failed,
                    "p_over_o": _over(med["P"], med["O"]),
                    "p_off_over_o": _over(med["P_off"], med["O"])})
    return out


def incore(names: list[str], mb: int, kernel_mb: int, repeat: int,
           near: list[float] | None = None) -> dict:
    from rich.progress import Progress

    rows = []
    with tempfile.TemporaryDirectory(prefix="foresight-incore-") as tmp, \
            Progress(transient=True) as progress:
        task = progress.add_task("incore", total=None)

        def step(text: str) -> None:
            progress.update(task, description=text)

        for name in names:
            d = Path(tmp) / name
            d.mkdir()
            step(f"{name}: building")
            exes, args, files = _program(name, d, mb, kernel_mb)
            row = measure_program(name, exes, args, files, repeat, step)
            expected = row.pop("expected_output")
            if near:
                data = (mb if name in nas.KERNELS else kernel_mb) << 20
                row["near"] = measure_near(name, exes, args, files, data, near, repeat,
                                           expected, step)
            rows.append(row)
    res = {"suite": "incore", "mb": mb, "kernel_mb": kernel_mb, "repeat": repeat,
           "target": TARGET, "rows": rows, "environment": environment.environment(None)}
    if near:
        res.update(near=near, near_target=NEAR_TARGET)
    return res


class Incore(suite.Suite):
    name = "incore"
    help = "what hints cost with the data in memory: P/O, warm and cold"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--programs", metavar="A,B",
                            help=f"comma-separated: {', '.join(PROGRAMS)} (default all)")
        parser.add_argument("--mb", type=int, default=128, metavar="MB",
                            help="NAS kernels' data in MiB (default 128)")
        parser.add_argument("--kernel-mb", type=int, default=256, metavar="MB",
                            help="compiler kernels' data in MiB (default 256)")
        parser.add_argument("--near", type=near_ratios, metavar="R[,R...]",
                            help="also run each program cold under a memory cap with its "
                            "data at R times the cap (0 < R <= 1), e.g. 0.5,0.75,1; "
                            f"target P/O at most {NEAR_TARGET}")

    def measure(self, ns: argparse.Namespace) -> dict:
        names = suite.choose(ns.programs, PROGRAMS, "program", "--programs")
        if os.geteuid() != 0:
            raise BenchError("bench incore drops the page cache before its cold runs, "
                             "which needs root: run it as root")
        for opt, v in (("--mb", ns.mb), ("--kernel-mb", ns.kernel_mb)):
            if v < 1:
                raise BenchError(f"{opt} {v}: at least 1 MiB")
        return incore(names, ns.mb, ns.kernel_mb, ns.repeat, ns.near)

    def tables(self, res: dict) -> list[Table]:
        rows = []
        for r in res["rows"]:
            cells = [r["program"]]
            for cache in ("warm", "cold"):
                c = r[cache]
                m = c["median_wall_seconds"]
                cells += [f"{m['O']:.3f} s", f"{m['P']:.3f} s", f"{c['p_over_o']:.3f}",
                          f"{c['p_off_over_o']:.3f}"]
            rows.append(tuple(cells))
        over = [r["program"] for r in res["rows"]
                if max(r["warm"]["p_over_o"], r["cold"]["p_over_o"]) > res["target"]]
        return [Table(f"foresight bench incore: no cap, NAS {format_size(res['mb'] << 20)}, "
                      f"kernels {format_size(res['kernel_mb'] << 20)}, median of "
                      f"{res['repeat']} alternating runs; over {res['target']}: "
                      f"{', '.join(over) or 'none'}",
                      ("program", "warm O", "warm P", "warm P/O", "warm P off/O",
                       "cold O", "cold P", "cold P/O", "cold P off/O"), rows,
                      left=("program",))] + self._near_tables(res)

    @staticmethod
    def _near_tables(res: dict) -> list[Table]:
        if not res.get("near"):
            return []
        rows, over, failures = [], [], []
        for r in res["rows"]:
            cells = [r["program"]]
            for n in r.get("near", []):
                m, failed = n["median_wall_seconds"], n["failed"]
                cells += [failed.get(v) or f"{m[v]:.3f} s" for v in ("O", "P")]
                cells.append("–" if n["p_over_o"] is None else f"{n['p_over_o']:.3f}")
                if (n["p_over_o"] or 0) > res["near_target"]:
                    over.append(f"{r['program']} at {n['ratio']:g}")
                failures += [f"{r['program']} at {n['ratio']:g} ({v.replace('_', ' ')} "
                             f"{why})" for v, why in failed.items()]
            rows.append(tuple(cells))
        columns = ["program"]
        for ratio in res["near"]:
            columns += [f"{ratio:g}× O", f"{ratio:g}× P", f"{ratio:g}× P/O"]
        return [Table(f"near the cap: cold runs with the data at "
                      f"{', '.join(f'{x:g}' for x in res['near'])} times a memory cap, "
                      f"median of {res['repeat']} alternating runs; over "
                      f"{res['near_target']}: {', '.join(over) or 'none'}"
                      + (f"; failed: {', '.join(failures)}" if failures else ""),
                      tuple(columns), rows, left=("program",))]

    def notes(self, res: dict) -> list[str]:
        notes = [f"{machine(res['environment'])}; wall time of the whole program; P off = "
                 "the hinted executable with FORESIGHT_DISABLE=1; outputs identical in "
                 "every run"]
        if res.get("near"):
            notes.append("near the cap: the cap is the program's nominal data (NAS --mb, "
                         "the kernels' --kernel-mb) over the ratio, rounded up to a MiB "
                         "(at 1 its code and libraries do not fit beside the data); "
                         "read_ahead_kb as the machine has it")
        return notes

    def plot(self, res: dict, directory: str) -> list[str]:
        plt = pyplot()
        rows = res["rows"]
        fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(rows)), 3.4))
        x = range(len(rows))
        for k, (cache, color) in enumerate((("warm", "tab:orange"), ("cold", "tab:blue"))):
            ax.bar([i + (k - 0.5) * 0.38 for i in x], [r[cache]["p_over_o"] for r in rows],
                   0.36, color=color, label=f"P/O, {cache}")
        ax.axhline(res["target"], color="tab:red", linewidth=0.8,
                   label=f"target {res['target']}")
        ax.set_xticks(list(x), [r["program"] for r in rows], rotation=45, ha="right",
                      fontsize=7)
        ax.set_ylabel("hinted / original wall time")
        ax.legend(fontsize=7)
        ax.set_title("hints with the data in memory (no cap)", fontsize=9)
        files = [save_figure(fig, directory, "incore.png")]
        if res.get("near"):
            files.append(self._plot_near(plt, res, directory))
        return files

    @staticmethod
    def _plot_near(plt, res: dict, directory: str) -> str:
        rows, ratios = res["rows"], res["near"]
        fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(rows)), 3.4))
        width = 0.8 / len(ratios)
        for k, ratio in enumerate(ratios):
            xs, ys = [], []
            for i, r in enumerate(rows):
                n = next((n for n in r.get("near", []) if n["ratio"] == ratio), None)
                if n is not None and n["p_over_o"] is not None:
                    xs.append(i + (k - (len(ratios) - 1) / 2) * width)
                    ys.append(n["p_over_o"])
            ax.bar(xs, ys, width * 0.95, label=f"data {ratio:g}× the cap")
        ax.axhline(res["near_target"], color="tab:red", linewidth=0.8,
                   label=f"target {res['near_target']}")
        ax.set_xticks(list(range(len(rows))), [r["program"] for r in rows], rotation=45,
                      ha="right", fontsize=7)
        ax.set_ylabel("hinted / original wall time")
        ax.legend(fontsize=7)
        ax.set_title("hints with the data just fitting a memory cap (cold)", fontsize=9)
        return save_figure(fig, directory, "incore_near.png")


SUITE = Incore()
