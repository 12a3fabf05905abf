"""The physical bound of an out-of-core run, and how far a run is from it (issue 26).

A run can be no faster than its computation (T_cpu: the same program's warm in-core
time, no cap, data in memory) nor than moving its bytes to and from the disk at the
device's best rate (T_io).  Its *distance* is wall / max(T_cpu, T_io): 1 means compute
and I/O overlapped perfectly at the device's streaming rate.

- The device is measured by the bench itself when a suite starts (`probe`): fio,
  O_DIRECT on a scratch file kept beside the data (created once, so the probe stays
  short), per device that holds the data or the swap file: sequential read and write
  (1 MiB requests, 8 in flight) and random 4 KiB reads at queue depths 1 and 32.
  fio's libaio reached 74k 4 KiB reads/s at QD32 here where Python threads issuing
  os.preadv reached 48k, so the probe needs fio (`make setup` installs it).
- A run's traffic comes from its own counters (`foresight run`'s keys): file reads =
  read_bytes less swap-ins, file writes = write_bytes, swap-ins and swap-outs from
  /proc/vmstat (system-wide).  T_io moves every byte at the sequential rate of its
  device (reads at the read rate, writes at the write rate; the two devices' times add
  when they are the same disk, else the larger counts): an optimistic bound, since
  page faults move 4 KiB to 32 KiB at a time (the probe's QD1 and QD32 rates show how
  far below the streaming rate that is).
- The run's own CPU time (user + system, all its threads: the kernel's paging work
  under a memory cgroup's limit is done by the program's threads, direct reclaim and
  swap-in faults) spread over the machine's CPUs is a third floor, of that run only:
  *distance with CPU* = wall / max(T_cpu, T_io, CPU / CPUs).  Where it is near 1 the
  run was busy all along, and only less work (less traffic: every GiB swapped costs
  about 0.8 CPU-second of kernel time here, benchmarks/swapcost) makes it faster;
  where it stays near the distance, the run waited.
- The *minimum traffic* is the least any schedule of the program must move (the
  suites state it per kernel): its data read once from the backing store and its dirty
  data written once; for data generated in memory, what exceeds the cap written to
  swap once and read back once.  With the smaller of O's and P's T_cpu it gives a
  second, stricter bound.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from foresight.bench.common import bench_dir, pyplot
from foresight.bench.tables import Table
from foresight.errors import BenchError
from foresight.harness import environment
from foresight.reports import save_figure
from foresight.units import format_size

SCRATCH_NAME = "foresight-probe.dat"
SCRATCH_BYTES = 1 << 30     # random reads over 1 GiB: far more than the disk's own cache
PROBE_SECONDS = 12.0        # the whole probe, all devices (the issue allows 20 s)
# fio jobs: (key, rw, block size, queue depth), run one after the other (stonewall).
JOBS = (("seq_read", "read", "1M", 8), ("seq_write", "write", "1M", 8),
        ("rand_read_qd1", "randread", "4k", 1), ("rand_read_qd32", "randread", "4k", 32))
TRAFFIC = ("file_read", "file_write", "swap_in", "swap_out")
VARIANTS = ("O", "P")


# The device probe

def swap_file_dir() -> Path | None:
    """The directory of the first active swap *file* (a partition has no filesystem to
    hold a scratch file; swap on one is counted at the data device's rates), or None."""
    for area in environment.swap_summary()["areas"]:
        if Path(area["path"]).is_file():
            return Path(area["path"]).parent
    return None


def probe_places(data_dir: Path | None = None) -> dict[str, dict]:
    """The devices to probe: {device: {"dir": where its scratch file lives, "holds":
    ["data"] and/or ["swap"]}}.  The data's device is that of DATA_DIR (default the
    bench directory); a device's scratch file lives in the bench directory when that is
    on it, else in the data or swap file's own directory."""
    bench = bench_dir()
    places: dict[str, dict] = {}

    def add(path: Path, what: str) -> None:
        dev = environment.block_device_of(path)
        if dev is None:
            return
        if dev not in places:
            home = bench if environment.block_device_of(bench) == dev else path
            places[dev] = {"dir": str(home), "holds": []}
        places[dev]["holds"].append(what)

    add(data_dir or bench, "data")
    swap = swap_file_dir()
    if swap is not None:
        add(swap, "swap")
    return places


def fio_command(scratch: Path, runtime_ms: int) -> list[str]:
    """One fio command running JOBS in turn on SCRATCH (laid out by fio when missing)."""
    cmd = ["fio", "--output-format=json", f"--filename={scratch}", f"--size={SCRATCH_BYTES}",
           "--direct=1", "--ioengine=libaio", "--time_based", f"--runtime={runtime_ms}ms"]
    for i, (name, rw, bs, depth) in enumerate(JOBS):
        cmd += [f"--name={name}", *(["--stonewall"] if i else []), f"--rw={rw}",
                f"--bs={bs}", f"--iodepth={depth}"]
    return cmd


def parse_fio(text: str) -> dict:
    """A device's rates from fio's JSON (which warnings may precede)."""
    try:
        doc = json.loads(text[text.index("{"):])
        jobs = {j["jobname"]: j for j in doc["jobs"]}
        out = {"tool": doc.get("fio version", "fio")}
        for name, rw, _, _ in JOBS:
            side = jobs[name]["write" if rw == "write" else "read"]
            if name.startswith("seq"):
                out[f"{name}_bytes_per_s"] = float(side["bw_bytes"])
            else:
                out[f"{name}_iops"] = float(side["iops"])
                out[f"{name}_latency_us"] = float(side["clat_ns"]["mean"]) / 1e3
    except (ValueError, KeyError, TypeError) as e:
        raise BenchError(f"the device probe could not read fio's output ({e})") from None
    return out


def probe(data_dir: Path | None = None, budget: float = PROBE_SECONDS) -> dict:
    """Measure the devices holding the data and the swap file: BUDGET seconds of I/O in
    all (plus, the first time, laying out each 1 GiB scratch file)."""
    if shutil.which("fio") is None:
        raise BenchError("the device probe needs fio, which is missing: run `make setup` "
                         "(it installs the Debian package fio) or `apt-get install fio`")
    places = probe_places(data_dir)
    if not places:
        raise BenchError("the device probe found no block device holding the data "
                         f"({data_dir or bench_dir()})")
    runtime_ms = max(50, int(budget * 1000 / (len(places) * len(JOBS))))
    t0 = time.perf_counter()
    devices = {}
    for dev, place in places.items():
        scratch = Path(place["dir"]) / SCRATCH_NAME
        if scratch.exists() and scratch.stat().st_size != SCRATCH_BYTES:
            scratch.unlink()    # a layout a killed probe left unfinished: fio redoes it
        r = subprocess.run(fio_command(scratch, runtime_ms), capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f"the device probe (fio on {scratch}) failed: "
                             f"{(r.stderr or r.stdout).strip().splitlines()[-1:]}")
        devices[dev] = {**parse_fio(r.stdout), "scratch": str(scratch),
                        "holds": place["holds"]}
    return {"method": f"fio, O_DIRECT, libaio, {runtime_ms} ms per job",
            "seconds": time.perf_counter() - t0, "devices": devices,
            "data_device": next((d for d, p in places.items() if "data" in p["holds"]), None),
            "swap_device": next((d for d, p in places.items() if "swap" in p["holds"]), None)}


# The arithmetic

def traffic(run: Mapping) -> dict | None:
    """A run's bytes by kind, from `foresight run`'s keys; None when a counter is
    missing.  read_bytes (the program's own) holds its swap-ins too, so reads are exact;
    the swap counters are system-wide (cgroup v1 keeps none per cgroup), so swap-ins are
    capped at read_bytes, and `others_swapped` says when the system swapped in more than
    the program read (another program's swapping then counts in swap_out too)."""
    keys = ("read_bytes", "write_bytes", "swap_in_bytes", "swap_out_bytes")
    if any(run.get(k) is None for k in keys):
        return None
    swap_in = min(run["swap_in_bytes"], run["read_bytes"])
    return {"file_read": run["read_bytes"] - swap_in, "file_write": run["write_bytes"],
            "swap_in": swap_in, "swap_out": run["swap_out_bytes"],
            "others_swapped": run["swap_in_bytes"] > run["read_bytes"]}


def io_seconds(moved: Mapping[str, float], device_probe: Mapping) -> float | None:
    """T_io of MOVED bytes: each kind at the sequential rate of its device; on one
    device the times add, on two the larger counts (they can overlap)."""
    devices = device_probe.get("devices") or {}
    data = devices.get(device_probe.get("data_device"))
    swap = devices.get(device_probe.get("swap_device")) or data
    if data is None:
        return None
    by_device: dict[int, float] = {}
    for dev, reads, writes in ((data, "file_read", "file_write"),
                               (swap, "swap_in", "swap_out")):
        t = (moved.get(reads, 0) / dev["seq_read_bytes_per_s"]
             + moved.get(writes, 0) / dev["seq_write_bytes_per_s"])
        by_device[id(dev)] = by_device.get(id(dev), 0.0) + t
    return max(by_device.values())


def spilled(data_bytes: int, mem: int, what: str = "malloc'd") -> dict:
    """Minimum traffic of DATA_BYTES generated in memory (WHAT) and used afterwards
    under a MEM cap: what exceeds the cap written to swap once and read back once."""
    excess = max(0, data_bytes - mem)
    return {"file_read": 0, "file_write": 0, "swap_in": excess, "swap_out": excess,
            "rule": f"{format_size(data_bytes)} {what} data under a {format_size(mem)} cap: "
                    "the excess written once, read back once"}


def run_cpu(run: Mapping) -> float | None:
    """User plus system seconds of a run (all its threads), or None."""
    user, system = run.get("user_seconds"), run.get("sys_seconds")
    return None if user is None or system is None else user + system


def assess(wall: Mapping[str, float], runs: Mapping[str, Mapping],
           t_cpu: Mapping[str, float], minimum: Mapping, device_probe: Mapping,
           cpus: int | None = None) -> dict:
    """The bound of one kernel: per variant its traffic, T_io, max(T_cpu, T_io) and
    distance = wall / that, and the same with the run's own CPU time over CPUS (default:
    this machine's) as a third floor; and the minimum-traffic bound, max(the smaller
    T_cpu, T_io of MINIMUM), with each variant's distance from it."""
    cpus = cpus or len(os.sched_getaffinity(0))
    out: dict = {"t_cpu": dict(t_cpu), "wall": dict(wall), "traffic": {}, "t_io": {},
                 "bound": {}, "distance": {}, "cpus": cpus, "cpu": {}, "distance_cpu": {}}
    for v in VARIANTS:
        moved = traffic(runs[v])
        out["traffic"][v] = moved
        t_io = io_seconds(moved, device_probe) if moved is not None else None
        out["t_io"][v] = t_io
        limit = max(t_cpu[v], t_io) if t_io is not None and t_cpu.get(v) is not None else None
        out["bound"][v] = limit
        out["distance"][v] = wall[v] / limit if limit else None
        cpu = out["cpu"][v] = run_cpu(runs[v])
        out["distance_cpu"][v] = (wall[v] / max(limit, cpu / cpus)
                                  if limit and cpu is not None else None)
    out["min_traffic"] = dict(minimum)
    t_io_min = io_seconds(minimum, device_probe)
    t_cpus = [t for t in t_cpu.values() if t is not None]
    out["t_io_min"] = t_io_min
    out["min_bound"] = (max(min(t_cpus), t_io_min) if t_cpus and t_io_min is not None
                        else None)
    out["distance_min"] = {v: wall[v] / out["min_bound"] if out["min_bound"] else None
                           for v in VARIANTS}
    return out


def moved_bytes(moved: Mapping | None) -> int | None:
    return None if moved is None else sum(moved.get(k, 0) for k in TRAFFIC)


def in_core(name: str, exes: Mapping[str, str], args: list[str], files: list[str],
            repeat: int, step: Callable[[str], None]) -> dict:
    """T_cpu: `bench incore`'s runs of NAME with ARGS (no cap, warm and cold, O, P and P
    with FORESIGHT_DISABLE=1); T_cpu is the warm median of O and of P."""
    from foresight.bench import incore  # incore imports the suites that import this

    row = incore.measure_program(name, dict(exes), args, files, repeat, step)
    med = row["warm"]["median_wall_seconds"]
    return {"t_cpu": {v: med[v] for v in VARIANTS}, "runs": row}


# Rendering

def _s(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x * 1000:.0f} ms" if x < 0.1 else f"{x:.2f} s"


def _pair(a: str, b: str) -> str:
    return f"{a} / {b}"


def _x(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def _size(x: float | None) -> str:
    return "–" if x is None else format_size(x)


def _others(b: Mapping, v: str) -> str:
    return "*" if (b["traffic"].get(v) or {}).get("others_swapped") else ""


BOUND_COLUMNS = ("kernel", "T_cpu O / P", "moved O / P", "T_io O / P", "wall O / P",
                 "distance O / P", "CPU used O / P", "distance with CPU O / P",
                 "min traffic", "min bound", "min distance O / P")


def table(title: str, rows: list[tuple[str, Mapping]]) -> Table:
    """The bound table: one row per (kernel name, assess() result)."""
    cells = []
    for name, b in rows:
        tc, tio, wall = b["t_cpu"], b["t_io"], b["wall"]
        moved = {v: moved_bytes(b["traffic"].get(v)) for v in VARIANTS}
        cells.append((name, _pair(_s(tc.get("O")), _s(tc.get("P"))),
                      _pair(_size(moved["O"]) + _others(b, "O"),
                            _size(moved["P"]) + _others(b, "P")),
                      _pair(_s(tio.get("O")), _s(tio.get("P"))),
                      _pair(_s(wall.get("O")), _s(wall.get("P"))),
                      _pair(_x(b["distance"].get("O")), _x(b["distance"].get("P"))),
                      _pair(_s(b["cpu"]["O"]), _s(b["cpu"]["P"])),
                      _pair(_x(b["distance_cpu"]["O"]), _x(b["distance_cpu"]["P"])),
                      _size(moved_bytes(b["min_traffic"])), _s(b["min_bound"]),
                      _pair(_x(b["distance_min"].get("O")), _x(b["distance_min"].get("P")))))
    return Table(title, BOUND_COLUMNS, cells, left=("kernel",))


def probe_note(device_probe: Mapping) -> str:
    """The devices' measured rates, in one line."""
    parts = []
    for dev, d in device_probe["devices"].items():
        parts.append(f"{dev} ({' and '.join(d['holds'])}): sequential read "
                     f"{d['seq_read_bytes_per_s'] / 1e6:,.0f} MB/s, write "
                     f"{d['seq_write_bytes_per_s'] / 1e6:,.0f} MB/s, random 4 KiB reads "
                     f"{d['rand_read_qd1_iops']:,.0f}/s at QD1 "
                     f"({d['rand_read_qd1_latency_us']:.0f} µs), "
                     f"{d['rand_read_qd32_iops']:,.0f}/s at QD32")
    swap = ("" if device_probe.get("swap_device") else
            "; swap not probed (no active swap file), counted at the data device's rates")
    return (f"Device probe ({device_probe['method']}, {device_probe['seconds']:.1f} s): "
            + "; ".join(parts) + swap)


BOUND_NOTE = ("Bound: T_cpu = warm in-core wall time (no cap, median); moved = file reads "
              "+ file writes + swap-in + swap-out of the run (swap counters system-wide); "
              "T_io = those bytes at the device's sequential rates; distance = wall / "
              "max(T_cpu, T_io); CPU used = user + system time of the run, all threads; "
              "distance with CPU = wall / max(T_cpu, T_io, CPU used / CPUs); min traffic = "
              "the least any schedule must move (see rule in the JSON), min bound = "
              "max(smaller T_cpu, its T_io); * = the system swapped in more than the run "
              "read: other programs swapped meanwhile.")


def plot(rows: list[tuple[str, Mapping]], directory: str, name: str, title: str) -> str:
    """Per kernel: O's and P's wall time, the lower of their bounds max(T_cpu, T_io)
    and the minimum-traffic bound, side by side; each variant's own bound is a tick on
    its bar."""
    from foresight.bench.common import pyplot
    from foresight.reports import save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(rows)) + 2.5, 3.6))
    width = 0.2
    series = (("O", "tab:gray"), ("P", "tab:green"),
              ("max(T_cpu, T_io), the lower of O's and P's", "tab:blue"),
              ("minimum-traffic bound", "tab:purple"))
    lowest = float("inf")
    for i, (_, b) in enumerate(rows):
        bounds = [x for x in b["bound"].values() if x is not None]
        values = [b["wall"].get("O"), b["wall"].get("P"), min(bounds) if bounds else None,
                  b["min_bound"]]
        for k, ((label, color), value) in enumerate(zip(series, values, strict=True)):
            x = i + (k - 1.5) * width
            if value is not None:
                ax.bar(x, value, width, color=color, label=label if i == 0 else None)
                lowest = min(lowest, value)
            own = b["bound"].get(label) if label in VARIANTS else None
            if own is not None:
                ax.hlines(own, x - width / 2, x + width / 2, color="black", linewidth=1.5,
                          label="its max(T_cpu, T_io)" if i == 0 and label == "O" else None)
    ax.set_xticks(range(len(rows)), [n for n, _ in rows], rotation=30, ha="right",
                  fontsize=8)
    ax.set_yscale("log")   # bounds of milliseconds beside walls of seconds
    if lowest < float("inf"):
        ax.set_ylim(bottom=lowest / 3)   # the smallest bar stands clear of the axis
    ax.set_ylabel("seconds (log scale)")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1))   # beside the bars
    ax.set_title(title, fontsize=9)
    return save_figure(fig, directory, name)


def ratio_table(subs: list[dict], rows: Callable[[dict], dict[str, dict]], what: str) -> Table:
    """Per kernel, the O/P speedup (`what`: of the access phase, of wall) and P's distance
    from its bound at each data/memory ratio; `rows` gives one ratio's rows by kernel."""
    by = [rows(s) for s in subs]
    cells = []
    for k in dict.fromkeys(k for b in by for k in b):
        row = [k]
        row += [f"{b[k]['speedup']:.2f}×" if "speedup" in b.get(k, {}) else "–" for b in by]
        row += [(f"{b[k]['bound']['distance']['P']:.2f}×"
                 if (b.get(k, {}).get("bound") or {}).get("distance", {}).get("P")
                 else "–") for b in by]
        cells.append(tuple(row))
    ratios = [f"{s['ratio']:g}×" for s in subs]
    return Table(f"speedup O/P ({what}) and P's distance from its bound, by data/memory ratio",
                 ("kernel", *(f"O/P at {r}" for r in ratios),
                  *(f"P distance at {r}" for r in ratios)), cells, left=("kernel",))


def ratio_plot(subs: list[dict], rows: Callable[[dict], dict[str, dict]], what: str,
               directory: str, name: str, label: Callable[[str], str] = str) -> str:
    """NAME (a PNG in DIRECTORY): each kernel's O/P speedup against the data/memory ratio."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    by = [rows(s) for s in subs]
    for k in dict.fromkeys(k for b in by for k in b):
        pts = [(s["ratio"], b[k]["speedup"]) for s, b in zip(subs, by, strict=True)
               if "speedup" in b.get(k, {})]
        ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", label=label(k))
    ax.set_xlabel("data / memory")
    ax.set_ylabel(f"speedup O/P ({what})")
    ax.legend(fontsize=6)
    ax.set_title(f"{format_size(subs[0]['mem_limit_bytes'])} cap", fontsize=9)
    return save_figure(fig, directory, name)

