"""`foresight bench sharedcache --live`: the workloads on a real I/O node and real clients.

Each workload's trace (workloads.py) is played by `replay` clients (benchmarks/shared:
reads through a shared mapping of the client's nbdfuse view, the compiler's hints as
libforesight prefetches, which the runtime sends to the node as NBD_CMD_CACHE) under
`foresight cluster run`, for every policy the node has, and the same trace is simulated
with the same caches and the same disk model (the node's `--disk-delay`: a disk serving
one request per delay; the simulator's `--disk-delay`).  The client's compute is a sleep
(each client stands for a node with a processor of its own).  Reported per workload and
client count: the makespan (the last client's wall time) live and simulated, each
policy's gain over none, and whether the two rank the policies in the same order; and
the paper's Table I live: the time the node spent in its policy core (accounting and
control: every access, prefetch and epoch end, timed by the filter) as a share of the
makespan, with its calls.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from foresight import paths
from foresight.errors import BenchError
from foresight.sharedcache import cluster
from foresight.sharedcache.sweeps import Runner, gain

POLICIES = ("none", "plain", "coarse", "fine")
CLIENTS = (2, 4, 8)
# A small configuration: a run takes seconds, so all of it takes minutes.
DATA = 32 << 20
NODE_CACHE = "4M"
CLIENT_MEM = "8M"          # each client's cgroup: the program (about 2 MiB) and its cache
SIM_CLIENT_CACHE = "6M"    # what of the cgroup is left to the page cache of the view
DISK_DELAY = "1ms"
THINK_US = 1000.0          # a block's compute: one disk request's time
SEPARATED = 0.05           # pairs of policies the simulator puts this far apart
TIMEOUT = 300.0


def replay_binary() -> Path:
    path = paths.libexec_dir() / "replay"
    if not path.exists():
        raise BenchError(f"the replay client is not built ({path}): run `make setup`")
    return path


def order(times: dict[str, float]) -> list[str]:
    """The policies from fastest to slowest."""
    return sorted(times, key=lambda p: (times[p], POLICIES.index(p)))


def separated_pairs(sim: dict[str, float], live: dict[str, float]) -> tuple[int, int]:
    """Of the pairs of policies the simulator separates by more than SEPARATED (of the
    slower's time), how many the live runs order the same way; and how many pairs."""
    agree = total = 0
    for i, p in enumerate(POLICIES):
        for q in POLICIES[i + 1:]:
            if abs(sim[p] - sim[q]) > SEPARATED * max(sim[p], sim[q]):
                total += 1
                agree += (sim[p] < sim[q]) == (live[p] < live[q])
    return agree, total


def measure(workloads: list[str], clients: tuple[int, ...], tmp: Path,
            repeat: int = 1) -> dict:
    replay = str(replay_binary())
    blocks = DATA // 65536
    disk = tmp / "live-disk.img"
    with open(disk, "wb") as f:
        f.truncate(DATA)
    sim = Runner(tmp, blocks, THINK_US, ["--cache", NODE_CACHE, "--client-cache",
                                         SIM_CLIENT_CACHE, "--disk-delay", DISK_DELAY])
    rows = []
    for w in workloads:
        for n in clients:
            trace = sim.trace(w, n)
            reads = _reads(trace, n)
            runs: dict[str, list[float]] = {p: [] for p in POLICIES}
            core: dict[str, list[tuple[float, int]]] = {p: [] for p in POLICIES}
            for _, p in ((r, p) for r in range(repeat) for p in POLICIES):
                barrier = tmp / "barrier"
                barrier.write_bytes(b"\0" * 8)
                stats = tmp / "node-stats.jsonl"
                res = cluster.run(cluster.namespace(
                    clients=n, disk=str(disk), client_mem=CLIENT_MEM, cache=NODE_CACHE,
                    block="64K", policy=p, epoch="1000", disk_delay=DISK_DELAY,
                    timeout=TIMEOUT, stats=str(stats),
                    cmd=[replay, str(trace), "{client}", "{clients}", "{disk}", str(barrier)]))
                for c in res["clients"]:
                    want = f"client {c['id']} read {reads[c['id']]} blocks"
                    if c["exit_code"] != 0 or not c["stdout"].startswith(want):
                        said = c["stderr"].strip().splitlines()[-1:] or [c["stdout"][:80]]
                        raise BenchError(f"live {w}, {n} clients, policy {p}: client "
                                         f"{c['id']} exit {c['exit_code']}: {said[0]}")
                runs[p].append(max(c["wall_seconds"] for c in res["clients"]))
                node = res.get("node") or {}
                if "policy_ns" in node:
                    core[p].append((node["policy_ns"] / 1e9, node["policy_calls"]))
            live = {p: statistics.median(runs[p]) for p in POLICIES}
            simulated = {p: sim.run([trace], p)["makespan_s"] for p in POLICIES}
            agree, pairs = separated_pairs(simulated, live)
            rows.append({
                "workload": w, "clients": n, "live_s": live, "live_runs_s": runs,
                "sim_s": simulated, "separated_pairs": pairs, "separated_agree": agree,
                "live_gain_over_none": {p: gain(live["none"], t) for p, t in live.items()},
                "sim_gain_over_none": {p: gain(simulated["none"], t)
                                       for p, t in simulated.items()},
                "live_order": order(live), "sim_order": order(simulated),
                "same_order": order(live) == order(simulated),
                "policy_core": {p: _core(core[p], runs[p]) for p in POLICIES}})
            print(f"live {w} at {n} clients: " + ", ".join(
                f"{p} {live[p]:.2f} s (sim {simulated[p]:.2f} s)" for p in POLICIES), flush=True)
    return {"clients": list(clients), "repeat": repeat, "separated": SEPARATED,
            "data_bytes": DATA, "node_cache": NODE_CACHE,
            "client_mem": CLIENT_MEM, "sim_client_cache": SIM_CLIENT_CACHE,
            "disk_delay": DISK_DELAY, "think_us": THINK_US, "rows": rows}


def _core(samples: list[tuple[float, int]], walls: list[float]) -> dict | None:
    """The policy core's seconds and calls in the node (the median run's by share of
    the makespan), that share, and ns per call; None without the node's counters."""
    if len(samples) != len(walls) or not samples:
        return None
    shares = sorted((s / w if w > 0 else 0.0, s, c) for (s, c), w in zip(samples, walls,
                                                                           strict=True))
    share, seconds, calls = shares[(len(shares) - 1) // 2]
    return {"seconds": seconds, "calls": calls, "share": share,
            "ns_per_call": seconds * 1e9 / calls if calls else 0.0}


def _reads(trace: Path, clients: int) -> list[int]:
    """Each client's demand reads in TRACE (what its replay must report)."""
    n = [0] * clients
    for line in trace.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "R" and not line.startswith("#"):
            n[int(parts[0])] += 1
    return n

