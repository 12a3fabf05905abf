"""`foresight bench aasfp`: prefetch threads against the paper's Tables 1 and 2 (AASFP,
"A Decoupled Architecture for Application-Specific File Prefetching", Section 6).

The programs in benchmarks/aasfp (installed into share/foresight/aasfp) are plain C with
no foresight calls: `video` (4 KiB frames read with lseek + read, backward or forward,
every frame or every other one), `volvis` (a ray caster over a bricked volume, a header
and a view file read first, one pread a brick, back to front), `oocfft` (an in-place
out-of-core FFT in 4 KiB records, pread/pwrite) and `getc_sum` (a file read with getc).
Each is built by `foresight cc -O2` twice: `--no-prefetch` (O) and `--prefetch-thread`
(P).  Their inputs are written once by `mkdata` into FORESIGHT_BENCH_DIR.

Per configuration O and P alternate `--repeat` times, each run cold (the page cache
dropped) under the configuration's memory cap with read_ahead_kb 128, as `foresight run
--mem CAP --cold --readahead-kb 128` runs it; the median run (by wall time) stands for
each.  `getc` runs in core instead: no cap, the file cached by an untimed run first.
Every run's stdout must equal O's first, byte for byte: a difference, or a run killed
or failing, is shown in the table and makes the command exit 1.  An expectation not met
is shown, not an error.

% masked is 1 − stall_P / stall_O, the I/O stall being the time the program's main
thread was blocked (`foresight run`'s io_stall_seconds); the prefetch thread's counters
(pt_calls, pt_issued_bytes, pt_expired, pt_mispredicts, ...) are those the runtime
writes to FORESIGHT_STATS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from foresight import paths
from foresight.bench import suite
from foresight.bench.common import (
    bench_dir,
    compile_program,
    foresight_exe,
    make_inputs,
    present_size,
    pyplot,
    sources,
)
from foresight.bench.nas import median_run
from foresight.bench.tables import Table, machine
from foresight.errors import BenchError, UsageError
from foresight.harness import environment, readahead
from foresight.harness.process import terminations_interrupt
from foresight.harness.run import devices_for, run_once
from foresight.reports import save_figure
from foresight.units import format_size, parse_size

READAHEAD_KB = 128        # Linux's common default: what the paper's programs ran against
IN_CORE_RUNS = 5          # at least, for getc's P/O (a 2% target)
FRAME = 4096              # video.c's frame
PROGRAMS = ("video", "volvis", "oocfft", "getc_sum")
# Programs of several files, each compiled on its own (`foresight cc -c`) and linked: the
# prefetch thread of a file without main, its runs anchored at its functions' entries.
SPLIT = {"video2": ("video2/main.c", "video2/play.c")}
LIBS = {"volvis": ["-lm"], "oocfft": ["-lm"]}
OBLIQUE = ("1", "0.6", "0.35")   # volvis's non-orthographic view direction


@dataclass(frozen=True)
class Paper:
    """A row of the paper's Table 2: Linux (O) and AASFP (P) seconds, % of I/O masked."""
    o: float
    p: float
    masked: float


@dataclass(frozen=True)
class Config:
    """One row of the table: a program, its arguments' shape and what it is held to."""
    key: str
    program: str
    what: str
    paper: Paper | None
    target: float             # O/P expected (getc: the P/O it must stay under)
    masked: float | None      # % masked expected
    expected: str             # the words


CONFIGS = (
    Config("backward1", "video", "backward, every frame", Paper(52.54, 7.63, 0.8475),
           8.0, 0.95, "≥ 8× (≥ 95%)"),
    Config("backward2", "video", "backward, every other frame", Paper(25.02, 6.19, 0.784),
           5.0, 0.90, "≥ 5× (≥ 90%)"),
    Config("split1", "video2", "backward, every frame, its reads in a file of their own",
           Paper(52.54, 7.63, 0.8475), 8.0, 0.95, "≥ 8× (≥ 95%)"),
    Config("forward1", "video", "forward, every frame", Paper(4.78, 4.76, 0.0054),
           0.98, None, "≥ 0.98×"),
    Config("forward2", "video", "forward, every other frame", Paper(4.61, 4.84, 0.0),
           0.98, None, "≥ 0.98×"),
    Config("volvis1", "volvis", "orthographic, 4 KiB bricks", Paper(68.95, 31.76, 0.6214),
           3.0, 0.90, "≥ 3× (≥ 90%)"),
    Config("volvis2", "volvis", "oblique, 4 KiB bricks", Paper(83.05, 64.95, 0.1299),
           2.5, 0.90, "≥ 2.5× (≥ 90%)"),
    Config("volvis3", "volvis", "orthographic, 32 KiB bricks", Paper(36.87, 31.23, 0.6661),
           1.5, None, "≥ 1.5×"),
    Config("volvis4", "volvis", "oblique, 32 KiB bricks", Paper(30.99, 29.78, 0.30),
           1.3, None, "≥ 1.3×"),
    Config("fft1", "oocfft", "in place, 4 KiB records", Paper(33.42, 33.74, 0.0),
           0.98, None, "≥ 0.98×"),
    Config("fft2", "oocfft", "in place, 4 KiB records", Paper(66.68, 67.84, 0.0),
           0.98, None, "≥ 0.98×"),
    Config("getc", "getc_sum", "a cached file read by getc, in core", None,
           1.02, None, "P/O ≤ 1.02"),
)
BY_KEY = {c.key: c for c in CONFIGS}


@dataclass(frozen=True)
class Sizes:
    """The data of each program and the caps they run under (data 2-4× the cap)."""
    video_bytes: int
    video_cap: str
    volume_edge: int          # voxels along each side of the cube
    volvis_cap: str
    fft_points: tuple[int, int]
    fft_block: int            # points oocfft keeps in memory
    fft_cap: str
    text_bytes: int


# default: about 8 minutes here (a 0.8 GB/s disk, 30-70 µs a random 4 KiB read): video
# 1 GiB under 256 MiB, volvis 1024^3 (1 GiB) under 256 MiB, oocfft 2^24 and 2^25 points
# (256 and 512 MiB) under 128 MiB, getc 128 MiB in core.  quick: the paper's own sizes
# (16 MB volume, 256K/512K-point FFTs), for tests; the ratios do not hold there.
SIZES = {
    "default": Sizes(1 << 30, "256M", 1024, "256M", (1 << 24, 1 << 25), 1 << 20, "128M",
                     128 << 20),
    "quick": Sizes(32 << 20, "16M", 256, "16M", (1 << 18, 1 << 19), 1 << 14, "16M", 4 << 20),
}


def programs_dir() -> Path:
    """The programs' sources (the source tree's, else those `make setup` installed)."""
    return sources("aasfp", "video.c", paths.prefix() / "share" / "foresight" / "aasfp",
                   "the aasfp programs")


def _points(n: int) -> str:
    return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"


def display_name(c: Config, sizes: Sizes) -> str:
    """The paper's name for the row ("Backward 1", "Vol Vis 3", "FFT 16M")."""
    if c.program == "video2":
        return "Backward 1, 2 files"
    if c.program == "video":
        return f"{c.key[:-1].capitalize()} {c.key[-1]}"
    if c.program == "volvis":
        return f"Vol Vis {c.key[-1]}"
    if c.program == "oocfft":
        return f"FFT {_points(sizes.fft_points[int(c.key[-1]) - 1])}"
    return "getc"


# ---- inputs ----

def _volume_edge(c: Config) -> int:
    return 16 if c.key in ("volvis1", "volvis2") else 32   # 4 KiB or 32 KiB bricks


def inputs(c: Config, sizes: Sizes, data_dir: Path) -> list[tuple[list[str], list[Path],
                                                                  list[int]]]:
    """The files config C reads, as (mkdata arguments after the kind's paths, paths,
    sizes): what `make_inputs` is given.  The arguments' first word is mkdata's kind."""
    if c.program in ("video", "video2"):
        size = sizes.video_bytes // FRAME * FRAME
        return [(["frames", str(size)], [data_dir / f"aasfp-frames-{size}.dat"], [size])]
    if c.program == "volvis":
        n, edge = sizes.volume_edge, _volume_edge(c)
        header = f"volume {n} {n} {n}\nbrick {edge}\n"   # as mkdata.c writes it
        return [(["volume", str(n), str(edge)],
                 [data_dir / f"aasfp-volume-{n}-b{edge}.vol",
                  data_dir / f"aasfp-volume-{n}-b{edge}.hdr"], [n ** 3, len(header)])]
    if c.program == "oocfft":
        points = sizes.fft_points[int(c.key[-1]) - 1]
        return [(["fft", str(points)], [data_dir / f"aasfp-fft-{points}.dat"], [points * 16])]
    return [(["text", str(sizes.text_bytes)], [data_dir / f"aasfp-text-{sizes.text_bytes}.txt"],
             [sizes.text_bytes])]


def make(mkdata: str, c: Config, sizes: Sizes, data_dir: Path) -> None:
    for args, finals, want in inputs(c, sizes, data_dir):
        kind, rest = args[0], args[1:]
        make_inputs(lambda tmps, kind=kind, rest=rest: [mkdata, kind, *map(str, tmps), *rest],
                    finals, want, "the suite")


def space_needed(configs: list[Config], sizes: Sizes, data_dir: Path) -> int:
    """Bytes the suite writes into DATA_DIR: the inputs not there yet, and a working
    copy of the largest FFT (oocfft transforms its file in place)."""
    total, seen = 0, set()
    for c in configs:
        for _, finals, want in inputs(c, sizes, data_dir):
            if finals[0] in seen:
                continue
            seen.add(finals[0])
            if [present_size(f, "the suite") for f in finals] != want:
                total += sum(want)
    ffts = [sizes.fft_points[int(c.key[-1]) - 1] * 16 for c in configs if c.program == "oocfft"]
    return total + max(ffts, default=0)


def check_space(configs: list[Config], sizes: Sizes, data_dir: Path) -> None:
    needed = space_needed(configs, sizes, data_dir)
    try:
        st = os.statvfs(data_dir)
    except OSError as e:
        raise BenchError(f"cannot examine {data_dir}: {e.strerror}") from None
    if needed > st.f_bavail * st.f_frsize:
        raise BenchError(f"the suite needs {format_size(needed)} of disk in {data_dir}, "
                         f"{format_size(st.f_bavail * st.f_frsize)} is free: use --quick, "
                         "or set FORESIGHT_BENCH_DIR to a larger disk")


def arguments(c: Config, sizes: Sizes, data_dir: Path, work: Path, mkdata: str
              ) -> tuple[list[str], list[str], Path | None]:
    """The program's arguments for C, the data files to evict before a cold run, and
    (oocfft) the pristine input its working copy is made from before every run."""
    _, finals, _ = inputs(c, sizes, data_dir)[0]
    if c.program == "video2":
        return [str(finals[0]), "backward", "1"], [str(finals[0])], None
    if c.program == "video":
        stride = c.key[-1]
        return [str(finals[0]), c.key[:-1], stride], [str(finals[0])], None
    if c.program == "volvis":
        view = work / f"{c.key}.view"
        direction = ("1", "0", "0") if c.key in ("volvis1", "volvis3") else OBLIQUE
        make_inputs(lambda tmps: [mkdata, "view", str(tmps[0]), *direction], [view],
                    [len(f"direction {' '.join(direction)}\n")], "the suite")   # as mkdata.c
        return [str(finals[1]), str(view), str(finals[0])], [str(finals[0])], None
    if c.program == "oocfft":
        copy = work / f"{c.key}.fft"
        return [str(copy), str(sizes.fft_block)], [str(copy)], finals[0]
    return [str(finals[0])], [str(finals[0])], None


# ---- building and running ----

def build(program: str, out: Path) -> dict[str, str | None]:
    """PROGRAM as O (`--no-prefetch`) and P (`--prefetch-thread`); a variant that does
    not build is None, its error under `VARIANT_error`.  A program of several files
    (SPLIT) has each compiled on its own, as `make` does, then linked."""
    built: dict = {}
    for v, option in (("O", "--no-prefetch"), ("P", "--prefetch-thread")):
        try:
            if program in SPLIT:
                built[v] = _build_split(program, out, v, option)
            else:
                built[v] = compile_program(programs_dir() / f"{program}.c",
                                           out / f"{program}-{v}", [option],
                                           LIBS.get(program, []))
        except BenchError as e:
            built[v], built[f"{v}_error"] = None, str(e)
    return built


def _build_split(program: str, out: Path, variant: str, option: str) -> str:
    objects = []
    for rel in SPLIT[program]:
        obj = out / f"{program}-{variant}-{Path(rel).stem}.o"
        compile_program(programs_dir() / rel, obj, [option, "-c"])
        objects.append(obj)
    exe = out / f"{program}-{variant}"
    cmd = [foresight_exe(), "cc", *map(str, objects), "-o", str(exe), *LIBS.get(program, [])]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not exe.exists():
        raise BenchError(f"{' '.join(cmd)} failed (exit {r.returncode}):\n"
                         f"{(r.stderr or r.stdout).strip()}")
    return str(exe)


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(exe: str, args: list[str], files: list[str], mem: int | None, cold: bool,
        timeout: float, pristine: Path | None) -> dict:
    """One run under the harness; a kill is reported, never retried."""
    if pristine is not None:   # oocfft transforms its file in place: a fresh copy a run
        shutil.copyfile(pristine, files[0])
    r = run_once([exe, *args], mem=mem, cold=cold, files=files, capture=True,
                 timeout=timeout)
    if r["exit_code"] != 0 and r.get("signal") in ("SIGINT", "SIGTERM", "SIGHUP"):
        raise KeyboardInterrupt   # the suite was interrupted, the program did not fail
    r["verified"] = r["exit_code"] == 0 and bool(r["stdout"].strip())
    return r


def why(r: dict) -> str:
    """Why a run gave no result."""
    if r.get("timed_out"):
        return "timed out"
    if r.get("oom_killed"):
        return "killed by the OOM killer"
    if r.get("signal"):
        return f"killed by {r['signal']}"
    if r["exit_code"] != 0:
        err = r.get("stderr", "").strip().splitlines()
        return f"exit {r['exit_code']}" + (f": {err[-1]}" if err else "")
    return "printed nothing"


def pt_counters(runtime: dict | None) -> dict:
    """The prefetch thread's counters in the runtime's FORESIGHT_STATS JSON: every
    `pt_*` key, at the top, in its `global` block or in a `prefetch_thread` block (whose
    keys are given the prefix)."""
    out: dict = {}
    if not isinstance(runtime, dict):
        return out
    for block in (runtime, runtime.get("global")):
        if isinstance(block, dict):
            out.update({k: v for k, v in block.items() if k.startswith("pt_")})
    pt = runtime.get("prefetch_thread")
    if isinstance(pt, dict):
        out.update({k if k.startswith("pt_") else f"pt_{k}": v for k, v in pt.items()})
    return out


RUN_KEYS = ("wall_seconds", "user_seconds", "sys_seconds", "io_stall_seconds", "read_bytes",
            "write_bytes", "major_faults", "exit_code", "signal", "timed_out", "oom_killed",
            "cgroup_version")


def _slim(r: dict) -> dict:
    """A run for the JSON: the harness's measurements and the thread's counters."""
    out = {k: r.get(k) for k in RUN_KEYS}
    out["verified"] = r["verified"]
    out["pt"] = pt_counters(r.get("runtime"))
    if r.get("walls"):
        out["walls"] = r["walls"]
    if not r["verified"]:
        out["why"] = why(r)
        out["stderr"] = r.get("stderr", "")[-2000:]
    return out


def _cpu(r: dict) -> float | None:
    u, s = r.get("user_seconds"), r.get("sys_seconds")
    return u + s if u is not None and s is not None else None


def measure_config(c: Config, name: str, exes: dict, args: list[str], files: list[str],
                   mem: int | None, repeat: int, timeout: float,
                   pristine: Path | None) -> dict:
    """O and P alternating: REPEAT cold runs each under MEM, or (MEM None) an untimed
    warm-up and max(IN_CORE_RUNS, REPEAT) warm runs each."""
    in_core = mem is None
    runs: dict[str, list[dict]] = {"O": [], "P": []}
    if in_core:
        _progress(f"  {name}: warming the page cache")
        run(exes["O"], args, files, None, False, timeout, pristine)
    count = max(IN_CORE_RUNS, repeat) if in_core else repeat
    for k in range(count):
        for v in ("O", "P"):
            _progress(f"  {name}: {v} ({k + 1}/{count})")
            runs[v].append(run(exes[v], args, files, mem, not in_core, timeout, pristine))
    row: dict = {"in_core": in_core, "runs": count}
    problems = [f"{v}: {why(r)}" for v in ("O", "P") for r in runs[v] if not r["verified"]]
    ok = [(v, r) for v in ("O", "P") for r in runs[v] if r["verified"]]
    output = next((r["stdout"] for v, r in ok if v == "O"), None)
    differ = sorted({v for v, r in ok if output is not None and r["stdout"] != output})
    if differ:
        problems.append(", ".join(differ) + ": output differs from O's")
        row["outputs"] = {v: r["stdout"] for v, r in ok if r["stdout"] != output}
    row["output"] = output
    row["outputs_identical"] = output is not None and not differ
    # Table 3's check: a cold run starts with none of its data cached (None: not counted).
    counted = [r["cold_cached_pages"] for v in ("O", "P") for r in runs[v]
               if r.get("cold_cached_pages") is not None]
    row["cold_cached_pages_max"] = max(counted) if counted else None
    chosen = {v: median_run(rs) for v, rs in runs.items()}
    for v in ("O", "P"):
        row[v] = _slim(chosen[v])
    row["pt"] = row["P"]["pt"]
    if chosen["O"]["verified"] and chosen["P"]["verified"]:
        o, p = chosen["O"], chosen["P"]
        row["speedup"] = o["wall_seconds"] / max(p["wall_seconds"], 1e-9)
        so, sp = o.get("io_stall_seconds"), p.get("io_stall_seconds")
        row["masked"] = 1 - sp / so if so and sp is not None else None
        co, cp = _cpu(o), _cpu(p)
        row["extra_cpu_seconds"] = cp - co if co is not None and cp is not None else None
        if in_core:
            row["met"] = 1 / row["speedup"] <= c.target
        else:
            row["met"] = row["speedup"] >= c.target and (
                c.masked is None or (row["masked"] is not None and row["masked"] >= c.masked))
    stopped = row["pt"].get("pt_stopped")
    if stopped:
        problems.append(f"P: the prefetch thread stopped: {stopped}")
    row["problems"] = problems
    row["failed"] = bool(differ) or any(not r["verified"] for rs in runs.values() for r in rs)
    return row


def aasfp(configs: list[Config], size: str, repeat: int, timeout: float) -> dict:
    sizes = SIZES[size]
    data_dir = bench_dir()
    check_space(configs, sizes, data_dir)
    caps = {"video": sizes.video_cap, "video2": sizes.video_cap, "volvis": sizes.volvis_cap,
            "oocfft": sizes.fft_cap}
    rows: list[dict] = []
    with terminations_interrupt(), tempfile.TemporaryDirectory(
            prefix="foresight-aasfp-", dir=data_dir) as tmpname:
        work = Path(tmpname)
        _progress("building mkdata, and each program with foresight cc --no-prefetch (O) "
                  "and --prefetch-thread (P)")
        mkdata = compile_program(programs_dir() / "mkdata.c", work / "mkdata",
                                 ["--no-prefetch"], ["-lm"])
        built = {p: build(p, work) for p in dict.fromkeys(c.program for c in configs)}
        for c in configs:
            _progress(f"{display_name(c, sizes)}: preparing its input")
            make(mkdata, c, sizes, data_dir)
        with readahead.Setting(devices_for([str(data_dir)]), READAHEAD_KB):
            env = environment.environment(None)
            for c in configs:
                name = display_name(c, sizes)
                cap = caps.get(c.program)
                args, files, pristine = arguments(c, sizes, data_dir, work, mkdata)
                data = sum(sum(w) for _, _, w in inputs(c, sizes, data_dir))
                row = {"config": c.key, "name": name, "program": c.program, "what": c.what,
                       "arguments": [Path(a).name if "/" in a else a for a in args],
                       "data_bytes": data,
                       "mem_limit_bytes": parse_size(cap) if cap else None,
                       "expected": {"text": c.expected, "target": c.target,
                                    "masked": c.masked},
                       "paper": c.paper.__dict__ if c.paper else None}
                exes = built[c.program]
                missing = [f"{v}: {exes[f'{v}_error']}" for v in ("O", "P") if exes[v] is None]
                if missing:
                    rows.append({**row, "failed": True, "build_failed": "; ".join(missing),
                                 "problems": missing})
                    continue
                _progress(f"{name}: {format_size(data)}"
                          + (f" under a {cap} cap, cold" if cap else ", in core"))
                rows.append({**row, **measure_config(
                    c, name, exes, args, files, parse_size(cap) if cap else None, repeat,
                    timeout, pristine)})
    env["cgroup_version"] = next((r["O"]["cgroup_version"] for r in rows
                                  if "O" in r and r["O"].get("cgroup_version")), None)
    return {"suite": "aasfp", "size": size, "readahead_kb": READAHEAD_KB, "repeat": repeat,
            "in_core_runs": max(IN_CORE_RUNS, repeat), "timeout_seconds": timeout,
            "sizes": sizes.__dict__, "rows": rows, "environment": env}


# ---- tables, notes, plots ----

def _secs(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x * 1000:.0f} ms" if x < 0.1 else f"{x:.2f} s"


def _wall(run: dict) -> str:
    if not run.get("verified"):
        return run.get("why") or "failed"
    walls = run.get("walls") or []
    spread = f" ({min(walls):.2f}–{max(walls):.2f})" if len(walls) > 1 else ""
    return _secs(run["wall_seconds"]) + spread


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _size(x: float | None) -> str:
    return "–" if x is None else format_size(x)


def _count(x) -> str:
    return "–" if x is None else f"{x:,}" if isinstance(x, int) else str(x)


def _paper(p: dict | None) -> str:
    if not p:
        return "–"
    return f"{p['o']:.2f} → {p['p']:.2f} ({p['masked']:.0%})"


def _ratio(r: dict) -> str:
    if "speedup" not in r:
        return "–"
    return f"P/O {1 / r['speedup']:.3f}" if r.get("in_core") else f"{r['speedup']:.2f}×"


def _outputs(r: dict) -> str:
    if r.get("build_failed"):
        return "not built"
    if r.get("problems"):
        return "NO: " + "; ".join(r["problems"])
    return "identical"


def main_table(res: dict) -> Table:
    rows = []
    for r in res["rows"]:
        cap = f"{format_size(r['mem_limit_bytes'])} cap" if r.get("mem_limit_bytes") \
            else "in core"
        head = (r["name"], f"{r['program']}: {r['what']}", f"{_size(r['data_bytes'])}, {cap}")
        if r.get("build_failed"):
            rows.append((*head, f"build failed: {r['build_failed']}"))
            continue
        met = r.get("met")
        rows.append((*head, _wall(r["O"]), _wall(r["P"]), _ratio(r), _pct(r.get("masked")),
                     r["expected"]["text"], "–" if met is None else "yes" if met else "no",
                     _paper(r.get("paper")), _outputs(r)))
    return Table("foresight bench aasfp: O = foresight cc --no-prefetch, P = foresight cc "
                 "--prefetch-thread, beside the paper's Table 2",
                 ("config", "program", "data", "O", "P", "O/P", "% masked", "expected",
                  "met", "paper O → P s (masked)", "outputs"), rows,
                 left=("config", "program", "data", "expected", "met", "outputs"))


def _delta(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x * 1000:+.0f} ms" if abs(x) < 0.1 else f"{x:+.2f} s"


def _thread(pt: dict) -> str:
    """Whether P's prefetch thread ran: started, stopped early (why), or none at all."""
    if not pt:
        return "–"
    if pt.get("pt_stopped"):
        return f"stopped: {pt['pt_stopped']}"
    if pt.get("pt_started") == 0:
        return "none"
    return "ran"


def thread_table(res: dict) -> Table:
    rows = []
    for r in res["rows"]:
        if "O" not in r:
            continue
        o, p, pt = r["O"], r["P"], r.get("pt") or {}
        rows.append((r["name"], _thread(pt), _secs(o.get("io_stall_seconds")),
                     _secs(p.get("io_stall_seconds")), _secs(_cpu(o)),
                     _delta(r.get("extra_cpu_seconds")), _secs(pt.get("pt_cpu_seconds")),
                     _count(pt.get("pt_calls")), _size(pt.get("pt_issued_bytes")),
                     _size(pt.get("pt_cached_bytes")),
                     _count(pt.get("pt_expired")), _count(pt.get("pt_mispredicts")),
                     f"{_size(o.get('read_bytes'))} → {_size(p.get('read_bytes'))}"))
    return Table("the prefetch thread (P's median run) and the main thread's I/O stall",
                 ("config", "thread", "O stall", "P stall", "O CPU", "P CPU − O CPU",
                  "thread CPU", "pt calls", "pt issued", "pt cached", "pt expired",
                  "pt mispredicts",
                  "read O → P"), rows, left=("config", "thread"))


def _cold_check(res: dict) -> str:
    """What the cold runs found of their data in the page cache when they started."""
    counts = [row.get("cold_cached_pages_max") for row in res["rows"]
              if not row.get("in_core")]
    counts = [n for n in counts if n is not None]
    if not counts:
        return ""
    worst = max(counts)
    return (" Every cold run started with none of its data files' pages cached (cachestat)."
            if worst == 0 else f" Some cold run started with {worst:,} pages of its data "
            "cached (cachestat): dropping the page cache left them.")


def notes(res: dict) -> list[str]:
    k = res["repeat"]
    s = res["sizes"]
    return [
        f"Cold runs: the page cache dropped before each, read_ahead_kb {res['readahead_kb']}, "
        f"video {format_size(s['video_bytes'])} under {s['video_cap']}, volvis "
        f"{s['volume_edge']}^3 under {s['volvis_cap']}, oocfft "
        f"{' and '.join(_points(n) for n in s['fft_points'])} points "
        f"({format_size(s['fft_block'] * 16)} in memory) under {s['fft_cap']}; "
        + ("one run per variant" if k == 1 else f"O and P alternating, the median of {k} "
           "runs each (their range in brackets)")
        + f"; getc in core: no cap, cached, the median of {res['in_core_runs']}."
        + _cold_check(res),
        "% masked = 1 − stall_P / stall_O, stall being the time the main thread was blocked "
        "(foresight run's io_stall_seconds); P CPU − O CPU is user + sys of the whole "
        "process (the thread's cost and what it saved the kernel); pt calls, issued, "
        "cached (requests not issued: cachestat found them in the page cache), expired and "
        "mispredicts are the runtime's FORESIGHT_STATS counters, thread CPU its "
        "pt_cpu_seconds (– where it wrote none); thread: whether P's prefetch thread ran.",
        "Outputs: every run's stdout compared with O's first, byte for byte; a difference "
        "or a killed run fails the suite (exit 1). Paper: a 200 MHz Pentium Pro, 64 MB, "
        "Linux 2.0.34, data 16 MB (FFT 2 and 4 MB), averages of 5 runs.",
        f"Machine: {machine(res['environment'])}",
    ]


def plot(res: dict, directory: str) -> list[str]:
    plt = pyplot()
    rows = [r for r in res["rows"] if "speedup" in r and not r.get("in_core")]
    if not rows:
        return []
    written = []
    # Table 2 as bars: each config's O and P, P's I/O stall on top of the rest.
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows)), 3.8))
    for i, r in enumerate(rows):
        base = r["O"]["wall_seconds"] or 1
        for j, v in enumerate(("O", "P")):
            run_ = r[v]
            stall = min(run_.get("io_stall_seconds") or 0, run_["wall_seconds"])
            x = i + (j - 0.5) * 0.38
            ax.bar(x, (run_["wall_seconds"] - stall) / base, 0.36, color="tab:blue",
                   label="busy (wall − I/O stall)" if i == 0 and j == 0 else None)
            ax.bar(x, stall / base, 0.36, bottom=(run_["wall_seconds"] - stall) / base,
                   color="tab:red", label="I/O stall (main thread)" if i == 0 and j == 0
                   else None)
            ax.annotate(v, (x, 0), ha="center", va="bottom", fontsize=7, color="white")
        if r.get("paper"):
            ax.plot(i + 0.19, r["paper"]["p"] / r["paper"]["o"], "k_", markersize=14,
                    label="paper's P / O" if i == 0 else None)
    ax.set_xticks(range(len(rows)), [r["name"] for r in rows], rotation=30, ha="right",
                  fontsize=8)
    ax.set_ylabel("time, normalized to O")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"O vs P, cold, read_ahead_kb {res['readahead_kb']}", fontsize=9)
    written.append(save_figure(fig, directory, "aasfp-time.png"))
    # Speedups: ours, the paper's and the expectation.
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows)), 3.6))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["speedup"] for r in rows], 0.4, color="tab:green",
           label="ours (O/P)")
    ax.bar([x + 0.2 for x in xs], [r["paper"]["o"] / r["paper"]["p"] if r.get("paper")
                                   else 0 for r in rows], 0.4, color="tab:gray",
           label="paper (Table 2)")
    ax.plot(list(xs), [r["expected"]["target"] for r in rows], "k_", markersize=16,
            label="expected")
    ax.axhline(1, color="black", linewidth=0.5)
    ax.set_xticks(list(xs), [r["name"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("speedup O/P")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    written.append(save_figure(fig, directory, "aasfp-speedup.png"))
    return written


class Aasfp(suite.Suite):
    name = "aasfp"
    help = "prefetch threads (foresight cc --prefetch-thread) beside the paper's AASFP numbers"
    repeat_default = 3

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--quick", action="store_true",
                            help="the paper's small sizes (16 MiB caps), for tests: seconds, "
                            "not minutes; the data/cap ratios do not hold")
        parser.add_argument("--configs", default=None, metavar="A,B",
                            help=f"comma-separated: {', '.join(BY_KEY)} (default all)")
        suite.add_timeout(parser)

    def measure(self, ns: argparse.Namespace) -> dict:
        keys = suite.choose(ns.configs, list(BY_KEY), "configuration", "--configs")
        if os.geteuid() != 0:
            raise UsageError("bench aasfp needs root: it sets the disk's read_ahead_kb, "
                             "drops the page cache and caps memory with a cgroup")
        return aasfp([BY_KEY[k] for k in keys], "quick" if ns.quick else "default",
                     ns.repeat, ns.timeout)

    def tables(self, res: dict) -> list[Table]:
        return [main_table(res), thread_table(res)]

    def notes(self, res: dict) -> list[str]:
        return notes(res)

    def plot(self, res: dict, directory: str) -> list[str]:
        return plot(res, directory)

    def exit_code(self, res: dict) -> int:
        return 1 if any(r.get("failed") for r in res["rows"]) else 0


SUITE = Aasfp()
