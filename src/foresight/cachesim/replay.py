"""`foresight cachesim`: the C cache simulator on a trace (`--trace FILE`), on a color
map's loops (`--model STEPS`), or on a program's own run (`-- PROG ARGS`).

Without `--`, the command's arguments go to the installed binary as they are, so its
options, help and one-line errors (exit status 2) are its own.  With `-- PROG ARGS`,
PROG (built with `foresight cc --trace-mem`, and `--color` for the cdpc policies) runs
first with FORESIGHT_TRACE_MEM naming a temporary trace, OMP_NUM_THREADS the simulated
CPU count and, unless the options name a map, FORESIGHT_COLOR=sim writing its color map;
its output is its own; then the simulator replays that trace (with that map).  The
options are checked before PROG runs, on an empty trace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from foresight import paths
from foresight.errors import UsageError

NAME = "foresight-cachesim"
MAGIC = b"FSCTRC1\n"


def binary() -> str:
    """The installed simulator; a usage error naming `make setup` when it is missing."""
    path = paths.libexec_dir() / NAME
    if not os.access(path, os.X_OK):
        raise UsageError(f"the cache simulator is not built ({path}): run `make setup`")
    return str(path)


def _value(args: list[str], name: str) -> str | None:
    """The value of option NAME (`--name V` or `--name=V`) in ARGS, the last one given."""
    got = None
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            got = args[i + 1]
        elif a.startswith(name + "="):
            got = a[len(name) + 1:]
    return got


def _has(args: list[str], name: str) -> bool:
    return any(a == name or a.startswith(name + "=") for a in args)


def run_program(argv: list[str]) -> int:
    """`foresight cachesim OPTIONS -- PROG ARGS`: PROG's traced run, then its replay."""
    cut = argv.index("--")
    opts, prog = argv[:cut], argv[cut + 1:]
    if not prog:
        raise UsageError("`--` must be followed by the program to run")
    for own in ("--trace", "--model"):
        if _has(opts, own):
            raise UsageError(f"{own} and `-- PROG` both say where the accesses come from: "
                             "give one")
    exe = binary()
    cpus = _value(opts, "--cpus")
    if cpus is None:
        raise UsageError("--cpus N is needed: PROG runs with N OpenMP threads")
    policy = _value(opts, "--policy") or "pc"
    work = Path(tempfile.mkdtemp(prefix="foresight-cachesim-"))
    try:
        trace, color_map = work / "trace", work / "color.map"
        own_map = not _has(opts, "--map") and policy.startswith("cdpc")
        empty, no_map = work / "empty", work / "empty.map"
        empty.write_bytes(MAGIC)
        no_map.write_text("foresight-color-map 1\npage 4096\n")
        check = [*opts, *(["--map", str(no_map)] if own_map else [])]
        # the options, before PROG runs
        probe = subprocess.run([exe, *check, "--trace", str(empty), "--json", os.devnull],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if probe.returncode != 0:
            sys.stderr.write(probe.stderr.replace(NAME, "foresight cachesim"))
            return probe.returncode
        env = dict(os.environ, FORESIGHT_TRACE_MEM=str(trace), OMP_NUM_THREADS=cpus)
        if own_map:
            env.update(FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(color_map))
        try:
            status = subprocess.run(prog, env=env).returncode
        except OSError as e:
            raise UsageError(f"cannot run {prog[0]}: {e.strerror}") from e
        if status != 0:
            what = f"was killed by signal {-status}" if status < 0 else \
                f"exited with status {status}"
            print(f"foresight cachesim: error: {prog[0]} {what}: nothing simulated",
                  file=sys.stderr)
            return 1
        if not trace.exists():
            raise UsageError(f"{prog[0]} wrote no trace: build it with "
                             "`foresight cc --trace-mem` (clang 16 or later)")
        if own_map and not color_map.exists():
            raise UsageError(f"{prog[0]} wrote no color map for --policy {policy}: build it "
                             "with `foresight cc --trace-mem --color -fopenmp`")
        cmd = [exe, *opts, "--trace", str(trace)]
        if own_map:
            cmd += ["--map", str(color_map)]
        return subprocess.run(["foresight cachesim", *cmd[1:]], executable=exe).returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    """With `-- PROG`, run_program; otherwise this process becomes the simulator (its exit
    status is the command's)."""
    if "--" in argv:
        return run_program(argv)
    exe = binary()
    os.execv(exe, ["foresight cachesim", *argv])
    return 2   # not reached
