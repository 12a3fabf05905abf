"""Paper 3's sensitivity figures as sweeps of `foresight sim` over one parameter.

Each `Sweep` names the figure, the parameter and its values, the client counts, and the
policy whose gain over no prefetching is plotted (the paper's y axis); `Runner` writes
each workload's trace once per client count and runs the simulator, each distinct
command once.  `bench sharedcache --figs` runs the sweeps it is asked for.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from foresight.errors import BenchError
from foresight.sharedcache import sim
from foresight.sharedcache.workloads import NAMES, write_trace


def gain(base: float, t: float) -> float:
    """Percent of BASE's time saved by T."""
    return (base - t) / base * 100 if base > 0 else 0.0


class Runner:
    """Traces written once per (workload, clients); each simulator command run once."""

    def __init__(self, tmp: Path, blocks: int, think: float, common: list[str]):
        self.tmp, self.blocks, self.think, self.common = tmp, blocks, think, common
        self.lines: dict[tuple[str, int], int] = {}
        self.done: dict[tuple[str, ...], dict] = {}

    def trace(self, workload: str, clients: int) -> Path:
        path = self.tmp / f"{workload}-{clients}.trace"
        if (workload, clients) not in self.lines:
            self.lines[workload, clients] = write_trace(workload, path, clients, self.blocks,
                                                        self.think)
        return path

    def run(self, traces: list[Path], policy: str, extra: list[str] = (),
            cache: bool = True) -> dict:
        """The simulator's summary for TRACES under POLICY (run again unless CACHE)."""
        args = [a for t in traces for a in ("--trace", str(t))]
        args += ["--policy", policy, *self.common, *extra]
        key = tuple(args)
        if key not in self.done or not cache:
            out = self.tmp / "out.json"
            p = subprocess.run([sim.binary(), *args, "--json", str(out)], capture_output=True,
                               text=True)
            if p.returncode != 0:
                raise BenchError(f"foresight sim {' '.join(args)}: {p.stderr.strip()}")
            self.done[key] = summary(json.loads(out.read_text()), len(traces))
        return self.done[key]


def summary(d: dict, traces: int) -> dict:
    """What the bench keeps of one simulator result."""
    issued = d["prefetches_issued"]
    return {"makespan_s": d["makespan_s"], "prefetches_issued": issued,
            "harmful_prefetches": d["harmful_prefetches"],
            "harmful_fraction": d["harmful_prefetches"] / issued if issued else 0.0,
            "intra_client": d["intra_client"], "inter_client": d["inter_client"],
            "throttled_prefetches": d["throttled_prefetches"],
            "pinned_blocks": d["pinned_blocks"], "oracle_dropped": d["oracle_dropped"],
            "late_hits": d["late_hits"],
            "demand_misses": sum(c["misses"] for c in d["clients"]),
            "trace_finish_s": [max((c["finish_s"] for c in d["clients"] if c["trace"] == i),
                                   default=0.0) for i in range(traces)]}


@dataclass(frozen=True)
class Sweep:
    fig: str
    title: str
    param: str                      # the x axis
    values: tuple                   # its values
    clients: tuple[int, ...]
    policy: str                     # whose gain over none is reported
    args: Callable[[object], list[str]]   # the simulator's options for a value
    baseline_args: bool = True      # none runs with the same options (else without)


def _sizes(option: str) -> Callable[[object], list[str]]:
    return lambda v: [option, str(v)]


SWEEPS = {s.fig: s for s in (
    Sweep("11", "I/O nodes, the total cache fixed", "I/O nodes", (1, 2, 4, 8),
          (8, 16), "fine", _sizes("--ionodes")),
    Sweep("12", "the I/O node's cache", "cache",
          ("32M", "64M", "128M", "256M", "512M"), (8, 16), "fine", _sizes("--cache")),
    Sweep("14", "epochs", "epochs", (10, 25, 50, 100, 200, 500), (8,), "fine",
          _sizes("--epochs")),
    Sweep("15", "threshold T, coarse", "T", (0.1, 0.2, 0.35, 0.5, 0.7, 0.9), (8,),
          "coarse", _sizes("--threshold")),
    Sweep("16", "client cache", "client cache", ("0", "8M", "16M", "32M", "64M"),
          (8, 16), "fine", _sizes("--client-cache")),
    Sweep("17", "OBL instead of the compiler's hints", "prefetcher",
          ("hints", "obl"), (8,), "fine", _sizes("--prefetcher"), baseline_args=False),
    Sweep("18", "K, epochs a decision holds", "K", (1, 2, 3, 4, 5), (8, 16),
          "fine", _sizes("--k")),
    Sweep("19", "32 and 64 clients", "clients", (32, 64), (), "fine",
          lambda v: []),
    Sweep("9", "throttling alone, pinning alone, both", "mechanisms",
          ("throttle", "pin", "both"), (2, 4, 8, 16), "fine",
          lambda v: {"throttle": ["--no-pin"], "pin": ["--no-throttle"], "both": []}[v],
          baseline_args=False),
)}
FIGURES = ("5", *SWEEPS, "20")


def sweep(r: Runner, s: Sweep, workloads: list[str]) -> dict:
    """The sweep S over WORKLOADS: per workload and client count, per value, S's policy's
    gain over no prefetching and the harmful fractions.  A sweep with no client counts
    sweeps the client count itself."""
    rows = []
    for w in workloads:
        for n in s.clients or (None,):
            gains = {}
            for v in s.values:
                trace = [r.trace(w, v if n is None else n)]
                extra = s.args(v)
                base = r.run(trace, "none", extra if s.baseline_args else [])
                got = r.run(trace, s.policy, extra)
                gains[str(v)] = {"none_s": base["makespan_s"], "policy_s": got["makespan_s"],
                                 "gain_over_none": gain(base["makespan_s"], got["makespan_s"]),
                                 "harmful_fraction": got["harmful_fraction"],
                                 "plain_harmful_fraction": r.run(trace, "plain", extra)[
                                     "harmful_fraction"]}
            rows.append({"workload": w, "clients": n, "points": gains})
    return {"fig": s.fig, "title": s.title, "param": s.param, "policy": s.policy,
            "values": [str(v) for v in s.values], "rows": rows}


def harm_matrices(r: Runner, workloads: list[str], clients: int = 8) -> dict:
    """Figure 5: who harms whom, epoch by epoch, with plain prefetching at CLIENTS
    clients: per workload the epochs where one prefetching client made over 66% of the
    harmful prefetches, two over 85%, one affected client took over 50%, the share that
    was intra-client, and the matrix (prefetching x affected) of the epoch with the most."""
    rows = []
    for w in workloads:
        log = r.tmp / "epochs.jsonl"
        r.run([r.trace(w, clients)], "plain", ["--epoch-log", str(log)], cache=False)
        epochs = [json.loads(line) for line in log.read_text().splitlines()]
        counts = {"one_prefetcher_66": 0, "two_prefetchers_85": 0, "one_affected_50": 0}
        intra = total = 0
        worst = max(epochs, key=lambda e: e["harmful"], default=None)
        for e in epochs:
            if not e["harmful"]:
                continue
            by_k, by_l = [0] * clients, [0] * clients
            for k, ll, n in e["harm"]:
                by_k[k] += n
                by_l[ll] += n
                intra += n if k == ll else 0
            total += e["harmful"]
            top = sorted(by_k, reverse=True)
            counts["one_prefetcher_66"] += top[0] > 0.66 * e["harmful"]
            counts["two_prefetchers_85"] += sum(top[:2]) > 0.85 * e["harmful"]
            counts["one_affected_50"] += max(by_l) > 0.5 * e["harmful"]
        matrix = [[0] * clients for _ in range(clients)]
        for k, ll, n in (worst or {"harm": []})["harm"]:
            matrix[k][ll] = n
        rows.append({"workload": w, "clients": clients, "epochs": len(epochs),
                     "epochs_with_harm": sum(1 for e in epochs if e["harmful"]), **counts,
                     "intra_share": intra / total if total else 0.0,
                     "worst_epoch": worst["epoch"] if worst else None, "matrix": matrix})
    return {"fig": "5", "title": "who harms whom, per epoch (plain prefetching)",
            "clients": clients, "rows": rows}


def other_applications(r: Runner, clients: int = 8) -> dict:
    """Figure 20: mgrid alone, then beside 1-3 other applications (each its own trace
    file, `clients` clients each); mgrid's own completion time, fine against none."""
    others = [w for w in NAMES if w != "mgrid"]
    rows = []
    points = {}
    for m in range(len(others) + 1):
        traces = [r.trace("mgrid", clients)] + [r.trace(w, clients) for w in others[:m]]
        base = r.run(traces, "none")["trace_finish_s"][0]
        got = r.run(traces, "fine")["trace_finish_s"][0]
        points[str(m)] = {"none_s": base, "policy_s": got, "gain_over_none": gain(base, got)}
    rows.append({"workload": "mgrid", "clients": clients, "points": points})
    return {"fig": "20", "title": "mgrid beside other applications",
            "param": "other applications", "policy": "fine",
            "values": [str(m) for m in range(len(others) + 1)], "rows": rows}
