"""`foresight bench simspeed`: how fast `foresight sim` simulates, beside libCacheSim.

One synthetic trace (clients reading blocks of a skewed, Pareto-distributed popularity,
each read preceded by the hint for a block ahead of it) is simulated three ways, each
K times in alternation so the host's drifts fall on all alike:
  - `foresight sim --policy none --replacement lru` on its demand reads alone: the
    cache with its timing model;
  - `foresight sim --policy fine --replacement lru`: every prefetch through the fine
    grain accounting (shadows, epochs, decisions) plus the timing model;
  - libCacheSim's LRU (pip `libcachesim`, the reference simulator the issue names) on
    the same demand reads, from its own binary trace format (oracleGeneral, its
    fastest reader), with the same capacity in blocks.
Speed is requests simulated per second of CPU time: `foresight sim --speed` times the
simulation itself (the text trace is parsed before); libCacheSim's `process_trace`
(reading its binary trace included), in this process.  The runs' medians are reported.

Also the policy core's own cost per request at 64 clients (`foresight-iocache-cost`,
sharedcache/bench/cost.c: what the I/O-node server calls under its lock per request;
paper 3's Table I), demand only and under plain, coarse and fine control.
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import subprocess
import tempfile
import time
from pathlib import Path

from foresight import paths
from foresight.bench import suite
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError, UsageError
from foresight.harness import environment
from foresight.sharedcache import sim

CACHE_BLOCKS = 1024
BLOCKS = 200_000
CLIENTS = 8
AHEAD = 8
TARGETS = {"lru": 20.0, "fine": 10.0}   # M requests/s (issue 23)
CORE_TARGET_NS = 150.0                    # the accounting per request at 64 clients


def write_traces(tmp: Path, requests: int, seed: int = 1) -> tuple[Path, Path, Path, int]:
    """The text traces for foresight sim, with the hints and without (its demand reads
    alone), libCacheSim's binary trace of those reads, and their number."""
    rng = random.Random(seed)
    reads: list[list[int]] = [[] for _ in range(CLIENTS)]
    per = requests // (2 * CLIENTS)   # a hint and a read per block
    for c in range(CLIENTS):
        reads[c] = [int(rng.paretovariate(1.2) * 7 + c * 997) % BLOCKS for _ in range(per)]
    text, plain = tmp / "speed.trace", tmp / "demand.trace"
    binary = tmp / "speed.oracleGeneral.bin"
    demand = bytearray()
    t = 0
    with open(text, "w") as f, open(plain, "w") as g:
        for i in range(per):           # clients' lines interleaved, each in program order
            for c in range(CLIENTS):
                ahead = reads[c][i + AHEAD] if i + AHEAD < per else reads[c][i]
                f.write(f"{c} P {ahead}\n{c} R {reads[c][i]}\n")
                g.write(f"{c} R {reads[c][i]}\n")
                # oracleGeneral: u32 time, u64 object (0 is "none"), u32 size, i64 next use
                demand += struct.pack("<IQIq", t, reads[c][i] + 1, 1, -1)
                t += 1
    binary.write_bytes(demand)
    return text, plain, binary, per * CLIENTS


def ours(text: Path, policy: str, tmp: Path) -> float:
    """Requests per second of simulation CPU, from `foresight sim --speed`."""
    p = subprocess.run([sim.binary(), "--trace", str(text), "--policy", policy,
                        "--replacement", "lru", "--block", "1", "--cache", str(CACHE_BLOCKS),
                        "--speed", "--json", str(tmp / "out.json")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError(f"foresight sim: {p.stderr.strip()}")
    words = p.stderr.split()
    try:
        n, seconds = int(words[words.index("requests") - 1]), float(words[words.index("s") - 1])
    except (ValueError, IndexError):
        raise BenchError(f"foresight sim --speed printed {p.stderr.strip()!r}") from None
    return n / seconds if seconds > 0 else 0.0


def theirs(binary: Path, reads: int) -> float:
    """libCacheSim's LRU: requests per second of CPU in process_trace."""
    try:
        import libcachesim as lc
    except ImportError:
        raise UsageError("libcachesim is not installed: it is one of the dev dependencies "
                         "(`make setup`); x86-64 Linux only") from None
    reader = lc.TraceReader(str(binary), lc.TraceType.ORACLE_GENERAL_TRACE)
    cache = lc.LRU(cache_size=CACHE_BLOCKS)
    t = time.process_time()
    cache.process_trace(reader)
    seconds = time.process_time() - t
    return reads / seconds if seconds > 0 else 0.0


def core_cost(clients: int = 64) -> dict[str, float]:
    """The policy core's CPU nanoseconds per request, by variant (foresight-iocache-cost)."""
    exe = paths.libexec_dir() / "foresight-iocache-cost"
    if not exe.exists():
        raise UsageError(f"{exe} is not built: run `make setup`")
    p = subprocess.run([str(exe), str(clients)], capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError(f"foresight-iocache-cost: {p.stderr.strip()}")
    out = {}
    for line in p.stdout.splitlines():
        words = line.split()
        if len(words) == 3 and words[1] == "ns/request":
            out[words[0]] = float(words[2])
    return out


def measure(ns: argparse.Namespace) -> dict:
    if ns.requests < 10_000:
        raise UsageError(f"--requests {ns.requests}: at least 10000")
    with tempfile.TemporaryDirectory(prefix="foresight-simspeed-") as d:
        tmp = Path(d)
        text, plain, binary, reads = write_traces(tmp, ns.requests)
        runs: dict[str, list[float]] = {"lru": [], "fine": [], "libcachesim": []}
        for _ in range(ns.repeat):
            runs["lru"].append(ours(plain, "none", tmp))
            runs["fine"].append(ours(text, "fine", tmp))
            runs["libcachesim"].append(theirs(binary, reads))
    medians = {k: statistics.median(v) for k, v in runs.items()}
    return {"suite": "simspeed", "core_ns_per_request_64_clients": core_cost(),
            "core_target_ns": CORE_TARGET_NS, "requests": reads * 2, "demand_reads": reads,
            "clients": CLIENTS, "cache_blocks": CACHE_BLOCKS, "repeat": ns.repeat,
            "runs_per_s": runs, "median_per_s": medians, "targets_m_per_s": TARGETS,
            "environment": environment.environment(None)}


class SimSpeed(suite.Suite):
    name = "simspeed"
    help = "foresight sim's speed (lru; fine with timing) beside libCacheSim's LRU"
    plots = False

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--requests", type=int, default=4_000_000,
                            help="requests in the trace, hints included (default 4000000)")

    def measure(self, ns: argparse.Namespace) -> dict:
        return measure(ns)

    def tables(self, res: dict) -> list[Table]:
        rows = []
        for key, what in (("lru", "foresight sim --policy none --replacement lru (demand reads)"),
                          ("fine", "foresight sim --policy fine --replacement lru (hints too)"),
                          ("libcachesim", "libCacheSim 0.3.5 LRU (demand reads)")):
            runs = res["runs_per_s"][key]
            target = res["targets_m_per_s"].get(key)
            rows.append((what, f"{res['median_per_s'][key] / 1e6:.2f} M/s",
                         f"{min(runs) / 1e6:.2f}–{max(runs) / 1e6:.2f}",
                         "–" if target is None else f"{target:g} M/s"))
        return [Table(f"foresight bench simspeed: {res['demand_reads']:,} reads and as many "
                      f"hints ({res['clients']} clients), {res['cache_blocks']} "
                      f"blocks of cache, median of {res['repeat']}",
                      ("simulator", "speed", "range", "target"), rows, left=("simulator",)),
                Table("the policy core per request, 64 clients (foresight-iocache-cost, "
                      "best of 5 alternating)",
                      ("variant", "CPU per request", "target"),
                      [(k, f"{v:.1f} ns", f"{res['core_target_ns']:g} ns" if k == "fine" else "–")
                       for k, v in res["core_ns_per_request_64_clients"].items()],
                      left=("variant",))]

    def notes(self, res: dict) -> list[str]:
        return ["Speed: requests per second of CPU time; foresight sim's simulation alone "
                "(its text trace parsed before), libCacheSim's process_trace with its "
                "binary trace; the three alternate run by run.", machine(res["environment"])]


SUITE = SimSpeed()
