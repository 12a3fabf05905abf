"""`foresight bench demo` (what `make demo` runs): unmodified programs through foresight cc.

The programs in benchmarks/demo (installed into share/foresight/demo) are ordinary C as
users write it, with no foresight calls and no pragmas: `heat` (a stencil over malloc'd
rows), `spmv` (a CSR sparse matrix times a vector, both mapped from files) and `scan`
(the headers of a file of fixed-size records, mapped).  Each is compiled by
`foresight cc -O2` twice, with `--no-prefetch` (O) and with hints (P), as `foresight bench
compiler` does, and the pair runs

- out of core: `ratio` × the cap of data under the cap, cold page cache, the data disk's
  read_ahead_kb set for the session; heat's grid is malloc'd, so what exceeds the cap
  pages to swap (a temporary swap file is made for the demo when too little is active);
- in core: no cap, warm page cache (after one untimed run);

O and P alternating, `repeat` times each out of core and at least 3 times in core.  The
time is the whole program's wall time, as `foresight run` measures it.  Every run's
stdout must equal O's first byte for byte, else the demo fails.  Input files are made
once by `mkdata` (plain C, not a demo program) in FORESIGHT_BENCH_DIR.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from foresight import paths
from foresight.bench import suite
from foresight.bench.common import (
    bench_dir,
    build,
    compile_program,
    make_inputs,
    median_summary,
    present_size,
    sources,
)
from foresight.bench.tables import Table, machine, print_tables
from foresight.errors import BenchError, UsageError
from foresight.harness import environment, readahead, swap
from foresight.harness.process import terminations_interrupt
from foresight.harness.run import check_mem, devices_for, run_once
from foresight.units import format_size, parse_size


@dataclass(frozen=True)
class Program:
    backing: str    # "swap": malloc'd data, paged to swap beyond the cap; "file": mapped files
    what: str
    flags: tuple[str, ...] = ()


PROGRAMS = {
    "heat": Program("swap", "2-D heat diffusion, every grid row malloc'd (double **)", ("-lm",)),
    "spmv": Program("file", "CSR sparse matrix times a vector, both mapped from files",
                    ("-lm",)),
    "scan": Program("file", "the headers of a file of 64 KiB camera frames, mapped"),
}
REPORTED = "heat"         # the program whose --report the demo shows
HEAT_COLS, HEAT_STEPS = 4096, 2
IN_CORE_RUNS = 3
TIMEOUT = 900
FRAME_BYTES = 65568       # sizeof(struct frame) in scan.c and mkdata.c
NNZ_PER_ROW = 6           # as in mkdata.c
INTERRUPTS = ("SIGINT", "SIGTERM", "SIGHUP")   # the harness forwards these to the program


def programs_dir() -> Path:
    """The programs' sources (the source tree's, else those `make setup` installed)."""
    return sources("demo", "heat.c", paths.prefix() / "share" / "foresight" / "demo",
                   "the demo programs")


def build_mkdata(out_dir: Path) -> str:
    """The input-file writer, compiled as the originals are (no hints)."""
    return compile_program(programs_dir() / "mkdata.c", out_dir / "mkdata", ["--no-prefetch"])


def input_sizes(kind: str, size: int) -> list[int]:
    """The sizes of the files `mkdata KIND ... SIZE` writes, computed as mkdata.c does."""
    if kind == "frames":
        return [size // FRAME_BYTES * FRAME_BYTES]
    rows = size // 8 // 512 // 4 // NNZ_PER_ROW   # one nonzero per 4 pages of the vector
    per_row = 8 + NNZ_PER_ROW * 12                # a row pointer, then (double, int) pairs
    return [32 + rows * per_row, (size - 32 - rows * per_row) // 8 * 8]


def _make(mkdata: str, kind: str, finals: list[Path], size: int) -> None:
    """Write the files of KIND (`make_inputs`: under temporary names, then renamed; a
    file of the final name but another size stops the demo and is left alone)."""
    make_inputs(lambda tmps: [mkdata, kind, *map(str, tmps), str(size)], finals,
                input_sizes(kind, size), "the demo")


def input_files(name: str, size: int, data_dir: Path) -> tuple[str | None, list[Path]]:
    """What mkdata writes for program NAME (its kind, or None: heat mallocs its data) and
    the files' paths."""
    if name == "spmv":
        return "matrix", [data_dir / f"demo-matrix-{size}.csr",
                          data_dir / f"demo-vector-{size}.vec"]
    if name == "scan":
        return "frames", [data_dir / f"demo-frames-{size}.dat"]
    return None, []


def arguments(name: str, size: int, mkdata: str, data_dir: Path) -> tuple[list[str], list[str]]:
    """The program's command-line arguments for SIZE bytes of data, and its data files."""
    if name == "heat":   # two grids of HEAT_COLS doubles a row
        return [str(max(3, size // (2 * HEAT_COLS * 8))), str(HEAT_COLS), str(HEAT_STEPS)], []
    kind, files = input_files(name, size, data_dir)
    assert kind is not None
    _make(mkdata, kind, files, size)
    return [str(f) for f in files], [str(f) for f in files]


def run(exe: str, args: list[str], files: list[str], mem: int | None, cold: bool) -> dict:
    """One run under the harness; a run that fails (an OOM kill too) fails the demo."""
    r = run_once([exe, *args], mem=mem, cold=cold, files=files, capture=True,
                 timeout=TIMEOUT)
    if r["exit_code"] != 0 and r["signal"] in INTERRUPTS:
        # Ctrl-C or a kill of the demo reached the program too: the demo is interrupted
        # (and cleans up), the program did not fail.
        raise KeyboardInterrupt
    if r["exit_code"] != 0:
        why = ("timed out" if r["timed_out"] else "killed by the OOM killer"
               if r["oom_killed"] else f"exit {r['exit_code']}")
        raise BenchError(f"{Path(exe).name} {' '.join(args)}: {why}\n{r['stderr'].strip()}")
    r["access_seconds"] = None   # the whole program is timed: wall_seconds
    return r


def demo_swap() -> Path:
    """The demo's temporary swap file, beside its data."""
    return bench_dir() / "demo-swapfile"


def swap_needed(names: list[str], size: int, mem: int) -> int:
    """Swap the malloc'd programs need: their data, when it exceeds the cap."""
    return size if size > mem and any(PROGRAMS[n].backing == "swap" for n in names) else 0


def swap_file_size(needed: int) -> int:
    """The temporary swap file for NEEDED bytes: twice that, rounded up to 256 MiB."""
    return -(-2 * needed // (256 << 20)) * (256 << 20)


def _swap_plan(needed: int) -> tuple[str | None, bool]:
    """(what is at the demo's swap path, per `swap.what_is`; whether the demo will make,
    or take over, its swap file).  Without root: (None, False)."""
    if os.geteuid() != 0:
        return None, False
    what = swap.what_is(demo_swap())
    enough = needed == 0 or environment.swap_free_bytes() >= needed
    return what, what == "ours" or not enough


@contextlib.contextmanager
def enough_swap(needed: int) -> Iterator[str | None]:
    """Yields where the swap comes from, or None when there is too little and no way to
    add it (not root).  As root, a temporary swap file is made when too little is
    active, and turned off and removed at the end."""
    path = demo_swap()
    what, make = _swap_plan(needed)
    if what == "ours" and (needed == 0 or path.stat().st_size < swap_file_size(needed)):
        swap.disable(path)   # a killed demo's, not needed now or too small: removed
        what, make = _swap_plan(needed)
    if not make:
        total = environment.swap_summary()["total_bytes"]
        enough = needed == 0 or environment.swap_free_bytes() >= needed
        yield f"swap {format_size(total)} active" if enough else None
        return
    if what not in (None, "ours"):
        raise BenchError(f"{path} exists and is {what}; the demo never overwrites it: move "
                         "it away or set FORESIGHT_BENCH_DIR to another directory")
    swap.enable(path, swap_file_size(needed))   # a file a killed demo left is reused
    try:
        yield (f"a temporary {format_size(path.stat().st_size)} swap file ({path}, removed "
               "at the end)")
    finally:
        swap.disable(path)


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def compare(name: str, runs: list[tuple[str, dict]]) -> str:
    """Every run's stdout against O's first; the common output, or BenchError."""
    ref = runs[0][1]["stdout"]
    for label, r in runs:
        if r["stdout"] != ref:
            raise BenchError(f"{name}: the outputs differ with and without hints:\n"
                             f"  O: {ref.strip()}\n  {label}: {r['stdout'].strip()}")
    return ref


def measure(name: str, exes: dict[str, str], args: list[str], files: list[str], mem: int,
            repeat: int) -> dict:
    """Out of core (cold, capped) and in core (warm, no cap), O and P alternating."""
    out: dict[str, list[dict]] = {"O": [], "P": []}
    for i in range(repeat):
        for v in ("O", "P"):
            _progress(f"  {name}: out of core, {v} ({i + 1}/{repeat})")
            out[v].append(run(exes[v], args, files, mem, cold=True))
    _progress(f"  {name}: in core, {IN_CORE_RUNS} runs of O and of P")
    run(exes["O"], args, files, None, cold=False)   # warm the page cache, untimed
    inc: dict[str, list[dict]] = {"O": [], "P": []}
    for _ in range(max(IN_CORE_RUNS, repeat)):
        for v in ("O", "P"):
            inc[v].append(run(exes[v], args, files, None, cold=False))
    output = compare(name, [(f"{v} ({where})", r) for where, runs in
                            (("out of core", out), ("in core", inc))
                            for v in ("O", "P") for r in runs[v]])
    row = {"program": name, "what": PROGRAMS[name].what, "backing": PROGRAMS[name].backing,
           "arguments": args, "output": output, "outputs_identical": True}
    for v in ("O", "P"):
        row[v] = median_summary(out[v], output)
        row[f"{v}_in_core"] = median_summary(inc[v], output)
    row["speedup"] = row["O"]["wall_seconds"] / max(row["P"]["wall_seconds"], 1e-9)
    row["in_core_ratio"] = (row["O_in_core"]["wall_seconds"]
                            / max(row["P_in_core"]["wall_seconds"], 1e-9))
    return row


@contextlib.contextmanager
def one_at_a_time(data_dir: Path) -> Iterator[None]:
    """Hold DATA_DIR's demo lock: two demos at once would share its swap file (the first
    to end removes it under the other), write the same inputs and disturb each other's
    times."""
    path = data_dir / "demo.lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise BenchError(f"cannot open {path}: {e.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BenchError(f"another foresight bench demo is running with its data in "
                             f"{data_dir} (it holds {path}); wait for it to end") from None
        yield
    finally:
        os.close(fd)


def space_needed(names: list[str], size: int, mem: int, data_dir: Path) -> int:
    """Bytes the demo will write into DATA_DIR: the inputs not there yet and the temporary
    swap file when it will make one."""
    total = 0
    for n in names:
        kind, files = input_files(n, size, data_dir)
        if kind is not None and [present_size(f, "the demo") for f in files] \
                != input_sizes(kind, size):
            total += sum(input_sizes(kind, size))
    needed = swap_needed(names, size, mem)
    what, make = _swap_plan(needed)
    if make and (what != "ours" or demo_swap().stat().st_size < swap_file_size(needed)):
        total += swap_file_size(needed)
    return total


def check_space(names: list[str], size: int, mem: int, data_dir: Path) -> None:
    """Refuse, before building anything, data that would not fit on the disk."""
    needed = space_needed(names, size, mem, data_dir)
    try:
        st = os.statvfs(data_dir)
    except OSError as e:
        raise BenchError(f"cannot examine {data_dir}: {e.strerror}") from None
    free = st.f_bavail * st.f_frsize
    if needed > free:
        raise BenchError(f"the demo needs {format_size(needed)} of disk in {data_dir} (its "
                         f"inputs and swap file for {format_size(size)} of data a program), "
                         f"{format_size(free)} is free: lower --mem or --ratio, or set "
                         "FORESIGHT_BENCH_DIR to a larger disk")


def demo(mem: int, ratio: float, readahead_kb: int, names: list[str], repeat: int) -> dict:
    size = int(mem * ratio) // (1 << 20) * (1 << 20)
    if size < (1 << 20):
        raise BenchError(f"{ratio:g} × {format_size(mem)} is less than 1 MiB of data")
    rows: list[dict] = []
    data_dir = bench_dir()
    with terminations_interrupt(), one_at_a_time(data_dir), \
            tempfile.TemporaryDirectory(prefix="foresight-demo-") as tmp:
        check_space(names, size, mem, data_dir)
        _progress(f"building {', '.join(names)} with foresight cc and foresight cc "
                  "--no-prefetch")
        built = {n: build(n, Path(tmp), programs_dir() / f"{n}.c", PROGRAMS[n].flags)
                 for n in names}
        report = built[REPORTED][1] if REPORTED in built else None
        if report is not None:
            print_report_excerpt(report)
        mkdata = build_mkdata(Path(tmp))
        with enough_swap(swap_needed(names, size, mem)) as swap_note, \
                readahead.Setting(devices_for([str(data_dir)]), readahead_kb):
            env = environment.environment(None)
            for n in names:
                if PROGRAMS[n].backing == "swap" and swap_note is None and size > mem:
                    rows.append({"program": n, "what": PROGRAMS[n].what, "skipped":
                                 f"its {format_size(size)} of malloc'd data need swap beyond "
                                 "the cap: run `foresight swap enable --size 8G` as root"})
                    continue
                _progress(f"{n}: preparing {format_size(size)} of data")
                args, files = arguments(n, size, mkdata, data_dir)
                row = measure(n, built[n][0], args, files, mem, repeat)
                row["cc_report"] = built[n][1]
                rows.append(row)
    measured = [r["O"] for r in rows if "O" in r]
    env["cgroup_version"] = measured[0]["cgroup_version"] if measured else None
    return {"suite": "demo", "mem_limit_bytes": mem, "ratio": ratio, "data_bytes": size,
            "readahead_kb": readahead_kb, "repeat": repeat, "in_core_runs":
            max(IN_CORE_RUNS, repeat), "swap": swap_note, "rows": rows, "environment": env}


def report_excerpt(entries: list[dict]) -> list[str]:
    """Lines of `foresight cc --report`: the nest with the most hints (its decisions that
    placed them), every nest left unchanged with its reason, the lines of the other
    hinted nests, and the per-file summary."""
    from foresight.compiler.report import format_report

    blocks: list[list[str]] = []
    summary = []
    for line in format_report(entries).splitlines():
        if ": summary: " in line and not line.startswith(" "):
            summary.append(line)
        elif line.startswith(" ") and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])

    def hints(block: list[str]) -> list[str]:
        return [ln for ln in block if ln.startswith("  decision: ") and "pipelin" in ln]

    best = max(blocks, key=lambda b: len(hints(b)), default=None)
    out, others = [], []
    for b in blocks:
        if b is best and hints(b):
            out += [b[0], *hints(b)]
        elif any(ln.startswith("  left unchanged: ") for ln in b):
            out += [b[0], *(ln for ln in b if ln.startswith("  left unchanged: "))]
        elif hints(b):
            others.append(b[0].split(": ", 1)[0].rsplit(":", 1)[-1])
    if others:
        out.append(f"  ... and {len(others)} more nests with hints (lines {', '.join(others)})")
    return out + summary


def print_report_excerpt(entries: list[dict]) -> None:
    src = Path(entries[0]["source"]) if entries else programs_dir() / f"{REPORTED}.c"
    here = Path.cwd()
    shown = str(src.relative_to(here)) if src.is_relative_to(here) else str(src)
    print(f"\n$ foresight cc -O2 --report {shown} -lm   (excerpt)")
    for line in report_excerpt(entries):
        print(line.replace(str(src), shown))
    print()


def table(res: dict) -> Table:
    rows = []
    for row in res["rows"]:
        if "skipped" in row:
            rows.append((row["program"], "malloc (swap)", f"skipped: {row['skipped']}"))
            continue
        o, p, oi, pi = row["O"], row["P"], row["O_in_core"], row["P_in_core"]
        rows.append((row["program"],
                     "malloc (swap)" if row["backing"] == "swap" else "mmap file",
                     _secs(o["wall_seconds"]), _secs(p["wall_seconds"]),
                     f"{row['speedup']:.2f}×",
                     f"{_secs(o['io_stall_seconds'])} → {_secs(p['io_stall_seconds'])}",
                     f"{_size(o['read_bytes'])} → {_size(p['read_bytes'])}", "identical",
                     f"{_secs(oi['wall_seconds'])} → {_secs(pi['wall_seconds'])} "
                     f"({_in_core(oi['wall_seconds'], pi['wall_seconds'])})"))
    return Table("foresight bench demo: unmodified programs, O = foresight cc --no-prefetch, "
                 "P = foresight cc",
                 ("program", "data", "O time", "P time", "speedup O/P", "I/O stall O → P",
                  "read O → P", "outputs", "in core O → P"), rows,
                 left=("program", "data", "outputs"))


def notes(res: dict) -> list[str]:
    cg = res["environment"].get("cgroup_version")
    return [f"Out of core: {format_size(res['data_bytes'])} of data per program under a "
            f"{format_size(res['mem_limit_bytes'])} memory cap (cgroup v{cg}), cold page "
            f"cache, read_ahead_kb {res['readahead_kb']}, median of {res['repeat']} "
            f"alternating runs each; in core: no cap, warm cache, median of "
            f"{res['in_core_runs']} (O/P, or P's extra time for runs under 0.1 s). Times are "
            "whole-program wall times; outputs: every run's stdout compared with O's first, "
            "byte for byte.",
            f"Machine: {machine(res['environment'], res['swap'] or 'no swap')}"]


def print_table(res: dict) -> None:
    print_tables([table(res)], notes(res))
    bindir = Path(sys.prefix) / "bin"
    print(f"\nYour program:  make CC=\"{bindir}/foresight cc\"   "
          "(CFLAGS+=--report: what it did to each loop)")
    print(f"Measure it:    {bindir}/foresight run --mem 256M --cold --readahead-kb 128 -- "
          "./prog ARGS   (a cap below its data)")


def _secs(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x * 1000:.0f} ms" if x < 0.1 else f"{x:.2f} s"


def _in_core(o: float, p: float) -> str:
    """O/P where the run is long enough for a ratio to mean something; for runs of a few
    milliseconds, P's extra time."""
    if o >= 0.1:
        return f"{o / max(p, 1e-9):.2f}×"
    return f"{1000 * (p - o):+.0f} ms"


def _size(x: int | None) -> str:
    return "–" if x is None else format_size(x)


class Demo(suite.Suite):
    name = "demo"
    help = "what `make demo` runs: unmodified programs through foresight cc, O vs P"
    plots = False   # the table is the output, --json the data

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        suite.add_cap(parser, "128M", 3.0)
        suite.add_kernels(parser, ", ".join(PROGRAMS))

    def measure(self, ns: argparse.Namespace) -> dict:
        names = suite.choose(ns.kernels, list(PROGRAMS), "demo program", "--kernels")
        mem = parse_size(ns.mem)
        check_mem(mem)
        if os.geteuid() != 0:   # read_ahead_kb and its journal in /run are root's alone
            raise UsageError("bench demo needs root: it sets the disk's read_ahead_kb, drops "
                             "the page cache and caps memory with a cgroup (run `sudo make "
                             "demo`)")
        return demo(mem, ns.ratio, ns.readahead_kb, names, ns.repeat)

    def tables(self, res: dict) -> list[Table]:
        return [table(res)]

    def notes(self, res: dict) -> list[str]:
        return notes(res)

    def show(self, res: dict) -> None:
        print_table(res)


SUITE = Demo()
