"""`foresight bench overhead`: the cost of a prefetch the residency filter drops, against
the madvise system call it replaces (targets: <= 5 ns and <= 1%).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess

from foresight.bench import suite
from foresight.bench.common import binary
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError
from foresight.harness import environment

FILTER_NS_TARGET = 5.0
FILTER_RATIO_TARGET = 0.01


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


class Overhead(suite.Suite):
    name = "overhead"
    help = "cost of a filtered prefetch against madvise"
    plots = False

    def measure(self, ns: argparse.Namespace) -> dict:
        return overhead(ns.repeat)

    def tables(self, res: dict) -> list[Table]:
        m = res["median"]
        return [Table(f"foresight bench overhead: median of {res['repeat']}",
                      ("call", "cost", "target"), [
                          ("filtered prefetch", f"{m['filtered_prefetch_ns']:.2f} ns",
                           f"<= {FILTER_NS_TARGET:g} ns"),
                          ("madvise(MADV_WILLNEED) on a resident page",
                           f"{m['madvise_ns']:.0f} ns", ""),
                          ("filtered prefetch / madvise",
                           f"{100 * m['filtered_over_madvise']:.2f}%",
                           f"<= {100 * FILTER_RATIO_TARGET:.0f}%")], left=("call",))]

    def notes(self, res: dict) -> list[str]:
        ok = "meets" if res["meets_targets"] else "MISSES"
        return [f"The filtered prefetch {ok} the targets. {machine(res['environment'])}"]


SUITE = Overhead()
