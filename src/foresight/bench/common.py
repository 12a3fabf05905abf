"""What the bench suites share: where their data, binaries and C sources live, writing
input files once, building a program with `foresight cc` as O and P, the medians of
repeated runs, the swap a suite's malloc'd data needs, and matplotlib."""

from __future__ import annotations

import json
import os
import stat
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from foresight import paths
from foresight.errors import BenchError
from foresight.harness import environment
from foresight.units import format_size

# The checkout this package runs from when it is installed editable (src/foresight/bench/).
SOURCE_TREE = Path(__file__).resolve().parents[3]


def bench_dir() -> Path:
    """Where data files live: on a real disk, not tmpfs (FORESIGHT_BENCH_DIR overrides)."""
    d = Path(os.environ.get("FORESIGHT_BENCH_DIR", "/var/tmp/foresight-bench"))
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BenchError(f"cannot use {d} for the benchmark data (FORESIGHT_BENCH_DIR): "
                         f"{e.strerror}") from None
    return d


def present_size(path: Path, who: str) -> int | None:
    """The size of the input file at PATH, None when there is none; BenchError when it
    is not a regular file (WHO, e.g. "the demo", leaves it alone)."""
    if not os.path.lexists(path):
        return None
    try:
        st = os.stat(path)
    except OSError as e:   # also a dangling symbolic link
        raise BenchError(f"cannot examine {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BenchError(f"{path} is not a regular file; {who} leaves it alone: move it "
                         "away or set FORESIGHT_BENCH_DIR to another directory")
    return st.st_size


def make_inputs(command: Callable[[list[Path]], list[str]], finals: list[Path],
                sizes: list[int], who: str) -> None:
    """Make the input files FINALS, of SIZES bytes, unless they are there already:
    COMMAND(temporary paths) is the generator's command line writing them under
    temporary names of our own, renamed when it succeeds, so an interrupted run leaves
    no half-written input behind to be reused.  A file of a final name with another
    size is not WHO's ("the demo"): it is left alone, and BenchError says so."""
    present = [present_size(f, who) for f in finals]
    if present == sizes:
        return
    for f, have, want in zip(finals, present, sizes, strict=True):
        if have is not None and have != want:
            raise BenchError(f"{f} is {have:,} bytes, not the {want:,} {who} writes; it "
                             "is left alone: remove it to have it written again, or set "
                             "FORESIGHT_BENCH_DIR to another directory")
    tmps: list[Path] = []
    try:
        for f in finals:
            fd, tmp = tempfile.mkstemp(prefix=f".{f.name}.", suffix=".tmp", dir=f.parent)
            os.close(fd)
            tmps.append(Path(tmp))
    except OSError as e:
        for t in tmps:
            t.unlink(missing_ok=True)
        raise BenchError(f"cannot create {', '.join(map(str, finals))}: {e.strerror}") \
            from None
    try:
        r = subprocess.run(command(tmps), capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError(f"cannot create {', '.join(map(str, finals))}: "
                             f"{r.stderr.strip()}")
        for t, f in zip(tmps, finals, strict=True):
            os.replace(t, f)
    finally:
        for t in tmps:
            t.unlink(missing_ok=True)


def binary(name: str) -> str:
    """A benchmark program `make setup` built (libexec/foresight/NAME)."""
    path = paths.libexec_dir() / name
    if not path.exists():
        raise BenchError(f"{path} is missing; run `make setup` first")
    return str(path)


def foresight_exe() -> str:
    """The `foresight` command of this installation (the suites run `foresight cc`)."""
    return str(Path(sys.prefix) / "bin" / "foresight")


def sources(name: str, marker: str, installed: Path, what: str) -> Path:
    """A suite's C sources: the source tree's benchmarks/NAME (an editable install, so
    edits count without `make setup`), else the copy `make setup` installed; MARKER is a
    file that must be there, WHAT names them in the error."""
    for d in (SOURCE_TREE / "benchmarks" / name, installed):
        if (d / marker).exists():
            return d
    raise BenchError(f"{what} are missing in {installed}; run `make setup`")


def compile_program(src: Path, exe: Path, options: Sequence[str] = (),
                    libs: Sequence[str] = ()) -> str:
    """`foresight cc -O2 OPTIONS SRC -o EXE LIBS`; EXE, or BenchError with the compiler's
    messages."""
    cmd = [foresight_exe(), "cc", "-O2", *options, str(src), "-o", str(exe), *libs]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not exe.exists():
        raise BenchError(f"{' '.join(cmd)} failed (exit {r.returncode}):\n"
                         f"{(r.stderr or r.stdout).strip()}")
    return str(exe)


def build(name: str, out_dir: Path, src: Path, libs: Sequence[str] = (),
          options: Sequence[str] = (), more: Mapping[str, Sequence[str]] | None = None
          ) -> tuple[dict[str, str], list | None]:
    """Compile SRC (linked with LIBS, such as -lm) as O (`--no-prefetch`, the same
    pipeline without hints) and P (hints), plus the variants in MORE (name: foresight cc
    options); returns the executables by variant and P's `--report-json` entries (None
    if it wrote none)."""
    report = out_dir / f"{name}.report.json"
    variants = {"O": ["--no-prefetch"], "P": ["--report-json", str(report)], **(more or {})}
    exes = {v: compile_program(src, out_dir / f"{name}-{v}", [*options, *extra], libs)
            for v, extra in variants.items()}
    try:
        cc_report = json.loads(report.read_text())
    except (OSError, ValueError):
        cc_report = None
    return exes, cc_report


SUMMARY_KEYS = ("access_seconds", "wall_seconds", "io_stall_seconds", "user_seconds",
                "sys_seconds", "read_bytes", "write_bytes", "swap_in_bytes", "swap_out_bytes",
                "major_faults")


def median_summary(runs: list[dict], checksum: str) -> dict:
    """One variant's runs: the median of each measurement, the checksum, the runs."""
    out = {k: statistics.median(vals)
           if (vals := [x[k] for x in runs if x.get(k) is not None]) else None
           for k in SUMMARY_KEYS}
    out["checksum"] = checksum
    out["cgroup_version"] = runs[0]["cgroup_version"]
    out["runtime"] = runs[-1].get("runtime")
    out["runs"] = [{k: x.get(k) for k in SUMMARY_KEYS} for x in runs]
    return out


def swap_shortfall(size: int, mem: int) -> str | None:
    """Why SIZE bytes of malloc'd data cannot run under a MEM cap, or None when they can:
    what exceeds the cap pages to swap, and without enough swap the cap kills the run."""
    swap = environment.swap_summary()["total_bytes"]
    if size <= mem or swap >= size:
        return None
    return (f"{format_size(size)} of malloc'd data under a {format_size(mem)} cap need "
            f"swap ({format_size(swap)} active): run `foresight swap enable --size 8G` as "
            "root (see `foresight swap status`)")


def pyplot():
    """matplotlib's pyplot, drawing into files (no display).  Imported only when a plot is
    drawn: it takes longer to import than the rest of a suite."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def ratio_list(text: str) -> list[float]:
    """`--ratio 2,4,10`: data/memory ratios, each a positive number, each once, in the
    order given (argparse turns the ArgumentTypeError into a one-line error)."""
    from foresight.bench.suite import positive  # suite imports tables, which imports us

    return list(dict.fromkeys(positive(x) for x in text.split(",")))


def by_ratio(results: list[dict]) -> dict:
    """One suite's results at several data/memory ratios: RESULTS (one per ratio, each
    what the suite returns for a single ratio) keyed by ratio as `%g` ("2", "10"), with
    the conditions they share at the top; a single result is returned as it is."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    shared = ("suite", "size", "mem_limit_bytes", "readahead_kb", "backing", "repeat",
              "device_probe", "environment")
    return {**{k: first[k] for k in shared if k in first},
            "ratios": [r["ratio"] for r in results],
            "by_ratio": {f"{r['ratio']:g}": r for r in results}}


def run_failure(r: dict) -> str | None:
    """Why a run (run_once's result) did not complete, or None: timed out, killed by the
    OOM killer, or its exit status."""
    if r.get("timed_out"):
        return "timed out"
    if r.get("oom_killed"):
        return "killed by the OOM killer"
    if r["exit_code"] != 0:
        return f"exit {r['exit_code']}"
    return None
