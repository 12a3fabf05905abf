"""`foresight bench micro`: each access pattern over each backing, as the original
program (O) and hand-instrumented with hints (P), under one memory cap and one
readahead setting; reports the access phase's time, the O/P speedup, bytes read,
main-thread I/O stall, and checks both variants print the same checksum.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

from foresight.bench import suite
from foresight.bench.common import bench_dir, binary, median_summary, pyplot, swap_shortfall
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError
from foresight.harness import environment, readahead
from foresight.harness.run import devices_for, run_once
from foresight.reports import save_figure
from foresight.units import format_size, parse_size

PATTERNS = ("backward", "strided", "indirect", "forward")
BACKINGS = ("file", "anon")


def _data_file(size: int) -> Path:
    path = bench_dir() / f"micro-{size}.dat"
    if not path.exists() or path.stat().st_size != size:
        r = subprocess.run([binary("micro-orig"), "create", str(path), str(size)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f"cannot create {path}: {r.stderr.strip()}")
    return path


def micro_access_seconds(stderr: str) -> float:
    """The access phase's time a micro program prints on stderr."""
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


def micro(mem: int, ratio: float, readahead_kb: int, patterns: list[str],
          backings: list[str], repeat: int) -> dict:
    size = int(mem * ratio) // 4096 * 4096
    data_file = str(_data_file(size)) if "file" in backings else None
    rows = []
    devices = devices_for([data_file] if data_file else [])
    with readahead.Setting(devices, readahead_kb):
        env = environment.environment(None)
        for backing in backings:
            data = data_file if backing == "file" else str(size)
            for pattern in patterns:
                row = {"pattern": pattern, "backing": backing, "data_bytes": size}
                lacking = swap_shortfall(size, mem) if backing == "anon" else None
                if lacking:
                    row["skipped"] = lacking
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


class Micro(suite.Suite):
    name = "micro"
    help = "hand-instrumented access patterns, O vs P, per backing"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        suite.add_cap(parser, "256M", 4.0)
        parser.add_argument("--patterns", default=",".join(PATTERNS),
                            help="comma-separated access patterns (default "
                            f"{','.join(PATTERNS)})")
        parser.add_argument("--backings", default=",".join(BACKINGS),
                            help=f"comma-separated: {', '.join(BACKINGS)} (default both)")

    def measure(self, ns: argparse.Namespace) -> dict:
        patterns = suite.choose(ns.patterns, PATTERNS, "pattern", "--patterns")
        backings = suite.choose(ns.backings, BACKINGS, "backing", "--backings")
        return micro(parse_size(ns.mem), ns.ratio, ns.readahead_kb, patterns, backings,
                     ns.repeat)

    def tables(self, res: dict) -> list[Table]:
        rows = []
        for row in res["rows"]:
            if "skipped" in row:
                rows.append((row["pattern"], row["backing"], f"skipped: {row['skipped']}"))
                continue
            o, p = row["orig"], row["hints"]
            rows.append((row["pattern"], row["backing"], f"{o['access_seconds']:.2f} s",
                         f"{p['access_seconds']:.2f} s", f"{row['speedup']:.2f}×",
                         format_size(o["read_bytes"]), format_size(p["read_bytes"]),
                         f"{o['io_stall_seconds']:.2f} s", f"{p['io_stall_seconds']:.2f} s"))
        return [Table(f"foresight bench micro: {format_size(res['rows'][0]['data_bytes'])} "
                      f"data, {format_size(res['mem_limit_bytes'])} cap, read_ahead_kb "
                      f"{res['readahead_kb']}, median of {res['repeat']}",
                      ("pattern", "backing", "O access", "P access", "speedup O/P", "O read",
                       "P read", "O stall", "P stall"), rows, left=("pattern", "backing"))]

    def notes(self, res: dict) -> list[str]:
        return [f"{machine(res['environment'])}; outputs identical with and without hints"]

    def plot(self, res: dict, directory: str) -> list[str]:
        plt = pyplot()
        rows = [r for r in res["rows"] if "speedup" in r]
        labels = [f"{r['pattern']}\n{r['backing']}" for r in rows]
        fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(rows)), 3.5))
        ax.bar(labels, [r["speedup"] for r in rows], color="tab:blue")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("speedup O/P (access phase)")
        ax.set_title(f"micro, {format_size(res['mem_limit_bytes'])} cap, ratio "
                     f"{res['ratio']:g}, read_ahead_kb {res['readahead_kb']}", fontsize=9)
        return [save_figure(fig, directory, "micro-speedup.png")]


SUITE = Micro()
