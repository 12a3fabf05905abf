"""`foresight bench incore`: what the hints cost when the data fit in memory.

Every NAS kernel (benchmarks/nas, sized by `--mb`) and every `bench compiler` kernel
(`--kernel-mb` of data) is built by `foresight cc -O2` with hints (P) and without them
(O, `--no-prefetch`) and run with no memory cap, alternately O, P and "P off" (the
hinted executable with FORESIGHT_DISABLE=1: the cost of the code's shape alone),
`--repeat` times each, first with a warm page cache (one untimed run before), then
cold (caches dropped before every run).  The table gives the median wall times and
P/O, whose target is at most 1.03; every run must print the same results as O's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from foresight.bench import compiler as ck
from foresight.bench import nas, suite
from foresight.bench.common import build, pyplot
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError
from foresight.harness import environment
from foresight.harness.run import run_once
from foresight.reports import save_figure
from foresight.units import format_size

TARGET = 1.03
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


def measure_program(name: str, exes: dict, args: list[str], files: list, repeat: int,
                    step) -> dict:
    env_of = {"O": {}, "P": {}, "P_off": {"FORESIGHT_DISABLE": "1"}}
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
                e = dict(os.environ)
                e.pop("FORESIGHT_DISABLE", None)
                e.update(env_of[v])
                r = run_once([exe_of[v], *args], cold=cache == "cold", files=files, env=e,
                             capture=True, timeout=1800)
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
    return row


def incore(names: list[str], mb: int, kernel_mb: int, repeat: int) -> dict:
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
            rows.append(measure_program(name, exes, args, files, repeat, step))
    return {"suite": "incore", "mb": mb, "kernel_mb": kernel_mb, "repeat": repeat,
            "target": TARGET, "rows": rows, "environment": environment.environment(None)}


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

    def measure(self, ns: argparse.Namespace) -> dict:
        names = suite.choose(ns.programs, PROGRAMS, "program", "--programs")
        if os.geteuid() != 0:
            raise BenchError("bench incore drops the page cache before its cold runs, "
                             "which needs root: run it as root")
        for opt, v in (("--mb", ns.mb), ("--kernel-mb", ns.kernel_mb)):
            if v < 1:
                raise BenchError(f"{opt} {v}: at least 1 MiB")
        return incore(names, ns.mb, ns.kernel_mb, ns.repeat)

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
                      left=("program",))]

    def notes(self, res: dict) -> list[str]:
        return [f"{machine(res['environment'])}; wall time of the whole program; P off = "
                "the hinted executable with FORESIGHT_DISABLE=1; outputs identical in "
                "every run"]

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
        return [save_figure(fig, directory, "incore.png")]


SUITE = Incore()
